// Sessions: explicit and default sessions, isolation, limits, expiry,
// ordering, parallelism, deadlines and cancellation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, startPageServer, call, text, refOf } from './lib.mjs';

const pages = await startPageServer();
test.after(() => pages.close());

test('8 sessions in parallel: own counters, cookies invisible to each other', async () => {
  const srv = await startServer();
  try {
    const c = srv.client;
    const ids = await Promise.all(Array.from({ length: 8 }, async () => {
      const r = await call(c, 'browser_session_create');
      assert.equal(r.isError, false, text(r));
      assert.match(r.structuredContent.sessionId, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      assert.ok(Date.parse(r.structuredContent.expiresAt) > Date.now());
      return r.structuredContent.sessionId;
    }));
    assert.equal(new Set(ids).size, 8);

    await Promise.all(ids.map(async (sessionId, i) => {
      let r = await call(c, 'browser_navigate', { sessionId, url: `${pages.url}/counter.html` });
      assert.equal(r.isError, false, text(r));
      assert.equal(r.structuredContent.status, 200);
      r = await call(c, 'browser_snapshot', { sessionId });
      const ref = refOf(r.structuredContent.snapshot, 'button');
      assert.ok(ref, `a button ref in ${r.structuredContent.snapshot}`);
      for (let k = 0; k <= i; k++) {
        r = await call(c, 'browser_click', { sessionId, target: ref, element: 'counter button' });
        assert.equal(r.isError, false, text(r));
      }
      r = await call(c, 'browser_evaluate', { sessionId, function: '() => document.body.innerText' });
      assert.match(text(r), new RegExp(`\\b${i + 1}\\b`), `session ${i} clicked ${i + 1} times`);
    }));

    // A cookie set in session 0 is invisible to every other session.
    let r = await call(c, 'browser_evaluate', { sessionId: ids[0], function: "() => { document.cookie = 'secret=s0; path=/'; return document.cookie; }" });
    assert.match(text(r), /secret=s0/);
    r = await call(c, 'browser_navigate', { sessionId: ids[0], url: `${pages.url}/cookies` });
    r = await call(c, 'browser_evaluate', { sessionId: ids[0], function: "() => document.getElementById('c').textContent" });
    assert.match(text(r), /secret=s0/);
    for (const sessionId of ids.slice(1)) {
      r = await call(c, 'browser_navigate', { sessionId, url: `${pages.url}/cookies` });
      r = await call(c, 'browser_evaluate', { sessionId, function: "() => document.getElementById('c').textContent + '|' + document.cookie + '|' + localStorage.length" });
      assert.equal(JSON.parse(text(r)), '(none)||0');
    }

    r = await call(c, 'browser_session_list');
    assert.equal(r.structuredContent.sessions.length, 8);
    for (const id of ids) {
      r = await call(c, 'browser_session_close', { sessionId: id });
      assert.equal(r.structuredContent.closed, true);
    }
    r = await call(c, 'browser_snapshot', { sessionId: ids[0] });
    assert.equal(r.structuredContent.error.code, 'SESSION_NOT_FOUND');
  } finally {
    await srv.close();
  }
});

test('default session: a plain client needs no session calls', async () => {
  const srv = await startServer();
  try {
    let r = await call(srv.client, 'browser_navigate', { url: `${pages.url}/counter.html` });
    assert.equal(r.isError, false, text(r));
    const sid = r.structuredContent.sessionId;
    r = await call(srv.client, 'browser_evaluate', { function: '() => location.pathname' });
    assert.equal(r.structuredContent.sessionId, sid);
    assert.deepEqual(r.structuredContent.result, { value: '/counter.html' });
    r = await call(srv.client, 'browser_session_list');
    assert.equal(r.structuredContent.sessions.length, 1);
    assert.equal(r.structuredContent.sessions[0].isDefault, true);
  } finally {
    await srv.close();
  }
});

test('--max-sessions is enforced and a closed slot can be reused', async () => {
  const srv = await startServer(['--max-sessions', '2']);
  try {
    const a = await call(srv.client, 'browser_session_create');
    const b = await call(srv.client, 'browser_session_create');
    assert.equal(b.isError, false);
    const c3 = await call(srv.client, 'browser_session_create');
    assert.equal(c3.isError, true);
    assert.equal(c3.structuredContent.error.code, 'MAX_SESSIONS_REACHED');
    // The default session counts too.
    const d = await call(srv.client, 'browser_snapshot', {});
    assert.equal(d.structuredContent.error.code, 'MAX_SESSIONS_REACHED');
    await call(srv.client, 'browser_session_close', { sessionId: a.structuredContent.sessionId });
    const e = await call(srv.client, 'browser_session_create');
    assert.equal(e.isError, false, text(e));
  } finally {
    await srv.close();
  }
});

test('idle sessions expire (sliding) and then answer SESSION_EXPIRED', async () => {
  const srv = await startServer(['--session-idle-timeout', '2']);
  try {
    const r = await call(srv.client, 'browser_session_create');
    const sessionId = r.structuredContent.sessionId;
    const t0 = Date.parse(r.structuredContent.expiresAt);
    // Use keeps it alive past the first expiry time.
    await new Promise((ok) => setTimeout(ok, 1200));
    let u = await call(srv.client, 'browser_evaluate', { sessionId, function: '() => 1' });
    assert.equal(u.isError, false, text(u));
    await new Promise((ok) => setTimeout(ok, 1200));
    u = await call(srv.client, 'browser_evaluate', { sessionId, function: '() => 2' });
    assert.equal(u.isError, false, 'still alive 2.4 s after creation thanks to use');
    const list = await call(srv.client, 'browser_session_list');
    assert.ok(Date.parse(list.structuredContent.sessions[0].expiresAt) > t0, 'expiry slid forward');
    await new Promise((ok) => setTimeout(ok, 3500));
    u = await call(srv.client, 'browser_evaluate', { sessionId, function: '() => 3' });
    assert.equal(u.isError, true);
    assert.equal(u.structuredContent.error.code, 'SESSION_EXPIRED');
  } finally {
    await srv.close();
  }
});

test('one session runs calls in order; different sessions run in parallel', async () => {
  const srv = await startServer();
  try {
    const c = srv.client;
    const [a, b] = await Promise.all([call(c, 'browser_session_create'), call(c, 'browser_session_create')]);
    const A = a.structuredContent.sessionId, B = b.structuredContent.sessionId;
    const sleep = (ms, tag) => `() => new Promise(r => setTimeout(() => r('${tag}:' + Date.now()), ${ms}))`;
    // Parallel: two 1 s calls on two sessions take about 1 s, not 2.
    let t = Date.now();
    await Promise.all([call(c, 'browser_evaluate', { sessionId: A, function: sleep(1000, 'a') }),
      call(c, 'browser_evaluate', { sessionId: B, function: sleep(1000, 'b') })]);
    const parallel = Date.now() - t;
    assert.ok(parallel < 1800, `parallel took ${parallel} ms\n${srv.stderr()}`);
    // Serial: three calls on one session finish in arrival order.
    t = Date.now();
    const order = [];
    await Promise.all([600, 10, 300].map((ms, i) => call(c, 'browser_evaluate', { sessionId: A, function: sleep(ms, i) })
      .then((r) => order.push(JSON.parse(text(r)).split(':')[0]))));
    assert.deepEqual(order, ['0', '1', '2']);
    assert.ok(Date.now() - t >= 900, 'calls on one session do not overlap');
  } finally {
    await srv.close();
  }
});

test('deadlines give TIMEOUT and cancellation stops the call; the session carries on', async () => {
  const srv = await startServer();
  try {
    const c = srv.client;
    let t = Date.now();
    let r = await call(c, 'browser_evaluate', { function: '() => new Promise(r => setTimeout(r, 10000))', timeout: 500 });
    assert.equal(r.structuredContent.error.code, 'TIMEOUT');
    assert.ok(Date.now() - t < 3000, 'timed out promptly');
    r = await call(c, 'browser_evaluate', { function: '() => 6 * 7' });
    assert.deepEqual(r.structuredContent.result, { value: 42 });

    const ac = new AbortController();
    t = Date.now();
    const p = call(c, 'browser_evaluate', { function: '() => new Promise(r => setTimeout(r, 20000))' }, { signal: ac.signal });
    setTimeout(() => ac.abort(), 300);
    await assert.rejects(p);
    r = await call(c, 'browser_evaluate', { function: "() => 'after cancel'" });
    assert.deepEqual(r.structuredContent.result, { value: 'after cancel' });
    assert.ok(Date.now() - t < 5000, `the cancelled call stopped (next call answered after ${Date.now() - t} ms)`);
  } finally {
    await srv.close();
  }
});

test('a long call with a progressToken reports progress while it runs', async () => {
  const srv = await startServer();
  try {
    const seen = [];
    const r = await srv.client.callTool(
      { name: 'browser_evaluate', arguments: { function: '() => new Promise(r => setTimeout(() => r(1), 2600))' } },
      undefined, { timeout: 60000, onprogress: (p) => seen.push(p) });
    assert.equal(r.isError, false, text(r));
    assert.ok(seen.length >= 2, `progress notifications: ${JSON.stringify(seen)}`);
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i].progress > seen[i - 1].progress, 'progress only grows');
    assert.match(seen[0].message, /browser_evaluate still running/);
    // A quick call sends none.
    seen.length = 0;
    await srv.client.callTool({ name: 'browser_evaluate', arguments: { function: '() => 1' } }, undefined,
      { onprogress: (p) => seen.push(p) });
    assert.equal(seen.length, 0);
  } finally {
    await srv.close();
  }
});
