// Configuration from TABVISOR_* environment variables and a --config JSON
// file: their effects are seen through MCP (tools/list, session limits, the
// HTTP token), precedence is flag > environment > file > default, and bad
// values stop the server with exit code 2 and a message naming the source.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  tabvisorBin, startServer, call, text, startHttpServer, rawHttp, connectHttp, startPageServer,
  processesMentioning, waitFor, assertNoSanitizerReports,
} from './lib.mjs';

const scratch = mkdtempSync(join(tmpdir(), 'tv-config-'));
test.after(() => rmSync(scratch, { recursive: true, force: true }));

// Our environment without TABVISOR_* settings (the test runner sets some,
// e.g. TABVISOR_RELAY_BIN), plus vars.
function envWith(vars = {}) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('TABVISOR_')) env[k] = v;
  return { ...env, ASAN_OPTIONS: process.env.ASAN_OPTIONS || 'detect_leaks=1', ...vars };
}

let fileNo = 0;
function configFile(content, mode = 0o600) {
  const path = join(scratch, `tv-${++fileNo}.json`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  chmodSync(path, mode);
  return path;
}

// tabvisor over stdio through the SDK, with env vars; {client, stderr(), close()}.
const start = (args = [], vars = {}) => startServer(args, { env: envWith(vars) });

async function toolNames(args, vars) {
  const srv = await start(args, vars);
  try {
    return new Set((await srv.client.listTools()).tools.map((t) => t.name));
  } finally {
    await srv.close();
  }
}

// Which optional groups a tools/list shows, by one tool of each.
function groups(names) {
  return ['browser_cookie_list', 'browser_route', 'browser_pdf_save']
    .filter((n) => names.has(n))
    .map((n) => ({ browser_cookie_list: 'storage', browser_route: 'network', browser_pdf_save: 'pdf' })[n]);
}

test('TABVISOR_CAPS and TABVISOR_MAX_SESSIONS act like --caps and --max-sessions', async () => {
  assert.deepEqual(groups(await toolNames()), []);
  const srv = await start([], { TABVISOR_CAPS: 'storage,pdf', TABVISOR_MAX_SESSIONS: '1' });
  try {
    const names = new Set((await srv.client.listTools()).tools.map((t) => t.name));
    assert.deepEqual(groups(names), ['storage', 'pdf']);
    const a = await call(srv.client, 'browser_session_create');
    assert.equal(a.isError, false, text(a));
    const b = await call(srv.client, 'browser_session_create');
    assert.equal(b.isError, true);
    assert.equal(b.structuredContent.error.code, 'MAX_SESSIONS_REACHED');
  } finally {
    await srv.close();
  }
});

test('a --config file (or TABVISOR_CONFIG) sets the same things, lists as JSON arrays', async () => {
  const file = configFile({ caps: ['network'], maxSessions: 1, snapshotMode: 'none' });
  assert.deepEqual(groups(await toolNames(['--config', file])), ['network']);
  const srv = await start([], { TABVISOR_CONFIG: file });
  try {
    assert.deepEqual(groups(new Set((await srv.client.listTools()).tools.map((t) => t.name))), ['network']);
    assert.equal((await call(srv.client, 'browser_session_create')).isError, false);
    const b = await call(srv.client, 'browser_session_create');
    assert.equal(b.structuredContent.error.code, 'MAX_SESSIONS_REACHED');
  } finally {
    await srv.close();
  }
  // A comma string works for a list too.
  assert.deepEqual(groups(await toolNames(['--config', configFile({ caps: 'storage, network' })])),
    ['storage', 'network']);
});

test('precedence: flag over environment over file over default; a list is replaced, not merged', async () => {
  const file = configFile({ caps: ['storage'] });
  assert.deepEqual(groups(await toolNames(['--config', file])), ['storage']);
  assert.deepEqual(groups(await toolNames(['--config', file], { TABVISOR_CAPS: 'network' })), ['network']);
  assert.deepEqual(groups(await toolNames(['--config', file, '--caps', 'pdf'], { TABVISOR_CAPS: 'network' })), ['pdf']);
  // A flag wins over the environment even when the environment's value is bad.
  assert.deepEqual(groups(await toolNames(['--caps', 'pdf'], { TABVISOR_CAPS: 'bogus' })), ['pdf']);
});

test('bad settings from any source stop the server: exit 2 and a message naming the source', () => {
  const noDisplay = envWith({ TABVISOR_HEADED: 'true' });
  delete noDisplay.DISPLAY;
  delete noDisplay.WAYLAND_DISPLAY;
  const malformed = configFile('{\n  "maxSessions": 2,\n  "caps": ["storage",\n}\n');
  const cases = [
    [[], envWith({ TABVISOR_MAX_SESSIONS: 'x' }), /^tabvisor: TABVISOR_MAX_SESSIONS wants a whole number from 1 to 1024, not 'x'$/m],
    [[], envWith({ TABVISOR_EXTENSION: 'yes' }), /TABVISOR_EXTENSION wants true, false, 1 or 0, not 'yes'/],
    [['--config', configFile({ maxSesions: 2 })], envWith(), /tv-\d+\.json: unknown key "maxSesions" \(did you mean maxSessions\?\)/],
    [['--config', configFile({ maxSessions: '2' })], envWith(), /tv-\d+\.json: maxSessions must be a number, not a string/],
    [['--config', configFile({ maxSessions: 0 })], envWith(), /tv-\d+\.json: maxSessions wants a whole number from 1 to 1024, not '0'/],
    [['--config', configFile({ caps: ['storage', 'bogus'] })], envWith(), /tv-\d+\.json: caps: unknown group 'bogus'/],
    [['--config', malformed], envWith(), /tv-\d+\.json:4:1: /],
    [['--config', join(scratch, 'missing.json')], envWith(), /--config .*missing\.json: No such file/],
    [[], envWith({ TABVISOR_CONFIG: join(scratch, 'missing.json') }), /TABVISOR_CONFIG .*missing\.json: No such file/],
    [['--headed'], noDisplay, /--headed needs a display, but neither DISPLAY nor WAYLAND_DISPLAY is set/],
    [['--browser', 'safari'], envWith(), /--browser: unknown browser 'safari' \(chromium or firefox\)/],
    [[], envWith({ TABVISOR_BROWSER: 'firefox', TABVISOR_BROWSER_MODE: 'dedicated' }), /--browser firefox runs in shared mode only/],
    [['--browser', 'firefox', '--firefox', join(scratch, 'no-such-firefox')], envWith(), /--firefox: .*no-such-firefox/],
    [[], noDisplay, /neither DISPLAY nor WAYLAND_DISPLAY/],
  ];
  for (const [args, env, want] of cases) {
    const r = spawnSync(tabvisorBin, ['--runtime-dir', join(scratch, 'never'), ...args],
      { encoding: 'utf8', env, input: '', timeout: 10000 });
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, want);
    assertNoSanitizerReports(r.stderr);
  }
});

test('unknown TABVISOR_* variables only warn, with a guess', async () => {
  const srv = await start([], { TABVISOR_MAX_SESION: '1', TABVISOR_FROM_A_NEWER_VERSION: 'x' });
  try {
    assert.ok((await srv.client.listTools()).tools.length > 5);
    assert.match(srv.stderr(), /ignoring TABVISOR_MAX_SESION \(did you mean TABVISOR_MAX_SESSIONS\?\), TABVISOR_FROM_A_NEWER_VERSION/);
  } finally {
    await srv.close();
  }
});

test('--help lists every flag with its environment variable and file key', () => {
  const r = spawnSync(tabvisorBin, ['--help'], { encoding: 'utf8', env: envWith() });
  assert.equal(r.status, 0);
  assert.match(r.stdout, /--max-sessions N .*\n {20,}TABVISOR_MAX_SESSIONS, key maxSessions\n/);
  assert.match(r.stdout, /--allowed-origins LIST[^]*?TABVISOR_ALLOWED_ORIGINS, key allowedOrigins\n/);
  assert.match(r.stdout, /--headed .*\n.*\n {20,}TABVISOR_HEADED, key headed\n/);
  // Every flag --help names is one tabvisor takes (none only documented).
  const flags = [...r.stdout.matchAll(/^ {2}--([a-z-]+)/gm)].map((m) => m[1]);
  assert.ok(flags.length > 30, flags.join(' '));
  for (const f of flags) {
    if (f === 'help' || f === 'version') continue;
    const env = `TABVISOR_${f.toUpperCase().replace(/-/g, '_')}`;
    assert.ok(r.stdout.includes(env), env);
  }
});

test('`tabvisor pair --help` prints pair\'s own usage and runs no relay', () => {
  for (const flag of ['--help', '-h']) {
    const r = spawnSync(tabvisorBin, ['pair', flag], { encoding: 'utf8', env: envWith() });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^usage: tabvisor pair \[--new\] \[--relay-port N\] \[--relay-secret-file F\]/);
    assert.match(r.stdout, /--relay-secret-file F +the pairing secret \(default \$XDG_CONFIG_HOME\/tabvisor\/relay\.secret,\n +else ~\/\.config\/tabvisor\/relay\.secret\)/);
    // Not the server's usage, and no pairing code: the relay did not run.
    assert.doesNotMatch(r.stdout, /--max-sessions|Pairing code/);
  }
});

test('the token can come from the config file; a file others can read is warned about', async () => {
  const file = configFile({ authToken: 'file-token-7f3a' }, 0o644);
  const srv = await startHttpServer(['--config', file], envWith());
  try {
    assert.match(srv.stderr(), /holds authToken and can be read by other users \(mode 644\)/);
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const r = await rawHttp(srv.url, { headers, body: JSON.stringify(init) });
    assert.equal(r.status, 401);
    const { client } = await connectHttp(srv.url, { requestInit: { headers: { Authorization: 'Bearer file-token-7f3a' } } });
    assert.ok((await client.listTools()).tools.length > 5);
    await client.close();
  } finally {
    await srv.close();
  }
});

// An X server on a free display number, unix socket only (no TCP).
async function startXvfb() {
  const x = spawn('Xvfb', ['-displayfd', '3', '-nolisten', 'tcp', '-screen', '0', '1280x800x24'],
    { stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
  let out = '';
  x.stdio[3].on('data', (d) => { out += d; });
  const n = await waitFor(() => /^\d+\n/.test(out) && out.trim(), 10000);
  if (!n) { x.kill(); throw new Error('Xvfb did not start'); }
  return { display: `:${n}`, stop: () => new Promise((r) => { x.once('exit', r); x.kill(); }) };
}

const hasXvfb = spawnSync('Xvfb', ['-help'], { encoding: 'utf8' }).error === undefined;

test('--headed (TABVISOR_HEADED) runs Chromium without --headless on the given display', { skip: !hasXvfb && !process.env.CI && 'no Xvfb (deploy/install-deps.sh installs it; in CI its absence fails)' }, async () => {
  const x = await startXvfb();
  const pages = await startPageServer();
  const ua = async (srv) => {
    const r = await call(srv.client, 'browser_navigate', { url: `${pages.url}/` });
    assert.equal(r.isError, false, text(r));
    return text(await call(srv.client, 'browser_evaluate', { function: '() => navigator.userAgent' }));
  };
  try {
    const headless = await start([]);
    try {
      assert.match(await ua(headless), /HeadlessChrome/);
    } finally {
      await headless.close();
    }
    const srv = await start([], { TABVISOR_HEADED: '1', DISPLAY: x.display });
    try {
      assert.doesNotMatch(await ua(srv), /HeadlessChrome/);
      const browsers = processesMentioning('--remote-debugging-pipe').filter((p) => p.cmd.includes(srv.runtimeDir));
      assert.ok(browsers.length >= 1);
      for (const b of browsers) assert.ok(!b.cmd.includes('--headless'), b.cmd);
    } finally {
      await srv.close();
    }
  } finally {
    await pages.close();
    await x.stop();
  }
});

test('--headed with --browser firefox runs Firefox without --headless, on the display\'s screen', { skip: !hasXvfb && !process.env.CI && 'no Xvfb (deploy/install-deps.sh installs it; in CI its absence fails)' }, async () => {
  const x = await startXvfb();
  const pages = await startPageServer();
  // Firefox in its own user and network namespace reaches the X server by
  // its socket file (an abstract socket would be the host namespace's).
  const screenOf = async (vars) => {
    const srv = await start(['--browser', 'firefox'], vars);
    try {
      // The first call waits for Firefox's start: seconds on a busy machine.
      const r = await call(srv.client, 'browser_navigate', { url: `${pages.url}/`, timeout: 120000 });
      assert.equal(r.isError, false, text(r));
      const firefox = processesMentioning(srv.runtimeDir).filter((p) => /\/firefox(-esr)?$/.test(p.cmd.split(' ')[0]) && !p.cmd.includes('-contentproc'));
      assert.equal(firefox.length, 1, JSON.stringify(firefox));
      return { headless: firefox[0].cmd.includes('--headless'),
        screen: text(await call(srv.client, 'browser_evaluate', { function: '() => screen.width + "x" + screen.height' })) };
    } finally {
      await srv.close();
    }
  };
  try {
    const headless = await screenOf({ DISPLAY: x.display });
    assert.equal(headless.headless, true);
    assert.notEqual(headless.screen, '"1280x800"');
    const headed = await screenOf({ TABVISOR_HEADED: '1', DISPLAY: x.display });
    assert.equal(headed.headless, false);
    assert.equal(headed.screen, '"1280x800"', "the Xvfb screen's size: Firefox runs on that display");
  } finally {
    await pages.close();
    await x.stop();
  }
});

test('another user\'s $TMPDIR/tabvisor-UID does not keep tabvisor from starting: it says whose it is and uses its own', { skip: process.getuid() !== 0 && 'needs root to make a directory of another uid' }, async () => {
  // The audit: another uid pre-created /tmp/tabvisor-UID and the error
  // blamed the mode. TMPDIR stands for /tmp here.
  const tmp = join(scratch, 'squat-tmp'), home = join(scratch, 'squat-home');
  const squatted = join(tmp, `tabvisor-${process.getuid()}`);
  mkdirSync(squatted, { recursive: true, mode: 0o700 });
  chownSync(squatted, 65534, 65534);
  mkdirSync(home);
  const env = envWith({ TMPDIR: tmp, HOME: home });
  delete env.XDG_RUNTIME_DIR;
  delete env.XDG_CACHE_HOME;
  const child = spawn(tabvisorBin, ['--http', '127.0.0.1:0', '--output-dir', join(scratch, 'squat-out')], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr.on('data', (d) => { log += d; });
  const exited = new Promise((r) => child.once('exit', r));
  try {
    const url = await waitFor(() => log.match(/Listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/)?.[1], 20000);
    assert.ok(url, log);
    assert.match(log, new RegExp(`runtime dir: ${squatted} belongs to uid 65534 \\(nobody\\), not to us \\(uid 0\\); using ${home}/\\.cache/tabvisor-run instead`));
    assert.equal(statSync(join(home, '.cache', 'tabvisor-run')).mode & 0o777, 0o700);
    const h = await rawHttp(url.replace(/\/mcp$/, '/healthz'), { method: 'GET' });
    assert.equal(h.status, 200);
  } finally {
    child.kill('SIGTERM');
    assert.equal(await exited, 0, log.slice(-2000));
    assertNoSanitizerReports(log);
  }
});
