/*
 * dialogs.c - JavaScript dialogs (alert, confirm, prompt, beforeunload) as a
 * modal state of the page.
 *
 * While a dialog is open the page's renderer is blocked: Chromium holds every
 * Runtime.evaluate, Input.* and Page.captureScreenshot until the dialog is
 * answered. So the worker tracks the open dialog from Page.javascriptDialog*
 * events and, through the CDP abort hook (cdp_set_abort), ends every wait of
 * the running call at once when one opens and refuses to send page commands
 * while it stays open: tools fail with MODAL_STATE naming
 * browser_handle_dialog, and every response says a dialog is open
 * (page_state_notes). Nothing is answered automatically: the agent decides.
 */
#include <stdio.h>
#include <string.h>

#include "tabs.h"
#include "hooks.h"
#include "worker.h"

void dialogs_on_event(struct session *w, const char *session, const char *method, json_t *params)
{
    if (strcmp(method, "Page.javascriptDialogOpening") == 0) {
        /* Answered later on the session that showed it. */
        snprintf(w->page->dialog.session, sizeof w->page->dialog.session, "%s", session ? session : "");
        const char *type = json_string_value(json_object_get(params, "type"));
        const char *msg = json_string_value(json_object_get(params, "message"));
        const char *dp = json_string_value(json_object_get(params, "defaultPrompt"));
        w->page->dialog.open = true;
        snprintf(w->page->dialog.type, sizeof w->page->dialog.type, "%s", type ? type : "alert");
        snprintf(w->page->dialog.message, sizeof w->page->dialog.message, "%s", msg ? msg : "");
        snprintf(w->page->dialog.default_prompt, sizeof w->page->dialog.default_prompt, "%s", dp ? dp : "");
        utf8_drop_partial_tail(w->page->dialog.message);
        utf8_drop_partial_tail(w->page->dialog.default_prompt);
    } else if (strcmp(method, "Page.javascriptDialogClosed") == 0) {
        w->page->dialog.open = false;
    } else if (strcmp(method, "Inspector.targetCrashed") == 0) {
        w->page->dialog.open = false;
    }
}

/* The "### Modal state" note and structuredContent.modalState. */
static void modal_note(struct session *w, json_t *content, json_t *structured)
{
    char text[1600];
    snprintf(text, sizeof text,
             "### Modal state\n- [%s dialog with message \"%.1000s\"]: the page is blocked; "
             "answer it with browser_handle_dialog",
             w->page->dialog.type, w->page->dialog.message);
    json_array_append_new(content, json_pack("{s:s, s:s}", "type", "text", "text", text));
    json_t *m = json_pack("{s:s, s:s}", "type", w->page->dialog.type, "message", w->page->dialog.message);
    if (strcmp(w->page->dialog.type, "prompt") == 0)
        json_object_set_new(m, "defaultPrompt", json_string(w->page->dialog.default_prompt));
    json_object_set_new(structured, "modalState", m);
}

/* The same for a dialog of another tab. */
static void other_modal_note(int tab, const char *type, const char *message, json_t *content,
                             json_t *structured)
{
    char text[1600];
    snprintf(text, sizeof text,
             "### Modal state\n- [%s dialog with message \"%.1000s\"] in tab %d: the session's "
             "pages are blocked; answer it with browser_handle_dialog",
             type, message, tab);
    json_array_append_new(content, json_pack("{s:s, s:s}", "type", "text", "text", text));
    json_object_set_new(structured, "modalState",
                        json_pack("{s:s, s:s, s:i}", "type", type, "message", message, "tab", tab));
}

void page_state_notes(struct session *w, json_t *content, json_t *structured)
{
    if (!json_is_array(content) || !json_is_object(structured))
        return;
    const char *type, *message;
    int other;
    if (w->page->dialog.open)
        modal_note(w, content, structured);
    else if ((other = tabs_other_dialog(w, &type, &message)) >= 0)
        other_modal_note(other, type, message, content, structured);
    /* The pending file chooser, console errors, downloads (hooks.h). */
    hooks_run_notes(w, content, structured);
}
