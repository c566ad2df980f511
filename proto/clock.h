/* clock.h - monotonic milliseconds, the time base of every deadline. Deadlines
 * cross process boundaries (MSG_CALL.deadline), which works because all
 * processes share one machine's CLOCK_MONOTONIC. */
#ifndef TABVISOR_CLOCK_H
#define TABVISOR_CLOCK_H

#include <limits.h>
#include <time.h>

static inline long long mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A poll(2) timeout that ends at deadline_ms as seen at now: -1 (no limit)
 * for deadline 0, 0 once it has passed, capped at INT_MAX. */
static inline int poll_timeout_ms(long long deadline_ms, long long now)
{
    if (deadline_ms == 0)
        return -1;
    long long left = deadline_ms - now;
    if (left <= 0)
        return 0;
    return left > INT_MAX ? INT_MAX : (int)left;
}

/* Wall clock in milliseconds since the epoch, for expiresAt. */
static inline long long wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif
