#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"

extern char **environ;

pid_t spawn_child(const struct spawn_opts *o)
{
    /* Everything the child needs is prepared before fork. */
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    int out = o->output ? open(o->output, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600) : -1;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        log_error("fork: %s", strerror(errno));
        if (devnull >= 0)
            close(devnull);
        if (out >= 0)
            close(out);
        return -1;
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        setpgid(0, 0);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);
        if (devnull >= 0)
            dup2(devnull, 0);
        dup2(out >= 0 ? out : 2, 1);
        if (out >= 0)
            dup2(out, 2);
        /* Lift the passed fds above their targets first, so that placing
         * one cannot overwrite another still to be placed; dup2 clears
         * close-on-exec on the copies. */
        int n = o->nfds, high[SPAWN_MAX_FDS];
        for (int i = 0; i < n; i++)
            high[i] = fcntl(o->fds[i], F_DUPFD, 3 + n);
        for (int i = 0; i < n; i++)
            dup2(high[i], 3 + i);
        close_range(3 + n, ~0U, 0);
        execve(o->argv[0], o->argv, o->envp ? o->envp : environ);
        _exit(127);
    }
    if (devnull >= 0)
        close(devnull);
    if (out >= 0)
        close(out);
    return pid;
}

void spawn_kill_group(pid_t pid, int sig)
{
    if (pid > 0) {
        kill(-pid, sig);
        kill(pid, sig);
    }
}

bool spawn_stop(const struct child_stop *c, long long grace_ms)
{
    if (c->pid <= 0)
        return true;
    if (c->term)
        kill(c->term, SIGTERM);
    long long end = mono_ms() + grace_ms;
    for (;;) {
        pid_t r = waitpid(c->pid, NULL, WNOHANG);
        if (r == c->pid || (r < 0 && errno == ECHILD)) {
            if (c->reap_stragglers && c->group > 0)
                kill(-c->group, SIGKILL); /* pid itself is reaped */
            return true;
        }
        if (mono_ms() >= end)
            break;
        usleep(10000);
    }
    if (c->group > 0)
        kill(-c->group, SIGKILL);
    kill(c->pid, SIGKILL);
    while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
        ;
    return false;
}
