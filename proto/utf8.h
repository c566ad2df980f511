/* utf8.h - counting characters (code points) in valid UTF-8, the unit of
 * --max-output-chars and of JSON Schema's minLength/maxLength. */
#ifndef TABVISOR_UTF8_H
#define TABVISOR_UTF8_H

#include <stddef.h>

/* Code points in s[0..len): the bytes that do not continue a sequence. */
static inline size_t utf8_chars(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

#endif
