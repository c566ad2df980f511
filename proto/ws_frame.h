/*
 * ws_frame.h - RFC 6455 framing for tabvisor's WebSocket clients (the
 * worker's worker/cdp/ws.c and the supervisor's cdp_remote.c for
 * --browser-mode cdp), kept free of sockets so it can be unit-tested and
 * fuzzed.
 *
 * Three layers:
 *   - ws_frame_parse / ws_frame_encode: one frame header, pure and
 *     allocation-free.
 *   - ws_reader: turns a byte stream from the server into whole messages,
 *     pings and closes (reassembling continuation frames, enforcing a size
 *     cap). It buffers partial frames between reads; it allocates.
 *   - handshake helpers: base64 and Sec-WebSocket-Accept.
 *
 * No extension is ever negotiated, so every reserved bit must be zero. Text
 * messages are not checked for valid UTF-8 here: the JSON parser behind the
 * transport rejects what it cannot read, and CDP only sends JSON.
 */
#ifndef TABVISOR_WS_FRAME_H
#define TABVISOR_WS_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WS_MAX_HEADER 14   /* 2 + 8 (64-bit length) + 4 (mask key) */
#define WS_MAX_CONTROL 125 /* control frame payload limit, RFC 6455 5.5 */

enum ws_opcode {
    WS_OP_CONT = 0x0,
    WS_OP_TEXT = 0x1,
    WS_OP_BINARY = 0x2,
    WS_OP_CLOSE = 0x8,
    WS_OP_PING = 0x9,
    WS_OP_PONG = 0xA,
};

/* Close status codes we send (RFC 6455 7.4.1). */
enum {
    WS_CLOSE_NORMAL = 1000,
    WS_CLOSE_PROTOCOL = 1002,
    WS_CLOSE_TOO_BIG = 1009,
};

enum ws_parse_status {
    WS_PARSE_ERROR = -1,
    WS_PARSE_OK = 0,
    WS_PARSE_NEED_MORE = 1, /* buf holds a valid prefix of a header */
};

/* Who sent the bytes being parsed: servers must not mask, clients must. */
enum ws_sender {
    WS_FROM_SERVER,
    WS_FROM_CLIENT,
};

struct ws_frame {
    bool fin;
    bool masked;
    uint8_t opcode;
    uint8_t mask[4]; /* valid when masked */
    uint64_t payload_len;
    size_t header_len; /* the payload starts at buf + header_len */
};

/*
 * Parse the frame header at the start of buf. Looks only at the header: the
 * payload need not be present. On WS_PARSE_ERROR *reason (if reason is
 * non-NULL) gets a static string. An error is reported as soon as the byte
 * that proves it is present, so a truncated prefix of a valid header is always
 * NEED_MORE, never ERROR.
 */
int ws_frame_parse(const void *buf, size_t len, enum ws_sender from, struct ws_frame *f,
                   const char **reason);

/*
 * Write a frame header into out (room for WS_MAX_HEADER bytes) using the
 * shortest length encoding; mask NULL writes an unmasked (server-style)
 * frame, which only tests use. Returns the header length.
 */
size_t ws_frame_encode(uint8_t out[WS_MAX_HEADER], bool fin, enum ws_opcode op,
                       uint64_t payload_len, const uint8_t mask[4]);

/*
 * XOR data with the mask key, in place. offset is the position of data[0]
 * within the frame payload, so a payload can be masked in pieces. Masking is
 * its own inverse.
 */
void ws_mask(void *data, size_t len, const uint8_t mask[4], uint64_t offset);

/* A fresh mask key from getrandom(). 0, or -1 with errno. */
int ws_random_mask(uint8_t mask[4]);

#define WS_ACCEPT_LEN 28 /* base64 of a 20-byte SHA-1 */

/* Sec-WebSocket-Accept for a Sec-WebSocket-Key: base64(SHA-1(key + GUID)). */
void ws_accept_key(const char *key, char out[WS_ACCEPT_LEN + 1]);

/* ---- message reassembly ---- */

enum ws_event {
    WS_EV_NEED_MORE = 0, /* feed more bytes */
    WS_EV_MESSAGE,       /* a whole text or binary message: ws_reader_take() it */
    WS_EV_PING,          /* answer with a pong carrying ctl[0..ctl_len) */
    WS_EV_CLOSE,         /* peer closed; ctl holds its close payload. Sticky. */
    WS_EV_ERROR,         /* protocol violation or size cap; see error. Sticky. */
};

struct ws_reader {
    /* Raw bytes not yet consumed: buf[start, end). Data payloads are copied
     * out as they arrive, so this stays small (a partial header or control
     * frame) between calls however large the messages are. */
    uint8_t *buf;
    size_t start, end, cap;

    size_t max_message; /* cap on one reassembled message */

    /* The data frame whose payload is being streamed into msg. */
    bool in_frame;
    bool frame_fin;
    uint64_t frame_left;

    /* The message being assembled across frames. */
    char *msg;
    size_t msg_len, msg_cap;
    bool msg_open;
    bool msg_binary;

    /* Payload of the last ping or close. */
    uint8_t ctl[WS_MAX_CONTROL];
    size_t ctl_len;

    int done;                  /* 0, WS_EV_CLOSE or WS_EV_ERROR once the stream is over */
    const char *error;         /* static string, set with WS_EV_ERROR */
    uint16_t error_close_code; /* what to send in our close frame after an error */
};

void ws_reader_init(struct ws_reader *r, size_t max_message);
void ws_reader_free(struct ws_reader *r);

/*
 * Room to read into: at least want bytes at the returned pointer (NULL when
 * out of memory). Call ws_reader_commit() with the number actually written.
 * Lets the socket read straight into the reader's buffer.
 */
void *ws_reader_space(struct ws_reader *r, size_t want);
void ws_reader_commit(struct ws_reader *r, size_t n);
/* Copy bytes in (tests, fuzzing, bytes read past the handshake). 0 or -1 (ENOMEM). */
int ws_reader_push(struct ws_reader *r, const void *data, size_t n);

/*
 * Process buffered bytes up to the next event. Pongs are swallowed. Call it
 * until WS_EV_NEED_MORE before reading the socket again: one read can carry
 * many messages.
 */
enum ws_event ws_reader_next(struct ws_reader *r);

/*
 * After WS_EV_MESSAGE: hand over the message, malloc'd and NUL-terminated
 * (the NUL is not counted in *len). *binary tells text from binary; may be NULL.
 */
void ws_reader_take(struct ws_reader *r, char **msg, size_t *len, bool *binary);

/* The close code in a close payload (1005 "no status" when absent). */
unsigned ws_close_code(const uint8_t *payload, size_t len);

#endif
