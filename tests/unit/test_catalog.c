/*
 * test_catalog.c - the catalog is the single source of truth: every tool has
 * a valid schema, validation follows it, and every worker tool has a
 * handler in the worker's dispatch table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "catalog.h"
#include "worker.h"

static void every_worker_tool_has_a_handler(void **state)
{
    (void)state;
    char err[200] = "";
    if (catalog_check(err, sizeof err) != 0)
        fail_msg("%s", err);
    for (size_t i = 0; i < catalog_count(); i++) {
        const struct tool_def *t = catalog_at(i);
        if (t->scope == TOOL_WORKER)
            assert_non_null(tools_find(t->name));
        else
            assert_null(tools_find(t->name));
    }
}

static void schemas_are_well_formed(void **state)
{
    (void)state;
    for (size_t i = 0; i < catalog_count(); i++) {
        const struct tool_def *t = catalog_at(i);
        json_t *j = catalog_tool_json(t, true);
        assert_string_equal(json_string_value(json_object_get(j, "name")), t->name);
        json_t *in = json_object_get(j, "inputSchema");
        assert_string_equal(json_string_value(json_object_get(in, "type")), "object");
        assert_true(json_is_object(json_object_get(in, "properties")));
        json_t *req = json_object_get(in, "required");
        size_t k;
        json_t *name;
        json_array_foreach(req, k, name)
        {
            assert_non_null(
                json_object_get(json_object_get(in, "properties"), json_string_value(name)));
        }
        if (t->scope == TOOL_WORKER) /* every browser tool takes a sessionId */
            assert_non_null(json_object_get(json_object_get(in, "properties"), "sessionId"));
        assert_true(json_is_object(json_object_get(j, "outputSchema")));
        assert_true(json_is_object(json_object_get(j, "annotations")));
        json_decref(j);
    }
}

static int check(const char *tool, const char *args_json, char *err)
{
    json_error_t je;
    json_t *args = json_loads(args_json, JSON_ALLOW_NUL, &je); /* as the transports parse */
    int r = catalog_validate(catalog_find(tool), args, err, 256);
    json_decref(args);
    return r;
}

static void validation(void **state)
{
    (void)state;
    char err[256];
    assert_int_equal(check("browser_navigate", "{\"url\":\"http://x\"}", err), 0);
    assert_int_equal(check("browser_navigate", "{}", err), -1);
    assert_non_null(strstr(err, "url"));
    assert_int_equal(check("browser_navigate", "{\"url\":1}", err), -1);
    assert_non_null(strstr(err, "string"));
    assert_int_equal(check("browser_navigate", "{\"url\":\"\"}", err), -1);
    assert_int_equal(check("browser_navigate", "{\"url\":\"x\",\"waitUntil\":\"never\"}", err), -1);
    assert_int_equal(check("browser_navigate", "{\"url\":\"x\",\"timeout\":0}", err), -1);
    assert_int_equal(check("browser_navigate", "{\"url\":\"x\",\"timeout\":1.5}", err), -1);
    assert_int_equal(check("browser_navigate", "{\"url\":\"x\",\"timeout\":1000.0}", err), 0);
    assert_int_equal(check("browser_navigate", "{\"url\":\"x\",\"extra\":1}", err), -1);
    assert_int_equal(check("browser_click", "{\"target\":\"e1\",\"modifiers\":[\"Shift\"]}", err),
                     0);
    assert_int_equal(check("browser_click", "{\"target\":\"e1\",\"modifiers\":[\"Hyper\"]}", err),
                     -1);
    assert_int_equal(check("browser_click", "{\"target\":\"e1\",\"modifiers\":\"Shift\"}", err),
                     -1);
    assert_int_equal(check("browser_click", "{\"target\":\"e1\",\"force\":\"yes\"}", err), -1);
    assert_int_equal(check("browser_session_list", "{}", err), 0);
    assert_int_equal(catalog_validate(catalog_find("browser_session_list"), NULL, err, 256), 0);
    /* A whole-number real is taken as the integer it is, for every reader. */
    json_error_t je;
    json_t *a = json_loads("{\"url\":\"x\",\"timeout\":1000.0}", 0, &je);
    assert_int_equal(catalog_validate(catalog_find("browser_navigate"), a, err, 256), 0);
    assert_true(json_is_integer(json_object_get(a, "timeout")));
    assert_int_equal(json_integer_value(json_object_get(a, "timeout")), 1000);
    json_decref(a);
    json_t *arr = json_array();
    assert_int_equal(catalog_validate(catalog_find("browser_session_list"), arr, err, 256), -1);
    json_decref(arr);
}

/* Every string reaches C code as a NUL-terminated string: a NUL inside one
 * is refused, never silently cut. (A NUL in a name never gets here: jansson
 * refuses it while parsing, and the transport answers with a parse error.) */
static void nul_in_strings(void **state)
{
    (void)state;
    char err[256];
    assert_int_equal(check("browser_snapshot", "{\"filename\":\"a\\u0000b.txt\"}", err), -1);
    assert_non_null(strstr(err, "'filename' contains a NUL"));
    assert_int_equal(check("browser_snapshot", "{\"filename\":\"ab.txt\"}", err), 0);
    assert_int_equal(check("browser_navigate", "{\"url\":\"http://x/\\u0000.evil\"}", err), -1);
    assert_int_equal(check("browser_type", "{\"target\":\"e1\",\"text\":\"\\u0000\"}", err), -1);
    assert_int_equal(
        check("browser_click", "{\"target\":\"e1\",\"modifiers\":[\"Shift\\u0000\"]}", err), -1);
    assert_non_null(strstr(err, "'modifiers[0]' contains a NUL"));
}

/* The url description promises only what browser_navigate accepts. */
static void url_description_is_truthful(void **state)
{
    (void)state;
    json_t *j = catalog_tool_json(catalog_find("browser_navigate"), false);
    const char *d = json_string_value(json_object_get(
        json_object_get(json_object_get(json_object_get(j, "inputSchema"), "properties"), "url"),
        "description"));
    assert_non_null(d);
    assert_null(strstr(d, "file"));
    assert_non_null(strstr(d, "http(s), about:blank or data: URL"));
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_worker_tool_has_a_handler),
        cmocka_unit_test(schemas_are_well_formed),
        cmocka_unit_test(validation),
        cmocka_unit_test(nul_in_strings),
        cmocka_unit_test(url_description_is_truthful),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
