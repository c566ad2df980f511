/*
 * The page side of browser_get_content, run in the frame's isolated world:
 * the page's (el = null) or one element's content as text, Markdown or HTML.
 *
 * (el, o) -> {content, total}: o.format is text | markdown | html; o.max (a
 * number of UTF-16 units, or 0 for all) cuts content before it leaves the
 * page, so a 100 MB page does not cross the browser connection whole; total
 * is the full length. Never throws: {error: {code, message}}.
 *
 * text: what the user sees (innerText: hidden content left out, CSS line
 * breaks kept). markdown: headings, paragraphs, lists, links (absolute),
 * images, emphasis, code, quotes and tables of the rendered elements; the
 * rest becomes plain text. Open shadow roots are walked (slots resolved);
 * iframes are not (use a ref inside one as target). html: outerHTML.
 */
(function (el, o) {
  'use strict';

  const SKIP = new Set(['script', 'style', 'noscript', 'template', 'head', 'title', 'meta', 'link',
    'iframe', 'frame', 'object', 'embed', 'canvas', 'svg', 'audio', 'video', 'select', 'option',
    'input', 'textarea', 'button', 'dialog']);
  const BLOCK = new Set(['p', 'div', 'section', 'article', 'main', 'header', 'footer', 'nav', 'aside',
    'form', 'fieldset', 'figure', 'figcaption', 'address', 'details', 'summary', 'dl', 'center',
    'hgroup', 'legend', 'caption', 'body', 'html']);

  const collapse = (s) => s.replace(/[ \t\r\n\f]+/g, ' ');
  const cell = (s) => collapse(s).trim().replace(/\|/g, '\\|');

  function visible(e) {
    return typeof e.checkVisibility !== 'function' || e.checkVisibility({ visibilityProperty: true });
  }

  // Children as rendered: a shadow root's content, a slot's assigned nodes.
  function kids(n) {
    if (n.shadowRoot) return Array.from(n.shadowRoot.childNodes);
    if (n.localName === 'slot') {
      const a = n.assignedNodes({ flatten: true });
      return a.length ? a : Array.from(n.childNodes);
    }
    return Array.from(n.childNodes);
  }

  function inner(n, ctx) {
    let s = '';
    for (const k of kids(n)) s += md(k, ctx);
    return s;
  }

  // **s** keeping the spaces around s outside the marks (CommonMark needs
  // the marks next to the text).
  function wrap(mark, s) {
    const t = s.trim();
    if (!t) return s;
    return (/^\s/.test(s) ? ' ' : '') + mark + t + mark + (/\s$/.test(s) ? ' ' : '');
  }

  function list(n, ctx) {
    const ordered = n.localName === 'ol';
    let k = ordered ? Number(n.getAttribute('start') || 1) : 0;
    const items = [];
    for (const li of kids(n)) {
      if (li.nodeType !== 1 || li.localName !== 'li' || !visible(li)) continue;
      const marker = ordered ? k++ + '. ' : '- ';
      // A tight list: blocks inside an item (a nested list) join without blank lines.
      const body = inner(li, ctx).trim().replace(/\n{2,}/g, '\n');
      const pad = ' '.repeat(marker.length);
      items.push(marker + body.split('\n').map((l, i) => (i && l ? pad + l : l)).join('\n'));
    }
    return '\n\n' + items.join('\n') + '\n\n';
  }

  function table(n) {
    const rows = Array.from(n.rows || []).filter(visible);
    if (!rows.length) return '';
    const lines = rows.map((r) => '| ' + Array.from(r.cells).map((c) => cell(c.innerText || '')).join(' | ') + ' |');
    const cols = Math.max(...rows.map((r) => r.cells.length));
    lines.splice(1, 0, '|' + ' --- |'.repeat(cols));
    return '\n\n' + lines.join('\n') + '\n\n';
  }

  function md(n, ctx) {
    if (n.nodeType === 3) return ctx.pre ? n.data : collapse(n.data);
    if (n.nodeType !== 1) return '';
    const tag = n.localName;
    if (SKIP.has(tag) || !visible(n)) return '';
    const h = /^h([1-6])$/.exec(tag);
    if (h) return '\n\n' + '#'.repeat(Number(h[1])) + ' ' + collapse(inner(n, ctx)).trim() + '\n\n';
    switch (tag) {
      case 'br': return ctx.pre ? '\n' : '\\\n';
      case 'hr': return '\n\n---\n\n';
      case 'pre': return '\n\n```\n' + (n.innerText || n.textContent).replace(/\n$/, '') + '\n```\n\n';
      case 'code': return ctx.pre ? n.textContent : '`' + n.textContent.replace(/`/g, '\\`') + '`';
      case 'strong': case 'b': return wrap('**', inner(n, ctx));
      case 'em': case 'i': return wrap('*', inner(n, ctx));
      case 's': case 'del': case 'strike': return wrap('~~', inner(n, ctx));
      case 'a': {
        const t = collapse(inner(n, ctx)).trim();
        const href = n.href;
        if (!t) return '';
        return href && !/^javascript:/i.test(href) ? '[' + t + '](' + href + ')' : t;
      }
      case 'img': {
        const alt = collapse(n.alt || '').trim();
        return n.src ? '![' + alt + '](' + n.src + ')' : alt;
      }
      case 'ul': case 'ol': return list(n, ctx);
      case 'li': return '\n- ' + inner(n, ctx).trim() + '\n';
      case 'table': return table(n);
      case 'blockquote': {
        const body = inner(n, ctx).replace(/\n{3,}/g, '\n\n').trim();
        return '\n\n' + body.split('\n').map((l) => '> ' + l).join('\n') + '\n\n';
      }
      case 'dt': return '\n\n**' + collapse(inner(n, ctx)).trim() + '**\n';
      case 'dd': return '\n: ' + collapse(inner(n, ctx)).trim() + '\n';
      default:
        if (BLOCK.has(tag)) return '\n\n' + inner(n, ctx) + '\n\n';
        return inner(n, ctx);
    }
  }

  // Tidy the joined pieces: no spaces around line ends (outside fenced
  // code, which is kept as is), at most one blank line in a row.
  function markdown(root) {
    let fenced = false;
    const lines = md(root, { pre: false }).split('\n').map((l) => {
      if (l === '```') fenced = !fenced;
      if (fenced || l === '```') return l;
      const t = l.replace(/ +$/, '');
      return /^ \S/.test(t) ? t.slice(1) : t.replace(/^ +$/, '');
    });
    return lines.join('\n').replace(/\n{3,}/g, '\n\n').trim();
  }

  function html(root) {
    if (root !== document.documentElement) return root.outerHTML;
    const dt = document.doctype;
    return (dt ? '<!DOCTYPE ' + dt.name + '>\n' : '') + root.outerHTML;
  }

  try {
    const root = el || document.documentElement;
    if (!root) return { content: '', total: 0 };
    let content;
    if (o.format === 'html') content = html(root);
    else if (o.format === 'markdown') content = markdown(el || document.body || root);
    else content = ((el || document.body || root).innerText || '').replace(/\n{3,}/g, '\n\n').trim();
    const total = content.length;
    if (o.max > 0 && total > o.max) {
      let end = o.max;
      // Do not split a surrogate pair: half of one is not a character.
      const c = content.charCodeAt(end - 1);
      if (c >= 0xd800 && c <= 0xdbff) end--;
      content = content.slice(0, end);
    }
    return { content: content, total: total };
  } catch (e) {
    return { error: { code: 'BROWSER_ERROR', message: 'reading the content failed: ' + ((e && e.message) || String(e)) } };
  }
})
