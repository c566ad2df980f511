/* outdirs.c - see outdirs.h. */
#include "outdirs.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errbuf.h"
#include "safepath.h"
#include "session_secret.h"

void outdir_name(const char *session_id, char *out)
{
    memcpy(out, "session-", 8);
    session_secret("outdir", session_id, out + 8, OUTDIR_NAME_LEN - 8);
}

/* mkdir path 0700 unless it exists; then it must be a directory. */
static int make_dir(const char *path, char *err, size_t errlen)
{
    if (mkdir(path, 0700) == 0 || errno == EEXIST)
        return 0;
    errbuf_set(err, errlen, "cannot create %s: %s", path, strerror(errno));
    return -1;
}

int outdir_for_session(const char *root, const char *session_id, char *out, size_t cap, char *err,
                       size_t errlen)
{
    char name[OUTDIR_NAME_LEN + 1];
    outdir_name(session_id, name);
    if (snprintf(out, cap, "%s/%s", root, name) >= (int)cap) {
        errbuf_set(err, errlen, "the output dir path is too long");
        return -1;
    }
    if (make_dir(root, err, errlen) < 0 || make_dir(out, err, errlen) < 0)
        return -1;
    /* Ours and private, not a link someone put in our way. */
    struct stat st;
    if (lstat(out, &st) < 0) {
        errbuf_set(err, errlen, "%s: %s", out, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
        errbuf_set(err, errlen,
                   "%s is not a private directory of ours (a symlink, another owner, or "
                   "open to others)",
                   out);
        return -1;
    }
    /* Absolute: the browser saves downloads there from a working dir of its own. */
    char real[PATH_MAX];
    if (realpath(out, real) && strlen(real) < cap)
        memcpy(out, real, strlen(real) + 1);
    return 0;
}

int outdir_hand_over(const char *root, const char *from_id, const char *to_id, const char *name,
                     char *rel, size_t cap, char *err, size_t errlen)
{
    char from[PATH_MAX], to[PATH_MAX], from_real[PATH_MAX], to_real[PATH_MAX];
    if (outdir_for_session(root, from_id, from, sizeof from, err, errlen) < 0 ||
        outdir_for_session(root, to_id, to, sizeof to, err, errlen) < 0)
        return SAFEPATH_IO;
    if (!realpath(from, from_real) || !realpath(to, to_real)) {
        errbuf_set(err, errlen, "cannot resolve the output dir: %s", strerror(errno));
        return SAFEPATH_IO;
    }
    /* An absolute name must lie in the source session's directory. */
    const char *r = name;
    size_t n = strlen(from_real), m = strlen(from);
    if (name[0] == '/') {
        if (!strncmp(name, from_real, n) && name[n] == '/')
            r = name + n + 1;
        else if (!strncmp(name, from, m) && name[m] == '/')
            r = name + m + 1;
        else {
            errbuf_set(err, errlen, "'%.200s' is outside the output dir of session %s", name,
                       from_id);
            return SAFEPATH_REFUSED;
        }
    }
    if (snprintf(rel, cap, "%s", r) >= (int)cap) {
        errbuf_set(err, errlen, "file name is too long");
        return SAFEPATH_REFUSED;
    }
    char *data;
    size_t len;
    int e = safepath_read(from_real, rel, OUTDIR_HANDOVER_MAX, &data, &len, err, errlen);
    if (e != SAFEPATH_OK)
        return e;
    e = safepath_write(to_real, rel, data, len, err, errlen);
    free(data);
    return e;
}
