/*
 * hooks.c - see hooks.h. Fixed tables: every entry is made at start-up, so
 * their size is known when the worker is written (a new hook that does not
 * fit aborts the first start, which every test does).
 */
#include <stdlib.h>

#include "hooks.h"

#define HOOKS_MAX 24

#define HOOK_TABLE(name, type)                                                                     \
    static struct {                                                                                \
        type fn[HOOKS_MAX];                                                                        \
        int n;                                                                                     \
    } name;                                                                                        \
    static void name##_add(type fn)                                                                \
    {                                                                                              \
        if (name.n == HOOKS_MAX)                                                                   \
            abort();                                                                               \
        name.fn[name.n++] = fn;                                                                    \
    }

HOOK_TABLE(event_hooks, event_hook)
HOOK_TABLE(attach_hooks, attach_hook)
HOOK_TABLE(notes_hooks, notes_hook)

void hooks_on_event(event_hook fn)
{
    event_hooks_add(fn);
}

void hooks_on_attach(attach_hook fn)
{
    attach_hooks_add(fn);
}

void hooks_on_notes(notes_hook fn)
{
    notes_hooks_add(fn);
}

void hooks_run_event(struct session *w, const char *session, const char *method, json_t *params)
{
    for (int i = 0; i < event_hooks.n; i++)
        event_hooks.fn[i](w, session, method, params);
}

void hooks_run_attach(struct session *w, const char *session, enum attach_kind kind)
{
    for (int i = 0; i < attach_hooks.n; i++)
        attach_hooks.fn[i](w, session, kind);
}

void hooks_run_notes(struct session *w, json_t *content, json_t *structured)
{
    for (int i = 0; i < notes_hooks.n; i++)
        notes_hooks.fn[i](w, content, structured);
}
