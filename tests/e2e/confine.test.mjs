// Worker confinement and token hygiene (docs/confinement.md), seen from
// outside on the real processes: /proc/<pid>/status, limits, environ and
// cmdline, and gdb making a live confined worker try what it must not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  startServer, startHttpServer, startPageServer, connectHttp, rawHttp, call, text,
  processesMentioning, freshRuntimeDir, tabvisorBin, serverEnv, sessionOutputDir,
} from './lib.mjs';

const pages = await startPageServer();
test.after(() => pages.close());

function workerPids(runtimeDir) {
  return processesMentioning(runtimeDir).filter((p) => p.cmd.includes('tabvisor-worker')).map((p) => p.pid);
}

function statusField(pid, name) {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith(`${name}:`));
  return line?.slice(name.length + 1).trim();
}

// "Max open files  64  64  files" -> ['64', '64']
function limit(pid, name) {
  const line = readFileSync(`/proc/${pid}/limits`, 'utf8').split('\n').find((l) => l.startsWith(name));
  return line.slice(name.length).trim().split(/\s+/).slice(0, 2);
}

const hasGdb = spawnSync('gdb', ['--version']).status === 0;

// Make the worker itself call into libc through gdb (no hook in tabvisor):
// each command's value, in order. Strings go through one malloc'd buffer
// that is freed again, so LeakSanitizer has nothing to report.
function inWorker(pid, steps) {
  const args = ['-p', String(pid), '-batch', '-nx', '-ex', 'set $p = (char *)malloc(4096)'];
  for (const s of steps) {
    if (s.thread) args.push('-ex', `thread ${s.thread}`);
    if (s.path !== undefined) args.push('-ex', `set {char[${Buffer.byteLength(s.path) + 1}]}$p = "${s.path}"`);
    args.push('-ex', `print ${s.expr}`, '-ex', 'print *(int *)__errno_location()');
  }
  args.push('-ex', 'thread 1', '-ex', 'call (void)free($p)');
  const out = execFileSync('gdb', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60000 });
  const values = [...out.matchAll(/^\$\d+ = (-?\d+)$/gm)].map((m) => Number(m[1]));
  assert.equal(values.length, steps.length * 2, out);
  return steps.map((s, k) => ({ ret: values[2 * k], errno: values[2 * k + 1] }));
}

const EACCES = 13, EPERM = 1;

test('a worker is confined before its first page: seccomp, no_new_privs, no capabilities, limits', async () => {
  const srv = await startServer(['--worker-confine', 'require', '--worker-max-fds', '64',
    '--worker-cpu-seconds', '600', '--worker-max-memory', '100', '--log-level', 'debug']);
  try {
    const r = await call(srv.client, 'browser_navigate', { url: `${pages.url}/login.html` });
    assert.equal(r.isError, false, text(r));
    const [pid] = workerPids(srv.runtimeDir);
    assert.ok(pid, 'a worker runs');
    assert.equal(statusField(pid, 'Seccomp'), '2', 'seccomp filter mode');
    assert.equal(statusField(pid, 'NoNewPrivs'), '1');
    assert.equal(statusField(pid, 'CapEff'), '0000000000000000');
    assert.equal(statusField(pid, 'CapPrm'), '0000000000000000');
    assert.deepEqual(limit(pid, 'Max open files'), ['64', '64']);
    assert.deepEqual(limit(pid, 'Max cpu time'), ['600', '600']);
    // Memory: 100 MB on top of what the worker had mapped at start-up.
    const [soft, hard] = limit(pid, 'Max data size');
    assert.equal(soft, hard);
    assert.ok(Number(soft) >= 100 * 2 ** 20 && soft !== 'unlimited', soft);
    // Every thread, not only the main one (nng's threads start before READY).
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const st = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
      assert.match(st, /^Seccomp:\t2$/m, `thread ${tid}`);
      assert.match(st, /^CapEff:\t0000000000000000$/m, `thread ${tid}`);
    }
    assert.match(srv.stderr(), /confined: Landlock ABI [1-9]\d* \(0: none\), seccomp on/);
  } finally {
    await srv.close();
  }
});

test('a live confined worker cannot read or write outside its dirs, exec or open sockets; its output dir works', { skip: !hasGdb && 'gdb is not installed' }, async () => {
  const srv = await startServer();
  try {
    let r = await call(srv.client, 'browser_navigate', { url: `${pages.url}/login.html` });
    assert.equal(r.isError, false, text(r));
    const [pid] = workerPids(srv.runtimeDir);
    const secret = join(srv.runtimeDir, 'secret.txt'); // beside the output dir
    writeFileSync(secret, 'secret');
    const dir = await sessionOutputDir(srv.client);
    const out = join(dir, 'from-gdb.txt');
    // The shared --output-dir above the session's own: another session's files live there.
    const other = join(srv.runtimeDir, 'out', 'other-session.txt');
    const res = inWorker(pid, [
      { path: '/etc/passwd', expr: '(int)open($p, 0)' },
      { thread: 2, expr: '(int)open($p, 0)' }, // an nng thread: confined too
      { thread: 1, path: secret, expr: '(int)open($p, 0)' },
      { path: secret, expr: '(int)open($p, 01)' }, // O_WRONLY
      { path: join(srv.runtimeDir, 'new.txt'), expr: '(int)open($p, 0101, 0600)' }, // O_CREAT
      { path: other, expr: '(int)open($p, 0101, 0600)' },
      { path: out, expr: '$fd = (int)open($p, 0101, 0600)' },
      { expr: '(int)close($fd)' },
      { path: '/bin/true', expr: '(int)execve($p, 0, 0)' },
      { expr: '(int)socket(2, 1, 0)' }, // AF_INET, SOCK_STREAM
    ]);
    assert.deepEqual(res.slice(0, 6).map((x) => [x.ret, x.errno]), Array(6).fill([-1, EACCES]));
    assert.ok(res[6].ret >= 0, `open in the output dir: ${JSON.stringify(res[6])}`);
    assert.equal(res[7].ret, 0);
    assert.deepEqual([res[8].ret, res[8].errno], [-1, EPERM], 'execve');
    assert.deepEqual([res[9].ret, res[9].errno], [-1, EPERM], 'socket');
    assert.equal(readFileSync(out, 'utf8'), '');
    // The session goes on, and its tools still write where they should.
    r = await call(srv.client, 'browser_snapshot', { filename: 'after/snap.yaml' });
    assert.equal(r.isError, false, text(r));
    assert.match(readFileSync(join(dir, 'after', 'snap.yaml'), 'utf8'), /Sign in/);
  } finally {
    await srv.close();
  }
});

test('--worker-confine off leaves the worker as it was', async () => {
  const srv = await startServer(['--worker-confine', 'off']);
  try {
    const r = await call(srv.client, 'browser_navigate', { url: `${pages.url}/login.html` });
    assert.equal(r.isError, false, text(r));
    const [pid] = workerPids(srv.runtimeDir);
    assert.equal(statusField(pid, 'Seccomp'), '0');
    assert.match(srv.stderr(), /workers run unconfined \(--worker-confine off\)/);
  } finally {
    await srv.close();
  }
});

test('the token is nowhere but in tabvisor: not in its argv or environment, not in a worker\'s', async () => {
  const flagToken = 'flag-token-7d1e2c9a';
  const envToken = 'env-token-3b8f0c41';
  const srv = await startHttpServer(['--auth-token', flagToken], { TABVISOR_AUTH_TOKEN: envToken });
  try {
    assert.match(srv.stderr(), /--auth-token shows the token to every local user/);
    // The flag's token is the one in force.
    let r = await rawHttp(`${srv.base}/metrics`, { method: 'GET', headers: { authorization: `Bearer ${envToken}` } });
    assert.equal(r.status, 401);
    const { client } = await connectHttp(srv.url, { requestInit: { headers: { Authorization: `Bearer ${flagToken}` } } });
    r = await call(client, 'browser_navigate', { url: `${pages.url}/login.html` });
    assert.equal(r.isError, false, text(r));
    const [wpid] = workerPids(srv.runtimeDir);
    assert.ok(wpid, 'a worker runs');
    const places = {
      'tabvisor cmdline': `/proc/${srv.child.pid}/cmdline`,
      'tabvisor environ': `/proc/${srv.child.pid}/environ`,
      'worker cmdline': `/proc/${wpid}/cmdline`,
      'worker environ': `/proc/${wpid}/environ`,
    };
    for (const [what, file] of Object.entries(places)) {
      const s = readFileSync(file, 'latin1');
      assert.ok(!s.includes(flagToken) && !s.includes(envToken), `${what}: ${s.replace(/\0/g, ' ')}`);
      assert.ok(!s.includes('TABVISOR_AUTH_TOKEN'), what);
    }
    // The worker's environment is only what the loader and sanitizers read.
    const env = readFileSync(places['worker environ'], 'latin1').split('\0').filter(Boolean);
    for (const e of env) assert.match(e, /^(LD_LIBRARY_PATH|ASAN_OPTIONS|LSAN_OPTIONS|UBSAN_OPTIONS)=/);
    await client.close();
  } finally {
    await srv.close();
  }
});

test('--auth-token-file and $TABVISOR_AUTH_TOKEN: the token works and leaves no trace in /proc', async () => {
  const dir = freshRuntimeDir();
  const file = join(dir, 'token');
  writeFileSync(file, 'file-token-51c2\n');
  chmodSync(file, 0o644);
  const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  const H = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  for (const [args, env, token] of [
    [['--auth-token-file', file], {}, 'file-token-51c2'],
    [[], { TABVISOR_AUTH_TOKEN: 'env-token-90aa' }, 'env-token-90aa'],
  ]) {
    const srv = await startHttpServer(args, env);
    try {
      let r = await rawHttp(srv.url, { headers: H, body: INIT });
      assert.equal(r.status, 401);
      r = await rawHttp(srv.url, { headers: { ...H, authorization: `Bearer ${token}` }, body: INIT });
      assert.equal(r.status, 200, r.body);
      for (const f of ['cmdline', 'environ'])
        assert.ok(!readFileSync(`/proc/${srv.child.pid}/${f}`, 'latin1').includes(token), f);
      if (args.length) assert.match(srv.stderr(), /can be read by other users \(mode 644\)/);
    } finally {
      await srv.close();
    }
  }
});

test('bad confinement and token options are refused at start', async () => {
  const dir = freshRuntimeDir();
  const empty = join(dir, 'empty');
  writeFileSync(empty, '\n');
  const cases = [
    [['--worker-confine', 'sometimes'], /--worker-confine wants auto, require or off/],
    [['--worker-max-fds', '5'], /--worker-max-fds wants a whole number from 32/],
    [['--worker-max-memory', '0'], /--worker-max-memory wants a whole number from 16/],
    [['--worker-cpu-seconds', 'x'], /--worker-cpu-seconds wants a whole number/],
    [['--auth-token', 'a', '--auth-token-file', empty], /give one of --auth-token and --auth-token-file/],
    [['--auth-token-file', join(dir, 'missing')], /--auth-token-file .*No such file/],
    [['--auth-token-file', empty], /token from --auth-token-file must be 1 to/],
    [['--auth-token', 'has space'], /space or control character/],
  ];
  for (const [args, want] of cases) {
    const child = spawn(tabvisorBin, ['--runtime-dir', dir, ...args], { stdio: ['ignore', 'ignore', 'pipe'], env: serverEnv() });
    let log = '';
    child.stderr.on('data', (d) => { log += d; });
    const code = await new Promise((r) => child.once('exit', r));
    assert.equal(code, 2, `${args.join(' ')}: ${log}`);
    assert.match(log, want);
  }
});
