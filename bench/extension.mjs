// extension.mjs - extension mode beside shared mode: browser_snapshot and
// browser_click latency on the same page (counter.html, served on
// 127.0.0.1), one tabvisor per mode. Extension mode runs the way the e2e
// test does: tabvisor starts tabvisor-relay (fresh runtime dir and secret,
// a free port), the script pairs a headless Chromium that loads
// build/extension. Prints a table and one BENCH_EXTENSION_JSON line.
//
//   node bench/extension.mjs              release build (build-release/), if present
//   TABVISOR_BIN=build/tabvisor node bench/extension.mjs
//
// The relay binary and the extension are taken beside TABVISOR_BIN.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client, StdioClientTransport, refOf, resultText, median, percentile, startPageServer,
  repoRoot, freePort } from './common.mjs';

const bin = process.env.TABVISOR_BIN ||
  (existsSync(join(repoRoot, 'build-release', 'tabvisor')) ? join(repoRoot, 'build-release', 'tabvisor')
    : join(repoRoot, 'build', 'tabvisor'));
const binDir = dirname(bin);
process.env.TABVISOR_RELAY_BIN ||= join(binDir, 'tabvisor-relay');
process.env.TABVISOR_RELAY_WORKER_BIN ||= join(binDir, 'tests', 'tabvisor-relay-testworker');
process.env.TABVISOR_EXTENSION_DIR ||= join(binDir, 'extension');
const { relayBin, until, startChromiumWithExtension, killChromium, pairExtension } =
  await import('../tests/e2e/extension-lib.mjs');

const N = Number(process.env.ITERATIONS || 40);
const WARMUP = 5;


async function connect(dir, args) {
  mkdirSync(join(dir, 'rt'), { recursive: true, mode: 0o700 });
  const transport = new StdioClientTransport({ command: bin, stderr: 'pipe',
    args: ['--runtime-dir', join(dir, 'rt'), '--output-dir', join(dir, 'out'), ...args] });
  const client = new Client({ name: 'tabvisor-bench-ext', version: '1' });
  await client.connect(transport);
  return client;
}

const call = async (c, name, args) => {
  const r = await c.callTool({ name, arguments: args }, undefined, { timeout: 60000 });
  if (r.isError) throw new Error(`${name}: ${resultText(r)}`);
  return r;
};

async function timed(c, name, args) {
  const t0 = performance.now();
  await call(c, name, args);
  return performance.now() - t0;
}

// Snapshot and click latency (ms lists) on counter.html.
async function measure(c, base) {
  await call(c, 'browser_navigate', { url: `${base}/counter.html` });
  const snap = resultText(await call(c, 'browser_snapshot', {}));
  const ref = refOf(snap, 'button', 'Increment');
  const out = { snapshot: [], click: [] };
  for (let i = 0; i < WARMUP + N; i++) {
    const s = await timed(c, 'browser_snapshot', {});
    const k = await timed(c, 'browser_click', { target: ref, snapshot: 'none' });
    if (i >= WARMUP) {
      out.snapshot.push(s);
      out.click.push(k);
    }
  }
  const count = resultText(await call(c, 'browser_evaluate',
    { function: '() => document.getElementById("count").textContent' }));
  if (!count.includes(String(WARMUP + N))) throw new Error(`clicks did not land: ${count}`);
  return out;
}

const dir = mkdtempSync(join(tmpdir(), 'tvbench-ext-'));
const pages = await startPageServer();
let chromium, shared, ext;
const results = {};
try {
  shared = await connect(join(dir, 's'), []);
  results.shared = await measure(shared, pages.url);
  await shared.close();
  shared = null;

  const port = await freePort();
  const relayDir = join(dir, 'relay-run');
  const secret = join(dir, 'secret');
  ext = await connect(join(dir, 'e'), ['--extension', '--relay-port', String(port),
    '--relay-runtime-dir', relayDir, '--relay-secret-file', secret]);
  await until('relay.json', () => existsSync(join(relayDir, 'relay.json')), 15000);
  const out = execFileSync(relayBin, ['pair', '--relay-port', String(port), '--secret-file', secret],
    { encoding: 'utf8' });
  let browser;
  ({ proc: chromium, browser } = await startChromiumWithExtension(dir));
  await pairExtension(browser, out, port, { heartbeatMs: 20000 });
  // The first call that needs the extension waits for it (up to 5 s per try).
  await until('the extension', async () => {
    try {
      await call(ext, 'browser_navigate', { url: 'about:blank' });
      return true;
    } catch {
      return false;
    }
  }, 60000, 500);
  results.extension = await measure(ext, pages.url);
} finally {
  await shared?.close().catch(() => {});
  await ext?.close().catch(() => {});
  if (chromium) killChromium(chromium, dir);
  await pages.close();
  rmSync(dir, { recursive: true, force: true });
}

const fmt = (xs) => `${median(xs).toFixed(1)} / ${percentile(xs, 95).toFixed(1)}`;
console.log(`extension mode beside shared mode (${N} iterations each, median / p95 ms; ${bin})`);
console.log('| call | shared | extension |');
console.log('|---|---|---|');
console.log(`| browser_snapshot counter.html | ${fmt(results.shared.snapshot)} | ${fmt(results.extension.snapshot)} |`);
console.log(`| browser_click by ref | ${fmt(results.shared.click)} | ${fmt(results.extension.click)} |`);
console.log(`BENCH_EXTENSION_JSON ${JSON.stringify({ iterations: N,
  shared: { snapshot: median(results.shared.snapshot), click: median(results.shared.click) },
  extension: { snapshot: median(results.extension.snapshot), click: median(results.extension.click) } })}`);
