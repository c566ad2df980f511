/* pdf.c - browser_pdf_save: Page.printToPDF to a file under the output dir.
 * The PDF comes as a stream read in chunks (IO.read), so its size is
 * checked as it arrives and a page that prints to hundreds of megabytes
 * costs at most MAX_PDF_BYTES of memory before it is refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base64.h"
#include "worker.h"

/* The largest PDF saved (docs/limits.md). */
#define MAX_PDF_BYTES (64u * 1024 * 1024)
#define CHUNK_BYTES (1024 * 1024)

/* Read the stream into *buf (malloc'd, *len bytes). 0, or -1 with w->call.err. */
static int read_stream(struct session *w, const char *handle, unsigned char **buf, size_t *len)
{
    size_t cap = 0;
    *buf = NULL;
    *len = 0;
    for (;;) {
        json_t *r;
        if (page_call(w, "IO.read", json_pack("{s:s, s:i}", "handle", handle, "size", CHUNK_BYTES),
                      &r) < 0)
            return -1;
        json_t *data = json_object_get(r, "data");
        size_t n = json_string_length(data);
        bool b64 = json_is_true(json_object_get(r, "base64Encoded"));
        size_t need = *len + (b64 ? n / 4 * 3 + 3 : n);
        if (need > MAX_PDF_BYTES + 3) {
            json_decref(r);
            return fail_call(w, TV_NOT_SUPPORTED,
                             "Print less: a shorter page, or browser_get_content for its text.",
                             "the PDF is larger than %u MiB, the most browser_pdf_save writes "
                             "(docs/limits.md)",
                             MAX_PDF_BYTES >> 20);
        }
        if (need > cap) {
            cap = need * 2 < MAX_PDF_BYTES + 3 ? need * 2 : MAX_PDF_BYTES + 3;
            unsigned char *p = realloc(*buf, cap);
            if (!p)
                abort();
            *buf = p;
        }
        if (b64) {
            long got = base64_decode(json_string_value(data), n, *buf + *len);
            if (got < 0) {
                json_decref(r);
                return fail_call(w, TV_BROWSER_ERROR, NULL,
                                 "the browser sent PDF data that is not base64");
            }
            *len += (size_t)got;
        } else {
            memcpy(*buf + *len, json_string_value(data), n);
            *len += n;
        }
        bool eof = json_is_true(json_object_get(r, "eof"));
        json_decref(r);
        if (eof || n == 0)
            return 0;
    }
}

json_t *tool_pdf_save(struct session *w, json_t *args)
{
    char name[64];
    const char *filename = arg_str(args, "filename", NULL);
    if (!filename) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        struct tm tm;
        gmtime_r(&ts.tv_sec, &tm);
        char stamp[32];
        strftime(stamp, sizeof stamp, "%Y-%m-%dT%H-%M-%S", &tm);
        snprintf(name, sizeof name, "page-%s-%03ldZ.pdf", stamp, ts.tv_nsec / 1000000);
        filename = name;
    }
    json_t *r;
    if (page_call(w, "Page.printToPDF",
                  json_pack("{s:s, s:b}", "transferMode", "ReturnAsStream", "printBackground", 1),
                  &r) < 0)
        return tool_fail(w);
    char handle[128];
    snprintf(handle, sizeof handle, "%s", json_string_value(json_object_get(r, "stream")) ?: "");
    json_decref(r);
    if (!handle[0]) {
        fail_call(w, TV_BROWSER_ERROR, NULL, "the browser returned no PDF stream");
        return tool_fail(w);
    }
    unsigned char *pdf;
    size_t len;
    int rc = read_stream(w, handle, &pdf, &len);
    /* Best effort, also after a failure: the browser holds the stream. */
    json_t *p = json_pack("{s:s}", "handle", handle);
    cdp_send(w->cdp, w->page->cdp_session, "IO.close", p);
    json_decref(p);
    char path[PATH_MAX + 256];
    if (rc == 0 && (len < 5 || memcmp(pdf, "%PDF-", 5) != 0))
        rc = fail_call(w, TV_BROWSER_ERROR, NULL, "the browser's output is not a PDF");
    if (rc == 0)
        rc = output_write(w, filename, (const char *)pdf, len, path, sizeof path);
    free(pdf);
    if (rc < 0)
        return tool_fail(w);
    page_refresh_info(w);
    json_t *out = json_pack("{s:s, s:I}", "file", path, "bytes", (json_int_t)len);
    add_page(w, out);
    char text[PATH_MAX + 2900];
    snprintf(text, sizeof text, "Saved %s as PDF to %s (%zu bytes)", w->page->url, path, len);
    return tool_ok(w, text, out);
}
