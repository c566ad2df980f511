/*
 * test_origins.c - origin rules and the canonical spelling of hosts
 * (proto/origins.c; issue 36, findings 3 and 7): every spelling of a
 * blocked address is the address, a name's trailing dot goes, localhost is
 * loopback for a blocked rule, and the clouds' metadata addresses are known.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "origins.h"

static const char *canon(const char *host)
{
    static char buf[ORIGIN_MAX_HOST];
    snprintf(buf, sizeof buf, "%s", host);
    origin_host_canon(buf);
    return buf;
}

static void test_canonical_hosts(void **state)
{
    (void)state;
    const char *cases[][2] = {
        {"127.0.0.1", "127.0.0.1"},
        {"127.0.0.1.", "127.0.0.1"},
        {"0x7f.1", "127.0.0.1"},
        {"0x7f000001", "127.0.0.1"},
        {"2130706433", "127.0.0.1"},
        {"0177.0.0.01", "127.0.0.1"},
        {"127.1", "127.0.0.1"},
        {"[::ffff:127.0.0.1]", "127.0.0.1"},
        {"[::ffff:7f00:1]", "127.0.0.1"},
        {"[::127.0.0.1]", "127.0.0.1"},
        {"[0:0:0:0:0:ffff:7f00:0001]", "127.0.0.1"},
        {"[::1]", "[::1]"},
        {"[0:0::1]", "[::1]"},
        {"[::]", "[::]"},
        {"[FD00:EC2:0::254]", "[fd00:ec2::254]"},
        {"[fd00:ec2:0::254]", "[fd00:ec2::254]"},
        {"fast.test.", "fast.test"},
        {"fast.test", "fast.test"},
        {"localhost.", "localhost"},
        {"1.2.3.256", "1.2.3.256"}, /* ends in a number but is no address: left as is */
        {"example.0x", "example.0x"},
        {"0xzz", "0xzz"},
        {"a.b.c.d.e", "a.b.c.d.e"},
        {"a..", "a.."}, /* canonical stays canonical */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = canon(cases[i][0]);
        if (strcmp(got, cases[i][1]) != 0)
            fail_msg("%s: %s, want %s", cases[i][0], got, cases[i][1]);
    }
}

static bool blocks(const char *rule, const char *url)
{
    struct origin_rule r;
    struct url_origin o;
    assert_int_equal(origin_rule_parse(rule, &r), 0);
    assert_int_equal(url_origin_parse(url, &o), 0);
    return origin_rule_blocks(&r, &o);
}

static bool allows(const char *rule, const char *url)
{
    struct origin_rule r;
    struct url_origin o;
    assert_int_equal(origin_rule_parse(rule, &r), 0);
    assert_int_equal(url_origin_parse(url, &o), 0);
    return origin_rule_matches(&r, &o);
}

static void test_every_spelling_of_a_blocked_origin(void **state)
{
    (void)state;
    const char *rule = "http://127.0.0.1:8080";
    const char *same[] = {"http://127.0.0.1:8080/",        "http://[::ffff:127.0.0.1]:8080/",
                          "http://[::ffff:7f00:1]:8080/x", "http://localhost:8080/",
                          "http://LOCALHOST.:8080/",       "http://a.localhost:8080/",
                          "http://0x7f.1:8080/",           "http://2130706433:8080/",
                          "http://127.0.0.1.:8080/",       "http://u@127.0.0.1:8080/"};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++)
        if (!blocks(rule, same[i]))
            fail_msg("%s passes %s", same[i], rule);
    assert_false(blocks(rule, "http://127.0.0.1:8081/"));
    assert_false(blocks(rule, "https://127.0.0.1:8080/"));
    assert_false(blocks(rule, "http://127.0.0.2:8080/"));
    assert_false(blocks(rule, "http://notlocalhost:8080/"));
    assert_true(blocks("http://[::1]:8080", "http://localhost:8080/"));
    assert_true(blocks("http://[0::1]:8080", "http://[::1]:8080/"));
    /* Host rules: one trailing dot is the same name. */
    assert_true(blocks("fast.test", "http://fast.test.:4000/"));
    assert_true(blocks("fast.test.", "http://fast.test:4000/"));
    assert_true(blocks("*.fast.test", "http://a.fast.test.:4000/"));
    assert_false(blocks("fast.test", "http://fast.test..:4000/"));
    assert_true(blocks("127.0.0.1", "http://[::ffff:127.0.0.1]/"));
    /* An allowlist entry allows its own origin, in any spelling, but
     * localhost stays another origin than 127.0.0.1. */
    assert_true(allows("http://127.0.0.1:8080", "http://[::ffff:7f00:1]:8080/"));
    assert_false(allows("http://127.0.0.1:8080", "http://localhost:8080/"));
}

static void test_metadata_addresses(void **state)
{
    (void)state;
    const char *meta[] = {
        "169.254.169.254",          "169.254.0.1",     "[fe80::1]",       "[febf::1]",
        "metadata.google.internal", "[fd00:ec2::254]", "100.100.100.200", "168.63.129.16"};
    for (size_t i = 0; i < sizeof meta / sizeof meta[0]; i++)
        if (!origin_host_is_metadata(meta[i]))
            fail_msg("%s is not seen as metadata", meta[i]);
    /* The spellings a page could use reach it through the canonical form. */
    const char *spelled[] = {"[::ffff:a9fe:a9fe]", "[::ffff:100.100.100.200]",
                             "[::ffff:a83f:8110]", "[fd00:0ec2:0:0:0:0:0:254]",
                             "0xa83f8110",         "metadata.google.internal."};
    for (size_t i = 0; i < sizeof spelled / sizeof spelled[0]; i++)
        if (!origin_host_is_metadata(canon(spelled[i])))
            fail_msg("%s (%s) is not seen as metadata", spelled[i], canon(spelled[i]));
    const char *not_meta[] = {"169.253.255.255", "169.255.0.1",     "[fec0::1]", "100.100.100.201",
                              "168.63.129.17",   "[fd00:ec2::255]", "127.0.0.1"};
    for (size_t i = 0; i < sizeof not_meta / sizeof not_meta[0]; i++)
        if (origin_host_is_metadata(not_meta[i]))
            fail_msg("%s is seen as metadata", not_meta[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_canonical_hosts),
        cmocka_unit_test(test_every_spelling_of_a_blocked_origin),
        cmocka_unit_test(test_metadata_addresses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
