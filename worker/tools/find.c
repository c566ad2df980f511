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

/* Returns {hits:[[line number, match's byte offset, its bytes]]} or {error}.
 * "/src/flags" is a regex with flags; g and y are dropped since test() would
 * then keep state. Where a match is is worked out only for long lines (whose
 * text find cuts around it): -1 when not, or when it cannot be told (a text
 * whose case folding changes its length). */
static const char match_fn[] =
    "((src, isRe, text) => {"
    "  let test, where;"
    "  if (isRe) {"
    "    const m = /^\\/(.*)\\/([a-z]*)$/s.exec(src);"
    "    let re;"
    "    try { re = m ? new RegExp(m[1], m[2].replace(/[gy]/g, '')) : new RegExp(src); }"
    "    catch (e) { return { error: String(e && e.message) }; }"
    "    test = (l) => re.test(l);"
    "    where = (l) => re.exec(l);"
    "  } else {"
    "    const t = src.toLowerCase();"
    "    test = (l) => l.toLowerCase().includes(t);"
    "    where = (l) => { const i = l.toLowerCase().indexOf(t);"
    "      return i >= 0 && l.length === l.toLowerCase().length ? { index: i, 0: l.substr(i, "
    "t.length) } : null; };"
    "  }"
    "  const enc = new TextEncoder(), hits = [];"
    "  text.split('\\n').forEach((l, i) => {"
    "    if (!test(l)) return;"
    "    const m = l.length > 120 ? where(l) : null;"
    "    hits.push(m ? [i, enc.encode(l.slice(0, m.index)).length, enc.encode(m[0]).length] : [i, "
    "-1, 0]);"
    "  });"
    "  return { hits };"
    "})";

/* Line numbers of text matching pattern, as a keep[] mask, and where each
 * long line's match is (at[], len[]: byte offset or -1, bytes); -1 with
 * w->call.err. */
static int match_lines(struct session *w, const char *pattern, bool regex, const char *text,
                       unsigned char *keep, long *at, size_t *len, size_t nlines, size_t *matches)
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
        json_int_t k = json_integer_value(json_array_get(h, 0));
        json_int_t o = json_integer_value(json_array_get(h, 1));
        json_int_t bytes = json_integer_value(json_array_get(h, 2));
        if (k >= 0 && (size_t)k < nlines && !keep[k]) {
            keep[k] = 1;
            at[k] = o >= 0 && bytes >= 0 ? (long)o : -1;
            len[k] = bytes >= 0 ? (size_t)bytes : 0;
            ++*matches;
        }
    }
    json_decref(v);
    return 0;
}

/* Replaces *snap by a copy whose matching long lines are cut around their
 * match (lean_line_around); the line count stays. *cut: any line was. */
static void cut_to_matches(char **snap, size_t nlines, const unsigned char *keep, const long *at,
                           const size_t *len, bool *cut)
{
    struct sb b = {0};
    const char *p = *snap;
    for (size_t i = 0; *p; i++) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (i < nlines && keep[i])
            *cut |= lean_line_around(p, n, at[i], len[i], &b);
        else
            sb_add(&b, p, n);
        if (!nl)
            break;
        sb_add(&b, "\n", 1);
        p = nl + 1;
    }
    sb_add(&b, "", 0); /* a buffer and its terminator, even for no lines */
    free(*snap);
    *snap = b.p;
}

json_t *tool_find(struct session *w, json_t *args)
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
    unsigned char *keep = xcalloc(nlines, 1);
    long *at = xcalloc(nlines, sizeof *at);
    size_t *len = xcalloc(nlines, sizeof *len);
    bool cut = false;
    char *found = NULL;
    if (match_lines(w, pattern, regex, snap, keep, at, len, nlines, &matches) == 0) {
        /* What the agent reads is cut to the match; a file gets it whole. */
        if (!arg_str(args, "filename", NULL))
            cut_to_matches(&snap, nlines, keep, at, len, &cut);
        found = lines_with_ancestors(snap, keep);
    }
    free(keep);
    free(at);
    free(len);
    free(snap);
    if (!found)
        return tool_fail(w);
    page_refresh_info(w);

    char label[400];
    if (matches)
        snprintf(label, sizeof label,
                 "- Found %zu matching line%s for %s\"%.200s\" (with their ancestors' lines%s):",
                 matches, matches == 1 ? "" : "s", regex ? "regex " : "", pattern,
                 cut ? "; long texts cut around the match" : "");
    else
        snprintf(label, sizeof label,
                 "- No snapshot line matches %s\"%.200s\":", regex ? "regex " : "", pattern);
    json_t *out = json_pack("{s:i}", "matches", (json_int_t)matches);
    json_t *res = respond_text(w, label, found, args, out);
    free(found);
    return res;
}
