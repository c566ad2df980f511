/*
 * outdirs.h - each browser session's own directory under --output-dir.
 *
 * Everything a session reads or writes as a file (screenshots, PDFs,
 * snapshots, uploads, downloads) is rooted in its directory, and its worker
 * is confined to it (Landlock), so one client can neither read nor
 * overwrite another's files. The name is session-<32 hex>, an HMAC of the
 * session id under a key drawn at start: stable across a session's worker
 * restarts, known before a pooled worker has a session, and not guessable
 * from anything another client sees.
 */
#ifndef TABVISOR_OUTDIRS_H
#define TABVISOR_OUTDIRS_H

#include <stddef.h>

/* The directory of session_id under root into out (cap bytes; absolute),
 * created 0700
 * (root too, when missing). 0, or -1 with the reason in err: a path too
 * long, a directory that cannot be made, or one that is not a private
 * directory of ours (a symlink, another owner, group or other access). */
int outdir_for_session(const char *root, const char *session_id, char *out, size_t cap, char *err,
                       size_t errlen);

/* Only the name (session-<32 hex>) into out (at least OUTDIR_NAME_LEN + 1 bytes). */
#define OUTDIR_NAME_LEN 40
void outdir_name(const char *session_id, char *out);

/* The most a file handed from one session to another may hold. */
#define OUTDIR_HANDOVER_MAX (16u * 1024 * 1024)

/* Copy the file name (relative to from_id's directory, or absolute inside
 * it) into to_id's directory under the same relative name, written to rel
 * (cap bytes). Both directories are made if missing. SAFEPATH_OK, or an
 * error of safepath.h with its sentence in err. */
int outdir_hand_over(const char *root, const char *from_id, const char *to_id, const char *name,
                     char *rel, size_t cap, char *err, size_t errlen);

#endif
