/*
 * cdp_policy_js.c - tv-cdp-policy-js: the extension's copy of the CDP policy
 * table, generated at build time from proto/cdp_policy.c (one table, every
 * layer reads it; the extension cannot link C).
 *
 *   tv-cdp-policy-js OUT.js     the extension layer's rows as an ES module
 *   tv-cdp-policy-js --vectors  JSON: methods and params with what
 *                               cdp_policy_check answers for each layer, for
 *                               tests/e2e/cdp-policy.test.mjs to hold the
 *                               extension's checker against
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cdp_policy.h"
#include "url_policy.h"

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static int write_module(const char *path)
{
    json_t *rows = json_array();
    for (size_t i = 0; i < cdp_policy_count; i++) {
        const struct cdp_rule *r = &cdp_policy_table[i];
        bool bar = r->bar_param && (r->bar_layers & CDP_LAYER_EXTENSION);
        json_array_append_new(rows,
                              json_pack("{s:s, s:b, s:o, s:o, s:s}", "method", r->method, "pass",
                                        (r->pass & CDP_LAYER_EXTENSION) != 0, "urlParam",
                                        str_or_null(r->url_param), "barParam",
                                        str_or_null(bar ? r->bar_param : NULL), "why", r->why));
    }
    unsigned allow = cdp_policy_url_allow(CDP_LAYER_EXTENSION);
    json_t *urls =
        json_pack("{s:b, s:b, s:b}", "http", (allow & URL_ALLOW_HTTP) != 0, "aboutBlank",
                  (allow & URL_ALLOW_ABOUT_BLANK) != 0, "data", (allow & URL_ALLOW_DATA) != 0);
    char *rows_text = json_dumps(rows, JSON_INDENT(2));
    char *urls_text = json_dumps(urls, JSON_COMPACT);
    json_decref(rows);
    json_decref(urls);
    FILE *f = fopen(path, "w");
    if (!f || !rows_text || !urls_text) {
        perror(path);
        return 1;
    }
    fprintf(f,
            "// Generated from proto/cdp_policy.c by proto/gen/cdp_policy_js.c: do not edit.\n"
            "// The extension layer's rows of the one CDP policy table (docs/devtools.md).\n"
            "export const CDP_RULES = %s;\n"
            "export const URL_ALLOW = %s;\n",
            rows_text, urls_text);
    free(rows_text);
    free(urls_text);
    return fclose(f) == 0 ? 0 : 1;
}

/* params with value at the dotted path (stolen). */
static json_t *with_path(const char *path, json_t *value)
{
    json_t *top = json_object(), *at = top;
    for (;;) {
        size_t n = strcspn(path, ".");
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)n, path);
        if (!path[n]) {
            json_object_set_new(at, key, value);
            return top;
        }
        json_t *next = json_object();
        json_object_set_new(at, key, next);
        at = next;
        path += n + 1;
    }
}

static void add_case(json_t *cases, const char *method, json_t *params)
{
    json_t *answers = json_object();
    for (unsigned layer = 1; layer <= CDP_LAYER_EXTENSION; layer <<= 1) {
        const char *why = cdp_policy_check(layer, method, strlen(method), params);
        json_object_set_new(answers, cdp_layer_name(layer), json_boolean(why == NULL));
    }
    json_array_append_new(cases, json_pack("{s:s, s:o, s:o}", "method", method, "params",
                                           params ? params : json_null(), "passes", answers));
}

static int print_vectors(void)
{
    static const char *const urls[] = {"http://127.0.0.1/",
                                       "HTTPS://x/",
                                       " file:///etc/passwd",
                                       "fi\tle:///etc/passwd",
                                       "\x01file:///x",
                                       "about:blank",
                                       "about:blank#x",
                                       "ABOUT:BLANK",
                                       "about:version",
                                       "data:text/html,x",
                                       "javascript:1",
                                       "chrome://settings",
                                       "",
                                       "  ",
                                       "view-source:http://x/",
                                       "file:",
                                       "h\nttp://x/",
                                       "http://x/\x1f",
                                       "nonsense",
                                       "1http://x"};
    json_t *cases = json_array();
    add_case(cases, "Runtime.evaluate", json_pack("{s:s}", "expression", "1"));
    add_case(cases, "nodot", NULL);
    add_case(cases, "A.b.c", NULL);
    for (size_t i = 0; i < cdp_policy_count; i++) {
        const struct cdp_rule *r = &cdp_policy_table[i];
        char method[128];
        cdp_policy_sample_method(r, method, sizeof method);
        add_case(cases, method, NULL);
        add_case(cases, method, json_object());
        if (r->url_param)
            for (size_t u = 0; u < sizeof urls / sizeof *urls; u++)
                add_case(cases, method, json_pack("{s:s}", r->url_param, urls[u]));
        if (r->bar_param) {
            add_case(cases, method, with_path(r->bar_param, json_pack("[s]", "/etc/passwd")));
            add_case(cases, method, with_path(r->bar_param, json_array()));
        }
    }
    char *text = json_dumps(cases, JSON_COMPACT);
    json_decref(cases);
    if (!text)
        return 1;
    puts(text);
    free(text);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--vectors"))
        return print_vectors();
    if (argc == 2)
        return write_module(argv[1]);
    fprintf(stderr, "usage: tv-cdp-policy-js OUT.js | --vectors\n");
    return 2;
}
