// Shared helpers for the end-to-end tests: a page server on 127.0.0.1, a
// tabvisor started through the official MCP SDK stdio client, and process
// accounting so tests can prove nothing is left running.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import { mkdtempSync, readFileSync, readdirSync, rmSync, existsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, extname, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

// Every server a test starts inherits this: no pool of ready workers
// (--pool, default 1), so process counts are exactly what the test made.
// pool.test.mjs and the soak pass --pool themselves.
export const poolDefaulted = process.env.TABVISOR_POOL === undefined;
process.env.TABVISOR_POOL ??= '0';
// nng's own leak on closing a socket with a queued message (tests/lsan.supp).
process.env.LSAN_OPTIONS ??= `suppressions=${join(dirname(fileURLToPath(import.meta.url)), '..', 'lsan.supp')}`;

const here = dirname(fileURLToPath(import.meta.url));
export const repoRoot = join(here, '..', '..');
export const pagesDir = join(repoRoot, 'tests', 'pages');
// The browser the suite drives: TABVISOR_BROWSER, which the server reads
// as its --browser too (ctest runs the core suites once per browser).
export const browserName = process.env.TABVISOR_BROWSER || 'chromium';
export const onFirefox = browserName === 'firefox';
export const tabvisorBin = process.env.TABVISOR_BIN || join(repoRoot, 'build', 'tabvisor');

// The environment a server under test gets: ours, less the variables that
// only tell the tests where things are (tabvisor warns about TABVISOR_*
// names it does not know, and a warning in every log hides real ones).
const TEST_ONLY_VARS = ['TABVISOR_BIN', 'TABVISOR_WORKER_BIN', 'TABVISOR_RELAY_WORKER_BIN', 'TABVISOR_EXTENSION_DIR', 'TABVISOR_ARGS'];
export function serverEnv(extra = {}) {
  const env = { ...process.env, ASAN_OPTIONS: process.env.ASAN_OPTIONS || 'detect_leaks=1', ...extra };
  for (const k of TEST_ONLY_VARS) if (!(k in extra)) delete env[k];
  return env;
}

const types = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css' };

// Serve tests/pages (or another directory) plus a few dynamic routes;
// resolves to {url, close}.
export async function startPageServer(root = pagesDir) {
  const server = createServer((req, res) => {
    const u = new URL(req.url, 'http://127.0.0.1');
    if (u.pathname === '/status') {
      const code = Number(u.searchParams.get('code') || 200);
      res.writeHead(code, { 'content-type': 'text/html' });
      res.end(`<title>Status ${code}</title><h1>${code}</h1>`);
      return;
    }
    if (u.pathname === '/slow') {
      const ms = Number(u.searchParams.get('ms') || 1000);
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(`<title>Slow</title><p>waited ${ms} ms</p>`);
      }, ms);
      return;
    }
    if (u.pathname === '/cookies') {
      res.writeHead(200, { 'content-type': 'text/html' });
      const c = (req.headers.cookie || '').replace(/[<&]/g, '');
      res.end(`<title>Cookies</title><p id="c">${c || '(none)'}</p>`);
      return;
    }
    const file = normalize(join(root, u.pathname === '/' ? 'index.html' : u.pathname));
    if (!file.startsWith(root) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<title>Not found</title><h1>404</h1>');
      return;
    }
    res.writeHead(200, { 'content-type': types[extname(file)] || 'application/octet-stream' });
    res.end(readFileSync(file));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(r); }),
  };
}

// A fresh private runtime dir per server, so process accounting can find
// exactly this server's children by their command lines.
// Every runtime dir a test file made is removed when the file's process
// exits, including those of tests that spawn tabvisor themselves and of a
// test that failed before its own clean-up.
const runtimeDirs = new Set();
process.on('exit', () => {
  for (const d of runtimeDirs) rmSync(d, { recursive: true, force: true });
});

export function freshRuntimeDir() {
  const dir = mkdtempSync(join(tmpdir(), 'tv-e2e-'));
  runtimeDirs.add(dir);
  return dir;
}

// Processes whose command line mentions needle (our workers and Chromium),
// and their descendants: the headless shell's renderers and helpers do not
// carry the profile path on their command lines.
export function processesMentioning(needle) {
  const all = new Map();
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (f[0] !== 'Z') all.set(Number(pid), { cmd, ppid: Number(f[1]) });
    } catch { /* gone meanwhile */ }
  }
  const hit = (pid) => all.get(pid).cmd.includes(needle);
  const found = [];
  for (const [pid, p] of all) {
    let q = pid;
    while (all.has(q) && !hit(q)) q = all.get(q).ppid;
    if (all.has(q)) found.push({ pid, cmd: p.cmd });
  }
  return found;
}

// A free TCP port on 127.0.0.1 (the relay's or nginx's, for a test or a bench
// run), below the kernel's ephemeral range: a port from bind(0) is handed out
// again by the kernel to the next bind(0) or outgoing connection of any
// process (a page server, Chromium's requests), and a server started on
// it later (the relay, which tabvisor may restart on the same port; nginx,
// whose port the replicas must know before it starts) would find it taken.
export async function freePort() {
  const [lo] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  const top = Math.min(lo > 2000 ? lo : 32768, 65536) - 1;
  for (let i = 0; i < 200; i++) {
    const port = 1024 + Math.floor(Math.random() * (top - 1024));
    const s = createTcpServer();
    const ok = await new Promise((r) => {
      s.once('error', () => r(false));
      s.listen(port, '127.0.0.1', () => r(true));
    });
    if (ok) {
      await new Promise((r) => s.close(r));
      return port;
    }
  }
  throw new Error('no free port below the ephemeral range');
}

export async function waitFor(pred, ms = 10000, step = 50) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await pred();
    if (v) return v;
    if (Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, step));
  }
}

// Start tabvisor through the SDK's stdio transport. Returns
// {client, transport, runtimeDir, stderr(), close()}. env, when given, is
// the server's whole environment instead of ours; client, an SDK Client of
// the test's own (capabilities, request handlers) to connect.
export async function startServer(extraArgs = [], { env, client: own } = {}) {
  const runtimeDir = freshRuntimeDir();
  const transport = new StdioClientTransport({
    command: tabvisorBin,
    args: ['--runtime-dir', runtimeDir, '--output-dir', join(runtimeDir, 'out'), ...extraArgs],
    stderr: 'pipe',
    env: env || serverEnv(),
  });
  let log = '';
  transport.stderr?.on('data', (d) => { log += d.toString(); });
  const client = own || new Client({ name: 'tabvisor-e2e', version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    transport,
    runtimeDir,
    pid: transport.pid,
    stderr: () => log,
    async close() {
      await client.close();
      await waitFor(() => processesMentioning(runtimeDir).length === 0, 10000);
      rmSync(runtimeDir, { recursive: true, force: true });
      assertNoSanitizerReports(log);
    },
  };
}

// Sanitizer reports from the server or any worker (their stderr is the
// server's) fail the test that ran them.
export function assertNoSanitizerReports(log) {
  const m = log.match(/(ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:)[^\n]*/);
  if (m) throw new Error(`sanitizer report from tabvisor: ${m[0]}\n${log.slice(Math.max(0, m.index - 200), m.index + 3000)}`);
}

// The output directory of a browser session (its files live there only):
// sessionId's, or the connection's default session's (created if needed).
export async function sessionOutputDir(client, sessionId) {
  const find = async () => (await call(client, 'browser_session_list')).structuredContent.sessions
    .find((s) => (sessionId ? s.sessionId === sessionId : s.isDefault));
  let s = await find();
  if (!s && !sessionId) {
    await call(client, 'browser_tabs', { action: 'list' });
    s = await find();
  }
  if (!s) throw new Error(`no session ${sessionId || '(default)'} on this connection`);
  return s.outputDir;
}

// Call a tool; returns the raw result (isError results do not throw).
export async function call(client, name, args = {}, opts = {}) {
  return client.callTool({ name, arguments: args }, undefined, { timeout: 120000, ...opts });
}

export function text(result) {
  return result.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

// Find the ref of the first snapshot line matching role and name.
export function refOf(snapshot, role, name) {
  // A line's element (`- role "name" [states] [ref=eN]`) or an item written
  // inline in a compact table row (`role "name" [states] [ref=eN]`).
  const item = /(?:^\s*- |^|\s)([\w-]+)(?: "((?:[^"\\]|\\.)*)")?(?: \[(?!ref=)[^\]]*\])* \[ref=(\w+)\]/g;
  for (const line of snapshot.split('\n')) {
    for (const m of line.matchAll(item)) {
      if (m[1] === role && (name === undefined || JSON.parse(`"${m[2] ?? ''}"`) === name)) return m[3];
    }
  }
  return undefined;
}

// A raw line-based client for input the SDK would refuse to send.
export function startRawServer(extraArgs = []) {
  const runtimeDir = freshRuntimeDir();
  const child = spawn(tabvisorBin, ['--runtime-dir', runtimeDir, ...extraArgs], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let buf = '';
  const waiting = [];
  const messages = [];
  child.stdout.on('data', (d) => {
    buf += d.toString();
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      const msg = JSON.parse(line); // stdout must carry only JSON-RPC lines
      messages.push(msg);
      waiting.splice(0).forEach((w) => w());
    }
  });
  let log = '';
  child.stderr.on('data', (d) => { log += d.toString(); });
  return {
    child,
    runtimeDir,
    stderr: () => log,
    send(line) { child.stdin.write(line + '\n'); },
    async next(ms = 20000) {
      const end = Date.now() + ms;
      while (!messages.length) {
        if (Date.now() > end) throw new Error('no reply from tabvisor');
        await new Promise((r) => { waiting.push(r); setTimeout(r, 100); });
      }
      return messages.shift();
    },
    async request(id, method, params) {
      this.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
      return this.next();
    },
    async close() {
      child.stdin.end();
      await new Promise((r) => (child.exitCode !== null || child.signalCode ? r() : child.once('exit', r)));
      rmSync(runtimeDir, { recursive: true, force: true });
      assertNoSanitizerReports(log);
    },
  };
}

// --- Streamable HTTP (tabvisor --http) ---

// Start `tabvisor --http 127.0.0.1:0` and read its port from the
// "Listening on" line. Returns {url (the /mcp endpoint), base, child,
// runtimeDir, stderr(), close()}; close() sends SIGTERM and checks that
// nothing of this server is left and that no sanitizer spoke.
export async function startHttpServer(extraArgs = [], env = {}) {
  const runtimeDir = freshRuntimeDir();
  const child = spawn(tabvisorBin, ['--http', '127.0.0.1:0', '--runtime-dir', runtimeDir,
    '--output-dir', join(runtimeDir, 'out'), ...extraArgs], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: serverEnv(env),
  });
  let log = '';
  child.stderr.on('data', (d) => { log += d.toString(); });
  const exited = new Promise((r) => child.once('exit', (code, sig) => r({ code, sig })));
  const url = await Promise.race([
    waitFor(() => log.match(/Listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/)?.[1], 20000),
    exited.then(() => undefined),
  ]);
  if (!url) throw new Error(`tabvisor --http did not start:\n${log}`);
  return {
    url,
    base: url.replace(/\/mcp$/, ''),
    port: Number(new URL(url).port),
    child,
    runtimeDir,
    stderr: () => log,
    async close() {
      if (child.exitCode === null && !child.signalCode) child.kill('SIGTERM');
      const { code } = await exited;
      await waitFor(() => processesMentioning(runtimeDir).length === 0, 10000);
      const left = processesMentioning(runtimeDir);
      rmSync(runtimeDir, { recursive: true, force: true });
      assertNoSanitizerReports(log);
      if (code !== 0) throw new Error(`tabvisor --http exited with ${code}\n${log.slice(-3000)}`);
      if (left.length) throw new Error(`left running: ${JSON.stringify(left)}`);
    },
  };
}

// An SDK client connected over StreamableHTTPClientTransport.
export async function connectHttp(url, opts = {}) {
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const transport = new StreamableHTTPClientTransport(new URL(url), opts);
  const client = new Client({ name: 'tabvisor-e2e-http', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

// One raw HTTP request with full control over the headers (Host included).
// Resolves to {status, headers, body (string)}.
export async function rawHttp(url, { method = 'POST', headers = {}, body } = {}) {
  const { request } = await import('node:http');
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const h = { ...headers };
    if (body !== undefined && !Object.keys(h).some((k) => /^(content-length|transfer-encoding)$/i.test(k))) {
      h['content-length'] = Buffer.byteLength(body);
    }
    const req = request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method, headers: h }, (res) => {
      let data = '';
      res.on('data', (d) => { data += d; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: data }));
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

// Wait until the supervisor keeps a saved state of session sessionId (the
// default session when undefined) with at least `tabs` tabs: the worker
// captures it once idle for a moment after a call (worker/session_state.c).
// Returns that savedState.
export async function waitForSavedState(client, sessionId, tabs = 1) {
  let saved;
  const ok = await waitFor(async () => {
    const r = await call(client, 'browser_session_list');
    const list = r.structuredContent?.sessions || [];
    const s = sessionId ? list.find((x) => x.sessionId === sessionId) : list.find((x) => x.isDefault) || list[0];
    saved = s?.savedState;
    return saved && saved.tabs >= tabs;
  }, 30000, 50);
  if (!ok) throw new Error(`no saved state for ${sessionId || 'the default session'}: ${JSON.stringify(saved)}`);
  return saved;
}
