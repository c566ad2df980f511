// Browser modes besides shared (DESIGN.md section 7): dedicated (a Chromium
// per session) and cdp (attach to a running Chrome), their isolation, crash
// recovery and clean-up; and --user-data-dir, a profile that outlives a restart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  startServer, startPageServer, call, text, refOf, processesMentioning, waitFor, tabvisorBin,
} from './lib.mjs';

const pages = await startPageServer();
test.after(() => pages.close());

const chromium = process.env.TABVISOR_CHROMIUM
  || spawnSync('sh', ['-c', 'command -v chromium || command -v chromium-browser'], { encoding: 'utf8' }).stdout.trim();

// The run dir (runtimeDir/run-PID) of a server started by startServer.
const runDirOf = (srv) => join(srv.runtimeDir, readdirSync(srv.runtimeDir).find((n) => n.startsWith('run-')));
// Chromium processes (any of its helpers) whose command line names needle.
const chromiumOf = (needle) => processesMentioning(needle).filter((p) => !p.cmd.includes('tabvisor'));
// Dedicated mode: the main browser process of each session, by its pid file browser-wN.pid.
function dedicatedBrowsers(srv) {
  const run = runDirOf(srv);
  return readdirSync(run).filter((n) => /^browser-w\d+\.pid$/.test(n))
    .map((n) => ({ name: n.slice(0, -4), pid: Number(readFileSync(join(run, n), 'utf8')) }));
}

async function createSession(c) {
  const r = await call(c, 'browser_session_create');
  assert.equal(r.isError, false, text(r));
  return r.structuredContent.sessionId;
}

// navigate, snapshot, click, and the click's effect, in one session.
async function driveCounter(c, sessionId) {
  let r = await call(c, 'browser_navigate', { sessionId, url: `${pages.url}/counter.html` });
  assert.equal(r.isError, false, text(r));
  r = await call(c, 'browser_snapshot', { sessionId });
  assert.equal(r.isError, false, text(r));
  const ref = refOf(text(r), 'button', 'Increment');
  assert.ok(ref, text(r));
  r = await call(c, 'browser_click', { sessionId, element: 'Increment', target: ref });
  assert.equal(r.isError, false, text(r));
  r = await call(c, 'browser_evaluate', { sessionId, function: "() => document.getElementById('count').textContent" });
  assert.deepEqual(r.structuredContent.result, { value: '1' });
}

// A cookie set in A is not seen by B.
async function assertCookiesIsolated(c, A, B) {
  let r = await call(c, 'browser_navigate', { sessionId: A, url: `${pages.url}/counter.html` });
  r = await call(c, 'browser_evaluate', { sessionId: A, function: "() => { document.cookie = 'who=A; max-age=3600'; return document.cookie; }" });
  assert.deepEqual(r.structuredContent.result, { value: 'who=A' });
  assert.equal(await cookiesSent(c, A), 'who=A', 'A sends its cookie');
  assert.equal(await cookiesSent(c, B), '(none)', 'B does not see A\'s cookie');
}

// The cookies the page server received from the session's browser.
async function cookiesSent(c, sessionId) {
  let r = await call(c, 'browser_navigate', { sessionId, url: `${pages.url}/cookies` });
  assert.equal(r.isError, false, text(r));
  r = await call(c, 'browser_evaluate', { sessionId, function: "() => document.getElementById('c').textContent" });
  assert.equal(r.isError, false, text(r));
  return r.structuredContent.result.value;
}

test('dedicated: each session has its own Chromium; navigate, snapshot, click; cookies isolated', async () => {
  const srv = await startServer(['--browser-mode', 'dedicated']);
  try {
    const c = srv.client;
    const A = await createSession(c);
    const B = await createSession(c);
    const browsers = dedicatedBrowsers(srv);
    assert.equal(browsers.length, 2, JSON.stringify(browsers));
    assert.notEqual(browsers[0].pid, browsers[1].pid);
    for (const b of browsers) assert.ok(chromiumOf(`${b.name}-profile`).length >= 1, `${b.name} runs`);
    await driveCounter(c, A);
    await driveCounter(c, B);
    await assertCookiesIsolated(c, A, B);

    // Closing a session ends its browser, and only its.
    const byName = Object.fromEntries(browsers.map((b) => [b.name, b]));
    const r = await call(c, 'browser_session_close', { sessionId: A });
    assert.equal(r.isError, false, text(r));
    const gone = await waitFor(() => chromiumOf(`${browsers[0].name}-profile`).length === 0, 5000);
    assert.ok(gone, `left: ${JSON.stringify(chromiumOf(`${browsers[0].name}-profile`))}`);
    const prof = join(runDirOf(srv), `${browsers[0].name}-profile`);
    assert.ok(await waitFor(() => !existsSync(prof), 2000), `its profile is removed: ${existsSync(prof) && spawnSync('find', [prof], { encoding: 'utf8' }).stdout.slice(0, 2000)}`);
    assert.ok(chromiumOf(`${byName[browsers[1].name].name}-profile`).length >= 1, 'B\'s browser still runs');
    const x = await call(c, 'browser_evaluate', { sessionId: B, function: '() => location.pathname' });
    assert.deepEqual(x.structuredContent.result, { value: '/cookies' });
  } finally {
    await srv.close();
  }
  assert.equal(processesMentioning(srv.runtimeDir).length, 0, 'nothing left after exit');
});

test('dedicated: kill -9 of one session\'s browser fails only its call (BROWSER_CRASHED), then it recovers', async () => {
  const srv = await startServer(['--browser-mode', 'dedicated']);
  try {
    const c = srv.client;
    const A = await createSession(c);
    const [browserA] = dedicatedBrowsers(srv);
    const B = await createSession(c);
    for (const sessionId of [A, B]) {
      const r = await call(c, 'browser_navigate', { sessionId, url: `${pages.url}/counter.html` });
      assert.equal(r.isError, false, text(r));
    }
    const long = call(c, 'browser_evaluate', { sessionId: A, function: '() => new Promise(r => setTimeout(r, 15000))' });
    const longB = call(c, 'browser_evaluate', { sessionId: B, function: '() => new Promise(r => setTimeout(() => r(location.pathname), 1500))' });
    await new Promise((ok) => setTimeout(ok, 400));
    const killedAt = Date.now();
    process.kill(browserA.pid, 'SIGKILL');
    let r = await long;
    const took = Date.now() - killedAt;
    assert.equal(r.isError, true, text(r));
    assert.equal(r.structuredContent.error.code, 'BROWSER_CRASHED', text(r));
    assert.ok(took < 1000, `crash reported after ${took} ms`);
    r = await longB;
    assert.equal(r.isError, false, `B untouched: ${text(r)}`);
    assert.deepEqual(r.structuredContent.result, { value: '/counter.html' });

    // Every process of the dead browser is gone; A's next call runs in a new one.
    assert.ok(await waitFor(() => chromiumOf(`${browserA.name}-profile`).length === 0, 5000), 'old browser gone');
    r = await call(c, 'browser_evaluate', { sessionId: A, function: '() => location.href' });
    assert.equal(r.isError, false, text(r));
    assert.equal(r.structuredContent.sessionRestarted, true);
    assert.deepEqual(r.structuredContent.result, { value: 'about:blank' });
    const now = dedicatedBrowsers(srv);
    assert.equal(now.length, 2, JSON.stringify(now));
    assert.ok(!now.some((b) => b.name === browserA.name), 'A has a new browser');
    await driveCounter(c, A);
    r = await call(c, 'browser_evaluate', { sessionId: B, function: '() => location.pathname' });
    assert.deepEqual(r.structuredContent.result, { value: '/counter.html' }, 'B kept its page');
    assert.equal(r.structuredContent.sessionRestarted, undefined);
  } finally {
    await srv.close();
  }
  assert.equal(processesMentioning(srv.runtimeDir).length, 0, 'nothing left after exit');
});
