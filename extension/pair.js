// pair.js - stores the relay's pairing secret and port, given in this page's
// URL fragment by `tabvisor-relay pair` (a fragment never reaches a server
// and is not on any command line). Not web-accessible: web pages cannot
// open it to pair the extension with a secret of theirs.
(async () => {
  const out = document.getElementById('status');
  const p = new URLSearchParams(location.hash.slice(1));
  const secret = p.get('secret') || '';
  const port = Number(p.get('port') || '47653');
  // Drop the secret from the address bar and history at once.
  history.replaceState(null, '', location.pathname);
  if (!/^[0-9a-f]{64}$/.test(secret) || !Number.isInteger(port) || port < 1 || port > 65535) {
    out.textContent = 'Not paired: the link is malformed. Run `tabvisor-relay pair` again.';
    out.dataset.state = 'error';
    return;
  }
  // heartbeat (ms): for tests, which cannot wait 20 s for one.
  const hb = Number(p.get('heartbeat') || '0');
  const heartbeatMs = Number.isInteger(hb) && hb >= 1000 && hb <= 20000 ? hb : 20000;
  await chrome.storage.local.set({ secret, port, heartbeatMs });
  out.textContent = `Paired with the relay on 127.0.0.1:${port}. You can close this tab.`;
  out.dataset.state = 'paired';
})();
