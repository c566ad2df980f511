#!/usr/bin/env node
// bench/http-bench.mjs - throughput of tabvisor's Streamable HTTP transport
// with many MCP clients at once.
//
// What it measures. For each concurrency level (1, 8 and 32 clients by
// default) a fresh `tabvisor --http 127.0.0.1:0` is started with its own
// runtime directory. Every client is an official MCP TypeScript SDK Client on
// its own StreamableHTTPClientTransport, so its own MCP session and therefore
// its own default browser session (its own worker process and browser
// context in the shared headless Chromium). Each client runs loops of
//
//   browser_navigate  counter.html (waitUntil load, the default)
//   browser_snapshot  the whole page
//   browser_click     the Increment button by the ref read from that
//                     snapshot's `- button "Increment" [ref=eN]` line, with
//                     snapshot: "none" so the click is not charged a
//                     snapshot of its own (the loop already took one)
//
// First every client connects and runs WARMUP unmeasured loops (this creates
// its browser session). Then all clients start together and each starts new
// loops until SECONDS have passed; a loop already started is finished. The
// measured window runs from that common start until the last client is done,
// and throughput is calls (and loops) completed in it divided by its length.
// Latency is the wall-clock round trip of each call as the SDK client sees
// it (HTTP, JSON, the supervisor, the worker, CDP and Chromium), p50 and p99
// by nearest rank, per tool and over all calls.
//
// Errors: results with isError and calls that threw (timeouts, HTTP errors)
// are counted, the first few are printed, and the client carries on with its
// next loop; a snapshot without the Increment ref counts as an error too.
// After the window every client checks its page says "Count: 1" (its last
// click landed) and /healthz must show one browser session per client.
//
// Alongside: CPU time used during the window by the supervisor, the workers,
// Chromium and this script (which is also the load generator and the page
// server), as cores busy on average, the machine's overall busy share from
// /proc/stat, this script's event-loop delay (if it is high the client, not
// tabvisor, is the bottleneck), and the server's own mean call latency from
// /metrics for comparison with the client-side figures.
//
// Run:   ./bench/http-bench.sh          (builds build-release/ if needed)
//   or:  node bench/http-bench.mjs      (uses build-release/tabvisor)
// Environment: TABVISOR_BIN, CHROMIUM_BIN, HTTP_BENCH_CLIENTS (default
// "1,8,32"), HTTP_BENCH_SECONDS (15), HTTP_BENCH_WARMUP (loops, 1),
// TVBENCH_TMP (parent of the runtime directories; http-bench.sh sets it).
// Output: a plain-text table per level, then one line `HTTP_BENCH_JSON {...}`.
// Exits 1 on any error, a failed check, or a process of the run left alive.
// Everything listens on and talks to 127.0.0.1 only.

import { execFileSync, spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { basename, join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import {
  awaitNoneLeft, buildInfo, chromiumBin, chromiumVersion, Client, compact, cpuModel, memTotalMiB, nproc,
  percentileSorted, processesMentioning, refOf, repoRoot, resultText, runtimeDirs, sdkDir,
  StreamableHTTPClientTransport, startPageServer, tabvisorBin, waitFor,
} from './common.mjs';

function envInt(name, dflt, min, max) {
  const v = process.env[name] === undefined ? dflt : Number(process.env[name]);
  if (!Number.isInteger(v) || v < min || v > max) throw new Error(`${name} must be an integer in [${min}, ${max}]`);
  return v;
}
const LEVELS = (process.env.HTTP_BENCH_CLIENTS || '1,8,32').split(',').map((s) => {
  const n = Number(s.trim());
  if (!Number.isInteger(n) || n < 1 || n > 60) throw new Error('HTTP_BENCH_CLIENTS: integers in [1, 60], comma-separated');
  return n;
});
const SECONDS = envInt('HTTP_BENCH_SECONDS', 15, 1, 120);
const WARMUP = envInt('HTTP_BENCH_WARMUP', 1, 0, 10);
const MAX_SESSIONS = 64;
const CALL_TIMEOUT_MS = 60000;
// Hard bound on the whole run: warm-up and checks get generous room per level.
const RUN_LIMIT_MS = LEVELS.length * (SECONDS * 1000 + 90000) + 30000;
const EL_RESOLUTION_MS = 10;
const TOOLS = ['browser_navigate', 'browser_snapshot', 'browser_click'];

// ---------------------------------------------------------------- helpers

function stats(xs) {
  const s = Float64Array.from(xs).sort();
  const sum = s.reduce((a, x) => a + x, 0);
  return {
    n: s.length,
    p50: percentileSorted(s, 50),
    p99: percentileSorted(s, 99),
    mean: s.length ? sum / s.length : null,
    max: s.length ? s[s.length - 1] : null,
  };
}

// One GET to the server beside /mcp (/healthz, /metrics); the body as text.
function httpGet(url) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { body += d; });
      res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`GET ${url}: ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.setTimeout(10000, () => req.destroy(new Error(`GET ${url}: timeout`)));
    req.end();
  });
}

// Sum and count of the server's call latency histograms (one per tool, added
// up), and its tool calls by outcome.
function parseMetrics(text) {
  const total = (re) => [...text.matchAll(re)].reduce((n, m) => n + Number(m[1]), 0);
  const outcomes = {};
  for (const m of text.matchAll(/^tabvisor_tool_calls_total\{tool="([^"]+)",outcome="([^"]+)"\} (\d+)$/gm)) {
    outcomes[m[2]] = (outcomes[m[2]] || 0) + Number(m[3]);
  }
  return {
    latencySum: total(/^tabvisor_tool_call_duration_seconds_sum\{tool="[^"]+"\} ([\d.e+-]+)$/gm),
    latencyCount: total(/^tabvisor_tool_call_duration_seconds_count\{tool="[^"]+"\} (\d+)$/gm),
    outcomes,
  };
}

// ---------------------------------------------------------------- processes

// Each server's runtime directory is made under one parent (TVBENCH_TMP from
// http-bench.sh, which checks afterwards that nothing is left).
const dirs = runtimeDirs('tvhttpbench-');
const children = [];
const NPROC = nproc();
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

function kindOf(p) {
  const b = basename(p.argv[0] || '');
  return b === 'tabvisor' ? 'supervisor' : b === 'tabvisor-worker' ? 'workers' : 'chromium';
}

// CPU ticks so far by kind, keyed by pid so a process that started during
// the window counts from zero.
function cpuSample(dir) {
  const byPid = new Map();
  for (const p of processesMentioning(dir)) byPid.set(p.pid, { kind: kindOf(p), ticks: p.cpuTicks, reaped: p.reapedTicks });
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest is inside user)
  const idle = line[3] + line[4];
  const total = line.slice(0, 8).reduce((a, x) => a + x, 0);
  return { byPid, idle, total, self: process.cpuUsage(), t: performance.now() };
}

// Average cores busy per kind between two samples, and the machine's busy %.
function cpuBetween(a, b) {
  const secs = (b.t - a.t) / 1000;
  const ticks = { supervisor: 0, workers: 0, chromium: 0 };
  // Chromium starts and ends renderers while it runs: a process that ended
  // in the window shows up in its parent's reaped-children time, whole
  // lifetime included, so its ticks before the window come off again.
  for (const [pid, e] of b.byPid) {
    const before = a.byPid.get(pid);
    ticks[e.kind] += e.ticks - (before?.ticks ?? 0) + e.reaped - (before?.reaped ?? 0);
  }
  for (const [pid, e] of a.byPid) if (!b.byPid.has(pid)) ticks[e.kind] -= e.ticks;
  const cores = {};
  for (const k of Object.keys(ticks)) cores[k] = ticks[k] / CLK_TCK / secs;
  const selfUs = b.self.user + b.self.system - a.self.user - a.self.system;
  cores.benchClient = selfUs / 1e6 / secs;
  const dTotal = b.total - a.total;
  const busyPct = dTotal ? (100 * (dTotal - (b.idle - a.idle))) / dTotal : null;
  // Whatever else kept the machine busy meanwhile (other users, the kernel).
  const ours = Object.values(cores).reduce((s, x) => s + x, 0);
  cores.other = busyPct === null ? null : Math.max(0, (busyPct / 100) * NPROC - ours);
  return { cores, machineBusyPct: busyPct };
}

// ---------------------------------------------------------------- server

async function startHttpServer() {
  const runtimeDir = dirs.make();
  const child = spawn(tabvisorBin, ['--http', '127.0.0.1:0', '--runtime-dir', runtimeDir,
    '--output-dir', join(runtimeDir, 'out'), '--max-sessions', String(MAX_SESSIONS),
    '--log-level', 'warning'], { stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  let log = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => { log += d; });
  const exited = new Promise((r) => {
    child.once('exit', (code, sig) => r({ code, sig }));
    child.once('error', (e) => { log += `spawn failed: ${e.message}\n`; r({ code: -1, sig: null }); });
  });
  const url = await Promise.race([
    waitFor(() => log.match(/Listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/)?.[1], 20000),
    exited.then(() => undefined),
  ]);
  if (!url) throw new Error(`tabvisor --http did not start:\n${log}`);
  return {
    url,
    base: url.replace(/\/mcp$/, ''),
    runtimeDir,
    pid: child.pid,
    stderr: () => log,
    // SIGTERM, then every process of this server must be gone.
    async close() {
      if (child.exitCode === null && !child.signalCode) child.kill('SIGTERM');
      const { code, sig } = await exited;
      await awaitNoneLeft(runtimeDir);
      if (code !== 0) throw new Error(`tabvisor --http exited with ${code ?? sig}\n${log.slice(-3000)}`);
    },
  };
}

// ---------------------------------------------------------------- clients

class BenchClient {
  constructor(id, url, counterUrl) {
    this.id = id;
    this.url = url;
    this.counterUrl = counterUrl;
    this.lat = Object.fromEntries(TOOLS.map((t) => [t, []]));
    this.loops = 0;
    this.calls = 0;
    this.isErrors = 0;
    this.thrown = 0;
    this.noRef = 0;
    this.errorSamples = [];
    this.recording = false;
  }

  async connect() {
    this.transport = new StreamableHTTPClientTransport(new URL(this.url));
    this.client = new Client({ name: `tabvisor-http-bench-${this.id}`, version: '1.0.0' });
    await this.client.connect(this.transport);
  }

  note(kind, msg) {
    if (this.errorSamples.length < 3) this.errorSamples.push(`client ${this.id}: ${kind}: ${msg.slice(0, 300)}`);
  }

  // One call; its latency is recorded while recording. Returns the result,
  // or undefined after an error (counted).
  async call(name, args) {
    const t0 = performance.now();
    let r;
    try {
      r = await this.client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS });
    } catch (e) {
      if (this.recording) { this.thrown++; this.note(`${name} threw`, String(e?.message || e)); }
      else throw e;
      return undefined;
    }
    const ms = performance.now() - t0;
    if (r.isError) {
      if (this.recording) { this.isErrors++; this.note(`${name} isError`, resultText(r)); }
      else throw new Error(`${name} failed in warm-up: ${resultText(r)}`);
      return undefined;
    }
    if (this.recording) { this.calls++; this.lat[name].push(ms); }
    return r;
  }

  // navigate -> snapshot -> click the Increment button by its ref. True if
  // all three succeeded.
  async loop() {
    if (!await this.call('browser_navigate', { url: this.counterUrl })) return false;
    const snap = await this.call('browser_snapshot', {});
    if (!snap) return false;
    const ref = refOf(snap.structuredContent?.snapshot ?? resultText(snap), 'button', 'Increment');
    if (!ref) {
      if (this.recording) { this.noRef++; this.note('snapshot', 'no Increment ref'); return false; }
      throw new Error(`no Increment ref in the snapshot:\n${resultText(snap)}`);
    }
    if (!await this.call('browser_click', { target: ref, snapshot: 'none' })) return false;
    return true;
  }

  async run(deadline) {
    this.recording = true;
    while (performance.now() < deadline) {
      if (await this.loop()) this.loops++;
    }
    this.recording = false;
    this.doneAt = performance.now();
  }

  // The page of the last loop should say Count: 1.
  async lastClickLanded() {
    const r = await this.client.callTool({ name: 'browser_evaluate', arguments: {
      function: "() => document.getElementById('count').textContent" } }, undefined, { timeout: CALL_TIMEOUT_MS });
    return !r.isError && /\b1\b/.test(resultText(r));
  }

  async close() {
    try { await this.transport.terminateSession(); } catch { /* the server may be gone */ }
    await this.client.close();
  }
}

// ---------------------------------------------------------------- one level

async function runLevel(n, pages) {
  const srv = await startHttpServer();
  const counterUrl = `${pages.url}/counter.html`;
  const clients = Array.from({ length: n }, (_, i) => new BenchClient(i + 1, srv.url, counterUrl));
  const out = { clients: n, seconds: SECONDS, warmupLoops: WARMUP };
  try {
    // Connect everyone, then warm up (creates each client's browser session).
    let t0 = performance.now();
    await Promise.all(clients.map((c) => c.connect()));
    out.connectMs = performance.now() - t0;
    t0 = performance.now();
    await Promise.all(clients.map(async (c) => { for (let i = 0; i < WARMUP; i++) await c.loop(); }));
    out.warmupMs = performance.now() - t0;
    const health0 = JSON.parse(await httpGet(`${srv.base}/healthz`));
    out.browserSessions = health0.browserSessions;
    out.mcpSessions = health0.mcpSessions;

    // The measured window.
    const m0 = parseMetrics(await httpGet(`${srv.base}/metrics`));
    const elDelay = monitorEventLoopDelay({ resolution: EL_RESOLUTION_MS });
    const cpu0 = cpuSample(srv.runtimeDir);
    elDelay.enable();
    const start = performance.now();
    const deadline = start + SECONDS * 1000;
    await Promise.all(clients.map((c) => c.run(deadline)));
    const end = Math.max(...clients.map((c) => c.doneAt));
    elDelay.disable();
    const cpu1 = cpuSample(srv.runtimeDir);
    const m1 = parseMetrics(await httpGet(`${srv.base}/metrics`));

    const windowS = (end - start) / 1000;
    const all = [];
    out.windowS = windowS;
    out.perTool = {};
    for (const t of TOOLS) {
      const xs = clients.flatMap((c) => c.lat[t]);
      all.push(...xs);
      out.perTool[t] = stats(xs);
    }
    out.overall = stats(all);
    out.loops = clients.reduce((a, c) => a + c.loops, 0);
    out.calls = clients.reduce((a, c) => a + c.calls, 0);
    out.callsPerS = out.calls / windowS;
    out.loopsPerS = out.loops / windowS;
    out.loopsPerClient = { min: Math.min(...clients.map((c) => c.loops)), max: Math.max(...clients.map((c) => c.loops)) };
    out.errors = {
      isError: clients.reduce((a, c) => a + c.isErrors, 0),
      thrown: clients.reduce((a, c) => a + c.thrown, 0),
      noRef: clients.reduce((a, c) => a + c.noRef, 0),
    };
    out.errors.total = out.errors.isError + out.errors.thrown + out.errors.noRef;
    out.errorSamples = clients.flatMap((c) => c.errorSamples).slice(0, 5);
    out.cpu = cpuBetween(cpu0, cpu1);
    // The histogram holds the time between timer ticks: subtract the period.
    const lag = (ns) => Math.max(0, ns / 1e6 - EL_RESOLUTION_MS);
    out.eventLoopDelayMs = { p50: lag(elDelay.percentile(50)), p99: lag(elDelay.percentile(99)), max: lag(elDelay.max) };
    const dCount = m1.latencyCount - m0.latencyCount;
    out.server = {
      calls: dCount,
      meanMs: dCount ? ((m1.latencySum - m0.latencySum) / dCount) * 1000 : null,
      errorOutcomes: Object.entries(m1.outcomes).filter(([k]) => k !== 'ok')
        .reduce((a, [k, v]) => a + v - (m0.outcomes[k] || 0), 0),
    };

    // Checks: distinct browser sessions, every last click landed.
    const landed = await Promise.all(clients.map((c) => c.lastClickLanded().catch(() => false)));
    out.checks = {
      browserSessionPerClient: out.browserSessions === n && out.mcpSessions === n,
      lastClicksLanded: landed.filter(Boolean).length,
    };
  } catch (e) {
    process.stderr.write(`tabvisor stderr (last 3000 chars):\n${srv.stderr().slice(-3000)}\n`);
    throw e;
  } finally {
    await Promise.allSettled(clients.map((c) => (c.client ? c.close() : undefined)));
    await srv.close();
  }
  return out;
}

// ---------------------------------------------------------------- machine

function machineFacts() {
  const { buildType, sanitizers } = buildInfo();
  const facts = {
    nproc: nproc(),
    node: process.version,
    chromium: chromiumVersion() ?? `unknown (${chromiumBin} --version failed)`,
    cpu: cpuModel(),
    memTotalMiB: memTotalMiB(),
    loadavg1mAtStart: loadavg()[0],
    buildType,
    sanitizers,
    binary: tabvisorBin,
  };
  try {
    facts.commit = execFileSync('git', ['-C', repoRoot, 'describe', '--always', '--dirty'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
  } catch {
    facts.commit = 'unknown';
  }
  facts.sdk = JSON.parse(readFileSync(join(sdkDir, 'package.json'), 'utf8')).version;
  return facts;
}

// ---------------------------------------------------------------- output

function report(o) {
  const m = o.machine;
  const lines = [];
  const f = (x, d = 1) => (x === null || x === undefined ? '-' : x.toFixed(d));
  lines.push('tabvisor HTTP throughput benchmark');
  lines.push(`  machine   ${m.nproc} CPUs (${m.cpu}), ${m.memTotalMiB} MiB RAM, load ${f(m.loadavg1mAtStart, 2)} at start, node ${m.node}`);
  lines.push(`  browser   ${m.chromium}, headless, shared mode`);
  lines.push(`  build     ${m.buildType}${m.sanitizers ? ' WITH SANITIZERS' : ''} (${m.binary}) from ${m.commit}; MCP SDK ${m.sdk}`);
  lines.push(`  loop      browser_navigate counter.html -> browser_snapshot -> browser_click Increment by ref (snapshot: "none")`);
  lines.push(`  window    ${o.seconds} s per level after ${o.warmupLoops} warm-up loop(s) per client; latency in ms, nearest-rank percentiles`);
  for (const l of o.levels) {
    lines.push('');
    lines.push(`${l.clients} client(s): ${l.calls} calls, ${l.loops} loops in ${f(l.windowS, 2)} s = ${f(l.callsPerS)} calls/s, ${f(l.loopsPerS, 2)} loops/s` +
      ` (loops per client ${l.loopsPerClient.min}-${l.loopsPerClient.max})`);
    lines.push(`  ${'latency'.padEnd(20)}${'n'.padStart(8)}${'p50'.padStart(10)}${'p99'.padStart(10)}${'mean'.padStart(10)}${'max'.padStart(10)}`);
    const row = (name, s) => lines.push(`  ${name.padEnd(20)}${String(s.n).padStart(8)}${f(s.p50).padStart(10)}${f(s.p99).padStart(10)}${f(s.mean).padStart(10)}${f(s.max).padStart(10)}`);
    for (const t of TOOLS) row(t, l.perTool[t]);
    row('all calls', l.overall);
    lines.push(`  errors    ${l.errors.total} (isError ${l.errors.isError}, thrown ${l.errors.thrown}, snapshot without the ref ${l.errors.noRef}); server counted ${l.server.errorOutcomes} non-ok outcomes`);
    for (const s of l.errorSamples) lines.push(`    ${s}`);
    lines.push(`  server    ${l.server.calls} calls in the window, mean ${f(l.server.meanMs)} ms arrival to answer (client mean ${f(l.overall.mean)} ms)`);
    const c = l.cpu.cores;
    lines.push(`  cpu       machine ${f(l.cpu.machineBusyPct, 0)} % busy; cores: chromium ${f(c.chromium, 2)}, workers ${f(c.workers, 2)}, supervisor ${f(c.supervisor, 2)}, this script ${f(c.benchClient, 2)}, other processes ${f(c.other, 2)}`);
    lines.push(`  client    event-loop delay p50 ${f(l.eventLoopDelayMs.p50)} ms, p99 ${f(l.eventLoopDelayMs.p99)} ms; connect ${f(l.connectMs, 0)} ms, warm-up ${f(l.warmupMs, 0)} ms`);
    lines.push(`  checks    ${l.browserSessions} browser sessions / ${l.mcpSessions} MCP sessions for ${l.clients} clients; last click landed for ${l.checks.lastClicksLanded} of ${l.clients}`);
  }
  return lines.join('\n');
}

// Last resort: end this run's processes (found by their runtime directories,
// which nothing else mentions), then the servers themselves.
function killLeftovers() {
  dirs.killLeftovers();
  for (const c of children) if (c.exitCode === null && !c.signalCode) c.kill('SIGKILL');
}

const watchdog = setTimeout(() => {
  console.error(`http-bench: still running after ${RUN_LIMIT_MS / 1000} s, giving up`);
  killLeftovers();
  process.exit(1);
}, RUN_LIMIT_MS);
watchdog.unref();

let status = 0;
let pages;
try {
  const out = { machine: machineFacts(), seconds: SECONDS, warmupLoops: WARMUP, levels: [] };
  pages = await startPageServer();
  for (const n of LEVELS) out.levels.push(await runLevel(n, pages));
  console.log(report(out));
  console.log(`HTTP_BENCH_JSON ${JSON.stringify(compact(out))}`);
  for (const l of out.levels) {
    if (l.errors.total || l.server.errorOutcomes || !l.checks.browserSessionPerClient || l.checks.lastClicksLanded !== l.clients) {
      console.error(`http-bench: ${l.clients} client(s): errors or failed checks`);
      status = 1;
    }
  }
} catch (e) {
  console.error(`http-bench failed: ${e.stack || e}`);
  killLeftovers();
  status = 1;
} finally {
  await pages?.close();
}
dirs.removeParent();
process.exit(status);
