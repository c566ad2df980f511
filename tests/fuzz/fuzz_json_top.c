/*
 * fuzz_json_top.c - the CDP bridge's router (proto/json_top.c) on arbitrary
 * bytes: it must never read out of bounds, its spans must lie inside the
 * input, and where jansson reads the same text as an object with an integer
 * "id" and string "method"/"sessionId", the scanner must agree with it
 * (a disagreement would route a message to the wrong worker).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "json_top.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    struct json_top t;
    if (json_top_scan(s, size, &t) < 0)
        return 0;
    if (t.id_end && (t.id_start >= t.id_end || t.id_end > size))
        abort();
    if (t.method && (t.method < s || t.method + t.method_len > s + size))
        abort();
    if (t.session && (t.session < s || t.session + t.session_len > s + size))
        abort();
    json_t *j = json_loadb(s, size, JSON_REJECT_DUPLICATES, NULL);
    if (!j)
        return 0; /* the scanner is allowed to be more lenient than JSON */
    json_t *id = json_object_get(j, "id");
    if (json_is_integer(id) && (!t.id_end || json_integer_value(id) != t.id))
        abort();
    if (!id && t.id_end)
        abort();
    const char *v = json_string_value(json_object_get(j, "sessionId"));
    if (v && (!t.session || strlen(v) != t.session_len || memcmp(v, t.session, t.session_len)))
        abort();
    v = json_string_value(json_object_get(j, "method"));
    if (v && (!t.method || strlen(v) != t.method_len || memcmp(v, t.method, t.method_len)))
        abort();
    json_decref(j);
    return 0;
}
