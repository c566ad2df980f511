// popup.js - connection status, the sessions and their tabs, counters, and
// the user's consent: share one of their tabs with a session, or stop.
let shown = '';

function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'dataset') Object.assign(e.dataset, v);
    else e[k] = v;
  }
  e.append(...children);
  return e;
}

async function act(msg) {
  const r = await chrome.runtime.sendMessage(msg);
  document.getElementById('error').textContent = r && !r.ok ? r.error : '';
  shown = '';
  setTimeout(render, 200);
}

async function render() {
  const s = await chrome.runtime.sendMessage({ get: 'status' });
  if (!s) return;
  const all = await chrome.tabs.query({});
  const web = all.filter((t) => /^https?:\/\//.test(t.url || ''));
  // Re-draw only on change, so a choice being made is not reset.
  const key = JSON.stringify([s.status, s.relay, s.sessions, web.map((t) => [t.id, t.title])]);
  if (key !== shown) {
    shown = key;
    draw(s, all, web);
  }
  const c = s.counters;
  document.getElementById('counters').textContent =
    `sent ${c.sent} · received ${c.received} · requests ${c.requests} · events ${c.events}`;
  if (s.lastError) document.getElementById('error').textContent = s.lastError;
}

function draw(s, all, web) {
  const st = document.getElementById('status');
  st.textContent = s.status;
  st.dataset.state = s.status;
  document.getElementById('relay').textContent = s.relay;
  const byId = new Map(all.map((t) => [t.id, t]));
  const owner = new Map();
  const ul = document.getElementById('sessions');
  ul.replaceChildren();
  for (const sess of s.sessions) {
    const inner = el('ul');
    for (const t of sess.tabs) {
      owner.set(t.tabId, { session: sess.id, created: t.created });
      const tab = byId.get(t.tabId);
      inner.append(el('li', { className: 'tab', dataset: { tabId: String(t.tabId) } },
        tab ? tab.title || tab.url : `tab ${t.tabId}`));
    }
    ul.append(el('li', { className: 'session', dataset: { session: sess.id } },
      `${sess.id}${sess.live ? '' : ' (reconnecting)'}: `, inner));
  }
  if (!s.sessions.length) ul.append(el('li', { className: 'muted' }, 'none'));

  const live = s.sessions.filter((x) => x.live).map((x) => x.id);
  const tl = document.getElementById('tabs');
  tl.replaceChildren();
  for (const tab of web) {
    const o = owner.get(tab.id);
    const li = el('li', { className: 'user-tab', dataset: { tabId: String(tab.id) } }, `${tab.title || tab.url} `);
    if (o && !o.created) {
      li.append(`(shared with ${o.session}) `,
        el('button', { className: 'unshare', onclick: () => act({ do: 'unshare', tabId: tab.id }) }, 'Stop sharing'));
    } else if (o) {
      li.append(`(opened by ${o.session})`);
    } else if (live.length) {
      const sel = el('select', { className: 'session-choice' }, ...live.map((id) => el('option', { value: id }, id)));
      li.append(sel, ' ', el('button', { className: 'share',
        onclick: () => act({ do: 'share', tabId: tab.id, session: sel.value }) }, 'Share'));
    }
    tl.append(li);
  }
  if (!web.length) tl.append(el('li', { className: 'muted' }, 'no web pages open'));
}

render();
setInterval(render, 1000);
