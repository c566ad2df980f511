// A server whose next worker is hostile (hostile-worker.mjs): the helpers
// the issue-36 tests share. The wrapper named by --worker runs the real
// worker, except once after arm(): then the hostile program takes the
// worker's place, with the worker's connection to the browser bridge.
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freshRuntimeDir, startServer, waitFor } from './lib.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const realWorker = process.env.TABVISOR_WORKER_BIN || join(here, '..', '..', 'build', 'tabvisor-worker');

export async function startHostileServer(args = [], opts = {}) {
  const dir = freshRuntimeDir();
  const plan = join(dir, 'plan.json');
  const wrapper = join(dir, 'worker.sh');
  writeFileSync(wrapper, `#!/bin/sh
# Taken once: the next worker after arm() is the hostile program.
if mv '${plan}' '${plan}.taken' 2>/dev/null; then
  exec '${process.execPath}' '${join(here, 'hostile-worker.mjs')}' '${plan}.taken' 2>'${plan}.stderr'
fi
exec '${realWorker}' "$@"
`);
  chmodSync(wrapper, 0o700);
  const srv = await startServer(['--worker', wrapper, ...args], opts);
  const taken = `${plan}.taken`;
  return {
    ...srv,
    // The next worker started runs scenario (an object: {scenario, ...}).
    arm(scenario) {
      for (const f of [taken, `${taken}.result`, `${taken}.exit`]) if (existsSync(f)) renameSync(f, `${f}.old`);
      writeFileSync(`${plan}.tmp`, JSON.stringify(scenario));
      renameSync(`${plan}.tmp`, plan);
    },
    // What the hostile worker saw, once it is done (null if it never was).
    async result(ms = 60000) {
      const ok = await waitFor(() => existsSync(`${taken}.result`), ms, 100);
      return ok ? JSON.parse(readFileSync(`${taken}.result`, 'utf8')) : null;
    },
    // What it printed (a failure to start shows here).
    stderrOfHostile() { return existsSync(`${plan}.stderr`) ? readFileSync(`${plan}.stderr`, 'utf8') : ''; },
    // Its steps so far, when it did not finish.
    partialOfHostile() { return existsSync(`${taken}.partial`) ? readFileSync(`${taken}.partial`, 'utf8') : ''; },
    // Let it go: it closes its connection and exits.
    release() { writeFileSync(`${taken}.exit`, ''); },
  };
}

// The supervisor's own resident memory (not its children's), in MB.
export function rssMb(pid) {
  const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+) kB/);
  return Number(m[1]) / 1024;
}
