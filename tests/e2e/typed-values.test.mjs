// Typing, filling and choosing report success only when the page holds what
// was asked (issue 20, defect 2): inputs with a fixed value format (date,
// time, datetime-local, month, week, color, range) are set as their picker
// sets them, with input and change; a value they do not take is refused
// naming the format; a field that cut or dropped the text, and a select whose
// page undid the choice, fail with what they hold. tests/pages/typed-values.html.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, startPageServer, call, text } from './lib.mjs';

const pages = await startPageServer();
const srv = await startServer();
const c = srv.client;
test.after(async () => { await srv.close(); await pages.close(); });

const ok = (r) => { assert.equal(r.isError, false, text(r)); return r; };
const failed = (r, code, message) => {
  assert.equal(r.isError, true, text(r));
  assert.equal(r.structuredContent.error.code, code, text(r));
  if (message) assert.match(r.structuredContent.error.message, message);
  return r;
};
const js = async (fn) => ok(await call(c, 'browser_evaluate', { function: fn })).structuredContent.result.value;
const value = (label) => js(`() => [...document.querySelectorAll('label')].find((l) => l.firstChild.textContent.trim() === ${JSON.stringify(label)}).control.value`);
const log = () => js("() => document.getElementById('log').textContent.trim()");
// The ref of the control named label, read from a snapshot as a model would.
async function refOf(label) {
  const snap = ok(await call(c, 'browser_snapshot')).structuredContent.snapshot;
  const m = snap.match(new RegExp(`- \\w+ "${label}"[^\\n]*\\[ref=(e\\d+)\\]`));
  assert.ok(m, `no control "${label}" in\n${snap}`);
  return m[1];
}
const type = async (label, t, extra = {}) => call(c, 'browser_type', { target: await refOf(label), text: t, snapshot: 'none', ...extra });
const clearLog = () => js("() => { document.getElementById('log').textContent = ''; }");

test('typing into fixed-format inputs sets their value with input and change', async () => {
  ok(await call(c, 'browser_navigate', { url: `${pages.url}/typed-values.html` }));
  const cases = [
    ['Day', '2011-10-11'], ['Hour', '20:04'], ['Start', '2011-10-11T20:04'], ['Billing month', '2011-10'],
    ['Week', '2011-W41'], ['Colour', '#ff8800'], ['Volume', '8'],
  ];
  for (const [label, v] of cases) {
    await clearLog();
    const r = ok(await type(label, v));
    assert.match(text(r), new RegExp(`^Typed into \\w+ "${label}"`));
    assert.equal(await value(label), v, label);
    assert.equal(await log(), `input:${label}=${v} change:${label}=${v}`);
  }
  // A colour is taken in either case, as the picker's value is lowercase.
  ok(await type('Colour', '#00AAFF'));
  assert.equal(await value('Colour'), '#00aaff');
  // browser_fill_form takes the same path.
  ok(await call(c, 'browser_fill_form', { fields: [
    { target: await refOf('Day'), type: 'textbox', value: '2024-02-29' },
    { target: await refOf('Hour'), type: 'textbox', value: '07:30' }], snapshot: 'none' }));
  assert.equal(await value('Day'), '2024-02-29');
  assert.equal(await value('Hour'), '07:30');
});

test('a value a fixed-format input does not take is refused, naming the format', async () => {
  ok(await call(c, 'browser_navigate', { url: `${pages.url}/typed-values.html` }));
  ok(await type('Day', '2011-10-11'));
  await clearLog();
  failed(await type('Day', '11/10/2011'), 'INVALID_PARAMETERS', /a date input takes YYYY-MM-DD, as "2011-10-11"; it does not take "11\/10\/2011"/);
  failed(await type('Day', '2011-02-30'), 'INVALID_PARAMETERS', /date input takes YYYY-MM-DD/);
  failed(await type('Hour', '8pm'), 'INVALID_PARAMETERS', /time input takes HH:MM/);
  failed(await type('Week', '2011-41'), 'INVALID_PARAMETERS', /week input takes YYYY-Www/);
  failed(await type('Colour', 'orange'), 'INVALID_PARAMETERS', /color input takes #rrggbb/);
  failed(await type('Volume', '11'), 'INVALID_PARAMETERS', /range input takes a number between 0 and 10 in steps of 2/);
  failed(await type('Volume', '3'), 'INVALID_PARAMETERS', /in steps of 2/);
  const r = failed(await call(c, 'browser_fill_form', { fields: [
    { target: await refOf('Hour'), type: 'textbox', value: '09:00' },
    { target: await refOf('Start'), type: 'textbox', value: 'tomorrow' }] }), 'INVALID_PARAMETERS');
  assert.match(text(r), /fields\[1\]: a datetime-local input takes YYYY-MM-DDTHH:MM.*\(1 field before it filled\)/);
  // What was there stays, and no event claims a change.
  assert.equal(await value('Day'), '2011-10-11');
  assert.equal(await value('Volume'), '4');
  assert.equal(await log(), 'input:Hour=09:00 change:Hour=09:00');
});

// Issue 37, item 1: a field that cut the text did what the page is for:
// success, saying what it kept. An error only when nothing reached the page
// or a native control refused the format.
test('a field that cut the text succeeds saying what it kept; a number input refusing letters fails; formatting passes', async () => {
  ok(await call(c, 'browser_navigate', { url: `${pages.url}/typed-values.html` }));
  let r = ok(await type('Code', 'ABCDE'));
  assert.equal(r.structuredContent.kept, 'ABC', text(r));
  assert.match(text(r), /The page kept "ABC" of "ABCDE"/);
  r = failed(await type('Guests', 'twelve'), 'ELEMENT_NOT_EDITABLE', /the input type=number holds ""/);
  assert.match(text(r), /Hint: .*slowly/);
  ok(await type('Guests', '12'));
  // The page groups the digits: the digits typed are all there.
  ok(await type('Phone', '5551234567'));
  assert.equal(await value('Phone'), '(555) 123-4567');
  ok(await type('Notes', 'Window seat,\nplease'));
  // Appending keeps what was there.
  ok(await type('Notes', ' thanks', { clear: false }));
  assert.equal(await value('Notes'), 'Window seat,\nplease thanks');
  ok(await call(c, 'browser_fill_form', { fields: [{ target: await refOf('Code'), type: 'textbox', value: 'WXYZ' }] }));
  assert.equal(await value('Code'), 'WXY');
});

// An editor's toolbar button can hold focus for a moment after a click (a
// loaded machine made CKEditor's do so): typing without clear then goes where
// the editor's caret is, not to the end of the editing host.
test('typing without clear into an editing host goes to its caret, or to its end when it has none', async () => {
  ok(await call(c, 'browser_navigate', { url: `${pages.url}/typed-values.html` }));
  const letter = () => js("() => document.querySelector('[aria-label=Letter]').innerText.trim()");
  // The caret after "Dear", focus on the toolbar's button.
  await js(`() => {
    const p = document.querySelector('[aria-label=Letter] p');
    getSelection().collapse(p.firstChild, 4);
    document.getElementById('bold').focus();
  }`);
  ok(await type('Letter', ' old', { clear: false }));
  assert.equal(await letter(), 'Dear old Sir,\n\nYours');
  // No caret in the host: the text goes at its end.
  await js("() => { getSelection().removeAllRanges(); document.getElementById('bold').focus(); }");
  ok(await type('Letter', ' truly', { clear: false }));
  assert.equal(await letter(), 'Dear old Sir,\n\nYours truly');
});

test('select_option fails when the page does not keep the choice', async () => {
  ok(await call(c, 'browser_navigate', { url: `${pages.url}/typed-values.html` }));
  ok(await call(c, 'browser_select_option', { target: '#seat', values: ['Window'], snapshot: 'none' }));
  assert.equal(await js("() => document.getElementById('seat').value"), 'Window');
  failed(await call(c, 'browser_select_option', { target: '#meal', values: ['Pasta'] }), 'ELEMENT_NOT_EDITABLE',
    /the page did not keep the choice: the select holds "Fish"/);
  failed(await call(c, 'browser_fill_form', { fields: [{ target: '#meal', type: 'combobox', value: 'Pasta' }] }),
    'ELEMENT_NOT_EDITABLE', /fields\[0\]: the page did not keep the choice/);
});
