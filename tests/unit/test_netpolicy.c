/*
 * test_netpolicy.c - the worker's request policy (worker/netpolicy.c) on
 * link-local addresses: refused by default (the cloud's metadata service at
 * 169.254.169.254 hands out credentials), allowed with --allow-link-local
 * (blockLinkLocal false). Checked here on URLs rather than end to end: a
 * test must never send a packet to such an address, and a broken policy
 * would.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "netpolicy.h"

static void configure(bool block)
{
    json_t *cfg = json_pack("{s:b}", "blockLinkLocal", block);
    char err[200];
    assert_int_equal(netpolicy_configure(cfg, err, sizeof err), 0);
    json_decref(cfg);
}

static void test_link_local_refused_by_default(void **state)
{
    configure(true);
    assert_true(netpolicy_active());
    const char *refused[] = {"http://169.254.169.254/latest/meta-data/",
                             "https://169.254.0.1:8443/x",
                             "http://user:pw@169.254.169.254/",
                             "http://[fe80::1]/",
                             "http://[febf::1]:8080/",
                             "http://[::ffff:a9fe:a9fe]/",
                             "http://metadata.google.internal/computeMetadata/v1/",
                             "http://METADATA.GOOGLE.INTERNAL/",
                             /* Issue 36, finding 7: metadata beyond link-local. */
                             "http://[fd00:ec2::254]/latest/meta-data/",
                             "http://100.100.100.200/latest/meta-data/",
                             "http://168.63.129.16/machine?comp=goalstate",
                             "http://[::ffff:6464:64c8]/",
                             "http://[::ffff:a83f:8110]/"};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        const char *why = netpolicy_check(refused[i]);
        if (!why)
            fail_msg("allowed: %s", refused[i]);
        assert_non_null(strstr(why, "link-local"));
    }
    const char *allowed[] = {"http://127.0.0.1:8080/",
                             "https://example.org/169.254.169.254",
                             "http://169.254.1.2.example.com/",
                             "http://10.0.0.1/",
                             "http://[fec0::1]/",
                             "data:text/html,x",
                             "about:blank"};
    for (size_t i = 0; i < sizeof allowed / sizeof *allowed; i++) {
        const char *why = netpolicy_check(allowed[i]);
        if (why)
            fail_msg("refused: %s (%s)", allowed[i], why);
    }
}

static void test_allow_link_local(void **state)
{
    configure(false);
    assert_false(netpolicy_active());
    assert_null(netpolicy_check("http://169.254.169.254/"));
    assert_null(netpolicy_check("http://[fe80::1]/"));
    assert_null(netpolicy_check("http://168.63.129.16/"));
    assert_null(netpolicy_check("http://[fd00:ec2::254]/"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_link_local_refused_by_default),
        cmocka_unit_test(test_allow_link_local),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
