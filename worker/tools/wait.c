/* wait.c - browser_wait_for: wait `time` seconds, then until every given
 * condition holds (text shown, text gone, an element's state, the URL, the
 * load state), checking in the page with a backoff from 20 to 250 ms;
 * TIMEOUT with what was still missing when the deadline passes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

/* One check in the main frame's isolated world of text, textGone, url and
 * load state: {ok} or {missing: "why"}. Text is matched like Playwright's
 * getByText: case-insensitive, whitespace collapsed, in rendered text
 * (innerText leaves out display:none and visibility:hidden content) of the
 * document, its open shadow roots (which innerText does not enter) and its
 * shown frames of the same origin, as the snapshot shows them (a search box
 * whose results come in an iframe, as Doxygen's do); frames of another
 * origin are not read. */
static const char CHECK_JS[] =
    "((o) => {\n"
    "  const norm = (s) => s.replace(/\\s+/g, ' ').trim().toLowerCase();\n"
    "  const shown = () => {\n"
    "    const parts = [];\n"
    "    const visit = (root) => {\n"
    "      for (const el of root.querySelectorAll('*')) {\n"
    "        if ((el.localName === 'iframe' || el.localName === 'frame') && el.checkVisibility()) "
    "{\n"
    "          let doc = null;\n"
    "          try { doc = el.contentDocument; } catch (e) { /* another origin */ }\n"
    "          if (doc) page(doc);\n"
    "        }\n"
    "        if (!el.shadowRoot) continue;\n"
    "        for (const k of el.shadowRoot.childNodes) {\n"
    "          if (k.nodeType === 3 && el.checkVisibility()) parts.push(k.data);\n"
    "          else if (k.nodeType === 1 && k.checkVisibility()) parts.push(k.innerText);\n"
    "        }\n"
    "        visit(el.shadowRoot);\n"
    "      }\n"
    "    };\n"
    "    const page = (doc) => {\n"
    "      parts.push(doc.body ? doc.body.innerText : '');\n"
    "      visit(doc);\n"
    "    };\n"
    "    page(document);\n"
    "    return norm(parts.join(' '));\n"
    "  };\n"
    "  if (o.text !== undefined && !shown().includes(norm(o.text)))\n"
    "    return {missing: 'text ' + JSON.stringify(o.text) + ' is not on the page'};\n"
    "  if (o.textGone !== undefined && shown().includes(norm(o.textGone)))\n"
    "    return {missing: 'text ' + JSON.stringify(o.textGone) + ' is still on the page'};\n"
    "  if (o.url !== undefined) {\n"
    "    let re = o.url;\n"
    "    if (!o.regex) {\n"
    "      let s = '';\n"
    "      for (let i = 0; i < o.url.length; i++) {\n"
    "        const c = o.url[i];\n"
    "        if (c === '*' && o.url[i + 1] === '*') { s += '.*'; i++; }\n"
    "        else if (c === '*') s += '[^/]*';\n"
    "        else if (c === '?') s += '.';\n"
    "        else s += c.replace(/[.+^${}()|[\\]\\\\]/g, '\\\\$&');\n"
    "      }\n"
    "      re = '^' + s + '$';\n"
    "    }\n"
    "    let m;\n"
    "    try { m = new RegExp(re).test(location.href); }\n"
    "    catch (e) { return {invalid: 'url: ' + e.message}; }\n"
    "    if (!m)\n"
    "      return {missing: 'the URL ' + location.href + ' does not match ' + o.url};\n"
    "  }\n"
    "  if (o.loadState === 'load' && document.readyState !== 'complete')\n"
    "    return {missing: 'the page has not finished loading (' + document.readyState + ')'};\n"
    "  if (o.loadState === 'domcontentloaded' && document.readyState === 'loading')\n"
    "    return {missing: 'the page is still loading its document'};\n"
    "  return {ok: true};\n"
    "})";

/* An element's state (visible, hidden, attached, detached) in its frame. */
static const char STATE_JS[] =
    "(el, state) => {\n"
    "  const r = el.getBoundingClientRect();\n"
    "  const visible = r.width > 0 && r.height > 0 && (!el.checkVisibility ||\n"
    "      el.checkVisibility({visibilityProperty: true}));\n"
    "  if (state === 'attached' || (state === 'visible' && visible) ||\n"
    "      (state === 'hidden' && !visible)) return {ok: true};\n"
    "  return {error: {code: state === 'visible' ? 'ELEMENT_NOT_VISIBLE' : 'TIMEOUT', message:\n"
    "      'the element is ' + (visible ? 'visible' : 'attached but not visible'), retry: true}};\n"
    "}";

#define NETWORK_IDLE_MS 500

/* 1 when the element condition holds, 0 when not yet (why in *why), -1
 * when it failed for good (w->call.err). */
static int element_state(struct session *w, const char *target, const char *state, char *why,
                         size_t len)
{
    bool gone_ok = !strcmp(state, "hidden") || !strcmp(state, "detached");
    /* One attempt here, not until_element's retries: the caller's loop
     * retries, and "not found" is an answer (detached), not a failure. */
    json_t *v, *arg = json_string(state);
    int rc = element_eval(w, target, STATE_JS, arg, &v);
    json_decref(arg);
    if (rc < 0 && w->call.err == TV_STALE_REF && gone_ok) { /* the ref's frame is gone */
        w->call.err = TV_OK;
        w->call.errmsg[0] = w->call.errhint[0] = 0;
        return 1;
    }
    if (rc < 0)
        return -1;
    json_t *err = json_object_get(v, "error");
    const char *code = json_string_value(json_object_get(err, "code"));
    int out;
    if (!err) {
        out = !strcmp(state, "detached") ? 0 : 1;
        if (!out)
            snprintf(why, len, "the element is still attached");
    } else if (code && (!strcmp(code, "ELEMENT_NOT_FOUND") || !strcmp(code, "STALE_REF"))) {
        out = gone_ok ? 1 : 0;
        if (!out)
            snprintf(why, len, "no element matches %.200s", target);
    } else if (json_is_true(json_object_get(err, "retry"))) {
        out = 0;
        snprintf(why, len, "%s", json_string_value(json_object_get(err, "message")));
    } else {
        page_error(w, err, NULL);
        out = -1;
    }
    json_decref(v);
    return out;
}

/* Every condition once: 1 all hold, 0 not yet (why), -1 failed (w->call.err). */
static int check_all(struct session *w, json_t *args, json_t *page_opts, char *why, size_t len)
{
    if (json_object_size(page_opts)) {
        char *o = json_dumps(page_opts, JSON_COMPACT);
        size_t n = strlen(CHECK_JS) + strlen(o) + 4;
        char *expr = malloc(n);
        if (!expr)
            abort();
        snprintf(expr, n, "%s(%s)", CHECK_JS, o);
        free(o);
        json_t *v;
        int rc = util_eval(w, expr, &v);
        free(expr);
        if (rc < 0) {
            /* A navigation replaced the document mid-check: check again. */
            if (w->call.err == TV_BROWSER_ERROR) {
                snprintf(why, len, "the page was navigating");
                return 0;
            }
            return -1;
        }
        const char *missing = json_string_value(json_object_get(v, "missing"));
        const char *invalid = json_string_value(json_object_get(v, "invalid"));
        if (invalid) {
            fail_call(w, TV_INVALID_PARAMETERS, "url is a glob (* ** ?) or /regex/.", "%s",
                      invalid);
            json_decref(v);
            return -1;
        }
        if (missing) {
            snprintf(why, len, "%s", missing);
            json_decref(v);
            return 0;
        }
        json_decref(v);
    }
    const char *ls = arg_str(args, "loadState", NULL);
    if (ls && !strcmp(ls, "networkidle") &&
        (network_log_pending(w) > 0 || network_log_quiet_ms(w) < NETWORK_IDLE_MS)) {
        snprintf(why, len, "the page still has network activity (%d requests in flight)",
                 network_log_pending(w));
        return 0;
    }
    const char *target = arg_str(args, "target", arg_str(args, "selector", NULL));
    if (target)
        return element_state(w, target, arg_str(args, "state", "visible"), why, len);
    return 1;
}

json_t *tool_wait_for(struct session *w, json_t *args)
{
    long long t0 = mono_ms();
    static const char *const conditions[] = {"time",     "text", "textGone",  "target",
                                             "selector", "url",  "loadState", NULL};
    bool any = false;
    for (int i = 0; conditions[i]; i++)
        any |= json_object_get(args, conditions[i]) != NULL;
    if (!any || (json_object_get(args, "state") && !arg_str(args, "target", NULL) &&
                 !arg_str(args, "selector", NULL))) {
        fail_call(w, TV_INVALID_PARAMETERS, NULL, "%s",
                  any ? "state needs target (or selector)"
                      : "give something to wait for: time, text, textGone, target "
                        "(or selector), url or loadState");
        return tool_fail(w);
    }
    json_t *time = json_object_get(args, "time");
    if (json_is_number(time) && pause_ms(w, (long long)(json_number_value(time) * 1000)) < 0) {
        if (w->call.err == TV_TIMEOUT)
            snprintf(w->call.errmsg, sizeof w->call.errmsg,
                     "the timeout passed before the %g seconds to wait", json_number_value(time));
        return tool_fail(w);
    }
    json_t *page_opts = json_object();
    static const char *const copied[] = {"text", "textGone", "url", "loadState", NULL};
    for (int i = 0; copied[i]; i++)
        if (json_object_get(args, copied[i]))
            json_object_set(page_opts, copied[i], json_object_get(args, copied[i]));
    const char *url = arg_str(args, "url", NULL);
    if (url && strlen(url) > 2 && url[0] == '/' && url[strlen(url) - 1] == '/') {
        json_object_set_new(page_opts, "url", json_stringn(url + 1, strlen(url) - 2));
        json_object_set_new(page_opts, "regex", json_true());
    }
    static const char hint[] = "Raise 'timeout', or check the condition with browser_snapshot.";
    char why[600] = "";
    long long delay = 20;
    int rc;
    while ((rc = check_all(w, args, page_opts, why, sizeof why)) == 0) {
        if (mono_ms() + delay >= w->call.deadline) {
            fail_call(w, TV_TIMEOUT, hint, "waited %lld ms: %s", mono_ms() - t0, why);
            rc = -1;
            break;
        }
        if (pause_ms(w, delay) < 0) {
            rc = -1;
            break;
        }
        if (delay < 250)
            delay = delay * 2 > 250 ? 250 : delay * 2;
    }
    json_decref(page_opts);
    /* The deadline came during a check (a busy page, or a busy machine that
     * slowed the check down): say what the last check found, as when it
     * comes between checks, not that the browser was slow. */
    if (rc < 0 && w->call.err == TV_TIMEOUT && mono_ms() >= w->call.deadline && *why)
        fail_call(w, TV_TIMEOUT, hint, "waited %lld ms: %s", mono_ms() - t0, why);
    if (rc < 0)
        return tool_fail(w);
    char line[200];
    snprintf(line, sizeof line, "Waited %lld ms", mono_ms() - t0);
    return page_action_result(w, line,
                              json_pack("{s:I}", "waitedMs", (json_int_t)(mono_ms() - t0)));
}
