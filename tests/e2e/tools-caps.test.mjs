// The tools of the optional groups (--caps vision, pdf, testing, devtools)
// and browser_emulate_media (core), on pages this test serves on 127.0.0.1,
// through the official SDK client; each with its errors, and each group
// absent and refused without its --caps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { startServer, call, text, refOf, tabvisorBin, sessionOutputDir, onFirefox } from './lib.mjs';

// On Firefox (e2e.tools-caps.firefox): these answer NOT_SUPPORTED there, as
// e2e.tools-data.firefox checks (docs/firefox.md, "What differs from Chromium").
const noMediaOnFirefox = onFirefox && 'no media emulation in WebDriver BiDi (NOT_SUPPORTED)';
const noCdpOnFirefox = onFirefox && 'Firefox does not speak CDP (NOT_SUPPORTED)';

// path -> HTML of the pages the tests open.
const PAGES = {
  '/media.html': `<title>Media</title><style>
      body { color: black } @media (prefers-color-scheme: dark) { body { color: white } }
    </style><p id="p">media</p>`,
  '/mouse.html': `<title>Mouse</title><style>body { margin: 0; height: 3000px }
      #b { position: absolute; left: 200px; top: 100px; width: 120px; height: 40px }
      #pad { position: absolute; left: 400px; top: 300px; width: 300px; height: 200px; background: #eee }</style>
    <button id="b" onclick="this.textContent = 'hit ' + (++window.hits)">Press</button>
    <button id="al" style="position: absolute; left: 10px; top: 600px" onclick="alert('stop')">Alert</button>
    <div id="pad"></div>
    <script>window.hits = 0; window.log = [];
      for (const t of ['mousedown', 'mouseup', 'mousemove', 'dblclick', 'contextmenu'])
        document.getElementById('pad').addEventListener(t, (e) => {
          if (t !== 'mousemove' || e.buttons) window.log.push(t + ':' + e.button + ':' + e.buttons + ':' + e.clientX + ',' + e.clientY);
          if (t === 'contextmenu') e.preventDefault();
        });</script>`,
  // Noise does not compress: a PDF of several MB, read in several chunks.
  '/noise.html': `<title>Noise</title><canvas id="c" width="1200" height="1200"></canvas><script>
      const x = document.getElementById('c').getContext('2d'), d = x.createImageData(1200, 1200);
      for (let i = 0; i < d.data.length; i++) d.data[i] = i % 4 === 3 ? 255 : Math.random() * 256;
      x.putImageData(d, 0, 0); const img = new Image(); img.src = x.canvas.toDataURL(); img.id = 'i';
      document.body.append(img); x.canvas.remove();</script>`,
  '/checks.html': `<title>Checks</title><h1>Shop</h1><p>Welcome to   the
      shop</p><p style="display:none">Secret words</p>
    <button onclick="window.saved = (window.saved || 0) + 1">Save</button>
    <button style="display:none">Ghost</button>
    <button id="d1" onclick="window.deleted = 'first'">Delete</button>
    <div><button onclick="window.deleted = 'second'">Delete</button></div>
    <ul id="fruits"><li>Apple</li><li>Banana</li><li>Cherry</li><li style="display:none">Durian</li></ul>
    <label>Email <input id="email" value="a@b.c"></label>
    <label><input type="checkbox" id="agree" checked> Agree</label>
    <label><input type="radio" name="r" id="r1"> One</label>
    <select id="size"><option value="s">Small</option><option value="m" selected>Medium</option></select>
    <input type="range" id="vol" min="0" max="10" value="7">
    <div id="host"></div>
    <iframe srcdoc="<button>Inner</button>"></iframe>
    <script>document.getElementById('host').attachShadow({mode: 'open'}).innerHTML = '<p>Shadow text here</p>';</script>`,
  '/content.html': `<!DOCTYPE html><title>Content</title><style>.gone { display: none }</style>
    <h1>Main   title</h1>
    <p>Some <strong>bold</strong> and <em>soft</em> text with <a href="/next?a=1">a link</a>.<br>Second line.</p>
    <p class="gone">Hidden paragraph</p><script>var notContent = 1;</script>
    <article id="art"><h2>Part</h2><ul><li>One</li><li>Two<ol><li>Inner</li></ol></li></ul>
      <blockquote>Quoted words</blockquote>
      <table><tr><th>Name</th><th>Qty</th></tr><tr><td>Pear</td><td>3</td></tr></table>
      <pre>  x = 1;
  y = 2;</pre><p><code>inline()</code> <img src="/pic.png" alt="A pic"></p></article>
    <div id="host"></div><p id="big"></p>
    <script>document.getElementById('host').attachShadow({mode: 'open'}).innerHTML = '<p>From the shadow</p>';</script>`,
  '/big.html': `<title>Big</title><script>document.write('<p>' + 'word '.repeat(40000) + '</p><p id="end">THE END</p>');</script>`,
};

const web = createServer((req, res) => {
  const html = PAGES[new URL(req.url, 'http://x').pathname];
  res.writeHead(html ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
  res.end(html || '<title>Not found</title>');
});
await new Promise((r) => web.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${web.address().port}`;

// browser_cdp's list names browser-wide and worker-owned methods too: the
// worker must refuse them anyway.
const CDP_ALLOW = 'DOM.*,Runtime.evaluate,Target.getTargets,Browser.getVersion,Fetch.*,Network.*,Page.navigate,Storage.*';
const srv = await startServer(['--caps', 'vision,pdf,testing,devtools', '--cdp-allow', CDP_ALLOW, '--max-output-chars', '5000']);
const c = srv.client;
const outDir = await sessionOutputDir(c);
test.after(async () => { await srv.close(); web.close(); });

const ok = (r) => { assert.equal(r.isError, false, text(r)); return r; };
const code = (r) => { assert.equal(r.isError, true, text(r)); return r.structuredContent.error.code; };
const js = async (fn) => ok(await call(c, 'browser_evaluate', { function: fn })).structuredContent.result.value;
const open = async (page) => ok(await call(c, 'browser_navigate', { url: `${base}/${page}` }));

test('emulate_media: set, keep what is omitted, clear with null', { skip: noMediaOnFirefox }, async () => {
  await open('media.html');
  const dark = () => js("() => [matchMedia('(prefers-color-scheme: dark)').matches, matchMedia('(prefers-reduced-motion: reduce)').matches, matchMedia('print').matches, getComputedStyle(document.body).color]");
  const light = await dark();
  let r = ok(await call(c, 'browser_emulate_media', { colorScheme: 'dark' }));
  assert.deepEqual(r.structuredContent.emulated, { colorScheme: 'dark' });
  assert.deepEqual(await dark(), [true, false, false, 'rgb(255, 255, 255)']);
  await open('media.html'); // the override stays for the next document
  assert.deepEqual(await dark(), [true, false, false, 'rgb(255, 255, 255)']);
  r = ok(await call(c, 'browser_emulate_media', { reducedMotion: 'reduce', media: 'print' }));
  assert.deepEqual(r.structuredContent.emulated, { colorScheme: 'dark', reducedMotion: 'reduce', media: 'print' });
  assert.deepEqual(await dark(), [true, true, true, 'rgb(255, 255, 255)']);
  r = ok(await call(c, 'browser_emulate_media', { colorScheme: 'light', forcedColors: 'active', contrast: 'more' }));
  assert.equal(await js("() => matchMedia('(forced-colors: active)').matches && matchMedia('(prefers-contrast: more)').matches && matchMedia('(prefers-color-scheme: light)').matches"), true);
  r = ok(await call(c, 'browser_emulate_media', { colorScheme: null, reducedMotion: null, media: null, forcedColors: null, contrast: null }));
  assert.deepEqual(r.structuredContent.emulated, {});
  assert.match(text(r), /none/);
  assert.deepEqual(await dark(), light);
  // Bad values are refused before the page sees them.
  assert.equal(code(await call(c, 'browser_emulate_media', { colorScheme: 'purple' })), 'INVALID_PARAMETERS');
  assert.equal(code(await call(c, 'browser_emulate_media', { media: 3 })), 'INVALID_PARAMETERS');
  const { tools } = await c.listTools();
  const t = tools.find((x) => x.name === 'browser_emulate_media');
  assert.deepEqual(t.inputSchema.properties.colorScheme.anyOf[1], { type: 'null' });
});

test('vision: click at a button\'s box hits it, move, down/up, drag, wheel scrolls', async () => {
  await open('mouse.html');
  const box = await js("() => { const r = document.getElementById('b').getBoundingClientRect(); return {x: r.x + r.width / 2, y: r.y + r.height / 2}; }");
  let r = ok(await call(c, 'browser_mouse_click_xy', { x: box.x, y: box.y }));
  assert.match(text(r), /Clicked at \(260, 120\)/);
  assert.match(r.structuredContent.snapshot, /button "hit 1"/);
  assert.equal(await js('() => window.hits'), 1);
  // Beside the button: nothing is hit.
  ok(await call(c, 'browser_mouse_click_xy', { x: 150, y: 120, snapshot: 'none' }));
  assert.equal(await js('() => window.hits'), 1);
  // Right button and double click reach the page as such.
  ok(await call(c, 'browser_mouse_click_xy', { x: 450, y: 350, button: 'right', snapshot: 'none' }));
  ok(await call(c, 'browser_mouse_click_xy', { x: 460, y: 360, clickCount: 2, delay: 20, snapshot: 'none' }));
  let log = await js('() => window.log.splice(0)');
  assert.deepEqual(log, ['mousedown:2:2:450,350', 'contextmenu:2:2:450,350', 'mouseup:2:0:450,350',
    'mousedown:0:1:460,360', 'mouseup:0:0:460,360', 'mousedown:0:1:460,360', 'mouseup:0:0:460,360', 'dblclick:0:0:460,360']);
  // Down, move with the button held, up: the page sees a drag. (Gecko's
  // double click on the empty pad leaves a selection of the whitespace
  // there, and a press on a selection drags it: dragstart, and no mouseup.
  // Clear it, as the press would on Chromium.)
  await js('() => getSelection().removeAllRanges()');
  ok(await call(c, 'browser_mouse_move_xy', { x: 420, y: 320, snapshot: 'none' }));
  ok(await call(c, 'browser_mouse_down', { snapshot: 'none' }));
  r = ok(await call(c, 'browser_mouse_move_xy', { x: 500, y: 400, snapshot: 'none' }));
  assert.deepEqual([r.structuredContent.x, r.structuredContent.y], [500, 400]);
  ok(await call(c, 'browser_mouse_up', { snapshot: 'none' }));
  log = await js('() => window.log.splice(0)');
  assert.deepEqual(log, ['mousedown:0:1:420,320', 'mousemove:0:1:500,400', 'mouseup:0:0:500,400']);
  // drag_xy: press at the start, moves with the button held, release at the end.
  ok(await call(c, 'browser_mouse_drag_xy', { startX: 410, startY: 310, endX: 610, endY: 410, snapshot: 'none' }));
  log = await js('() => window.log.splice(0)');
  assert.equal(log[0], 'mousedown:0:1:410,310');
  assert.equal(log.at(-1), 'mouseup:0:0:610,410');
  assert.ok(log.filter((l) => l.startsWith('mousemove:0:1:')).length >= 3, log.join(' '));
  // A click while another button is held: the page sees that button held throughout.
  ok(await call(c, 'browser_mouse_down', { button: 'middle', snapshot: 'none' }));
  ok(await call(c, 'browser_mouse_click_xy', { x: 600, y: 400, snapshot: 'none' }));
  ok(await call(c, 'browser_mouse_up', { button: 'middle', snapshot: 'none' }));
  log = await js('() => window.log.splice(0)');
  assert.deepEqual(log.filter((l) => !l.startsWith('mousemove')), ['mousedown:1:4:610,410', 'mousedown:0:5:600,400',
    'mouseup:0:4:600,400', 'mouseup:1:0:600,400']);
  // Wheel: the page scrolls by the delta.
  assert.equal(await js('() => scrollY'), 0);
  r = ok(await call(c, 'browser_mouse_wheel', { deltaX: 0, deltaY: 500, snapshot: 'none' }));
  assert.match(text(r), /Scrolled the wheel by \(0, 500\)/);
  const y = await js('() => new Promise((res) => { const t0 = Date.now(); (function f() { if (scrollY > 0 || Date.now() - t0 > 3000) res(scrollY); else requestAnimationFrame(f); })(); })');
  assert.equal(y, 500);
  // Outside the viewport (1280x720): refused, nothing sent.
  r = await call(c, 'browser_mouse_click_xy', { x: 1300, y: 10 });
  assert.equal(code(r), 'INVALID_PARAMETERS');
  assert.match(text(r), /outside the 1280x720 viewport/);
  assert.equal(code(await call(c, 'browser_mouse_click_xy', { x: -1, y: 10 })), 'INVALID_PARAMETERS');
  assert.equal(code(await call(c, 'browser_mouse_click_xy', { x: 10 })), 'INVALID_PARAMETERS');
  assert.equal(code(await call(c, 'browser_mouse_down', { button: 'fourth' })), 'INVALID_PARAMETERS');
  assert.equal(code(await call(c, 'browser_mouse_wheel', { deltaY: 10 })), 'INVALID_PARAMETERS');
  // A click that opens a dialog answers at once, saying the page is blocked.
  await open('mouse.html');
  r = ok(await call(c, 'browser_mouse_click_xy', { x: 30, y: 610, snapshot: 'none' }));
  assert.equal(r.structuredContent.modalState.type, 'alert');
  r = await call(c, 'browser_mouse_click_xy', { x: 260, y: 120, snapshot: 'none' });
  assert.equal(code(r), 'MODAL_STATE');
  assert.equal(code(await call(c, 'browser_cdp', { method: 'DOM.getDocument' })), onFirefox ? 'NOT_SUPPORTED' : 'MODAL_STATE');
  assert.equal(code(await call(c, 'browser_mouse_wheel', { deltaX: 0, deltaY: 10 })), 'MODAL_STATE');
  ok(await call(c, 'browser_handle_dialog', { accept: true }));
  ok(await call(c, 'browser_mouse_click_xy', { x: 260, y: 120, snapshot: 'none' }));
  assert.equal(await js('() => window.hits'), 1);
  // A closed session.
  const s = ok(await call(c, 'browser_session_create')).structuredContent.sessionId;
  ok(await call(c, 'browser_session_close', { sessionId: s }));
  assert.equal(code(await call(c, 'browser_mouse_click_xy', { sessionId: s, x: 1, y: 1 })), 'SESSION_NOT_FOUND');
});

test('pdf_save: a PDF file under the output dir, default name, refused paths', async () => {
  await open('media.html');
  let r = ok(await call(c, 'browser_pdf_save', {}));
  const file = r.structuredContent.file;
  assert.match(file, /\/page-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z\.pdf$/);
  assert.ok(file.startsWith(realpathSync(outDir) + '/'), file);
  const bytes = readFileSync(file);
  assert.equal(bytes.subarray(0, 5).toString(), '%PDF-');
  assert.equal(r.structuredContent.bytes, bytes.length);
  assert.match(bytes.subarray(-8).toString(), /%%EOF/);
  assert.match(text(r), /Saved .*media\.html as PDF to .*\.pdf \(\d+ bytes\)/);
  r = ok(await call(c, 'browser_pdf_save', { filename: 'docs/media.pdf' }));
  assert.equal(r.structuredContent.file, join(realpathSync(outDir), 'docs/media.pdf'));
  assert.equal(readFileSync(r.structuredContent.file).subarray(0, 4).toString(), '%PDF');
  for (const bad of ['../escape.pdf', '/tmp/abs.pdf', 'a/../../b.pdf', 'dir/']) {
    r = await call(c, 'browser_pdf_save', { filename: bad });
    assert.equal(code(r), 'PATH_NOT_ALLOWED', bad);
  }
  assert.ok(!existsSync(join(outDir, '..', 'escape.pdf')));
  assert.ok(!existsSync('/tmp/abs.pdf'));
  // A PDF larger than one read chunk (1 MiB) arrives whole.
  await open('noise.html');
  assert.equal(await js("() => document.getElementById('i').decode().then(() => document.getElementById('i').naturalWidth)"), 1200);
  r = ok(await call(c, 'browser_pdf_save', { filename: 'noise.pdf' }));
  const big = readFileSync(r.structuredContent.file);
  assert.ok(big.length > 2 * 1024 * 1024, String(big.length));
  assert.equal(big.length, r.structuredContent.bytes);
  assert.equal(big.subarray(0, 5).toString(), '%PDF-');
  assert.match(big.subarray(-8).toString(), /%%EOF/);
});

test('verify_*: pass on what the page shows, VERIFICATION_FAILED otherwise, clear errors for bad input', async () => {
  await open('checks.html');
  const verify = (name, args) => call(c, name, args);
  const failed = (r, re) => {
    assert.equal(code(r), 'VERIFICATION_FAILED');
    assert.equal(r.structuredContent.verified, false);
    assert.match(text(r), re);
    return r;
  };
  // Element by role and accessible name (exact, any case); several matches still pass.
  let r = ok(await verify('browser_verify_element_visible', { role: 'button', accessibleName: 'Save' }));
  assert.equal(r.structuredContent.verified, true);
  assert.match(text(r), /Verified: button "Save" is visible/);
  ok(await verify('browser_verify_element_visible', { role: 'heading', accessibleName: 'shop' }));
  ok(await verify('browser_verify_element_visible', { role: 'button', accessibleName: 'Delete' }));
  failed(await verify('browser_verify_element_visible', { role: 'button', accessibleName: 'Sav' }), /no visible button named "Sav"/);
  failed(await verify('browser_verify_element_visible', { role: 'button', accessibleName: 'Ghost' }), /no visible button/);
  failed(await verify('browser_verify_element_visible', { role: 'link', accessibleName: 'Save' }), /no visible link/);
  assert.equal(code(await verify('browser_verify_element_visible', { role: 'but ton', accessibleName: 'Save' })), 'INVALID_PARAMETERS');
  assert.equal(code(await verify('browser_verify_element_visible', { role: 'button' })), 'INVALID_PARAMETERS');
  // Text: substring, any case, whitespace collapsed, shadow DOM included, hidden text not.
  ok(await verify('browser_verify_text_visible', { text: 'welcome to the SHOP' }));
  ok(await verify('browser_verify_text_visible', { text: 'Shadow text' }));
  failed(await verify('browser_verify_text_visible', { text: 'Secret words' }), /text "Secret words" is not visible/);
  failed(await verify('browser_verify_text_visible', { text: 'Inner' }), /not visible/); // iframes are not the page's text
  // List: every item shown inside the target.
  ok(await verify('browser_verify_list_visible', { target: '#fruits', element: 'fruits', items: ['Apple', 'cherry'] }));
  r = failed(await verify('browser_verify_list_visible', { target: '#fruits', element: 'fruits', items: ['Apple', 'Durian', 'Kiwi'] }),
    /fruits: not in the list: "Durian", "Kiwi"/);
  assert.deepEqual(r.structuredContent.missing, ['Durian', 'Kiwi']);
  failed(await verify('browser_verify_list_visible', { target: '#fruits', items: ['Shop'] }), /not in the list/);
  assert.equal(code(await verify('browser_verify_list_visible', { target: '#nolist', items: ['a'] })), 'ELEMENT_NOT_FOUND');
  assert.equal(code(await verify('browser_verify_list_visible', { target: 'button', items: ['a'] })), 'ELEMENT_AMBIGUOUS');
  // Values by type.
  r = ok(await verify('browser_verify_value', { type: 'textbox', target: '#email', element: 'Email', value: 'a@b.c' }));
  assert.equal(r.structuredContent.actual, 'a@b.c');
  r = failed(await verify('browser_verify_value', { type: 'textbox', target: '#email', element: 'Email', value: 'x@y.z' }),
    /Email: the value is "a@b.c", expected "x@y.z"/);
  assert.equal(r.structuredContent.actual, 'a@b.c');
  ok(await verify('browser_verify_value', { type: 'checkbox', target: '#agree', element: 'Agree', value: 'true' }));
  failed(await verify('browser_verify_value', { type: 'checkbox', target: '#agree', element: 'Agree', value: 'false' }), /the value is "true"/);
  ok(await verify('browser_verify_value', { type: 'radio', target: '#r1', element: 'One', value: 'false' }));
  ok(await verify('browser_verify_value', { type: 'combobox', target: '#size', element: 'Size', value: 'Medium' }));
  ok(await verify('browser_verify_value', { type: 'combobox', target: '#size', element: 'Size', value: 'm' }));
  failed(await verify('browser_verify_value', { type: 'combobox', target: '#size', element: 'Size', value: 'Small' }), /selected option is "Medium"/);
  ok(await verify('browser_verify_value', { type: 'slider', target: '#vol', element: 'Volume', value: '7' }));
  // After a change, the new value.
  ok(await call(c, 'browser_type', { target: '#email', text: 'new@x.y', snapshot: 'none' }));
  ok(await verify('browser_verify_value', { type: 'textbox', target: '#email', element: 'Email', value: 'new@x.y' }));
  // Wrong element type, bad type, missing target.
  r = await verify('browser_verify_value', { type: 'checkbox', target: '#email', element: 'Email', value: 'true' });
  assert.equal(code(r), 'INVALID_PARAMETERS');
  assert.match(text(r), /<input type=text>, not a checkbox/);
  assert.equal(code(await verify('browser_verify_value', { type: 'textbox', target: '#fruits', element: 'x', value: '' })), 'INVALID_PARAMETERS');
  assert.equal(code(await verify('browser_verify_value', { type: 'date', target: '#email', element: 'x', value: '' })), 'INVALID_PARAMETERS');
  assert.equal(code(await verify('browser_verify_value', { type: 'textbox', target: '#gone', element: 'x', value: '' })), 'ELEMENT_NOT_FOUND');
});

test('generate_locator: a selector our target parser accepts, for the same element', async () => {
  await open('checks.html');
  const snap = ok(await call(c, 'browser_snapshot', {})).structuredContent.snapshot;
  const save = refOf(snap, 'button', 'Save');
  let r = ok(await call(c, 'browser_generate_locator', { target: save, element: 'Save button' }));
  assert.equal(r.structuredContent.locator, 'role=button[name="Save"]');
  assert.equal(r.structuredContent.ref, save);
  ok(await call(c, 'browser_click', { target: r.structuredContent.locator, snapshot: 'none' }));
  assert.equal(await js('() => window.saved'), 1);
  // Two buttons named Delete: the locator of each clicks that one.
  const deletes = [...snap.matchAll(/button "Delete" \[ref=(e\d+)\]/g)].map((m) => m[1]);
  assert.equal(deletes.length, 2);
  const locs = [];
  for (const [i, ref] of deletes.entries()) {
    r = ok(await call(c, 'browser_generate_locator', { target: ref }));
    const loc = r.structuredContent.locator;
    locs.push(loc);
    assert.doesNotMatch(loc, /^role=button\[name="Delete"\]$/);
    ok(await call(c, 'browser_click', { target: loc, snapshot: 'none' }));
    assert.equal(await js('() => window.deleted'), ['first', 'second'][i], loc);
  }
  assert.equal(locs[0], 'css=#d1');
  assert.match(locs[1], /^css=html > body:nth-of-type\(1\) > div:nth-of-type\(\d+\) > button:nth-of-type\(1\)$/);
  // A selector target works too; a field by its label.
  r = ok(await call(c, 'browser_generate_locator', { target: '#email' }));
  assert.equal(r.structuredContent.locator, 'role=textbox[name="Email"]');
  // Errors: unknown ref, ambiguous selector, a ref inside an iframe.
  assert.equal(code(await call(c, 'browser_generate_locator', { target: 'e99999' })), 'ELEMENT_NOT_FOUND');
  assert.equal(code(await call(c, 'browser_generate_locator', { target: 'button' })), 'ELEMENT_AMBIGUOUS');
  const inner = refOf(snap, 'button', 'Inner');
  assert.match(inner, /^f\d+e\d+$/);
  r = await call(c, 'browser_generate_locator', { target: inner });
  assert.equal(code(r), 'NOT_SUPPORTED');
  assert.match(text(r), /inside an iframe/);
  // get_content reaches into the iframe by ref (its frame's own world).
  r = ok(await call(c, 'browser_get_content', { target: inner, format: 'html' }));
  assert.equal(r.structuredContent.content, '<button>Inner</button>');
});

test('browser_cdp walks the CDP policy table: every row it must refuse is refused, even with --cdp-allow \'*\'', { skip: noCdpOnFirefox }, async () => {
  // The table's own answers (tv-cdp-policy-js --vectors: cdp_policy_check for
  // each layer), held against the real tool with everything allowed.
  const cases = JSON.parse(execFileSync(process.env.TABVISOR_CDP_POLICY_GEN, ['--vectors'], { encoding: 'utf8' }))
    .filter((v) => !v.passes.browser_cdp && /^[A-Za-z]+\.[A-Za-z]+$/.test(v.method));
  assert.ok(cases.length > 40, `${cases.length} refusals in the table`);
  const open = await startServer(['--caps', 'devtools', '--cdp-allow', '*']);
  try {
    ok(await call(open.client, 'browser_navigate', { url: `${base}/checks.html` }));
    for (const v of cases) {
      const r = await call(open.client, 'browser_cdp', v.params === null ? { method: v.method } : { method: v.method, params: v.params });
      assert.equal(code(r), 'NOT_SUPPORTED', `${v.method} ${JSON.stringify(v.params)}: ${text(r)}`);
      assert.match(text(r), /browser_cdp refuses/, v.method);
    }
    // And the session is fine.
    ok(await call(open.client, 'browser_cdp', { method: 'DOM.getDocument', params: { depth: 1 } }));
  } finally {
    await open.close();
  }
});

test('browser_cdp: allowed methods run, others are refused by the worker before anything is sent', { skip: noCdpOnFirefox }, async () => {
  await open('checks.html');
  const cdp = (method, params) => call(c, 'browser_cdp', params === undefined ? { method } : { method, params });
  let r = ok(await cdp('DOM.getDocument', { depth: 1 }));
  const root = r.structuredContent.result.root;
  assert.equal(root.nodeName, '#document');
  assert.match(text(r), /"nodeName":"#document"/);
  r = ok(await cdp('DOM.querySelector', { nodeId: root.nodeId, selector: '#email' }));
  assert.ok(r.structuredContent.result.nodeId > 0);
  r = ok(await cdp('Runtime.evaluate', { expression: 'document.title + 1', returnByValue: true }));
  assert.equal(r.structuredContent.result.result.value, 'Checks1');
  // Not in the list.
  r = await cdp('Accessibility.getFullAXTree', {});
  assert.equal(code(r), 'NOT_SUPPORTED');
  assert.match(text(r), /Accessibility\.getFullAXTree is not in this server's --cdp-allow list/);
  assert.match(r.structuredContent.error.hint, /--cdp-allow/);
  // In the list, but the worker never sends them.
  // Nor anything that hands the browser a path on this machine, even though
  // DOM.* and Network.* are allowed (the policy table, proto/cdp_policy.c).
  for (const [m, why, params] of [['Target.getTargets', /targets are handed out per session/], ['Browser.getVersion', /reaches past the session's own pages/],
    ['Storage.clearDataForOrigin', /reaches past the session's own pages/], ['Fetch.disable', /network policy/], ['Network.disable', /relies on its domains' events/],
    ['Page.navigate', /browser_navigate/], ['Network.clearBrowserCache', /whole context/],
    ['DOM.setFileInputFiles', /path on this machine/, { files: ['/etc/passwd'], nodeId: 1 }],
    ['Network.loadNetworkResource', /local files/, { url: 'file:///etc/passwd', options: { disableCache: true, includeCredentials: false } }]]) {
    r = await cdp(m, params || {});
    assert.equal(code(r), 'NOT_SUPPORTED', m);
    assert.match(text(r), new RegExp(`browser_cdp refuses ${m.replace('.', '\\.')}: `), m);
    assert.match(text(r), why, m);
  }
  // The browser's own errors, bad names, bad params.
  r = await cdp('DOM.noSuchMethod', {});
  assert.equal(code(r), 'BROWSER_ERROR');
  assert.match(text(r), /DOM\.noSuchMethod/);
  assert.equal(code(await cdp('nodots', {})), 'INVALID_PARAMETERS');
  assert.equal(code(await cdp('DOM.a.b', {})), 'INVALID_PARAMETERS');
  assert.equal(code(await cdp('DOM.getDocument', 'x')), 'INVALID_PARAMETERS');
  // A large answer is bounded like every result.
  r = ok(await cdp('Runtime.evaluate', { expression: "'x'.repeat(100000)", returnByValue: true }));
  assert.equal(r.structuredContent.truncated, true);
  assert.ok(text(r).length <= 5000, String(text(r).length));
  assert.match(text(r), /\[truncated: \d+ more characters/);
  // A command the browser does not answer in time: TIMEOUT, and the session goes on.
  r = await call(c, 'browser_cdp', { method: 'Runtime.evaluate', params: { expression: 'new Promise(() => {})', awaitPromise: true }, timeout: 500 });
  assert.equal(code(r), 'TIMEOUT');
  // The page and session are fine afterwards.
  assert.equal(await js('() => document.title'), 'Checks');
  // A bad --cdp-allow stops the server at start.
  const bad = spawnSync(tabvisorBin, ['--cdp-allow', 'DOM.*,not a method'], { encoding: 'utf8' });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--cdp-allow: 'not a method' is not a CDP method pattern/);
  const help = spawnSync(tabvisorBin, ['--help'], { encoding: 'utf8' });
  assert.match(help.stdout, /--cdp-allow LIST/);
});

test('get_content: text, markdown and html of the page and of a target, bounded, to a file', async () => {
  await open('content.html');
  const get = (args) => call(c, 'browser_get_content', args);
  // Text: what is shown, no hidden or script content.
  let r = ok(await get({}));
  let t = r.structuredContent.content;
  assert.equal(r.structuredContent.format, 'text');
  assert.match(t, /^Main title\n/);
  assert.match(t, /Some bold and soft text with a link\.\nSecond line\./);
  assert.doesNotMatch(t, /Hidden paragraph|notContent/);
  assert.equal(text(r), t);
  assert.equal(r.structuredContent.truncated, false);
  assert.equal(r.structuredContent.chars, t.length);
  // Markdown.
  r = ok(await get({ format: 'markdown' }));
  const m = r.structuredContent.content;
  assert.ok(m.startsWith('# Main title\n\nSome **bold** and *soft* text with [a link](' + base + '/next?a=1).\\\nSecond line.\n\n## Part\n\n'), m);
  assert.match(m, /\n- One\n- Two\n  1\. Inner\n/);
  assert.match(m, /\n> Quoted words\n/);
  assert.match(m, /\n\| Name \| Qty \|\n\| --- \| --- \|\n\| Pear \| 3 \|\n/);
  assert.match(m, /\n```\n {2}x = 1;\n {2}y = 2;\n```\n/);
  assert.match(m, new RegExp('`inline\\(\\)` !\\[A pic\\]\\(' + base + '/pic\\.png\\)'));
  assert.match(m, /From the shadow/);
  assert.doesNotMatch(m, /Hidden paragraph|notContent/);
  // HTML: the document as it is now.
  r = ok(await get({ format: 'html' }));
  assert.match(r.structuredContent.content, /^<!DOCTYPE html>\n<html><head>/);
  assert.match(r.structuredContent.content, /<h1>Main {3}title<\/h1>/);
  // One target: a selector or a ref.
  r = ok(await get({ format: 'markdown', target: '#art' }));
  assert.ok(r.structuredContent.content.startsWith('## Part\n\n- One'), r.structuredContent.content);
  assert.doesNotMatch(r.structuredContent.content, /Main title/);
  const snap = ok(await call(c, 'browser_snapshot', {})).structuredContent.snapshot;
  r = ok(await get({ format: 'html', target: refOf(snap, 'heading', 'Part') }));
  assert.equal(r.structuredContent.content, '<h2>Part</h2>');
  r = ok(await get({ target: 'css=table' }));
  assert.equal(r.structuredContent.content, 'Name\tQty\nPear\t3');
  // Errors.
  assert.equal(code(await get({ target: '#nothing' })), 'ELEMENT_NOT_FOUND');
  assert.equal(code(await get({ target: 'p' })), 'ELEMENT_AMBIGUOUS');
  assert.equal(code(await get({ format: 'pdf' })), 'INVALID_PARAMETERS');
  assert.equal(code(await get({ filename: '../x.md' })), 'PATH_NOT_ALLOWED');

  // Bounded: --max-output-chars is 5000 here; maxChars lower still.
  await open('big.html');
  r = ok(await get({}));
  assert.equal(r.structuredContent.truncated, true);
  assert.ok(text(r).length <= 5000, String(text(r).length));
  assert.match(text(r), /\[truncated: \d+ more characters not shown/);
  assert.equal(r.structuredContent.chars, 200000 - 1 + '\n\nTHE END'.length);
  assert.ok(r.structuredContent.content.length <= 5000);
  assert.doesNotMatch(text(r), /THE END/);
  r = ok(await get({ format: 'html', maxChars: 300 }));
  assert.equal(r.structuredContent.truncated, true);
  assert.ok(r.structuredContent.content.length <= 300, String(r.structuredContent.content.length));
  assert.match(r.structuredContent.content, /^<html><head><title>Big<\/title>/);
  // The whole of it goes to a file.
  r = ok(await get({ filename: 'big.txt' }));
  const file = r.structuredContent.file;
  assert.equal(file, join(realpathSync(outDir), 'big.txt'));
  const whole = readFileSync(file, 'utf8');
  assert.equal(whole.length, r.structuredContent.chars);
  assert.match(whole, /THE END$/);
  assert.match(text(r), /Content \(text, \d+ characters\) saved to .*big\.txt/);
  assert.equal(r.structuredContent.content, undefined);
});

// Each group's tools, as tools/list must offer them with --caps <group> only.
const GROUPS = {
  pdf: ['browser_pdf_save'],
  devtools: ['browser_cdp', 'browser_get_content'],
  testing: ['browser_verify_element_visible', 'browser_verify_text_visible', 'browser_verify_list_visible',
    'browser_verify_value', 'browser_generate_locator'],
  vision: ['browser_mouse_move_xy', 'browser_mouse_click_xy', 'browser_mouse_drag_xy', 'browser_mouse_down',
    'browser_mouse_up', 'browser_mouse_wheel'],
};

test('each group is listed with its --caps, absent and refused without it', { skip: noCdpOnFirefox }, async () => {
  const listed = new Map((await c.listTools()).tools.map((t) => [t.name, t]));
  for (const names of Object.values(GROUPS)) {
    for (const n of names) {
      const t = listed.get(n);
      assert.ok(t, `${n} listed with --caps`);
      assert.ok(t.description.length <= 110, n);
      for (const [p, s] of Object.entries(t.inputSchema.properties))
        if (!['sessionId', 'timeout', 'snapshot', 'target', 'element', 'filename'].includes(p)) assert.ok((s.description || '').length <= 60, `${n}.${p}`);
    }
  }
  assert.ok(listed.has('browser_emulate_media'));
  const plain = await startServer([]);
  try {
    const names = new Set((await plain.client.listTools()).tools.map((t) => t.name));
    assert.ok(names.has('browser_emulate_media'), 'emulate_media is core');
    for (const [group, tools] of Object.entries(GROUPS)) {
      for (const n of tools) {
        assert.ok(!names.has(n), `${n} not listed without --caps`);
        // Like an unknown tool, a JSON-RPC error (invalid params), naming the flag.
        await assert.rejects(call(plain.client, n, {}),
          (e) => e.code === -32602 && e.message.includes(`Tool ${n} is not enabled: start the server with --caps ${group}`), n);
      }
    }
  } finally {
    await plain.close();
  }
  // One group on: only its tools; browser_cdp with the default list.
  const one = await startServer(['--caps', 'devtools']);
  try {
    const names = new Set((await one.client.listTools()).tools.map((t) => t.name));
    for (const [group, tools] of Object.entries(GROUPS))
      for (const n of tools) assert.equal(names.has(n), group === 'devtools', n);
    ok(await call(one.client, 'browser_navigate', { url: `${base}/checks.html` }));
    const doc = ok(await call(one.client, 'browser_cdp', { method: 'DOM.getDocument' })).structuredContent.result.root;
    const r = ok(await call(one.client, 'browser_cdp', { method: 'Accessibility.queryAXTree', params: { nodeId: doc.nodeId, role: 'button', accessibleName: 'Save' } }));
    assert.equal(r.structuredContent.result.nodes.length, 1);
    const ev = await call(one.client, 'browser_cdp', { method: 'Runtime.evaluate', params: { expression: '1' } });
    assert.equal(code(ev), 'NOT_SUPPORTED');
    assert.match(text(ev), /not in this server's --cdp-allow list \(DOM\.enable,DOM\.getDocument,/);
  } finally {
    await one.close();
  }
});
