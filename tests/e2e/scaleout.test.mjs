// Scale-out: two tabvisor replicas (--instance-id r1, r2) behind nginx running
// deploy/nginx/tabvisor.conf, all on 127.0.0.1. 16 SDK clients through nginx each
// create a browser session and navigate, snapshot and click in it; every call of a
// client must reach the replica its Mcp-Session-Id names (each replica's /metrics
// counts exactly its own clients' calls; nginx's access log shows where each
// request went). Then r1 dies (SIGKILL, with its Chromium and workers): only r1's
// clients fail, r2's carry on, and new clients all go to r2.
//
// nginx is Debian's (deploy/install-deps.sh installs it), run here as an
// unprivileged foreground process with every file in the test's own directory.
// A second test checks the prefix on pooled and default browser sessions (stdio).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  startPageServer, startServer, startHttpServer, connectHttp, rawHttp, call, text, refOf, waitFor,
  processesMentioning, assertNoSanitizerReports, repoRoot, freePort,
} from './lib.mjs';
import { parseMetrics, promtool } from './promtext.mjs';

const NGINX = process.env.TABVISOR_NGINX || '/usr/sbin/nginx';
const haveNginx = existsSync(NGINX);
// Outside CI a machine without nginx skips; in CI it must be there.
const skip = !haveNginx && !process.env.CI
  ? `${NGINX} is not installed (deploy/install-deps.sh installs Debian's nginx)` : false;

const CLIENTS = 16;
const LATE_CLIENTS = 4;
const TOOLS = ['browser_session_create', 'browser_navigate', 'browser_snapshot', 'browser_click'];
// nginx runs as another user (nobody, when the test runs as root): without a
// token a replica on loopback would serve only its own user, so the replicas
// have one and the clients send it through the proxy (docs/deploy.md).
const TOKEN = randomBytes(16).toString('hex');
const AUTH = { authorization: `Bearer ${TOKEN}` };
const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...AUTH };
const PING = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
const UUID = '00000000-0000-4000-8000-00000000dead';

// deploy/nginx/tabvisor.conf with its three example addresses replaced, inside a main
// config that keeps pid, logs and temp files in dir.
function nginxConfig(dir, proxyPort, r1Port, r2Port) {
  let snippet = readFileSync(join(repoRoot, 'deploy', 'nginx', 'tabvisor.conf'), 'utf8');
  for (const [from, to] of [['127.0.0.1:8930', proxyPort], ['127.0.0.1:8931', r1Port], ['127.0.0.1:8932', r2Port]]) {
    assert.ok(snippet.includes(from), `deploy/nginx/tabvisor.conf no longer names ${from}`);
    snippet = snippet.split(from).join(`127.0.0.1:${to}`);
  }
  writeFileSync(join(dir, 'tabvisor.conf'), snippet);
  writeFileSync(join(dir, 'nginx.conf'), `daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log info;
events { worker_connections 1024; }
http {
    log_format tv '$status $request_method "$http_mcp_session_id" $upstream_addr';
    access_log ${dir}/access.log tv;
    client_body_temp_path ${dir}/body;
    proxy_temp_path ${dir}/proxy;
    fastcgi_temp_path ${dir}/fastcgi;
    uwsgi_temp_path ${dir}/uwsgi;
    scgi_temp_path ${dir}/scgi;
    include ${dir}/tabvisor.conf;
}
`);
}

// nginx in the foreground. As root it runs as nobody (a master running as root would
// also start its workers as another user); otherwise as us.
async function startNginx(dir, port) {
  const asRoot = process.getuid() === 0;
  if (asRoot) chownSync(dir, 65534, 65534);
  const child = spawn(NGINX, ['-p', `${dir}/`, '-e', join(dir, 'error.log'), '-c', join(dir, 'nginx.conf')],
    { stdio: ['ignore', 'pipe', 'pipe'], ...(asRoot ? { uid: 65534, gid: 65534 } : {}) });
  let log = '';
  child.stdout.on('data', (d) => { log += d; });
  child.stderr.on('data', (d) => { log += d; });
  const exited = new Promise((r) => child.once('exit', (code, sig) => r({ code, sig })));
  const errorLog = () => { try { return readFileSync(join(dir, 'error.log'), 'utf8'); } catch { return ''; } };
  const up = await Promise.race([
    waitFor(async () => {
      try { return (await rawHttp(`http://127.0.0.1:${port}/`, { method: 'GET' })).status === 404; } catch { return false; }
    }, 15000, 100),
    exited.then(() => false),
  ]);
  if (!up) {
    child.kill('SIGTERM');
    throw new Error(`nginx did not start:\n${log}\n${errorLog()}`);
  }
  return {
    errorLog,
    accessLog: () => readFileSync(join(dir, 'access.log'), 'utf8'),
    async stop() {
      if (child.exitCode === null && !child.signalCode) child.kill('SIGTERM'); // fast shutdown
      await exited;
      await waitFor(() => processesMentioning(dir).length === 0, 10000);
      assert.deepEqual(processesMentioning(dir), [], 'nginx left processes');
    },
  };
}

function sample(fams, family, name, labels = {}) {
  const f = fams.get(family);
  const hits = (f?.samples || []).filter((s) => s.name === name &&
    Object.keys(labels).length === Object.keys(s.labels).length &&
    Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  assert.ok(hits.length <= 1, `${name}${JSON.stringify(labels)}: ${hits.length} series`);
  return hits.length ? hits[0].value : 0;
}

async function scrape(srv) {
  return (await rawHttp(`${srv.base}/metrics`, { method: 'GET', headers: AUTH })).body;
}

// The ok count of each tool in TOOLS on one replica.
function okCounts(fams) {
  return Object.fromEntries(TOOLS.map((t) =>
    [t, sample(fams, 'tabvisor_tool_calls_total', 'tabvisor_tool_calls_total', { tool: t, outcome: 'ok' })]));
}

// Navigate, snapshot and click in one browser session; the counter must count.
async function navSnapClick(client, sessionId, pagesUrl) {
  let r = await call(client, 'browser_navigate', { sessionId, url: `${pagesUrl}/counter.html` });
  assert.equal(r.isError, false, text(r));
  r = await call(client, 'browser_snapshot', { sessionId });
  assert.equal(r.isError, false, text(r));
  const ref = refOf(r.structuredContent.snapshot, 'button', 'Increment');
  assert.ok(ref, r.structuredContent.snapshot);
  r = await call(client, 'browser_click', { sessionId, target: ref });
  assert.equal(r.isError, false, text(r));
}

// A client through the proxy: its replica is the prefix of its Mcp-Session-Id.
async function newClient(proxyUrl) {
  const c = await connectHttp(proxyUrl, { requestInit: { headers: AUTH } });
  const m = /^(r[12])\.[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.exec(c.transport.sessionId);
  assert.ok(m, `Mcp-Session-Id ${c.transport.sessionId}`);
  c.replica = m[1];
  c.errors = [];
  c.client.onerror = (e) => c.errors.push(e); // the GET stream's reconnects after r1 dies
  return c;
}

// browser_session_create, then navigate, snapshot and click in the new session.
async function work(c, pagesUrl) {
  const r = await call(c.client, 'browser_session_create');
  assert.equal(r.isError, false, text(r));
  c.browserSession = r.structuredContent.sessionId;
  assert.ok(c.browserSession.startsWith(`${c.replica}.`), `${c.browserSession} made by ${c.replica}`);
  await navSnapClick(c.client, c.browserSession, pagesUrl);
}

test('2 replicas behind nginx: each MCP session stays on its replica; a dead replica takes only its own sessions', { skip, timeout: 540000 }, async (t) => {
  assert.ok(haveNginx, `CI must have nginx (${NGINX}; deploy/install-deps.sh)`);
  const pages = await startPageServer();
  const dir = mkdtempSync(join(tmpdir(), 'tv-scaleout-'));
  const proxyPort = await freePort();
  const proxyUrl = `http://127.0.0.1:${proxyPort}/mcp`;
  const clients = [];
  let nginx, r1, r2, r1Dead = false;
  try {
    // Room for every client on either replica (the default is 16): how nginx splits them
    // is checked below, not assumed here.
    const replicaArgs = (name) => ['--instance-id', name, '--allowed-host', `127.0.0.1:${proxyPort}`,
      '--max-sessions', String(CLIENTS + LATE_CLIENTS)];
    const started = await Promise.allSettled([startHttpServer(replicaArgs('r1'), { TABVISOR_AUTH_TOKEN: TOKEN }), startHttpServer(replicaArgs('r2'), { TABVISOR_AUTH_TOKEN: TOKEN })]);
    [r1, r2] = started.map((p) => p.value); // the finally stops whichever started
    for (const p of started) if (p.status === 'rejected') throw p.reason;
    const replicas = { r1, r2 };
    nginxConfig(dir, proxyPort, r1.port, r2.port);
    nginx = await startNginx(dir, proxyPort);

    // Each replica says who it is.
    for (const [name, srv] of Object.entries(replicas)) {
      const h = JSON.parse((await rawHttp(`${srv.base}/healthz`, { method: 'GET' })).body);
      assert.equal(h.instanceId, name);
      const fams = parseMetrics(await scrape(srv));
      assert.equal(sample(fams, 'tabvisor_instance_info', 'tabvisor_instance_info', { instance_id: name }), 1);
    }

    // 16 clients, connected one after another: least_conn with nothing in flight takes
    // the replicas in turn, so both get clients (how many each is nginx's business).
    for (let i = 0; i < CLIENTS; i++) clients.push(await newClient(proxyUrl));
    const of = (name) => clients.filter((c) => c.replica === name);
    assert.ok(of('r1').length > 0 && of('r2').length > 0,
      `clients per replica: r1 ${of('r1').length}, r2 ${of('r2').length}`);
    t.diagnostic(`clients per replica: r1 ${of('r1').length}, r2 ${of('r2').length}`);
    await Promise.all(clients.map((c) => work(c, pages.url)));

    // Each replica counted exactly its own clients' calls, and holds exactly their
    // MCP sessions and browser sessions.
    for (const [name, srv] of Object.entries(replicas)) {
      const n = of(name).length;
      const text2 = await scrape(srv);
      const fams = parseMetrics(text2);
      assert.deepEqual(okCounts(fams), Object.fromEntries(TOOLS.map((t) => [t, n])), `${name}: ${n} clients`);
      assert.equal(sample(fams, 'tabvisor_mcp_sessions', 'tabvisor_mcp_sessions'), n, name);
      assert.equal(sample(fams, 'tabvisor_browser_sessions', 'tabvisor_browser_sessions'), n, name);
      const pt = promtool(text2);
      if (pt) assert.ok(pt.ok && pt.output === '', `${pt.bin} check metrics:\n${pt.output}`);
      else assert.ok(!process.env.CI, 'CI must have promtool (deploy/install-deps.sh)');
    }

    // A browser session lives on one replica: an MCP session on the other cannot use it.
    const [a, b] = [of('r1')[0], of('r2')[0]];
    let r = await call(b.client, 'browser_snapshot', { sessionId: a.browserSession });
    assert.equal(r.structuredContent?.error?.code, 'SESSION_NOT_FOUND', text(r));

    // Routing by prefix: an id naming r1 reaches r1, which does not know it (tabvisor's
    // own 404); a name no replica has, or none at all, is nginx's 404.
    const post = (sid) => rawHttp(proxyUrl, { headers: { ...JSON_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' }, body: PING });
    r = await post(`r1.${UUID}`);
    assert.equal(r.status, 404);
    assert.deepEqual(JSON.parse(r.body).error, { code: -32001, message: 'Session not found' });
    for (const sid of [`r3.${UUID}`, UUID, 'R1.x', '.r1', `r1x.${UUID}`]) {
      r = await post(sid);
      assert.equal(r.status, 404, sid);
      assert.equal(r.headers['content-type'], 'application/json', sid);
      assert.match(JSON.parse(r.body).error.message, /no replica of this proxy holds this Mcp-Session-Id/, sid);
    }

    // r1 dies with everything it started, as a machine or pod would.
    const r1Procs = [r1.child.pid, ...processesMentioning(r1.runtimeDir).map((p) => p.pid)];
    assert.ok(r1Procs.length > 2, JSON.stringify(r1Procs)); // tabvisor, Chromium, workers
    const r1Exit = new Promise((res) => (r1.child.exitCode !== null || r1.child.signalCode ? res() : r1.child.once('exit', res)));
    for (const pid of r1Procs) try { process.kill(pid, 'SIGKILL'); } catch { /* gone already */ }
    await r1Exit;
    r1Dead = true;
    await waitFor(() => processesMentioning(r1.runtimeDir).length === 0, 20000);
    assert.deepEqual(processesMentioning(r1.runtimeDir), [], 'r1 left processes');
    assertNoSanitizerReports(r1.stderr());

    // r1's clients: their next call fails, as an unknown session (so an MCP client
    // initializes again); r2's carry on in the browser sessions they had.
    await Promise.all([
      ...of('r1').map(async (c) => {
        await assert.rejects(call(c.client, 'browser_snapshot', { sessionId: c.browserSession }),
          (e) => e.code === 404 && /the replica holding it is unreachable/.test(e.message));
      }),
      ...of('r2').map((c) => navSnapClick(c.client, c.browserSession, pages.url)),
    ]);
    r = await post(`r1.${UUID}`);
    assert.equal(r.status, 404);
    assert.equal(JSON.parse(r.body).error.code, -32001);

    // New clients all go to r2 (nginx skips r1 as it refuses connections) and work.
    const late = [];
    for (let i = 0; i < LATE_CLIENTS; i++) late.push(await newClient(proxyUrl));
    clients.push(...late);
    assert.deepEqual(late.map((c) => c.replica), late.map(() => 'r2'));
    await Promise.all(late.map((c) => work(c, pages.url)));

    // r2 counted its first clients' calls twice (but create once), the late ones' once;
    // the SESSION_NOT_FOUND above is no ok call.
    const n2 = of('r2').length - LATE_CLIENTS;
    const fams = parseMetrics(await scrape(r2));
    assert.deepEqual(okCounts(fams), {
      browser_session_create: n2 + LATE_CLIENTS,
      browser_navigate: 2 * n2 + LATE_CLIENTS,
      browser_snapshot: 2 * n2 + LATE_CLIENTS,
      browser_click: 2 * n2 + LATE_CLIENTS,
    });
    assert.equal(sample(fams, 'tabvisor_browser_sessions', 'tabvisor_browser_sessions'), n2 + LATE_CLIENTS);

    // nginx sent every request naming a replica to that replica, and nowhere else.
    const addr = { r1: `127.0.0.1:${r1.port}`, r2: `127.0.0.1:${r2.port}` };
    const lines = nginx.accessLog().trim().split('\n').map((l) => /^(\d+) (\w+) "([^"]*)" (.*)$/.exec(l));
    assert.ok(lines.every(Boolean), nginx.accessLog());
    let routed = 0;
    for (const [line, , , sid, upstream] of lines) {
      const name = /^(r[12])\./.exec(sid)?.[1];
      if (!name) continue;
      assert.equal(upstream, addr[name], line);
      routed++;
    }
    assert.ok(routed >= (CLIENTS + LATE_CLIENTS) * TOOLS.length, `${routed} routed requests`);
    t.diagnostic(`${lines.length} requests through nginx, ${routed} of them routed by prefix`);

    // No replica left: an initialize gets nginx's 503, a session's request the 404.
    const lateSid = late[0].transport.sessionId;
    await Promise.allSettled(clients.splice(0).map((c) => c.client.close()));
    const last = r2;
    r2 = null;
    await last.close();
    r = await rawHttp(proxyUrl, { headers: JSON_HEADERS, body: INIT });
    assert.equal(r.status, 503, r.body);
    assert.deepEqual(JSON.parse(r.body).error, { code: -32000, message: 'No tabvisor replica reachable' });
    r = await post(lateSid);
    assert.equal(r.status, 404, r.body);
    assert.match(JSON.parse(r.body).error.message, /the replica holding it is unreachable/);
  } finally {
    await Promise.allSettled(clients.map((c) => c.client.close()));
    const errors = [];
    for (const stop of [() => nginx?.stop(), () => r2?.close(),
      () => r1 && !r1Dead && r1.close(), () => pages.close()]) {
      try { await stop(); } catch (e) { errors.push(e); }
    }
    if (r1Dead) rmSync(r1.runtimeDir, { recursive: true, force: true });
    const nginxErrors = nginx ? nginx.errorLog() : '';
    rmSync(dir, { recursive: true, force: true });
    if (errors.length) throw new Error(`cleanup: ${errors.map((e) => e.stack || e).join('\n')}\nnginx error log:\n${nginxErrors}`);
  }
});

// The other ways a browser session gets its id: a pooled worker's (made ahead of the
// session, pool.c) and the default session of a client that names none. Over stdio:
// the name is the replica's, whatever the transport.
test('--instance-id: pooled and default browser sessions carry the prefix too', async () => {
  const pages = await startPageServer();
  const longest = 'abcdefghijklmnopqrstuvwxyz-01234';
  const srv = await startServer(['--instance-id', longest, '--pool', '1', '--log-level', 'debug']);
  try {
    const id = new RegExp(`^${longest}\\.[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`);
    // The pooled worker is ready (or starting) before the first create takes it.
    let r = await call(srv.client, 'browser_session_create');
    assert.equal(r.isError, false, text(r));
    const created = r.structuredContent.sessionId;
    assert.match(created, id);
    assert.ok(srv.stderr().includes(`pool: worker for future session ${created} starting`), 'made by the pool');
    await navSnapClick(srv.client, created, pages.url);
    r = await call(srv.client, 'browser_navigate', { url: `${pages.url}/counter.html` }); // the default session
    assert.equal(r.isError, false, text(r));
    r = await call(srv.client, 'browser_session_list');
    const sessions = r.structuredContent.sessions;
    assert.equal(sessions.length, 2, JSON.stringify(sessions));
    for (const s of sessions) assert.match(s.sessionId, id);
    assert.ok(sessions.some((s) => s.isDefault && s.sessionId !== created));
    r = await call(srv.client, 'browser_session_close', { sessionId: created });
    assert.equal(r.isError, false, text(r));
  } finally {
    await srv.close();
    await pages.close();
  }
});
