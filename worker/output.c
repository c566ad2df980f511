/*
 * output.c - files a tool writes for the agent (the `filename` argument) or
 * reads for it (uploads, storage state), always under the session's own
 * directory below --output-dir (the supervisor makes it: supervisor/outdirs.h).
 * The agent chooses the name, so the name is untrusted: proto/safepath.h
 * walks it without following a symlink; this file maps its errors to the
 * tools' codes. The directory itself may be a symlink (the operator's
 * --output-dir); it is created 0700 if missing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base64.h"
#include "safepath.h"
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

/* A safepath error as the tool's failure (err: its sentence). */
static int path_fail(struct session *w, enum safepath_err e, const char *err)
{
    switch (e) {
    case SAFEPATH_TOO_BIG:
        return fail_call(w, TV_INVALID_PARAMETERS, NULL, "%s", err);
    case SAFEPATH_IO:
        return fail_call(w, TV_BROWSER_ERROR, NULL, "%s", err);
    default:
        return fail_call(w, TV_PATH_NOT_ALLOWED, HINT_PATH, "%s", err);
    }
}

int output_write(struct session *w, const char *rel, const char *data, size_t len, char *out,
                 size_t outlen)
{
    char err[512];
    enum safepath_err e = safepath_check_name(rel, err, sizeof err);
    if (e != SAFEPATH_OK)
        return path_fail(w, e, err);
    if (!w->output_dir[0])
        return fail_call(w, TV_PATH_NOT_ALLOWED, NULL, "this server has no output dir");
    char root[PATH_MAX];
    if (output_make_dirs(w->output_dir) < 0 || !realpath(w->output_dir, root))
        return fail_call(w, TV_PATH_NOT_ALLOWED, NULL, "cannot create the output dir %s: %s",
                         w->output_dir, strerror(errno));
    e = safepath_write(root, rel, data, len, err, sizeof err);
    if (e != SAFEPATH_OK)
        return path_fail(w, e, err);
    snprintf(out, outlen, "%s/%s", root, rel);
    return 0;
}

int output_write_base64(struct session *w, const char *rel, const char *b64, size_t len, char *out,
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

int output_read(struct session *w, const char *name, size_t max, char **data, size_t *len, char *abs,
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
    char err[512];
    enum safepath_err e = safepath_read(root, rel, max, data, len, err, sizeof err);
    if (e != SAFEPATH_OK)
        return path_fail(w, e, err);
    if (abs)
        snprintf(abs, abslen, "%s/%s", root, rel);
    return 0;
}
