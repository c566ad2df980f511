/*
 * channel_retire.c - retired channels, closed once nng lets go of them
 * (channel_retire.h).
 */
#include "channel_retire.h"

#include <stdlib.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"

struct retiring {
    struct channel *ch;
    long long deadline; /* mono_ms: close even if nng still holds it */
    struct retiring *next;
};

/* The supervisor has one loop; its retired channels and their timer. */
static struct retiring *waiting;
static uint64_t watch_timer;

static void on_watch(struct loop *l, void *ud);

static void arm(struct loop *l)
{
    if (waiting && !watch_timer)
        watch_timer = loop_add_timer(l, CHANNEL_RETIRE_POLL_MS, on_watch, NULL);
}

/* Drain each waiting channel; close those nng let go of, or that ran out of
 * time. */
static void on_watch(struct loop *l, void *ud)
{
    (void)ud;
    watch_timer = 0;
    long long now = mono_ms();
    for (struct retiring **p = &waiting; *p;) {
        struct retiring *r = *p;
        channel_discard_pending(r->ch);
        bool held = channel_connected(r->ch);
        if (held && now < r->deadline) {
            p = &r->next;
            continue;
        }
        if (held)
            log_warn("a retired worker channel still connected after %d ms: closing it anyway",
                     CHANNEL_RETIRE_MAX_MS);
        channel_close_detached(r->ch);
        *p = r->next;
        free(r);
    }
    arm(l);
}

void channel_retire(struct loop *l, struct channel *ch)
{
    if (!ch)
        return;
    channel_discard_pending(ch);
    struct retiring *r = channel_connected(ch) ? malloc(sizeof *r) : NULL;
    if (!r) {
        channel_close_detached(ch);
        return;
    }
    r->ch = ch;
    r->deadline = mono_ms() + CHANNEL_RETIRE_MAX_MS;
    r->next = waiting;
    waiting = r;
    arm(l);
}

int channel_retire_pending(void)
{
    int n = 0;
    for (struct retiring *r = waiting; r; r = r->next)
        n++;
    return n;
}

void channel_retire_flush(struct loop *l, long long wait_ms)
{
    loop_del_timer(l, watch_timer);
    watch_timer = 0;
    long long end = mono_ms() + wait_ms;
    for (bool held = true; held && mono_ms() < end;) {
        held = false;
        for (struct retiring *r = waiting; r; r = r->next) {
            channel_discard_pending(r->ch);
            held |= channel_connected(r->ch);
        }
        if (held)
            usleep(2000);
    }
    while (waiting) {
        struct retiring *r = waiting;
        waiting = r->next;
        channel_close_detached(r->ch);
        free(r);
    }
}
