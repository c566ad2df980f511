/*
 * children.c - the CDP child sessions of each tab (out-of-process iframes,
 * workers: what Target.setAutoAttach {flatten} announces with
 * Target.attachedToTarget), so that a command on a child session goes out
 * only for the tab the child belongs to. Without the check a session could
 * name another session's child in relay-cdp {tabId: own tab, cdpSession}
 * and leave it to chrome.debugger to refuse; events of a child already go
 * only to the tab's owner (they carry the tab's id).
 *
 * The table (r->children: child session id -> tab id) is learned from the
 * events the extension forwards, before the owner sees them, so a worker
 * can never use a child the relay does not know yet.
 */
#include "relay.h"

#include <string.h>

#include "json_util.h"
#include "log.h"

/* Children of one session's tabs: beyond this its pages misbehave, and its
 * new children are refused. Per session, so that one session's page full of
 * out-of-process frames cannot lock the others out of theirs (a table-wide
 * bound did); the whole table is bounded by REG_MAX_SESSIONS times this. */
#define CHILDREN_PER_SESSION 1024

/* How many known children belong to tabs of session owner (counted only
 * when the table is big enough for it to matter). */
static size_t children_of_session(struct relay *r, int owner)
{
    if (json_object_size(r->children) < CHILDREN_PER_SESSION)
        return json_object_size(r->children);
    size_t n = 0;
    const char *k;
    json_t *v;
    json_object_foreach(r->children, k, v)
    {
        const struct reg_tab *t = reg_tab_get(&r->reg, json_integer_value(v));
        if (t && t->owner == owner)
            n++;
    }
    return n;
}

void children_note_event(struct relay *r, int64_t tab_id, const char *method, const json_t *params)
{
    const char *child = json_string_value(json_object_get(params, "sessionId"));
    if (!child || !*child)
        return;
    if (strcmp(method, "Target.attachedToTarget") == 0) {
        const struct reg_tab *t = reg_tab_get(&r->reg, tab_id);
        if (t && children_of_session(r, t->owner) >= CHILDREN_PER_SESSION) {
            log_warn("tab %lld: child session %s not recorded (its session has %d)",
                     (long long)tab_id, child, CHILDREN_PER_SESSION);
            return;
        }
        json_object_set_new(r->children, child, json_integer(tab_id));
    } else if (strcmp(method, "Target.detachedFromTarget") == 0) {
        json_t *v = json_object_get(r->children, child);
        if (v && json_integer_value(v) == tab_id)
            json_object_del(r->children, child);
    }
}

bool children_of_tab(const struct relay *r, const char *child, int64_t tab_id)
{
    json_t *v = json_object_get(r->children, child);
    return v && json_integer_value(v) == tab_id;
}

void children_forget_tab(struct relay *r, int64_t tab_id)
{
    json_object_del_int_values(r->children, tab_id);
}

void children_prune(struct relay *r)
{
    const char *k;
    void *tmp;
    json_t *v;
    json_object_foreach_safe(r->children, tmp, k, v)
    {
        if (!reg_tab_get(&r->reg, json_integer_value(v)))
            json_object_del(r->children, k);
    }
}
