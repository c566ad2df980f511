/*
 * loop.h - the supervisor's single event loop (poll(2) based, in the manner
 * of redis ae.c): file events, one-shot timers, and deferred frees.
 *
 * All supervisor state is owned by the thread running loop_run(); nothing
 * here is thread-safe. Callbacks may add and remove fds and timers freely,
 * including their own. Objects that a callback wants to free while other
 * callbacks of the same iteration might still hold them go through
 * loop_defer(), which runs after the iteration.
 */
#ifndef TABVISOR_LOOP_H
#define TABVISOR_LOOP_H

#include <stdint.h>

struct loop;
typedef void (*loop_fd_fn)(struct loop *l, int fd, short revents, void *ud);
typedef void (*loop_timer_fn)(struct loop *l, void *ud);
typedef void (*loop_defer_fn)(void *ud);

struct loop *loop_new(void);
void loop_free(struct loop *l);

/* Watch fd for events (POLLIN/POLLOUT); replaces an existing watch of fd. */
int loop_add_fd(struct loop *l, int fd, short events, loop_fd_fn fn, void *ud);
void loop_set_events(struct loop *l, int fd, short events);
void loop_del_fd(struct loop *l, int fd);

/* One-shot timer after delay_ms; returns an id > 0 for loop_del_timer. */
uint64_t loop_add_timer(struct loop *l, long long delay_ms, loop_timer_fn fn, void *ud);
void loop_del_timer(struct loop *l, uint64_t id); /* no-op for 0 or a fired id */

void loop_defer(struct loop *l, loop_defer_fn fn, void *ud);

/* Run until loop_stop(). */
void loop_run(struct loop *l);
void loop_stop(struct loop *l);

#endif
