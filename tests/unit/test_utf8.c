/*
 * test_utf8.c - cutting page text on a character boundary and repairing
 * invalid sequences (proto/utf8.c; issue 36, finding 6).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "utf8.h"

static void test_sequences(void **state)
{
    (void)state;
    assert_int_equal(utf8_seq_len("a", 1), 1);
    assert_int_equal(utf8_seq_len("\xC3\xA9", 2), 2);         /* é */
    assert_int_equal(utf8_seq_len("\xE2\x82\xAC", 3), 3);     /* € */
    assert_int_equal(utf8_seq_len("\xF0\x9F\x98\x80", 4), 4); /* 😀 */
    assert_int_equal(utf8_seq_len("\xC3", 1), 0);             /* cut */
    assert_int_equal(utf8_seq_len("\xA9", 1), 0);             /* a stray continuation */
    assert_int_equal(utf8_seq_len("\xC0\xAF", 2), 0);         /* overlong "/" */
    assert_int_equal(utf8_seq_len("\xED\xA0\x80", 3), 0);     /* a surrogate */
    assert_int_equal(utf8_seq_len("\xF4\x90\x80\x80", 4), 0); /* past U+10FFFF */
    assert_true(utf8_valid("caf\xC3\xA9", 5));
    assert_false(utf8_valid("caf\xC3", 4));
}

static void test_cut_on_a_boundary(void **state)
{
    (void)state;
    char name[206];
    memset(name, 'a', 199);
    memcpy(name + 199, "\xC3\xA9.txt", 7);
    size_t len = strlen(name);
    assert_int_equal(utf8_cut(name, len, 200), 199); /* not inside the é */
    assert_int_equal(utf8_cut(name, len, 201), 201);
    assert_int_equal(utf8_cut(name, len, 1000), len);
    assert_int_equal(utf8_cut("\xF0\x9F\x98\x80", 4, 3), 0);
    char buf[8] = "ab\xE2\x82";
    utf8_drop_partial_tail(buf);
    assert_string_equal(buf, "ab");
    strcpy(buf, "ab\xE2\x82\xAC");
    utf8_drop_partial_tail(buf);
    assert_string_equal(buf, "ab\xE2\x82\xAC");
    strcpy(buf, "abc");
    utf8_drop_partial_tail(buf);
    assert_string_equal(buf, "abc");
}

static void test_repair(void **state)
{
    (void)state;
    size_t n;
    char *r = utf8_repaired("a\xC3"
                            "b\xFF",
                            4, UTF8_REPLACEMENT, &n);
    assert_string_equal(r, "a" UTF8_REPLACEMENT "b" UTF8_REPLACEMENT);
    assert_int_equal(n, strlen(r));
    free(r);
    r = utf8_repaired("x\xC3\xA9y", 4, "_", &n);
    assert_string_equal(r, "x\xC3\xA9y");
    free(r);
    r = utf8_repaired("\xC3", 1, "_", &n);
    assert_string_equal(r, "_");
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sequences),
        cmocka_unit_test(test_cut_on_a_boundary),
        cmocka_unit_test(test_repair),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
