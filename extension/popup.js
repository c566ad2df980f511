// popup.js - connection status, the sessions and their tabs, counters.
async function render() {
  const s = await chrome.runtime.sendMessage({ get: 'status' });
  if (!s) return;
  const st = document.getElementById('status');
  st.textContent = s.status;
  st.dataset.state = s.status;
  document.getElementById('relay').textContent = s.relay;
  document.getElementById('error').textContent = s.lastError || '';
  const ul = document.getElementById('sessions');
  ul.replaceChildren();
  for (const sess of s.sessions) {
    const li = document.createElement('li');
    li.className = 'session';
    li.dataset.session = sess.id;
    li.textContent = `${sess.id}${sess.live ? '' : ' (reconnecting)'}: `;
    const tabs = await Promise.all(sess.tabs.map((t) => chrome.tabs.get(t.tabId).catch(() => null)));
    const inner = document.createElement('ul');
    sess.tabs.forEach((t, i) => {
      const tli = document.createElement('li');
      tli.className = 'tab';
      tli.dataset.tabId = String(t.tabId);
      tli.textContent = tabs[i] ? `${tabs[i].title || tabs[i].url}` : `tab ${t.tabId}`;
      inner.append(tli);
    });
    li.append(inner);
    ul.append(li);
  }
  if (!s.sessions.length) {
    const li = document.createElement('li');
    li.className = 'muted';
    li.textContent = 'none';
    ul.append(li);
  }
  const c = s.counters;
  document.getElementById('counters').textContent =
    `sent ${c.sent} · received ${c.received} · requests ${c.requests} · events ${c.events}`;
}
render();
setInterval(render, 1000);
