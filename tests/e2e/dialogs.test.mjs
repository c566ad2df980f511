// JavaScript dialogs as a modal state (issue 3 point 8): nothing is answered
// for the agent; every response says a dialog is open; tools that need the
// page fail with MODAL_STATE; browser_handle_dialog answers it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, startPageServer, call, text } from './lib.mjs';

const pages = await startPageServer();
const srv = await startServer();
const c = srv.client;
test.after(async () => { await srv.close(); await pages.close(); });

const evaluate = async (fn) => (await call(c, 'browser_evaluate', { function: fn })).structuredContent.result?.value;

test('alert: the click answers at once with the modal state; blocked tools fail with MODAL_STATE; handle_dialog answers', async () => {
  await call(c, 'browser_navigate', { url: `${pages.url}/dialog-page.html` });
  const t0 = performance.now();
  let r = await call(c, 'browser_click', { target: '#alert' });
  const ms = performance.now() - t0;
  assert.equal(r.isError, false, text(r));
  assert.deepEqual(r.structuredContent.modalState, { type: 'alert', message: 'Hello there' });
  assert.match(text(r), /### Modal state\n- \[alert dialog with message "Hello there"\].*browser_handle_dialog/);
  console.log(`# click opening an alert answered in ${ms.toFixed(0)} ms`);
  assert.ok(ms < 2000, `${ms} ms`);

  for (const [tool, args] of [['browser_snapshot', {}], ['browser_evaluate', { function: '() => 1' }],
    ['browser_click', { target: '#confirm' }], ['browser_take_screenshot', {}],
    ['browser_navigate', { url: `${pages.url}/counter.html` }],
    // A key sent while the dialog is open would go nowhere: refused before
    // it is sent, as every tool that needs the page is.
    ['browser_press_key', { key: 'a' }], ['browser_wait_for', { time: 0.1 }]]) {
    const t1 = performance.now();
    r = await call(c, tool, args);
    assert.equal(r.isError, true, `${tool}: ${text(r)}`);
    assert.equal(r.structuredContent.error.code, 'MODAL_STATE', `${tool}: ${text(r)}`);
    assert.match(r.structuredContent.error.hint, /browser_handle_dialog/);
    assert.equal(r.structuredContent.modalState.type, 'alert');
    assert.ok(performance.now() - t1 < 1000, `${tool} failed fast`);
  }

  // Tools that read the session's own records run while the dialog is open,
  // and say it is.
  for (const [tool, args] of [['browser_tabs', { action: 'list' }], ['browser_console_messages', {}],
    ['browser_network_requests', {}]]) {
    r = await call(c, tool, args);
    assert.equal(r.isError, false, `${tool}: ${text(r)}`);
    assert.equal(r.structuredContent.modalState.type, 'alert', `${tool}: ${text(r)}`);
  }

  r = await call(c, 'browser_handle_dialog', { accept: true });
  assert.equal(r.isError, false, text(r));
  assert.equal(r.structuredContent.modalState, undefined);
  assert.match(text(r), /Accepted the alert dialog "Hello there"/);
  assert.equal(await evaluate("() => document.getElementById('out').textContent"), 'alert closed');
});

test('confirm: accept and dismiss reach the page as true and false', async () => {
  await call(c, 'browser_navigate', { url: `${pages.url}/dialog-page.html` });
  for (const accept of [true, false]) {
    let r = await call(c, 'browser_click', { target: '#confirm' });
    assert.deepEqual(r.structuredContent.modalState, { type: 'confirm', message: 'Delete it?' });
    r = await call(c, 'browser_handle_dialog', { accept });
    assert.equal(r.isError, false, text(r));
    assert.equal(await evaluate("() => document.getElementById('out').textContent"), `confirm: ${accept}`);
  }
});

test('prompt: promptText reaches the page; dismiss gives null', async () => {
  await call(c, 'browser_navigate', { url: `${pages.url}/dialog-page.html` });
  let r = await call(c, 'browser_click', { target: '#prompt' });
  assert.deepEqual(r.structuredContent.modalState, { type: 'prompt', message: 'Your name?', defaultPrompt: 'nobody' });
  r = await call(c, 'browser_handle_dialog', { accept: true, promptText: 'Ada Lovelace' });
  assert.equal(r.isError, false, text(r));
  assert.equal(await evaluate("() => document.getElementById('out').textContent"), 'prompt: Ada Lovelace');
  await call(c, 'browser_click', { target: '#prompt' });
  await call(c, 'browser_handle_dialog', { accept: false });
  assert.equal(await evaluate("() => document.getElementById('out').textContent"), 'prompt: null');
});

test('a dialog a timer opens while the click settles ends the settling and is in that response', async () => {
  await call(c, 'browser_navigate', { url: `${pages.url}/dialog-page.html` });
  const r = await call(c, 'browser_click', { target: '#late' });
  assert.equal(r.isError, false, text(r));
  assert.deepEqual(r.structuredContent.modalState, { type: 'alert', message: 'Late alert' });
  assert.equal((await call(c, 'browser_handle_dialog', { accept: true })).isError, false);
});

test('a dialog opened between calls is reported by the next call', async () => {
  await call(c, 'browser_navigate', { url: `${pages.url}/dialog-page.html` });
  await call(c, 'browser_evaluate', { function: "() => { setTimeout(() => alert('Between calls'), 50); }" });
  await new Promise((res) => setTimeout(res, 300));
  const r = await call(c, 'browser_snapshot');
  assert.equal(r.structuredContent.error?.code, 'MODAL_STATE', text(r));
  assert.match(r.structuredContent.error.message, /Between calls/);
  assert.equal((await call(c, 'browser_handle_dialog', { accept: false })).isError, false);
  assert.equal((await call(c, 'browser_snapshot')).isError, false);
});

test('beforeunload: leaving a page the user typed into asks; accepting goes on to the new page', async () => {
  await call(c, 'browser_navigate', { url: `${pages.url}/dialog-beforeunload.html` });
  await call(c, 'browser_type', { target: '#draft', text: 'unsaved words' });
  let r = await call(c, 'browser_navigate', { url: `${pages.url}/counter.html` });
  assert.equal(r.structuredContent.modalState?.type, 'beforeunload', text(r));
  r = await call(c, 'browser_handle_dialog', { accept: false });
  assert.equal(r.isError, false, text(r));
  assert.equal(r.structuredContent.title, 'Unsaved', 'dismissing stays');
  r = await call(c, 'browser_navigate', { url: `${pages.url}/counter.html` });
  assert.equal(r.structuredContent.modalState?.type, 'beforeunload', text(r));
  r = await call(c, 'browser_handle_dialog', { accept: true });
  assert.equal(r.isError, false, text(r));
  assert.equal(r.structuredContent.title, 'Counter', text(r));
});

test('handle_dialog with no dialog open is INVALID_PARAMETERS', async () => {
  const r = await call(c, 'browser_handle_dialog', { accept: true });
  assert.equal(r.isError, true);
  assert.equal(r.structuredContent.error.code, 'INVALID_PARAMETERS');
  assert.match(r.structuredContent.error.message, /no dialog is open/);
});
