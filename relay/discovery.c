/*
 * discovery.c - how the tabvisors of one user find their one relay: a
 * private (0700) runtime dir holding relay.lock (flock'ed by the running
 * relay for its whole life), relay.json (0600: pid, port, ipc URL), and
 * relay.ipc (the workers' socket). A second relay started meanwhile finds
 * the lock held, prints the discovery file and leaves: it never kills or
 * replaces the running one.
 */
#include "relay.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errbuf.h"
#include "privdir.h"

int discovery_prepare_dir(const char *dir, char *err, size_t errlen)
{
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        errbuf_set(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    return privdir_usable(dir, err, errlen) == 1 ? 0 : -1;
}

int discovery_lock(const char *dir, char *err, size_t errlen)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/relay.lock", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        errbuf_set(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        close(fd);
        if (e == EWOULDBLOCK)
            return -2;
        errbuf_set(err, errlen, "%s: flock: %s", path, strerror(e));
        return -1;
    }
    return fd;
}

int discovery_write(const struct relay *r, char *err, size_t errlen)
{
    char path[PATH_MAX], tmp[PATH_MAX + 16];
    snprintf(path, sizeof(path), "%s/relay.json", r->rundir);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    char ws[64];
    snprintf(ws, sizeof(ws), "ws://127.0.0.1:%d/extension", r->port);
    json_t *d = json_pack("{s:I, s:i, s:s, s:s, s:s}", "pid", (json_int_t)getpid(), "port", r->port,
                          "ipc", r->ipc_url, "ws", ws, "extensionId", r->extension_id);
    char *text = d ? json_dumps(d, JSON_COMPACT) : NULL;
    json_decref(d);
    if (!text) {
        errbuf_set(err, errlen, "out of memory");
        return -1;
    }
    unlink(tmp);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        free(text);
        errbuf_set(err, errlen, "%s: %s", tmp, strerror(errno));
        return -1;
    }
    size_t len = strlen(text);
    ssize_t n = write(fd, text, len);
    bool ok = n == (ssize_t)len && write(fd, "\n", 1) == 1;
    free(text);
    if (close(fd) != 0 || !ok || rename(tmp, path) != 0) {
        unlink(tmp);
        errbuf_set(err, errlen, "%s: write failed", path);
        return -1;
    }
    return 0;
}

char *discovery_read(const char *dir)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/relay.json", dir);
    FILE *f = fopen(path, "re");
    if (!f)
        return NULL;
    char *buf = calloc(1, 4096);
    if (buf && !fgets(buf, 4096, f)) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf)
        buf[strcspn(buf, "\n")] = '\0';
    return buf;
}

void discovery_remove(const struct relay *r)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/relay.json", r->rundir);
    unlink(path);
}
