/*
 * firefox_page.c - what a page on Firefox needs of tabvisor's own in its main
 * world, where CDP has a command and BiDi none. Installed as a preload
 * script (Page.addScriptToEvaluateOnNewDocument, mapped to BiDi's
 * script.addPreloadScript), so it runs in every new document before the
 * page's scripts:
 *
 *   - a record of the elements given a click-like listener: the snapshot's
 *     probe of href-less links (tools/snapshot.c) reads it where Chromium's
 *     DevTools offer getEventListeners;
 *   - file choosers: a click on an <input type=file> (a label's too, which
 *     reaches the input) or its showPicker() opens no picker on the
 *     machine; the input is reported instead, as one console.debug entry
 *     with a marker that the BiDi map turns into CDP's
 *     Page.fileChooserOpened (cdp/bidi_events.c) and never shows as a
 *     console message. browser_file_upload then fills it as on Chromium.
 */
#include "worker.h"

static const char FIREFOX_PAGE_JS[] =
    "(() => {\n"
    "  const K = Symbol.for('tabvisor.listeners');\n"
    "  if (globalThis[K]) return;\n"
    "  const kinds = new Set(['click', 'mousedown', 'mouseup', 'pointerdown', 'pointerup', "
    "'dblclick']);\n"
    "  const seen = new WeakMap();\n"
    "  const add = EventTarget.prototype.addEventListener;\n"
    "  EventTarget.prototype.addEventListener = function addEventListener(type, fn, opts) {\n"
    "    if (kinds.has(type) && this instanceof Element) {\n"
    "      if (!seen.has(this)) seen.set(this, new Set());\n"
    "      seen.get(this).add(type);\n"
    "    }\n"
    "    return add.call(this, type, fn, opts);\n"
    "  };\n"
    "  Object.defineProperty(globalThis, K, {\n"
    "    value: (el, of) => { const s = seen.get(el); return !!s && of.some((k) => s.has(k)); },\n"
    "  });\n"
    "  const debug = console.debug.bind(console);\n"
    "  const chooser = (el) => debug('" FIREFOX_CHOOSER_MARK "', el, !!el.multiple);\n"
    "  const isFile = (el) => el instanceof HTMLInputElement && el.type === 'file';\n"
    "  add.call(globalThis, 'click', (e) => {\n"
    "    const el = e.composedPath()[0];\n"
    "    if (isFile(el) && !el.disabled && !e.defaultPrevented) { e.preventDefault(); chooser(el); "
    "}\n"
    "  }, true);\n"
    "  const picker = HTMLInputElement.prototype.showPicker;\n"
    "  if (picker) HTMLInputElement.prototype.showPicker = function showPicker() {\n"
    "    if (isFile(this)) return chooser(this);\n"
    "    return picker.call(this);\n"
    "  };\n"
    "})();\n";

void firefox_page_install_send(struct session *w, const char *session)
{
    json_t *p = json_pack("{s:s}", "source", FIREFOX_PAGE_JS);
    cdp_send(w->cdp, session, "Page.addScriptToEvaluateOnNewDocument", p);
    json_decref(p);
}

int firefox_page_install(struct session *w)
{
    return page_call(w, "Page.addScriptToEvaluateOnNewDocument",
                     json_pack("{s:s}", "source", FIREFOX_PAGE_JS), NULL);
}
