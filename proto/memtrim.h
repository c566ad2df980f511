/*
 * memtrim.h - give the memory of large messages back to the system.
 *
 * Neither the supervisor nor a worker holds page data between calls, yet
 * glibc keeps what a large result (a 300 KB snapshot, a screenshot) used:
 * big blocks come from the heap once glibc's dynamic mmap threshold has
 * risen, freed heap chunks stay mapped, and every thread that allocates
 * (nng's) gets an arena of its own. memtrim fixes the threshold so large
 * blocks are mmapped (and unmapped on free), keeps one arena, and trims the
 * heap once things are quiet after a large message. Small messages leave
 * holes too: the heap's high-water mark after a burst of mid-sized objects
 * (a snapshot's JSON tree) stays resident, so any traffic also earns a trim,
 * at most every MEMTRIM_PERIOD_MS. docs/memory.md has the figures.
 * Not thread-safe: call from the main thread only.
 */
#ifndef TV_MEMTRIM_H
#define TV_MEMTRIM_H

#include <stddef.h>

/* Buffers larger than this are not kept between messages. */
#define MEMTRIM_KEEP_BYTES (64 * 1024)

/* Traffic of any size makes a trim due this long after the previous one:
 * malloc_trim costs 0.1-0.2 ms on a worker's heap, so not after every call. */
#define MEMTRIM_PERIOD_MS 10000

/* Sets malloc's mmap threshold and arena count; call once, first thing in
 * main, before any thread starts. */
void memtrim_init(void);

/* A buffer of n bytes was just released (or a message of n bytes passed):
 * if n is large, a trim is due at once; otherwise within MEMTRIM_PERIOD_MS. */
void memtrim_released(size_t n);

/* Milliseconds until a trim is due: -1 when none is (nothing passed since
 * the last one), 0 when it is due now. A poll(2) timeout for an event loop
 * that otherwise sleeps until its next message. */
int memtrim_due_ms(void);

/* When idle (from a timer, or before sleeping): malloc_trim(0) if a trim is
 * due. Returns 1 if it trimmed. */
int memtrim_idle(void);

#endif
