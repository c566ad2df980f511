/*
 * channel_retire.h - closing a worker's channel without nng 1.5.2's close
 * race (proto/channel.h, channel_connected).
 *
 * A worker's channel is retired when its worker is gone or going (exited,
 * killed, never started). It is closed once nng has let go of the
 * connection by itself, at the worker's end: until then its incoming
 * messages are read and dropped, so nng reads on up to that end. A channel
 * nng still holds after CHANNEL_RETIRE_MAX_MS (a worker that does not die)
 * is closed anyway, with a warning. Closes run on a thread of their own
 * (channel_close_detached), so the loop never waits on one.
 */
#ifndef TABVISOR_CHANNEL_RETIRE_H
#define TABVISOR_CHANNEL_RETIRE_H

#include "channel.h"
#include "loop.h"

#define CHANNEL_RETIRE_MAX_MS 10000
#define CHANNEL_RETIRE_POLL_MS 10

/* Retire ch (taken): closed at once when nng holds no connection, else
 * watched on l until it lets go. */
void channel_retire(struct loop *l, struct channel *ch);
/* How many retired channels wait for nng to let go (for tests and metrics). */
int channel_retire_pending(void);
/* The process is exiting, its workers dead: wait up to wait_ms for nng to
 * let go of every waiting channel (draining them), then close them all. */
void channel_retire_flush(struct loop *l, long long wait_ms);

#endif
