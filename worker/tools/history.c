/* history.c - browser_navigate_back, browser_navigate_forward and
 * browser_reload: move in the tab's session history (or load the page
 * again) and wait for the document like browser_navigate does. */
#include <stdio.h>
#include <string.h>

#include "worker.h"

/* The page after a history move or reload: like browser_navigate's result. */
static json_t *moved(struct session *w, const char *verb)
{
    page_refresh_info(w);
    json_t *out = json_object();
    add_page(w, out);
    char text[3000];
    snprintf(text, sizeof text, "%s %s\nTitle: %s", verb, w->page->url, w->page->title);
    page_shown(w);
    return page_action_result(w, text, out);
}

/* After the command that starts it: the navigation commits (or turns out
 * to be within the document, or restored from the back-forward cache),
 * then the new document reaches waitUntil. */
static int wait_moved(struct session *w, json_t *args)
{
    if (settle(w) < 0)
        return -1;
    if (w->page->dialog.open)
        return 0;
    return nav_wait(w, arg_str(args, "waitUntil", "load"), 1LL << 40);
}

static json_t *go(struct session *w, json_t *args, int step)
{
    json_t *h;
    if (page_call(w, "Page.getNavigationHistory", NULL, &h) < 0)
        return tool_fail(w);
    json_t *entries = json_object_get(h, "entries");
    long long cur = json_integer_value(json_object_get(h, "currentIndex"));
    long long to = cur + step;
    if (to < 0 || to >= (long long)json_array_size(entries)) {
        json_decref(h);
        fail_call(w, TV_INVALID_PARAMETERS,
                  step < 0 ? "Use browser_navigate to load a page." : NULL,
                  "there is no %s page in this tab's history (%zu entries, at %lld)",
                  step < 0 ? "previous" : "next", json_array_size(entries), cur + 1);
        page_refresh_info(w);
        return tool_fail(w);
    }
    json_int_t id = json_integer_value(json_object_get(json_array_get(entries, (size_t)to), "id"));
    json_decref(h);
    nav_reset(w);
    /* Set before the command: the events that end it may come before its
     * answer. */
    w->page->settle.nav_requested = true;
    if (page_call(w, "Page.navigateToHistoryEntry", json_pack("{s:I}", "entryId", id), NULL) < 0) {
        /* Firefox's history is known only a step at a time (cdp/bidi_map.c):
         * a step that is not there is found out here. */
        if (w->firefox && strstr(w->call.errmsg, "no such history entry")) {
            fail_call(w, TV_INVALID_PARAMETERS,
                      step < 0 ? "Use browser_navigate to load a page." : NULL,
                      "there is no %s page in this tab's history", step < 0 ? "previous" : "next");
            page_refresh_info(w);
        }
        return tool_fail(w);
    }
    if (wait_moved(w, args) < 0)
        return tool_fail(w);
    return moved(w, step < 0 ? "Went back to" : "Went forward to");
}

json_t *tool_navigate_back(struct session *w, json_t *args)
{
    return go(w, args, -1);
}

json_t *tool_navigate_forward(struct session *w, json_t *args)
{
    return go(w, args, 1);
}

json_t *tool_reload(struct session *w, json_t *args)
{
    nav_reset(w);
    w->page->settle.nav_requested = true;
    if (page_call(w, "Page.reload",
                  json_pack("{s:b}", "ignoreCache", arg_bool(args, "ignoreCache", false)),
                  NULL) < 0 ||
        wait_moved(w, args) < 0)
        return tool_fail(w);
    return moved(w, "Reloaded");
}
