/*
 * test_sessions.c - randomized property tests of the session table
 * (supervisor/sessions.c) with a fake clock. Each property runs at least
 * 100 generated cases; the seed is printed so a failure can be replayed
 * with TV_SEED=N.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "errors.h"
#include "sessions.h"

#define CASES 200

static unsigned long long rng_state;

static unsigned rnd(unsigned n)
{
    /* xorshift64*: deterministic per seed, independent of libc rand. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (unsigned)((rng_state * 2685821657736338717ULL) >> 33) % n;
}

static void seed(void)
{
    const char *s = getenv("TV_SEED");
    rng_state = s ? strtoull(s, NULL, 10) : 0x9E3779B97F4A7C15ULL ^ (unsigned long long)time(NULL);
    if (!rng_state)
        rng_state = 1;
    printf("# seed %llu\n", rng_state);
}

/* Ids are unique, well-formed v4 UUIDs. */
static void ids_unique(void **state)
{
    (void)state;
    for (int c = 0; c < CASES; c++) {
        size_t max = 1 + rnd(64);
        struct session_table *t = session_table_new(max, 60000);
        for (size_t i = 0; i < max; i++) {
            struct session *s;
            assert_int_equal(session_create(t, 1000, &s), TV_OK);
            assert_int_equal(strlen(s->id), SESSION_UUID_LEN); /* no --instance-id */
            assert_int_equal(s->id[14], '4');
            assert_true(strchr("89ab", s->id[19]) != NULL);
            for (size_t j = 0; j + 1 < session_count(t); j++)
                assert_string_not_equal(session_at(t, j)->id, s->id);
        }
        session_table_free(t);
    }
}

/* expiresAt = last use + idle timeout, for any sequence of uses. */
static void expiry_slides(void **state)
{
    (void)state;
    for (int c = 0; c < CASES; c++) {
        long long idle = 1 + rnd(100000);
        struct session_table *t = session_table_new(4, idle);
        struct session *s;
        long long now = rnd(1000000);
        assert_int_equal(session_create(t, now, &s), TV_OK);
        assert_int_equal(session_expires_at(t, s), now + idle);
        long long last = now;
        for (int k = 0; k < 20; k++) {
            now += rnd((unsigned)idle); /* stays within the idle window */
            session_touch(t, s, now);
            last = now;
            assert_int_equal(session_expires_at(t, s), last + idle);
            assert_null(session_next_expired(t, now + idle - 1));
        }
        assert_ptr_equal(session_next_expired(t, last + idle), s);
        /* A busy session never expires. */
        s->busy = 1;
        assert_null(session_next_expired(t, last + 10 * idle));
        s->busy = 0;
        char id[SESSION_ID_LEN + 1];
        memcpy(id, s->id, sizeof id);
        session_expire(t, s);
        struct session *found;
        assert_int_equal(session_lookup(t, id, &found), TV_SESSION_EXPIRED);
        session_table_free(t);
    }
}

/* Under any interleaving of creates, closes and expiries: the limit holds,
 * a closed id is gone, a live id is found, an unknown id is not. */
static void interleavings(void **state)
{
    (void)state;
    for (int c = 0; c < CASES; c++) {
        size_t max = 1 + rnd(8);
        struct session_table *t = session_table_new(max, 1000);
        char closed[64][SESSION_ID_LEN + 1];
        size_t nclosed = 0;
        long long now = 0;
        for (int step = 0; step < 100; step++) {
            now += rnd(300);
            unsigned op = rnd(4);
            struct session *s;
            if (op <= 1) {
                size_t before = session_count(t);
                enum tv_err e = session_create(t, now, &s);
                if (before < max) {
                    assert_int_equal(e, TV_OK);
                    assert_int_equal(session_count(t), before + 1);
                } else {
                    assert_int_equal(e, TV_MAX_SESSIONS_REACHED);
                    assert_int_equal(session_count(t), before);
                }
            } else if (op == 2 && session_count(t)) {
                s = session_at(t, rnd((unsigned)session_count(t)));
                if (nclosed < 64)
                    memcpy(closed[nclosed++], s->id, SESSION_ID_LEN + 1);
                session_remove(t, s);
            } else if (op == 3) {
                while ((s = session_next_expired(t, now)))
                    session_expire(t, s);
            }
            assert_true(session_count(t) <= max);
            for (size_t i = 0; i < nclosed; i++) {
                struct session *f;
                assert_int_equal(session_lookup(t, closed[i], &f), TV_SESSION_NOT_FOUND);
            }
            for (size_t i = 0; i < session_count(t); i++) {
                struct session *f;
                assert_int_equal(session_lookup(t, session_at(t, i)->id, &f), TV_OK);
                assert_ptr_equal(f, session_at(t, i));
            }
            char unknown[SESSION_ID_LEN + 1];
            session_new_id(unknown, NULL);
            struct session *f;
            assert_int_equal(session_lookup(t, unknown, &f), TV_SESSION_NOT_FOUND);
        }
        session_table_free(t);
    }
}

/* True when s is "prefix" + a lower-case v4 UUID. */
static bool is_prefixed_uuid(const char *s, const char *prefix)
{
    size_t p = strlen(prefix);
    if (strncmp(s, prefix, p) != 0 || strlen(s) != p + SESSION_UUID_LEN)
        return false;
    for (size_t i = 0; i < SESSION_UUID_LEN; i++) {
        char ch = s[p + i];
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? ch != '-' : !((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')))
            return false;
    }
    return s[p + 14] == '4' && strchr("89ab", s[p + 19]);
}

/* --instance-id: a table with a name makes "NAME." + UUID ids, the longest
 * name's ids fill SESSION_ID_LEN exactly, and the names that may be given are
 * 1..32 of [a-z0-9-]. */
static void instance_prefix(void **state)
{
    (void)state;
    char id[SESSION_ID_LEN + 1];
    session_new_id(id, NULL);
    assert_true(is_prefixed_uuid(id, ""));
    session_new_id(id, "");
    assert_true(is_prefixed_uuid(id, ""));
    session_new_id(id, "r1");
    assert_true(is_prefixed_uuid(id, "r1."));
    const char *longest = "abcdefghijklmnopqrstuvwxyz-01234"; /* 32 */
    assert_true(instance_id_valid(longest));
    session_new_id(id, longest);
    assert_int_equal(strlen(id), SESSION_ID_LEN);
    assert_true(is_prefixed_uuid(id, "abcdefghijklmnopqrstuvwxyz-01234."));

    struct session_table *t = session_table_new(8, 1000);
    session_table_set_instance(t, "tabvisor-0");
    struct session *s;
    for (int k = 0; k < 8; k++) {
        assert_int_equal(session_create(t, 0, &s), TV_OK);
        assert_true(is_prefixed_uuid(s->id, "tabvisor-0."));
        struct session *f;
        assert_int_equal(session_lookup(t, s->id, &f), TV_OK);
        assert_ptr_equal(f, s);
        /* The bare UUID is another id. */
        assert_int_equal(session_lookup(t, s->id + strlen("tabvisor-0."), &f),
                         TV_SESSION_NOT_FOUND);
    }
    session_table_set_instance(t, NULL);
    session_remove(t, s);
    assert_int_equal(session_create(t, 0, &s), TV_OK);
    assert_true(is_prefixed_uuid(s->id, ""));
    session_table_free(t);

    const char *good[] = {"r1", "a", "0", "-", "tabvisor-0", "abcdefghijklmnopqrstuvwxyz-01234"};
    const char *bad[] = {"",
                         "R1",
                         "r1.",
                         "r.1",
                         "r_1",
                         "r 1",
                         "r1\n",
                         "é",
                         "../",
                         "r1/x",
                         "tabvisor-0.tabvisor",
                         "abcdefghijklmnopqrstuvwxyz-012345"};
    for (size_t k = 0; k < sizeof good / sizeof *good; k++)
        assert_true(instance_id_valid(good[k]));
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++)
        if (instance_id_valid(bad[k]))
            fail_msg("accepted '%s'", bad[k]);
}

/* Every error result carries a code and a message, plus the sessionId when
 * given; different failures have different codes. */
static void error_results(void **state)
{
    (void)state;
    for (int c = 0; c < CASES; c++) {
        enum tv_err e = (enum tv_err)(1 + rnd(TV_ERR_COUNT - 1));
        char sid[SESSION_ID_LEN + 1];
        session_new_id(sid, NULL);
        bool with_sid = rnd(2);
        json_t *r = tv_error_result(e, "something failed", rnd(2) ? "a hint" : NULL,
                                    with_sid ? sid : NULL, NULL);
        assert_true(json_is_true(json_object_get(r, "isError")));
        json_t *sc = json_object_get(r, "structuredContent");
        json_t *err = json_object_get(sc, "error");
        assert_string_equal(json_string_value(json_object_get(err, "code")), tv_err_code(e));
        assert_string_equal(json_string_value(json_object_get(err, "message")), "something failed");
        if (with_sid)
            assert_string_equal(json_string_value(json_object_get(sc, "sessionId")), sid);
        else
            assert_null(json_object_get(sc, "sessionId"));
        json_decref(r);
    }
    for (int a = 1; a < TV_ERR_COUNT; a++)
        for (int b = a + 1; b < TV_ERR_COUNT; b++)
            assert_string_not_equal(tv_err_code((enum tv_err)a), tv_err_code((enum tv_err)b));
}

int main(void)
{
    seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ids_unique),      cmocka_unit_test(expiry_slides),
        cmocka_unit_test(interleavings),   cmocka_unit_test(error_results),
        cmocka_unit_test(instance_prefix),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
