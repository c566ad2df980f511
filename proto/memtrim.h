/*
 * memtrim.h - give the memory of large messages back to the system.
 *
 * Neither the supervisor nor a worker holds page data between calls, yet
 * glibc keeps what a large result (a 300 KB snapshot, a screenshot) used:
 * big blocks come from the heap once glibc's dynamic mmap threshold has
 * risen, freed heap chunks stay mapped, and every thread that allocates
 * (nng's) gets an arena of its own. memtrim fixes the threshold so large
 * blocks are mmapped (and unmapped on free), keeps one arena, and trims the
 * heap once things are quiet after a large message. docs/memory.md has the
 * figures. Not thread-safe: call from the main thread only.
 */
#ifndef TV_MEMTRIM_H
#define TV_MEMTRIM_H

#include <stddef.h>

/* Buffers larger than this are not kept between messages. */
#define MEMTRIM_KEEP_BYTES (64 * 1024)

/* Sets malloc's mmap threshold and arena count; call once, first thing in
 * main, before any thread starts. */
void memtrim_init(void);

/* A buffer of n bytes was just released (or a message of n bytes passed):
 * if n is large, ask for a trim at the next memtrim_idle(). */
void memtrim_released(size_t n);

/* From a periodic timer: malloc_trim(0) if a large buffer was released
 * since the last call. Returns 1 if it trimmed. */
int memtrim_idle(void);

#endif
