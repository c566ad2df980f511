/*
 * downloads.c - files a page downloads, saved into the session's own
 * directory (downloads/ under it), bounded, and reported.
 *
 * The supervisor's bridge sets the browser's download behaviour for the
 * session's browser context as the worker creates it (shared and dedicated
 * mode; supervisor/cdp_bridge.c: a worker never sends a command that hands
 * the browser a path). Chromium then saves each file as downloads/<guid> and
 * reports it on the page's session (Page.downloadWillBegin and
 * Page.downloadProgress, which the bridge routes like any page event). Here
 * a finished file is renamed to the name the page suggested (made safe,
 * made unique), and a download past the bounds is cancelled and its part
 * removed: DOWNLOADS_MAX files per session (a new session has room again),
 * DOWNLOAD_MAX_BYTES each. A
 * download never blocks a call: results say what began or ended since the
 * last one ("### Downloads"), browser_downloads lists them all.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "worker.h"

#define DOWNLOADS_MAX 64
#define DOWNLOAD_MAX_BYTES (256LL * 1024 * 1024)

struct download {
    char guid[64];
    char name[256]; /* the file's name in downloads/ once it finished */
    char url[1024];
    char state[16]; /* inProgress, completed, canceled */
    char why[96];   /* why it was cancelled by us, or "" */
    long long bytes;
    bool reported; /* its latest state is in a result already */
};

/* Refusals past DOWNLOADS_MAX, kept until a result reports them. */
#define REFUSALS_KEPT 8

static struct {
    struct download d[DOWNLOADS_MAX];
    int n;
    struct download refused[REFUSALS_KEPT];
    int nrefused, refused_dropped;
    bool managed;  /* the files land in our downloads/ (not extension or cdp mode) */
    bool dir_made; /* downloads/ exists */
} D;

/* downloads/ under the session's directory, made 0700. */
static int dir_of(struct session *w, char *out, size_t cap)
{
    if (!w->output_dir[0] || snprintf(out, cap, "%s/downloads", w->output_dir) >= (int)cap)
        return -1;
    if (!D.dir_made && output_make_dirs(out) < 0)
        return -1;
    D.dir_made = true; /* once: the browser writes into it from then on */
    return 0;
}

void downloads_configure(struct session *w, const char *how)
{
    (void)w;
    memset(&D, 0, sizeof D);
    D.managed = how && !strcmp(how, "bridge");
}

static struct download *find(const char *guid)
{
    for (int i = 0; i < D.n; i++)
        if (!strcmp(D.d[i].guid, guid))
            return &D.d[i];
    return NULL;
}

/* The suggested name as a file name of ours: no path, no control
 * characters, no leading dot, at most 200 bytes cut on a character
 * boundary, an invalid UTF-8 byte as "_"; "download" when empty. */
static void safe_name(const char *suggested, char *out, size_t cap)
{
    const char *base = suggested ? strrchr(suggested, '/') : NULL;
    base = base ? base + 1 : (suggested ? suggested : "");
    size_t len = strlen(base), fixed_len = 0;
    size_t max = cap - 1 < 200 ? cap - 1 : 200;
    /* "_" for an invalid byte: never longer than the name. */
    char *fixed = utf8_repaired(base, len, "_", &fixed_len);
    size_t n = 0;
    if (fixed) {
        size_t keep = utf8_cut(fixed, fixed_len, max);
        for (size_t i = 0; i < keep; i++) {
            unsigned char c = (unsigned char)fixed[i];
            bool bad = c < 0x20 || c == 0x7f || c == '\\' || (n == 0 && c == '.');
            out[n++] = bad ? '_' : (char)c;
        }
        free(fixed);
    }
    out[n] = 0;
    if (!n)
        snprintf(out, cap, "download");
}

/* Rename downloads/<guid> to downloads/<name>, or "<stem> (N)<ext>" when
 * that is taken; the chosen name goes to d->name. */
static void finish(struct session *w, struct download *d)
{
    char dir[PATH_MAX], from[PATH_MAX + 80], to[PATH_MAX + 300], stem[256];
    if (dir_of(w, dir, sizeof dir) < 0)
        return;
    snprintf(from, sizeof from, "%s/%s", dir, d->guid);
    snprintf(stem, sizeof stem, "%s", d->name);
    char *dot = strrchr(stem, '.');
    const char *ext = "";
    if (dot && dot != stem) {
        ext = d->name + (dot - stem);
        *dot = 0;
    }
    for (int k = 1; k < 1000; k++) {
        if (k == 1)
            snprintf(to, sizeof to, "%s/%s", dir, d->name);
        else
            snprintf(to, sizeof to, "%s/%s (%d)%s", dir, stem, k, ext);
        struct stat st;
        if (lstat(to, &st) == 0)
            continue;
        if (rename(from, to) == 0)
            snprintf(d->name, sizeof d->name, "%s", strrchr(to, '/') + 1);
        return;
    }
}

/* Cancel d in the browser and forget its part. */
static void cancel(struct session *w, struct download *d, const char *why)
{
    json_t *p = json_pack("{s:s, s:s}", "guid", d->guid, "browserContextId", w->context_id);
    cdp_send(w->cdp, NULL, "Browser.cancelDownload", p);
    json_decref(p);
    snprintf(d->state, sizeof d->state, "canceled");
    snprintf(d->why, sizeof d->why, "%s", why);
    d->reported = false;
    /* The browser removes its part as it cancels, but not always before
     * we look: both of its names go (in progress, and once complete). */
    char dir[PATH_MAX], part[PATH_MAX + 100];
    if (dir_of(w, dir, sizeof dir) == 0) {
        snprintf(part, sizeof part, "%s/%s", dir, d->guid);
        unlink(part);
        snprintf(part, sizeof part, "%s/%s.crdownload", dir, d->guid);
        unlink(part);
    }
    log_info("download cancelled: %s", why);
}

void downloads_on_event(struct session *w, const char *session, const char *method, json_t *params)
{
    (void)session;
    const char *guid = json_string_value(json_object_get(params, "guid"));
    if (!guid)
        return;
    if (!strcmp(method, "Page.downloadWillBegin")) {
        if (find(guid))
            return;
        if (D.n == DOWNLOADS_MAX) {
            if (!D.managed)
                return; /* the user's own browser keeps its downloads */
            /* No slot to keep it in: cancelled at once, said in the next result. */
            struct download spare = {0};
            snprintf(spare.guid, sizeof spare.guid, "%s", guid);
            safe_name(json_string_value(json_object_get(params, "suggestedFilename")), spare.name,
                      sizeof spare.name);
            snprintf(spare.url, sizeof spare.url, "%s",
                     json_string_value(json_object_get(params, "url")) ?: "");
            cancel(w, &spare, "the session has its maximum of 64 downloads");
            if (D.nrefused < REFUSALS_KEPT)
                D.refused[D.nrefused++] = spare;
            else
                D.refused_dropped++;
            return;
        }
        struct download *d = &D.d[D.n++];
        memset(d, 0, sizeof *d);
        snprintf(d->guid, sizeof d->guid, "%s", guid);
        safe_name(json_string_value(json_object_get(params, "suggestedFilename")), d->name,
                  sizeof d->name);
        snprintf(d->url, sizeof d->url, "%s",
                 json_string_value(json_object_get(params, "url")) ?: "");
        snprintf(d->state, sizeof d->state, "inProgress");
        return;
    }
    if (strcmp(method, "Page.downloadProgress") != 0)
        return;
    struct download *d = find(guid);
    if (!d || strcmp(d->state, "inProgress") != 0)
        return;
    d->bytes = json_integer_value(json_object_get(params, "receivedBytes"));
    const char *state = json_string_value(json_object_get(params, "state"));
    if (D.managed && d->bytes > DOWNLOAD_MAX_BYTES) {
        cancel(w, d, "larger than 256 MiB");
        return;
    }
    if (!state || !strcmp(state, "inProgress"))
        return;
    snprintf(d->state, sizeof d->state, "%s", state);
    d->reported = false;
    if (D.managed && !strcmp(state, "completed"))
        finish(w, d);
}

/* One download as results and the listing show it. */
static json_t *describe(struct session *w, const struct download *d)
{
    json_t *o = json_pack("{s:s, s:s, s:I, s:s}", "name", d->name, "state", d->state, "size",
                          (json_int_t)d->bytes, "url", d->url);
    char dir[PATH_MAX], path[PATH_MAX + 300];
    if (D.managed && !strcmp(d->state, "completed") && dir_of(w, dir, sizeof dir) == 0) {
        snprintf(path, sizeof path, "%s/%s", dir, d->name);
        json_object_set_new(o, "path", json_string(path));
    }
    if (d->why[0])
        json_object_set_new(o, "reason", json_string(d->why));
    return o;
}

/* d described (describe) into list, and as a line of text. */
static void add(json_t *list, char *text, size_t cap, size_t *used, struct session *w,
                const struct download *d)
{
    json_t *o = describe(w, d);
    const char *path = json_string_value(json_object_get(o, "path"));
    if (*used < cap)
        *used += (size_t)snprintf(text + *used, cap - *used, "\n- %s (%lld bytes): %s%s%s%s%s",
                                  d->name, d->bytes, d->state, path ? ", saved to " : "",
                                  path ? path : "", d->why[0] ? ": " : "", d->why);
    json_array_append_new(list, o);
}

void downloads_notes(struct session *w, json_t *content, json_t *structured)
{
    json_t *list = NULL;
    char text[4096];
    size_t used = 0;
    for (int i = 0; i < D.n; i++) {
        struct download *d = &D.d[i];
        if (d->reported)
            continue;
        if (!list) {
            list = json_array();
            used = (size_t)snprintf(text, sizeof text, "### Downloads");
        }
        add(list, text, sizeof text, &used, w, d);
        /* Reported once in progress, once more when it ends. */
        d->reported = true;
    }
    for (int i = 0; i < D.nrefused; i++) {
        if (!list) {
            list = json_array();
            used = (size_t)snprintf(text, sizeof text, "### Downloads");
        }
        add(list, text, sizeof text, &used, w, &D.refused[i]);
    }
    if (D.refused_dropped && used < sizeof text)
        used += (size_t)snprintf(text + used, sizeof text - used, "\n- ... and %d more cancelled",
                                 D.refused_dropped);
    D.nrefused = D.refused_dropped = 0;
    if (!list)
        return;
    json_array_append_new(content, json_pack("{s:s, s:s}", "type", "text", "text", text));
    json_object_set_new(structured, "downloads", list);
}

json_t *tool_downloads(struct session *w, json_t *args)
{
    (void)args;
    json_t *list = json_array();
    char text[16384];
    size_t used = (size_t)snprintf(
        text, sizeof text, D.n ? "Downloads of this session:" : "No downloads in this session.");
    for (int i = 0; i < D.n; i++) {
        add(list, text, sizeof text, &used, w, &D.d[i]);
        D.d[i].reported = true;
    }
    json_t *out = json_pack("{s:o}", "downloads", list);
    return tool_ok(w, text, out);
}
