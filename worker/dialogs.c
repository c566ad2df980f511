/*
 * dialogs.c - JavaScript dialogs (alert, confirm, prompt, beforeunload).
 */
#include <stdio.h>
#include <string.h>

#include "worker.h"

void dialogs_on_event(struct wctx *w, const char *session, const char *method, json_t *params)
{
    if (strcmp(method, "Page.javascriptDialogOpening") == 0) {
        /* Until browser_handle_dialog exists, dismiss dialogs so the page
         * never blocks, and say so in the next result. */
        const char *type = json_string_value(json_object_get(params, "type"));
        const char *msg = json_string_value(json_object_get(params, "message"));
        snprintf(w->dialog_note, sizeof w->dialog_note, "A %s dialog was dismissed: \"%.400s\"",
                 type ? type : "JavaScript", msg ? msg : "");
        json_t *p = json_pack("{s:b}", "accept", strcmp(type ? type : "", "beforeunload") == 0);
        cdp_send(w->cdp, w->cdp_session, "Page.handleJavaScriptDialog", p);
        json_decref(p);
    }
}
