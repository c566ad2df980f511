// procs.mjs - the processes of one tabvisor, found by its runtime dir in
// their command lines: its workers (oldest first), its Chromium's browser
// process and renderers. For the tests that kill them.
import { readFileSync } from 'node:fs';
import assert from 'node:assert/strict';
import { call, text, processesMentioning, onFirefox } from './lib.mjs';

// Workers oldest first, by the sequence number in their channel's path
// (w-N.sock). Not by their place in the /proc listing: Node sorts it as
// strings (10012 before 9987), and pids wrap at pid_max (32768 on a small
// machine) once the kill loops have started thousands of processes.
export const workerSeq = (p) => {
  const m = p.cmd.match(/\/w-(\d+)\.sock/);
  if (!m) throw new Error(`no channel path in the worker's command line: ${p.cmd}`);
  return Number(m[1]);
};
export const workersOf = (dir) => processesMentioning(dir).filter((p) => p.cmd.includes('tabvisor-worker'))
  .sort((a, b) => workerSeq(a) - workerSeq(b));
// Firefox: its processes are told by their binary (its profile dir's name
// has "tabvisor" in it); content processes carry -contentproc, those
// showing pages end in "tab".
const isFirefox = (p) => /\/firefox(-esr)?$/.test(p.cmd.split(' ')[0]);
export const chromiumOf = (dir) => processesMentioning(dir).filter((p) => (onFirefox ? isFirefox(p) : !p.cmd.includes('tabvisor')));
// Chromium's browser process: the one started by tabvisor itself (a child
// Chromium just forked shows the same command line until it execs).
const parentOf = (pid) => { try { const st = readFileSync(`/proc/${pid}/stat`, 'utf8'); return Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[1]); } catch { return 0; } };
const cmdOf = (pid) => { try { return readFileSync(`/proc/${pid}/cmdline`, 'utf8'); } catch { return ''; } };
export const browserMain = (dir) => (onFirefox
  ? processesMentioning(dir).filter((p) => isFirefox(p) && !p.cmd.includes('-contentproc'))
  : processesMentioning(dir).filter((p) => !p.cmd.includes('tabvisor') && !p.cmd.includes('--type=') &&
    !p.cmd.includes('crashpad') && !cmdOf(parentOf(p.pid)).includes('chromium')));
export const renderers = (dir) => chromiumOf(dir).filter((p) => (onFirefox
  ? p.cmd.includes('-contentproc') && / tab\s*$/.test(p.cmd)
  : p.cmd.includes('--type=renderer'))).map((p) => p.pid);

export function cpuTicks(pid) {
  try {
    const st = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return 0;
  }
}

// The renderer showing session sid's page: the one whose CPU time grows
// while that page spins for a moment (renderers carry no URL or session in
// their command line, and Chromium keeps a spare one around).
export async function rendererOf(srv, sid) {
  for (let attempt = 0; attempt < 3; attempt++) {
    const rs = renderers(srv.runtimeDir);
    const before = rs.map(cpuTicks);
    const r = await call(srv.client, 'browser_evaluate', { sessionId: sid, function: '() => { const e = Date.now() + 200; while (Date.now() < e); }' });
    assert.equal(r.isError, false, text(r));
    const grew = rs.map((p, i) => cpuTicks(p) - before[i]);
    const best = Math.max(...grew);
    // 200 ms of spinning is up to 20 ticks (fewer on a busy machine);
    // anything else moved far less.
    if (best >= 3 && grew.filter((g) => g > best / 3).length === 1) return rs[grew.indexOf(best)];
    console.log(`rendererOf: ${rs} grew ${grew}`);
  }
  throw new Error(`could not tell which renderer shows the page (${renderers(srv.runtimeDir)})`);
}

