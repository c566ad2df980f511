/*
 * snaptext.h - snapshot text as lines (snaptext.c). Nothing here keeps a
 * pointer past the call but struct lines, which points into the text it
 * split.
 */
#ifndef TABVISOR_SNAPTEXT_H
#define TABVISOR_SNAPTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xalloc.h"

/* Byte length of the longest prefix of text (len bytes) that holds at most
 * max characters and, if it cuts, ends at a line break when there is one. */
size_t cut_text(const char *text, size_t len, size_t max);
/* The lines of a snapshot text, each linked to its parent (the nearest line
 * above with less indentation). Pointers into the text, which must outlive
 * it; lines_free frees the arrays. */
struct lines {
    size_t n;
    const char **start;
    size_t *len;
    long *parent;   /* index of the parent line, -1 at the top */
    size_t *indent; /* leading spaces */
};
/* FNV-1a of n bytes of s, continuing from h (FNV1A_INIT to start). */
#define FNV1A_INIT 1469598103934665603ULL
uint64_t fnv1a(uint64_t h, const char *s, size_t n);
void lines_split(const char *text, struct lines *l);
void lines_free(struct lines *l);
/* Number of lines in text (a final line without '\n' counts). */
size_t count_lines(const char *text);

/* The role token of a line (`- role ...`, `- text: ...`, `- /url: ...`):
 * *n gets its length; NULL if the line is not an element line. */
const char *line_role_of(const char *s, size_t len, size_t *n);
/* Offset of the inline text after the line's head (`...: text`), or len. */
size_t line_value_at(const char *s, size_t len);
/* Line i's role is one of set (NULL-terminated). */
bool line_role_in(const struct lines *l, size_t i, const char *const *set);

#endif
