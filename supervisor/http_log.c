/*
 * http_log.c - log lines for HTTP clients as notifications/message: each
 * client gets only lines about its own MCP session, secrets masked,
 * delivered after the event that logged them (deferred flush).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "http_int.h"
#include "http_parse.h"
#include "jsonrpc.h"
#include "log.h"
#include "memtrim.h"
#include "mcp.h"
#include "metrics.h"
#include "peer_uid.h"
#include "router.h"
#include "server.h"
#include "sessions.h"

/* ------------------------------------------------------------- logging */

static void flush_logs(void *ud)
{
    hs.flush_scheduled = false;
    if (!hs.running || !hs.pending_logs)
        return;
    json_t *logs = hs.pending_logs;
    hs.pending_logs = NULL;
    size_t i;
    json_t *item;
    json_array_foreach(logs, i, item)
    {
        const char *sid = json_string_value(json_array_get(item, 0));
        struct http_span id = {sid, strlen(sid)};
        struct msess *ms = http_find_msess(&id);
        if (ms)
            http_session_notify(ms, json_array_get(item, 1));
    }
    json_decref(logs);
}

/* Copy text with what must never reach a client masked: the token and any
 * WebSocket URL (the browser's endpoint). */
static char *redact(const char *text)
{
    size_t n = strlen(text);
    char *out = malloc(n + 1);
    if (!out)
        abort();
    memcpy(out, text, n + 1);
    const char *token = hs.srv->cfg.auth_token;
    size_t tn = token ? strlen(token) : 0;
    for (char *p = out; tn && (p = strstr(p, token));)
        memset(p, '*', tn);
    static const char *const urls[] = {"ws://", "wss://"};
    for (size_t i = 0; i < 2; i++) {
        for (char *p = out; (p = strstr(p, urls[i]));) {
            char *e = p;
            while (*e && *e != ' ' && *e != '\t')
                e++;
            memset(p, '*', (size_t)(e - p));
            p = e;
        }
    }
    return out;
}

/* The log sink. Server-wide lines go to no client: they name other
 * clients' MCP and browser sessions and worker pids, which would let one
 * client take over another's sessions. A line reaches a client only when
 * it was logged while that client's own message was being handled
 * (hs.log_ctx), at or above its logging/setLevel level, and redacted.
 * Delivery is deferred to the end of the loop iteration, because a log line
 * can come from anywhere, including this file in the middle of changing a
 * list. */
void http_log_sink(void *ud, enum log_level lvl, const char *text)
{
    struct msess *ms = hs.log_ctx;
    if (!hs.running || !ms || ms->mcp->log_level < 0 || (int)lvl < ms->mcp->log_level)
        return;
    if (!hs.pending_logs)
        hs.pending_logs = json_array();
    if (json_array_size(hs.pending_logs) >= MAX_PENDING_LOG)
        return;
    char *clean = redact(text);
    json_t *n = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}}", "jsonrpc", "2.0", "method",
                          "notifications/message", "params", "level", log_level_name(lvl), "logger",
                          "tabvisor", "data", clean);
    free(clean);
    json_array_append_new(hs.pending_logs, json_pack("[s, o]", ms->id, n));
    if (!hs.flush_scheduled) {
        hs.flush_scheduled = true;
        loop_defer(hs.srv->loop, flush_logs, NULL);
    }
}

void http_recompute_log_sink(void)
{
    int min = -1;
    for (struct msess *ms = hs.sessions; ms; ms = ms->next)
        if (ms->mcp->log_level >= 0 && (min < 0 || ms->mcp->log_level < min))
            min = ms->mcp->log_level;
    if (min < 0 || min > LOG_ERROR)
        log_set_sink(NULL, NULL, LOG_ERROR);
    else
        log_set_sink(http_log_sink, NULL, (enum log_level)min);
}
