/*
 * nulframe.h - byte buffers for NUL-terminated message streams.
 *
 * Chromium's --remote-debugging-pipe speaks CDP as JSON texts, each ended by
 * one NUL byte. The supervisor's CDP bridge and the worker's pipe transport
 * both read and write that framing over non-blocking fds, with these two
 * buffers:
 *
 *   nf_reader  bytes in (read straight into its free space), whole messages
 *              out; each is scanned for its NUL only once.
 *   nf_queue   bytes out, written in order with as many write(2)s as the fd
 *              takes, so a message half written when the fd filled up is
 *              finished before the next one starts.
 *
 * Both give memory back when they drain after a large message (a screenshot
 * can be tens of MiB): a process that carried one big message does not keep
 * its size for the rest of its life.
 *
 * Ownership: a message handed out by nf_reader_next() points into the reader
 * and stays valid until the next nf_reader_space() or nf_reader_free().
 */
#ifndef TABVISOR_NULFRAME_H
#define TABVISOR_NULFRAME_H

#include <stdbool.h>
#include <stddef.h>

/* Buffers above this capacity are freed as soon as they are empty. */
#define NF_KEEP_CAPACITY (256u * 1024)

struct nf_reader {
    char *buf;
    size_t start;   /* first byte of the message being assembled */
    size_t end;     /* end of the bytes read */
    size_t scanned; /* bytes from start already known to hold no NUL */
    size_t cap;
    size_t max_msg; /* a longer message is an error (0: no limit) */
};

/* Free space for at least want more bytes at (buf + end), moving or growing the
 * buffer; NULL when out of memory. Invalidates messages handed out. */
char *nf_reader_space(struct nf_reader *r, size_t want);
/* n bytes were written into the space. */
void nf_reader_commit(struct nf_reader *r, size_t n);
/* One read(2) of up to chunk bytes from fd into the reader: the bytes read
 * (committed), 0 at end of file, or -1 with errno (ENOMEM when no space
 * could be had; EAGAIN/EINTR: try later). */
long nf_reader_read(struct nf_reader *r, int fd, size_t chunk);
/*
 * The next whole message: 1 with *msg and *len set (len excludes the NUL; the
 * NUL is left in place, so *msg is a C string), 0 when none is complete, -1
 * when the message being assembled is over max_msg.
 */
int nf_reader_next(struct nf_reader *r, char **msg, size_t *len);
/* True when a whole message is buffered (nf_reader_next would return 1). */
bool nf_reader_has_message(struct nf_reader *r);
void nf_reader_free(struct nf_reader *r);

struct nf_queue {
    char *buf;
    size_t start, end, cap;
    bool not_socket; /* learnt on the first write: use write(2), not send(2) */
};

/* Append n bytes; 0, or -1 when out of memory or the queue would exceed limit bytes
 * (0: no limit). */
int nf_queue_append(struct nf_queue *q, const void *data, size_t n, size_t limit);
/* Bytes waiting to be written. */
static inline size_t nf_queue_len(const struct nf_queue *q)
{
    return q->end - q->start;
}
/*
 * Write what fd takes now (fd non-blocking, or MSG_DONTWAIT semantics for
 * sockets). 0 when the queue is empty, 1 when bytes remain (the fd is full),
 * -1 on a write error (errno set; EPIPE when the reader is gone).
 */
int nf_queue_write(struct nf_queue *q, int fd);
/* Queue msg[0..len) as one message (then a NUL), its text [id_start,
 * id_end) replaced by the number id: a bridge renumbering a command or
 * putting a client's id back on an answer without parsing the rest. 0 or
 * -1 (over limit, or out of memory). */
int nf_queue_message_with_id(struct nf_queue *q, const char *msg, size_t len, size_t id_start,
                             size_t id_end, long long id, size_t limit);
void nf_queue_free(struct nf_queue *q);

#endif
