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
// every worker; at the end each may have grown by less than 5 % of RSS and
// not by one descriptor. A worker that restarted (new pid) fails the run, as
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
// Descriptors of pid, not counting TCP sockets: how many HTTP connections
// the clients hold open at a given moment is theirs to decide (the server's
// own cap on them is tested elsewhere).
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
function fds(pid) {
  const tcp = tcpInodes();
  let n = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = readlinkSync(`/proc/${pid}/fd/${fd}`).match(/^socket:\[(\d+)\]$/);
      if (!m || !tcp.has(m[1])) n++;
    } catch { /* closed meanwhile */ }
  }
  return n;
}

const pages = await startPageServer();
const srv = await startHttpServer(['--max-sessions', String(SESSIONS + 4), '--pool', '1']);
const workers = () => processesMentioning(srv.runtimeDir).filter((p) => p.cmd.includes('tabvisor-worker')).map((p) => p.pid);

function sample() {
  const procs = [srv.child.pid, ...workers()].sort((a, b) => a - b);
  return Object.fromEntries(procs.map((pid) => [pid, { rss: rssKB(pid), fds: fds(pid) }]));
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

const t0 = Date.now();
console.log(`soak: ${SESSIONS} sessions for ${SECONDS} s (warm-up ${WARMUP} s), server ${srv.child.pid}`);
const agents = Array.from({ length: SESSIONS }, (_, i) => agent(i));
let base = null;
const timer = setInterval(() => {
  const s = (Date.now() - t0) / 1000;
  if (!base && s >= WARMUP) {
    base = sample();
    console.log(`  ${s.toFixed(0)} s: baseline of ${Object.keys(base).length} processes, ${counts.calls} calls so far`);
  }
  // The last sample while every agent is still at work, as the first was.
  if (s >= SECONDS && !stop) {
    end = sample();
    stop = true;
  }
}, 1000);
let end = null;
await Promise.all(agents);
clearInterval(timer);
end ||= sample();
const elapsed = (Date.now() - t0) / 1000;

let bad = [];
if (failure) bad.push(`a call failed: ${failure.message}`);
if (!base) bad.push('ended before the warm-up was over');
else {
  for (const [pid, b] of Object.entries(base)) {
    const e = end[pid];
    const who = Number(pid) === srv.child.pid ? 'supervisor' : `worker ${pid}`;
    if (!e) { bad.push(`${who} is gone (restarted?)`); continue; }
    const growth = (e.rss - b.rss) / b.rss;
    if (growth >= RSS_GROWTH) bad.push(`${who}: RSS ${b.rss} -> ${e.rss} KiB (+${(growth * 100).toFixed(1)} %)`);
    if (e.fds > b.fds) bad.push(`${who}: descriptors ${b.fds} -> ${e.fds}`);
  }
  for (const pid of Object.keys(end)) if (!base[pid]) bad.push(`process ${pid} appeared after the warm-up`);
}
const sup = srv.child.pid;
const ws = Object.keys(end).filter((p) => Number(p) !== sup);
const growths = base ? ws.map((p) => (end[p].rss - base[p].rss) / base[p].rss * 100) : [];
console.log(`  ${elapsed.toFixed(0)} s: ${counts.calls} calls (${(counts.calls / elapsed).toFixed(1)}/s), ${counts.loops} loops`);
if (base) {
  console.log(`  supervisor RSS ${base[sup].rss} -> ${end[sup].rss} KiB, fds ${base[sup].fds} -> ${end[sup].fds}`);
  console.log(`  workers (${ws.length}): RSS after warm-up ${Math.min(...ws.map((p) => base[p].rss))}..${Math.max(...ws.map((p) => base[p].rss))} KiB, ` +
    `growth max ${Math.max(...growths).toFixed(2)} %, fds growth max ${Math.max(...ws.map((p) => end[p].fds - base[p].fds))}`);
}
await srv.close();
pages.close();
if (bad.length) {
  console.error(`soak FAILED:\n  ${bad.join('\n  ')}`);
  process.exit(1);
}
console.log('soak passed');
