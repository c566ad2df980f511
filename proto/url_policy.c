/* url_policy.c - see url_policy.h. */
#include "url_policy.h"

#include <string.h>

/* The URL standard's "C0 control or space": stripped at both ends. */
static bool c0_or_space(unsigned char c)
{
    return c <= 0x20;
}

/* "ASCII tab or newline": removed wherever it stands. */
static bool tab_or_newline(unsigned char c)
{
    return c == '\t' || c == '\n' || c == '\r';
}

static bool alpha(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static unsigned char lower(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

/*
 * Copy what the browser would parse of url[0..len) into out: both ends
 * stripped of C0 controls and spaces, tabs and newlines dropped, at most
 * cap - 1 bytes (enough for the scheme and what the policy reads after it).
 * Returns the length copied.
 */
static size_t normalise(const char *url, size_t len, char *out, size_t cap)
{
    size_t a = 0, b = len;
    while (a < b && c0_or_space((unsigned char)url[a]))
        a++;
    while (b > a && c0_or_space((unsigned char)url[b - 1]))
        b--;
    size_t n = 0;
    for (size_t i = a; i < b && n + 1 < cap; i++)
        if (!tab_or_newline((unsigned char)url[i]))
            out[n++] = url[i];
    out[n] = 0;
    return n;
}

/* The scheme of a normalised URL: a letter, then letters, digits, + - .,
 * then ':'. Returns its length (0: none) and writes it lowercased. */
static size_t scheme_of(const char *s, size_t n, char *out)
{
    if (!n || !alpha((unsigned char)s[0]))
        return 0;
    size_t i = 0;
    while (i < n && i < URL_POLICY_MAX_SCHEME) {
        unsigned char c = (unsigned char)s[i];
        if (c == ':')
            break;
        if (!alpha(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.')
            return 0;
        out[i] = (char)lower(c);
        i++;
    }
    if (i >= n || s[i] != ':')
        return 0;
    out[i] = 0;
    return i;
}

bool url_policy_scheme(const char *url, size_t len, char *out)
{
    char norm[URL_POLICY_MAX_SCHEME + 2];
    size_t n = normalise(url, len, norm, sizeof norm);
    return scheme_of(norm, n, out) > 0;
}

/* about:blank, about:blank?x, about:blank#x (case-insensitive "blank"):
 * rest is what follows "about:". Other about: pages map to the browser's
 * own (about:version is chrome://version). */
static bool is_blank(const char *rest, size_t n)
{
    static const char blank[] = "blank";
    if (n < 5)
        return false;
    for (size_t i = 0; i < 5; i++)
        if (lower((unsigned char)rest[i]) != (unsigned char)blank[i])
            return false;
    return n == 5 || rest[5] == '?' || rest[5] == '#';
}

const char *url_policy_check(const char *url, size_t len, unsigned allow)
{
    if (!url)
        return "no URL";
    /* A NUL inside the URL: the browser's JSON keeps it, C strings do not;
     * nothing we load has one. */
    if (memchr(url, 0, len))
        return "a URL may not hold a NUL character";
    char norm[64];
    size_t n = normalise(url, len, norm, sizeof norm);
    if (n == 0)
        return (allow & URL_ALLOW_EMPTY) ? NULL : "an empty URL";
    char scheme[URL_POLICY_MAX_SCHEME + 1];
    size_t sl = scheme_of(norm, n, scheme);
    if (!sl)
        return "not an absolute URL with a scheme";
    if ((allow & URL_ALLOW_HTTP) && (!strcmp(scheme, "http") || !strcmp(scheme, "https")))
        return NULL;
    if ((allow & URL_ALLOW_DATA) && !strcmp(scheme, "data"))
        return NULL;
    if ((allow & URL_ALLOW_ABOUT_BLANK) && !strcmp(scheme, "about") &&
        is_blank(norm + sl + 1, n - sl - 1))
        return NULL;
    if (!strcmp(scheme, "file"))
        return "local files may not be loaded";
    return (allow & URL_ALLOW_DATA) ? "only http(s), about:blank and data: URLs may be loaded here"
                                    : "only http(s) and about:blank URLs may be loaded here";
}
