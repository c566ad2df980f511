// A worker taken over by a page (issue 36): the supervisor starts this in a
// worker's place (hostile.mjs writes the wrapper named by --worker), with
// the worker's own connection to the browser bridge as fd 4. It speaks raw
// CDP or BiDi there, as a compromised worker could, runs one scenario,
// writes what it saw as JSON to <plan>.result, and stays connected until
// <plan>.exit exists (its browser state lives as long as its connection).
//
//   node hostile-worker.mjs PLAN      PLAN: {"scenario", ...its arguments}
import { Socket } from 'node:net';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const planPath = process.argv[2];
const plan = JSON.parse(readFileSync(planPath, 'utf8'));
const sock = new Socket({ fd: 4, readable: true, writable: true });
const result = { scenario: plan.scenario, steps: [] };
let closed = null;
let nextId = 1;
const waiting = new Map();
let pending = Buffer.alloc(0);

sock.on('data', (chunk) => {
  pending = Buffer.concat([pending, chunk]);
  for (let nul; (nul = pending.indexOf(0)) >= 0;) {
    const text = pending.subarray(0, nul).toString('utf8');
    pending = pending.subarray(nul + 1);
    let m;
    try { m = JSON.parse(text); } catch { continue; }
    const w = m.id !== undefined && waiting.get(m.id);
    if (w) { waiting.delete(m.id); w(m); }
  }
});
const onClosed = (why) => {
  closed = closed || why;
  for (const w of waiting.values()) w({ closed });
  waiting.clear();
};
sock.on('close', () => onClosed('closed'));
sock.on('error', (e) => onClosed(e.code || String(e)));

// Send a command's text (with "id":N first) and wait for its answer, or
// the bridge closing the connection. Resolves to the answer message, or
// {closed}, or {timeout}.
function sendText(id, text, ms = 8000) {
  return new Promise((resolve) => {
    if (closed) { resolve({ closed }); return; }
    const t = setTimeout(() => { waiting.delete(id); resolve({ timeout: true }); }, ms);
    waiting.set(id, (m) => { clearTimeout(t); resolve(m); });
    sock.write(Buffer.concat([Buffer.from(text), Buffer.from([0])]));
  });
}

// An answer in one shape for CDP ({error: {message}}) and BiDi ({error, message}).
function summary(m) {
  if (m.error) return { error: true, message: m.message || m.error.message };
  if (m.closed) return { closed: m.closed };
  if (m.timeout) return { timeout: true };
  return { ok: true };
}

async function cmd(method, params = {}, extra = {}) {
  const id = nextId++;
  const m = await sendText(id, JSON.stringify({ id, method, params, ...extra }));
  result.steps.push({ method, params, answer: summary(m) });
  writeFileSync(`${planPath}.partial`, JSON.stringify(result));
  return m;
}

// A command of `bytes` bytes whose params are {"x":[[],[],...]}: millions of
// JSON values in little text (jansson builds ~140 bytes a value).
async function huge(method, bytes, extra = {}) {
  const id = nextId++;
  const head = `{"id":${id},"method":${JSON.stringify(method)},${Object.entries(extra).map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)},`).join('')}"params":{"x":[`;
  const n = Math.max(1, Math.floor((bytes - head.length - 3) / 3));
  const text = head + '[],'.repeat(n - 1) + '[]]}}';
  const started = Date.now();
  const m = await sendText(id, text, 120000);
  result.steps.push({ method, bytes: text.length, ms: Date.now() - started, answer: summary(m) });
  return m;
}

const scenarios = {
  // Firefox: every scoped command on its own user context, then the
  // unsubscribe spellings that would edit the bridge's subscription.
  async scoped({ pageUrl }) {
    const uc = (await cmd('browser.createUserContext')).result?.userContext;
    const ctx = (await cmd('browsingContext.create', { type: 'tab', userContext: uc })).result?.context;
    const mine = { userContexts: [uc] };
    await cmd('emulation.setTimezoneOverride', { timezone: 'Pacific/Kiritimati', ...mine });
    await cmd('emulation.setLocaleOverride', { locale: 'fr-CA', ...mine });
    await cmd('emulation.setScreenOrientationOverride', { screenOrientation: { natural: 'portrait', type: 'landscape-secondary' }, ...mine });
    await cmd('emulation.setGeolocationOverride', { coordinates: { latitude: 12.5, longitude: 45.25 }, ...mine });
    await cmd('permissions.setPermission', { descriptor: { name: 'geolocation' }, state: 'granted', origin: pageUrl, userContext: uc });
    await cmd('network.setExtraHeaders', { headers: [{ name: 'x-hostile', value: { type: 'string', value: 'yes' } }], ...mine });
    await cmd('script.addPreloadScript', { functionDeclaration: '() => { window.__hostile = "preloaded"; }', ...mine });
    const sub = (await cmd('session.subscribe', { events: ['log.entryAdded'], ...mine })).result?.subscription;
    await cmd('browsingContext.navigate', { context: ctx, url: `${pageUrl}/hostile`, wait: 'complete' });
    const probe = await cmd('script.evaluate', { expression: plan.probe, target: { context: ctx }, awaitPromise: true });
    result.own = JSON.parse(probe.result?.result?.value ?? 'null');
    // What the security review sent: Firefox has no userContexts here.
    const events = ['browsingContext.load', 'browsingContext.domContentLoaded', 'browsingContext.navigationStarted', 'network.beforeRequestSent'];
    result.unsubscribeByUserContext = await cmd('session.unsubscribe', { events, userContexts: [uc] });
    result.unsubscribeByContext = await cmd('session.unsubscribe', { events, contexts: [ctx] });
    result.unsubscribeAll = await cmd('session.unsubscribe', { events });
    result.unsubscribeOwn = await cmd('session.unsubscribe', { subscriptions: [sub] });
    // Offline last: its own page goes offline, nobody else's.
    await cmd('emulation.setNetworkConditions', { networkConditions: { type: 'offline' }, ...mine });
    const online = await cmd('script.evaluate', { expression: 'navigator.onLine', target: { context: ctx }, awaitPromise: false });
    result.ownOnline = online.result?.result?.value;
  },
  // Either browser: commands of many JSON values, then over the size bound.
  async huge({ method, sizes, extra }) {
    for (const bytes of sizes) {
      if (closed) break;
      const m = await huge(method, bytes, extra);
      if (m.closed) break;
    }
    result.closed = closed;
  },
};

try {
  await scenarios[plan.scenario](plan);
} catch (e) {
  result.failure = String(e.stack || e);
}
writeFileSync(`${planPath}.result`, JSON.stringify(result));
while (!existsSync(`${planPath}.exit`) && !closed) await new Promise((r) => setTimeout(r, 50));
process.exit(0);
