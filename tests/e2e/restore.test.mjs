// A session comes back as it was after a crash (worker/session_state.c):
// signed in on a page (a cookie, a localStorage token, a sessionStorage
// draft), a second tab open, the first one current, the viewport resized;
// then kill -9 of the session's worker, of the browser (Chromium, or
// Firefox as e2e.restore.firefox), and of the page's renderer (Firefox's
// content process), in turn. After each, the next call finds both tabs at their
// URLs, the first current, signed in with the token and the draft, the
// viewport as it was, and the result says what was restored.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, startPageServer, call, text, waitFor, onFirefox } from './lib.mjs';
import { workersOf, browserMain, rendererOf } from './procs.mjs';

const pages = await startPageServer();
const srv = await startServer();
after(async () => {
  await srv.close();
  await pages.close();
});
const c = srv.client;
const account = `${pages.url}/account.html`;
const counter = `${pages.url}/counter.html`;

function ok(r) {
  assert.equal(r.isError, false, text(r));
  return r;
}

// What the session looks like: its tabs, and the account page's own view of
// the cookie, the token and the draft.
async function looksSignedIn(r) {
  const tabs = ok(await call(c, 'browser_tabs', { action: 'list' })).structuredContent.tabs;
  assert.deepEqual(tabs.map((t) => t.url), [account, counter], JSON.stringify(tabs));
  assert.equal(tabs.findIndex((t) => t.current), 0);
  const seen = ok(await call(c, 'browser_evaluate', {
    function: `() => [document.getElementById('who').textContent, document.getElementById('token').textContent,
      document.getElementById('draft').textContent, innerWidth, innerHeight].join('|')`,
  }));
  assert.match(text(seen), /Signed in as ada\|Token: tok-ada\|Draft: note of ada\|900\|650/);
  return r;
}

test('sign in, open a second tab, resize: the state the next crash restores', async () => {
  ok(await call(c, 'browser_navigate', { url: account }));
  ok(await call(c, 'browser_type', { target: '#user', text: 'ada', submit: true, snapshot: 'none' }));
  ok(await call(c, 'browser_tabs', { action: 'new' }));
  ok(await call(c, 'browser_navigate', { url: counter }));
  ok(await call(c, 'browser_tabs', { action: 'select', index: 0 }));
  ok(await call(c, 'browser_resize', { width: 900, height: 650 }));
  await looksSignedIn();
  // The worker captures the state once it is idle after a call; the session
  // list shows what a crash would restore.
  let saved;
  const kept = await waitFor(async () => {
    saved = ok(await call(c, 'browser_session_list')).structuredContent.sessions[0].savedState;
    return saved && saved.tabs === 2 && saved.cookies >= 1 && saved.localStorageOrigins >= 1 &&
      saved.viewport?.width === 900;
  }, 30000, 100);
  assert.ok(kept, `saved: ${JSON.stringify(saved)}`);
  assert.ok(saved.bytes > 100 && saved.bytes < 4096, JSON.stringify(saved));
});

for (const [what, kill] of [
  ['the session\'s worker', async () => workersOf(srv.runtimeDir).at(-1).pid],
  [onFirefox ? 'Firefox' : 'Chromium', async () => browserMain(srv.runtimeDir)[0].pid],
]) {
  test(`kill -9 of ${what}: the next call finds both tabs, signed in, the token, the draft and the viewport`, async () => {
    const pid = await kill();
    assert.ok(pid, `no process for ${what}`);
    process.kill(pid, 'SIGKILL');
    // The supervisor lets go of the session's worker when it reaps the
    // process. A call before that may still be answered by the old worker,
    // from what it holds (the tab list), on a busy machine.
    const reaped = await waitFor(() => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    }, 30000, 10);
    assert.ok(reaped, `${what} (pid ${pid}) was not reaped`);
    // The first call after the crash: a fresh worker, restored before it runs.
    let r;
    for (let i = 0; i < 50; i++) {
      r = await call(c, 'browser_tabs', { action: 'list' });
      if (!r.isError) break;
      // Only the call that met the crash may fail, with the crash's code.
      assert.match(r.structuredContent?.error?.code || '', /SESSION_CRASHED|BROWSER_CRASHED/, text(r));
    }
    ok(r);
    assert.equal(r.structuredContent.sessionRestarted, true, text(r));
    const restored = r.structuredContent.sessionRestored;
    assert.ok(restored, `no sessionRestored in ${JSON.stringify(r.structuredContent)}`);
    assert.deepEqual(restored.tabs, [account, counter]);
    assert.ok(restored.cookies >= 1 && restored.localStorageOrigins >= 1 && restored.sessionStorageTabs >= 1,
      JSON.stringify(restored));
    assert.deepEqual(restored.notRestored, []);
    assert.match(text(r), /state was restored: 2 tab\(s\)/);
    await looksSignedIn();
  });
}

test('kill -9 of the page\'s renderer: the tab is reloaded in place, both tabs, signed in, the draft kept', async () => {
  const pid = await rendererOf(srv, undefined);
  process.kill(pid, 'SIGKILL');
  // The renderer is gone: a call fails with PAGE_CRASHED, or (the crash seen
  // between calls) the next result says the tab was reloaded.
  let crashSeen = false;
  for (let i = 0; i < 50 && !crashSeen; i++) {
    const r = await call(c, 'browser_evaluate', { function: '() => 1' });
    if (r.isError) assert.equal(r.structuredContent?.error?.code, 'PAGE_CRASHED', text(r));
    crashSeen = r.isError || /crashed: its renderer process ended/.test(text(r));
  }
  assert.ok(crashSeen, 'the crash was never reported');
  // Reloaded in place: the same tab keeps its sessionStorage (the draft).
  await looksSignedIn();
});

// The saved state is bounded (SESSION_STATE_MAX, 1 MiB of JSON): a page that
// keeps more in its storage has the largest lists left out, and the restore
// says so; the rest comes back.
test('a state over 1 MiB leaves the largest storage out and says so; the rest is restored', async () => {
  const s = await startServer();
  try {
    ok(await call(s.client, 'browser_navigate', { url: account }));
    ok(await call(s.client, 'browser_type', { target: '#user', text: 'bob', submit: true, snapshot: 'none' }));
    ok(await call(s.client, 'browser_evaluate', { function: "() => { localStorage.setItem('big', 'x'.repeat(1200000)); }" }));
    let saved;
    assert.ok(await waitFor(async () => {
      saved = ok(await call(s.client, 'browser_session_list')).structuredContent.sessions[0].savedState;
      return saved && saved.localStorageOrigins === 1;
    }, 30000, 100), JSON.stringify(saved));
    assert.ok(saved.bytes <= 1024 * 1024, JSON.stringify(saved));
    process.kill(workersOf(s.runtimeDir).at(-1).pid, 'SIGKILL');
    let r;
    for (let i = 0; i < 50; i++) {
      r = await call(s.client, 'browser_evaluate', { function: "() => [document.getElementById('who').textContent, String(localStorage.getItem('big')).length].join('|')" });
      if (!r.isError) break;
    }
    ok(r);
    assert.match(text(r), /Signed in as bob\|4\b/); // "null": the big list was left out
    assert.match(text(r), /Not restored: localStorage of http:\/\/127\.0\.0\.1:\d+: not kept \(the saved state is bounded\)/);
  } finally {
    await s.close();
  }
});

test('--no-session-restore: nothing is kept, the next call after a crash starts empty and says so', async () => {
  const s = await startServer(['--no-session-restore']);
  try {
    ok(await call(s.client, 'browser_navigate', { url: account }));
    ok(await call(s.client, 'browser_click', { target: '#go', snapshot: 'none' }));
    const sessions = ok(await call(s.client, 'browser_session_list')).structuredContent.sessions;
    assert.equal(sessions[0].savedState, undefined);
    process.kill(workersOf(s.runtimeDir).at(-1).pid, 'SIGKILL');
    let r;
    for (let i = 0; i < 50; i++) {
      r = await call(s.client, 'browser_evaluate', { function: '() => location.href' });
      if (!r.isError) break;
    }
    ok(r);
    assert.deepEqual(r.structuredContent.result, { value: 'about:blank' });
    assert.equal(r.structuredContent.sessionRestored, undefined);
    assert.match(text(r), /page state \(tabs, cookies, storage\) was lost/);
  } finally {
    await s.close();
  }
});
