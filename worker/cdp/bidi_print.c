/*
 * bidi_print.c - CDP's Page.printToPDF as BiDi's browsingContext.print
 * (bidi_map.h), for browser_pdf_save (worker/tools/pdf.c).
 *
 * BiDi answers with the whole PDF in base64. A caller that asks for a
 * stream (transferMode ReturnAsStream, as pdf.c does to bound what it
 * holds) gets a handle the map answers IO.read and IO.close for from that
 * answer, as CDP's IO domain does from the browser's.
 */
#include <stdio.h>
#include <string.h>

#include "bidi_map_int.h"
#include "transport.h"

#define CM_PER_INCH 2.54

bool bm_is_print_command(const char *method)
{
    return !strcmp(method, "Page.printToPDF") || !strcmp(method, "IO.read") ||
           !strcmp(method, "IO.close");
}

/* CDP's pageRanges ("1-5, 8") as BiDi's (["1-5", "8"]). */
static json_t *page_ranges(const char *cdp)
{
    json_t *out = json_array();
    while (cdp && *cdp) {
        cdp += strspn(cdp, " ,");
        size_t n = strcspn(cdp, ",");
        while (n && cdp[n - 1] == ' ')
            n--;
        if (n)
            json_array_append_new(out, json_stringn(cdp, n));
        cdp += n;
        cdp += strcspn(cdp, ",");
    }
    return out;
}

static enum bidi_outcome print(struct bidi_map *m, long long id, const char *ctx, json_t *p,
                               json_t **out)
{
    json_t *bp = json_pack("{s:s, s:b, s:s, s:b}", "context", ctx, "background",
                           json_is_true(json_object_get(p, "printBackground")), "orientation",
                           json_is_true(json_object_get(p, "landscape")) ? "landscape" : "portrait",
                           "shrinkToFit", !json_is_true(json_object_get(p, "preferCSSPageSize")));
    if (json_is_number(json_object_get(p, "scale")))
        json_object_set_new(bp, "scale", json_real(bm_num(p, "scale")));
    json_t *page = json_object();
    static const char *const paper[][2] = {{"paperWidth", "width"}, {"paperHeight", "height"}};
    for (size_t i = 0; i < 2; i++)
        if (json_is_number(json_object_get(p, paper[i][0])))
            json_object_set_new(page, paper[i][1], json_real(bm_num(p, paper[i][0]) * CM_PER_INCH));
    json_object_set_new(bp, "page", page);
    json_t *margin = json_object();
    static const char *const sides[][2] = {{"marginTop", "top"},
                                           {"marginBottom", "bottom"},
                                           {"marginLeft", "left"},
                                           {"marginRight", "right"}};
    for (size_t i = 0; i < 4; i++)
        if (json_is_number(json_object_get(p, sides[i][0])))
            json_object_set_new(margin, sides[i][1],
                                json_real(bm_num(p, sides[i][0]) * CM_PER_INCH));
    json_object_set_new(bp, "margin", margin);
    if (bm_str(p, "pageRanges") && *bm_str(p, "pageRanges"))
        json_object_set_new(bp, "pageRanges", page_ranges(bm_str(p, "pageRanges")));
    const char *mode = bm_str(p, "transferMode");
    bool stream = mode && !strcmp(mode, "ReturnAsStream");
    return bm_send_with(m, id, K_PRINT, true, json_boolean(stream), ctx, "browsingContext.print",
                        bp, out);
}

/* IO.read of a stream print_answer made: the next size bytes (base64), eof
 * at its end. */
static json_t *read_stream(struct bidi_map *m, long long id, json_t *p)
{
    json_t *s = json_object_get(m->streams, bm_str(p, "handle") ?: "");
    if (!s)
        return bm_error(id, -32602, "Invalid stream handle");
    const char *data = json_string_value(json_array_get(s, 0));
    size_t len = json_string_length(json_array_get(s, 0));
    size_t at = (size_t)json_integer_value(json_array_get(s, 1));
    json_int_t size = json_integer_value(json_object_get(p, "size"));
    size_t want = size > 0 ? ((size_t)size + 2) / 3 * 4 : len; /* whole base64 quanta */
    if (at > len)
        at = len;
    size_t n = len - at < want ? len - at : want;
    json_array_set_new(s, 1, json_integer((json_int_t)(at + n)));
    return bm_answer(id, json_pack("{s:s%, s:b, s:b}", "data", data + at, n, "base64Encoded", 1,
                                   "eof", at + n >= len));
}

enum bidi_outcome bm_print_command(struct bidi_map *m, long long id, const char *ctx,
                                   const char *method, json_t *p, json_t **out)
{
    if (!strcmp(method, "Page.printToPDF"))
        return print(m, id, ctx, p, out);
    if (!strcmp(method, "IO.read")) {
        *out = read_stream(m, id, p);
        return BIDI_ANSWER;
    }
    json_object_del(m->streams, bm_str(p, "handle") ?: "");
    *out = bm_answer(id, NULL);
    return BIDI_ANSWER;
}

json_t *bm_print_answer(struct bidi_map *m, long long id, json_t *r, bool stream)
{
    const char *data = bm_str(r, "data") ?: "";
    if (!stream)
        return bm_answer(id, json_pack("{s:s}", "data", data));
    char handle[48];
    snprintf(handle, sizeof handle, "bidi-pdf:%lld", id);
    json_object_set_new(m->streams, handle, json_pack("[s, i]", data, 0));
    return bm_answer(id, json_pack("{s:s}", "stream", handle));
}
