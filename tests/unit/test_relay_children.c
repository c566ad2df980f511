/*
 * test_relay_children.c - the relay's table of CDP child sessions
 * (relay/children.c): a child belongs to the tab whose events announced it,
 * and one session's pages full of out-of-process frames fill only that
 * session's share of the table, never another session's (the audit's
 * suspicion about a table-wide bound of 8,192).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "relay.h"

static void attach(struct relay *r, int64_t tab, const char *child)
{
    json_t *p = json_pack("{s:s}", "sessionId", child);
    children_note_event(r, tab, "Target.attachedToTarget", p);
    json_decref(p);
}

static void test_one_session_cannot_fill_the_table(void **state)
{
    static struct relay r;
    memset(&r, 0, sizeof r);
    router_init(&r);
    char err[200];
    bool resumed;
    const char *proof = "0123456789abcdef0123456789abcdef";
    int a = reg_session_open(&r.reg, "sess-a", proof, 1, &resumed, err, sizeof err);
    int b = reg_session_open(&r.reg, "sess-b", proof, 2, &resumed, err, sizeof err);
    assert_true(a >= 0 && b >= 0);
    assert_int_equal(reg_tab_add(&r.reg, 10, a, true), 0);
    assert_int_equal(reg_tab_add(&r.reg, 11, a, true), 0);
    assert_int_equal(reg_tab_add(&r.reg, 20, b, true), 0);
    /* A's two tabs announce 10,000 frames between them: A keeps a share. */
    char id[32];
    for (int i = 0; i < 10000; i++) {
        snprintf(id, sizeof id, "a-%d", i);
        attach(&r, i % 2 ? 10 : 11, id);
    }
    size_t a_children = json_object_size(r.children);
    assert_true(a_children >= 512 && a_children <= 1024);
    assert_false(children_of_tab(&r, "a-9999", 10));
    assert_true(children_of_tab(&r, "a-1", 10));
    /* B's frames are still recorded, and are B's tab's only. */
    attach(&r, 20, "b-1");
    assert_true(children_of_tab(&r, "b-1", 20));
    assert_false(children_of_tab(&r, "b-1", 10));
    /* A frame that leaves makes room for A again. */
    json_t *p = json_pack("{s:s}", "sessionId", "a-1");
    children_note_event(&r, 10, "Target.detachedFromTarget", p);
    json_decref(p);
    attach(&r, 10, "a-again");
    assert_true(children_of_tab(&r, "a-again", 10));
    router_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_session_cannot_fill_the_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
