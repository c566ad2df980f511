/*
 * snaplean_int.h - private to the lean view (snaplean.c, snapquiet.c): the view
 * being built (lines are read with snaptext.h's helpers). The public
 * entry point is snapshot_lean() in worker.h.
 */
#ifndef TV_SNAPLEAN_INT_H
#define TV_SNAPLEAN_INT_H

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


/* snapquiet.c: leave out a text or image leaf that only repeats its
 * parent's name, and a text of separators alone (before hide_orphans). */
void lean_drop_echoes(struct lean *v);
/* snapquiet.c: mark bare wrappers with one shown child as unwrapped, and
 * set each line's shift (after hide_orphans, before folding). */
void lean_unwrap(struct lean *v);

#endif
