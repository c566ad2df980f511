/* clock.h - monotonic milliseconds, the time base of every deadline. Deadlines
 * cross process boundaries (MSG_CALL.deadline), which works because all
 * processes share one machine's CLOCK_MONOTONIC. */
#ifndef TABVISOR_CLOCK_H
#define TABVISOR_CLOCK_H

#include <time.h>

static inline long long mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wall clock in milliseconds since the epoch, for expiresAt. */
static inline long long wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif
