/*
 * logfile.c - the relay's log file, rotated by size (logfile.h).
 */
#include "logfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errbuf.h"
#include "log.h"

static char log_path[PATH_MAX];
static size_t log_max;

/* path -> path.1, replacing it. A missing path is not an error. */
static int rotate(const char *path, char *err, size_t errlen)
{
    char old[PATH_MAX + 2];
    if (snprintf(old, sizeof old, "%s.1", path) >= (int)sizeof old) {
        errbuf_set(err, errlen, "log path too long");
        return -1;
    }
    if (rename(path, old) != 0 && errno != ENOENT) {
        errbuf_set(err, errlen, "rename %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* Open path for appending and put it on stderr. */
static int attach(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        errbuf_set(err, errlen, "open %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
        close(fd);
        errbuf_set(err, errlen, "%s is not a file of ours", path);
        return -1;
    }
    /* dup2 clears FD_CLOEXEC on stderr: children (none today) would share it. */
    int rc = dup2(fd, STDERR_FILENO) < 0 ? -1 : 0;
    if (rc != 0)
        errbuf_set(err, errlen, "dup2: %s", strerror(errno));
    close(fd);
    return rc;
}

int logfile_open(const char *path, size_t max_bytes, char *err, size_t errlen)
{
    if (strlen(path) >= sizeof log_path) {
        errbuf_set(err, errlen, "log path too long");
        return -1;
    }
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size > max_bytes &&
        rotate(path, err, errlen) != 0)
        return -1;
    if (attach(path, err, errlen) != 0)
        return -1;
    snprintf(log_path, sizeof log_path, "%s", path);
    log_max = max_bytes;
    return 0;
}

void logfile_check(void)
{
    static bool failed;
    struct stat st;
    if (!log_path[0] || failed || fstat(STDERR_FILENO, &st) != 0 || (size_t)st.st_size <= log_max)
        return;
    char err[PATH_MAX + 100];
    if (rotate(log_path, err, sizeof err) != 0 || attach(log_path, err, sizeof err) != 0) {
        /* Keep writing to the file we have (renamed or not): a log that
         * grows is better than none. */
        failed = true;
        log_error("log file: %s; no more rotation", err);
        return;
    }
    log_info("log file: rotated %s at %lld bytes", log_path, (long long)st.st_size);
}
