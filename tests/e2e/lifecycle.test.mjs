// Crash isolation and shutdown: a killed worker fails only its own call,
// its session restarts with its state restored, and no process outlives the server however it ends.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { startServer, startPageServer, startRawServer, call, text, processesMentioning, waitFor, freshRuntimeDir, tabvisorBin, serverEnv, waitForSavedState } from './lib.mjs';

const pages = await startPageServer();
test.after(() => pages.close());

const workersOf = (dir) => processesMentioning(dir).filter((p) => p.cmd.includes('tabvisor-worker'));
const browsersOf = (dir) => processesMentioning(dir).filter((p) => !p.cmd.includes('tabvisor'));

test('kill -9 of a worker: SESSION_CRASHED within 1 s, others untouched, next call restored', async () => {
  const srv = await startServer();
  try {
    const c = srv.client;
    const A = (await call(c, 'browser_session_create')).structuredContent.sessionId;
    const [workerA] = workersOf(srv.runtimeDir);
    const B = (await call(c, 'browser_session_create')).structuredContent.sessionId;
    assert.equal(workersOf(srv.runtimeDir).length, 2);

    let r = await call(c, 'browser_navigate', { sessionId: A, url: `${pages.url}/counter.html` });
    assert.equal(r.isError, false, text(r));
    await waitForSavedState(c, A); // what the restart restores
    r = await call(c, 'browser_navigate', { sessionId: B, url: `${pages.url}/counter.html` });

    // B keeps working throughout.
    let stop = false;
    const bLoop = (async () => {
      let n = 0;
      while (!stop) {
        const x = await call(c, 'browser_evaluate', { sessionId: B, function: '() => location.pathname' });
        assert.equal(x.isError, false, text(x));
        n++;
      }
      return n;
    })();

    const long = call(c, 'browser_evaluate', { sessionId: A, function: '() => new Promise(r => setTimeout(r, 15000))' });
    await new Promise((ok) => setTimeout(ok, 400));
    const killedAt = Date.now();
    process.kill(workerA.pid, 'SIGKILL');
    r = await long;
    const took = Date.now() - killedAt;
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent.error.code, 'SESSION_CRASHED');
    assert.equal(r.structuredContent.sessionId, A);
    assert.ok(took < 1000, `crash reported after ${took} ms`);

    r = await call(c, 'browser_evaluate', { sessionId: A, function: '() => location.href' });
    assert.equal(r.isError, false, text(r));
    assert.equal(r.structuredContent.sessionRestarted, true);
    // A fresh worker, with the session's state restored: its page again.
    assert.deepEqual(r.structuredContent.result, { value: `${pages.url}/counter.html` }, 'restored');
    assert.match(text(r), /state was restored: 1 tab\(s\)/);
    r = await call(c, 'browser_evaluate', { sessionId: A, function: '() => 1' });
    assert.equal(r.structuredContent.sessionRestarted, undefined, 'said once');

    stop = true;
    assert.ok((await bLoop) > 0);
    r = await call(c, 'browser_evaluate', { sessionId: B, function: '() => location.pathname' });
    assert.deepEqual(r.structuredContent.result, { value: '/counter.html' }, 'B kept its page');
  } finally {
    await srv.close();
  }
});

// Start a server, open two sessions so that workers and Chromium run, then end it with `how`.
async function startWithSessions() {
  const s = startRawServer();
  await s.request(1, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } });
  for (const id of [2, 3]) {
    const r = await s.request(id, 'tools/call', { name: 'browser_session_create', arguments: {} });
    assert.equal(r.result.isError, false, JSON.stringify(r));
  }
  assert.equal(workersOf(s.runtimeDir).length, 2);
  assert.ok(browsersOf(s.runtimeDir).length >= 1, 'chromium runs');
  return s;
}

for (const how of ['stdin EOF', 'SIGTERM', 'SIGINT', 'SIGKILL']) {
  test(`after ${how} no worker and no Chromium is left`, async () => {
    const s = await startWithSessions();
    const dir = s.runtimeDir;
    if (how === 'stdin EOF') s.child.stdin.end();
    else s.child.kill(how);
    await new Promise((r) => (s.child.exitCode !== null || s.child.signalCode ? r() : s.child.once('exit', r)));
    if (how !== 'SIGKILL') assert.equal(s.child.exitCode, 0, s.stderr());
    const left = await waitFor(() => processesMentioning(dir).length === 0, 10000);
    assert.ok(left, `left running: ${JSON.stringify(processesMentioning(dir))}`);
    await s.close();
  });
}

test('a new server sweeps what a SIGKILLed one left in its runtime dir', async () => {
  const dir = freshRuntimeDir();
  const child = spawn(tabvisorBin, ['--runtime-dir', dir], { stdio: ['pipe', 'pipe', 'inherit'], env: serverEnv() });
  await new Promise((r) => setTimeout(r, 300));
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  // Same base dir: start a second server there and check the old run dir is gone.
  const second = spawn(tabvisorBin, ['--runtime-dir', dir], { stdio: ['pipe', 'pipe', 'pipe'], env: serverEnv() });
  let err = '';
  second.stderr.on('data', (d) => { err += d; });
  await waitFor(() => /ready on stdio/.test(err), 5000);
  assert.match(err, /removing leftovers of a previous run/);
  second.stdin.end();
  await new Promise((r) => second.once('exit', r));
});
