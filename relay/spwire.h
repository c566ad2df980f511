/*
 * spwire.h - the wire of nng's pair1 protocol over its ipc transport, as the
 * relay speaks it to workers (whose side is nng itself, worker/cdp/relay.c).
 * Pure: bytes in, messages out; no I/O (fuzzed: fuzz_relay_spwire.c).
 *
 * Why the relay speaks it itself: nng 1.5.2 (Debian 12) has a close race in
 * its ipc transport (docs/design.md, "Closing a worker's channel"). A pipe
 * closed while its reader is between a message's header and body leaves
 * nng's one reaper thread waiting for ever, and every pipe closed after
 * that keeps its descriptor. The relay sends to workers that may be killed
 * at any moment, so nng closes such pipes itself (a failed send). Owning
 * the socket in the relay's own loop removes nng's threads and reaper from
 * the relay altogether; the workers keep nng, and the bytes between them
 * are the same.
 *
 * The wire (nng's SP-over-IPC mapping with pair1):
 *   greeting, each side, once: 00 'S' 'P' 00, protocol (u16 BE, pair1 =
 *     0x0011), 00 00;
 *   then messages: 01, length (u64 BE) of what follows, pair1's hop count
 *     (u32 BE, 1..SPWIRE_MAX_HOPS), the body (a proto.h envelope).
 */
#ifndef TABVISOR_RELAY_SPWIRE_H
#define TABVISOR_RELAY_SPWIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SPWIRE_GREETING_LEN 8
#define SPWIRE_PAIR1 0x0011
#define SPWIRE_FRAME_HEAD 13 /* type, length, hop count */
#define SPWIRE_MAX_HOPS 8    /* pair1's default TTL, as nng checks it */

/* One connection's reading state. Owns msg while a message is partly read. */
struct spwire_reader {
    size_t max_body; /* bodies longer than this are refused */
    uint8_t greeting[SPWIRE_GREETING_LEN];
    size_t got_greeting;
    uint8_t head[SPWIRE_FRAME_HEAD];
    size_t got_head;
    uint8_t *msg; /* the body being read, or NULL */
    size_t msg_len, msg_got, msg_cap;
};

/* A whole message's body (len bytes, borrowed for the call). Returns 0 to
 * go on, nonzero to stop reading (spwire_read returns 1 then). */
typedef int (*spwire_msg_fn)(void *ud, const uint8_t *body, size_t len);

void spwire_reader_init(struct spwire_reader *rd, size_t max_body);
void spwire_reader_free(struct spwire_reader *rd);
/* Feed len bytes read from the connection; on_msg gets each complete body
 * in order. Returns 0 when all was taken, 1 when on_msg asked to stop, -1 on
 * a breach of the wire (bad greeting, another protocol, a frame type other
 * than 1, a length over max_body or too short for the hop count, a hop
 * count out of range) with the reason in err: the connection must go. */
int spwire_read(struct spwire_reader *rd, const uint8_t *in, size_t len, spwire_msg_fn on_msg,
                void *ud, char *err, size_t errlen);

/* Our greeting (SPWIRE_GREETING_LEN bytes) into out. */
void spwire_greeting(uint8_t out[SPWIRE_GREETING_LEN]);
/* The frame head for a body of body_len bytes (SPWIRE_FRAME_HEAD bytes). */
void spwire_frame_head(uint8_t out[SPWIRE_FRAME_HEAD], size_t body_len);

#endif
