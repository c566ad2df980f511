/*
 * find.c - browser_find: the lines of the page's snapshot that match a text
 * (case-insensitive substring) or a JavaScript regular expression, each
 * with its ancestors' lines so the agent sees where it sits, bounded like
 * every response.
 *
 * Matching runs in our isolated world rather than in C: agents write
 * JavaScript regexes (\d, lookahead, /.../i), and the page's engine gives
 * exactly those semantics and Unicode case folding. The cost is one more
 * round trip carrying the snapshot text, a few ms even for big pages.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

/* Returns {hits:[line numbers]} or {error}. "/src/flags" is a regex with
 * flags; g and y are dropped since test() would then keep state. */
static const char match_fn[] =
    "((src, isRe, text) => {"
    "  let test;"
    "  if (isRe) {"
    "    const m = /^\\/(.*)\\/([a-z]*)$/s.exec(src);"
    "    let re;"
    "    try { re = m ? new RegExp(m[1], m[2].replace(/[gy]/g, '')) : new RegExp(src); }"
    "    catch (e) { return { error: String(e && e.message) }; }"
    "    test = (l) => re.test(l);"
    "  } else {"
    "    const t = src.toLowerCase();"
    "    test = (l) => l.toLowerCase().includes(t);"
    "  }"
    "  const hits = [];"
    "  text.split('\\n').forEach((l, i) => { if (test(l)) hits.push(i); });"
    "  return { hits };"
    "})";

/* Line numbers of text matching pattern, as a keep[] mask; -1 with w->err. */
static int match_lines(struct wctx *w, const char *pattern, bool regex, const char *text,
                       unsigned char *keep, size_t nlines, size_t *matches)
{
    json_t *a = json_pack("[s, b, s]", pattern, regex, text);
    char *args = json_dumps(a, JSON_COMPACT);
    json_decref(a);
    if (!args)
        return fail_call(w, TV_INVALID_PARAMETERS, NULL, "the pattern cannot be encoded");
    size_t alen = strlen(args), n = sizeof match_fn + alen + 4;
    char *expr = malloc(n);
    if (!expr)
        abort();
    /* [a,b,c] -> (a,b,c) */
    snprintf(expr, n, "%s(%.*s)", match_fn, (int)(alen - 2), args + 1);
    free(args);
    json_t *v;
    int rc = util_eval(w, expr, &v);
    free(expr);
    if (rc < 0)
        return -1;
    const char *err = json_string_value(json_object_get(v, "error"));
    if (err) {
        fail_call(w, TV_INVALID_PARAMETERS, "Escape special characters, or drop regex: true.",
                  "invalid regular expression: %.300s", err);
        json_decref(v);
        return -1;
    }
    size_t i;
    json_t *h;
    *matches = 0;
    json_array_foreach(json_object_get(v, "hits"), i, h)
    {
        json_int_t k = json_integer_value(h);
        if (k >= 0 && (size_t)k < nlines && !keep[k]) {
            keep[k] = 1;
            ++*matches;
        }
    }
    json_decref(v);
    return 0;
}

json_t *tool_find(struct wctx *w, json_t *args)
{
    const char *pattern = arg_str(args, "text", "");
    bool regex = arg_bool(args, "regex", false);
    json_t *opts = json_object();
    if (json_object_get(args, "target"))
        json_object_set(opts, "target", json_object_get(args, "target"));
    char *snap;
    if (take_snapshot(w, opts, &snap) < 0)
        return tool_fail(w);
    size_t nlines = count_lines(snap), matches = 0;
    unsigned char *keep = calloc(nlines ? nlines : 1, 1);
    if (!keep)
        abort();
    if (match_lines(w, pattern, regex, snap, keep, nlines, &matches) < 0) {
        free(keep);
        free(snap);
        return tool_fail(w);
    }
    char *found = lines_with_ancestors(snap, keep);
    free(keep);
    free(snap);
    page_refresh_info(w);

    char label[400];
    if (matches)
        snprintf(label, sizeof label,
                 "- Found %zu matching line%s for %s\"%.200s\" (with %s):", matches,
                 matches == 1 ? "" : "s", regex ? "regex " : "", pattern, "their ancestors' lines");
    else
        snprintf(label, sizeof label,
                 "- No snapshot line matches %s\"%.200s\":", regex ? "regex " : "", pattern);
    json_t *out = json_pack("{s:i}", "matches", (json_int_t)matches);
    json_t *res = respond_text(w, label, found, args, out);
    free(found);
    return res;
}
