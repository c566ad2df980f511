#!/usr/bin/env node
// bench/ab.mjs - per-call latency of two tabvisor builds, measured in one run.
//
//   [AB_ROUNDS=20] [AB_ARGS='--chromium PATH'] node bench/ab.mjs OLD/tabvisor NEW/tabvisor
//
// Both servers run at once (each with its own Chromium), each with one
// session on counter.html from 127.0.0.1. Calls alternate between them in
// short rounds, so machine load that comes and goes (other builds, a busy
// core) weighs on both alike; a change that costs 5 % shows up as 5 %, not as
// the noise of two runs minutes apart. Per round and build: 10 evaluates of
// `() => 1`, 10 snapshots, 5 clicks 50 ms after a snapshot (the agent loop),
// 2 navigations, and 2 navigations to a view of the page (navigateToView: a
// browser_snapshot follows when the navigation's answer has no view). Prints medians and p95 per call and build, and NEW/OLD.
import { performance } from 'node:perf_hooks';
import {
  awaitNoneLeft, connectStdio, median, percentile, refOf, resultText, runtimeDirs, sleep, startPageServer,
} from './common.mjs';

const [oldBin, newBin] = process.argv.slice(2);
if (!oldBin || !newBin) {
  console.error('usage: node bench/ab.mjs OLD/tabvisor NEW/tabvisor');
  process.exit(2);
}
const ROUNDS = Number(process.env.AB_ROUNDS || 20);
// Flags for both builds (AB_ARGS, space-separated), e.g. the same browser
// binary for both: --chromium /usr/lib/chromium/chromium.
const EXTRA = (process.env.AB_ARGS || '').split(' ').filter(Boolean);
const dirs = runtimeDirs('tvab-');
const pages = await startPageServer();
const url = `${pages.url}/counter.html`;

async function start(bin) {
  const dir = dirs.make();
  const s = await connectStdio({ clientName: 'tabvisor-ab', command: bin, args: ['--runtime-dir', dir, '--output-dir', `${dir}/out`, ...EXTRA] });
  const call = async (name, args = {}) => {
    const r = await s.client.callTool({ name, arguments: args });
    if (r.isError) throw new Error(`${bin}: ${name}: ${resultText(r)}`);
    return r;
  };
  await call('browser_navigate', { url });
  return { bin, dir, s, call, t: { evaluate: [], snapshot: [], clickAfterSnapshot: [], navigate: [], navigateToView: [] } };
}

async function timed(list, fn) {
  const t0 = performance.now();
  await fn();
  list.push(performance.now() - t0);
}

async function round(x) {
  for (let i = 0; i < 10; i++) await timed(x.t.evaluate, () => x.call('browser_evaluate', { function: '() => 1' }));
  for (let i = 0; i < 10; i++) await timed(x.t.snapshot, () => x.call('browser_snapshot'));
  for (let i = 0; i < 5; i++) {
    const snap = resultText(await x.call('browser_snapshot'));
    await sleep(50);
    await timed(x.t.clickAfterSnapshot, () => x.call('browser_click', { target: refOf(snap, 'button', 'Increment'), snapshot: 'none' }));
  }
  for (let i = 0; i < 2; i++) await timed(x.t.navigate, () => x.call('browser_navigate', { url }));
  // What an agent waits for before it can act on a new page: a build whose
  // navigate answers with the page's view is done; an older one (the title
  // alone) needs a browser_snapshot after it.
  for (let i = 0; i < 2; i++) {
    await timed(x.t.navigateToView, async () => {
      const r = await x.call('browser_navigate', { url });
      if (!/Page Snapshot/.test(resultText(r))) await x.call('browser_snapshot');
    });
  }
}

let status = 0;
const servers = [];
try {
  servers.push(await start(oldBin), await start(newBin));
  for (const x of servers) await round(x); // warm-up, not counted
  for (const x of servers) for (const k of Object.keys(x.t)) x.t[k] = [];
  for (let r = 0; r < ROUNDS; r++) {
    // Alternate which goes first, so neither always follows the other.
    const order = r % 2 ? [servers[1], servers[0]] : servers;
    for (const x of order) await round(x);
  }
  const [a, b] = servers;
  console.log(`A/B latency, ${ROUNDS} rounds, ms (median / p95)`);
  console.log(`  OLD ${a.bin}\n  NEW ${b.bin}`);
  console.log('call'.padEnd(22) + 'OLD'.padStart(16) + 'NEW'.padStart(16) + 'NEW/OLD'.padStart(10));
  const out = {};
  for (const k of Object.keys(a.t)) {
    const f = (xs) => `${median(xs).toFixed(2)} / ${percentile(xs, 95).toFixed(1)}`;
    const ratio = median(b.t[k]) / median(a.t[k]);
    out[k] = { old: median(a.t[k]), new: median(b.t[k]), ratio, n: a.t[k].length };
    console.log(k.padEnd(22) + f(a.t[k]).padStart(16) + f(b.t[k]).padStart(16) + ratio.toFixed(3).padStart(10));
  }
  console.log(`AB_JSON ${JSON.stringify(out)}`);
} catch (e) {
  console.error(e);
  status = 1;
} finally {
  for (const x of servers) await x.s.client.close();
  await pages.close();
  for (const x of servers) await awaitNoneLeft(x.dir).catch((e) => { console.error(e.message); status = 1; });
  dirs.removeParent();
}
process.exit(status);
