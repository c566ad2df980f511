// MCP over stdio: negotiation, tools/list from the catalog, and the errors
// malformed input deserves, with the server serving on after each one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawServer, startServer, call, text } from './lib.mjs';

test('initialize negotiates 2025-11-25 and accepts older versions', async () => {
  for (const [asked, expected] of [
    ['2025-11-25', '2025-11-25'],
    ['2025-06-18', '2025-06-18'],
    ['2025-03-26', '2025-03-26'],
    ['1999-01-01', '2025-11-25'],
  ]) {
    const s = startRawServer();
    const r = await s.request(1, 'initialize', {
      protocolVersion: asked, capabilities: {}, clientInfo: { name: 'raw', version: '0' },
    });
    assert.equal(r.result.protocolVersion, expected);
    assert.equal(r.result.serverInfo.name, 'tabvisor');
    assert.ok(r.result.capabilities.tools);
    s.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    assert.deepEqual((await s.request(2, 'ping', {})).result, {});
    await s.close();
  }
});

test('malformed input gets JSON-RPC errors and the server keeps serving', async () => {
  const s = startRawServer();
  await s.request(1, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } });

  s.send('{"jsonrpc": "2.0", "id": 5, "method": "ping"'); // truncated JSON
  let r = await s.next();
  assert.equal(r.error.code, -32700);
  assert.equal(r.id, null);

  s.send('[{"jsonrpc":"2.0","id":6,"method":"ping"}]'); // batch
  r = await s.next();
  assert.equal(r.error.code, -32600);

  s.send('{"jsonrpc":"1.0","id":7,"method":"ping"}');
  r = await s.next();
  assert.equal(r.error.code, -32600);

  s.send('{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}');
  r = await s.next();
  assert.equal(r.error.code, -32600);

  r = await s.request(8, 'no/such/method', {});
  assert.equal(r.error.code, -32601);

  r = await s.request(9, 'tools/call', { name: 'browser_fly', arguments: {} });
  assert.equal(r.error.code, -32602);
  assert.match(r.error.message, /browser_fly/);

  r = await s.request(10, 'tools/call', { arguments: {} });
  assert.equal(r.error.code, -32602);

  s.send('{"jsonrpc":"2.0","id":11,"method":"tools/call","params":[1,2]}');
  r = await s.next();
  assert.equal(r.error.code, -32602);

  s.send('\u0000\u0001garbage');
  r = await s.next();
  assert.equal(r.error.code, -32700);

  // Still serving after all of that.
  r = await s.request(12, 'tools/list', {});
  assert.ok(r.result.tools.length >= 9);
  await s.close();
});

test('tools/list exposes schemas and annotations from the catalog', async () => {
  const srv = await startServer();
  try {
    const { tools } = await srv.client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    for (const name of ['browser_session_create', 'browser_session_close', 'browser_session_list',
      'browser_navigate', 'browser_snapshot', 'browser_click', 'browser_type',
      'browser_evaluate', 'browser_take_screenshot']) {
      assert.ok(byName[name], `${name} listed`);
      assert.equal(byName[name].inputSchema.type, 'object');
      assert.equal(byName[name].outputSchema.type, 'object');
      assert.equal(typeof byName[name].annotations.readOnlyHint, 'boolean');
    }
    assert.deepEqual(byName.browser_navigate.inputSchema.required, ['url']);
    assert.deepEqual(byName.browser_navigate.inputSchema.properties.waitUntil.enum,
      ['load', 'domcontentloaded', 'networkidle', 'commit']);
    assert.ok(byName.browser_click.inputSchema.properties.target);
    assert.ok(byName.browser_click.inputSchema.properties.sessionId);
    assert.equal(byName.browser_snapshot.annotations.readOnlyHint, true);
    assert.equal(byName.browser_session_close.annotations.destructiveHint, true);
  } finally {
    await srv.close();
  }
});

test('bad tool arguments are INVALID_PARAMETERS results; unknown sessions SESSION_NOT_FOUND', async () => {
  const srv = await startServer();
  try {
    const c = srv.client;
    let r = await call(c, 'browser_navigate', {});
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent.error.code, 'INVALID_PARAMETERS');
    assert.match(r.structuredContent.error.message, /url/);

    r = await call(c, 'browser_navigate', { url: 42 });
    assert.equal(r.structuredContent.error.code, 'INVALID_PARAMETERS');
    assert.match(r.structuredContent.error.message, /'url' must be a string/);

    r = await call(c, 'browser_navigate', { url: 'http://127.0.0.1/', waitUntil: 'sometime' });
    assert.equal(r.structuredContent.error.code, 'INVALID_PARAMETERS');

    r = await call(c, 'browser_click', { target: 'e1', clickCount: 99 });
    assert.equal(r.structuredContent.error.code, 'INVALID_PARAMETERS');

    r = await call(c, 'browser_snapshot', { bogus: true });
    assert.equal(r.structuredContent.error.code, 'INVALID_PARAMETERS');

    r = await call(c, 'browser_navigate', { url: 'x'.repeat(70000) });
    assert.equal(r.structuredContent.error.code, 'INVALID_PARAMETERS');

    const unknown = '00000000-0000-4000-8000-000000000000';
    r = await call(c, 'browser_snapshot', { sessionId: unknown });
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent.error.code, 'SESSION_NOT_FOUND');
    assert.equal(r.structuredContent.sessionId, unknown);

    await assert.rejects(call(c, 'browser_teleport', {}), /-32602|Unknown tool/);

    // And it still works.
    r = await call(c, 'browser_session_list', {});
    assert.equal(r.isError, false);
  } finally {
    await srv.close();
  }
});

test('property: an unknown sessionId gives SESSION_NOT_FOUND from every tool that takes one (150 cases)', async () => {
  const srv = await startServer();
  try {
    const { tools } = await srv.client.listTools();
    const withSession = tools.filter((t) => t.inputSchema.properties.sessionId);
    assert.ok(withSession.length >= 7);
    // Minimal valid arguments generated from each tool's own schema.
    const argsFor = (t) => Object.fromEntries((t.inputSchema.required || []).map((k) => {
      const p = t.inputSchema.properties[k];
      return [k, p.enum ? p.enum[0] : p.type === 'string' ? (k === 'url' ? 'http://127.0.0.1/' : 'x')
        : p.type === 'integer' || p.type === 'number' ? Math.max(1, p.minimum ?? 1) : p.type === 'array' ? [] : true];
    }));
    const hex = (n) => Array.from({ length: n }, () => '0123456789abcdef'[Math.floor(Math.random() * 16)]).join('');
    for (let i = 0; i < 150; i++) {
      const t = withSession[i % withSession.length];
      const sessionId = i % 5 === 4 ? hex(1 + Math.floor(Math.random() * 63)) // any string, not only UUIDs
        : `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`;
      const r = await call(srv.client, t.name, { ...argsFor(t), sessionId });
      assert.equal(r.isError, true, `${t.name} ${sessionId}`);
      assert.equal(r.structuredContent.error.code, 'SESSION_NOT_FOUND', `${t.name}: ${text(r)}`);
      assert.ok(r.structuredContent.error.message.length > 0);
      assert.equal(r.structuredContent.sessionId, sessionId);
    }
    // No browser was started for any of it.
    const list = await call(srv.client, 'browser_session_list');
    assert.equal(list.structuredContent.sessions.length, 0);
  } finally {
    await srv.close();
  }
});

// Schemas are paid on every model request: the default tools/list must stay
// within @playwright/mcp 0.0.83's default (25 tools, 20,286 bytes of tools
// JSON, measured by bench/vs-playwright.mjs), and say each shared rule once.
test('the default tools/list is compact; --schemas full states every bound', async () => {
  const compact = await startServer();
  const full = await startServer(['--schemas', 'full']);
  try {
    const c = (await compact.client.listTools()).tools;
    const f = (await full.client.listTools()).tools;
    assert.equal(c.length, f.length);
    assert.ok(JSON.stringify(c).length <= 20286, `tools/list is ${JSON.stringify(c).length} bytes`);
    const nav = (ts) => ts.find((t) => t.name === 'browser_navigate').inputSchema.properties;
    assert.equal(nav(c).sessionId.description, undefined);
    assert.equal(nav(c).url.maxLength, undefined);
    assert.match(nav(f).sessionId.description, /browser_session_create/);
    assert.equal(nav(f).url.maxLength, 65536);
    // Hidden aliases: accepted, listed only in full.
    const drag = (ts) => ts.find((t) => t.name === 'browser_drag').inputSchema.properties;
    assert.equal(drag(c).startRef, undefined);
    assert.equal(drag(f).startRef.type, 'string');
    const init = compact.client.getInstructions();
    assert.match(init, /sessionId: the browser session/);
    assert.match(init, /target: the element, a snapshot ref/);
    // The same validator behind both: a bound left out of the compact schema
    // still gives INVALID_PARAMETERS naming it.
    const r = await call(compact.client, 'browser_navigate', { url: 'x'.repeat(65537) });
    assert.equal(r.structuredContent.error.code, 'INVALID_PARAMETERS');
    assert.match(r.structuredContent.error.message, /url/);
  } finally {
    await compact.close();
    await full.close();
  }
});

test('--tools offers only the named tools; others are refused by name', async () => {
  const srv = await startServer(['--tools', 'browser_navigate, browser_snapshot']);
  try {
    const names = (await srv.client.listTools()).tools.map((t) => t.name).sort();
    assert.deepEqual(names, ['browser_navigate', 'browser_snapshot']);
    await assert.rejects(srv.client.callTool({ name: 'browser_click', arguments: { target: 'e1' } }),
      /Tool browser_click is not enabled: this server offers only --tools/);
    const r = await call(srv.client, 'browser_navigate', { url: 'about:blank' });
    assert.notEqual(r.isError, true, text(r));
  } finally {
    await srv.close();
  }
});

test('bad --caps, --tools and --schemas values stop the server with a message', async () => {
  const { spawnSync } = await import('node:child_process');
  const { tabvisorBin } = await import('./lib.mjs');
  for (const [args, msg] of [
    [['--caps', 'storage,bogus'], /--caps: unknown group 'bogus'/],
    [['--tools', 'browser_click,browser_nope'], /--tools: no tool named 'browser_nope'/],
    [['--schemas', 'tiny'], /--schemas: 'tiny' is not compact or full/],
  ]) {
    const r = spawnSync(tabvisorBin, args, { encoding: 'utf8', timeout: 10000 });
    assert.equal(r.status, 2, args.join(' '));
    assert.match(r.stderr, msg);
  }
});
