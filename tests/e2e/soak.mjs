#!/usr/bin/env node
// tests/e2e/soak.mjs - many sessions working for a long time; memory and
// descriptors must stay flat.
//
//   TABVISOR_BIN=build-release-ci/tabvisor node tests/e2e/soak.mjs [--hour]
//
// 32 MCP clients over Streamable HTTP (TV_SOAK_SESSIONS), each with its own
// browser session, loop navigate -> snapshot -> click by ref -> evaluate on
// pages of tests/pages for 5 minutes (TV_SOAK_SECONDS; --hour: 3600 s).
// After the first minute (warm-up: allocators and caches reach their working
// size) it samples RSS and the descriptor count of the supervisor and of
// every worker every second. Growth compares the least RSS seen in the 30 s
// after the warm-up with the least seen in the last 30 s: each process may
// grow by less than 5 %, and its most descriptors by none. The least, because
// a sample taken while a worker is in a call also sees that call's transient
// heap (up to 0.4 MiB of a worker's 3.6 MiB, given back within 10 s:
// proto/memtrim.h), and how many samples land in calls depends on the
// machine's load, not on the process. What a process keeps between calls is
// what a leak raises. The medians and the most are printed beside it. A worker that restarted (new pid) fails the run, as
// does any failed call. Run it on an optimised build: a sanitizer build's
// quarantine grows by design.
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { connectHttp, startHttpServer, startPageServer, processesMentioning, refOf, text } from './lib.mjs';

const hour = process.argv.includes('--hour');
const SECONDS = Number(process.env.TV_SOAK_SECONDS || (hour ? 3600 : 300));
const WARMUP = Math.min(60, SECONDS / 5);
const SESSIONS = Number(process.env.TV_SOAK_SESSIONS || 32);
const RSS_GROWTH = 0.05;

const rssKB = (pid) => Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)[1]);
// The inodes of the TCP sockets in the kernel's tables.
function tcpInodes() {
  const inodes = new Set();
  for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
    try {
      for (const line of readFileSync(f, 'utf8').split('\n').slice(1)) {
        const cols = line.trim().split(/\s+/);
        if (cols[9]) inodes.add(cols[9]);
      }
    } catch { /* no IPv6 */ }
  }
  return inodes;
}
const fdLink = (pid, fd) => { try { return readlinkSync(`/proc/${pid}/fd/${fd}`); } catch { return null; } };
// The descriptors of pid: { fd: target of its link }.
function fdLinks(pid) {
  const links = {};
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    const l = fdLink(pid, fd);
    if (l) links[fd] = l;
  }
  return links;
}

const pages = await startPageServer();
const srv = await startHttpServer(['--max-sessions', String(SESSIONS + 4), '--pool', '1']);
const workers = () => processesMentioning(srv.runtimeDir).filter((p) => p.cmd.includes('tabvisor-worker')).map((p) => p.pid);

// { pid: { rss: KiB, fds } } of the supervisor and every worker, now.
// fds leaves out TCP sockets: how many HTTP connections the clients hold
// open at a given moment is theirs to decide (the server's own cap on them
// is tested elsewhere). The clients churn connections, so the TCP table is
// read after every listing (read before it, a connection accepted in
// between counted as a leak; docs/testing.md), and a socket not in it
// counts only if its descriptor still holds it after that read. A leaked
// socket stays, so it still counts.
function sample() {
  const out = {};
  for (const pid of [srv.child.pid, ...workers()]) {
    try {
      out[pid] = { rss: rssKB(pid), links: fdLinks(pid) };
    } catch { /* exited meanwhile: absent from this sample */ }
  }
  const tcp = tcpInodes();
  for (const [pid, x] of Object.entries(out)) {
    x.fds = Object.entries(x.links).filter(([fd, l]) => {
      const m = l.match(/^socket:\[(\d+)\]$/);
      return !m || (!tcp.has(m[1]) && fdLink(pid, fd) === l);
    }).length;
    delete x.links;
  }
  return out;
}

// A window of samples -> { pid: { rssMin, rssMedian, rssMax (KiB), fds: most } }
// over the processes present in every sample of it.
function summarise(samples) {
  const out = {};
  const pids = Object.keys(samples[0] || {}).filter((pid) => samples.every((x) => x[pid]));
  for (const pid of pids) {
    const rss = samples.map((x) => x[pid].rss).sort((a, b) => a - b);
    out[pid] = {
      rssMin: rss[0], rssMedian: rss[rss.length >> 1], rssMax: rss[rss.length - 1],
      fds: Math.max(...samples.map((x) => x[pid].fds)),
    };
  }
  return out;
}

const urls = ['counter.html', 'widgets.html', 't8-form.html', 'names.html'].map((p) => `${pages.url}/${p}`);
const counts = { calls: 0, loops: 0 };
let failure = null;
let stop = false;

async function agent(i) {
  const { client } = await connectHttp(srv.url);
  const call = async (name, args) => {
    const r = await client.callTool({ name, arguments: args });
    counts.calls++;
    if (r.isError) throw new Error(`session ${i}: ${name} ${JSON.stringify(args)}: ${text(r)}`);
    return r;
  };
  try {
    for (let n = 0; !stop; n++) {
      const url = n % 3 === 0 ? urls[(i + n) % urls.length] : urls[0];
      await call('browser_navigate', { url });
      if (url === urls[0]) {
        const snap = await call('browser_snapshot', {});
        const ref = refOf(text(snap), 'button', 'Increment');
        if (!ref) throw new Error(`session ${i}: no Increment button in\n${text(snap)}`);
        await call('browser_click', { target: ref, element: 'Increment' });
        const v = await call('browser_evaluate', { function: '() => document.querySelector("p").textContent' });
        if (!/1/.test(JSON.stringify(v.structuredContent.result))) throw new Error(`session ${i}: click had no effect: ${text(v)}`);
      } else {
        await call('browser_snapshot', {});
      }
      counts.loops++;
    }
  } catch (e) {
    failure ||= e;
    stop = true;
  } finally {
    await client.close().catch(() => {});
  }
}

const WINDOW = Math.min(30, SECONDS / 10); // seconds of samples at each end
const t0 = Date.now();
console.log(`soak: ${SESSIONS} sessions for ${SECONDS} s (warm-up ${WARMUP} s, windows of ${WINDOW} s), server ${srv.child.pid}`);
const agents = Array.from({ length: SESSIONS }, (_, i) => agent(i));
const first = [], last = [];
let baseCalls = null;
let everyone = null; // the processes when sampling began: none may leave or join
const timer = setInterval(() => {
  const s = (Date.now() - t0) / 1000;
  if (stop || s < WARMUP) return;
  const x = sample();
  everyone ||= Object.keys(x);
  if (s < WARMUP + WINDOW) {
    if (!first.length) baseCalls = counts.calls;
    first.push(x);
  } else if (s >= SECONDS - WINDOW) {
    last.push(x);
  }
  for (const pid of everyone) if (!x[pid]) failure ||= new Error(`process ${pid} is gone (a worker restarted?)`);
  for (const pid of Object.keys(x)) if (!everyone.includes(pid)) failure ||= new Error(`process ${pid} appeared after the warm-up`);
  // Every agent is still at work for the last sample, as for the first.
  if (s >= SECONDS || failure) stop = true;
}, 1000);
await Promise.all(agents);
clearInterval(timer);
const elapsed = (Date.now() - t0) / 1000;
if (baseCalls !== null) console.log(`  baseline window from ${WARMUP} s: ${first.length} samples of ${everyone.length} processes, ${baseCalls} calls before it`);

const base = first.length && last.length ? summarise(first) : null;
const end = base ? summarise(last) : null;
let bad = [];
if (failure) bad.push(`${failure.message}`);
if (!base) bad.push('ended before both sampling windows were over');
else {
  for (const [pid, b] of Object.entries(base)) {
    const e = end[pid];
    const who = Number(pid) === srv.child.pid ? 'supervisor' : `worker ${pid}`;
    if (!e) { bad.push(`${who} is gone (restarted?)`); continue; }
    const growth = (e.rssMin - b.rssMin) / b.rssMin;
    if (growth >= RSS_GROWTH)
      bad.push(`${who}: RSS ${b.rssMin} -> ${e.rssMin} KiB (+${(growth * 100).toFixed(1)} %; median ${b.rssMedian} -> ${e.rssMedian}, most ${b.rssMax} -> ${e.rssMax})`);
    if (e.fds > b.fds) bad.push(`${who}: descriptors ${b.fds} -> ${e.fds}`);
  }
}
const sup = srv.child.pid;
console.log(`  ${elapsed.toFixed(0)} s: ${counts.calls} calls (${(counts.calls / elapsed).toFixed(1)}/s), ${counts.loops} loops`);
if (base && end[sup]) {
  const ws = Object.keys(end).filter((p) => Number(p) !== sup && base[p]);
  const pct = (p, k) => (end[p][k] - base[p][k]) / base[p][k] * 100;
  const growths = (k) => ws.map((p) => pct(p, k));
  const range = (k) => `${Math.min(...ws.map((p) => base[p][k]))}..${Math.max(...ws.map((p) => base[p][k]))}`;
  const sv = (k) => `${base[sup][k]} -> ${end[sup][k]}`;
  console.log(`  supervisor RSS ${sv('rssMin')} KiB (median ${sv('rssMedian')}, most ${sv('rssMax')}), fds ${base[sup].fds} -> ${end[sup].fds}`);
  console.log(`  workers (${ws.length}): RSS after warm-up ${range('rssMin')} KiB (median ${range('rssMedian')}); ` +
    `growth max ${Math.max(...growths('rssMin')).toFixed(2)} % (of the median ${Math.max(...growths('rssMedian')).toFixed(2)} %, ` +
    `of the most ${Math.max(...growths('rssMax')).toFixed(2)} %), fds growth max ${Math.max(...ws.map((p) => end[p].fds - base[p].fds))}`);
}
await srv.close();
pages.close();
if (bad.length) {
  console.error(`soak FAILED:\n  ${bad.join('\n  ')}`);
  process.exit(1);
}
console.log('soak passed');
