/* snapshot.c - browser_snapshot: the page's text from take_snapshot
 * (snapshot_take.c); respond.c bounds it, writes it to a file or keeps it as
 * the base for diffs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "log.h"
#include "worker.h"

json_t *tool_snapshot(struct session *w, json_t *args)
{
    json_t *opts = json_object();
    bool whole = true;
    static const char *const keys[] = {"target", "depth", "interactive"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        json_t *v = json_object_get(args, keys[i]);
        if (v && !json_is_false(v)) {
            json_object_set(opts, keys[i], v);
            whole = false;
        }
    }
    char *text;
    if (take_snapshot(w, opts, &text) < 0)
        return tool_fail(w);
    /* Bounds, filename and the diff base are the response's business. */
    json_t *res = respond_snapshot(w, text, args, whole);
    free(text);
    return res;
}
