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
// The same figures for @playwright/mcp on the same Firefox (bench/node_modules,
// bench/browsers.sh installs it): its `--browser moz-firefox` speaks WebDriver
// BiDi to a stock Firefox, Debian's here (--executable-path). It starts its
// browser on the first call (cold: the first browser_navigate) and runs one
// browser per server: its "per extra session" is one more server with its
// own Firefox (EXTRA_PEERS of them). Its PSS counts the browser's processes,
// not its Node process, as tabvisor's counts the browser's alone.
//
// Run: SKIP_BUILD=1 ./bench/browsers.sh (or node bench/browsers.mjs with
// TABVISOR_BIN). Prints a table and `BROWSERS_JSON {...}`.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  awaitNoneLeft, connectStdio, here, median, percentile, processesMentioning, refOf, resultText, runtimeDirs,
  startPageServer, tabvisorBin,
} from './common.mjs';

const firefoxBin = process.env.FIREFOX_BIN || '/usr/lib/firefox-esr/firefox-esr';
const playwrightCli = join(here, 'node_modules', '@playwright', 'mcp', 'cli.js');
const EXTRA_PEERS = Number(process.env.BENCH_EXTRA_PEERS || 2);

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

// Every descendant of pid (children by /proc/PID/task/*/children).
function descendants(pid) {
  const out = [];
  const walk = (p) => {
    let kids = [];
    try {
      for (const t of readdirSync(`/proc/${p}/task`)) kids.push(...readFileSync(`/proc/${p}/task/${t}/children`, 'utf8').split(' ').filter(Boolean).map(Number));
    } catch { /* gone */ }
    for (const k of kids) { out.push(k); walk(k); }
  };
  walk(pid);
  return out;
}
const treePss = (pid) => descendants(pid).reduce((a, p) => a + pssOf(p), 0);

// @playwright/mcp on Debian's Firefox over BiDi, as runBrowser measures
// tabvisor (its tools take the ref as target, with an element description).
async function runPlaywright(pages) {
  const dir = dirs.make();
  const start = () => connectStdio({
    clientName: 'tabvisor-bench-browsers',
    command: process.execPath,
    args: [playwrightCli, '--headless', '--isolated', '--browser', 'moz-firefox', '--executable-path', firefoxBin,
      '--output-dir', `${dir}/out`],
    env: { ...process.env, TMPDIR: dir },
  });
  const srv = await start();
  const { client } = srv;
  const out = { browser: 'playwright-mcp-firefox', version: JSON.parse(readFileSync(join(here, 'node_modules', '@playwright', 'mcp', 'package.json'), 'utf8')).version };
  const extra = [];
  try {
    const counter = `${pages.url}/counter.html`;
    let t0 = performance.now();
    await call(client, 'browser_navigate', { url: counter });
    out.coldMs = performance.now() - t0;
    out.navigate = await measure(client, 'browser_navigate', () => ({ url: counter }));
    out.snapshot = await measure(client, 'browser_snapshot', () => ({}));
    const inc = refOf(resultText(await call(client, 'browser_snapshot')), 'button', 'Increment');
    out.click = await measure(client, 'browser_click', () => ({ target: inc, element: 'Increment button' }));
    out.evaluate = await measure(client, 'browser_evaluate', () => ({ function: '() => 1' }));
    await call(client, 'browser_navigate', { url: `${pages.url}/login.html` });
    const user = refOf(resultText(await call(client, 'browser_snapshot')), 'textbox', 'Email');
    out.type = await measure(client, 'browser_type', () => ({ target: user, element: 'Email field', text: 'ada' }));
    await call(client, 'browser_navigate', { url: counter });
    out.pss1KB = treePss(srv.pid);
    t0 = performance.now();
    for (let i = 0; i < EXTRA_PEERS; i++) {
      const e = await start();
      extra.push(e);
      await call(e.client, 'browser_navigate', { url: counter });
    }
    out.extraServersMs = performance.now() - t0;
    out.perExtraKB = extra.reduce((a, e) => a + treePss(e.pid), 0) / Math.max(1, EXTRA_PEERS);
  } finally {
    for (const e of [srv, ...extra]) await e.client.close();
    await awaitNoneLeft(dir);
  }
  return out;
}

const pages = await startPageServer();
const results = [];
try {
  for (const b of ['chromium', 'firefox']) results.push(await runBrowser(b, pages));
  if (existsSync(playwrightCli)) results.push(await runPlaywright(pages));
  else console.log('bench/node_modules/@playwright/mcp is missing (./bench/browsers.sh installs it): no @playwright/mcp column');
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
const heads = ['tabvisor on Chromium', 'tabvisor on Firefox', '@playwright/mcp on Firefox (BiDi)'].slice(0, results.length);
console.log(`| ${ROUNDS} calls each, median (p95) | ${heads.join(' | ')} |`);
console.log(`|---|${heads.map(() => '---').join('|')}|`);
for (const r of rows) console.log(`| ${r.join(' | ')} |`);
console.log(`BROWSERS_JSON ${JSON.stringify(results)}`);
