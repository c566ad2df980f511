/*
 * bridge_command.h - what a worker may send through a browser bridge (the
 * CDP bridge to Chromium, the BiDi bridge to Firefox), and the one way
 * either bridge reads a worker's command into a tree.
 *
 * A worker may be taken over by its page (issue 36, finding 4): jansson
 * spends ~140 bytes on an empty array, so 24 MiB of "[],[],..." made the
 * supervisor build a 1.1 GB tree and keep most of it, and every session
 * stalled behind it. The bounds are what a real command needs: the largest
 * is a file upload (32 MiB of files as base64 in one call, worker/tools/
 * upload.c), and no command of a worker holds more than a few thousand
 * values. The values are counted in the text before any tree is built.
 */
#ifndef TABVISOR_BRIDGE_COMMAND_H
#define TABVISOR_BRIDGE_COMMAND_H

#include <stddef.h>

#include <jansson.h>

/* One command's bytes: a longer one closes the worker's connection. */
#define BRIDGE_MAX_COMMAND (48u * 1024 * 1024)
/* JSON values in one command (a tree of at most ~18 MB while it lives). */
#define BRIDGE_MAX_COMMAND_VALUES (1u << 17)

/* msg[0..len) as a tree (a new reference; jansson flags as json_loadb), or
 * NULL with *why a static sentence: too many values, or not JSON. A large
 * command's memory is handed back to the system once the loop is idle
 * (memtrim_released). */
json_t *bridge_command_parse(const char *msg, size_t len, size_t flags, const char **why);

#endif
