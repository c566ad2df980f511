/*
 * log.c - one line per message on stderr, each written with a single write()
 * so that lines from the supervisor and its workers (which share stderr) do
 * not interleave. Never touches stdout: that is the MCP channel on stdio.
 */
#include "log.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

static char log_prog[64] = "tabvisor";
static enum log_level log_min = LOG_INFO;
static log_sink_fn sink_fn;
static void *sink_ud;
static enum log_level sink_min;
static pthread_t sink_thread;
static bool in_sink;

void log_set_sink(log_sink_fn fn, void *ud, enum log_level min)
{
    sink_fn = fn;
    sink_ud = ud;
    sink_min = min;
    sink_thread = pthread_self();
}

static const char *const level_names[] = {
    [LOG_DEBUG] = "debug",     [LOG_INFO] = "info",   [LOG_NOTICE] = "notice",
    [LOG_WARNING] = "warning", [LOG_ERROR] = "error",
};
#define LEVEL_COUNT (sizeof(level_names) / sizeof(level_names[0]))

void log_init(const char *prog, enum log_level min)
{
    if (prog && *prog) {
        const char *slash = strrchr(prog, '/');
        snprintf(log_prog, sizeof(log_prog), "%s", slash ? slash + 1 : prog);
    }
    log_set_level(min);
}

void log_set_level(enum log_level min)
{
    if ((unsigned)min < LEVEL_COUNT)
        log_min = min;
}

enum log_level log_level_from_name(const char *name)
{
    if (!name)
        return LOG_INFO;
    for (unsigned k = 0; k < LEVEL_COUNT; k++)
        if (strcasecmp(name, level_names[k]) == 0)
            return (enum log_level)k;
    if (strcasecmp(name, "warn") == 0)
        return LOG_WARNING;
    return LOG_INFO;
}

const char *log_level_name(enum log_level lvl)
{
    return (unsigned)lvl < LEVEL_COUNT ? level_names[lvl] : "unknown";
}

/* write() all of buf; a short write to a pipe is rare but possible. */
static void write_all(const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(STDERR_FILENO, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        buf += n;
        len -= (size_t)n;
    }
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
    if ((unsigned)lvl >= LEVEL_COUNT)
        return;
    bool to_sink =
        sink_fn && lvl >= sink_min && !in_sink && pthread_equal(pthread_self(), sink_thread);
    if (lvl < log_min && !to_sink)
        return;
    int saved_errno = errno; /* callers often log, then inspect errno */

    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);

    char stack[1024];
    char *line = stack;
    size_t cap = sizeof(stack);
    int prefix =
        snprintf(stack, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s[%ld] %s: ", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000,
                 log_prog, (long)getpid(), level_names[lvl]);
    if (prefix < 0 || (size_t)prefix >= cap) {
        errno = saved_errno;
        return;
    }

    va_list ap;
    va_start(ap, fmt);
    int body = vsnprintf(line + prefix, cap - (size_t)prefix, fmt, ap);
    va_end(ap);
    if (body < 0) {
        errno = saved_errno;
        return;
    }
    size_t total = (size_t)prefix + (size_t)body;
    if (total + 1 >= cap) { /* too long for the stack buffer: format again on the heap */
        char *big = malloc(total + 2);
        if (big) {
            memcpy(big, stack, (size_t)prefix);
            va_start(ap, fmt);
            vsnprintf(big + prefix, (size_t)body + 1, fmt, ap);
            va_end(ap);
            line = big;
            cap = total + 2;
        } else {
            total = cap - 2; /* keep the truncated text */
        }
    }
    /* One message, one line: fold embedded line breaks. */
    for (size_t k = (size_t)prefix; k < total; k++)
        if (line[k] == '\n' || line[k] == '\r')
            line[k] = ' ';
    line[total] = '\n';
    if (lvl >= log_min)
        write_all(line, total + 1);
    if (to_sink) {
        line[total] = 0;
        in_sink = true;
        sink_fn(sink_ud, lvl, line + prefix);
        in_sink = false;
    }
    if (line != stack)
        free(line);
    errno = saved_errno;
}
