// Task-driven end-to-end suite on pages that neither we nor a model wrote:
// demos and documentation that Debian packages install under /usr/share
// (deploy/install-deps.sh installs them) and demo pages that npm packages
// ship (tests/e2e/package.json), served on 127.0.0.1 by tasks-lib.mjs. Each
// task does what a model does: take a snapshot, find the element by role and
// accessible name in the snapshot text, act on its ref with the MCP tools,
// then check that the page changed as a user expects (browser_evaluate only
// reads the outcome; it never acts). Every task runs through tabvisor and
// through @playwright/mcp (agents.mjs); a table of pages, tasks and each
// server's passes is printed at the end.
//
// A task that needs a tool we do not have yet is registered as skipped with
// a TODO naming the tool, and is not counted. A package that is not
// installed skips its pages' tasks, saying which (run deploy/install-deps.sh).
// A task that fails on a known tabvisor bug runs as a node todo naming the
// bug (knownBug), reported but not counted and not failing the run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sessionOutputDir, onFirefox } from './lib.mjs';
import { startTabvisor, startPeer } from './agents.mjs';
import { startPackageServer, findAll, npmRoot } from './tasks-lib.mjs';

const UI = '/usr/share/doc/libjs-jquery-ui-docs/examples';
const PY = '/usr/share/doc/python3-doc/html';
// #page=1: pdf.js would otherwise reopen the document where the last task left it.
const PDF = '/usr/share/javascript/pdf/web/viewer.html?file=/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf#page=1';
const JSTREE = '/usr/share/doc/libjs-jquery-jstree/examples/basic/index.html';

// The Debian package each page comes from, and a file that proves it is installed.
const sources = {
  'libjs-jquery-ui-docs': `${UI}/tabs/default.html`,
  'python3-doc': `${PY}/library/index.html`,
  'libjs-pdf + shared-mime-info': ['/usr/share/javascript/pdf/web/viewer.html', '/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf'],
  'libjs-jquery-jstree': JSTREE,
  // npm packages with demo pages of their own (tests/e2e/package.json), served under /npm/.
  'npm dragula': join(npmRoot, 'dragula/index.html'),
  'npm selectric': join(npmRoot, 'selectric/public/demo.html'),
  'npm pell': join(npmRoot, 'pell/demo.html'),
  'npm medium-editor': join(npmRoot, 'medium-editor/demo/index.html'),
  'npm ckeditor4': join(npmRoot, 'ckeditor4/samples/index.html'),
  'libjs-spectre-docs': '/usr/share/doc/libjs-spectre-docs/docs/components/modals.html',
  'lmdb-doc': '/usr/share/doc/lmdb-doc/html/index.html',
  'libjs-codemirror': '/usr/share/doc/libjs-codemirror/examples/search.html',
  'libjs-json-editor': '/usr/share/doc/libjs-json-editor/examples/basic.html',
  'node-pikaday': ['/usr/share/doc/node-pikaday/examples/trigger.html', '/usr/share/nodejs/pikaday/pikaday.js'],
  'libjs-jquery-markitup': '/usr/share/doc/libjs-jquery-markitup/examples/index.html',
  'npm @zachleat/seven-minute-tabs': join(npmRoot, '@zachleat/seven-minute-tabs/demo.html'),
  'npm @zachleat/carouscroll': join(npmRoot, '@zachleat/carouscroll/demo.html'),
  'npm accessible-autocomplete': join(npmRoot, 'accessible-autocomplete/examples/form.html'),
  'npm simple-datatables': join(npmRoot, 'simple-datatables/docs/demos/1-simple/index.html'),
  'npm jsoneditor': join(npmRoot, 'jsoneditor/examples/03_switch_mode.html'),
  'npm awesomplete': join(npmRoot, 'awesomplete/index.html'),
  'npm tablesort': join(npmRoot, 'tablesort/_site/demo/index.html'),
  'npm nice-select2': join(npmRoot, 'nice-select2/docs/index.html'),
};
const missing = (pkg) => [sources[pkg]].flat().filter((f) => !existsSync(f)).join(', ');

const pages = await startPackageServer();
// Every task runs through tabvisor and through @playwright/mcp (agents.mjs),
// same steps; TASKS_PEER=0 leaves the peer out (a quick local run).
// TASKS_TV_ARGS: more tabvisor options, space-separated (bench/tokens.mjs
// measures --snapshot-mode diff this way).
const tvArgs = (process.env.TASKS_TV_ARGS || '').split(' ').filter(Boolean);
const agents = [await startTabvisor(['--allowed-origins', '127.0.0.1', ...tvArgs])];
if (process.env.TASKS_PEER !== '0') agents.push(await startPeer());
// The agent the running task drives (node runs a file's tests one by one).
let A = agents[0];

// page -> {tasks, passed: {agent name: count}}; todos are not counted.
// peerOnly: tasks the peer passed and tabvisor failed.
const results = new Map();
const peerOnly = [];
test.after(async () => {
  const names = agents.map((a) => a.name);
  const head = ['page', 'tasks', ...names];
  const rows = [...results].filter(([, r]) => r.tasks)
    .map(([p, r]) => [p, String(r.tasks), ...names.map((n) => String(r.passed[n] || 0))]);
  const tot = head.slice(1).map((_, i) => rows.reduce((a, r) => a + Number(r[i + 1]), 0));
  const sources = new Set(rows.map((r) => r[0].split('/')[0]));
  // The suite cut down to the tasks both servers pass: what it covers when
  // only tasks the peer can do are counted.
  const both = [...results].filter(([, r]) => r.both);
  const bothLine = names.length > 1 ? `passed by both: ${both.reduce((a, [, r]) => a + r.both, 0)} tasks on ${both.length} pages from ${new Set(both.map(([p]) => p.split('/')[0])).size} sources` : '';
  rows.push(['total', ...tot.map(String)]);
  const w = head.map((h, i) => Math.max(...rows.map((r) => r[i].length), h.length));
  const fmt = (r) => `| ${r.map((x, i) => (i ? x.padStart(w[i]) : x.padEnd(w[i]))).join(' | ')} |`;
  console.log(['', `tasks on ${rows.length - 1} third-party pages from ${sources.size} sources, passed by each server:`,
    fmt(head), `|${w.map((x) => '-'.repeat(x + 2)).join('|')}|`, ...rows.map(fmt), bothLine,
    peerOnly.length ? `passed by ${names[1]} only: ${peerOnly.join('; ')}` : ''].join('\n'));
  if (MEASURE) writeFileSync(MEASURE, JSON.stringify({ agents: names, tasks: measured }, null, 1));
  for (const a of agents) await a.close();
  await pages.close();
});

// ------------------------------------------------------------------ tools, as a model uses them

function ok(r, what) {
  assert.equal(r.isError, false, `${what}: ${r.text}`);
  return r;
}

// ------------------------------------------------------------------ the frugal reader (TASKS_MEASURE)
//
// bench/tokens.mjs runs this file with TASKS_MEASURE=<json file> to measure
// what an agent reads per task. The agent is frugal, as issue 21 defines it:
// it looks for a target first in the last tool result it got, then in the
// last whole-page snapshot it read (refs are stable), and calls
// browser_snapshot only when neither shows it, or when an action on a
// remembered ref fails; a target chosen by position (nth > 0) needs a whole,
// current snapshot. Every tool result it reads is counted (text bytes and
// calls); what the task reads only to check the outcome (check(), a
// snapshot() it never picks a ref from) is not. Without TASKS_MEASURE every
// target is found in a fresh snapshot, as before.
const MEASURE = process.env.TASKS_MEASURE;
// TASKS_DUMP=1: each read in the measure file also carries the text read.
const DUMP = process.env.TASKS_DUMP === '1';
// Which corpus the tasks registered next belong to: 'tuned' (the pages the
// lean views were fitted on) or 'held out' (the last section of this file).
let corpus = 'tuned';
const measured = [];
// The running task's reader: bytes and calls read, the last result's text,
// the last whole snapshot, refs taken from memory (ref -> [role, name]) and
// the snapshots the task took (text -> {bytes, counted}).
let reader;
const newReader = () => ({ bytes: 0, calls: 0, reads: [], last: '', whole: '', remembered: new Map(), taken: new Map() });

// A tool result the agent reads: counted, and remembered as the last result
// (and as the last whole snapshot when it is one).
function readResult(tool, args, r) {
  if (!reader) return r;
  const bytes = Buffer.byteLength(r.text);
  reader.bytes += bytes;
  reader.calls++;
  reader.reads.push(DUMP ? [tool, bytes, r.text] : [tool, bytes]);
  reader.last = r.text;
  const scoped = args && (args.target || args.depth !== undefined || args.interactive);
  if (tool === 'browser_snapshot' ? !scoped && !r.isError : /^- Page Snapshot(?: \(lean[^\n]*)?:\n```yaml/m.test(r.text)) reader.whole = r.text;
  return r;
}
const call = async (tool, args) => readResult(tool, args, await A.call(tool, args));

// A whole-page snapshot the task takes; read (counted) only when a ref is
// picked from it and memory does not have that element.
async function snapshot() {
  if (!reader) return A.snapshot();
  const r = await A.call('browser_snapshot', {});
  if (r.isError) throw new Error(`snapshot: ${r.text}`);
  const snap = A.tv ? r.sc.snapshot : (r.text.match(/```yaml\n([\s\S]*?)\n```/) || [, ''])[1];
  reader.taken.set(snap, { r, counted: false });
  return snap;
}
// A whole, current snapshot the agent reads (counted): the last result when
// that is one and left nothing out, else a new one (always when fresh).
async function look(fresh = false) {
  if (reader && !fresh && reader.last && reader.last === reader.whole &&
    !/^- Page Snapshot \([^\n]*lean|^\[truncated: /m.test(reader.last)) return reader.last;
  const snap = await snapshot();
  return countTaken(snap);
}
function countTaken(snap) {
  const t = reader?.taken.get(snap);
  if (t && !t.counted) {
    t.counted = true;
    readResult('browser_snapshot', {}, t.r);
  }
  return snap;
}

// The ref of the element with this role and name in a snapshot's text, or
// undefined (a string matches the name exactly, a RegExp tests it; an
// unnamed element matches on its inline text, as `- listitem [ref=e5]: Item
// 1`). `nth` picks among several.
function lookup(snap, role, name, nth = 0) {
  const matches = (label) => name === undefined || (name instanceof RegExp ? name.test(label) : label === name);
  let all = findAll(snap, role).filter((e) => matches(e.name || e.value || ''));
  // An element whose name is left out is read by what it holds.
  if (!all.length && name !== undefined) all = findAll(snap, role, name);
  // Nothing with that role: a clickable element without one, as
  // @playwright/mcp shows it (`- generic [ref=e9] [cursor=pointer]: Next`).
  if (!all.length && name !== undefined) all = findAll(snap, 'generic').filter((e) => matches(e.value || e.text || ''));
  return all[nth]?.ref;
}

// The frugal reader's memory: the last result, then the last whole snapshot.
// An element picked by position (the fourth field labelled Country) is taken
// from there too when that text shows that many before it says it left out
// elements that could be one of them (a lean view's "… 12 elements folded",
// or "… 5 more combobox" of that role; not "… 7 more option" when a
// combobox is wanted), as a model reading it would.
function shownBeforeLeftOut(text, role) {
  const m = text.match(new RegExp(`^\\s*- text: … \\d+ (?:elements folded|more ${role}\\b)`, 'm'));
  return m ? text.slice(0, m.index) : text;
}
function remember(role, name, nth = 0) {
  for (const text of [reader.last, reader.whole]) {
    const r = text && lookup(nth ? shownBeforeLeftOut(text, role) : text, role, name, nth);
    if (r) {
      reader.remembered.set(r, [role, name]);
      return r;
    }
  }
  return undefined;
}

// A view that said it left elements out names browser_find: the agent asks
// it for the name before it reads a whole snapshot.
async function viaFind(role, name) {
  if (!reader || name === undefined || !/^- Page Snapshot \([^\n]*lean|^\[truncated: /m.test(reader.whole)) return undefined;
  // A name's anchors (^Built-in Types) would test the whole line, not the name.
  const r = await call('browser_find', name instanceof RegExp
    ? { text: name.source.replace(/^\^|\$$/g, ''), regex: true } : { text: name });
  const found = !r.isError && lookup(r.text, role, name);
  if (found) reader.remembered.set(found, [role, name]);
  return found || undefined;
}

// The ref of the one element with this role and name in snap (see lookup).
// Measured, a ref is taken from memory when it has it, and snap is read
// (counted) only when it does not.
async function ref(snap, role, name, nth = 0) {
  if (reader && reader.taken.has(snap)) {
    const r = nth === 0 && (remember(role, name) || (await viaFind(role, name)));
    if (r) return r;
    countTaken(snap);
  }
  const r = lookup(snap, role, name, nth);
  assert.ok(r, `no ${role} ${name === undefined ? '' : JSON.stringify(String(name))} in snapshot:\n${snap}`);
  return r;
}

// Find role/name and return its ref: from memory when measured, else from a
// fresh snapshot.
async function find(role, name, nth = 0) {
  const r = reader && remember(role, name, nth);
  return r || (nth === 0 && (await viaFind(role, name))) || ref(await look(), role, name, nth);
}

// An action whose remembered ref failed: the agent reads a fresh snapshot,
// finds the same role and name there, and tries once more.
async function retryFresh(tool, args, r) {
  const refs = (a) => [a.target, a.startRef, a.endRef, ...(a.fields || []).map((f) => f.target)];
  if (!reader || !r.isError || !refs(args).some((x) => reader.remembered.has(x))) return r;
  const snap = await look(true);
  const again = (x) => {
    const m = reader.remembered.get(x);
    return m ? lookup(snap, m[0], m[1]) || x : x;
  };
  const a = { ...args };
  for (const k of ['target', 'startRef', 'endRef']) if (a[k]) a[k] = again(a[k]);
  if (a.fields) a.fields = a.fields.map((f) => ({ ...f, target: again(f.target) }));
  return call(tool, a);
}

// Elements with this role and name in the snapshot (for checks).
function count(snap, role, name) {
  return findAll(snap, role, name).length;
}

// The parsed element (states, value) with this role and name.
function element(snap, role, name) {
  const [e] = findAll(snap, role, name);
  assert.ok(e, `no ${role} ${JSON.stringify(String(name))} in snapshot:\n${snap}`);
  return e;
}

const act = async (tool, args, what) => ok(await retryFresh(tool, args, await call(tool, args)), `${tool} ${what ?? JSON.stringify(args)}`);
const click = (target, extra = {}) => act('browser_click', { target, ...extra });
// Find and click, as a model does: told STALE_REF (the page replaced the
// element after the snapshot, as a demo still setting itself up does), it
// looks again once and clicks the element it finds then.
async function clickFound(role, name) {
  const args = { target: await find(role, name) };
  let r = await retryFresh('browser_click', args, await call('browser_click', args));
  if (r.isError && /STALE_REF|Ref \S+ not found/i.test(r.text)) r = await call('browser_click', { target: await ref(await look(true), role, name) });
  return ok(r, `browser_click ${role} ${name}`);
}
const type = (target, t, extra = {}) => act('browser_type', { target, text: t, ...extra });
const key = (k, target) => act('browser_press_key', target ? { key: k, target } : { key: k });
const hover = (target) => act('browser_hover', { target });
const drag = (startRef, endRef) => act('browser_drag', { startRef, endRef });
const select = (target, values) => act('browser_select_option', { target, values });
const waitText = (t, timeout = 10000) => act('browser_wait_for', { text: t, timeout });
const waitGone = (t, timeout = 10000) => act('browser_wait_for', { textGone: t, timeout });

// A check that may take a moment to hold (a viewer scrolling): true once
// it holds, false after ms.
async function eventually(pred, ms = 5000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await pred()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

// Read the outcome from the page (never used to act).
async function check(fn) {
  return ok(await A.call('browser_evaluate', { function: fn }), 'evaluate').sc.result.value;
}

// Open a page and wait for text a user would wait to see (the jQuery UI demos
// hide the page until their modules load).
async function open(path, ready) {
  const r = ok(await call('browser_navigate', { url: pages.url + path }), `navigate ${path}`);
  if (A.tv) assert.equal(r.sc.status, 200, `${path}: HTTP ${r.sc.status}`);
  if (ready) await waitText(ready);
}

// ------------------------------------------------------------------ registration

// task(pkg, page label, title, fn): one node test per agent, counted in the
// summary. tabvisor's failures fail the run; the peer's are printed (node's
// diagnostic) and counted, not failing it.
function task(pkg, page, title, fn) {
  const ff = onFirefox && firefoxExceptions[`${page}: ${title}`];
  if (ff) return knownBug(pkg, page, title, `on Firefox: ${ff}`, fn);
  const why = missing(pkg);
  const r = results.get(page) || { tasks: 0, passed: {} };
  results.set(page, r);
  if (!why) r.tasks++;
  const passed = new Map();
  const taskCorpus = corpus;
  for (const agent of agents) {
    test(`[${agent.name}] ${page}: ${title}`, { skip: why ? `${why} missing: run deploy/install-deps.sh` : false }, async (t) => {
      A = agent;
      if (agent.nextSession) await agent.nextSession();
      reader = MEASURE ? newReader() : undefined;
      const t0 = performance.now();
      const record = (ok) => reader && measured.push({ agent: agent.name, corpus: taskCorpus, page, title, passed: ok,
        bytes: reader.bytes, calls: reader.calls, reads: reader.reads, ms: Math.round(performance.now() - t0) });
      try {
        await fn();
      } catch (e) {
        record(false);
        passed.set(agent.name, false);
        if (agent.tv) throw e;
        t.diagnostic(`${agent.name} failed: ${String(e.message).split('\n').slice(0, 4).join(' / ').slice(0, 400)}`);
        return;
      }
      record(true);
      passed.set(agent.name, true);
      r.passed[agent.name] = (r.passed[agent.name] || 0) + 1;
      if (!agent.tv && passed.get('tabvisor') === false) peerOnly.push(`${page}: ${title}`);
      if (!agent.tv && passed.get('tabvisor') === true) r.both = (r.both || 0) + 1;
    });
  }
}

// Tasks that fail on Firefox for a cause docs/firefox.md names (e2e.tasks.firefox,
// TASKS_PEER=0): run as todos, not counted.
const firefoxExceptions = {
  'jquery-ui/tooltip/default: focus a field to read its tooltip':
    "Gecko hovers what lies under the pointer's last place on a new page: the link tooltip of the task before opens too",
  'ckeditor4/samples: write in bold with the toolbar':
    "Gecko's editor keeps the space typed before the bold words inside them, as a no-break space",
};

// A task that needs a tool tabvisor does not have yet: skipped, naming the
// tool, and not counted. Write it as a task() once the tool exists.
function needsTool(page, title, tool) {
  test(`${page}: ${title}`, { skip: `TODO: needs ${tool}, not in the catalog yet` }, () => {});
}

// A task that fails on a known tabvisor bug: it runs as a node todo (reported,
// not failing the run) and is not counted; fix the bug, then make it a task().
function knownBug(pkg, page, title, bug, fn) {
  const why = missing(pkg);
  test(`[tabvisor] ${page}: ${title}`, why ? { skip: `${why} missing` } : { todo: `known bug: ${bug}` }, () => { A = agents[0]; reader = MEASURE ? newReader() : undefined; return fn(); });
}

// ------------------------------------------------------------------ jQuery UI demos (libjs-jquery-ui-docs)

const ui = (page, title, fn) => task('libjs-jquery-ui-docs', `jquery-ui/${page}`, title, fn);

ui('tabs/default', 'open the "Proin dolor" tab', async () => {
  await open(`${UI}/tabs/default.html`, 'Nunc tincidunt');
  await click(await find('tab', 'Proin dolor'));
  const s = await snapshot();
  assert.ok(element(s, 'tab', 'Proin dolor').states.includes('selected'), s);
  assert.ok(!element(s, 'tab', 'Nunc tincidunt').states.includes('selected'), s);
  assert.equal(count(s, 'tabpanel', 'Proin dolor'), 1, s);
  assert.match(s, /Morbi tincidunt, dui sit amet/);
  assert.doesNotMatch(s, /Proin elit arcu/);
});

ui('tabs/default', 'move to the next tab with the arrow key', async () => {
  await open(`${UI}/tabs/default.html`, 'Nunc tincidunt');
  await key('ArrowRight', await find('tab', 'Nunc tincidunt'));
  await key('ArrowRight');
  const s = await snapshot();
  assert.ok(element(s, 'tab', 'Aenean lacinia').states.includes('selected'), s);
  assert.equal(await check("() => document.activeElement.textContent.trim()"), 'Aenean lacinia');
  assert.match(s, /Mauris eleifend est et turpis/);
});

ui('tabs/manipulation', 'add a tab through the modal form', async () => {
  await open(`${UI}/tabs/manipulation.html`, 'Add Tab');
  await click(await find('button', 'Add Tab'));
  let s = await snapshot();
  const dialog = element(s, 'dialog', 'Tab data');
  assert.ok(dialog, s);
  await type(await ref(s, 'textbox', 'Title'), 'Release notes');
  await type(await ref(s, 'textbox', 'Content'), 'Written by the tasks suite.');
  await click(await ref(s, 'button', 'Add'));
  s = await snapshot();
  assert.equal(count(s, 'dialog', 'Tab data'), 0, s);
  await click(await ref(s, 'tab', 'Release notes'));
  s = await snapshot();
  assert.ok(element(s, 'tab', 'Release notes').states.includes('selected'), s);
  assert.match(s, /Written by the tasks suite\./);
});

ui('accordion/default', 'open section 3', async () => {
  await open(`${UI}/accordion/default.html`, 'Section 1');
  await click(await find('tab', 'Section 3'));
  const s = await snapshot();
  assert.ok(element(s, 'tab', 'Section 3').states.includes('expanded'), s);
  assert.ok(!element(s, 'tab', 'Section 1').states.includes('expanded'), s);
  assert.equal(count(s, 'tabpanel', 'Section 3'), 1, s);
  assert.match(s, /Nam enim risus, molestie et/);
});

ui('accordion/collapsible', 'collapse the open section', async () => {
  await open(`${UI}/accordion/collapsible.html`, 'Section 1');
  await click(await find('tab', 'Section 1'));
  await waitGone('Mauris mauris ante');
  const s = await snapshot();
  assert.ok(!element(s, 'tab', 'Section 1').states.includes('expanded'), s);
  assert.equal(count(s, 'tabpanel'), 0, s);
});

ui('menu/default', 'open a nested submenu and choose an item', async () => {
  await open(`${UI}/menu/default.html`, 'Books');
  await hover(await find('menuitem', 'Music'));
  await waitText('Jazz'); // submenus open after a short delay, as for a user
  await hover(await find('menuitem', 'Jazz'));
  await waitText('Big Band');
  let s = await snapshot();
  assert.equal(count(s, 'menuitem', 'Freejazz'), 1, s);
  assert.equal(count(s, 'menuitem', 'Alternative'), 0, s); // Rock's submenu stays closed
  await click(await ref(s, 'menuitem', 'Big Band'));
  // Choosing an item closes the submenus, as in a desktop menu.
  await waitGone('Freejazz');
  s = await snapshot();
  assert.equal(count(s, 'menuitem', 'Big Band'), 0, s);
  assert.equal(count(s, 'menuitem', 'Music'), 1, s);
  assert.equal(await check("() => document.querySelectorAll('#menu ul[aria-hidden=false]').length"), 0);
});

ui('menu/default', 'disabled items stay disabled', async () => {
  await open(`${UI}/menu/default.html`, 'Books');
  const s = await snapshot();
  assert.ok(element(s, 'menuitem', 'Toys (n/a)').states.includes('disabled'), s);
  const r = await call('browser_click', { target: await ref(s, 'menuitem', 'Toys (n/a)'), timeout: 1500 });
  assert.equal(r.isError, true, 'a click on a disabled menu item should be refused');
  assert.match(r.text, /disabled|not enabled|ELEMENT_NOT_ENABLED|TIMEOUT/i);
});

ui('autocomplete/default', 'pick a suggestion with the mouse', async () => {
  await open(`${UI}/autocomplete/default.html`, 'Tags');
  await type(await find('textbox', 'Tags:'), 'ja');
  await waitText('JavaScript');
  let s = await snapshot();
  // jQuery UI gives the suggestion menu no role: its items are list items.
  assert.deepEqual(findAll(s, 'listitem').map((e) => e.value).sort(), ['Java', 'JavaScript'], s);
  assert.match(s, /status(?: \[ref=\w+\])?: 2 results are available/);
  await click(await ref(s, 'listitem', 'JavaScript'));
  s = await snapshot();
  assert.equal(element(s, 'textbox', 'Tags:').value, 'JavaScript', s);
  assert.equal(count(s, 'listitem'), 0, s);
});

ui('autocomplete/default', 'pick a suggestion with the keyboard', async () => {
  await open(`${UI}/autocomplete/default.html`, 'Tags');
  await type(await find('textbox', 'Tags:'), 'sc');
  await waitText('Scheme');
  // ActionScript, AppleScript, JavaScript, Scala, Scheme: Scheme is fifth.
  for (let i = 0; i < 5; i++) await key('ArrowDown');
  await key('Enter');
  assert.equal(await check("() => document.getElementById('tags').value"), 'Scheme');
});

ui('autocomplete/combobox', 'show all items and choose one', async () => {
  await open(`${UI}/autocomplete/combobox.html`, 'preferred programming language');
  await click(await find('button', 'Show All Items'));
  await waitText('Clojure');
  await click(await find('listitem', 'Clojure'));
  assert.equal(await check("() => document.getElementById('combobox').value"), 'Clojure');
  assert.equal(await check("() => document.querySelector('.custom-combobox-input').value"), 'Clojure');
});

ui('selectmenu/default', 'choose a speed from the listbox', async () => {
  await open(`${UI}/selectmenu/default.html`, 'Select a speed');
  await click(await find('combobox', 'Medium'));
  let s = await snapshot();
  assert.ok(element(s, 'combobox', undefined).states.includes('expanded'), s);
  await click(await ref(s, 'option', 'Fast'));
  s = await snapshot();
  // The widget then labels the combobox by the chosen item (aria-labelledby).
  const box = findAll(s, 'combobox')[0];
  assert.equal(box.name || box.value, 'Fast', s);
  assert.ok(!box.states.includes('expanded'), s);
  assert.equal(await check("() => document.getElementById('speed').value"), 'Fast');
});

ui('selectmenu/default', 'choose a file from an option group', async () => {
  await open(`${UI}/selectmenu/default.html`, 'Select a file');
  await click(await find('combobox', 'jQuery.js'));
  let s = await snapshot();
  // The option groups' labels are list items of the listbox (jQuery UI's markup).
  assert.deepEqual(findAll(s, 'listitem').map((e) => e.value).filter(Boolean), ['Scripts', 'Other files'], s);
  await click(await ref(s, 'option', 'Some unknown file'));
  s = await snapshot();
  const box = findAll(s, 'combobox')[1];
  assert.equal(box.name || box.value, 'Some unknown file', s);
  assert.equal(await check("() => document.getElementById('files').value"), 'somefile');
});

ui('spinner/default', 'type a value and step it with the arrow key', async () => {
  await open(`${UI}/spinner/default.html`, 'Select a value');
  const box = await find('spinbutton', 'Select a value:');
  await type(box, '7');
  await key('ArrowUp');
  await key('ArrowUp');
  const s = await snapshot();
  assert.equal(element(s, 'spinbutton', 'Select a value:').value, '9', s);
  assert.equal(await check("() => document.getElementById('spinner').getAttribute('aria-valuenow')"), '9');
});

ui('spinner/default', 'set the value with the page\'s button', async () => {
  await open(`${UI}/spinner/default.html`, 'Set value to 5');
  await click(await find('button', 'Set value to 5'));
  const s = await snapshot();
  assert.equal(element(s, 'spinbutton', 'Select a value:').value, '5', s);
});

ui('dialog/modal-form', 'create a user through the modal form', async () => {
  await open(`${UI}/dialog/modal-form.html`, 'Create new user');
  await click(await find('button', 'Create new user'));
  const s = await snapshot();
  assert.equal(count(s, 'dialog', 'Create new user'), 1, s);
  await act('browser_fill_form', {
    fields: [
      { target: await ref(s, 'textbox', 'Name'), type: 'textbox', name: 'Name', value: 'Ada Lovelace' },
      { target: await ref(s, 'textbox', 'Email'), type: 'textbox', name: 'Email', value: 'ada@example.org' },
      { target: await ref(s, 'textbox', 'Password'), type: 'textbox', name: 'Password', value: 'engine1843' },
    ],
  });
  await click(await ref(s, 'button', 'Create an account'));
  await waitGone('All form fields are required.');
  const after = await snapshot();
  assert.equal(count(after, 'dialog', 'Create new user'), 0, after);
  assert.deepEqual(await check("() => [...document.querySelector('#users tbody tr:last-child').cells].map((c) => c.textContent)"),
    ['Ada Lovelace', 'ada@example.org', 'engine1843']);
  // tabvisor writes the table's row on one line.
  if (A.tv) assert.match(after, /row \[ref=e\d+\]: Ada Lovelace \| ada@example\.org \| engine1843/);
});

ui('dialog/modal-form', 'the form refuses a bad email', async () => {
  await open(`${UI}/dialog/modal-form.html`, 'Create new user');
  await click(await find('button', 'Create new user'));
  const s = await snapshot();
  await type(await ref(s, 'textbox', 'Email'), 'not an address', { clear: true });
  await click(await ref(s, 'button', 'Create an account'));
  const after = await snapshot();
  assert.equal(count(after, 'dialog', 'Create new user'), 1, after);
  assert.match(after, /eg\. ui@jquery\.com/);
  assert.equal(await check("() => document.querySelectorAll('#users tbody tr').length"), 1);
});

ui('dialog/modal-confirmation', 'confirm the modal dialog', async () => {
  await open(`${UI}/dialog/modal-confirmation.html`, 'Empty the recycle bin?');
  await click(await find('button', 'Delete all items'));
  const s = await snapshot();
  assert.equal(count(s, 'dialog', 'Empty the recycle bin?'), 0, s);
  assert.equal(await check("() => document.querySelector('.ui-widget-overlay') === null"), true);
});

ui('dialog/modal-confirmation', 'close the modal dialog with Escape', async () => {
  await open(`${UI}/dialog/modal-confirmation.html`, 'Empty the recycle bin?');
  await key('Escape', await find('button', 'Cancel'));
  const s = await snapshot();
  assert.equal(count(s, 'dialog', 'Empty the recycle bin?'), 0, s);
});

ui('datepicker/default', 'pick the 15th of next month', async () => {
  await open(`${UI}/datepicker/default.html`, 'Date:');
  await click(await find('textbox'));
  await waitText('Next');
  const month = await check("() => document.querySelector('.ui-datepicker-month').textContent");
  // The widget's keyboard help: Page Down shows the next month.
  await key('PageDown');
  await waitGone(month);
  await click(await find('link', '15'));
  const s = await snapshot();
  const v = findAll(s, 'textbox')[0].value;
  const want = await check(`() => { const d = new Date(); d.setDate(1); d.setMonth(d.getMonth() + 1);
    return String(d.getMonth() + 1).padStart(2, '0') + '/15/' + d.getFullYear(); }`);
  assert.equal(v, want, s);
  assert.equal(await check("() => document.getElementById('datepicker').value"), want);
});

ui('datepicker/default', 'show the next month with the "Next" button, then pick a day', async () => {
  await open(`${UI}/datepicker/default.html`, 'Date:');
  await click(await find('textbox'));
  await waitText('Next');
  // Prev and Next are <a> without href that the widget made clickable.
  const month = await check("() => document.querySelector('.ui-datepicker-month').textContent");
  await click(await find('link', 'Next'));
  await waitGone(month);
  await click(await find('link', 'Prev'));
  await waitText(month);
  await click(await find('link', '3'));
  const want = await check(`() => { const d = new Date(); return String(d.getMonth() + 1).padStart(2, '0') + '/03/' + d.getFullYear(); }`);
  assert.equal(await check("() => document.getElementById('datepicker').value"), want);
});

ui('datepicker/default', 'type a date into the field; the calendar shows it', async () => {
  await open(`${UI}/datepicker/default.html`, 'Date:');
  // The widget reads the field on keyup: typed key by key, as a person types.
  await type(await find('textbox'), '03/15/2024', { slowly: true });
  assert.equal(await check("() => document.getElementById('datepicker').value"), '03/15/2024');
  // The widget reads typed dates: its calendar turns to March 2024, the 15th marked.
  assert.ok(await eventually(async () => (await check("() => document.querySelector('.ui-datepicker-month')?.textContent + ' ' + document.querySelector('.ui-datepicker-current-day')?.textContent")) === 'March 15'),
    'the calendar shows the 15th of March');
});

ui('sortable/default', 'drag item 1 below item 3', async () => {
  await open(`${UI}/sortable/default.html`, 'Item 1');
  const s = await snapshot();
  await drag(await ref(s, 'listitem', 'Item 1'), await ref(s, 'listitem', 'Item 3'));
  const order = await check("() => [...document.querySelectorAll('#sortable li')].map((li) => li.textContent.trim())");
  assert.notEqual(order[0], 'Item 1', `order: ${order}`);
  assert.ok(order.indexOf('Item 1') >= 1 && order.indexOf('Item 1') <= 3, `order: ${order}`);
  const after = await snapshot();
  assert.deepEqual(findAll(after, 'listitem').map((e) => e.value), order);
});

ui('sortable/connect-lists', 'move an item into the other list', async () => {
  await open(`${UI}/sortable/connect-lists.html`, 'Item 5');
  const s = await look(); // a target picked by position: a whole, current view
  const [first, second] = findAll(s, 'list');
  const inFirst = (e) => e.depth === first.depth + 1 && s.indexOf(e.line) < s.indexOf(second.line);
  const from = findAll(s, 'listitem').filter((e) => inFirst(e) && e.value === 'Item 2')[0];
  const onto = findAll(s, 'listitem').filter((e) => !inFirst(e) && e.value === 'Item 3')[0];
  await drag(from.ref, onto.ref);
  const lists = await check("() => ['#sortable1', '#sortable2'].map((l) => [...document.querySelectorAll(l + ' li')].map((li) => li.textContent.trim()))");
  assert.deepEqual(lists[0], ['Item 1', 'Item 3', 'Item 4', 'Item 5'], JSON.stringify(lists));
  assert.equal(lists[1].length, 6, JSON.stringify(lists));
  const after = await snapshot();
  assert.equal(findAll(after, 'listitem').length, 10, after);
});

ui('droppable/photo-manager', 'drag a photo to the trash', async () => {
  await open(`${UI}/droppable/photo-manager.html`, 'High Tatras 3');
  const s = await snapshot();
  await drag(await ref(s, 'img', 'Planning the ascent'), await ref(s, 'heading', 'Trash Trash'));
  assert.ok(await eventually(async () => (await check("() => document.querySelectorAll('#trash li').length")) === 1),
    'the photo is in the trash');
  assert.equal(await check("() => document.querySelector('#trash li img').alt"), 'Planning the ascent');
  assert.equal(await check("() => document.querySelectorAll('#gallery li').length"), 3);
});

ui('droppable/photo-manager', 'delete a photo with its trash link, then recycle it', async () => {
  await open(`${UI}/droppable/photo-manager.html`, 'High Tatras 2');
  await click(await find('link', 'Delete image', 1));
  assert.ok(await eventually(async () => (await check("() => document.querySelectorAll('#trash li').length")) === 1),
    'the photo is in the trash');
  assert.equal(await check("() => document.querySelector('#trash li img').alt"), 'The chalet at the Green mountain lake');
  // In the trash its link turns into "Recycle image".
  await waitText('High Tatras');
  await click(await find('link', 'Recycle image'));
  assert.ok(await eventually(async () => (await check("() => document.querySelectorAll('#gallery li').length")) === 4),
    'the photo is back in the gallery');
});

ui('dialog/default', 'close the dialog with its close button', async () => {
  await open(`${UI}/dialog/default.html`, 'Basic dialog');
  await click(await find('button', 'Close'));
  const s = await snapshot();
  assert.equal(count(s, 'dialog', 'Basic dialog'), 0, s);
});

ui('checkboxradio/product-selector', 'make a square with a shadow', async () => {
  await open(`${UI}/checkboxradio/product-selector.html`, 'Select a shape');
  const s = await snapshot();
  await click(await ref(s, 'radio', 'Square'));
  await click(await ref(s, 'checkbox', 'Shadow'));
  const after = await snapshot();
  assert.ok(element(after, 'radio', 'Square').states.includes('checked'), after);
  assert.ok(!element(after, 'radio', 'Circle').states.includes('checked'), after);
  assert.ok(element(after, 'checkbox', 'Shadow').states.includes('checked'), after);
  // "Shadow" sets the shape's colour from the chosen brand (the demo's own wiring).
  assert.deepEqual(await check("() => { const s = document.querySelector('.shape'); return [s.classList.contains('square'), s.classList.contains('circle'), s.style.color !== '']; }"), [true, false, true]);
});

ui('droppable/default', 'drop the draggable on the target', async () => {
  await open(`${UI}/droppable/default.html`, 'Drop here');
  const s = await snapshot();
  await drag(await ref(s, 'paragraph', 'Drag me to my target'), await ref(s, 'paragraph', 'Drop here'));
  const after = await snapshot();
  assert.equal(findAll(after, 'paragraph').filter((e) => e.value === 'Dropped!').length, 1, after);
  assert.equal(await check("() => document.getElementById('droppable').classList.contains('ui-state-highlight')"), true);
});

ui('checkboxradio/default', 'choose a location and two ratings', async () => {
  await open(`${UI}/checkboxradio/default.html`, 'Radio Group');
  let s = await snapshot();
  await click(await ref(s, 'radio', 'Paris'));
  await click(await ref(s, 'checkbox', '3 Star'));
  await click(await ref(s, 'checkbox', '4 Star'));
  s = await snapshot();
  assert.ok(element(s, 'radio', 'Paris').states.includes('checked'), s);
  assert.ok(!element(s, 'radio', 'New York').states.includes('checked'), s);
  assert.ok(element(s, 'checkbox', '3 Star').states.includes('checked'), s);
  assert.ok(element(s, 'checkbox', '4 Star').states.includes('checked'), s);
  assert.deepEqual(await check("() => [...document.querySelectorAll('input:checked')].map((i) => i.id)"), ['radio-2', 'checkbox-2', 'checkbox-3']);
  // The widget's own styling follows the input: the label shows it checked.
  assert.equal(await check("() => document.querySelector('label[for=radio-2]').classList.contains('ui-checkboxradio-checked')"), true);
});

ui('controlgroup/default', 'book two insured cars', async () => {
  await open(`${UI}/controlgroup/default.html`, 'Rental Car');
  let s = await snapshot();
  await click(await ref(s, 'checkbox', 'Insurance'));
  await type(await ref(s, 'spinbutton', '# of cars'), '2');
  await click(await ref(s, 'radio', 'Automatic'));
  s = await snapshot();
  assert.ok(element(s, 'checkbox', 'Insurance').states.includes('checked'), s);
  assert.ok(element(s, 'radio', 'Automatic').states.includes('checked'), s);
  assert.deepEqual(await check("() => [document.getElementById('insurance').checked, document.getElementById('horizontal-spinner').value, document.getElementById('transmission-automatic').checked]"), [true, '2', true]);
});

ui('tooltip/default', 'hover a link to read its tooltip', async () => {
  await open(`${UI}/tooltip/default.html`, 'Tooltips');
  await hover(await find('link', 'Tooltips'));
  await waitText("That's what this widget is");
  const s = await snapshot();
  assert.equal(count(s, 'tooltip', "That's what this widget is"), 1, s);
});

ui('tooltip/default', 'focus a field to read its tooltip', async () => {
  await open(`${UI}/tooltip/default.html`, 'Your age');
  await hover(await find('textbox', 'Your age:'));
  await waitText('We ask for your age only for statistical purposes.');
  const s = await snapshot();
  assert.equal(count(s, 'tooltip'), 1, s);
});

ui('selectable/default', 'select items 2 and 5 with Control-click', async () => {
  await open(`${UI}/selectable/default.html`, 'Item 1');
  const s = await snapshot();
  await click(await ref(s, 'listitem', 'Item 2'));
  await click(await ref(s, 'listitem', 'Item 5'), { modifiers: ['Control'] });
  assert.deepEqual(await check("() => [...document.querySelectorAll('#selectable .ui-selected')].map((li) => li.textContent)"), ['Item 2', 'Item 5']);
});

ui('progressbar/download', 'start a download and wait until it completes', async () => {
  await open(`${UI}/progressbar/download.html`, 'Start Download');
  await clickFound('button', 'Start Download');
  let s = await snapshot();
  assert.equal(count(s, 'dialog', 'File Download'), 1, s);
  assert.equal(count(s, 'progressbar'), 1, s);
  await waitText('Complete!', 20000);
  // The demo swaps the dialog's buttons just after the label says Complete!,
  // so a snapshot may catch the old ones: wait for Close, as a model would.
  await act('browser_wait_for', { target: 'role=button[name="Close"]', state: 'visible', timeout: 10000 });
  // Its progress timer can run once more at 100 % and build the buttons
  // again (jQuery UI fires "complete" on every refresh at the maximum), so
  // Close may be replaced after it showed: told STALE_REF, look again.
  await clickFound('button', 'Close');
  s = await snapshot();
  assert.equal(count(s, 'dialog', 'File Download'), 0, s);
});

// ------------------------------------------------------------------ Python docs (python3-doc, Sphinx)

const py = (page, title, fn) => task('python3-doc', `python-docs/${page}`, title, fn);

py('index', 'search the docs and open a result', async () => {
  await open(`${PY}/index.html`, 'Welcome!');
  await type(await find('textbox', 'Quick search'), 'dataclass', { submit: true });
  await act('browser_wait_for', { url: '**/search.html?q=dataclass*', timeout: 10000 });
  await waitText('Search finished', 20000);
  await click(await find('link', /^dataclasses — Data Classes/));
  await act('browser_wait_for', { url: '**/library/dataclasses.html*', timeout: 10000 });
  const s = await snapshot();
  assert.equal(count(s, 'heading', /^dataclasses — Data Classes/), 1, s);
});

py('library/index', 'follow a link and come back', async () => {
  await open(`${PY}/library/index.html`, 'The Python Standard Library');
  await click(await find('link', /^Built-in Types/));
  let s = await snapshot();
  assert.equal(count(s, 'heading', 'Built-in Types'), 1, s.slice(0, 2000));
  assert.match(await check('() => location.pathname'), /\/library\/stdtypes\.html$/);
  await act('browser_navigate_back', {});
  s = await snapshot();
  assert.equal(count(s, 'heading', 'The Python Standard Library'), 1, s.slice(0, 2000));
});

py('py-modindex', 'jump to a module from the module index', async () => {
  await open(`${PY}/py-modindex.html`, 'Python Module Index');
  await click(await find('link', 'j'));
  assert.equal(await check('() => location.hash'), '#cap-j');
  await click(await find('link', 'json'));
  const s = await snapshot();
  assert.equal(count(s, 'heading', /^json — JSON encoder and decoder/), 1, s);
});

// ------------------------------------------------------------------ pdf.js viewer (libjs-pdf)

const pdf = (title, fn) => task('libjs-pdf + shared-mime-info', 'pdf.js/viewer', title, fn);
const pdfPage = () => check('() => PDFViewerApplication.page');
// A fresh viewer per task: the same URL again would only be a fragment change.
async function openPdf() {
  ok(await call('browser_navigate', { url: 'about:blank' }), 'navigate about:blank');
  await open(PDF, 'of 17');
  // The page count shows before the viewer applies #page=1 to a rendered
  // page; a page number typed before that is undone by it.
  assert.ok(await eventually(async () => check("() => !!document.querySelector('#viewer .page[data-loaded=\"true\"]')")),
    'the first page renders');
  // Once every page is loaded, a viewer whose pages differ in size applies
  // #page=1 once more (setInitialView after pagesPromise); under CPU load that
  // came after the typed page number and undid it.
  assert.equal(await check(`async () => {
    await PDFViewerApplication.pdfViewer.pagesPromise;
    await new Promise((r) => setTimeout(r, 0));
    return PDFViewerApplication.initialBookmark;
  }`), null, 'the viewer applied its initial view');
}

pdf('go to the next page', async () => {
  await openPdf();
  await click(await find('button', 'Next'));
  assert.ok(await eventually(async () => (await pdfPage()) === 2), `page ${await pdfPage()}, not 2`);
  const s = await snapshot();
  assert.equal(element(s, 'spinbutton', 'Page').value, '2', s);
  assert.ok(!element(s, 'button', 'Previous').states.includes('disabled'), s);
});

pdf('type a page number', async () => {
  await openPdf();
  // While pages render, the viewer may write the current page back into the
  // box; tabvisor then says what the box kept, and a model types again, as
  // here.
  const target = await find('spinbutton', 'Page');
  const r = await call('browser_type', { target, text: '5', clear: true, submit: true });
  if (A.tv && /The page kept "\d*" of "5"/.test(r.text)) await type(target, '5', { clear: true, submit: true });
  assert.ok(await eventually(async () => (await pdfPage()) === 5), `page ${await pdfPage()}, not 5`);
});

pdf('zoom to 200% from the zoom box', async () => {
  await openPdf();
  await select(await find('combobox', 'Zoom'), ['200%']);
  assert.equal(await check('() => PDFViewerApplication.pdfViewer.currentScaleValue'), '2');
  const s = await snapshot();
  assert.ok(element(s, 'option', '200%').states.includes('selected'), s);
});

pdf('find a word in the document', async () => {
  await openPdf();
  await click(await find('button', 'Find'));
  await type(await find('textbox', 'Find'), 'glob', { submit: true });
  await act('browser_wait_for', { target: '.textLayer .highlight.selected', timeout: 10000 });
  assert.match(await check("() => document.querySelector('.textLayer .highlight.selected').textContent"), /^glob/i);
  assert.ok(await pdfPage() > 1, 'the viewer moved to the first match');
});

pdf('jump to a chapter from the outline', async () => {
  await openPdf();
  await waitText('3. Contributors'); // the outline loads after the first page
  await click(await find('link', '3. Contributors'));
  // The viewer scrolls to the chapter; the page box follows.
  assert.ok(await eventually(async () => (await pdfPage()) === 17), `page ${await pdfPage()}`);
  const s = await snapshot();
  assert.equal(element(s, 'spinbutton', 'Page').value, '17', s.slice(0, 3000));
});

pdf('close the sidebar', async () => {
  await openPdf();
  await click(await find('button', 'Toggle Sidebar'));
  const s = await snapshot();
  assert.ok(!element(s, 'button', 'Toggle Sidebar').states.includes('expanded'), s);
  assert.equal(await check("() => document.getElementById('outerContainer').classList.contains('sidebarOpen')"), false);
});

pdf('go to the last page from the tools menu', async () => {
  await openPdf();
  await click(await find('button', 'Tools'));
  await click(await find('button', 'Go to Last Page'));
  assert.ok(await eventually(async () => (await pdfPage()) === 17), `page ${await pdfPage()}, not 17`);
});

pdf('open another PDF with the Open button', async () => {
  // The file comes from the server's output dir, as tabvisor's
  // browser_file_upload wants (the peer takes an absolute path).
  const outDir = A.tv ? await sessionOutputDir(A.srv.client, A.sessionId) : A.scratch;
  copyFileSync('/usr/share/doc/libjs-pdf/examples/learning/helloworld.pdf', join(outDir, 'hello.pdf'));
  await openPdf();
  const r = await click(await find('button', 'Open'));
  if (A.tv) assert.equal(r.sc.modalState?.type, 'fileChooser', r.text);
  else assert.match(r.text, /File chooser/i);
  await act('browser_file_upload', { paths: [A.tv ? 'hello.pdf' : join(outDir, 'hello.pdf')] });
  assert.ok(await eventually(async () => (await check('() => PDFViewerApplication.pagesCount')) === 1),
    'the viewer shows the uploaded one-page PDF');
  assert.match(await check('() => PDFViewerApplication._title || document.title'), /hello/i);
});

// ------------------------------------------------------------------ jstree (libjs-jquery-jstree)

const tree = (title, fn) => task('libjs-jquery-jstree', 'jstree/basic', title, fn);

tree('select another node', async () => {
  await open(JSTREE, 'HTML demo');
  await click(await find('treeitem', 'Child node 2'));
  const s = await snapshot();
  assert.ok(findAll(s, 'treeitem', 'Child node 2')[0].states.includes('selected'), s);
  assert.ok(!findAll(s, 'treeitem', 'Child node 1')[0].states.includes('selected'), s);
});

tree('expand a node with the keyboard', async () => {
  await open(JSTREE, 'Inline data demo');
  const root = await find('treeitem', 'Root node', 1);
  await click(root);
  await key('ArrowRight');
  const s = await snapshot();
  const inline = findAll(s, 'treeitem', 'Root node')[1];
  assert.ok(inline.states.includes('expanded'), s);
  assert.ok(count(s, 'treeitem', 'Child node 2') >= 2, s);
});

tree('select a node from the page\'s button', async () => {
  await open(JSTREE, 'Interaction and events demo');
  const r = await click(await find('button', 'select node with id 1'));
  // The demo announces the selection with alert(), which the response shows.
  assert.match(r.text, /alert"? dialog with message "The selected node is: Child node 1"/);
  await act('browser_handle_dialog', { accept: true });
  assert.deepEqual(await check("() => $('#evts').jstree('get_selected')"), ['1']);
});

// ------------------------------------------------------------------ dragula (npm), its demo page

// The demo's items are plain <div>s that the page made draggable (a grab
// cursor, mouse handlers): they have no role, so they show as `generic`
// lines with refs (issue 20, defects 1 and 4).
const dragula = (title, fn) => task('npm dragula', 'dragula/demo', title, fn);
const DRAGULA = '/npm/dragula/index.html';
const containerTexts = (id) => check(`() => [...document.getElementById('${id}').children].map((e) => e.textContent.trim())`);

dragula('move an item to the other container', async () => {
  await open(DRAGULA, 'Move stuff between these two containers');
  const s = await snapshot();
  const item = 'You can move these elements between these two containers';
  const r = await drag(await ref(s, 'generic', item), await ref(s, 'generic', /^This is the default use case/));
  if (A.tv) {
    assert.doesNotMatch(r.text, /Warning/, r.text);
    assert.equal(r.sc.changed, true);
  }
  assert.ok(!(await containerTexts('left-defaults')).includes(item));
  assert.ok((await containerTexts('right-defaults')).includes(item));
});

dragula('move an item by the link inside it', async () => {
  await open(DRAGULA, 'Move stuff between these two containers');
  const s = await snapshot();
  await drag(await ref(s, 'link', 'links'), await ref(s, 'link', 'documentation on GitHub!'));
  const right = await containerTexts('right-defaults');
  assert.ok(right.some((t) => t.startsWith('Anything can be moved around')), right.join(' | '));
});

dragula('sort an item within its container', async () => {
  await open(DRAGULA, 'Move stuff between these two containers');
  const s = await snapshot();
  const before = await containerTexts('right-defaults');
  await drag(await ref(s, 'generic', before[0]), await ref(s, 'generic', before[2]));
  const after = await containerTexts('right-defaults');
  assert.notEqual(after[0], before[0], after.join(' | '));
  assert.deepEqual([...after].sort(), [...before].sort());
});

dragula('a drag that moves nothing says so', async () => {
  await open(DRAGULA, 'Move stuff between these two containers');
  const s = await snapshot();
  const r = await drag(await ref(s, 'heading', /^dragula/), await ref(s, 'heading', /^Drag and drop so simple/));
  if (!A.tv) return; // the peer has no such warning: nothing to check
  assert.match(r.text, /Warning: the drag changed nothing on the page/);
  assert.equal(r.sc.changed, false);
});

// ------------------------------------------------------------------ Selectric (npm), its demo page

// Selectric hides each <select> in a 0x0 box and draws its own list, which
// opens when the hidden select gets focus (issue 20, defect 3).
const selectric = (title, fn) => task('npm selectric', 'selectric/demo', title, fn);
const SELECTRIC = '/npm/selectric/public/demo.html';
const openLists = () => check("() => document.querySelectorAll('.selectric-open').length");

selectric('choose a value through the hidden select; no list is left open', async () => {
  await open(SELECTRIC, 'Get selected option value');
  const s = await look(); // a target picked by position: a whole, current view
  const combo = findAll(s, 'combobox').find((e) => s.indexOf(e.line) > s.indexOf('Get selected option value'));
  await select(combo.ref, ['Mango']);
  assert.equal(await openLists(), 0);
  assert.equal(await check("() => document.getElementById('get_value').value"), 'mango');
  assert.equal(await check("() => document.querySelector('#select_value strong').textContent"), 'mango');
  // The next click reaches its target: nothing covers the form.
  await click(await find('heading', 'Set value'));
});

selectric('choose a value in the custom list, as a user does', async () => {
  await open(SELECTRIC, 'Get selected option value');
  let s = await snapshot();
  // The widget is a generic line (a pointer cursor of its own), the one
  // under the heading, holding the hidden select and the shown choice.
  const after = findAll(s, 'generic').filter((e) => s.indexOf(e.line) > s.indexOf('Get selected option value'));
  await click((after.find((e) => e.states.includes('cursor=pointer')) || after[0]).ref);
  assert.equal(await openLists(), 1);
  s = await snapshot();
  await click(await ref(s, 'listitem', 'Watermelon'));
  assert.equal(await openLists(), 0);
  assert.equal(await check("() => document.querySelector('#select_value strong').textContent"), 'watermelon');
});

// ------------------------------------------------------------------ Spectre.css docs (libjs-spectre-docs)

// A CSS-only framework: its accordions toggle a `hidden` checkbox or radio
// through a <label> with a hand cursor, its modals open on :target.
const SPECTRE = '/usr/share/doc/libjs-spectre-docs/docs';
const spectre = (page, title, fn) => task('libjs-spectre-docs', `spectre/${page}`, title, fn);
const checked = (id) => check(`() => document.getElementById('${id}').checked`);

spectre('components/accordions', 'open a section of the docs menu', async () => {
  await open(`${SPECTRE}/components/accordions.html`, 'Accordions are used to toggle sections of content.');
  assert.equal(await checked('accordion-experimentals'), false);
  await click(await find('generic', 'Experimentals'));
  assert.equal(await checked('accordion-experimentals'), true);
  // The section's links now have room to show.
  assert.ok(await eventually(async () => (await check("() => document.querySelector('a[href$=\"autocomplete.html\"]').getBoundingClientRect().height")) > 0));
});

spectre('components/accordions', 'switch the mutually exclusive accordion to Components', async () => {
  await open(`${SPECTRE}/components/accordions.html`, 'Accordions are used to toggle sections of content.');
  const s = await look(); // a target picked by position: a whole, current view
  // The example comes after the page's heading; the docs menu has its own "Components".
  const headers = findAll(s, 'generic', 'Components').filter((e) => s.indexOf(e.line) > s.indexOf('Accordions are used'));
  await click(headers[0].ref);
  assert.equal(await checked('accordion-3'), true);
  assert.equal(await checked('accordion-1'), false);
});

spectre('components/modals', 'open the modal and close it', async () => {
  await open(`${SPECTRE}/components/modals.html`, 'Modals are flexible dialog prompts.');
  const shown = () => check("() => document.getElementById('example-modal-1').checkVisibility()");
  assert.equal(await shown(), false);
  await clickFound('link', 'Open Modal');
  assert.equal(await shown(), true);
  const s = await snapshot();
  assert.match(s, /Modal title/);
  // The footer's Close link; the overlay and the header's × are named Close too.
  const close = findAll(s, 'link', 'Close').filter((e) => s.indexOf(e.line) > s.indexOf('Modal title'));
  await click(close[close.length - 1].ref);
  assert.equal(await shown(), false);
});

spectre('elements/forms', 'fill the form controls a CSS framework draws', async () => {
  await open(`${SPECTRE}/elements/forms.html`, 'Form checkbox');
  const s = await snapshot();
  await type(await ref(s, 'textbox', 'Name'), 'Grace Hopper');
  await type(await ref(s, 'textbox', 'Message'), 'Compilers');
  await click(await ref(s, 'radio', 'Female'));
  await click(await ref(s, 'checkbox', 'Remember me'));
  await click(await ref(s, 'checkbox', 'Send me emails with news and tips'));
  await select(findAll(s, 'combobox')[0].ref, ['Skype']);
  assert.deepEqual(await check(`() => [document.getElementById('input-example-1').value,
    document.getElementById('input-example-3').value,
    document.querySelectorAll('input[name="gender"]')[1].checked,
    document.querySelector('.form-checkbox input').checked,
    document.querySelector('.form-switch input').checked,
    document.querySelector('select.form-select').value]`),
  ['Grace Hopper', 'Compilers', true, true, true, 'Skype']);
});

// ------------------------------------------------------------------ pell (npm), its demo page

// A contenteditable editor with a toolbar of buttons.
const pell = (title, fn) => task('npm pell', 'pell/demo', title, fn);
const PELL = '/npm/pell/demo.html';
const pellHtml = () => check("() => document.getElementById('html-output').textContent");

pell('write a paragraph', async () => {
  await open(PELL, 'Text output:');
  const s = await snapshot();
  const editor = findAll(s, 'textbox')[0];
  await type(editor.ref, 'Hello from an agent');
  assert.ok(await eventually(async () => /Hello from an agent/.test(await pellHtml())), await pellHtml());
});

pell('write in bold with the toolbar', async () => {
  await open(PELL, 'Text output:');
  const s = await snapshot();
  const editor = findAll(s, 'textbox')[0];
  await click(editor.ref);
  await click(await ref(s, 'button', 'B'));
  await type(editor.ref, 'Strong words', { clear: false });
  assert.ok(await eventually(async () => /<b>Strong words<\/b>/.test(await pellHtml())), await pellHtml());
});

// ------------------------------------------------------------------ Doxygen (lmdb-doc)

// A documentation generator: its search box answers as you type (key
// events), in an iframe under the box.
const LMDB = '/usr/share/doc/lmdb-doc/html';
const doxygen = (page, title, fn) => task('lmdb-doc', `doxygen/${page}`, title, fn);

doxygen('index', 'search for a function and open it from the results frame', async () => {
  await open(`${LMDB}/index.html`, 'Lightning Memory-Mapped Database Manager');
  const s = await snapshot();
  await type(findAll(s, 'textbox')[0].ref, 'mdb_env_open', { slowly: true });
  await waitText('mdb_env_open2');
  // mdb_env_open has two entries (a list to unfold); mdb_env_open2 one.
  await clickFound('link', 'mdb_env_open2');
  assert.ok(await eventually(async () => /mdb_env_open2|#.+/.test(await check('() => location.hash'))), 'the function\'s anchor');
  assert.doesNotMatch(await check('() => location.pathname'), /index\.html$/);
});

doxygen('index', 'open a structure from the Data Structures list', async () => {
  await open(`${LMDB}/index.html`, 'Lightning Memory-Mapped Database Manager');
  // The menu item opens its submenu, whose first item is the list.
  await clickFound('link', 'Data Structures');
  await clickFound('link', 'Data Structures');
  await waitText('Here are the data structures with brief descriptions');
  await clickFound('link', 'MDB_stat');
  assert.ok(await eventually(async () => (await check('() => location.hash')) === '#structMDB__stat'), 'the structure\'s anchor');
  assert.match(await check('() => location.pathname'), /group__mdb__copy\.html$/);
});

// ------------------------------------------------------------------ MediumEditor (npm), its demo page

// A contenteditable editor whose toolbar shows up over a text selection.
const medium = (title, fn) => task('npm medium-editor', 'medium-editor/demo', title, fn);
const MEDIUM = '/npm/medium-editor/demo/index.html';

medium('select all the text and make it bold from the toolbar', async () => {
  await open(MEDIUM, 'My father');
  let s = await snapshot();
  // The editor's text is there to read, paragraphs and all.
  assert.match(s, /- textbox \[ref=\w+\]:\n\s+- paragraph/);
  await click(await ref(s, 'paragraph', /^I give Pirrip/));
  await key('Control+A');
  s = await snapshot();
  await click(await ref(s, 'button', 'bold'));
  assert.ok(await eventually(async () => check("() => document.querySelectorAll('.editable b').length > 0")), 'bold text in the editor');
});

medium('add a sentence at the end of a paragraph', async () => {
  await open(MEDIUM, 'My father');
  const s = await snapshot();
  await click(await ref(s, 'paragraph', /^Ours was the marsh country/));
  await key('Control+End');
  await type(findAll(s, 'textbox')[0].ref, ' The end.', { clear: false });
  assert.match(await check("() => document.querySelector('.editable').textContent.trim()"), /The end\.$/);
});

// ------------------------------------------------------------------ CKEditor 4 (npm), its sample page

// A rich text editor whose editing area is a document in an iframe.
const ckeditor = (title, fn) => task('npm ckeditor4', 'ckeditor4/samples', title, fn);
const CKEDITOR = '/npm/ckeditor4/samples/index.html';
const ckData = () => check('() => CKEDITOR.instances.editor.getData()');
// The editor builds its framed document after the page loads. A wait for
// text inside a frame is not something every server does (the peer's
// browser_wait_for looks at the top document only), so the agent looks again
// until the editor's text shows, as a model would; the snapshot it acts on.
async function editorSnapshot() {
  let s;
  assert.ok(await eventually(async () => /Hello world!/.test(s = await snapshot()), 10000), `the editor never showed its text:\n${s}`);
  return s;
}

ckeditor('replace the text in the framed editor', async () => {
  await open(CKEDITOR, 'Congratulations!');
  const s = await editorSnapshot();
  await type(await ref(s, 'textbox', 'Editor, editor'), 'Written through the frame');
  assert.ok(await eventually(async () => /Written through the frame/.test(await ckData())), await ckData());
  assert.doesNotMatch(await ckData(), /Hello world!/);
});

ckeditor('write in bold with the toolbar', async () => {
  await open(CKEDITOR, 'Congratulations!');
  const s = await editorSnapshot();
  await click(await ref(s, 'paragraph', /^I'm an instance of/));
  await key('End');
  await click(await ref(s, 'button', 'Bold'));
  await type(await ref(s, 'textbox', 'Editor, editor'), ' Bold words', { clear: false });
  assert.ok(await eventually(async () => /<strong>\s*Bold words<\/strong>/.test(await ckData())), await ckData());
});

// ------------------------------------------------------------------ held-out tasks
//
// Written after the lean views' budgets were set (issue 21) and never used to
// tune them: bench/tokens.mjs reports these pages apart ("held out") to show
// the byte counts carry over to pages the numbers were not fitted on. The
// first ten came with the budgets' last change; the web components and native
// inputs below were added in the next stop, before their bytes were measured.
corpus = 'held out';

ui('tabs/collapsible', 'close the open tab\'s panel by clicking its tab', async () => {
  await open(`${UI}/tabs/collapsible.html`, 'Nunc tincidunt');
  await click(await find('tab', 'Nunc tincidunt'));
  const s = await snapshot();
  assert.equal(count(s, 'tabpanel', 'Nunc tincidunt'), 0, s);
  assert.equal(await check("() => document.getElementById('tabs-1').checkVisibility()"), false);
});

ui('tabs/vertical', 'open the third tab', async () => {
  await open(`${UI}/tabs/vertical.html`, 'Nunc tincidunt');
  await click(await find('tab', 'Aenean lacinia'));
  const s = await snapshot();
  assert.ok(element(s, 'tab', 'Aenean lacinia').states.includes('selected'), s);
});

ui('autocomplete/categories', 'pick a suggestion from its category', async () => {
  await open(`${UI}/autocomplete/categories.html`, 'A categorized search result');
  await type(await find('textbox', 'Search:'), 'and');
  await waitText('anders andersson');
  // Each suggestion is labelled with its category ("People : anders andersson").
  await click(await find('listitem', /anders andersson$/));
  assert.equal(await check("() => document.getElementById('search').value"), 'anders andersson');
});

ui('dialog/modal-message', 'acknowledge the message with Ok', async () => {
  await open(`${UI}/dialog/modal-message.html`, 'Download complete');
  await click(await find('button', 'Ok'));
  assert.equal(await check("() => document.getElementById('dialog-message').checkVisibility()"), false);
});

ui('checkboxradio/radiogroup', 'choose London', async () => {
  await open(`${UI}/checkboxradio/radiogroup.html`, 'Select a Location');
  await click(await find('radio', 'London'));
  assert.equal(await check("() => document.getElementById('radio-3').checked"), true);
});

py('tutorial/index', 'open the chapter on classes', async () => {
  await open(`${PY}/tutorial/index.html`, 'The Python Tutorial');
  await click(await find('link', '9. Classes'));
  await waitText('Classes provide a means of bundling data and functionality together');
  assert.match(await check('() => location.pathname'), /\/tutorial\/classes\.html$/);
});

py('library/functions', 'jump to len() from the table of built-ins', async () => {
  await open(`${PY}/library/functions.html`, 'Built-in Functions');
  await click(await find('link', 'len()'));
  assert.equal(await check('() => location.hash'), '#len');
});

doxygen('modules', 'open the LMDB API module', async () => {
  await open(`${LMDB}/modules.html`, 'Here is a list of all modules');
  await click(await find('link', 'LMDB API'));
  assert.ok(await eventually(async () => /group__mdb\.html$/.test(await check('() => location.pathname'))), 'the module page');
});

doxygen('functions', 'open a field\'s structure from the Data Fields index', async () => {
  await open(`${LMDB}/functions.html`, 'Here is a list of all documented struct and union fields');
  await click(await find('link', 'mdb_copy'));
  assert.match(await check('() => location.pathname'), /group__internal\.html$/);
});

spectre('components/modals', 'close the modal with its close button', async () => {
  await open(`${SPECTRE}/components/modals.html`, 'Modals are flexible dialog prompts.');
  await clickFound('link', 'Open Modal');
  const shown = () => check("() => document.getElementById('example-modal-1').checkVisibility()");
  assert.ok(await eventually(async () => (await shown()) === true), 'the modal opens');
  const s = await look();
  // The open modal's own close control, after its title.
  const close = findAll(s, 'link', 'Close').find((e) => s.indexOf(e.line) > s.indexOf('Modal title'));
  assert.ok(close, s);
  await click(close.ref);
  assert.ok(await eventually(async () => (await shown()) === false), 'the modal closes');
});

// ------------------------------------------------------------------ web components (npm), their demo pages

// Custom elements by Zach Leatherman, each with the demo page it ships.
// <seven-minute-tabs> turns light-DOM links into ARIA tabs; <carou-scroll>
// renders its slides through a shadow root's <slot> and drives buttons and
// an <output> outside it.
const tabsWc = (title, fn) => task('npm @zachleat/seven-minute-tabs', 'seven-minute-tabs/demo', title, fn);
const TABS_WC = '/npm/@zachleat/seven-minute-tabs/demo.html';
const shown = (id) => check(`() => !document.getElementById('${id}').hidden`);

tabsWc('open the second tab of the first tab set', async () => {
  await open(TABS_WC, 'First tab content');
  await click(await find('tab', 'Second tab'));
  assert.deepEqual([await shown('first-tab'), await shown('second-tab')], [false, true]);
  // The other sets on the page keep their first tab.
  assert.equal(await shown('second-tab-b1'), false);
});

tabsWc('a synced tab set follows its twin', async () => {
  await open(TABS_WC, 'First tab content');
  const s = await look(); // the second set's "Third tab": picked by position
  await click(await ref(s, 'tab', 'Third tab', 1));
  assert.deepEqual([await shown('third-tab-b1'), await shown('third-tab-b2')], [true, true]);
  assert.equal(await shown('third-tab-b3'), false); // a separate persist group
});

tabsWc('jump to the last tab with the End key', async () => {
  await open(TABS_WC, 'First tab content');
  await key('End', await find('tab', 'First tab'));
  assert.equal(await shown('third-tab'), true);
  assert.equal(await check("() => document.activeElement.getAttribute('href')"), '#third-tab');
});

const carousel = (title, fn) => task('npm @zachleat/carouscroll', 'carouscroll/demo', title, fn);
const CAROUSEL = '/npm/@zachleat/carouscroll/demo.html';
const slideOutput = (id) => check(`() => document.querySelector('[data-carousel-output="${id}"]').textContent`);

carousel('move two slides on with the buttons beside the custom output', async () => {
  await open(CAROUSEL, 'Show Current Slide Output');
  await click(await find('button', '다음의'));
  await click(await find('button', '다음의'));
  assert.ok(await eventually(async () => (await slideOutput('demo-announcecustom')) === '슬라이드 3/10'), await slideOutput('demo-announcecustom'));
  // The "previous" button the component disabled on the first slide is enabled now.
  assert.equal(await check("() => document.querySelector('[data-carousel-previous=\"demo-announcecustom\"]').disabled"), false);
});

// ------------------------------------------------------------------ native date, colour and range inputs (libjs-spectre-docs)

const dateValue = () => check("() => document.getElementById('input-example-14').value");

spectre('elements/forms', 'set the date of the horizontal form', async () => {
  await open(`${SPECTRE}/elements/forms.html`, 'Form checkbox');
  await type(await find('textbox', 'Date'), '2024-02-29');
  assert.equal(await dateValue(), '2024-02-29');
  assert.equal(await check("() => document.getElementById('input-example-14').valueAsDate.toISOString().slice(0, 10)"), '2024-02-29');
});

// A colour input is a button to the accessibility tree; typing a colour sets it.
spectre('elements/forms', 'set the colour of the horizontal form', async () => {
  await open(`${SPECTRE}/elements/forms.html`, 'Form checkbox');
  await type(await find('button', 'Color'), '#ff8800');
  assert.equal(await check("() => document.getElementById('input-example-15').value"), '#ff8800');
});

spectre('elements/forms', 'a date in another format is refused, and the date stays', async () => {
  await open(`${SPECTRE}/elements/forms.html`, 'Form checkbox');
  const r = await call('browser_type', { target: await find('textbox', 'Date'), text: '29/02/2024' });
  assert.equal(r.isError, true, `a date in the wrong format should be refused: ${r.text}`);
  assert.match(r.text, /yyyy-mm-dd/i, 'the error names the format the input takes');
  assert.equal(await dateValue(), '2016-12-31');
});

spectre('experimentals/sliders', 'move the slider to 80', async () => {
  await open(`${SPECTRE}/experimentals/sliders.html`, 'The Sliders are for selecting values from ranges.');
  const s = await look(); // the page's sliders have no names: the first one, by position
  await type(await ref(s, 'slider', undefined, 0), '80');
  // The page copies the value into an attribute on `input`, for its tooltip.
  assert.deepEqual(await check("() => { const r = document.querySelector('input.slider'); return [r.value, r.getAttribute('value')]; }"), ['80', '80']);
});

// ------------------------------------------------------------------ held out, third set
//
// Added in stop 30, after the lean view's quiet lines (snapquiet.c) and its
// 1,200-character page budget were set, and measured once, as written: pages
// none of the other tasks open. bench/tokens.mjs reports them apart.
corpus = 'held out, new';

ui('accordion/custom-icons', 'open the second section', async () => {
  await open(`${UI}/accordion/custom-icons.html`, 'Section 1');
  await click(await find('tab', 'Section 2'));
  const s = await snapshot();
  assert.ok(element(s, 'tab', 'Section 2').states.includes('expanded'), s);
});

ui('dialog/animated', 'open the dialog with its button, then close it', async () => {
  await open(`${UI}/dialog/animated.html`, 'Open Dialog');
  const shown = () => check("() => document.getElementById('dialog').checkVisibility()");
  await clickFound('button', 'Open Dialog');
  assert.ok(await eventually(async () => (await shown()) === true), 'the dialog opens');
  await clickFound('button', 'Close');
  assert.ok(await eventually(async () => (await shown()) === false), 'the dialog closes');
});

ui('tabs/mouseover', 'open the second tab by hovering it', async () => {
  await open(`${UI}/tabs/mouseover.html`, 'Nunc tincidunt');
  await hover(await find('tab', 'Proin dolor'));
  const s = await snapshot();
  assert.ok(element(s, 'tab', 'Proin dolor').states.includes('selected'), s);
});

py('tutorial/controlflow', 'go on to the next chapter', async () => {
  await open(`${PY}/tutorial/controlflow.html`, 'statement just introduced');
  await click(await find('link', 'next'));
  assert.ok(await eventually(async () => /\/tutorial\/datastructures\.html$/.test(await check('() => location.pathname'))),
    'the next chapter');
});

py('library/string', 'jump to the format string syntax', async () => {
  await open(`${PY}/library/string.html`, 'The constants defined in this module are');
  // The text's link and the sidebar's name the section by its two anchors.
  await click(await find('link', 'Format String Syntax'));
  assert.match(await check('() => location.hash'), /^#(formatstrings|format-string-syntax)$/);
});

doxygen('annotated', 'open a structure from the Data Structures page', async () => {
  await open(`${LMDB}/annotated.html`, 'Here are the data structures with brief descriptions');
  await click(await find('link', 'MDB_env'));
  assert.ok(await eventually(async () => /group__internal\.html#structMDB__env$/.test(await check('() => location.pathname + location.hash'))),
    'the structure');
});

// ------------------------------------------------------------------ held out, issue 37
//
// A source the project never used before issue 37 (CodeMirror 5's own demos
// and manual, Debian's libjs-codemirror): a code editor typed into through
// its hidden textarea, its completion, search and bracket add-ons, and a
// long manual. Written once and measured as written: nothing in tabvisor
// was changed for them. bench/tokens.mjs reports them apart.
corpus = 'held out, issue 37';
const CM = '/usr/share/doc/libjs-codemirror';
const cm = (page, title, fn) => task('libjs-codemirror', `codemirror/${page}`, title, fn);
// Measured as written, the tasks that click the editor's textbox first
// failed on both servers: the textbox is CodeMirror's hidden textarea, and
// the editor's own lines cover it (tabvisor: ELEMENT_NOT_CLICKABLE, covered
// by <pre class="CodeMirror-line">; @playwright/mcp: the line intercepts
// pointer events). They ran as known bugs until tabvisor clicked such a
// proxy field through the editor that covers it (issue 37's fourth stop,
// snapshot.js proxyFieldPoint); then two showed their own mistakes: the
// bracket add-on closes a bracket on its key press, which a fill does not
// send (the task types it slowly now, key by key, as a user does), and the
// search dialog's field has no name, only the text "Search:" before it (the
// task takes the second textbox, the one the dialog opened).
const editorValue = () => check("() => document.querySelector('.CodeMirror').CodeMirror.getValue()");

cm('examples/closebrackets', 'type an opening bracket; the editor closes it', async () => {
  await open(`${CM}/examples/closebrackets.html`, 'Closebrackets Demo');
  const editor = await find('textbox');
  await click(editor);
  await key('Control+End');
  await type(editor, '\nfoo(', { clear: false, slowly: true });
  assert.match(await editorValue(), /\nfoo\(\)$/);
});

cm('examples/placeholder', 'type into the empty editor', async () => {
  await open(`${CM}/examples/placeholder.html`, 'Placeholder demo');
  const editor = await find('textbox');
  await type(editor, 'let x = 1;');
  assert.equal(await editorValue(), 'let x = 1;');
});

cm('examples/anywordhint', 'complete a word from the buffer', async () => {
  await open(`${CM}/examples/anywordhint.html`, 'Any Word Completion Demo');
  const editor = await find('textbox');
  await click(editor);
  await key('Control+End');
  await type(editor, '\nRAN', { clear: false });
  await key('Control+Space');
  assert.match(await editorValue(), /\nRANGE$/);
});

cm('examples/search', 'search the editor for a word', async () => {
  await open(`${CM}/examples/search.html`, 'Search/Replace Demo');
  await click(await find('textbox'));
  await key('Control+F');
  // The add-on's dialog: a search field at the top of the editor, named by
  // nothing (the text "Search:" before it); the editor's own is the first.
  const field = await find('textbox', undefined, 1);
  await type(field, 'indentWithTabs', { submit: true });
  assert.equal(await check("() => document.querySelector('.CodeMirror').CodeMirror.getSelection()"), 'indentWithTabs');
});

cm('html/manual', 'open the configuration section of the manual', async () => {
  await open(`${CM}/html/manual.html`, 'User manual and reference guide');
  await click(await find('link', 'Configuration'));
  assert.equal(await check('() => location.hash'), '#config');
});


// ------------------------------------------------------------------ held out, issue 37 (second round)
//
// Three more sources the project never used: json-editor's examples (forms
// built from a JSON schema, Debian's libjs-json-editor), Pikaday's examples
// (a date picker, node-pikaday) and markItUp!'s example (a toolbar over a
// textarea, libjs-jquery-markitup). Written once from the pages' markup and
// measured as written; the first run showed that json-editor's labels and
// Pikaday's selects name no field (on both servers), and the five tasks that
// looked for names were rewritten once to pick those fields by order, as a
// model reading the snapshot does; json-editor reads a field on its change
// event, which a browser fires when the field loses focus (as for a user),
// and the two tasks that checked the form while the field still had focus
// now leave it with Tab first. Nothing in tabvisor was changed for them.
corpus = 'held out, issue 37';
const JE = '/usr/share/doc/libjs-json-editor/examples';
const je = (page, title, fn) => task('libjs-json-editor', `json-editor/${page}`, title, fn);
const formValue = () => check('() => JSON.stringify(editor.getValue())');

je('basic', 'fill in a car: make, model and year', async () => {
  await open(`${JE}/basic.html`, 'Basic JSON Editor Example');
  // json-editor's labels name no field: the fields go by their order, under
  // the texts make, model, year.
  await select(await find('combobox'), ['BMW']);
  await type(await find('textbox'), 'M3');
  await select(await find('combobox', undefined, 1), ['2012']);
  const car = JSON.parse(await formValue());
  assert.deepEqual([car.make, car.model, car.year], ['BMW', 'M3', 2012]);
});

je('advanced', 'a name shorter than the schema allows makes the form not valid', async () => {
  // The form comes once its schemas have loaded (ajax): its title, People.
  await open(`${JE}/advanced.html`, 'People');
  // The person's first field, under the text name (labels name no field).
  await type(await find('textbox'), 'Al');
  await key('Tab');
  await waitText('not valid');
  assert.equal(JSON.parse(await formValue())[0].name, 'Al');
});

je('advanced', 'restore the default after an edit', async () => {
  await open(`${JE}/advanced.html`, 'People');
  await type(await find('textbox'), 'Jane Doe');
  await key('Tab');
  assert.equal(JSON.parse(await formValue())[0].name, 'Jane Doe');
  await click(await find('button', 'Restore to Default'));
  assert.equal(JSON.parse(await formValue())[0].name, 'John Smith');
});

const PK = '/usr/share/doc/node-pikaday/examples';
const pk = (page, title, fn) => task('node-pikaday', `pikaday/${page}`, title, fn);
const pickedDate = () => check("() => document.getElementById('datepicker').value");

pk('trigger', 'choose a date with the Choose Date button', async () => {
  await open(`${PK}/trigger.html`, 'custom trigger example');
  await click(await find('button', 'Choose Date'));
  // The calendar's month and year selects have no names: month, then year.
  await select(await find('combobox', undefined, 1), ['2015']);
  await select(await find('combobox'), ['March']);
  await click(await find('button', '14'));
  assert.match(await pickedDate(), /Mar 14 2015/);
});

pk('aria-label', 'open the calendar from the field and pick a day', async () => {
  await open(`${PK}/aria-label.html`, 'custom trigger example');
  await click(await find('textbox', /Custom label|Date/));
  await select(await find('combobox', undefined, 1), ['2012']);
  await select(await find('combobox'), ['July']);
  await click(await find('button', '4'));
  assert.match(await pickedDate(), /Jul 04 2012/);
});

const MK = '/usr/share/doc/libjs-jquery-markitup/examples/index.html';
const mk = (title, fn) => task('libjs-jquery-markitup', 'markitup/example', title, fn);
const markup = () => check("() => document.getElementById('markItUp').value");

mk('add bold tags at the end of the text with the toolbar', async () => {
  await open(MK, 'markItUp!');
  const area = await find('textbox');
  await click(area);
  await key('Control+End');
  await click(await find('link', 'Bold'));
  assert.match(await markup(), /<strong><\/strong>\s*$/);
});

mk('insert content from the link outside the editor', async () => {
  await open(MK, 'markItUp!');
  await click(await find('link', 'this link to insert content'));
  assert.match(await markup(), /<opening tag>New content<\/closing tag>/);
});

mk('remove the editor and bring it back', async () => {
  await open(MK, 'markItUp!');
  await click(await find('link', /remove markItUp!/));
  assert.equal(await check("() => document.querySelectorAll('.markItUpHeader').length"), 0);
  await click(await find('link', /get markItUp! back/));
  assert.equal(await check("() => document.querySelectorAll('.markItUpHeader').length"), 1);
});

// ------------------------------------------------------------------ held out, issue 37 (third round)
//
// Two more sources the project never used, from npm: GOV.UK's
// accessible-autocomplete examples (comboboxes with a list of options, and
// selects it enhances into them) and simple-datatables' demos (a data table
// with search, sorting, pages, per-column filters and inline editing).
// Added before the lean-view change of this round (a grid cell that only
// wraps a same-named button), written once from the pages' markup and
// measured as written, to judge that change on pages it was not fitted on.
corpus = 'held out, issue 37 (third round)';
const AA = '/npm/accessible-autocomplete/examples';
const aa = (page, title, fn) => task('npm accessible-autocomplete', `accessible-autocomplete/${page}`, title, fn);
const fieldValue = (id) => check(`() => document.getElementById('${id}').value`);

aa('form', 'name the last location visited and submit the form', async () => {
  await open(`${AA}/form.html`, 'Accessible Autocomplete form example');
  await type(await find('combobox', 'What was the last location you visited?'), 'Fran');
  await click(await find('option', 'France'));
  await click(await find('button', 'Submit your answer'));
  assert.ok(await eventually(async () => /last-location=country%3AFR/.test(await check('() => location.search'))), 'submitted');
});

aa('form', 'choose the passport location with the keyboard', async () => {
  await open(`${AA}/form.html`, 'Accessible Autocomplete form example');
  await type(await find('combobox', 'What is the location on your passport?'), 'Japa');
  await key('Enter');
  assert.equal(await check("() => document.getElementById('passport-location-select').value"), 'country:JP');
});

aa('index', 'pick a country in the first example', async () => {
  await open(`${AA}/index.html`, 'Accessible Autocomplete examples');
  await type(await find('combobox', 'Country'), 'Swe');
  await click(await find('option', 'Sweden'));
  assert.equal(await fieldValue('autocomplete-default'), 'Sweden');
});

aa('index', 'the autoselect example takes the first match on Enter', async () => {
  await open(`${AA}/index.html`, 'Accessible Autocomplete examples');
  // Every example's field is labelled Country: the fourth is autoselect's.
  await type(await find('combobox', 'Country', 3), 'Icel');
  await key('Enter');
  assert.equal(await fieldValue('autocomplete-autoselect'), 'Iceland');
});

const DT = '/npm/simple-datatables/docs/demos';
const dt = (page, title, fn) => task('npm simple-datatables', `simple-datatables/${page}`, title, fn);
const shownRows = () => check("() => [...document.querySelectorAll('#demo-table tbody tr')].map((r) => r.cells[0].textContent.trim())");

dt('1-simple', 'search the table for a name', async () => {
  await open(`${DT}/1-simple/index.html`, 'Unity Pugh');
  await type(await find('searchbox'), 'Pugh');
  assert.ok(await eventually(async () => (await shownRows()).every((n) => /Pugh/.test(n))), 'only the Pughs');
  assert.ok((await shownRows()).includes('Castor Pugh'));
});

dt('1-simple', 'sort by name', async () => {
  await open(`${DT}/1-simple/index.html`, 'Unity Pugh');
  await click(await find('button', 'Name'));
  const names = await shownRows();
  assert.deepEqual(names, [...names].sort((a, b) => a.localeCompare(b)));
  assert.notEqual(names[0], 'Unity Pugh');
});

dt('1-simple', 'go to the second page', async () => {
  await open(`${DT}/1-simple/index.html`, 'Unity Pugh');
  await click(await find('button', 'Page 2'));
  assert.ok(await eventually(async () => !(await shownRows()).includes('Unity Pugh')), 'another page');
  assert.equal(await check("() => document.querySelector('.datatable-pagination .datatable-active').textContent.trim()"), '2');
});

dt('1-simple', 'show fifteen rows a page', async () => {
  await open(`${DT}/1-simple/index.html`, 'Unity Pugh');
  await select(await find('combobox'), ['15']);
  assert.ok(await eventually(async () => (await shownRows()).length === 15), '15 rows');
});

dt('20-column-filters', 'filter the city column', async () => {
  await open(`${DT}/20-column-filters/index.html`, 'Unity Pugh');
  // The filters above the columns name no field: after the table's own
  // search box come Name, Ext., City.
  await type(await find('searchbox', undefined, 3), 'Curicó');
  assert.ok(await eventually(async () => (await shownRows()).length === 1), 'one row');
  assert.deepEqual(await shownRows(), ['Unity Pugh']);
});

dt('15-editing', 'rename a person by editing the cell', async () => {
  await open(`${DT}/15-editing/index.html`, 'Unity Pugh');
  await click(await find('cell', 'Unity Pugh'), { doubleClick: true });
  await type(await find('textbox', undefined), 'Unity Smith', { submit: true });
  assert.ok(await eventually(async () => (await shownRows())[0] === 'Unity Smith'), 'renamed');
});

// ------------------------------------------------------------------ held out, issue 37 (fourth round)
//
// Two more npm sources, added after the third round's changes (cells of a
// table edited on double-click keep refs, a long run of gone siblings is
// counted, empty message areas and a calendar cell that only wraps its day
// button leave the lean view) and kept out of them, to judge those changes
// on pages they were not fitted on: jsoneditor's examples (a JSON tree
// editor with a mode menu) and Awesomplete's page (inputs with suggestion
// lists). Written once from the pages' markup and measured as written.
corpus = 'held out, issue 37 (fourth round)';
const JSE = '/npm/jsoneditor/examples';
const jse = (page, title, fn) => task('npm jsoneditor', `jsoneditor/${page}`, title, fn);

jse('01_basic_usage', 'fill the editor with the page\'s Set JSON button', async () => {
  await open(`${JSE}/01_basic_usage.html`, 'Set JSON');
  await click(await find('button', 'Set JSON'));
  assert.equal(await check('() => editor.get().string'), 'Hello World');
});

jse('03_switch_mode', 'switch the editor to text mode', async () => {
  await open(`${JSE}/03_switch_mode.html`, 'Switch editor mode');
  await click(await find('button', /Switch editor mode|Tree/));
  await click(await find('button', /^Text/));
  assert.equal(await check('() => editor.getMode()'), 'text');
});

jse('03_switch_mode', 'collapse every field', async () => {
  await open(`${JSE}/03_switch_mode.html`, 'Switch editor mode');
  await click(await find('button', 'Collapse all fields'));
  assert.equal(await check('() => editor.node.expanded'), false);
});

const AWE = '/npm/awesomplete/index.html';
const awe = (title, fn) => task('npm awesomplete', 'awesomplete/index', title, fn);
const inputValue = (sel) => check(`() => document.querySelector('${sel}').value`);

awe('pick a language from the suggestions', async () => {
  await open(AWE, 'Awesomplete');
  await type(await find('combobox', /Pick a programming language/), 'Ja');
  await click(await find('option', 'JavaScript'));
  assert.equal(await inputValue('input.awesomplete[autofocus]'), 'JavaScript');
});

awe('complete an e-mail address', async () => {
  await open(AWE, 'Awesomplete');
  await type(await find('combobox', /Type an email/), 'ada@gm');
  await click(await find('option', 'ada@gmail.com'));
  assert.equal(await inputValue('#email input'), 'ada@gmail.com');
});

awe('add a tag to the comma-separated list', async () => {
  await open(AWE, 'Awesomplete');
  await type(await find('combobox', /Tags/), 'SV');
  await click(await find('option', 'SVG'));
  assert.match(await inputValue('input[data-multiple]'), /^SVG, $/);
});

// ------------------------------------------------------------------ held out, issue 37 (fifth round)
//
// Kept out of every change of this stop, to judge them: tablesort's demo (a
// table sorted by clicking its headers) and nice-select2's documentation
// (selects replaced by drawn lists, one searchable). Written once from the
// pages' markup and measured as written; the first runs showed the
// nice-select2 tasks' own mistakes on both servers (a drawn select shows a
// placeholder, the page's "try me!" or its own "Select an option", not its
// option, and its options are list items, every drawn select's list staying
// in the page while closed): those two were rewritten (the searchable one
// three times, a mistake at a time); tabvisor was not changed for them.
corpus = 'held out, issue 37 (fifth round)';
const TS = '/npm/tablesort/_site/demo/index.html';
const ts = (title, fn) => task('npm tablesort', 'tablesort/demo', title, fn);
const sortColumn = (i) => check(`() => [...document.querySelectorAll('#sort tbody tr')].map((r) => r.cells[${i}].textContent.trim())`);

ts('sort the groceries by price', async () => {
  await open(TS, 'Gonzo the Great');
  await click(await find('columnheader', 'Price'));
  const prices = (await sortColumn(4)).map((p) => Number(p.replace(/[^0-9.]/g, '')));
  assert.deepEqual(prices, [...prices].sort((a, b) => a - b));
});

ts('sort by name, then the other way', async () => {
  await open(TS, 'Gonzo the Great');
  await click(await find('columnheader', 'Name'));
  await click(await find('columnheader', 'Name'));
  const names = await sortColumn(1);
  assert.deepEqual(names, [...names].sort((a, b) => b.localeCompare(a)));
});

const NS = '/npm/nice-select2/docs/index.html';
const ns = (title, fn) => task('npm nice-select2', 'nice-select2/docs', title, fn);

ns('choose Potato in the drawn select', async () => {
  await open(NS, 'Nice Select 2');
  // The drawn select shows the page's placeholder, "try me!"; its options
  // are list items.
  await click(await find('generic', /^try me!/));
  await click(await find('listitem', 'Potato'));
  assert.equal(await check("() => document.querySelector('select[name=nice]').value"), '4');
});

ns('search the searchable select and choose Potato', async () => {
  await open(NS, 'Nice Select 2');
  // The searchable drawn select shows nice-select2's own placeholder, then
  // the search field it opens.
  await click(await find('generic', /^Select an option/));
  await type(await find('textbox', 'search'), 'Pot');
  // Every drawn select keeps its (hidden) list in the page: the searchable
  // one's is the third, after those of the two selects above it.
  await click(await find('listitem', 'Potato', 2));
  assert.equal(await check("() => document.getElementById('searchable-select').value"), '4');
});
