/*
 * loop.c - poll(2) event loop. Sizes are small (a few fds per session), so
 * fds live in a flat array and timers in an unsorted array scanned per
 * iteration: O(n) with n in the hundreds beats a heap's bookkeeping here.
 */
#include "loop.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"

struct fd_watch {
    int fd;
    short events;
    loop_fd_fn fn;
    void *ud;
    int removed; /* set while iterating; compacted afterwards */
};

struct timer {
    uint64_t id;
    long long when;
    loop_timer_fn fn;
    void *ud;
};

struct deferred {
    loop_defer_fn fn;
    void *ud;
};

struct loop {
    struct fd_watch *fds;
    size_t nfds, capfds;
    struct timer *timers;
    size_t ntimers, captimers;
    uint64_t next_timer_id;
    struct deferred *defers;
    size_t ndefers, capdefers;
    int stopped;
};

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return p;
    size_t n = *cap ? *cap * 2 : 16;
    while (n < need)
        n *= 2;
    void *q = realloc(p, n * elem);
    if (!q) {
        log_error("out of memory");
        abort();
    }
    *cap = n;
    return q;
}

struct loop *loop_new(void)
{
    struct loop *l = calloc(1, sizeof *l);
    if (l)
        l->next_timer_id = 1;
    return l;
}

void loop_free(struct loop *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->ndefers; i++)
        l->defers[i].fn(l->defers[i].ud);
    free(l->fds);
    free(l->timers);
    free(l->defers);
    free(l);
}

static struct fd_watch *find_fd(struct loop *l, int fd)
{
    for (size_t i = 0; i < l->nfds; i++)
        if (l->fds[i].fd == fd && !l->fds[i].removed)
            return &l->fds[i];
    return NULL;
}

int loop_add_fd(struct loop *l, int fd, short events, loop_fd_fn fn, void *ud)
{
    struct fd_watch *w = find_fd(l, fd);
    if (!w) {
        l->fds = grow(l->fds, &l->capfds, l->nfds + 1, sizeof *l->fds);
        w = &l->fds[l->nfds++];
    }
    *w = (struct fd_watch){.fd = fd, .events = events, .fn = fn, .ud = ud};
    return 0;
}

void loop_set_events(struct loop *l, int fd, short events)
{
    struct fd_watch *w = find_fd(l, fd);
    if (w)
        w->events = events;
}

void loop_del_fd(struct loop *l, int fd)
{
    struct fd_watch *w = find_fd(l, fd);
    if (w)
        w->removed = 1;
}

uint64_t loop_add_timer(struct loop *l, long long delay_ms, loop_timer_fn fn, void *ud)
{
    l->timers = grow(l->timers, &l->captimers, l->ntimers + 1, sizeof *l->timers);
    uint64_t id = l->next_timer_id++;
    l->timers[l->ntimers++] = (struct timer){id, mono_ms() + delay_ms, fn, ud};
    return id;
}

void loop_del_timer(struct loop *l, uint64_t id)
{
    for (size_t i = 0; id && i < l->ntimers; i++) {
        if (l->timers[i].id == id) {
            l->timers[i] = l->timers[--l->ntimers];
            return;
        }
    }
}

void loop_defer(struct loop *l, loop_defer_fn fn, void *ud)
{
    l->defers = grow(l->defers, &l->capdefers, l->ndefers + 1, sizeof *l->defers);
    l->defers[l->ndefers++] = (struct deferred){fn, ud};
}

void loop_stop(struct loop *l)
{
    l->stopped = 1;
}

static void compact_fds(struct loop *l)
{
    size_t j = 0;
    for (size_t i = 0; i < l->nfds; i++)
        if (!l->fds[i].removed)
            l->fds[j++] = l->fds[i];
    l->nfds = j;
}

/* Fire every timer that is due. A timer callback may add or delete timers,
 * so each round takes one due timer out of the array before calling it. */
static void run_timers(struct loop *l)
{
    long long now = mono_ms();
    for (;;) {
        size_t i;
        for (i = 0; i < l->ntimers; i++)
            if (l->timers[i].when <= now)
                break;
        if (i == l->ntimers)
            return;
        struct timer t = l->timers[i];
        l->timers[i] = l->timers[--l->ntimers];
        t.fn(l, t.ud);
    }
}

static void run_defers(struct loop *l)
{
    /* A deferred function may defer more; run until none is left. */
    while (l->ndefers) {
        struct deferred d = l->defers[--l->ndefers];
        d.fn(d.ud);
    }
}

void loop_run(struct loop *l)
{
    struct pollfd *pfds = NULL;
    size_t cap = 0;
    l->stopped = 0; /* a loop stopped before may run again (tests step it this way) */
    while (!l->stopped) {
        compact_fds(l);
        long long timeout = -1, now = mono_ms();
        for (size_t i = 0; i < l->ntimers; i++) {
            long long d = l->timers[i].when - now;
            if (d < 0)
                d = 0;
            if (timeout < 0 || d < timeout)
                timeout = d;
        }
        if (timeout > 60000 || timeout < 0)
            timeout = 60000;
        pfds = grow(pfds, &cap, l->nfds + 1, sizeof *pfds);
        size_t n = l->nfds;
        for (size_t i = 0; i < n; i++)
            pfds[i] = (struct pollfd){.fd = l->fds[i].fd, .events = l->fds[i].events};
        int r = poll(pfds, n, (int)timeout);
        if (r < 0 && errno != EINTR) {
            log_error("poll: %s", strerror(errno));
            break;
        }
        for (size_t i = 0; r > 0 && i < n && !l->stopped; i++) {
            if (!pfds[i].revents)
                continue;
            /* The watch may have been removed or replaced by an earlier callback. */
            struct fd_watch *w = find_fd(l, pfds[i].fd);
            if (w)
                w->fn(l, w->fd, pfds[i].revents, w->ud);
        }
        if (!l->stopped)
            run_timers(l);
        run_defers(l);
    }
    free(pfds);
}
