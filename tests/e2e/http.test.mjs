// Streamable HTTP transport (tabvisor --http): the official SDK's
// StreamableHTTPClientTransport end to end, many clients at once, sharing
// sessions between clients, logging, /healthz and /metrics, and the
// refusals over raw HTTP (Origin, Host, token, versions, sessions, sizes,
// malformed bodies, batches, a client vanishing mid-call).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  startPageServer, startHttpServer, connectHttp, rawHttp, call, text, refOf, waitFor,
  freshRuntimeDir, tabvisorBin, processesMentioning, serverEnv,
} from './lib.mjs';
import { parseMetrics, checkConventions, promtool } from './promtext.mjs';

const pages = await startPageServer();
test.after(() => pages.close());

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };

async function rawInit(url, headers = {}) {
  const r = await rawHttp(url, { headers: { ...JSON_HEADERS, ...headers }, body: JSON.stringify(INIT) });
  assert.equal(r.status, 200, r.body);
  const sid = r.headers['mcp-session-id'];
  assert.match(sid, /^[0-9a-f-]{36}$/);
  return sid;
}

async function navSnapClick(client, sessionId) {
  const args = sessionId ? { sessionId } : {};
  let r = await call(client, 'browser_navigate', { ...args, url: `${pages.url}/counter.html` });
  assert.equal(r.isError, false, text(r));
  r = await call(client, 'browser_snapshot', args);
  assert.equal(r.isError, false, text(r));
  const ref = refOf(r.structuredContent.snapshot, 'button');
  assert.ok(ref, r.structuredContent.snapshot);
  r = await call(client, 'browser_click', { ...args, target: ref });
  assert.equal(r.isError, false, text(r));
  return r;
}

test('SDK client over HTTP: tools, a default session per MCP session, sharing by sessionId, DELETE', async () => {
  const srv = await startHttpServer();
  try {
    const a = await connectHttp(srv.url);
    const b = await connectHttp(srv.url);
    assert.ok(a.transport.sessionId && b.transport.sessionId && a.transport.sessionId !== b.transport.sessionId);
    const tools = await a.client.listTools();
    assert.ok(tools.tools.some((t) => t.name === 'browser_navigate'));

    await navSnapClick(a.client);
    await navSnapClick(b.client);
    let r = await call(a.client, 'browser_session_list');
    const defA = r.structuredContent.sessions.find((s) => s.isDefault).sessionId;
    r = await call(b.client, 'browser_session_list');
    const defB = r.structuredContent.sessions.find((s) => s.isDefault).sessionId;
    assert.notEqual(defA, defB, 'each MCP session has its own default browser session');

    // A session created by A is usable by B, given its id.
    r = await call(a.client, 'browser_session_create');
    const shared = r.structuredContent.sessionId;
    await navSnapClick(b.client, shared);
    r = await call(a.client, 'browser_evaluate', { sessionId: shared, function: '() => document.title' });
    assert.equal(r.isError, false, text(r));

    let h = JSON.parse((await rawHttp(`${srv.base}/healthz`, { method: 'GET' })).body);
    assert.equal(h.status, 'ok');
    assert.equal(h.mcpSessions, 2);
    assert.equal(h.browserSessions, 3);

    // DELETE ends B's MCP session and closes B's default browser session only.
    const sidB = b.transport.sessionId;
    await b.transport.terminateSession();
    h = JSON.parse((await rawHttp(`${srv.base}/healthz`, { method: 'GET' })).body);
    assert.equal(h.mcpSessions, 1);
    assert.equal(h.browserSessions, 2);
    const gone = await rawHttp(srv.url, { headers: { ...JSON_HEADERS, 'mcp-session-id': sidB }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }) });
    assert.equal(gone.status, 404);
    r = await call(a.client, 'browser_snapshot', { sessionId: shared });
    assert.equal(r.isError, false, 'the shared session outlives the MCP session that used it');
    r = await call(a.client, 'browser_snapshot', { sessionId: defB });
    assert.equal(r.structuredContent.error.code, 'SESSION_NOT_FOUND');

    const m = (await rawHttp(`${srv.base}/metrics`, { method: 'GET' })).body;
    assert.match(m, /^tabvisor_tool_calls_total\{tool="browser_click",outcome="ok"\} 3$/m);
    assert.match(m, /^tabvisor_tool_call_duration_seconds_count\{tool="browser_click"\} 3$/m);
    assert.match(m, /^tabvisor_tool_call_duration_seconds_bucket\{tool="browser_click",le="\+Inf"\} 3$/m);
    assert.match(m, /^tabvisor_mcp_sessions 1$/m);
    assert.match(m, /^tabvisor_worker_crashes_total 0$/m);
    assert.match(m, /^tabvisor_browser_restarts_total 0$/m);
    await a.client.close();
    await b.client.close();
  } finally {
    await srv.close();
  }
});

// One sample's value: name and labels must match exactly one series.
function sample(fams, family, name, labels = {}) {
  const f = fams.get(family);
  assert.ok(f, `no family ${family}`);
  const hits = f.samples.filter((s) => s.name === name &&
    Object.keys(labels).length === Object.keys(s.labels).length &&
    Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  assert.equal(hits.length, 1, `${name}${JSON.stringify(labels)}: ${hits.length} series`);
  return hits[0].value;
}

test('/metrics reader: rejects what breaks the format or the conventions', () => {
  const ok = '# HELP x_total A.\n# TYPE x_total counter\nx_total{a="b"} 1\n';
  assert.equal(parseMetrics(ok).get('x_total').samples[0].value, 1);
  for (const bad of [
    'x_total 1', // no final newline
    '# TYPE x counter\n# TYPE x counter\nx 1\n',
    'x{a="b} 1\n',
    'x{a="b"} one\n',
    '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n',
    '# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n',
    '# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\na{x="y"} 2\n',
    'x 1\nx 2\n',
  ]) assert.throws(() => parseMetrics(bad), undefined, JSON.stringify(bad));
  const conv = (t) => checkConventions(parseMetrics(t));
  assert.deepEqual(conv(ok.replaceAll('x_total', 'tabvisor_x_total')), []);
  assert.ok(conv('# HELP tabvisor_calls C.\n# TYPE tabvisor_calls counter\ntabvisor_calls 1\n').length);
  assert.ok(conv('# HELP tabvisor_call_duration_ms D.\n# TYPE tabvisor_call_duration_ms gauge\ntabvisor_call_duration_ms 1\n').length);
  assert.ok(conv('# HELP tabvisor_out_bytes_count B.\n# TYPE tabvisor_out_bytes_count counter\ntabvisor_out_bytes_count 1\n').length);
});

test('/metrics: valid exposition (promtool when installed), per-tool latency histograms, sessions by state, restarts, bytes sent', async () => {
  const srv = await startHttpServer();
  const scrape = async () => (await rawHttp(`${srv.base}/metrics`, { method: 'GET' })).body;
  try {
    const a = await connectHttp(srv.url);
    await navSnapClick(a.client);
    let r = await call(a.client, 'browser_navigate', { url: 'http://127.0.0.1:1/' }); // refused
    assert.equal(r.isError, true);
    const before = parseMetrics(await scrape());
    const sentBefore = sample(before, 'tabvisor_sent_bytes_total', 'tabvisor_sent_bytes_total', { transport: 'http' });
    assert.ok(sentBefore > 1000, `bytes sent ${sentBefore}`);

    // Latency per tool: navigate ran twice (one ok, one error), snapshot and click once.
    const H = 'tabvisor_tool_call_duration_seconds';
    assert.equal(sample(before, H, `${H}_count`, { tool: 'browser_navigate' }), 2);
    assert.equal(sample(before, H, `${H}_bucket`, { tool: 'browser_navigate', le: '+Inf' }), 2);
    assert.equal(sample(before, H, `${H}_count`, { tool: 'browser_click' }), 1);
    const navSum = sample(before, H, `${H}_sum`, { tool: 'browser_navigate' });
    assert.ok(navSum > 0 && navSum < 120, `navigate latency sum ${navSum}`);
    assert.equal(sample(before, 'tabvisor_tool_calls_total', 'tabvisor_tool_calls_total',
      { tool: 'browser_navigate', outcome: 'NAVIGATION_FAILED' }), 1);

    // Sessions by state: one session, idle between calls; the states add up to the total.
    const S = 'tabvisor_browser_sessions_by_state';
    assert.equal(sample(before, S, S, { state: 'idle' }), 1);
    const states = before.get(S).samples.reduce((n, s) => n + s.value, 0);
    assert.equal(states, sample(before, 'tabvisor_browser_sessions', 'tabvisor_browser_sessions'));

    // A worker killed: one crash, and the next call's fresh worker counts as a restart.
    const workers = processesMentioning(srv.runtimeDir).filter((p) => p.cmd.includes('tabvisor-worker'));
    assert.equal(workers.length, 1);
    process.kill(workers[0].pid, 'SIGKILL');
    await waitFor(async () => /^tabvisor_worker_crashes_total 1$/m.test(await scrape()), 10000);
    r = await call(a.client, 'browser_navigate', { url: `${pages.url}/counter.html` });
    assert.equal(r.isError, false, text(r));
    // The browser killed: it counts as a browser restart once noticed.
    const browser = processesMentioning(srv.runtimeDir).filter((p) => !p.cmd.includes('tabvisor') &&
      !p.cmd.includes('--type=') && !p.cmd.includes('crashpad'));
    assert.equal(browser.length, 1, JSON.stringify(browser));
    process.kill(browser[0].pid, 'SIGKILL');
    await waitFor(async () => /^tabvisor_browser_restarts_total 1$/m.test(await scrape()), 10000);
    await call(a.client, 'browser_navigate', { url: `${pages.url}/counter.html` });

    const text2 = await scrape();
    const after = parseMetrics(text2);
    assert.deepEqual(checkConventions(after), []);
    assert.equal(sample(after, 'tabvisor_worker_crashes_total', 'tabvisor_worker_crashes_total') >= 1, true);
    assert.equal(sample(after, 'tabvisor_worker_restarts_total', 'tabvisor_worker_restarts_total') >= 1, true);
    assert.equal(sample(after, 'tabvisor_browser_restarts_total', 'tabvisor_browser_restarts_total'), 1);
    assert.ok(sample(after, 'tabvisor_sent_bytes_total', 'tabvisor_sent_bytes_total', { transport: 'http' }) > sentBefore);
    assert.equal(sample(after, H, `${H}_count`, { tool: 'browser_navigate' }), 4);

    const pt = promtool(text2);
    if (pt) assert.ok(pt.ok && pt.output === '', `${pt.bin} check metrics:\n${pt.output}`);
    else assert.ok(!process.env.CI, 'CI must have promtool (deploy/install-deps.sh)');
    await a.client.close();
  } finally {
    await srv.close();
  }
});

test('progress: browser_navigate with a progressToken streams notifications/progress over SSE', async () => {
  const srv = await startHttpServer();
  try {
    const { client } = await connectHttp(srv.url);
    const seen = [];
    const r = await call(client, 'browser_navigate', { url: `${pages.url}/slow?ms=300` }, { onprogress: (p) => seen.push(p) });
    assert.equal(r.isError, false, text(r));
    assert.deepEqual(seen.map((p) => [p.progress, p.total]), [[1, 2], [2, 2]], JSON.stringify(seen));
    // Over raw HTTP the answer is an SSE stream: progress events, then the result.
    const sid = await rawInit(srv.url);
    const res = await rawHttp(srv.url, { headers: { ...JSON_HEADERS, 'mcp-session-id': sid }, body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'browser_navigate', arguments: { url: `${pages.url}/counter.html` }, _meta: { progressToken: 'tok' } } }) });
    assert.equal(res.status, 200);
    assert.match(res.headers['content-type'], /^text\/event-stream/);
    const events = res.body.split('\n\n').filter((e) => e.includes('data: ')).map((e) => JSON.parse(e.slice(e.indexOf('data: ') + 6)));
    assert.equal(events.at(-1).id, 9);
    assert.equal(events.at(-1).result.isError, false);
    assert.ok(events.slice(0, -1).every((e) => e.method === 'notifications/progress' && e.params.progressToken === 'tok'));
    assert.equal(events.length, 3);
    await client.close();
  } finally {
    await srv.close();
  }
});

test('logging/setLevel: server log lines arrive as notifications/message', async () => {
  const srv = await startHttpServer();
  try {
    const { client } = await connectHttp(srv.url);
    const got = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { got.push(n.params); });
    await client.setLoggingLevel('info');
    const r = await call(client, 'browser_session_create');
    assert.equal(r.isError, false, text(r));
    const sid = r.structuredContent.sessionId;
    assert.ok(await waitFor(() => got.some((p) => String(p.data).includes(`session ${sid} created`)), 5000), JSON.stringify(got));
    assert.ok(got.every((p) => ['info', 'notice', 'warning', 'error'].includes(p.level)));
    await client.setLoggingLevel('error');
    got.length = 0;
    await call(client, 'browser_session_close', { sessionId: sid });
    await new Promise((res) => setTimeout(res, 300));
    assert.deepEqual(got.filter((p) => p.level === 'info'), [], 'info lines stop at level error');
    await assert.rejects(client.request({ method: 'logging/setLevel', params: { level: 'loud' } }, (await import('@modelcontextprotocol/sdk/types.js')).EmptyResultSchema));
    await client.close();
  } finally {
    await srv.close();
  }
});

test('32 HTTP clients run navigate/snapshot/click loops at once; sessions do not wait for each other', async () => {
  const srv = await startHttpServer(['--max-sessions', '40']);
  try {
    const clients = await Promise.all(Array.from({ length: 32 }, () => connectHttp(srv.url)));
    let errors = 0;
    await Promise.all(clients.map(async ({ client }) => {
      for (let i = 0; i < 3; i++) {
        try { await navSnapClick(client); } catch (e) { errors++; throw e; }
      }
    }));
    assert.equal(errors, 0);

    // A slow navigation in one session does not hold up another session.
    const [slow, fast] = clients;
    const t0 = Date.now();
    let fastDone = 0;
    const slowCall = call(slow.client, 'browser_navigate', { url: `${pages.url}/slow?ms=2500` }).then(() => Date.now() - t0);
    await new Promise((res) => setTimeout(res, 200));
    const r = await call(fast.client, 'browser_evaluate', { function: '() => 1 + 1' });
    fastDone = Date.now() - t0;
    assert.equal(text(r).trim(), '2');
    const slowDone = await slowCall;
    assert.ok(fastDone < 2000 && fastDone < slowDone, `fast ${fastDone} ms, slow ${slowDone} ms`);
    await Promise.all(clients.map(({ client }) => client.close()));
  } finally {
    await srv.close();
  }
});

test('raw HTTP: Origin, Host, Accept, content type, versions, sessions, sizes, malformed bodies', async () => {
  const srv = await startHttpServer(['--http-max-body', '2048']);
  try {
    const { url, port } = srv;
    const post = (headers, body) => rawHttp(url, { headers: { ...JSON_HEADERS, ...headers }, body });
    let r = await post({ origin: 'http://evil.example' }, JSON.stringify(INIT));
    assert.equal(r.status, 403);
    r = await post({ host: `evil.example:${port}` }, JSON.stringify(INIT));
    assert.equal(r.status, 403);
    r = await post({ host: `attacker.test` }, JSON.stringify(INIT));
    assert.equal(r.status, 403);
    r = await post({ origin: `http://localhost:${port}`, host: `localhost:${port}` }, JSON.stringify(INIT));
    assert.equal(r.status, 200, 'a same-host Origin is fine');
    r = await post({ accept: 'application/json' }, JSON.stringify(INIT));
    assert.equal(r.status, 406);
    r = await post({ 'content-type': 'text/plain' }, JSON.stringify(INIT));
    assert.equal(r.status, 415);

    const sid = await rawInit(url);
    const ping = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' });
    r = await post({}, ping);
    assert.equal(r.status, 400, 'no Mcp-Session-Id');
    r = await post({ 'mcp-session-id': '00000000-0000-4000-8000-000000000000' }, ping);
    assert.equal(r.status, 404);
    r = await post({ 'mcp-session-id': sid, 'mcp-protocol-version': '1999-01-01' }, ping);
    assert.equal(r.status, 400);
    for (const v of ['2025-11-25', '2025-06-18', '2025-03-26']) {
      r = await post({ 'mcp-session-id': sid, 'mcp-protocol-version': v }, ping);
      assert.equal(r.status, 200, v);
      assert.deepEqual(JSON.parse(r.body), { jsonrpc: '2.0', id: 7, result: {} });
    }
    r = await post({ 'mcp-session-id': sid }, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    assert.equal(r.status, 202);
    r = await post({ 'mcp-session-id': sid }, '{"jsonrpc": "2.0", "id": 1, "method": ');
    assert.equal(r.status, 400);
    assert.equal(JSON.parse(r.body).error.code, -32700);
    r = await post({ 'mcp-session-id': sid }, JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'ping' }]));
    assert.equal(r.status, 400);
    assert.equal(JSON.parse(r.body).error.code, -32600);
    r = await post({ 'mcp-session-id': sid }, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(4000) } }));
    assert.equal(r.status, 413);
    r = await rawHttp(url, { method: 'PUT', headers: { 'mcp-session-id': sid } });
    assert.equal(r.status, 405);
    r = await rawHttp(url, { method: 'POST', headers: { ...JSON_HEADERS, 'transfer-encoding': 'chunked' }, body: ping });
    assert.equal(r.status, 411);
    r = await rawHttp(`${srv.base}/nope`, { method: 'GET' });
    assert.equal(r.status, 404);

    r = await rawHttp(url, { method: 'DELETE', headers: { 'mcp-session-id': sid } });
    assert.equal(r.status, 200);
    r = await post({ 'mcp-session-id': sid }, ping);
    assert.equal(r.status, 404, 'an ended session is unknown');
    r = await rawHttp(url, { method: 'DELETE', headers: { 'mcp-session-id': sid } });
    assert.equal(r.status, 404);
  } finally {
    await srv.close();
  }
});

test('bearer token: required when set (flag or environment); /healthz stays open', async () => {
  const srv = await startHttpServer([], { TABVISOR_AUTH_TOKEN: 's3cret-token' });
  try {
    let r = await rawHttp(srv.url, { headers: JSON_HEADERS, body: JSON.stringify(INIT) });
    assert.equal(r.status, 401);
    assert.match(r.headers['www-authenticate'], /^Bearer/);
    r = await rawHttp(srv.url, { headers: { ...JSON_HEADERS, authorization: 'Bearer wrong' }, body: JSON.stringify(INIT) });
    assert.equal(r.status, 401);
    r = await rawHttp(`${srv.base}/metrics`, { method: 'GET' });
    assert.equal(r.status, 401);
    r = await rawHttp(`${srv.base}/healthz`, { method: 'GET' });
    assert.equal(r.status, 200);
    const { client } = await connectHttp(srv.url, { requestInit: { headers: { Authorization: 'Bearer s3cret-token' } } });
    assert.ok((await client.listTools()).tools.length > 5);
    await client.close();
  } finally {
    await srv.close();
  }
});

test('a non-loopback bind without a token is refused at start', async () => {
  const dir = freshRuntimeDir();
  const child = spawn(tabvisorBin, ['--http', '0.0.0.0:0', '--runtime-dir', dir], { stdio: ['ignore', 'ignore', 'pipe'], env: serverEnv() });
  let log = '';
  child.stderr.on('data', (d) => { log += d; });
  const code = await new Promise((r) => child.once('exit', r));
  assert.equal(code, 2);
  assert.match(log, /refusing to serve HTTP on non-loopback address 0\.0\.0\.0 without a token/);
});

test('a client that disconnects mid-call leaves its browser session usable', async () => {
  const srv = await startHttpServer();
  try {
    const sid = await rawInit(srv.url);
    const h = { ...JSON_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
    const { request } = await import('node:http');
    const u = new URL(srv.url);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'browser_navigate', arguments: { url: `${pages.url}/slow?ms=1500` } } });
    await new Promise((resolve) => {
      const req = request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { ...h, 'content-length': Buffer.byteLength(body) } });
      req.on('error', () => resolve());
      req.end(body);
      setTimeout(() => { req.destroy(); resolve(); }, 400);
    });
    await new Promise((res) => setTimeout(res, 1800));
    const r = await rawHttp(srv.url, { headers: h, body: JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'browser_evaluate', arguments: { function: '() => location.pathname' } } }) });
    assert.equal(r.status, 200, r.body);
    const msg = JSON.parse(r.body);
    assert.equal(msg.result.isError, false, r.body);
    assert.match(msg.result.content[0].text, /slow/);
    assert.match(srv.stderr(), /client disconnected before its answer/);
  } finally {
    await srv.close();
  }
});
