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
