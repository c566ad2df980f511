/*
 * tabvisor injected engine: accessibility snapshot, target resolution,
 * actionability checks.
 *
 * The worker evaluates this file once per document in an isolated world
 * (Page.createIsolatedWorld): the DOM is shared with the page, its JS globals
 * are not. It defines globalThis.__tabvisor once; evaluating it again is a
 * no-op. The worker then calls e.g. `__tabvisor.snapshot({interactive:false})`
 * with returnByValue, so every exported function returns plain JSON data and
 * never throws: failures are `{error: {code, message, ...}}`.
 *
 * Specs followed (references in comments):
 *   WAI-ARIA 1.2      https://www.w3.org/TR/wai-aria-1.2/
 *   HTML-AAM          https://www.w3.org/TR/html-aam-1.0/
 *   accname 1.2       https://www.w3.org/TR/accname-1.2/
 * Output grammar: the YAML-ish line format of Playwright's MCP server
 * (`- role "name" [state] [ref=eN]: text`).
 */
(function () {
  'use strict';

  if (globalThis.__tabvisor) return;

  // ---------------------------------------------------------------------------
  // Constants
  // ---------------------------------------------------------------------------

  const ELEMENT_NODE = 1;
  const TEXT_NODE = 3;

  // Visibility classes of an element (see visibilityOf).
  const VISIBLE = 0; // rendered
  const SELF_HIDDEN = 1; // visibility:hidden/collapse: no line, own text hidden, children may show
  const NONE = 2; // not rendered at all (display:none, closed details, ...): whole subtree gone

  const NAME_MAX = 500; // longest accessible name printed
  const VALUE_MAX = 1000; // longest field value printed
  const CANDIDATES_MAX = 5; // candidates listed for ELEMENT_AMBIGUOUS

  // Never rendered, never walked.
  const SKIP_TAGS = new Set([
    'head', 'script', 'style', 'noscript', 'template', 'meta', 'link', 'title', 'base',
  ]);

  // Elements whose DOM children are not content (form controls, replaced
  // elements, fallback content). select is special-cased to list its options.
  const LEAF_TAGS = new Set([
    'input', 'textarea', 'select', 'img', 'svg', 'iframe', 'frame', 'canvas', 'video', 'audio',
    'object', 'embed', 'meter', 'progress', 'hr', 'br',
  ]);

  // Phrasing elements rendered inline by default: their text joins neighbouring
  // text without a space. Every other element separates text (a block, a
  // control, an image), which is what a reader sees.
  const INLINE_TAGS = new Set([
    'a', 'abbr', 'b', 'bdi', 'bdo', 'big', 'cite', 'code', 'data', 'dfn', 'em', 'font', 'i',
    'kbd', 'label', 'mark', 'nobr', 'q', 's', 'samp', 'slot', 'small', 'span', 'strike',
    'strong', 'sub', 'sup', 'time', 'tt', 'u', 'var', 'wbr', 'del', 'ins',
  ]);

  // WAI-ARIA 1.2 "Definition of Roles": concrete roles (abstract roles are not valid in `role`).
  const VALID_ROLES = new Set([
    'alert', 'alertdialog', 'application', 'article', 'banner', 'blockquote', 'button', 'caption',
    'cell', 'checkbox', 'code', 'columnheader', 'combobox', 'complementary', 'contentinfo',
    'definition', 'deletion', 'dialog', 'directory', 'document', 'emphasis', 'feed', 'figure',
    'form', 'generic', 'grid', 'gridcell', 'group', 'heading', 'img', 'insertion', 'link', 'list',
    'listbox', 'listitem', 'log', 'main', 'marquee', 'math', 'menu', 'menubar', 'menuitem',
    'menuitemcheckbox', 'menuitemradio', 'meter', 'navigation', 'none', 'note', 'option',
    'paragraph', 'presentation', 'progressbar', 'radio', 'radiogroup', 'region', 'row',
    'rowgroup', 'rowheader', 'scrollbar', 'search', 'searchbox', 'separator', 'slider',
    'spinbutton', 'status', 'strong', 'subscript', 'superscript', 'switch', 'tab', 'table',
    'tablist', 'tabpanel', 'term', 'textbox', 'time', 'timer', 'toolbar', 'tooltip', 'tree',
    'treegrid', 'treeitem', 'mark', 'image',
  ]);

  // Roles that get no line of their own: their children move up a level.
  const HOISTED_ROLES = new Set(['', 'none', 'presentation', 'generic']);

  // WAI-ARIA 1.2 "Roles Supporting Name from Content" (accname 1.2 step 2F).
  const NAME_FROM_CONTENT = new Set([
    'button', 'cell', 'checkbox', 'columnheader', 'gridcell', 'heading', 'link', 'menuitem',
    'menuitemcheckbox', 'menuitemradio', 'option', 'radio', 'row', 'rowheader', 'switch', 'tab',
    'tooltip', 'treeitem',
  ]);

  // WAI-ARIA 1.2 "Roles which cannot be named (Name prohibited)".
  const NAME_PROHIBITED = new Set([
    'caption', 'code', 'deletion', 'emphasis', 'generic', 'insertion', 'paragraph',
    'presentation', 'none', 'strong', 'subscript', 'superscript', '',
  ]);

  // WAI-ARIA 1.2 "Children Presentational: True": descendants are not part of
  // the tree. We still keep descendants one can act on (e.g. a close button
  // inside a tab), so nothing actionable disappears. Textboxes show their
  // content as the value instead.
  const CHILDREN_PRESENTATIONAL = new Set([
    'button', 'checkbox', 'img', 'menuitemcheckbox', 'menuitemradio', 'meter', 'option',
    'progressbar', 'radio', 'scrollbar', 'separator', 'slider', 'switch', 'tab', 'textbox',
    'searchbox',
  ]);

  // Roles an agent acts on (interactive mode keeps these).
  const INTERACTIVE_ROLES = new Set([
    'button', 'checkbox', 'combobox', 'link', 'listbox', 'menuitem', 'menuitemcheckbox',
    'menuitemradio', 'option', 'radio', 'scrollbar', 'searchbox', 'slider', 'spinbutton',
    'switch', 'tab', 'textbox', 'treeitem', 'iframe',
  ]);

  // Roles that support aria-disabled (WAI-ARIA 1.2 aria-disabled "Used in Roles", widgets and groups).
  const DISABLE_ROLES = new Set([
    'application', 'button', 'checkbox', 'columnheader', 'combobox', 'grid', 'gridcell', 'group',
    'link', 'listbox', 'menu', 'menubar', 'menuitem', 'menuitemcheckbox', 'menuitemradio',
    'option', 'radio', 'radiogroup', 'row', 'rowheader', 'scrollbar', 'searchbox', 'separator',
    'slider', 'spinbutton', 'switch', 'tab', 'tablist', 'textbox', 'toolbar', 'tree', 'treegrid',
    'treeitem',
  ]);

  const CHECKABLE_ROLES = new Set([
    'checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio', 'treeitem',
  ]);
  const SELECTABLE_ROLES = new Set([
    'option', 'tab', 'row', 'gridcell', 'treeitem', 'columnheader', 'rowheader',
  ]);
  const VALUE_ROLES = new Set(['textbox', 'searchbox', 'combobox', 'spinbutton', 'slider']);
  // WAI-ARIA 1.2 aria-expanded / aria-level / aria-pressed supporting roles.
  const EXPANDABLE_ROLES = new Set([
    'application', 'button', 'checkbox', 'combobox', 'gridcell', 'link', 'listbox', 'menuitem',
    'menuitemcheckbox', 'menuitemradio', 'row', 'rowheader', 'columnheader', 'switch', 'tab',
    'treeitem', 'group', 'region', 'dialog', 'alertdialog', 'navigation', 'generic',
  ]);
  const LEVEL_ROLES = new Set(['heading', 'listitem', 'row', 'treeitem', 'comment']);
  const RANGE_ROLES = new Set(['slider', 'spinbutton', 'progressbar', 'scrollbar', 'meter']);

  // HTML elements that can be :disabled (HTML "Enabling and disabling form controls").
  const DISABLEABLE_TAGS = new Set([
    'button', 'input', 'select', 'textarea', 'option', 'optgroup', 'fieldset',
  ]);
  // Labelable elements (HTML "Categories of form-associated elements") whose <label>s name them.
  const LABELABLE_TAGS = new Set([
    'button', 'input', 'meter', 'output', 'progress', 'select', 'textarea',
  ]);
  // <input> types that take typed text.
  const TEXT_INPUT_TYPES = new Set([
    'text', 'search', 'url', 'tel', 'email', 'password', 'number', 'date', 'datetime-local',
    'month', 'week', 'time',
  ]);

  // ---------------------------------------------------------------------------
  // Per-document state (survives across calls; refs live here)
  // ---------------------------------------------------------------------------

  const state = {
    nextRef: 1, // next free ref number; continues across documents via init({refBase})
    prefix: '', // frame prefix, e.g. "f1" -> refs "f1e7"
    info: new WeakMap(), // element -> {n, role, name} of its current ref
    refs: new Map(), // ref number -> WeakRef(element)
    boxes: new WeakMap(), // element -> {r: DOMRect, t: performance.now()} when last measured
    pruneAt: 10000, // refs map size that triggers dropping dead entries
    // <a> elements without href that have a click listener of their own, as
    // the worker found them in the main world at the last snapshot (see
    // elementsAt); Chromium exposes those as links.
    clickable: new WeakSet(),
    // <table> elements (or their bodies) with a dblclick listener of their
    // own, found the same way (elementsAt): a page that edits or opens
    // a cell on double-click, so their plain cells keep refs.
    cellTables: new WeakSet(),
    // The last frame wait timed out: this document renders no frames (a
    // background tab of the user's browser in extension mode), so nothing in
    // it moves and the next waits are one frame's time (see nextFrame).
    framesStalled: false,
  };

  // ---------------------------------------------------------------------------
  // Small helpers
  // ---------------------------------------------------------------------------

  function err(code, message, extra) {
    const e = { code: code, message: message };
    if (extra) Object.assign(e, extra);
    return { error: e };
  }

  // Collapse whitespace, drop zero-width and private-use characters (icon
  // font glyphs from ::before), trim.
  function normalize(s) {
    if (!s) return '';
    if (INVISIBLE_CHARS_RE.test(s)) s = s.replace(INVISIBLE_CHARS_G, '');
    if (!UNNORMALIZED_RE.test(s)) return s; // fast path: already single-spaced
    return s.replace(/\s+/g, ' ').trim();
  }
  const INVISIBLE_CHARS_RE = /[\u200b\u200c\u200d\u2060\ufeff\ue000-\uf8ff]/;
  const INVISIBLE_CHARS_G = /[\u200b\u200c\u200d\u2060\ufeff\ue000-\uf8ff]/g;
  const UNNORMALIZED_RE = /^\s|\s$|\s\s|[^\S ]/;

  function clip(s, max) {
    return s.length > max ? s.slice(0, max - 1) + '\u2026' : s;
  }

  // The parent in the composed tree: a shadow root's host for top-level
  // shadow content, the assigned slot for slotted nodes (flat tree).
  function composedParent(node) {
    if (node.assignedSlot) return node.assignedSlot;
    if (node.parentNode) {
      const p = node.parentNode;
      return p.nodeType === 11 && p.host ? p.host : p;
    }
    return node.host || null;
  }

  // Children in the flat tree: an open shadow root replaces the light
  // children; a slot shows its assigned nodes, or its fallback content
  // (DOM "find flattened slottables", which needs a shadow root).
  function childNodesOf(el, ctx) {
    if (el.shadowRoot) {
      if (ctx) notePseudoRoot(el.shadowRoot, ctx);
      return el.shadowRoot.childNodes;
    }
    if (el.localName === 'slot' && typeof el.assignedNodes === 'function') {
      const root = el.getRootNode();
      if (root && root.host) return el.assignedNodes({ flatten: true });
    }
    return el.childNodes;
  }

  // True when the flat-tree children are just the DOM children, so a cheap
  // firstChild/nextSibling walk can be used.
  function hasPlainChildren(el) {
    return !el.shadowRoot && el.localName !== 'slot';
  }

  // document.activeElement, followed down through open shadow roots.
  function deepActiveElement() {
    let a = document.activeElement;
    while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
    if (a === document.body || a === document.documentElement) return null;
    return a;
  }

  // What one call has learned about an element; computed lazily, once.
  // One record per element keeps big pages to a single map lookup.
  function ElementFacts() {
    this.vis = -1; // VISIBLE / SELF_HIDDEN / NONE, -1 = not yet known
    this.role = undefined; // computed role, '' for none
    this.name = undefined; // accessible name (root computation, normalized)
    this.recName = undefined; // raw text alternative in plain recursion
    this.content = undefined; // raw name-from-content text (plain state)
    this.pseudo = undefined; // {before, after} generated content, or null
    this.cursor = undefined; // computed cursor (hasOwnActionCursor)
  }

  function factsOf(el, ctx) {
    let f = ctx.recs.get(el);
    if (f === undefined) {
      f = new ElementFacts();
      ctx.recs.set(el, f);
    }
    return f;
  }

  // Fresh per-call caches. Names, roles and visibility are computed once per
  // element per call, which keeps name-from-content linear.
  function newContext() {
    return {
      recs: new Map(), // element -> ElementFacts (see factsOf)
      tableRoles: new Map(),
      labels: new Map(), // control -> its <label> elements
      labelRoots: new Set(), // trees whose labels are in `labels`
      anyPseudo: undefined,
      pseudoSel: new Map(),
      sheetSel: new Map(),
      active: deepActiveElement(),
      buildDepth: Infinity, // deepest level walked while building
      depthCuts: 0, // elements left out by buildDepth so far
      maxDepth: Infinity, // deepest level printed
      interactive: false, // the snapshot keeps only what one acts on (and its context)
      refCount: 0,
      iframes: [],
    };
  }

  // ---------------------------------------------------------------------------
  // Visibility
  // ---------------------------------------------------------------------------

  // Subtrees hidden by markup: aria-hidden="true" (WAI-ARIA 1.2 aria-hidden),
  // HTML inert, and hidden="until-found", whose element keeps a box but whose
  // content is content-visibility:hidden (checkVisibility on the element
  // itself cannot tell).
  function isAriaHiddenOrInert(el) {
    if (el.getAttribute('aria-hidden') === 'true' || el.hasAttribute('inert')) return true;
    return el.hasAttribute('hidden') && el.getAttribute('hidden').toLowerCase() === 'until-found';
  }

  // VISIBLE / SELF_HIDDEN / NONE, cached per call. aria-hidden and inert
  // subtrees count as NONE: they are pruned exactly like display:none.
  function visibilityOf(el, ctx) {
    const f = factsOf(el, ctx);
    if (f.vis < 0) f.vis = isAriaHiddenOrInert(el) ? NONE : computeVisibility(el);
    return f.vis;
  }

  // checkVisibility() (CSSOM View) covers display:none on the element and its
  // ancestors and content-visibility:hidden ancestors (closed <details>,
  // hidden=until-found) in one cheap call; getComputedStyle is only needed
  // for boxless elements (display:contents) or old engines.
  function computeVisibility(el) {
    if (typeof el.checkVisibility === 'function') {
      if (el.checkVisibility(VISIBILITY_PROPERTY)) return VISIBLE;
      if (el.checkVisibility()) return SELF_HIDDEN; // only visibility:hidden/collapse failed
      const style = getComputedStyle(el);
      if (style.display === 'contents') return style.visibility === 'visible' ? VISIBLE : SELF_HIDDEN;
      return NONE;
    }
    const style = getComputedStyle(el);
    if (style.display === 'none') return NONE;
    return style.visibility === 'visible' ? VISIBLE : SELF_HIDDEN;
  }

  const VISIBILITY_PROPERTY = { visibilityProperty: true };

  // Options of a <select> have no layout box of their own; they are visible
  // when the select is, unless hidden explicitly.
  function optionHidden(el) {
    return el.hidden || isAriaHiddenOrInert(el) || (el.style && el.style.display === 'none');
  }

  // ---------------------------------------------------------------------------
  // Roles (WAI-ARIA 1.2 role attribute, HTML-AAM "HTML Element Role Mappings")
  // ---------------------------------------------------------------------------

  function roleOf(el, ctx) {
    const f = factsOf(el, ctx);
    if (f.role === undefined) f.role = computeRole(el, ctx) || '';
    return f.role;
  }

  // The first token of `role` that names a concrete role (WAI-ARIA 1.2
  // "Role Attribute": the first valid token wins).
  function explicitRole(el) {
    const attr = el.getAttribute('role');
    if (!attr) return '';
    const tokens = attr.trim().toLowerCase().split(/\s+/);
    for (const t of tokens) {
      if (VALID_ROLES.has(t)) return t === 'image' ? 'img' : t; // ARIA 1.3 synonym
    }
    return '';
  }

  function computeRole(el, ctx) {
    const explicit = explicitRole(el);
    if (explicit === 'none' || explicit === 'presentation') {
      // WAI-ARIA 1.2 "Presentational Roles Conflict Resolution": ignored on
      // focusable elements and elements with global ARIA naming attributes.
      if (!isFocusable(el) && !hasAuthorName(el)) return 'none';
    } else if (explicit) {
      return explicit;
    }
    return implicitRole(el, ctx);
  }

  function hasAuthorName(el) {
    return hasText(el.getAttribute('aria-label')) || hasText(el.getAttribute('aria-labelledby')) ||
      hasText(el.getAttribute('title'));
  }

  function hasText(s) {
    return !!s && /\S/.test(s);
  }

  // Natively focusable or focusable through tabindex (HTML "focusable area").
  function isFocusable(el) {
    if (el.hasAttribute('tabindex')) return true;
    switch (el.localName) {
      case 'a': case 'area': return el.hasAttribute('href');
      case 'button': case 'select': case 'textarea': return !el.disabled;
      case 'input': return el.type !== 'hidden' && !el.disabled;
      case 'iframe': case 'frame': return true;
      case 'summary': return isDetailsSummary(el);
      default: return isEditingHost(el);
    }
  }

  // A generic element scripts made clickable: it gets a `generic` line and a
  // ref so an agent can act on it. Signals: a tabindex, an onclick
  // attribute, and a hand or grab cursor of its own (one its parent does not
  // show, so an item's inner text does not repeat it): what a sighted user
  // reads as "I can click (or drag) this". Inside a control the cursor says
  // nothing new: the control is already there to click.
  function isClickableGeneric(el, owner, ctx) {
    const ti = el.getAttribute('tabindex');
    if (ti !== null && parseInt(ti, 10) >= 0) return true;
    if (el.hasAttribute('onclick')) return true;
    if (owner && INTERACTIVE_ROLES.has(owner.role)) return false;
    return hasOwnActionCursor(el, ctx);
  }

  const ACTION_CURSORS = new Set(['pointer', 'grab', 'move']);

  // The computed cursor, once per element per call (a parent is asked by
  // each of its children).
  function cursorOf(el, ctx) {
    const f = factsOf(el, ctx);
    if (f.cursor === undefined) f.cursor = getComputedStyle(el).cursor;
    return f.cursor;
  }

  function hasOwnActionCursor(el, ctx) {
    const cursor = cursorOf(el, ctx);
    if (!ACTION_CURSORS.has(cursor)) return false;
    // A label acts through its control, which has a line of its own, unless
    // the control is hidden outright (CSS-only accordions and tabs toggle a
    // `hidden` checkbox through its label): then the label is what a user
    // clicks.
    // So does anything inside such a label (a styled box drawn by an <i>).
    const label = el.closest('label');
    if (label && label.control && visibilityOf(label.control, ctx) !== NONE) return false;
    const p = composedParent(el);
    return !(p && p.nodeType === ELEMENT_NODE && cursorOf(p, ctx) === cursor);
  }

  function isEditingHost(el) {
    if (!el.hasAttribute('contenteditable')) return false;
    const v = (el.getAttribute('contenteditable') || '').toLowerCase();
    if (v === 'false') return false;
    const p = el.parentElement;
    return !(p && p.isContentEditable);
  }

  function isDetailsSummary(el) {
    const d = el.parentElement;
    if (!d || d.localName !== 'details') return false;
    for (const c of d.children) if (c.localName === 'summary') return c === el;
    return false;
  }

  // An element inherits presentation from a presentational table or list:
  // its required owned elements lose their roles too (WAI-ARIA 1.2, role `presentation`).
  function ownerIsPresentational(el, selector) {
    const owner = el.closest(selector);
    if (!owner) return false;
    const r = explicitRole(owner);
    return r === 'none' || r === 'presentation';
  }

  // Landmark scoping for header/footer (HTML-AAM: banner/contentinfo only
  // when not inside sectioning content or main).
  const SECTIONING_SCOPE =
    'article,aside,main,nav,section,[role=article],[role=complementary],[role=main],' +
    '[role=navigation],[role=region]';

  // HTML-AAM implicit roles that depend on nothing but the tag.
  const TAG_ROLES = new Map([
    ['article', 'article'], ['blockquote', 'blockquote'], ['button', 'button'],
    ['datalist', 'listbox'], ['dd', 'definition'], ['details', 'group'], ['dfn', 'term'],
    ['dt', 'term'], ['dialog', 'dialog'], ['fieldset', 'group'], ['figure', 'figure'],
    ['h1', 'heading'], ['h2', 'heading'], ['h3', 'heading'], ['h4', 'heading'],
    ['h5', 'heading'], ['h6', 'heading'], ['hgroup', 'group'], ['hr', 'separator'],
    ['iframe', 'iframe'], ['frame', 'iframe'], ['main', 'main'], ['math', 'math'],
    ['menu', 'list'], ['ol', 'list'], ['ul', 'list'], ['meter', 'meter'],
    ['nav', 'navigation'], ['optgroup', 'group'], ['option', 'option'], ['output', 'status'],
    ['p', 'paragraph'], ['progress', 'progressbar'], ['search', 'search'], ['svg', 'img'],
    ['textarea', 'textbox'], ['address', 'group'],
  ]);

  // Tags whose role depends on attributes or context; everything else is
  // generic (no role) unless it is a contenteditable editing host.
  const CONTEXT_ROLES = {
    a: (el) => (el.hasAttribute('href') || state.clickable.has(el) ? 'link' : ''),
    area: (el) => (el.hasAttribute('href') ? 'link' : ''),
    // HTML-AAM: aside is complementary when scoped to body/main or named.
    aside: (el) => (!el.parentElement || !el.parentElement.closest('article,aside,nav,section') ||
      hasAuthorName(el) ? 'complementary' : ''),
    // HTML-AAM: footer/header are landmarks unless inside sectioning content.
    footer: (el) => (el.parentElement && el.parentElement.closest(SECTIONING_SCOPE) ? '' : 'contentinfo'),
    header: (el) => (el.parentElement && el.parentElement.closest(SECTIONING_SCOPE) ? '' : 'banner'),
    // HTML-AAM: form and section are landmarks only with an accessible name.
    form: (el) => (hasAuthorName(el) ? 'form' : ''),
    section: (el) => (hasAuthorName(el) ? 'region' : ''),
    // HTML-AAM: img with alt="" and no other name is presentation.
    img: (el) => (el.getAttribute('alt') === '' && !hasAuthorName(el) ? 'presentation' : 'img'),
    input: (el) => inputRole(el),
    li: (el) => (el.parentElement && ownerIsPresentational(el.parentElement, 'ul,ol,menu') ? '' : 'listitem'),
    // HTML-AAM: select is a listbox when multiple or size > 1, else a combobox.
    select: (el) => (el.multiple || el.size > 1 ? 'listbox' : 'combobox'),
    // HTML-AAM gives the details summary no ARIA role; browsers expose it as a
    // disclosure button, which is what an agent clicks.
    summary: (el) => (isDetailsSummary(el) ? 'button' : ''),
    // Table parts lose their roles inside a presentational table (WAI-ARIA 1.2, role `presentation`).
    table: () => 'table',
    tbody: (el, ctx) => (tablePartsPresentational(el, ctx) ? '' : 'rowgroup'),
    thead: (el, ctx) => (tablePartsPresentational(el, ctx) ? '' : 'rowgroup'),
    tfoot: (el, ctx) => (tablePartsPresentational(el, ctx) ? '' : 'rowgroup'),
    tr: (el, ctx) => (tablePartsPresentational(el, ctx) ? '' : 'row'),
    td: (el, ctx) => cellRole(el, ctx),
    th: (el, ctx) => headerCellRole(el, ctx),
  };

  function implicitRole(el, ctx) {
    const tag = el.localName;
    const fixed = TAG_ROLES.get(tag);
    if (fixed !== undefined) return fixed;
    const fn = CONTEXT_ROLES[tag];
    if (fn !== undefined) return fn(el, ctx);
    return isEditingHost(el) ? 'textbox' : '';
  }

  function tablePartsPresentational(el, ctx) {
    const r = tableRoleOf(el, ctx);
    return r === 'none' || r === 'presentation';
  }

  // HTML-AAM input type mapping.
  function inputRole(el) {
    const type = el.type;
    const hasList = el.hasAttribute('list') && !!el.list;
    switch (type) {
      case 'button': case 'submit': case 'reset': case 'image': case 'file': case 'color':
        return 'button';
      case 'checkbox': return 'checkbox';
      case 'radio': return 'radio';
      case 'range': return 'slider';
      case 'number': return 'spinbutton';
      case 'search': return hasList ? 'combobox' : 'searchbox';
      case 'hidden': return '';
      case 'email': case 'tel': case 'text': case 'url': return hasList ? 'combobox' : 'textbox';
      default: return 'textbox'; // password, date/time types, unknown types
    }
  }

  // The explicit role of the table owning a table part ('' when none),
  // cached per parent element so a big table asks closest() once per row.
  function tableRoleOf(el, ctx) {
    const parent = el.parentElement || el;
    let r = ctx.tableRoles.get(parent);
    if (r === undefined) {
      const table = el.closest('table');
      r = table ? explicitRole(table) : '';
      ctx.tableRoles.set(parent, r);
    }
    return r;
  }

  // HTML-AAM: td is a cell, or a gridcell inside a grid/treegrid.
  function cellRole(el, ctx) {
    const tr = tableRoleOf(el, ctx);
    if (tr === 'grid' || tr === 'treegrid') return 'gridcell';
    if (tr === 'none' || tr === 'presentation') return '';
    return 'cell';
  }

  // HTML-AAM: th is a columnheader or rowheader by scope, else by position:
  // a th in a row that also holds data cells heads that row.
  function headerCellRole(el, ctx) {
    const tr = tableRoleOf(el, ctx);
    if (tr === 'none' || tr === 'presentation') return '';
    const scope = (el.getAttribute('scope') || '').toLowerCase();
    if (scope === 'row' || scope === 'rowgroup') return 'rowheader';
    if (scope === 'col' || scope === 'colgroup') return 'columnheader';
    if (el.closest('thead')) return 'columnheader';
    const row = el.parentElement;
    if (row) for (const c of row.children) if (c.localName === 'td') return 'rowheader';
    return 'columnheader';
  }

  // ---------------------------------------------------------------------------
  // Accessible names (accname 1.2 "Computation steps";
  // HTML-AAM "Accessible Name Computations By HTML Element")
  // ---------------------------------------------------------------------------

  function nameOf(el, ctx) {
    const f = factsOf(el, ctx);
    if (f.name === undefined) {
      const role = roleOf(el, ctx);
      let raw;
      if (NAME_PROHIBITED.has(role)) raw = '';
      else if (sameAsRecursionName(el, role, ctx)) raw = recursionName(el, ctx);
      else raw = nameStep(el, rootState(ctx));
      f.name = clip(normalize(raw), NAME_MAX);
    }
    return f.name;
  }

  // For a visible name-from-content element without root-only sources
  // (labels, legend, caption, ...) the root computation gives the same text
  // as the recursive one its ancestors already did (e.g. a cell inside a
  // row), so both share one cached result.
  const ROOT_ONLY_NAME_TAGS = new Set(['fieldset', 'table', 'figure', 'optgroup']);
  function sameAsRecursionName(el, role, ctx) {
    return NAME_FROM_CONTENT.has(role) && !LABELABLE_TAGS.has(el.localName) &&
      !ROOT_ONLY_NAME_TAGS.has(el.localName) && visibilityOf(el, ctx) !== NONE;
  }

  function recursionName(el, ctx) {
    const f = factsOf(el, ctx);
    if (f.recName === undefined) {
      rootState(ctx);
      f.recName = nameStep(el, ctx.recSt);
    }
    return f.recName;
  }

  // Traversal state of one name computation.
  //   recursion:    computing a descendant's contribution (steps 2C, 2F apply)
  //   inLabelledBy: inside an aria-labelledby traversal (2B not followed again)
  //   allowHidden:  the directly referenced node was hidden, so hidden content counts
  //   skip:         the control being labelled (left out of its own label)
  //   content:      take content even if the role does not (labels, referenced nodes)
  function rootState(ctx) {
    if (!ctx.rootSt) {
      ctx.rootSt = {
        ctx: ctx, recursion: false, inLabelledBy: false, allowHidden: false, skip: null, content: false,
      };
      ctx.recSt = Object.assign({}, ctx.rootSt, { recursion: true });
    }
    return ctx.rootSt;
  }

  function withState(st, changes) {
    // The plain recursion state is shared, so cached results can be keyed on it.
    if (st === st.ctx.rootSt && changes.recursion === true && Object.keys(changes).length === 1) {
      return st.ctx.recSt;
    }
    return Object.assign({}, st, changes);
  }

  function isHiddenForName(el, ctx) {
    return visibilityOf(el, ctx) === NONE;
  }

  // One node's text alternative: accname 1.2 "Computation steps", step 2.
  function nameStep(el, st) {
    const ctx = st.ctx;
    // 2A: hidden nodes contribute nothing, unless the labelledby target was hidden.
    if (st.recursion && !st.allowHidden) {
      const vis = visibilityOf(el, ctx);
      if (vis === NONE) return '';
      // visibility:hidden: the node itself is hidden (its aria-label, title,
      // alt, own text and generated content do not count), but a descendant
      // made visible again is rendered and contributes (a Sphinx permalink
      // anchor's title must not join its heading's name).
      if (vis === SELF_HIDDEN) return contentText(el, st);
    }
    if (st.recursion && el === st.skip) return '';
    // 2B: aria-labelledby, not followed a second time.
    if (!st.inLabelledBy) {
      const lb = labelledByText(el, st);
      if (hasText(lb)) return lb;
    }
    const role = roleOf(el, ctx);
    // 2C: an embedded control inside a label or content contributes its value.
    if (st.recursion || st.inLabelledBy) {
      const v = embeddedControlValue(el, role);
      if (v !== null) return v;
    }
    // 2D: aria-label.
    const label = el.getAttribute('aria-label');
    if (hasText(label)) return label;
    // 2E: host-language label (HTML-AAM name computations).
    const native = nativeName(el, role, st);
    if (hasText(native)) return native;
    // 2F: name from content.
    if (st.recursion || st.inLabelledBy || st.content || NAME_FROM_CONTENT.has(role)) {
      const c = contentText(el, st);
      if (hasText(c)) return c;
    }
    // 2I: tooltip attribute.
    const title = el.getAttribute('title');
    if (hasText(title)) return title;
    // HTML-AAM: placeholder is the last resort for text fields.
    if (!st.recursion && (role === 'textbox' || role === 'searchbox' || role === 'combobox')) {
      const ph = el.getAttribute('placeholder') || el.getAttribute('aria-placeholder');
      if (hasText(ph)) return ph;
    }
    return '';
  }

  function lookupId(el, id) {
    const root = el.getRootNode();
    if (root && typeof root.getElementById === 'function') return root.getElementById(id);
    return document.getElementById(id);
  }

  // accname 1.2 2B: referenced nodes joined by spaces; a hidden referenced
  // node still counts, together with its hidden descendants.
  function labelledByText(el, st) {
    const ids = el.getAttribute('aria-labelledby');
    if (!hasText(ids)) return '';
    const parts = [];
    for (const id of ids.trim().split(/\s+/)) {
      const ref = lookupId(el, id);
      if (!ref) continue;
      const sub = withState(st, {
        recursion: false,
        inLabelledBy: true,
        content: true,
        allowHidden: st.allowHidden || isHiddenForName(ref, st.ctx),
      });
      parts.push(nameStep(ref, sub));
    }
    return parts.join(' ');
  }

  // accname 1.2 2C: value of an embedded textbox, selected option(s) of a
  // combobox/listbox, value of a range. null when el is not such a control.
  function embeddedControlValue(el, role) {
    const tag = el.localName;
    if (role === 'textbox' || role === 'searchbox') {
      if (tag === 'input' || tag === 'textarea') return el.type === 'password' ? '' : el.value;
      return el.textContent || '';
    }
    if (role === 'combobox' || role === 'listbox') {
      if (tag === 'select') {
        return Array.from(el.selectedOptions || []).map((o) => o.label || o.text).join(' ');
      }
      if (tag === 'input') return el.value;
      const sel = el.querySelectorAll('[aria-selected="true"]');
      return Array.from(sel).map((o) => o.textContent || '').join(' ');
    }
    if (RANGE_ROLES.has(role)) {
      const vt = el.getAttribute('aria-valuetext');
      if (hasText(vt)) return vt;
      const vn = el.getAttribute('aria-valuenow');
      if (hasText(vn)) return vn;
      if (tag === 'input' || tag === 'meter' || tag === 'progress') return String(el.value);
      return '';
    }
    return null;
  }

  // HTML-AAM native text alternatives (step 2E).
  function nativeName(el, role, st) {
    const tag = el.localName;
    if (tag === 'input') {
      const type = el.type;
      if (type === 'button' || type === 'submit' || type === 'reset') {
        const v = el.getAttribute('value');
        if (hasText(v)) return v;
        if (!st.recursion) {
          const l = labelsText(el, st);
          if (hasText(l)) return l;
        }
        if (type === 'submit') return 'Submit';
        if (type === 'reset') return 'Reset';
        return '';
      }
      if (type === 'image') {
        return el.getAttribute('alt') || el.getAttribute('value') || el.getAttribute('title') || 'Submit';
      }
      // Without a label, a file input is named by its button's text, as
      // Chromium's accessibility tree (and Playwright) names it.
      if (type === 'file') {
        if (!st.recursion) {
          const l = labelsText(el, st);
          if (hasText(l)) return l;
        }
        return el.multiple ? 'Choose Files' : 'Choose File';
      }
    }
    if (tag === 'img' || tag === 'area') return el.getAttribute('alt') || '';
    if (tag === 'svg') {
      for (const c of el.children) if (c.localName === 'title') return c.textContent || '';
      return '';
    }
    // HTML-AAM: an option is named by its label attribute or its text. Options
    // of a <select> have no box, so take the text directly, not via 2F.
    if (tag === 'option') return el.label || '';
    if (st.recursion || st.inLabelledBy) return '';
    // Root-only sources: labels, legend, caption, figcaption, optgroup label.
    if (LABELABLE_TAGS.has(tag)) return labelsText(el, st);
    if (tag === 'fieldset') return firstChildText(el, 'legend', st);
    if (tag === 'table') return firstChildText(el, 'caption', st);
    if (tag === 'figure') return firstChildText(el, 'figcaption', st);
    if (tag === 'optgroup') return el.getAttribute('label') || '';
    return '';
  }

  // The <label>s of a control. el.labels is not used: Blink computes each
  // element's list by scanning the whole tree and drops the cache on any DOM
  // change, which makes a page of many controls quadratic. Instead each
  // tree (document or shadow root) is scanned once per call.
  function labelsOf(el, ctx) {
    const root = el.getRootNode();
    if (!ctx.labelRoots.has(root)) {
      ctx.labelRoots.add(root);
      const found = root.querySelectorAll ? root.querySelectorAll('label') : [];
      for (let i = 0; i < found.length; i++) {
        const control = found[i].control;
        if (!control) continue;
        const list = ctx.labels.get(control);
        if (list) list.push(found[i]);
        else ctx.labels.set(control, [found[i]]);
      }
    }
    return ctx.labels.get(el) || null;
  }

  // HTML-AAM: the associated <label> elements (for= and wrapping), joined.
  // A hidden label still names its control, as in browsers.
  function labelsText(el, st) {
    const labels = labelsOf(el, st.ctx);
    if (!labels) return '';
    const parts = [];
    for (const label of labels) {
      const sub = withState(st, {
        recursion: true,
        content: true,
        skip: el,
        allowHidden: isHiddenForName(label, st.ctx),
      });
      parts.push(contentText(label, sub));
    }
    return parts.join(' ');
  }

  function firstChildText(el, tag, st) {
    for (const c of el.children) {
      if (c.localName === tag) return contentText(c, withState(st, { recursion: true, content: true }));
    }
    return '';
  }

  // accname 1.2 2F/2G: the text of the children, each computed recursively,
  // with CSS ::before/::after content. Block-level children are separated by
  // spaces. Cached per element for the common (plain) traversal state.
  function contentText(el, st) {
    const ctx = st.ctx;
    const cacheable = !st.skip && !st.allowHidden && !st.inLabelledBy;
    const f = cacheable ? factsOf(el, ctx) : null;
    if (f && f.content !== undefined) return f.content;
    const sub = st.recursion ? st : withState(st, { recursion: true });
    const ownTextVisible = st.allowHidden || visibilityOf(el, ctx) === VISIBLE;
    const pseudo = ownTextVisible ? pseudoContent(el, ctx) : null;
    let out = pseudo ? pseudo.before : '';
    // A treeitem's name is its own label, not the names of the items in its
    // subtree group (APG tree view; Chromium names treeitems this way too).
    const ownsGroups = roleOf(el, ctx) === 'treeitem';
    const add = (k) => {
      if (k.nodeType === TEXT_NODE) {
        if (ownTextVisible) out += k.data;
      } else if (k.nodeType === ELEMENT_NODE) {
        const tag = k.localName;
        if (SKIP_TAGS.has(tag)) return;
        if (ownsGroups && roleOf(k, ctx) === 'group') return;
        const part = sub === ctx.recSt ? recursionName(k, ctx) : nameStep(k, sub);
        out += INLINE_TAGS.has(tag) ? part : ' ' + part + ' ';
      }
    };
    if (hasPlainChildren(el)) {
      for (let k = el.firstChild; k; k = k.nextSibling) add(k);
    } else {
      const kids = childNodesOf(el, ctx);
      for (let i = 0; i < kids.length; i++) add(kids[i]);
    }
    if (pseudo) out += pseudo.after;
    if (f) f.content = out;
    return out;
  }

  // ---------------------------------------------------------------------------
  // CSS generated content (::before / ::after), cheaply
  // ---------------------------------------------------------------------------
  // getComputedStyle on every element is too slow for big pages, so we first
  // collect, per document or shadow root, the selectors of author rules that
  // set `content` on ::before/::after, and only ask for the computed pseudo
  // style of elements matching one of them. Rules in cross-origin style
  // sheets cannot be read and are not seen (a known gap).

  function pseudoSelectorFor(el, ctx) {
    if (ctx.anyPseudo === undefined) notePseudoRoot(document, ctx);
    if (!ctx.anyPseudo) return '';
    const root = el.getRootNode();
    let sel = ctx.pseudoSel.get(root);
    if (sel === undefined) sel = notePseudoRoot(root, ctx);
    return sel;
  }

  // Collects a root's pseudo-content selectors once per call. Shadow roots are
  // noted as the walk enters them, so pages without any such rule never pay
  // for getRootNode().
  function notePseudoRoot(root, ctx) {
    if (ctx.anyPseudo === undefined && root !== document) notePseudoRoot(document, ctx);
    let sel = ctx.pseudoSel.get(root);
    if (sel === undefined) {
      sel = collectPseudoSelectors(root, ctx);
      ctx.pseudoSel.set(root, sel);
      if (sel) ctx.anyPseudo = true;
      else if (ctx.anyPseudo === undefined) ctx.anyPseudo = false;
    }
    return sel;
  }

  function collectPseudoSelectors(root, ctx) {
    const found = [];
    const sheets = [];
    try {
      if (root.styleSheets) for (const s of root.styleSheets) sheets.push(s);
      if (root.adoptedStyleSheets) for (const s of root.adoptedStyleSheets) sheets.push(s);
    } catch (e) { /* no sheets */ }
    const seen = new Set();
    const visit = (sheet) => {
      if (!sheet || seen.has(sheet)) return;
      seen.add(sheet);
      // Constructed sheets are often shared by many shadow roots: scan once.
      let mine = ctx.sheetSel.get(sheet);
      if (mine === undefined) {
        mine = [];
        let rules = null;
        try { rules = sheet.cssRules; } catch (e) { /* cross-origin */ }
        collectRules(rules, mine, visit);
        ctx.sheetSel.set(sheet, mine);
      }
      for (const m of mine) found.push(m);
    };
    sheets.forEach(visit);
    const valid = [];
    const probe = document.createElement('div');
    for (const s of found) {
      try { probe.matches(s); valid.push(s); } catch (e) { /* unsupported selector */ }
    }
    return valid.join(',');
  }

  function collectRules(rules, found, visitSheet) {
    if (!rules) return;
    for (const rule of rules) {
      if (rule.styleSheet) visitSheet(rule.styleSheet); // @import
      if (rule.cssRules && rule.cssRules.length && !rule.selectorText) {
        collectRules(rule.cssRules, found, visitSheet); // @media, @supports, @layer
        continue;
      }
      const text = rule.selectorText;
      if (!text || !/::?(before|after)\b/i.test(text)) continue;
      const content = rule.style && rule.style.getPropertyValue('content');
      if (!content || /^(none|normal|""|'')$/.test(content)) continue;
      const base = text.replace(/::?(before|after)\b/gi, '').trim();
      found.push(base === '' || /(^|,)\s*(,|$)/.test(base) ? '*' : base);
    }
  }

  // {before, after} strings of el's generated content, or null.
  function pseudoContent(el, ctx) {
    const sel = pseudoSelectorFor(el, ctx);
    if (!sel) return null;
    const f = factsOf(el, ctx);
    if (f.pseudo !== undefined) return f.pseudo;
    let p = null;
    let matches = false;
    try { matches = el.matches(sel); } catch (e) { matches = false; }
    if (matches) {
      const before = pseudoText(el, '::before');
      const after = pseudoText(el, '::after');
      if (before || after) p = { before: before, after: after };
    }
    f.pseudo = p;
    return p;
  }

  // The text of a computed `content` value (CSS Generated Content 3): its
  // strings, attr() values and counters as their rendered text, or only the
  // alternative text after "/". Images (url(), gradients, image-set()) have no
  // text: without an alternative they contribute nothing, never their URL.
  function pseudoText(el, which) {
    const cs = getComputedStyle(el, which);
    const value = cs.content;
    if (!value || value === 'none' || value === 'normal' || cs.display === 'none') return '';
    const pieces = [];
    let alt = null;
    let i = 0;
    const push = (s) => (alt !== null ? alt : pieces).push(s);
    while (i < value.length) {
      const ch = value[i];
      if (ch === '"' || ch === "'") {
        const q = readCssString(value, i);
        push(q.text);
        i = q.end;
      } else if (ch === '/') {
        alt = [];
        i++;
      } else if (/[a-zA-Z-]/.test(ch)) {
        let j = i;
        while (j < value.length && /[\w-]/.test(value[j])) j++;
        const ident = value.slice(i, j).toLowerCase();
        if (value[j] !== '(') {
          i = j; // open-quote, no-close-quote, ...: no text
          continue;
        }
        const end = cssFunctionEnd(value, j);
        if (ident === 'attr') push(el.getAttribute(value.slice(j + 1, end - 1).trim().split(/\s/)[0]) || '');
        i = end;
      } else {
        i++;
      }
    }
    const text = (alt !== null ? alt : pieces).join('');
    return cs.display === 'inline' ? text : ' ' + text + ' ';
  }

  // A CSS string starting at value[i] (a quote): {text, end} with escapes undone.
  function readCssString(value, i) {
    const q = value[i++];
    let s = '';
    while (i < value.length && value[i] !== q) {
      if (value[i] === '\\' && i + 1 < value.length) i++;
      s += value[i++];
    }
    return { text: s, end: i + 1 };
  }

  // Index just past the ")" closing the function whose "(" is value[open];
  // strings and nested functions inside are skipped whole.
  function cssFunctionEnd(value, open) {
    let depth = 0;
    let i = open;
    while (i < value.length) {
      const ch = value[i];
      if (ch === '"' || ch === "'") {
        i = readCssString(value, i).end;
        continue;
      }
      if (ch === '(') depth++;
      else if (ch === ')' && --depth === 0) return i + 1;
      i++;
    }
    return value.length;
  }

  // ---------------------------------------------------------------------------
  // States
  // ---------------------------------------------------------------------------

  // 'true' | 'false' | 'mixed' | null (not checkable).
  function checkedState(el, role) {
    if (!CHECKABLE_ROLES.has(role)) return null;
    if (el.localName === 'input' && (el.type === 'checkbox' || el.type === 'radio')) {
      if (el.type === 'checkbox' && el.indeterminate) return 'mixed';
      return el.checked ? 'true' : 'false';
    }
    const a = el.getAttribute('aria-checked');
    if (a === 'true' || a === 'mixed') return a;
    return 'false';
  }

  // Native disabled (incl. disabled fieldset ancestors and optgroups, via
  // :disabled) or aria-disabled="true" on the element or an ancestor
  // (WAI-ARIA 1.2 aria-disabled applies to descendants).
  function isDisabled(el) {
    if (DISABLEABLE_TAGS.has(el.localName)) {
      try { if (el.matches(':disabled')) return true; } catch (e) { /* ignore */ }
    }
    for (let n = el; n; ) {
      if (n.closest('[aria-disabled="true"]')) return true;
      const root = n.getRootNode();
      n = root && root.host ? root.host : null;
    }
    return false;
  }

  // true | false | null (no expanded state).
  function expandedState(el, role) {
    if (!EXPANDABLE_ROLES.has(role)) return null;
    const a = el.getAttribute('aria-expanded');
    if (a === 'true') return true;
    if (a === 'false') return false;
    if (el.localName === 'summary' && isDetailsSummary(el)) return !!el.parentElement.open;
    if (el.localName === 'select' && role === 'combobox') {
      try { return el.matches(':open'); } catch (e) { return false; }
    }
    return null;
  }

  function levelOf(el, role) {
    if (!LEVEL_ROLES.has(role)) return 0;
    const a = parseInt(el.getAttribute('aria-level') || '', 10);
    if (a > 0) return a;
    if (role === 'heading') {
      const m = /^h([1-6])$/.exec(el.localName);
      return m ? Number(m[1]) : 2; // WAI-ARIA 1.2: heading level defaults to 2
    }
    return 0;
  }

  function pressedState(el, role) {
    if (role !== 'button') return null;
    const a = el.getAttribute('aria-pressed');
    return a === 'true' || a === 'mixed' ? a : null;
  }

  function isSelected(el, role) {
    if (!SELECTABLE_ROLES.has(role)) return false;
    if (el.localName === 'option') return !!el.selected;
    return el.getAttribute('aria-selected') === 'true';
  }

  function stateText(el, role, ctx) {
    let s = '';
    const checked = checkedState(el, role);
    if (checked === 'true') s += ' [checked]';
    else if (checked === 'mixed') s += ' [checked=mixed]';
    if ((DISABLE_ROLES.has(role) || DISABLEABLE_TAGS.has(el.localName)) && isDisabled(el)) s += ' [disabled]';
    const expanded = expandedState(el, role);
    if (expanded === true) s += ' [expanded]';
    else if (expanded === false) s += ' [expanded=false]';
    if (el === ctx.active) s += ' [active]';
    const level = levelOf(el, role);
    if (level) s += ' [level=' + level + ']';
    const pressed = pressedState(el, role);
    if (pressed === 'true') s += ' [pressed]';
    else if (pressed === 'mixed') s += ' [pressed=mixed]';
    if (isSelected(el, role)) s += ' [selected]';
    return s;
  }

  // The current value printed after the colon for text fields and ranges.
  function valueOf(el, role, ctx) {
    if (!VALUE_ROLES.has(role)) return '';
    const tag = el.localName;
    let v = '';
    if (tag === 'input' || tag === 'textarea') {
      v = el.value || '';
      if (v && el.type === 'password') return '\u2022\u2022\u2022\u2022\u2022\u2022'; // never print passwords
    } else if (tag === 'select') {
      return '';
    } else if (role === 'slider' || role === 'spinbutton') {
      v = el.getAttribute('aria-valuetext') || el.getAttribute('aria-valuenow') || '';
    } else if (role === 'textbox' || role === 'searchbox') {
      v = contentText(el, rootState(ctx));
    } else if (role === 'combobox') {
      v = el.getAttribute('aria-valuetext') || '';
    }
    return clip(normalize(v), VALUE_MAX);
  }

  // ---------------------------------------------------------------------------
  // Refs
  // ---------------------------------------------------------------------------

  // An element keeps its ref while its role and name stay the same;
  // otherwise it gets a new one and the old one goes stale.
  // Invariant: an element has an info entry only while its number is in
  // state.refs, so the fast path needs no map lookup.
  function refFor(el, role, name) {
    const info = state.info.get(el);
    if (info && info.role === role && info.name === name) return state.prefix + info.id;
    if (info) state.refs.delete(info.n);
    const n = state.nextRef++;
    state.info.set(el, { n: n, id: 'e' + n, role: role, name: name });
    state.refs.set(n, new WeakRef(el));
    return state.prefix + 'e' + n;
  }

  // Drop map entries whose element was collected or detached; their numbers
  // stay below nextRef, so they still resolve to STALE_REF.
  function pruneRefs() {
    if (state.refs.size <= state.pruneAt) return;
    for (const [n, wr] of state.refs) {
      const el = wr.deref();
      if (!el || !el.isConnected) {
        state.refs.delete(n);
        if (el) state.info.delete(el);
      }
    }
    state.pruneAt = Math.max(10000, state.refs.size * 2);
  }

  // {ref, role, name} of any element (refs assigned as needed); nameless
  // elements also get a short `text` so candidates can be told apart.
  function describe(el, ctx) {
    const role = roleOf(el, ctx) || 'generic';
    const name = nameOf(el, ctx);
    const d = { ref: refFor(el, role, name), role: role, name: name };
    if (!name) {
      const text = clip(normalize(contentText(el, rootState(ctx))), 80);
      if (text) d.text = text;
    }
    return d;
  }

  // ---------------------------------------------------------------------------
  // Snapshot: build a tree of {el, role, name, children} where children mix
  // nodes and raw text strings; generic elements are not nodes, their
  // children are hoisted into the parent's list.
  // ---------------------------------------------------------------------------

  function visitElement(el, out, level, ctx, owner) {
    const tag = el.localName;
    if (SKIP_TAGS.has(tag)) return;
    const vis = visibilityOf(el, ctx);
    if (vis === NONE) return;
    let role = vis === VISIBLE ? roleOf(el, ctx) : '';
    if (HOISTED_ROLES.has(role)) {
      if (vis === VISIBLE && role !== 'none' && role !== 'presentation' && isClickableGeneric(el, owner, ctx)) {
        role = 'generic';
      } else {
        hoist(el, out, level, ctx, vis, owner);
        return;
      }
    }
    if (level > ctx.buildDepth) {
      ctx.depthCuts++;
      return;
    }
    const name = role === 'generic' ? '' : nameOf(el, ctx);
    // Nameless images are decoration.
    if (role === 'img' && !name) return;
    const node = { el: el, role: role, name: name, children: [] };
    out.push(node);
    if (role === 'iframe') return;
    if (tag === 'select') {
      buildOptions(el, node.children, level + 1, ctx, node);
      return;
    }
    if (LEAF_TAGS.has(tag)) return;
    // An editor (a contenteditable textbox) shows what it holds, as
    // Playwright does: its paragraphs and links, not only the links.
    if (CHILDREN_PRESENTATIONAL.has(role) && !isEditingHost(el)) {
      const inner = [];
      buildKids(el, inner, level + 1, ctx, true, node);
      node.children = keepInteractive(inner, false, ctx);
      return;
    }
    const cutsBefore = ctx.depthCuts;
    buildKids(el, node.children, level + 1, ctx, true, node);
    // At the depth limit, text alone would misdescribe content whose
    // elements were cut: show nothing instead.
    if (level + 1 > ctx.buildDepth && ctx.depthCuts !== cutsBefore) node.children = [];
  }

  // A generic element: no line; its content joins the parent's list.
  function hoist(el, out, level, ctx, vis, owner) {
    const tag = el.localName;
    if (LEAF_TAGS.has(tag)) return;
    const textVisible = vis === VISIBLE;
    const nameSourceOf = redundantNameTarget(el, owner, ctx);
    if (nameSourceOf !== null) {
      // A <label>/<legend>/<caption>/<figcaption> whose text is already the
      // name of what it labels is not repeated as loose text.
      const inner = [];
      buildKids(el, inner, level, ctx, textVisible, owner);
      const text = normalize(inner.filter((x) => typeof x === 'string').join(''));
      const keep = text === nameSourceOf ? inner.filter((x) => typeof x !== 'string') : inner;
      out.push(' ');
      for (const x of keep) out.push(x);
      out.push(' ');
      return;
    }
    const block = !INLINE_TAGS.has(tag);
    if (block) out.push(' ');
    buildKids(el, out, level, ctx, textVisible, owner);
    if (block) out.push(' ');
  }

  // For a label-like element, the name it provides; null otherwise.
  function redundantNameTarget(el, owner, ctx) {
    const tag = el.localName;
    if (tag === 'label') {
      const control = el.control;
      if (!control || isHiddenForName(control, ctx)) return null;
      return nameOf(control, ctx);
    }
    if (!owner || owner.el !== el.parentElement) return null;
    if ((tag === 'legend' && owner.role === 'group') || (tag === 'caption' && owner.role === 'table') ||
        (tag === 'figcaption' && owner.role === 'figure')) {
      return owner.name;
    }
    return null;
  }

  // The children of el (flat tree), with its generated content. A closed
  // <details> shows only its summary (HTML "The details element").
  function buildKids(el, out, level, ctx, textVisible, owner) {
    const pseudo = textVisible ? pseudoContent(el, ctx) : null;
    if (pseudo && pseudo.before) out.push(pseudo.before);
    if (el.localName === 'details' && !el.open) {
      for (const c of el.children) {
        if (c.localName === 'summary') {
          visitElement(c, out, level, ctx, owner);
          break;
        }
      }
    } else if (hasPlainChildren(el)) {
      for (let k = el.firstChild; k; k = k.nextSibling) {
        const t = k.nodeType;
        if (t === TEXT_NODE) {
          if (textVisible) out.push(k.data);
        } else if (t === ELEMENT_NODE) {
          visitElement(k, out, level, ctx, owner);
        }
      }
    } else {
      const kids = childNodesOf(el, ctx);
      for (let i = 0; i < kids.length; i++) {
        const k = kids[i];
        const t = k.nodeType;
        if (t === TEXT_NODE) {
          if (textVisible) out.push(k.data);
        } else if (t === ELEMENT_NODE) {
          visitElement(k, out, level, ctx, owner);
        }
      }
    }
    if (pseudo && pseudo.after) out.push(pseudo.after);
  }

  // <select> children: options and optgroups, which have no boxes.
  function buildOptions(el, out, level, ctx, owner) {
    if (level > ctx.buildDepth) return;
    for (const c of el.children) {
      if (c.localName !== 'option' && c.localName !== 'optgroup') continue;
      if (optionHidden(c)) continue;
      const role = roleOf(c, ctx);
      if (HOISTED_ROLES.has(role)) continue;
      const node = { el: c, role: role, name: nameOf(c, ctx), children: [] };
      out.push(node);
      if (c.localName === 'optgroup') buildOptions(c, node.children, level + 1, ctx, node);
    }
  }

  // Interactive filter: keep nodes one can act on (and, with context,
  // headings and the named ancestors of kept nodes as their labelling
  // context); hoist the rest. A kept node whose content is only text keeps
  // it, so a clickable `generic` still shows what it says.
  function keepInteractive(items, withContext, ctx) {
    const out = [];
    for (const it of items) {
      if (typeof it === 'string') continue;
      const kids = keepInteractive(it.children, withContext, ctx);
      const actionable = INTERACTIVE_ROLES.has(it.role) || it.role === 'generic' ||
        isClickableGeneric(it.el, null, ctx) || (withContext && it.role === 'heading');
      if (actionable) {
        const textOnly = it.children.every((x) => typeof x === 'string');
        out.push({ el: it.el, role: it.role, name: it.name, children: textOnly ? it.children : kids });
      } else if (withContext && it.name && kids.length) {
        out.push({ el: it.el, role: it.role, name: it.name, children: kids });
      } else {
        for (const k of kids) out.push(k);
      }
    }
    return out;
  }

  // ---------------------------------------------------------------------------
  // Snapshot: render lines
  // ---------------------------------------------------------------------------

  // Join adjacent text strings, collapse whitespace, drop empty runs.
  function mergeText(items) {
    if (items.length === 0) return items;
    if (items.length === 1) {
      if (typeof items[0] !== 'string') return items;
      const t = normalize(items[0]);
      return t ? [t] : [];
    }
    const out = [];
    let buf = null;
    for (const it of items) {
      if (typeof it === 'string') {
        buf = buf === null ? it : buf + it;
      } else {
        if (buf !== null) {
          const t = normalize(buf);
          if (t) out.push(t);
          buf = null;
        }
        out.push(it);
      }
    }
    if (buf !== null) {
      const t = normalize(buf);
      if (t) out.push(t);
    }
    return out;
  }

  // Plain YAML scalar unless it would be misread: then a JSON string.
  function yamlText(s) {
    if (s === '' || /^[\s\-?:,[\]{}#&*!|>'"%@`]/.test(s) || /[\n\r\t]|: |\s#|:$|\s$/.test(s)) {
      return JSON.stringify(s);
    }
    return s;
  }

  function renderItems(items, indent, level, ctx, lines) {
    const kids = mergeText(items);
    for (const k of kids) {
      if (typeof k === 'string') {
        if (level <= ctx.maxDepth) lines.push(indent + '- text: ' + yamlText(k));
      } else {
        renderNode(k, indent, level, ctx, lines);
      }
    }
  }

  // A row named from its content repeats, on its own line, the text of every
  // cell printed with it: on a big table that doubles the output. The name
  // still keys the ref and matches role selectors; it is printed only when
  // an author gave it (aria-label, aria-labelledby, title), or when the
  // interactive filter left cells out (then it is the row's context).
  function nameRepeatsCells(node, ctx) {
    return node.role === 'row' && !ctx.interactive && !hasAuthorName(node.el);
  }

  // ---------------------------------------------------------------------------
  // Compact table rows (docs/snapshot.md): one line per row,
  //   - row [ref=e7]: 1001 | Ada | button "Pay" [ref=e9]
  // cells separated by " | " (a "|" in cell text is written "\|"), plain
  // cells as their text, refs only on what one acts on, written inline as
  // `role "name" [states] [ref=...]`. Rows whose cells hold anything else
  // (fields with values, lists, nested tables) keep the full form.
  // ---------------------------------------------------------------------------

  const CELL_ROLES = new Set(['cell', 'gridcell', 'columnheader', 'rowheader']);
  // Non-interactive content flattened to its text inside a compact cell.
  const FLAT_ROLES = new Set([
    'img', 'image', 'strong', 'emphasis', 'code', 'time', 'mark', 'subscript', 'superscript',
    'deletion', 'insertion', 'term', 'definition', 'paragraph', 'status', 'note',
  ]);

  // The pieces of a compact row's line (per cell, a list of text strings and
  // nodes to write as items), or null when the row needs the full form.
  // Nothing is assigned a ref until the whole row is known to fit.
  function compactRow(node, kids, level, ctx) {
    if (node.role !== 'row' || !kids.length || level + 1 > ctx.maxDepth) return null;
    const cells = [];
    for (const cell of kids) {
      if (typeof cell === 'string' || !CELL_ROLES.has(cell.role)) return null;
      const pieces = [];
      if (cell.role === 'gridcell' || stateText(cell.el, cell.role, ctx) ||
          isClickableGeneric(cell.el, null, ctx) || inCellTable(cell)) {
        // A grid's cells are its widgets (focus, selection), and a header
        // or cell a script made clickable (a sortable column's header:
        // tabindex, onclick or a hand cursor of its own; a table that edits
        // a cell on double-click) is one to act on: each keeps its ref.
        // A cell that only wraps one control named as it is (a calendar's
        // day: gridcell "14" holding button "14") is that control.
        const item = cell.children.every((x) => typeof x === 'string') ? cell : soleControl(cell, ctx);
        if (!item) return null;
        pieces.push(item);
      } else if (!compactContent(cell.children, ctx, pieces)) {
        return null;
      }
      cells.push(pieces);
    }
    return cells;
  }

  // Adds a cell's content to pieces: text, and its interactive elements as
  // nodes. False if something in it does not fit on one line.
  function compactContent(items, ctx, pieces) {
    for (const it of mergeText(items)) {
      if (typeof it === 'string') {
        pieces.push(it);
        // Punctuation right after an element (`repr()).`) stays attached to
        // it: the page has no space there.
        const before = pieces[pieces.length - 2];
        if (before && typeof before !== 'string' && GLUED_PUNCT_RE.test(it) && !spaceBefore(items, it)) {
          pieces[pieces.length - 1] = new String(it);
        }
      } else if (INTERACTIVE_ROLES.has(it.role) || it.role === 'generic') {
        // An iframe's document is spliced in under its own line (tools/snapshot.c).
        if (it.role === 'iframe' || valueOf(it.el, it.role, ctx) || hasInteractive(it.children)) return false;
        pieces.push(it);
      } else if (FLAT_ROLES.has(it.role)) {
        if (!it.children.length) pieces.push(it.name);
        else if (!compactContent(it.children, ctx, pieces)) return false;
      } else {
        return false;
      }
    }
    return true;
  }

  // The one control a stateless cell holds when it holds nothing else and
  // the control has the cell's name and no value or children of its own;
  // else null.
  function soleControl(cell, ctx) {
    const kids = cell.children.filter((x) => typeof x !== 'string' || x.trim());
    const c = kids.length === 1 ? kids[0] : null;
    if (!c || typeof c === 'string' || !INTERACTIVE_ROLES.has(c.role) || c.role === 'iframe') return null;
    if (!cell.name || c.name !== cell.name || stateText(cell.el, cell.role, ctx)) return null;
    if (valueOf(c.el, c.role, ctx) || !c.children.every((x) => typeof x === 'string')) return null;
    return c;
  }

  // A body cell of a table the page listens to for double-clicks.
  function inCellTable(cell) {
    if (cell.role !== 'cell' && cell.role !== 'rowheader') return false;
    const table = cell.el.closest('table');
    return !!table && state.cellTables.has(table);
  }

  const GLUED_PUNCT_RE = /^[).,;:!?\]}\u2019\u201d\u00bb\u2026]/;

  // Whether the raw text that mergeText made into t began with whitespace,
  // after the element before it. items is the list mergeText read.
  function spaceBefore(items, t) {
    for (let i = 1; i < items.length; i++) {
      if (typeof items[i] !== 'string' || typeof items[i - 1] === 'string') continue;
      let raw = '';
      for (let j = i; j < items.length && typeof items[j] === 'string'; j++) raw += items[j];
      if (normalize(raw) === t) return /^\s/.test(raw);
    }
    return true;
  }

  // The text of one compact row. Pieces are text (a String object: text
  // glued to the element before it), and element nodes.
  function compactRowText(cells, ctx) {
    const out = [];
    for (const pieces of cells) {
      let s = '';
      for (const p of pieces) {
        const text = typeof p === 'string' || p instanceof String;
        const part = text ? String(p).replace(/\|/g, '\\|') : compactItem(p, ctx);
        if (part) s += s ? (p instanceof String ? '' : ' ') + part : part;
      }
      out.push(s);
    }
    return out.join(' | ');
  }

  function hasInteractive(items) {
    for (const it of items) {
      if (typeof it === 'string') continue;
      if (INTERACTIVE_ROLES.has(it.role) || it.role === 'generic' || hasInteractive(it.children)) return true;
    }
    return false;
  }

  // `role "name" [states] [ref=...]` (and a link's URL in <> unless it is the name).
  function compactItem(node, ctx) {
    const el = node.el;
    const ref = refFor(el, node.role, node.name);
    ctx.refCount++;
    if (INTERACTIVE_ROLES.has(node.role)) rememberBox(el, el.getBoundingClientRect());
    let s = node.role;
    if (node.name) s += ' ' + JSON.stringify(node.name);
    s += stateText(el, node.role, ctx) + ' [ref=' + ref + ']';
    const url = linkUrl(node);
    if (url) s += ' <' + url.replace(/>/g, '%3E') + '>';
    return s;
  }

  // A link's href as printed after /url:, or '' when there is none or the
  // link's name already is that URL (then it would only repeat the name). A
  // very long one (a download's data: URL holding a whole file) is cut, with
  // its length: an agent clicks the link, it does not read the file here.
  const URL_MAX = 200;
  function linkUrl(node) {
    const el = node.el;
    if (node.role !== 'link' || !el.hasAttribute('href')) return '';
    const href = el.getAttribute('href');
    if (node.name && (node.name === href || node.name === el.href)) return '';
    if (href.length > URL_MAX) return href.slice(0, 100) + '… (' + href.length + ' characters)';
    return href;
  }

  function renderNode(node, indent, level, ctx, lines) {
    if (level > ctx.maxDepth) return;
    // A nameless row group (thead, tbody) says nothing a reader needs: its rows
    // take its place.
    if (node.role === 'rowgroup' && !node.name) {
      renderItems(node.children, indent, level, ctx, lines);
      return;
    }
    const el = node.el;
    const ref = refFor(el, node.role, node.name);
    ctx.refCount++;
    // Layout is clean while snapshotting, so this read is cheap; it lets a
    // click on this element skip the frame wait of the stability check.
    if (INTERACTIVE_ROLES.has(node.role)) rememberBox(el, el.getBoundingClientRect());
    let kids = mergeText(node.children);
    let line = indent + '- ' + node.role;
    if (node.name && !nameRepeatsCells(node, ctx)) line += ' ' + JSON.stringify(node.name);
    line += stateText(el, node.role, ctx) + ' [ref=' + ref + ']';
    const row = compactRow(node, kids, level, ctx);
    if (row) {
      const text = compactRowText(row, ctx);
      lines.push(/\S/.test(text) ? line + ': ' + text : line);
      return;
    }
    if (node.role === 'iframe') {
      const src = el.src || el.getAttribute('src') || (el.hasAttribute('srcdoc') ? 'about:srcdoc' : '');
      ctx.iframes.push({ ref: ref, src: src });
    }
    // At the depth limit only a text-only content is shown (inline).
    if (level >= ctx.maxDepth && kids.some((k) => typeof k !== 'string')) kids = [];
    // A node whose content is, or starts with, its name does not repeat it
    // (an expanded treeitem: its label, then its group).
    if (kids.length && typeof kids[0] === 'string' && kids[0] === node.name) kids = kids.slice(1);
    const props = [];
    const url = linkUrl(node);
    if (url) props.push('/url: ' + yamlText(url));
    const value = valueOf(el, node.role, ctx);
    if (!props.length && !kids.length) {
      lines.push(value ? line + ': ' + yamlText(value) : line);
      return;
    }
    if (!props.length && kids.length === 1 && typeof kids[0] === 'string') {
      lines.push(line + ': ' + yamlText(kids[0]));
      return;
    }
    const at = lines.length;
    lines.push(line);
    const inner = indent + '  ';
    for (const p of props) lines.push(inner + '- ' + p);
    renderItems(kids, inner, level + 1, ctx, lines);
    if (lines.length > at + 1) lines[at] = line + ':';
  }

  // ---------------------------------------------------------------------------
  // Target resolution
  // ---------------------------------------------------------------------------

  const REF_RE = /^(f\d+)?e(\d+)$/;

  // {el} or {error}. Never throws for bad input.
  function resolveTarget(target, ctx) {
    if (typeof target !== 'string' || !target.trim()) {
      return err('INVALID_PARAMETERS', 'target must be a non-empty string (a ref like e12 or a selector)');
    }
    const t = target.trim();
    const m = REF_RE.exec(t);
    if (m) return resolveRef(t, m[1] || '', Number(m[2]));
    let kind = 'css';
    let body = t;
    if (t.startsWith('css=')) body = t.slice(4);
    else if (t.startsWith('xpath=')) { kind = 'xpath'; body = t.slice(6); }
    else if (t.startsWith('//') || t.startsWith('(//')) kind = 'xpath';
    else if (t.startsWith('role=')) { kind = 'role'; body = t.slice(5); }
    else if (t.startsWith('text=')) { kind = 'text'; body = t.slice(5); }
    if (!body.trim()) return err('INVALID_PARAMETERS', 'empty selector: ' + t);
    let found;
    if (kind === 'css') found = queryCss(body.trim());
    else if (kind === 'xpath') found = queryXPath(body.trim());
    else if (kind === 'role') found = queryRole(body, ctx);
    else found = queryText(body, ctx);
    if (found.error) return found;
    const list = found.list;
    if (!list.length) {
      return err('ELEMENT_NOT_FOUND', 'no element matches ' + t +
        '; take a snapshot (browser_snapshot) to see the page', { retry: false });
    }
    if (list.length > 1) {
      return err('ELEMENT_AMBIGUOUS', t + ' matches ' + list.length +
        ' elements; use one of the candidate refs or a more specific selector', {
        count: list.length,
        candidates: list.slice(0, CANDIDATES_MAX).map((el) => describe(el, ctx)),
      });
    }
    return { el: list[0] };
  }

  function resolveRef(t, prefix, n) {
    if (prefix !== state.prefix && prefix !== '') {
      return err('ELEMENT_NOT_FOUND', 'ref ' + t + ' does not belong to this frame');
    }
    const wr = state.refs.get(n);
    const el = wr && wr.deref();
    if (el && el.isConnected) return { el: el };
    if (n < state.nextRef) {
      return err('STALE_REF', 'ref ' + t +
        ' is stale: the element is gone or has changed since the snapshot; ' +
        'take a new snapshot (browser_snapshot) and use a current ref', { ref: t });
    }
    return err('ELEMENT_NOT_FOUND', 'ref ' + t + ' was never issued on this page; ' +
      'take a snapshot (browser_snapshot) to get refs', { ref: t });
  }

  // All open shadow roots below root, depth first.
  function openShadowRoots(root, acc) {
    const all = root.querySelectorAll('*');
    for (let i = 0; i < all.length; i++) {
      const sr = all[i].shadowRoot;
      if (sr) {
        acc.push(sr);
        openShadowRoots(sr, acc);
      }
    }
    return acc;
  }

  // CSS, run in the document and in every open shadow root (each compound
  // selector must match inside one tree; combinators do not cross roots).
  function queryCss(sel) {
    try {
      document.querySelector(sel);
    } catch (e) {
      return err('INVALID_PARAMETERS', 'invalid CSS selector: ' + sel);
    }
    const seen = new Set();
    const list = [];
    const roots = openShadowRoots(document, [document]);
    for (const root of roots) {
      const found = root.querySelectorAll(sel);
      for (let i = 0; i < found.length; i++) {
        if (!seen.has(found[i])) {
          seen.add(found[i]);
          list.push(found[i]);
        }
      }
    }
    return { list: list };
  }

  function queryXPath(expr) {
    let res;
    try {
      res = document.evaluate(expr, document, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
    } catch (e) {
      return err('INVALID_PARAMETERS', 'invalid XPath expression: ' + expr);
    }
    const seen = new Set();
    const list = [];
    for (let i = 0; i < res.snapshotLength; i++) {
      let n = res.snapshotItem(i);
      if (n.nodeType === 2) n = n.ownerElement; // attribute
      else if (n.nodeType !== ELEMENT_NODE) n = n.parentElement; // text, comment
      if (n && !seen.has(n)) {
        seen.add(n);
        list.push(n);
      }
    }
    return { list: list };
  }

  // A string matcher. Quoted: exact after whitespace normalization (case
  // rules: `caseSensitiveQuoted`, overridable with a trailing i or s flag);
  // /re/flags: regular expression; otherwise case-insensitive substring.
  function makeMatcher(raw, caseSensitiveQuoted) {
    const s = raw.trim();
    const q = /^(["'])((?:\\.|(?!\1)[^\\])*)\1\s*([is]?)$/.exec(s);
    if (q) {
      const text = normalize(q[2].replace(/\\(.)/g, '$1'));
      const cs = q[3] ? q[3] === 's' : caseSensitiveQuoted;
      if (cs) return (v) => normalize(v) === text;
      const lower = text.toLowerCase();
      return (v) => normalize(v).toLowerCase() === lower;
    }
    const r = /^\/(.+)\/([dgimsuy]*)$/.exec(s);
    if (r) {
      let re;
      try { re = new RegExp(r[1], r[2].replace('g', '')); } catch (e) { return null; }
      return (v) => re.test(normalize(v));
    }
    const lower = normalize(s).toLowerCase();
    return (v) => normalize(v).toLowerCase().includes(lower);
  }

  // role=button[name="Save"][pressed][level=2] ...
  function parseRoleSelector(body) {
    const m = /^\s*([a-zA-Z][a-zA-Z0-9-]*)\s*/.exec(body);
    if (!m) return null;
    const sel = { role: m[1].toLowerCase(), name: null, states: [] };
    let rest = body.slice(m[0].length);
    const ATTR_RE = new RegExp(
      '^\\[\\s*([a-zA-Z-]+)\\s*(?:=\\s*(' +
      '"(?:\\\\.|[^"\\\\])*"\\s*[is]?|' + "'(?:\\\\.|[^'\\\\])*'\\s*[is]?|" +
      '/(?:\\\\.|[^/\\\\])+/[a-z]*|[^\\]]*' + '))?\\s*\\]\\s*');
    while (rest.length) {
      const a = ATTR_RE.exec(rest);
      if (!a) return null;
      rest = rest.slice(a[0].length);
      const key = a[1].toLowerCase();
      const value = a[2] === undefined ? null : a[2].trim();
      if (key === 'name') {
        if (value === null) return null;
        sel.name = makeMatcher(value, false);
        if (!sel.name) return null;
        continue;
      }
      const v = value === null ? 'true' : value.replace(/^["']|["']$/g, '').toLowerCase();
      if (key === 'level') {
        if (!/^\d+$/.test(v)) return null;
        sel.states.push({ key: key, value: Number(v) });
      } else if (['checked', 'pressed'].includes(key) && ['true', 'false', 'mixed'].includes(v)) {
        sel.states.push({ key: key, value: v });
      } else if (['disabled', 'expanded', 'selected'].includes(key) && ['true', 'false'].includes(v)) {
        sel.states.push({ key: key, value: v === 'true' });
      } else {
        return null;
      }
    }
    return sel;
  }

  function stateMatches(el, role, s) {
    switch (s.key) {
      case 'checked': return (checkedState(el, role) || 'false') === s.value;
      case 'pressed': return (pressedState(el, role) || 'false') === s.value;
      case 'disabled': return isDisabled(el) === s.value;
      case 'expanded': return (expandedState(el, role) === true) === s.value;
      case 'selected': return isSelected(el, role) === s.value;
      case 'level': return levelOf(el, role) === s.value;
      default: return false;
    }
  }

  // Pre-order walk of rendered elements in the flat tree (hidden subtrees pruned).
  function forEachRendered(el, ctx, fn) {
    const tag = el.localName;
    if (SKIP_TAGS.has(tag)) return;
    const vis = visibilityOf(el, ctx);
    if (vis === NONE) return;
    if (vis === VISIBLE) fn(el);
    if (tag === 'select') {
      for (const o of el.querySelectorAll('option,optgroup')) if (!optionHidden(o)) fn(o);
      return;
    }
    if (LEAF_TAGS.has(tag)) return;
    if (tag === 'details' && !el.open) {
      for (const c of el.children) if (c.localName === 'summary') return forEachRendered(c, ctx, fn);
      return;
    }
    const kids = childNodesOf(el, ctx);
    for (let i = 0; i < kids.length; i++) {
      if (kids[i].nodeType === ELEMENT_NODE) forEachRendered(kids[i], ctx, fn);
    }
  }

  function queryRole(body, ctx) {
    const sel = parseRoleSelector(body);
    if (!sel) {
      return err('INVALID_PARAMETERS', 'invalid role selector: role=' + body +
        ' (expected e.g. role=button[name="Save"];' +
        ' states: checked, disabled, expanded, pressed, selected, level)');
    }
    const list = [];
    if (!document.documentElement) return { list: list };
    forEachRendered(document.documentElement, ctx, (el) => {
      const role = roleOf(el, ctx);
      if (role !== sel.role) return;
      if (sel.name && !sel.name(nameOf(el, ctx))) return;
      for (const s of sel.states) if (!stateMatches(el, role, s)) return;
      list.push(el);
    });
    return { list: list };
  }

  // text=...: the deepest rendered elements whose visible text matches;
  // a match inside a control (e.g. a span in a button) is retargeted to the
  // control when the control's text matches too.
  function queryText(body, ctx) {
    const matcher = makeMatcher(body, true);
    if (!matcher) return err('INVALID_PARAMETERS', 'invalid text selector: text=' + body);
    const texts = new Map();
    const matches = [];
    // Returns [text, matchedBelow].
    const visit = (el) => {
      const tag = el.localName;
      if (SKIP_TAGS.has(tag)) return ['', false];
      const vis = visibilityOf(el, ctx);
      if (vis === NONE) return ['', false];
      let text = '';
      let below = false;
      if (tag === 'input') {
        if (['button', 'submit', 'reset'].includes(el.type)) text = el.value || '';
      } else if (!LEAF_TAGS.has(tag)) {
        const kids = tag === 'details' && !el.open
          ? Array.from(el.children).filter((c) => c.localName === 'summary').slice(0, 1)
          : childNodesOf(el, ctx);
        for (let i = 0; i < kids.length; i++) {
          const k = kids[i];
          if (k.nodeType === TEXT_NODE) {
            if (vis === VISIBLE) text += k.data;
          } else if (k.nodeType === ELEMENT_NODE) {
            const r = visit(k);
            text += INLINE_TAGS.has(k.localName) ? r[0] : ' ' + r[0] + ' ';
            below = below || r[1];
          }
        }
      }
      texts.set(el, text);
      if (!below && vis === VISIBLE && hasText(text) && matcher(text)) {
        matches.push(el);
        return [text, true];
      }
      return [text, below];
    };
    if (document.documentElement) visit(document.documentElement);
    // Ancestors are shared by many matches: test each one once.
    const ancestorMatches = new Map();
    const ancestorMatch = (p) => {
      let m = ancestorMatches.get(p);
      if (m === undefined) {
        m = matcher(texts.get(p));
        ancestorMatches.set(p, m);
      }
      return m;
    };
    const seen = new Set();
    const list = [];
    for (let el of matches) {
      let hops = 0;
      for (let p = composedParent(el); p && p.nodeType === ELEMENT_NODE && texts.has(p) && hops < 5;
        p = composedParent(p), hops++) {
        if (!ancestorMatch(p)) break;
        if (INTERACTIVE_ROLES.has(roleOf(p, ctx))) { el = p; break; }
      }
      if (!seen.has(el)) {
        seen.add(el);
        list.push(el);
      }
    }
    return { list: list };
  }

  // ---------------------------------------------------------------------------
  // Actionability
  // ---------------------------------------------------------------------------

  function viewportSize() {
    const de = document.documentElement;
    return {
      w: (de && de.clientWidth) || window.innerWidth,
      h: (de && de.clientHeight) || window.innerHeight,
    };
  }

  function rectInside(r, left, top, right, bottom) {
    return r.left >= left - 0.5 && r.top >= top - 0.5 && r.right <= right + 0.5 && r.bottom <= bottom + 0.5;
  }

  // Fully inside the viewport and inside every scrolled ancestor's box.
  function isFullyInView(el) {
    const r = el.getBoundingClientRect();
    const vp = viewportSize();
    if (!rectInside(r, 0, 0, vp.w, vp.h)) return false;
    for (let p = composedParent(el); p && p.nodeType === ELEMENT_NODE; p = composedParent(p)) {
      if (p === document.body || p === document.documentElement) break;
      if (p.scrollHeight > p.clientHeight + 1 || p.scrollWidth > p.clientWidth + 1) {
        const pr = p.getBoundingClientRect();
        const left = pr.left + p.clientLeft;
        const top = pr.top + p.clientTop;
        const bottom = top + p.clientHeight;
        if (p.clientHeight > 0 && !rectInside(r, left, top, left + p.clientWidth, bottom)) return false;
      }
    }
    return true;
  }

  function scrollIntoViewIfNeeded(el) {
    if (!isFullyInView(el)) {
      el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
    }
  }

  // Center of the first non-empty client rect, clamped into the viewport.
  function clickPoint(el) {
    const rects = el.getClientRects();
    let r = null;
    for (let i = 0; i < rects.length; i++) {
      if (rects[i].width > 0 && rects[i].height > 0) { r = rects[i]; break; }
    }
    if (!r) r = el.getBoundingClientRect();
    const vp = viewportSize();
    const left = Math.max(r.left, 0);
    const right = Math.min(r.right, vp.w);
    const top = Math.max(r.top, 0);
    const bottom = Math.min(r.bottom, vp.h);
    if (right <= left || bottom <= top) return null; // outside the viewport
    return { x: round2((left + right) / 2), y: round2((top + bottom) / 2) };
  }

  function round2(v) {
    return Math.round(v * 100) / 100;
  }

  function isRenderedBox(el) {
    const r = el.getBoundingClientRect();
    if (!(r.width > 0 && r.height > 0)) return false;
    if (typeof el.checkVisibility === 'function') return el.checkVisibility(VISIBILITY_PROPERTY);
    return getComputedStyle(el).visibility === 'visible';
  }

  // A requestAnimationFrame tick; falls back to a timer where frames do not
  // run (background tabs) so the check cannot hang. Once a wait has timed
  // out, the fallback is one frame's time instead of 100 ms until a frame
  // runs again: a background tab in extension mode reports itself visible
  // but renders nothing, and every click there cost 100 ms more.
  function nextFrame() {
    return new Promise((resolve) => {
      let done = false;
      const finish = (stalled) => {
        if (!done) {
          done = true;
          state.framesStalled = stalled;
          resolve();
        }
      };
      requestAnimationFrame(() => finish(false));
      setTimeout(() => finish(true), state.framesStalled ? FRAME_INTERVAL_MS : 100);
    });
  }

  // One frame at 60 Hz, rounded up: the pages we drive are focus-emulated,
  // so they render at the display rate and are never throttled.
  const FRAME_INTERVAL_MS = 17;

  function rememberBox(el, r) {
    state.boxes.set(el, { r: r, t: performance.now() });
  }

  function sameRect(a, b) {
    return a.x === b.x && a.y === b.y && a.width === b.width && a.height === b.height;
  }

  // The element's box once it is the same in two consecutive animation
  // frames, or null if it still moves. The box read now is the current
  // frame's (animations only advance at a frame's start, and reading forces
  // layout of any pending DOM change), so a box equal to it at the next
  // frame's rAF is stable across two frames after one wait, not two. Only
  // an element that moved costs a further frame: its second and third
  // samples must then agree. Callers retry on null.
  //
  // A box remembered from at least one frame interval ago (the snapshot that
  // handed out the ref, or an earlier attempt) that equals the box now has
  // already held across two frames, so the usual agent loop (snapshot, then
  // click) waits for no frame at all.
  async function stableBox(el) {
    const now = el.getBoundingClientRect();
    const seen = state.boxes.get(el);
    rememberBox(el, now);
    if (seen && performance.now() - seen.t >= FRAME_INTERVAL_MS && sameRect(seen.r, now)) return now;
    await nextFrame();
    const next = el.getBoundingClientRect();
    if (sameRect(now, next)) return next;
    await nextFrame();
    const last = el.getBoundingClientRect();
    return sameRect(next, last) ? last : null;
  }

  // The topmost element at (x, y), followed down through open shadow roots.
  function deepElementFromPoint(x, y) {
    let hit = document.elementFromPoint(x, y);
    while (hit && hit.shadowRoot) {
      const inner = hit.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    return hit;
  }

  function composedContains(ancestor, node) {
    for (let n = node; n; n = composedParent(n)) if (n === ancestor) return true;
    return false;
  }

  // The hit lands on the element, inside it (flat tree), or on a label of it.
  function hitReaches(el, hit) {
    if (composedContains(el, hit)) return true;
    for (let n = hit; n; n = composedParent(n)) {
      if (n.nodeType === ELEMENT_NODE && n.localName === 'label' && n.control === el) return true;
    }
    return false;
  }

  // A control drawn by its label: a visually hidden checkbox or radio (1px,
  // clipped) beside a styled <label>, as jQuery UI's checkboxradio and many
  // CSS frameworks make them, is covered where it sits; a user clicks the
  // label, which activates the control (HTML label activation behavior).
  // The centre of el's first rendered label whose hit test reaches el, or
  // null when el has no such label.
  function labelPoint(el) {
    const labels = el.labels;
    if (!labels) return null;
    for (const l of labels) {
      if (!isRenderedBox(l)) continue;
      const p = clickPoint(l);
      if (!p) continue;
      const hit = deepElementFromPoint(p.x, p.y);
      if (hit && hitReaches(el, hit)) return p;
    }
    return null;
  }

  // A code editor's input field (CodeMirror's, Ace's, Monaco's): a text field
  // the editor keeps under its cursor, a few pixels wide or high as shown
  // (itself, or clipped by a wrapper), covered by the lines it draws, which
  // take the click and give the field focus. A user clicks the editor there;
  // so does a click on the field: at the centre of what shows of it, the
  // cursor's place. Only when what covers it is the editor's own surface:
  // the field and the hit share an ancestor at most PROXY_LEVELS above the
  // field (a page's overlay does not). The point, or null.
  const PROXY_SIZE = 4, PROXY_LEVELS = 3;
  function proxyFieldPoint(el, hit) {
    const text = el.localName === 'textarea' || (el.localName === 'input' && TEXT_INPUT_TYPES.has(el.type));
    if (!text) return null;
    let owner = null;
    let a = composedParent(el);
    for (let i = 0; i < PROXY_LEVELS && a && a.nodeType === ELEMENT_NODE && !owner; i++, a = composedParent(a)) {
      if (a === document.body || a === document.documentElement) return null;
      if (composedContains(a, hit)) owner = a;
    }
    if (!owner) return null;
    // What shows of the field: its box within its clipping wrappers.
    const b = el.getBoundingClientRect();
    let l = b.left, t = b.top, r = b.right, btm = b.bottom;
    a = composedParent(el);
    for (let i = 0; i < PROXY_LEVELS && a && a.nodeType === ELEMENT_NODE; i++, a = composedParent(a)) {
      const cs = getComputedStyle(a);
      if (cs.overflowX === 'visible' && cs.overflowY === 'visible') continue;
      const c = a.getBoundingClientRect();
      l = Math.max(l, c.left); t = Math.max(t, c.top); r = Math.min(r, c.right); btm = Math.min(btm, c.bottom);
    }
    if (r < l || btm < t) return null;
    if (r - l > PROXY_SIZE && btm - t > PROXY_SIZE) return null;
    const x = Math.min(Math.max((l + r) / 2, 0), window.innerWidth - 1);
    const y = Math.min(Math.max((t + btm) / 2, 0), window.innerHeight - 1);
    const at = deepElementFromPoint(x, y);
    return at && composedContains(owner, at) ? { x: round2(x), y: round2(y) } : null;
  }

  // `<div id="consent">`, or `<div class="a b">` without an id, or `<div>`.
  function describeTag(el) {
    const tag = el.localName;
    if (el.id) return '<' + tag + ' id="' + el.id + '">';
    const cls = (el.getAttribute('class') || '').trim().replace(/\s+/g, ' ');
    if (cls) return '<' + tag + ' class="' + clip(cls, 60) + '">';
    for (let p = composedParent(el); p && p.nodeType === ELEMENT_NODE; p = composedParent(p)) {
      if (p.id) return '<' + tag + '> in <' + p.localName + ' id="' + p.id + '">';
    }
    return '<' + tag + '>';
  }

  // A <label> stands for its control when typing.
  function retargetToControl(el) {
    if (el.localName === 'label' && el.control) return el.control;
    return el;
  }

  // null when el takes typed text; else an error.
  function editabilityError(el) {
    const tag = el.localName;
    if (tag === 'input') {
      if (!TEXT_INPUT_TYPES.has(el.type)) {
        return err('ELEMENT_NOT_EDITABLE',
          'element is an <input type=' + el.type + '>, which does not take text', { retry: false });
      }
      if (el.readOnly) return err('ELEMENT_NOT_EDITABLE', 'element is read-only', { retry: true });
    } else if (tag === 'textarea') {
      if (el.readOnly) return err('ELEMENT_NOT_EDITABLE', 'element is read-only', { retry: true });
    } else if (!el.isContentEditable) {
      return err('ELEMENT_NOT_EDITABLE',
        'element is a <' + tag + '>, not an input, textarea or contenteditable element', { retry: false });
    }
    if (el.getAttribute('aria-readonly') === 'true') {
      return err('ELEMENT_NOT_EDITABLE', 'element is read-only (aria-readonly)', { retry: true });
    }
    return null;
  }

  function withRetry(result, retry) {
    if (result.error && result.error.retry === undefined) result.error.retry = retry;
    return result;
  }

  async function actionPointImpl(target, opts) {
    const ctx = newContext();
    const r = resolveTarget(target, ctx);
    if (r.error) return withRetry(r, false);
    let el = r.el;
    if (opts.editable) el = retargetToControl(el);
    const info = describe(el, ctx);
    const success = (p) => ({
      x: p.x, y: p.y, ref: info.ref, role: info.role, name: info.name, tag: el.localName,
      text: info.text, focused: document.hasFocus(),
    });

    if (opts.force) {
      scrollIntoViewIfNeeded(el);
      const b = el.getBoundingClientRect();
      return success({ x: round2(b.left + b.width / 2), y: round2(b.top + b.height / 2) });
    }
    if (!isRenderedBox(el)) {
      return err('ELEMENT_NOT_VISIBLE', 'element is not visible (no box, or hidden by CSS)', { retry: true });
    }
    if (isDisabled(el)) return err('ELEMENT_NOT_CLICKABLE', 'element is disabled', { retry: true });
    if (opts.editable) {
      const e = editabilityError(el);
      if (e) return e;
    }
    // noScroll: the point where the element is now, or an error at once
    // (a drag asks whether its start is still in view after its end was
    // scrolled into view).
    if (opts.noScroll && !isFullyInView(el)) {
      return err('ELEMENT_NOT_VISIBLE', 'element is outside the viewport', { retry: false });
    }
    scrollIntoViewIfNeeded(el);
    const second = await stableBox(el);
    if (!el.isConnected) {
      return err('ELEMENT_NOT_FOUND', 'element was removed from the page', { retry: true });
    }
    if (!second) {
      return err('ELEMENT_NOT_CLICKABLE', 'element is not stable: it is still moving or resizing',
        { retry: true });
    }
    if (!(second.width > 0 && second.height > 0)) {
      return err('ELEMENT_NOT_VISIBLE', 'element is not visible (empty box)', { retry: true });
    }
    const p = clickPoint(el);
    if (!p) return err('ELEMENT_NOT_VISIBLE', 'element is outside the viewport', { retry: true });
    const hit = deepElementFromPoint(p.x, p.y);
    if (!hit) return err('ELEMENT_NOT_VISIBLE', 'element is outside the viewport', { retry: true });
    if (!hitReaches(el, hit)) {
      const lp = labelPoint(el);
      if (lp) return success(lp);
      const proxy = proxyFieldPoint(el, hit);
      if (proxy) return success(proxy);
      return err('ELEMENT_NOT_CLICKABLE', 'covered by ' + describeTag(hit), { retry: true });
    }
    if (nestedControlAt(el, hit, ctx)) {
      const own = ownContentPoint(el, ctx);
      if (own) return success(own);
    }
    return success(p);
  }

  // True when the hit lands inside another control nested in el (an
  // expanded treeitem's centre is on one of its child items, a menuitem's
  // on its submenu), so clicking there would act on that control instead.
  function nestedControlAt(el, hit, ctx) {
    if (!composedContains(el, hit)) return false; // on a label of el
    for (let n = hit; n && n !== el; n = composedParent(n)) {
      if (n.nodeType === ELEMENT_NODE && INTERACTIVE_ROLES.has(roleOf(n, ctx)) &&
          !labelsControl(n, el, ctx)) return true;
    }
    return false;
  }

  // True when the nested control n is el's own label, not another control:
  // a tab whose text is a link (jQuery UI tabs, Bootstrap's nav links) is
  // named by that link, and clicking the link is clicking the tab. Moving
  // off it to el's other content could land on a close icon instead.
  function labelsControl(n, el, ctx) {
    if (n.id && (el.getAttribute('aria-labelledby') || '').split(/\s+/).includes(n.id)) return true;
    const name = nameOf(el, ctx);
    return name !== '' && nameOf(n, ctx) === name;
  }

  // The centre of el's own content: its first visible text or element child
  // that is not itself (or inside) a nested control or group, where the hit
  // test reaches el without crossing another control. null if none.
  function ownContentPoint(el, ctx) {
    const kids = childNodesOf(el, ctx);
    const vp = viewportSize();
    for (let i = 0; i < kids.length; i++) {
      const k = kids[i];
      let r = null;
      if (k.nodeType === TEXT_NODE && hasText(k.data)) {
        const range = document.createRange();
        range.selectNodeContents(k);
        r = range.getBoundingClientRect();
      } else if (k.nodeType === ELEMENT_NODE) {
        const role = roleOf(k, ctx);
        if (INTERACTIVE_ROLES.has(role) || role === 'group') continue;
        r = k.getBoundingClientRect();
      }
      if (!r || !(r.width > 0 && r.height > 0)) continue;
      const x = round2(Math.min(Math.max((r.left + r.right) / 2, 0), vp.w - 1));
      const y = round2(Math.min(Math.max((r.top + r.bottom) / 2, 0), vp.h - 1));
      const hit = deepElementFromPoint(x, y);
      if (hit && hitReaches(el, hit) && !nestedControlAt(el, hit, ctx)) return { x: x, y: y };
    }
    return null;
  }

  function prepareTypingImpl(target, opts) {
    const ctx = newContext();
    const r = resolveTarget(target, ctx);
    if (r.error) return withRetry(r, false);
    const el = retargetToControl(r.el);
    if (isDisabled(el)) return err('ELEMENT_NOT_EDITABLE', 'element is disabled', { retry: true });
    if (el.localName === 'input' && VALUE_FORMATS[el.type] && typeof opts.text === 'string') {
      return setFormattedValue(el, opts.text, ctx);
    }
    const e = editabilityError(el);
    if (e) return e;
    // Typing without clear goes where the caret is: in a focused field, or
    // in an editing host that holds the page's selection while something
    // else has focus (an editor's toolbar button, for a moment after its
    // click); anywhere else it goes at the end.
    const keepCaret = deepActiveElement() === el || selectionInside(el);
    el.focus();
    if (opts.clear) {
      selectAllContent(el);
    } else if (!keepCaret) {
      caretToEnd(el);
    }
    startTypingProbe(el);
    const info = describe(el, ctx);
    return { ok: true, ref: info.ref, role: info.role, name: info.name, focused: document.hasFocus() };
  }

  // What reached a field while it was typed into (browser_type): its text
  // before, and how many key and input events the page got. A page that
  // filters, formats or consumes what is typed changes the text or sees
  // the events; a field that took nothing sees neither. Listeners on the
  // window in the capture phase, which every such event passes first.
  const TYPING_EVENTS = ['keydown', 'keypress', 'beforeinput', 'input', 'textInput'];
  let typingProbe = null;
  function fieldText(el) {
    return el.localName === 'input' || el.localName === 'textarea' ? el.value : el.innerText;
  }
  function stopTypingProbe() {
    if (!typingProbe) return null;
    for (const t of TYPING_EVENTS) window.removeEventListener(t, typingProbe.count, true);
    const p = typingProbe;
    typingProbe = null;
    return p;
  }
  function startTypingProbe(el) {
    stopTypingProbe();
    const probe = { el, before: fieldText(el), events: 0 };
    probe.count = () => { probe.events++; };
    for (const t of TYPING_EVENTS) window.addEventListener(t, probe.count, true);
    typingProbe = probe;
  }
  // {before, events} of the last prepareTyping, once; null when none.
  function typingReport() {
    const p = stopTypingProbe();
    return p ? { before: p.before, events: p.events } : null;
  }

  // Inputs whose value has one fixed format, which typed text does not fill:
  // Chromium's date and time fields take key presses segment by segment in
  // the locale's order, and color and range inputs take none. Their value is
  // set as a user's pick in the control sets it; what it is set to must be
  // the value format, as HTML defines it.
  const VALUE_FORMATS = {
    date: 'YYYY-MM-DD, as "2011-10-11"',
    time: 'HH:MM or HH:MM:SS in 24 hours, as "20:04"',
    'datetime-local': 'YYYY-MM-DDTHH:MM, as "2011-10-11T20:04"',
    month: 'YYYY-MM, as "2011-10"',
    week: 'YYYY-Www, as "2011-W41"',
    color: '#rrggbb in hex, as "#ff8800"',
    range: 'a number',
  };

  // Set el's value to text and fire input and change, as the control's own
  // picker does; a value the input does not take as it is (the browser
  // sanitizes it to something else) is refused and the old value stays.
  function setFormattedValue(el, text, ctx) {
    if (el.readOnly) return err('ELEMENT_NOT_EDITABLE', 'element is read-only', { retry: true });
    const type = el.type;
    let want = text.trim();
    if (type === 'color') want = want.toLowerCase();
    const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
    const old = el.value;
    setter.call(el, want);
    const took = type === 'range' ? want !== '' && Number(el.value) === Number(want) : el.value === want;
    if (!took) {
      setter.call(el, old);
      let bounds = '';
      if (el.min || el.max) bounds = ' between ' + (el.min || '…') + ' and ' + (el.max || '…');
      if (el.step && el.step !== 'any' && type === 'range') bounds += ' in steps of ' + el.step;
      return err('INVALID_PARAMETERS', 'a ' + type + ' input takes ' + VALUE_FORMATS[type] + bounds +
        '; it does not take ' + JSON.stringify(text), { retry: false });
    }
    el.focus();
    el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
    const info = describe(el, ctx);
    return { ok: true, ref: info.ref, role: info.role, name: info.name, valueSet: el.value };
  }

  // Select everything so the next Input.insertText replaces it.
  function selectAllContent(el) {
    const tag = el.localName;
    if (tag === 'input' || tag === 'textarea') {
      try {
        el.select();
        return;
      } catch (e) { /* fall through */ }
      try { document.execCommand('selectAll'); } catch (e) { /* ignore */ }
      return;
    }
    const range = document.createRange();
    range.selectNodeContents(el);
    const sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }

  // Whether el, an editing host, holds its document's selection.
  function selectionInside(el) {
    if (el.localName === 'input' || el.localName === 'textarea') return false;
    const sel = el.ownerDocument.getSelection();
    return !!sel && sel.rangeCount > 0 && el.contains(sel.anchorNode) && el.contains(sel.focusNode);
  }

  // Typing without clear appends to what is there.
  function caretToEnd(el) {
    const tag = el.localName;
    if (tag === 'input' || tag === 'textarea') {
      try {
        const n = el.value.length;
        el.setSelectionRange(n, n);
      } catch (e) { /* email/number inputs have no selection API */ }
      return;
    }
    const range = document.createRange();
    range.selectNodeContents(el);
    range.collapse(false);
    const sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }

  // ---------------------------------------------------------------------------
  // Public API
  // ---------------------------------------------------------------------------

  function internalError(e) {
    return err('BROWSER_ERROR', 'tabvisor page script failed: ' + ((e && e.message) || String(e)));
  }

  function guard(fn) {
    try {
      return fn();
    } catch (e) {
      return internalError(e);
    }
  }

  function setPrefix(prefix) {
    if (prefix === undefined || prefix === null) return null;
    if (typeof prefix !== 'string' || !/^(f\d+)?$/.test(prefix)) {
      return err('INVALID_PARAMETERS', 'prefix must be "" or like "f1"');
    }
    state.prefix = prefix;
    return null;
  }

  function init(opts) {
    return guard(() => {
      opts = opts || {};
      const base = Number(opts.refBase);
      if (Number.isInteger(base) && base > state.nextRef) state.nextRef = base;
      const e = setPrefix(opts.prefix);
      if (e) return e;
      return { nextRef: state.nextRef };
    });
  }

  // Listeners are visible only from the page's main world (the DevTools
  // getEventListeners), so the worker looks there and passes indices into
  // document.querySelectorAll(selector): the elements they name, or null
  // when the worker passed none (then the last set stays).
  function elementsAt(selector, indices) {
    if (!Array.isArray(indices)) return null;
    const list = document.querySelectorAll(selector), set = new WeakSet();
    for (const i of indices) if (Number.isInteger(i) && list[i]) set.add(list[i]);
    return set;
  }

  function snapshot(opts) {
    return guard(() => {
      opts = opts || {};
      const e = setPrefix(opts.prefix);
      if (e) return e;
      // <a> without href that have a click listener of their own; tables the
      // page listens to for double-clicks (on the table or a body).
      state.clickable = elementsAt('a:not([href])', opts.clickableAnchors) || state.clickable;
      state.cellTables = elementsAt('table', opts.listenedTables) || state.cellTables;
      const ctx = newContext();
      if (opts.depth !== undefined && opts.depth !== null) {
        if (!Number.isInteger(opts.depth) || opts.depth < 0) {
          return err('INVALID_PARAMETERS', 'depth must be a non-negative integer');
        }
        ctx.maxDepth = opts.depth;
      }
      const interactive = !!opts.interactive;
      ctx.interactive = interactive;
      // Interactive mode decides depth after filtering, so it walks everything.
      ctx.buildDepth = interactive ? Infinity : ctx.maxDepth;
      pruneRefs();
      let root = document.documentElement;
      if (opts.target) {
        const r = resolveTarget(opts.target, ctx);
        if (r.error) return r;
        root = r.el;
      }
      let items = [];
      if (root) visitElement(root, items, 0, ctx, null);
      if (interactive) items = keepInteractive(items, true, ctx);
      const lines = [];
      renderItems(items, '', 0, ctx, lines);
      // Whether the worker should ask the main world which <a> without href
      // have click listeners and which tables double-click ones (see
      // elementsAt).
      const probe = document.querySelector('a:not([href]), table') !== null;
      return { text: lines.join('\n'), nextRef: state.nextRef, refCount: ctx.refCount, iframes: ctx.iframes, probe };
    });
  }

  function resolve(target) {
    return guard(() => {
      const r = resolveTarget(target, newContext());
      return r.error ? r : r.el;
    });
  }

  async function actionPoint(target, opts) {
    try {
      return await actionPointImpl(target, opts || {});
    } catch (e) {
      return internalError(e);
    }
  }

  function prepareTyping(target, opts) {
    return guard(() => prepareTypingImpl(target, opts || {}));
  }

  // {ref, role, name} of the target's element (browser_generate_locator).
  function describeTarget(target) {
    return guard(() => {
      const ctx = newContext();
      const r = resolveTarget(target, ctx);
      return r.error ? r : describe(r.el, ctx);
    });
  }

  function pageInfo() {
    return guard(() => ({ url: location.href, title: document.title }));
  }

  Object.defineProperty(globalThis, '__tabvisor', {
    value: Object.freeze({
      version: 1,
      init: init,
      snapshot: snapshot,
      resolve: resolve,
      actionPoint: actionPoint,
      prepareTyping: prepareTyping,
      pageInfo: pageInfo,
      describe: describeTarget,
      typingReport: typingReport,
    }),
    configurable: true,
    enumerable: false,
    writable: false,
  });
})();
