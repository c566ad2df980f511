/*
 * strbuf.h - a growing NUL-terminated string (strbuf.c). The caller owns
 * b->p (malloc'd, or NULL before the first add) and frees it.
 */
#ifndef TABVISOR_STRBUF_H
#define TABVISOR_STRBUF_H

#include <stddef.h>

struct sb {
    char *p;
    size_t len, cap;
};
/* Append n bytes of s; aborts when memory is out. */
void sb_add(struct sb *b, const char *s, size_t n);
void sb_printf(struct sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
