#include "stdio_transport.h"
#include "metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "jsonrpc.h"
#include "log.h"
#include "memtrim.h"
#include "mcp.h"
#include "server.h"

struct buf {
    char *data;
    size_t len, cap;
};

static struct {
    struct server *srv;
    struct mcp_conn *conn;
    struct buf in, out;
    size_t out_off;
    int discarding; /* skipping the rest of an oversized line */
} io;

static void buf_append(struct buf *b, const char *p, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 65536;
        while (cap < b->len + n)
            cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d)
            abort();
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

static void try_write(void)
{
    while (io.out_off < io.out.len) {
        ssize_t w = write(1, io.out.data + io.out_off, io.out.len - io.out_off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN)
                log_error("stdout: %s", strerror(errno));
            break;
        }
        io.out_off += (size_t)w;
        metrics_bytes_sent("stdio", (size_t)w);
    }
    if (io.out_off == io.out.len) {
        io.out_off = io.out.len = 0;
        if (io.out.cap > MEMTRIM_KEEP_BYTES) {
            /* Not kept after a large result (see memtrim.h). */
            memtrim_released(io.out.cap);
            free(io.out.data);
            io.out.data = NULL;
            io.out.cap = 0;
        }
    }
    if (io.srv && io.srv->loop)
        loop_set_events(io.srv->loop, 1, io.out.len ? POLLOUT : 0);
}

static void on_stdout(struct loop *l, int fd, short revents, void *ud)
{
    if (revents & (POLLERR | POLLHUP)) {
        log_info("stdout closed; shutting down");
        loop_del_fd(l, 1);
        loop_stop(l);
        return;
    }
    try_write();
}

static void send_line(struct mcp_conn *c, json_t *msg)
{
    char *text = json_dumps(msg, JSON_COMPACT);
    if (!text)
        return;
    buf_append(&io.out, text, strlen(text));
    buf_append(&io.out, "\n", 1);
    free(text);
    try_write();
}

static const struct mcp_transport_ops stdio_ops = {.send = send_line};

static void handle_line(void *ud, const char *line, size_t n)
{
    mcp_conn_handle(io.conn, line, n);
}

static void process_lines(void)
{
    size_t start = 0;
    if (io.discarding) {
        /* The rest of an oversized line: skip it, then frame as usual. */
        char *nl = memchr(io.in.data, '\n', io.in.len);
        if (!nl) {
            io.in.len = 0;
            return;
        }
        io.discarding = 0;
        start = (size_t)(nl - io.in.data) + 1;
    }
    start += jsonrpc_split_lines(io.in.data + start, io.in.len - start, handle_line, NULL);
    memmove(io.in.data, io.in.data + start, io.in.len - start);
    io.in.len -= start;
    if (io.in.len > STDIO_MAX_LINE) {
        mcp_reply_error(io.conn, NULL, -32700, "Parse error: message larger than 64 MiB");
        io.in.len = 0;
        io.discarding = 1;
    }
}

static void on_stdin(struct loop *l, int fd, short revents, void *ud)
{
    char chunk[65536];
    for (;;) {
        ssize_t r = read(0, chunk, sizeof chunk);
        if (r > 0) {
            buf_append(&io.in, chunk, (size_t)r);
            process_lines();
            continue;
        }
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && errno == EAGAIN)
            return;
        /* EOF (or a read error): the client is gone. A last line without a
         * newline still counts. */
        if (io.in.len && !io.discarding)
            mcp_conn_handle(io.conn, io.in.data, io.in.len);
        io.in.len = 0;
        log_info("stdin closed; shutting down");
        loop_del_fd(l, 0);
        loop_stop(l);
        return;
    }
}

int stdio_transport_start(struct server *srv)
{
    io.srv = srv;
    io.conn = mcp_conn_new(srv, &stdio_ops, NULL);
    if (!io.conn)
        return -1;
    fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
    fcntl(1, F_SETFL, fcntl(1, F_GETFL) | O_NONBLOCK);
    loop_add_fd(srv->loop, 0, POLLIN, on_stdin, NULL);
    loop_add_fd(srv->loop, 1, 0, on_stdout, NULL);
    return 0;
}

void stdio_transport_flush(long long timeout_ms)
{
    long long end = mono_ms() + timeout_ms;
    while (io.out.len && mono_ms() < end) {
        struct pollfd p = {.fd = 1, .events = POLLOUT};
        if (poll(&p, 1, 50) > 0) {
            if (p.revents & (POLLERR | POLLHUP))
                break;
            try_write();
        }
    }
}

void stdio_transport_stop(void)
{
    if (io.conn)
        mcp_conn_free(io.conn);
    io.conn = NULL;
    free(io.in.data);
    free(io.out.data);
    memset(&io.in, 0, sizeof io.in);
    memset(&io.out, 0, sizeof io.out);
}
