// The tools of the optional groups (--caps vision, pdf, testing, devtools)
// and browser_emulate_media (core), on pages this test serves on 127.0.0.1,
// through the official SDK client; each with its errors, and each group
// absent and refused without its --caps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, call, text, refOf } from './lib.mjs';

// path -> HTML of the pages the tests open.
const PAGES = {
  '/media.html': `<title>Media</title><style>
      body { color: black } @media (prefers-color-scheme: dark) { body { color: white } }
    </style><p id="p">media</p>`,
};

const web = createServer((req, res) => {
  const html = PAGES[new URL(req.url, 'http://x').pathname];
  res.writeHead(html ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
  res.end(html || '<title>Not found</title>');
});
await new Promise((r) => web.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${web.address().port}`;

const srv = await startServer(['--caps', 'vision,pdf,testing,devtools']);
const c = srv.client;
const outDir = join(srv.runtimeDir, 'out');
test.after(async () => { await srv.close(); web.close(); });

const ok = (r) => { assert.equal(r.isError, false, text(r)); return r; };
const code = (r) => { assert.equal(r.isError, true, text(r)); return r.structuredContent.error.code; };
const js = async (fn) => ok(await call(c, 'browser_evaluate', { function: fn })).structuredContent.result.value;
const open = async (page) => ok(await call(c, 'browser_navigate', { url: `${base}/${page}` }));

test('emulate_media: set, keep what is omitted, clear with null', async () => {
  await open('media.html');
  const dark = () => js("() => [matchMedia('(prefers-color-scheme: dark)').matches, matchMedia('(prefers-reduced-motion: reduce)').matches, matchMedia('print').matches, getComputedStyle(document.body).color]");
  const light = await dark();
  let r = ok(await call(c, 'browser_emulate_media', { colorScheme: 'dark' }));
  assert.deepEqual(r.structuredContent.emulated, { colorScheme: 'dark' });
  assert.deepEqual(await dark(), [true, false, false, 'rgb(255, 255, 255)']);
  r = ok(await call(c, 'browser_emulate_media', { reducedMotion: 'reduce', media: 'print' }));
  assert.deepEqual(r.structuredContent.emulated, { colorScheme: 'dark', reducedMotion: 'reduce', media: 'print' });
  assert.deepEqual(await dark(), [true, true, true, 'rgb(255, 255, 255)']);
  r = ok(await call(c, 'browser_emulate_media', { colorScheme: 'light', forcedColors: 'active', contrast: 'more' }));
  assert.equal(await js("() => matchMedia('(forced-colors: active)').matches && matchMedia('(prefers-contrast: more)').matches && matchMedia('(prefers-color-scheme: light)').matches"), true);
  r = ok(await call(c, 'browser_emulate_media', { colorScheme: null, reducedMotion: null, media: null, forcedColors: null, contrast: null }));
  assert.deepEqual(r.structuredContent.emulated, {});
  assert.match(text(r), /none/);
  assert.deepEqual(await dark(), light);
  // Bad values are refused before the page sees them.
  assert.equal(code(await call(c, 'browser_emulate_media', { colorScheme: 'purple' })), 'INVALID_PARAMETERS');
  assert.equal(code(await call(c, 'browser_emulate_media', { media: 3 })), 'INVALID_PARAMETERS');
  const { tools } = await c.listTools();
  const t = tools.find((x) => x.name === 'browser_emulate_media');
  assert.deepEqual(t.inputSchema.properties.colorScheme.anyOf[1], { type: 'null' });
});
