/* snapshot_take.c - taking a snapshot: the injected engine builds the text
 * of each frame and this file splices the frames' texts under their iframe
 * lines (take_snapshot, which every answer and tool that needs a snapshot
 * calls). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "log.h"
#include "worker.h"

/* A failure that must end the whole snapshot, not just leave a frame out. */
static bool fatal(struct session *w)
{
    return w->call.err == TV_TIMEOUT || w->call.err == TV_CANCELLED || w->call.err == TV_BROWSER_CRASHED;
}

static int snap_frame(struct session *w, struct frame *f, json_t *opts, const char *indent, int nest,
                      struct sb *out);

/* Main-world probe of the listeners a snapshot cannot see from its isolated
 * world: indices, in document order, of the <a> elements without href that
 * have a click-like listener of their own (Chromium exposes those as links:
 * a datepicker's Prev/Next, script-driven pagers), and of the tables the
 * page listens to for double-clicks on the table or a body (an editable data
 * table: their cells keep refs). Listeners are visible only there, through
 * the DevTools command-line API; on Firefox through the record
 * firefox_page.c keeps of them. */
static const char LISTENERS_JS[] =
    "(() => {\n"
    "  const anchorKinds = ['click', 'mousedown', 'mouseup', 'pointerdown', 'pointerup'];\n"
    "  const cellKinds = ['dblclick'];\n"
    "  const seen = globalThis[Symbol.for('tabvisor.listeners')];\n"
    "  const has = typeof getEventListeners === 'function'\n"
    "    ? (el, kinds) => { const l = getEventListeners(el); return kinds.some((k) => l[k] && "
    "l[k].length); }\n"
    "    : seen ? (el, kinds) => seen(el, kinds) || kinds.some((k) => typeof el['on' + k] === "
    "'function') : null;\n"
    "  if (!has) return null;\n"
    "  const a = document.querySelectorAll('a:not([href])'), anchors = [];\n"
    "  for (let i = 0; i < a.length && i < 1000; i++) if (has(a[i], anchorKinds)) anchors.push(i);\n"
    "  const t = document.querySelectorAll('table'), tables = [];\n"
    "  for (let i = 0; i < t.length && i < 200; i++)\n"
    "    if ([t[i], ...t[i].tBodies].some((el) => has(el, cellKinds))) tables.push(i);\n"
    "  return { anchors, tables };\n"
    "})()";

/* Set opts.clickableAnchors and opts.listenedTables from the main frame's
 * main world (see LISTENERS_JS); *found: either is not empty. Only the main
 * frame is probed: a subframe's main world needs its own context id. A
 * failure leaves opts as they were and is not the snapshot's, unless it ends
 * the call (timeout, cancel, crash). */
static int probe_listeners(struct session *w, json_t *opts, bool *found)
{
    json_t *r;
    *found = false;
    if (frame_cdp(w, frame_main(w), "Runtime.evaluate",
                  json_pack("{s:s, s:b, s:b, s:b}", "expression", LISTENERS_JS,
                            "includeCommandLineAPI", 1, "returnByValue", 1, "silent", 1),
                  &r) < 0) {
        if (fatal(w))
            return -1;
        w->call.err = TV_OK;
        w->call.errmsg[0] = w->call.errhint[0] = 0;
        return 0;
    }
    json_t *v = json_object_get(json_object_get(r, "result"), "value");
    json_t *anchors = json_object_get(v, "anchors"), *tables = json_object_get(v, "tables");
    if (json_is_array(anchors) && json_is_array(tables)) {
        json_object_set(opts, "clickableAnchors", anchors);
        json_object_set(opts, "listenedTables", tables);
        *found = json_array_size(anchors) || json_array_size(tables);
    }
    json_decref(r);
    return 0;
}

/* Snapshot the frame hosted by iframe `ref` of frame f, whose line is
 * line[0..line_len), into out indented under that line (which then ends
 * with ':'); depth counts on from the line's level. A frame that cannot
 * answer (not there yet, just removed) leaves the line as it is. */
static int splice_child(struct session *w, struct frame *f, const char *ref, const char *line,
                        size_t line_len, json_t *opts, const char *indent, int nest, struct sb *out)
{
    size_t lead = 0;
    while (lead < line_len && line[lead] == ' ')
        lead++;
    json_t *copts = json_deep_copy(opts);
    json_object_del(copts, "target");
    json_t *jd = json_object_get(opts, "depth");
    if (json_is_integer(jd)) {
        json_int_t left = json_integer_value(jd) - (json_int_t)(lead / 2) - 1;
        if (left < 0) {
            json_decref(copts);
            return 0;
        }
        json_object_set_new(copts, "depth", json_integer(left));
    }
    long long backend;
    char child[64];
    struct frame *cf = NULL;
    if (frame_node(w, f, ref, &backend, child, sizeof child) == 0 && child[0])
        cf = frame_ensure(w, child, f);
    if (!cf) {
        json_decref(copts);
        return fatal(w) ? -1 : 0;
    }
    size_t ilen = strlen(indent);
    char *cindent = malloc(ilen + lead + 3);
    if (!cindent)
        abort();
    memcpy(cindent, indent, ilen);
    memset(cindent + ilen, ' ', lead + 2);
    cindent[ilen + lead + 2] = 0;
    struct sb kid = {0};
    int rc = snap_frame(w, cf, copts, cindent, nest + 1, &kid);
    free(cindent);
    json_decref(copts);
    if (rc < 0) {
        free(kid.p);
        if (fatal(w))
            return -1;
        log_debug("frame f%d left out of the snapshot: %s", cf->k, w->call.errmsg);
        w->call.err = TV_OK;
        return 0;
    }
    if (kid.len) {
        sb_add(out, ":\n", 2);
        sb_add(out, kid.p, kid.len);
    }
    free(kid.p);
    return 0;
}

/* Snapshot frame f with the engine's opts (borrowed), each line prefixed by
 * indent, appending to out (no final line break); iframes are followed. */
static int snap_frame(struct session *w, struct frame *f, json_t *opts, const char *indent, int nest,
                      struct sb *out)
{
    json_t *o = json_deep_copy(opts);
    char prefix[16] = "";
    if (f->k)
        snprintf(prefix, sizeof prefix, "f%d", f->k);
    json_object_set_new(o, "prefix", json_string(prefix));
    /* The main-world probe costs a round trip, so it runs only on pages that
     * have <a> elements without href or tables: known from the last
     * snapshot, or else learnt from this one, which is then taken again once
     * (refs stay) when the probe found listeners it did not know of. */
    bool main = f == frame_main(w), probed = false, found;
    if (main && w->page->probe_listeners) {
        if (probe_listeners(w, o, &found) < 0) {
            json_decref(o);
            return -1;
        }
        probed = true;
    }
    json_t *v;
    if (frame_call(w, f, "snapshot", json_incref(o), &v) < 0) {
        json_decref(o);
        return -1;
    }
    if (main && !json_object_get(v, "error")) {
        w->page->probe_listeners = json_is_true(json_object_get(v, "probe"));
        if (w->page->probe_listeners && !probed) {
            if (probe_listeners(w, o, &found) < 0) {
                json_decref(v);
                json_decref(o);
                return -1;
            }
            if (found) {
                json_decref(v);
                if (frame_call(w, f, "snapshot", json_incref(o), &v) < 0) {
                    json_decref(o);
                    return -1;
                }
            }
        }
    }
    json_decref(o);
    json_t *err = json_object_get(v, "error");
    if (err) {
        const char *code = json_string_value(json_object_get(err, "code"));
        const char *msg = json_string_value(json_object_get(err, "message"));
        enum tv_err e = tv_err_from_code(code ? code : "");
        fail_call(w, e ? e : TV_BROWSER_ERROR, NULL, "%s", msg ? msg : "snapshot failed");
        json_decref(v);
        return -1;
    }
    const char *text = json_string_value(json_object_get(v, "text"));
    json_t *iframes = json_object_get(v, "iframes");
    const char *p = text ? text : "";
    bool first = true;
    int rc = 0;
    while (*p && rc == 0) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (!first || out->len)
            sb_add(out, "\n", 1);
        first = false;
        sb_add(out, indent, strlen(indent));
        sb_add(out, p, n);
        size_t i;
        json_t *fr;
        json_array_foreach(iframes, i, fr)
        {
            /* The iframe's own line ends with its ref. */
            const char *ref = json_string_value(json_object_get(fr, "ref"));
            char tag[80];
            int tn = snprintf(tag, sizeof tag, "[ref=%s]", ref ? ref : "");
            if (!ref || tn >= (int)sizeof tag || (size_t)tn > n ||
                memcmp(p + n - (size_t)tn, tag, (size_t)tn) != 0)
                continue;
            if (nest < MAX_FRAME_DEPTH)
                rc = splice_child(w, f, ref, p, n, opts, indent, nest, out);
            break;
        }
        p = nl ? nl + 1 : p + n;
    }
    json_decref(v);
    return rc;
}

int take_snapshot(struct session *w, json_t *opts, char **text)
{
    /* Every snapshot, whole page or scoped, includes the iframes' frames. */
    json_t *o = opts ? opts : json_object();
    struct frame *f = frame_for_target(w, json_string_value(json_object_get(o, "target")));
    struct sb out = {0};
    int rc = f ? snap_frame(w, f, o, "", 0, &out) : -1;
    json_decref(o);
    if (rc < 0) {
        free(out.p);
        return -1;
    }
    *text = out.p ? out.p : strdup("");
    if (!*text)
        abort();
    return 0;
}
