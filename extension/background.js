// background.js - the tabvisor extension's service worker (docs/relay.md).
//
// Connects to the local relay (ws://127.0.0.1:PORT/extension), proves it
// holds the pairing secret (HMAC over both sides' nonces; the secret never
// crosses the socket) and checks that the relay holds it too, then runs the
// relay's verbs with chrome.tabs, chrome.tabGroups and chrome.debugger, and
// forwards the debugger events of the tabs the relay says are owned.
//
// The socket itself lives in an offscreen document (offscreen.js), which
// Chrome does not stop when this worker idles: a stopped worker is woken by
// the next frame and takes the link up where it was (its state is kept in
// chrome.storage.session), so the relay never sees the extension leave.

import { cdpRefusal } from './cdp_guard.js';

const WIRE = 1;
const DEFAULT_PORT = 47653;
// Application messages keep an MV3 worker alive (pings do not); the pairing
// link may shorten the period for tests (pair.js).
let heartbeatMs = 20000;
// Reconnecting to a relay that is not there costs a refused connection on
// 127.0.0.1; a relay that (re)starts is found within a second, and the
// calls waiting for the extension meanwhile (worker/cdp/relay.c) go on.
const BACKOFF_MIN = 250;
const BACKOFF_MAX = 1000;
const MAX_ERROR = 4000;

// The link to the relay: the number of the socket we asked the offscreen
// document for (null: none), and whether it is open and authenticated.
let linkConn = null;
let linkOpen = false;
let port = null; // to the offscreen document
let authed = false;
let backoff = BACKOFF_MIN;
let reconnectTimer = null;
let heartbeatTimer = null;
let relayNonce = null;
let extNonce = null;
let status = 'starting';
let lastError = '';
const counters = { sent: 0, received: 0, requests: 0, events: 0, refusedRequests: 0 };
let sessions = []; // [{id, live, tabs:[{tabId, created}]}] from the relay
// What the last relay said was whose, kept when a connection starts: a
// relay that was restarted knows nothing, and is told (claims, below).
let claimBasis = [];
const owned = new Map(); // tabId -> session id
const attached = new Set(); // tabIds chrome.debugger is attached to by us
const groups = new Map(); // session id -> tab group id
// Child CDP sessions (out-of-process iframes) of the tabs we debug: a cdp
// verb may name one only with its own tab, and a restarted relay is told
// them with its claims.
const children = new Map(); // child session id -> tabId

function forgetChildren(tabId) {
  for (const [sid, t] of children) if (t === tabId) children.delete(sid);
  saveChildren();
}

async function config() {
  const { port, secret, heartbeatMs: hb } = await chrome.storage.local.get(['port', 'secret', 'heartbeatMs']);
  if (Number.isInteger(hb) && hb >= 1000 && hb <= 20000) heartbeatMs = hb;
  return { port: Number.isInteger(port) ? port : DEFAULT_PORT, secret };
}

function hex(bytes) {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('');
}

function randomHex() {
  return hex(crypto.getRandomValues(new Uint8Array(32)));
}

async function hmacHex(secret, text) {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey('raw', enc.encode(secret), { name: 'HMAC', hash: 'SHA-256' },
    false, ['sign']);
  return hex(await crypto.subtle.sign('HMAC', key, enc.encode(text)));
}

function send(obj) {
  if (!linkConn || !linkOpen || !port) return false;
  port.postMessage({ op: 'send', conn: linkConn, text: JSON.stringify({ v: WIRE, ...obj }) });
  counters.sent++;
  return true;
}

function closeLink() {
  if (linkConn && port) port.postMessage({ op: 'close', conn: linkConn });
  linkConn = null;
  linkOpen = false;
  setAuthed(false);
}

// What a restarted worker needs to take the link up again.
function setAuthed(yes) {
  authed = yes;
  chrome.storage.session.set({ link: { conn: linkConn, authed: yes } }).catch(() => {});
}

// The offscreen document that holds the socket, and our port to it (one
// attempt at a time). Its script may not listen yet right after it was
// created: a port that is refused is tried again.
let portPromise = null;

async function ensureOffscreen() {
  const have = await chrome.runtime.getContexts({ contextTypes: ['OFFSCREEN_DOCUMENT'] });
  if (have.length) return;
  try {
    await chrome.offscreen.createDocument({
      url: 'offscreen.html',
      reasons: ['WORKERS'],
      justification: 'keeps the connection to the local tabvisor relay open while the service worker sleeps',
    });
  } catch (e) {
    if (!/single offscreen|already/i.test(String(e.message))) throw e;
  }
}

function portReady() {
  if (port) return Promise.resolve(port);
  if (!portPromise) {
    portPromise = openPort().finally(() => {
      portPromise = null;
    });
  }
  return portPromise;
}

async function openPort() {
  for (let i = 0; ; i++) {
    let saved = {};
    try {
      saved = (await chrome.storage.session.get('link')).link || {};
    } catch {
      saved = {};
    }
    await ensureOffscreen();
    const p = chrome.runtime.connect({ name: 'tabvisor-link' });
    // Frames may follow the hello at once (ones that waited while this
    // worker was stopped): they are held until the link is decided.
    const inbox = [];
    let live = false;
    let heard;
    const first = new Promise((resolve) => { heard = resolve; });
    p.onMessage.addListener((m) => {
      if (live) onLinkMessage(m);
      else {
        inbox.push(m);
        heard(true);
      }
    });
    p.onDisconnect.addListener(() => {
      heard(false);
      if (port !== p) return;
      port = null; // the offscreen document is gone: its socket too
      linkOpen = false;
      linkConn = null;
      setAuthed(false);
      status = 'disconnected';
      updateHeartbeat();
      scheduleReconnect();
    });
    if ((await first) && inbox[0]?.ev === 'hello') {
      port = p;
      takeLink(inbox.shift(), saved);
      live = true;
      while (inbox.length) onLinkMessage(inbox.shift());
      return p;
    }
    p.disconnect();
    await new Promise((r) => setTimeout(r, Math.min(50 * (i + 1), 500)));
  }
}

// The offscreen document's socket, as this worker finds it on start: the
// one an earlier run of this worker authenticated (`saved`) is taken up as
// it is; any other is closed, and connect() opens a new one.
function takeLink(hello, saved) {
  if (hello.open && hello.conn && saved.conn === hello.conn && saved.authed) {
    linkConn = hello.conn;
    linkOpen = true;
    authed = true;
    status = 'connected';
    rebuildAttached();
    updateHeartbeat();
    return;
  }
  if (hello.open && hello.conn) port.postMessage({ op: 'close', conn: hello.conn });
}

// Which owned tabs our debugger is on, as Chrome says (a restarted worker
// lost its set; the debugger sessions outlive it).
async function rebuildAttached() {
  try {
    for (const t of await chrome.debugger.getTargets()) {
      if (t.attached && t.tabId !== undefined && owned.has(t.tabId)) attached.add(t.tabId);
    }
  } catch {
    // an empty set: ensureAttached() finds out per tab
  }
}

function onLinkMessage(m) {
  if (!m || m.conn !== linkConn || !linkConn) return;
  if (m.ev === 'open') {
    linkOpen = true;
  } else if (m.ev === 'frame') {
    onFrame(m.conn, m.data).catch((e) => { lastError = String(e); });
  } else if (m.ev === 'close') {
    linkConn = null;
    linkOpen = false;
    setAuthed(false);
    status = 'disconnected';
    if (m.reason) lastError = `relay closed: ${m.reason}`;
    updateHeartbeat();
    scheduleReconnect();
  }
}

function scheduleReconnect() {
  if (reconnectTimer) return;
  reconnectTimer = setTimeout(() => {
    reconnectTimer = null;
    connect();
  }, backoff);
  backoff = Math.min(backoff * 2, BACKOFF_MAX);
}

async function connect() {
  await ready;
  if (linkConn) return;
  const { port: relayPort, secret } = await config();
  if (!secret) {
    status = 'not paired';
    return;
  }
  if (linkConn) return; // another connect() won the race while we read storage
  // The relay's list of who owns what, as it was before this connection:
  // from memory, or (this worker was restarted) from the session storage.
  claimBasis = sessions;
  if (!claimBasis.length) {
    try {
      claimBasis = (await chrome.storage.session.get('sessions')).sessions || [];
    } catch {
      claimBasis = [];
    }
    if (linkConn) return;
  }
  let p;
  try {
    p = await portReady();
  } catch (e) {
    lastError = String(e.message || e);
    scheduleReconnect();
    return;
  }
  if (linkConn) return;
  status = 'connecting';
  // Unique across restarts of this worker: the offscreen document outlives it.
  linkConn = crypto.getRandomValues(new Uint32Array(1))[0] % 2147483647 + 1;
  linkOpen = false;
  p.postMessage({ op: 'open', conn: linkConn, url: `ws://127.0.0.1:${relayPort}/extension`, protocol: 'tabvisor-relay.v1' });
}

function reconnectNow() {
  backoff = BACKOFF_MIN;
  if (reconnectTimer) {
    clearTimeout(reconnectTimer);
    reconnectTimer = null;
  }
  closeLink();
  connect();
}

function updateHeartbeat() {
  const want = authed && sessions.length > 0;
  if (want && !heartbeatTimer) {
    heartbeatTimer = setInterval(() => send({ type: 'heartbeat' }), heartbeatMs);
  } else if (!want && heartbeatTimer) {
    clearInterval(heartbeatTimer);
    heartbeatTimer = null;
  }
}

function rebuildOwned() {
  owned.clear();
  for (const s of sessions) for (const t of s.tabs) owned.set(t.tabId, s.id);
}

async function onFrame(conn, data) {
  if (conn !== linkConn) return;
  counters.received++;
  let m;
  try {
    m = JSON.parse(data);
  } catch {
    return;
  }
  if (!m || m.v !== WIRE) return;
  switch (m.type) {
    case 'challenge': {
      const { secret } = await config();
      relayNonce = m.nonce;
      extNonce = randomHex();
      const mac = await hmacHex(secret, `tabvisor-relay-v1 extension${relayNonce}${extNonce}`);
      send({ type: 'auth', nonce: extNonce, mac });
      status = 'authenticating';
      return;
    }
    case 'welcome': {
      const { secret } = await config();
      const want = await hmacHex(secret, `tabvisor-relay-v1 relay${relayNonce}${extNonce}`);
      if (want !== m.mac) {
        lastError = 'the relay did not prove the pairing secret';
        closeLink();
        scheduleReconnect();
        return;
      }
      if (conn !== linkConn) return;
      setAuthed(true);
      backoff = BACKOFF_MIN;
      status = 'connected';
      lastError = '';
      // The relay sends 'sessions' right after 'welcome', and frames are
      // handled as they come: it was handled while this one awaited, with
      // authed still false, and started no heartbeat.
      updateHeartbeat();
      await restoreOwned(m.owned || [], m.claims === true);
      return;
    }
    case 'sessions':
      sessions = Array.isArray(m.sessions) ? m.sessions : [];
      rebuildOwned();
      updateHeartbeat();
      chrome.storage.session.set({ sessions }).catch(() => {});
      return;
    case 'req':
      counters.requests++;
      handleRequest(m);
      return;
    default:
      return;
  }
}

// After a reconnect (of the relay or of this worker): keep the tabs the
// relay says are owned, re-attach those it had attached, and tell it which
// still exist. A relay that was restarted says nothing is owned: it is
// also told which tabs the previous one had given to which session
// (claims), those still open and still (or again) under our debugger, so
// that their sessions go on in them; the relay takes claims only from its
// first connection. A tab that cannot be claimed is handed back to the
// user: detached and out of its group.
async function restoreOwned(list, takesClaims) {
  const present = [];
  for (const o of list) {
    try {
      await chrome.tabs.get(o.tabId);
    } catch {
      continue;
    }
    present.push(o.tabId);
    owned.set(o.tabId, o.session);
    if (o.attached) {
      try {
        await ensureAttached(o.tabId);
      } catch (e) {
        lastError = String(e.message || e);
      }
    }
  }
  const claims = [];
  for (const s of takesClaims ? claimBasis : []) {
    for (const t of s.tabs || []) {
      if (present.includes(t.tabId) || list.some((o) => o.tabId === t.tabId)) continue;
      try {
        await chrome.tabs.get(t.tabId);
      } catch {
        continue; // closed meanwhile
      }
      try {
        await ensureAttached(t.tabId);
        owned.set(t.tabId, s.id);
        const kids = [...children].filter(([, tab]) => tab === t.tabId).map(([sid]) => sid).slice(0, 256);
        claims.push({ tabId: t.tabId, session: s.id, created: !!t.created, children: kids });
      } catch (e) {
        lastError = String(e.message || e);
        await handBack(t.tabId);
      }
    }
  }
  claimBasis = [];
  send({ type: 'event', event: 'state', present, claims });
}

// A tab no session has any more: debugger off, out of the session's group.
async function handBack(tabId) {
  owned.delete(tabId);
  if (attached.delete(tabId)) {
    try {
      forgetChildren(tabId);
      await chrome.debugger.detach({ tabId });
    } catch {
      // already detached
    }
  }
  try {
    await chrome.tabs.ungroup(tabId);
  } catch {
    // not grouped, or gone
  }
}

class VerbError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

function attachable(url) {
  return url === '' || url === 'about:blank' || /^https?:\/\//.test(url);
}

async function ensureAttached(tabId) {
  if (attached.has(tabId)) return;
  let tab;
  try {
    tab = await chrome.tabs.get(tabId);
  } catch {
    throw new VerbError('TAB_NOT_FOUND', `tab ${tabId} is closed`);
  }
  const url = tab.url || tab.pendingUrl || '';
  if (!attachable(url)) throw new VerbError('NOT_SUPPORTED', 'only http(s) pages can be automated');
  try {
    await chrome.debugger.attach({ tabId }, '1.3');
  } catch (e) {
    if (!/already attached/i.test(String(e.message))) throw e;
  }
  attached.add(tabId);
}

function ownedTab(tabId) {
  if (!owned.has(tabId)) throw new VerbError('TAB_NOT_FOUND', `tab ${tabId} is not shared with tabvisor`);
}

// Tabs we are moving into a group ourselves: their group changes are ours,
// not the user's (onUpdated below), until a second after the move.
const grouping = new Map(); // tabId -> count of moves in progress

async function groupInto(session, tabIds, title, color) {
  for (const id of tabIds) grouping.set(id, (grouping.get(id) || 0) + 1);
  let grouped = false;
  try {
    let groupId = groups.get(session);
    try {
      groupId = await chrome.tabs.group(groupId !== undefined ? { tabIds, groupId } : { tabIds });
    } catch {
      groupId = await chrome.tabs.group({ tabIds });
    }
    rememberGroup(session, groupId);
    const props = { title: title || (await groupLabel(session)) };
    if (color) props.color = color;
    grouped = true;
    await chrome.tabGroups.update(groupId, props);
    return groupId;
  } finally {
    setTimeout(() => {
      for (const id of tabIds) {
        const n = (grouping.get(id) || 1) - 1;
        if (n > 0) grouping.set(id, n);
        else grouping.delete(id);
        // A move of the user's while we held the tab was ignored: look at
        // where the tab is now (only when our own move worked: a tab we
        // could not group stays its session's).
        if (grouped && !grouping.has(id) && owned.has(id)) dragOut(id, owned.get(id));
      }
    }, 1000);
  }
}

const verbs = {
  async 'tab.create'(p) {
    const url = p.url || 'about:blank';
    // The relay checks this too: the user's browser opens only web pages.
    if (url !== 'about:blank' && !/^https?:\/\//.test(url)) {
      throw new VerbError('INVALID_PARAMETERS', 'only http(s) URLs and about:blank can be opened');
    }
    const tab = await chrome.tabs.create({ url, active: false });
    owned.set(tab.id, p.session);
    try {
      await groupInto(p.session, [tab.id]);
    } catch {
      // Grouping is for the user's eyes; a tab outside its group still works.
    }
    return { tabId: tab.id };
  },
  async 'tab.attach'(p) {
    ownedTab(p.tabId);
    await ensureAttached(p.tabId);
    return {};
  },
  async 'tab.detach'(p) {
    ownedTab(p.tabId);
    if (attached.has(p.tabId)) {
      attached.delete(p.tabId);
      try {
        forgetChildren(p.tabId);
        await chrome.debugger.detach({ tabId: p.tabId });
      } catch {
        // already gone
      }
    }
    return {};
  },
  async 'tab.close'(p) {
    ownedTab(p.tabId);
    attached.delete(p.tabId);
    try {
      await chrome.tabs.remove(p.tabId);
    } catch {
      throw new VerbError('TAB_NOT_FOUND', `tab ${p.tabId} is closed`);
    }
    owned.delete(p.tabId);
    return {};
  },
  async cdp(p) {
    ownedTab(p.tabId);
    const why = cdpRefusal(p.method, p.params);
    if (why) throw new VerbError('NOT_SUPPORTED', `${String(p.method).slice(0, 100)}: ${why}`);
    if (p.sessionId && children.get(p.sessionId) !== p.tabId) {
      throw new VerbError('TAB_NOT_FOUND', 'no such child session in this tab');
    }
    await ensureAttached(p.tabId);
    const target = p.sessionId ? { tabId: p.tabId, sessionId: p.sessionId } : { tabId: p.tabId };
    const result = await chrome.debugger.sendCommand(target, p.method, p.params || {});
    return result || {};
  },
  async 'tab.group'(p) {
    const ids = (p.tabIds || []).filter((id) => owned.get(id) === p.session);
    if (!ids.length) return {};
    return { groupId: await groupInto(p.session, ids, p.title, p.color) };
  },
};

// A response goes only to the connection that asked: request ids are the
// relay's, and a relay started after this one (a restart) numbers from 1
// again, so a late answer on a new connection could be taken for another.
async function handleRequest(m) {
  const fn = verbs[m.verb];
  const asker = linkConn;
  const reply = (obj) => linkConn === asker && send(obj);
  try {
    if (!fn) throw new VerbError('INVALID_PARAMETERS', `unknown verb ${m.verb}`);
    const result = await fn(m.params || {});
    reply({ type: 'res', id: m.id, ok: true, result });
  } catch (e) {
    counters.refusedRequests++;
    let code = e.code || 'BROWSER_ERROR';
    const message = String(e.message || e).slice(0, MAX_ERROR);
    if (!e.code && /No tab with (given )?id/i.test(message)) code = 'TAB_NOT_FOUND';
    reply({ type: 'res', id: m.id, ok: false, error: { code, message } });
  }
}

// Listeners registered at the top level (so that their events wake this
// worker) and run in order once start() has restored what it knew.
function afterStart(fn) {
  return (...args) => {
    ready.then(() => fn(...args));
  };
}

// The child sessions are kept for a restart of this worker (they change
// only when a frame or worker comes or goes).
let childrenSaving = false;
function saveChildren() {
  if (childrenSaving) return;
  childrenSaving = true;
  queueMicrotask(() => {
    childrenSaving = false;
    chrome.storage.session.set({ children: Object.fromEntries(children) }).catch(() => {});
  });
}

chrome.debugger.onEvent.addListener(afterStart((source, method, params) => {
  const child = params?.sessionId;
  if (child && method === 'Target.attachedToTarget') {
    children.set(child, source.tabId);
    saveChildren();
  } else if (child && method === 'Target.detachedFromTarget') {
    children.delete(child);
    saveChildren();
  }
  if (!owned.has(source.tabId)) return;
  counters.events++;
  const ev = { type: 'event', event: 'cdp', tabId: source.tabId, method };
  if (params) ev.params = params;
  if (source.sessionId) ev.sessionId = source.sessionId;
  send(ev);
}));

chrome.debugger.onDetach.addListener(afterStart((source, reason) => {
  attached.delete(source.tabId);
  forgetChildren(source.tabId);
  if (owned.has(source.tabId)) send({ type: 'event', event: 'detached', tabId: source.tabId, reason: String(reason) });
}));

chrome.tabs.onRemoved.addListener(afterStart((tabId) => {
  attached.delete(tabId);
  forgetChildren(tabId);
  if (!owned.has(tabId)) return;
  owned.delete(tabId);
  send({ type: 'event', event: 'removed', tabId });
}));

// Popups of an owned tab belong to the same session (the relay decides).
// window.open popups carry their opener in webNavigation; tabs opened from
// a link may have only openerTabId.
function openedBy(tabId, opener) {
  if (opener === undefined || !owned.has(opener) || owned.has(tabId)) return;
  owned.set(tabId, owned.get(opener));
  send({ type: 'event', event: 'opened-by', tabId, openerTabId: opener });
}

chrome.tabs.onCreated.addListener(afterStart((tab) => openedBy(tab.id, tab.openerTabId)));
chrome.webNavigation.onCreatedNavigationTarget.addListener(afterStart((d) => openedBy(d.tabId, d.sourceTabId)));

chrome.storage.onChanged.addListener((changes, area) => {
  if (area === 'local' && (changes.secret || changes.port)) reconnectNow();
});

// The user's consent, from the popup only: give one of their tabs to a
// session, or take it back. The relay decides and answers with 'sessions'.
async function share(tabId, session) {
  if (!authed) throw new Error('not connected to the relay');
  if (owned.has(tabId)) throw new Error('this tab is already shared');
  if (!sessions.some((s) => s.id === session && s.live)) throw new Error('no such session');
  const tab = await chrome.tabs.get(tabId);
  if (!/^https?:\/\//.test(tab.url || '')) throw new Error('only http(s) pages can be shared');
  owned.set(tabId, session);
  send({ type: 'event', event: 'granted', tabId, session });
  try {
    await groupInto(session, [tabId]);
  } catch {
    // The group only shows the user who has the tab.
  }
}

async function unshare(tabId) {
  const sess = sessions.find((s) => s.tabs.some((t) => t.tabId === tabId && !t.created));
  if (!sess) throw new Error('this tab is not shared');
  send({ type: 'event', event: 'revoked', tabId });
  await handBack(tabId);
}

// A tab group's title is visible to every other extension (chrome.tabGroups),
// so it is a short label, never the session id, which is the capability that
// drives the session. Which group is whose is kept in the session storage,
// which outlives a restart of this worker.
async function groupLabel(session) {
  const { groupLabels = {} } = await chrome.storage.session.get('groupLabels');
  if (!groupLabels[session]) {
    const used = new Set(Object.values(groupLabels));
    let n = 1;
    while (used.has(`tabvisor ${n}`)) n++;
    groupLabels[session] = `tabvisor ${n}`;
    await chrome.storage.session.set({ groupLabels });
  }
  return groupLabels[session];
}

function rememberGroup(session, groupId) {
  groups.set(session, groupId);
  chrome.storage.session.set({ groupSessions: Object.fromEntries([...groups].map(([s, g]) => [g, s])) }).catch(() => {});
}

// The session whose tab group this is: ours by the map, or (after this
// worker restarted and lost the map) by the session storage.
async function sessionOfGroup(groupId) {
  for (const [session, id] of groups) if (id === groupId) return session;
  try {
    const { groupSessions = {} } = await chrome.storage.session.get('groupSessions');
    const session = groupSessions[groupId];
    if (session && sessions.some((s) => s.id === session && s.live)) {
      groups.set(session, groupId);
      return session;
    }
  } catch {
    // no storage: the group is not known
  }
  return null;
}

// The user dragged one of their tabs into a session's tab group: as good a
// consent as the popup's "Share" (docs/relay.md, Ownership). Tabs we group
// ourselves are owned before they move, so they do not come here.
function dragIn(tabId, groupId, url) {
  sessionOfGroup(groupId).then((session) => {
    if (!session || owned.has(tabId) || !/^https?:\/\//.test(url || '')) return;
    owned.set(tabId, session);
    rememberGroup(session, groupId);
    send({ type: 'event', event: 'granted', tabId, session });
  });
}

// The user dragged a session's tab out of its group (ungrouped it, moved it
// to another group or window): they took it back, whether the session
// created it or was given it. It leaves the session (the relay hears
// "revoked": TAB_NOT_FOUND for the session from then on, and the session's
// end does not close it) and our debugger lets go of it. Dropped into
// another session's group, it is then given to that one.
async function dragOut(tabId, session) {
  let tab;
  try {
    tab = await chrome.tabs.get(tabId);
  } catch {
    return; // closed: onRemoved tells the relay
  }
  // Decided on the tab's group now, not the event's: it may have moved on.
  if (owned.get(tabId) !== session || grouping.has(tabId)) return;
  if (tab.groupId >= 0 && (await sessionOfGroup(tab.groupId)) === session) return;
  if (owned.get(tabId) !== session) return;
  owned.delete(tabId);
  send({ type: 'event', event: 'revoked', tabId });
  if (attached.delete(tabId)) {
    try {
      forgetChildren(tabId);
      await chrome.debugger.detach({ tabId });
    } catch {
      // already detached
    }
  }
  if (tab.groupId >= 0) dragIn(tabId, tab.groupId, tab.url);
}

chrome.tabs.onUpdated.addListener(afterStart((tabId, change, tab) => {
  if (change.groupId === undefined || !authed || grouping.has(tabId)) return;
  if (owned.has(tabId)) dragOut(tabId, owned.get(tabId));
  else if (change.groupId >= 0) dragIn(tabId, change.groupId, tab.url);
}));

// Pairing (docs/relay.md, "Pairing"): prove to the relay that we know the
// one-time code the user typed, check that the relay knows it too, and
// unwrap the secret it sends. The code is the HMAC key as its 12 characters.
const PAIR_ALPHABET = /^[A-HJ-NP-Z2-9]{12}$/;

function hexBytes(h) {
  return Uint8Array.from(h.match(/../g), (b) => parseInt(b, 16));
}

async function hmacBytes(key, text) {
  const enc = new TextEncoder();
  const k = await crypto.subtle.importKey('raw', enc.encode(key), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await crypto.subtle.sign('HMAC', k, enc.encode(text)));
}

function pairWith(typed, port, hb) {
  const code = String(typed || '').toUpperCase().replace(/[^A-Z0-9]/g, '');
  if (!PAIR_ALPHABET.test(code)) return Promise.reject(new Error('a code has 12 letters and digits, as XXXX-XXXX-XXXX'));
  if (!Number.isInteger(port) || port < 1 || port > 65535) return Promise.reject(new Error('not a port'));
  return new Promise((resolve, reject) => {
    const sock = new WebSocket(`ws://127.0.0.1:${port}/extension`, 'tabvisor-relay.v1');
    let rn = null;
    let en = null;
    const fail = (why) => { sock.close(); reject(new Error(why)); };
    const timer = setTimeout(() => fail('the relay did not answer'), 10000);
    sock.onclose = () => { clearTimeout(timer); reject(new Error('the relay refused the code (or is not running)')); };
    sock.onerror = () => {};
    sock.onmessage = async (ev) => {
      let m;
      try { m = JSON.parse(ev.data); } catch { return fail('the relay sent something else'); }
      if (m?.v !== WIRE) return fail('the relay speaks another version');
      if (m.type === 'challenge' && !rn) {
        rn = m.nonce;
        en = randomHex();
        const mac = hex(await hmacBytes(code, `tabvisor-relay-v1 pair extension${rn}${en}`));
        sock.send(JSON.stringify({ v: WIRE, type: 'pair', nonce: en, mac }));
      } else if (m.type === 'paired' && rn) {
        const want = hex(await hmacBytes(code, `tabvisor-relay-v1 pair relay${rn}${en}`));
        if (m.mac !== want || !/^[0-9a-f]{64}$/.test(m.key || '')) return fail('the relay could not prove it knows the code');
        const pad = await hmacBytes(code, `tabvisor-relay-v1 pair key${rn}${en}`);
        const secret = hex(hexBytes(m.key).map((b, i) => b ^ pad[i]));
        const heartbeatMs = Number.isInteger(hb) && hb >= 1000 && hb <= 20000 ? hb : 20000;
        await chrome.storage.local.set({ secret, port, heartbeatMs });
        clearTimeout(timer);
        sock.onclose = null;
        sock.close();
        heartbeatMsChanged(heartbeatMs);
        reconnectNow();
        resolve();
      }
    };
  });
}

function heartbeatMsChanged(ms) {
  heartbeatMs = ms;
  if (heartbeatTimer) {
    clearInterval(heartbeatTimer);
    heartbeatTimer = null;
  }
  updateHeartbeat();
}

chrome.runtime.onMessage.addListener((msg, sender, reply) => {
  if (sender.id !== chrome.runtime.id || !msg) return false;
  if (msg.do === 'wake') {
    // Starting was the point; a worker that was running reconnects its port.
    ready.then(() => portReady()).catch(() => {});
    return false;
  }
  if (msg.do === 'pair') {
    // Only our own pairing page, where the user typed the code.
    if (!String(sender.url || '').startsWith(chrome.runtime.getURL('pair.html'))) return false;
    pairWith(msg.code, msg.port, msg.heartbeatMs).then(() => reply({ ok: true }),
      (e) => reply({ ok: false, error: String(e.message || e) }));
    return true;
  }
  if (msg.do === 'share' || msg.do === 'unshare') {
    // Only our own popup page speaks for the user.
    if (!String(sender.url || '').startsWith(chrome.runtime.getURL('popup.html'))) return false;
    const run = msg.do === 'share' ? share(msg.tabId, msg.session) : unshare(msg.tabId);
    run.then(() => reply({ ok: true }), (e) => reply({ ok: false, error: String(e.message || e) }));
    return true;
  }
  if (msg.get !== 'status') return false;
  config().then(({ port, secret }) => reply({
    status,
    paired: !!secret,
    relay: `ws://127.0.0.1:${port}/extension`,
    lastError,
    counters,
    sessions,
    attached: [...attached],
  }));
  return true;
});

// Start: what an earlier run of this worker knew (who owns which tab, the
// child sessions, the link), then the link itself. Chrome may start this
// worker for an event (a debugger event, a frame the offscreen document
// woke it for): the listeners wait for this before they look at `owned`.
async function start() {
  try {
    await config(); // the heartbeat period
    const got = await chrome.storage.session.get(['sessions', 'children']);
    if (Array.isArray(got.sessions) && !sessions.length) {
      sessions = got.sessions;
      rebuildOwned();
    }
    for (const [sid, tabId] of Object.entries(got.children || {})) children.set(sid, tabId);
  } catch {
    // nothing kept: the relay's next 'sessions' tells
  }
  try {
    await portReady();
  } catch (e) {
    lastError = String(e.message || e);
  }
}
const ready = start();

// Wake-ups: start-up, install, a frame for a stopped worker (the offscreen
// document sends 'wake'), and an alarm (a link that could not be opened).
chrome.alarms.create('tabvisor-reconnect', { periodInMinutes: 0.5 });
chrome.alarms.onAlarm.addListener(() => {
  if (!linkConn) connect();
});
chrome.runtime.onStartup.addListener(() => connect());
chrome.runtime.onInstalled.addListener(() => connect());
connect();
