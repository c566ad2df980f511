#!/usr/bin/env node
// bench/memory.mjs - what tabvisor's processes cost in memory, beside
// @playwright/mcp, in one run, on the same page, the same Chromium binary and
// the same machine.
//
// Part 1, memory per session. Each server is started over Streamable HTTP
// on 127.0.0.1, the way several agents share one server:
//
//   tabvisor        build-release/tabvisor --http 127.0.0.1:0 --chromium B:
//                   every HTTP client (MCP session) gets its own browser
//                   session, i.e. its own tabvisor-worker process and its own
//                   browser context in the one shared headless Chromium;
//   playwright-mcp  bench/node_modules/@playwright/mcp/cli.js --headless
//                   --isolated --executable-path B --port P --host 127.0.0.1:
//                   with --isolated its HTTP server launches one Chromium and
//                   gives every HTTP client its own browser context in it
//                   (how it serves many isolated clients from one server;
//                   without --isolated all clients share one profile).
//
// Both run each browser binary B in turn: Debian's Chromium and, when
// installed, Debian's chromium-headless-shell (tabvisor's default then; also
// the binary Playwright itself runs for headless Chromium).
//
// One MCP SDK client connects, navigates to counter.html and takes a
// snapshot; the whole process tree of the server (everything whose parent
// chain leads to the process we spawned) is then sampled. Then 16 more
// clients do the same (17 sessions) and the tree is sampled again. A sample
// is PSS from /proc/PID/smaps_rollup (pages shared between processes split
// between them, so the sum is the honest total), summed per process kind
// (server, worker, browser, renderer, gpu, utility, zygote, other), median
// of 5 samples 400 ms apart after 2 s of quiet. Per extra session =
// (total(17) - total(1)) / 16. The anonymous part of PSS is given beside
// it: PSS of file pages also moves when unrelated processes (another
// Chromium on the machine) map the same files; anonymous pages do not.
//
// Part 2, the supervisor after large outputs (tabvisor only), over HTTP and
// over stdio: a fresh server with --max-output-chars 100000000; 4 sessions
// (HTTP: 4 clients; stdio: one client, 4 browser_session_create) navigate to
// bigtable.html (2,500 rows); the supervisor's VmRSS is read (idle), then
// each session takes 60 whole-page snapshots (about 326 KB each) at once,
// then after LARGE_SETTLE_MS of quiet VmRSS is read again. The run fails if
// it stays more than LARGE_MAX_GROWTH_KIB (1536) above idle. The workers'
// VmRSS before and after is printed beside it.
//
// Part 3, start-up, beside @playwright/mcp on the default browser binary
// (the headless shell when installed): (a) spawn to first navigate done over
// stdio, as an MCP client starts a server: process start, initialize,
// browser_navigate to counter.html, median of STARTUP_ROUNDS alternating
// runs; (b) a new session while another works, over HTTP: one client
// already navigated, then each round a new client connects (initialize) and
// navigates, median of STARTUP_ROUNDS (tabvisor: its default session, from
// the pool of ready workers; Playwright --isolated: a new context).
//
// Run: ./bench/memory.sh (builds the release preset if needed). Environment:
// MEM_SESSIONS (17), MEM_BROWSERS (comma-separated binaries),
// MEM_SKIP_SESSIONS=1 (part 2 only), MEM_SKIP_PLAYWRIGHT=1, MEM_SKIP_LARGE=1,
// MEM_NO_SNAPSHOT=1 (sessions only navigate), MEM_SKIP_STARTUP=1, STARTUP_ROUNDS (7),
// TABVISOR_ARGS (extra tabvisor flags, space-separated), TVBENCH_TMP.
// Output: tables, then one line `MEMORY_JSON {...}`.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  awaitNoneLeft, buildInfo, chromiumBin, chromiumVersion, Client, compact, connectStdio, here, median, refOf, resultText,
  runtimeDirs, sleep, startPageServer, StreamableHTTPClientTransport, tabvisorBin, waitFor, freePort,
} from './common.mjs';

const SESSIONS = Number(process.env.MEM_SESSIONS || 17);
const LARGE_CLIENTS = 4;
const LARGE_SNAPSHOTS = 60;
const LARGE_SETTLE_MS = Number(process.env.LARGE_SETTLE_MS || 3000);
const LARGE_MAX_GROWTH_KIB = Number(process.env.LARGE_MAX_GROWTH_KIB || 1536);
const CALL_TIMEOUT_MS = 120000;
const STARTUP_ROUNDS = Number(process.env.STARTUP_ROUNDS || 7);
// Both servers run each browser binary in turn: Debian's full Chromium and,
// if installed, its headless shell (what tabvisor then runs by default).
const SHELL = '/usr/lib/chromium/chromium-headless-shell';
const BROWSERS = process.env.MEM_BROWSERS ? process.env.MEM_BROWSERS.split(',')
  : [chromiumBin, ...(existsSync(SHELL) ? [SHELL] : [])];
const playwrightCli = join(here, 'node_modules', '@playwright', 'mcp', 'cli.js');
const KINDS = ['server', 'worker', 'browser', 'renderer', 'gpu', 'utility', 'zygote', 'other'];

const dirs = runtimeDirs('tvmem-');
const children = [];

// ---------------------------------------------------------------- /proc

// Every live process whose parent chain leads to root (root included):
// [{pid, argv}].
function tree(root) {
  const parent = new Map();
  const argvOf = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (f[0] === 'Z') continue;
      parent.set(Number(name), Number(f[1]));
      argvOf.set(Number(name), readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').filter(Boolean));
    } catch { /* exited meanwhile */ }
  }
  const out = [];
  for (const pid of parent.keys()) {
    for (let p = pid; p > 1; p = parent.get(p)) {
      if (p === root) { out.push({ pid, argv: argvOf.get(pid) }); break; }
      if (!parent.has(p)) break;
    }
  }
  return out;
}

function kindOf(p, root) {
  if (p.pid === root) return 'server';
  // Chromium rewrites its children's command lines into one string with
  // spaces: split on both.
  const words = p.argv.join(' ').split(' ');
  const exe = basename(words[0] || '');
  if (exe === 'tabvisor-worker') return 'worker';
  const type = words.find((a) => a.startsWith('--type='))?.slice(7);
  if (type === undefined) return /^(chromium|chrome|headless_shell|chrome-headless-shell|chromium-headless-shell)$/.test(exe) ? 'browser' : 'other';
  if (type === 'gpu-process') return 'gpu';
  return KINDS.includes(type) ? type : 'other';
}

const kib = (text, key) => Number((text.match(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm')) || [])[1] || 0);
// {pss, anon} in KiB. anon is the PSS of anonymous and shared-memory pages
// only: these are shared within the tree alone (copy-on-write after the
// zygote's fork), so unlike PSS of file pages (Chromium's 230 MB binary) it
// does not move when unrelated processes map the same files.
function pssOf(pid) {
  try {
    const t = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    return { pss: kib(t, 'Pss'), anon: kib(t, 'Pss_Anon') + kib(t, 'Pss_Shmem') };
  } catch { return { pss: 0, anon: 0 }; }
}
function rssOf(pid) {
  try { return kib(readFileSync(`/proc/${pid}/status`, 'utf8'), 'VmRSS'); } catch { return 0; }
}

// PSS in KiB and process count per kind: median of 5 samples after 2 s.
async function sampleTree(root) {
  await sleep(2000);
  const samples = [];
  for (let i = 0; i < 5; i++) {
    const s = Object.fromEntries(KINDS.map((k) => [k, { n: 0, pssKB: 0, anonKB: 0 }]));
    for (const p of tree(root)) {
      const e = s[kindOf(p, root)];
      const m = pssOf(p.pid);
      e.n++;
      e.pssKB += m.pss;
      e.anonKB += m.anon;
    }
    const sum = (f) => KINDS.reduce((a, k) => a + s[k][f], 0);
    s.total = { n: sum('n'), pssKB: sum('pssKB'), anonKB: sum('anonKB') };
    samples.push(s);
    await sleep(400);
  }
  const out = {};
  for (const k of [...KINDS, 'total']) {
    out[k] = { n: median(samples.map((s) => s[k].n)), pssKB: median(samples.map((s) => s[k].pssKB)),
      anonKB: median(samples.map((s) => s[k].anonKB)) };
  }
  return out;
}

// ---------------------------------------------------------------- servers

// Spawns a server, waits until `ready(log)` yields its /mcp URL.
async function startHttp(name, command, args, env, ready, dir) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env, cwd: dir });
  children.push(child);
  let log = '';
  for (const s of [child.stdout, child.stderr]) { s.setEncoding('utf8'); s.on('data', (d) => { log += d; }); }
  const exited = new Promise((r) => {
    child.once('exit', (code, sig) => r({ code, sig }));
    child.once('error', (e) => { log += `spawn failed: ${e.message}\n`; r({ code: -1, sig: null }); });
  });
  const url = await Promise.race([waitFor(() => ready(log), 30000), exited.then(() => undefined)]);
  if (!url) throw new Error(`${name} did not start:\n${log}`);
  return {
    name, url, pid: child.pid, log: () => log,
    async close() {
      if (child.exitCode === null && !child.signalCode) child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 15000);
      await exited;
      clearTimeout(t);
      await awaitNoneLeft(dir);
    },
  };
}

// browser: the Chromium binary, or undefined for tabvisor's default.
function startTabvisor(browser, extra = []) {
  const dir = dirs.make();
  const args = ['--http', '127.0.0.1:0', '--runtime-dir', dir, '--output-dir', join(dir, 'out'),
    '--max-sessions', '64', ...(browser ? ['--chromium', browser] : []), '--log-level', 'warning', ...extra,
    ...(process.env.TABVISOR_ARGS ? process.env.TABVISOR_ARGS.split(' ').filter(Boolean) : [])];
  return startHttp('tabvisor', tabvisorBin, args, process.env,
    (log) => log.match(/Listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/)?.[1], dir);
}

async function startPlaywright(browser) {
  const dir = dirs.make();
  const port = await freePort();
  // Its Chromium's temp files and its output go under dir, removed at the end.
  mkdirSync(join(dir, 'tmp'));
  const env = { ...process.env, TMPDIR: join(dir, 'tmp') };
  return startHttp('playwright-mcp', process.execPath, [playwrightCli, '--headless', '--isolated', '--no-sandbox',
    '--executable-path', browser, '--port', String(port), '--host', '127.0.0.1', '--allowed-hosts', `127.0.0.1:${port}`,
    '--output-dir', join(dir, 'out')], env,
  (log) => (log.includes(String(port)) ? `http://127.0.0.1:${port}/mcp` : undefined), dir);
}

// ---------------------------------------------------------------- clients

async function connect(url, i) {
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const client = new Client({ name: `tabvisor-memory-bench-${i}`, version: '1.0.0' });
  await client.connect(transport);
  return { client, transport, i };
}

async function call(c, name, args) {
  if (c.sid) args = { ...args, sessionId: c.sid };
  const r = await c.client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS });
  if (r.isError) throw new Error(`client ${c.i}: ${name} failed: ${resultText(r).slice(0, 500)}`);
  return r;
}

const snapText = (r) => r.structuredContent?.snapshot ?? resultText(r);

// Navigate to counter.html and check the snapshot shows its button, so the
// session is really there and its page really loaded.
async function openCounter(c, url) {
  await call(c, 'browser_navigate', { url });
  if (process.env.MEM_NO_SNAPSHOT) return; // to see what the snapshot's script costs
  const r = await call(c, 'browser_snapshot', {});
  if (!refOf(snapText(r), 'button', 'Increment')) throw new Error(`client ${c.i}: no Increment button in the snapshot`);
}

async function closeAll(clients) {
  await Promise.allSettled(clients.map(async (c) => {
    try { await c.transport.terminateSession(); } catch { /* gone */ }
    await c.client.close();
  }));
}

// Part 1 for one server. With MEM_HOLD_MS set, holds the 17 sessions open
// that long after sampling (to look at the processes by hand).
async function perSession(srv, pageUrl) {
  const clients = [];
  try {
    clients.push(await connect(srv.url, 1));
    await openCounter(clients[0], pageUrl);
    const one = await sampleTree(srv.pid);
    for (let i = 2; i <= SESSIONS; i++) clients.push(await connect(srv.url, i));
    await Promise.all(clients.slice(1).map((c) => openCounter(c, pageUrl)));
    const many = await sampleTree(srv.pid);
    if (process.env.MEM_HOLD_MS) {
      console.error(`holding ${srv.name} (pid ${srv.pid}) for ${process.env.MEM_HOLD_MS} ms`);
      await sleep(Number(process.env.MEM_HOLD_MS));
    }
    const perExtra = {};
    const perExtraAnon = {};
    for (const k of [...KINDS, 'total']) {
      perExtra[k] = (many[k].pssKB - one[k].pssKB) / (SESSIONS - 1);
      perExtraAnon[k] = (many[k].anonKB - one[k].anonKB) / (SESSIONS - 1);
    }
    return { one, many, perExtraKB: perExtra, perExtraAnonKB: perExtraAnon };
  } catch (e) {
    process.stderr.write(`${srv.name} output (last 3000 chars):\n${srv.log().slice(-3000)}\n`);
    throw e;
  } finally {
    await closeAll(clients);
  }
}

// Part 2: the supervisor's VmRSS before and after large results.
// Over HTTP each session is its own MCP client; over stdio one client
// creates the sessions (browser_session_create) and names them per call.
async function startStdioTabvisor(extra) {
  const dir = dirs.make();
  const s = await connectStdio({ clientName: 'tabvisor-memory-bench', command: tabvisorBin, args: ['--runtime-dir', dir,
    '--output-dir', join(dir, 'out'), '--log-level', 'warning', ...extra,
    ...(process.env.TABVISOR_ARGS ? process.env.TABVISOR_ARGS.split(' ').filter(Boolean) : [])] });
  return {
    name: 'tabvisor (stdio)', pid: s.pid, log: s.log, client: s.client,
    async close() { await s.client.close(); await awaitNoneLeft(dir); },
  };
}

async function largeOutputs(pages, transport) {
  const extra = ['--max-output-chars', '100000000'];
  const srv = transport === 'stdio' ? await startStdioTabvisor(extra) : await startTabvisor(undefined, extra);
  const clients = [];
  try {
    for (let i = 1; i <= LARGE_CLIENTS; i++) {
      if (transport === 'stdio') {
        const c = { client: srv.client, i };
        c.sid = (await call(c, 'browser_session_create', {})).structuredContent.sessionId;
        clients.push(c);
      } else {
        clients.push(await connect(srv.url, i));
      }
    }
    await Promise.all(clients.map((c) => call(c, 'browser_navigate', { url: `${pages.url}/bigtable.html` })));
    await sleep(LARGE_SETTLE_MS);
    const workersKB = () => tree(srv.pid).filter((p) => kindOf(p, srv.pid) === 'worker').reduce((a, p) => a + rssOf(p.pid), 0);
    const idleKB = rssOf(srv.pid);
    const workersIdleKB = workersKB();
    let bytes = 0;
    let peakKB = idleKB;
    const peak = setInterval(() => { peakKB = Math.max(peakKB, rssOf(srv.pid)); }, 50);
    try {
      await Promise.all(clients.map(async (c) => {
        for (let i = 0; i < LARGE_SNAPSHOTS; i++) {
          const r = await call(c, 'browser_snapshot', { maxChars: 10000000 });
          if (r.structuredContent?.truncated) throw new Error('the snapshot was truncated');
          bytes = Math.max(bytes, Buffer.byteLength(JSON.stringify(r)));
        }
      }));
    } finally {
      clearInterval(peak);
    }
    const rightAfterKB = rssOf(srv.pid);
    await sleep(LARGE_SETTLE_MS);
    const afterKB = rssOf(srv.pid);
    const workersAfterKB = workersKB();
    return { transport, clients: LARGE_CLIENTS, snapshots: LARGE_SNAPSHOTS, resultBytes: bytes, idleKB, peakKB, rightAfterKB, afterKB,
      growthKB: afterKB - idleKB, limitKB: LARGE_MAX_GROWTH_KIB, workersIdleKB, workersAfterKB };
  } catch (e) {
    process.stderr.write(`tabvisor output (last 3000 chars):\n${srv.log().slice(-3000)}\n`);
    throw e;
  } finally {
    if (transport !== 'stdio') await closeAll(clients);
    await srv.close();
  }
}

// ---------------------------------------------------------------- output

const mib = (kb) => (kb / 1024).toFixed(1);

function printPerSession(browser, res) {
  const names = Object.keys(res);
  const cols = names.flatMap((n) => [`${n} 1`, `${n} ${SESSIONS}`, `${n} /extra`]);
  const w0 = 12;
  const w = Math.max(...cols.map((c) => c.length)) + 2;
  console.log(`\n${browser}: PSS in MiB by process kind (count in parentheses), 1 and ${SESSIONS} sessions on ` +
    `counter.html over HTTP; per extra session = (${SESSIONS} - 1) / ${SESSIONS - 1}`);
  console.log(''.padEnd(w0) + cols.map((c) => c.padStart(w)).join(''));
  for (const k of [...KINDS, 'total']) {
    if (names.every((n) => res[n].one[k].n === 0 && res[n].many[k].n === 0)) continue;
    const cells = names.flatMap((n) => {
      const r = res[n];
      return [`${mib(r.one[k].pssKB)} (${r.one[k].n})`, `${mib(r.many[k].pssKB)} (${r.many[k].n})`, mib(r.perExtraKB[k])];
    });
    console.log(k.padEnd(w0) + cells.map((c) => c.padStart(w)).join(''));
  }
  if (res.tabvisor && res['playwright-mcp']) {
    const a = res.tabvisor.perExtraKB.total;
    const b = res['playwright-mcp'].perExtraKB.total;
    console.log(`memory per extra session (${basename(browser)}): tabvisor ${mib(a)} MiB, playwright-mcp ${mib(b)} MiB ` +
      `(${(a / b).toFixed(2)}x)`);
  }
  for (const n of names) {
    console.log(`${n}: per extra session ${mib(res[n].perExtraKB.total)} MiB PSS, of which ` +
      `${mib(res[n].perExtraAnonKB.total)} MiB anonymous (PSS of file pages also moves with other Chromiums on the machine)`);
  }
}

function printLarge(l) {
  console.log(`supervisor VmRSS after large outputs over ${l.transport} (${l.clients} sessions x ${l.snapshots} snapshots of bigtable.html, ` +
    `${(l.resultBytes / 1024).toFixed(0)} KiB results): idle ${mib(l.idleKB)} MiB, peak ${mib(l.peakKB)} MiB, ` +
    `right after ${mib(l.rightAfterKB)} MiB, ${LARGE_SETTLE_MS / 1000} s later ${mib(l.afterKB)} MiB ` +
    `(${l.growthKB >= 0 ? '+' : ''}${mib(l.growthKB)} MiB; limit +${mib(l.limitKB)} MiB: ${l.growthKB <= l.limitKB ? 'ok' : 'EXCEEDED'})`);
  console.log(`  its ${l.clients} workers' VmRSS, summed: ${mib(l.workersIdleKB)} MiB before, ${mib(l.workersAfterKB)} MiB after`);
}

// ---------------------------------------------------------------- start-up

// Part 3 (a): one server over stdio from spawn to its first navigate done.
async function spawnToNavigate(name, browser, pageUrl) {
  const dir = dirs.make();
  const tv = name === 'tabvisor';
  const command = tv ? tabvisorBin : process.execPath;
  const args = tv ? ['--runtime-dir', dir, '--output-dir', join(dir, 'out'), '--chromium', browser, '--log-level', 'warning']
    : [playwrightCli, '--headless', '--isolated', '--no-sandbox', '--executable-path', browser, '--output-dir', join(dir, 'out')];
  mkdirSync(join(dir, 'tmp'));
  const t0 = performance.now();
  const s = await connectStdio({ clientName: 'tabvisor-startup-bench', command, args, cwd: dir, env: { ...process.env, TMPDIR: join(dir, 'tmp') } });
  try {
    const r = await s.client.callTool({ name: 'browser_navigate', arguments: { url: pageUrl } }, undefined, { timeout: CALL_TIMEOUT_MS });
    if (r.isError) throw new Error(`${name}: navigate failed: ${resultText(r).slice(0, 300)}`);
    return performance.now() - t0;
  } finally {
    await s.client.close();
    await awaitNoneLeft(dir);
  }
}

// Part 3 (b): a new client's first navigate while another client's session
// is open, over HTTP.
async function newSessionWhileBusy(srv, pageUrl) {
  const first = await connect(srv.url, 0);
  const clients = [first];
  try {
    await call(first, 'browser_navigate', { url: pageUrl });
    const ms = [];
    for (let i = 1; i <= STARTUP_ROUNDS; i++) {
      await sleep(1500); // the pool refills; an agent does not start sessions back to back
      const t0 = performance.now();
      const c = await connect(srv.url, i);
      clients.push(c);
      await call(c, 'browser_navigate', { url: pageUrl });
      ms.push(performance.now() - t0);
    }
    // tabvisor also makes sessions by tool call on one connection: the
    // time browser_session_create takes to answer with a ready session.
    const create = [];
    if (srv.name === 'tabvisor') {
      for (let i = 0; i < STARTUP_ROUNDS; i++) {
        await sleep(1500);
        const t0 = performance.now();
        await call(first, 'browser_session_create', {});
        create.push(performance.now() - t0);
      }
    }
    return { firstNavigate: median(ms), sessionCreate: create.length ? median(create) : null };
  } finally {
    await closeAll(clients);
  }
}

async function startup(pageUrl) {
  const browser = existsSync(SHELL) ? SHELL : chromiumBin;
  const spawnMs = { tabvisor: [], 'playwright-mcp': [] };
  for (let i = 0; i < STARTUP_ROUNDS; i++)
    for (const name of Object.keys(spawnMs)) spawnMs[name].push(await spawnToNavigate(name, browser, pageUrl));
  const out = { browser, spawnToNavigateMs: {}, newSessionMs: {} };
  for (const [name, xs] of Object.entries(spawnMs)) out.spawnToNavigateMs[name] = median(xs);
  const tv = await startTabvisor(browser);
  try { out.newSessionMs.tabvisor = await newSessionWhileBusy(tv, pageUrl); } finally { await tv.close(); }
  const pw = await startPlaywright(browser);
  try { out.newSessionMs['playwright-mcp'] = await newSessionWhileBusy(pw, pageUrl); } finally { await pw.close(); }
  const t = out.spawnToNavigateMs, n = out.newSessionMs;
  console.log(`\nStart-up on ${basename(browser)} (median of ${STARTUP_ROUNDS}, ms)   tabvisor   @playwright/mcp   tabvisor/peer`);
  console.log(`  spawn to first navigate done (stdio)        ${t.tabvisor.toFixed(0).padStart(8)}   ${t['playwright-mcp'].toFixed(0).padStart(15)}   ${(t.tabvisor / t['playwright-mcp']).toFixed(2).padStart(13)}`);
  const a = n.tabvisor.firstNavigate, b = n['playwright-mcp'].firstNavigate;
  console.log(`  new client's first navigate, another open   ${a.toFixed(0).padStart(8)}   ${b.toFixed(0).padStart(15)}   ${(a / b).toFixed(2).padStart(13)}`);
  console.log(`  browser_session_create to ready, another open ${n.tabvisor.sessionCreate.toFixed(1).padStart(6)}   ${'(no such tool)'.padStart(15)}`);
  return out;
}

// ---------------------------------------------------------------- main

const watchdog = setTimeout(() => {
  console.error('memory bench: still running after 14 minutes, giving up');
  dirs.killLeftovers();
  for (const c of children) if (c.exitCode === null && !c.signalCode) c.kill('SIGKILL');
  process.exit(1);
}, 840000);
watchdog.unref();

let status = 0;
let pages;
try {
  if (!existsSync(tabvisorBin)) throw new Error(`${tabvisorBin} is missing: build the release preset`);
  const { buildType, sanitizers } = buildInfo();
  if (sanitizers) throw new Error(`${tabvisorBin} is a sanitizer build; memory figures would be meaningless`);
  pages = await startPageServer();
  const pageUrl = `${pages.url}/counter.html`;
  const out = { chromium: chromiumVersion() ?? 'unknown', buildType, sessions: SESSIONS, perSession: {} };
  out.playwrightMcp = JSON.parse(readFileSync(join(here, 'node_modules', '@playwright', 'mcp', 'package.json'), 'utf8')).version;
  for (const browser of process.env.MEM_SKIP_SESSIONS ? [] : BROWSERS) {
    const res = {};
    const tv = await startTabvisor(browser);
    try { res.tabvisor = await perSession(tv, pageUrl); } finally { await tv.close(); }
    if (!process.env.MEM_SKIP_PLAYWRIGHT) {
      if (!existsSync(playwrightCli)) throw new Error('bench/node_modules/@playwright/mcp is missing: run ./bench/memory.sh');
      const pw = await startPlaywright(browser);
      try { res['playwright-mcp'] = await perSession(pw, pageUrl); } finally { await pw.close(); }
    }
    out.perSession[browser] = res;
    printPerSession(browser, res);
    // Browser contexts never share a renderer: 16 more sessions, 16 more
    // renderers at least (a flag that pooled processes would show here).
    const t = res.tabvisor;
    if (t.many.renderer.n - t.one.renderer.n < SESSIONS - 1) {
      console.error(`memory bench: ${t.many.renderer.n} renderers for ${SESSIONS} sessions, ${t.one.renderer.n} for 1`);
      status = 1;
    }
  }
  if (!process.env.MEM_SKIP_LARGE) {
    out.largeOutputs = [];
    for (const transport of ['http', 'stdio']) {
      const l = await largeOutputs(pages, transport);
      out.largeOutputs.push(l);
      printLarge(l);
      if (l.growthKB > LARGE_MAX_GROWTH_KIB) {
        console.error(`memory bench: the supervisor kept the memory of large outputs (${transport})`);
        status = 1;
      }
    }
  }
  if (!process.env.MEM_SKIP_STARTUP) out.startup = await startup(pageUrl);
  console.log(`MEMORY_JSON ${JSON.stringify(compact(out))}`);
} catch (e) {
  console.error(`memory bench failed: ${e.stack || e}`);
  dirs.killLeftovers();
  for (const c of children) if (c.exitCode === null && !c.signalCode) c.kill('SIGKILL');
  status = 1;
} finally {
  await pages?.close();
}
dirs.removeParent();
process.exit(status);
