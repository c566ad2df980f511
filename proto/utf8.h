/* utf8.h - UTF-8 as pages hand it to us: counting characters (code points,
 * the unit of --max-output-chars and of JSON Schema's minLength/maxLength),
 * cutting on a character boundary, and repairing invalid sequences.
 *
 * Page-supplied text (titles, dialog messages, console lines, download
 * names) is cut into fixed buffers; a cut inside a character leaves an
 * invalid sequence, which jansson refuses: the text vanished from a result
 * (issue 36, finding 6). Every such cut goes through utf8_cut or
 * utf8_drop_partial_tail, and every result text through utf8_repaired. */
#ifndef TABVISOR_UTF8_H
#define TABVISOR_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Code points in s[0..len): the bytes that do not continue a sequence. */
static inline size_t utf8_chars(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

/* Bytes of the valid sequence at s[0..len): 1 to 4, or 0 when s starts an
 * invalid one (a stray continuation, an overlong form, a surrogate, past
 * U+10FFFF, or cut short by len). */
size_t utf8_seq_len(const char *s, size_t len);

/* Whether s[0..len) is all valid UTF-8. */
bool utf8_valid(const char *s, size_t len);

/* How many bytes of s[0..len) to keep so that at most max remain and no
 * character is split: max, or less by the bytes of a character it cut. */
size_t utf8_cut(const char *s, size_t len, size_t max);

/* s, NUL-terminated, just filled by a cut (snprintf into a fixed buffer):
 * a character left incomplete at its end is removed, in place. */
void utf8_drop_partial_tail(char *s);

/* s[0..len) with every invalid byte replaced by replacement (a NUL-
 * terminated string: U+FFFD as "\xEF\xBF\xBD" for text, "_" for a file
 * name): a new malloc'd, NUL-terminated string, its length in *outlen;
 * NULL when out of memory. */
char *utf8_repaired(const char *s, size_t len, const char *replacement, size_t *outlen);

#define UTF8_REPLACEMENT "\xEF\xBF\xBD"

#endif
