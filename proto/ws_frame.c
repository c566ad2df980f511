/* ws_frame.c - see ws_frame.h. */
#include "ws_frame.h"
#include "base64.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <openssl/evp.h>
#include <openssl/sha.h>

/* Up-front reservation for a data frame whose length the header announces:
 * one allocation for typical messages, but a lying header cannot make us
 * reserve hundreds of MiB before the bytes exist. */
#define WS_RESERVE_AHEAD (64u * 1024 * 1024)

static bool opcode_known(unsigned op)
{
    return op == WS_OP_CONT || op == WS_OP_TEXT || op == WS_OP_BINARY || op == WS_OP_CLOSE ||
           op == WS_OP_PING || op == WS_OP_PONG;
}

static int fail(const char **reason, const char *why)
{
    if (reason)
        *reason = why;
    return WS_PARSE_ERROR;
}

int ws_frame_parse(const void *buf, size_t len, enum ws_sender from, struct ws_frame *f,
                   const char **reason)
{
    const uint8_t *p = buf;
    if (len < 1)
        return WS_PARSE_NEED_MORE;
    if (p[0] & 0x70)
        return fail(reason, "reserved bits set (no extension was negotiated)");
    unsigned op = p[0] & 0x0F;
    if (!opcode_known(op))
        return fail(reason, "unknown opcode");
    bool fin = p[0] & 0x80;
    bool control = op & 0x8;
    if (control && !fin)
        return fail(reason, "fragmented control frame");
    if (len < 2)
        return WS_PARSE_NEED_MORE;

    bool masked = p[1] & 0x80;
    if (from == WS_FROM_SERVER && masked)
        return fail(reason, "masked frame from the server");
    if (from == WS_FROM_CLIENT && !masked)
        return fail(reason, "unmasked frame from a client");
    unsigned len7 = p[1] & 0x7F;
    if (control && len7 > WS_MAX_CONTROL)
        return fail(reason, "control frame payload over 125 bytes");

    size_t hl = 2;
    uint64_t plen = len7;
    if (len7 == 126) {
        hl = 4;
        if (len < hl)
            return WS_PARSE_NEED_MORE;
        plen = (uint64_t)p[2] << 8 | p[3];
    } else if (len7 == 127) {
        /* The high bit is checkable as soon as its byte arrives. */
        if (len >= 3 && (p[2] & 0x80))
            return fail(reason, "64-bit payload length with the high bit set");
        hl = 10;
        if (len < hl)
            return WS_PARSE_NEED_MORE;
        plen = 0;
        for (int i = 0; i < 8; i++)
            plen = plen << 8 | p[2 + i];
    }
    if (masked) {
        if (len < hl + 4)
            return WS_PARSE_NEED_MORE;
        memcpy(f->mask, p + hl, 4);
        hl += 4;
    } else {
        memset(f->mask, 0, 4);
    }
    f->fin = fin;
    f->masked = masked;
    f->opcode = (uint8_t)op;
    f->payload_len = plen;
    f->header_len = hl;
    return WS_PARSE_OK;
}

size_t ws_frame_encode(uint8_t out[WS_MAX_HEADER], bool fin, enum ws_opcode op,
                       uint64_t payload_len, const uint8_t mask[4])
{
    size_t n = 0;
    out[n++] = (uint8_t)((fin ? 0x80 : 0) | (op & 0x0F));
    uint8_t mbit = mask ? 0x80 : 0;
    if (payload_len < 126) {
        out[n++] = mbit | (uint8_t)payload_len;
    } else if (payload_len <= 0xFFFF) {
        out[n++] = mbit | 126;
        out[n++] = (uint8_t)(payload_len >> 8);
        out[n++] = (uint8_t)payload_len;
    } else {
        out[n++] = mbit | 127;
        for (int i = 7; i >= 0; i--)
            out[n++] = (uint8_t)(payload_len >> (8 * i));
    }
    if (mask) {
        memcpy(out + n, mask, 4);
        n += 4;
    }
    return n;
}

void ws_mask(void *data, size_t len, const uint8_t mask[4], uint64_t offset)
{
    uint8_t *p = data;
    size_t i = 0;
    /* Byte-wise until the key phase is aligned, then 8 bytes at a time:
     * masking a multi-MB screenshot upload byte by byte is measurable. */
    for (; i < len && (offset + i) % 4 != 0; i++)
        p[i] ^= mask[(offset + i) % 4];
    uint8_t k8[8] = {mask[0], mask[1], mask[2], mask[3], mask[0], mask[1], mask[2], mask[3]};
    uint64_t k;
    memcpy(&k, k8, 8);
    for (; len - i >= 8; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        w ^= k;
        memcpy(p + i, &w, 8);
    }
    for (; i < len; i++)
        p[i] ^= mask[(offset + i) % 4];
}

int ws_random_mask(uint8_t mask[4])
{
    for (;;) {
        ssize_t n = getrandom(mask, 4, 0);
        if (n == 4)
            return 0;
        if (n < 0 && errno != EINTR)
            return -1;
    }
}

void ws_accept_key(const char *key, char out[WS_ACCEPT_LEN + 1])
{
    static const char guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
    char keyed[256];
    unsigned char digest[SHA_DIGEST_LENGTH];
    int n = snprintf(keyed, sizeof keyed, "%s%s", key, guid);
    /* A key is 24 characters (16 bytes base64); a longer one cannot be a
     * valid handshake, and its accept value never matches. */
    SHA1((const unsigned char *)keyed, n < (int)sizeof keyed ? (size_t)n : sizeof keyed - 1,
         digest);
    base64_encode_to(digest, sizeof digest, out, WS_ACCEPT_LEN + 1);
}

unsigned ws_close_code(const uint8_t *payload, size_t len)
{
    if (len < 2)
        return 1005;
    return (unsigned)payload[0] << 8 | payload[1];
}

/* ---- reader ---- */

void ws_reader_init(struct ws_reader *r, size_t max_message)
{
    memset(r, 0, sizeof *r);
    r->max_message = max_message;
}

void ws_reader_free(struct ws_reader *r)
{
    free(r->buf);
    free(r->msg);
    memset(r, 0, sizeof *r);
}

void *ws_reader_space(struct ws_reader *r, size_t want)
{
    if (want == 0)
        want = 1; /* never hand out NULL + 0 from an empty reader */
    if (r->start == r->end)
        r->start = r->end = 0;
    if (r->cap - r->end >= want)
        return r->buf + r->end;
    /* What is left unconsumed is at most a partial header or control frame
     * (payloads stream out), so moving it to the front is cheap. */
    if (r->start > 0) {
        memmove(r->buf, r->buf + r->start, r->end - r->start);
        r->end -= r->start;
        r->start = 0;
        if (r->cap - r->end >= want)
            return r->buf + r->end;
    }
    if (want > SIZE_MAX - r->end)
        return NULL;
    size_t ncap = r->end + want;
    uint8_t *nb = realloc(r->buf, ncap);
    if (!nb)
        return NULL;
    r->buf = nb;
    r->cap = ncap;
    return r->buf + r->end;
}

void ws_reader_commit(struct ws_reader *r, size_t n)
{
    r->end += n;
}

int ws_reader_push(struct ws_reader *r, const void *data, size_t n)
{
    if (n == 0)
        return 0;
    void *dst = ws_reader_space(r, n);
    if (!dst) {
        errno = ENOMEM;
        return -1;
    }
    memcpy(dst, data, n);
    ws_reader_commit(r, n);
    return 0;
}

static enum ws_event reader_fail(struct ws_reader *r, const char *why, uint16_t code)
{
    r->done = WS_EV_ERROR;
    r->error = why;
    r->error_close_code = code;
    return WS_EV_ERROR;
}

/* Make room for at least need bytes in msg (plus the NUL), growing
 * geometrically so fragmented or streamed messages cost amortised O(n). */
static bool msg_reserve(struct ws_reader *r, size_t need)
{
    if (need + 1 <= r->msg_cap)
        return true;
    size_t ncap = r->msg_cap ? r->msg_cap : 256;
    while (ncap < need + 1)
        ncap = ncap > SIZE_MAX / 2 ? need + 1 : ncap * 2;
    /* Never more than the cap allows: the last doubling may overshoot it. */
    if (ncap > r->max_message + 1 && need + 1 <= r->max_message + 1)
        ncap = r->max_message + 1;
    char *nm = realloc(r->msg, ncap);
    if (!nm)
        return false;
    r->msg = nm;
    r->msg_cap = ncap;
    return true;
}

enum ws_event ws_reader_next(struct ws_reader *r)
{
    if (r->done)
        return (enum ws_event)r->done;
    for (;;) {
        size_t avail = r->end - r->start;
        if (r->in_frame) {
            size_t n = avail < r->frame_left ? avail : (size_t)r->frame_left;
            if (n) {
                if (!msg_reserve(r, r->msg_len + n))
                    return reader_fail(r, "out of memory assembling a message", WS_CLOSE_TOO_BIG);
                memcpy(r->msg + r->msg_len, r->buf + r->start, n);
                r->msg_len += n;
                r->start += n;
                r->frame_left -= n;
            }
            if (r->frame_left > 0)
                return WS_EV_NEED_MORE;
            r->in_frame = false;
            if (r->frame_fin) {
                if (!msg_reserve(r, r->msg_len))
                    return reader_fail(r, "out of memory assembling a message", WS_CLOSE_TOO_BIG);
                r->msg[r->msg_len] = '\0';
                r->msg_open = false;
                return WS_EV_MESSAGE;
            }
            continue;
        }

        if (avail == 0)
            return WS_EV_NEED_MORE; /* also: buf may still be NULL */
        struct ws_frame f;
        const char *why = NULL;
        int rc = ws_frame_parse(r->buf + r->start, avail, WS_FROM_SERVER, &f, &why);
        if (rc == WS_PARSE_NEED_MORE)
            return WS_EV_NEED_MORE;
        if (rc == WS_PARSE_ERROR)
            return reader_fail(r, why, WS_CLOSE_PROTOCOL);

        if (f.opcode & 0x8) {
            /* Control frames are small (<= 125) and handled whole. */
            if (avail < f.header_len + f.payload_len)
                return WS_EV_NEED_MORE;
            r->ctl_len = (size_t)f.payload_len;
            memcpy(r->ctl, r->buf + r->start + f.header_len, r->ctl_len);
            r->start += f.header_len + r->ctl_len;
            if (f.opcode == WS_OP_PING)
                return WS_EV_PING;
            if (f.opcode == WS_OP_CLOSE) {
                r->done = WS_EV_CLOSE;
                return WS_EV_CLOSE;
            }
            continue; /* pong: we never ping, nothing to match */
        }

        if (f.opcode == WS_OP_CONT) {
            if (!r->msg_open)
                return reader_fail(r, "continuation frame with no message to continue",
                                   WS_CLOSE_PROTOCOL);
        } else {
            if (r->msg_open)
                return reader_fail(r, "new message before the previous one was finished",
                                   WS_CLOSE_PROTOCOL);
            r->msg_open = true;
            r->msg_binary = f.opcode == WS_OP_BINARY;
            r->msg_len = 0;
        }
        if (f.payload_len > r->max_message - r->msg_len)
            return reader_fail(r, "message larger than the size limit", WS_CLOSE_TOO_BIG);
        uint64_t ahead = f.payload_len < WS_RESERVE_AHEAD ? f.payload_len : WS_RESERVE_AHEAD;
        if (!msg_reserve(r, r->msg_len + (size_t)ahead))
            return reader_fail(r, "out of memory assembling a message", WS_CLOSE_TOO_BIG);
        r->start += f.header_len;
        r->in_frame = true;
        r->frame_fin = f.fin;
        r->frame_left = f.payload_len;
    }
}

void ws_reader_take(struct ws_reader *r, char **msg, size_t *len, bool *binary)
{
    *msg = r->msg;
    *len = r->msg_len;
    if (binary)
        *binary = r->msg_binary;
    r->msg = NULL;
    r->msg_len = 0;
    r->msg_cap = 0;
}
