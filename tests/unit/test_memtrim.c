/* test_memtrim.c - when the heap is given back: at once after a large
 * message, at most every MEMTRIM_PERIOD_MS after small ones, never when
 * nothing passed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "memtrim.h"

static void test_due(void **state)
{
    (void)state;
    memtrim_init();
    /* Nothing passed yet: no trim, and an idle loop may sleep for ever. */
    assert_int_equal(memtrim_due_ms(), -1);
    assert_int_equal(memtrim_idle(), 0);

    /* The first small message: the last trim is "long ago", so due now. */
    memtrim_released(100);
    assert_int_equal(memtrim_due_ms(), 0);
    assert_int_equal(memtrim_idle(), 1);
    assert_int_equal(memtrim_due_ms(), -1);

    /* Small traffic right after a trim waits for the period. */
    memtrim_released(100);
    int left = memtrim_due_ms();
    assert_true(left > MEMTRIM_PERIOD_MS - 1000 && left <= MEMTRIM_PERIOD_MS);
    assert_int_equal(memtrim_idle(), 0);

    /* A large buffer makes it due at once. */
    memtrim_released(MEMTRIM_KEEP_BYTES + 1);
    assert_int_equal(memtrim_due_ms(), 0);
    assert_int_equal(memtrim_idle(), 1);
    assert_int_equal(memtrim_due_ms(), -1);
    assert_int_equal(memtrim_idle(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_due)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
