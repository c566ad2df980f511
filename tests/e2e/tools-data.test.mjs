// Data in and out of a session on real pages through the official SDK
// client: file upload (core), cookies and web storage (--caps storage),
// routes, offline and extra headers (--caps network); each with its errors
// and with isolation between sessions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdirSync, writeFileSync, symlinkSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, call, text } from './lib.mjs';

// Pages of this file, served on 127.0.0.1; seen records what requests carried.
const seen = [];
const html = (title, body) => `<!doctype html><title>${title}</title>${body}`;
const routes = {
  '/upload': () => html('Upload', `
    <input type=file id=many multiple aria-label="Many files">
    <input type=file id=one aria-label="One file">
    <input type=text id=txt aria-label="Name">
    <label id=pick for=one>Pick one</label>
    <pre id=out></pre>
    <script>
      for (const id of ['many', 'one']) document.getElementById(id).addEventListener('change', async (e) => {
        const parts = [];
        for (const f of e.target.files) parts.push(f.name + ':' + f.type + ':' + await f.text());
        document.getElementById('out').textContent = id + '=' + parts.join('|');
      });
    </script>`),
  '/account': (req) => {
    const c = req.headers.cookie || '';
    return html(/(^|; )session=ok-/.test(c) ? 'Logged in' : 'Logged out', `<p id=c>${c.replace(/[<&]/g, '')}</p>`);
  },
  '/login': () => ['text/html', html('Login', '<p>welcome</p>'), { 'set-cookie': 'session=ok-42; Path=/; HttpOnly' }],
  '/plain': () => html('Plain', '<p>plain page</p>'),
  '/api/data': () => ['application/json', '{"real":true}'],
  '/headers': (req) => ['application/json', JSON.stringify(req.headers)],
};
const server = createServer((req, res) => {
  const u = new URL(req.url, 'http://127.0.0.1');
  seen.push({ path: u.pathname, headers: req.headers });
  const r = routes[u.pathname]?.(req);
  if (!r) { res.writeHead(404, { 'content-type': 'text/plain' }); res.end('not found'); return; }
  const [type, body, extra] = Array.isArray(r) ? r : ['text/html', r];
  res.writeHead(200, { 'content-type': type, ...(extra || {}) });
  res.end(body);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}`;
// A second origin for the same server: localhost is not 127.0.0.1.
const base2 = `http://localhost:${server.address().port}`;

const srv = await startServer(['--caps', 'storage,network']);
const c = srv.client;
const outDir = join(srv.runtimeDir, 'out');
mkdirSync(outDir, { recursive: true });
test.after(async () => { await srv.close(); server.closeAllConnections(); await new Promise((r) => server.close(r)); });

const ok = (r) => { assert.equal(r.isError, false, text(r)); return r; };
const err = (r) => { assert.equal(r.isError, true, text(r)); return r.structuredContent.error; };
const js = async (fn, extra = {}) => ok(await call(c, 'browser_evaluate', { function: fn, ...extra })).structuredContent.result.value;
const open = async (path, extra = {}) => ok(await call(c, 'browser_navigate', { url: `${base}${path}`, ...extra }));
const newSession = async () => ok(await call(c, 'browser_session_create')).structuredContent.sessionId;

// --- browser_file_upload ---

test('file_upload: a click opens a chooser (modal state); paths fill it and fire change', async () => {
  writeFileSync(join(outDir, 'a.txt'), 'alpha');
  mkdirSync(join(outDir, 'sub'), { recursive: true });
  writeFileSync(join(outDir, 'sub', 'b.json'), '{"b":2}');
  await open('/upload');
  let e = err(await call(c, 'browser_file_upload', { paths: ['a.txt'] }));
  assert.equal(e.code, 'INVALID_PARAMETERS');
  assert.match(e.message, /no file chooser is open/);
  const r = ok(await call(c, 'browser_click', { target: '#many' }));
  assert.match(text(r), /### Modal state\n- \[File chooser\]: can be handled by browser_file_upload/);
  assert.equal(r.structuredContent.modalState.type, 'fileChooser');
  assert.equal(r.structuredContent.modalState.multiple, true);
  // An absolute path inside the output dir is the same file.
  const up = ok(await call(c, 'browser_file_upload', { paths: ['a.txt', join(outDir, 'sub', 'b.json')] }));
  assert.deepEqual(up.structuredContent.files, ['a.txt', 'b.json']);
  assert.doesNotMatch(text(up), /Modal state/);
  assert.equal(await js("() => document.getElementById('out').textContent"),
    'many=a.txt:text/plain:alpha|b.json:application/json:{"b":2}');
  // The chooser is answered: a second upload has none to fill.
  e = err(await call(c, 'browser_file_upload', { paths: ['a.txt'] }));
  assert.match(e.message, /no file chooser is open/);
});

test('file_upload: a label opens the chooser of its input; no paths cancels it', async () => {
  await open('/upload');
  let r = ok(await call(c, 'browser_click', { target: '#pick' }));
  assert.equal(r.structuredContent.modalState?.multiple, false);
  // One-file input: two files are refused, nothing is set.
  const e = err(await call(c, 'browser_file_upload', { paths: ['a.txt', 'sub/b.json'] }));
  assert.equal(e.code, 'INVALID_PARAMETERS');
  assert.match(e.message, /takes one file, not 2/);
  r = ok(await call(c, 'browser_file_upload', {}));
  assert.match(text(r), /Cancelled the file chooser/);
  assert.equal(await js("() => document.getElementById('out').textContent + document.getElementById('one').files.length"), '0');
  assert.match(err(await call(c, 'browser_file_upload', {})).message, /no file chooser is open/);
});

test('file_upload: target sets files on an input without a chooser; wrong element is refused', async () => {
  await open('/upload');
  const r = ok(await call(c, 'browser_file_upload', { target: '#one', paths: ['sub/b.json'], snapshot: 'none' }));
  assert.match(text(r), /Uploaded \["b.json"\]/);
  assert.equal(await js("() => document.getElementById('out').textContent"), 'one=b.json:application/json:{"b":2}');
  let e = err(await call(c, 'browser_file_upload', { target: '#txt', paths: ['a.txt'] }));
  assert.equal(e.code, 'INVALID_PARAMETERS');
  assert.match(e.message, /not an <input type=file>/);
  e = err(await call(c, 'browser_file_upload', { target: '#nothing', paths: ['a.txt'], timeout: 800 }));
  assert.match(e.code, /ELEMENT_NOT_FOUND|TIMEOUT/);
  e = err(await call(c, 'browser_file_upload', { target: '#one' }));
  assert.match(e.message, /give paths/);
});

test('file_upload: only files inside the output dir, no symlinks, no directories', async () => {
  await open('/upload');
  const tries = [
    ['/etc/passwd', /outside the output dir/],
    ['../x.txt', /'\.\.' component/],
    ['missing.txt', /no file 'missing.txt'/],
    ['sub', /not a plain file/],
  ];
  symlinkSync('/etc/passwd', join(outDir, 'link.txt'));
  tries.push(['link.txt', /symlink/]);
  for (const [p, why] of tries) {
    const e = err(await call(c, 'browser_file_upload', { target: '#one', paths: [p] }));
    assert.equal(e.code, 'PATH_NOT_ALLOWED', p);
    assert.match(e.message, why, p);
  }
  assert.equal(await js("() => document.getElementById('one').files.length"), 0);
});

// --- storage group ---

test('data tools are listed within the token budget, with true annotations', async () => {
  const { tools } = await c.listTools();
  const mine = tools.filter((t) => /^browser_(file_upload|cookie_|localstorage_|sessionstorage_|storage_state|set_storage_state|route|unroute|network_state_set|set_extra_http_headers)/.test(t.name));
  assert.ok(mine.length >= 18, mine.map((t) => t.name).join());
  for (const t of mine) {
    assert.ok(t.description.length <= 110, `${t.name}: ${t.description.length}`);
    for (const [n, p] of Object.entries(t.inputSchema.properties)) {
      if (!['sessionId', 'timeout', 'target', 'element', 'snapshot'].includes(n)) assert.ok(!p.description || p.description.length <= 60, `${t.name}.${n}`);
    }
  }
  const by = Object.fromEntries(tools.map((t) => [t.name, t]));
  assert.equal(by.browser_cookie_list.annotations.readOnlyHint, true);
  assert.equal(by.browser_cookie_set.annotations.destructiveHint, true);
  assert.deepEqual(by.browser_cookie_set.inputSchema.required, ['name', 'value']);
  assert.deepEqual(by.browser_set_storage_state.inputSchema.required, ['filename']);
  assert.ok(by.browser_session_create.inputSchema.properties.storageState);
});

test('storage tools need --caps storage', async () => {
  const plain = await startServer();
  try {
    const { tools } = await plain.client.listTools();
    assert.ok(!tools.some((t) => t.name === 'browser_cookie_list'));
    assert.ok(tools.some((t) => t.name === 'browser_file_upload'), 'upload is core');
    await assert.rejects(call(plain.client, 'browser_cookie_list'), /not enabled: start the server with --caps storage/);
  } finally { await plain.close(); }
});

test('cookies: set is seen by document.cookie and the server; get, list, delete, clear', async () => {
  await open('/plain');
  ok(await call(c, 'browser_cookie_set', { name: 'flavor', value: 'oat' }));
  ok(await call(c, 'browser_cookie_set', { name: 'hidden', value: 'h1', httpOnly: true, domain: '127.0.0.1', path: '/' }));
  assert.equal(await js('() => document.cookie'), 'flavor=oat');
  await open('/account');
  assert.match(await js("() => document.getElementById('c').textContent"), /flavor=oat.*hidden=h1|hidden=h1.*flavor=oat/);
  let r = ok(await call(c, 'browser_cookie_get', { name: 'hidden' }));
  assert.equal(r.structuredContent.cookies.length, 1);
  assert.deepEqual({ ...r.structuredContent.cookies[0] }, { name: 'hidden', value: 'h1', domain: '127.0.0.1', path: '/', expires: -1, httpOnly: true, secure: false, sameSite: 'Lax' });
  r = ok(await call(c, 'browser_cookie_get', { name: 'nope' }));
  assert.deepEqual(r.structuredContent.cookies, []);
  assert.match(text(r), /No cookie named 'nope'/);
  r = ok(await call(c, 'browser_cookie_list', { domain: '127.0.0.1' }));
  assert.deepEqual(r.structuredContent.cookies.map((x) => x.name).sort(), ['flavor', 'hidden']);
  assert.deepEqual(ok(await call(c, 'browser_cookie_list', { domain: 'example.com' })).structuredContent.cookies, []);
  r = ok(await call(c, 'browser_cookie_delete', { name: 'flavor' }));
  assert.equal(r.structuredContent.deleted, 1);
  assert.equal(await js('() => document.cookie'), '');
  ok(await call(c, 'browser_cookie_clear'));
  assert.deepEqual(ok(await call(c, 'browser_cookie_list')).structuredContent.cookies, []);
  await open('/account');
  assert.equal(await js("() => document.getElementById('c').textContent"), '');
});

test('cookies: bad cookies and pages without a host are refused clearly', async () => {
  await open('/plain');
  let e = err(await call(c, 'browser_cookie_set', { name: 'bad;name', value: 'x' }));
  assert.equal(e.code, 'INVALID_PARAMETERS');
  assert.match(e.message, /refused cookie/);
  e = err(await call(c, 'browser_cookie_set', { name: 'ss', value: 'x', sameSite: 'None' }));
  assert.match(e.message, /refused cookie/);
  e = err(await call(c, 'browser_cookie_set', { name: 'n', value: 'x', sameSite: 'Sometimes' }));
  assert.equal(e.code, 'INVALID_PARAMETERS');
  ok(await call(c, 'browser_navigate', { url: 'about:blank' }));
  e = err(await call(c, 'browser_cookie_set', { name: 'n', value: 'x' }));
  assert.match(e.message, /no host for the cookie/);
});

test('localStorage and sessionStorage: set is read by the page, list/get/delete/clear', async () => {
  await open('/plain');
  for (const [kind, prop] of [['localstorage', 'localStorage'], ['sessionstorage', 'sessionStorage']]) {
    ok(await call(c, `browser_${kind}_clear`));
    ok(await call(c, `browser_${kind}_set`, { key: 'k1', value: 'v1' }));
    ok(await call(c, `browser_${kind}_set`, { key: 'k2', value: 'v "2"' }));
    assert.equal(await js(`() => ${prop}.getItem('k2')`), 'v "2"');
    await js(`() => ${prop}.setItem('fromPage', 'p')`);
    let r = ok(await call(c, `browser_${kind}_list`));
    assert.equal(r.structuredContent.origin, base);
    assert.deepEqual(r.structuredContent.items.map((i) => `${i.key}=${i.value}`).sort(), ['fromPage=p', 'k1=v1', 'k2=v "2"']);
    r = ok(await call(c, `browser_${kind}_get`, { key: 'fromPage' }));
    assert.equal(r.structuredContent.value, 'p');
    r = ok(await call(c, `browser_${kind}_get`, { key: 'missing' }));
    assert.equal(r.structuredContent.found, false);
    r = ok(await call(c, `browser_${kind}_delete`, { key: 'k1' }));
    assert.equal(r.structuredContent.deleted, true);
    assert.equal(await js(`() => ${prop}.getItem('k1')`), null);
    ok(await call(c, `browser_${kind}_clear`));
    assert.equal(await js(`() => ${prop}.length`), 0);
  }
  // sessionStorage belongs to the tab, localStorage to the origin: both
  // survive a reload.
  ok(await call(c, 'browser_localstorage_set', { key: 'keep', value: '1' }));
  ok(await call(c, 'browser_sessionstorage_set', { key: 'tab', value: '2' }));
  await open('/plain');
  assert.equal(await js("() => localStorage.getItem('keep') + sessionStorage.getItem('tab')"), '12');
  ok(await call(c, 'browser_navigate', { url: 'about:blank' }));
  const e = err(await call(c, 'browser_localstorage_set', { key: 'a', value: 'b' }));
  assert.equal(e.code, 'INVALID_PARAMETERS');
  assert.match(e.message, /localStorage is not available on this page/);
});

test('storage state: saved in session A, loaded into B (tool and session_create) makes B logged in', async () => {
  const a = await newSession();
  ok(await call(c, 'browser_navigate', { sessionId: a, url: `${base}/login` }));
  ok(await call(c, 'browser_evaluate', { sessionId: a, function: "() => localStorage.setItem('theme', 'dark')" }));
  ok(await call(c, 'browser_navigate', { sessionId: a, url: `${base2}/plain` }));
  ok(await call(c, 'browser_evaluate', { sessionId: a, function: "() => localStorage.setItem('other', 'yes')" }));
  const r = ok(await call(c, 'browser_storage_state', { sessionId: a, filename: 'state/a.json' }));
  assert.equal(r.structuredContent.file, join(outDir, 'state', 'a.json'));
  const saved = JSON.parse(readFileSync(join(outDir, 'state', 'a.json'), 'utf8'));
  assert.deepEqual(saved.cookies.map((x) => [x.name, x.value, x.httpOnly, x.expires]), [['session', 'ok-42', true, -1]]);
  const byOrigin = Object.fromEntries(saved.origins.map((o) => [o.origin, o.localStorage]));
  assert.deepEqual(byOrigin[base], [{ name: 'theme', value: 'dark' }]);
  assert.deepEqual(byOrigin[base2], [{ name: 'other', value: 'yes' }]);
  // Default name.
  const d = ok(await call(c, 'browser_storage_state', { sessionId: a }));
  assert.match(d.structuredContent.file, /storage-state-\d+\.json$/);

  // B: logged out, then the tool loads A's state (replacing B's own).
  const b = await newSession();
  ok(await call(c, 'browser_navigate', { sessionId: b, url: `${base}/account` }));
  ok(await call(c, 'browser_evaluate', { sessionId: b, function: "() => localStorage.setItem('stale', '1')" }));
  assert.equal(ok(await call(c, 'browser_navigate', { sessionId: b, url: `${base}/account` })).structuredContent.title, 'Logged out');
  ok(await call(c, 'browser_set_storage_state', { sessionId: b, filename: 'state/a.json' }));
  assert.equal(ok(await call(c, 'browser_navigate', { sessionId: b, url: `${base}/account` })).structuredContent.title, 'Logged in');
  const ls = ok(await call(c, 'browser_evaluate', { sessionId: b, function: "() => [localStorage.getItem('theme'), localStorage.getItem('stale')]" }));
  assert.deepEqual(ls.structuredContent.result.value, ['dark', null]);

  // C: starts logged in through browser_session_create's storageState.
  const cr = ok(await call(c, 'browser_session_create', { storageState: join(outDir, 'state', 'a.json') }));
  const s3 = cr.structuredContent.sessionId;
  assert.equal(ok(await call(c, 'browser_navigate', { sessionId: s3, url: `${base}/account` })).structuredContent.title, 'Logged in');
  const v = ok(await call(c, 'browser_evaluate', { sessionId: s3, function: "() => localStorage.getItem('theme')" }));
  assert.equal(v.structuredContent.result.value, 'dark');
  ok(await call(c, 'browser_navigate', { sessionId: s3, url: `${base2}/plain` }));
  assert.equal(ok(await call(c, 'browser_localstorage_get', { sessionId: s3, key: 'other' })).structuredContent.value, 'yes');
  for (const s of [a, b, s3]) ok(await call(c, 'browser_session_close', { sessionId: s }));
});

test('storage state: paths outside the output dir and bad files are refused', async () => {
  let e = err(await call(c, 'browser_storage_state', { filename: '../escape.json' }));
  assert.equal(e.code, 'PATH_NOT_ALLOWED');
  e = err(await call(c, 'browser_storage_state', { filename: '/tmp/escape.json' }));
  assert.equal(e.code, 'PATH_NOT_ALLOWED');
  e = err(await call(c, 'browser_set_storage_state', { filename: '/etc/passwd' }));
  assert.equal(e.code, 'PATH_NOT_ALLOWED');
  writeFileSync(join(outDir, 'bad.json'), '{not json');
  e = err(await call(c, 'browser_set_storage_state', { filename: 'bad.json' }));
  assert.equal(e.code, 'INVALID_PARAMETERS');
  assert.match(e.message, /not JSON/);
  writeFileSync(join(outDir, 'bad2.json'), '{"cookies": [{"name": "x"}]}');
  e = err(await call(c, 'browser_set_storage_state', { filename: 'bad2.json' }));
  assert.match(e.message, /cookies\[0\]: a cookie needs string name, value and domain/);
  // A bad storageState makes the create fail, and leaves no session behind.
  const before = ok(await call(c, 'browser_session_list')).structuredContent.sessions.length;
  e = err(await call(c, 'browser_session_create', { storageState: 'missing.json' }));
  assert.equal(e.code, 'INVALID_PARAMETERS');
  assert.match(e.message, /storageState: there is no file 'missing.json'/);
  e = err(await call(c, 'browser_session_create', { storageState: '/etc/passwd' }));
  assert.match(e.message, /outside the output dir/);
  assert.equal(ok(await call(c, 'browser_session_list')).structuredContent.sessions.length, before);
});

test('cookies and storage are per session: A never sees or clears B\'s', async () => {
  const a = await newSession(), b = await newSession();
  for (const s of [a, b]) ok(await call(c, 'browser_navigate', { sessionId: s, url: `${base}/plain` }));
  ok(await call(c, 'browser_cookie_set', { sessionId: a, name: 'owner', value: 'A' }));
  ok(await call(c, 'browser_cookie_set', { sessionId: b, name: 'mine', value: 'B' }));
  ok(await call(c, 'browser_localstorage_set', { sessionId: a, key: 'who', value: 'A' }));
  const names = async (s) => ok(await call(c, 'browser_cookie_list', { sessionId: s })).structuredContent.cookies.map((x) => x.name);
  assert.deepEqual(await names(a), ['owner']);
  assert.deepEqual(await names(b), ['mine']);
  assert.equal(ok(await call(c, 'browser_localstorage_get', { sessionId: b, key: 'who' })).structuredContent.found, false);
  ok(await call(c, 'browser_cookie_clear', { sessionId: a }));
  assert.deepEqual(await names(a), []);
  assert.deepEqual(await names(b), ['mine']);
  // B's state file holds B's cookie only.
  ok(await call(c, 'browser_storage_state', { sessionId: b, filename: 'b.json' }));
  assert.deepEqual(JSON.parse(readFileSync(join(outDir, 'b.json'), 'utf8')).cookies.map((x) => x.name), ['mine']);
  for (const s of [a, b]) ok(await call(c, 'browser_session_close', { sessionId: s }));
});
