/* config_token.h - the HTTP bearer token: where it is read from and kept.
 *
 * The token lives in one static buffer of config_token.c, never in our argv
 * or environment after config_parse(), which other local users (ps,
 * /proc/PID/environ) and our children (the environment is inherited) could
 * read. */
#ifndef TABVISOR_CONFIG_TOKEN_H
#define TABVISOR_CONFIG_TOKEN_H

#include <stddef.h>
#include "config.h"

/* Copy n bytes of t as the token (c->auth_token points at the copy).
 * 0, or -1 (message naming `from` printed) when it is empty, too long or
 * has characters an Authorization header cannot carry. */
int token_set(struct config *c, const char *t, size_t n, const char *from);
/* The token is the file's content without its trailing line break; warns
 * when other users may read the file. `from` names the setting. */
int token_read_file(struct config *c, const char *path, const char *from);
/* Remove $TABVISOR_AUTH_TOKEN from our environment and overwrite its text
 * (/proc/PID/environ shows the original bytes, not environ[]). Call after
 * its value was used, whether or not it was. */
void token_wipe_env(void);
/* Forget the token (before a fresh config_parse). */
void token_reset(void);

#endif
