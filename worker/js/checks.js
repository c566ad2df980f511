/*
 * The page side of the testing tools (browser_verify_*, browser_generate_locator),
 * run in the frame's isolated world next to the engine (__tabvisor, snapshot.js).
 *
 * One function (el, o): el is the resolved target (null for the checks of the
 * whole page), o.kind says which check. It returns plain JSON and never throws:
 *   {ok: true, ...}            the check holds (locator: {ok, locator})
 *   {fail: message, actual}    it does not: the worker makes VERIFICATION_FAILED
 *   {error: {code, message}}   bad input or a wrong element type
 * Text is matched like Playwright's getByText: case-insensitive, whitespace
 * collapsed, within the rendered text (innerText, plus open shadow roots).
 */
(function (el, o) {
  'use strict';

  const norm = (s) => String(s).replace(/\s+/g, ' ').trim().toLowerCase();
  const quote = (s) => '"' + String(s).replace(/["\\]/g, '\\$&') + '"';
  const error = (code, message) => ({ error: { code: code, message: message } });

  // Rendered text of root (an element or the document) and its open shadow roots.
  function shownText(root) {
    const parts = [root === document ? (document.body ? document.body.innerText : '') : root.innerText];
    const visit = (r) => {
      for (const e of r.querySelectorAll('*')) {
        if (!e.shadowRoot) continue;
        for (const k of e.shadowRoot.childNodes) {
          if (k.nodeType === 3 && e.checkVisibility()) parts.push(k.data);
          else if (k.nodeType === 1 && k.checkVisibility()) parts.push(k.innerText);
        }
        visit(e.shadowRoot);
      }
    };
    visit(root);
    return norm(parts.join(' '));
  }

  // How many rendered elements a selector matches in this frame: 0, 1 or more.
  function count(selector) {
    const r = __tabvisor.resolve(selector);
    if (r && r.error) {
      if (r.error.code === 'ELEMENT_AMBIGUOUS') return { n: r.error.count };
      if (r.error.code === 'ELEMENT_NOT_FOUND') return { n: 0 };
      return r;
    }
    return { n: 1, el: r };
  }

  function verifyRole() {
    if (!/^[a-zA-Z][a-zA-Z0-9-]*$/.test(o.role)) return error('INVALID_PARAMETERS', 'role must be an ARIA role name like button or heading, not ' + JSON.stringify(o.role));
    const c = count('role=' + o.role + '[name=' + quote(o.name) + ']');
    if (c.error) return c;
    if (c.n === 0) {
      return { fail: 'no visible ' + o.role + ' named ' + JSON.stringify(o.name) + ' on the page' };
    }
    return { ok: true, count: c.n };
  }

  function verifyText() {
    if (!norm(o.text)) return error('INVALID_PARAMETERS', 'text must not be blank');
    if (!shownText(document).includes(norm(o.text))) {
      return { fail: 'text ' + JSON.stringify(o.text) + ' is not visible on the page' };
    }
    return { ok: true };
  }

  function verifyList() {
    if (!el.checkVisibility()) return { fail: 'the list is not visible' };
    const shown = shownText(el);
    const missing = o.items.filter((item) => !shown.includes(norm(item)));
    if (missing.length) {
      return { fail: 'not in the list: ' + missing.map((m) => JSON.stringify(m)).join(', '), missing: missing };
    }
    return { ok: true };
  }

  const TEXT_TYPES = ['text', 'search', 'url', 'tel', 'email', 'password', 'number', 'date',
    'datetime-local', 'month', 'week', 'time', 'color'];

  function what(e) {
    return '<' + e.localName + (e.localName === 'input' ? ' type=' + e.type : '') + '>';
  }

  // The element's current value as the given type reads it, or {error}.
  function currentValue(type) {
    const tag = el.localName;
    const aria = (a) => el.getAttribute(a);
    if (type === 'checkbox' || type === 'radio') {
      if (tag === 'input' && (el.type === 'checkbox' || el.type === 'radio')) return String(el.checked);
      if (aria('aria-checked') !== null) return aria('aria-checked');
      return error('INVALID_PARAMETERS', 'the element is ' + what(el) + ', not a ' + type);
    }
    if (type === 'combobox') {
      if (tag === 'select') {
        const sel = Array.from(el.selectedOptions);
        return { options: sel.map((x) => [x.value, x.label.trim()]) };
      }
      if (tag === 'input' && TEXT_TYPES.includes(el.type)) return el.value;
      return error('INVALID_PARAMETERS', 'the element is ' + what(el) + ', not a combobox (a <select> or a text input)');
    }
    if (type === 'slider') {
      if (tag === 'input' && el.type === 'range') return el.value;
      if (aria('aria-valuenow') !== null) return aria('aria-valuenow');
      return error('INVALID_PARAMETERS', 'the element is ' + what(el) + ', not a slider');
    }
    // textbox
    if ((tag === 'input' && TEXT_TYPES.includes(el.type)) || tag === 'textarea') return el.value;
    if (el.isContentEditable) return el.innerText;
    return error('INVALID_PARAMETERS', 'the element is ' + what(el) + ', not a textbox');
  }

  function verifyValue() {
    const v = currentValue(o.type);
    if (v && v.error) return v;
    if (v && v.options) {
      const values = v.options.map((x) => x[0]);
      const labels = v.options.map((x) => x[1]);
      if (values.join(', ') === o.value || labels.join(', ') === o.value) return { ok: true, actual: labels.join(', ') };
      return { fail: 'the selected option is ' + JSON.stringify(labels.join(', ')) + ', expected ' + JSON.stringify(o.value), actual: labels.join(', ') };
    }
    if (v === o.value) return { ok: true, actual: v };
    return { fail: 'the value is ' + JSON.stringify(v) + ', expected ' + JSON.stringify(o.value), actual: v };
  }

  // A selector our own target parser (snapshot.js resolveTarget) resolves to
  // el alone; candidates from the most to the least readable.
  function locator() {
    const d = __tabvisor.describe(o.target);
    if (d.error) return d;
    const unique = (sel) => {
      const c = count(sel);
      return !c.error && c.n === 1 && c.el === el;
    };
    const cands = [];
    if (d.role && !['generic', 'none', 'presentation'].includes(d.role)) {
      if (d.name) {
        cands.push('role=' + d.role + '[name=' + quote(d.name) + ']');
        cands.push('role=' + d.role + '[name=' + quote(d.name) + 's]');
      } else {
        cands.push('role=' + d.role);
      }
    }
    const testid = el.getAttribute('data-testid');
    if (testid) cands.push('css=[data-testid=' + quote(testid) + ']');
    if (el.id) cands.push('css=#' + CSS.escape(el.id));
    const text = (el.innerText || '').replace(/\s+/g, ' ').trim();
    if (text && text.length <= 80) cands.push('text=' + quote(text) + 's');
    for (const sel of cands) if (unique(sel)) return { ok: true, locator: sel, role: d.role, name: d.name, ref: d.ref };
    // A structural path from <html>: unique by construction unless el sits in a shadow root.
    const steps = [];
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      let k = 1;
      for (let s = e.previousElementSibling; s; s = s.previousElementSibling) if (s.localName === e.localName) k++;
      steps.unshift(e === document.documentElement ? 'html' : e.localName + ':nth-of-type(' + k + ')');
      if (!e.parentElement && e !== document.documentElement) return error('NOT_SUPPORTED', 'the element is inside a shadow root and has no unique role, name, id or text; use its ref');
    }
    const path = 'css=' + steps.join(' > ');
    if (unique(path)) return { ok: true, locator: path, role: d.role, name: d.name, ref: d.ref };
    return error('NOT_SUPPORTED', 'no selector found that matches only this element; use its ref');
  }

  try {
    switch (o.kind) {
      case 'role': return verifyRole();
      case 'text': return verifyText();
      case 'list': return verifyList();
      case 'value': return verifyValue();
      case 'locator': return locator();
      default: return error('INVALID_PARAMETERS', 'unknown check ' + o.kind);
    }
  } catch (e) {
    return error('BROWSER_ERROR', 'tabvisor check failed: ' + ((e && e.message) || String(e)));
  }
})
