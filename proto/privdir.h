/*
 * privdir.h - where a process of ours keeps its runtime files by default.
 *
 * $XDG_RUNTIME_DIR/NAME when the session has one (private to the user by
 * systemd), else $TMPDIR/NAME-UID ($TMPDIR: /tmp when unset). /tmp is
 * everyone's: another uid can create /tmp/NAME-UID first and keep us from
 * starting. Such a directory is left alone and a private one taken instead:
 * $XDG_CACHE_HOME (or ~/.cache)/NAME-run, which every process of the user
 * finds again, else a fresh unpredictable /tmp/NAME-UID-XXXXXX.
 *
 * Used by the supervisor (its run dir) and for the relay's directory (by the
 * relay and by the supervisor that starts it: both must find the same one).
 */
#ifndef TABVISOR_PRIVDIR_H
#define TABVISOR_PRIVDIR_H

#include <stddef.h>
#include <sys/types.h>

/* The default directory for name into out. When a squatted /tmp directory
 * was passed over, note (may be NULL) gets a sentence saying whose it is
 * and what was taken instead; otherwise note is "". */
void privdir_default(const char *name, char *out, size_t len, char *note, size_t notelen);

/* Whether dir is a directory owned by us with no group or other access;
 * when not, why (naming the owner) into err. A missing dir is fine (1). */
int privdir_usable(const char *dir, char *err, size_t errlen);

#endif
