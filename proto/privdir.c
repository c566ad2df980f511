/* privdir.c - see privdir.h. */
#include "privdir.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errbuf.h"

/* The name of uid, or its number. */
static void owner_name(uid_t uid, char *out, size_t len)
{
    struct passwd *pw = getpwuid(uid);
    if (pw && pw->pw_name)
        snprintf(out, len, "uid %u (%s)", (unsigned)uid, pw->pw_name);
    else
        snprintf(out, len, "uid %u", (unsigned)uid);
}

int privdir_usable(const char *dir, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(dir, &st) != 0)
        return errno == ENOENT;
    if (!S_ISDIR(st.st_mode)) {
        errbuf_set(err, errlen, "%s is not a directory", dir);
        return 0;
    }
    if (st.st_uid != geteuid()) {
        char who[64];
        owner_name(st.st_uid, who, sizeof who);
        errbuf_set(err, errlen, "%s belongs to %s, not to us (uid %u)", dir, who,
                   (unsigned)geteuid());
        return 0;
    }
    if (st.st_mode & 077) {
        errbuf_set(err, errlen, "%s is ours but open to others (mode %03o; it must be 0700)", dir,
                   (unsigned)(st.st_mode & 0777));
        return 0;
    }
    return 1;
}

void privdir_default(const char *name, char *out, size_t len, char *note, size_t notelen)
{
    if (note && notelen)
        note[0] = 0;
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    if (xdg && *xdg == '/') {
        snprintf(out, len, "%s/%s", xdg, name);
        return;
    }
    unsigned uid = (unsigned)geteuid();
    const char *tmp = getenv("TMPDIR");
    if (!tmp || *tmp != '/')
        tmp = "/tmp";
    snprintf(out, len, "%s/%s-%u", tmp, name, uid);
    char why[PATH_MAX + 128];
    struct stat st;
    /* Ours with a wrong mode is ours to fix; only another owner (or not a
     * directory) is squatting. */
    if (lstat(out, &st) != 0 || (S_ISDIR(st.st_mode) && st.st_uid == geteuid()))
        return;
    privdir_usable(out, why, sizeof why);
    char fallback[PATH_MAX];
    const char *cache = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n = -1;
    if (cache && *cache == '/')
        n = snprintf(fallback, sizeof fallback, "%s/%s-run", cache, name);
    else if (home && *home == '/')
        n = snprintf(fallback, sizeof fallback, "%s/.cache/%s-run", home, name);
    char parent[PATH_MAX];
    int ok = 0;
    if (n > 0 && (size_t)n < sizeof fallback) {
        snprintf(parent, sizeof parent, "%s", fallback);
        char *slash = strrchr(parent, '/');
        if (slash && slash != parent) {
            *slash = 0;
            if (mkdir(parent, 0700) == 0 || errno == EEXIST)
                ok = (mkdir(fallback, 0700) == 0 || errno == EEXIST) &&
                     privdir_usable(fallback, NULL, 0) == 1;
        }
    }
    if (!ok) {
        snprintf(fallback, sizeof fallback, "%s/%s-%u-XXXXXX", tmp, name, uid);
        if (!mkdtemp(fallback))
            return; /* nothing better: the caller reports the squatted dir */
    }
    snprintf(out, len, "%s", fallback);
    if (note && notelen)
        errbuf_set(note, notelen, "%s; using %s instead", why, out);
}
