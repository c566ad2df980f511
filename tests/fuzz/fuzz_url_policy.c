/*
 * fuzz_url_policy.c - the URL policy (proto/url_policy.c) and the CDP policy
 * table's checker (proto/cdp_policy.c) on arbitrary input: URLs and params
 * come from a worker that a hostile page may have taken over.
 *
 * Input: a first line naming a CDP method, the rest a URL. Checked: a URL the
 * policy allows has, read the browser's way by this harness's own code (strip
 * C0 controls and spaces at both ends, drop tabs and newlines, lowercase the
 * scheme), the scheme http, https, data or about, and never file; the same
 * URL in {"url": ...} gets the same answer from cdp_policy_check for
 * Page.navigate; a row that passes no layer is refused whatever the params.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cdp_policy.h"
#include "url_policy.h"

/* The scheme the browser would read, by a second, simpler route. */
static void browser_scheme(const char *u, size_t n, char *out, size_t cap)
{
    char clean[64];
    size_t k = 0, a = 0, b = n;
    while (a < b && (unsigned char)u[a] <= 0x20)
        a++;
    while (b > a && (unsigned char)u[b - 1] <= 0x20)
        b--;
    for (size_t i = a; i < b && k + 1 < sizeof clean; i++)
        if (u[i] != '\t' && u[i] != '\n' && u[i] != '\r')
            clean[k++] = (char)tolower((unsigned char)u[i]);
    clean[k] = 0;
    char *colon = strchr(clean, ':');
    size_t sl = colon ? (size_t)(colon - clean) : 0;
    if (sl >= cap)
        sl = 0;
    memcpy(out, clean, sl);
    out[sl] = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192)
        return 0;
    const char *text = (const char *)data;
    const char *nl = memchr(text, '\n', size);
    size_t mlen = nl ? (size_t)(nl - text) : 0;
    const char *url = nl ? nl + 1 : text;
    size_t ulen = size - (size_t)(url - text);

    const unsigned all = URL_ALLOW_HTTP | URL_ALLOW_ABOUT_BLANK | URL_ALLOW_DATA | URL_ALLOW_EMPTY;
    const char *why = url_policy_check(url, ulen, all);
    if (!why && ulen) {
        if (memchr(url, 0, ulen))
            abort();
        char scheme[64];
        browser_scheme(url, ulen, scheme, sizeof scheme);
        if (scheme[0] && strcmp(scheme, "http") && strcmp(scheme, "https") &&
            strcmp(scheme, "data") && strcmp(scheme, "about"))
            abort();
        if (!scheme[0]) {
            /* Allowed without a scheme: only the empty URL (all C0/space). */
            for (size_t i = 0; i < ulen; i++)
                if ((unsigned char)url[i] > 0x20)
                    abort();
        }
    }
    char scheme[URL_POLICY_MAX_SCHEME + 1];
    if (url_policy_scheme(url, ulen, scheme) && !strcmp(scheme, "file") && !why)
        abort();

    /* The same URL as Page.navigate's params, through the table. */
    json_t *params = json_object();
    json_object_set_new(params, "url", json_stringn_nocheck(url, ulen));
    for (unsigned layer = 1; layer <= CDP_LAYER_EXTENSION; layer <<= 1) {
        const char *a = cdp_policy_check(layer, "Page.navigate", 13, params);
        const char *b = url_policy_check(url, ulen, cdp_policy_url_allow(layer));
        if (layer != CDP_LAYER_TOOL && (a == NULL) != (b == NULL))
            abort();
        /* The method line, whatever it is: rows that pass nothing refuse. */
        const struct cdp_rule *r = cdp_policy_rule(text, mlen);
        const char *c = cdp_policy_check(layer, text, mlen, params);
        if (r && !(r->pass & layer) && !c)
            abort();
    }
    json_decref(params);
    return 0;
}
