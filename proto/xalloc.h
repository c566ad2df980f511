/*
 * xalloc.h - allocation that aborts when memory is out, for code whose
 * every caller would otherwise do the same (the snapshot text passes: a
 * worker out of memory is ended and replaced; see worker/main.c).
 */
#ifndef TABVISOR_XALLOC_H
#define TABVISOR_XALLOC_H

#include <stdlib.h>

/* calloc, aborting when memory is out; n 0 gives one element. */
static inline void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        abort();
    return p;
}

#endif
