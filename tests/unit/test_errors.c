/* test_errors.c - error codes and the failed tool result. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "errors.h"

static void test_codes(void **state)
{
    (void)state;
    for (int a = 0; a < TV_ERR_COUNT; a++) {
        const char *s = tv_err_code((enum tv_err)a);
        assert_non_null(s);
        assert_true(strlen(s) > 0);
        assert_null(strstr(s, "TV_"));
        assert_int_equal(tv_err_from_code(s), a);
        for (int b = 0; b < a; b++)
            assert_string_not_equal(s, tv_err_code((enum tv_err)b));
    }
    assert_string_equal(tv_err_code(TV_SESSION_NOT_FOUND), "SESSION_NOT_FOUND");
    assert_string_equal(tv_err_code(TV_INVALID_PARAMETERS), "INVALID_PARAMETERS");
    assert_string_equal(tv_err_code(TV_PATH_NOT_ALLOWED), "PATH_NOT_ALLOWED");
    assert_non_null(tv_err_code(TV_ERR_COUNT));
    assert_non_null(tv_err_code((enum tv_err) - 1));
    assert_int_equal(tv_err_from_code("NO_SUCH_CODE"), TV_OK);
    assert_int_equal(tv_err_from_code("session_not_found"), TV_OK);
    assert_int_equal(tv_err_from_code(""), TV_OK);
    assert_int_equal(tv_err_from_code(NULL), TV_OK);
}

static void test_full_result(void **state)
{
    (void)state;
    json_t *page = json_pack("{s:s, s:s}", "url", "https://example.com/", "title", "Example");
    json_t *r = tv_error_result(TV_ELEMENT_NOT_FOUND, "no element matches ref e7",
                                "take a new snapshot", "s-123", page);
    assert_non_null(r);
    assert_true(json_is_true(json_object_get(r, "isError")));

    json_t *content = json_object_get(r, "content");
    assert_int_equal(json_array_size(content), 1);
    json_t *item = json_array_get(content, 0);
    assert_string_equal(json_string_value(json_object_get(item, "type")), "text");
    assert_string_equal(json_string_value(json_object_get(item, "text")),
                        "ELEMENT_NOT_FOUND: no element matches ref e7\nHint: take a new snapshot");

    json_t *sc = json_object_get(r, "structuredContent");
    assert_true(json_is_object(sc));
    json_t *err = json_object_get(sc, "error");
    assert_string_equal(json_string_value(json_object_get(err, "code")), "ELEMENT_NOT_FOUND");
    assert_string_equal(json_string_value(json_object_get(err, "message")),
                        "no element matches ref e7");
    assert_string_equal(json_string_value(json_object_get(err, "hint")), "take a new snapshot");
    assert_int_equal(json_object_size(err), 3);
    assert_string_equal(json_string_value(json_object_get(sc, "sessionId")), "s-123");
    assert_true(json_equal(json_object_get(sc, "page"), page));
    assert_int_equal(json_object_size(sc), 3);
    assert_int_equal(json_object_size(r), 3);
    json_decref(r);
    /* page was borrowed: still ours, still alive. */
    assert_int_equal(page->refcount, 1);
    json_decref(page);
}

static void test_minimal_result(void **state)
{
    (void)state;
    json_t *r =
        tv_error_result(TV_TIMEOUT, "navigation took longer than 30000 ms", NULL, NULL, NULL);
    assert_non_null(r);
    json_t *item = json_array_get(json_object_get(r, "content"), 0);
    assert_string_equal(json_string_value(json_object_get(item, "text")),
                        "TIMEOUT: navigation took longer than 30000 ms");
    json_t *sc = json_object_get(r, "structuredContent");
    assert_int_equal(json_object_size(sc), 1); /* error only */
    json_t *err = json_object_get(sc, "error");
    assert_null(json_object_get(err, "hint"));
    assert_int_equal(json_object_size(err), 2);
    json_decref(r);

    /* A NULL message and bytes that are not UTF-8 still give a result. */
    r = tv_error_result(TV_BROWSER_ERROR, NULL, "bad \xff hint", NULL, NULL);
    assert_non_null(r);
    item = json_array_get(json_object_get(r, "content"), 0);
    assert_string_equal(json_string_value(json_object_get(item, "text")),
                        "BROWSER_ERROR: \nHint: bad ? hint");
    json_decref(r);
}

/* A worker's result body names the same object "structured" (the wire's
 * key); nothing else differs. */
static void test_wire_shape(void **state)
{
    (void)state;
    json_t *page = json_pack("{s:s, s:s}", "url", "http://127.0.0.1/", "title", "T");
    json_t *r = tv_error_result_as(TV_RESULT_WIRE, TV_TIMEOUT, "slow", "wait", NULL, page);
    json_t *m = tv_error_result(TV_TIMEOUT, "slow", "wait", NULL, page);
    assert_null(json_object_get(r, "structuredContent"));
    assert_true(json_equal(json_object_get(r, "structured"), json_object_get(m, "structuredContent")));
    assert_true(json_equal(json_object_get(r, "content"), json_object_get(m, "content")));
    assert_true(json_is_true(json_object_get(r, "isError")));
    json_decref(r);
    json_decref(m);
    json_decref(page);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_codes),
        cmocka_unit_test(test_full_result),
        cmocka_unit_test(test_minimal_result),
        cmocka_unit_test(test_wire_shape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
