/*
 * respond.c - responses that carry snapshot text: browser_snapshot,
 * browser_find and the snapshot after an action (none, full or diff).
 *
 * Each response is built to fit --max-output-chars: the text is cut at a line
 * break inside its ```yaml block, and the block ends with a marker saying how
 * much was left out and how to get it. tool_ok's generic cut (result.c) is
 * only a safety net for them. `filename` sends the whole text to a file
 * under the output dir instead (output.c).
 *
 * Diffs compare with the last whole-page snapshot the agent was shown in this
 * session (browser_snapshot without target/depth/interactive, or an action's
 * full or diff snapshot). Scoped snapshots and browser_find show only part of
 * the page, so they do not replace it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

/* Left for notes tool_ok adds (dialogs, console) and the block's fences. */
#define RESERVE 700

/* Characters still free in the response after what b holds. */
static size_t room_after(struct session *w, const struct sb *b)
{
    size_t used = utf8_chars(b->p ? b->p : "", b->len) + RESERVE;
    return used < max_output(w) ? max_output(w) - used : 0;
}

/* Budgets, in bytes, of the lean views an action answers with by default
 * (snaplean.c): the whole page of a new document, and a diff. A view still
 * over its budget after folding is cut at a quarter more, with a marker.
 * The page's 1,200 bytes show about as many elements as 2,000 did before
 * snapquiet.c left out the lines that say nothing; on the tuned task corpus
 * (bench/tokens.sh) 1,500 and 1,000 cost no extra calls either, 1,200 keeps
 * more of the page in view than 1,000 for almost the same bytes read. */
#define LEAN_PAGE_BUDGET 1200
#define LEAN_DIFF_BUDGET 1500

static size_t lean_cut(struct session *w, const struct sb *b, size_t budget)
{
    size_t room = room_after(w, b), cut = budget + budget / 4;
    return cut < room ? cut : room;
}

static size_t newlines(const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += s[i] == '\n';
    return k;
}

/* Append label and text in a yaml fence, text cut to budget characters with
 * a marker saying what is missing and how to get it (how). Returns the
 * bytes of text kept; sets *truncated when it cut. */
static size_t add_block(struct sb *b, const char *label, const char *text, size_t budget,
                        bool *truncated, const char *how)
{
    size_t len = strlen(text), keep = cut_text(text, len, budget);
    sb_printf(b, "%s\n```yaml\n", label);
    sb_add(b, text, keep);
    if (keep && text[keep - 1] != '\n')
        sb_add(b, "\n", 1);
    if (keep < len) {
        *truncated = true;
        sb_printf(b, "[truncated: %zu more characters not shown; %zu of %zu lines above. %s]\n",
                  utf8_chars(text + keep, len - keep), newlines(text, keep), count_lines(text),
                  how);
    }
    sb_add(b, "```\n", 4);
    return keep;
}

/* tool_ok with b's text, without its last line break. */
static json_t *finish(struct session *w, struct sb *b, json_t *out)
{
    while (b->len && b->p[b->len - 1] == '\n')
        b->p[--b->len] = 0;
    json_t *res = tool_ok(w, b->p ? b->p : "", out);
    free(b->p);
    return res;
}

/* A hash of the page's URL and title, as a response prints them. */
static uint64_t page_hash(const struct session *w)
{
    uint64_t h = fnv1a(FNV1A_INIT, w->page->url, strlen(w->page->url));
    return fnv1a(fnv1a(h, "\n", 1), w->page->title, strlen(w->page->title));
}

void page_shown(struct session *w)
{
    w->shown_page = page_hash(w);
}

static void remember_snapshot(struct session *w, const char *text)
{
    free(w->page->last_snapshot);
    free(w->page->last_snapshot_url);
    w->page->last_snapshot = strdup(text);
    w->page->last_snapshot_url = strdup(w->page->url);
    if (!w->page->last_snapshot || !w->page->last_snapshot_url)
        abort();
    w->page->last_snapshot_ctx = w->page->util_ctx;
}

/* respond_text's work; page_always: the URL and title head the text even
 * when the agent has read them (browser_snapshot, as Playwright's does). */
static json_t *respond_lines(struct session *w, const char *label, const char *text, json_t *args,
                             json_t *out, bool page_always)
{
    struct sb b = {0};
    if (page_always || page_hash(w) != w->shown_page)
        sb_printf(&b, "- Page URL: %s\n- Page Title: %s\n", w->page->url, w->page->title);
    page_shown(w);
    const char *filename = arg_str(args, "filename", NULL);
    if (filename) {
        char path[PATH_MAX + 256];
        if (output_write(w, filename, text, strlen(text), path, sizeof path) < 0) {
            free(b.p);
            json_decref(out);
            return tool_fail(w);
        }
        sb_printf(&b, "%s saved to %s (%zu lines, %zu characters)", label, path, count_lines(text),
                  utf8_chars(text, strlen(text)));
        json_object_set_new(out, "file", json_string(path));
    } else {
        size_t budget = room_after(w, &b);
        long long max = arg_int(args, "maxChars", 0);
        if (max > 0 && (size_t)max < budget)
            budget = (size_t)max;
        bool truncated = false;
        size_t keep = add_block(&b, label, text, budget, &truncated,
                                "Pass filename to save all of it to a file, or narrow it with "
                                "target, depth or interactive (or use browser_find)");
        json_object_set_new(out, "snapshot", json_stringn(text, keep));
        json_object_set_new(out, "truncated", json_boolean(truncated));
    }
    add_page(w, out);
    return finish(w, &b, out);
}

json_t *respond_snapshot(struct session *w, const char *text, json_t *args, bool full_page)
{
    page_refresh_info(w);
    if (full_page)
        remember_snapshot(w, text);
    return respond_lines(w, "- Page Snapshot:", text, args, json_object(), true);
}

json_t *respond_text(struct session *w, const char *label, const char *text, json_t *args, json_t *out)
{
    return respond_lines(w, label, text, args, out, false);
}

/* Whether url and the URL of the last snapshot name one document: equal but
 * for the fragment (a jump to #section keeps the document and its refs). */
static bool same_document_url(const char *a, const char *b)
{
    size_t na = strcspn(a, "#"), nb = strcspn(b, "#");
    return na == nb && strncmp(a, b, na) == 0;
}

/* The snapshot part of an action's response, per mode. full: the page's
 * snapshot as browser_snapshot shows it. diff (the default): what changed
 * since the last whole snapshot (labelled "diff", then the tops of what is
 * gone), or the whole page when the document is new; either in the lean view
 * (snaplean.c), labelled "lean" when that left anything out. Labels are
 * short because every action repeats them; the server's instructions say
 * what they mean. */
static void action_snapshot(struct session *w, const char *mode, struct sb *b, json_t *out)
{
    char *cur;
    if (take_snapshot(w, NULL, &cur) < 0) {
        /* The action itself succeeded; say why the snapshot is missing. */
        sb_printf(b, "- Page Snapshot: unavailable (%s)\n", w->call.errmsg);
        w->call.err = TV_OK;
        w->call.errmsg[0] = w->call.errhint[0] = 0;
        return;
    }
    const char *how = "Call browser_snapshot (with filename, target, depth or interactive) to "
                      "see the rest, or browser_find";
    bool truncated = false, diff = strcmp(mode, "diff") == 0;
    bool same_doc = w->page->last_snapshot && w->page->last_snapshot_ctx == w->page->util_ctx &&
                    same_document_url(w->page->last_snapshot_url, w->page->url);
    if (diff && same_doc) {
        size_t changed, removed;
        char *gone_all;
        char *d_all = snapshot_diff(w->page->last_snapshot, cur, &gone_all, &changed, &removed);
        char *d = snapshot_lean(d_all, LEAN_DIFF_BUDGET, NULL);
        char *gone = snapshot_lean(gone_all, LEAN_DIFF_BUDGET / 2, NULL);
        size_t keep = 0;
        if (!*d && !*gone) {
            sb_printf(b, "- Page Snapshot: unchanged since the last snapshot\n");
        } else {
            char label[200];
            snprintf(label, sizeof label, "- Page Snapshot (diff: %zu changed lines%s):", changed,
                     strcmp(d, d_all) ? ", lean" : "");
            keep = add_block(b, label, d, lean_cut(w, b, LEAN_DIFF_BUDGET), &truncated, how);
            if (*gone)
                add_block(b, "- Gone:", gone, lean_cut(w, b, LEAN_DIFF_BUDGET / 2), &truncated,
                          how);
        }
        json_object_set_new(out, "snapshot", json_stringn(d, keep));
        free(d);
        free(gone);
        free(d_all);
        free(gone_all);
    } else {
        char *view = diff ? snapshot_lean(cur, LEAN_PAGE_BUDGET, NULL) : strdup(cur), label[200];
        if (!view)
            abort();
        snprintf(label, sizeof label, "- Page Snapshot%s:",
                 strcmp(view, cur) ? " (lean: browser_snapshot shows all)" : "");
        size_t keep =
            add_block(b, label, view, diff ? lean_cut(w, b, LEAN_PAGE_BUDGET) : room_after(w, b),
                      &truncated, how);
        json_object_set_new(out, "snapshot", json_stringn(view, keep));
        free(view);
        diff = false;
    }
    json_object_set_new(out, "diff", json_boolean(diff));
    json_object_set_new(out, "truncated", json_boolean(truncated));
    remember_snapshot(w, cur);
    free(cur);
}

/* The response of an action: summary, the page, and its snapshot per the
 * call's `snapshot` argument (else the server's --snapshot-mode); out (stolen)
 * gets the structured fields. */
static json_t *action_response(struct session *w, const char *summary, json_t *out)
{
    page_refresh_info(w);
    struct sb b = {0};
    sb_printf(&b, "%s\n", summary);
    /* The agent has read this page's URL and title already unless they
     * changed; structuredContent carries them in every result. */
    uint64_t h = page_hash(w);
    if (h != w->shown_page)
        sb_printf(&b, "Page URL: %s\nPage Title: %s\n", w->page->url, w->page->title);
    w->shown_page = h;
    const char *mode =
        arg_str(w->call.args, "snapshot", w->snapshot_mode[0] ? w->snapshot_mode : "diff");
    if (strcmp(mode, "none") != 0)
        action_snapshot(w, mode, &b, out);
    add_page(w, out);
    return finish(w, &b, out);
}

json_t *action_result(struct session *w, const char *verb, json_t *target_info)
{
    json_t *ref = json_object_get(target_info, "ref");
    json_t *out = json_object();
    if (json_is_string(ref))
        json_object_set(out, "ref", ref);
    char what[400], line[1100];
    describe_element(target_info, what, sizeof what);
    snprintf(line, sizeof line, "%s %s", verb, what);
    return action_response(w, line, out);
}

json_t *page_action_result(struct session *w, const char *summary, json_t *out)
{
    return action_response(w, summary, out ? out : json_object());
}

void describe_element(json_t *info, char *buf, size_t len)
{
    const char *ref = json_string_value(json_object_get(info, "ref"));
    const char *role = json_string_value(json_object_get(info, "role"));
    const char *name = json_string_value(json_object_get(info, "name"));
    const char *text = json_string_value(json_object_get(info, "text"));
    char refpart[80] = "";
    if (ref)
        snprintf(refpart, sizeof refpart, " [ref=%.60s]", ref);
    /* A nameless element (a clickable generic) is told by its text, as its
     * snapshot line shows it. */
    if ((!name || !*name) && text && *text) {
        size_t cut = strlen(text);
        if (cut > 60)
            for (cut = 60; cut > 0 && ((unsigned char)text[cut] & 0xC0) == 0x80; cut--)
                ; /* not inside a UTF-8 sequence */
        snprintf(buf, len, "%s%s: \"%.*s%s\"", role ? role : "element", refpart, (int)cut, text,
                 text[cut] ? "…" : "");
    } else if (!name || !*name)
        snprintf(buf, len, "%s%s", role ? role : "element", refpart);
    else
        snprintf(buf, len, "%s \"%.200s\"%s", role ? role : "element", name, refpart);
}
