// Widgets of pages nobody here tuned on (issue 37, item 5), each as a
// minimal page in tests/pages: a sortable table's headers, a calendar
// whose month and year are selects inside it, a table edited by
// double-click (its cells keep refs). Both browsers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, startPageServer, call, text, refOf } from './lib.mjs';

const pages = await startPageServer();
const srv = await startServer();
const c = srv.client;
test.after(async () => { await srv.close(); await pages.close(); });

const ok = (r) => { assert.equal(r.isError, false, text(r)); return r; };
const js = async (fn) => ok(await call(c, 'browser_evaluate', { function: fn })).structuredContent.result.value;

test('a sortable table\'s headers keep their refs in compact rows, and a click on one sorts', async () => {
  const r = ok(await call(c, 'browser_navigate', { url: `${pages.url}/sortable-table.html` }));
  const view = r.structuredContent.snapshot;
  // A data-table plugin's header (tabindex, aria-label) and a plain th
  // with a hand cursor; a header with neither stays text.
  const byName = refOf(view, 'columnheader', 'Name: activate to sort column ascending');
  const byAge = refOf(view, 'columnheader', 'Age');
  assert.ok(byName && byAge, view);
  assert.match(view, /\| City\n/);
  let s = ok(await call(c, 'browser_click', { target: byAge }));
  assert.match(text(s), /sorted by age: Bo, Ada, Cleo/);
  s = ok(await call(c, 'browser_click', { target: byName }));
  assert.match(text(s), /sorted by name: Ada, Bo, Cleo/);
});

test('choosing in a calendar\'s month and year selects keeps the calendar open', async () => {
  ok(await call(c, 'browser_navigate', { url: `${pages.url}/date-picker-selects.html`, snapshot: 'none' }));
  ok(await call(c, 'browser_click', { target: '#arrival', snapshot: 'none' }));
  ok(await call(c, 'browser_select_option', { target: '#month', values: ['March'] }));
  const r = ok(await call(c, 'browser_select_option', { target: '#year', values: ['2027'] }));
  // The calendar is still there, March 2027's days with it.
  assert.match(text(r), /gridcell "31"/);
  assert.equal(await js("() => document.getElementById('cal').hidden"), false);
  ok(await call(c, 'browser_click', { target: 'role=gridcell[name="31"]', snapshot: 'none' }));
  assert.equal(await js("() => document.getElementById('arrival').value"), '2027-03-31');
});

test('a table the page edits on double-click gives its cells refs; a plain table does not', async () => {
  const r = ok(await call(c, 'browser_navigate', { url: `${pages.url}/tasks-editable-table.html` }));
  // The navigation's view and a whole snapshot alike.
  for (const view of [r.structuredContent.snapshot, ok(await call(c, 'browser_snapshot', {})).structuredContent.snapshot]) {
    assert.match(view, /- row \[ref=e\d+\]: cell "Ada" \[ref=e\d+\] \| cell "London" \[ref=e\d+\]$/m, view);
    assert.match(view, /- row \[ref=e\d+\]: Mars \| 2$/m, view);
  }
  const ada = refOf(r.structuredContent.snapshot, 'cell', 'Ada');
  ok(await call(c, 'browser_click', { target: ada, doubleClick: true }));
  ok(await call(c, 'browser_type', { target: 'role=textbox[name="Edit cell"]', text: 'Ada L', submit: true }));
  assert.equal(await js("() => document.getElementById('log').textContent"), 'saved Ada L');
  assert.equal(await js("() => document.querySelector('#people tbody td').textContent"), 'Ada L');
});

test('a calendar cell that only wraps its day button is that button in the row', async () => {
  ok(await call(c, 'browser_navigate', { url: `${pages.url}/calendar-grid.html`, snapshot: 'none' }));
  const snap = ok(await call(c, 'browser_snapshot', {})).structuredContent.snapshot;
  assert.match(snap, /- row \[ref=e\d+\]: gridcell \[ref=e\d+\] \| button "1" \[ref=e\d+\] \| button "2" \[ref=e\d+\]$/m, snap);
  // The selected cell has a state of its own: the row keeps its cells' lines.
  assert.match(snap, /- gridcell "3" \[selected\] \[ref=e\d+\]:\n\s+- button "3" \[ref=e\d+\]/, snap);
  ok(await call(c, 'browser_click', { target: refOf(snap, 'button', '2') }));
  assert.equal(await js("() => document.getElementById('out').textContent"), 'picked 2');
});

test('a code editor\'s 1px input field under its lines is clicked through the editor; a tiny field under an overlay is not', async () => {
  ok(await call(c, 'browser_navigate', { url: `${pages.url}/proxy-field.html`, snapshot: 'none' }));
  const snap = ok(await call(c, 'browser_snapshot', {})).structuredContent.snapshot;
  ok(await call(c, 'browser_click', { target: refOf(snap, 'textbox', 'Code') }));
  assert.equal(await js("() => document.getElementById('out').textContent"), 'editor focused');
  assert.equal(await js('() => document.activeElement.id'), 'code');
  ok(await call(c, 'browser_type', { target: refOf(snap, 'textbox', 'Code'), text: ' // ok', clear: false }));
  assert.equal(await js("() => document.getElementById('lines').textContent"), 'let x = 1; // ok');
  // The page-wide veil is no part of the lone field: still covered.
  const r = await call(c, 'browser_click', { target: refOf(snap, 'textbox', 'Lone'), timeout: 800 });
  assert.equal(r.isError, true, text(r));
  assert.match(text(r), /covered by <div id="veil">/);
});
