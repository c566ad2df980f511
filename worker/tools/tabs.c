/* tabs.c - browser_tabs (list, new, select, close) and browser_close. */
#include <stdio.h>
#include <string.h>

#include "tabs.h"
#include "worker.h"

/* "### Open tabs" lines as @playwright/mcp writes them, after head (may be
 * NULL); structured gets tabs[] and the current page. With page_view, the
 * current tab's page too, as after a navigation (new, select). */
static json_t *tabs_result(struct session *w, const char *head, json_t *structured, bool page_view)
{
    page_refresh_info(w);
    json_t *list = tabs_list_json(w);
    struct sb text = {0};
    if (head)
        sb_printf(&text, "%s\n", head);
    sb_printf(&text, "### Open tabs\n");
    size_t i;
    json_t *t;
    json_array_foreach(list, i, t)
    {
        sb_printf(&text, "- %zu:%s [%s] (%s)\n", i,
                  json_is_true(json_object_get(t, "current")) ? " (current)" : "",
                  json_string_value(json_object_get(t, "title")),
                  json_string_value(json_object_get(t, "url")));
    }
    if (!structured)
        structured = json_object();
    json_object_set_new(structured, "tabs", list);
    json_object_set_new(structured, "current", json_integer(tabs_current(w)));
    add_page(w, structured);
    json_t *r;
    if (page_view) {
        page_shown(w); /* the list names its URL and title */
        r = page_action_result(w, text.p ? text.p : "", structured);
    } else {
        r = tool_ok(w, text.p ? text.p : "", structured);
    }
    free(text.p);
    return r;
}

/* The index argument: -1 when absent. */
static int arg_index(json_t *args)
{
    json_t *v = json_object_get(args, "index");
    return json_is_integer(v) ? (int)json_integer_value(v) : -1;
}

json_t *tool_tabs(struct session *w, json_t *args)
{
    const char *action = arg_str(args, "action", "list");
    int index = arg_index(args);
    char head[200];
    if (strcmp(action, "list") == 0) {
        /* Popups the page opened just before are announced by events that
         * may still be on their way: take those in first. */
        pause_ms(w, 0);
        tabs_sync(w);
        return tabs_result(w, NULL, NULL, false);
    }
    if (strcmp(action, "select") == 0) {
        if (index < 0) {
            fail_call(w, TV_INVALID_PARAMETERS, "Give the tab's index (see action 'list').",
                      "action 'select' needs an index");
            return tool_fail(w);
        }
        if (tabs_select(w, index) < 0)
            return tool_fail(w);
        snprintf(head, sizeof head, "Selected tab %d", index);
        return tabs_result(w, head, NULL, true);
    }
    if (strcmp(action, "close") == 0) {
        bool last = tabs_count(w) == 1 && (index < 0 || index == 0);
        if (tabs_close(w, index) < 0)
            return tool_fail(w);
        if (index < 0)
            snprintf(head, sizeof head, "Closed the current tab%s",
                     last ? "; a new blank tab is open" : "");
        else
            snprintf(head, sizeof head, "Closed tab %d%s", index,
                     last ? "; a new blank tab is open" : "");
        return tabs_result(w, head, NULL, false);
    }
    /* new */
    if (tabs_new(w) < 0)
        return tool_fail(w);
    const char *url = arg_str(args, "url", NULL);
    if (url && *url) {
        /* Its page view comes with the tab list below. */
        json_t *nav_args = json_pack("{s:s, s:s}", "url", url, "snapshot", "none");
        json_t *outer = w->call.args; /* respond.c reads the call's snapshot mode there */
        w->call.args = nav_args;
        json_t *r = tool_navigate(w, nav_args);
        w->call.args = outer;
        json_decref(nav_args);
        /* The tab stays open (and current) when its page does not load. */
        if (json_is_true(json_object_get(r, "isError")))
            return r;
        json_decref(r);
    }
    snprintf(head, sizeof head, "Opened tab %d", tabs_current(w));
    return tabs_result(w, head, NULL, url && *url);
}

json_t *tool_close(struct session *w, json_t *args)
{
    (void)args;
    if (tabs_reset(w) < 0)
        return tool_fail(w);
    return tabs_result(w,
                       "Closed the page (every tab, with cookies and storage); a new blank tab "
                       "is open",
                       NULL, false);
}
