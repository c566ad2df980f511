// Issue 37, item 4: an agent uploads the user's own file. The official SDK
// client declares roots (MCP roots/list); a file inside one may be uploaded
// by that client's calls, re-read on notifications/roots/list_changed; an
// operator's --upload-dir serves every session. A file outside every root,
// a symlink out of a root and another session's directory stay refused.
// Over HTTP, a client's roots count only with --http-client-roots.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { call, text, waitFor, startServer, startHttpServer, sessionOutputDir } from './lib.mjs';

// The user's files: a root the client declares, a second one it adds
// later, a directory the operator names, and a secret outside all of them.
const home = mkdtempSync(join(tmpdir(), 'tv-uploads-'));
const docs = join(home, 'docs'), later = join(home, 'later'), shared = join(home, 'shared');
for (const d of [docs, later, shared]) mkdirSync(d);
writeFileSync(join(docs, 'cv.txt'), 'my cv');
mkdirSync(join(docs, 'sub'));
writeFileSync(join(docs, 'sub', 'letter.txt'), 'dear sir');
writeFileSync(join(later, 'photo.txt'), 'a photo');
writeFileSync(join(shared, 'form.txt'), 'the form');
writeFileSync(join(home, 'secret.txt'), 'do not upload');
symlinkSync(join(home, 'secret.txt'), join(docs, 'link.txt'));
test.after(() => rmSync(home, { recursive: true, force: true }));

const page = createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/html' });
  res.end(`<!doctype html><title>Apply</title><input type=file id=f multiple aria-label="Attachments"><pre id=out></pre>
    <script>document.getElementById('f').addEventListener('change', async (e) => {
      const parts = []; for (const f of e.target.files) parts.push(f.name + ':' + await f.text());
      document.getElementById('out').textContent = parts.join('|'); });</script>`);
});
await new Promise((r) => page.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${page.address().port}/`;
test.after(() => page.close());

// A client that declares roots and answers roots/list with `roots`.
function rootsClient(roots) {
  const client = new Client({ name: 'tabvisor-e2e-roots', version: '1.0.0' }, { capabilities: { roots: { listChanged: true } } });
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: roots.map((p) => ({ uri: pathToFileURL(p).href, name: p })) }));
  return client;
}

const startRootsServer = (roots, args = []) => startServer(args, { client: rootsClient(roots) });

const upload = async (client, paths, extra = {}) => {
  await call(client, 'browser_navigate', { url, snapshot: 'none', ...extra });
  return call(client, 'browser_file_upload', { target: '#f', paths, snapshot: 'none', ...extra });
};
const outNow = async (client) => (await call(client, 'browser_evaluate', { function: "() => document.getElementById('out').textContent" })).structuredContent.result.value;
// The page's change handler reads the files asynchronously: wait for its output.
const out = async (client) => (await waitFor(async () => (await outNow(client)) || null, 10000)) ?? '';

test('over stdio: files in the client\'s roots upload; outside, symlinks and other sessions\' files are refused', async () => {
  const roots = [docs];
  const srv = await startRootsServer(roots, ['--upload-dir', shared]);
  try {
    const c = srv.client;
    await waitFor(() => /declared 1 root for uploads/.test(srv.stderr()), 10000);
    let r = await upload(c, [join(docs, 'cv.txt'), join(docs, 'sub', 'letter.txt'), join(shared, 'form.txt')]);
    assert.equal(r.isError, false, text(r));
    assert.equal(await out(c), 'cv.txt:my cv|letter.txt:dear sir|form.txt:the form');
    // Outside every root.
    r = await upload(c, [join(home, 'secret.txt')]);
    assert.equal(r.structuredContent.error?.code, 'PATH_NOT_ALLOWED', text(r));
    assert.match(text(r), /outside the output dir, the client's roots and every --upload-dir/);
    // A symlink inside a root that points out of it.
    r = await upload(c, [join(docs, 'link.txt')]);
    assert.equal(r.structuredContent.error?.code, 'PATH_NOT_ALLOWED', text(r));
    // A ".." out of a root.
    r = await upload(c, [`${docs}/../secret.txt`]);
    assert.equal(r.structuredContent.error?.code, 'PATH_NOT_ALLOWED', text(r));
    assert.equal(await outNow(c), '', 'nothing was set by the refused calls');
    // The roots change: the client says so, and the new root counts.
    r = await upload(c, [join(later, 'photo.txt')]);
    assert.equal(r.structuredContent.error?.code, 'PATH_NOT_ALLOWED', text(r));
    roots.push(later);
    await c.sendRootsListChanged();
    await waitFor(() => /declared 2 roots for uploads/.test(srv.stderr()), 10000);
    r = await upload(c, [join(later, 'photo.txt')]);
    assert.equal(r.isError, false, text(r));
    assert.equal(await out(c), 'photo.txt:a photo');
    // Another session's directory is not the client's to read, even when a
    // root holds the output dir.
    const other = (await call(c, 'browser_session_create', {})).structuredContent.sessionId;
    const otherDir = await sessionOutputDir(c, other);
    writeFileSync(join(otherDir, 'theirs.txt'), 'theirs');
    r = await upload(c, [join(otherDir, 'theirs.txt')]);
    assert.equal(r.structuredContent.error?.code, 'PATH_NOT_ALLOWED', text(r));
  } finally {
    await srv.close();
  }
});

test('over HTTP: a client\'s roots count only with --http-client-roots; --upload-dir always', async () => {
  for (const allow of [false, true]) {
    const srv = await startHttpServer(['--upload-dir', shared, ...(allow ? ['--http-client-roots'] : [])]);
    const client = rootsClient([docs]);
    const transport = new StreamableHTTPClientTransport(new URL(srv.url));
    try {
      await client.connect(transport);
      if (allow) await waitFor(() => /declared 1 root for uploads/.test(srv.stderr()), 10000);
      let r = await upload(client, [join(docs, 'cv.txt')]);
      if (allow) {
        assert.equal(r.isError, false, text(r));
        assert.equal(await out(client), 'cv.txt:my cv');
      } else {
        assert.equal(r.structuredContent.error?.code, 'PATH_NOT_ALLOWED', text(r));
        assert.doesNotMatch(srv.stderr(), /root for uploads/);
      }
      r = await upload(client, [join(shared, 'form.txt')]);
      assert.equal(r.isError, false, text(r));
      assert.equal(await out(client), 'form.txt:the form');
    } finally {
      await client.close();
      await srv.close();
    }
  }
});
