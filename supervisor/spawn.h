/* spawn.h - start child processes with fork+exec so that they die with us. */
#ifndef TABVISOR_SPAWN_H
#define TABVISOR_SPAWN_H

#include <stdbool.h>
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

/* How to stop one kind of child (spawn_stop): every child the supervisor
 * starts outside the loop's own reaping (the shared browser, the relay,
 * Firefox's holder) is stopped by the same steps. */
struct child_stop {
    pid_t pid;              /* the process to wait for and reap */
    pid_t term;             /* sent SIGTERM first: a pid, or -pgid for a group; 0: none (the
                             * caller asked it to end another way) */
    pid_t group;            /* the process group SIGKILLed when the grace runs out */
    bool reap_stragglers;   /* also SIGKILL that group after pid ended in time */
};

/* Stop a child with a grace period, outside the loop (shutdown, a restart):
 * SIGTERM (c->term), then wait up to grace_ms for c->pid to exit (polled
 * every 10 ms), then SIGKILL c->group and c->pid and reap it. Returns true
 * when it ended within the grace. No-op (true) for pid <= 0. */
bool spawn_stop(const struct child_stop *c, long long grace_ms);

#endif
