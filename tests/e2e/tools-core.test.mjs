// The core tools of issue 8 on real pages through the official SDK client:
// history, keys, hover, select, forms, drag, waits, viewport, console and
// network logs; each with its errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, startPageServer, call, text, refOf, onFirefox } from './lib.mjs';

const pages = await startPageServer();
const srv = await startServer();
const c = srv.client;
test.after(async () => { await srv.close(); await pages.close(); });

const ok = (r) => { assert.equal(r.isError, false, text(r)); return r; };
const code = (r) => { assert.equal(r.isError, true, text(r)); return r.structuredContent.error.code; };
const js = async (fn) => ok(await call(c, 'browser_evaluate', { function: fn })).structuredContent.result.value;
const open = async (page) => ok(await call(c, 'browser_navigate', { url: `${pages.url}/${page}` }));

test('every new tool is listed with schemas and annotations', async () => {
  const { tools } = await c.listTools();
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  for (const name of ['browser_navigate_back', 'browser_navigate_forward', 'browser_reload', 'browser_press_key',
    'browser_hover', 'browser_drag', 'browser_select_option', 'browser_fill_form', 'browser_wait_for',
    'browser_resize', 'browser_console_messages', 'browser_network_requests', 'browser_network_request']) {
    const t = byName[name];
    assert.ok(t, name);
    assert.equal(t.inputSchema.type, 'object');
    assert.ok(t.outputSchema.properties, name);
    assert.equal(typeof t.annotations.readOnlyHint, 'boolean');
  }
  assert.equal(byName.browser_wait_for.annotations.readOnlyHint, true);
  assert.equal(byName.browser_network_request.annotations.readOnlyHint, true);
  assert.equal(byName.browser_drag.annotations.destructiveHint, true);
  assert.deepEqual(byName.browser_select_option.inputSchema.required, ['target', 'values']);
  assert.deepEqual(byName.browser_press_key.inputSchema.required, ['key']);
});

test('back, forward and reload move through the history and wait for the page', async () => {
  // A fresh session: its history starts empty.
  const s = ok(await call(c, 'browser_session_create')).structuredContent.sessionId;
  let r = await call(c, 'browser_navigate_back', { sessionId: s });
  assert.equal(code(r), 'INVALID_PARAMETERS');
  assert.match(text(r), /no previous page/);
  ok(await call(c, 'browser_navigate', { sessionId: s, url: `${pages.url}/t8-keys.html` }));
  ok(await call(c, 'browser_navigate', { sessionId: s, url: `${pages.url}/t8-hover.html` }));
  r = ok(await call(c, 'browser_navigate_back', { sessionId: s }));
  assert.equal(r.structuredContent.title, 'Keys');
  assert.match(r.structuredContent.url, /t8-keys\.html$/);
  assert.match(text(r), /Went back to .*t8-keys\.html/);
  r = ok(await call(c, 'browser_navigate_forward', { sessionId: s }));
  assert.equal(r.structuredContent.title, 'Hover');
  r = await call(c, 'browser_navigate_forward', { sessionId: s });
  assert.equal(code(r), 'INVALID_PARAMETERS');
  assert.match(text(r), /no next page/);
  // Same-document entries (a fragment) count too.
  ok(await call(c, 'browser_navigate', { sessionId: s, url: `${pages.url}/t8-hover.html#laptops` }));
  r = ok(await call(c, 'browser_navigate_back', { sessionId: s }));
  assert.match(r.structuredContent.url, /t8-hover\.html$/);
  // Reload: page state is gone, the document is new.
  ok(await call(c, 'browser_evaluate', { sessionId: s, function: "() => { window.mark = 1; document.title = 'Changed'; }" }));
  r = ok(await call(c, 'browser_reload', { sessionId: s }));
  assert.equal(r.structuredContent.title, 'Hover');
  r = ok(await call(c, 'browser_evaluate', { sessionId: s, function: '() => window.mark === undefined && document.readyState' }));
  assert.equal(r.structuredContent.result.value, 'complete');
  // A slow page: back waits for its load.
  ok(await call(c, 'browser_navigate', { sessionId: s, url: `${pages.url}/slow?ms=300` }));
  ok(await call(c, 'browser_navigate', { sessionId: s, url: `${pages.url}/t8-keys.html` }));
  r = ok(await call(c, 'browser_navigate_back', { sessionId: s, waitUntil: 'load' }));
  assert.equal(r.structuredContent.title, 'Slow');
  ok(await call(c, 'browser_session_close', { sessionId: s }));
});

test('press_key: Enter submits, chords and modifiers reach the page, Control+A selects all', async () => {
  await open('t8-keys.html');
  ok(await call(c, 'browser_type', { target: '#q', text: 'cats' }));
  let r = ok(await call(c, 'browser_press_key', { key: 'Enter', snapshot: 'none' }));
  assert.match(text(r), /^Pressed Enter/);
  assert.equal(await js("() => document.getElementById('out').textContent"), 'Submitted: cats');
  assert.equal(await js("() => document.getElementById('last').textContent"), 'Last key: Enter code Enter keyCode 13');

  // Focus by target, then keys: Control+A selects everything, a character replaces it.
  r = ok(await call(c, 'browser_press_key', { target: '#notes', key: 'Control+A', snapshot: 'none' }));
  assert.match(text(r), /Pressed Control\+A textbox "Notes"/);
  assert.equal(await js("() => document.getElementById('last').textContent"), 'Last key: A code KeyA keyCode 65 with ctrl');
  ok(await call(c, 'browser_press_key', { key: 'x', snapshot: 'none' }));
  assert.equal(await js("() => document.getElementById('notes').value"), 'x');
  ok(await call(c, 'browser_press_key', { key: 'Shift+a', snapshot: 'none' }));
  ok(await call(c, 'browser_press_key', { key: '!', snapshot: 'none' }));
  ok(await call(c, 'browser_press_key', { key: 'ArrowLeft', snapshot: 'none' }));
  ok(await call(c, 'browser_press_key', { key: 'Backspace', snapshot: 'none' }));
  assert.equal(await js("() => document.getElementById('notes').value"), 'x!');
  // Tab moves focus; Shift+Tab moves it back.
  ok(await call(c, 'browser_press_key', { key: 'Tab', snapshot: 'none' }));
  assert.equal(await js('() => document.activeElement.id'), 'b2');
  r = ok(await call(c, 'browser_press_key', { key: 'Shift+Tab', snapshot: 'none' }));
  assert.equal(await js('() => document.activeElement.id'), 'notes');
  assert.equal(await js("() => document.getElementById('last').textContent"), 'Last key: Tab code Tab keyCode 9 with shift');
  ok(await call(c, 'browser_press_key', { key: 'Escape', snapshot: 'none' }));
  assert.equal(await js("() => document.getElementById('out').textContent"), 'Escaped');
  // With snapshot (default full) the result carries the page.
  r = ok(await call(c, 'browser_press_key', { key: 'F2' }));
  assert.match(r.structuredContent.snapshot, /paragraph.*Last key: F2/);

  // Errors: unknown key names, a chord whose first part is no modifier, a bad target.
  assert.equal(code(await call(c, 'browser_press_key', { key: 'Entr' })), 'INVALID_PARAMETERS');
  assert.equal(code(await call(c, 'browser_press_key', { key: 'a+b' })), 'INVALID_PARAMETERS');
  assert.equal(code(await call(c, 'browser_press_key', { key: 'Control+' })), 'INVALID_PARAMETERS');
  assert.equal(code(await call(c, 'browser_press_key', { key: 'Enter', target: '#missing', timeout: 1000 })), 'ELEMENT_NOT_FOUND');
  // No modifier stays pressed after a chord.
  ok(await call(c, 'browser_press_key', { key: 'Control+Shift+K', snapshot: 'none' }));
  ok(await call(c, 'browser_press_key', { key: 'b', snapshot: 'none' }));
  assert.equal(await js("() => document.getElementById('last').textContent"), 'Last key: b code KeyB keyCode 66');
  // Playwright's "Space" is the space bar: its key is " ", alone and in a
  // chord (a code editor's Control+Space completion).
  ok(await call(c, 'browser_press_key', { key: 'Control+Space', snapshot: 'none' }));
  assert.equal(await js("() => document.getElementById('last').textContent"), 'Last key:   code Space keyCode 32 with ctrl');
  // Enter in a real form submits it: the result is the page it loaded.
  await open('t8-submit.html');
  ok(await call(c, 'browser_type', { target: '#code', text: '202' }));
  r = ok(await call(c, 'browser_press_key', { key: 'Enter' }));
  assert.match(r.structuredContent.url, /\/status\?code=202$/);
  assert.equal(r.structuredContent.title, 'Status 202');
  assert.match(r.structuredContent.snapshot, /heading "202"/);

});

test('click doubleClick is one double click for the page: two clicks, then dblclick', async () => {
  await open('counter.html');
  ok(await call(c, 'browser_evaluate', { function: "() => { window.seen = []; for (const t of ['click', 'dblclick']) document.querySelector('button').addEventListener(t, (e) => window.seen.push(t + ':' + e.detail)); }" }));
  ok(await call(c, 'browser_click', { target: 'button', doubleClick: true, snapshot: 'none' }));
  const r = ok(await call(c, 'browser_evaluate', { function: '() => window.seen.join(" ")' }));
  assert.equal(r.structuredContent.result.value, 'click:1 click:2 dblclick:2');
});

test('hover opens a :hover menu and fires mouseenter; covered targets fail', async () => {
  await open('t8-hover.html');
  assert.equal(await js("() => getComputedStyle(document.querySelector('.sub')).display"), 'none');
  let r = ok(await call(c, 'browser_hover', { target: 'role=button[name="Products"]' }));
  assert.match(text(r), /^Hovered button "Products" \[ref=e\d+\]/);
  assert.match(r.structuredContent.snapshot, /link "Laptops"/);
  ok(await call(c, 'browser_hover', { target: '#tip-host', snapshot: 'none' }));
  assert.equal(await js("() => document.getElementById('tip').hidden"), false);
  // The menu closes when the mouse leaves it.
  assert.equal(await js("() => getComputedStyle(document.querySelector('.sub')).display"), 'none');
  r = await call(c, 'browser_hover', { target: '#covered', timeout: 1000 });
  assert.equal(code(r), 'ELEMENT_NOT_CLICKABLE');
  assert.match(text(r), /covered by/);
  assert.equal(code(await call(c, 'browser_hover', { target: '#nope', timeout: 1000 })), 'ELEMENT_NOT_FOUND');
  assert.equal(code(await call(c, 'browser_hover', { target: 'e999999', timeout: 1000 })), 'ELEMENT_NOT_FOUND');
});

test('select_option by value and by label, multiple, with input and change events; its errors', async () => {
  await open('t8-select.html');
  let r = ok(await call(c, 'browser_select_option', { target: '#color', values: ['b'] }));
  assert.match(text(r), /^Selected \["b"\] in combobox "Color" \[ref=e\d+\]/);
  assert.equal(await js("() => document.getElementById('color').value"), 'b');
  assert.equal(await js("() => document.getElementById('events').textContent"), 'color:input=b, color:change=b');
  ok(await call(c, 'browser_select_option', { target: 'role=combobox[name="Color"]', values: ['Green'], snapshot: 'none' }));
  assert.equal(await js("() => document.getElementById('color').value"), 'g');
  ok(await call(c, 'browser_select_option', { target: '#top', values: ['Cheese', 'Olives'], snapshot: 'none' }));
  assert.deepEqual(await js("() => Array.from(document.getElementById('top').selectedOptions).map(o => o.value)"), ['Cheese', 'Olives']);
  // Options that arrive late are waited for.
  ok(await call(c, 'browser_select_option', { target: '#late', values: ['Arrived'], snapshot: 'none' }));
  assert.equal(await js("() => document.getElementById('late').value"), 'late1');

  r = await call(c, 'browser_select_option', { target: '#color', values: ['Purple'], timeout: 800 });
  assert.equal(code(r), 'ELEMENT_NOT_FOUND');
  assert.match(text(r), /no option with value or label "Purple"; options: "Red" \(value "r"\)/);
  r = await call(c, 'browser_select_option', { target: '#btn', values: ['a'] });
  assert.equal(code(r), 'INVALID_PARAMETERS');
  assert.match(text(r), /<button>, not a <select>/);
  assert.equal(code(await call(c, 'browser_select_option', { target: '#color', values: ['r', 'g'] })), 'INVALID_PARAMETERS');
  assert.equal(code(await call(c, 'browser_select_option', { target: '#color', values: ['Grey'], timeout: 600 })), 'ELEMENT_NOT_CLICKABLE');
  r = await call(c, 'browser_select_option', { target: '#locked', values: ['One'], timeout: 600 });
  assert.equal(code(r), 'ELEMENT_NOT_CLICKABLE');
  assert.match(text(r), /disabled/);
  assert.equal(code(await call(c, 'browser_select_option', { target: '#none', values: ['a'], timeout: 600 })), 'ELEMENT_NOT_FOUND');
  assert.equal(code(await call(c, 'browser_select_option', { target: '#color' })), 'INVALID_PARAMETERS');
});

test('fill_form fills text, checkbox, radio, select and slider in one call', async () => {
  await open('t8-form.html');
  let r = ok(await call(c, 'browser_fill_form', { fields: [
    { target: '#name', name: 'Name', type: 'textbox', value: 'Ada Lovelace' },
    { target: '#news', type: 'checkbox', value: 'true' },
    { ref: '#terms', type: 'checkbox', value: false },
    { target: '#l', type: 'radio', value: 'true' },
    { target: '#country', type: 'combobox', value: 'Germany' },
    { target: '#vol', type: 'slider', value: '7' },
  ] }));
  assert.match(text(r), /^Filled 6 fields: textbox "Name"/);
  assert.equal(r.structuredContent.fields.length, 6);
  assert.deepEqual(await js(`() => [document.getElementById('name').value, document.getElementById('news').checked,
    document.getElementById('terms').checked, document.getElementById('l').checked, document.getElementById('s').checked,
    document.getElementById('country').value, document.getElementById('vol').value]`),
  ['Ada Lovelace', true, false, true, false, 'de', '7']);
  assert.match(await js("() => document.getElementById('changes').textContent"), /news,terms,l,country,vol/);
  // Filling again with the same values changes nothing (checkboxes are not toggled back).
  ok(await call(c, 'browser_fill_form', { fields: [{ target: '#news', type: 'checkbox', value: 'true' }], snapshot: 'none' }));
  assert.equal(await js("() => document.getElementById('news').checked"), true);

  // Errors name the field; earlier fields stay filled.
  r = await call(c, 'browser_fill_form', { fields: [{ target: '#name', type: 'textbox', value: 'B' }, { target: '#country', type: 'checkbox', value: 'true' }] });
  assert.equal(code(r), 'INVALID_PARAMETERS');
  assert.match(text(r), /fields\[1\]: .*not a checkbox or radio \(1 field before it filled\)/);
  assert.equal(await js("() => document.getElementById('name').value"), 'B');
  assert.equal(code(await call(c, 'browser_fill_form', { fields: [{ target: '#l', type: 'radio', value: 'false' }] })), 'INVALID_PARAMETERS');
  assert.equal(code(await call(c, 'browser_fill_form', { fields: [{ target: '#name', type: 'slider', value: '1' }] })), 'INVALID_PARAMETERS');
  assert.equal(code(await call(c, 'browser_fill_form', { fields: [{ target: '#name', type: 'date', value: '1' }] })), 'INVALID_PARAMETERS');
  assert.equal(code(await call(c, 'browser_fill_form', { fields: [{ type: 'textbox', value: '1' }] })), 'INVALID_PARAMETERS');
  assert.equal(code(await call(c, 'browser_fill_form', { fields: [{ target: '#gone', type: 'textbox', value: '1' }], timeout: 800 })), 'ELEMENT_NOT_FOUND');
  // A checkbox hidden behind its styled label (CSS frameworks) is clicked through the label.
  r = ok(await call(c, 'browser_fill_form', { fields: [{ target: '#fancy', type: 'checkbox', value: 'true' }], snapshot: 'none' }));
  assert.equal(await js("() => document.getElementById('fancy').checked"), true);
  r = await call(c, 'browser_fill_form', { fields: [{ target: '#off', type: 'checkbox', value: 'true' }], timeout: 800 });
  assert.equal(code(r), 'ELEMENT_NOT_CLICKABLE');
  assert.match(text(r), /disabled/);
  r = await call(c, 'browser_fill_form', { fields: [{ target: '#stuck', type: 'checkbox', value: 'true' }] });
  assert.equal(code(r), 'ELEMENT_NOT_CLICKABLE');
  assert.match(text(r), /did not change its state/);
});

test('drag: HTML5 drag and drop and a mouse-event drag both land', async () => {
  await open('t8-drag.html');
  let r = ok(await call(c, 'browser_drag', { startTarget: '#card', startElement: 'Card', endTarget: '#bin', endElement: 'Bin' }));
  assert.match(text(r), /^Dragged button "Card" \[ref=e\d+\] to region "Bin" \[ref=e\d+\]/);
  assert.ok(r.structuredContent.ref && r.structuredContent.endRef);
  // (On Firefox, whose BiDi input starts no native drag, as the drag events in the page.)
  assert.equal(await js("() => document.getElementById('html5').textContent"), 'dropped card-data after dragenter');
  // Playwright's argument names work too.
  ok(await call(c, 'browser_drag', { startRef: '#knob', endRef: '#slot', snapshot: 'none' }));
  assert.equal(await js("() => document.getElementById('mouse').textContent"), 'knob in slot after several moves');
  // A link is draggable by default, but a mouse-event library cancels its
  // native drag: the drag still lands (on Firefox, the mouse drag follows
  // drag events that changed nothing).
  r = ok(await call(c, 'browser_drag', { startTarget: '#grip', endTarget: '#slot', snapshot: 'none' }));
  assert.equal(r.structuredContent.changed, true);
  assert.equal(await js("() => document.getElementById('mouse').textContent"), 'grip in slot after several moves');
  assert.equal(code(await call(c, 'browser_drag', { startTarget: '#card' })), 'INVALID_PARAMETERS');
  assert.equal(code(await call(c, 'browser_drag', { startTarget: '#card', endTarget: '#nowhere', timeout: 800 })), 'ELEMENT_NOT_FOUND');
});

test('wait_for: text, textGone, element states, url, time; TIMEOUT says what is missing', async () => {
  await open('t8-wait.html');
  ok(await call(c, 'browser_click', { target: '#later', snapshot: 'none' }));
  let r = ok(await call(c, 'browser_wait_for', { text: 'order CONFIRMED' }));
  assert.match(text(r), /^Waited \d+ ms/);
  assert.match(r.structuredContent.snapshot, /Order confirmed/);
  ok(await call(c, 'browser_click', { target: '#hide', snapshot: 'none' }));
  ok(await call(c, 'browser_wait_for', { textGone: 'Loading data', snapshot: 'none' }));
  assert.equal(await js("() => document.getElementById('spinner')"), null);
  ok(await call(c, 'browser_click', { target: '#show', snapshot: 'none' }));
  ok(await call(c, 'browser_wait_for', { selector: '#panel', state: 'visible', snapshot: 'none' }));
  assert.equal(await js("() => document.getElementById('panel').style.display"), 'block');
  ok(await call(c, 'browser_wait_for', { target: '#spinner', state: 'detached', snapshot: 'none' }));
  ok(await call(c, 'browser_wait_for', { target: '#panel', state: 'attached', loadState: 'load', snapshot: 'none' }));
  ok(await call(c, 'browser_click', { target: '#route', snapshot: 'none' }));
  ok(await call(c, 'browser_wait_for', { url: '**/orders/*/done', snapshot: 'none' }));
  ok(await call(c, 'browser_wait_for', { url: '/orders\\/\\d+/', snapshot: 'none' }));
  // networkidle: 500 ms without requests after a slow fetch ends.
  ok(await call(c, 'browser_evaluate', { function: "() => { fetch('/slow?ms=700'); return 1; }" }));
  r = ok(await call(c, 'browser_wait_for', { loadState: 'networkidle', snapshot: 'none' }));
  assert.ok(r.structuredContent.waitedMs >= 600, `waited ${r.structuredContent.waitedMs} ms for the fetch`);
  const t0 = Date.now();
  r = ok(await call(c, 'browser_wait_for', { time: 0.5, snapshot: 'none' }));
  assert.ok(Date.now() - t0 >= 450, 'time waits');
  assert.ok(r.structuredContent.waitedMs >= 490);

  // Timeouts say which condition did not hold.
  r = await call(c, 'browser_wait_for', { text: 'Never there', timeout: 700 });
  assert.equal(code(r), 'TIMEOUT');
  assert.match(text(r), /text "Never there" is not on the page/);
  r = await call(c, 'browser_wait_for', { text: 'Invisible words', timeout: 500 });
  assert.equal(code(r), 'TIMEOUT', 'visibility:hidden text is not shown');
  r = await call(c, 'browser_wait_for', { textGone: 'Order confirmed', timeout: 500 });
  assert.match(text(r), /still on the page/);
  // The deadline may fall during a check (a busy page, or a busy machine):
  // the timeout still says what the last check found. The page blocks its
  // thread 900 ms in every 950, so the check running at the deadline is cut.
  ok(await call(c, 'browser_evaluate', {
    function: '() => { window.busy = setInterval(() => { const t = Date.now(); while (Date.now() - t < 900); }, 950); return 1; }',
  }));
  r = await call(c, 'browser_wait_for', { textGone: 'Order confirmed', timeout: 1500 });
  assert.equal(code(r), 'TIMEOUT');
  assert.match(text(r), /waited \d+ ms: text "Order confirmed" is still on the page/);
  ok(await call(c, 'browser_evaluate', { function: '() => { clearInterval(window.busy); return 1; }' }));
  r = await call(c, 'browser_wait_for', { target: '#panel', state: 'hidden', timeout: 500 });
  assert.equal(code(r), 'TIMEOUT');
  assert.match(text(r), /the element is visible/);
  r = await call(c, 'browser_wait_for', { target: '#nothing', timeout: 500 });
  assert.equal(code(r), 'TIMEOUT');
  assert.match(text(r), /no element matches #nothing/);
  r = await call(c, 'browser_wait_for', { url: '**/elsewhere', timeout: 500 });
  assert.match(text(r), /does not match/);
  assert.equal(code(await call(c, 'browser_wait_for', { time: 5, timeout: 300 })), 'TIMEOUT');
  assert.equal(code(await call(c, 'browser_wait_for', { url: '/(/' })), 'INVALID_PARAMETERS');
  assert.equal(code(await call(c, 'browser_wait_for', { target: 'button', timeout: 500 })), 'ELEMENT_AMBIGUOUS');
  assert.equal(code(await call(c, 'browser_wait_for', { state: 'floating' })), 'INVALID_PARAMETERS');
  assert.equal(code(await call(c, 'browser_wait_for', {})), 'INVALID_PARAMETERS');
  r = await call(c, 'browser_wait_for', { state: 'hidden', text: 'Pending' });
  assert.equal(code(r), 'INVALID_PARAMETERS');
  assert.match(text(r), /state needs target/);
});

test('wait_for text sees open shadow roots, as getByText does', async () => {
  await open('shadow-components.html');
  ok(await call(c, 'browser_wait_for', { text: 'City', snapshot: 'none' }));
  ok(await call(c, 'browser_wait_for', { text: 'like', snapshot: 'none' }));
  ok(await call(c, 'browser_wait_for', { text: 'Weekly report', snapshot: 'none' }));
  assert.equal(code(await call(c, 'browser_wait_for', { text: 'Secret', timeout: 500 })), 'TIMEOUT', 'a closed root stays closed');
});

test('resize sets the viewport the page sees', async () => {
  await open('t8-wait.html');
  let r = ok(await call(c, 'browser_resize', { width: 500, height: 400, snapshot: 'none' }));
  assert.deepEqual([r.structuredContent.width, r.structuredContent.height], [500, 400]);
  assert.deepEqual(await js('() => [innerWidth, innerHeight]'), [500, 400]);
  ok(await call(c, 'browser_resize', { width: 1280, height: 720, snapshot: 'none' }));
  assert.deepEqual(await js('() => [innerWidth, innerHeight]'), [1280, 720]);
  assert.equal(code(await call(c, 'browser_resize', { width: 5, height: 400 })), 'INVALID_PARAMETERS');
  assert.equal(code(await call(c, 'browser_resize', { width: 500 })), 'INVALID_PARAMETERS');
});

test('console_messages: levels, locations, only new ones', async () => {
  const s = ok(await call(c, 'browser_session_create')).structuredContent.sessionId;
  ok(await call(c, 'browser_navigate', { sessionId: s, url: `${pages.url}/t8-log.html` }));
  let r = ok(await call(c, 'browser_console_messages', { sessionId: s }));
  const levels = r.structuredContent.messages.map((m) => `${m.level}:${m.text}`);
  assert.deepEqual(levels, ['info:hello log 42', 'info:an info', 'warning:careful now', 'error:broken thing']);
  assert.match(text(r), /\[log\] hello log 42 \(http:\/\/127\.0\.0\.1:\d+\/t8-log\.html:\d+\)/);
  r = ok(await call(c, 'browser_console_messages', { sessionId: s, level: 'debug' }));
  assert.ok(r.structuredContent.messages.some((m) => m.text === 'debug detail'));
  r = ok(await call(c, 'browser_console_messages', { sessionId: s, onlyErrors: true }));
  assert.deepEqual(r.structuredContent.messages.map((m) => m.text), ['broken thing']);
  r = ok(await call(c, 'browser_console_messages', { sessionId: s, level: 'error' }));
  assert.deepEqual(r.structuredContent.messages.map((m) => m.text), ['broken thing']);
  ok(await call(c, 'browser_click', { sessionId: s, target: '#more', snapshot: 'none' }));
  ok(await call(c, 'browser_evaluate', { sessionId: s, function: "() => { setTimeout(() => { throw new Error('late boom'); }, 0); return 1; }" }));
  ok(await call(c, 'browser_wait_for', { sessionId: s, time: 0.2, snapshot: 'none' }));
  r = ok(await call(c, 'browser_console_messages', { sessionId: s, onlyNew: true }));
  assert.deepEqual(r.structuredContent.messages.map((m) => `${m.level}:${m.text}`),
    ['info:clicked log', 'error:click error', 'error:Error: late boom']);
  r = ok(await call(c, 'browser_console_messages', { sessionId: s, onlyNew: true }));
  assert.deepEqual(r.structuredContent.messages, []);
  assert.match(text(r), /No console messages since the last call/);
  assert.equal(code(await call(c, 'browser_console_messages', { sessionId: s, level: 'loud' })), 'INVALID_PARAMETERS');
  ok(await call(c, 'browser_session_close', { sessionId: s }));
});

test('network_requests lists the page\'s requests; network_request gives headers, bodies and timing', async () => {
  await open('t8-log.html');
  ok(await call(c, 'browser_click', { target: '#net', snapshot: 'none' }));
  let r = ok(await call(c, 'browser_network_requests'));
  const reqs = r.structuredContent.requests;
  assert.equal(reqs[0].type, 'Document');
  assert.equal(reqs[0].status, 200);
  assert.match(reqs[0].url, /t8-log\.html$/);
  const post = reqs.find((q) => q.method === 'POST');
  const missing = reqs.find((q) => /code=404/.test(q.url));
  assert.ok(post && missing, text(r));
  assert.equal(post.status, 201);
  assert.equal(missing.status, 404);
  assert.match(text(r), new RegExp(`\\[${post.index}\\] POST http://127\\.0\\.0\\.1:\\d+/status\\?code=201 => 201 Created \\(Fetch\\)`));
  r = ok(await call(c, 'browser_network_requests', { filter: '404' }));
  assert.deepEqual(r.structuredContent.requests.map((q) => q.index), [missing.index]);

  await requestDetail(post);

  // A new page starts a new list; indexes past it fail clearly.
  await open('t8-wait.html');
  r = ok(await call(c, 'browser_network_requests'));
  assert.equal(r.structuredContent.requests.length, 1);
  r = await call(c, 'browser_network_request', { index: 5 });
  assert.equal(code(r), 'INVALID_PARAMETERS');
  assert.match(text(r), /no request 5 on this page \(it has 1\)/);
  assert.equal(code(await call(c, 'browser_network_request', {})), 'INVALID_PARAMETERS');
});

async function requestDetail(post) {
  let r = ok(await call(c, 'browser_network_request', { index: post.index }));
  const d = r.structuredContent;
  assert.equal(d.method, 'POST');
  assert.equal(d.postData, 'hello=1');
  assert.equal(d.requestHeaders['x-test'], 'yes');
  assert.match(d.responseHeaders['content-type'] || d.responseHeaders['Content-Type'], /text\/html/);
  assert.equal(d.body, '<title>Status 201</title><h1>201</h1>');
  assert.ok(d.timing.totalMs >= 0 && d.timing.responseMs >= 0, JSON.stringify(d.timing));
  assert.match(text(r), /Request body \(7 bytes\):\nhello=1/);
  r = ok(await call(c, 'browser_network_request', { index: post.index, body: false }));
  assert.equal(r.structuredContent.body, undefined);
}

test('element tools reach into iframes by f-refs', async () => {
  await open('t8-frame.html');
  // browser_navigate waited for the frame's load too: act on it by its refs.
  const snap = ok(await call(c, 'browser_snapshot')).structuredContent.snapshot;
  const color = refOf(snap, 'combobox', 'Color');
  const button = refOf(snap, 'button', 'Plain button');
  assert.match(color || '', /^f\d+e\d+$/, snap);
  let r = ok(await call(c, 'browser_select_option', { target: color, values: ['Blue'], snapshot: 'none' }));
  assert.match(text(r), new RegExp(`combobox "Color" \\[ref=${color}\\]`));
  r = ok(await call(c, 'browser_evaluate', { target: color, function: '(el) => el.value + " " + el.ownerDocument.getElementById("events").textContent' }));
  assert.equal(r.structuredContent.result.value, 'b color:input=b, color:change=b');
  ok(await call(c, 'browser_hover', { target: button, snapshot: 'none' }));
  r = ok(await call(c, 'browser_evaluate', { target: button, function: '(el) => el.matches(":hover")' }));
  assert.equal(r.structuredContent.result.value, true);
  ok(await call(c, 'browser_press_key', { target: color, key: 'ArrowUp', snapshot: 'none' }));
  r = ok(await call(c, 'browser_evaluate', { target: color, function: '(el) => el.value' }));
  assert.equal(r.structuredContent.result.value, 'g');
  ok(await call(c, 'browser_wait_for', { target: button, state: 'visible', snapshot: 'none' }));
});

// Issue 37, item 1: a field that filters, formats or consumes what is typed
// did what its page is for: browser_type succeeds and says what it kept.
test('typing into fields that filter, format or consume the text succeeds and says what they kept', async () => {
  await open('typing-filters.html');
  let r = ok(await call(c, 'browser_type', { target: 'role=textbox[name="Initials"]', text: 'a1b2c3' }));
  assert.equal(r.structuredContent.kept, 'abc', text(r));
  assert.match(text(r), /The page kept "abc" of "a1b2c3"/);
  r = ok(await call(c, 'browser_type', { target: '#phone', text: '5551234567' }));
  assert.equal(r.structuredContent.kept, undefined, text(r)); // every digit is there, formatted
  assert.equal(await js("() => document.getElementById('phone').value"), '(555) 123-4567');
  r = ok(await call(c, 'browser_type', { target: '#phone', text: 'call 5551234567' }));
  assert.equal(r.structuredContent.kept, '(555) 123-4567', text(r));
  r = ok(await call(c, 'browser_type', { target: '#guess', text: '07' }));
  assert.equal(r.structuredContent.kept, '7', text(r));
  // A terminal: slowly, key by key, then Enter; the page ran the command.
  r = ok(await call(c, 'browser_type', { target: '#prompt', text: 'ls', slowly: true, submit: true }));
  assert.match(text(r), /The page kept "s" of "ls"/);
  assert.match(await js("() => document.getElementById('screen').textContent"), /\$ ls\nnotes\.txt/);
  // A native number input refusing letters is still an error.
  r = await call(c, 'browser_type', { target: '#guess', text: 'seven' });
  assert.equal(code(r), 'ELEMENT_NOT_EDITABLE');
});

// Issue 37, item 2: feedback that replaces the tail of a long paragraph is
// in the click's diff, cut to the words around it, not behind the head.
test('a change in a long text\'s tail shows in the action\'s diff', async () => {
  await open('feedback-tail.html');
  ok(await call(c, 'browser_snapshot'));
  ok(await call(c, 'browser_type', { target: '#guess', text: '2' }));
  const r = ok(await call(c, 'browser_click', { target: '#submit' }));
  assert.match(text(r), /diff: /, text(r));
  assert.match(text(r), /…[^\n]*The number is higher than 2\./, text(r));
});

// Issue 37, item 3: a navigation answers with the new document's lean
// view, as an action that loads one does; browser_snapshot stays whole.
test('navigate, back, forward, reload and tabs new/select answer with the page\'s lean view', async () => {
  const s = ok(await call(c, 'browser_session_create')).structuredContent.sessionId;
  const view = (r) => { assert.match(text(r), /- Page Snapshot( \(lean: browser_snapshot shows all\))?:\n```yaml\n/, text(r)); return r.structuredContent.snapshot; };
  let r = ok(await call(c, 'browser_navigate', { sessionId: s, url: `${pages.url}/login.html` }));
  assert.match(view(r), /button "Submit" \[ref=e\d+\]/);
  assert.equal(r.structuredContent.status, 200);
  r = ok(await call(c, 'browser_navigate', { sessionId: s, url: `${pages.url}/counter.html` }));
  assert.match(view(r), /Counter/);
  r = ok(await call(c, 'browser_navigate_back', { sessionId: s }));
  assert.match(view(r), /Sign in/);
  r = ok(await call(c, 'browser_navigate_forward', { sessionId: s }));
  assert.match(view(r), /Counter/);
  r = ok(await call(c, 'browser_reload', { sessionId: s }));
  assert.match(view(r), /Counter/);
  r = ok(await call(c, 'browser_tabs', { sessionId: s, action: 'new', url: `${pages.url}/login.html` }));
  assert.match(text(r), /### Open tabs\n/);
  assert.match(view(r), /Sign in/);
  r = ok(await call(c, 'browser_tabs', { sessionId: s, action: 'select', index: 0 }));
  assert.match(text(r), /Page Snapshot/);
  r = ok(await call(c, 'browser_tabs', { sessionId: s, action: 'list' }));
  assert.doesNotMatch(text(r), /Page Snapshot/);
  // On request, none.
  r = ok(await call(c, 'browser_navigate', { sessionId: s, url: `${pages.url}/login.html`, snapshot: 'none' }));
  assert.doesNotMatch(text(r), /Page Snapshot/);
  ok(await call(c, 'browser_session_close', { sessionId: s }));
});

// Issue 37, item 6: with several sessions on one server, every session's
// page is visible, gets animation frames, and is focused when it acts (on
// Firefox, which focuses one window at a time, by taking focus for input).
test('several sessions: each page is visible, runs its frames, and gets focus and keys when it acts', async () => {
  const ids = [];
  for (let i = 0; i < 3; i++) ids.push(ok(await call(c, 'browser_session_create')).structuredContent.sessionId);
  for (const s of ids) ok(await call(c, 'browser_navigate', { sessionId: s, url: `${pages.url}/focus-widgets.html`, snapshot: 'none' }));
  const value = async (s, fn) => ok(await call(c, 'browser_evaluate', { sessionId: s, function: fn })).structuredContent.result.value;
  for (const s of ids) {
    assert.equal(await value(s, '() => document.visibilityState'), 'visible', s);
    // Animation frames run (a hidden page gets none).
    const f0 = Number(await value(s, "() => document.getElementById('frames').textContent"));
    ok(await call(c, 'browser_wait_for', { sessionId: s, time: 0.3, snapshot: 'none' }));
    const f1 = Number(await value(s, "() => document.getElementById('frames').textContent"));
    assert.ok(f1 > f0, `frames ${f0} -> ${f1}`);
  }
  for (const s of ids) {
    // A toolbar shown on focus: its button is in the click's answer.
    let r = ok(await call(c, 'browser_click', { sessionId: s, target: '#note' }));
    assert.match(text(r), /button "Bold" \[ref=e\d+\]/, text(r));
    assert.equal(await value(s, '() => document.hasFocus()'), true);
    // Arrow keys move through the menu bar.
    ok(await call(c, 'browser_click', { sessionId: s, target: '#m1', snapshot: 'none' }));
    ok(await call(c, 'browser_press_key', { sessionId: s, key: 'ArrowRight', snapshot: 'none' }));
    assert.equal(await value(s, '() => document.activeElement.id'), 'm2');
    ok(await call(c, 'browser_press_key', { sessionId: s, key: 'ArrowRight', snapshot: 'none' }));
    assert.equal(await value(s, '() => document.activeElement.id'), 'm3');
  }
  for (const s of ids) ok(await call(c, 'browser_session_close', { sessionId: s }));
});

// Issue 37, item 5: a drag goes as Playwright's dragTo does (a small move,
// then the end): on a grid whose cards trade places under the pointer, a
// path across the cards between moved them too.
test('a drag across a sortable grid moves only the dragged card and the one it lands on', async () => {
  await open('sortable-grid.html');
  const r = ok(await call(c, 'browser_drag', { startTarget: '#c1', endTarget: '#c9' }));
  assert.equal(r.structuredContent.changed, true);
  assert.equal(await js("() => document.getElementById('order').textContent"), '9,2,3,4,5,6,7,8,1');
});

