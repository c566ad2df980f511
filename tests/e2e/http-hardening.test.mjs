// Hardening of the MCP transports against hostile clients (issue 7, findings
// 2, 4, 5, 6, 9, 10, 12): log lines never carry other clients' secrets, a
// cancelled request gets its HTTP answer, descriptor exhaustion does not
// spin, bodies of refused requests are never buffered, MCP sessions and SSE
// streams are bounded, half-closes, duplicate Hosts, HTTP/1.0 and id-only
// messages over stdio are handled, and SSE streams resume from Last-Event-ID.
// Raw HTTP through node's net and http modules, the official SDK client, and
// real Chromium behind the tool calls.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import { request, Agent } from 'node:http';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  startPageServer, startHttpServer, startRawServer, connectHttp, rawHttp, call, text, waitFor,
  freshRuntimeDir, tabvisorBin, processesMentioning, assertNoSanitizerReports,
} from './lib.mjs';

const pages = await startPageServer();
test.after(() => pages.close());

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function rawInit(url, agent) {
  const r = await httpReq(url, { headers: JSON_HEADERS, body: JSON.stringify(INIT), agent });
  assert.equal(r.status, 200, r.body);
  return r.headers['mcp-session-id'];
}

// rawHttp with an optional agent (keep-alive over one socket).
function httpReq(url, { method = 'POST', headers = {}, body, agent } = {}) {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const h = { ...headers };
    if (body !== undefined) h['content-length'] = Buffer.byteLength(body);
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, method, headers: h, agent }, (res) => {
      let data = '';
      res.on('data', (d) => { data += d; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: data }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const mcpHeaders = (sid) => ({ ...JSON_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' });
const rpc = (id, method, params) => JSON.stringify({ jsonrpc: '2.0', id, method, params });
const toolCall = (id, name, args, meta) => rpc(id, 'tools/call', { name, arguments: args, ...(meta ? { _meta: meta } : {}) });

// Bytes over a plain TCP socket: write text, optionally shut our sending
// side, collect everything until the server closes (or ms passes).
function rawSocket(port, textOut, { end = false, ms = 20000 } = {}) {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let data = '';
    const timer = setTimeout(() => { s.destroy(); resolve({ data, closed: false }); }, ms);
    s.on('data', (d) => { data += d; });
    s.on('error', () => {});
    s.on('close', () => { clearTimeout(timer); resolve({ data, closed: true }); });
    s.write(textOut, () => { if (end) s.end(); });
  });
}

// Parse SSE events ("id", "data") out of a body.
function sseEvents(body) {
  return body.split('\n\n').filter((e) => /^(id|data|event):/m.test(e)).map((e) => {
    const id = e.match(/^id: (.*)$/m)?.[1];
    const data = e.match(/^data: ?(.*)$/m)?.[1] ?? '';
    return { id, data, msg: data ? JSON.parse(data) : undefined };
  });
}

// An SSE response read incrementally: {status, headers, events, body(), close()}.
function openSse(url, { method = 'GET', headers = {}, body } = {}) {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const h = { ...headers };
    if (body !== undefined) h['content-length'] = Buffer.byteLength(body);
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, method, headers: h, agent: false }, (res) => {
      let data = '';
      const st = { status: res.statusCode, headers: res.headers, ended: false };
      res.on('data', (d) => { data += d; });
      res.on('end', () => { st.ended = true; });
      res.on('error', () => {});
      st.body = () => data;
      st.events = () => sseEvents(data);
      st.close = () => req.destroy();
      resolve(st);
    });
    req.on('error', reject);
    req.end(body);
  });
}

function workerPids(runtimeDir) {
  return processesMentioning(runtimeDir).filter((p) => p.cmd.includes('tabvisor-worker')).map((p) => p.pid);
}

test('#2 logging: a client at level debug sees only its own lines, never another client\'s ids or pids', async () => {
  const srv = await startHttpServer(['--log-level', 'debug']);
  try {
    // A: raw client with a GET stream, at level debug; everything it receives is kept.
    const sidA = await rawInit(srv.url);
    let seenByA = '';
    const getA = await openSse(srv.url, { headers: { ...mcpHeaders(sidA), accept: 'text/event-stream' } });
    assert.equal(getA.status, 200);
    const postA = async (body) => { const r = await rawHttp(srv.url, { headers: mcpHeaders(sidA), body }); seenByA += r.body; return r; };
    await postA(rpc(2, 'logging/setLevel', { level: 'debug' }));

    // B: an SDK client doing ordinary work in its own and in a created session.
    const b = await connectHttp(srv.url);
    let r = await call(b.client, 'browser_navigate', { url: `${pages.url}/counter.html` });
    assert.equal(r.isError, false, text(r));
    r = await call(b.client, 'browser_session_create');
    const created = r.structuredContent.sessionId;
    r = await call(b.client, 'browser_evaluate', { sessionId: created, function: '() => 6 * 7' });
    assert.equal(text(r).trim(), '42');
    r = await call(b.client, 'browser_session_list');
    const secretsB = [b.transport.sessionId, created, ...r.structuredContent.sessions.map((s) => s.sessionId)];
    const pidsB = workerPids(srv.runtimeDir);
    assert.ok(pidsB.length >= 2, 'B runs two workers');
    await call(b.client, 'browser_session_close', { sessionId: created });

    // A's own work does reach A, so the channel is live and this is not vacuous.
    r = await postA(toolCall(3, 'browser_session_create', {}));
    const mine = JSON.parse(sseEvents(r.body).at(-1)?.data || r.body).result.structuredContent.sessionId;
    await postA(toolCall(4, 'browser_session_close', { sessionId: mine }));
    assert.ok(await waitFor(() => (getA.body() + seenByA).includes(`session ${mine} closed`), 5000), getA.body());
    await sleep(500);
    seenByA += getA.body();
    getA.close();

    for (const s of secretsB) assert.ok(!seenByA.includes(s), `A saw B's id ${s}:\n${seenByA}`);
    for (const pid of pidsB) assert.doesNotMatch(seenByA, new RegExp(`\\b${pid}\\b`), `A saw B's worker pid ${pid}`);
    assert.doesNotMatch(seenByA, /ws:\/\/|DevTools/i);
    assert.match(srv.stderr(), new RegExp(`session ${created} created`), 'the server did log B\'s lines (on stderr)');
    await b.client.close();
  } finally {
    await srv.close();
  }
});

test('#4 a request cancelled with notifications/cancelled gets its HTTP answer, and its MCP session expires', async () => {
  const srv = await startHttpServer(['--session-idle-timeout', '2']);
  try {
    const sid = await rawInit(srv.url);
    const h = mcpHeaders(sid);
    // Warm up the session's worker so the cancelled call is surely in flight.
    let r = await rawHttp(srv.url, { headers: h, body: toolCall(2, 'browser_evaluate', { function: '() => 1' }) });
    assert.equal(r.status, 200, r.body);
    for (const [id, meta] of [[10, undefined], [11, { progressToken: 'p' }]]) {
      const t0 = Date.now();
      const pending = rawHttp(srv.url, { headers: h, body: toolCall(id, 'browser_navigate', { url: `${pages.url}/slow?ms=8000` }, meta) });
      await sleep(1200);
      const c = await rawHttp(srv.url, { headers: h, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'test' } }) });
      assert.equal(c.status, 202);
      const res = await Promise.race([pending, sleep(5000).then(() => 'hung')]);
      assert.notEqual(res, 'hung', `the cancelled POST ${id} never got an answer`);
      assert.equal(res.status, 200);
      assert.match(res.headers['content-type'], /^text\/event-stream/);
      assert.ok(!sseEvents(res.body).some((e) => e.msg?.id === id), 'no response for a cancelled request');
      assert.ok(Date.now() - t0 < 6000);
    }
    // Nothing is open any more: the idle MCP session ends.
    const ended = await waitFor(async () => JSON.parse((await rawHttp(`${srv.base}/healthz`, { method: 'GET' })).body).mcpSessions === 0, 10000, 250);
    assert.ok(ended, 'the MCP session expired');
    r = await rawHttp(srv.url, { headers: h, body: rpc(3, 'ping') });
    assert.equal(r.status, 404);
  } finally {
    await srv.close();
  }
});

// A server started through `sh -c 'ulimit -n N; exec tabvisor ...'`.
async function startLimited(nofile, extra = []) {
  const runtimeDir = freshRuntimeDir();
  const args = ['--http', '127.0.0.1:0', '--runtime-dir', runtimeDir, '--output-dir', join(runtimeDir, 'out'), ...extra];
  const child = spawn('sh', ['-c', `ulimit -n ${nofile} && exec "$0" "$@"`, tabvisorBin, ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, ASAN_OPTIONS: process.env.ASAN_OPTIONS || 'detect_leaks=1' },
  });
  let log = '';
  child.stderr.on('data', (d) => { log += d; });
  const exited = new Promise((r) => child.once('exit', (code) => r(code)));
  const url = await waitFor(() => log.match(/Listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/)?.[1], 20000);
  assert.ok(url, log);
  return {
    url, port: Number(new URL(url).port), base: url.replace(/\/mcp$/, ''), pid: child.pid, stderr: () => log,
    async close() {
      child.kill('SIGTERM');
      const code = await exited;
      rmSync(runtimeDir, { recursive: true, force: true });
      assertNoSanitizerReports(log);
      assert.equal(code, 0, log.slice(-2000));
    },
  };
}

function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100; // utime + stime, in clock ticks
}

function rssKiB(pid) {
  return Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+)/m)[1]);
}

test('#5 out of descriptors: accepting pauses (no spin, one line per pause) and recovers', async (t) => {
  const srv = await startLimited(40);
  const socks = [];
  try {
    for (let i = 0; i < 60; i++) {
      const s = connect(srv.port, '127.0.0.1');
      s.on('error', () => {});
      socks.push(s);
    }
    await sleep(500);
    const lines0 = (srv.stderr().match(/accept: /g) || []).length;
    const cpu0 = cpuSeconds(srv.pid);
    await sleep(3000);
    const cpu = cpuSeconds(srv.pid) - cpu0;
    const lines = (srv.stderr().match(/accept: /g) || []).length - lines0;
    t.diagnostic(`out of descriptors for 3 s: ${cpu.toFixed(2)} CPU-s, ${lines} accept lines`);
    assert.ok(lines0 >= 1, 'the server ran out of descriptors');
    assert.ok(cpu < 0.5, `${cpu} CPU-s in 3 s while out of descriptors`);
    assert.ok(lines <= 5, `${lines} accept lines in 3 s`);
    for (const s of socks) s.destroy();
    await sleep(1500);
    const r = await rawHttp(`${srv.base}/healthz`, { method: 'GET' });
    assert.equal(r.status, 200);
    const sid = await rawInit(srv.url);
    assert.ok(sid);
  } finally {
    for (const s of socks) s.destroy();
    await srv.close();
  }
});

test('#6 refused requests are answered on their headers; their bodies never reach memory', async (t) => {
  const srv = await startHttpServer();
  try {
    const pid = srv.child.pid;
    const before = rssKiB(pid);
    let peak = before;
    const sampler = setInterval(() => { peak = Math.max(peak, rssKiB(pid)); }, 20);
    const body = Buffer.alloc(4 << 20, 'x');
    const statuses = await Promise.all(Array.from({ length: 100 }, () => new Promise((resolve) => {
      const s = connect(srv.port, '127.0.0.1');
      let data = '';
      s.on('data', (d) => { data += d; });
      s.on('error', () => {});
      s.on('close', () => resolve(data.slice(0, 12)));
      s.write(`POST /mcp HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
      s.write(body, () => s.end());
      setTimeout(() => s.destroy(), 15000);
    })));
    clearInterval(sampler);
    peak = Math.max(peak, rssKiB(pid));
    const grew = (peak - before) / 1024;
    t.diagnostic(`100 x 4 MiB refused bodies: RSS ${before >> 10} MiB -> peak ${peak >> 10} MiB`);
    assert.ok(grew < 48, `RSS grew by ${grew.toFixed(1)} MiB (from ${before >> 10} MiB)`);
    assert.ok(statuses.filter((s) => s === 'HTTP/1.1 403').length >= 90, JSON.stringify(statuses.slice(0, 5)));
    // The server still serves.
    assert.equal((await rawHttp(`${srv.base}/healthz`, { method: 'GET' })).status, 200);
  } finally {
    await srv.close();
  }
});

test('#6 large bodies are bounded together: past 64 MiB declared at once, 503 on the headers', async () => {
  const srv = await startHttpServer(['--http-max-body', String(8 << 20)]);
  const socks = [];
  try {
    const sid = await rawInit(srv.url);
    const answers = [];
    for (let i = 0; i < 12; i++) {
      const s = connect(srv.port, '127.0.0.1');
      s.on('error', () => {});
      let data = '';
      s.on('data', (d) => { data += d; answers[i] = data; });
      s.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: ${sid}\r\nContent-Length: ${8 << 20}\r\n\r\n{"a":`);
      socks.push(s);
      await sleep(50);
    }
    await sleep(500);
    const busy = answers.filter((a) => a?.startsWith('HTTP/1.1 503')).length;
    assert.equal(busy, 4, `8 bodies of 8 MiB fit in 64 MiB, the other 4 get 503: ${JSON.stringify(answers)}`);
    for (const s of socks) s.destroy();
    await sleep(300);
    const r = await rawHttp(srv.url, { headers: mcpHeaders(sid), body: rpc(2, 'ping') });
    assert.equal(r.status, 200, 'the reservations are released with their connections');
  } finally {
    for (const s of socks) s.destroy();
    await srv.close();
  }
});

test('#9 MCP sessions: at most 64 per connection; a fresh client still gets in', async () => {
  const srv = await startHttpServer();
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const codes = [];
    for (let i = 0; i < 80; i++) codes.push((await httpReq(srv.url, { headers: JSON_HEADERS, body: JSON.stringify(INIT), agent })).status);
    assert.deepEqual(codes.slice(0, 64), Array(64).fill(200));
    assert.deepEqual(codes.slice(64), Array(16).fill(429));
    const sid = await rawInit(srv.url);
    assert.equal((await rawHttp(srv.url, { headers: mcpHeaders(sid), body: rpc(2, 'ping') })).status, 200);
  } finally {
    agent.destroy();
    await srv.close();
  }
});

test('#9 MCP sessions: when full, one that never made a request makes room; used ones stay', async () => {
  const srv = await startHttpServer(['--http-max-mcp-sessions', '4']);
  try {
    const sids = [];
    for (let i = 0; i < 4; i++) sids.push(await rawInit(srv.url));
    const fresh = await rawInit(srv.url); // evicts sids[0], the oldest unused
    let r = await rawHttp(srv.url, { headers: mcpHeaders(sids[0]), body: rpc(2, 'ping') });
    assert.equal(r.status, 404);
    for (const s of [...sids.slice(1), fresh]) {
      r = await rawHttp(srv.url, { headers: mcpHeaders(s), body: rpc(2, 'ping') });
      assert.equal(r.status, 200);
    }
    r = await rawHttp(srv.url, { headers: JSON_HEADERS, body: JSON.stringify(INIT) });
    assert.equal(r.status, 503, 'all four made requests: nobody is evicted');
  } finally {
    await srv.close();
  }
});

test('#9 MCP sessions without a request after initialize end after --http-unused-session-timeout', async () => {
  const srv = await startHttpServer(['--http-unused-session-timeout', '1']);
  try {
    const idle = await rawInit(srv.url);
    const used = await rawInit(srv.url);
    assert.equal((await rawHttp(srv.url, { headers: mcpHeaders(used), body: rpc(2, 'ping') })).status, 200);
    await sleep(3000);
    assert.equal((await rawHttp(srv.url, { headers: mcpHeaders(idle), body: rpc(2, 'ping') })).status, 404);
    assert.equal((await rawHttp(srv.url, { headers: mcpHeaders(used), body: rpc(3, 'ping') })).status, 200);
    assert.match(srv.stderr(), new RegExp(`MCP session ${idle} ended \\(no request since initialize\\)`));
  } finally {
    await srv.close();
  }
});

test('#9 GET streams and idle connections cannot hold every connection slot', async () => {
  const srv = await startHttpServer(['--http-max-connections', '8']);
  const streams = [];
  const socks = [];
  try {
    const sids = [];
    for (let i = 0; i < 8; i++) sids.push(await rawInit(srv.url));
    for (const sid of sids) streams.push(await openSse(srv.url, { headers: { ...mcpHeaders(sid), accept: 'text/event-stream' } }));
    const codes = streams.map((s) => s.status);
    assert.deepEqual(codes.filter((c) => c === 200).length, 2, `a quarter of 8 slots: ${codes}`);
    assert.ok(codes.filter((c) => c === 503).length === 6, `${codes}`);
    // Idle keep-alive connections fill every other slot; the oldest yields.
    for (let i = 0; i < 8; i++) {
      const s = connect(srv.port, '127.0.0.1');
      s.on('error', () => {});
      socks.push(s);
      await sleep(20);
    }
    await sleep(300);
    const sid = await rawInit(srv.url);
    assert.equal((await rawHttp(srv.url, { headers: mcpHeaders(sid), body: rpc(2, 'ping') })).status, 200);
    assert.equal(streams.filter((s) => s.status === 200 && !s.ended).length, 2, 'the streams stay open');
  } finally {
    for (const s of streams) s.close();
    for (const s of socks) s.destroy();
    await srv.close();
  }
});

const hostLine = (port) => `Host: 127.0.0.1:${port}\r\n`;
const rawPost = (port, sid, body, extra = '') => `POST /mcp HTTP/1.1\r\n${hostLine(port)}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n${sid ? `Mcp-Session-Id: ${sid}\r\n` : ''}${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

test('#10 a half-closed client (shutdown(SHUT_WR) after its request) gets its answer', async () => {
  const srv = await startHttpServer();
  try {
    // Answered at once, and after a tool call in a worker (the POST waits).
    let r = await rawSocket(srv.port, rawPost(srv.port, null, JSON.stringify(INIT)), { end: true });
    assert.match(r.data, /^HTTP\/1\.1 200 /);
    assert.ok(r.closed);
    const sid = r.data.match(/Mcp-Session-Id: (\S+)/i)[1];
    r = await rawSocket(srv.port, rawPost(srv.port, sid, toolCall(2, 'browser_evaluate', { function: '() => 40 + 2' })), { end: true });
    assert.match(r.data, /^HTTP\/1\.1 200 /);
    assert.match(r.data, /"text":"42"/);
  } finally {
    await srv.close();
  }
});

test('#10 two Host headers get 400 (RFC 9112), whatever their values', async () => {
  const srv = await startHttpServer();
  try {
    const host = hostLine(srv.port);
    let r = await rawSocket(srv.port, `GET /healthz HTTP/1.1\r\n${host}Host: evil.example\r\n\r\n`);
    assert.match(r.data, /^HTTP\/1\.1 400 /);
    r = await rawSocket(srv.port, `GET /healthz HTTP/1.1\r\n${host}${host}\r\n`);
    assert.match(r.data, /^HTTP\/1\.1 400 /);
    r = await rawSocket(srv.port, `GET /healthz HTTP/1.1\r\n${host}Connection: close\r\n\r\n`);
    assert.match(r.data, /^HTTP\/1\.1 200 /);
  } finally {
    await srv.close();
  }
});

test('#10 HTTP/1.0 gets no chunked coding: its streams are close-delimited', async () => {
  const srv = await startHttpServer();
  try {
    const host = hostLine(srv.port);
    const sid = await rawInit(srv.url);
    const post = (s, body, extra) => rawPost(srv.port, s, body, extra);
    let r;
    // HTTP/1.0 with keep-alive asked: streams are close-delimited, not chunked.
    const s = connect(srv.port, '127.0.0.1');
    let head = '';
    await new Promise((resolve) => {
      s.on('data', (d) => { head += d; if (head.includes('\r\n\r\n')) resolve(); });
      s.write(`GET /mcp HTTP/1.0\r\n${host}Connection: keep-alive\r\nAccept: text/event-stream\r\nMcp-Session-Id: ${sid}\r\n\r\n`);
    });
    s.destroy();
    assert.match(head, /^HTTP\/1\.1 200 /);
    assert.doesNotMatch(head, /transfer-encoding/i);
    assert.match(head, /Connection: close/i);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'browser_navigate', arguments: { url: `${pages.url}/counter.html` }, _meta: { progressToken: 't' } } });
    r = await rawSocket(srv.port, post(sid, body, 'Connection: keep-alive\r\n').replace('HTTP/1.1', 'HTTP/1.0'));
    assert.ok(r.closed);
    assert.match(r.data, /^HTTP\/1\.1 200 [^]*text\/event-stream/);
    assert.doesNotMatch(r.data.slice(0, r.data.indexOf('\r\n\r\n')), /transfer-encoding/i);
    const events = sseEvents(r.data.slice(r.data.indexOf('\r\n\r\n') + 4));
    assert.equal(events.at(-1).msg.id, 5);
    assert.equal(events.at(-1).msg.result.isError, false);
  } finally {
    await srv.close();
  }
});

test('#10 stdio: a message with an id but neither method nor result gets -32600', async () => {
  const srv = startRawServer();
  try {
    srv.send('{"jsonrpc":"2.0","id":1}');
    let r = await srv.next();
    assert.equal(r.id, 1);
    assert.equal(r.error.code, -32600);
    srv.send('{"jsonrpc":"2.0","id":2,"result":{}}'); // a response: no reply
    r = await srv.request(3, 'ping', {});
    assert.deepEqual(r, { jsonrpc: '2.0', id: 3, result: {} });
  } finally {
    await srv.close();
  }
});

test('#12 SSE events carry ids; GET with Last-Event-ID resumes the GET stream and a POST stream', async () => {
  const srv = await startHttpServer();
  try {
    const sid = await rawInit(srv.url);
    const h = mcpHeaders(sid);
    let r = await rawHttp(srv.url, { headers: h, body: rpc(2, 'logging/setLevel', { level: 'info' }) });
    assert.equal(r.status, 200);
    // The GET stream primes the client with an id, then goes away.
    const get = await openSse(srv.url, { headers: { ...h, accept: 'text/event-stream' } });
    await waitFor(() => get.events().length > 0, 5000);
    const primed = get.events()[0];
    assert.match(primed.id, /^0-\d+$/);
    get.close();
    await sleep(200);
    // A log line for this session while no stream is open is kept for stream 0.
    r = await rawHttp(srv.url, { headers: h, body: toolCall(3, 'browser_session_create', {}) });
    const created = JSON.parse(sseEvents(r.body).at(-1)?.data || r.body).result.structuredContent.sessionId;
    r = await rawHttp(srv.url, { headers: h, body: toolCall(4, 'browser_session_close', { sessionId: created }) });
    assert.equal(r.status, 200);
    await sleep(200);
    const again = await openSse(srv.url, { headers: { ...h, accept: 'text/event-stream', 'last-event-id': primed.id } });
    assert.equal(again.status, 200);
    assert.ok(await waitFor(() => again.events().some((e) => e.msg?.params?.data?.includes(`session ${created} closed`)), 5000), again.body());
    assert.ok(again.events().every((e) => /^0-\d+$/.test(e.id)));
    again.close();

    // A POST stream loses its connection mid-call; its events and the result are replayed.
    const post = await openSse(srv.url, { method: 'POST', headers: h, body: toolCall(5, 'browser_navigate', { url: `${pages.url}/slow?ms=2500` }, { progressToken: 'pt' }) });
    assert.ok(await waitFor(() => post.events().length > 0, 10000), post.body());
    const first = post.events()[0];
    assert.match(first.id, /^[1-9]\d*-\d+$/);
    post.close();
    await sleep(3500);
    const resumed = await openSse(srv.url, { headers: { ...h, accept: 'text/event-stream', 'last-event-id': first.id } });
    assert.equal(resumed.status, 200);
    assert.ok(await waitFor(() => resumed.ended, 5000), 'a finished POST stream ends after its replay');
    const ev = resumed.events();
    assert.equal(ev.at(-1).msg.id, 5, resumed.body());
    assert.equal(ev.at(-1).msg.result.isError, false);
    assert.ok(ev.every((e) => e.id.split('-')[0] === first.id.split('-')[0] && Number(e.id.split('-')[1]) > Number(first.id.split('-')[1])));
    // Nothing after the last event of a finished stream.
    r = await rawHttp(srv.url, { method: 'GET', headers: { ...h, accept: 'text/event-stream', 'last-event-id': ev.at(-1).id } });
    assert.equal(r.status, 204);
    r = await rawHttp(srv.url, { method: 'GET', headers: { ...h, accept: 'text/event-stream', 'last-event-id': 'garbage' } });
    assert.equal(r.status, 400);
  } finally {
    await srv.close();
  }
});

// Another local user (uid 65534, through setpriv) asking this server, as a
// raw HTTP client in node: {status, body}, or {error}.
function askAs65534(url, headers = {}) {
  const script = `const r = require('http').request(process.argv[1], { method: 'POST', headers: JSON.parse(process.argv[2]) },
    (res) => { let b = ''; res.on('data', (d) => { b += d; }); res.on('end', () => console.log(JSON.stringify({ status: res.statusCode, body: b }))); });
  r.on('error', (e) => console.log(JSON.stringify({ error: e.message }))); r.end(process.argv[3]);`;
  const h = { ...JSON_HEADERS, ...headers };
  const out = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '-e', script,
    url, JSON.stringify(h), JSON.stringify(INIT)], { encoding: 'utf8' });
  return JSON.parse(out.stdout || `{"error": ${JSON.stringify(out.stderr)}}`);
}

test('loopback without a token serves only our own user; with a token, whoever has it', { skip: process.getuid() !== 0 && 'needs root to act as another uid' }, async () => {
  // The audit: uid 65534 drove a root-run `tabvisor --http 127.0.0.1:PORT`.
  let srv = await startHttpServer();
  try {
    const other = askAs65534(srv.url);
    assert.equal(other.status, 403, JSON.stringify(other));
    assert.match(other.body, /uid 65534 connected, and without --auth-token this server takes loopback connections only from its own user \(uid 0\)/);
    await waitFor(() => /http: connection refused: uid 65534 connected/.test(srv.stderr()), 5000);
    // Our own user is served as before.
    const mine = await rawHttp(srv.url, { headers: JSON_HEADERS, body: JSON.stringify(INIT) });
    assert.equal(mine.status, 200, mine.body);
  } finally {
    await srv.close();
  }
  const token = 'a'.repeat(40);
  srv = await startHttpServer([], { TABVISOR_AUTH_TOKEN: token });
  try {
    assert.equal(askAs65534(srv.url).status, 401, 'another user without the token');
    const ok = askAs65534(srv.url, { authorization: `Bearer ${token}` });
    assert.equal(ok.status, 200, JSON.stringify(ok));
  } finally {
    await srv.close();
  }
});
