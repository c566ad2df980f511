/*
 * session_tools.c - the tools the supervisor answers itself:
 * browser_session_create, browser_session_close and browser_session_list;
 * and files handed from one session's directory to another's (fromSessionId).
 *
 * Each session's files live in its own directory (outdirs.h), which its
 * worker alone may read; a file moves to another session only when the
 * caller names the source session, i.e. holds the capability to drive it.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "outdirs.h"
#include "router.h"
#include "router_int.h"
#include "safepath.h"

/* The session's own directory (outdirs.h), absolute when it exists. */
static void session_dir(struct server *srv, const char *id, char *out, size_t cap)
{
    char name[OUTDIR_NAME_LEN + 1], joined[PATH_MAX + OUTDIR_NAME_LEN + 2];
    outdir_name(id, name);
    snprintf(joined, sizeof joined, "%s/%s", srv->cfg.output_dir, name);
    char real[PATH_MAX];
    snprintf(out, cap, "%s", realpath(joined, real) ? real : joined);
}

static json_t *session_info(struct server *srv, struct session *s)
{
    char created[40], expires[40];
    format_iso8601(s->created_ms, created, sizeof created);
    format_iso8601(session_expires_at(srv->sessions, s), expires, sizeof expires);
    struct sess *ss = s->ctx;
    const char *state = !ss->w ? "idle" : ss->head ? "busy" : "ready";
    char dir[PATH_MAX];
    session_dir(srv, s->id, dir, sizeof dir);
    json_t *info = json_pack("{s:s, s:s, s:s, s:s, s:b, s:s}", "sessionId", s->id, "createdAt",
                             created, "expiresAt", expires, "state", state, "isDefault",
                             s->is_default, "outputDir", dir);
    /* What a crash would restore (worker/session_state.c). */
    if (ss->state)
        json_object_set_new(
            info, "savedState",
            json_pack("{s:I, s:I, s:I, s:I, s:O}", "bytes", (json_int_t)ss->state_bytes, "tabs",
                      (json_int_t)json_array_size(json_object_get(ss->state, "tabs")), "cookies",
                      (json_int_t)json_array_size(json_object_get(ss->state, "cookies")),
                      "localStorageOrigins",
                      (json_int_t)json_array_size(json_object_get(ss->state, "origins")),
                      "viewport", json_object_get(ss->state, "viewport") ?: json_null()));
    return info;
}

json_t *tool_session_create(struct server *srv, struct mcp_conn *conn, json_t *rpc_id,
                            const struct tool_def *tool, json_t *args)
{
    /* A storage state is loaded by a worker as it starts: not a pooled one. */
    bool may_pool = !json_object_get(args, "storageState");
    struct sess *ss;
    enum tv_err e = sess_create(srv, may_pool, &ss);
    if (e != TV_OK) {
        char msg[128];
        snprintf(msg, sizeof msg, "the server already runs its maximum of %zu sessions",
                 session_max(srv->sessions));
        return router_error(e, msg, "Close a session with browser_session_close.", NULL);
    }
    ss->s->owner = conn;
    log_info("session %s created%s", ss->s->id, ss->w ? " (from the pool)" : "");
    json_t *err = json_object_get(args, "fromSessionId")
                      ? session_hand_over(srv, ss, args, "storageState")
                      : NULL;
    if (err) {
        sess_close(ss, false, "its storage state could not be handed over");
        return err;
    }
    struct call *c = call_new(srv, conn, rpc_id, tool, args, NULL);
    ss->create_call = c;
    call_attach(ss, c);
    if (ss->w && ss->w->state == W_READY)
        router_worker_ready(srv, ss->w, NULL); /* pooled and ready: answer now */
    else
        sess_pump(ss); /* a fresh worker, or a pooled one's READY is still to come */
    return NULL;
}

json_t *tool_session_close(struct server *srv, struct mcp_conn *conn, json_t *args)
{
    const char *sid = json_string_value(json_object_get(args, "sessionId"));
    struct session *s;
    enum tv_err e = session_lookup(srv->sessions, sid, &s);
    if (e != TV_OK)
        return router_error(e,
                            e == TV_SESSION_EXPIRED ? "this session already expired"
                                                    : "no session with this id",
                            NULL, sid);
    if (s->is_default && s->owner == conn)
        conn->default_session[0] = 0;
    json_t *ok = json_pack("{s:s, s:b}", "sessionId", sid, "closed", 1);
    sess_close(s->ctx, false, "closed by browser_session_close");
    char text[80];
    snprintf(text, sizeof text, "Session %s closed.", sid); /* args, hence sid, outlive this */
    return json_pack("{s:[{s:s, s:s}], s:o, s:b}", "content", "type", "text", "text", text,
                     "structuredContent", ok, "isError", 0);
}

json_t *tool_session_list(struct server *srv, struct mcp_conn *conn)
{
    json_t *list = json_array();
    for (size_t i = 0; i < session_count(srv->sessions); i++) {
        struct session *s = session_at(srv->sessions, i);
        if (s->owner == conn)
            json_array_append_new(list, session_info(srv, s));
    }
    char *text = json_dumps(list, JSON_COMPACT);
    json_t *result =
        json_pack("{s:[{s:s, s:s}], s:{s:o}, s:b}", "content", "type", "text", "text",
                  text ? text : "[]", "structuredContent", "sessions", list, "isError", 0);
    free(text);
    return result;
}

void session_created(struct server *srv, struct sess *ss)
{
    struct call *c = ss->create_call;
    ss->create_call = NULL;
    char expires[40], dir[PATH_MAX];
    format_iso8601(session_expires_at(srv->sessions, ss->s), expires, sizeof expires);
    session_dir(srv, ss->s->id, dir, sizeof dir);
    long long idle_s = session_idle_ms(srv->sessions) / 1000;
    char text[160 + PATH_MAX];
    snprintf(text, sizeof text,
             "Session %s created; it expires at %s if unused. Its files are in %s.", ss->s->id,
             expires, dir);
    call_reply(c, json_pack("{s:[{s:s, s:s}], s:{s:s, s:s, s:I, s:s}, s:b}", "content", "type",
                            "text", "text", text, "structuredContent", "sessionId", ss->s->id,
                            "expiresAt", expires, "idleTimeoutSeconds", (json_int_t)idle_s,
                            "outputDir", dir, "isError", 0));
    call_free(srv, c);
}

json_t *session_hand_over(struct server *srv, struct sess *ss, json_t *args, const char *file_arg)
{
    const char *from = json_string_value(json_object_get(args, "fromSessionId"));
    const char *name = json_string_value(json_object_get(args, file_arg));
    if (!from)
        return NULL;
    if (!name) {
        char msg[120];
        snprintf(msg, sizeof msg, "fromSessionId names where %s is read from; give %s too",
                 file_arg, file_arg);
        return router_error(TV_INVALID_PARAMETERS, msg, NULL, ss->s->id);
    }
    struct session *src;
    enum tv_err e = session_lookup(srv->sessions, from, &src);
    if (e != TV_OK)
        return router_error(e, "fromSessionId: no session with this id",
                            "Name a live session whose id you hold.", ss->s->id);
    char rel[PATH_MAX], err[600];
    int r = outdir_hand_over(srv->cfg.output_dir, src->id, ss->s->id, name, rel, sizeof rel, err,
                             sizeof err);
    if (r != SAFEPATH_OK) {
        char msg[700];
        snprintf(msg, sizeof msg, "%s: %s", file_arg, err);
        return router_error(r == SAFEPATH_TOO_BIG ? TV_INVALID_PARAMETERS : TV_PATH_NOT_ALLOWED,
                            msg,
                            "Name a file in that session's output dir (outputDir of "
                            "browser_session_list).",
                            ss->s->id);
    }
    log_info("session %s: %s handed over from session %s", ss->s->id, rel, src->id);
    json_object_set_new(args, file_arg, json_string(rel));
    json_object_del(args, "fromSessionId");
    return NULL;
}
