/*
 * worker.h - state of the one browser session a worker process serves, and
 * the helpers every tool uses.
 *
 * A worker runs one call at a time (the supervisor queues the rest), so
 * tools are plain sequential C: each CDP command is a function call that
 * returns when the browser answers, the call's deadline passes, or the
 * supervisor cancels (see cdp.h). A helper that fails records why in
 * w->call.err (code + message) and returns -1; the tool then returns
 * tool_fail(w), which turns that record into the error result.
 */
#ifndef TABVISOR_WORKER_H
#define TABVISOR_WORKER_H

#include <stdbool.h>
#include <stdint.h>
#include <limits.h>
#include <jansson.h>

#include "tool_ids.h"

#include "cdp.h"
#include "channel.h"
#include "errors.h"
#include "utf8.h"
#include "snaptext.h"
#include "strbuf.h"
#include "hooks.h"

#define UTIL_WORLD "tabvisor" /* name of our isolated world */

/* What a running call carries through every helper: its id, arguments,
 * deadline and cancel, and the failure of the last helper that returned -1
 * (fail_call). A best-effort sub-call runs with a record of its own
 * (subcall_begin/subcall_end). */
struct call_record {
    uint64_t id;        /* 0 between calls */
    json_t *args;       /* the call's arguments (borrowed; NULL between calls) */
    long long deadline; /* CLOCK_MONOTONIC ms; 0: none */
    bool cancelled;
    enum tv_err err;
    char errmsg[1024];
    char errhint[256];
};

/* One tab's page: everything that belongs to a page and not to the session
 * (its target and CDP session, frames, navigation state, URL and title,
 * the last snapshot, dialog, settling, console and network logs). Each tab
 * owns one (tabs.c); w->page points at the current tab's, and an event of a
 * background tab runs with w->page pointing at that tab's for its length. */
struct tab_page {
    char target_id[64];  /* the page target; also its main frame id */
    char cdp_session[64];
    /* The isolated world of the main frame's current document. */
    int util_ctx;
    bool util_installed;
    long long next_ref; /* ref numbers continue across documents */
    /* Every frame of the page and its isolated world (frames.h). */
    struct frame_table *frames;
    /* Main-frame navigation tracking, fed by CDP events. */
    char loader_id[64];
    bool seen_dcl, seen_load, seen_idle;
    bool nav_started; /* a new document started loading in the main frame */
    bool crashed;     /* this page's renderer died (Inspector.targetCrashed) */

    /* Last known page, for error results when the page cannot answer. */
    char url[2048];
    char title[512];
    /* The last full-page snapshot the agent saw, which `snapshot: diff`
     * compares to (respond.c). */
    char *last_snapshot;     /* malloc'd, or NULL */
    int last_snapshot_ctx;   /* util_ctx it was taken in: another one means a new document */
    char *last_snapshot_url; /* and the URL (context ids restart in a new renderer) */
    /* The main frame's last snapshot saw <a> elements without href or
     * tables: the next one first asks the main world which have listeners
     * (snapshot_take.c). */
    bool probe_listeners;
    /* The JavaScript dialog the page is showing (dialogs.c). */
    struct {
        bool open;        /* until answered: the page is blocked */
        bool answering;   /* browser_handle_dialog's own command may pass */
        char session[64]; /* CDP session that showed it ("" = the page's; an
                           * out-of-process iframe's dialog comes on its own) */
        char type[16];    /* alert, confirm, prompt, beforeunload */
        char message[1024];
        char default_prompt[512];
    } dialog;
    /* What the current action set going (settle.c). */
    struct {
        bool marked;        /* settle_mark() ran; events count from then */
        bool nav_requested; /* the main frame was asked to navigate */
        bool nav_underway;  /* ... and that navigation has started loading */
        json_t *requests;   /* requestId -> true: requests still in flight */
        long long started;  /* requests started since the mark */
    } settle;
    /* Console errors since the last response (console.c). */
    struct {
        int count;
        json_t *messages; /* the first few, cut short */
        json_t *log;      /* every message of the page (tab), bounded (tools/console_log.c) */
        size_t log_dropped, log_read; /* dropped from the front; read by the last call */
    } console;
    /* Requests of the current page (tools/network_log.c). */
    struct {
        json_t *list;  /* array of request records, bounded */
        json_t *index; /* requestId -> position in list */
        size_t dropped;
        long long last_activity;
    } netlog;
};

struct session {
    struct channel *ch;
    struct cdp *cdp;
    /* Extension mode: the relay transport (owned by cdp), and its break count
     * when the running call started (a break during a call fails it with
     * EXTENSION_NOT_CONNECTED). NULL in shared mode. */
    struct cdp_transport *relay;
    unsigned relay_breaks;
    /* --browser firefox: CDP mapped to WebDriver BiDi under us (cdp/bidi_map.h). */
    bool firefox;
    /* Firefox: the frame (its id) whose field the last click or typing
     * focused; key input goes to it (key_call). "" for the page. */
    char focus_frame[64];

    char session_id[64]; /* tabvisor session (for messages) */
    char context_id[64]; /* CDP browserContextId */
    char output_dir[PATH_MAX];
    char relay_proof[65];  /* extension mode: shown to the relay in relay-hello */
    char downloads_how[8]; /* "bridge" or "" (downloads.c) */
    int viewport_w, viewport_h;

    /* Frame numbers (f<K>e<N> refs) are session-wide, so a ref names one
     * frame of one tab. */
    int next_frame_k;
    /* The session's tabs (tabs.h), and the current one's page: a pointer
     * into the list, never a copy (tabs_init sets it first thing). */
    struct tab_list *tabs;
    struct tab_page *page;


    /* Responses (result.c, output.c, snapdiff.c): the bound on every
     * result's text and the default `snapshot` of action tools. */
    long long max_output_chars;
    char snapshot_mode[8]; /* none | full | diff */
    /* Hash of the URL and title an action's response last printed: the next
     * one prints them only when they changed (respond.c). */
    uint64_t shown_page;
    /* The file chooser the page opened, pending (tools/upload.c). */
    struct {
        bool open;
        bool multiple;
        long long backend_node; /* its <input type=file> */
        char session[64];       /* CDP session that opened it ("" = the page's) */
    } chooser;
    /* Origins whose localStorage a storage state saves (tools/storage_state.c):
     * origin -> true, for every http(s) origin a frame showed or a state loaded. */
    /* The session's state for a restart (session_state.c): a call ran since
     * the last capture; the last capture; the JSON last sent (MSG_STATE). */
    bool state_dirty;
    long long state_due;  /* CLOCK_MONOTONIC ms when the capture may start */
    bool state_off;       /* --no-session-restore */
    bool state_capturing; /* a capture runs: a call that comes interrupts it */
    json_t *state_last;
    char *state_sent;
    json_t *storage_origins;
    char storage_helper[64]; /* CDP session of its hidden page while one is open */

    /* The worker is told to stop (the call being run is w->call). */
    bool shutdown;
    /* The session cannot go on (no context, no page could be opened): the
     * worker exits and the supervisor starts a fresh one. A page crash alone
     * is not this: tabs_replace_crashed() carries on in the same context. */
    bool broken;
    bool out_of_memory; /* a call failed for lack of memory: the worker leaves after it */
    /* A page crash handled between calls, for the next result to mention. */
    char crash_note[700];
    bool crash_told;      /* a result already said the crashed tab is reloaded */
    bool reload_unproven; /* a crashed tab was reloaded and no call has worked since */

    struct call_record call;
};

/* Firefox only (firefox_page.c): the page-side helpers CDP has and BiDi
 * does not, installed in every new document's main world before its own
 * scripts: a record of click listeners, file choosers held for
 * browser_file_upload. With or without waiting. */
void firefox_page_install_send(struct session *w, const char *session);
int firefox_page_install(struct session *w);

/* Why the tool cannot run on Firefox (browser_support.c), or NULL. */
const char *firefox_refusal(const char *tool);

/* What the agent does after its page crashed (tabs_replace_crashed): the
 * hint of every PAGE_CRASHED failure. */
#define PAGE_CRASHED_HINT                                                                          \
    "The session's cookies, storage and other tabs are kept; the crashed tab was replaced by a "   \
    "fresh one: navigate again."

/* A best-effort sub-call inside a call (the page's title for an error
 * result, a background tab's, a close that must run even after the call
 * failed): subcall_begin keeps the running call's record aside and gives
 * the sub-call its own, whose deadline is cap_ms from now, and
 * - SUBCALL_WITHIN: no later than the call's own (a passed one stays passed);
 * - SUBCALL_OWN: whatever the call's, with its cancel cleared (it must run).
 * subcall_end puts the call's record back (a cancel that came meanwhile
 * stays): what the sub-call failed with is not the call's. page.c. */
enum subcall_kind { SUBCALL_WITHIN, SUBCALL_OWN };
struct subcall {
    struct call_record saved;
};
void subcall_begin(struct session *w, struct subcall *s, long long cap_ms, enum subcall_kind kind);
void subcall_end(struct session *w, const struct subcall *s);

/* Record a failure (always returns -1 for `return fail_call(...)`). */
int fail_call(struct session *w, enum tv_err code, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Record the failure a non-OK cdp status (CDP_TIMEOUT, ...) means for the
 * call: TIMEOUT, MODAL_STATE (a dialog blocks the page), CANCELLED,
 * BROWSER_CRASHED or BROWSER_ERROR; what names the command or wait. -1. */
int fail_cdp(struct session *w, int st, const char *what);
/* After a call timed out: if the current page's main thread still does not
 * answer within 300 ms (a script in an endless loop), end that script with
 * Runtime.terminateExecution so the session stays usable. */
void page_unstick(struct session *w);
/* Extension mode: the link to the user's browser broke since the running
 * call started (its waits end; it fails with EXTENSION_NOT_CONNECTED). */
bool relay_broke(struct session *w);

/* Key input (Input.dispatchKeyEvent, Input.insertText; params stolen): on
 * the page's session, or on Firefox on the session of the frame last
 * focused (focus_in_frame): Firefox passes no input given to the page on
 * into a frame in another process, where Chromium routes it to the
 * focused frame itself. */
int key_call(struct session *w, const char *method, json_t *params);
/* A click or typing put focus into frame k (0: the page), as far as key
 * input is concerned. */
void focus_in_frame(struct session *w, int k);

/* CDP command on the page session with the call's deadline; maps transport
 * failures to TIMEOUT / CANCELLED / BROWSER_CRASHED / BROWSER_ERROR. params
 * is stolen (may be NULL); *result (may be NULL) is owned by the caller. */
int page_call(struct session *w, const char *method, json_t *params, json_t **result);
/* The same on any CDP session of this page (NULL or "" = the page's). */
int session_call(struct session *w, const char *session, const char *method, json_t *params,
                 json_t **result);
/* The same on the browser target (Target.* commands). */
int browser_call(struct session *w, const char *method, json_t *params, json_t **result);

/* Evaluate expr in our isolated world (installed on demand) and return its
 * JSON value in *value (new reference; JSON null for undefined). Tries again
 * (up to twice) when navigation destroyed the world mid-call. */
int util_eval(struct session *w, const char *expr, json_t **value);

/* The message of a CDP exceptionDetails object (the exception's
 * description, which carries the stack, else its text), or NULL. */
const char *exception_text(json_t *details);

/* Refresh w->page->url and w->page->title from the page (best effort, short deadline). */
void page_refresh_info(struct session *w);
/* Wait until the main frame's new document reached DOMContentLoaded, if a
 * navigation started since nav_reset(); capped by cap_ms and the deadline. */
void nav_reset(struct session *w);
int nav_wait(struct session *w, const char *until, long long cap_ms);
/* Let the page react to input (settle.c): a navigation it requested (to
 * DOMContentLoaded), requests it started, short timers and animation frames
 * it scheduled, then a DOM-quiet window; each capped, no fixed sleep. Returns
 * 0 at once when a dialog opens. -1 only for the call's own end (timeout,
 * cancel, crash). settle_mark() (called by nav_reset) marks the start of an
 * action; settle_install() instruments the main world (once per session). */
int settle(struct session *w);
void settle_mark(struct session *w);
int settle_install(struct session *w);
/* The same on another page's session, without waiting (tabs.c). */
void settle_install_send(struct session *w, const char *session);
/* The same as an attach hook (hooks.h): a new tab's page. */
void settle_attach(struct session *w, const char *session, enum attach_kind kind);
void settle_on_event(struct session *w, const char *session, const char *method, json_t *params);

/* --- modal state (dialogs.c) and console errors (console.c) --- */
/* cdp_set_abort hook: nonzero while a dialog blocks the page during a call. */
int dialog_blocks(void *ud);
/* For a CDP wait that ended because a dialog opened: records MODAL_STATE and
 * returns 1; 0 when no dialog explains the interruption. */
int dialog_fail(struct session *w);
/* True when method is input whose answer a dialog is holding back: the input
 * reached the page, so the action counts as done. */
bool dialog_cut_input(struct session *w, const char *method);
/* Append the modal-state and console-error notes to a response (content
 * array + structured object) and reset the console tally. */
void page_state_notes(struct session *w, json_t *content, json_t *structured);
void console_notes(struct session *w, json_t *content, json_t *structured);
void console_on_event(struct session *w, const char *session, const char *method, json_t *params);

/* downloads.c: files pages download, into the session's downloads/. how:
 * "bridge" (the supervisor's bridge set the browser's behaviour: shared and
 * dedicated mode), else not managed (cdp and extension mode). */
void downloads_configure(struct session *w, const char *how);
void downloads_on_event(struct session *w, const char *session, const char *method, json_t *params);
/* "### Downloads": what began or ended since the last result. */
void downloads_notes(struct session *w, json_t *content, json_t *structured);
/* console.error("a", 1, {..}): the arguments' values or descriptions of a
 * Runtime.consoleAPICalled event joined by spaces, as the console would
 * print them (roughly), cut to size bytes. */
void console_args_text(json_t *params, char *text, size_t size);

/* CDP event sink (set up by main.c): events.c fans each event out to the
 * modules below. */
void page_on_event(void *ud, const char *session, const char *method, json_t *params);
void nav_on_event(struct session *w, const char *session, const char *method, json_t *params);
void dialogs_on_event(struct session *w, const char *session, const char *method, json_t *params);
void frames_on_event(struct session *w, const char *session, const char *method, json_t *params);

/* --- targets (target.c) --- */
/* One attempt (the n-th, from 0) of something retried until it holds: 1
 * done (*out set), 0 not yet (w->call.err says why), -1 failed for good. */
typedef int (*retry_attempt_fn)(struct session *w, void *ud, json_t **out, int n);
/* Run attempt until it is done, fails for good, or the deadline passes,
 * backing off from 10 to 100 ms between attempts while events flow. At the
 * deadline the last attempt's reason is the error (with hint). Returns the
 * value or NULL with w->call.err set. */
json_t *retry_until(struct session *w, retry_attempt_fn attempt, void *ud, const char *hint);
/* Run the engine's fn(target, opts) ("actionPoint", "prepareTyping") until it
 * succeeds, fails for good, or the deadline passes; returns the engine's
 * success value ({x, y, ref, role, name, ...}) or NULL with w->call.err set.
 * element is the caller's description, used in messages (may be NULL).
 * On Firefox a page without focus is given it first (page_take_focus). */
json_t *until_actionable(struct session *w, const char *fn, const char *target, json_t *opts,
                         const char *element);
/* On Firefox, make the session's window the focused one (before input to a
 * page that reported it has no focus); best effort, w->call.err untouched. */
void page_take_focus(struct session *w);
/* Before keys with no target: on Firefox, page_take_focus when the page
 * reports it has no focus; best effort. */
void page_focus_for_keys(struct session *w);
/* Copy an engine {code, message, retry, candidates} error into w->call.err;
 * returns 1 when the engine says the condition may pass later. */
int page_error(struct session *w, json_t *err, const char *element);

/* --- results (new references) --- */
json_t *tool_ok(struct session *w, const char *text, json_t *structured /* stolen */);
/* tool_ok for text that is the start of something missing characters
 * longer (cut before it reached us): the text says so and how much. */
json_t *tool_ok_partial(struct session *w, const char *text, size_t missing, json_t *structured);
json_t *tool_fail(struct session *w);
/* Send result (borrowed) as call id's MSG_RESULT; one too large for the
 * protocol is replaced by a NOT_SUPPORTED error result. channel_send's
 * return of what was sent. */
int send_result(struct session *w, uint64_t id, json_t *result);
/* Add {url,title} of the page to structured (for action results). */
void add_page(struct session *w, json_t *structured);
/* The result of an action tool: "<verb> <role> "<name>" [ref=..]" plus the
 * page; target_info is the engine's description of the element (borrowed). */
json_t *action_result(struct session *w, const char *verb, json_t *target_info);
/* The same for an action on the page rather than one element: summary (one
 * line), the page, the snapshot; out (stolen, may be NULL) gets the rest. */
json_t *page_action_result(struct session *w, const char *summary, json_t *out);

/* --- responses (result.c, respond.c, output.c, snapdiff.c) --- */
/* The bound on a result's text in characters (--max-output-chars). */
size_t max_output(const struct session *w);
/* Take a snapshot of the page with the engine's opts (stolen; NULL for the
 * whole page); *text is malloc'd. Returns 0, or -1 with w->call.err set. */
int take_snapshot(struct session *w, json_t *opts, char **text);
/* The browser_snapshot response for text: filename (write everything under
 * the output dir) or the text bounded by maxChars and --max-output-chars.
 * full_page: text is an unscoped snapshot, kept as the base for diffs. */
json_t *respond_snapshot(struct session *w, const char *text, json_t *args, bool full_page);
/* The same for any YAML-ish text under a label ("- Page Snapshot:"): with
 * args' filename the text goes to that file, else into the response, cut to
 * fit; out (stolen) gets snapshot/truncated/file and the page. The page's URL
 * and title head the text only when they changed since the agent last read
 * them (structuredContent carries them always). */
json_t *respond_text(struct session *w, const char *label, const char *text, json_t *args,
                     json_t *out);
/* Write data under the output dir as rel (a relative path without '..'
 * that must not leave the dir through a symlink); the absolute path written
 * goes to out. Returns 0, or -1 with w->call.err set (PATH_NOT_ALLOWED, ...). */
int output_write(struct session *w, const char *rel, const char *data, size_t len, char *out,
                 size_t outlen);
/* The same for base64 text (len bytes), written decoded; *bytes gets the
 * decoded size. */
int output_write_base64(struct session *w, const char *rel, const char *b64, size_t len, char *out,
                        size_t outlen, size_t *bytes);
/* Read a file the agent names (relative to the output dir, or absolute
 * inside it) with the same rules as output_write, at most max bytes, into
 * *data (malloc'd, NUL-terminated; the caller frees) and *len; abs (may be
 * NULL) gets its absolute path. 0, or -1 with w->call.err set (PATH_NOT_ALLOWED
 * for anything outside the dir, missing, a symlink or not a plain file). */
int output_read(struct session *w, const char *name, size_t max, char **data, size_t *len, char *abs,
                size_t abslen);
/* mkdir -p, mode 0700 for directories it creates. 0 or -1 with errno. */
int output_make_dirs(const char *path);
/* The lines of text for which keep[i] is set (i counts lines), each preceded
 * by its not-yet-printed ancestor lines (by indentation). malloc'd. */
char *lines_with_ancestors(const char *text, const unsigned char *keep);
/* The lean view of snapshot text (snaplean.c): `/url` lines left out, long
 * inline texts cut, long runs of same-role siblings shortened to their first
 * few, then (budget > 0) collections and side regions folded until it fits
 * about budget bytes; each cut says how to read what it left out. malloc'd;
 * *elided (may be NULL) gets how many elements were left out. */
char *snapshot_lean(const char *text, size_t budget, size_t *elided);
/* A snapshot line (len bytes, no line break) as browser_find shows it,
 * appended to out: an inline text longer than FIND_TEXT characters is cut
 * to the words around the match at byte match (mlen bytes; -1 when not
 * known, or not in the text: then its head is kept), "…" marking each cut;
 * a text carrying refs is kept whole (snaplean.c). True if it cut. */
bool lean_line_around(const char *s, size_t len, long match, size_t mlen, struct sb *out);
/* The response being built shows the page's URL and title: the next action's
 * response leaves them out unless they change (respond.c). */
void page_shown(struct session *w);
/* Lines of cur that are not in prev, with their ancestors (returned,
 * malloc'd), and in *gone (malloc'd) the top lines of prev's subtrees whose
 * element (ref) no longer exists, a long run of gone siblings with one role
 * cut to its first and a line counting the rest; *changed and *removed
 * count lines. */
char *snapshot_diff(const char *prev, const char *cur, char **gone, size_t *changed,
                    size_t *removed);

/* --- tools --- */
typedef json_t *(*tool_fn)(struct session *w, json_t *args);
/* The handler of a worker tool, or NULL. */
tool_fn tools_find(const char *name);

/* Every handler, declared from the one tool list (proto/tool_ids.h): a listed
 * worker tool whose handler is missing does not link. */
#define TOOL_DECL_S(name)
#define TOOL_DECL_W(name, fn) json_t *fn(struct session *w, json_t *args);
TOOL_LIST(TOOL_DECL_S, TOOL_DECL_W)
#undef TOOL_DECL_S
#undef TOOL_DECL_W

/* The optional groups and browser_emulate_media (tools/emulate.c, ...). */
/* The --cdp-allow list browser_cdp checks (tools/cdp_raw.c); copied. */
void cdp_allow_set(const char *list);

/* --- cookies and storage state (tools/cookies.c, tools/storage_state.c) --- */
/* The session's cookies in Playwright's form (new reference), or NULL. */
json_t *session_cookies(struct session *w);
/* One CDP cookie in Playwright's form: name, value, domain, path, expires
 * (-1 for a session cookie), httpOnly, secure, sameSite (new reference). */
json_t *cookie_out(json_t *cdp_cookie);
/* Replace the session's cookies and localStorage with the storage state file
 * name (under the output dir); counts what it loaded. 0, or -1 with w->call.err. */
int storage_state_load(struct session *w, const char *name, size_t *ncookies, size_t *norigins);
/* The same from a state in memory (borrowed); name names it in errors. */
int storage_state_apply(struct session *w, json_t *state, const char *name, size_t *ncookies,
                        size_t *norigins);
void storage_state_on_event(struct session *w, const char *session, const char *method,
                            json_t *params);
/* Answers the hidden storage page's requests (nothing leaves the browser). */
void storage_helper_on_event(struct session *w, const char *session, const char *method,
                             json_t *params);

/* --- a crashed page (crash.c) --- */
/* The current tab's renderer died (w->page->crashed): reload it, or else carry on
 * in another tab; what happened goes into note for the agent (nothing when
 * w->crash_told: a result said so already). Sets w->broken when no tab can
 * be opened. */
void replace_crashed_page(struct session *w, char *note, size_t len);

/* --- a session's state across crashes (session_state.c) --- */
#define SESSION_STATE_CAPTURE_MS 1000 /* longest capture between calls */
#define SESSION_STATE_QUIET_MS 100    /* idle this long after a call before a capture */
#define SESSION_STATE_TAB_MS 10000    /* longest restore of one tab */
/* Between calls, after one ran (state_dirty): capture the state and send it
 * to the supervisor (MSG_STATE) if it changed. Never fails a call. */
void session_state_idle(struct session *w);
/* A call that may have changed the state ended: capture once the worker has
 * been idle SESSION_STATE_QUIET_MS. */
void session_state_mark(struct session *w);
/* The main loop's poll timeout: timeout_ms (-1: none), shortened to when a
 * capture is due. */
int session_state_due_ms(struct session *w, int timeout_ms);
/* A call arrived and waits to run (main.c): a capture gives way to it. */
bool call_waiting(void);
/* Restore a state MSG_CONFIG carried (borrowed) into the fresh context, before
 * READY. Returns the report for READY's "restored" (new reference):
 * {tabs:[url], current?, cookies?, localStorageOrigins?, sessionStorageTabs,
 *  viewport?, media?, notRestored:[why]}. */
json_t *session_state_restore(struct session *w, json_t *state);
/* The media overrides browser_emulate_media set, {argument: value} (new). */
json_t *emulate_media_state(void);

/* --- files into the page (tools/upload.c) --- */
/* Intercept file choosers on a CDP session (NULL: the page's). No wait. */
void upload_attach(struct session *w, const char *session, enum attach_kind kind);
void upload_on_event(struct session *w, const char *session, const char *method, json_t *params);
/* The "### Modal state" note of a pending file chooser. */
void chooser_note(struct session *w, json_t *content, json_t *structured);
/* Read paths (array of strings, each under the output dir) into an array
 * of {name, type, data (base64)} for the page; NULL with w->call.err set. */
json_t *load_files(struct session *w, json_t *paths);

/* --- shared by the tools (tools/element.c, tools/keys.c) --- */
/* Resolve target in its frame's isolated world and run js, a JavaScript
 * function (el, arg) => value, on the element once; a target that does not
 * resolve gives the engine's {error} as the value. -1 with w->call.err set
 * (STALE_REF when the ref's frame is gone). */
int element_eval(struct session *w, const char *target, const char *js, json_t *arg, json_t **value);
/* Poll js, a JavaScript function (el, arg) => value, on target's element in
 * its frame's isolated world until it returns a value without `error`, an
 * error without `retry`, or the deadline passes (then the last error).
 * Errors are {error: {code, message, retry}} as the engine makes them. arg
 * is borrowed (may be NULL). Returns the value or NULL with w->call.err set. */
json_t *until_element(struct session *w, const char *target, const char *js, json_t *arg,
                      const char *element);
/* Wait on the browser connection until ms from now (capped by the deadline),
 * so events keep flowing and a cancel interrupts: 0, or -1 with w->call.err set
 * (TIMEOUT when the deadline came first). */
int pause_ms(struct session *w, long long ms);
/* After typing text into target: 0 when the field holds it (input.c's
 * TYPED_CHECK_JS says what counts) or when the page took the typing and
 * kept less (then kept gets what the field holds, when kept is given);
 * else -1 with ELEMENT_NOT_EDITABLE saying what the field holds. */
int check_typed(struct session *w, const char *target, const char *text, const char *element,
                char *kept, size_t keptlen);
/* Press key (a Playwright key name or chord, e.g. "Enter", "Control+A") as
 * CDP key events on the focused element. 0, or -1 with w->call.err set
 * (INVALID_PARAMETERS for an unknown key name). */
int press_key(struct session *w, const char *key);
/* role "name" [ref=..] of an engine element description, into buf. */
void describe_element(json_t *info, char *buf, size_t len);
void drag_on_event(struct session *w, const char *session, const char *method, json_t *params);
/* Where trusted mouse input for an element's point goes: the CDP session
 * ("" for the page) and the point in that session's viewport. An element in
 * an out-of-process frame gets its frame's own session (why: frames.h,
 * struct input_point). */
struct mouse_at {
    char session[64];
    double x, y;
};
/* The mouse_at of a point until_actionable returned (its "x", "y" and, for
 * an out-of-process frame, "ik", "ix", "iy"). A frame that has meanwhile
 * gone back in process or away leaves the page and the top-page point. */
void mouse_at_point(struct session *w, json_t *pt, struct mouse_at *at);
/* One trusted Input.dispatchMouseEvent on session (NULL or "": the page),
 * waited for: type mouseMoved/mousePressed/mouseReleased, buttons the DOM
 * bit mask held. */
int input_mouse(struct session *w, const char *session, const char *type, double x, double y,
                const char *button, int buttons, int count, int modifiers);
/* A trusted mouse move, press and release at `at` with the left button. */
int mouse_click_at(struct session *w, const struct mouse_at *at);
/* The DOM MouseEvent.buttons bit of button (left, right, middle). */
int mouse_button_bit(const char *button);
/* count trusted presses and releases of button at (x, y) on session (NULL
 * or "": the page), delay_ms between each press and its release: a double
 * click is one for the page (its second press has detail 2, then dblclick).
 * held: the buttons already down (MouseEvent.buttons bits), which stay down.
 * On Firefox this is one input chain (the map's "mouseClicks"), since
 * WebDriver counts clicks only within one chain. */
int mouse_clicks(struct session *w, const char *session, double x, double y, const char *button,
                 int count, long long delay_ms, int modifiers, int held);
/* Select the options of the <select> target (values: array of strings,
 * each an option's value or label) and fire input and change; returns the
 * engine's description of the element plus "selected", or NULL. */
json_t *select_options(struct session *w, const char *target, json_t *values, const char *element);
/* Console and network logs of the page (tools/console_log.c, tools/network_log.c). */
void console_log_on_event(struct session *w, const char *session, const char *method, json_t *params);
void network_log_on_event(struct session *w, const char *session, const char *method, json_t *params);
/* Requests of the current page still in flight (for networkidle waits). */
int network_log_pending(struct session *w);
/* Milliseconds since the last network activity of the current page. */
long long network_log_quiet_ms(struct session *w);

/* Convenience accessors for validated args. */
const char *arg_str(json_t *args, const char *name, const char *dflt);
long long arg_int(json_t *args, const char *name, long long dflt);
bool arg_bool(json_t *args, const char *name, bool dflt);

#endif
