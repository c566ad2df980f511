/*
 * bidi_msg.c - the messages every part of the BiDi map builds: CDP answers
 * and errors, and a BiDi command with the note of how its answer maps back
 * (bidi_map_int.h). Below the map and its parts (cookies, input, intercept,
 * print), so none of them calls back into bidi_map.c.
 */
#include "bidi_map_int.h"

#include <stdarg.h>
#include <stdio.h>

#include "transport.h"

json_t *bm_answer(long long id, json_t *result)
{
    return json_pack("{s:I, s:o}", "id", (json_int_t)id, "result", result ? result : json_object());
}

json_t *bm_error(long long id, int code, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return json_pack("{s:I, s:{s:i, s:s}}", "id", (json_int_t)id, "error", "code", code, "message",
                     msg);
}

json_t *bm_not_supported(long long id, const char *method)
{
    return bm_error(id, CDP_ERR_NOT_SUPPORTED,
                    "%s has no WebDriver BiDi counterpart in tabvisor (Firefox)", method);
}

/* Note how id's answer maps back, then hand out the command. */
enum bidi_outcome bm_send_with(struct bidi_map *m, long long id, enum kind kind, bool by_value,
                               json_t *extra, const char *context, const char *method,
                               json_t *params, json_t **out)
{
    char key[24];
    snprintf(key, sizeof key, "%lld", id);
    json_object_set_new(m->pending, key,
                        json_pack("[i,s,b,o]", (int)kind, context ? context : "", by_value,
                                  extra ? extra : json_null()));
    *out = json_pack("{s:I, s:s, s:o}", "id", (json_int_t)id, "method", method, "params", params);
    return BIDI_SEND;
}

const char *bm_str(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

double bm_num(json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}

enum bidi_outcome bm_send(struct bidi_map *m, long long id, enum kind kind, const char *context,
                          const char *method, json_t *params, json_t **out)
{
    return bm_send_with(m, id, kind, true, NULL, context, method, params, out);
}
