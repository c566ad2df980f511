/* safepath.c - see safepath.h. */
#include "safepath.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errbuf.h"

#define SYMLINK_NOTE "(symlinks and hard links inside the output dir are not followed)"

enum safepath_err safepath_check_name(const char *rel, char *err, size_t errlen)
{
    size_t n = strlen(rel);
    if (n == 0 || n >= PATH_MAX / 2) {
        errbuf_set(err, errlen, "file name is empty or too long");
        return SAFEPATH_REFUSED;
    }
    if (rel[0] == '/') {
        errbuf_set(err, errlen,
                   "'%.200s' is absolute; only paths inside the output dir are allowed", rel);
        return SAFEPATH_REFUSED;
    }
    for (const char *p = rel; *p;) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.')) {
            errbuf_set(err, errlen, "'%.200s' has an empty, '.' or '..' component", rel);
            return SAFEPATH_REFUSED;
        }
        p += len + (slash ? 1 : 0);
        if (slash && !*p) {
            errbuf_set(err, errlen, "'%.200s' names a directory", rel);
            return SAFEPATH_REFUSED;
        }
    }
    return SAFEPATH_OK;
}

static enum safepath_err refused(const char *rel, const char *what, char *err, size_t errlen)
{
    errbuf_set(err, errlen, "'%.200s' is not allowed: %s " SYMLINK_NOTE, rel, what);
    return SAFEPATH_REFUSED;
}

/* Open the directory that will hold the file: walk rel's directories from
 * root, creating missing ones when create is set; *leaf points at the file
 * name. Returns the directory's fd, or a safepath_err. */
static int open_parent(const char *root, const char *rel, bool create, const char **leaf, char *err,
                       size_t errlen)
{
    int dfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        errbuf_set(err, errlen, "cannot open the output dir %s: %s", root, strerror(errno));
        return SAFEPATH_REFUSED;
    }
    const char *p = rel;
    for (const char *slash; (slash = strchr(p, '/')) != NULL; p = slash + 1) {
        char comp[NAME_MAX + 1];
        size_t len = (size_t)(slash - p);
        if (len > NAME_MAX) {
            close(dfd);
            return refused(rel, "a component is too long", err, errlen);
        }
        memcpy(comp, p, len);
        comp[len] = 0;
        if (create && mkdirat(dfd, comp, 0700) < 0 && errno != EEXIST) {
            int e = errno;
            close(dfd);
            return refused(rel, strerror(e), err, errlen);
        }
        int next = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int e = errno;
        close(dfd);
        if (next < 0) {
            if (!create && e == ENOENT) {
                errbuf_set(err, errlen, "there is no file '%.200s' in the output dir", rel);
                return SAFEPATH_MISSING;
            }
            return refused(rel,
                           e == ELOOP || e == ENOTDIR
                               ? "a directory on the way is a symlink or not a directory"
                               : strerror(e),
                           err, errlen);
        }
        dfd = next;
    }
    *leaf = p;
    return dfd;
}

static int write_all(int fd, const char *data, size_t len)
{
    while (len) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

enum safepath_err safepath_write(const char *root, const char *rel, const char *data, size_t len,
                                 char *err, size_t errlen)
{
    enum safepath_err r = safepath_check_name(rel, err, errlen);
    if (r != SAFEPATH_OK)
        return r;
    const char *leaf = NULL;
    int dfd = open_parent(root, rel, true, &leaf, err, errlen);
    if (dfd < 0)
        return (enum safepath_err)dfd;
    /* No O_TRUNC yet: the checks below must pass before the old content
     * goes. O_NONBLOCK: opening a FIFO planted there must not hang us. */
    int fd = openat(dfd, leaf, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
    int e = errno;
    close(dfd);
    if (fd < 0)
        return refused(rel, e == ELOOP ? "the file is a symlink" : strerror(e), err, errlen);
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
        close(fd);
        return refused(rel, "the file exists and is not a plain file with one link", err, errlen);
    }
    if (ftruncate(fd, 0) < 0 || write_all(fd, data, len) < 0) {
        e = errno;
        close(fd);
        errbuf_set(err, errlen, "cannot write %s/%s: %s", root, rel, strerror(e));
        return SAFEPATH_IO;
    }
    if (close(fd) < 0) {
        errbuf_set(err, errlen, "cannot write %s/%s: %s", root, rel, strerror(errno));
        return SAFEPATH_IO;
    }
    return SAFEPATH_OK;
}

enum safepath_err safepath_read(const char *root, const char *rel, size_t max, char **data,
                                size_t *len, char *err, size_t errlen)
{
    *data = NULL;
    *len = 0;
    enum safepath_err r = safepath_check_name(rel, err, errlen);
    if (r != SAFEPATH_OK)
        return r;
    const char *leaf = NULL;
    int dfd = open_parent(root, rel, false, &leaf, err, errlen);
    if (dfd < 0)
        return (enum safepath_err)dfd;
    int fd = openat(dfd, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    int e = errno;
    close(dfd);
    if (fd < 0) {
        if (e == ENOENT) {
            errbuf_set(err, errlen, "there is no file '%.200s' in the output dir", rel);
            return SAFEPATH_MISSING;
        }
        return refused(rel, e == ELOOP ? "the file is a symlink" : strerror(e), err, errlen);
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
        close(fd);
        return refused(rel, "it is not a plain file with one link", err, errlen);
    }
    if ((size_t)st.st_size > max) {
        close(fd);
        errbuf_set(err, errlen, "'%.200s' has %lld bytes; at most %zu", rel, (long long)st.st_size,
                   max);
        return SAFEPATH_TOO_BIG;
    }
    char *buf = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (buf && got < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    if (!buf || got != (size_t)st.st_size) {
        free(buf);
        errbuf_set(err, errlen, "cannot read %s/%s", root, rel);
        return SAFEPATH_IO;
    }
    buf[got] = 0;
    *data = buf;
    *len = got;
    return SAFEPATH_OK;
}
