/*
 * test_socks_proxy.c - the Firefox proxy's loop (supervisor/socks_proxy.c)
 * as Firefox meets it: a proxy process on a Unix socket, SOCKS5 clients, an
 * upstream on 127.0.0.1. Names go to a fake resolver, so that a DNS server
 * that never answers can be had: a lookup of "slow.test" waits until the
 * test writes a byte to `release`.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "socks_proxy.h"

/* A reply that does not come within this is one the proxy holds back. */
#define WAIT_MS 20000

static int release[2];

static int fake_resolver(const char *host, const char *service, const struct addrinfo *hints,
                         struct addrinfo **res)
{
    if (!strcmp(host, "local.test"))
        return getaddrinfo("127.0.0.1", service, hints, res);
    if (!strcmp(host, "slow.test")) {
        char b;
        while (read(release[0], &b, 1) < 0 && errno == EINTR)
            ;
    }
    return EAI_NONAME;
}

struct proxy {
    pid_t pid;
    char path[108];
    int upstream; /* listening on 127.0.0.1:port */
    int port;
};

static struct proxy P;

static int setup(void **state)
{
    (void)state;
    assert_int_equal(pipe(release), 0);
    snprintf(P.path, sizeof P.path, "/tmp/tv-socks-test-%d.sock", (int)getpid());
    unlink(P.path);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", P.path);
    int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
    assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(lfd, 64), 0);
    P.upstream = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in in = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof in;
    assert_int_equal(bind(P.upstream, (struct sockaddr *)&in, sizeof in), 0);
    assert_int_equal(listen(P.upstream, 64), 0);
    assert_int_equal(getsockname(P.upstream, (struct sockaddr *)&in, &len), 0);
    P.port = ntohs(in.sin_port);
    P.pid = fork();
    assert_true(P.pid >= 0);
    if (P.pid == 0) {
        signal(SIGPIPE, SIG_IGN);
        close(release[1]);
        socks_proxy_set_resolver(fake_resolver);
        static const struct socks_policy policy = {{0}, false, NULL, 0, NULL, 0};
        socks_proxy_run(lfd, &policy);
    }
    close(lfd);
    close(release[0]);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    kill(P.pid, SIGKILL);
    waitpid(P.pid, NULL, 0);
    unlink(P.path);
    close(P.upstream);
    close(release[1]);
    return 0;
}

/* Read exactly n bytes from fd within WAIT_MS; false when they do not come. */
static bool read_n(int fd, unsigned char *buf, size_t n)
{
    for (size_t got = 0; got < n;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, WAIT_MS) != 1)
            return false;
        ssize_t r = read(fd, buf + got, n - got);
        if (r <= 0)
            return false;
        got += (size_t)r;
    }
    return true;
}

/* A client that greeted the proxy and sent a CONNECT to host (a name) on
 * the upstream's port; its reply is not read yet. */
static int client_to(const char *host)
{
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", P.path);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    const unsigned char hello[] = {5, 1, 0};
    unsigned char r[2];
    assert_int_equal(write(fd, hello, sizeof hello), sizeof hello);
    assert_true(read_n(fd, r, 2));
    assert_int_equal(r[1], 0);
    unsigned char req[300] = {5, 1, 0, 3, (unsigned char)strlen(host)};
    size_t n = 5 + strlen(host);
    memcpy(req + 5, host, strlen(host));
    req[n++] = (unsigned char)(P.port >> 8);
    req[n++] = (unsigned char)(P.port & 0xff);
    assert_int_equal(write(fd, req, n), (ssize_t)n);
    return fd;
}

/* The SOCKS reply code the proxy sent fd, or -1 when none came. */
static int reply_code(int fd)
{
    unsigned char r[10];
    return read_n(fd, r, sizeof r) ? r[1] : -1;
}

/* A name whose lookup never ends holds only its own connection: a name
 * that resolves, and an address, connect meanwhile and carry bytes; a
 * name that does not resolve is refused (4). Released, the slow one is
 * refused too. */
static void test_slow_lookup_holds_only_its_connection(void **state)
{
    (void)state;
    int slow = client_to("slow.test");
    int named = client_to("local.test");
    assert_int_equal(reply_code(named), 0);
    int up = accept(P.upstream, NULL, NULL);
    assert_true(up >= 0);
    assert_int_equal(write(up, "hi", 2), 2);
    unsigned char b[2];
    assert_true(read_n(named, b, 2));
    assert_memory_equal(b, "hi", 2);
    int literal = client_to("127.0.0.1");
    assert_int_equal(reply_code(literal), 0);
    int up2 = accept(P.upstream, NULL, NULL);
    assert_true(up2 >= 0);
    int nowhere = client_to("nowhere.test");
    assert_int_equal(reply_code(nowhere), 4);
    assert_int_equal(write(release[1], "x", 1), 1);
    assert_int_equal(reply_code(slow), 4);
    int fds[] = {slow, named, up, literal, up2, nowhere};
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
        close(fds[i]);
}

/* More slow lookups than run at once (16): the rest wait for a slot, and
 * each gets its answer once released; an address needs no slot and
 * connects meanwhile. A client that leaves while its lookup runs costs
 * nothing: the others still get theirs, and a name resolves afterwards. */
static void test_lookups_beyond_the_limit_wait_their_turn(void **state)
{
    (void)state;
    enum { N = 24 };
    int fds[N];
    for (int i = 0; i < N; i++)
        fds[i] = client_to("slow.test");
    close(fds[0]); /* its lookup runs on; its connection is gone */
    int literal = client_to("127.0.0.1");
    assert_int_equal(reply_code(literal), 0);
    int up = accept(P.upstream, NULL, NULL);
    assert_true(up >= 0);
    char ones[N];
    memset(ones, 'x', sizeof ones);
    assert_int_equal(write(release[1], ones, N), N);
    for (int i = 1; i < N; i++) {
        assert_int_equal(reply_code(fds[i]), 4);
        close(fds[i]);
    }
    int named = client_to("local.test");
    assert_int_equal(reply_code(named), 0);
    int up2 = accept(P.upstream, NULL, NULL);
    assert_true(up2 >= 0);
    int fds2[] = {literal, up, named, up2};
    for (size_t i = 0; i < sizeof fds2 / sizeof fds2[0]; i++)
        close(fds2[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_slow_lookup_holds_only_its_connection, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_lookups_beyond_the_limit_wait_their_turn, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
