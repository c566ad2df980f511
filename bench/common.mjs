// bench/common.mjs - what bench.mjs, vs-playwright.mjs and http-bench.mjs
// share: paths and binaries, the MCP SDK client, a page server for
// tests/pages on 127.0.0.1, statistics, machine facts, finding a run's
// processes by its runtime directory in /proc, and starting a stdio server
// through the SDK client. Nothing here measures anything by itself.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
// The SDK is installed for the end-to-end tests; import it by path so the
// benchmarks run from anywhere without node_modules of their own.
import { Client } from '../tests/e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js';
import { StdioClientTransport } from '../tests/e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js';
import { StreamableHTTPClientTransport } from '../tests/e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.js';

export { Client, StdioClientTransport, StreamableHTTPClientTransport };

// ---------------------------------------------------------------- paths

export const here = dirname(fileURLToPath(import.meta.url));
export const repoRoot = join(here, '..');
export const pagesDir = join(repoRoot, 'tests', 'pages');
export const sdkDir = join(repoRoot, 'tests', 'e2e', 'node_modules', '@modelcontextprotocol', 'sdk');
export const tabvisorBin = process.env.TABVISOR_BIN || join(repoRoot, 'build-release', 'tabvisor');
export const chromiumBin = process.env.CHROMIUM_BIN || '/usr/lib/chromium/chromium';

// ---------------------------------------------------------------- helpers

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Polls pred every `step` ms until it returns something truthy or `ms` have
// passed; resolves to pred's last value.
export async function waitFor(pred, ms = 10000, step = 50) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await pred();
    if (v || Date.now() > end) return v;
    await sleep(step);
  }
}

// The text parts of a tool result, joined by newlines.
export const resultText = (r) => (r.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

// The ref of the first snapshot line `- role "name" ... [ref=eN]`, or
// undefined.
export function refOf(snapshot, role, name) {
  for (const line of snapshot.split('\n')) {
    const m = line.match(/^\s*- ([\w-]+)(?: "((?:[^"\\]|\\.)*)")?.*\[ref=(\w+)\]/);
    if (m && m[1] === role && JSON.parse(`"${m[2] ?? ''}"`) === name) return m[3];
  }
  return undefined;
}

// Round every non-integer number in a JSON-able object to 2 decimals.
export function compact(o) {
  return JSON.parse(JSON.stringify(o, (k, v) => (typeof v === 'number' && !Number.isInteger(v) ? Number(v.toFixed(2)) : v)));
}

// ---------------------------------------------------------------- statistics

const sorted = (xs) => [...xs].sort((a, b) => a - b);

export function median(xs) {
  const s = sorted(xs);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

// Nearest rank on samples already sorted ascending: the smallest sample with
// at least p % of the samples at or below it (with 50 samples, p95 is the
// 48th smallest). null for no samples.
export function percentileSorted(s, p) {
  if (!s.length) return null;
  return s[Math.max(0, Math.ceil((p / 100) * s.length) - 1)];
}

export const percentile = (xs, p) => percentileSorted(sorted(xs), p);

// ---------------------------------------------------------------- pages

// tests/pages on an ephemeral 127.0.0.1 port: the end-to-end tests' own page
// server, so the benchmarks load exactly what the tests load; and a port for
// a server to listen on later, which the kernel will not hand out meanwhile.
export { startPageServer, freePort } from '../tests/e2e/lib.mjs';
// The e2e helpers turn the pool off for exact process counts; benchmarks
// measure tabvisor as it ships.
import { poolDefaulted } from '../tests/e2e/lib.mjs';
if (poolDefaulted) delete process.env.TABVISOR_POOL;

// ---------------------------------------------------------------- machine

export const nproc = () => Number(execFileSync('nproc').toString().trim());

// `chromium --version`, or undefined if it fails.
export function chromiumVersion() {
  try {
    return execFileSync(chromiumBin, ['--version'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
  } catch {
    return undefined;
  }
}

export const cpuModel = () => (readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.*)$/m) || [])[1] || 'unknown';

export function memTotalMiB() {
  const mem = readFileSync('/proc/meminfo', 'utf8').match(/^MemTotal:\s+(\d+)/m);
  return mem ? Math.round(Number(mem[1]) / 1024) : null;
}

// CMAKE_BUILD_TYPE from the CMakeCache.txt beside the binary, and whether the
// binary itself carries a sanitizer runtime.
export function buildInfo(bin = tabvisorBin) {
  const cache = join(dirname(bin), 'CMakeCache.txt');
  const text = existsSync(cache) ? readFileSync(cache, 'utf8') : '';
  return {
    buildType: (text.match(/^CMAKE_BUILD_TYPE:\w+=(.*)$/m) || [])[1] || 'unknown',
    sanitizers: readFileSync(bin).includes('AddressSanitizer'),
  };
}

// ---------------------------------------------------------------- processes

// Live (not zombie) processes other than this one whose command line
// mentions needle, and their descendants (the headless shell's renderers do
// not carry the profile path): [{pid, argv, startTicks, cpuTicks,
// reapedTicks}].
export function processesMentioning(needle) {
  const all = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').filter(Boolean);
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (f[0] === 'Z') continue;
      // Fields of stat counted after the name: ppid 1, utime, stime, cutime,
      // cstime (the last two: children it has reaped) 11-14, starttime 19.
      all.set(Number(name), { pid: Number(name), argv, ppid: Number(f[1]), startTicks: Number(f[19]),
        cpuTicks: Number(f[11]) + Number(f[12]), reapedTicks: Number(f[13]) + Number(f[14]) });
    } catch { /* exited meanwhile */ }
  }
  const hit = (pid) => all.get(pid).argv.join(' ').includes(needle);
  const found = [];
  for (const [pid, p] of all) {
    let q = pid;
    while (all.has(q) && !hit(q)) q = all.get(q).ppid;
    if (all.has(q)) {
      const { ppid, ...rest } = p;
      found.push(rest);
    }
  }
  return found;
}

// Waits up to 15 s for every process mentioning dir to go, then removes dir;
// throws, listing them, if any is left.
export async function awaitNoneLeft(dir) {
  const gone = await waitFor(() => processesMentioning(dir).length === 0, 15000);
  if (!gone) {
    const left = processesMentioning(dir).map((p) => `${p.pid} ${p.argv.join(' ').slice(0, 120)}`);
    throw new Error(`processes left behind in ${dir}:\n${left.join('\n')}`);
  }
  rmSync(dir, { recursive: true, force: true });
}

// Every server of a run gets its own runtime directory under one parent; the
// shell wrapper passes the parent in TVBENCH_TMP so it can check afterwards
// that nothing mentioning it is left. Without TVBENCH_TMP the parent is a
// fresh directory named by prefix in the system's temporary directory.
export function runtimeDirs(prefix) {
  const parent = process.env.TVBENCH_TMP || mkdtempSync(join(tmpdir(), prefix));
  const dirs = [];
  return {
    parent,
    make() {
      const dir = mkdtempSync(join(parent, 'rt-'));
      dirs.push(dir);
      return dir;
    },
    // Last resort on failure: end this run's own processes (found by their
    // runtime directories, which nothing else mentions).
    killLeftovers() {
      for (const dir of dirs) {
        for (const p of processesMentioning(dir)) {
          try { process.kill(p.pid, 'SIGKILL'); } catch { /* gone */ }
        }
        rmSync(dir, { recursive: true, force: true });
      }
    },
    // Removes the parent if this script made it.
    removeParent() {
      if (!process.env.TVBENCH_TMP) rmSync(parent, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------- servers

// Spawns an MCP server through the SDK's stdio transport; `connect` sends
// `initialize` and resolves once the answer is in (and `initialized` sent).
// connectMs is that spawn-to-answer time. stderr is collected for log().
export async function connectStdio({ clientName, command, args, cwd, env }) {
  const transport = new StdioClientTransport({ command, args, cwd, env, stderr: 'pipe' });
  let log = '';
  transport.stderr?.on('data', (d) => { log += d.toString(); });
  const client = new Client({ name: clientName, version: '1.0.0' });
  const t0 = performance.now();
  await client.connect(transport);
  const connectMs = performance.now() - t0;
  return { client, transport, pid: transport.pid, connectMs, log: () => log };
}
