// extension-lib.mjs - helpers shared by the relay and extension-mode tests:
// headless Chromium with build/extension loaded, driven over its own CDP
// pipe (no TCP port), and a small poller.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const build = join(here, '..', '..', 'build');
export const relayBin = process.env.TABVISOR_RELAY_BIN || join(build, 'tabvisor-relay');
export const relayWorkerBin = process.env.TABVISOR_RELAY_WORKER_BIN || join(build, 'tests', 'tabvisor-relay-testworker');
export const extDir = process.env.TABVISOR_EXTENSION_DIR || join(build, 'extension');
// As the supervisor does: Debian's /usr/bin/chromium is a shell wrapper.
export const chromiumBin = process.env.CHROMIUM ||
  (existsSync('/usr/lib/chromium/chromium') ? '/usr/lib/chromium/chromium' : 'chromium');
export const EXT_ID = 'kleajojcdmdjllklfgeficjcnpfpkabl';
// PROTO_VERSION of proto/proto.h: a relay-hello of another version is refused.
export const PROTO = 3;

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function until(what, fn, ms = 20000, step = 100) {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    last = await fn();
    if (last) return last;
    await sleep(step);
  }
  throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
}

// The browser's CDP over the pipe: NUL-terminated JSON both ways.
export class BrowserPipe {
  constructor(proc) {
    this.out = proc.stdio[3];
    this.nextId = 1;
    this.events = [];
    this.waiting = new Map();
    let buf = '';
    proc.stdio[4].on('data', (d) => {
      buf += d;
      let i;
      while ((i = buf.indexOf('\0')) >= 0) {
        const m = JSON.parse(buf.slice(0, i));
        buf = buf.slice(i + 1);
        if (m.id === undefined) {
          this.events.push(m);
          continue;
        }
        const w = this.waiting.get(m.id);
        if (w) {
          this.waiting.delete(m.id);
          if (m.error) w.reject(new Error(JSON.stringify(m.error)));
          else w.resolve(m.result);
        }
      }
    });
  }
  call(method, params = {}, sessionId) {
    const id = this.nextId++;
    const msg = { id, method, params };
    if (sessionId) msg.sessionId = sessionId;
    this.out.write(`${JSON.stringify(msg)}\0`);
    return new Promise((resolve, reject) => this.waiting.set(id, { resolve, reject }));
  }
}

// Headless Chromium with the extension, profile and HOME under dir. Resolves
// to {proc, browser} once the extension's service worker runs. A pairing URL
// given on the command line would open before the extension is loaded, so
// callers open it with browser.call('Target.createTarget').
export async function startChromiumWithExtension(dir) {
  // Chromium's own temp files (org.chromium.Chromium.*) stay under dir too.
  mkdirSync(join(dir, 'tmp'), { recursive: true });
  const proc = spawn(chromiumBin, ['--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    `--user-data-dir=${join(dir, 'profile')}`, `--load-extension=${extDir}`,
    `--disable-extensions-except=${extDir}`, '--silent-debugger-extension-api',
    '--remote-debugging-pipe', 'about:blank'],
  { stdio: ['ignore', 'ignore', process.env.TV_DEBUG ? 'inherit' : 'ignore', 'pipe', 'pipe'], detached: true,
    env: { ...process.env, HOME: dir, XDG_CONFIG_HOME: join(dir, 'config'), TMPDIR: join(dir, 'tmp') } });
  const browser = new BrowserPipe(proc);
  await until('the extension\'s service worker', async () => {
    const { targetInfos } = await browser.call('Target.getTargets');
    return targetInfos.find((t) => t.type === 'service_worker' && t.url.startsWith(`chrome-extension://${EXT_ID}/`));
  }, 30000, 200);
  return { proc, browser };
}

// Kill a Chromium started above, and crashpad, which leaves the process
// group (its command line names dir).
export function killChromium(proc, dir) {
  try { process.kill(-proc.pid, 'SIGKILL'); } catch { /* gone */ }
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (cmd.includes(dir) && cmd.includes('chrom')) process.kill(Number(pid), 'SIGKILL');
    } catch { /* gone */ }
  }
}

// Pair the extension as a user does: open its pairing page (the relay's
// port in the query, a short heartbeat for tests), type the code that
// `tabvisor pair` printed, submit. Resolves to the page's {targetId, status
// text} once it says paired (or rejects with what it says).
export async function pairExtension(browser, pairOutput, port, { heartbeatMs = 1000 } = {}) {
  const code = /Pairing code: ([A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4})/.exec(pairOutput)?.[1];
  if (!code) throw new Error(`no pairing code in: ${pairOutput}`);
  const url = `chrome-extension://${EXT_ID}/pair.html?port=${port}&heartbeat=${heartbeatMs}`;
  const { targetId } = await browser.call('Target.createTarget', { url });
  const { sessionId } = await browser.call('Target.attachToTarget', { targetId, flatten: true });
  const ev = async (expression) => (await browser.call('Runtime.evaluate',
    { expression, awaitPromise: true, returnByValue: true }, sessionId)).result.value;
  await until('the pairing page', () => ev('!!document.getElementById("code") && document.readyState === "complete"'), 10000, 100);
  await ev(`(() => { document.getElementById('code').value = ${JSON.stringify(code.toLowerCase())};
    document.getElementById('go').click(); })()`);
  const status = await until('the pairing to finish', async () => {
    const s = await ev('({state: document.getElementById("status").dataset.state, text: document.getElementById("status").textContent})');
    return s.state === 'paired' || s.state === 'error' ? s : null;
  }, 15000, 100);
  if (status.state !== 'paired') throw new Error(`pairing failed: ${status.text}`);
  return { targetId, code, status: status.text };
}

// Stop the extension's service worker the way Chrome stops an idle one
// (DevTools' ServiceWorker domain, from a page of the same browser), and wait
// until Chrome says it stopped. Returns that page's {targetId, sessionId},
// for the caller to close (after ServiceWorker.disable).
export async function stopExtensionWorker(browser) {
  const { targetId } = await browser.call('Target.createTarget', { url: 'about:blank' });
  const { sessionId } = await browser.call('Target.attachToTarget', { targetId, flatten: true });
  await browser.call('ServiceWorker.enable', {}, sessionId);
  const ours = (v) => v.scriptURL.startsWith(`chrome-extension://${EXT_ID}/`);
  const version = await until('the extension\'s worker version', () => browser.events.find((e) =>
    e.method === 'ServiceWorker.workerVersionUpdated' &&
    e.params.versions.some((v) => ours(v) && v.runningStatus === 'running'))
    ?.params.versions.find(ours));
  const from = browser.events.length;
  await browser.call('ServiceWorker.stopWorker', { versionId: version.versionId }, sessionId);
  // Stopped for sure: the version reported so (a later start is another event).
  await until('the extension\'s worker to stop', () => browser.events.slice(from).some((e) =>
    e.method === 'ServiceWorker.workerVersionUpdated' && e.params.versions.some((v) =>
      v.versionId === version.versionId && v.runningStatus === 'stopped')));
  return { targetId, sessionId };
}
