/*
 * frames.c - the frame table: which CDP session hosts each frame, our
 * isolated world in it, and the geometry that maps a point in a frame to the
 * top page's viewport (where Input.dispatchMouseEvent wants it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "tabs.h"
#include "netpolicy.h"
#include "log.h"
#include "hooks.h"
#include "worker.h"

static struct frame_table *table(struct session *w)
{
    if (!w->page->frames) {
        w->page->frames = calloc(1, sizeof *w->page->frames);
        if (!w->page->frames)
            abort();
    }
    return w->page->frames;
}

static void point_at_own_world(struct frame *f)
{
    f->ctx = &f->own_ctx;
    f->installed = &f->own_installed;
    f->next_ref = &f->own_next_ref;
}

struct frame *frame_main(struct session *w)
{
    struct frame *f = &table(w)->f[0];
    /* The main frame is the page target itself; refresh from session so the
     * entry is right whenever it is first used. */
    f->used = true;
    f->k = 0;
    f->parent[0] = 0;
    snprintf(f->id, sizeof f->id, "%s", w->page->target_id);
    snprintf(f->session, sizeof f->session, "%s", w->page->cdp_session);
    f->ctx = &w->page->util_ctx;
    f->installed = &w->page->util_installed;
    f->next_ref = &w->page->next_ref;
    return f;
}

struct frame *frame_by_k(struct session *w, int k)
{
    if (k == 0)
        return frame_main(w);
    struct frame_table *t = table(w);
    for (int i = 1; i < MAX_FRAMES; i++)
        if (t->f[i].used && t->f[i].k == k)
            return &t->f[i];
    return NULL;
}

struct frame *frame_by_id(struct session *w, const char *id)
{
    if (!id || !*id)
        return NULL;
    if (strcmp(id, w->page->target_id) == 0)
        return frame_main(w);
    struct frame_table *t = table(w);
    for (int i = 1; i < MAX_FRAMES; i++)
        if (t->f[i].used && strcmp(t->f[i].id, id) == 0)
            return &t->f[i];
    return NULL;
}

struct frame *frame_ensure(struct session *w, const char *id, const struct frame *parent)
{
    struct frame *f = frame_by_id(w, id);
    if (f)
        return f;
    struct frame_table *t = table(w);
    for (int i = 1; i < MAX_FRAMES; i++) {
        f = &t->f[i];
        if (f->used)
            continue;
        memset(f, 0, sizeof *f);
        f->used = true;
        if (w->next_frame_k < 1)
            w->next_frame_k = 1;
        f->k = w->next_frame_k++;
        point_at_own_world(f);
        f->own_next_ref = 1;
        snprintf(f->id, sizeof f->id, "%s", id);
        if (parent) {
            snprintf(f->parent, sizeof f->parent, "%s", parent->id);
            snprintf(f->session, sizeof f->session, "%s", parent->session);
        }
        log_debug("frame f%d is %s", f->k, id);
        return f;
    }
    log_error("more than %d frames; ignoring frame %s", MAX_FRAMES, id);
    return NULL;
}

/* Forget f and every frame below it. */
static void frame_drop(struct session *w, struct frame *f)
{
    if (!f || f->k == 0)
        return;
    char id[64];
    snprintf(id, sizeof id, "%s", f->id);
    f->used = false;
    struct frame_table *t = table(w);
    for (int i = 1; i < MAX_FRAMES; i++)
        if (t->f[i].used && strcmp(t->f[i].parent, id) == 0)
            frame_drop(w, &t->f[i]);
}

struct frame *frame_for_target(struct session *w, const char *target)
{
    int k = 0, used = 0;
    /* A ref of another tab's snapshot names nothing here (tabs.h). */
    if (tabs_check_ref(w, target) < 0)
        return NULL;
    if (target && sscanf(target, "f%de%*d%n", &k, &used) == 1 && used && target[used] == 0 &&
        k > 0) {
        struct frame *f = frame_by_k(w, k);
        if (!f)
            fail_call(w, TV_STALE_REF, "Take a new browser_snapshot and use a ref from it.",
                      "ref %s is stale: its frame f%d is gone", target, k);
        return f;
    }
    return frame_main(w);
}

int frame_node(struct session *w, struct frame *f, const char *target, long long *backend,
               char *child_id, size_t child_len)
{
    json_t *v;
    /* Make sure the world and script exist before asking for a handle. */
    if (frame_eval(w, f, "0", &v) < 0)
        return -1;
    json_decref(v);
    json_t *jt = json_string(target);
    char *tjson = json_dumps(jt, JSON_ENCODE_ANY);
    json_decref(jt);
    if (!tjson)
        return fail_call(w, TV_INVALID_PARAMETERS, NULL, "bad target");
    size_t n = strlen(tjson) + 160;
    char *expr = malloc(n);
    if (!expr)
        abort();
    /* An element comes back as a handle; an error as its JSON text. */
    snprintf(expr, n,
             "(() => { const r = __tabvisor.resolve(%s); return (r && r.error) ? "
             "JSON.stringify(r.error) : r; })()",
             tjson);
    free(tjson);
    json_t *r;
    int rc = frame_cdp(w, f, "Runtime.evaluate",
                       json_pack("{s:s, s:i, s:s}", "expression", expr, "contextId", *f->ctx,
                                 "objectGroup", "tabvisor-node"),
                       &r);
    free(expr);
    if (rc < 0)
        return -1;
    json_t *res = json_object_get(r, "result");
    if (json_is_string(json_object_get(res, "value"))) {
        json_error_t je;
        json_t *err = json_loads(json_string_value(json_object_get(res, "value")), 0, &je);
        page_error(w, err, NULL);
        json_decref(err);
        json_decref(r);
        return -1;
    }
    const char *oid = json_string_value(json_object_get(res, "objectId"));
    if (!oid) {
        json_decref(r);
        return fail_call(w, TV_ELEMENT_NOT_FOUND, NULL, "element %s not found", target);
    }
    json_t *d;
    rc = frame_cdp(w, f, "DOM.describeNode", json_pack("{s:s}", "objectId", oid), &d);
    json_decref(r);
    json_t *p = json_pack("{s:s}", "objectGroup", "tabvisor-node");
    cdp_send(w->cdp, f->session, "Runtime.releaseObjectGroup", p);
    json_decref(p);
    if (rc < 0)
        return -1;
    json_t *node = json_object_get(d, "node");
    *backend = json_integer_value(json_object_get(node, "backendNodeId"));
    if (child_id) {
        const char *fid = json_string_value(json_object_get(node, "frameId"));
        snprintf(child_id, child_len, "%s", fid ? fid : "");
    }
    json_decref(d);
    return 0;
}

/* Runs on the owner <iframe> in its parent's isolated world with the point
 * (x, y) in the child's viewport: returns the content-box origin in the
 * parent's viewport and what the point hits there. A point outside the
 * parent's viewport first scrolls the owner into view. */
static const char OWNER_JS[] =
    "function (x, y) {"
    "  const origin = () => { const r = this.getBoundingClientRect();"
    "    const cs = getComputedStyle(this);"
    "    return { x: r.left + this.clientLeft + parseFloat(cs.paddingLeft),"
    "             y: r.top + this.clientTop + parseFloat(cs.paddingTop) }; };"
    "  let o = origin();"
    "  const out = (p) => p.x + x < 0 || p.y + y < 0 || p.x + x >= innerWidth ||"
    "    p.y + y >= innerHeight;"
    "  if (out(o)) { this.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' "
    "});"
    "    o = origin(); }"
    "  if (out(o)) return { x: o.x, y: o.y, error: 'ELEMENT_NOT_VISIBLE',"
    "    message: 'the point lies outside the viewport of the frame holding the iframe' };"
    "  let hit = document.elementFromPoint(o.x + x, o.y + y);"
    "  while (hit && hit.shadowRoot) {"
    "    const inner = hit.shadowRoot.elementFromPoint(o.x + x, o.y + y);"
    "    if (!inner || inner === hit) break; hit = inner; }"
    "  if (hit === this) return { x: o.x, y: o.y };"
    "  const d = !hit ? 'nothing' : '<' + hit.localName + (hit.id ? ' id=\"' + hit.id + '\"' :"
    "    '') + '>';"
    "  return { x: o.x, y: o.y, error: 'ELEMENT_NOT_CLICKABLE',"
    "    message: 'the iframe holding the element is covered by ' + d };"
    "}";

/* Brings the owner <iframe> into its parent's viewport when it is wholly
 * outside: Chromium does not render (so runs no animation frames in) an
 * off-screen cross-site frame, and the actionability check waits on them. */
static const char REVEAL_JS[] =
    "function () { const r = this.getBoundingClientRect();"
    "  if (r.bottom <= 0 || r.right <= 0 || r.top >= innerHeight || r.left >= innerWidth)"
    "    this.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });"
    "  return true; }";

/* Call js on f's owner <iframe> in its parent P's isolated world with args
 * (stolen, a JSON array of CDP CallArguments); *value gets the returned
 * value. 0 or -1. */
static int owner_call(struct session *w, struct frame *f, struct frame *p, const char *js,
                      json_t *args, json_t **value)
{
    json_t *r, *v;
    if (frame_eval(w, p, "0", &v) < 0) { /* P's world must exist for the handle */
        json_decref(args);
        return -1;
    }
    json_decref(v);
    if (frame_cdp(w, p, "DOM.getFrameOwner", json_pack("{s:s}", "frameId", f->id), &r) < 0) {
        json_decref(args);
        return -1;
    }
    json_int_t backend = json_integer_value(json_object_get(r, "backendNodeId"));
    json_decref(r);
    if (frame_cdp(w, p, "DOM.resolveNode",
                  json_pack("{s:I, s:i, s:s}", "backendNodeId", backend, "executionContextId",
                            *p->ctx, "objectGroup", "tabvisor-owner"),
                  &r) < 0) {
        json_decref(args);
        return -1;
    }
    const char *oid = json_string_value(json_object_get(json_object_get(r, "object"), "objectId"));
    int rc = -1;
    if (!oid) {
        json_decref(args);
        fail_call(w, TV_STALE_REF, NULL, "the iframe of frame f%d is gone", f->k);
    } else if (frame_cdp(w, p, "Runtime.callFunctionOn",
                         json_pack("{s:s, s:s, s:o, s:b}", "functionDeclaration", js, "objectId",
                                   oid, "arguments", args, "returnByValue", 1),
                         &v) == 0) {
        json_t *o = json_object_get(json_object_get(v, "result"), "value");
        *value = json_incref(o ? o : json_null());
        json_decref(v);
        rc = 0;
    }
    json_decref(r);
    json_t *rel = json_pack("{s:s}", "objectGroup", "tabvisor-owner");
    cdp_send(w->cdp, p->session, "Runtime.releaseObjectGroup", rel);
    json_decref(rel);
    return rc;
}

int frame_reveal(struct session *w, struct frame *f)
{
    /* Top-down, so each owner is scrolled in a parent that is on screen. */
    struct frame *chain[MAX_FRAME_DEPTH];
    int n = 0;
    for (; f && f->k != 0 && n < MAX_FRAME_DEPTH; f = frame_by_id(w, f->parent))
        chain[n++] = f;
    while (n-- > 0) {
        struct frame *p = frame_by_id(w, chain[n]->parent);
        json_t *v;
        if (!p || owner_call(w, chain[n], p, REVEAL_JS, json_array(), &v) < 0)
            return -1;
        json_decref(v);
    }
    return 0;
}

/* Offset of f's owner <iframe> in f's parent P, checking (x, y) of f lands
 * on it. 0, 1 (retry) or -1. */
static int owner_offset(struct session *w, struct frame *f, struct frame *p, double x, double y,
                        double *ox, double *oy)
{
    json_t *o;
    if (owner_call(w, f, p, OWNER_JS, json_pack("[{s:f},{s:f}]", "value", x, "value", y), &o) < 0)
        return -1;
    int rc = 0;
    json_t *err = json_object_get(o, "error");
    *ox = json_number_value(json_object_get(o, "x"));
    *oy = json_number_value(json_object_get(o, "y"));
    if (json_is_string(err)) {
        const char *msg = json_string_value(json_object_get(o, "message"));
        enum tv_err e = tv_err_from_code(json_string_value(err));
        fail_call(w, e ? e : TV_ELEMENT_NOT_CLICKABLE, NULL, "%s", msg ? msg : "not clickable");
        rc = 1;
    } else if (!json_is_object(o)) {
        rc = fail_call(w, TV_BROWSER_ERROR, NULL, "cannot measure the iframe of frame f%d", f->k);
    }
    json_decref(o);
    return rc;
}

int frame_to_top(struct session *w, struct frame *f, double *x, double *y, struct input_point *in)
{
    if (in)
        *in = (struct input_point){0};
    /* Bottom-up: each step moves the point into the parent's viewport.
     * Scrolling a higher owner never moves a lower frame's viewport, so the
     * offsets already added stay right. */
    for (int hops = 0; f && f->k != 0; hops++) {
        if (in && !in->k && f->oopif)
            *in = (struct input_point){.k = f->k, .x = *x, .y = *y};
        if (hops >= MAX_FRAME_DEPTH)
            return fail_call(w, TV_BROWSER_ERROR, NULL, "frame tree has a cycle");
        struct frame *p = frame_by_id(w, f->parent);
        if (!p)
            return fail_call(w, TV_STALE_REF, "Take a new browser_snapshot.",
                             "the parent of frame f%d is gone", f->k);
        double ox = 0, oy = 0;
        int rc = owner_offset(w, f, p, *x, *y, &ox, &oy);
        if (rc != 0)
            return rc;
        *x += ox;
        *y += oy;
        f = p;
    }
    if (in && !in->k)
        *in = (struct input_point){.k = 0, .x = *x, .y = *y};
    return 0;
}

/* A new target auto-attached below one of our sessions. Only iframes
 * matter: enable what we need there and ask for its own OOPIFs too. */
static void on_attached(struct session *w, const char *session, json_t *params)
{
    const char *sid = json_string_value(json_object_get(params, "sessionId"));
    json_t *info = json_object_get(params, "targetInfo");
    const char *type = json_string_value(json_object_get(info, "type"));
    const char *tid = json_string_value(json_object_get(info, "targetId"));
    if (!sid || !type || !tid)
        return;
    /* Requests of out-of-process iframes and dedicated workers obey the
     * session's network policy too. */
    netpolicy_attach(w, sid);
    if (strcmp(type, "iframe") != 0)
        return;
    hooks_run_attach(w, sid, ATTACH_IFRAME);
    /* The parent is whichever known frame lives in the session that
     * announced it; frameAttached usually told us already. */
    struct frame *parent = NULL;
    struct frame_table *t = table(w);
    if (!session || strcmp(session, w->page->cdp_session) == 0)
        parent = frame_main(w);
    for (int i = 1; !parent && i < MAX_FRAMES; i++)
        if (t->f[i].used && t->f[i].oopif && strcmp(t->f[i].session, session) == 0)
            parent = &t->f[i];
    struct frame *f = frame_ensure(w, tid, parent);
    if (!f)
        return;
    snprintf(f->session, sizeof f->session, "%s", sid);
    f->oopif = true;
    *f->ctx = 0;
    *f->installed = false;
    log_info("frame f%d runs out of process (iframe target %s)", f->k, tid);
    json_t *p = json_pack("{s:b}", "enabled", 1);
    cdp_send(w->cdp, sid, "Page.enable", NULL);
    cdp_send(w->cdp, sid, "Page.setLifecycleEventsEnabled", p);
    cdp_send(w->cdp, sid, "Runtime.enable", NULL);
    /* Like the page: never throttled as a background frame (else its
     * animation frames stall and timers run once a second). */
    cdp_send(w->cdp, sid, "Emulation.setFocusEmulationEnabled", p);
    json_decref(p);
    p = json_pack("{s:b, s:b, s:b}", "autoAttach", 1, "waitForDebuggerOnStart", 0, "flatten", 1);
    cdp_send(w->cdp, sid, "Target.setAutoAttach", p);
    json_decref(p);
}

/* An OOPIF session ended: its frames fall back to the parent's session
 * (the frame swapped back in process) or vanish with frameDetached. */
static void on_detached(struct session *w, json_t *params)
{
    const char *sid = json_string_value(json_object_get(params, "sessionId"));
    if (!sid)
        return;
    struct frame_table *t = table(w);
    for (int i = 1; i < MAX_FRAMES; i++) {
        struct frame *f = &t->f[i];
        if (!f->used || strcmp(f->session, sid) != 0)
            continue;
        struct frame *p = frame_by_id(w, f->parent);
        snprintf(f->session, sizeof f->session, "%s", p ? p->session : w->page->cdp_session);
        f->oopif = false;
        *f->ctx = 0;
        *f->installed = false;
    }
}

/* A context of ours was created or vanished in a frame hosted by session. */
static void on_context(struct session *w, const char *session, const char *method, json_t *params)
{
    const char *sess = session ? session : "";
    struct frame_table *t = table(w);
    frame_main(w);
    if (strcmp(method, "Runtime.executionContextCreated") == 0) {
        json_t *ctx = json_object_get(params, "context");
        const char *name = json_string_value(json_object_get(ctx, "name"));
        const char *fid =
            json_string_value(json_object_get(json_object_get(ctx, "auxData"), "frameId"));
        struct frame *f = name && strcmp(name, UTIL_WORLD) == 0 ? frame_by_id(w, fid) : NULL;
        int id = (int)json_integer_value(json_object_get(ctx, "id"));
        if (f && strcmp(f->session, sess) == 0 && *f->ctx != id) {
            *f->ctx = id;
            *f->installed = false;
        }
        return;
    }
    bool cleared = strcmp(method, "Runtime.executionContextsCleared") == 0;
    int gone = (int)json_integer_value(json_object_get(params, "executionContextId"));
    for (int i = 0; i < MAX_FRAMES; i++) {
        struct frame *f = &t->f[i];
        if (!f->used || strcmp(f->session, sess) != 0)
            continue;
        if (cleared || *f->ctx == gone) {
            *f->ctx = 0;
            *f->installed = false;
        }
    }
}

void frames_on_event(struct session *w, const char *session, const char *method, json_t *params)
{
    if (strncmp(method, "Runtime.executionContext", 24) == 0) {
        on_context(w, session, method, params);
    } else if (strcmp(method, "Page.frameAttached") == 0) {
        const char *id = json_string_value(json_object_get(params, "frameId"));
        struct frame *p =
            frame_by_id(w, json_string_value(json_object_get(params, "parentFrameId")));
        if (id && p)
            frame_ensure(w, id, p);
    } else if (strcmp(method, "Page.frameDetached") == 0) {
        /* "swap": the frame moves to another process and lives on. */
        const char *reason = json_string_value(json_object_get(params, "reason"));
        if (reason && strcmp(reason, "swap") == 0)
            return;
        frame_drop(w, frame_by_id(w, json_string_value(json_object_get(params, "frameId"))));
    } else if (strcmp(method, "Target.attachedToTarget") == 0) {
        on_attached(w, session, params);
    } else if (strcmp(method, "Target.detachedFromTarget") == 0) {
        on_detached(w, params);
    }
}
