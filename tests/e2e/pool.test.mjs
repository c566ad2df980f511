// The pool of ready workers (--pool N): started with the server, handed to
// new sessions (explicit or default), refilled, never past --max-sessions,
// drained when the browser dies. (The other e2e files run with
// TABVISOR_POOL=0 so their process counts stay exact.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startServer, startPageServer, call, text, processesMentioning, waitFor } from './lib.mjs';

const pages = await startPageServer();
test.after(() => pages.close());
const counter = `${pages.url}/counter.html`;
const workerPids = (dir) => processesMentioning(dir).filter((p) => p.cmd.includes('tabvisor-worker')).map((p) => p.pid).sort();
// Chromium's browser process: the one started by tabvisor itself (a child
// Chromium just forked shows the same command line until it execs).
const parentOf = (pid) => { try { const st = readFileSync(`/proc/${pid}/stat`, 'utf8'); return Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[1]); } catch { return 0; } };
const cmdOf = (pid) => { try { return readFileSync(`/proc/${pid}/cmdline`, 'utf8'); } catch { return ''; } };
const browserMain = (dir) => processesMentioning(dir).filter((p) => !p.cmd.includes('tabvisor') && !p.cmd.includes('--type=') &&
  !p.cmd.includes('crashpad') && !cmdOf(parentOf(p.pid)).includes('chromium'));

test('--pool 2: ready workers before any call, handed to new sessions, refilled within --max-sessions', async () => {
  const srv = await startServer(['--pool', '2', '--max-sessions', '3']);
  try {
    const dir = srv.runtimeDir;
    // Before any tool call: the browser and two workers are up.
    assert.ok(await waitFor(() => workerPids(dir).length === 2, 15000), `pooled workers: ${workerPids(dir)}`);
    // (A child Chromium just forked shows its parent's command line until it
    // execs, so the count may read 2 for a moment.)
    assert.ok(await waitFor(() => browserMain(dir).length === 1, 5000), 'the browser started with the server');
    const pooled = workerPids(dir);

    // A session takes a pooled worker: no worker of its own is started for it.
    const c = srv.client;
    let r = await call(c, 'browser_session_create');
    assert.equal(r.isError, false, text(r));
    const A = r.structuredContent.sessionId;
    r = await call(c, 'browser_navigate', { sessionId: A, url: counter });
    assert.equal(r.isError, false, text(r));
    // The refill keeps sessions + pool within --max-sessions 3: A + 2 pooled.
    assert.ok(await waitFor(() => workerPids(dir).length === 3, 15000));
    assert.ok(workerPids(dir).filter((p) => pooled.includes(p)).length === 2, 'no pooled worker was replaced');

    // The default session of the connection comes from the pool too.
    r = await call(c, 'browser_evaluate', { function: '() => location.href' });
    assert.equal(r.isError, false, text(r));
    assert.deepEqual(r.structuredContent.result, { value: 'about:blank' });
    // Two sessions and one pooled worker: that is the maximum.
    await new Promise((ok) => setTimeout(ok, 1500)); // a housekeeping round
    assert.equal(workerPids(dir).length, 3, 'the pool does not go past --max-sessions');

    r = await call(c, 'browser_session_create', { storageState: 'none.json' });
    assert.equal(r.isError, true, 'a storage state is loaded by a fresh worker, and this file is missing');
    r = await call(c, 'browser_session_create');
    assert.equal(r.isError, false, text(r));
    const C = r.structuredContent.sessionId;
    r = await call(c, 'browser_session_create');
    assert.equal(r.structuredContent.error.code, 'MAX_SESSIONS_REACHED', text(r));
    // Stopped workers take a moment to exit; then three remain.
    assert.ok(await waitFor(() => workerPids(dir).length === 3, 10000), `workers: ${workerPids(dir)}`);

    // Closing a session makes room: the pool fills it.
    r = await call(c, 'browser_session_close', { sessionId: C });
    assert.equal(r.isError, false, text(r));
    assert.ok(await waitFor(() => workerPids(dir).length === 3 && !r.isError, 15000));

    // The browser dies: the pool's workers go with their contexts and new
    // ones come in the new browser.
    const before = workerPids(dir);
    process.kill(browserMain(dir)[0].pid, 'SIGKILL');
    r = await call(c, 'browser_navigate', { sessionId: A, url: counter });
    // A call that races the death may still reach the old worker.
    if (r.structuredContent?.error?.code === 'BROWSER_CRASHED') r = await call(c, 'browser_navigate', { sessionId: A, url: counter });
    assert.equal(r.isError, false, text(r));
    // A's new worker and one pooled (the default session gets its worker
    // back at its next call; until then the pool may not take its room).
    assert.ok(await waitFor(() => workerPids(dir).length === 2 && workerPids(dir).every((p) => !before.includes(p)), 15000),
      `workers after the browser died: ${workerPids(dir)} (before: ${before})`);
    r = await call(c, 'browser_session_create');
    assert.equal(r.isError, false, text(r));
  } finally {
    await srv.close();
  }
});

test('--pool 0: nothing starts before the first call', async () => {
  const srv = await startServer(['--pool', '0']);
  try {
    await new Promise((ok) => setTimeout(ok, 1500));
    assert.equal(workerPids(srv.runtimeDir).length, 0);
    assert.equal(browserMain(srv.runtimeDir).length, 0);
    const r = await call(srv.client, 'browser_navigate', { url: counter });
    assert.equal(r.isError, false, text(r));
  } finally {
    await srv.close();
  }
});
