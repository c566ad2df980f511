#!/usr/bin/env node
// bench/tokens.mjs - what an agent reads to finish real tasks: tabvisor
// against @playwright/mcp, in one run, on the task corpus of e2e.tasks
// (third-party pages from Debian and npm packages, served on 127.0.0.1).
//
// Each configuration runs tests/e2e/tasks.test.mjs with TASKS_MEASURE set:
// every task then runs through a frugal scripted agent (the rules are in
// that file, "the frugal reader"): it looks for its target in the last tool
// result, then in the last whole-page snapshot it read, and calls
// browser_snapshot only when neither shows it or an action on a remembered
// ref fails. The bytes (UTF-8) of the text of every tool result it reads are
// counted; the checks a task makes to judge the outcome are not.
//
// The first configuration also runs @playwright/mcp (tests/e2e/package.json
// pins its version). Printed per configuration and per corpus (all tasks,
// the tuned ones, the held-out ones written after the budgets were set),
// over the tasks that pass on both servers: bytes read in all, the median
// task's bytes, calls in all, and the ratio to the peer; then passes and
// time over all tasks; then every task's bytes and calls on both servers.
// The last line is `TOKENS_JSON {...}`.
//
//   ./bench/tokens.sh                         default and --snapshot-mode full
//   TOKENS_CONFIGS='default;--snapshot-mode none' ./bench/tokens.sh
//   TOKENS_TASKS='jquery-ui' ./bench/tokens.sh  only tasks whose name matches

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const configs = (process.env.TOKENS_CONFIGS || 'default;--snapshot-mode full').split(';').map((c) => c.trim());
const scratch = mkdtempSync(join(process.env.TVBENCH_TMP || tmpdir(), 'tokens-'));
const PEER = 'playwright-mcp';

// Run the task suite once for one configuration; returns its measured tasks.
function runSuite(config, withPeer) {
  const out = join(scratch, `${configs.indexOf(config)}.json`);
  const args = ['--test', '--test-reporter=dot'];
  if (process.env.TOKENS_TASKS) args.push(`--test-name-pattern=${process.env.TOKENS_TASKS}`);
  args.push('tasks.test.mjs');
  const r = spawnSync(process.execPath, args, {
    cwd: join(root, 'tests', 'e2e'),
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      TASKS_MEASURE: out,
      TASKS_PEER: withPeer ? '1' : '0',
      TASKS_TV_ARGS: config === 'default' ? '' : config,
      TABVISOR_BIN: process.env.TABVISOR_BIN || join(root, 'build-release', 'tabvisor'),
    },
  });
  // A task that fails is a result here, not a reason to stop.
  try {
    return JSON.parse(readFileSync(out, 'utf8')).tasks;
  } catch {
    throw new Error(`the task suite (${config}) wrote no measurements (exit ${r.status})`);
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : 0;
};
const kb = (b) => `${(b / 1024).toFixed(1)} KB`;
const key = (t) => `${t.page}: ${t.title}`;

const peer = new Map();
const json = { configs: {} };
const sum = (xs, f) => xs.reduce((a, x) => a + f(x), 0);
const x = (a, b) => `${(a / b).toFixed(2)}x`;

// The figures of one configuration over some tasks, beside the peer's.
function figures(tv) {
  const both = tv.filter((t) => t.passed && peer.get(key(t))?.passed);
  const p = both.map((t) => peer.get(key(t)));
  const peerAll = tv.map((t) => peer.get(key(t))).filter(Boolean);
  return {
    tasks: tv.length,
    passed: tv.filter((t) => t.passed).length,
    both: both.length,
    bytes: sum(both, (t) => t.bytes),
    median: median(both.map((t) => t.bytes)),
    calls: sum(both, (t) => t.calls),
    moreCalls: both.filter((t) => t.calls > peer.get(key(t)).calls).map(key),
    ms: sum(tv, (t) => t.ms),
    peerOnly: tv.filter((t) => !t.passed && peer.get(key(t))?.passed).map(key),
    peer: { passed: peerAll.filter((t) => t.passed).length, bytes: sum(p, (t) => t.bytes),
      median: median(p.map((t) => t.bytes)), calls: sum(p, (t) => t.calls), ms: sum(peerAll, (t) => t.ms) },
    // The tasks where tabvisor reads most (bytes, the peer's bytes).
    heaviest: both.map((t) => [key(t), t.bytes, peer.get(key(t)).bytes]).sort((a, b) => b[1] - a[1]).slice(0, 6),
  };
}

const rows = [];
for (const [i, config] of configs.entries()) {
  const tasks = runSuite(config, i === 0);
  if (i === 0) for (const t of tasks.filter((t) => t.agent === PEER)) peer.set(key(t), t);
  const tv = tasks.filter((t) => t.agent === 'tabvisor');
  const groups = [['all', tv], ...[...new Set(tv.map((t) => t.corpus))].map((c) => [c, tv.filter((t) => t.corpus === c)])];
  json.configs[config] = {};
  for (const [corpus, list] of groups) {
    const m = figures(list);
    json.configs[config][corpus] = m;
    rows.push([config, corpus, m]);
    console.log(`\n${config}, ${corpus} tasks: tabvisor passes ${m.passed}/${m.tasks}, ${PEER} ${m.peer.passed}; ${m.both} pass on both`);
    console.log(`  bytes read: ${kb(m.bytes)} against ${kb(m.peer.bytes)} (${x(m.bytes, m.peer.bytes)})`);
    console.log(`  median task: ${kb(m.median)} against ${kb(m.peer.median)} (${x(m.median, m.peer.median)})`);
    console.log(`  calls: ${m.calls} against ${m.peer.calls}; tasks with more calls than the peer: ${m.moreCalls.length ? m.moreCalls.join('; ') : 'none'}`);
    console.log(`  time: ${(m.ms / 1000).toFixed(1)} s against ${(m.peer.ms / 1000).toFixed(1)} s`);
    if (m.peerOnly.length) console.log(`  passed by ${PEER} only: ${m.peerOnly.join('; ')}`);
    console.log('  most read:');
    for (const [k, b, pb] of m.heaviest) console.log(`    ${kb(b).padStart(9)} (${PEER} ${kb(pb)})  ${k}`);
  }
  // Every task: bytes read and calls, tabvisor's then the peer's (a task
  // that failed says so instead of its bytes).
  console.log(`\n${config}, per task: tabvisor bytes, calls | ${PEER} bytes, calls | task`);
  const shown = (t) => (!t ? '        —' : t.passed ? `${String(t.bytes).padStart(7)} B ${String(t.calls).padStart(2)}` : '   failed   ');
  for (const t of tv) console.log(`  ${shown(t)} | ${shown(peer.get(key(t)))} | ${t.corpus}: ${key(t)}`);
}

console.log('\n| tasks | server | passed | on both: bytes read | median task | calls | time (all tasks) |');
console.log('|---|---|---|---|---|---|---|');
for (const corpus of Object.keys(json.configs[configs[0]])) {
  const m0 = json.configs[configs[0]][corpus];
  console.log(`| ${corpus} | ${PEER} | ${m0.peer.passed}/${m0.tasks} | ${kb(m0.peer.bytes)} | ${kb(m0.peer.median)} | ${m0.peer.calls} | ${(m0.peer.ms / 1000).toFixed(0)} s |`);
  for (const [config, c, m] of rows) {
    if (c !== corpus) continue;
    console.log(`| ${corpus} | tabvisor ${config} | ${m.passed}/${m.tasks} | ${kb(m.bytes)} (${x(m.bytes, m.peer.bytes)}) | ` +
      `${kb(m.median)} (${x(m.median, m.peer.median)}) | ${m.calls} | ${(m.ms / 1000).toFixed(0)} s |`);
  }
}
console.log(`TOKENS_JSON ${JSON.stringify(json)}`);
rmSync(scratch, { recursive: true, force: true });
