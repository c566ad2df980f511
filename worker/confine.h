/*
 * confine.h - the worker confines itself with the kernel's own tools, so a
 * hostile page that gets code running in it reaches little (docs/confinement.md).
 *
 * Two steps, both before the first page:
 *   confine_start()  first thing in main, while the process has one thread:
 *                    no_new_privs, Landlock, all capabilities dropped. Both
 *                    Landlock (ABI < 8) and capabilities belong to the
 *                    calling thread and pass only to threads it creates
 *                    later, so this must come before nng starts its threads.
 *                    File system: read-only the system libraries, this
 *                    binary, /proc/self and a few device files; read-write
 *                    the output dir (created if missing); nothing else, and
 *                    no execution. No TCP bind; no abstract unix sockets or
 *                    signals outside the worker (ABI >= 4 / 6).
 *   confine_finish() when start-up is done, right before READY: resource
 *                    limits, and a seccomp filter on every thread: no exec,
 *                    no ptrace, no process_vm_*, no new sockets, no
 *                    io_uring, no namespaces or mounts.
 * Mode auto applies what the kernel supports; require fails the worker's
 * start (its READY) when any part cannot be applied; off applies nothing.
 */
#ifndef TABVISOR_CONFINE_H
#define TABVISOR_CONFINE_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

enum confine_mode { CONFINE_AUTO, CONFINE_REQUIRE, CONFINE_OFF };

struct confine {
    /* Settings (the worker's command line; see CONFINE_OPTIONS). */
    enum confine_mode mode;
    const char *output_dir;  /* writable; NULL: no file may be written */
    long long max_memory_mb; /* more private memory than at READY; 0: no limit */
    long long max_fds;       /* RLIMIT_NOFILE; 0: no limit */
    long long cpu_seconds;   /* RLIMIT_CPU; 0: no limit */
    bool unix_sockets;       /* seccomp lets socket(AF_UNIX) through (extension mode:
                                the worker redials the relay after it restarts) */
    /* What was applied. */
    int landlock_abi; /* ABI of the ruleset in force; 0: none */
    bool seccomp;
    long long start_us, finish_us; /* time each step took */
    char error[256];               /* first failure (require mode fails on it) */
    bool unsupported;              /* the kernel lacks Landlock or seccomp filters */
};

/* Worker options: add CONFINE_OPTIONS to the getopt_long table and pass
 * every option to confine_option(), which returns 1 when it took it, 0 when
 * the option is not one of its, -1 on a bad value. */
#define CONFINE_OPT_BASE 1000
#define CONFINE_OPTIONS                                                                            \
    {"confine", required_argument, 0, CONFINE_OPT_BASE},                                           \
        {"output-dir", required_argument, 0, CONFINE_OPT_BASE + 1},                                \
        {"max-memory-mb", required_argument, 0, CONFINE_OPT_BASE + 2},                             \
        {"max-fds", required_argument, 0, CONFINE_OPT_BASE + 3},                                   \
    {                                                                                              \
        "cpu-seconds", required_argument, 0, CONFINE_OPT_BASE + 4                                  \
    }
int confine_option(struct confine *c, int opt, const char *arg);

/* Step 1 (see above). Never fails the process: a failure is recorded in
 * c->error for confine_finish() to report. */
void confine_start(struct confine *c);
/* Step 2 (see above). Returns 0, or -1 in require mode when confinement is
 * incomplete, with the reason in c->error. Logs what was applied at debug. */
int confine_finish(struct confine *c);

/* Landlock ABI version of the running kernel; 0 when it has none. */
int confine_landlock_abi(void);

#endif
