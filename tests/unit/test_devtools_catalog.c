/*
 * test_devtools_catalog.c - the optional groups' catalog entries
 * (proto/catalog_devtools.c) and the --cdp-allow flag: nullable parameters
 * validate and print as anyOf, every tool is in its group and within the
 * token budget, and --cdp-allow takes only method patterns.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "catalog.h"
#include "config.h"

static int check(const char *tool, const char *args_json, char *err)
{
    json_error_t je;
    json_t *args = json_loads(args_json, 0, &je);
    int r = catalog_validate(catalog_find(tool), args, err, 256);
    json_decref(args);
    return r;
}

static void nullable_params(void **state)
{
    (void)state;
    char err[256];
    assert_int_equal(check("browser_emulate_media", "{\"colorScheme\":null,\"media\":null}", err),
                     0);
    assert_int_equal(check("browser_emulate_media", "{\"colorScheme\":\"dark\"}", err), 0);
    assert_int_equal(check("browser_emulate_media", "{\"colorScheme\":\"blue\"}", err), -1);
    assert_non_null(strstr(err, "must be one of: light, dark"));
    assert_int_equal(check("browser_emulate_media", "{\"media\":1}", err), -1);
    /* Not nullable: null is still a wrong type. */
    assert_int_equal(check("browser_get_content", "{\"format\":null}", err), -1);

    json_t *j = catalog_tool_json(catalog_find("browser_emulate_media"), true);
    json_t *cs = json_object_get(json_object_get(json_object_get(j, "inputSchema"), "properties"),
                                 "colorScheme");
    assert_non_null(json_object_get(cs, "description"));
    json_t *any = json_object_get(cs, "anyOf");
    assert_int_equal(json_array_size(any), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(any, 0), "type")),
                        "string");
    assert_int_equal(json_array_size(json_object_get(json_array_get(any, 0), "enum")), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(any, 1), "type")), "null");
    json_decref(j);
}

static const struct {
    const char *name;
    enum tool_cap cap;
} groups[] = {
    {"browser_emulate_media", CAP_CORE},
    {"browser_mouse_move_xy", CAP_VISION},
    {"browser_mouse_click_xy", CAP_VISION},
    {"browser_mouse_drag_xy", CAP_VISION},
    {"browser_mouse_down", CAP_VISION},
    {"browser_mouse_up", CAP_VISION},
    {"browser_mouse_wheel", CAP_VISION},
    {"browser_pdf_save", CAP_PDF},
    {"browser_verify_element_visible", CAP_TESTING},
    {"browser_verify_text_visible", CAP_TESTING},
    {"browser_verify_list_visible", CAP_TESTING},
    {"browser_verify_value", CAP_TESTING},
    {"browser_generate_locator", CAP_TESTING},
    {"browser_cdp", CAP_DEVTOOLS},
    {"browser_get_content", CAP_DEVTOOLS},
};

/* Shared parameters (catalog_defs.h) are worded once, for every tool. */
static bool shared_param(const char *name)
{
    static const char *const shared[] = {"sessionId", "timeout", "snapshot",
                                         "target",    "element", "filename"};
    for (size_t i = 0; i < sizeof shared / sizeof *shared; i++)
        if (!strcmp(name, shared[i]))
            return true;
    return false;
}

static void groups_and_budget(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof groups / sizeof *groups; i++) {
        const struct tool_def *t = catalog_find(groups[i].name);
        assert_non_null(t);
        assert_int_equal(t->cap, groups[i].cap);
        assert_int_equal(t->scope, TOOL_WORKER);
        assert_true(strlen(t->description) <= 110);
        for (const struct tool_param *p = t->params; p->name; p++)
            if (!shared_param(p->name))
                assert_true(p->description && strlen(p->description) <= 60);
    }
    /* The escape hatch is marked as such (DESIGN.md 3). */
    assert_true(catalog_find("browser_cdp")->destructive);
    assert_true(catalog_find("browser_get_content")->read_only);
}

static int parse(const char *allow, struct config *c)
{
    char *argv[] = {"tabvisor", "--cdp-allow", (char *)allow, NULL};
    return config_parse(c, allow ? 3 : 1, argv);
}

static void cdp_allow_flag(void **state)
{
    (void)state;
    struct config c;
    assert_int_equal(parse(NULL, &c), 0);
    assert_string_equal(c.cdp_allow, CDP_ALLOW_DEFAULT);
    assert_int_equal(parse("DOM.*,CSS.get*,Runtime.evaluate", &c), 0);
    assert_string_equal(c.cdp_allow, "DOM.*,CSS.get*,Runtime.evaluate");
    assert_int_equal(parse("*", &c), 0);
    assert_int_equal(parse("", &c), 0);
    assert_string_equal(c.cdp_allow, "");
    const char *bad[] = {"DOM",    "DOM.",    "dom.getDocument",        "DOM.get Document",
                         "DOM.*x", "DOM.a.b", "DOM.getDocument;Runtime"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(parse(bad[i], &c), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nullable_params),
        cmocka_unit_test(groups_and_budget),
        cmocka_unit_test(cdp_allow_flag),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
