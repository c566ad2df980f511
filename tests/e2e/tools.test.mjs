// The browser tools on real pages: the agent loop (snapshot, act by ref,
// look again), navigation results and failures, evaluate, screenshots.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { startServer, startPageServer, call, text, refOf } from './lib.mjs';

const pages = await startPageServer();
const srv = await startServer();
const c = srv.client;
test.after(async () => { await srv.close(); await pages.close(); });

test('login form: snapshot has textboxes and a button with refs; type and click by ref change the page', async () => {
  let r = await call(c, 'browser_navigate', { url: `${pages.url}/login.html` });
  assert.equal(r.isError, false, text(r));
  assert.equal(r.structuredContent.title, 'Sign in');
  r = await call(c, 'browser_snapshot');
  const snap = r.structuredContent.snapshot;
  const email = refOf(snap, 'textbox', 'Email');
  const password = refOf(snap, 'textbox', 'Password');
  const submit = refOf(snap, 'button', 'Submit');
  assert.ok(email && password && submit, snap);
  assert.match(snap, /- heading "Sign in" \[level=1\] \[ref=e\d+\]/);
  assert.match(snap, /- checkbox "Remember me" \[checked\] \[ref=e\d+\]/);
  assert.match(snap, /- link "Help" \[ref=e\d+\]:\n\s+- \/url: \/help/);
  assert.match(text(r), /Page URL: http:\/\/127\.0\.0\.1:\d+\/login\.html/);

  r = await call(c, 'browser_type', { target: email, element: 'Email field', text: 'ada@example.com' });
  assert.equal(r.isError, false, text(r));
  assert.equal(r.structuredContent.ref, email);
  r = await call(c, 'browser_type', { target: password, text: 'hunter2' });
  assert.equal(r.isError, false, text(r));
  r = await call(c, 'browser_click', { target: submit, element: 'Submit button' });
  assert.equal(r.isError, false, text(r));

  r = await call(c, 'browser_snapshot');
  assert.match(r.structuredContent.snapshot, /status \[ref=e\d+\]: Signed in as ada@example\.com/);
  assert.match(r.structuredContent.snapshot, new RegExp(`textbox "Email" \\[ref=${email}\\]: ada@example\\.com`), 'same ref for the same element');

  // clear:true (the default) replaces; clear:false appends.
  await call(c, 'browser_type', { target: email, text: 'bob@example.com' });
  await call(c, 'browser_type', { target: email, text: '.uk', clear: false });
  r = await call(c, 'browser_evaluate', { function: "() => document.getElementById('email').value" });
  assert.deepEqual(r.structuredContent.result, { value: 'bob@example.com.uk' });

  // CSS targets work too; submit presses Enter.
  r = await call(c, 'browser_type', { target: '#email', text: 'css@example.com', submit: true });
  assert.equal(r.isError, false, text(r));
  r = await call(c, 'browser_evaluate', { function: "() => document.getElementById('status').textContent" });
  assert.deepEqual(r.structuredContent.result, { value: 'Signed in as css@example.com' });
  r = await call(c, 'browser_click', { target: 'css=#remember' });
  assert.equal(r.isError, false, text(r));
  r = await call(c, 'browser_evaluate', { function: "() => document.getElementById('remember').checked" });
  assert.deepEqual(r.structuredContent.result, { value: false });
});

test('targets that do not resolve fail with their codes', async () => {
  await call(c, 'browser_navigate', { url: `${pages.url}/login.html` });
  let r = await call(c, 'browser_click', { target: '#nope', timeout: 2000 });
  assert.equal(r.structuredContent.error.code, 'ELEMENT_NOT_FOUND');
  r = await call(c, 'browser_click', { target: 'input', timeout: 2000 });
  assert.equal(r.structuredContent.error.code, 'ELEMENT_AMBIGUOUS');
  assert.match(r.structuredContent.error.message, /e\d+/, 'candidates carry refs');
  r = await call(c, 'browser_type', { target: '#submit', text: 'x', timeout: 2000 });
  assert.equal(r.structuredContent.error.code, 'ELEMENT_NOT_EDITABLE');
  r = await call(c, 'browser_click', { target: 'e99999', timeout: 2000 });
  assert.equal(r.structuredContent.error.code, 'ELEMENT_NOT_FOUND');
  // A ref from the previous document is stale after navigating.
  const snap = (await call(c, 'browser_snapshot')).structuredContent.snapshot;
  const submit = refOf(snap, 'button', 'Submit');
  await call(c, 'browser_navigate', { url: `${pages.url}/login.html` });
  r = await call(c, 'browser_click', { target: submit, timeout: 2000 });
  assert.equal(r.structuredContent.error.code, 'STALE_REF');
  assert.match(r.structuredContent.error.hint, /snapshot/);
  assert.equal(r.structuredContent.page.title, 'Sign in', 'errors carry the page');
});

test('navigate reports final URL, title and HTTP status; failures are NAVIGATION_FAILED', async () => {
  let r = await call(c, 'browser_navigate', { url: `${pages.url}/status?code=404` });
  assert.equal(r.isError, false);
  assert.equal(r.structuredContent.status, 404);
  assert.equal(r.structuredContent.title, 'Status 404');
  r = await call(c, 'browser_navigate', { url: `${pages.url}/counter.html`, waitUntil: 'domcontentloaded' });
  assert.equal(r.structuredContent.status, 200);
  assert.equal(r.structuredContent.url, `${pages.url}/counter.html`);
  r = await call(c, 'browser_navigate', { url: `${pages.url}/slow?ms=300`, waitUntil: 'commit' });
  assert.equal(r.isError, false, text(r));
  r = await call(c, 'browser_navigate', { url: `${pages.url}/counter.html`, waitUntil: 'networkidle' });
  assert.equal(r.structuredContent.title, 'Counter');

  // A loopback port that nothing listens on.
  const closedPort = await new Promise((ok) => {
    const s = createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => ok(port)); });
  });
  r = await call(c, 'browser_navigate', { url: `http://127.0.0.1:${closedPort}/` });
  assert.equal(r.isError, true);
  assert.equal(r.structuredContent.error.code, 'NAVIGATION_FAILED');
  assert.match(r.structuredContent.error.message, /ERR_CONNECTION_REFUSED/);
  // No scheme: http:// is assumed, as in an address bar; host:port is not a scheme.
  const port = new URL(pages.url).port;
  r = await call(c, 'browser_navigate', { url: `localhost:${port}/counter.html` });
  assert.equal(r.isError, false, text(r));
  assert.equal(r.structuredContent.url, `http://localhost:${port}/counter.html`);
  r = await call(c, 'browser_navigate', { url: `127.0.0.1:${port}/counter.html` });
  assert.equal(r.structuredContent.status, 200, text(r));
  r = await call(c, 'browser_navigate', { url: 'javascript:alert(1)' });
  assert.equal(r.structuredContent.error.code, 'INVALID_PARAMETERS');
  r = await call(c, 'browser_navigate', { url: `${pages.url}/slow?ms=5000`, timeout: 500 });
  assert.equal(r.structuredContent.error.code, 'TIMEOUT');
  r = await call(c, 'browser_navigate', { url: `${pages.url}/counter.html` });
  assert.equal(r.isError, false, 'the session recovers after a timeout');
});

test('a click that starts a navigation answers after the new page loaded', async () => {
  await call(c, 'browser_navigate', { url: `${pages.url}/login.html` });
  const snap = (await call(c, 'browser_snapshot')).structuredContent.snapshot;
  const help = refOf(snap, 'link', 'Help');
  const r = await call(c, 'browser_click', { target: help });
  assert.equal(r.isError, false, text(r));
  assert.equal(r.structuredContent.url, `${pages.url}/help`);
  assert.equal(r.structuredContent.title, 'Not found');
});

test('evaluate returns JSON values, sees page globals, takes an element, reports exceptions', async () => {
  await call(c, 'browser_navigate', { url: `${pages.url}/counter.html` });
  let r = await call(c, 'browser_evaluate', { function: '() => ({a: [1, "two", null], b: true})' });
  assert.deepEqual(r.structuredContent.result, { value: { a: [1, 'two', null], b: true } });
  r = await call(c, 'browser_evaluate', { function: 'async () => { await new Promise(r => setTimeout(r, 50)); return typeof count; }' });
  assert.deepEqual(r.structuredContent.result, { value: 'number' }, 'main world: page globals visible');
  r = await call(c, 'browser_evaluate', { function: '() => undefined' });
  assert.deepEqual(r.structuredContent.result, {});
  r = await call(c, 'browser_evaluate', { function: '(el) => el.textContent', target: '#increment' });
  assert.deepEqual(r.structuredContent.result, { value: 'Increment' });
  r = await call(c, 'browser_evaluate', { function: '() => { throw new Error("boom") }' });
  assert.equal(r.isError, true);
  assert.match(r.structuredContent.error.message, /boom/);
  r = await call(c, 'browser_evaluate', { function: 'this is not javascript' });
  assert.equal(r.isError, true);
});

test('screenshots are PNG (or JPEG) image content', async () => {
  await call(c, 'browser_navigate', { url: `${pages.url}/login.html` });
  let r = await call(c, 'browser_take_screenshot');
  assert.equal(r.isError, false, text(r));
  const img = r.content.find((x) => x.type === 'image');
  assert.equal(img.mimeType, 'image/png');
  const png = Buffer.from(img.data, 'base64');
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert.equal(png.readUInt32BE(16), 1280, 'viewport width');
  assert.equal(png.readUInt32BE(20), 720, 'viewport height');
  assert.equal(r.structuredContent.bytes, png.length);
  r = await call(c, 'browser_take_screenshot', { type: 'jpeg', fullPage: true });
  const jpg = Buffer.from(r.content.find((x) => x.type === 'image').data, 'base64');
  assert.deepEqual([...jpg.subarray(0, 2)], [0xff, 0xd8]);
});
