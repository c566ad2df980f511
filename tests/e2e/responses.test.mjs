// Responses: the snapshot an action returns (diff, the default, in the lean
// view; full; none), browser_find, the --max-output-chars bound with explicit
// truncation, and filename writes that stay inside the output dir.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import {
  existsSync, linkSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync,
} from 'node:fs';
import { startServer, startPageServer, call, text, refOf, sessionOutputDir } from './lib.mjs';

const pages = await startPageServer();
const srv = await startServer();
const c = srv.client;
// A second server with a small bound and full as the action default.
const small = await startServer(['--max-output-chars', '3000', '--snapshot-mode', 'full']);
test.after(async () => { await srv.close(); await small.close(); await pages.close(); });

const chars = (s) => [...s].length;

async function snapshotOf(client, url) {
  let r = await call(client, 'browser_navigate', { url });
  assert.equal(r.isError, false, text(r));
  r = await call(client, 'browser_snapshot');
  assert.equal(r.isError, false, text(r));
  return r.structuredContent.snapshot;
}

test('action results carry a diff by default, full or none on request', async () => {
  const snap = await snapshotOf(c, `${pages.url}/counter.html`);
  const inc = refOf(snap, 'button', 'Increment');
  let r = await call(c, 'browser_click', { target: inc });
  assert.equal(r.isError, false, text(r));
  // The page's URL and title were in the snapshot just read: not repeated.
  assert.match(text(r), /^Clicked button "Increment" \[ref=e\d+\]\n- Page Snapshot \(diff: \d+ changed lines\):\n```yaml\n/);
  assert.match(r.structuredContent.snapshot, /Count: 1/);
  assert.doesNotMatch(r.structuredContent.snapshot, /heading "Counter"/, 'only what changed');
  assert.equal(r.structuredContent.diff, true);
  assert.equal(r.structuredContent.url, `${pages.url}/counter.html`, 'structuredContent always has the page');
  assert.equal(r.structuredContent.title, 'Counter');

  r = await call(c, 'browser_click', { target: inc, snapshot: 'full' });
  assert.equal(r.isError, false, text(r));
  assert.match(text(r), /^Clicked button "Increment" \[ref=e\d+\]\n- Page Snapshot:\n```yaml\n/);
  assert.match(r.structuredContent.snapshot, /- heading "Counter" \[level=1\]/, 'the whole page');
  assert.equal(r.structuredContent.diff, false);

  r = await call(c, 'browser_click', { target: inc, snapshot: 'none' });
  assert.equal(r.isError, false, text(r));
  assert.doesNotMatch(text(r), /Page Snapshot/);
  assert.equal(r.structuredContent.snapshot, undefined);
  assert.equal(r.structuredContent.title, 'Counter');

  r = await call(c, 'browser_type', { target: inc, text: 'x', snapshot: 'bogus', timeout: 2000 });
  assert.equal(r.structuredContent.error.code, 'INVALID_PARAMETERS');
});

test('the lean view: a new document\'s page cut to what an agent picks from, each cut saying how to read it', async () => {
  // Issue 37, item 3: the navigation's own answer carries the lean view.
  let r = await call(c, 'browser_navigate', { url: `${pages.url}/lean-view.html` });
  assert.equal(r.isError, false, text(r));
  assert.match(text(r), /^Navigated\. Title: Lean view\nHTTP status: 200\n- Page Snapshot \(lean: /);
  assert.ok(chars(text(r)) < 1600, `${chars(text(r))} characters`);
  assert.equal(r.structuredContent.status, 200);
  // An action on the same document answers with what changed: nothing.
  const w = await call(c, 'browser_wait_for', { text: 'Lean view' });
  assert.match(text(w), /- Page Snapshot: unchanged since the last snapshot/);
  const view = r.structuredContent.snapshot;
  assert.match(text(r), /- Page Snapshot \(lean: browser_snapshot shows all\):/);
  assert.doesNotMatch(view, /\/url:/, 'no /url lines');
  assert.match(view, /- link "Section 1" \[ref=e\d+\]\n/, 'a link without its /url loses its colon');
  assert.match(view, /paragraph \[ref=e\d+\]: "This paragraph is long on purpose: [^"\n]{20,80}…"\n/, 'a long text is cut');
  const table = refOf(view, 'table', 'Orders');
  assert.match(view, new RegExp(`- text: … 56 more row: browser_snapshot target=${table} shows them`));
  assert.match(view, /- text: … 25 more listitem: browser_snapshot target=e\d+ shows them/);
  assert.doesNotMatch(view, /Pick 40/);
  assert.ok(refOf(view, 'button', 'Load results'), 'what follows a cut run is still shown');

  // What was cut is one call away, and its refs work.
  r = await call(c, 'browser_snapshot', { target: table });
  assert.match(r.structuredContent.snapshot, /Order 60 \| Customer 60/);
  r = await call(c, 'browser_find', { text: 'Pick 40' });
  const pick = refOf(r.structuredContent.snapshot, 'button', 'Pick 40');
  r = await call(c, 'browser_click', { target: pick });
  assert.equal(r.isError, false, text(r));
  assert.match(r.structuredContent.snapshot, /status \[ref=e\d+\]: picked 40/);
  r = await call(c, 'browser_snapshot');
  assert.match(r.structuredContent.snapshot, /- \/url: "#section-30"/, 'browser_snapshot shows all');
  assert.match(r.structuredContent.snapshot, /down to the last one, here\./);
  // browser_find shows a long text around its match, and leaves out the
  // page's URL and title the agent has just read.
  r = await call(c, 'browser_find', { text: 'EVERY word' });
  assert.equal(r.structuredContent.matches, 1);
  assert.match(r.structuredContent.snapshot, /- paragraph \[ref=e\d+\]: "…[^\n]*every word of it, down to the last one, here\."\n/);
  assert.doesNotMatch(r.structuredContent.snapshot, /long on purpose/);
  assert.match(text(r), /Found 1 matching line for "EVERY word" \(with their ancestors' lines; long texts cut around the match\)/);
  assert.doesNotMatch(text(r), /Page URL/);
  assert.equal(r.structuredContent.url, `${pages.url}/lean-view.html`);

  // A diff that fills the page is bounded the same way.
  r = await call(c, 'browser_click', { target: refOf(view, 'button', 'Load results') });
  assert.equal(r.isError, false, text(r));
  assert.match(text(r), /- Page Snapshot \(diff: 30\d changed lines, lean\):/);
  assert.match(r.structuredContent.snapshot, /- listitem \[ref=e\d+\]: Result 5\n\s+- text: … 295 more listitem: browser_snapshot target=e\d+ shows them/);
  assert.ok(chars(text(r)) < 1500, `${chars(text(r))} characters`);
  r = await call(c, 'browser_find', { text: 'Result 300' });
  assert.equal(r.structuredContent.matches, 1);

  // The old default, verbatim, on request.
  r = await call(c, 'browser_navigate', { url: `${pages.url}/lean-view.html`, snapshot: 'none' });
  assert.doesNotMatch(text(r), /Page Snapshot/);
  r = await call(c, 'browser_wait_for', { text: 'Lean view', snapshot: 'full' });
  assert.match(r.structuredContent.snapshot, /Pick 60/);
  assert.match(r.structuredContent.snapshot, /\/url: "#section-1"/);
});

test('an action repeats the page\'s URL and title only when they change', async () => {
  const snap = await snapshotOf(c, `${pages.url}/responses-diff.html`);
  const noop = refOf(snap, 'button', 'Noop');
  let r = await call(c, 'browser_click', { target: noop });
  assert.doesNotMatch(text(r), /Page URL|Page Title/);
  const go = refOf(snap, 'button', 'Go to counter');
  r = await call(c, 'browser_click', { target: go });
  assert.match(text(r), new RegExp(`\nPage URL: ${pages.url}/counter\\.html\nPage Title: Counter\n`));
});

test('snapshot: diff shows only changed lines with their ancestors, and what is gone', async () => {
  const snap = await snapshotOf(c, `${pages.url}/responses-diff.html`);
  const add = refOf(snap, 'button', 'Add item');
  const remove = refOf(snap, 'button', 'Remove banner');
  const noop = refOf(snap, 'button', 'Noop');
  assert.ok(add && remove && noop, snap);

  let r = await call(c, 'browser_click', { target: add, snapshot: 'diff' });
  assert.equal(r.isError, false, text(r));
  let d = r.structuredContent.snapshot;
  assert.equal(r.structuredContent.diff, true);
  assert.match(text(r), /Page Snapshot \(diff: \d+ changed lines/);
  assert.match(d, /- listitem \[ref=e\d+\]: Item 3/, 'the new item');
  assert.match(d, /- list "Items" \[ref=e\d+\]:/, 'its ancestor');
  assert.match(d, /- main \[ref=e\d+\]:/, 'its ancestor');
  assert.match(d, /3 items/, 'the changed status');
  assert.doesNotMatch(d, /Item 1|Item 2/, 'unchanged siblings are left out');
  assert.doesNotMatch(d, /heading "Shopping list"|Promo offer|"Noop"/, 'unchanged lines are left out');
  assert.ok(d.length < snap.length / 2, `diff is small: ${d.length} vs ${snap.length}`);

  r = await call(c, 'browser_click', { target: remove, snapshot: 'diff' });
  assert.equal(r.isError, false, text(r));
  assert.match(text(r), /- Gone:\n```yaml\n- navigation "Banner" \[ref=e\d+\]/);
  assert.doesNotMatch(text(r), /Gone[^]*link "Promo offer"/, 'only the top of a gone subtree');

  await call(c, 'browser_click', { target: noop, snapshot: 'diff' });
  r = await call(c, 'browser_click', { target: noop, snapshot: 'diff' });
  assert.match(text(r), /- Page Snapshot: unchanged since the last snapshot/);
  assert.equal(r.structuredContent.snapshot, '');

  // A click that loads a new document: nothing to diff against, so the
  // whole (lean) page.
  const go = refOf((await call(c, 'browser_snapshot')).structuredContent.snapshot, 'button', 'Go to counter');
  r = await call(c, 'browser_click', { target: go, snapshot: 'diff' });
  assert.equal(r.isError, false, text(r));
  assert.equal(r.structuredContent.diff, false);
  assert.match(text(r), /- Page Snapshot(?: \(lean: browser_snapshot shows all\))?:\n```yaml\n/);
  assert.match(r.structuredContent.snapshot, /- heading "Counter" \[level=1\]/);
});

test('a scoped snapshot does not become the base of the next diff', async () => {
  const snap = await snapshotOf(c, `${pages.url}/responses-diff.html`);
  const add = refOf(snap, 'button', 'Add item');
  let r = await call(c, 'browser_snapshot', { target: 'ul' });
  assert.doesNotMatch(r.structuredContent.snapshot, /Shopping list/);
  r = await call(c, 'browser_click', { target: add, snapshot: 'diff' });
  assert.equal(r.structuredContent.diff, true);
  assert.doesNotMatch(r.structuredContent.snapshot, /Shopping list/, 'compared with the whole page');
});

test('--snapshot-mode full makes the whole page the action default; the call can override it', async () => {
  const snap = await snapshotOf(small.client, `${pages.url}/counter.html`);
  const inc = refOf(snap, 'button', 'Increment');
  let r = await call(small.client, 'browser_click', { target: inc });
  assert.equal(r.isError, false, text(r));
  assert.equal(r.structuredContent.diff, false);
  assert.match(r.structuredContent.snapshot, /heading "Counter"/);
  r = await call(small.client, 'browser_click', { target: inc, snapshot: 'diff' });
  assert.equal(r.structuredContent.diff, true);
  assert.match(r.structuredContent.snapshot, /Count: 2/);
  assert.doesNotMatch(r.structuredContent.snapshot, /heading "Counter"/);
});

test('browser_find returns matching lines with their ancestors', async () => {
  await call(c, 'browser_navigate', { url: `${pages.url}/responses-diff.html` });
  let r = await call(c, 'browser_find', { text: 'item' });
  assert.equal(r.isError, false, text(r));
  const found = r.structuredContent.snapshot;
  // list "Items", Item 1, Item 2, "2 items", Add item
  assert.equal(r.structuredContent.matches, 5, found);
  assert.match(found, /^- main \[ref=e\d+\]:\n {2}- list "Items" \[ref=e\d+\]:\n {4}- listitem \[ref=e\d+\]: Item 1\n/);
  assert.match(found, /- button "Add item" \[ref=e\d+\]/);
  assert.doesNotMatch(found, /Shopping list|Noop|Promo/);
  assert.match(text(r), /Found 5 matching lines for "item"/);
  assert.ok(refOf(found, 'button', 'Add item'), 'refs can be used as targets');

  r = await call(c, 'browser_find', { text: 'ITEM [12]$', regex: true });
  assert.equal(r.structuredContent.matches, 0, 'a regex is case-sensitive');
  r = await call(c, 'browser_find', { text: '/ITEM [12]$/i', regex: true });
  assert.equal(r.structuredContent.matches, 2, r.structuredContent.snapshot);
  r = await call(c, 'browser_find', { text: '\\d items', regex: true });
  assert.match(r.structuredContent.snapshot, /status \[ref=e\d+\]: 2 items/);

  r = await call(c, 'browser_find', { text: 'item', target: 'ul' });
  assert.equal(r.structuredContent.matches, 3, 'scoped to the target');
  r = await call(c, 'browser_find', { text: 'nothing like this' });
  assert.equal(r.isError, false);
  assert.equal(r.structuredContent.matches, 0);
  assert.match(text(r), /No snapshot line matches "nothing like this"/);
  r = await call(c, 'browser_find', { text: '(unclosed', regex: true });
  assert.equal(r.structuredContent.error.code, 'INVALID_PARAMETERS');
});

test('every response is bounded by --max-output-chars and says how it was cut', async () => {
  await call(small.client, 'browser_navigate', { url: `${pages.url}/bigtable.html` });
  let r = await call(small.client, 'browser_snapshot');
  assert.equal(r.isError, false, text(r));
  assert.ok(chars(text(r)) <= 3000, `text is ${chars(text(r))} characters`);
  assert.equal(r.structuredContent.truncated, true);
  assert.ok(chars(r.structuredContent.snapshot) <= 3000);
  const m = text(r).match(/\[truncated: (\d+) more characters not shown; (\d+) of (\d+) lines above\. Pass filename/);
  assert.ok(m, text(r));
  assert.ok(Number(m[1]) > 100000 && Number(m[3]) > 2500, m[0]);
  assert.match(text(r), /```$/, 'the yaml block is closed');
  const lines = r.structuredContent.snapshot.split('\n');
  assert.ok(lines.every((l) => /^\s*- /.test(l) || l === ''), 'cut at a line break');

  // maxChars cuts further; the same marker.
  r = await call(small.client, 'browser_snapshot', { maxChars: 500 });
  assert.ok(chars(r.structuredContent.snapshot) <= 500);
  assert.match(text(r), /\[truncated: \d+ more characters/);

  // browser_find with thousands of matches is bounded the same way.
  r = await call(small.client, 'browser_find', { text: '@example.com' });
  assert.equal(r.structuredContent.matches, 2500);
  assert.ok(chars(text(r)) <= 3000);
  assert.equal(r.structuredContent.truncated, true);

  // Tools that do not cut their own text are cut by the generic bound.
  r = await call(small.client, 'browser_evaluate', { function: "() => 'x'.repeat(20000) + '\\n' + 'y'.repeat(10)" });
  assert.equal(r.isError, false);
  assert.ok(chars(text(r)) <= 3000, `evaluate text is ${chars(text(r))}`);
  assert.match(text(r), /\[truncated: \d+ more characters not shown \(--max-output-chars\)/);
  assert.equal(r.structuredContent.truncated, true);
  assert.ok(JSON.stringify(r.structuredContent).length <= 3000 + 500);

  // A small page is not marked.
  await call(small.client, 'browser_navigate', { url: `${pages.url}/counter.html` });
  r = await call(small.client, 'browser_snapshot');
  assert.equal(r.structuredContent.truncated, false);
  assert.doesNotMatch(text(r), /truncated/);
});

test('filename writes the whole snapshot under the output dir', async () => {
  await call(small.client, 'browser_navigate', { url: `${pages.url}/bigtable.html` });
  const out = await sessionOutputDir(small.client);
  let r = await call(small.client, 'browser_snapshot', { filename: 'big/table.yaml' });
  assert.equal(r.isError, false, text(r));
  const file = join(out, 'big', 'table.yaml');
  assert.equal(r.structuredContent.file, file);
  assert.match(text(r), new RegExp(`saved to ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} \\(\\d+ lines`));
  assert.ok(chars(text(r)) < 1000, 'the snapshot itself is not in the response');
  const saved = readFileSync(file, 'utf8');
  assert.match(saved, /- row \[ref=e\d+\]: 2500 \| User 2500 \| user2500@example\.com \| \d+$/m, 'the last row');
  assert.ok(saved.length > 100000);
  assert.equal(statSync(out).mode & 0o777, 0o700, 'the output dir is private');
  assert.equal(statSync(file).mode & 0o777, 0o600);

  // Overwrites an existing file; find writes its lines too.
  r = await call(small.client, 'browser_find', { text: 'User 250', filename: 'big/table.yaml' });
  assert.equal(r.isError, false, text(r));
  const found = readFileSync(file, 'utf8');
  assert.match(found, /User 2500/);
  assert.ok(found.length < saved.length);
});

test('filename outside the output dir fails with PATH_NOT_ALLOWED', async () => {
  await call(c, 'browser_navigate', { url: `${pages.url}/counter.html` });
  const out = await sessionOutputDir(c);
  let r = await call(c, 'browser_snapshot', { filename: 'ok.yaml' });
  assert.equal(r.isError, false, text(r));

  for (const bad of ['/etc/x', '../x', 'a/../../x', 'a/./b', 'a//b', 'dir/']) {
    r = await call(c, 'browser_snapshot', { filename: bad });
    assert.equal(r.isError, true, bad);
    assert.equal(r.structuredContent.error.code, 'PATH_NOT_ALLOWED', bad);
    assert.match(r.structuredContent.error.hint, /relative/);
  }
  assert.ok(!existsSync(join(srv.runtimeDir, 'x')));

  // A symlinked directory inside the output dir that points outside.
  const outside = join(srv.runtimeDir, 'outside');
  mkdirSync(outside);
  symlinkSync(outside, join(out, 'link'));
  r = await call(c, 'browser_snapshot', { filename: 'link/x.yaml' });
  assert.equal(r.structuredContent.error.code, 'PATH_NOT_ALLOWED', text(r));
  assert.ok(!existsSync(join(outside, 'x.yaml')), 'nothing written outside');

  // A symlink as the file itself, and a hard link to a file outside.
  const victim = join(outside, 'victim.txt');
  writeFileSync(victim, 'keep me');
  symlinkSync(victim, join(out, 'leaf.yaml'));
  r = await call(c, 'browser_snapshot', { filename: 'leaf.yaml' });
  assert.equal(r.structuredContent.error.code, 'PATH_NOT_ALLOWED', text(r));
  linkSync(victim, join(out, 'hard.yaml'));
  r = await call(c, 'browser_snapshot', { filename: 'hard.yaml' });
  assert.equal(r.structuredContent.error.code, 'PATH_NOT_ALLOWED', text(r));
  assert.equal(readFileSync(victim, 'utf8'), 'keep me');
});
