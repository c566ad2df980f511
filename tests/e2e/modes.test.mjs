// Browser modes besides shared (DESIGN.md section 7): dedicated (a Chromium
// per session) and cdp (attach to a running Chrome), their isolation, crash
// recovery and clean-up; and --user-data-dir, a profile that outlives a restart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, existsSync, mkdtempSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import {
  startServer, startPageServer, call, text, refOf, processesMentioning, waitFor, tabvisorBin, waitForSavedState } from './lib.mjs';

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
    await waitForSavedState(c, A); // what the restart restores
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
    // The session's state is restored into the new browser: its tab again.
    r = await call(c, 'browser_evaluate', { sessionId: A, function: '() => location.href' });
    assert.equal(r.isError, false, text(r));
    assert.equal(r.structuredContent.sessionRestarted, true);
    assert.deepEqual(r.structuredContent.result, { value: `${pages.url}/counter.html` });
    assert.deepEqual(r.structuredContent.sessionRestored?.tabs, [`${pages.url}/counter.html`], text(r));
    // The old browser's files go when its worker (let go, exiting) is reaped.
    await waitFor(() => dedicatedBrowsers(srv).length === 2, 5000);
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

test('dedicated: after a SIGKILL of tabvisor no Chromium of any session is left', async () => {
  const srv = await startServer(['--browser-mode', 'dedicated']);
  try {
    await createSession(srv.client);
    await createSession(srv.client);
    assert.equal(dedicatedBrowsers(srv).length, 2);
    assert.ok(chromiumOf(srv.runtimeDir).length >= 2);
    process.kill(srv.pid, 'SIGKILL');
    const clean = await waitFor(() => processesMentioning(srv.runtimeDir).length === 0, 10000);
    assert.ok(clean, `left running: ${JSON.stringify(processesMentioning(srv.runtimeDir).map((p) => p.pid))}`);
  } finally {
    await srv.close().catch(() => {});
  }
});

// --- cdp mode: an external Chromium started here on 127.0.0.1 ---

// Start Chromium with DevTools on 127.0.0.1 (port 0: any free one) and its
// profile in dir; resolves to {port, wsPath, child, kill()} once its
// DevToolsActivePort file names the port.
async function startChromium(dir, port = 0) {
  rmSync(join(dir, 'DevToolsActivePort'), { force: true });
  const args = ['--headless', '--disable-gpu', '--no-first-run', '--no-default-browser-check',
    '--remote-debugging-address=127.0.0.1', `--remote-debugging-port=${port}`, `--user-data-dir=${dir}`, 'about:blank'];
  if (process.getuid?.() === 0) args.unshift('--no-sandbox');
  // Its own process group (killed as one), HOME (crash reports stay in dir)
  // and TMPDIR (its org.chromium.Chromium.* scratch dirs go with dir).
  mkdirSync(join(dir, 'tmp'), { recursive: true });
  const child = spawn(chromium, args, { stdio: 'ignore', detached: true, env: { ...process.env, HOME: dir, TMPDIR: join(dir, 'tmp') } });
  const killGroup = () => { try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ } };
  if (port) {
    // A fixed port: Chromium need not write DevToolsActivePort; ask it.
    const v = await waitFor(async () => {
      try { return await (await fetch(`http://127.0.0.1:${port}/json/version`)).json(); } catch { return null; }
    }, 20000);
    if (!v) killGroup();
    assert.ok(v, 'chromium answers on its port');
    return chromiumHandle(dir, child, port, new URL(v.webSocketDebuggerUrl).pathname);
  }
  const file = join(dir, 'DevToolsActivePort');
  const ok = await waitFor(() => existsSync(file) && readFileSync(file, 'utf8').split('\n').length >= 2, 20000);
  if (!ok) killGroup();
  assert.ok(ok, 'chromium wrote DevToolsActivePort');
  const [p, wsPath] = readFileSync(file, 'utf8').split('\n');
  return chromiumHandle(dir, child, Number(p), wsPath);
}

function chromiumHandle(dir, child, port, wsPath) {
  return {
    port,
    wsPath,
    child,
    async kill() {
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
      await waitFor(() => chromiumOf(dir).length === 0, 5000);
    },
  };
}

// One CDP command over a fresh raw WebSocket to the browser.
async function rawCdp(port, method, params = {}) {
  const v = await (await fetch(`http://127.0.0.1:${port}/json/version`)).json();
  const sock = new WebSocket(v.webSocketDebuggerUrl);
  await new Promise((ok, bad) => { sock.once('open', ok); sock.once('error', bad); });
  try {
    sock.send(JSON.stringify({ id: 1, method, params }));
    return await new Promise((ok) => sock.on('message', (d) => {
      const m = JSON.parse(d.toString());
      if (m.id === 1) ok(m.result ?? m.error);
    }));
  } finally {
    sock.close();
  }
}

const pageTargets = async (port) => (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json())
  .filter((t) => t.type === 'page');

test('cdp: a bad or missing endpoint is refused at start-up with exit 2', () => {
  const cases = [
    [['--browser-mode', 'cdp'], /needs --cdp-endpoint/],
    [['--cdp-endpoint', 'http://127.0.0.1:9222'], /only for --browser-mode cdp/],
    [['--browser-mode', 'cdp', '--cdp-endpoint', 'ftp://127.0.0.1:9222'], /ws:\/\/HOST:PORT/],
    [['--browser-mode', 'cdp', '--cdp-endpoint', 'ws://:9222/devtools'], /a host is required/],
    [['--browser-mode', 'cdp', '--cdp-endpoint', 'https://127.0.0.1:9222'], /TLS is not supported/],
    [['--browser-mode', 'cdp', '--cdp-endpoint', 'http://127.0.0.1:99999'], /port/],
    [['--browser-mode', 'turbo'], /unknown mode 'turbo'/],
  ];
  for (const [args, want] of cases) {
    const r = spawnSync(tabvisorBin, args, { input: '', encoding: 'utf8', timeout: 10000 });
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, want, args.join(' '));
  }
  const r = spawnSync(tabvisorBin, ['--browser-mode', 'cdp'], {
    input: '', encoding: 'utf8', timeout: 10000, env: { ...process.env, TABVISOR_CDP_ENDPOINT: 'ws://127.0.0.1' },
  });
  assert.notEqual(r.status, 2, `TABVISOR_CDP_ENDPOINT is read: ${r.stderr}`);
});

for (const form of ['ws', 'http']) {
  test(`cdp (${form}:// endpoint): sessions in their own contexts of the external browser; it outlives tabvisor, without our contexts`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tv-e2e-ext-chrome-'));
    const chrome = await startChromium(dir);
    try {
      const endpoint = form === 'ws' ? `ws://127.0.0.1:${chrome.port}${chrome.wsPath}` : `http://127.0.0.1:${chrome.port}`;
      const before = await pageTargets(chrome.port);
      const srv = await startServer(['--browser-mode', 'cdp', '--cdp-endpoint', endpoint]);
      try {
        const c = srv.client;
        const A = await createSession(c);
        const B = await createSession(c);
        await driveCounter(c, A);
        await driveCounter(c, B);
        await assertCookiesIsolated(c, A, B);
        const ctx = await rawCdp(chrome.port, 'Target.getBrowserContexts');
        assert.ok(ctx.browserContextIds.length >= 2, `a context per session: ${JSON.stringify(ctx)}`);
        assert.equal(chromiumOf(srv.runtimeDir).length, 0, 'tabvisor launched no browser');
      } finally {
        await srv.close();
      }
      // The browser is still there, and what we made in it is gone.
      assert.equal(chrome.child.exitCode, null, 'the external browser still runs');
      const gone = await waitFor(async () => (await rawCdp(chrome.port, 'Target.getBrowserContexts')).browserContextIds.length === 0, 5000);
      assert.ok(gone, `contexts left: ${JSON.stringify(await rawCdp(chrome.port, 'Target.getBrowserContexts'))}`);
      assert.deepEqual((await pageTargets(chrome.port)).map((t) => t.id).sort(), before.map((t) => t.id).sort(), 'only the pages it had before');
    } finally {
      await chrome.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('cdp: the external browser dies: BROWSER_CRASHED, then recovery once it is back on the same port', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tv-e2e-ext-chrome-'));
  let chrome = await startChromium(dir);
  const port = chrome.port;
  try {
    // The ws:// form names the browser's id, which changes with a restart:
    // tabvisor finds the new one through /json/version on the same port.
    const srv = await startServer(['--browser-mode', 'cdp', '--cdp-endpoint', `ws://127.0.0.1:${port}${chrome.wsPath}`]);
    try {
      const c = srv.client;
      const A = await createSession(c);
      let r = await call(c, 'browser_navigate', { sessionId: A, url: `${pages.url}/counter.html` });
      assert.equal(r.isError, false, text(r));
      await waitForSavedState(c, A); // what the restart restores
      const long = call(c, 'browser_evaluate', { sessionId: A, function: '() => new Promise(r => setTimeout(r, 15000))' });
      await new Promise((ok) => setTimeout(ok, 400));
      const killedAt = Date.now();
      await chrome.kill();
      r = await long;
      assert.equal(r.isError, true, text(r));
      assert.equal(r.structuredContent.error.code, 'BROWSER_CRASHED', text(r));
      assert.ok(Date.now() - killedAt < 2000, `reported after ${Date.now() - killedAt} ms`);

      // While it is down, a call fails at once with a clear error (no hang).
      const t0 = Date.now();
      r = await call(c, 'browser_evaluate', { sessionId: A, function: '() => 1' });
      assert.equal(r.isError, true, text(r));
      assert.match(text(r), /could not connect to the browser at ws:\/\/127\.0\.0\.1/, text(r));
      assert.ok(Date.now() - t0 < 10000, `took ${Date.now() - t0} ms`);

      chrome = await startChromium(dir, port);
      assert.equal(chrome.port, port);
      // The session's state is restored into the browser that came back.
      r = await call(c, 'browser_evaluate', { sessionId: A, function: '() => location.href' });
      assert.equal(r.isError, false, text(r));
      assert.equal(r.structuredContent.sessionRestarted, true);
      assert.deepEqual(r.structuredContent.result, { value: `${pages.url}/counter.html` });
      await driveCounter(c, A);
    } finally {
      await srv.close();
    }
  } finally {
    await chrome.kill();
    rmSync(dir, { recursive: true, force: true });
  }
});

// --- --user-data-dir: one user's persistent profile ---

test('--user-data-dir needs --max-sessions 1 and a mode that launches the browser', () => {
  const cases = [
    [['--user-data-dir', '/tmp/x'], /needs --max-sessions 1/],
    [['--user-data-dir', '/tmp/x', '--max-sessions', '1', '--browser-mode', 'cdp', '--cdp-endpoint', 'http://127.0.0.1:9'], /not --browser-mode cdp/],
  ];
  for (const [args, want] of cases) {
    const r = spawnSync(tabvisorBin, args, { input: '', encoding: 'utf8', timeout: 10000 });
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, want, args.join(' '));
  }
});

for (const mode of ['shared', 'dedicated']) {
  test(`--user-data-dir (${mode}): cookies survive a server restart; the profile stays`, async () => {
    const profile = mkdtempSync(join(tmpdir(), 'tv-e2e-profile-'));
    const args = ['--browser-mode', mode, '--max-sessions', '1', '--user-data-dir', profile];
    try {
      let srv = await startServer(args);
      try {
        const c = srv.client;
        let r = await call(c, 'browser_navigate', { url: `${pages.url}/counter.html` });
        assert.equal(r.isError, false, text(r));
        r = await call(c, 'browser_evaluate', { function: "() => { document.cookie = 'kept=yes; max-age=3600'; return document.cookie; }" });
        assert.deepEqual(r.structuredContent.result, { value: 'kept=yes' });
        assert.ok(chromiumOf(`--user-data-dir=${profile}`).length >= 1, 'the browser runs on the profile');
      } finally {
        await srv.close();
      }
      assert.ok(existsSync(join(profile, 'Default')), 'the profile is kept');
      srv = await startServer(args);
      try {
        const c = srv.client;
        let r = await call(c, 'browser_navigate', { url: `${pages.url}/cookies` });
        assert.equal(r.isError, false, text(r));
        r = await call(c, 'browser_evaluate', { function: "() => document.getElementById('c').textContent" });
        assert.deepEqual(r.structuredContent.result, { value: 'kept=yes' }, 'the cookie outlived the restart');
      } finally {
        await srv.close();
      }
    } finally {
      rmSync(profile, { recursive: true, force: true });
    }
  });
}

test('cdp: a SIGKILLed tabvisor leaves no context in the external browser', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tv-e2e-ext-chrome-'));
  const chrome = await startChromium(dir);
  try {
    const before = await pageTargets(chrome.port);
    const srv = await startServer(['--browser-mode', 'cdp', '--cdp-endpoint', `http://127.0.0.1:${chrome.port}`]);
    try {
      const A = await createSession(srv.client);
      const r = await call(srv.client, 'browser_navigate', { sessionId: A, url: `${pages.url}/counter.html` });
      assert.equal(r.isError, false, text(r));
      assert.equal((await rawCdp(chrome.port, 'Target.getBrowserContexts')).browserContextIds.length, 1);
      process.kill(srv.pid, 'SIGKILL');
    } finally {
      await srv.close().catch(() => {});
    }
    const gone = await waitFor(async () => (await rawCdp(chrome.port, 'Target.getBrowserContexts')).browserContextIds.length === 0, 5000);
    assert.ok(gone, 'the browser disposed of our context when our connection closed');
    assert.deepEqual((await pageTargets(chrome.port)).map((t) => t.id).sort(), before.map((t) => t.id).sort());
    assert.equal(chrome.child.exitCode, null, 'the external browser still runs');
  } finally {
    await chrome.kill();
    rmSync(dir, { recursive: true, force: true });
  }
});
