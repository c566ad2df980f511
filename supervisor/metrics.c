/* metrics.c - see metrics.h. A few dozen label sets at most, so a flat
 * array with linear search is the whole data structure. */
#include "metrics.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#define MAX_SERIES 512
#define MAX_TOOLS 256 /* the catalog has fewer; later tools go uncounted */
#define NBUCKETS 13

/* Upper bounds in milliseconds; the text shows them in seconds. */
static const long long bucket_ms[NBUCKETS] = {5,    10,   25,   50,    100,   250,   500,
                                              1000, 2500, 5000, 10000, 30000, 120000};

struct series {
    char tool[64];
    char outcome[32];
    unsigned long long count;
};

/* One tool's latency histogram. */
struct hist {
    char tool[64];
    unsigned long long buckets[NBUCKETS]; /* non-cumulative; rendered cumulative */
    unsigned long long count;
    double sum_s;
};

static struct {
    struct series calls[MAX_SERIES];
    size_t ncalls;
    struct hist lat[MAX_TOOLS];
    size_t nlat;
    unsigned long long worker_crashes, worker_restarts, browser_restarts;
    unsigned long long http_by_class[6]; /* 1xx..5xx, index 0 unused */
    unsigned long long sent_http, sent_stdio;
} m;

static struct hist *hist_for(const char *tool)
{
    for (size_t i = 0; i < m.nlat; i++)
        if (strcmp(m.lat[i].tool, tool) == 0)
            return &m.lat[i];
    if (m.nlat == MAX_TOOLS)
        return NULL;
    struct hist *h = &m.lat[m.nlat++];
    snprintf(h->tool, sizeof h->tool, "%s", tool);
    return h;
}

void metrics_call_done(const char *tool, const char *outcome, long long latency_ms)
{
    struct series *s = NULL;
    for (size_t i = 0; i < m.ncalls && !s; i++)
        if (strcmp(m.calls[i].tool, tool) == 0 && strcmp(m.calls[i].outcome, outcome) == 0)
            s = &m.calls[i];
    if (!s && m.ncalls < MAX_SERIES) {
        s = &m.calls[m.ncalls++];
        snprintf(s->tool, sizeof s->tool, "%s", tool);
        snprintf(s->outcome, sizeof s->outcome, "%s", outcome);
    }
    if (s)
        s->count++;
    struct hist *h = hist_for(tool);
    if (!h)
        return;
    if (latency_ms < 0)
        latency_ms = 0;
    size_t b = 0;
    while (b < NBUCKETS && latency_ms > bucket_ms[b])
        b++;
    if (b < NBUCKETS)
        h->buckets[b]++;
    h->count++;
    h->sum_s += (double)latency_ms / 1000.0;
}

void metrics_bytes_sent(const char *transport, size_t n)
{
    if (strcmp(transport, "stdio") == 0)
        m.sent_stdio += n;
    else
        m.sent_http += n;
}

void metrics_worker_crash(void)
{
    m.worker_crashes++;
}

void metrics_worker_restart(void)
{
    m.worker_restarts++;
}

void metrics_browser_restart(void)
{
    m.browser_restarts++;
}

void metrics_http_request(int status)
{
    int cls = status / 100;
    if (cls >= 1 && cls <= 5)
        m.http_by_class[cls]++;
}

void metrics_reset(void)
{
    memset(&m, 0, sizeof m);
}

struct out {
    char *p;
    size_t len, cap;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(o->p + o->len, o->cap - o->len, fmt, ap);
        va_end(ap);
        if (n < 0)
            return;
        if (o->len + (size_t)n < o->cap) {
            o->len += (size_t)n;
            return;
        }
        size_t cap = o->cap * 2 + (size_t)n;
        char *p = realloc(o->p, cap);
        if (!p)
            abort();
        o->p = p;
        o->cap = cap;
    }
}

char *metrics_render(const struct metrics_gauges *g)
{
    struct out o = {malloc(8192), 0, 8192};
    if (!o.p)
        abort();
    o.p[0] = 0;
    /* An info metric (value 1, the facts in labels): joined on by queries
     * that need to say which replica a series came from. The name is
     * [a-z0-9-] (options.c), so it needs no escaping. */
    if (g->instance_id)
        put(&o,
            "# HELP tabvisor_instance_info This replica's --instance-id.\n"
            "# TYPE tabvisor_instance_info gauge\ntabvisor_instance_info{instance_id=\"%s\"} 1\n",
            g->instance_id);
    put(&o,
        "# HELP tabvisor_browser_sessions Open browser sessions.\n"
        "# TYPE tabvisor_browser_sessions gauge\ntabvisor_browser_sessions %zu\n",
        g->sessions);
    static const char *const states[SESSION_STATES] = {"starting", "idle", "busy", "stopping"};
    put(&o, "# HELP tabvisor_browser_sessions_by_state Open browser sessions by worker state.\n"
            "# TYPE tabvisor_browser_sessions_by_state gauge\n");
    for (size_t k = 0; k < SESSION_STATES; k++)
        put(&o, "tabvisor_browser_sessions_by_state{state=\"%s\"} %zu\n", states[k], g->by_state[k]);
    put(&o,
        "# HELP tabvisor_mcp_sessions Open MCP sessions on the HTTP transport.\n"
        "# TYPE tabvisor_mcp_sessions gauge\ntabvisor_mcp_sessions %zu\n",
        g->mcp_sessions);
    put(&o,
        "# HELP tabvisor_http_connections Open HTTP connections.\n"
        "# TYPE tabvisor_http_connections gauge\ntabvisor_http_connections %zu\n",
        g->http_connections);
    put(&o, "# HELP tabvisor_http_responses_total HTTP responses by status class.\n"
            "# TYPE tabvisor_http_responses_total counter\n");
    for (int c = 1; c <= 5; c++)
        put(&o, "tabvisor_http_responses_total{class=\"%dxx\"} %llu\n", c, m.http_by_class[c]);
    put(&o, "# HELP tabvisor_tool_calls_total Tool calls by tool and outcome (ok or error code).\n"
            "# TYPE tabvisor_tool_calls_total counter\n");
    for (size_t i = 0; i < m.ncalls; i++)
        put(&o, "tabvisor_tool_calls_total{tool=\"%s\",outcome=\"%s\"} %llu\n", m.calls[i].tool,
            m.calls[i].outcome, m.calls[i].count);
    put(&o, "# HELP tabvisor_tool_call_duration_seconds Tool call latency, arrival to answer.\n"
            "# TYPE tabvisor_tool_call_duration_seconds histogram\n");
    for (size_t i = 0; i < m.nlat; i++) {
        const struct hist *h = &m.lat[i];
        unsigned long long cum = 0;
        for (size_t b = 0; b < NBUCKETS; b++) {
            cum += h->buckets[b];
            put(&o, "tabvisor_tool_call_duration_seconds_bucket{tool=\"%s\",le=\"%g\"} %llu\n",
                h->tool, (double)bucket_ms[b] / 1000.0, cum);
        }
        put(&o, "tabvisor_tool_call_duration_seconds_bucket{tool=\"%s\",le=\"+Inf\"} %llu\n",
            h->tool, h->count);
        put(&o, "tabvisor_tool_call_duration_seconds_sum{tool=\"%s\"} %.6f\n", h->tool, h->sum_s);
        put(&o, "tabvisor_tool_call_duration_seconds_count{tool=\"%s\"} %llu\n", h->tool, h->count);
    }
    put(&o,
        "# HELP tabvisor_worker_crashes_total Worker processes that died unasked.\n"
        "# TYPE tabvisor_worker_crashes_total counter\ntabvisor_worker_crashes_total %llu\n",
        m.worker_crashes);
    put(&o,
        "# HELP tabvisor_worker_restarts_total Fresh workers started for crashed sessions.\n"
        "# TYPE tabvisor_worker_restarts_total counter\ntabvisor_worker_restarts_total %llu\n",
        m.worker_restarts);
    put(&o,
        "# HELP tabvisor_browser_restarts_total Shared browser exits (it restarts on demand).\n"
        "# TYPE tabvisor_browser_restarts_total counter\n"
        "tabvisor_browser_restarts_total %llu\n",
        m.browser_restarts);
    put(&o,
        "# HELP tabvisor_sent_bytes_total Bytes written to MCP clients, by transport.\n"
        "# TYPE tabvisor_sent_bytes_total counter\n"
        "tabvisor_sent_bytes_total{transport=\"http\"} %llu\n"
        "tabvisor_sent_bytes_total{transport=\"stdio\"} %llu\n",
        m.sent_http, m.sent_stdio);
    return o.p;
}
