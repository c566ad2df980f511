#include "rundir.h"

#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "privdir.h"
#include "spawn.h"

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

void rundir_remove(const char *dir)
{
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* A browser left by a dead run (its pid in pidfile): kill it only if its
 * command line still names that run's profile, so a recycled pid is never
 * hit. */
static void kill_stale_browser(const char *rundir, const char *pidfile)
{
    char path[PATH_MAX + 300], cmd[8192];
    snprintf(path, sizeof path, "%s/%s", rundir, pidfile);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    int pid = 0;
    if (fscanf(f, "%d", &pid) != 1)
        pid = 0;
    fclose(f);
    if (pid <= 1)
        return;
    snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, cmd, sizeof cmd - 1);
    close(fd);
    if (n <= 0)
        return;
    for (ssize_t i = 0; i < n; i++)
        if (!cmd[i])
            cmd[i] = ' ';
    cmd[n] = 0;
    /* "<rundir>/", so that run-12's pid file cannot match run-123's browser. */
    char needle[PATH_MAX + 1];
    snprintf(needle, sizeof needle, "%s/", rundir);
    if (strstr(cmd, needle)) {
        log_warn("killing browser %d left by a previous run", pid);
        spawn_kill_group(pid, SIGKILL);
    }
}

/* Every browser a dead run left: the shared one (browser.pid) and those of
 * dedicated mode (browser-wN.pid). */
static void kill_stale_browsers(const char *rundir)
{
    DIR *d = opendir(rundir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (strncmp(e->d_name, "browser", 7) == 0 && n > 4 &&
            strcmp(e->d_name + n - 4, ".pid") == 0)
            kill_stale_browser(rundir, e->d_name);
    }
    closedir(d);
}

static void sweep(const char *base)
{
    DIR *d = opendir(base);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        int pid;
        char extra;
        if (sscanf(e->d_name, "run-%d%c", &pid, &extra) != 1)
            continue;
        if (pid > 0 && (kill(pid, 0) == 0 || errno == EPERM)) {
            char comm[64] = "";
            char path[64];
            snprintf(path, sizeof path, "/proc/%d/comm", pid);
            FILE *f = fopen(path, "r");
            if (f) {
                if (!fgets(comm, sizeof comm, f))
                    comm[0] = 0;
                fclose(f);
            }
            if (strncmp(comm, "tabvisor", 8) == 0)
                continue; /* a live server owns it */
        }
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s/%s", base, e->d_name);
        kill_stale_browsers(dir);
        log_info("removing leftovers of a previous run: %s", dir);
        rundir_remove(dir);
    }
    closedir(d);
}

int rundir_create(const char *base, char *out, size_t len)
{
    if (mkdir(base, 0700) < 0 && errno != EEXIST) {
        log_error("cannot create runtime dir %s: %s", base, strerror(errno));
        return -1;
    }
    struct stat st;
    if (lstat(base, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
        char why[PATH_MAX + 128] = "";
        privdir_usable(base, why, sizeof why);
        log_error("runtime dir: %s", why[0] ? why : base);
        return -1;
    }
    if ((st.st_mode & 0077) && chmod(base, 0700) < 0) {
        log_error("cannot make %s private: %s", base, strerror(errno));
        return -1;
    }
    sweep(base);
    snprintf(out, len, "%s/run-%d", base, (int)getpid());
    rundir_remove(out);
    if (mkdir(out, 0700) < 0) {
        log_error("cannot create %s: %s", out, strerror(errno));
        return -1;
    }
    return 0;
}
