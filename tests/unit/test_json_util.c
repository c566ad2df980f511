/* test_json_util.c - json_object_del_int_values: a reverse index losing a tab. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>

#include "json_util.h"

static void deletes_only_matching_integers(void **state)
{
    (void)state;
    json_t *o = json_pack("{s:i, s:i, s:i, s:s, s:f, s:n}", "a", 7, "b", 8, "c", 7, "d", "7", "e",
                          7.0, "f");
    assert_non_null(o);
    assert_int_equal(json_object_del_int_values(o, 7), 2);
    assert_null(json_object_get(o, "a"));
    assert_null(json_object_get(o, "c"));
    /* A string "7", a real 7.0 and null are not the integer 7. */
    assert_non_null(json_object_get(o, "b"));
    assert_non_null(json_object_get(o, "d"));
    assert_non_null(json_object_get(o, "e"));
    assert_non_null(json_object_get(o, "f"));
    assert_int_equal(json_object_del_int_values(o, 7), 0);
    json_decref(o);
}

static void every_member_can_go(void **state)
{
    (void)state;
    json_t *o = json_object();
    char key[16];
    for (int i = 0; i < 1000; i++) {
        snprintf(key, sizeof key, "k%d", i);
        json_object_set_new(o, key, json_integer(-1));
    }
    assert_int_equal(json_object_del_int_values(o, -1), 1000);
    assert_int_equal(json_object_size(o), 0);
    json_decref(o);
}

static void null_and_non_objects_are_left_alone(void **state)
{
    (void)state;
    assert_int_equal(json_object_del_int_values(NULL, 1), 0);
    json_t *a = json_pack("[i]", 1);
    assert_int_equal(json_object_del_int_values(a, 1), 0);
    assert_int_equal(json_array_size(a), 1);
    json_decref(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(deletes_only_matching_integers),
        cmocka_unit_test(every_member_can_go),
        cmocka_unit_test(null_and_non_objects_are_left_alone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
