/* cdp_raw.c - browser_cdp: one raw CDP command on the session's page, the
 * escape hatch for what no tool does.
 *
 * Two gates, in this order:
 *   1. the CDP policy table's browser_cdp layer (proto/cdp_policy.c),
 *      whatever the operator allowed: commands that hand the browser a
 *      local path or reach past the session's page (the bridge and the
 *      relay refuse them too) and commands that would undo what the worker
 *      relies on (Fetch carries --allowed-origins, the domains whose events
 *      it tracks, the page's own life);
 *   2. the operator's --cdp-allow list (the supervisor sends it, or its
 *      read-mostly default; docs/devtools.md).
 * A refusal is NOT_SUPPORTED saying which gate and why; nothing is sent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdp_policy.h"
#include "worker.h"

static char *allow; /* malloc'd copy of --cdp-allow; NULL or "" allows nothing */

void cdp_allow_set(const char *list)
{
    free(allow);
    allow = list ? strdup(list) : NULL;
}

/* Whether method (Domain.method) matches pattern: "*", exact, or a prefix
 * ending in '*' ("DOM.*", "DOM.get*"). */
static bool pattern_matches(const char *pat, size_t n, const char *method)
{
    if (n && pat[n - 1] == '*')
        return strncmp(method, pat, n - 1) == 0;
    return strlen(method) == n && strncmp(method, pat, n) == 0;
}

static bool allowed(const char *method)
{
    for (const char *p = allow; p && *p;) {
        size_t n = strcspn(p, ",;");
        size_t a = 0, b = n;
        while (a < b && p[a] == ' ')
            a++;
        while (b > a && p[b - 1] == ' ')
            b--;
        if (b > a && pattern_matches(p + a, b - a, method))
            return true;
        p += n + (p[n] != 0);
    }
    return false;
}

json_t *tool_cdp(struct session *w, json_t *args)
{
    const char *method = arg_str(args, "method", "");
    const char *dot = strchr(method, '.');
    if (!dot || dot == method || !dot[1] || strchr(dot + 1, '.')) {
        fail_call(w, TV_INVALID_PARAMETERS,
                  "Name a CDP method as Domain.method, e.g. DOM.getDocument.",
                  "'%.200s' is not a CDP method name", method);
        return tool_fail(w);
    }
    json_t *params = json_object_get(args, "params");
    const char *why = cdp_policy_check(CDP_LAYER_TOOL, method, strlen(method), params);
    if (why) {
        fail_call(w, TV_NOT_SUPPORTED, "No server flag allows it; use the tools for the page.",
                  "browser_cdp refuses %.200s: %s", method, why);
        return tool_fail(w);
    }
    if (!allowed(method)) {
        fail_call(w, TV_NOT_SUPPORTED,
                  "The operator can allow it with --cdp-allow (docs/devtools.md).",
                  "browser_cdp: %.200s is not in this server's --cdp-allow list (%.600s)", method,
                  allow && *allow ? allow : "empty");
        return tool_fail(w);
    }
    json_t *r;
    nav_reset(w);
    if (page_call(w, method, params ? json_incref(params) : json_object(), &r) < 0)
        return tool_fail(w);
    page_refresh_info(w);
    char *dump = json_dumps(r ? r : json_object(), JSON_COMPACT | JSON_ENCODE_ANY);
    json_t *out = json_pack("{s:o}", "result", r ? r : json_object());
    add_page(w, out);
    json_t *res = tool_ok(w, dump ? dump : "{}", out);
    free(dump);
    return res;
}
