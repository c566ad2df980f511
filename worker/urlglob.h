/*
 * urlglob.h - URL glob patterns as Playwright's page.route takes them:
 *   **      any characters, '/' included
 *   *       any characters but '/'
 *   {a,b}   one of the comma-separated alternatives (not nested)
 * Everything else, '?' included, is itself. A pattern matches the whole URL
 * (a leading "**" for any scheme and host), so "http://a/x" matches only
 * that URL.
 */
#ifndef TABVISOR_URLGLOB_H
#define TABVISOR_URLGLOB_H

#include <stdbool.h>

#define URLGLOB_MAX 4096 /* longer patterns never match */
/* Nor does a pattern whose length times the URL's is over this (a 4 KiB
 * pattern still takes 8 KiB URLs; a short one 2 MiB URLs). */
#define URLGLOB_MAX_CELLS (32u * 1024 * 1024)

bool url_glob_match(const char *pattern, const char *url);

#endif
