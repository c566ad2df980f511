#!/usr/bin/env node
// bench/page-timers.mjs - does a page keep its speed while an agent works on
// it? A page with a 100 ms interval timer and a requestAnimationFrame loop
// (tests/pages/page-timers.html) is measured for 3 s each: idle, during a
// burst of back-to-back browser_snapshot calls, during a burst of
// browser_evaluate calls, and after switching tabs away and back; headless,
// and headed on an Xvfb display when Xvfb is installed. Full speed is 10
// ticks/s and about 60 frames/s; 1 tick/s is Chromium's background-tab
// throttling.
//
// Run: node bench/page-timers.mjs (TABVISOR_BIN, default build-release/tabvisor).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectStdio, resultText, sleep, startPageServer, tabvisorBin, waitFor } from './common.mjs';

const PHASE_MS = 3000;

async function startXvfb() {
  if (spawnSync('Xvfb', ['-help']).error) return null;
  const x = spawn('Xvfb', ['-displayfd', '3', '-screen', '0', '1280x1024x24', '-nolisten', 'tcp'],
    { stdio: ['ignore', 'ignore', 'ignore', 'pipe'] });
  let out = '';
  x.stdio[3].on('data', (d) => { out += d; });
  if (!(await waitFor(() => /^\d+\n/.test(out), 10000))) { x.kill(); return null; }
  return { display: `:${out.trim()}`, stop: () => new Promise((r) => { x.once('exit', r); x.kill(); }) };
}

async function measure(client, label, during) {
  const stats = async () => {
    const r = await client.callTool({ name: 'browser_evaluate', arguments: { function: '() => stats()' } });
    if (r.isError) throw new Error(resultText(r));
    return r.structuredContent.result.value;
  };
  const a = await stats();
  const end = Date.now() + PHASE_MS;
  let calls = 0;
  if (during) {
    while (Date.now() < end) {
      const r = await client.callTool(during);
      if (r.isError) throw new Error(resultText(r));
      calls++;
    }
  } else {
    await sleep(PHASE_MS);
  }
  const b = await stats();
  const per = (k) => ((b[k] - a[k]) / (b.ms - a.ms)) * 1000;
  return { label, ticks: per('ticks'), frames: per('frames'), calls };
}

async function run(mode, extraArgs, env) {
  const scratch = mkdtempSync(join(process.env.TVBENCH_TMP || tmpdir(), 'timers-'));
  const pages = await startPageServer();
  const srv = await connectStdio({
    clientName: 'page-timers', command: tabvisorBin,
    args: ['--runtime-dir', join(scratch, 'run'), '--output-dir', join(scratch, 'out'), '--log-level', 'warning', ...extraArgs],
    env: { ...process.env, ...env },
  });
  const c = srv.client;
  const url = `${pages.url}/page-timers.html`;
  const rows = [];
  try {
    await c.callTool({ name: 'browser_navigate', arguments: { url } });
    rows.push(await measure(c, 'idle'));
    rows.push(await measure(c, 'snapshot burst', { name: 'browser_snapshot', arguments: {} }));
    rows.push(await measure(c, 'evaluate burst', { name: 'browser_evaluate', arguments: { function: '() => 1' } }));
    await c.callTool({ name: 'browser_tabs', arguments: { action: 'new', url } });
    await c.callTool({ name: 'browser_tabs', arguments: { action: 'select', index: 0 } });
    rows.push(await measure(c, 'tab selected again, snapshots', { name: 'browser_snapshot', arguments: {} }));
  } finally {
    await c.close();
    await pages.close();
    rmSync(scratch, { recursive: true, force: true });
  }
  for (const r of rows) {
    console.log(`| ${mode} | ${r.label} | ${r.ticks.toFixed(1)} | ${r.frames.toFixed(1)} | ${r.calls || '-'} |`);
  }
}

if (!existsSync(tabvisorBin)) throw new Error(`${tabvisorBin} is missing: build the release preset`);
console.log('| mode | phase | timer ticks/s (10 = full) | frames/s | calls |');
console.log('|---|---|---|---|---|');
await run('headless', [], {});
const x = await startXvfb();
if (x) {
  try {
    await run('headed (Xvfb)', ['--headed'], { DISPLAY: x.display });
  } finally {
    await x.stop();
  }
} else {
  console.log('(Xvfb is not installed: no headed run)');
}
