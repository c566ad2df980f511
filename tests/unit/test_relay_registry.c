/* test_relay_registry.c - the ownership rules: one owner per tab, a session
 * sees only its own tabs, popups join their opener's owner, an orphaned
 * session is kept until its deadline and can be taken back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"

static struct registry *new_reg(void)
{
    struct registry *r = malloc(sizeof(*r));
    reg_init(r);
    return r;
}

#define PROOF "0123456789abcdef0123456789abcdef"
#define OTHER_PROOF "fedcba9876543210fedcba9876543210"

static void test_sessions(void **state)
{
    (void)state;
    struct registry *r = new_reg();
    char err[200];
    bool resumed;
    int a = reg_session_open(r, "sess-a", PROOF, 11, &resumed, err, sizeof(err));
    assert_true(a >= 0);
    assert_false(resumed);
    /* The id is taken while a worker holds it; a pipe has one session. */
    assert_int_equal(reg_session_open(r, "sess-a", PROOF, 12, &resumed, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "held by another worker"));
    assert_int_equal(reg_session_open(r, "sess-x", PROOF, 11, &resumed, err, sizeof(err)), -1);
    /* Malformed ids. */
    assert_int_equal(reg_session_open(r, "", PROOF, 13, &resumed, err, sizeof(err)), -1);
    assert_int_equal(reg_session_open(r, "has space", PROOF, 13, &resumed, err, sizeof(err)), -1);
    char longid[REG_SESSION_ID + 2];
    memset(longid, 'x', sizeof(longid) - 1);
    longid[sizeof(longid) - 1] = '\0';
    assert_int_equal(reg_session_open(r, longid, PROOF, 13, &resumed, err, sizeof(err)), -1);
    assert_int_equal(reg_session_open(r, "ok", PROOF, 0, &resumed, err, sizeof(err)), -1);

    assert_int_equal(reg_session_by_pipe(r, 11), a);
    assert_int_equal(reg_session_by_pipe(r, 12), -1);
    assert_int_equal(reg_session_by_serial(r, r->sessions[a].serial), a);
    assert_int_equal(reg_session_count(r), 1);
    reg_free(r);
    free(r);
}

static void test_ownership(void **state)
{
    (void)state;
    struct registry *r = new_reg();
    char err[200];
    bool resumed;
    int a = reg_session_open(r, "a", PROOF, 1, &resumed, err, sizeof(err));
    int b = reg_session_open(r, "b", PROOF, 2, &resumed, err, sizeof(err));
    assert_int_equal(reg_tab_add(r, 100, a, true), 0);
    assert_int_equal(reg_tab_add(r, 100, a, true), 0);  /* again: no change */
    assert_int_equal(reg_tab_add(r, 100, b, true), -1); /* one owner per tab */
    assert_int_equal(reg_tab_add(r, 0, a, true), -1);
    assert_int_equal(reg_tab_add(r, 5, 77, true), -1); /* no such session */
    assert_int_equal(reg_tab_add(r, 200, b, false), 0);
    assert_non_null(reg_tab_owned(r, a, 100));
    assert_null(reg_tab_owned(r, b, 100)); /* TAB_NOT_FOUND for b */
    assert_null(reg_tab_owned(r, a, 200));
    assert_null(reg_tab_owned(r, a, 999));
    assert_null(reg_tab_owned(r, -1, 100));

    /* A popup of a's tab is a's, and closes with it; one of nobody's tab
     * stays free. */
    assert_int_equal(reg_tab_opened_by(r, 101, 100), a);
    struct reg_tab *p = reg_tab_owned(r, a, 101);
    assert_non_null(p);
    assert_true(p->created);
    assert_int_equal(reg_tab_opened_by(r, 300, 999), -1);
    assert_null(reg_tab_get(r, 300));
    /* An opened-by for a tab b already owns does not move it. */
    assert_int_equal(reg_tab_opened_by(r, 200, 100), -1);
    assert_non_null(reg_tab_owned(r, b, 200));

    struct reg_tab *tabs[8];
    assert_int_equal(reg_session_tabs(r, a, tabs, 8), 2);
    assert_int_equal(reg_session_tabs(r, b, tabs, 8), 1);
    assert_int_equal(tabs[0]->id, 200);
    assert_false(tabs[0]->created);

    /* A removed tab answers nobody. */
    assert_int_equal(reg_tab_remove(r, 100), a);
    assert_null(reg_tab_owned(r, a, 100));
    assert_int_equal(reg_tab_remove(r, 100), -1);

    /* Freeing a session forgets its tabs only. */
    reg_session_free(r, a);
    assert_null(reg_tab_get(r, 101));
    assert_non_null(reg_tab_owned(r, b, 200));
    assert_int_equal(reg_tab_count(r), 1);
    /* A new session in a's slot does not inherit anything. */
    int c = reg_session_open(r, "c", PROOF, 3, &resumed, err, sizeof(err));
    assert_int_equal(reg_session_tabs(r, c, tabs, 8), 0);
    reg_free(r);
    free(r);
}

static void test_orphans(void **state)
{
    (void)state;
    struct registry *r = new_reg();
    char err[200];
    bool resumed;
    int a = reg_session_open(r, "a", PROOF, 1, &resumed, err, sizeof(err));
    uint64_t serial = r->sessions[a].serial;
    assert_int_equal(reg_tab_add(r, 10, a, true), 0);
    reg_session_orphan(r, a, 1000);
    assert_int_equal(reg_session_by_pipe(r, 1), -1);
    int out[4];
    assert_int_equal(reg_expired(r, 999, out, 4), 0);
    /* Not by a worker that knows the id but not the proof (the audit's
     * takeover of an orphaned session), nor with a malformed proof. */
    assert_int_equal(reg_session_open(r, "a", OTHER_PROOF, 8, &resumed, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "wrong proof"));
    assert_int_equal(reg_session_open(r, "a", "", 8, &resumed, err, sizeof(err)), -1);
    assert_int_equal(reg_session_open(r, "a", NULL, 8, &resumed, err, sizeof(err)), -1);
    assert_int_equal(reg_session_open(r, "a", "0123456789ABCDEF", 8, &resumed, err, sizeof(err)),
                     -1);
    /* Taken back before the deadline, with its tabs, by a new pipe. */
    int again = reg_session_open(r, "a", PROOF, 9, &resumed, err, sizeof(err));
    assert_int_equal(again, a);
    assert_true(resumed);
    assert_int_equal(r->sessions[a].serial, serial);
    assert_non_null(reg_tab_owned(r, a, 10));
    assert_int_equal(reg_expired(r, 5000, out, 4), 0);
    /* Orphaned again and not taken back: expired at the deadline. */
    reg_session_orphan(r, a, 2000);
    assert_int_equal(reg_expired(r, 2000, out, 4), 1);
    assert_int_equal(out[0], a);
    reg_free(r);
    free(r);
}

/* A restarted relay hears of a session first from the extension's claims:
 * an orphaned session that the worker's hello takes back, resumed. */
static void test_claims(void **state)
{
    (void)state;
    struct registry *r = new_reg();
    char err[200];
    bool resumed;
    int a = reg_session_claim(r, "a", 3000);
    assert_true(a >= 0);
    assert_int_equal(r->sessions[a].pipe, 0u);
    assert_int_equal(reg_tab_add(r, 10, a, true), 0);
    /* A second claim of the same session finds it. */
    assert_int_equal(reg_session_claim(r, "a", 9000), a);
    assert_int_equal(reg_session_claim(r, "bad id", 3000), -1);
    int again = reg_session_open(r, "a", PROOF, 7, &resumed, err, sizeof(err));
    assert_int_equal(again, a);
    assert_true(resumed);
    assert_non_null(reg_tab_owned(r, a, 10));
    /* The first hello after the claim set the proof: another is refused next time. */
    reg_session_orphan(r, a, 5000);
    assert_int_equal(reg_session_open(r, "a", OTHER_PROOF, 8, &resumed, err, sizeof(err)), -1);
    assert_int_equal(reg_session_open(r, "a", PROOF, 8, &resumed, err, sizeof(err)), a);
    /* Not taken back: expires like any orphan. */
    int b = reg_session_claim(r, "b", 3000);
    int out[4];
    assert_int_equal(reg_expired(r, 2999, out, 4), 0);
    assert_int_equal(reg_expired(r, 3000, out, 4), 1);
    assert_int_equal(out[0], b);
    reg_free(r);
    free(r);
}

static void test_limits(void **state)
{
    (void)state;
    struct registry *r = new_reg();
    char err[200], id[16];
    bool resumed;
    for (int i = 0; i < REG_MAX_SESSIONS; i++) {
        snprintf(id, sizeof(id), "s%d", i);
        assert_true(reg_session_open(r, id, PROOF, (uint32_t)i + 1, &resumed, err, sizeof(err)) >=
                    0);
    }
    assert_int_equal(reg_session_open(r, "one-more", PROOF, 100000, &resumed, err, sizeof(err)),
                     -1);
    assert_non_null(strstr(err, "too many"));
    for (int t = 1; t <= REG_MAX_TABS; t++)
        assert_int_equal(reg_tab_add(r, t, t % REG_MAX_SESSIONS, true), 0);
    assert_int_equal(reg_tab_add(r, REG_MAX_TABS + 1, 0, true), -1);
    reg_free(r);
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sessions), cmocka_unit_test(test_ownership),
        cmocka_unit_test(test_orphans),  cmocka_unit_test(test_claims),
        cmocka_unit_test(test_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
