#!/usr/bin/env node
// bench/browsers.mjs - tabvisor on Chromium beside tabvisor on Firefox, as an
// MCP client sees them (issue 23): the same tools on the same pages, through
// the official SDK client over stdio, on the optimised build.
//
//   cold       browser_session_create of the first session (starting the
//              browser: Chromium over its pipe; Firefox in its namespaces,
//              through the BiDi bridge);
//   latency    median and p95 of ROUNDS calls each, after 3 warm-up calls, in
//              one session: browser_navigate to counter.html (load),
//              browser_snapshot, browser_click by ref (Increment),
//              browser_evaluate `() => 1`, browser_type into login.html's field;
//   memory     PSS (from /proc/PID/smaps_rollup: shared pages split between
//              their users) of the browser's processes with 1 session, and per
//              extra session with 9 more, each showing counter.html.
//
// Run: SKIP_BUILD=1 ./bench/browsers.sh (or node bench/browsers.mjs with
// TABVISOR_BIN). Prints a table and `BROWSERS_JSON {...}`.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  awaitNoneLeft, connectStdio, median, percentile, processesMentioning, refOf, resultText, runtimeDirs,
  startPageServer, tabvisorBin,
} from './common.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS || 30);
const WARMUP = 3;
const dirs = runtimeDirs('tvbrowsers-');

const pssOf = (pid) => {
  try {
    return Number(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8').match(/^Pss:\s+(\d+)/m)[1]);
  } catch {
    return 0;
  }
};
// The browser's processes: every process of the server's that is not a
// tabvisor binary (Firefox's holder and proxy are forks of tabvisor: its own).
const browserPss = (dir) => processesMentioning(dir)
  .filter((p) => !basename(p.argv[0] || '').startsWith('tabvisor') && !(p.argv[0] || '').includes('crashhelper'))
  .reduce((a, p) => a + pssOf(p.pid), 0);

async function call(client, name, args = {}) {
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
  if (r.isError) throw new Error(`${name}: ${resultText(r).slice(0, 300)}`);
  return r;
}

async function timed(client, name, args) {
  const t0 = performance.now();
  await call(client, name, args);
  return performance.now() - t0;
}

async function measure(client, name, args) {
  for (let i = 0; i < WARMUP; i++) await call(client, name, args());
  const xs = [];
  for (let i = 0; i < ROUNDS; i++) xs.push(await timed(client, name, args()));
  return { median: median(xs), p95: percentile(xs, 95) };
}

async function runBrowser(browser, pages) {
  const dir = dirs.make();
  const { client } = await connectStdio({
    clientName: 'tabvisor-bench-browsers',
    command: tabvisorBin,
    args: ['--runtime-dir', dir, '--output-dir', `${dir}/out`, '--browser', browser, '--pool', '0'],
  });
  const out = { browser };
  try {
    let t0 = performance.now();
    const first = (await call(client, 'browser_session_create')).structuredContent.sessionId;
    out.coldMs = performance.now() - t0;
    const s = { sessionId: first };
    const counter = `${pages.url}/counter.html`;
    await call(client, 'browser_navigate', { ...s, url: counter });
    out.navigate = await measure(client, 'browser_navigate', () => ({ ...s, url: counter }));
    out.snapshot = await measure(client, 'browser_snapshot', () => s);
    const snap = (await call(client, 'browser_snapshot', s)).structuredContent.snapshot;
    const inc = refOf(snap, 'button', 'Increment');
    out.click = await measure(client, 'browser_click', () => ({ ...s, target: inc, snapshot: 'none' }));
    out.evaluate = await measure(client, 'browser_evaluate', () => ({ ...s, function: '() => 1' }));
    await call(client, 'browser_navigate', { ...s, url: `${pages.url}/login.html` });
    const login = (await call(client, 'browser_snapshot', s)).structuredContent.snapshot;
    const user = refOf(login, 'textbox', 'Email');
    out.type = await measure(client, 'browser_type', () => ({ ...s, target: user, text: 'ada', snapshot: 'none' }));
    await call(client, 'browser_navigate', { ...s, url: counter });
    out.pss1KB = browserPss(dir);
    t0 = performance.now();
    for (let i = 0; i < 9; i++) {
      const id = (await call(client, 'browser_session_create')).structuredContent.sessionId;
      await call(client, 'browser_navigate', { sessionId: id, url: counter });
    }
    out.tenSessionsMs = performance.now() - t0;
    out.pss10KB = browserPss(dir);
    out.perExtraKB = (out.pss10KB - out.pss1KB) / 9;
  } finally {
    await client.close();
    await awaitNoneLeft(dir);
  }
  return out;
}

const pages = await startPageServer();
const results = [];
try {
  for (const b of ['chromium', 'firefox']) results.push(await runBrowser(b, pages));
} finally {
  await pages.close();
  dirs.removeParent();
}
const ms = (x) => `${x.median.toFixed(1)} ms (p95 ${x.p95.toFixed(1)})`;
const rows = [
  ['first session (browser start)', ...results.map((r) => `${Math.round(r.coldMs)} ms`)],
  ['browser_navigate (load)', ...results.map((r) => ms(r.navigate))],
  ['browser_snapshot', ...results.map((r) => ms(r.snapshot))],
  ['browser_click by ref', ...results.map((r) => ms(r.click))],
  ['browser_evaluate () => 1', ...results.map((r) => ms(r.evaluate))],
  ['browser_type', ...results.map((r) => ms(r.type))],
  ['browser PSS, 1 session', ...results.map((r) => `${Math.round(r.pss1KB / 1024)} MiB`)],
  ['browser PSS per extra session', ...results.map((r) => `${(r.perExtraKB / 1024).toFixed(1)} MiB`)],
];
console.log(`| ${ROUNDS} calls each, median (p95) | tabvisor on Chromium | tabvisor on Firefox |`);
console.log('|---|---|---|');
for (const r of rows) console.log(`| ${r.join(' | ')} |`);
console.log(`BROWSERS_JSON ${JSON.stringify(results)}`);
