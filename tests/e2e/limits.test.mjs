// Result limits (docs/limits.md): a page cannot make a result too big to
// send (issue 7 #7), nor make the worker's memory grow with what a call
// returns (#8); either way the call fails or is cut at once and the session
// lives on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, call, text, sessionOutputDir } from './lib.mjs';

// A page 30000 px tall whose top `rows` px are random pixels. With 16384
// rows (what a full-page screenshot covers) its PNG is about 60 MB, over the
// 48 MiB a string in a message may have once base64-encoded; with 3072 about
// 11 MB, over what the MCP SDK's stdio client accepts in one message (10 MiB).
const noisyPage = (rows) => `<!doctype html><title>Noise</title>
<style>body{margin:0} canvas{display:block}</style>
<body><div id="n"></div><div style="height:${30000 - rows}px">end</div>
<script>
let seed = 2463534242;
const next = () => { seed ^= seed << 13; seed >>>= 0; seed ^= seed >>> 17; seed ^= seed << 5; return seed >>>= 0; };
for (let k = 0; k < ${rows / 1024}; k++) {
  const c = document.createElement('canvas');
  c.width = 1280; c.height = 1024;
  const ctx = c.getContext('2d');
  const img = ctx.createImageData(1280, 1024);
  const px = new Uint32Array(img.data.buffer);
  for (let i = 0; i < px.length; i++) px[i] = next() | 0xff000000;
  ctx.putImageData(img, 0, 0);
  document.getElementById('n').appendChild(c);
}
</script>`;

const site = createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/html' });
  const rows = req.url.match(/^\/noise\/(\d+)$/);
  res.end(rows ? noisyPage(Number(rows[1])) : '<title>Small</title><p>small page</p>');
});
await new Promise((r) => site.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${site.address().port}`;

const srv = await startServer();
const c = srv.client;
// With the text bound raised past the protocol's, results can be too big.
const big = await startServer(['--max-output-chars', '100000000']);
test.after(async () => {
  await srv.close();
  await big.close();
  await new Promise((r) => { site.closeAllConnections?.(); site.close(r); });
});

// Peak resident memory (kB) of a process, from /proc/PID/status.
function vmHWM(pid) {
  const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmHWM:\s+(\d+) kB/m);
  return m ? Number(m[1]) : 0;
}

// The worker processes of the server: its children running tabvisor-worker.
function workerPids(parent) {
  const pids = [];
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8');
      if (Number(fields[1]) === parent && cmd.includes('tabvisor-worker')) pids.push(Number(p));
    } catch { /* gone meanwhile */ }
  }
  return pids;
}

async function stillServes() {
  const r = await call(c, 'browser_evaluate', { function: '() => 6 * 7' });
  assert.equal(r.isError, false, text(r));
  assert.deepEqual(r.structuredContent.result, { value: 42 });
  assert.equal(r.structuredContent.sessionRestarted, undefined, 'the same worker, not a new one');
}

test('evaluate returning ~20 MB of JSON is cut at once; worker memory stays bounded', async () => {
  let r = await call(c, 'browser_navigate', { url: `${base}/small` });
  assert.equal(r.isError, false, text(r));
  const [worker] = workerPids(srv.pid);
  assert.ok(worker, 'found the worker');
  const before = { worker: vmHWM(worker), sup: vmHWM(srv.pid) };

  const t0 = Date.now();
  // 1,000,000 small objects: about 20 MB of JSON, the audit's case.
  r = await call(c, 'browser_evaluate', {
    function: '() => Array.from({length: 1000000}, (_, i) => ({i, s: "abcdefgh"}))',
  });
  const ms = Date.now() - t0;
  const after = { worker: vmHWM(worker), sup: vmHWM(srv.pid) };
  console.log(`20 MB evaluate: ${ms} ms; worker VmHWM ${before.worker} -> ${after.worker} kB, `
    + `supervisor ${before.sup} -> ${after.sup} kB`);
  assert.equal(r.isError, false, text(r));
  assert.equal(r.structuredContent.truncated, true);
  assert.equal(r.structuredContent.result.value, undefined, 'no partial value in structured');
  assert.match(text(r), /^\[\{"i":0,"s":"abcdefgh"\},\{"i":1,/);
  assert.match(text(r), /truncated: \d+ more characters/);
  assert.ok(text(r).length <= 40000, 'within --max-output-chars');
  // The page's 20 MB never reach the worker as a tree: its peak grows by
  // far less than the value (the audit saw +440 MB).
  assert.ok(after.worker - before.worker < 60000,
    `worker peak grew by ${after.worker - before.worker} kB`);
  await stillServes();
});

test('a value too big or too deep for the structured copy stays in the text', async () => {
  // Deeper than a message may nest: before, the result could not be sent.
  let r = await call(c, 'browser_evaluate', {
    function: '() => { let a = [1]; for (let i = 0; i < 100; i++) a = [a]; return a; }',
  });
  assert.equal(r.isError, false, text(r));
  assert.equal(r.structuredContent.truncated, true);
  assert.deepEqual(r.structuredContent.result, {});
  assert.equal(text(r), `${'['.repeat(101)}1${']'.repeat(101)}`);
  // More values than the structured copy may have, within --max-output-chars.
  r = await call(big.client, 'browser_evaluate', { function: '() => new Array(200000).fill(0)' });
  assert.equal(r.isError, false, text(r).slice(0, 200));
  assert.equal(r.structuredContent.truncated, true);
  assert.equal(text(r), JSON.stringify(new Array(200000).fill(0)));
  // NUL in a string is kept.
  r = await call(c, 'browser_evaluate', { function: '() => ({s: "a\\u0000b"})' });
  assert.deepEqual(r.structuredContent.result, { value: { s: 'a\u0000b' } });
  await stillServes();
});

test('evaluate returning a 60 MB string is cut too', async () => {
  const r = await call(c, 'browser_evaluate', { function: '() => "x".repeat(60e6)' });
  assert.equal(r.isError, false, text(r));
  assert.equal(r.structuredContent.truncated, true);
  assert.match(text(r), /^"xxxx/);
  // The marker counts what was left out of the whole value, in the page too.
  const [, shown, missing] = text(r).match(/^("x+)\n\[truncated: (\d+) more characters/);
  assert.equal(shown.length + Number(missing), 60e6 + 2);
  await stillServes();
});

test('any result over the protocol limits is an error at once, not a timeout', async () => {
  const t0 = Date.now();
  // A long timeout, so that under load the answer still comes before it.
  let r = await call(big.client, 'browser_evaluate', { function: '() => "y".repeat(60e6)', timeout: 60000 });
  const ms = Date.now() - t0;
  assert.equal(r.isError, true, text(r).slice(0, 200));
  assert.equal(r.structuredContent.error.code, 'NOT_SUPPORTED', 'not TIMEOUT');
  assert.match(r.structuredContent.error.message, /too large to send.*48 MiB in one string/);
  assert.ok(ms < 45000, `answered in ${ms} ms, not at the call's timeout`);
  r = await call(big.client, 'browser_evaluate', { function: '() => "y".repeat(1000)' });
  assert.equal(r.isError, false, text(r));
  assert.equal(r.structuredContent.result.value.length, 1000);
  assert.equal(r.structuredContent.sessionRestarted, undefined, 'the same worker');
});

test('a full-page screenshot too big for a result fails at once; the session lives', async () => {
  let r = await call(c, 'browser_navigate', { url: `${base}/noise/16384` });
  assert.equal(r.isError, false, text(r));
  const t0 = Date.now();
  // Chromium takes seconds to encode the image: a long timeout, so that
  // under load the answer still comes before it.
  r = await call(c, 'browser_take_screenshot', { fullPage: true, timeout: 60000 });
  const ms = Date.now() - t0;
  const [worker] = workerPids(srv.pid);
  console.log(`too-big screenshot answered in ${ms} ms (worker VmHWM ${vmHWM(worker)} kB, `
    + `supervisor ${vmHWM(srv.pid)} kB): ${text(r).slice(0, 300)}`);
  assert.equal(r.isError, true, 'an error, not a result');
  assert.equal(r.structuredContent.error.code, 'NOT_SUPPORTED', 'not TIMEOUT');
  assert.match(r.structuredContent.error.message, /too large/);
  assert.match(r.structuredContent.error.hint, /filename/);
  assert.ok(ms < 45000, `answered in ${ms} ms, not at the call's timeout`);
  await stillServes();

  // With filename the image goes to the output dir whole.
  r = await call(c, 'browser_take_screenshot', { fullPage: true, filename: 'noise.png', timeout: 60000 });
  assert.equal(r.isError, false, text(r));
  const file = r.structuredContent.file;
  assert.equal(file, join(await sessionOutputDir(c), 'noise.png'));
  const png = readFileSync(file);
  assert.equal(png.subarray(0, 8).toString('hex'), '89504e470d0a1a0a', 'a PNG');
  assert.equal(statSync(file).size, r.structuredContent.bytes);
  assert.ok(png.length > 36 * 1024 * 1024, `${png.length} bytes`);
  assert.ok(!r.content.some((x) => x.type === 'image'), 'no image in the result');
  await stillServes();
});

test('a screenshot over what an MCP client accepts fails; the client keeps its connection', async () => {
  // About 11 MB of PNG: within the protocol's limits, but the SDK's stdio
  // client drops the whole connection on a message over 10 MiB.
  let r = await call(c, 'browser_navigate', { url: `${base}/noise/3072` });
  assert.equal(r.isError, false, text(r));
  r = await call(c, 'browser_take_screenshot', { fullPage: true, timeout: 60000 });
  assert.equal(r.isError, true, 'an error, not a result');
  assert.equal(r.structuredContent.error.code, 'NOT_SUPPORTED');
  assert.match(r.structuredContent.error.message, /too large for a result.*9 MiB of base64/);
  await stillServes();
  // The viewport of the same page is small enough.
  r = await call(c, 'browser_take_screenshot', { timeout: 60000 });
  assert.equal(r.isError, false, text(r));
  const img = r.content.find((x) => x.type === 'image');
  assert.equal(Buffer.from(img.data, 'base64').length, r.structuredContent.bytes);
});
