// offscreen.js - the extension's link to the relay, kept open while the
// service worker sleeps (docs/relay.md, "Keep-alive and reconnects").
//
// Chrome stops an idle MV3 service worker, and with it any WebSocket it
// holds: the relay then sees the extension leave and every call waits for
// the worker to be woken. An offscreen document is not stopped, so the
// socket lives here. This page is only a pipe: the service worker speaks
// the protocol (it holds the secret and is the only context that may use
// chrome.debugger); it talks to this page over a runtime port, and a frame
// that arrives while it sleeps wakes it (a runtime message starts a stopped
// worker) and waits here, in order, until it connects again.
//
// Port messages, service worker -> here:
//   {op:'open', conn, url, protocol}  a new socket numbered `conn` (the
//                               worker's choice; the old one is closed)
//   {op:'send', conn, text}     a text frame on socket `conn`
//   {op:'close', conn}          close socket `conn`
// here -> service worker:
//   {ev:'hello', conn, open}    first message on every port: the socket now
//   {ev:'open'|'close', conn, reason?}, {ev:'frame', conn, data}

let ws = null;
let conn = 0; // the current socket's number (the service worker's); 0: none
let port = null;
const queue = []; // messages for a service worker that is not connected
let waking = null; // timer while a stopped worker is being woken
// Requests of the relay's handed to the service worker and not answered: a
// worker stopped while running one never will, so they are answered here.
const pending = new Set();

function toWorker(msg) {
  if (port) {
    deliver(msg);
    return;
  }
  queue.push(msg);
  wake();
}

// A request counts as the service worker's once it is handed to it.
function deliver(msg) {
  if (msg.ev === 'frame' && msg.conn === conn) {
    const id = frameId(msg.data, 'req');
    if (id !== null) pending.add(id);
  }
  port.postMessage(msg);
}

// A runtime message starts a stopped service worker, whose first act is to
// connect its port; asked again every second until it does.
function wake() {
  if (waking || port) return;
  chrome.runtime.sendMessage({ do: 'wake' }).catch(() => {});
  waking = setTimeout(() => {
    waking = null;
    if (!port && queue.length) wake();
  }, 1000);
}

function isOpen() {
  return !!ws && ws.readyState === WebSocket.OPEN;
}

function open(id, url, protocol) {
  if (ws) {
    const old = ws;
    ws = null;
    old.close();
  }
  pending.clear();
  conn = id;
  let sock;
  try {
    sock = new WebSocket(url, protocol);
  } catch (e) {
    toWorker({ ev: 'close', conn: id, reason: String(e) });
    return;
  }
  ws = sock;
  sock.onopen = () => ws === sock && toWorker({ ev: 'open', conn: id });
  sock.onmessage = (ev) => {
    if (ws !== sock) return;
    toWorker({ ev: 'frame', conn: id, data: ev.data });
  };
  sock.onclose = (ev) => {
    if (ws !== sock) return;
    ws = null;
    pending.clear();
    toWorker({ ev: 'close', conn: id, reason: ev.reason || '' });
  };
  sock.onerror = () => {};
}

// The id of a frame of the given type ({type, id}: 'req' from the relay,
// 'res' to it), or null for other frames.
function frameId(text, type) {
  try {
    const m = JSON.parse(text);
    return m && m.type === type && Number.isInteger(m.id) ? m.id : null;
  } catch {
    return null;
  }
}

function sendText(id, text) {
  if (id !== conn || !isOpen()) return;
  const r = frameId(text, 'res');
  if (r !== null) pending.delete(r);
  ws.send(text);
}

// The service worker went away (stopped, crashed) with requests of the
// relay's in hand: they fail now, as a broken link would fail them, rather
// than at their callers' deadlines. Frames after this wait for it.
function workerGone() {
  port = null;
  if (!isOpen()) return;
  for (const id of pending) {
    ws.send(JSON.stringify({
      v: 1, type: 'res', id, ok: false,
      error: { code: 'EXTENSION_NOT_CONNECTED', message: 'the extension\'s service worker was stopped during the call; the next call wakes it' },
    }));
  }
  pending.clear();
  if (queue.length) wake();
}

chrome.runtime.onConnect.addListener((p) => {
  if (p.name !== 'tabvisor-link' || p.sender?.id !== chrome.runtime.id) return;
  if (port) port.disconnect();
  port = p;
  if (waking) {
    clearTimeout(waking);
    waking = null;
  }
  p.onMessage.addListener((m) => {
    if (port !== p || !m) return;
    if (m.op === 'open' && Number.isInteger(m.conn)) open(m.conn, String(m.url), String(m.protocol));
    else if (m.op === 'send') sendText(m.conn, String(m.text));
    else if (m.op === 'close' && m.conn === conn && ws) ws.close();
  });
  p.onDisconnect.addListener(() => {
    if (port === p) workerGone();
  });
  p.postMessage({ ev: 'hello', conn, open: isOpen() });
  while (queue.length && port === p) deliver(queue.shift());
});
