// browser_tabs and browser_close through the official SDK client on real
// Chromium: list/new/select/close, popups (window.open, target=_blank) as
// tabs of their own session only, tools acting on the selected tab, refs of
// another tab refused, the last tab and page-initiated closes, bad indexes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { startServer, call, text, refOf, waitFor, onFirefox } from './lib.mjs';

const PAGES = {
  '/a': `<title>A</title><h1>Page A</h1>
    <button onclick="window.open('/b')">Open popup</button>
    <a href="/c" target="_blank">Blank link</a>
    <button onclick="document.getElementById('out').textContent='clicked A'">Act A</button>
    <p id="out"></p>`,
  '/b': `<title>B</title><h1>Page B</h1>
    <button onclick="document.getElementById('out').textContent='clicked B'">Act B</button>
    <p id="out"></p>`,
  '/c': '<title>C</title><p>Page C</p>',
  '/d': "<title>D</title><p>Page D</p><script>alert('hi from D')</script>",
  '/e': `<title>E</title><button onclick="window.close()">Close me</button>`,
  '/f': `<title>F</title><h1>Page F</h1><iframe src="/b"></iframe>`,
};

const server = createServer((req, res) => {
  const u = new URL(req.url, 'http://127.0.0.1');
  if (u.pathname === '/cookies') {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<title>Cookies</title><p id="c">${(req.headers.cookie || '(none)').replace(/[<&]/g, '')}</p>`);
    return;
  }
  const body = PAGES[u.pathname];
  res.writeHead(body ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
  res.end(body || '<title>404</title>');
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}`;

const srv = await startServer();
const c = srv.client;
test.after(async () => {
  await srv.close();
  await new Promise((r) => { server.closeAllConnections?.(); server.close(r); });
});

const ok = (r) => { assert.equal(r.isError, false, text(r)); return r; };
const code = (r) => { assert.equal(r.isError, true, text(r)); return r.structuredContent.error.code; };
const session = async () => ok(await call(c, 'browser_session_create')).structuredContent.sessionId;
const tabs = async (s, args = { action: 'list' }) => ok(await call(c, 'browser_tabs', { sessionId: s, ...args })).structuredContent;
const js = async (s, fn) => ok(await call(c, 'browser_evaluate', { sessionId: s, function: fn })).structuredContent.result.value;
const urls = (st) => st.tabs.map((t) => new URL(t.url, base).pathname);
// Wait until the session lists n tabs (popups are announced by events).
const untilTabs = async (s, n) => {
  let st;
  assert.ok(await waitFor(async () => (st = await tabs(s)).tabs.length === n, 10000, 100), `${n} tabs: ${JSON.stringify(st)}`);
  return st;
};
// waitFor returns a falsy value at its deadline: that fails the test.
const until = async (pred) => assert.ok(await waitFor(pred, 10000, 100), 'condition not met in time');

test('browser_tabs and browser_close are listed as @playwright/mcp has them', async () => {
  const { tools } = await c.listTools();
  const t = tools.find((x) => x.name === 'browser_tabs');
  assert.ok(t);
  assert.deepEqual(t.inputSchema.required, ['action']);
  assert.deepEqual(t.inputSchema.properties.action.enum, ['list', 'new', 'close', 'select']);
  assert.ok(t.inputSchema.properties.index && t.inputSchema.properties.url);
  assert.equal(t.annotations.destructiveHint, true);
  const cl = tools.find((x) => x.name === 'browser_close');
  assert.ok(cl);
  assert.equal(cl.annotations.readOnlyHint, false);
});

test('list, new, select and close; tools act on the selected tab', async () => {
  const s = await session();
  ok(await call(c, 'browser_navigate', { sessionId: s, url: `${base}/a` }));
  let st = await tabs(s);
  assert.equal(st.tabs.length, 1);
  assert.deepEqual(st.tabs[0], { index: 0, url: `${base}/a`, title: 'A', current: true });
  assert.equal(st.current, 0);

  // new with a url: loaded and current.
  const r = ok(await call(c, 'browser_tabs', { sessionId: s, action: 'new', url: `${base}/b` }));
  assert.match(text(r), /### Open tabs\n- 0: \[A\] \(.*\/a\)\n- 1: \(current\) \[B\] \(.*\/b\)/);
  st = r.structuredContent;
  assert.deepEqual(urls(st), ['/a', '/b']);
  assert.equal(st.current, 1);
  assert.equal(st.title, 'B');

  // snapshot + click act on the current tab (B), not on A.
  let snap = text(ok(await call(c, 'browser_snapshot', { sessionId: s })));
  assert.match(snap, /Page B/);
  assert.doesNotMatch(snap, /Page A/);
  const actB = refOf(snap, 'button', 'Act B');
  ok(await call(c, 'browser_click', { sessionId: s, target: actB, snapshot: 'none' }));
  assert.equal(await js(s, "() => document.getElementById('out').textContent"), 'clicked B');

  // select A: B's ref is refused with the tab it came from, nothing is clicked.
  st = await tabs(s, { action: 'select', index: 0 });
  assert.equal(st.current, 0);
  assert.equal(st.title, 'A');
  let e = await call(c, 'browser_click', { sessionId: s, target: actB });
  assert.equal(code(e), 'STALE_REF');
  assert.match(e.structuredContent.error.message, /tab 1/);
  assert.equal(await js(s, "() => document.getElementById('out').textContent"), '');
  snap = text(ok(await call(c, 'browser_snapshot', { sessionId: s })));
  assert.match(snap, /Page A/);
  const actA = refOf(snap, 'button', 'Act A');
  assert.notEqual(actA, actB);
  ok(await call(c, 'browser_click', { sessionId: s, target: actA, snapshot: 'none' }));
  assert.equal(await js(s, "() => document.getElementById('out').textContent"), 'clicked A');
  // ...and A's ref is refused on B; B's page is still as it was.
  await tabs(s, { action: 'select', index: 1 });
  e = await call(c, 'browser_click', { sessionId: s, target: actA });
  assert.equal(code(e), 'STALE_REF');
  assert.match(e.structuredContent.error.message, /tab 0/);
  assert.equal(await js(s, "() => document.getElementById('out').textContent"), 'clicked B');
  // B's own ref still works after the round trip.
  ok(await call(c, 'browser_click', { sessionId: s, target: actB, snapshot: 'none' }));

  // close by index (A): B is left and current, at index 0.
  st = await tabs(s, { action: 'close', index: 0 });
  assert.deepEqual(urls(st), ['/b']);
  assert.equal(st.current, 0);
  assert.equal(ok(await call(c, 'browser_snapshot', { sessionId: s })).structuredContent.title, 'B');
  ok(await call(c, 'browser_session_close', { sessionId: s }));
});

test('per-tab console and network logs follow the current tab', async () => {
  const s = await session();
  ok(await call(c, 'browser_navigate', { sessionId: s, url: `${base}/a` }));
  await js(s, "() => console.log('from A')");
  ok(await call(c, 'browser_tabs', { sessionId: s, action: 'new', url: `${base}/b` }));
  await js(s, "() => console.log('from B')");
  let r = text(ok(await call(c, 'browser_console_messages', { sessionId: s, level: 'debug' })));
  assert.match(r, /from B/);
  assert.doesNotMatch(r, /from A/);
  await tabs(s, { action: 'select', index: 0 });
  r = text(ok(await call(c, 'browser_console_messages', { sessionId: s, level: 'debug' })));
  assert.match(r, /from A/);
  assert.doesNotMatch(r, /from B/);
  // Requests and messages a tab makes while in the background are its own.
  await tabs(s, { action: 'select', index: 1 });
  await js(s, "() => { setTimeout(() => { console.log('late B'); fetch('/c?from-b'); }, 300); }");
  await tabs(s, { action: 'select', index: 0 });
  await js(s, "() => fetch('/c?from-a').then((r) => r.text())");
  await new Promise((res) => setTimeout(res, 800));
  assert.doesNotMatch(text(ok(await call(c, 'browser_console_messages', { sessionId: s, level: 'debug' }))), /late B/);
  r = text(ok(await call(c, 'browser_network_requests', { sessionId: s })));
  assert.match(r, /from-a/);
  assert.doesNotMatch(r, /from-b/);
  await tabs(s, { action: 'select', index: 1 });
  r = text(ok(await call(c, 'browser_network_requests', { sessionId: s })));
  assert.match(r, /from-b/);
  assert.doesNotMatch(r, /from-a/);
  assert.match(text(ok(await call(c, 'browser_console_messages', { sessionId: s, level: 'debug' }))), /late B/);
  ok(await call(c, 'browser_session_close', { sessionId: s }));
});

test('popups from window.open and target=_blank become tabs; the opener stays current', async () => {
  const s = await session();
  ok(await call(c, 'browser_navigate', { sessionId: s, url: `${base}/a` }));
  ok(await call(c, 'browser_click', { sessionId: s, target: 'role=button[name="Open popup"]', snapshot: 'none' }));
  let st = await untilTabs(s, 2);
  assert.equal(st.current, 0);
  // Its title as the browser reports it once loaded (the URL until then).
  await until(async () => (st = await tabs(s)).tabs[1].title === 'B');
  assert.equal(urls(st)[1], '/b');

  ok(await call(c, 'browser_click', { sessionId: s, target: 'role=link[name="Blank link"]', snapshot: 'none' }));
  st = await untilTabs(s, 3);
  await until(async () => urls(st = await tabs(s))[2] === '/c');
  assert.equal(st.current, 0);

  // The popup is a full tab: select it, snapshot it, act in it.
  st = await tabs(s, { action: 'select', index: 1 });
  assert.equal(st.title, 'B');
  const snap = text(ok(await call(c, 'browser_snapshot', { sessionId: s })));
  assert.match(snap, /Page B/);
  ok(await call(c, 'browser_click', { sessionId: s, target: refOf(snap, 'button', 'Act B'), snapshot: 'none' }));
  assert.equal(await js(s, "() => document.getElementById('out').textContent"), 'clicked B');
  assert.equal(await js(s, '() => !!window.opener'), true);
  ok(await call(c, 'browser_session_close', { sessionId: s }));
});

test('a dialog in a background tab is the session\'s modal state; answering it selects its tab', async () => {
  const s = await session();
  ok(await call(c, 'browser_navigate', { sessionId: s, url: `${base}/a` }));
  await js(s, "() => { window.open('/d'); }");
  await untilTabs(s, 2);
  // D's alert blocks its renderer, which A shares: calls on A say so at once
  // (no timeout), naming the tab.
  let e;
  await until(async () => (e = await call(c, 'browser_snapshot', { sessionId: s, timeout: 5000 })).isError);
  assert.equal(code(e), 'MODAL_STATE');
  assert.match(e.structuredContent.error.message, /tab 1 shows a alert dialog \("hi from D"\)/);
  // browser_tabs still works: list shows the modal state, select and close too.
  let st = await tabs(s);
  assert.deepEqual(st.modalState, { type: 'alert', message: 'hi from D', tab: 1 });
  st = await tabs(s, { action: 'select', index: 1 });
  assert.equal(st.modalState.message, 'hi from D');
  st = await tabs(s, { action: 'close' });
  assert.deepEqual(urls(st), ['/a']);
  assert.equal(st.modalState, undefined);
  assert.match(text(ok(await call(c, 'browser_snapshot', { sessionId: s }))), /Page A/);

  // Again, answered from A: browser_handle_dialog answers it in tab 1, now current.
  await js(s, "() => { window.open('/d'); }");
  await untilTabs(s, 2);
  await until(async () => (await call(c, 'browser_snapshot', { sessionId: s, timeout: 5000 })).isError);
  const r = ok(await call(c, 'browser_handle_dialog', { sessionId: s, accept: true }));
  assert.match(text(r), /Accepted the alert dialog "hi from D" in tab 1/);
  st = await tabs(s);
  assert.equal(st.current, 1);
  assert.equal(st.modalState, undefined);
  assert.match(text(ok(await call(c, 'browser_snapshot', { sessionId: s }))), /Page D/);
  ok(await call(c, 'browser_session_close', { sessionId: s }));
});

test('two sessions never see each other\'s tabs', async () => {
  const s1 = await session();
  const s2 = await session();
  ok(await call(c, 'browser_navigate', { sessionId: s1, url: `${base}/c` }));
  ok(await call(c, 'browser_navigate', { sessionId: s2, url: `${base}/a` }));
  ok(await call(c, 'browser_click', { sessionId: s2, target: 'role=button[name="Open popup"]', snapshot: 'none' }));
  const st2 = await untilTabs(s2, 2);
  assert.equal(st2.tabs.length, 2);
  // Give a misrouted event every chance to arrive, then look from session 1.
  await new Promise((r) => setTimeout(r, 300));
  const st1 = await tabs(s1);
  assert.deepEqual(urls(st1), ['/c']);
  const e = await call(c, 'browser_tabs', { sessionId: s1, action: 'select', index: 1 });
  assert.equal(code(e), 'TAB_NOT_FOUND');
  // Session 2 closes its popup; session 1 is untouched.
  ok(await call(c, 'browser_tabs', { sessionId: s2, action: 'close', index: 1 }));
  assert.deepEqual(urls(await tabs(s1)), ['/c']);
  assert.deepEqual(urls(await tabs(s2)), ['/a']);
  ok(await call(c, 'browser_session_close', { sessionId: s1 }));
  ok(await call(c, 'browser_session_close', { sessionId: s2 }));
});

test('closing the last tab leaves a fresh blank tab; the session goes on', async () => {
  const s = await session();
  ok(await call(c, 'browser_navigate', { sessionId: s, url: `${base}/a` }));
  const r = ok(await call(c, 'browser_tabs', { sessionId: s, action: 'close' }));
  assert.match(text(r), /new blank tab/);
  assert.deepEqual(r.structuredContent.tabs, [{ index: 0, url: 'about:blank', title: '', current: true }]);
  ok(await call(c, 'browser_navigate', { sessionId: s, url: `${base}/c` }));
  assert.match(text(ok(await call(c, 'browser_snapshot', { sessionId: s }))), /Page C/);
  ok(await call(c, 'browser_session_close', { sessionId: s }));
});

// Firefox: on a busy machine its window.close() can land after the 800 ms this
// test allows, and the next call then acts before the close (flaky in CI; stop 33's note).
test('a tab the page closes (window.close) leaves the list; the session goes on', { skip: onFirefox && 'timing-dependent on Firefox under load' }, async () => {
  const s = await session();
  ok(await call(c, 'browser_navigate', { sessionId: s, url: `${base}/a` }));
  // A background popup closed by its opener.
  await js(s, "() => { window.p = window.open('/b'); }");
  await untilTabs(s, 2);
  await js(s, '() => { window.p.close(); }');
  let st = await untilTabs(s, 1);
  assert.deepEqual(urls(st), ['/a']);

  // The current tab closing itself: the next call says so, then acts on the tab left.
  await js(s, "() => { window.p = window.open('/b'); }");
  await untilTabs(s, 2);
  await tabs(s, { action: 'select', index: 1 });
  const snapB = text(ok(await call(c, 'browser_snapshot', { sessionId: s })));
  await js(s, '() => { setTimeout(() => window.close(), 50); }');
  await new Promise((r) => setTimeout(r, 800));
  let e = await call(c, 'browser_snapshot', { sessionId: s });
  assert.equal(code(e), 'TAB_NOT_FOUND');
  assert.match(e.structuredContent.error.message, /closed by the page.*tab 0/);
  st = await tabs(s);
  assert.deepEqual(urls(st), ['/a']);
  assert.equal(st.current, 0);
  const snap = text(ok(await call(c, 'browser_snapshot', { sessionId: s })));
  assert.match(snap, /Page A/);
  // A ref of the closed tab is refused, not resolved on this page.
  e = await call(c, 'browser_click', { sessionId: s, target: refOf(snapB, 'button', 'Act B') });
  assert.equal(code(e), 'STALE_REF');
  assert.match(e.structuredContent.error.message, /closed/);

  // browser_tabs runs anyway and carries the news as a note (said once).
  await js(s, "() => { window.p = window.open('/b'); }");
  await untilTabs(s, 2);
  await tabs(s, { action: 'select', index: 1 });
  await js(s, '() => { setTimeout(() => window.close(), 50); }');
  await new Promise((r) => setTimeout(r, 800));
  const r = ok(await call(c, 'browser_tabs', { sessionId: s, action: 'list' }));
  assert.match(text(r), /Note: the current tab .* was closed by the page; tab 0 .* is now current/);
  assert.deepEqual(urls(r.structuredContent), ['/a']);
  assert.doesNotMatch(text(ok(await call(c, 'browser_snapshot', { sessionId: s }))), /closed by the page/);
  ok(await call(c, 'browser_session_close', { sessionId: s }));
});

test('a tab that closes itself during a call: the call says so, the session goes on', async () => {
  const s = await session();
  ok(await call(c, 'browser_navigate', { sessionId: s, url: `${base}/a` }));
  await js(s, "() => { window.open('/e'); }");
  await untilTabs(s, 2);
  await tabs(s, { action: 'select', index: 1 });
  const t0 = Date.now();
  const r = await call(c, 'browser_click', { sessionId: s, target: 'role=button[name="Close me"]' });
  // At once, not at the click's 10 s deadline waiting for a page that is gone.
  assert.ok(Date.now() - t0 < 5000, `took ${Date.now() - t0} ms`);
  // The click happened; whether its answer came before the tab went is the browser's timing.
  if (r.isError) {
    assert.equal(code(r), 'TAB_NOT_FOUND');
    assert.match(r.structuredContent.error.message, /closed by the page.*tab 0/);
  } else {
    assert.match(text(r), /closed by the page.*tab 0/);
  }
  // Told once: the next call acts on the tab left.
  assert.match(text(ok(await call(c, 'browser_snapshot', { sessionId: s }))), /Page A/);
  assert.deepEqual(urls(await tabs(s)), ['/a']);
  ok(await call(c, 'browser_session_close', { sessionId: s }));
});

test('refs inside a frame of another tab are refused too', async () => {
  const s = await session();
  ok(await call(c, 'browser_navigate', { sessionId: s, url: `${base}/f` }));
  const snapF = text(ok(await call(c, 'browser_snapshot', { sessionId: s })));
  const inFrame = refOf(snapF, 'button', 'Act B');
  assert.match(inFrame, /^f\d+e\d+$/);
  ok(await call(c, 'browser_tabs', { sessionId: s, action: 'new', url: `${base}/f` }));
  const snap2 = text(ok(await call(c, 'browser_snapshot', { sessionId: s })));
  const inFrame2 = refOf(snap2, 'button', 'Act B');
  assert.notEqual(inFrame2, inFrame);
  const e = await call(c, 'browser_click', { sessionId: s, target: inFrame });
  assert.equal(code(e), 'STALE_REF');
  assert.match(e.structuredContent.error.message, /tab 0/);
  ok(await call(c, 'browser_click', { sessionId: s, target: inFrame2, snapshot: 'none' }));
  ok(await call(c, 'browser_session_close', { sessionId: s }));
});

test('bad indexes and arguments are structured errors', async () => {
  const s = await session();
  let e = await call(c, 'browser_tabs', { sessionId: s, action: 'select', index: 5 });
  assert.equal(code(e), 'TAB_NOT_FOUND');
  assert.match(e.structuredContent.error.message, /no tab at index 5/);
  e = await call(c, 'browser_tabs', { sessionId: s, action: 'close', index: 3 });
  assert.equal(code(e), 'TAB_NOT_FOUND');
  e = await call(c, 'browser_tabs', { sessionId: s, action: 'select' });
  assert.equal(code(e), 'INVALID_PARAMETERS');
  e = await call(c, 'browser_tabs', { sessionId: s, action: 'select', index: -1 });
  assert.equal(code(e), 'INVALID_PARAMETERS');
  e = await call(c, 'browser_tabs', { sessionId: s, action: 'frobnicate' });
  assert.equal(code(e), 'INVALID_PARAMETERS');
  e = await call(c, 'browser_tabs', { sessionId: s, action: 'new', url: 'file:///etc/passwd' });
  assert.equal(code(e), 'INVALID_PARAMETERS');
  // The session is fine afterwards.
  assert.equal((await tabs(s)).tabs.length, 2); // the failed new left its tab open and current
  ok(await call(c, 'browser_session_close', { sessionId: s }));
});

test('browser_close closes every tab and the cookies; the next navigate works', async () => {
  const s = await session();
  ok(await call(c, 'browser_navigate', { sessionId: s, url: `${base}/cookies` }));
  await js(s, "() => { document.cookie = 'k=v'; }");
  ok(await call(c, 'browser_tabs', { sessionId: s, action: 'new', url: `${base}/b` }));
  const r = ok(await call(c, 'browser_close', { sessionId: s }));
  assert.deepEqual(r.structuredContent.tabs, [{ index: 0, url: 'about:blank', title: '', current: true }]);
  ok(await call(c, 'browser_navigate', { sessionId: s, url: `${base}/cookies` }));
  assert.equal(await js(s, "() => document.getElementById('c').textContent"), '(none)');
  assert.deepEqual(urls(await tabs(s)), ['/cookies']);
  // Twice in a row is fine too.
  ok(await call(c, 'browser_close', { sessionId: s }));
  ok(await call(c, 'browser_navigate', { sessionId: s, url: `${base}/c` }));
  ok(await call(c, 'browser_session_close', { sessionId: s }));
});

test('a popup obeys --blocked-origins from its first request', async () => {
  // A second origin that counts its hits; the session may not reach it.
  let hits = 0;
  const other = createServer((req, res) => { hits++; res.writeHead(200, { 'content-type': 'text/html' }); res.end('<title>Other</title>'); });
  await new Promise((r) => other.listen(0, '127.0.0.1', r));
  const blocked = `http://127.0.0.1:${other.address().port}`;
  const srv2 = await startServer(['--blocked-origins', blocked]);
  try {
    const c2 = srv2.client;
    ok(await call(c2, 'browser_navigate', { url: `${base}/a` }));
    ok(await call(c2, 'browser_evaluate', { function: `() => { window.open('${blocked}/secret'); }` }));
    ok(await call(c2, 'browser_evaluate', { function: `() => { document.body.insertAdjacentHTML('beforeend', '<a id="x" target="_blank" href="${blocked}/link">x</a>'); document.getElementById('x').click(); }` }));
    let st;
    await until(async () => (st = ok(await call(c2, 'browser_tabs', { action: 'list' })).structuredContent).tabs.length === 3);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(hits, 0);
    // The popup is a tab like any other: selecting it shows the blocked load.
    ok(await call(c2, 'browser_tabs', { action: 'select', index: 1 }));
    const r = ok(await call(c2, 'browser_evaluate', { function: '() => location.href' }));
    assert.ok(r.structuredContent.result.value.startsWith('chrome-error:') || r.structuredContent.result.value.includes('/secret'), text(r));
    assert.equal(hits, 0);
  } finally {
    await srv2.close();
    await new Promise((r) => { other.closeAllConnections?.(); other.close(r); });
  }
});

test('a session holds at most 32 tabs; a popup beyond that is closed; the session goes on', async () => {
  const s = await session();
  ok(await call(c, 'browser_navigate', { sessionId: s, url: `${base}/a` }));
  for (let i = 1; i < 32; i++) ok(await call(c, 'browser_tabs', { sessionId: s, action: 'new' }));
  let e = await call(c, 'browser_tabs', { sessionId: s, action: 'new' });
  assert.equal(code(e), 'INVALID_PARAMETERS');
  assert.match(e.structuredContent.error.message, /at most 32 tabs/);
  await tabs(s, { action: 'select', index: 0 });
  ok(await call(c, 'browser_click', { sessionId: s, target: 'role=button[name="Open popup"]', snapshot: 'none' }));
  await new Promise((r) => setTimeout(r, 500));
  const st = await tabs(s);
  assert.equal(st.tabs.length, 32);
  assert.ok(!urls(st).includes('/b'));
  assert.match(text(ok(await call(c, 'browser_snapshot', { sessionId: s }))), /Page A/);
  ok(await call(c, 'browser_session_close', { sessionId: s }));
});
