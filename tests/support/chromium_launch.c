/*
 * chromium_launch.c - a headless Chromium with its DevTools port on
 * 127.0.0.1 for tests and benchmarks (chromium_launch.h).
 */
#include "chromium_launch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "rundir.h"

#define DEFAULT_CHROMIUM "/usr/lib/chromium/chromium"

extern char **environ;

static void msleep(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* Print the end of Chromium's log: the reason it did not come up. */
static void dump_log(const struct chromium_proc *P)
{
    FILE *f = fopen(P->log, "r");
    if (!f)
        return;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, sz > 4000 ? sz - 4000 : 0, SEEK_SET);
    char buf[4001];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    fprintf(stderr, "---- chromium log (tail) ----\n%s\n-----------------------------\n", buf);
}

void chromium_kill(struct chromium_proc *P)
{
    if (P->pid > 0) {
        /* The whole process group: zygote, renderers and GPU helpers too. */
        kill(-P->pid, SIGKILL);
        kill(P->pid, SIGKILL);
        while (waitpid(P->pid, NULL, 0) < 0 && errno == EINTR)
            ;
        /* Children of the browser are not ours to reap; wait until the
         * group is really empty so nothing outlives the test. */
        for (int i = 0; i < 200 && kill(-P->pid, 0) == 0; i++) {
            kill(-P->pid, SIGKILL);
            msleep(10);
        }
        P->pid = -1;
    }
}

/* Environment for the browser: ours minus HOME/XDG_*, plus hermetic ones. */
static char **browser_env(const struct chromium_proc *P)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 8, sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "HOME=", 5) != 0 && strncmp(environ[i], "XDG_", 4) != 0 &&
            strncmp(environ[i], "TMPDIR=", 7) != 0)
            env[k++] = environ[i];
    static const char *vars[][2] = {{"HOME", "home"},
                                    {"XDG_CONFIG_HOME", "config"},
                                    {"XDG_CACHE_HOME", "cache"},
                                    {"XDG_DATA_HOME", "data"},
                                    {"XDG_RUNTIME_DIR", "runtime"},
                                    /* its org.chromium.Chromium.* scratch dirs */
                                    {"TMPDIR", "tmp"}};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        char dir[PATH_MAX + 32];
        snprintf(dir, sizeof dir, "%s/%s", P->tmp, vars[i][1]);
        if (mkdir(dir, 0700) < 0 && errno != EEXIST)
            return NULL;
        if (asprintf(&env[k++], "%s=%s", vars[i][0], dir) < 0)
            return NULL;
    }
    env[k] = NULL;
    return env;
}

static void free_env(char **env)
{
    if (!env)
        return;
    for (size_t i = 0; env[i]; i++)
        if (strncmp(env[i], "HOME=", 5) == 0 || strncmp(env[i], "XDG_", 4) == 0 ||
            strncmp(env[i], "TMPDIR=", 7) == 0)
            free(env[i]);
    free(env);
}

static bool read_active_port(struct chromium_proc *P)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/DevToolsActivePort", P->profile);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    char line1[32] = "", line2[256] = "";
    bool ok = fgets(line1, sizeof line1, f) && fgets(line2, sizeof line2, f);
    fclose(f);
    if (!ok)
        return false; /* not completely written yet */
    int port = atoi(line1);
    line2[strcspn(line2, "\r\n")] = '\0';
    if (port <= 0 || port > 65535 || strncmp(line2, "/devtools/browser/", 18) != 0 ||
        strlen(line2) < 18 + 36)
        return false;
    snprintf(P->ws_url, sizeof P->ws_url, "ws://127.0.0.1:%d%s", port, line2);
    return true;
}

int chromium_launch(struct chromium_proc *P)
{
    P->pid = -1;
    const char *chromium = getenv("TV_CHROMIUM");
    if (!chromium || !*chromium)
        chromium = DEFAULT_CHROMIUM;
    if (access(chromium, X_OK) != 0) {
        fprintf(stderr,
                "Chromium not found at %s (%s). Install it (apt-get install chromium) or set "
                "TV_CHROMIUM to its path; this test needs a real browser.\n",
                chromium, strerror(errno));
        return -1;
    }
    snprintf(P->tmp, sizeof P->tmp, "%s/tv-cdp-test-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(P->tmp)) {
        fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
        return -1;
    }
    snprintf(P->profile, sizeof P->profile, "%s/profile", P->tmp);
    snprintf(P->log, sizeof P->log, "%s/chromium.log", P->tmp);
    if (mkdir(P->profile, 0700) < 0) {
        fprintf(stderr, "mkdir %s: %s\n", P->profile, strerror(errno));
        return -1;
    }
    char udd[PATH_MAX + 32];
    snprintf(udd, sizeof udd, "--user-data-dir=%s", P->profile);
    char *argv[] = {(char *)chromium,
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--no-first-run",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--remote-debugging-port=0",
                    "--remote-debugging-address=127.0.0.1",
                    udd,
                    "about:blank",
                    NULL};
    /* Everything the child needs is prepared before fork: after it, only
     * async-signal-safe calls until exec. */
    char **env = browser_env(P);
    int logfd = open(P->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (!env || logfd < 0 || nullfd < 0) {
        fprintf(stderr, "preparing the browser launch: %s\n", strerror(errno));
        return -1;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127); /* the parent died before prctl took effect */
        dup2(nullfd, 0);
        dup2(logfd, 1);
        dup2(logfd, 2);
        execve(chromium, argv, env);
        _exit(127);
    }
    free_env(env);
    close(logfd);
    close(nullfd);
    if (pid < 0) {
        fprintf(stderr, "fork: %s\n", strerror(errno));
        return -1;
    }
    setpgid(pid, pid); /* also here, so kill(-pid) works whichever runs first */
    P->pid = pid;

    long long t0 = mono_ms();
    while (!read_active_port(P)) {
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            P->pid = -1;
            fprintf(stderr, "Chromium (%s) exited during startup (status 0x%x)\n", chromium,
                    status);
            dump_log(P);
            return -1;
        }
        if (mono_ms() - t0 > 20000) {
            fprintf(stderr, "Chromium did not write %s/DevToolsActivePort within 20 s\n",
                    P->profile);
            dump_log(P);
            chromium_kill(P);
            return -1;
        }
        msleep(20);
    }
    fprintf(stderr, "chromium up in %lld ms: %s\n", mono_ms() - t0, P->ws_url);
    return 0;
}

void chromium_stop(struct chromium_proc *P)
{
    chromium_kill(P);
    if (P->tmp[0])
        rundir_remove(P->tmp);
    P->tmp[0] = '\0';
}
