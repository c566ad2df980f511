/*
 * memtrim.c - give the memory of large messages back to the system.
 */
#include "memtrim.h"

#include <malloc.h>

static int pending;

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
}

int memtrim_idle(void)
{
    if (!pending)
        return 0;
    pending = 0;
    /* The heap's free chunks below its top are returned too (madvise), not
     * only its end. A few microseconds for a heap of a few MiB. */
    malloc_trim(0);
    return 1;
}
