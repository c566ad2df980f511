/* json_util.c - see json_util.h. */
#include "json_util.h"

#include <stdbool.h>
#include <string.h>

size_t json_object_del_int_values(json_t *obj, json_int_t value)
{
    size_t gone = 0;
    const char *k;
    void *tmp;
    json_t *v;
    json_object_foreach_safe(obj, tmp, k, v)
    {
        if (json_is_integer(v) && json_integer_value(v) == value) {
            json_object_del(obj, k);
            gone++;
        }
    }
    return gone;
}

size_t json_weight(const json_t *v)
{
    size_t w = 8;
    if (json_is_string(v)) {
        w += json_string_length(v);
    } else if (json_is_array(v)) {
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) w += json_weight(e);
    } else if (json_is_object(v)) {
        const char *k;
        json_t *e;
        json_object_foreach((json_t *)v, k, e) w += strlen(k) + json_weight(e);
    }
    return w;
}

int json_text_values_within(const char *s, size_t n, size_t max)
{
    size_t values = 1;
    bool in_string = false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (in_string) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == '"')
            in_string = true;
        else if (c == '[' || c == '{' || c == ',' || c == ':')
            values++;
        if (values > max)
            return 0;
    }
    return 1;
}
