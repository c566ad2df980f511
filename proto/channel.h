/*
 * channel.h - one nng pair socket carrying protocol envelopes.
 *
 * The supervisor listens (one ipc:// path per worker), the worker dials.
 * channel_fd() is nng's receive-ready fd: poll it for POLLIN, then drain
 * with channel_recv(..., nonblock=1) until it returns CHANNEL_AGAIN.
 * All functions are for the owning event-loop thread only.
 *
 * Both ends refuse a message over PROTO_MAX_MESSAGE (proto.h): the sender
 * before it sends (CHANNEL_TOO_BIG), the receiver's nng (NNG_OPT_RECVMAXSZ)
 * if one came anyway, by closing the connection. Sends are queued by nng,
 * CHANNEL_QUEUE messages per channel, and written out by nng's own threads
 * as the peer reads. A listening channel (the supervisor's) never blocks:
 * when its queue is full, the peer has stopped reading and channel_send
 * returns CHANNEL_FULL at once. A dialing channel (the worker's) waits up to
 * CHANNEL_SEND_TIMEOUT_MS for room, then fails.
 */
#ifndef TABVISOR_CHANNEL_H
#define TABVISOR_CHANNEL_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include "codec.h"

#define CHANNEL_AGAIN 1    /* channel_recv: nothing pending */
#define CHANNEL_TOO_BIG -2 /* channel_send: body over proto.h's limits; nothing sent */
#define CHANNEL_FULL -3    /* channel_send: the peer does not read; nothing sent */

#define CHANNEL_QUEUE 64             /* messages queued per direction */
#define CHANNEL_SEND_TIMEOUT_MS 5000 /* a dialing channel's longest wait for room */

struct channel;

int channel_listen(struct channel **out, const char *url);
int channel_dial(struct channel **out, const char *url);
/* Encode and send. body is borrowed. Returns 0; CHANNEL_TOO_BIG when body
 * cannot be encoded within proto.h's limits (bytes, string length, nesting,
 * elements) or is not an object; CHANNEL_FULL when the queue is full (see
 * above); -1 when the socket is closed. */
int channel_send(struct channel *c, uint32_t type, uint64_t id, const json_t *body);
/* Receive one envelope into *msg (caller calls proto_msg_clear). Returns 0,
 * CHANNEL_AGAIN, or -1 on a malformed message (reason in err) or closed socket. */
int channel_recv(struct channel *c, struct proto_msg *msg, int nonblock, char *err, size_t errlen);
int channel_fd(struct channel *c);
void channel_close(struct channel *c);
/* channel_close on a thread of its own, for an event loop that must never
 * block. Takes c. A close is safe only once the peer is gone and nng has let
 * go of its connection (channel_connected() false): see channel_retire.h. */
void channel_close_detached(struct channel *c);
/* Detached closes not yet returned: one that stays is a hung nng_close. */
int channel_closes_in_flight(void);

/* Whether nng holds a connection to the peer. It lets go when the peer's end
 * is reached (after every message the peer sent has been read) or on an
 * error. Why this matters, nng 1.5.2's close race: when a connection is
 * closed while nng's transport is between two reads of one incoming message
 * (its header read, its body not yet asked for; or a part read), the read
 * it then asks for is refused without a word, the protocol's receive stays
 * queued for ever, and the pipe's teardown waits on it in nng's one reaper
 * thread, so that close and every later one hang. nng_close of a socket
 * whose peer is still sending closes the connection at such a moment (the
 * wider, the busier the machine); nng letting go on its own, at the peer's
 * end, does not. Reproduced and pinned down in tests/test_channel_close.c. */
bool channel_connected(struct channel *c);
/* Drop every message received and not yet read, so nng keeps reading the
 * connection up to the peer's end (its receive queue never fills). */
void channel_discard_pending(struct channel *c);

#endif
