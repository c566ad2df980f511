/*
 * snaplean.h - private to the lean view (snaplean.c, snapquiet.c): the view
 * being built and the line helpers both files read lines with. The public
 * entry point is snapshot_lean() in worker.h.
 */
#ifndef TV_SNAPLEAN_H
#define TV_SNAPLEAN_H

#include <stdbool.h>
#include <stddef.h>

#include "worker.h"

/* The view being built: which lines show, and the notes that go with them. */
struct lean {
    struct lines l;
    unsigned char *shown;
    unsigned char *has_child; /* a shown child: the line keeps its ':' */
    size_t *run_more;         /* a run's note after line i's subtree: how many left out */
    size_t *folded;           /* a fold note under line i: how many elements it holds */
    unsigned char *unwrapped; /* shown through its one child: line i itself is not printed */
    size_t *shift;            /* spaces line i moves left for its unwrapped ancestors */
    size_t left_out;          /* elements left out in all */
};

/* The role token of a line (`- role ...`, `- text: ...`, `- /url: ...`):
 * *n gets its length; NULL if the line is not an element line. */
const char *lean_role_of(const char *s, size_t len, size_t *n);
/* Offset of the inline text after the line's head (`...: text`), or len. */
size_t lean_value_at(const char *s, size_t len);
/* Line i's role is one of set (NULL-terminated). */
bool lean_role_in(const struct lines *l, size_t i, const char *const *set);

/* snapquiet.c: leave out a text or image leaf that only repeats its
 * parent's name, and a text of separators alone (before hide_orphans). */
void lean_drop_echoes(struct lean *v);
/* snapquiet.c: mark bare wrappers with one shown child as unwrapped, and
 * set each line's shift (after hide_orphans, before folding). */
void lean_unwrap(struct lean *v);

#endif
