/*
 * safepath.h - files under a root directory named by someone we do not
 * trust (an agent's `filename`, a client's `storageState`).
 *
 * Checking a string (realpath of the parent, then a prefix compare) leaves a
 * window in which a directory on the way can be swapped for a symlink;
 * instead the path is walked one component at a time with
 * openat(O_NOFOLLOW) from a descriptor of the root, so the kernel refuses a
 * symlink wherever it is, at the moment of use. Rules:
 *   - relative, no empty, "." or ".." component (so "a/../../x" fails before
 *     any file system access, even where it would stay inside);
 *   - missing directories are created 0700 (writes), existing ones must be
 *     real directories, not symlinks;
 *   - the file itself must not be a symlink (O_NOFOLLOW), and if it exists it
 *     must be a regular file with one link: O_TRUNC through a hard link
 *     would overwrite a file outside the root.
 * The root itself is the operator's (or the supervisor's) and may be a symlink.
 *
 * Used by the worker (worker/output.c, inside its session's directory) and
 * by the supervisor (a storage state handed from one session to another).
 * Errors are a kind and a sentence; ownership of *data passes to the caller.
 */
#ifndef TABVISOR_SAFEPATH_H
#define TABVISOR_SAFEPATH_H

#include <stdbool.h>
#include <stddef.h>

enum safepath_err {
    SAFEPATH_OK = 0,
    SAFEPATH_REFUSED = -1, /* the name or something on the way is not allowed */
    SAFEPATH_MISSING = -2, /* no such file (reads) */
    SAFEPATH_TOO_BIG = -3, /* over the caller's limit (reads) */
    SAFEPATH_IO = -4,      /* the file system failed */
};

/* Whether rel is an acceptable relative name (the rules above), without
 * touching the disk. */
enum safepath_err safepath_check_name(const char *rel, char *err, size_t errlen);

/* Write data to root/rel (0600, replacing a plain file). */
enum safepath_err safepath_write(const char *root, const char *rel, const char *data, size_t len,
                                 char *err, size_t errlen);

/* Read root/rel, at most max bytes, into *data (malloc'd, NUL-terminated). */
enum safepath_err safepath_read(const char *root, const char *rel, size_t max, char **data,
                                size_t *len, char *err, size_t errlen);

#endif
