/*
 * channel.h - one nng pair socket carrying protocol envelopes.
 *
 * The supervisor listens (one ipc:// path per worker), the worker dials.
 * channel_fd() is nng's receive-ready fd: poll it for POLLIN, then drain
 * with channel_recv(..., nonblock=1) until it returns CHANNEL_AGAIN.
 * All functions are for the owning event-loop thread only.
 */
#ifndef TABVISOR_CHANNEL_H
#define TABVISOR_CHANNEL_H

#include <stdint.h>
#include <jansson.h>
#include "codec.h"

#define CHANNEL_AGAIN 1 /* channel_recv: nothing pending */

struct channel;

int channel_listen(struct channel **out, const char *url);
int channel_dial(struct channel **out, const char *url);
/* Encode and send. body is borrowed. Returns 0 or -1 (peer gone, buffer full). */
int channel_send(struct channel *c, uint32_t type, uint64_t id, const json_t *body);
/* Receive one envelope into *msg (caller calls proto_msg_clear). Returns 0,
 * CHANNEL_AGAIN, or -1 on a malformed message (reason in err) or closed socket. */
int channel_recv(struct channel *c, struct proto_msg *msg, int nonblock, char *err, size_t errlen);
int channel_fd(struct channel *c);
void channel_close(struct channel *c);

#endif
