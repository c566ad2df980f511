/*
 * test_socks_policy.c - the Firefox proxy's policy and request parser
 * (supervisor/socks_proxy.c), on addresses and bytes only: nothing is
 * connected to.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "socks_proxy.h"

static const char *refuses(const struct socks_policy *p, const char *addr, int port)
{
    struct sockaddr_in a4 = {.sin_family = AF_INET};
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6};
    if (inet_pton(AF_INET, addr, &a4.sin_addr) == 1)
        return socks_policy_refuses(p, (struct sockaddr *)&a4, port);
    assert_int_equal(inet_pton(AF_INET6, addr, &a6.sin6_addr), 1);
    return socks_policy_refuses(p, (struct sockaddr *)&a6, port);
}

static void test_link_local_and_blocked_ports(void **state)
{
    (void)state;
    struct socks_policy p = {.blocked_ports = {8931}};
    assert_non_null(refuses(&p, "169.254.169.254", 80));
    assert_non_null(refuses(&p, "169.254.0.1", 443));
    assert_non_null(refuses(&p, "fe80::1", 80));
    assert_non_null(refuses(&p, "febf::1", 80));
    assert_non_null(refuses(&p, "::ffff:169.254.169.254", 80));
    assert_null(refuses(&p, "169.253.255.255", 80));
    assert_null(refuses(&p, "169.255.0.1", 80));
    assert_null(refuses(&p, "fec0::1", 80));
    assert_null(refuses(&p, "127.0.0.1", 8080));
    assert_null(refuses(&p, "::1", 8080));
    assert_non_null(strstr(refuses(&p, "127.0.0.1", 8931), "tabvisor's own"));
    assert_non_null(strstr(refuses(&p, "::1", 8931), "tabvisor's own"));
    p.allow_link_local = true;
    assert_null(refuses(&p, "169.254.169.254", 80));
    assert_null(refuses(NULL, "10.0.0.1", 80));
    assert_non_null(refuses(NULL, "169.254.169.254", 80));
}

static void test_origin_lists_by_host_and_port(void **state)
{
    (void)state;
    struct origin_rule blocked[2], allowed[3];
    assert_int_equal(origin_rule_parse("evil.example", &blocked[0]), 0);
    assert_int_equal(origin_rule_parse("http://127.0.0.1:9000", &blocked[1]), 0);
    assert_int_equal(origin_rule_parse("*.example.com", &allowed[0]), 0);
    assert_int_equal(origin_rule_parse("https://docs.test", &allowed[1]), 0);
    assert_int_equal(origin_rule_parse("http://[::1]:8080", &allowed[2]), 0);
    struct socks_policy p = {.blocked = blocked, .nblocked = 2};
    /* A blocklist alone: what it names, on any port for a host rule. */
    assert_non_null(socks_policy_refuses_host(&p, "evil.example", 443));
    assert_non_null(socks_policy_refuses_host(&p, "EVIL.example", 80));
    assert_non_null(socks_policy_refuses_host(&p, "127.0.0.1", 9000));
    assert_null(socks_policy_refuses_host(&p, "127.0.0.1", 9001));
    assert_null(socks_policy_refuses_host(&p, "sub.evil.example", 80));
    /* With an allowlist, what it does not name is refused; the blocklist wins. */
    p.allowed = allowed;
    p.nallowed = 3;
    assert_null(socks_policy_refuses_host(&p, "a.example.com", 443));
    assert_null(socks_policy_refuses_host(&p, "docs.test", 443));
    assert_non_null(socks_policy_refuses_host(&p, "docs.test", 8443));
    assert_null(socks_policy_refuses_host(&p, "::1", 8080));
    assert_non_null(socks_policy_refuses_host(&p, "::1", 8081));
    assert_non_null(socks_policy_refuses_host(&p, "example.org", 443));
    assert_non_null(socks_policy_refuses_host(&p, "evil.example", 443));
    struct origin_rule both;
    assert_int_equal(origin_rule_parse("evil.example", &both), 0);
    p.allowed = &both;
    p.nallowed = 1;
    assert_non_null(strstr(socks_policy_refuses_host(&p, "evil.example", 80), "blocked"));
}

/* Issue 36, finding 3: other spellings of a blocked origin, as a CONNECT
 * names them, and the address a name led to. */
static void test_blocked_in_every_spelling_and_by_address(void **state)
{
    (void)state;
    struct origin_rule blocked[2];
    assert_int_equal(origin_rule_parse("http://127.0.0.1:9000", &blocked[0]), 0);
    assert_int_equal(origin_rule_parse("fast.test", &blocked[1]), 0);
    struct socks_policy p = {.blocked = blocked, .nblocked = 2};
    assert_non_null(socks_policy_refuses_host(&p, "fast.test.", 4000));
    assert_non_null(socks_policy_refuses_host(&p, "::ffff:127.0.0.1", 9000));
    assert_non_null(socks_policy_refuses_host(&p, "::ffff:7f00:1", 9000));
    assert_non_null(socks_policy_refuses_host(&p, "localhost", 9000));
    assert_null(socks_policy_refuses_host(&p, "localhost", 9001));
    /* Whatever name resolved to it, the address connected to is judged. */
    assert_non_null(strstr(refuses(&p, "127.0.0.1", 9000), "blocked"));
    assert_non_null(strstr(refuses(&p, "::ffff:127.0.0.1", 9000), "blocked"));
    assert_null(refuses(&p, "127.0.0.1", 9001));
    assert_null(refuses(&p, "::1", 9000));
    /* Finding 7: the clouds' metadata addresses beyond link-local. */
    assert_non_null(refuses(&p, "100.100.100.200", 80));
    assert_non_null(refuses(&p, "168.63.129.16", 80));
    assert_non_null(refuses(&p, "fd00:ec2::254", 80));
    assert_non_null(refuses(&p, "::ffff:100.100.100.200", 80));
    p.allow_link_local = true;
    assert_null(refuses(&p, "168.63.129.16", 80));
    assert_null(refuses(&p, "fd00:ec2::254", 80));
}

static void test_requests(void **state)
{
    (void)state;
    char host[256];
    int port, code;
    const unsigned char v4[] = {5, 1, 0, 1, 127, 0, 0, 1, 0x1f, 0x90};
    assert_int_equal(socks_parse_request(v4, sizeof v4, host, sizeof host, &port, &code), 10);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(port, 8080);
    assert_int_equal(socks_parse_request(v4, 7, host, sizeof host, &port, &code), 0);
    const unsigned char name[] = {5,   1,   0,   3,   9,   'l', 'o', 'c',
                                  'a', 'l', 'h', 'o', 's', 't', 0,   80};
    assert_int_equal(socks_parse_request(name, sizeof name, host, sizeof host, &port, &code), 16);
    assert_string_equal(host, "localhost");
    const unsigned char bind[] = {5, 2, 0, 1, 127, 0, 0, 1, 0, 80};
    assert_int_equal(socks_parse_request(bind, sizeof bind, host, sizeof host, &port, &code), -1);
    assert_int_equal(code, 7);
    const unsigned char atyp[] = {5, 1, 0, 9, 0, 0, 0, 0, 0, 80};
    assert_int_equal(socks_parse_request(atyp, sizeof atyp, host, sizeof host, &port, &code), -1);
    assert_int_equal(code, 8);
    const unsigned char nul[] = {5, 1, 0, 3, 3, 'a', 0, 'b', 0, 80};
    assert_int_equal(socks_parse_request(nul, sizeof nul, host, sizeof host, &port, &code), -1);
    const unsigned char port0[] = {5, 1, 0, 1, 127, 0, 0, 1, 0, 0};
    assert_int_equal(socks_parse_request(port0, sizeof port0, host, sizeof host, &port, &code), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_link_local_and_blocked_ports),
        cmocka_unit_test(test_origin_lists_by_host_and_port),
        cmocka_unit_test(test_blocked_in_every_spelling_and_by_address),
        cmocka_unit_test(test_requests),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
