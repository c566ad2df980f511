/*
 * fuzz_bidi_policy.c - a worker's command as the BiDi bridge reads it
 * (bridge_command_parse: values counted before a tree is built) and the
 * BiDi policy table (proto/bidi_policy.c) on the result, from arbitrary
 * bytes: never a crash or a leak, a text over the value bound never built,
 * an unsubscribe let through only by subscription ids, and a command it lets through
 * never names another session's context, user context or handle where the
 * browser would act on it (params' own keys, target.context, partition's
 * context and userContext).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bidi_policy.h"
#include "bridge_command.h"
#include "json_util.h"

static bool owns_context(void *ud, const char *c)
{
    (void)ud;
    return strcmp(c, "a1") == 0;
}

static bool owns_handle(void *ud, const char *kind, const char *id)
{
    (void)ud;
    (void)kind;
    return strcmp(id, "h1") == 0;
}

static const char *const scoped_keys[] = {
    "context",      "root",   "referenceContext", "contexts",  "userContext",
    "userContexts", "script", "request",          "intercept", "subscriptions"};

/* A value naming something that is not session A's. */
static bool foreign(const json_t *v)
{
    if (json_is_array(v)) {
        size_t i;
        const json_t *e;
        json_array_foreach(v, i, e) if (foreign(e)) return true;
        return false;
    }
    const char *s = json_string_value(v);
    return s && strcmp(s, "a1") != 0 && strcmp(s, "uA") != 0 && strcmp(s, "h1") != 0;
}

static bool names_foreign(const json_t *obj)
{
    for (size_t i = 0; i < sizeof scoped_keys / sizeof scoped_keys[0]; i++) {
        const json_t *v = json_object_get(obj, scoped_keys[i]);
        if (v && foreign(v))
            return true;
    }
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *why = NULL;
    json_t *m = bridge_command_parse((const char *)data, size, JSON_REJECT_DUPLICATES, &why);
    if (!m) {
        if (!why)
            abort();
        return 0;
    }
    if (!json_text_values_within((const char *)data, size, BRIDGE_MAX_COMMAND_VALUES))
        abort();
    struct bidi_owner a = {"uA", owns_context, owns_handle, NULL};
    if (!bidi_policy_check(m, &a)) {
        const json_t *p = json_object_get(m, "params");
        const json_t *t = json_object_get(p, "target");
        /* A realm target is refused whatever else it names. */
        const json_t *part = json_object_get(p, "partition");
        if (names_foreign(p) || foreign(json_object_get(part, "context")) ||
            foreign(json_object_get(part, "userContext")) ||
            (t && foreign(json_object_get(t, "context"))) || json_object_get(t, "realm"))
            abort();
        /* Issue 36, finding 1: by its own subscription ids, nothing else. */
        const char *method = json_string_value(json_object_get(m, "method"));
        if (method && !strcmp(method, "session.unsubscribe") &&
            (json_object_size(p) != 1 || !json_object_get(p, "subscriptions")))
            abort();
    }
    json_decref(m);
    return 0;
}
