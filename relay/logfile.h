/*
 * logfile.h - the relay's own log file: DIR/relay.log in its runtime dir,
 * kept across restarts and bounded in size (one older file, relay.log.1).
 *
 * The relay writes its log (proto/log.c) and libwebsockets' to stderr;
 * logfile_open points stderr at the file, logfile_check rotates it from the
 * relay's housekeeping tick. A relay started by hand without --log-file
 * keeps logging to its terminal.
 */
#ifndef TV_RELAY_LOGFILE_H
#define TV_RELAY_LOGFILE_H

#include <stddef.h>

/* The size past which relay.log is renamed relay.log.1 (replacing the older
 * one): at most about twice this on disk. */
#define LOGFILE_MAX_BYTES (1024 * 1024)

/* Open path for appending (created 0600, never through a symlink), rotating
 * it first when it is already past max_bytes, and make it stderr. 0, or -1
 * with err set (stderr unchanged). */
int logfile_open(const char *path, size_t max_bytes, char *err, size_t errlen);

/* From a timer: when the file stderr writes to is past its limit, rotate
 * it and reopen. A failure is logged once and logging carries on where it
 * was. No-op when logfile_open was not called. */
void logfile_check(void);

#endif
