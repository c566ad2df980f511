// pair.js - the pairing page: the user types the one-time code that
// `tabvisor pair` showed; the service worker proves it knows the code to the
// relay over the socket and gets the secret back (docs/relay.md, "Pairing").
// No secret is ever in this page's URL: Chromium keeps URLs in the profile's
// history. The query may name the relay's port (?port=N), which is no secret.
// Not web-accessible: web pages cannot open it.
(() => {
  const q = new URLSearchParams(location.search);
  const out = document.getElementById('status');
  const port = document.getElementById('port');
  if (q.get('port')) port.value = q.get('port');
  // heartbeat (ms): for tests, which cannot wait 20 s for one.
  const hb = Number(q.get('heartbeat') || '0');
  document.getElementById('pair').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    out.textContent = 'Pairing…';
    out.dataset.state = 'pairing';
    const code = document.getElementById('code').value;
    const r = await chrome.runtime.sendMessage({ do: 'pair', code, port: Number(port.value), heartbeatMs: hb });
    document.getElementById('code').value = '';
    out.textContent = r?.ok ? `Paired with the relay on 127.0.0.1:${port.value}. You can close this tab.`
      : `Not paired: ${r?.error || 'no answer'}`;
    out.dataset.state = r?.ok ? 'paired' : 'error';
  });
})();
