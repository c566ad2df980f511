/* json_util.c - see json_util.h. */
#include "json_util.h"

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
