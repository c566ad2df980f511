/*
 * fuzz_bidi_policy.c - the BiDi policy table (proto/bidi_policy.c) on
 * arbitrary JSON: never a crash or a leak, and a command it lets through
 * never names another session's context, user context or handle where the
 * browser would act on it (params' own keys, target.context, partition's
 * context and userContext).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bidi_policy.h"

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
    json_t *m = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
    if (!m)
        return 0;
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
    }
    json_decref(m);
    return 0;
}
