#include "nulframe.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

char *nf_reader_space(struct nf_reader *r, size_t want)
{
    size_t used = r->end - r->start;
    if (r->start > 0 && (r->cap - r->end < want || used == 0)) {
        /* Slide the partial message to the front before growing. */
        memmove(r->buf, r->buf + r->start, used);
        r->end = used;
        r->start = 0;
    }
    if (r->cap - r->end < want) {
        size_t ncap = r->cap ? r->cap : 4096;
        while (ncap - r->end < want) {
            if (ncap > ((size_t)-1) / 2)
                return NULL;
            ncap *= 2;
        }
        char *nb = realloc(r->buf, ncap);
        if (!nb)
            return NULL;
        r->buf = nb;
        r->cap = ncap;
    }
    return r->buf + r->end;
}

void nf_reader_commit(struct nf_reader *r, size_t n)
{
    r->end += n;
}

long nf_reader_read(struct nf_reader *r, int fd, size_t chunk)
{
    char *space = nf_reader_space(r, chunk);
    if (!space) {
        errno = ENOMEM;
        return -1;
    }
    ssize_t n = read(fd, space, chunk);
    if (n > 0)
        nf_reader_commit(r, (size_t)n);
    return (long)n;
}

int nf_reader_next(struct nf_reader *r, char **msg, size_t *len)
{
    size_t from = r->start + r->scanned;
    char *nul = from < r->end ? memchr(r->buf + from, 0, r->end - from) : NULL;
    if (!nul) {
        r->scanned = r->end - r->start;
        if (r->start == r->end && r->cap > NF_KEEP_CAPACITY) {
            /* Drained after a big message: give the memory back. */
            free(r->buf);
            r->buf = NULL;
            r->cap = r->start = r->end = r->scanned = 0;
        }
        if (r->max_msg && r->scanned > r->max_msg)
            return -1;
        return 0;
    }
    size_t n = (size_t)(nul - (r->buf + r->start));
    if (r->max_msg && n > r->max_msg)
        return -1;
    *msg = r->buf + r->start;
    *len = n;
    r->start += n + 1;
    r->scanned = 0;
    return 1;
}

bool nf_reader_has_message(struct nf_reader *r)
{
    size_t from = r->start + r->scanned;
    if (from >= r->end)
        return false;
    if (memchr(r->buf + from, 0, r->end - from))
        return true;
    r->scanned = r->end - r->start;
    return false;
}

void nf_reader_free(struct nf_reader *r)
{
    free(r->buf);
    size_t max = r->max_msg;
    memset(r, 0, sizeof *r);
    r->max_msg = max;
}

int nf_queue_append(struct nf_queue *q, const void *data, size_t n, size_t limit)
{
    size_t queued = q->end - q->start;
    if (limit && (n > limit || queued > limit - n))
        return -1;
    if (q->cap - q->end < n) {
        if (q->start > 0) {
            memmove(q->buf, q->buf + q->start, queued);
            q->start = 0;
            q->end = queued;
        }
        if (q->cap - q->end < n) {
            size_t ncap = q->cap ? q->cap : 4096;
            while (ncap - q->end < n) {
                if (ncap > ((size_t)-1) / 2)
                    return -1;
                ncap *= 2;
            }
            char *nb = realloc(q->buf, ncap);
            if (!nb)
                return -1;
            q->buf = nb;
            q->cap = ncap;
        }
    }
    memcpy(q->buf + q->end, data, n);
    q->end += n;
    return 0;
}

int nf_queue_write(struct nf_queue *q, int fd)
{
    while (q->start < q->end) {
        /* send() with MSG_NOSIGNAL for sockets (no SIGPIPE whatever the
         * disposition); write() for pipes, where send() fails ENOTSOCK. */
        ssize_t n = -1;
        if (!q->not_socket) {
            n = send(fd, q->buf + q->start, q->end - q->start, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n < 0 && errno == ENOTSOCK)
                q->not_socket = true;
        }
        if (q->not_socket)
            n = write(fd, q->buf + q->start, q->end - q->start);
        if (n > 0) {
            q->start += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 1;
        if (n == 0)
            errno = EPIPE;
        return -1;
    }
    q->start = q->end = 0;
    if (q->cap > NF_KEEP_CAPACITY) {
        free(q->buf);
        q->buf = NULL;
        q->cap = 0;
    }
    return 0;
}

void nf_queue_free(struct nf_queue *q)
{
    free(q->buf);
    q->buf = NULL;
    q->start = q->end = q->cap = 0;
}

int nf_queue_message_with_id(struct nf_queue *q, const char *msg, size_t len, size_t id_start,
                             size_t id_end, long long id, size_t limit)
{
    char num[24];
    int nl = snprintf(num, sizeof num, "%lld", id);
    if (id_start > id_end || id_end > len || nf_queue_append(q, msg, id_start, limit) < 0 ||
        nf_queue_append(q, num, (size_t)nl, limit) < 0 ||
        nf_queue_append(q, msg + id_end, len - id_end, limit) < 0 ||
        nf_queue_append(q, "", 1, limit) < 0)
        return -1;
    return 0;
}
