/*
 * chromium_launch.h - a headless Chromium for tests and benchmarks, the way
 * the supervisor's shared mode starts one but on a DevTools port (0, on
 * 127.0.0.1, read from DevToolsActivePort), with a hermetic HOME/XDG/TMPDIR
 * under a temporary dir. TV_CHROMIUM overrides the browser path.
 */
#ifndef TABVISOR_CHROMIUM_LAUNCH_H
#define TABVISOR_CHROMIUM_LAUNCH_H

#include <limits.h>
#include <sys/types.h>

struct chromium_proc {
    pid_t pid; /* leads its process group; -1 when none */
    char tmp[PATH_MAX];
    char profile[PATH_MAX + 16];
    char log[PATH_MAX + 16];
    char ws_url[512]; /* the browser's DevTools WebSocket */
};

/* Start it and wait up to 20 s for its port. 0, or -1 with the reason (and
 * the log's tail) on stderr. */
int chromium_launch(struct chromium_proc *p);
/* SIGKILL its whole group and wait until the group is empty. */
void chromium_kill(struct chromium_proc *p);
/* chromium_kill, then remove its temporary dir. */
void chromium_stop(struct chromium_proc *p);

#endif
