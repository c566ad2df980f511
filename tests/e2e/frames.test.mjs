// iframes in the agent loop: the snapshot shows each frame's lines under its
// iframe line with f<K>e<N> refs, and every action by such a ref lands in
// that frame: same-origin (in process, nested two deep) and cross-site (an
// out-of-process iframe with its own CDP session).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, startPageServer, call, text, refOf, waitFor, onFirefox } from './lib.mjs';

const pages = await startPageServer();
// A second server reached as `localhost`: another site than 127.0.0.1, so
// Chromium's site isolation puts its frame in another renderer process.
const other = await startPageServer();
const crossOrigin = other.url.replace('127.0.0.1', 'localhost');
const srv = await startServer();
const c = srv.client;
test.after(async () => { await srv.close(); await pages.close(); await other.close(); });

const topUrl = `${pages.url}/frames-top.html?cross=${encodeURIComponent(crossOrigin)}`;

function ok(r) {
  assert.equal(r.isError, false, text(r));
  return r;
}

async function snapshot(args = {}) {
  const r = await call(c, 'browser_snapshot', args);
  assert.equal(r.isError, false, text(r));
  return r.structuredContent.snapshot;
}

// The lines of snap below the line that contains `marker`, deeper indented.
function linesUnder(snap, marker) {
  const lines = snap.split('\n');
  const i = lines.findIndex((l) => l.includes(marker));
  assert.ok(i >= 0, `no line with ${marker} in\n${snap}`);
  const depth = lines[i].search(/\S/);
  const out = [];
  for (const l of lines.slice(i + 1)) {
    if (l.search(/\S/) <= depth) break;
    out.push(l);
  }
  return { line: lines[i], under: out };
}

// Wait (bounded) until the page is ready: both frames show their content.
async function loadTop() {
  const r = await call(c, 'browser_navigate', { url: topUrl });
  assert.equal(r.isError, false, text(r));
  let snap = '';
  for (let i = 0; i < 50; i++) {
    snap = await snapshot();
    if (/button "Go"/.test(snap) && /button "Count"/.test(snap)) return snap;
    await new Promise((res) => setTimeout(res, 100));
  }
  assert.fail(`frames never showed up:\n${snap}`);
}

test('snapshot splices each frame under its iframe line with fN refs; cross-site is out of process', async () => {
  const snap = await loadTop();
  assert.match(snap, /^- heading "Frames" \[level=1\] \[ref=e\d+\]$/m);

  const same = linesUnder(snap, 'iframe "Same origin"');
  assert.match(same.line, /^- iframe "Same origin" \[ref=e\d+\]:$/, 'iframe line ends with ":"');
  const sameK = same.under[0].match(/\[ref=(f\d+)e\d+\]/)[1];
  assert.match(same.under.join('\n'), new RegExp(`^  - textbox "Nickname" \\[ref=${sameK}e\\d+\\]$`, 'm'));
  assert.match(same.under.join('\n'), new RegExp(`^  - button "Greet" \\[ref=${sameK}e\\d+\\]$`, 'm'));
  assert.match(same.under.join('\n'), new RegExp(`^  - status \\[ref=${sameK}e\\d+\\]: nobody$`, 'm'));
  // Nested one level deeper, with its own K, indented under its own line.
  const inner = linesUnder(snap, 'iframe "Inner"');
  assert.match(inner.line, new RegExp(`^  - iframe "Inner" \\[ref=${sameK}e\\d+\\]:$`));
  const innerK = inner.under[0].match(/\[ref=(f\d+)e\d+\]/)[1];
  assert.notEqual(innerK, sameK);
  assert.match(inner.under.join('\n'), new RegExp(`^    - textbox "Word" \\[ref=${innerK}e\\d+\\]$`, 'm'));
  assert.match(inner.under.join('\n'), new RegExp(`^    - button "Count" \\[ref=${innerK}e\\d+\\]$`, 'm'));
  assert.match(inner.under.join('\n'), new RegExp(`^    - status \\[ref=${innerK}e\\d+\\]: clicked 0$`, 'm'));

  const cross = linesUnder(snap, 'iframe "Cross origin"');
  assert.match(cross.line, /^- iframe "Cross origin" \[ref=e\d+\]:$/);
  const crossK = cross.under[0].match(/\[ref=(f\d+)e\d+\]/)[1];
  assert.ok(![sameK, innerK].includes(crossK));
  assert.deepEqual(cross.under.map((l) => l.replace(/\[ref=f\d+e\d+\]/, '[ref]')), [
    '  - textbox "City" [ref]',
    '  - button "Go" [ref]',
    '  - status [ref]: nowhere',
    '  - checkbox "Agree" [ref]',
    '  - note "Tip" [ref]: hover here',
    '  - status [ref]: not hovered',
  ]);
  assert.ok(cross.under.every((l) => l.includes(`[ref=${crossK}e`) || !l.includes('[ref=')));

  // Refs stay the same across snapshots, frames included.
  const again = await snapshot();
  assert.equal(again, snap);

  // Chromium really made the cross-site frame an iframe target (OOPIF),
  // and the same-origin ones are not: the worker logs each iframe target
  // Chromium attaches (Target.attachedToTarget, type "iframe"). The browser
  // has no DevTools HTTP endpoint to ask any more (no port: issue 7).
  // Firefox runs it in a process of its own too, but BiDi does not show it.
  if (onFirefox) return;
  assert.match(srv.stderr(), new RegExp(`frame ${crossK} runs out of process`));
  assert.doesNotMatch(srv.stderr(), new RegExp(`frame (${sameK}|${innerK}) runs out of process`));
});

test('a dialog opened inside the cross-site frame is a modal state answered there', async () => {
  const snap = await loadTop();
  const go = refOf(linesUnder(snap, 'iframe "Cross origin"').under.join('\n'), 'button', 'Go');
  assert.ok(go, snap);
  // The frame's own script opens a confirm a moment after this call returns.
  let r = await call(c, 'browser_evaluate', {
    target: go,
    function: "(el) => { setTimeout(() => { el.textContent = confirm('Leave the frame?') ? 'yes' : 'no'; }, 50); return location.origin; }",
  });
  assert.deepEqual(r.structuredContent.result, { value: crossOrigin });
  // Every response says so once the frame shows it (bounded wait).
  for (let i = 0; i < 50 && !r.structuredContent.modalState; i++) {
    await new Promise((res) => setTimeout(res, 100));
    r = await call(c, 'browser_snapshot', { timeout: 5000 });
  }
  assert.equal(r.structuredContent.modalState?.type, 'confirm', text(r));
  r = await call(c, 'browser_snapshot', { timeout: 5000 });
  assert.equal(r.isError, true, text(r));
  assert.equal(r.structuredContent.error.code, 'MODAL_STATE');
  assert.equal(r.structuredContent.modalState.message, 'Leave the frame?');
  r = await call(c, 'browser_handle_dialog', { accept: true });
  assert.equal(r.isError, false, text(r));
  // The frame writes the answer when confirm() returns in its own process:
  // read until it is there (or 5 s).
  const seen = async () => (r = await call(c, 'browser_evaluate', { target: go, function: '(el) => el.textContent' }))
    .structuredContent.result?.value === 'yes';
  await waitFor(seen, 5000);
  assert.deepEqual(r.structuredContent.result, { value: 'yes' }, 'the frame saw the answer');
});

test('type and click by f-ref inside same-origin, nested and cross-site frames', async () => {
  let snap = await loadTop();
  const nick = refOf(snap, 'textbox', 'Nickname');
  const greet = refOf(snap, 'button', 'Greet');
  const word = refOf(snap, 'textbox', 'Word');
  const count = refOf(snap, 'button', 'Count');
  const city = refOf(snap, 'textbox', 'City');
  const go = refOf(snap, 'button', 'Go');
  for (const ref of [nick, greet, word, count, city, go]) assert.match(ref ?? '', /^f\d+e\d+$/, snap);

  let r = await call(c, 'browser_type', { target: nick, text: 'Ada' });
  assert.equal(r.isError, false, text(r));
  assert.equal(r.structuredContent.ref, nick);
  r = await call(c, 'browser_click', { target: greet });
  assert.equal(r.isError, false, text(r));

  r = await call(c, 'browser_type', { target: word, text: 'deep' });
  assert.equal(r.isError, false, text(r));
  r = await call(c, 'browser_click', { target: count });
  assert.equal(r.isError, false, text(r));
  r = await call(c, 'browser_click', { target: count });
  assert.equal(r.isError, false, text(r));

  // The cross-site frame sits below the fold: the top page must scroll.
  r = await call(c, 'browser_type', { target: city, text: 'Lisbon' });
  assert.equal(r.isError, false, text(r));
  r = await call(c, 'browser_click', { target: go });
  assert.equal(r.isError, false, text(r));

  snap = await snapshot();
  assert.match(snap, new RegExp(`textbox "Nickname" \\[ref=${nick}\\]: Ada`));
  assert.match(snap, /status \[ref=f\d+e\d+\]: Hello Ada/);
  assert.match(snap, new RegExp(`textbox "Word" \\[ref=${word}\\]: deep`));
  assert.match(snap, /status \[ref=f\d+e\d+\]: clicked 2 deep/);
  assert.match(snap, new RegExp(`textbox "City" \\[ref=${city}\\]: Lisbon`));
  assert.match(snap, /status \[ref=f\d+e\d+\]: Going to Lisbon at \d+,\d+/);

  // The frame's own view agrees, through evaluate with an f-ref target
  // (which runs in that frame's main world), and the click landed on Go.
  r = await call(c, 'browser_evaluate', { target: go, function: '(el) => { const b = el.getBoundingClientRect(); return { text: document.getElementById("where").textContent, box: [b.left, b.top, b.right, b.bottom], origin: location.origin }; }' });
  assert.equal(r.isError, false, text(r));
  const v = r.structuredContent.result.value;
  assert.equal(v.origin, crossOrigin);
  const [, x, y] = v.text.match(/at (\d+),(\d+)/).map(Number);
  assert.ok(x >= v.box[0] && x <= v.box[2] && y >= v.box[1] && y <= v.box[3], `click at ${x},${y} outside Go ${v.box}`);
  // A checkbox and a hover inside the cross-site frame too (their mouse input goes to
  // the frame's own session, in its viewport: frames.h, struct input_point).
  const agree = refOf(snap, 'checkbox', 'Agree');
  const tip = refOf(snap, 'note', 'Tip');
  assert.ok(agree && tip, snap);
  ok(await call(c, 'browser_evaluate', { function: '() => scrollTo(0, 0)' }));
  ok(await call(c, 'browser_fill_form', { fields: [{ target: agree, type: 'checkbox', value: true }] }));
  ok(await call(c, 'browser_evaluate', { function: '() => scrollTo(0, 0)' }));
  ok(await call(c, 'browser_hover', { target: tip }));
  r = await call(c, 'browser_evaluate', { target: tip, function: '(el) => { const b = el.getBoundingClientRect(); return { checked: document.getElementById("agree").checked, hovered: document.getElementById("hovered").textContent, box: [b.left, b.top, b.right, b.bottom] }; }' });
  const h = r.structuredContent.result.value;
  assert.equal(h.checked, true, text(r));
  const [, hx, hy] = (h.hovered.match(/hovered at (\d+),(\d+)/) ?? [0, -1, -1]).map(Number);
  assert.ok(hx >= h.box[0] && hx <= h.box[2] && hy >= h.box[1] && hy <= h.box[3], `hover ${h.hovered}, tip ${h.box}`);
  r = await call(c, 'browser_evaluate', { target: nick, function: '(el) => [el.value, document.title]' });
  assert.deepEqual(r.structuredContent.result.value, ['Ada', 'Same frame']);
  r = await call(c, 'browser_evaluate', { target: count, function: '(el) => document.getElementById("n").textContent' });
  assert.equal(r.structuredContent.result.value, 'clicked 2 deep');
});

test('drag inside the cross-site frame: HTML5 drag and drop and a mouse-event drag land', async () => {
  // t8-drag.html (tools-core's drag page) in the out-of-process frame, below the fold.
  ok(await call(c, 'browser_navigate', { url: `${topUrl}&page=t8-drag.html` }));
  let snap = '';
  await waitFor(async () => /button "Knob"/.test(snap = await snapshot()), 5000);
  const card = refOf(snap, 'button', 'Card');
  assert.match(card ?? '', /^f\d+e\d+$/, snap);
  let r = ok(await call(c, 'browser_drag', { startTarget: card, endTarget: refOf(snap, 'region', 'Bin') }));
  assert.match(text(r), /^Dragged button "Card" \[ref=f\d+e\d+\] to region "Bin"/);
  ok(await call(c, 'browser_evaluate', { function: '() => scrollTo(0, 0)' }));
  ok(await call(c, 'browser_drag', { startTarget: refOf(snap, 'button', 'Knob'), endTarget: refOf(snap, 'region', 'Slot'), snapshot: 'none' }));
  r = ok(await call(c, 'browser_evaluate', { target: card, function: '() => [document.getElementById("html5").textContent, document.getElementById("mouse").textContent]' }));
  assert.deepEqual(r.structuredContent.result.value, ['dropped card-data after dragenter', 'knob in slot after several moves']);
});

test('snapshot options reach into frames: depth, interactive, target', async () => {
  const snap = await loadTop();
  // interactive: only what one acts on, frames included.
  let s = await snapshot({ interactive: true });
  assert.match(s, /- button "Go" \[ref=f\d+e\d+\]/);
  assert.match(s, /- button "Count" \[ref=f\d+e\d+\]/);
  assert.doesNotMatch(s, /status/);
  // depth counts on through iframe lines: depth 1 shows a frame's top level
  // only, not the nested frame's content.
  s = await snapshot({ depth: 1 });
  assert.match(s, /^  - button "Greet" \[ref=f\d+e\d+\]$/m);
  assert.doesNotMatch(s, /button "Count"/);
  s = await snapshot({ depth: 0 });
  assert.doesNotMatch(s, /Greet|Go"/);
  // target: an iframe ref shows that frame; a ref inside a frame scopes to it.
  const sameRef = refOf(snap, 'iframe', 'Same origin');
  s = await snapshot({ target: sameRef });
  assert.match(s, /^- iframe "Same origin" \[ref=e\d+\]:\n  - textbox "Nickname"/);
  assert.match(s, /button "Count"/);
  assert.doesNotMatch(s, /heading "Frames"|button "Go"/);
  const innerRef = refOf(snap, 'iframe', 'Inner');
  s = await snapshot({ target: innerRef });
  assert.match(s, /^- iframe "Inner" \[ref=f\d+e\d+\]:\n  - textbox "Word"/);
  assert.doesNotMatch(s, /Greet/);
});

test('a covered iframe fails ELEMENT_NOT_CLICKABLE; a ref of a removed frame is stale', async () => {
  const snap = await loadTop();
  const greet = refOf(snap, 'button', 'Greet');
  // Cover the same-origin iframe in the top page: the button inside is not
  // covered in its own frame, only its iframe is.
  let r = await call(c, 'browser_evaluate', { function: `() => {
    const f = document.getElementById('same').getBoundingClientRect();
    const d = document.createElement('div');
    d.id = 'veil';
    d.style.cssText = 'position:fixed;background:rgba(0,0,0,.3);left:' + f.left + 'px;top:' + f.top + 'px;width:' + f.width + 'px;height:' + f.height + 'px';
    document.body.append(d);
  }` });
  assert.equal(r.isError, false, text(r));
  r = await call(c, 'browser_click', { target: greet, timeout: 1500 });
  assert.equal(r.isError, true);
  assert.equal(r.structuredContent.error.code, 'ELEMENT_NOT_CLICKABLE');
  assert.match(r.structuredContent.error.message, /covered by <div id="veil">/);
  // Uncovered, the same click goes through.
  r = await call(c, 'browser_evaluate', { function: "() => document.getElementById('veil').remove()" });
  r = await call(c, 'browser_click', { target: greet });
  assert.equal(r.isError, false, text(r));

  // Remove the cross-site iframe: its refs now answer STALE_REF.
  const go = refOf(snap, 'button', 'Go');
  r = await call(c, 'browser_evaluate', { function: "() => document.getElementById('cross').remove()" });
  assert.equal(r.isError, false, text(r));
  r = await call(c, 'browser_click', { target: go, timeout: 2000 });
  assert.equal(r.isError, true);
  assert.equal(r.structuredContent.error.code, 'STALE_REF', text(r));
  const after = await snapshot();
  assert.doesNotMatch(after, /button "Go"/);
  assert.match(after, /button "Greet"/);
});
