/*
 * settle.c - after an action, wait only as long as the page is still
 * reacting to it (DESIGN.md section 3: settle, not sleep).
 *
 * What the action set going, each wait capped and none a fixed sleep:
 *  1. a main-frame navigation it requested: until the new document commits,
 *     then its DOMContentLoaded (nav_wait);
 *  2. network requests it started (Network.requestWillBeSent after the mark)
 *     until they finish or fail, capped at REQUESTS_CAP_MS;
 *  3. short timers (delay <= 1 s) and animation frames it scheduled,
 *     following chains (a timer set by such a timer counts too), capped;
 *  4. CSS transitions and animations of a finite length that started in
 *     the last 3 s, as caused timers count (a list that scales in from
 *     nothing is not there to read until it has), capped at
 *     ANIMATIONS_CAP_MS. Chromium creates a transition when its style is
 *     read; Gecko at times only at a later refresh, so on Firefox, when an
 *     element that changed or came in since the action's press has a
 *     transition or an animation in its style, two frames pass before they
 *     are read;
 *  5. then, only if the DOM changed while we waited, a DOM-quiet window of
 *     QUIET_MS without mutations, capped.
 * Rounds repeat while a round started new requests (a timer that fetches, a
 * fetch that sets a timer), up to MAX_ROUNDS. A dialog that opens ends it all
 * at once (the page is blocked; see dialogs.c).
 *
 * Timers and frames can only be seen from the page's main world, so a small
 * instrumentation (SETTLE_JS) is installed there with
 * Page.addScriptToEvaluateOnNewDocument; docs/design.md says why.
 */
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "worker.h"

#define NAV_COMMIT_CAP_MS 10000
#define NAV_DCL_CAP_MS 10000
#define REQUESTS_CAP_MS 2000
#define TIMERS_CAP_MS 1500
#define ANIMATIONS_CAP_MS 1000
#define QUIET_MS 40
#define QUIET_CAP_MS 500
#define MAX_ROUNDS 4

/*
 * Main-world instrumentation. setTimeout/requestAnimationFrame (and their
 * clear/cancel) become Proxies of the natives that wrap the callback, so we
 * know when it ran. A timer or frame is "caused" when it is created inside
 * the callback of a caused one, or outside any callback within 3 s after the
 * last trusted input event (a capture listener records when one arrived:
 * the action's own input is the mark, no extra round trip). Chains of a
 * timer loop that was running before the action are not caused, so a
 * ticking clock does not hold every click for the cap; nor is a poll the
 * action started, a timer that sets itself again with the same delay of
 * 50 ms or more (a code editor polling its input field every 100 ms): its
 * third round is not waited for. Animation steps (a frame, or a timer of a
 * few ms) are. Everything hangs off
 * one non-enumerable Symbol.for key; settle() is what the worker awaits.
 */
static const char SETTLE_JS[] =
    "(() => {\n"
    "  const K = Symbol.for('tabvisor.settle');\n"
    "  if (Object.prototype.hasOwnProperty.call(globalThis, K)) return;\n"
    "  const G = globalThis, P = G.performance, now = () => P.now();\n"
    "  const nativeSetTimeout = G.setTimeout, nativeFrame = G.requestAnimationFrame.bind(G);\n"
    "  let mark = -1e9, inCaused = 0, inOther = 0, lastMutation = -1e9, wake = null;\n"
    "  let running = null; /* the timer whose callback runs: {delay, depth} */\n"
    "  const POLL_MIN_MS = 50;\n"
    "  const timers = new Set(), frames = new Set();\n"
    "  const poke = () => { const f = wake; wake = null; if (f) f(); };\n"
    "  const caused = () => inCaused > 0 || (inOther === 0 && now() - mark < 3000);\n"
    "  const wrapSet = (name, pending, isFrame) => {\n"
    "    const d = Object.getOwnPropertyDescriptor(G, name);\n"
    "    if (!d || typeof d.value !== 'function') return;\n"
    "    d.value = new Proxy(d.value, { apply(target, self, args) {\n"
    "      const fn = args[0];\n"
    "      if (typeof fn !== 'function') return Reflect.apply(target, self, args);\n"
    "      const delay = Number(args[1]) || 0, up = running;\n"
    "      const same = !isFrame && up && up.delay === delay;\n"
    "      const poll = same && delay >= POLL_MIN_MS && up.depth >= 1;\n"
    "      const c = !poll && (isFrame || !(delay > 1000)) && caused();\n"
    "      const info = { delay, depth: same ? up.depth + 1 : 0 };\n"
    "      let id;\n"
    "      args = Array.prototype.slice.call(args);\n"
    "      args[0] = function () {\n"
    "        pending.delete(id);\n"
    "        const was = running;\n"
    "        if (!isFrame) running = info;\n"
    "        if (c) inCaused++; else inOther++;\n"
    "        try { return Reflect.apply(fn, this, arguments); }\n"
    "        finally { running = was; if (c) inCaused--; else inOther--; poke(); }\n"
    "      };\n"
    "      id = Reflect.apply(target, self, args);\n"
    "      if (c) pending.add(id);\n"
    "      return id;\n"
    "    } });\n"
    "    Object.defineProperty(G, name, d);\n"
    "  };\n"
    "  const wrapClear = (name, pending) => {\n"
    "    const d = Object.getOwnPropertyDescriptor(G, name);\n"
    "    if (!d || typeof d.value !== 'function') return;\n"
    "    d.value = new Proxy(d.value, { apply(target, self, args) {\n"
    "      if (pending.delete(args[0])) nativeSetTimeout(poke, 0);\n"
    "      return Reflect.apply(target, self, args);\n"
    "    } });\n"
    "    Object.defineProperty(G, name, d);\n"
    "  };\n"
    "  wrapSet('setTimeout', timers, false); wrapClear('clearTimeout', timers);\n"
    "  wrapSet('requestAnimationFrame', frames, true);\n"
    "  wrapClear('cancelAnimationFrame', frames);\n"
    "  /* Elements whose attributes changed or that came in since the last press\n"
    "   * or settle, a few: where a transition or an animation may start (Firefox). */\n"
    "  const moved = new Set();\n"
    "  const note = (recs) => {\n"
    "    if (!recs.length) return 0;\n"
    "    lastMutation = now();\n"
    "    for (const r of recs) {\n"
    "      if (moved.size >= 64) break;\n"
    "      if (r.type === 'attributes') moved.add(r.target);\n"
    "      else for (const n of r.addedNodes) if (n.nodeType === 1 && moved.size < 64) moved.add(n);\n"
    "    }\n"
    "    return recs.length;\n"
    "  };\n"
    "  const hasMotion = (el) => { if (!el.isConnected) return false;\n"
    "    const cs = getComputedStyle(el);\n"
    "    return cs.animationName !== 'none' || /[1-9]/.test(cs.transitionDuration); };\n"
    "  /* A press starts an action: what changed before it is not its doing. */\n"
    "  const starts = new Set(['pointerdown', 'mousedown', 'keydown', 'touchstart', 'wheel']);\n"
    "  const onInput = (e) => {\n"
    "    if (!e.isTrusted) return;\n"
    "    mark = now();\n"
    "    if (starts.has(e.type)) moved.clear();\n"
    "  };\n"
    "  for (const t of ['pointerdown', 'mousedown', 'pointerup', 'mouseup', 'click', 'keydown',\n"
    "      'keyup', 'beforeinput', 'input', 'wheel', 'pointermove', 'touchstart'])\n"
    "    G.addEventListener(t, onInput, { capture: true, passive: true });\n"
    "  const mo = new MutationObserver(note);\n"
    "  mo.observe(document, { subtree: true, childList: true, attributes: true,\n"
    "      characterData: true });\n"
    "  const sleep = (ms) => new Promise((r) => { wake = r; nativeSetTimeout(poke, ms); });\n"
    "  const settle = async (o) => {\n"
    "    const t0 = now();\n"
    "    while (timers.size + frames.size && now() - t0 < o.timersCap)\n"
    "      await sleep(Math.max(1, Math.min(50, o.timersCap - (now() - t0))));\n"
    "    const left = timers.size + frames.size;\n"
    "    note(mo.takeRecords());\n"
    "    if (o.animationFrames && [...moved].some(hasMotion))\n"
    "      await new Promise((r) => { nativeSetTimeout(r, 50);\n"
    "        nativeFrame(() => nativeFrame(() => r())); });\n"
    "    moved.clear();\n"
    "    const anims = (document.getAnimations ? document.getAnimations() : []).filter((a) =>\n"
    "      (a.pending || a.playState === 'running') && !(now() - a.startTime > 3000) &&\n"
    "      a.effect && Number.isFinite(a.effect.getComputedTiming().endTime));\n"
    "    if (anims.length) await new Promise((r) => {\n"
    "      nativeSetTimeout(r, o.animationsCap);\n"
    "      Promise.all(anims.map((a) => a.finished.catch(() => null))).then(r);\n"
    "    });\n"
    "    note(mo.takeRecords());\n"
    "    const q0 = now();\n"
    "    while (lastMutation >= t0 && now() - lastMutation < o.quietMs && now() - q0 < o.quietCap) "
    "{\n"
    "      await sleep(Math.max(1, o.quietMs - (now() - lastMutation)));\n"
    "      note(mo.takeRecords());\n"
    "    }\n"
    "    return { pending: left, animations: anims.length, mutated: lastMutation >= t0,\n"
    "      ms: Math.round(now() - t0) };\n"
    "  };\n"
    "  Object.defineProperty(G, K, { value: Object.freeze({ settle }) });\n"
    "})();\n";

void settle_install_send(struct session *w, const char *session)
{
    json_t *p = json_pack("{s:s, s:b}", "source", SETTLE_JS, "runImmediately", 1);
    cdp_send(w->cdp, session, "Page.addScriptToEvaluateOnNewDocument", p);
    json_decref(p);
    if (w->firefox)
        firefox_page_install_send(w, session);
}

void settle_attach(struct session *w, const char *session, enum attach_kind kind)
{
    if (kind == ATTACH_PAGE)
        settle_install_send(w, session);
}

int settle_install(struct session *w)
{
    /* runImmediately also instruments the document already loaded. */
    if (w->firefox && firefox_page_install(w) < 0)
        return -1;
    return page_call(w, "Page.addScriptToEvaluateOnNewDocument",
                     json_pack("{s:s, s:b}", "source", SETTLE_JS, "runImmediately", 1), NULL);
}

void settle_mark(struct session *w)
{
    json_decref(w->page->settle.requests);
    w->page->settle.requests = json_object();
    w->page->settle.started = 0;
    w->page->settle.nav_requested = false;
    w->page->settle.nav_underway = false;
    w->page->settle.marked = true;
}

static bool is_main_frame(struct session *w, json_t *params)
{
    const char *f = json_string_value(json_object_get(params, "frameId"));
    return f && strcmp(f, w->page->target_id) == 0;
}

void settle_on_event(struct session *w, const char *session, const char *method, json_t *params)
{
    if (!w->page->settle.marked || !session || strcmp(session, w->page->cdp_session) != 0)
        return;
    if (strcmp(method, "Network.requestWillBeSent") == 0) {
        const char *id = json_string_value(json_object_get(params, "requestId"));
        const char *type = json_string_value(json_object_get(params, "type"));
        /* Long-lived streams never finish; they are not "reacting". */
        if (!id || (type && (!strcmp(type, "EventSource") || !strcmp(type, "WebSocket"))))
            return;
        if (!json_object_get(w->page->settle.requests, id))
            w->page->settle.started++;
        json_object_set_new(w->page->settle.requests, id, json_true());
    } else if (strcmp(method, "Network.loadingFinished") == 0 ||
               strcmp(method, "Network.loadingFailed") == 0) {
        const char *id = json_string_value(json_object_get(params, "requestId"));
        if (id)
            json_object_del(w->page->settle.requests, id);
    } else if (strcmp(method, "Page.frameRequestedNavigation") == 0) {
        if (is_main_frame(w, params))
            w->page->settle.nav_requested = true;
    } else if (strcmp(method, "Page.frameStartedNavigating") == 0 ||
               strcmp(method, "Page.frameStartedLoading") == 0) {
        if (is_main_frame(w, params) &&
            (w->page->settle.nav_requested || strcmp(method, "Page.frameStartedNavigating") == 0))
            w->page->settle.nav_requested = w->page->settle.nav_underway = true;
    } else if (strcmp(method, "Page.frameClearedScheduledNavigation") == 0) {
        /* A scheduled navigation was cancelled, or it has just started (a
         * link click's is cleared from the schedule right after
         * frameStartedLoading). Only a cancelled one ends the wait here; one
         * under way ends at its commit or at frameStoppedLoading. */
        if (is_main_frame(w, params) && !w->page->settle.nav_underway)
            w->page->settle.nav_requested = false;
    } else if (strcmp(method, "Page.frameStoppedLoading") == 0 ||
               strcmp(method, "Page.navigatedWithinDocument") == 0) {
        /* The requested navigation ended without a new document (a download,
         * a 204, a fragment change) or the new document finished loading. */
        if (is_main_frame(w, params))
            w->page->settle.nav_requested = w->page->settle.nav_underway = false;
    }
}

/* Conditions for cdp_wait. */
static int commit_or_gone(void *ud)
{
    struct session *w = ud;
    return w->page->nav_started || !w->page->settle.nav_requested || w->page->crashed || w->page->dialog.open;
}

static int requests_done(void *ud)
{
    struct session *w = ud;
    return json_object_size(w->page->settle.requests) == 0 || w->page->settle.nav_requested || w->page->nav_started ||
           w->page->crashed || w->page->dialog.open;
}

/* Wait for cond with a cap; a capped wait is not a failure, the deadline is. */
static int wait_capped(struct session *w, int (*cond)(void *), long long cap_ms)
{
    long long end = mono_ms() + cap_ms;
    bool capped = !w->call.deadline || end < w->call.deadline;
    if (!capped)
        end = w->call.deadline;
    int st = cdp_wait(w->cdp, cond, w, end);
    if (st == CDP_OK || (st == CDP_TIMEOUT && capped) || w->page->dialog.open)
        return 0;
    if (st == CDP_TIMEOUT)
        return fail_call(w, TV_TIMEOUT, "Raise 'timeout' or check what the page is doing.",
                         "timed out while the page was still reacting to the action");
    return fail_cdp(w, st, "settling");
}

/* The main world's settle(): caused timers and frames, animations, then DOM quiet.
 * Failures other than the call's own end (timeout, cancel, crash) are not
 * the action's: a navigation that replaced the document, say. */
static int page_settle(struct session *w)
{
    char expr[256];
    snprintf(expr, sizeof expr,
             "(globalThis[Symbol.for('tabvisor.settle')] || {settle: async () => null})"
             ".settle({timersCap: %d, animationsCap: %d, animationFrames: %s, quietMs: %d, "
             "quietCap: %d})",
             TIMERS_CAP_MS, ANIMATIONS_CAP_MS, w->firefox ? "true" : "false", QUIET_MS,
             QUIET_CAP_MS);
    json_t *r = NULL;
    if (page_call(
            w, "Runtime.evaluate",
            json_pack("{s:s, s:b, s:b}", "expression", expr, "awaitPromise", 1, "returnByValue", 1),
            &r) < 0) {
        if (w->call.err == TV_TIMEOUT || w->call.err == TV_CANCELLED || w->call.err == TV_BROWSER_CRASHED)
            return -1;
        return 0;
    }
    json_t *v = json_object_get(json_object_get(r, "result"), "value");
    if (json_is_object(v))
        log_debug("settle: page waited %lld ms, %lld still pending, %lld animations, mutated %d",
                  json_integer_value(json_object_get(v, "ms")),
                  json_integer_value(json_object_get(v, "pending")),
                  json_integer_value(json_object_get(v, "animations")),
                  json_is_true(json_object_get(v, "mutated")));
    json_decref(r);
    return 0;
}

/* A navigation the action requested: until it commits (or is dropped),
 * then the new document's DOMContentLoaded. */
static int settle_navigation(struct session *w)
{
    if (!w->page->nav_started && wait_capped(w, commit_or_gone, NAV_COMMIT_CAP_MS) < 0)
        return -1;
    if (w->page->dialog.open)
        return 0;
    return nav_wait(w, "domcontentloaded", NAV_DCL_CAP_MS);
}

int settle(struct session *w)
{
    int rc = 0;
    long long t0 = mono_ms();
    long long requests_end = t0 + REQUESTS_CAP_MS;
    for (int round = 0; round < MAX_ROUNDS && rc == 0 && !w->page->dialog.open; round++) {
        if (w->page->settle.nav_requested || w->page->nav_started) {
            rc = settle_navigation(w);
            break;
        }
        long long left = requests_end - mono_ms();
        if (json_object_size(w->page->settle.requests) && left > 0 &&
            (rc = wait_capped(w, requests_done, left)) < 0)
            break;
        if (w->page->dialog.open || w->page->settle.nav_requested || w->page->nav_started)
            continue;
        long long started = w->page->settle.started;
        rc = page_settle(w);
        if (rc == 0 && w->page->settle.started == started && !w->page->settle.nav_requested &&
            !w->page->nav_started && !json_object_size(w->page->settle.requests))
            break;
    }
    w->page->settle.marked = false;
    if (w->page->dialog.open) {
        /* The dialog is the page's answer; the response says it is open. */
        w->call.err = TV_OK;
        w->call.errmsg[0] = w->call.errhint[0] = 0;
        return 0;
    }
    log_debug("settled in %lld ms", mono_ms() - t0);
    return rc;
}

/* --- navigation of the main frame, as its lifecycle events tell it --- */

void nav_reset(struct session *w)
{
    w->page->nav_started = false;
    w->page->seen_dcl = w->page->seen_load = w->page->seen_idle = false;
    w->page->loader_id[0] = 0;
    settle_mark(w); /* an action starts: count what it sets going */
}

struct nav_cond {
    struct session *w;
    const char *until;
};

static int nav_done(void *ud)
{
    struct nav_cond *c = ud;
    struct session *w = c->w;
    if (w->page->crashed)
        return 1;
    if (strcmp(c->until, "load") == 0)
        return w->page->seen_load;
    if (strcmp(c->until, "networkidle") == 0)
        return w->page->seen_idle;
    return w->page->seen_dcl;
}

int nav_wait(struct session *w, const char *until, long long cap_ms)
{
    if (!w->page->nav_started || strcmp(until, "commit") == 0)
        return 0;
    struct nav_cond c = {w, until};
    long long end = mono_ms() + cap_ms;
    if (w->call.deadline && w->call.deadline < end)
        end = w->call.deadline;
    int st = cdp_wait(w->cdp, nav_done, &c, end);
    if (w->page->crashed)
        return fail_call(w, TV_PAGE_CRASHED, PAGE_CRASHED_HINT,
                         "the page crashed while loading: its renderer process ended");
    if (st == CDP_TIMEOUT && end < w->call.deadline)
        return 0; /* capped wait: go on with what loaded so far */
    if (st != CDP_OK)
        return fail_cdp(w, st, "navigation");
    return 0;
}

void nav_on_event(struct session *w, const char *session, const char *method, json_t *params)
{
    if (strcmp(method, "Page.lifecycleEvent") == 0) {
        const char *frame = json_string_value(json_object_get(params, "frameId"));
        const char *name = json_string_value(json_object_get(params, "name"));
        const char *loader = json_string_value(json_object_get(params, "loaderId"));
        if (!frame || !name || strcmp(frame, w->page->target_id) != 0)
            return;
        log_debug("lifecycle %s loader %s", name, loader ? loader : "-");
        if (strcmp(name, "init") == 0) {
            /* A new document in the main frame. */
            nav_reset(w);
            w->page->nav_started = true;
            snprintf(w->page->loader_id, sizeof w->page->loader_id, "%s", loader ? loader : "");
            return;
        }
        if (loader && w->page->loader_id[0] && strcmp(loader, w->page->loader_id) != 0)
            return;
        if (strcmp(name, "DOMContentLoaded") == 0)
            w->page->seen_dcl = true;
        else if (strcmp(name, "load") == 0)
            w->page->seen_load = true;
        else if (strcmp(name, "networkIdle") == 0)
            w->page->seen_idle = true;
    } else if (strcmp(method, "Page.frameStoppedLoading") == 0) {
        /* The main frame finished loading its document. Through
         * chrome.debugger (extension mode) the "load" lifecycle event of a
         * navigation is sometimes never sent; this one is. Counted only after
         * this document's DOMContentLoaded, so an earlier document's stop
         * cannot end the wait. */
        const char *frame = json_string_value(json_object_get(params, "frameId"));
        if (frame && strcmp(frame, w->page->target_id) == 0 && w->page->nav_started && w->page->seen_dcl)
            w->page->seen_load = true;
    } else if (strcmp(method, "Inspector.targetCrashed") == 0) {
        /* An out-of-process iframe crashing is not the page crashing. */
        if (session && strcmp(session, w->page->cdp_session) != 0)
            return;
        w->page->crashed = true;
        log_error("the page crashed");
    } else if (strcmp(method, "Target.detachedFromTarget") == 0) {
        const char *sid = json_string_value(json_object_get(params, "sessionId"));
        if (sid && strcmp(sid, w->page->cdp_session) == 0)
            w->page->crashed = true;
    }
}
