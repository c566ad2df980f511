/* spawn.h - start child processes with fork+exec so that they die with us. */
#ifndef TABVISOR_SPAWN_H
#define TABVISOR_SPAWN_H

#include <sys/types.h>

#define SPAWN_MAX_FDS 4

struct spawn_opts {
    char *const *argv;      /* argv[0] is the path to execute */
    char *const *envp;      /* NULL: inherit */
    int fds[SPAWN_MAX_FDS]; /* passed through: fds[i] becomes the child's fd 3 + i */
    int nfds;               /* how many of fds are used */
    const char *output;     /* file for stdout+stderr, or NULL: stdout goes to our stderr */
};

/*
 * fork+exec. The child: gets SIGKILL when we die (PR_SET_PDEATHSIG, and
 * exits at once if we already died), leads its own process group (so the
 * whole group can be killed, and terminal signals do not reach it), has
 * /dev/null as stdin and never our stdout (which carries MCP), and keeps no
 * inherited fd but the ones passed in fds (as 3, 4, ...). Only async-signal-safe calls run between
 * fork and exec, because the parent has nng threads. Returns the pid or -1.
 */
pid_t spawn_child(const struct spawn_opts *o);

/* Send sig to the process group a spawned child leads, and to the child
 * itself (in case it has not called setpgid yet). No-op for pid <= 0. */
void spawn_kill_group(pid_t pid, int sig);

#endif
