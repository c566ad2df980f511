// extension.test.mjs - --browser-mode extension end to end: tabvisor starts
// tabvisor-relay (fresh runtime dir and secret file, a test port on
// 127.0.0.1), the test pairs a headless Chromium that loads build/extension,
// and the official SDK client drives the user's browser through
// chrome.debugger: the same results as shared mode on the same pages, two
// sessions in their own tabs, a relay killed mid-call and restarted, two
// tabvisor processes on one relay, and the tools chrome.debugger cannot serve.
// TV_DEBUG=1 runs tabvisor at debug level and prints its, the relay's and
// Chromium's logs; TV_KEEP=1 keeps the temp dir (profile, crash reports).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, existsSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { startServer, startPageServer, call, text, refOf, processesMentioning, tabvisorBin, serverEnv,
  freePort } from './lib.mjs';
import { relayWorkerBin, EXT_ID, PROTO, sleep, until, startChromiumWithExtension, killChromium,
  stopExtensionWorker, pairExtension } from './extension-lib.mjs';

let dir, relayDir, secretFile, port, pages, chromium, browser, srvA, shared;
// A fake worker's proof in relay-hello (any 32..64 hex digits: it names sessions of its own).
const PROBE_PROOF = '0123456789abcdef0123456789abcdef';


const relayArgs = () => ['--extension', '--relay-port', String(port), '--relay-runtime-dir', relayDir,
  '--relay-secret-file', secretFile, '--caps', 'all',
  ...(process.env.TV_DEBUG ? ['--log-level', 'debug'] : [])];

// The discovery file of the live relay (its pid, ipc URL).
function discovery() {
  try {
    return JSON.parse(readFileSync(join(relayDir, 'relay.json'), 'utf8'));
  } catch {
    return null;
  }
}

// One request from a throw-away fake worker (JSON lines <-> nng).
async function relayRequest(lines, ms = 5000) {
  const d = discovery();
  if (!d) return null;
  const p = spawn(relayWorkerBin, [d.ipc], { stdio: ['pipe', 'pipe', 'ignore'] });
  const replies = [];
  const done = new Promise((resolve) => {
    createInterface({ input: p.stdout }).on('line', (line) => {
      const m = JSON.parse(line);
      if (m.connected) {
        for (const l of lines) p.stdin.write(`${JSON.stringify(l)}\n`);
        return;
      }
      if (m.type === 450) replies.push(m.body);
      if (replies.length === lines.length) resolve(replies);
    });
    setTimeout(() => resolve(replies), ms);
  });
  const r = await done;
  p.stdin.end();
  p.kill();
  return r;
}

const extensionConnected = async () =>
  (await relayRequest([{ type: 408, id: 1, body: {} }], 2000))?.[0]?.result?.extension === true;

function ok(r) {
  assert.ok(!r.isError, `tool failed: ${text(r)}`);
  return r;
}

function errCode(r) {
  assert.equal(r.isError, true, `expected an error, got: ${text(r)}`);
  return r.structuredContent?.error?.code;
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tv-ext-'));
  relayDir = join(dir, 'relay-run');
  secretFile = join(dir, 'secret');
  port = await freePort();
  pages = await startPageServer();
  srvA = await startServer(relayArgs());
  // tabvisor starts the relay at once (the extension connects before any session).
  const d = await until('relay.json', discovery, 15000);
  assert.match(d.ipc, /^ipc:\/\//);
  // Before pairing: no extension, a structured error at once (not a hang).
  const t0 = Date.now();
  const early = await call(srvA.client, 'browser_navigate', { url: 'about:blank' });
  assert.equal(early.structuredContent?.error?.code, 'EXTENSION_NOT_CONNECTED', text(early));
  assert.ok(Date.now() - t0 < 10000, `took ${Date.now() - t0} ms`);
  // `tabvisor pair` with the server's own relay flags runs `tabvisor-relay pair` for that relay.
  const out = execFileSync(tabvisorBin, ['pair', '--relay-port', String(port), '--relay-secret-file', secretFile],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], env: serverEnv() });
  assert.match(out, new RegExp(`chrome-extension://${EXT_ID}/pair\\.html\\?port=${port} `));
  ({ proc: chromium, browser } = await startChromiumWithExtension(dir));
  await pairExtension(browser, out, port);
  await until('the extension to connect to the relay', extensionConnected, 30000, 300);
}, { timeout: 90000 });

after(async () => {
  if (process.env.TV_DEBUG) {
    console.error(srvA?.stderr().slice(-30000));
    try { console.error(readFileSync(join(relayDir, 'relay.log'), 'utf8').slice(-20000)); } catch { /* none */ }
  }
  await shared?.close().catch(() => {});
  await srvA?.close().catch(() => {});
  if (chromium) killChromium(chromium, dir);
  await pages?.close();
  // The relay tabvisor started dies with it (SIGTERM at exit).
  await until('no relay left', () => processesMentioning(relayDir).length === 0, 10000).catch(() => {});
  for (const p of processesMentioning(relayDir)) process.kill(p.pid, 'SIGKILL');
  if (dir && !process.env.TV_KEEP) rmSync(dir, { recursive: true, force: true });
});

// navigate, snapshot, click, type: the steps and what each returns.
async function basicFlow(client, base) {
  const out = [];
  const nav = ok(await call(client, 'browser_navigate', { url: `${base}/counter.html` }));
  out.push(text(nav).includes('Counter'));
  const snap = text(ok(await call(client, 'browser_snapshot')));
  const ref = refOf(snap, 'button', 'Increment');
  assert.ok(ref, snap);
  ok(await call(client, 'browser_click', { target: ref, element: 'Increment', snapshot: 'none' }));
  ok(await call(client, 'browser_click', { target: ref, element: 'Increment', snapshot: 'none' }));
  const after = text(ok(await call(client, 'browser_snapshot')));
  out.push(/Count: 2/.test(after));
  ok(await call(client, 'browser_navigate', { url: `${base}/forms-inputs.html` }));
  ok(await call(client, 'browser_type', { target: '#i-search', text: 'kittens', snapshot: 'none' }));
  const v = ok(await call(client, 'browser_evaluate',
    { function: '() => document.getElementById("i-search").value' }));
  out.push(text(v));
  out.push(snap.replace(/\[ref=\w+\]/g, ''), after.replace(/\[ref=\w+\]/g, ''));
  return out;
}

test('navigate, snapshot, click and type give the same results as shared mode', async () => {
  const ext = await basicFlow(srvA.client, pages.url);
  assert.equal(ext[0], true);
  assert.equal(ext[1], true, ext[4]);
  assert.match(ext[2], /kittens/);
  shared = await startServer([]);
  const sh = await basicFlow(shared.client, pages.url);
  assert.deepEqual(ext, sh);
  await shared.close();
  shared = null;
}, { timeout: 120000 });

// The popup's view of the relay: session id -> tab ids.
async function popupSessions() {
  const { targetId } = await browser.call('Target.createTarget', { url: `chrome-extension://${EXT_ID}/popup.html` });
  const { sessionId } = await browser.call('Target.attachToTarget', { targetId, flatten: true });
  const read = async () => (await browser.call('Runtime.evaluate', { returnByValue: true,
    expression: `JSON.stringify([...document.querySelectorAll('li.session')].map((li) =>
      [li.dataset.session, [...li.querySelectorAll('li.tab')].map((t) => Number(t.dataset.tabId))]))` },
  sessionId)).result.value;
  const v = await until('the popup to list sessions', async () => {
    const s = JSON.parse((await read()) || '[]');
    return s.length >= 2 ? s : null;
  }, 10000, 200);
  await browser.call('Target.closeTarget', { targetId });
  return Object.fromEntries(v);
}

// Through chrome.debugger the "load" lifecycle event of a navigation is
// sometimes never sent (seen on the same page loaded again); navigations
// still end on time.
test('the same page navigated to again and again loads each time', async () => {
  const c = srvA.client;
  for (let i = 0; i < 4; i++) {
    const t0 = Date.now();
    assert.match(text(ok(await call(c, 'browser_navigate', { url: `${pages.url}/counter.html` }))), /Counter/);
    assert.ok(Date.now() - t0 < 10000, `navigation ${i} took ${Date.now() - t0} ms`);
  }
}, { timeout: 120000 });

test('two sessions at once, each in its own tabs; neither reaches the other\'s', async () => {
  const c = srvA.client;
  const a = ok(await call(c, 'browser_session_create', {})).structuredContent.sessionId;
  const b = ok(await call(c, 'browser_session_create', {})).structuredContent.sessionId;
  await Promise.all([
    call(c, 'browser_navigate', { sessionId: a, url: `${pages.url}/counter.html` }).then(ok),
    call(c, 'browser_navigate', { sessionId: b, url: `${pages.url}/forms-inputs.html` }).then(ok),
  ]);
  const ta = text(ok(await call(c, 'browser_snapshot', { sessionId: a })));
  const tb = text(ok(await call(c, 'browser_snapshot', { sessionId: b })));
  assert.match(ta, /Counter/);
  assert.doesNotMatch(ta, /Search/);
  assert.match(tb, /Search/);
  // Each session has one tab: the other's is no index of its.
  assert.equal(errCode(await call(c, 'browser_tabs', { sessionId: a, action: 'select', index: 1 })), 'TAB_NOT_FOUND');
  // At the relay: the two sessions own disjoint tabs, and a third party gets
  // TAB_NOT_FOUND for each (and cannot take over a session id in use).
  const sessions = await popupSessions();
  const tabsA = sessions[a], tabsB = sessions[b];
  assert.ok(tabsA?.length === 1 && tabsB?.length === 1, JSON.stringify(sessions));
  assert.notEqual(tabsA[0], tabsB[0]);
  const r = await relayRequest([
    { type: 400, id: 1, body: { sessionId: 'intruder', pid: process.pid, proto: PROTO, proof: PROBE_PROOF } },
    { type: 405, id: 2, body: { tabId: tabsA[0], method: 'Runtime.evaluate', params: { expression: 'document.title' } } },
    { type: 405, id: 3, body: { tabId: tabsB[0], method: 'Runtime.evaluate', params: { expression: 'document.title' } } },
    { type: 404, id: 4, body: { tabId: tabsA[0] } },
  ]);
  assert.equal(r[0].ok, true);
  assert.deepEqual(r.slice(1).map((x) => x.error?.code), ['TAB_NOT_FOUND', 'TAB_NOT_FOUND', 'TAB_NOT_FOUND']);
  const taken = await relayRequest([{ type: 400, id: 1, body: { sessionId: a, pid: process.pid, proto: PROTO, proof: PROBE_PROOF } }]);
  assert.equal(taken[0].ok, false);
  // Both still work.
  assert.match(text(ok(await call(c, 'browser_snapshot', { sessionId: a }))), /Counter/);
  ok(await call(c, 'browser_session_close', { sessionId: a }));
  ok(await call(c, 'browser_session_close', { sessionId: b }));
}, { timeout: 120000 });

test('a popup (window.open) becomes a tab of the opener\'s session, set up like any tab', async () => {
  const c = srvA.client;
  const s = ok(await call(c, 'browser_session_create', {})).structuredContent.sessionId;
  ok(await call(c, 'browser_navigate', { sessionId: s, url: `${pages.url}/counter.html` }));
  const tabsOf = async () => ok(await call(c, 'browser_tabs', { sessionId: s, action: 'list' })).structuredContent.tabs;
  ok(await call(c, 'browser_evaluate', { sessionId: s, function: `() => { window.open('${pages.url}/forms-inputs.html'); }` }));
  let list = await until('the popup as tab 1', async () => { const t = await tabsOf(); return t.length === 2 ? t : null; }, 15000, 200);
  assert.equal(list[0].current, true);
  ok(await call(c, 'browser_tabs', { sessionId: s, action: 'select', index: 1 }));
  assert.match(text(ok(await call(c, 'browser_snapshot', { sessionId: s }))), /Search/);
  ok(await call(c, 'browser_type', { sessionId: s, target: '#i-search', text: 'in the popup', snapshot: 'none' }));
  assert.match(text(ok(await call(c, 'browser_evaluate', { sessionId: s,
    function: '() => document.getElementById("i-search").value' }))), /in the popup/);
  // The default session does not see it.
  assert.equal((await tabsOf()).length, 2);
  const other = ok(await call(c, 'browser_tabs', { action: 'list' })).structuredContent.tabs;
  assert.ok(other.every((t) => !/forms-inputs/.test(t.url)), JSON.stringify(other));
  ok(await call(c, 'browser_session_close', { sessionId: s }));
}, { timeout: 120000 });

test('a link with target=_blank opens a tab of the clicking session, set up like any tab', async () => {
  const c = srvA.client;
  const s = ok(await call(c, 'browser_session_create', {})).structuredContent.sessionId;
  ok(await call(c, 'browser_navigate', { sessionId: s, url: `${pages.url}/counter.html` }));
  ok(await call(c, 'browser_evaluate', { sessionId: s, function: `() => {
    const a = document.createElement('a');
    a.id = 'blank'; a.href = '/forms-inputs.html?blank'; a.target = '_blank'; a.textContent = 'open';
    document.body.append(a);
  }` }));
  ok(await call(c, 'browser_click', { sessionId: s, target: '#blank', snapshot: 'none' }));
  const tabsOf = async () => ok(await call(c, 'browser_tabs', { sessionId: s, action: 'list' })).structuredContent.tabs;
  const list = await until('the new tab as tab 1', async () => { const t = await tabsOf(); return t.length === 2 ? t : null; }, 15000, 200);
  assert.equal(list[0].current, true);
  ok(await call(c, 'browser_tabs', { sessionId: s, action: 'select', index: 1 }));
  assert.match(text(ok(await call(c, 'browser_snapshot', { sessionId: s }))), /Search/);
  const other = ok(await call(c, 'browser_tabs', { action: 'list' })).structuredContent.tabs;
  assert.ok(other.every((t) => !/\?blank/.test(t.url)), JSON.stringify(other));
  ok(await call(c, 'browser_session_close', { sessionId: s }));
}, { timeout: 120000 });

// An extension page of the test browser, to act as the user's hand
// (chrome.tabs.group is what dragging a tab into a group does).
async function extensionPage() {
  const { targetId } = await browser.call('Target.createTarget', { url: `chrome-extension://${EXT_ID}/options.html` });
  const { sessionId } = await browser.call('Target.attachToTarget', { targetId, flatten: true });
  const ev = async (expression) => (await browser.call('Runtime.evaluate',
    { expression, awaitPromise: true, returnByValue: true }, sessionId)).result.value;
  await until('the extension page', () => ev('typeof chrome.tabs?.group === "function"'), 10000, 100);
  return { ev, close: () => browser.call('Target.closeTarget', { targetId }) };
}

test('a tab the user drags into a session\'s tab group becomes that session\'s tab, and only its', async () => {
  const c = srvA.client;
  const s = ok(await call(c, 'browser_session_create', {})).structuredContent.sessionId;
  ok(await call(c, 'browser_navigate', { sessionId: s, url: `${pages.url}/counter.html?group` }));
  // The user's own tab, in no session.
  const user = await browser.call('Target.createTarget', { url: `${pages.url}/forms-inputs.html?user` });
  const ext = await extensionPage();
  try {
    const find = `(await chrome.tabs.query({})).find((t) => (t.url || '').includes('?user'))`;
    await until('the user\'s tab to load', () => ext.ev(`(async () => (${find})?.status === 'complete')()`), 15000, 200);
    const before = ok(await call(c, 'browser_tabs', { sessionId: s, action: 'list' })).structuredContent.tabs;
    assert.equal(before.length, 1);
    const tabId = await ext.ev(`(async () => {
      const t = ${find};
      const own = (await chrome.tabs.query({})).find((x) => (x.url || '').includes('?group'));
      await chrome.tabs.group({ tabIds: [t.id], groupId: own.groupId });
      return t.id;
    })()`);
    assert.ok(Number.isInteger(tabId), String(tabId));
    // The group's title, which every extension can read, is a label, not the
    // session id that drives the session.
    const titles = await ext.ev('(async () => (await chrome.tabGroups.query({})).map((g) => g.title))()');
    assert.ok(titles.length >= 1 && titles.every((t) => /^tabvisor \d+$/.test(t)), JSON.stringify(titles));
    assert.ok(!JSON.stringify(titles).includes(s));
    const tabsOf = async () => ok(await call(c, 'browser_tabs', { sessionId: s, action: 'list' })).structuredContent.tabs;
    const list = await until('the dragged tab as tab 1', async () => { const t = await tabsOf(); return t.length === 2 ? t : null; }, 15000, 200);
    assert.match(list[1].url, /forms-inputs\.html\?user/);
    ok(await call(c, 'browser_tabs', { sessionId: s, action: 'select', index: 1 }));
    assert.match(text(ok(await call(c, 'browser_snapshot', { sessionId: s }))), /Search/);
    ok(await call(c, 'browser_type', { sessionId: s, target: '#i-search', text: 'dragged', snapshot: 'none' }));
    assert.match(text(ok(await call(c, 'browser_evaluate', { sessionId: s,
      function: '() => document.getElementById("i-search").value' }))), /dragged/);
    // The default session does not see it.
    const other = ok(await call(c, 'browser_tabs', { action: 'list' })).structuredContent.tabs;
    assert.ok(other.every((t) => !/\?user/.test(t.url)), JSON.stringify(other));
    // Shared, not created: the session's end leaves it open.
    ok(await call(c, 'browser_session_close', { sessionId: s }));
    await sleep(500);
    assert.equal(await ext.ev(`chrome.tabs.get(${tabId}).then(() => true, () => false)`), true);
  } finally {
    await ext.close();
    await browser.call('Target.closeTarget', { targetId: user.targetId }).catch(() => {});
  }
}, { timeout: 120000 });

test('a tab the user drags out of a session\'s tab group leaves that session, debugger detached, and stays open', async () => {
  const c = srvA.client;
  const s = ok(await call(c, 'browser_session_create', {})).structuredContent.sessionId;
  ok(await call(c, 'browser_navigate', { sessionId: s, url: `${pages.url}/counter.html` }));
  // Tab 1, made by the session (so in its group), with something to lose.
  ok(await call(c, 'browser_tabs', { sessionId: s, action: 'new', url: `${pages.url}/forms-inputs.html?out` }));
  const tabsOf = async () => ok(await call(c, 'browser_tabs', { sessionId: s, action: 'list' })).structuredContent.tabs;
  await until('tab 1', async () => (await tabsOf()).length === 2, 15000, 200);
  ok(await call(c, 'browser_tabs', { sessionId: s, action: 'select', index: 1 }));
  ok(await call(c, 'browser_type', { sessionId: s, target: '#i-search', text: 'mine', snapshot: 'none' }));
  ok(await call(c, 'browser_tabs', { sessionId: s, action: 'select', index: 0 }));
  const ext = await extensionPage();
  let tabId;
  try {
    const find = `(await chrome.tabs.query({})).find((t) => (t.url || '').includes('?out'))`;
    const attachedTo = (id) => ext.ev(`chrome.debugger.getTargets().then((ts) => !!ts.find((t) => t.tabId === ${id})?.attached)`);
    tabId = await ext.ev(`(async () => (${find}).id)()`);
    assert.ok(Number.isInteger(tabId), String(tabId));
    assert.equal(await attachedTo(tabId), true);
    // What dragging it out of the group does.
    await ext.ev(`chrome.tabs.ungroup(${tabId}).then(() => true)`);
    await until('the session to lose tab 1', async () => (await tabsOf()).length === 1, 15000, 200);
    assert.ok((await tabsOf()).every((t) => !/\?out/.test(t.url)));
    assert.equal(await attachedTo(tabId), false);
    // Gone for the session: no tab 1 to select, and the relay refuses the tab.
    assert.equal(errCode(await call(c, 'browser_tabs', { sessionId: s, action: 'select', index: 1 })), 'TAB_NOT_FOUND');
    const r = await relayRequest([{ type: 400, id: 1, body: { sessionId: 'drag-out-probe', pid: process.pid, proto: PROTO, proof: PROBE_PROOF } },
      { type: 405, id: 2, body: { tabId, method: 'Runtime.evaluate', params: { expression: '1' } } }]);
    assert.equal(r[1]?.error?.code, 'TAB_NOT_FOUND', JSON.stringify(r));
    // The session goes on in its own tab; its end leaves the user's tab open.
    assert.match(text(ok(await call(c, 'browser_snapshot', { sessionId: s }))), /Counter/);
    ok(await call(c, 'browser_session_close', { sessionId: s }));
    await sleep(500);
    assert.equal(await ext.ev(`chrome.tabs.get(${tabId}).then(() => true, () => false)`), true);
    assert.equal(await ext.ev(`chrome.tabs.get(${tabId}).then((t) => t.url)`), `${pages.url}/forms-inputs.html?out`);
  } finally {
    if (tabId) await ext.ev(`chrome.tabs.remove(${tabId}).then(() => true, () => false)`).catch(() => {});
    await ext.close();
  }
}, { timeout: 120000 });

// A new session of srvA in a 1280x720 tab, for pages whose cross-site frame comes from a
// second page server reached as localhost (another site than 127.0.0.1: Chromium runs the
// frame out of process). fn gets {c, s, cross, load}; load(page, want) opens frames-top.html
// with that page in the frame and waits until the snapshot matches want.
async function inCrossSiteTab(fn) {
  const c = srvA.client;
  const other = await startPageServer();
  const s = ok(await call(c, 'browser_session_create', {})).structuredContent.sessionId;
  const cross = other.url.replace('127.0.0.1', 'localhost');
  const load = async (page, want) => {
    ok(await call(c, 'browser_navigate', { sessionId: s, url: `${pages.url}/frames-top.html?cross=${encodeURIComponent(cross)}&page=${page}` }));
    return until(`${page} in the frame`, async () => {
      const t = text(ok(await call(c, 'browser_snapshot', { sessionId: s })));
      return want.test(t) && /button "Count"/.test(t) ? t : null;
    }, 15000, 200);
  };
  try {
    ok(await call(c, 'browser_resize', { sessionId: s, width: 1280, height: 720 }));
    await fn({ c, s, cross, load });
  } finally {
    await call(c, 'browser_session_close', { sessionId: s });
    await other.close();
  }
}

test('a cross-site (out-of-process) iframe below the fold in an extension tab: snapshot, click, type, hover and check inside it', async () => {
  await inCrossSiteTab(async ({ c, s, cross, load }) => {
    // The frame starts below the fold: the first click must scroll the top page. In a tab that
    // draws no frames, input sent to the page went by stale hit-test data and reached the
    // top document's <iframe> instead (docs/extension-mode.md); it now goes to the frame's session.
    let snap = await load('frames-cross.html', /button "Go"/);
    const city = refOf(snap, 'textbox', 'City');
    const go = refOf(snap, 'button', 'Go');
    assert.match(go ?? '', /^f\d+e\d+$/, snap);
    const k = go.match(/^(f\d+)/)[1];
    // A listener in the top document: a click meant for the frame must not reach it.
    ok(await call(c, 'browser_evaluate', { sessionId: s, function:
      "() => { window.topClicks = 0; addEventListener('click', () => window.topClicks++, true); }" }));
    ok(await call(c, 'browser_click', { sessionId: s, target: go, snapshot: 'none' }));
    snap = text(ok(await call(c, 'browser_snapshot', { sessionId: s })));
    assert.match(snap, /status \[ref=f\d+e\d+\]: Going to +at \d+,\d+/);
    // Back to the top, then type (which scrolls again) and click.
    ok(await call(c, 'browser_evaluate', { sessionId: s, function: '() => scrollTo(0, 0)' }));
    ok(await call(c, 'browser_type', { sessionId: s, target: city, text: 'Lisbon', snapshot: 'none' }));
    ok(await call(c, 'browser_evaluate', { sessionId: s, function: '() => scrollTo(0, 0)' }));
    ok(await call(c, 'browser_click', { sessionId: s, target: go, snapshot: 'none' }));
    snap = text(ok(await call(c, 'browser_snapshot', { sessionId: s })));
    const at = snap.match(/status \[ref=f\d+e\d+\]: Going to Lisbon at (\d+),(\d+)/);
    assert.ok(at, snap);
    // The event's point (the frame's own viewport) is inside the button.
    const box = ok(await call(c, 'browser_evaluate', { sessionId: s, target: go,
      function: '(el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }' }))
      .structuredContent.result.value;
    const [x, y] = [Number(at[1]), Number(at[2])];
    assert.ok(x >= box[0] && x <= box[2] && y >= box[1] && y <= box[3], `click at ${x},${y}, button ${box}`);
    assert.equal(ok(await call(c, 'browser_evaluate', { sessionId: s, function: '() => window.topClicks' }))
      .structuredContent.result.value, 0);
    // A fresh load, the frame below the fold again: a hover as the first pointer input
    // (on the old route it never reached the frame, 3 of 3 runs), then a checkbox.
    snap = await load('frames-cross.html', /note "Tip"/);
    const tip = refOf(snap, 'note', 'Tip');
    const agree = refOf(snap, 'checkbox', 'Agree');
    assert.ok(agree && tip, snap);
    ok(await call(c, 'browser_evaluate', { sessionId: s, function:
      "() => { window.topClicks = 0; addEventListener('click', () => window.topClicks++, true); }" }));
    ok(await call(c, 'browser_hover', { sessionId: s, target: tip, snapshot: 'none' }));
    ok(await call(c, 'browser_evaluate', { sessionId: s, function: '() => scrollTo(0, 0)' }));
    ok(await call(c, 'browser_fill_form', { sessionId: s, fields: [{ target: agree, type: 'checkbox', value: true }] }));
    const h = ok(await call(c, 'browser_evaluate', { sessionId: s, target: tip, function:
      '(el) => { const b = el.getBoundingClientRect(); return { checked: document.getElementById("agree").checked, hovered: document.getElementById("hovered").textContent, box: [b.left, b.top, b.right, b.bottom] }; }' }))
      .structuredContent.result.value;
    assert.equal(h.checked, true);
    const [, hx, hy] = (h.hovered.match(/hovered at (\d+),(\d+)/) ?? [0, -1, -1]).map(Number);
    assert.ok(hx >= h.box[0] && hx <= h.box[2] && hy >= h.box[1] && hy <= h.box[3], `hover ${h.hovered}, tip ${h.box}`);
    const topClicks = ok(await call(c, 'browser_evaluate', { sessionId: s, function: '() => window.topClicks' }));
    assert.equal(topClicks.structuredContent.result.value, 0);
    const where = ok(await call(c, 'browser_evaluate', { sessionId: s, target: tip, function: '() => location.origin' }));
    assert.equal(where.structuredContent.result.value, cross);
    // It was an iframe target of its own (chrome.debugger's auto-attach), not in process.
    assert.match(srvA.stderr(), new RegExp(`frame ${k} runs out of process`));
  });
}, { timeout: 120000 });

// In a tab no pointer input has reached yet: an HTML5 drag sent to the page had its mousedown
// or its drop reach the top document's <iframe> on 8 of 15 loads (and the tool said "Dragged").
test('drags inside a cross-site iframe below the fold in a fresh extension tab: HTML5 (six loads) and mouse-event', async () => {
  await inCrossSiteTab(async ({ c, s, load }) => {
    for (let n = 0; n < 6; n++) {
      const snap = await load('t8-drag.html', /button "Knob"/);
      const card = refOf(snap, 'button', 'Card');
      assert.match(card ?? '', /^f\d+e\d+$/, snap);
      ok(await call(c, 'browser_drag', { sessionId: s, startTarget: card, endTarget: refOf(snap, 'region', 'Bin'), snapshot: 'none' }));
      if (n === 5) {
        ok(await call(c, 'browser_evaluate', { sessionId: s, function: '() => scrollTo(0, 0)' }));
        ok(await call(c, 'browser_drag', { sessionId: s, startTarget: refOf(snap, 'button', 'Knob'), endTarget: refOf(snap, 'region', 'Slot'), snapshot: 'none' }));
      }
      const dragged = ok(await call(c, 'browser_evaluate', { sessionId: s, target: card,
        function: '() => [document.getElementById("html5").textContent, document.getElementById("mouse").textContent]' }));
      assert.deepEqual(dragged.structuredContent.result.value,
        ['dropped card-data after dragenter', n === 5 ? 'knob in slot after several moves' : 'no mouse drag'], `load ${n}`);
    }
  });
}, { timeout: 120000 });

test('tools chrome.debugger cannot serve, and other sites\' cookies, stay out of reach', async () => {
  const c = srvA.client;
  ok(await call(c, 'browser_navigate', { url: `${pages.url}/counter.html` }));
  // A cookie of another site in the user's profile, and one of this page.
  await browser.call('Storage.setCookies', { cookies: [
    { name: 'foreign', value: 'secret', domain: 'other.example', path: '/' },
    { name: 'mine', value: '1', domain: '127.0.0.1', path: '/' }] });
  const list = ok(await call(c, 'browser_cookie_list', {}));
  const names = (list.structuredContent?.cookies ?? []).map((x) => x.name);
  assert.ok(names.includes('mine'), text(list));
  assert.ok(!names.includes('foreign'), text(list));
  assert.equal(errCode(await call(c, 'browser_cookie_set', { name: 'x', value: 'y', domain: 'other.example' })), 'NOT_SUPPORTED');
  assert.equal(errCode(await call(c, 'browser_cookie_clear', {})), 'NOT_SUPPORTED');
  // The session goes on.
  assert.match(text(ok(await call(c, 'browser_snapshot'))), /Counter/);
}, { timeout: 60000 });

test('two tabvisor processes use the extension at once', async () => {
  const srvB = await startServer(relayArgs());
  try {
    const before = discovery().pid;
    const t0 = Date.now();
    await Promise.all([
      call(srvA.client, 'browser_navigate', { url: `${pages.url}/counter.html` }).then(ok),
      call(srvB.client, 'browser_navigate', { url: `${pages.url}/forms-inputs.html` }).then(ok),
    ]);
    assert.ok(Date.now() - t0 < 10000, `the navigations took ${Date.now() - t0} ms`);
    assert.match(text(ok(await call(srvA.client, 'browser_snapshot'))), /Counter/);
    assert.match(text(ok(await call(srvB.client, 'browser_snapshot'))), /Search/);
    // The second joined the first's relay.
    assert.equal(discovery().pid, before);
    assert.equal(processesMentioning(`--runtime-dir ${relayDir}`).length, 1);
  } finally {
    if (process.env.TV_DEBUG) console.error(srvB.stderr());
    await srvB.close();
  }
}, { timeout: 120000 });

// The relay link lives in an offscreen document (extension/offscreen.js),
// which Chrome does not stop: a stopped service worker is woken by the next
// request and takes the link up as it was, so the relay never sees the
// extension leave. A call the worker was running when it was stopped fails
// at once (the offscreen document answers it); the next one works.
test('the extension\'s service worker stopped mid-call: that call fails fast, the next works at once in the same tab, the link never drops', async () => {
  const c = srvA.client;
  ok(await call(c, 'browser_navigate', { url: `${pages.url}/counter.html` }));
  ok(await call(c, 'browser_click', { target: '#increment', snapshot: 'none' }));
  const status = async () => (await relayRequest([{ type: 408, id: 1, body: {} }], 2000))?.[0]?.result;
  const before = (await status()).extensionConnections;
  const pending = call(c, 'browser_evaluate', { function: '() => new Promise((r) => setTimeout(() => r(1), 15000))' });
  await sleep(1000);
  const t0 = Date.now();
  const { targetId, sessionId } = await stopExtensionWorker(browser);
  const r = await pending;
  assert.equal(errCode(r), 'EXTENSION_NOT_CONNECTED', text(r));
  assert.ok(Date.now() - t0 < 1000, `the call took ${Date.now() - t0} ms to fail`);
  assert.match(text(r), /service worker was stopped/);
  await browser.call('ServiceWorker.disable', {}, sessionId);
  await browser.call('Target.closeTarget', { targetId });
  // The next call wakes it: the same tab (the click of before is counted).
  const t1 = Date.now();
  assert.match(text(ok(await call(c, 'browser_snapshot', {}))), /Count: 1/);
  const first = Date.now() - t1;
  // Under 1 s on an idle machine (the measure is the next test's); the bound
  // here only tells a wake-up from Chrome's 30 s alarm, on a loaded machine.
  assert.ok(first < 5000, `the first call after the stop took ${first} ms`);
  const st = await status();
  assert.ok(st.extension, 'the relay lost the extension');
  assert.equal(st.extensionConnections, before, 'the extension connected again: the link dropped');
  // And it keeps itself awake again: heartbeats (every second in this test)
  // while the session is open, with no change of sessions to start them.
  const h0 = st.extensionHeartbeats;
  await sleep(2500);
  assert.ok((await status()).extensionHeartbeats > h0, 'no heartbeat since the wake-up');
}, { timeout: 120000 });

// Issue 22, point 4: after Chrome stops the idle service worker, the first
// call must work, with no refusal, in under a second. Stopped TV_SW_STOPS
// times (5 by default), in two sessions, with a click as the first call
// (a debugger command and events) and a snapshot after it.
test('the idle extension\'s service worker stopped again and again: the first call after each stop works, none is refused', async () => {
  const stops = Number(process.env.TV_SW_STOPS || 5);
  const c = srvA.client;
  const ids = [];
  for (let i = 0; i < 2; i++) {
    const id = ok(await call(c, 'browser_session_create', {})).structuredContent.sessionId;
    ok(await call(c, 'browser_navigate', { sessionId: id, url: `${pages.url}/counter.html` }));
    ids.push(id);
  }
  const firsts = [];
  let refused = 0;
  try {
    for (let k = 0; k < stops; k++) {
      const { targetId, sessionId } = await stopExtensionWorker(browser);
      await browser.call('ServiceWorker.disable', {}, sessionId);
      await browser.call('Target.closeTarget', { targetId });
      const t0 = Date.now();
      const rs = await Promise.all(ids.map((id) =>
        call(c, 'browser_click', { sessionId: id, target: '#increment', snapshot: 'none' })));
      firsts.push(Date.now() - t0);
      for (const r of rs) if (r.isError) refused++;
      assert.equal(refused, 0, rs.map(text).join('\n'));
      for (const id of ids) {
        assert.match(text(ok(await call(c, 'browser_snapshot', { sessionId: id }))), new RegExp(`Count: ${k + 1}\\b`));
      }
    }
  } finally {
    for (const id of ids) await call(c, 'browser_session_close', { sessionId: id });
  }
  firsts.sort((x, y) => x - y);
  console.log(`# ${stops} service-worker stops: ${refused} calls refused; first calls (two sessions at once) ` +
    `median ${firsts[firsts.length >> 1]} ms, max ${firsts[firsts.length - 1]} ms`);
  // The goal is under 1 s (printed above); the bound tells a wake-up by the
  // call from one by Chrome's 30 s alarm, and holds on a loaded machine.
  assert.ok(firsts[firsts.length - 1] < 5000, `first calls took ${firsts.join(', ')} ms`);
}, { timeout: 180000 });

test('a session idle for 2 minutes still works', async () => {
  const c = srvA.client;
  ok(await call(c, 'browser_navigate', { url: `${pages.url}/counter.html` }));
  await sleep(Number(process.env.TV_IDLE_MS || 125000));
  ok(await call(c, 'browser_click', { target: '#increment', snapshot: 'none' }));
  assert.match(text(ok(await call(c, 'browser_snapshot', {}))), /Count: 1/);
}, { timeout: 200000 });

test('kill -9 of the relay mid-call: the call fails fast, tabvisor restarts the relay, the session goes on in the same tab', async () => {
  const c = srvA.client;
  ok(await call(c, 'browser_navigate', { url: `${pages.url}/counter.html` }));
  ok(await call(c, 'browser_click', { target: '#increment', snapshot: 'none' }));
  const tabsBefore = ok(await call(c, 'browser_tabs', { action: 'list' })).structuredContent.tabs;
  const old = discovery().pid;
  // The relay's log is in its runtime dir and outlives the relay.
  const relayLog = join(relayDir, 'relay.log');
  const starts = () => (readFileSync(relayLog, 'utf8').match(/tabvisor-relay: listening on ws:/g) || []).length;
  const startsBefore = starts();
  assert.ok(startsBefore >= 1, `no start in ${relayLog}`);
  const pending = call(c, 'browser_evaluate', { function: '() => new Promise((r) => setTimeout(() => r(1), 15000))' });
  await sleep(1000);
  const t0 = Date.now();
  process.kill(old, 'SIGKILL');
  const r = await pending;
  const took = Date.now() - t0;
  assert.equal(errCode(r), 'EXTENSION_NOT_CONNECTED', text(r));
  assert.ok(took < 1000, `the call took ${took} ms to fail`);
  // A new relay (tabvisor's), and the extension back on it.
  await until('a new relay', () => { const d = discovery(); return d && d.pid !== old && existsSync(`/proc/${d.pid}`); }, 15000);
  await until('the extension to reconnect', extensionConnected, 30000, 300);
  // The new relay appended to the same log: the killed one's lines are still there.
  assert.equal(starts(), startsBefore + 1, readFileSync(relayLog, 'utf8').slice(-3000));
  assert.equal(statSync(relayLog).mode & 0o777, 0o600);
  // The extension told the new relay which tabs were whose: the same tab,
  // its page as it was (the click of before is counted), no new tab.
  assert.match(text(ok(await call(c, 'browser_snapshot'))), /Count: 1/);
  const tabsAfter = ok(await call(c, 'browser_tabs', { action: 'list' })).structuredContent.tabs;
  assert.deepEqual(tabsAfter.map((t) => t.url), tabsBefore.map((t) => t.url));
  ok(await call(c, 'browser_click', { target: '#increment', snapshot: 'none' }));
  assert.match(text(ok(await call(c, 'browser_snapshot'))), /Count: 2/);
  const nav = ok(await call(c, 'browser_navigate', { url: `${pages.url}/counter.html` }));
  assert.match(text(nav), /Counter/);
  assert.match(text(ok(await call(c, 'browser_snapshot'))), /Count: 0/);
}, { timeout: 120000 });

// Issue 22, point 2: in one of about 35 relay kills a session stayed
// disconnected for good (its worker's refused relay-hello was never said
// again). TV_RELAY_KILLS sets the number of kills (10 by default; the
// 200-kill run is recorded in docs/testing.md).
test('kill -9 of the relay again and again, with calls in flight in four sessions of two tabvisor processes: every session comes back in its tab', async () => {
  const kills = Number(process.env.TV_RELAY_KILLS || 10);
  const srvB = await startServer(relayArgs());
  const sess = [];
  try {
    for (const srv of [srvA, srvB]) {
      for (let i = 0; i < 2; i++) {
        const id = ok(await call(srv.client, 'browser_session_create', {})).structuredContent.sessionId;
        ok(await call(srv.client, 'browser_navigate', { sessionId: id, url: `${pages.url}/counter.html` }));
        sess.push({ c: srv.client, id, clicks: 0 });
      }
    }
    const backIn = [];
    for (let k = 0; k < kills; k++) {
      const old = discovery().pid;
      const inflight = sess.map((s) => call(s.c, 'browser_evaluate',
        { sessionId: s.id, function: '() => new Promise((r) => setTimeout(() => r(1), 5000))' }));
      await sleep(50 + (k % 5) * 50); // 50-250 ms into the calls
      process.kill(old, 'SIGKILL');
      for (const r of await Promise.all(inflight)) {
        assert.ok(!r.isError || errCode(r) === 'EXTENSION_NOT_CONNECTED', text(r));
      }
      await until('a new relay', () => { const d = discovery(); return d && d.pid !== old && existsSync(`/proc/${d.pid}`); }, 30000, 50);
      const t0 = Date.now();
      // Each session's next call works, in the tab it had (its page counts on).
      await Promise.all(sess.map(async (s) => {
        ok(await call(s.c, 'browser_click', { sessionId: s.id, target: '#increment', snapshot: 'none' }));
        s.clicks++;
      }));
      backIn.push(Date.now() - t0);
    }
    for (const s of sess) {
      assert.match(text(ok(await call(s.c, 'browser_snapshot', { sessionId: s.id }))), new RegExp(`Count: ${s.clicks}\\b`));
      ok(await call(s.c, 'browser_session_close', { sessionId: s.id }));
    }
    backIn.sort((a, b) => a - b);
    console.log(`# ${kills} relay kills, 4 sessions: all back after the new relay in median ${backIn[backIn.length >> 1]} ms, max ${backIn.at(-1)} ms`);
  } finally {
    if (process.env.TV_DEBUG) console.error(srvB.stderr().slice(-60000));
    await srvB.close();
  }
}, { timeout: 120000 + Number(process.env.TV_RELAY_KILLS || 10) * 15000 });

// Issue 22, point 3: a tabvisor that starts (and starts its relay) while the
// extension is backing off used to refuse its first calls for seconds. Now a
// call waits for the extension (until its deadline); none is refused.
test('tabvisor started again, three times: its first call waits for the extension, none is refused', async () => {
  const waits = [];
  for (let i = 0; i < 3; i++) {
    await srvA.close();
    // Its relay went with it: the extension finds none and backs off.
    await until('the relay gone', () => !discovery(), 10000);
    await until('the extension to notice', async () => !(await extensionConnected().catch(() => false)), 10000, 300);
    await sleep(3000);
    const t0 = Date.now();
    srvA = await startServer(relayArgs());
    const r = await call(srvA.client, 'browser_navigate', { url: `${pages.url}/counter.html` });
    waits.push(Date.now() - t0);
    ok(r);
    assert.match(text(ok(await call(srvA.client, 'browser_snapshot'))), /Count: 0/);
  }
  console.log(`# first call after a fresh start, ms (start included): ${waits.join(', ')}`);
}, { timeout: 180000 });
