/* errbuf.h - the (char *err, size_t errlen) convention for error messages:
 * functions that fail write a one-line reason into a caller's buffer. */
#ifndef TABVISOR_ERRBUF_H
#define TABVISOR_ERRBUF_H

#include <stddef.h>

/* printf into err (truncating); a NULL or empty buffer is ignored. */
void errbuf_set(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
