/* config.h - command-line configuration of the supervisor. */
#ifndef TABVISOR_CONFIG_H
#define TABVISOR_CONFIG_H

#include <limits.h>
#include <stddef.h>
#include "log.h"

struct config {
    size_t max_sessions;
    long long idle_ms;        /* --session-idle-timeout (seconds on the command line) */
    const char *browser_mode; /* shared (only mode so far) */
    char chromium[PATH_MAX];  /* browser binary */
    char worker_bin[PATH_MAX];
    char runtime_base[PATH_MAX]; /* private 0700 directory for sockets and profiles */
    char output_dir[PATH_MAX];
    enum log_level log_level;
    int viewport_width, viewport_height;
    long long grace_ms; /* how long past a deadline a worker may take before it is killed */
    const char *http;   /* --http HOST:PORT (not yet served) */
};

/* Fill c from argv. Returns 0 to run, 1 when --help/--version was printed
 * (exit 0), -1 on a bad option (message printed to stderr, exit 2). */
int config_parse(struct config *c, int argc, char **argv);

#endif
