/*
 * output.c - files a tool writes for the agent (the `filename` argument),
 * always under the configured output dir (--output-dir).
 *
 * The agent chooses the name, so the name is untrusted. Checking a string
 * (realpath of the parent, then a prefix compare) leaves a window in which
 * a directory on the way can be swapped for a symlink; instead the path is
 * walked one component at a time with openat(O_NOFOLLOW) from a descriptor
 * of the output dir, so the kernel refuses a symlink wherever it is, at the
 * moment of use. Rules:
 *   - relative, no empty, "." or ".." component (so "a/../../x" fails before
 *     any file system access, even where it would stay inside);
 *   - missing directories are created 0700, existing ones must be real
 *     directories, not symlinks;
 *   - the file itself must not be a symlink (O_NOFOLLOW), and if it exists it
 *     must be a regular file with one link: O_TRUNC through a hard link
 *     would overwrite a file outside the dir.
 * The output dir itself is the operator's choice and may be a symlink; it is
 * created 0700 if missing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "worker.h"

#define HINT_PATH                                                                                  \
    "Use a relative file name such as 'page.yaml' or 'dir/page.yaml'; files go to the server's "   \
    "output dir."

int output_make_dirs(const char *path)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return -1;
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(buf, 0700) < 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(buf, 0700) < 0 && errno != EEXIST ? -1 : 0;
}

/* Check the agent's name (see the rules above) without touching the disk. */
static int check_name(struct wctx *w, const char *rel)
{
    size_t n = strlen(rel);
    if (n == 0 || n >= PATH_MAX / 2)
        return fail_call(w, TV_PATH_NOT_ALLOWED, HINT_PATH, "file name is empty or too long");
    if (rel[0] == '/')
        return fail_call(w, TV_PATH_NOT_ALLOWED, HINT_PATH,
                         "'%.200s' is absolute; only paths inside the output dir are allowed", rel);
    for (const char *p = rel; *p;) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
            return fail_call(w, TV_PATH_NOT_ALLOWED, HINT_PATH,
                             "'%.200s' has an empty, '.' or '..' component", rel);
        p += len + (slash ? 1 : 0);
        if (slash && !*p)
            return fail_call(w, TV_PATH_NOT_ALLOWED, HINT_PATH, "'%.200s' names a directory", rel);
    }
    return 0;
}

static int path_refused(struct wctx *w, const char *rel, const char *what)
{
    return fail_call(w, TV_PATH_NOT_ALLOWED, HINT_PATH,
                     "'%.200s' is not allowed: %s (symlinks and hard links inside the output dir "
                     "are not followed)",
                     rel, what);
}

/* Open the directory that will hold the file: walk rel's directories from
 * the output dir, creating missing ones when create is set; *leaf points at
 * the file name. */
static int open_parent(struct wctx *w, const char *root, const char *rel, const char **leaf,
                       bool create)
{
    int dfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return fail_call(w, TV_PATH_NOT_ALLOWED, NULL, "cannot open the output dir %s: %s", root,
                         strerror(errno));
    const char *p = rel;
    for (const char *slash; (slash = strchr(p, '/')) != NULL; p = slash + 1) {
        char comp[NAME_MAX + 1];
        size_t len = (size_t)(slash - p);
        if (len > NAME_MAX) {
            close(dfd);
            return path_refused(w, rel, "a component is too long");
        }
        memcpy(comp, p, len);
        comp[len] = 0;
        if (create && mkdirat(dfd, comp, 0700) < 0 && errno != EEXIST) {
            int e = errno;
            close(dfd);
            return path_refused(w, rel, strerror(e));
        }
        int next = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int e = errno;
        close(dfd);
        if (next < 0)
            return path_refused(w, rel,
                                e == ELOOP || e == ENOTDIR ? "a directory on the way is a symlink "
                                                             "or not a directory"
                                                           : strerror(e));
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

int output_write(struct wctx *w, const char *rel, const char *data, size_t len, char *out,
                 size_t outlen)
{
    if (check_name(w, rel) < 0)
        return -1;
    if (!w->output_dir[0])
        return fail_call(w, TV_PATH_NOT_ALLOWED, NULL, "this server has no output dir");
    char root[PATH_MAX];
    if (output_make_dirs(w->output_dir) < 0 || !realpath(w->output_dir, root))
        return fail_call(w, TV_PATH_NOT_ALLOWED, NULL, "cannot create the output dir %s: %s",
                         w->output_dir, strerror(errno));
    const char *leaf = NULL;
    int dfd = open_parent(w, root, rel, &leaf, true);
    if (dfd < 0)
        return -1;
    /* No O_TRUNC yet: the checks below must pass before the old content
     * goes. O_NONBLOCK: opening a FIFO planted there must not hang us. */
    int fd = openat(dfd, leaf, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
    int e = errno;
    close(dfd);
    if (fd < 0)
        return path_refused(w, rel, e == ELOOP ? "the file is a symlink" : strerror(e));
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
        close(fd);
        return path_refused(w, rel, "the file exists and is not a plain file with one link");
    }
    if (ftruncate(fd, 0) < 0 || write_all(fd, data, len) < 0) {
        e = errno;
        close(fd);
        return fail_call(w, TV_BROWSER_ERROR, NULL, "cannot write %s/%s: %s", root, rel,
                         strerror(e));
    }
    if (close(fd) < 0)
        return fail_call(w, TV_BROWSER_ERROR, NULL, "cannot write %s/%s: %s", root, rel,
                         strerror(errno));
    snprintf(out, outlen, "%s/%s", root, rel);
    return 0;
}

long base64_decode(const char *in, size_t len, unsigned char *out)
{
    static signed char val[256];
    if (!val['B']) {
        memset(val, -1, sizeof val);
        const char *abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        for (int k = 0; k < 64; k++)
            val[(unsigned char)abc[k]] = (signed char)k;
    }
    while (len && in[len - 1] == '=')
        len--;
    size_t n = 0;
    uint32_t acc = 0;
    for (size_t k = 0; k < len; k++) {
        int v = val[(unsigned char)in[k]];
        if (v < 0)
            return -1;
        acc = acc << 6 | (uint32_t)v;
        if (k % 4 == 3) {
            out[n++] = (unsigned char)(acc >> 16);
            out[n++] = (unsigned char)(acc >> 8);
            out[n++] = (unsigned char)acc;
        }
    }
    if (len % 4 == 1)
        return -1;
    if (len % 4 == 2) {
        out[n++] = (unsigned char)(acc >> 4);
    } else if (len % 4 == 3) {
        out[n++] = (unsigned char)(acc >> 10);
        out[n++] = (unsigned char)(acc >> 2);
    }
    return (long)n;
}

int output_write_base64(struct wctx *w, const char *rel, const char *b64, size_t len, char *out,
                        size_t outlen, size_t *bytes)
{
    unsigned char *data = malloc(len / 4 * 3 + 3);
    if (!data)
        return fail_call(w, TV_BROWSER_ERROR, NULL, "out of memory for %zu bytes", len);
    long n = base64_decode(b64, len, data);
    int r = n < 0 ? fail_call(w, TV_BROWSER_ERROR, NULL, "the browser sent data that is not base64")
                  : output_write(w, rel, (const char *)data, (size_t)n, out, outlen);
    free(data);
    if (r == 0)
        *bytes = (size_t)n;
    return r;
}

/* An absolute path the agent got from a result (`file`) names the same file
 * as its part below the output dir: accept it as that relative name. */
static const char *relative_to(const char *root, const char *path)
{
    size_t n = strlen(root);
    if (path[0] == '/' && strncmp(path, root, n) == 0 && path[n] == '/')
        return path + n + 1;
    return path;
}

int output_read(struct wctx *w, const char *name, size_t max, char **data, size_t *len, char *abs,
                size_t abslen)
{
    *data = NULL;
    *len = 0;
    if (!w->output_dir[0])
        return fail_call(w, TV_PATH_NOT_ALLOWED, NULL,
                         "this server has no output dir, so no file can be read");
    char root[PATH_MAX];
    if (!realpath(w->output_dir, root))
        return fail_call(w, TV_PATH_NOT_ALLOWED, HINT_PATH, "cannot open the output dir %s: %s",
                         w->output_dir, strerror(errno));
    const char *rel = relative_to(root, name);
    /* Also the configured spelling of the dir, when it is not canonical. */
    if (rel == name && name[0] == '/' && (rel = relative_to(w->output_dir, name)) == name)
        return fail_call(w, TV_PATH_NOT_ALLOWED,
                         "Only files inside the server's output dir can be read; use a path "
                         "relative to it.",
                         "'%.200s' is outside the output dir %s", name, root);
    if (check_name(w, rel) < 0)
        return -1;
    const char *leaf = NULL;
    int dfd = open_parent(w, root, rel, &leaf, false);
    if (dfd < 0)
        return -1;
    int fd = openat(dfd, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    int e = errno;
    close(dfd);
    if (fd < 0)
        return e == ENOENT
                   ? fail_call(w, TV_PATH_NOT_ALLOWED, HINT_PATH,
                               "there is no file '%.200s' in the output dir", rel)
                   : path_refused(w, rel, e == ELOOP ? "the file is a symlink" : strerror(e));
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
        close(fd);
        return path_refused(w, rel, "it is not a plain file with one link");
    }
    if ((size_t)st.st_size > max) {
        close(fd);
        return fail_call(w, TV_INVALID_PARAMETERS, NULL, "'%.200s' has %lld bytes; at most %zu",
                         rel, (long long)st.st_size, max);
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
        return fail_call(w, TV_BROWSER_ERROR, NULL, "cannot read %s/%s", root, rel);
    }
    buf[got] = 0;
    *data = buf;
    *len = got;
    if (abs)
        snprintf(abs, abslen, "%s/%s", root, rel);
    return 0;
}
