#!/usr/bin/env node
// bench/bench.mjs - the numbers behind tabvisor's README.
//
// What it measures (pages come from tests/pages, served by this script on
// 127.0.0.1; nothing leaves the machine). Every figure is a wall-clock round
// trip as an MCP client sees it: the official MCP TypeScript SDK client talks
// to tabvisor over stdio, exactly as Claude Code or Cursor would.
//
//   startup   time from spawning tabvisor to its answer to `initialize`
//             (median of 5 fresh servers, each closed at once);
//   sessions  browser_session_create round trip: the first session (this
//             includes starting the shared headless Chromium) and the median
//             of the next 10 (Chromium already running);
//   latency   median and p95 of 50 calls each, after 3 unmeasured warm-up
//             calls, all in one session: browser_navigate to counter.html
//             (waiting for load, and for comparison domcontentloaded and
//             commit), browser_snapshot (counter.html and the login.html form),
//             browser_click by ref on the Increment button, browser_evaluate
//             `() => 1`, plus reference calls that show where a click's time
//             goes (see "where a click's time goes" in the output);
//   memory    VmRSS of the supervisor and of every tabvisor-worker (after the
//             latency loops), and the shared Chromium's memory with 1 and with
//             10 sessions, each session showing counter.html (and once with
//             the 9 extra sessions still on about:blank). Chromium is
//             reported twice: RSS summed over its processes (overstates:
//             pages shared between processes are counted once per process)
//             and PSS from /proc/<pid>/smaps_rollup (shared pages split
//             between their users: the honest total).
//
// Run:   ./bench/run.sh                 (builds build-release/ if needed)
//   or:  node bench/bench.mjs           (uses build-release/tabvisor;
//                                        TABVISOR_BIN=... to point elsewhere)
// Output: an aligned plain-text table, then one line `BENCH_JSON {...}` with
// every figure, for machines. Exits 0 on success, 1 on any failed call.
// Processes are found by the private runtime directory each server is given,
// and the script waits until none is left before it exits.

import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  awaitNoneLeft, buildInfo, chromiumBin, chromiumVersion, compact, connectStdio, cpuModel, median, memTotalMiB,
  nproc, percentile, processesMentioning, refOf, resultText, runtimeDirs, sleep, startPageServer, tabvisorBin,
  waitFor,
} from './common.mjs';

const ITERATIONS = 50;
const WARMUP = 3;
const START_SAMPLES = 5;
const EXTRA_SESSIONS = 10;

// ---------------------------------------------------------------- processes

// Each server gets its own runtime directory under one parent (TVBENCH_TMP
// from run.sh, which checks afterwards that nothing is left).
const dirs = runtimeDirs('tvbench-');

const isTabvisor = (p) => basename(p.argv[0] || '').startsWith('tabvisor');
const workersOf = (dir) => processesMentioning(dir).filter((p) => basename(p.argv[0]) === 'tabvisor-worker');
// The shared Chromium: every process of ours that is not a tabvisor binary.
// Its renderers and helpers carry the profile path (inside the runtime dir).
const browserOf = (dir) => processesMentioning(dir).filter((p) => !isTabvisor(p));

// {rss, pss} in KiB for one process; zeros if it exited meanwhile.
function memoryOf(pid) {
  const field = (text, key) => Number((text.match(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm')) || [])[1] || 0);
  try {
    return {
      rss: field(readFileSync(`/proc/${pid}/status`, 'utf8'), 'VmRSS'),
      pss: field(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'), 'Pss'),
    };
  } catch {
    return { rss: 0, pss: 0 };
  }
}

// The shared browser's memory: median of 5 samples 300 ms apart, after the
// pages have had 2 seconds to go quiet.
async function browserMemory(dir) {
  await sleep(2000);
  const samples = [];
  for (let i = 0; i < 5; i++) {
    const procs = browserOf(dir);
    const m = procs.map((p) => memoryOf(p.pid));
    samples.push({
      procs: procs.length,
      renderers: procs.filter((p) => p.argv.join(' ').includes('--type=renderer')).length,
      rss: m.reduce((a, x) => a + x.rss, 0),
      pss: m.reduce((a, x) => a + x.pss, 0),
    });
    await sleep(300);
  }
  return {
    procs: median(samples.map((s) => s.procs)),
    renderers: median(samples.map((s) => s.renderers)),
    rssKB: median(samples.map((s) => s.rss)),
    pssKB: median(samples.map((s) => s.pss)),
  };
}

// ---------------------------------------------------------------- server

// Start tabvisor through the SDK's stdio transport; startMs is spawn to
// `initialize` answered.
async function startServer() {
  const runtimeDir = dirs.make();
  const { client, pid, connectMs, log } = await connectStdio({
    clientName: 'tabvisor-bench',
    command: tabvisorBin,
    args: ['--runtime-dir', runtimeDir, '--output-dir', join(runtimeDir, 'out'), '--log-level', 'warning'],
  });
  return {
    client,
    runtimeDir,
    pid,
    startMs: connectMs,
    stderr: log,
    async close() {
      await client.close();
      await awaitNoneLeft(runtimeDir);
    },
  };
}

// Call a tool; a result with isError fails the benchmark.
async function call(client, name, args = {}) {
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
  if (r.isError) throw new Error(`${name} ${JSON.stringify(args)} failed: ${resultText(r)}`);
  return r;
}

async function timedCall(client, name, args) {
  const t0 = performance.now();
  const r = await call(client, name, args);
  return { ms: performance.now() - t0, r };
}

// {median, p95, min, max} of a list of milliseconds.
const spread = (ms) => ({ median: median(ms), p95: percentile(ms, 95), min: Math.min(...ms), max: Math.max(...ms) });

// WARMUP unmeasured calls, then ITERATIONS measured ones: {median, p95, ...}.
async function measure(client, name, args) {
  for (let i = 0; i < WARMUP; i++) await call(client, name, args);
  const ms = [];
  for (let i = 0; i < ITERATIONS; i++) ms.push((await timedCall(client, name, args)).ms);
  return spread(ms);
}

function mustRefOf(snapshot, role, name) {
  const ref = refOf(snapshot, role, name);
  if (ref === undefined) throw new Error(`no ${role} "${name}" in snapshot:\n${snapshot}`);
  return ref;
}

// ---------------------------------------------------------------- machine

function machineFacts() {
  const { buildType, sanitizers } = buildInfo();
  return {
    nproc: nproc(),
    node: process.version,
    chromium: chromiumVersion() ?? `unknown (${chromiumBin} --version failed)`,
    buildType,
    // A sanitizer build carries its runtime in the binary.
    sanitizers,
    release: /^(Release|RelWithDebInfo|MinSizeRel)$/.test(buildType) && !sanitizers,
    binary: tabvisorBin,
    memTotalMiB: memTotalMiB(),
    cpu: cpuModel(),
  };
}

// ---------------------------------------------------------------- the run

async function run() {
  const machine = machineFacts();
  const pages = await startPageServer();
  const counterUrl = `${pages.url}/counter.html`;
  const loginUrl = `${pages.url}/login.html`;
  const out = { machine, iterations: ITERATIONS, warmup: WARMUP };
  try {
    // Startup: spawn to `initialize` answered, on fresh servers.
    const starts = [];
    for (let i = 0; i < START_SAMPLES; i++) {
      const s = await startServer();
      starts.push(s.startMs);
      await s.close();
    }
    out.startMs = { median: median(starts), samples: starts };

    const srv = await startServer();
    try {
      const c = srv.client;
      const dir = srv.runtimeDir;

      // The first session starts the shared Chromium.
      let t = await timedCall(c, 'browser_session_create');
      const s1 = t.r.structuredContent.sessionId;
      out.sessionCreate = { firstMs: t.ms };

      // Latency, all in session s1.
      const L = {};
      L.navigate = await measure(c, 'browser_navigate', { sessionId: s1, url: counterUrl });
      // The same navigation waiting less: how much of it is the load event.
      L.navigateCommit = await measure(c, 'browser_navigate', { sessionId: s1, url: counterUrl, waitUntil: 'commit' });
      L.navigateDcl = await measure(c, 'browser_navigate', { sessionId: s1, url: counterUrl, waitUntil: 'domcontentloaded' });
      await call(c, 'browser_navigate', { sessionId: s1, url: counterUrl });
      L.snapshot = await measure(c, 'browser_snapshot', { sessionId: s1 });
      const snap = (await call(c, 'browser_snapshot', { sessionId: s1 })).structuredContent.snapshot;
      const ref = mustRefOf(snap, 'button', 'Increment');
      L.click = await measure(c, 'browser_click', { sessionId: s1, target: ref });
      L.evaluate = await measure(c, 'browser_evaluate', { sessionId: s1, function: '() => 1' });

      // The clicks must really have landed.
      const count = await call(c, 'browser_evaluate', {
        sessionId: s1, function: "() => document.getElementById('count').textContent",
      });
      if (!resultText(count).includes(String(WARMUP + ITERATIONS)))
        throw new Error(`expected ${WARMUP + ITERATIONS} clicks, page says ${resultText(count)}`);

      // Where a click's time goes. A click is: resolve the ref and check the
      // element is stable over two animation frames (no wait when its box was
      // seen a frame or more earlier), move/press/release the
      // mouse over CDP, then settle (one frame plus a task) and read the URL
      // and title. So compare with: a supervisor-only call (no worker, no
      // browser), an evaluate that returns at once, evaluates that wait the
      // same frames, and a click with force (which skips the stability check).
      L.sessionList = await measure(c, 'browser_session_list', {});
      L.evalTwoFrames = await measure(c, 'browser_evaluate', {
        sessionId: s1, function: '() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(1))))',
      });
      L.evalSettle = await measure(c, 'browser_evaluate', {
        sessionId: s1, function: '() => new Promise(r => requestAnimationFrame(() => setTimeout(() => r(1), 0)))',
      });
      L.clickForce = await measure(c, 'browser_click', { sessionId: s1, target: ref, force: true });
      // The agent loop: snapshot, think (here 50 ms), click the ref. The box the
      // snapshot saw is then a frame or more old, so the stability check needs
      // no frame wait; back-to-back clicks above wait one.
      {
        const msAfter = [];
        for (let i = 0; i < ITERATIONS; i++) {
          await call(c, 'browser_snapshot', { sessionId: s1 });
          await new Promise((r) => setTimeout(r, 50));
          msAfter.push((await timedCall(c, 'browser_click', { sessionId: s1, target: ref, snapshot: 'none' })).ms);
        }
        L.clickAfterSnapshot = spread(msAfter);
      }
      // The page's own frame period, timed inside the page over 20 frames.
      const period = await call(c, 'browser_evaluate', {
        sessionId: s1,
        function: `() => new Promise(r => { let n = 0; const t0 = performance.now();
          const f = () => (++n === 20 ? r((performance.now() - t0) / 20) : requestAnimationFrame(f));
          requestAnimationFrame(f); })`,
      });
      out.framePeriodMs = Number(resultText(period).match(/[\d.]+/)[0]);

      // A form page for a second snapshot figure.
      await call(c, 'browser_navigate', { sessionId: s1, url: loginUrl });
      L.snapshotLogin = await measure(c, 'browser_snapshot', { sessionId: s1 });
      await call(c, 'browser_navigate', { sessionId: s1, url: counterUrl });
      out.latencyMs = L;

      // Chromium with one session (showing counter.html).
      out.browser1 = await browserMemory(dir);

      // The next sessions, Chromium already running.
      const next = [];
      const ids = [];
      for (let i = 0; i < EXTRA_SESSIONS; i++) {
        t = await timedCall(c, 'browser_session_create');
        next.push(t.ms);
        ids.push(t.r.structuredContent.sessionId);
      }
      out.sessionCreate.nextMedianMs = median(next);
      out.sessionCreate.nextMs = next;

      // Ten sessions in all, each showing counter.html: close the last extra
      // one and wait for its worker to go.
      await call(c, 'browser_session_close', { sessionId: ids.pop() });
      if (!await waitFor(() => workersOf(dir).length === 10, 10000))
        throw new Error(`expected 10 workers, found ${workersOf(dir).length}`);
      out.browser10Blank = await browserMemory(dir); // the 9 new ones still on about:blank
      for (const sessionId of ids) await call(c, 'browser_navigate', { sessionId, url: counterUrl });
      out.browser10 = await browserMemory(dir);
      const perExtra = (m) => ({ rssKB: (m.rssKB - out.browser1.rssKB) / 9, pssKB: (m.pssKB - out.browser1.pssKB) / 9 });
      out.perExtraSession = perExtra(out.browser10);
      out.perExtraBlankSession = perExtra(out.browser10Blank);

      // Workers and supervisor. The oldest worker is s1's, which ran the loops.
      const workers = workersOf(dir).sort((a, b) => a.startTicks - b.startTicks);
      const wm = workers.map((w) => memoryOf(w.pid));
      out.workers = {
        count: workers.length,
        rssKB: wm.map((m) => m.rss),
        pssKB: wm.map((m) => m.pss),
        medianRssKB: median(wm.map((m) => m.rss)),
        medianPssKB: median(wm.map((m) => m.pss)),
        loopSessionRssKB: wm[0].rss,
        loopSessionPssKB: wm[0].pss,
      };
      out.supervisor = memoryOf(srv.pid);
      out.supervisor = { rssKB: out.supervisor.rss, pssKB: out.supervisor.pss };
    } catch (e) {
      process.stderr.write(`tabvisor stderr:\n${srv.stderr()}\n`);
      throw e;
    } finally {
      await srv.close();
    }
  } finally {
    await pages.close();
  }
  return out;
}

// ---------------------------------------------------------------- output

function report(o) {
  const m = o.machine;
  const ms = (x) => `${x.toFixed(x < 10 ? 2 : 1)} ms`;
  const mib = (kb) => `${(kb / 1024).toFixed(1)} MiB`;
  const lines = [];
  const W = 62; // label column
  const row = (label, ...cols) => lines.push(`  ${label.padEnd(W - 2)}${cols.map((c) => String(c).padStart(12)).join('')}`.trimEnd());
  const head = (title, ...cols) => { lines.push(''); lines.push(`${title.padEnd(W)}${cols.map((c) => c.padStart(12)).join('')}`.trimEnd()); };

  lines.push('tabvisor benchmark');
  lines.push(`  machine   ${m.nproc} CPUs (${m.cpu}), ${m.memTotalMiB} MiB RAM, node ${m.node}`);
  lines.push(`  browser   ${m.chromium}, headless, shared mode`);
  lines.push(`  build     ${m.buildType}${m.sanitizers ? ' WITH SANITIZERS' : ''}: ${m.release ? 'release' : 'NOT a release build'} (${m.binary})`);

  head('startup');
  row(`server start -> initialize answered (median of ${START_SAMPLES})`, ms(o.startMs.median));
  row('browser_session_create, first (includes starting Chromium)', ms(o.sessionCreate.firstMs));
  row(`browser_session_create, next ${EXTRA_SESSIONS} (median)`, ms(o.sessionCreate.nextMedianMs));

  const L = o.latencyMs;
  const lat = (label, x) => row(label, ms(x.median), ms(x.p95));
  head(`tool latency, ${o.iterations} calls each after ${o.warmup} warm-up`, 'median', 'p95');
  lat('browser_navigate counter.html', L.navigate);
  lat('browser_navigate counter.html, waitUntil domcontentloaded', L.navigateDcl);
  lat('browser_navigate counter.html, waitUntil commit', L.navigateCommit);
  lat('browser_snapshot counter.html', L.snapshot);
  lat('browser_snapshot login.html (form)', L.snapshotLogin);
  lat('browser_click by ref (Increment, static page), back to back', L.click);
  lat('browser_click by ref, 50 ms after a snapshot (the agent loop)', L.clickAfterSnapshot);
  lat('browser_evaluate () => 1', L.evaluate);

  head("where a click's time goes", 'median', 'p95');
  lat('browser_session_list (supervisor only: MCP + SDK floor)', L.sessionList);
  lat('browser_evaluate () => 1 (+ worker, CDP, page)', L.evaluate);
  lat('browser_evaluate waiting 2 animation frames', L.evalTwoFrames);
  lat('browser_evaluate waiting 1 frame + a task (= settle)', L.evalSettle);
  lat('browser_click force (skips the stability check)', L.clickForce);
  lat('browser_click', L.click);
  row('page frame period, measured in the page', ms(o.framePeriodMs));

  head('memory', 'RSS', 'PSS');
  row('supervisor (tabvisor)', mib(o.supervisor.rssKB), mib(o.supervisor.pssKB));
  row(`worker (tabvisor-worker), median of ${o.workers.count}`, mib(o.workers.medianRssKB), mib(o.workers.medianPssKB));
  row('worker of the session that ran the latency loops', mib(o.workers.loopSessionRssKB), mib(o.workers.loopSessionPssKB));
  row(`Chromium, 1 session: ${o.browser1.procs} processes, ${o.browser1.renderers} renderers`, mib(o.browser1.rssKB), mib(o.browser1.pssKB));
  row(`Chromium, 10 sessions: ${o.browser10.procs} processes, ${o.browser10.renderers} renderers`, mib(o.browser10.rssKB), mib(o.browser10.pssKB));
  row('Chromium per extra session, (10 - 1) / 9', mib(o.perExtraSession.rssKB), mib(o.perExtraSession.pssKB));
  row(`Chromium, 10 sessions, 9 on about:blank: ${o.browser10Blank.procs} proc., ${o.browser10Blank.renderers} rend.`, mib(o.browser10Blank.rssKB), mib(o.browser10Blank.pssKB));
  row('Chromium per extra session left on about:blank', mib(o.perExtraBlankSession.rssKB), mib(o.perExtraBlankSession.pssKB));
  lines.push('  (RSS sums count pages shared between Chromium processes once per process;');
  lines.push('   PSS splits them between their users and is the honest total.)');
  return lines.join('\n');
}

try {
  const o = await run();
  console.log(report(o));
  console.log(`BENCH_JSON ${JSON.stringify(compact(o))}`);
  dirs.removeParent();
  process.exit(0);
} catch (e) {
  console.error(`bench failed: ${e.stack || e}`);
  dirs.killLeftovers();
  process.exit(1);
}
