/*
 * frames.h - the frames of the session's page and our isolated world in
 * each of them.
 *
 * The main frame lives in the page's CDP session. A child frame lives either
 * in the session of its parent (same process) or, when Chromium put it in
 * another renderer process (an out-of-process iframe, OOPIF), in a session of
 * its own that auto-attach hands us (Target.attachedToTarget). Every frame we
 * touch gets a number K, stable while the frame lives; refs of its elements
 * are "f<K>e<N>" (the main frame's are "e<N>"), so a ref names its frame.
 *
 * The table is fed by CDP events (frames_on_event) and completed lazily: a
 * frame met while snapshotting is added on the spot, so a missed event costs
 * nothing but a lookup.
 */
#ifndef TABVISOR_FRAMES_H
#define TABVISOR_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

struct session;

#define MAX_FRAMES 128
/* Deepest iframe nesting followed (snapshots, coordinates). */
#define MAX_FRAME_DEPTH 16

struct frame {
    bool used;
    int k;            /* 0: the main frame; else its refs are f<k>e<N> */
    char id[64];      /* CDP frameId (also the targetId of an OOPIF) */
    char parent[64];  /* parent's frameId; "" for the main frame */
    char session[64]; /* CDP session hosting the frame's document */
    bool oopif;       /* session is the frame's own target */
    /* Our isolated world in the frame's current document. For the main frame
     * these point at session's util_ctx/util_installed/next_ref (other modules
     * read them there); for child frames at the own_* fields below. */
    int *ctx;
    bool *installed;
    long long *next_ref;
    int own_ctx;
    bool own_installed;
    long long own_next_ref;
};

struct frame_table {
    struct frame f[MAX_FRAMES];
};

/* The main frame (created on first use). */
struct frame *frame_main(struct session *w);
/* Frame K, or NULL when it is gone. */
struct frame *frame_by_k(struct session *w, int k);
/* The frame with CDP id, or NULL. */
struct frame *frame_by_id(struct session *w, const char *id);
/* The frame with CDP id, added as a child of parent when unknown. NULL only
 * when the table is full. */
struct frame *frame_ensure(struct session *w, const char *id, const struct frame *parent);
/* The frame a `target` addresses: frame K for a ref f<K>e<N>, else the main
 * frame. NULL with w->call.err = STALE_REF when frame K no longer exists. */
struct frame *frame_for_target(struct session *w, const char *target);

/* CDP command on the session that hosts f (see page_call for the rules). */
int frame_cdp(struct session *w, const struct frame *f, const char *method, json_t *params,
              json_t **result);
/* util_eval in frame f's isolated world (page.c); frame_call evaluates
 * "__tabvisor.<fn>(<args>)" there (args stolen: an array is the argument
 * list, anything else the single argument). */
int frame_eval(struct session *w, struct frame *f, const char *expr, json_t **value);
int frame_call(struct session *w, struct frame *f, const char *fn, json_t *args, json_t **value);

/* Resolve target in f's world to the node's backendNodeId; for a frame
 * owner (<iframe>) also the frameId of the frame it hosts (else ""). */
int frame_node(struct session *w, struct frame *f, const char *target, long long *backend,
               char *child_id, size_t child_len);
/* Scroll each owner <iframe> above f into its parent's viewport when it is
 * wholly outside it, top-down. 0 or -1. */
int frame_reveal(struct session *w, struct frame *f);
/* Where trusted mouse input for a point goes: frame k's own CDP session
 * (k > 0: the innermost out-of-process frame holding the point) at (x, y)
 * in that frame's viewport, or the page (k == 0) at the top-page point.
 *
 * Why not always the page: Chromium sends page input to the frame its
 * compositor's hit-test data names, and that data lags a scroll in a tab
 * that draws no frames (a background tab of the user's own browser): a
 * click on a button of a cross-site frame just scrolled into view then
 * reached the <iframe> element of the top document. Input sent to the
 * frame's own session is hit-tested from that frame's widget instead.
 * frame_to_top has already checked, in every parent, that the point lands
 * on the frame's <iframe>, so nothing covering it is clicked through. */
struct input_point {
    int k;
    double x, y;
};

/* Turn the point (*x, *y) in f's viewport (CSS px) into the top page's
 * viewport: add each owner <iframe>'s content-box origin, scrolling an owner
 * into view when the point lies outside its parent's viewport, and check the
 * point really hits the owner in each parent (else ELEMENT_NOT_CLICKABLE,
 * retryable: returns 1). in (may be NULL) gets where mouse input for the
 * point goes (above). Returns 0, 1 (retry) or -1 (failed for good). */
int frame_to_top(struct session *w, struct frame *f, double *x, double *y, struct input_point *in);

/* Move a point {x, y} the engine of frame f returned into the top page's
 * viewport, adding where mouse input for it goes as "ik", "ix", "iy"
 * (target.c; read by mouse_at_point). 0 done, 1 retry, -1 failed with
 * w->call.err set. */
int point_to_top(struct session *w, struct frame *f, json_t *v, const char *element);

/* Event sink (events.c): frame attach/detach, OOPIF sessions, contexts. */
void frames_on_event(struct session *w, const char *session, const char *method, json_t *params);

/* Resolve target in our world of its frame f, then hand the same node to
 * f's main world (isolated-world handles cannot cross worlds, backend node
 * ids can): its objectId there into object_id. 0, or -1 with w->call.err set.
 * (tools/evaluate.c) */
int main_world_element(struct session *w, struct frame *f, const char *target, char *object_id,
                       size_t len);

#endif
