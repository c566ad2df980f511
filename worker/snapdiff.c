/*
 * snapdiff.c - picking lines of a snapshot with the ancestors that give them
 * context (browser_find and diffs), and the diff of two snapshots of the
 * same document (the lines themselves: snaptext.c).
 *
 * A snapshot is a tree written as lines; a line's parent is the nearest line
 * above it with less indentation. Everything here is linear in the text
 * size (a hash set instead of an LCS), because a snapshot of a big page has
 * tens of thousands of lines and refs make nearly every line unique, so
 * "is this line in the other snapshot" is as good as an alignment.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "snaplean_int.h"
#include "snaptext.h"
#include "worker.h"

/* Join the marked lines, '\n' after each; line i as repl[i] when repl and
 * repl[i] are given. */
static char *join_marked_as(const struct lines *l, const unsigned char *mark, char *const *repl)
{
    size_t total = 1;
    for (size_t i = 0; i < l->n; i++)
        if (mark[i])
            total += (repl && repl[i] ? strlen(repl[i]) : l->len[i]) + 1;
    char *out = malloc(total), *o = out;
    if (!out)
        abort();
    for (size_t i = 0; i < l->n; i++) {
        if (!mark[i])
            continue;
        size_t n = repl && repl[i] ? strlen(repl[i]) : l->len[i];
        memcpy(o, repl && repl[i] ? repl[i] : l->start[i], n);
        o += n;
        *o++ = '\n';
    }
    *o = 0;
    return out;
}

static char *join_marked(const struct lines *l, const unsigned char *mark)
{
    return join_marked_as(l, mark, NULL);
}

/* A run of gone siblings longer than this (a data table's page of rows
 * replaced by the next, a list re-sorted) is cut to its first GONE_SHOWN:
 * what the old rows said is no longer on the page to act on. */
#define GONE_RUN 3
#define GONE_SHOWN 1

/* The tops of the gone subtrees (marked in top), '\n' after each, each run
 * of more than GONE_RUN siblings with one role (one parent in l) cut to its
 * first GONE_SHOWN and a text line counting the rest: `- text: … 9 more row
 * gone`. */
static char *join_gone(const struct lines *l, const unsigned char *top)
{
    struct sb b = {0};
    sb_add(&b, "", 0);
    for (size_t i = 0; i < l->n;) {
        if (!top[i]) {
            i++;
            continue;
        }
        size_t rn, len = 1, next = l->n;
        const char *role = line_role_of(l->start[i], l->len[i], &rn);
        /* The run: the top lines after i with its parent and role. */
        for (size_t j = i + 1; j < l->n; j++) {
            if (!top[j])
                continue;
            size_t jn;
            const char *jr = line_role_of(l->start[j], l->len[j], &jn);
            if (!role || !jr || l->parent[j] != l->parent[i] || jn != rn ||
                memcmp(jr, role, rn) != 0) {
                next = j;
                break;
            }
            len++;
        }
        size_t shown = 0;
        for (size_t j = i; j < next; j++) {
            if (!top[j] || (len > GONE_RUN && shown == GONE_SHOWN))
                continue;
            sb_add(&b, l->start[j], l->len[j]);
            sb_add(&b, "\n", 1);
            shown++;
        }
        if (len > GONE_RUN)
            sb_printf(&b, "%*s- text: … %zu more %.*s gone\n", (int)l->indent[i], "",
                      len - GONE_SHOWN, (int)rn, role);
        i = next;
    }
    return b.p;
}

/* Mark each kept line and every ancestor of it. */
static unsigned char *mark_with_ancestors(const struct lines *l, const unsigned char *keep)
{
    unsigned char *mark = xcalloc(l->n, 1);
    for (size_t i = 0; i < l->n; i++) {
        if (!keep[i])
            continue;
        /* Stop at a marked line: its ancestors are marked already. */
        for (long j = (long)i; j >= 0 && !mark[j]; j = l->parent[j])
            mark[j] = 1;
    }
    return mark;
}

char *lines_with_ancestors(const char *text, const unsigned char *keep)
{
    struct lines l;
    lines_split(text, &l);
    unsigned char *mark = mark_with_ancestors(&l, keep);
    char *out = join_marked(&l, mark);
    free(mark);
    lines_free(&l);
    return out;
}

/* --- a multiset of byte strings (open addressing, power-of-two size) --- */

struct strset {
    size_t cap;
    const char **key;
    size_t *klen;
    size_t *count;
};

static void set_init(struct strset *s, size_t expected)
{
    s->cap = 16;
    while (s->cap < expected * 2)
        s->cap *= 2;
    s->key = xcalloc(s->cap, sizeof *s->key);
    s->klen = xcalloc(s->cap, sizeof *s->klen);
    s->count = xcalloc(s->cap, sizeof *s->count);
}

static void set_free(struct strset *s)
{
    free(s->key);
    free(s->klen);
    free(s->count);
}

/* The slot of key, or the empty slot where it would go. */
static size_t set_slot(const struct strset *s, const char *k, size_t n)
{
    size_t i = (size_t)fnv1a(FNV1A_INIT, k, n) & (s->cap - 1);
    while (s->key[i] && !(s->klen[i] == n && memcmp(s->key[i], k, n) == 0))
        i = (i + 1) & (s->cap - 1);
    return i;
}

static void set_add(struct strset *s, const char *k, size_t n)
{
    size_t i = set_slot(s, k, n);
    s->key[i] = k;
    s->klen[i] = n;
    s->count[i]++;
}

/* Take one k out of the set; false when there is none left. */
static bool set_take(struct strset *s, const char *k, size_t n)
{
    size_t i = set_slot(s, k, n);
    if (!s->key[i] || !s->count[i])
        return false;
    s->count[i]--;
    return true;
}

static bool set_has(const struct strset *s, const char *k, size_t n)
{
    size_t i = set_slot(s, k, n);
    return s->key[i] && s->count[i];
}

/* The "e12" of a line's "[ref=e12]", or NULL. */
static const char *ref_in(const char *line, size_t len, size_t *rlen)
{
    for (size_t i = 0; i + 5 < len; i++) {
        if (memcmp(line + i, "[ref=", 5) != 0)
            continue;
        const char *r = line + i + 5;
        const char *end = memchr(r, ']', len - i - 5);
        if (!end)
            return NULL;
        *rlen = (size_t)(end - r);
        return r;
    }
    return NULL;
}

/* Characters of a changed text's common head with the text it replaced
 * from which the lean view's cut (80 characters) could hide the change. */
#define WINDOW_FROM 60
/* Pairings tried at most, so a diff of a huge page stays linear enough. */
#define WINDOW_WORK 200000

/*
 * A changed line of b whose long inline text the lean view would cut to
 * its head hides a change in its tail (issue 37, item 2: feedback that
 * replaces the end of an instruction paragraph). Paired with the line of a
 * it replaced (unmatched in a, same indentation, same head: role, name,
 * ref), it is cut instead to the words around the first difference, "…"
 * marking each cut (lean_line_around, as browser_find shows a match); the
 * lean view keeps such a window whole. repl[i] gets the new text of line i
 * of b (malloc'd), or stays NULL.
 */
static void window_changes(const struct lines *a, const unsigned char *unmatched,
                           const struct lines *b, const unsigned char *changed_line, char **repl)
{
    size_t work = 0;
    for (size_t i = 0; i < b->n && work < WINDOW_WORK; i++) {
        const char *s = b->start[i];
        size_t len = b->len[i], v = line_value_at(s, len);
        if (!changed_line[i] || v >= len || utf8_chars(s + v, len - v) <= WINDOW_FROM + 20)
            continue;
        for (size_t j = 0; j < a->n && work < WINDOW_WORK; j++, work++) {
            const char *t = a->start[j];
            size_t tlen = a->len[j];
            if (!unmatched[j] || a->indent[j] != b->indent[i] || tlen <= v ||
                line_value_at(t, tlen) != v || memcmp(t, s, v) != 0)
                continue;
            size_t p = v;
            while (p < len && p < tlen && s[p] == t[p])
                p++;
            while (p > v && ((unsigned char)s[p] & 0xC0) == 0x80)
                p--; /* the difference starts at a character */
            if (utf8_chars(s + v, p - v) < WINDOW_FROM)
                break; /* the head the lean view keeps shows it */
            size_t e = len, f = tlen;
            while (e > p && f > p && s[e - 1] == t[f - 1])
                e--, f--;
            struct sb w = {0};
            if (lean_line_around(s, len, (long)p, e > p ? e - p : 1, &w))
                repl[i] = w.p;
            else
                free(w.p);
            break;
        }
    }
}

char *snapshot_diff(const char *prev, const char *cur, char **gone, size_t *changed,
                    size_t *removed)
{
    struct lines a, b;
    lines_split(prev, &a);
    lines_split(cur, &b);
    struct strset old, refs;
    set_init(&old, a.n);
    set_init(&refs, b.n);
    for (size_t i = 0; i < a.n; i++)
        set_add(&old, a.start[i], a.len[i]);

    /* A line of cur is unchanged when an equal line is left in prev. */
    unsigned char *keep = xcalloc(b.n, 1);
    *changed = 0;
    for (size_t i = 0; i < b.n; i++) {
        if (!set_take(&old, b.start[i], b.len[i])) {
            keep[i] = 1;
            ++*changed;
        }
        size_t rl;
        const char *r = ref_in(b.start[i], b.len[i], &rl);
        if (r)
            set_add(&refs, r, rl);
    }
    unsigned char *mark = mark_with_ancestors(&b, keep);

    /* What is left of prev was removed or changed. An element whose ref is
     * still in cur changed and shows up above; report only the tops of the
     * subtrees whose element is gone. */
    unsigned char *inside = xcalloc(a.n, 1), *top = xcalloc(a.n, 1), *unmatched = xcalloc(a.n, 1);
    *removed = 0;
    for (size_t i = 0; i < a.n; i++) {
        long p = a.parent[i];
        if (!set_take(&old, a.start[i], a.len[i]))
            continue;
        unmatched[i] = 1;
        ++*removed;
        /* inside: this line is in the subtree of a line reported as gone. */
        inside[i] = p >= 0 && inside[p];
        size_t rl;
        const char *r = ref_in(a.start[i], a.len[i], &rl);
        if (r && !set_has(&refs, r, rl) && !inside[i])
            top[i] = inside[i] = 1;
    }
    *gone = join_gone(&a, top);
    char **repl = xcalloc(b.n, sizeof *repl);
    window_changes(&a, unmatched, &b, keep, repl);
    char *out = join_marked_as(&b, mark, repl);
    for (size_t i = 0; i < b.n; i++)
        free(repl[i]);
    free(repl);
    free(mark);
    free(unmatched);

    free(keep);
    free(inside);
    free(top);
    set_free(&old);
    set_free(&refs);
    lines_free(&a);
    lines_free(&b);
    return out;
}
