/*
 * bidi_map_int.h - the BiDi map's state and helpers, shared by its files:
 * bidi_map.c (state, commands), bidi_input.c (input commands),
 * bidi_answers.c (answers and values) and bidi_events.c (events). Not for
 * other files: bidi_map.h is the map's interface.
 */
#ifndef TABVISOR_BIDI_MAP_INT_H
#define TABVISOR_BIDI_MAP_INT_H

#include <stdbool.h>
#include <jansson.h>

#include "bidi_map.h"

/* Isolated worlds handed out (Page.createIsolatedWorld): a CDP execution
 * context id names a sandbox of a browsing context. The ring is larger than
 * the frames a page keeps worlds in at once. */
#define MAX_WORLDS 256
#define MAX_ID 64

/* How an answer is turned back into CDP (kept per command id). */
enum kind {
    K_EMPTY,        /* {} whatever BiDi says */
    K_USER_CONTEXT, /* {browserContextId} */
    K_CREATE_TAB,   /* {targetId} */
    K_NAVIGATE,     /* {frameId, loaderId} */
    K_EVAL_MAIN,    /* Runtime.evaluate in the page's own world */
    K_EVAL_WORLD,   /* ... in one of our sandboxes */
    K_SCREENSHOT,   /* {data} */
    K_LAYOUT,       /* Page.getLayoutMetrics from a script's measures */
    K_PRELOAD,      /* {identifier} */
    K_HISTORY_GO,   /* browsingContext.traverseHistory */
    K_DESCRIBE,     /* DOM.describeNode: {node: {backendNodeId, frameId}} */
    K_FRAME_OWNER,  /* DOM.getFrameOwner: {backendNodeId} */
    K_BODY,         /* Network.getResponseBody: {body, base64Encoded} */
    K_POST_DATA,    /* Network.getRequestPostData: {postData} */
    K_COOKIES,      /* Network.getAllCookies: {cookies} */
    K_SET_COOKIE,   /* Network.setCookie: {success} */
    K_INTERCEPT,    /* Fetch.enable: {}, the intercept kept (bidi_intercept.c) */
    K_PRINT,        /* Page.printToPDF: {data}, or {stream} (extra: true) */
};

struct world {
    int id; /* 0: free */
    char context[MAX_ID];
    char sandbox[32];
};

struct bidi_map {
    struct world worlds[MAX_WORLDS];
    int next_world;
    json_t *tops;    /* top-level context id -> true: the pages (sessions) we opened */
    json_t *parents; /* a frame's context id -> its top-level context id */
    json_t *pending; /* "id" -> [kind, context, by value, extra] */
    /* Nodes handed to the client (CDP's backendNodeId is a number, BiDi's
     * sharedId a string). */
    json_t *nodes;         /* node n is nodes[n - 1]: [sharedId, browsing context] */
    json_t *node_numbers;  /* sharedId -> n */
    json_t *frame_parent;  /* a frame's context id -> its parent's */
    json_t *fragments;     /* top context -> the navigation id of its last fragment navigation */
    json_t *history_steps; /* top context -> whether a navigation started since its step */
    json_t *commits;       /* context -> [navigation, URL] of the document it last committed */
    json_t *crashed;       /* top context -> the URL its page had when its content process died */
    json_t *intercepts;    /* top context -> its network intercept ("" until added) */
    json_t *streams;       /* IO handle -> [base64 data, offset read] (bidi_print.c) */
    const char *(*url_check)(const char *url); /* or NULL */
    char user_context[MAX_ID]; /* the session's (Target.createTarget's browserContextId) */
};

/* bidi_map.c: messages. */
const char *bm_str(json_t *o, const char *k);
double bm_num(json_t *o, const char *k);
/* A CDP answer with result (stolen; NULL: {}), or an error. */
json_t *bm_answer(long long id, json_t *result);
json_t *bm_error(long long id, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* NOT_SUPPORTED for method. */
json_t *bm_not_supported(long long id, const char *method);
/* Note how the answer to id maps back (kind; the context it concerns; a
 * value wanted by value; extra, stolen, for the answer), then hand out the
 * BiDi command (params stolen) in *out. */
enum bidi_outcome bm_send_with(struct bidi_map *m, long long id, enum kind kind, bool by_value,
                               json_t *extra, const char *context, const char *method,
                               json_t *params, json_t **out);
enum bidi_outcome bm_send(struct bidi_map *m, long long id, enum kind kind, const char *context,
                          const char *method, json_t *params, json_t **out);
/* bidi_map.c: nodes handed to the client and isolated worlds. */
json_int_t bm_node_add(struct bidi_map *m, const char *sid, const char *ctx);
bool bm_node_get(struct bidi_map *m, json_int_t n, const char **sid, const char **ctx);
void bm_object_id(char *out, size_t len, json_int_t n, int world);
bool bm_parse_object_id(const char *oid, json_int_t *n, int *world);
struct world *bm_world_by_id(struct bidi_map *m, int id);

/* bidi_input.c: Input.* on the page ctx. */
enum bidi_outcome bm_input_command(struct bidi_map *m, long long id, const char *ctx,
                                   const char *method, json_t *p, json_t **out);

/* bidi_cookies.c: CDP's cookie commands (bm_is_cookie_command) as
 * storage.* on the session's user context, and getCookies' answer. */
bool bm_is_cookie_command(const char *method);
enum bidi_outcome bm_cookie_command(struct bidi_map *m, long long id, const char *method, json_t *p,
                                    json_t **out);
json_t *bm_cookies_answer(long long id, json_t *r);

/* bidi_intercept.c: CDP's Fetch domain (bm_is_fetch_command) as BiDi's
 * network interception, and what addIntercept's answer (r, or failed)
 * leaves for the page ctx. */
bool bm_is_fetch_command(const char *method);
enum bidi_outcome bm_fetch_command(struct bidi_map *m, long long id, const char *ctx,
                                   const char *method, json_t *p, json_t **out);
void bm_intercept_answered(struct bidi_map *m, const char *ctx, json_t *r, bool failed);

/* bidi_print.c: Page.printToPDF and the IO stream of its answer
 * (bm_is_print_command), and print's answer as CDP's. */
bool bm_is_print_command(const char *method);
enum bidi_outcome bm_print_command(struct bidi_map *m, long long id, const char *ctx,
                                   const char *method, json_t *p, json_t **out);
json_t *bm_print_answer(struct bidi_map *m, long long id, json_t *r, bool stream);

/* bidi_events.c: the page a context belongs to (NULL: not ours), and one
 * CDP event (params stolen) to emit on session (NULL: the browser). */
const char *bm_top_of(struct bidi_map *m, const char *context);
void bm_emit(void (*emit)(void *, json_t *), void *ud, const char *session, const char *method,
             json_t *params);

#endif
