/*
 * snapquiet.c - lines of the lean view that tell an agent nothing, left out
 * (snaplean.c runs these passes; the ref of every line left out stays valid
 * and browser_snapshot shows it):
 *  - a text or image leaf that only repeats its parent's name: the image of
 *    a link named for it, the text of a heading's link;
 *  - a text of separators alone (" • " between links);
 *  - an empty placeholder: a live region, list item or paragraph with
 *    nothing in it yet (`- status [ref=e8]`, a widget's message area); what
 *    it comes to hold shows in the next diff;
 *  - a list item or paragraph that only wraps one element: the element
 *    shows in its place, one level up (the wrapper is "unwrapped").
 * A model reads the same elements, names and order in fewer lines.
 */
#include <string.h>

#include "snaplean_int.h"

/* The quoted name after the role of an element line (`- img "Logo"`), as
 * escaped in the text: *n gets its length; NULL when the line has none. */
static const char *name_of(const char *s, size_t len, size_t *n)
{
    size_t rn;
    const char *r = line_role_of(s, len, &rn);
    if (!r)
        return NULL;
    size_t i = (size_t)(r - s) + rn;
    if (i + 1 >= len || s[i] != ' ' || s[i + 1] != '"')
        return NULL;
    size_t from = i + 2;
    for (i = from; i < len; i++) {
        if (s[i] == '\\')
            i++;
        else if (s[i] == '"')
            break;
    }
    if (i >= len)
        return NULL;
    *n = i - from;
    return s + from;
}

/* True when the UTF-8 text v (n bytes) holds only spaces and separators a
 * page puts between links or ends a sentence with: | / , ; : . · • – — › »
 * « ‹ and the like. */
static bool only_separators(const char *v, size_t n)
{
    static const char *const marks[] = {"\u00b7", "\u2022", "\u2013", "\u2014", "\u203a", "\u00bb",
                                        "\u00ab", "\u2039", "\u00a0", "\u2219", NULL};
    size_t i = 0;
    while (i < n) {
        if (v[i] && strchr(" |/,;:-.", v[i])) {
            i++;
            continue;
        }
        const char *const *m = marks;
        while (*m && (strlen(*m) > n - i || memcmp(v + i, *m, strlen(*m)) != 0))
            m++;
        if (!*m)
            return false;
        i += strlen(*m);
    }
    return n > 0;
}

/* What a text line or an image says: the text without its quotes, or the
 * image's name; NULL for other lines. */
static const char *said_by(const struct lines *l, size_t i, bool *text, size_t *n)
{
    static const char *const text_role[] = {"text", NULL}, *const img_role[] = {"img", NULL};
    const char *s = l->start[i];
    size_t len = l->len[i];
    *text = line_role_in(l, i, text_role);
    if (!*text)
        return line_role_in(l, i, img_role) ? name_of(s, len, n) : NULL;
    size_t at = line_value_at(s, len);
    *n = len - at;
    if (*n >= 2 && s[at] == '"' && s[len - 1] == '"') {
        *n -= 2;
        return s + at + 1;
    }
    return s + at;
}

/* Roles a page wraps single elements in. */
static const char *const wrap_roles[] = {"listitem", "paragraph", NULL};
/* Roles of a place the page fills later: empty, it says nothing yet. */
static const char *const placeholder_roles[] = {"status", "log", "alert", "timer", "marquee",
                                                "listitem", "paragraph", NULL};

/* Line i is its role and ref alone (`- status [ref=e8]`), with a ':' after
 * them when colon (a wrapper of children) and nothing after them otherwise;
 * its role one of roles. */
static bool only_role(const struct lines *l, size_t i, const char *const *roles, bool colon)
{
    size_t rn;
    const char *s = l->start[i], *end = s + l->len[i];
    const char *r = line_role_of(s, l->len[i], &rn);
    if (!r || !line_role_in(l, i, roles))
        return false;
    const char *at = r + rn;
    if (end - at > 6 && memcmp(at, " [ref=", 6) == 0) {
        at = memchr(at, ']', (size_t)(end - at));
        if (!at)
            return false;
        at++;
    }
    return colon ? end - at == 1 && *at == ':' : end == at;
}

/* Leave out a text or image leaf that only repeats its parent's name, a
 * text of separators alone, and an empty placeholder. */
void lean_drop_echoes(struct lean *v)
{
    const struct lines *l = &v->l;
    for (size_t i = 0; i < l->n; i++) {
        bool text, leaf = i + 1 >= l->n || l->parent[i + 1] != (long)i;
        size_t n = 0, pn = 0;
        if (v->shown[i] && leaf && only_role(l, i, placeholder_roles, false)) {
            v->shown[i] = 0;
            continue;
        }
        const char *said = v->shown[i] && leaf ? said_by(l, i, &text, &n) : NULL;
        if (!said || !n)
            continue;
        long p = l->parent[i];
        const char *pname = p >= 0 ? name_of(l->start[p], l->len[p], &pn) : NULL;
        if (text && only_separators(said, n)) {
            v->shown[i] = 0;
        } else if (pname && memmem(pname, pn, said, n)) {
            v->shown[i] = 0;
            v->left_out += !text;
        }
    }
}

/* Unwrap each bare wrapper with one shown child (that says nothing of more
 * left out), and work out how far each line moves left for it. */
void lean_unwrap(struct lean *v)
{
    const struct lines *l = &v->l;
    size_t *kids = xcalloc(l->n, sizeof(size_t));
    unsigned char *noted = xcalloc(l->n, 1);
    for (size_t i = 0; i < l->n; i++) {
        long p = l->parent[i];
        if (p >= 0 && v->shown[i]) {
            kids[p]++;
            noted[p] |= v->run_more[i] != 0;
        }
    }
    for (size_t i = 0; i < l->n; i++) {
        long p = l->parent[i];
        v->unwrapped[i] = v->shown[i] && kids[i] == 1 && !noted[i] && only_role(l, i, wrap_roles, true);
        v->shift[i] = p < 0 ? 0 : v->shift[p] + (v->unwrapped[p] ? l->indent[i] - l->indent[p] : 0);
    }
    free(kids);
    free(noted);
}
