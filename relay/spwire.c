/*
 * spwire.c - nng's pair1-over-ipc wire, read and written (spwire.h).
 */
#include "spwire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void spwire_reader_init(struct spwire_reader *rd, size_t max_body)
{
    memset(rd, 0, sizeof *rd);
    rd->max_body = max_body;
}

void spwire_reader_free(struct spwire_reader *rd)
{
    free(rd->msg);
    rd->msg = NULL;
    rd->msg_len = rd->msg_got = rd->msg_cap = 0;
}

void spwire_greeting(uint8_t out[SPWIRE_GREETING_LEN])
{
    const uint8_t g[SPWIRE_GREETING_LEN] = {0, 'S', 'P', 0, SPWIRE_PAIR1 >> 8, SPWIRE_PAIR1 & 0xff,
                                            0, 0};
    memcpy(out, g, sizeof g);
}

static void put_be(uint8_t *out, uint64_t v, int bytes)
{
    for (int i = bytes - 1; i >= 0; i--, v >>= 8)
        out[i] = (uint8_t)(v & 0xff);
}

static uint64_t get_be(const uint8_t *in, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v = (v << 8) | in[i];
    return v;
}

void spwire_frame_head(uint8_t out[SPWIRE_FRAME_HEAD], size_t body_len)
{
    out[0] = 1;
    put_be(out + 1, (uint64_t)body_len + 4, 8);
    put_be(out + 9, 1, 4); /* one hop: from us to the worker */
}

/* A frame head is complete: check it and make room for its body. */
static int start_body(struct spwire_reader *rd, char *err, size_t errlen)
{
    if (rd->head[0] != 1) {
        snprintf(err, errlen, "frame type %u (only 1, a message, exists)", rd->head[0]);
        return -1;
    }
    uint64_t len = get_be(rd->head + 1, 8);
    if (len < 4) {
        snprintf(err, errlen, "a message of %llu bytes has no hop count", (unsigned long long)len);
        return -1;
    }
    if (len - 4 > rd->max_body) {
        snprintf(err, errlen, "a message of %llu bytes (at most %zu)", (unsigned long long)len,
                 rd->max_body + 4);
        return -1;
    }
    uint32_t hops = (uint32_t)get_be(rd->head + 9, 4);
    if (hops < 1 || hops > SPWIRE_MAX_HOPS) {
        snprintf(err, errlen, "hop count %u out of range", hops);
        return -1;
    }
    rd->msg_len = (size_t)(len - 4);
    rd->msg_got = 0;
    return 0;
}

/* Room for n more body bytes: grown as bytes come, not by what the head
 * claims, so a peer that announces 64 MiB and sends nothing costs nothing. */
static int reserve(struct spwire_reader *rd, size_t n, char *err, size_t errlen)
{
    size_t need = rd->msg_got + n;
    if (need <= rd->msg_cap)
        return 0;
    size_t cap = rd->msg_cap ? rd->msg_cap : 4096;
    while (cap < need)
        cap *= 2;
    if (cap > rd->msg_len)
        cap = rd->msg_len;
    uint8_t *p = realloc(rd->msg, cap);
    if (!p) {
        snprintf(err, errlen, "out of memory for a message of %zu bytes", rd->msg_len);
        return -1;
    }
    rd->msg = p;
    rd->msg_cap = cap;
    return 0;
}

int spwire_read(struct spwire_reader *rd, const uint8_t *in, size_t len, spwire_msg_fn on_msg,
                void *ud, char *err, size_t errlen)
{
    size_t at = 0;
    if (rd->got_greeting < SPWIRE_GREETING_LEN) {
        size_t n = SPWIRE_GREETING_LEN - rd->got_greeting;
        if (n > len)
            n = len;
        memcpy(rd->greeting + rd->got_greeting, in, n);
        rd->got_greeting += n;
        at = n;
        if (rd->got_greeting < SPWIRE_GREETING_LEN)
            return 0;
        uint8_t want[SPWIRE_GREETING_LEN];
        spwire_greeting(want);
        if (memcmp(rd->greeting, want, SPWIRE_GREETING_LEN) != 0) {
            snprintf(err, errlen, "not an nng pair1 greeting");
            return -1;
        }
    }
    while (at < len) {
        if (rd->got_head < SPWIRE_FRAME_HEAD) {
            size_t n = SPWIRE_FRAME_HEAD - rd->got_head;
            if (n > len - at)
                n = len - at;
            memcpy(rd->head + rd->got_head, in + at, n);
            rd->got_head += n;
            at += n;
            if (rd->got_head < SPWIRE_FRAME_HEAD)
                return 0;
            if (start_body(rd, err, errlen) != 0)
                return -1;
        }
        size_t n = rd->msg_len - rd->msg_got;
        if (n > len - at)
            n = len - at;
        if (n) {
            if (reserve(rd, n, err, errlen) != 0)
                return -1;
            memcpy(rd->msg + rd->msg_got, in + at, n);
            rd->msg_got += n;
            at += n;
        }
        if (rd->msg_got < rd->msg_len)
            return 0;
        rd->got_head = 0;
        int stop = on_msg(ud, rd->msg ? rd->msg : (const uint8_t *)"", rd->msg_len);
        /* A big body's buffer goes; a small one is kept for the next. */
        if (rd->msg_cap > 65536)
            spwire_reader_free(rd);
        rd->msg_len = rd->msg_got = 0;
        if (stop)
            return 1;
    }
    return 0;
}
