/*
 * memtrim.c - give the memory of large messages back to the system.
 */
#include "memtrim.h"

#include <malloc.h>

#include "clock.h"

static int pending;         /* a large buffer was released: trim at once */
static int active;          /* something passed since the last trim */
static long long last_trim; /* mono_ms() of the last trim */

void memtrim_init(void)
{
    /* A fixed threshold also turns off glibc's dynamic one, which after the
     * first freed large block would serve every later block up to 32 MiB
     * from the heap, where it stays. 64 KiB: results and their JSON text
     * are mmapped; the many small objects of a message are not. */
    mallopt(M_MMAP_THRESHOLD, MEMTRIM_KEEP_BYTES);
    /* nng's threads allocate little and mostly wait: one arena for all
     * (about 0.15 MiB less per worker). */
    mallopt(M_ARENA_MAX, 1);
}

void memtrim_released(size_t n)
{
    if (n > MEMTRIM_KEEP_BYTES)
        pending = 1;
    active = 1;
}

int memtrim_due_ms(void)
{
    if (pending)
        return 0;
    if (!active)
        return -1;
    long long left = last_trim + MEMTRIM_PERIOD_MS - mono_ms();
    return left <= 0 ? 0 : (int)left;
}

int memtrim_idle(void)
{
    if (memtrim_due_ms() != 0)
        return 0;
    pending = active = 0;
    last_trim = mono_ms();
    /* The heap's free chunks below its top are returned too (madvise), not
     * only its end. 0.1-0.2 ms with ten thousand free chunks. */
    malloc_trim(0);
    return 1;
}
