/*
 * webstorage.c - browser_localstorage_* and browser_sessionstorage_*: the
 * current page's origin's Web Storage, read and written from our isolated
 * world (which shares the page's storage, not its JavaScript globals, so a
 * page that replaced localStorage.getItem cannot lie to us).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

/* Runs op on window[kind]; answers {origin, ...} or {error, origin}. */
static const char STORAGE_JS[] =
    "((kind, op, key, value) => {\n"
    "  let s;\n"
    "  try { s = window[kind]; if (!s) throw new Error('not available'); }\n"
    "  catch (e) { return {error: String(e && e.message || e), origin: String(location.origin)}; "
    "}\n"
    "  const origin = location.origin;\n"
    "  try {\n"
    "    if (op === 'list') {\n"
    "      const items = [];\n"
    "      for (let i = 0; i < s.length; i++) { const k = s.key(i); items.push({key: k, value: "
    "s.getItem(k)}); }\n"
    "      return {origin, items};\n"
    "    }\n"
    "    if (op === 'get') { const v = s.getItem(key); return {origin, found: v !== null, value: "
    "v}; }\n"
    "    if (op === 'set') { s.setItem(key, value); return {origin}; }\n"
    "    if (op === 'delete') { const had = s.getItem(key) !== null; s.removeItem(key); return "
    "{origin, deleted: had}; }\n"
    "    const n = s.length; s.clear(); return {origin, cleared: n};\n"
    "  } catch (e) { return {error: String(e && e.message || e), origin}; }\n"
    "})";

/* The value of STORAGE_JS(kind, op, key, value) in the main frame, or NULL
 * with w->call.err set. */
static json_t *storage_op(struct session *w, const char *kind, const char *op, const char *key,
                          const char *value)
{
    json_t *a = json_pack("[s, s, s?, s?]", kind, op, key, value);
    char *aj = json_dumps(a, JSON_COMPACT);
    json_decref(a);
    if (!aj) {
        fail_call(w, TV_INVALID_PARAMETERS, NULL, "arguments cannot be encoded");
        return NULL;
    }
    size_t n = strlen(aj);
    aj[n - 1] = 0; /* drop the ']': the array's items are the call's arguments */
    struct sb src = {0};
    sb_printf(&src, "%s(%s)", STORAGE_JS, aj + 1);
    free(aj);
    json_t *v = NULL;
    int rc = util_eval(w, src.p, &v);
    free(src.p);
    if (rc < 0)
        return NULL;
    const char *err = json_string_value(json_object_get(v, "error"));
    if (err) {
        fail_call(w, TV_INVALID_PARAMETERS,
                  "Navigate to a page of the site first: storage belongs to a page's origin.",
                  "%s is not available on this page (origin %.100s): %.300s", kind,
                  json_string_value(json_object_get(v, "origin")) ?: "?", err);
        json_decref(v);
        return NULL;
    }
    return v;
}

static json_t *storage_tool(struct session *w, json_t *args, const char *kind, const char *op)
{
    const char *key = arg_str(args, "key", NULL), *value = arg_str(args, "value", NULL);
    json_t *v = storage_op(w, kind, op, key, value);
    if (!v)
        return tool_fail(w);
    const char *origin = json_string_value(json_object_get(v, "origin")) ?: "";
    struct sb b = {0};
    json_t *out = json_pack("{s:s}", "origin", origin);
    if (strcmp(op, "list") == 0) {
        json_t *items = json_object_get(v, "items");
        sb_printf(&b, "%s of %s: %zu item%s\n", kind, origin, json_array_size(items),
                  json_array_size(items) == 1 ? "" : "s");
        size_t i;
        json_t *it;
        json_array_foreach(items, i, it)
        {
            sb_printf(&b, "- %s=%s\n", json_string_value(json_object_get(it, "key")) ?: "",
                      json_string_value(json_object_get(it, "value")) ?: "");
        }
        json_object_set(out, "items", items);
    } else if (strcmp(op, "get") == 0) {
        bool found = json_is_true(json_object_get(v, "found"));
        if (found)
            sb_printf(&b, "%s", json_string_value(json_object_get(v, "value")) ?: "");
        else
            sb_printf(&b, "No %s item '%.200s' on %s", kind, key, origin);
        json_object_set_new(out, "found", json_boolean(found));
        if (found)
            json_object_set(out, "value", json_object_get(v, "value"));
    } else if (strcmp(op, "set") == 0) {
        sb_printf(&b, "Set %s item '%.200s' on %s", kind, key, origin);
    } else if (strcmp(op, "delete") == 0) {
        bool had = json_is_true(json_object_get(v, "deleted"));
        sb_printf(&b, had ? "Deleted %s item '%.200s' on %s" : "No %s item '%.200s' on %s", kind,
                  key, origin);
        json_object_set_new(out, "deleted", json_boolean(had));
    } else {
        sb_printf(&b, "Cleared %s of %s (%lld items)", kind, origin,
                  (long long)json_integer_value(json_object_get(v, "cleared")));
    }
    json_decref(v);
    json_t *res = tool_ok(w, b.p, out);
    free(b.p);
    return res;
}

#define STORAGE_TOOL(fn, kind, op)                                                                 \
    json_t *fn(struct session *w, json_t *args)                                                       \
    {                                                                                              \
        return storage_tool(w, args, kind, op);                                                    \
    }
STORAGE_TOOL(tool_localstorage_list, "localStorage", "list")
STORAGE_TOOL(tool_localstorage_get, "localStorage", "get")
STORAGE_TOOL(tool_localstorage_set, "localStorage", "set")
STORAGE_TOOL(tool_localstorage_delete, "localStorage", "delete")
STORAGE_TOOL(tool_localstorage_clear, "localStorage", "clear")
STORAGE_TOOL(tool_sessionstorage_list, "sessionStorage", "list")
STORAGE_TOOL(tool_sessionstorage_get, "sessionStorage", "get")
STORAGE_TOOL(tool_sessionstorage_set, "sessionStorage", "set")
STORAGE_TOOL(tool_sessionstorage_delete, "sessionStorage", "delete")
STORAGE_TOOL(tool_sessionstorage_clear, "sessionStorage", "clear")
