/*
 * dialog.c - browser_handle_dialog: answer the JavaScript dialog the page is
 * showing (accept or dismiss; promptText for a prompt), then let the page
 * react as after any action (a beforeunload accepted lets its navigation
 * go on, a confirm's caller carries on) and report the page.
 */
#include <stdio.h>
#include <string.h>

#include "tabs.h"
#include "worker.h"

json_t *tool_handle_dialog(struct session *w, json_t *args)
{
    bool accept = arg_bool(args, "accept", false);
    const char *prompt_text = arg_str(args, "promptText", NULL);
    /* A dialog of another tab (it blocks the session too): answered in
     * that tab, which becomes current. */
    int other = w->page->dialog.open ? -1 : tabs_other_dialog(w, NULL, NULL);
    if (other >= 0 && tabs_select(w, other) < 0)
        return tool_fail(w);
    if (!w->page->dialog.open) {
        fail_call(w, TV_INVALID_PARAMETERS,
                  "Only call browser_handle_dialog when a response shows '### Modal state'.",
                  "no dialog is open");
        return tool_fail(w);
    }
    char type[sizeof w->page->dialog.type], message[sizeof w->page->dialog.message];
    snprintf(type, sizeof type, "%s", w->page->dialog.type);
    snprintf(message, sizeof message, "%s", w->page->dialog.message);

    json_t *p = json_pack("{s:b}", "accept", accept);
    if (prompt_text)
        json_object_set_new(p, "promptText", json_string(prompt_text));
    nav_reset(w); /* marks the start of an action for settle() too */
    w->page->dialog.answering = true;
    int rc = session_call(w, w->page->dialog.session, "Page.handleJavaScriptDialog", p, NULL);
    w->page->dialog.answering = false;
    if (rc < 0) {
        /* Chromium has no dialog (it went with its document): say so. */
        if (w->call.err == TV_BROWSER_ERROR && strstr(w->call.errmsg, "No dialog")) {
            w->page->dialog.open = false;
            fail_call(w, TV_INVALID_PARAMETERS, NULL, "no dialog is open (it was closed)");
        }
        return tool_fail(w);
    }
    w->page->dialog.open = false; /* Page.javascriptDialogClosed may come later */
    if (settle(w) < 0)
        return tool_fail(w);
    page_refresh_info(w);

    char text[sizeof message + 3000];
    char selected[64] = "";
    if (other >= 0)
        snprintf(selected, sizeof selected, " in tab %d (now the current tab)", other);
    snprintf(text, sizeof text, "%s the %s dialog \"%.500s\"%s%s%s%s\nPage URL: %s\nPage Title: %s",
             accept ? "Accepted" : "Dismissed", type, message,
             prompt_text && accept ? " with text \"" : "", prompt_text && accept ? prompt_text : "",
             prompt_text && accept ? "\"" : "", selected, w->page->url, w->page->title);
    json_t *out = json_pack("{s:s, s:b}", "dialogType", type, "accepted", accept);
    add_page(w, out);
    return tool_ok(w, text, out);
}
