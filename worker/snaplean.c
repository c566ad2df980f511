/*
 * snaplean.c - the lean view of snapshot text that an action's response
 * carries by default (--snapshot-mode diff): what an agent needs to pick its
 * next target, in Playwright's line grammar, at a fraction of the bytes.
 *
 * Three cuts, each undone by a call the view names:
 *  - `- /url:` lines go: an agent clicks a link by its ref, and reads the
 *    address with browser_snapshot when it needs one;
 *  - an inline text longer than LEAN_TEXT characters is cut at a word break
 *    and ends with "…" (a paragraph of a documentation page); a text that
 *    carries refs (a compact table row) is kept whole;
 *  - a run of more than LEAN_RUN siblings with one role (a table's rows, a
 *    list's items, a listbox's options: run_roles) keeps its first
 *    LEAN_RUN_SHOWN, and a text line says how many more there are and how to
 *    read them (browser_snapshot with the parent's ref as target, or
 *    browser_find).
 * Lines that tell an agent nothing go too (snapquiet.c): a text or image
 * that repeats its parent's name, separators, and a list item or paragraph
 * that only wraps one element, which shows in its place.
 * A view still longer than its budget then folds collections and side
 * regions (fold_roles), nested ones first, each to its own line and a text line
 * saying how many elements it holds and how to read them; the page's body
 * (a region holding most of the view) is not folded, its parts are. What is
 * still over the budget is cut by the caller, with a marker.
 * Names (the quoted part of a line) are never cut: they are what an agent
 * matches. Every ref left out stays valid and is one call away.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snaplean_int.h"
#include "utf8.h"

#define LEAN_TEXT 80     /* characters of an inline text kept */
#define LEAN_RUN 10      /* a run longer than this is shortened */
#define LEAN_RUN_SHOWN 5 /* to its first this many */
#define FIND_TEXT 120    /* browser_find: a longer inline text is cut ... */
#define FIND_CONTEXT 40  /* ... to this many characters either side of the match */

static bool contains(const char *s, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(s + i, needle, k) == 0)
            return true;
    return false;
}

/* Bytes of the inline text v (n bytes) to keep: at most LEAN_TEXT
 * characters, ending at a word break when one is in the last 40, never
 * after a backslash (a YAML escape) or inside a UTF-8 sequence. n when the
 * text is short enough. */
static size_t text_keep(const char *v, size_t n)
{
    size_t p = 0, chars = 0;
    while (p < n && chars < LEAN_TEXT) {
        chars++;
        p++;
        while (p < n && ((unsigned char)v[p] & 0xC0) == 0x80)
            p++;
    }
    if (p >= n || n - p < 8) /* a few characters more: not worth a cut */
        return n;
    size_t k = p;
    while (k > 0 && p - k < 40 && v[k - 1] != ' ')
        k--;
    if (k == 0 || v[k - 1] != ' ')
        k = p;
    while (k > 0 && (v[k - 1] == ' ' || v[k - 1] == '\\'))
        k--;
    return k;
}

/* Bytes from p back (dir -1) or forward (dir 1) over at most chars UTF-8
 * characters of s, staying within [lo, hi]. */
static size_t step_chars(const char *s, size_t p, size_t lo, size_t hi, size_t chars, int dir)
{
    while (chars-- > 0 && (dir < 0 ? p > lo : p < hi)) {
        p += (size_t)(long)dir;
        while (p > lo && p < hi && ((unsigned char)s[p] & 0xC0) == 0x80)
            p += (size_t)(long)dir;
    }
    return p;
}

bool lean_line_around(const char *s, size_t len, long match, size_t mlen, struct sb *out)
{
    size_t v = line_value_at(s, len);
    bool quoted = v < len && s[v] == '"' && s[len - 1] == '"' && len - v >= 2;
    size_t from = v + quoted, to = len - quoted;
    if (v >= len || contains(s + v, len - v, "[ref=") ||
        utf8_chars(s + from, to - from) <= FIND_TEXT) {
        sb_add(out, s, len);
        return false;
    }
    size_t start = from, end;
    if (match < 0 || (size_t)match < from || (size_t)match >= to) {
        end = from + text_keep(s + from, to - from); /* the match is in the head */
    } else {
        size_t ms = (size_t)match, me = ms + mlen < to ? ms + mlen : to;
        start = step_chars(s, ms, from, to, FIND_CONTEXT, -1);
        /* A word's start, if one is near; never right after a backslash,
         * which would leave half of a YAML escape. */
        for (size_t k = start; start > from && k < ms; k++)
            if (s[k] == ' ') {
                start = k + 1;
                break;
            }
        if (start > from && s[start - 1] == '\\')
            start++;
        end = step_chars(s, me, from, to, FIND_CONTEXT, 1);
        if (end > ms + 3 * FIND_CONTEXT) /* a regex that matched most of the text */
            end = step_chars(s, ms, from, to, 3 * FIND_CONTEXT, 1);
        for (size_t k = end; end < to && k > me; k--)
            if (s[k - 1] == ' ') {
                end = k - 1;
                break;
            }
        size_t slashes = 0;
        for (size_t k = end; k > start && s[k - 1] == '\\'; k--)
            slashes++;
        end -= slashes % 2;
    }
    sb_add(out, s, from);
    if (start > from)
        sb_add(out, "…", strlen("…"));
    sb_add(out, s + start, end - start);
    if (end < to)
        sb_add(out, "…", strlen("…"));
    sb_add(out, s + to, len - to);
    return true;
}

/* Line i of l as the view shows it: its first *keep bytes, then *tail (the
 * "…" of a cut text, or ""). A line that ends with ':' loses it when none of
 * its children is shown (a link whose only child was its /url). Returns the
 * bytes it takes with its line break. */
static size_t line_view(const struct lines *l, size_t i, bool children, size_t *keep,
                        const char **tail)
{
    const char *s = l->start[i];
    size_t len = l->len[i], v = line_value_at(s, len);
    if (!children && len && s[len - 1] == ':')
        len--;
    *keep = len;
    *tail = "";
    if (v < len && !contains(s + v, len - v, "[ref=")) {
        bool quoted = s[v] == '"' && s[len - 1] == '"' && len - v >= 2;
        size_t from = v + quoted, n = len - from - quoted;
        /* A diff's window around a change (snapdiff.c) is kept whole. */
        bool window = n >= strlen("…") && !memcmp(s + from, "…", strlen("…")) &&
                      utf8_chars(s + from, n) <= FIND_TEXT + 3 * FIND_CONTEXT + 4;
        size_t k = window ? n : text_keep(s + from, n);
        if (k < n) {
            *keep = from + k;
            *tail = quoted ? "…\"" : "…";
        }
    }
    return *keep + strlen(*tail) + 1;
}

/* Roles whose long runs are cut: the items of a collection, which an agent
 * reads a few of and finds the rest by name. A run of controls (a toolbar's
 * buttons, a menu's items, tabs) is the choice itself and is kept. */
static const char *const run_roles[] = {"row",     "listitem", "option", "treeitem",   "paragraph",
                                        "article", "generic",  "term",   "definition", NULL};

/* Roles folded when a view is over its budget: collections and the regions
 * beside the page's content. */
static const char *const fold_roles[] = {
    "list",    "table",      "grid",          "treegrid",    "tree",   "listbox",  "menu",
    "menubar", "navigation", "complementary", "contentinfo", "banner", "rowgroup", NULL};

/* Landmarks beside the page's content: folded before it. */
static const char *const side_roles[] = {"navigation", "complementary", "contentinfo", "banner",
                                         NULL};

static bool same_run(const struct lines *l, size_t a, size_t b)
{
    size_t na, nb;
    const char *ra = line_role_of(l->start[a], l->len[a], &na);
    const char *rb = line_role_of(l->start[b], l->len[b], &nb);
    return ra && rb && na == nb && memcmp(ra, rb, na) == 0 && line_role_in(l, a, run_roles);
}

/* Drop /url lines, then cut every long run of same-role siblings. */
static void cut_runs(struct lean *v)
{
    const struct lines *l = &v->l;
    /* Each parent's shown children as a chain: first[p], next[i]; the top
     * level is parent l->n. */
    long *first = xcalloc(l->n + 1, sizeof(long)), *last = xcalloc(l->n + 1, sizeof(long));
    long *next = xcalloc(l->n, sizeof(long));
    for (size_t p = 0; p <= l->n; p++)
        first[p] = last[p] = -1;
    for (size_t i = 0; i < l->n; i++) {
        size_t rn;
        const char *role = line_role_of(l->start[i], l->len[i], &rn);
        long p = l->parent[i];
        v->shown[i] = (p < 0 || v->shown[p]) && !(role && role[0] == '/');
        if (!v->shown[i])
            continue;
        size_t slot = p < 0 ? l->n : (size_t)p;
        next[i] = -1;
        if (last[slot] < 0)
            first[slot] = (long)i;
        else
            next[last[slot]] = (long)i;
        last[slot] = (long)i;
    }
    /* A run is a chain of siblings with the run's first one's role; past
     * LEAN_RUN of them, those after the LEAN_RUN_SHOWN-th are left out and
     * counted on it. */
    for (size_t p = 0; p <= l->n; p++) {
        for (long run = first[p]; run >= 0;) {
            long kept = run, end = next[run];
            size_t len = 1;
            for (; end >= 0 && same_run(l, (size_t)run, (size_t)end); end = next[end])
                if (++len <= LEAN_RUN_SHOWN)
                    kept = end;
            if (len > LEAN_RUN) {
                for (long c = next[kept]; c != end; c = next[c])
                    v->shown[c] = 0;
                v->run_more[kept] = len - LEAN_RUN_SHOWN;
                v->left_out += len - LEAN_RUN_SHOWN;
            }
            run = end;
        }
    }
    free(first);
    free(last);
    free(next);
}

/* A line whose parent is left out goes with it (parents come first). */
static void hide_orphans(struct lean *v)
{
    const struct lines *l = &v->l;
    for (size_t i = 0; i < l->n; i++) {
        long p = l->parent[i];
        if (p >= 0 && !v->shown[p])
            v->shown[i] = 0;
        if (v->shown[i] && p >= 0)
            v->has_child[p] = 1;
    }
}

/* Bytes line i takes in the view: none when unwrapped, else its shown part
 * (line_view) less the spaces it moves left. */
static size_t shown_bytes(const struct lean *v, size_t i)
{
    size_t keep;
    const char *tail;
    if (v->unwrapped[i])
        return 0;
    size_t b = line_view(&v->l, i, v->has_child[i], &keep, &tail);
    return b - (v->shift[i] < keep ? v->shift[i] : keep);
}

/* Bytes of a note line (an estimate: notes are short). */
#define NOTE_BYTES 90

/* A line that may fold, and what orders it. */
struct cand {
    size_t line;
    unsigned char side;
    size_t depth, size;
};

static int by_turn(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    if (x->side != y->side)
        return x->side > y->side ? -1 : 1;
    if (x->depth != y->depth)
        return x->depth > y->depth ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

static int by_size(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

/* Fold line i (its shown subtree took bytes): hide what is under it, and
 * count it for the note, folds and runs inside included. Returns the bytes
 * saved. */
static size_t fold(struct lean *v, size_t i, size_t bytes)
{
    const struct lines *l = &v->l;
    size_t ind = l->indent[i], count = 0, fresh = 0;
    for (size_t c = i + 1; c < l->n && l->indent[c] > ind; c++) {
        fresh += v->shown[c] + v->run_more[c];
        count += v->shown[c] + v->run_more[c] + v->folded[c];
        v->shown[c] = 0;
        v->run_more[c] = 0;
        v->folded[c] = 0;
    }
    size_t keep;
    const char *tail;
    size_t now = line_view(l, i, true, &keep, &tail) + NOTE_BYTES;
    v->folded[i] = count ? count : 1;
    v->left_out += fresh;
    return bytes > now ? bytes - now : 0;
}

/* Fold collections and side regions until the view fits budget bytes or
 * nothing is left to fold: what is beside the content first, then the
 * deepest, then the largest. */
static void fold_to_budget(struct lean *v, size_t budget)
{
    const struct lines *l = &v->l;
    size_t *tree = xcalloc(l->n, sizeof(size_t)); /* bytes of the shown subtree */
    size_t total = 0;
    for (size_t i = l->n; i-- > 0;) {
        if (!v->shown[i])
            continue;
        tree[i] += shown_bytes(v, i) + (v->run_more[i] ? NOTE_BYTES : 0);
        if (l->parent[i] >= 0)
            tree[l->parent[i]] += tree[i];
        else
            total += tree[i];
    }
    /* side[i]: line i is in a region beside the content (a landmark of
     * side_roles): those fold before the content does. */
    unsigned char *side = xcalloc(l->n, 1);
    for (size_t i = 0; i < l->n; i++)
        side[i] = (l->parent[i] >= 0 && side[l->parent[i]]) || line_role_in(l, i, side_roles);
    /* The candidates in folding order: side regions first, then the
     * deepest (a list inside a list folds before the list that holds it);
     * within one depth the largest first, by their size when that depth's
     * turn comes (deeper folds have shrunk them by then). One sort, then a
     * pass: linear but for the sort. */
    struct cand *c = xcalloc(l->n, sizeof *c);
    size_t nc = 0, body = total * 6 / 10;
    for (size_t i = 0; i < l->n; i++)
        if (v->shown[i] && v->has_child[i] && line_role_in(l, i, fold_roles))
            c[nc++] = (struct cand){i, side[i], l->indent[i], 0};
    qsort(c, nc, sizeof *c, by_turn);
    for (size_t g = 0; g < nc && total > budget;) {
        size_t end = g;
        while (end < nc && c[end].side == c[g].side && c[end].depth == c[g].depth)
            end++;
        for (size_t k = g; k < end; k++)
            c[k].size = tree[c[k].line];
        qsort(c + g, end - g, sizeof *c, by_size);
        for (size_t k = g; k < end && total > budget; k++) {
            size_t i = c[k].line;
            if (!v->shown[i] || tree[i] > body || tree[i] < 3 * NOTE_BYTES)
                continue;
            size_t saved = fold(v, i, tree[i]);
            for (long a = (long)i; a >= 0; a = l->parent[a])
                tree[a] -= saved;
            total -= saved;
        }
        g = end;
    }
    free(c);
    free(side);
    free(tree);
}

/* The ref of line i ("e12") into out; false if it has none. */
static bool ref_of(const struct lines *l, long i, char *out, size_t outlen)
{
    if (i < 0)
        return false;
    const char *s = l->start[i];
    size_t v = line_value_at(s, l->len[i]);
    for (size_t k = 0; k + 5 < v; k++) {
        if (memcmp(s + k, "[ref=", 5) != 0)
            continue;
        size_t e = k + 5;
        while (e < v && s[e] != ']')
            e++;
        if (e - k - 5 + 1 > outlen)
            return false;
        memcpy(out, s + k + 5, e - k - 5);
        out[e - k - 5] = 0;
        return true;
    }
    return false;
}

/* How to read the elements under line holder: browser_snapshot with its
 * ref as target, or browser_find when it has no ref. */
static void how_to_read(const struct lines *l, long holder, char *how, size_t len)
{
    char ref[64];
    if (ref_of(l, holder, ref, sizeof ref))
        snprintf(how, len, "browser_snapshot target=%s shows them", ref);
    else
        snprintf(how, len, "browser_find shows them");
}

static void render(const struct lean *v, struct sb *b)
{
    const struct lines *l = &v->l;
    /* Run notes wait on a stack until their line's subtree is done. */
    long *pending = xcalloc(l->n, sizeof(long));
    size_t npend = 0, keep;
    const char *tail;
    char how[160];
    for (size_t i = 0; i <= l->n; i++) {
        while (npend) {
            long k = pending[npend - 1];
            bool inside = false;
            for (long a = i < l->n ? l->parent[i] : -1; a >= 0 && !inside; a = l->parent[a])
                inside = a == k;
            if (inside)
                break;
            npend--;
            size_t rn;
            const char *role = line_role_of(l->start[k], l->len[k], &rn);
            how_to_read(l, l->parent[k], how, sizeof how);
            sb_printf(b, "%*s- text: … %zu more %.*s: %s\n", (int)(l->indent[k] - v->shift[k]), "",
                      v->run_more[k], (int)rn, role ? role : "", how);
        }
        if (i == l->n)
            break;
        if (!v->shown[i])
            continue;
        if (!v->unwrapped[i]) {
            line_view(l, i, v->has_child[i] || v->folded[i], &keep, &tail);
            size_t left = v->shift[i] < keep ? v->shift[i] : keep;
            sb_add(b, l->start[i] + left, keep - left);
            sb_printf(b, "%s\n", tail);
        }
        if (v->folded[i]) {
            how_to_read(l, (long)i, how, sizeof how);
            sb_printf(b, "%*s- text: … %zu elements folded: %s\n",
                      (int)(l->indent[i] + 2 - v->shift[i]), "", v->folded[i], how);
        }
        if (v->run_more[i])
            pending[npend++] = (long)i;
    }
    free(pending);
}

char *snapshot_lean(const char *text, size_t budget, size_t *elided)
{
    struct lean v = {0};
    lines_split(text, &v.l);
    v.shown = xcalloc(v.l.n, 1);
    v.has_child = xcalloc(v.l.n, 1);
    v.run_more = xcalloc(v.l.n, sizeof(size_t));
    v.folded = xcalloc(v.l.n, sizeof(size_t));
    v.unwrapped = xcalloc(v.l.n, 1);
    v.shift = xcalloc(v.l.n, sizeof(size_t));
    cut_runs(&v);
    lean_drop_echoes(&v);
    hide_orphans(&v);
    lean_unwrap(&v);
    if (budget)
        fold_to_budget(&v, budget);
    struct sb b = {0};
    render(&v, &b);
    if (elided)
        *elided = v.left_out;
    free(v.shown);
    free(v.has_child);
    free(v.run_more);
    free(v.folded);
    free(v.unwrapped);
    free(v.shift);
    lines_free(&v.l);
    if (!b.p) {
        b.p = strdup("");
        if (!b.p)
            abort();
    }
    return b.p;
}
