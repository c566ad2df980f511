// The bad-input corpus (issue 7, "Also build"): hundreds of malformed,
// misshapen, oversized and hostile inputs over stdio and over HTTP, from
// badinput-cases.mjs and generated from tools/list. Each case gets a
// structured error (a JSON-RPC error with the right code, a tool result with
// isError and a docs/errors.md code, or an HTTP status) or a correct result.
// After every batch a control session in the same server navigates and
// snapshots a page on 127.0.0.1, and the server's stderr holds no sanitizer
// report. Cases that show a known server bug are node:test todos naming it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  startPageServer, startHttpServer, connectHttp, call, text, refOf, waitFor, freshRuntimeDir,
  tabvisorBin, processesMentioning, assertNoSanitizerReports,
} from './lib.mjs';
import { messageCases, argumentCases, sessionIdCases, UNKNOWN_SID } from './badinput-cases.mjs';
import { cpuTicks } from './procs.mjs';

const pages = await startPageServer();
const counts = {}; // "transport/category" -> cases run
const todos = [];  // cases that fail today, with their bug
const fixed = [];  // todo cases that pass: their bug is fixed, drop the todo

// ------------------------------------------------------------- stdio driver

// tabvisor over stdio with byte-level control of what goes in; every line it
// writes must be JSON (anything else is recorded and fails the run).
function startStdio(extraArgs = []) {
  const runtimeDir = freshRuntimeDir();
  const child = spawn(tabvisorBin, ['--runtime-dir', runtimeDir, '--output-dir', join(runtimeDir, 'out'), ...extraArgs], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ASAN_OPTIONS: process.env.ASAN_OPTIONS || 'detect_leaks=1' },
  });
  let out = Buffer.alloc(0);
  let log = '';
  const queue = [];
  const garbage = [];
  child.stdout.on('data', (d) => {
    out = Buffer.concat([out, d]);
    let i;
    while ((i = out.indexOf(10)) >= 0) {
      const line = out.subarray(0, i).toString();
      out = out.subarray(i + 1);
      try { queue.push(JSON.parse(line)); } catch { garbage.push(line.slice(0, 200)); }
    }
  });
  child.stderr.on('data', (d) => { log += d.toString(); });
  const exited = new Promise((r) => child.once('exit', (code, sig) => r({ code, sig })));
  let seq = 0;
  const drv = {
    runtimeDir,
    stderr: () => log,
    garbage,
    send(body) {
      child.stdin.write(Buffer.isBuffer(body) ? Buffer.concat([body, Buffer.from('\n')]) : `${body}\n`);
    },
    // Remove and return the first message matching pred, waiting up to ms.
    async take(pred, ms = 20000) {
      const end = Date.now() + ms;
      for (;;) {
        const k = queue.findIndex(pred);
        if (k >= 0) return queue.splice(k, 1)[0];
        if (Date.now() > end || child.exitCode !== null) return undefined;
        await new Promise((r) => setTimeout(r, 5));
      }
    },
    async request(method, params, ms = 60000) {
      const id = `req-${++seq}`;
      drv.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
      const m = await drv.take((x) => x.id === id, ms);
      assert.ok(m, `no answer to ${method} within ${ms} ms`);
      return m;
    },
    async tool(name, args, ms) {
      const m = await drv.request('tools/call', { name, arguments: args }, ms);
      assert.ok(m.result, JSON.stringify(m));
      return m.result;
    },
    // Send one case body, then a ping; everything answered before the ping's
    // answer (or, for a call that went to a worker, soon after) is the
    // case's. Progress and log notifications are not answers.
    // Wait for a message while tabvisor works: as long as it answers, or uses
    // CPU, or takes in what is still being written to it. A 65 MiB line takes
    // 14 s on an idle machine and over 30 s on a loaded one, so the time it
    // may take is not a number; a hang (no CPU, nothing read for 20 s) is.
    async takeWhileWorking(pred, idleMs = 20000) {
      let ticks = cpuTicks(child.pid), pending = child.stdin.writableLength, since = Date.now();
      for (;;) {
        const m = await drv.take(pred, 1000);
        if (m || child.exitCode !== null) return m;
        const t = cpuTicks(child.pid), w = child.stdin.writableLength;
        if (t !== ticks || w !== pending) {
          ticks = t;
          pending = w;
          since = Date.now();
        } else if (Date.now() - since > idleMs) {
          return undefined;
        }
      }
    },
    async exchange(body) {
      const sentinel = `sentinel-${++seq}`;
      drv.send(body);
      drv.send(JSON.stringify({ jsonrpc: '2.0', id: sentinel, method: 'ping' }));
      const s = await drv.takeWhileWorking((x) => x.id === sentinel);
      assert.ok(s, `tabvisor stopped answering: no CPU used and nothing read for 20 s (exit ${child.exitCode})\n${log.slice(-2000)}`);
      const replies = [];
      for (let m; (m = await drv.take((x) => !('method' in x), 0));) replies.push(m);
      return replies;
    },
    async close() {
      child.stdin.end();
      const { code } = await exited;
      await waitFor(() => processesMentioning(runtimeDir).length === 0, 10000);
      rmSync(runtimeDir, { recursive: true, force: true });
      assertNoSanitizerReports(log);
      assert.equal(code, 0, log.slice(-2000));
    },
  };
  return drv;
}

// ------------------------------------------------------------- HTTP helpers

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

// One request as raw bytes on a fresh connection. Resolves when a whole
// response arrived (Content-Length or final chunk), the server closed, or
// after ms: {status, head, body, closed, timedOut}.
function rawExchange(port, data, { ms = 3000, halfClose = false, parts } = {}) {
  return new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    let done = false;
    const finish = (extra) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      const s = buf.toString('latin1');
      const end = s.indexOf('\r\n\r\n');
      const head = end >= 0 ? s.slice(0, end) : s;
      const m = head.match(/^HTTP\/1\.[01] (\d{3})/);
      resolve({ status: m ? Number(m[1]) : undefined, head, body: end >= 0 ? s.slice(end + 4) : '', ...extra });
    };
    const timer = setTimeout(() => finish({ timedOut: true }), ms);
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      const s = buf.toString('latin1');
      const end = s.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = s.slice(0, end);
      const cl = head.match(/\r\ncontent-length: *(\d+)/i);
      if (cl && buf.length - (end + 4) >= Number(cl[1])) finish({});
      else if (/\r\ntransfer-encoding: *chunked/i.test(head) && s.endsWith('\r\n0\r\n\r\n')) finish({});
    });
    sock.on('close', () => finish({ closed: true }));
    sock.on('error', () => finish({ closed: true }));
    sock.on('connect', async () => {
      if (parts) {
        for (const [bytes, wait] of parts) {
          if (done) return;
          sock.write(bytes);
          await new Promise((r) => setTimeout(r, wait));
        }
      } else {
        sock.write(data);
      }
      if (halfClose) sock.end();
    });
  });
}

function httpRequest(port, { method = 'POST', path = '/mcp', version = 'HTTP/1.1', headers = {}, body = '' }) {
  const b = Buffer.isBuffer(body) ? body : Buffer.from(body);
  const h = { host: `127.0.0.1:${port}`, ...headers };
  if (method === 'POST' && !Object.keys(h).some((k) => /^(content-length|transfer-encoding)$/i.test(k))) h['content-length'] = b.length;
  const lines = Object.entries(h).filter(([, v]) => v !== undefined).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => `${k}: ${x}`) : [`${k}: ${v}`]));
  return Buffer.concat([Buffer.from(`${method} ${path} ${version}\r\n${lines.join('\r\n')}\r\n\r\n`, 'latin1'), b]);
}

// The JSON-RPC message of a response: the body, or the last SSE event.
function rpcOf(res) {
  let body = res.body;
  if (/\r\ntransfer-encoding: *chunked/i.test(res.head)) {
    body = body.replace(/(^|\r\n)[0-9a-f]+\r\n/gi, '$1');
  }
  if (/\r\ncontent-type: *text\/event-stream/i.test(res.head)) {
    const events = body.split('\n\n').filter((e) => e.includes('data: '));
    body = events.at(-1)?.slice(events.at(-1).indexOf('data: ') + 6) ?? '';
  }
  try { return JSON.parse(Buffer.from(body, 'latin1').toString('utf8')); } catch { return undefined; }
}

// ------------------------------------------------------------- assertions

function expectedId(body) {
  try {
    const m = JSON.parse(Buffer.isBuffer(body) ? body.toString() : body);
    const id = m?.id;
    return typeof id === 'string' || Number.isInteger(id) ? id : null;
  } catch { return null; }
}

// One JSON-RPC answer against a case's expect.
function checkAnswer(c, msg) {
  const e = c.expect;
  assert.ok(msg, 'no answer');
  const where = JSON.stringify(msg).slice(0, 600);
  if (e.rpc !== undefined) {
    assert.ok(msg.error, `expected JSON-RPC error ${e.rpc}, got ${where}`);
    assert.equal(msg.error.code, e.rpc, where);
    assert.equal(typeof msg.error.message, 'string');
    assert.ok(msg.error.message.length > 0);
    // JSON-RPC: null when the id could not be detected; for an Invalid
    // Request the server may or may not have detected it.
    const ids = e.rpc === -32700 ? [null] : e.rpc === -32600 ? [null, expectedId(c.body)] : [expectedId(c.body)];
    assert.ok(ids.includes(msg.id), `id ${JSON.stringify(msg.id)}, expected ${JSON.stringify(ids)}: ${where}`);
    return;
  }
  assert.ok(msg.result, `expected a result, got ${where}`);
  assert.equal(msg.id, expectedId(c.body));
  if (e.tool) {
    assert.equal(msg.result.isError, true, where);
    const code = msg.result.structuredContent?.error?.code;
    assert.ok([e.tool].flat().includes(code), `expected ${e.tool}, got ${code}: ${where}`);
    assert.ok(msg.result.structuredContent.error.message.length > 0, where);
    assert.match(msg.result.content[0].text, new RegExp(code), where);
  } else if (e.toolOk) {
    assert.equal(msg.result.isError, false, where);
  }
}

function todoOf(c, transport) {
  return c.todo && (!c.onlyTodo || c.onlyTodo === transport) ? c.todo : undefined;
}

function count(transport, cat) {
  const k = `${transport}/${cat}`;
  counts[k] = (counts[k] || 0) + 1;
}

// Run cases as subtests of t; a todo case's failure is recorded, not fatal.
async function runCases(t, transport, cases, fn) {
  for (const c of cases) {
    count(transport, c.cat);
    const todo = todoOf(c, transport);
    await t.test(`${c.cat}: ${c.name}`, { todo }, async () => {
      try {
        await fn(c);
        if (todo) fixed.push(`${transport} ${c.cat}: ${c.name}`);
      } catch (err) {
        if (todo) todos.push(`${transport} ${c.cat}: ${c.name} [${todo}]: ${String(err.message).split('\n')[0].slice(0, 160)}`);
        throw err;
      }
    });
  }
}

// ------------------------------------------------------------- the servers

// Full schemas state every bound the validator applies; cases come from them.
const stdio = startStdio(['--session-idle-timeout', '2', '--schemas', 'full', '--caps', 'all']);
await stdio.request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'badinput', version: '1' } });
stdio.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
const toolList = (await stdio.request('tools/list', {})).result.tools;

const http = await startHttpServer(['--caps', 'all']);
const control = await connectHttp(http.url);
async function rawInit() {
  const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'badinput', version: '1' } } };
  const r = await rawExchange(http.port, httpRequest(http.port, { headers: JSON_HEADERS, body: JSON.stringify(init) }));
  assert.equal(r.status, 200, r.head);
  return r.head.match(/\r\nmcp-session-id: *([^\r]+)/i)[1];
}
const sid = await rawInit();
const sessionHeaders = { ...JSON_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };

test.after(async () => {
  const errors = [];
  for (const f of [() => control.client.close(), () => http.close(), () => stdio.close(), () => pages.close()]) {
    try { await f(); } catch (e) { errors.push(e); }
  }
  const cats = {};
  for (const [k, n] of Object.entries(counts)) cats[k] = n;
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  console.log(`# bad-input corpus: ${total} cases\n${Object.entries(cats).map(([k, n]) => `#   ${k}: ${n}`).join('\n')}`);
  if (fixed.length) console.log(`# todo cases that pass now (remove their todo):\n${fixed.map((s) => `#   ${s}`).join('\n')}`);
  if (todos.length) console.log(`# failing today (todo):\n${todos.map((s) => `#   ${s}`).join('\n')}`);
  assert.deepEqual(stdio.garbage, [], 'tabvisor wrote non-JSON lines to stdout');
  if (errors.length) throw errors[0];
});

// A control session in the same server still works: navigate + snapshot of a
// page on 127.0.0.1; and no sanitizer has spoken.
async function stdioControl() {
  const created = await stdio.tool('browser_session_create', {});
  assert.equal(created.isError, false, JSON.stringify(created));
  const sessionId = created.structuredContent.sessionId;
  let r = await stdio.tool('browser_navigate', { sessionId, url: `${pages.url}/counter.html` });
  assert.equal(r.isError, false, JSON.stringify(r));
  r = await stdio.tool('browser_snapshot', { sessionId });
  assert.equal(r.isError, false, JSON.stringify(r));
  assert.ok(refOf(r.structuredContent.snapshot, 'button'), r.structuredContent.snapshot);
  r = await stdio.tool('browser_session_close', { sessionId });
  assert.equal(r.isError, false, JSON.stringify(r));
  assertNoSanitizerReports(stdio.stderr());
}

async function httpControl() {
  let r = await call(control.client, 'browser_navigate', { url: `${pages.url}/counter.html` });
  assert.equal(r.isError, false, text(r));
  r = await call(control.client, 'browser_snapshot');
  assert.equal(r.isError, false, text(r));
  assert.ok(refOf(r.structuredContent.snapshot, 'button'), r.structuredContent.snapshot);
  const h = await rawExchange(http.port, httpRequest(http.port, { method: 'GET', path: '/healthz' }));
  assert.equal(h.status, 200);
  assertNoSanitizerReports(http.stderr());
}

// ------------------------------------------------------------- message cases

const generated = [...argumentCases(toolList), ...sessionIdCases()];
const batches = {};
for (const c of [...messageCases, ...generated]) (batches[c.cat] ||= []).push(c);

for (const [cat, cases] of Object.entries(batches)) {
  test(`stdio: ${cat} (${cases.filter((c) => c.only !== 'http').length} cases), then a control session`, async (t) => {
    await runCases(t, 'stdio', cases.filter((c) => c.only !== 'http'), async (c) => {
      const replies = await stdio.exchange(c.body);
      if (c.expect.none) {
        assert.deepEqual(replies, [], 'a notification or response got an answer');
        return;
      }
      assert.ok(replies.length <= 1, `several answers: ${JSON.stringify(replies).slice(0, 500)}`);
      // Only a call that went on to a worker answers after the ping.
      const late = Buffer.from(c.body).includes('"tools/call"') ? 15000 : 1000;
      const msg = replies[0] ?? await stdio.take((x) => !('method' in x), late);
      checkAnswer(c, msg);
    });
    await stdioControl();
  });

  test(`HTTP: ${cat} (${cases.filter((c) => c.only !== 'stdio').length} cases), then a control session`, async (t) => {
    await runCases(t, 'http', cases.filter((c) => c.only !== 'stdio'), async (c) => {
      const res = await rawExchange(http.port, httpRequest(http.port, { headers: sessionHeaders, body: c.body }), { ms: 20000 });
      assert.ok(res.status, `no HTTP response: ${JSON.stringify(res).slice(0, 300)}`);
      if (c.expect.none) {
        assert.equal(res.status, 202, res.head);
        assert.equal(res.body, '');
        return;
      }
      if (c.expect.rpc === -32700) assert.equal(res.status, 400, res.head);
      else if (c.expect.rpc === -32600) assert.ok([200, 400].includes(res.status), res.head);
      else assert.equal(res.status, 200, res.head);
      checkAnswer(c, rpcOf(res));
    });
    await httpControl();
  });
}

// ------------------------------------------------------------- raw HTTP

// {name, req (bytes, or a function of {port}), status (a number or a list),
//  todo?}. Each request goes on a fresh connection.
function rawHttpCases(port) {
  const ping = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' });
  const H = { ...sessionHeaders };
  const req = (o) => httpRequest(port, { body: ping, ...o, headers: { ...H, ...(o.headers || {}) } });
  const head = (s) => Buffer.from(s, 'latin1');
  const host = `127.0.0.1:${port}`;
  const big = (n) => 'a'.repeat(n);
  return [
    // methods and targets
    ['PUT /mcp', req({ method: 'PUT' }), 405],
    ['PATCH /mcp', req({ method: 'PATCH' }), 405],
    ['OPTIONS /mcp', req({ method: 'OPTIONS', body: '' }), 405],
    ['TRACE /mcp', req({ method: 'TRACE', body: '' }), 405],
    ['HEAD /mcp', req({ method: 'HEAD', body: '' }), 405],
    ['unknown method FOO', req({ method: 'FOO' }), [405, 501]],
    ['lower-case method post (RFC 9110: methods are case-sensitive)', req({ method: 'post' }), [400, 405, 501]],
    ['method with a control byte', req({ method: 'PO\u0001ST' }), [400, 405, 501]],
    ['GET / (not the endpoint)', req({ method: 'GET', path: '/', body: '' }), 404],
    ['POST /mcp/ (trailing slash)', req({ path: '/mcp/' }), 404],
    ['POST /MCP (other case)', req({ path: '/MCP' }), 404],
    ['POST //mcp', req({ path: '//mcp' }), 404],
    ['POST /mcp/../mcp', req({ path: '/mcp/../x' }), 404],
    ['POST /mcp?x=1 (query ignored)', req({ path: '/mcp?x=1' }), 200],
    ['GET without Mcp-Session-Id', req({ method: 'GET', body: '', headers: { 'mcp-session-id': undefined, accept: 'text/event-stream' } }), 400],
    ['DELETE an unknown session', req({ method: 'DELETE', body: '', headers: { 'mcp-session-id': UNKNOWN_SID } }), 404],
    ['DELETE without a session', req({ method: 'DELETE', body: '', headers: { 'mcp-session-id': undefined } }), 400],
    // request line
    ['HTTP/2.0 request line', req({ version: 'HTTP/2.0' }), [400, 505]],
    ['HTTP/1.2 request line', req({ version: 'HTTP/1.2' }), [400, 505]],
    ['no HTTP version (0.9 style)', head(`POST /mcp\r\nhost: ${host}\r\n\r\n`), 400],
    ['lower-case version', req({ version: 'http/1.1' }), 400],
    ['double space in the request line', head(`POST  /mcp HTTP/1.1\r\nhost: ${host}\r\n\r\n`), 400],
    ['extra word in the request line', head(`POST /mcp HTTP/1.1 x\r\nhost: ${host}\r\n\r\n`), 400],
    ['binary garbage', Buffer.concat([Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]), Buffer.alloc(64, 0xaa), head('\r\n\r\n')]), 400],
    ['a TLS ClientHello, then CRLF CRLF', Buffer.concat([Buffer.from('16030102000100020003030000000000000000000000000000000000000000000000000000000000', 'hex'), head('\r\n\r\n')]), 400],
    ['request target 20 KiB', req({ path: `/mcp?${big(20000)}` }), [414, 431]],
    // header syntax
    ['header without a colon', head(`POST /mcp HTTP/1.1\r\nhost: ${host}\r\nnocolon\r\ncontent-length: 0\r\n\r\n`), 400],
    ['space before the colon', head(`POST /mcp HTTP/1.1\r\nhost : ${host}\r\ncontent-length: 0\r\n\r\n`), 400],
    ['obs-fold continuation line', head(`POST /mcp HTTP/1.1\r\nhost: ${host}\r\nx-a: 1\r\n  folded\r\ncontent-length: 0\r\n\r\n`), 400],
    ['NUL in a header value', head(`POST /mcp HTTP/1.1\r\nhost: ${host}\r\nx-a: a\u0000b\r\ncontent-length: 0\r\n\r\n`), 400],
    // RFC 9112 2.2: a recipient MAY take a bare LF as a line end.
    ['bare LF line ends', head(req({}).toString('latin1').replace(/\r\n/g, '\n')), [200, 400]],
    ['bare CR inside a header', head(`POST /mcp HTTP/1.1\r\nhost: ${host}\rx-a: b\r\ncontent-length: 0\r\n\r\n`), 400],
    ['100 headers', req({ headers: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`x-h${i}`, 'v'])) }), 431],
    ['one 20 KiB header', req({ headers: { 'x-big': big(20000) } }), 431],
    ['17 KiB of headers in small pieces', req({ headers: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`x-h${i}`, big(440)])) }), 431],
    // Content-Length and Transfer-Encoding
    ['Content-Length abc', req({ headers: { 'content-length': 'abc' } }), 400],
    ['Content-Length -1', req({ headers: { 'content-length': '-1' } }), 400],
    ['Content-Length +39', req({ headers: { 'content-length': '+39' } }), 400],
    ['Content-Length list', req({ headers: { 'content-length': '39, 39' } }), 400],
    ['two different Content-Lengths', req({ headers: { 'content-length': ['39', '40'] } }), 400],
    ['Content-Length 2^64', req({ headers: { 'content-length': '18446744073709551616' } }), [400, 413]],
    ['Content-Length 10 GB', req({ headers: { 'content-length': '10000000000' } }), 413],
    ['Transfer-Encoding chunked', req({ headers: { 'transfer-encoding': 'chunked' }, body: `${ping.length.toString(16)}\r\n${ping}\r\n0\r\n\r\n` }), 411],
    ['Content-Length and Transfer-Encoding', req({ headers: { 'content-length': String(ping.length), 'transfer-encoding': 'chunked' } }), [400, 411]],
    ['Transfer-Encoding gzip', req({ headers: { 'transfer-encoding': 'gzip' } }), [400, 411]],
    ['POST without Content-Length', head(`POST /mcp HTTP/1.1\r\nhost: ${host}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nmcp-session-id: ${sid}\r\n\r\n`), [400, 411]],
    ['body over the 4 MiB limit', req({ body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: big(4 * 1024 * 1024 + 100) } }) }), 413],
    // Content-Type and Accept
    ['no Content-Type', req({ headers: { 'content-type': undefined } }), 415],
    ['Content-Type text/plain', req({ headers: { 'content-type': 'text/plain' } }), 415],
    ['Content-Type application/jsonx', req({ headers: { 'content-type': 'application/jsonx' } }), 415],
    ['Content-Type multipart/form-data', req({ headers: { 'content-type': 'multipart/form-data; boundary=x' } }), 415],
    ['Content-Type with charset', req({ headers: { 'content-type': 'application/json; charset=utf-8' } }), 200],
    ['Content-Type in capitals', req({ headers: { 'content-type': 'Application/JSON' } }), 200],
    ['no Accept', req({ headers: { accept: undefined } }), 406],
    ['Accept application/json only', req({ headers: { accept: 'application/json' } }), 406],
    ['Accept text/event-stream only', req({ headers: { accept: 'text/event-stream' } }), 406],
    ['Accept */*', req({ headers: { accept: '*/*' } }), 200],
    ['Accept application/*, text/*', req({ headers: { accept: 'application/*, text/*' } }), 200],
    // Host and Origin (DNS rebinding)
    ['foreign Host', req({ headers: { host: `evil.example:${port}` } }), 403],
    ['Host with another port', req({ headers: { host: `127.0.0.1:${port === 1 ? 2 : 1}` } }), 403],
    ['Host without a port', req({ headers: { host: '127.0.0.1' } }), 403],
    ['empty Host', req({ headers: { host: '' } }), [400, 403]],
    ['no Host (HTTP/1.1)', req({ headers: { host: undefined } }), [400, 403]],
    ['two Host headers', req({ headers: { host: [host, host] } }), 400],
    ['Host localhost (allowed)', req({ headers: { host: `localhost:${port}` } }), 200],
    ['foreign Origin', req({ headers: { origin: 'http://evil.example' } }), 403],
    ['Origin null', req({ headers: { origin: 'null' } }), 403],
    ['Origin https on our port', req({ headers: { origin: `https://evil.example:${port}` } }), 403],
    ['Origin of a look-alike host', req({ headers: { origin: `http://127.0.0.1.evil.example:${port}` } }), 403],
    ['Origin same host (allowed)', req({ headers: { origin: `http://${host}` } }), 200],
    // Mcp-Session-Id and MCP-Protocol-Version
    ['no Mcp-Session-Id', req({ headers: { 'mcp-session-id': undefined } }), 400],
    ['unknown Mcp-Session-Id', req({ headers: { 'mcp-session-id': UNKNOWN_SID } }), 404],
    ['Mcp-Session-Id "x"', req({ headers: { 'mcp-session-id': 'x' } }), 404],
    ['empty Mcp-Session-Id', req({ headers: { 'mcp-session-id': '' } }), [400, 404]],
    ['Mcp-Session-Id 8 KiB', req({ headers: { 'mcp-session-id': big(8192) } }), 404],
    ['Mcp-Session-Id in capitals', req({ headers: { 'mcp-session-id': sid.toUpperCase() } }), 404],
    ['Mcp-Session-Id with a suffix', req({ headers: { 'mcp-session-id': `${sid}x` } }), 404],
    ['Mcp-Session-Id prefix only', req({ headers: { 'mcp-session-id': sid.slice(0, 20) } }), 404],
    ['initialize with an Mcp-Session-Id', req({ body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }) }), 400],
    ['initialize as a notification', req({ headers: { 'mcp-session-id': undefined }, body: JSON.stringify({ jsonrpc: '2.0', method: 'initialize', params: {} }) }), 400],
    ['MCP-Protocol-Version 1999-01-01', req({ headers: { 'mcp-protocol-version': '1999-01-01' } }), 400],
    ['empty MCP-Protocol-Version', req({ headers: { 'mcp-protocol-version': '' } }), 400],
    ['MCP-Protocol-Version list', req({ headers: { 'mcp-protocol-version': '2025-11-25, 2025-06-18' } }), 400],
    ['MCP-Protocol-Version 4 KiB', req({ headers: { 'mcp-protocol-version': big(4096) } }), 400],
    ['MCP-Protocol-Version 2025-06-18 (allowed)', req({ headers: { 'mcp-protocol-version': '2025-06-18' } }), 200],
    ['MCP-Protocol-Version absent (2025-03-26)', req({ headers: { 'mcp-protocol-version': undefined } }), 200],
    // bodies
    ['empty body', req({ body: '' }), 400],
    ['body of spaces', req({ body: '   ' }), 400],
    ['body shorter than Content-Length, then the client half-closes', req({ headers: { 'content-length': '1000' } }), ['close', 400], undefined, { halfClose: true }],
    ['HTTP/1.0 ping', req({ version: 'HTTP/1.0' }), 200],
  ].map(([name, bytes, status, todo, opts]) => ({ cat: 'raw HTTP', name, bytes, status, todo, opts }));
}

test('raw HTTP: methods, request lines, headers, lengths, types, Host/Origin, session and version headers', async (t) => {
  const cases = rawHttpCases(http.port);
  await runCases(t, 'http', cases, async (c) => {
    const r = await rawExchange(http.port, c.bytes, { ms: 3000, ...c.opts });
    const want = [c.status].flat();
    const got = r.status ?? (r.closed ? 'close' : 'timeout');
    assert.ok(want.includes(got), `expected ${want.join(' or ')}, got ${got}: ${r.head.slice(0, 300)}`);
    if (typeof got === 'number' && got >= 400 && !/^HEAD/.test(c.name)) {
      // An error is a whole response: its length is known.
      assert.match(r.head, /\r\ncontent-length: \d+/i, r.head);
    }
    if (got === 200) {
      const m = rpcOf(r);
      assert.deepEqual(m, { jsonrpc: '2.0', id: 7, result: {} }, r.body);
    }
  });
  await httpControl();
});

test('raw HTTP: slow and partial requests do not hold up anyone else', async (t) => {
  const ping = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' });
  const full = httpRequest(http.port, { headers: sessionHeaders, body: ping });
  const cases = [
    { cat: 'slow requests', name: 'one byte every 3 ms', async run() {
      const parts = [...full].map((b) => [Buffer.from([b]), 3]);
      const r = await rawExchange(http.port, null, { parts, ms: 15000 });
      assert.equal(r.status, 200, r.head);
      assert.deepEqual(rpcOf(r), { jsonrpc: '2.0', id: 7, result: {} });
    } },
    { cat: 'slow requests', name: 'head, a pause, then the body in two parts', async run() {
      const split = full.indexOf('\r\n\r\n') + 4;
      const parts = [[full.subarray(0, split), 300], [full.subarray(split, split + 10), 300], [full.subarray(split + 10), 0]];
      const r = await rawExchange(http.port, null, { parts, ms: 5000 });
      assert.equal(r.status, 200, r.head);
      assert.deepEqual(rpcOf(r), { jsonrpc: '2.0', id: 7, result: {} });
    } },
    { cat: 'slow requests', name: '40 connections stalled mid-head while others are served', async run() {
      const stalled = await Promise.all(Array.from({ length: 40 }, () => new Promise((res) => {
        const s = connect(http.port, '127.0.0.1', () => { s.write(full.subarray(0, 30)); res(s); });
        s.on('error', () => {});
      })));
      try {
        const t0 = Date.now();
        const r = await rawExchange(http.port, full, { ms: 5000 });
        assert.equal(r.status, 200, r.head);
        assert.ok(Date.now() - t0 < 3000, `a ping took ${Date.now() - t0} ms beside 40 stalled connections`);
        await httpControl();
        await stdioControl();
      } finally {
        stalled.forEach((s) => s.destroy());
      }
    } },
    { cat: 'slow requests', name: 'a partial head, then the client half-closes', async run() {
      const r = await rawExchange(http.port, full.subarray(0, 40), { halfClose: true, ms: 3000 });
      assert.ok(r.status === 400 || (r.closed && !r.status), `expected 400 or a close: ${JSON.stringify(r).slice(0, 200)}`);
    } },
    // A call that goes to a worker, so the server sees the EOF before it
    // has the answer (a ping's answer can win that race).
    { cat: 'slow requests', name: 'a whole request, then the client half-closes', async run() {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'browser_evaluate', arguments: { function: '() => 6 * 7' } } });
      const r = await rawExchange(http.port, httpRequest(http.port, { headers: sessionHeaders, body }), { halfClose: true, ms: 15000 });
      assert.equal(r.status, 200, JSON.stringify(r).slice(0, 200));
      assert.equal(rpcOf(r)?.result?.structuredContent?.result?.value, 42, r.body);
    } },
    { cat: 'slow requests', name: 'foreign Host with a 4 MiB Content-Length and no body yet: 403 at once', async run() {
      const bytes = httpRequest(http.port, { headers: { ...JSON_HEADERS, host: 'evil.example', 'content-length': String(4 << 20) }, body: '' });
      const r = await rawExchange(http.port, bytes, { ms: 2000 });
      assert.equal(r.status, 403, JSON.stringify(r).slice(0, 200));
    } },
    { cat: 'slow requests', name: 'no token needed yet a 4 MiB body announced, Accept wrong: 406 before the body', async run() {
      const bytes = httpRequest(http.port, { headers: { ...sessionHeaders, accept: 'text/html', 'content-length': String(4 << 20) }, body: '' });
      const r = await rawExchange(http.port, bytes, { ms: 2000 });
      assert.equal(r.status, 406, JSON.stringify(r).slice(0, 200));
    } },
  ];
  await runCases(t, 'http', cases, (c) => c.run());
  await httpControl();
});

// ------------------------------------------------------------- dead pages and sessions

test('stdio: dead and hostile pages, closed and expired sessions, then a control session', async (t) => {
  const created = await stdio.tool('browser_session_create', {});
  const sessionId = created.structuredContent.sessionId;
  const S = (args) => ({ sessionId, ...args });
  const oneOf = (r, codes) => {
    const code = r.isError ? r.structuredContent?.error?.code : 'ok';
    outcomes.push(code);
    assert.ok(codes.includes(code), `expected ${codes.join('|')}, got ${code}: ${JSON.stringify(r).slice(0, 400)}`);
    if (r.isError) assert.ok(r.structuredContent.error.message.length > 0);
    return r;
  };
  const step = (name, tool, args, codes, check, todo) => ({ cat: 'dead pages', name, tool, args, codes, check, todo });
  const loopPage = 'data:text/html,<title>loop</title><script>for(;;){}</script>';
  let staleRef;
  const cases = [
    step('evaluate throws', 'browser_evaluate', S({ function: "() => { throw new Error('boom-7') }" }), ['BROWSER_ERROR'], (r) => assert.match(text(r), /boom-7/)),
    step('evaluate rejects', 'browser_evaluate', S({ function: "async () => { throw new TypeError('nope-7') }" }), ['BROWSER_ERROR'], (r) => assert.match(text(r), /nope-7/)),
    step('evaluate of a syntax error', 'browser_evaluate', S({ function: 'function(' }), ['BROWSER_ERROR', 'INVALID_PARAMETERS']),
    step('evaluate of a non-function', 'browser_evaluate', S({ function: '42' }), ['ok', 'BROWSER_ERROR', 'INVALID_PARAMETERS']),
    step('evaluate returns a cyclic object', 'browser_evaluate', S({ function: '() => { const a = {}; a.a = a; return a }' }), ['ok', 'BROWSER_ERROR']),
    step('evaluate returns a BigInt', 'browser_evaluate', S({ function: '() => 10n ** 30n' }), ['ok', 'BROWSER_ERROR']),
    step('evaluate returns a Symbol', 'browser_evaluate', S({ function: "() => Symbol('s')" }), ['ok', 'BROWSER_ERROR']),
    step('evaluate returns lone surrogates', 'browser_evaluate', S({ function: "() => '\\ud800x\\udfff'" }), ['ok']),
    step('evaluate returns NUL and control characters', 'browser_evaluate', S({ function: "() => 'a\\u0000b\\u0001\\u001b[31m'" }), ['ok']),
    step('evaluate never resolves (timeout 800)', 'browser_evaluate', S({ function: '() => new Promise(() => {})', timeout: 800 }), ['TIMEOUT']),
    step('navigate chrome://crash', 'browser_navigate', S({ url: 'chrome://crash' }), ['INVALID_PARAMETERS']),
    step('navigate chrome://settings', 'browser_navigate', S({ url: 'chrome://settings' }), ['INVALID_PARAMETERS']),
    step('navigate javascript:', 'browser_navigate', S({ url: 'javascript:alert(1)' }), ['INVALID_PARAMETERS']),
    step('navigate file:///etc/passwd', 'browser_navigate', S({ url: 'file:///etc/passwd' }), ['INVALID_PARAMETERS']),
    step('navigate view-source:', 'browser_navigate', S({ url: `view-source:${pages.url}/` }), ['INVALID_PARAMETERS']),
    step('navigate devtools://', 'browser_navigate', S({ url: 'devtools://devtools/bundled/inspector.html' }), ['INVALID_PARAMETERS']),
    step('navigate to a closed port', 'browser_navigate', S({ url: 'http://127.0.0.1:1/' }), ['NAVIGATION_FAILED']),
    step('navigate to a malformed URL', 'browser_navigate', S({ url: 'http://[::1' }), ['INVALID_PARAMETERS', 'NAVIGATION_FAILED', 'BROWSER_ERROR']),
    step('navigate to a 500 page (a page, not a failure)', 'browser_navigate', S({ url: `${pages.url}/status?code=500` }), ['ok']),
    step('click a ref never issued', 'browser_click', S({ target: 'e99999', timeout: 2000 }), ['ELEMENT_NOT_FOUND']),
    step('click a selector matching nothing', 'browser_click', S({ target: 'css=#nope', timeout: 800 }), ['ELEMENT_NOT_FOUND', 'TIMEOUT']),
    step('click an unparsable xpath', 'browser_click', S({ target: 'xpath=//[', timeout: 2000 }), ['INVALID_PARAMETERS']),
    step('click an unparsable CSS selector', 'browser_click', S({ target: 'css=a[', timeout: 2000 }), ['INVALID_PARAMETERS']),
    step('handle a dialog that is not there', 'browser_handle_dialog', S({ accept: true }), ['INVALID_PARAMETERS']),
    step('snapshot to ../escape.txt', 'browser_snapshot', S({ filename: '../escape.txt' }), ['PATH_NOT_ALLOWED', 'INVALID_PARAMETERS']),
    step('snapshot to an absolute path', 'browser_snapshot', S({ filename: '/tmp/tabvisor-badinput.txt' }), ['PATH_NOT_ALLOWED', 'INVALID_PARAMETERS']),
    step('snapshot to a name with a NUL', 'browser_snapshot', S({ filename: 'nul\u0000.png' }), ['PATH_NOT_ALLOWED', 'INVALID_PARAMETERS'], null),
    step('navigate, snapshot for a ref', 'browser_navigate', S({ url: `${pages.url}/counter.html` }), ['ok'], (r) => { staleRef = refOf(r.structuredContent.snapshot || '', 'button'); }),
    step('navigate away', 'browser_navigate', S({ url: `${pages.url}/buttons.html` }), ['ok']),
    { cat: 'dead pages', name: 'click a ref from the previous page', run: async () => oneOf(await stdio.tool('browser_click', S({ target: staleRef || 'e1', timeout: 2000 })), ['STALE_REF', 'ELEMENT_NOT_FOUND']) },
    step('evaluate an endless loop (timeout 1000)', 'browser_evaluate', S({ function: '() => { for (;;) {} }', timeout: 1000 }), ['TIMEOUT']),
    // The timed-out call ended the loop (Runtime.terminateExecution): the page answers.
    step('evaluate in the page whose loop was ended', 'browser_evaluate', S({ function: '() => 1', timeout: 2000 }), ['ok']),
    step('snapshot of the page whose loop was ended', 'browser_snapshot', S({ timeout: 2000 }), ['ok']),
    step('navigate to a page whose script never ends (timeout 2000)', 'browser_navigate', S({ url: loopPage, timeout: 2000 }), ['TIMEOUT', 'BROWSER_CRASHED', 'SESSION_CRASHED']),
    // Its script was ended too; the page goes on loading and answers.
    step('click in the page whose script was ended', 'browser_click', S({ target: 'css=body', timeout: 1500 }), ['ok']),
    step('type into its body (not a field)', 'browser_type', S({ target: 'css=body', text: 'x', timeout: 1500 }), ['ELEMENT_NOT_EDITABLE']),
    step('screenshot of it', 'browser_take_screenshot', S({ timeout: 2000 }), ['ok']),
    step('leave the hung page', 'browser_navigate', S({ url: `${pages.url}/counter.html`, timeout: 10000 }), ['ok']),
    step('close the session', 'browser_session_close', { sessionId }, ['ok']),
    step('use the closed session', 'browser_snapshot', { sessionId }, ['SESSION_NOT_FOUND']),
    step('close it again', 'browser_session_close', { sessionId }, ['SESSION_NOT_FOUND']),
    { cat: 'dead pages', name: 'a session idle past --session-idle-timeout 2 is SESSION_EXPIRED', run: async () => {
      const r = await stdio.tool('browser_session_create', {});
      const expiring = r.structuredContent.sessionId;
      const expired = await waitFor(async () => {
        const x = await stdio.tool('browser_session_list', {});
        return !x.structuredContent.sessions.some((s) => s.sessionId === expiring);
      }, 8000, 250);
      assert.ok(expired, 'the idle session did not expire');
      oneOf(await stdio.tool('browser_snapshot', { sessionId: expiring }), ['SESSION_EXPIRED']);
      oneOf(await stdio.tool('browser_session_close', { sessionId: expiring }), ['SESSION_EXPIRED', 'SESSION_NOT_FOUND']);
    } },
  ];
  const outcomes = [];
  await runCases(t, 'stdio', cases, async (c) => {
    outcomes.length = 0;
    try {
      if (c.run) return await c.run();
      const r = oneOf(await stdio.tool(c.tool, c.args, 30000), c.codes);
      if (c.check) c.check(r);
    } finally {
      t.diagnostic(`${c.name}: ${outcomes.join(', ')}`);
    }
  });
  await stdioControl();
});

// ------------------------------------------------------------- HTTP-only findings

test('HTTP: cancellation, HTTP/1.0 streams (issue 7 #4, #10), ended MCP sessions', async (t) => {
  const navigate = (id, ms, meta) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'browser_navigate', arguments: { url: `${pages.url}/slow?ms=${ms}` }, ...(meta ? { _meta: meta } : {}) } });
  const cases = [
    ...[[undefined, undefined], ['keep-alive', undefined]].map(([connection, todo], k) => ({
      cat: 'HTTP streams and sessions', name: `an SSE answer to HTTP/1.0 (Connection: ${connection || 'none'}) is not chunked`, todo, async run() {
        const headers = { ...sessionHeaders, connection };
        const r = await rawExchange(http.port, httpRequest(http.port, { version: 'HTTP/1.0', headers, body: navigate(51 + k, 1200, { progressToken: 'p' }) }), { ms: 15000 });
        assert.equal(r.status, 200, r.head);
        assert.match(r.head, /\r\ncontent-type: text\/event-stream/i, 'progress makes it a stream');
        assert.doesNotMatch(r.head, /transfer-encoding: *chunked/i, r.head);
        assert.equal(rpcOf(r)?.id, 51 + k);
      },
    })),
    { cat: 'HTTP streams and sessions', name: 'a POST whose call is cancelled gets an answer or is closed', async run() {
      const pending = rawExchange(http.port, httpRequest(http.port, { headers: sessionHeaders, body: navigate(55, 4000) }), { ms: 3500 });
      await new Promise((r) => setTimeout(r, 400));
      const c = await rawExchange(http.port, httpRequest(http.port, { headers: sessionHeaders, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 55, reason: 'test' } }) }));
      assert.equal(c.status, 202, c.head);
      const r = await pending;
      assert.ok(!r.timedOut, 'the cancelled POST got neither an answer nor a close within 3 s');
    } },
    { cat: 'HTTP streams and sessions', name: 'an MCP session ended by DELETE is unknown (404), also to DELETE', async run() {
      const gone = await rawInit();
      const h = { ...sessionHeaders, 'mcp-session-id': gone };
      let r = await rawExchange(http.port, httpRequest(http.port, { method: 'DELETE', headers: h }));
      assert.equal(r.status, 200, r.head);
      r = await rawExchange(http.port, httpRequest(http.port, { headers: h, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) }));
      assert.equal(r.status, 404, r.head);
      r = await rawExchange(http.port, httpRequest(http.port, { method: 'DELETE', headers: h }));
      assert.equal(r.status, 404, r.head);
    } },
  ];
  await runCases(t, 'http', cases, (c) => c.run());
  // Let the cancelled navigation finish before the control session.
  await new Promise((r) => setTimeout(r, 500));
  await httpControl();
});
