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
#include <time.h>
#include <unistd.h>

#include "fdpass.h"
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
    char share_path[3][108]; /* [0] is path; [1], [2] two sessions' shares */
    int upstream;            /* listening on 127.0.0.1:port */
    int port;
};

static struct proxy P;

/* A listening Unix socket at P.share_path[i]. */
static int listen_share(int i)
{
    snprintf(P.share_path[i], sizeof P.share_path[i], "/tmp/tv-socks-test-%d-%d.sock",
             (int)getpid(), i);
    unlink(P.share_path[i]);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", P.share_path[i]);
    int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
    assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(lfd, 256), 0);
    return lfd;
}

/* Hand listening socket fd to the proxy over ctl, as firefox.c does. */
static void send_share(int ctl, int fd)
{
    assert_int_equal(fdpass_send(ctl, "s", 1, fd), 1);
    close(fd);
}

/* The proxy on its shared socket and two session shares, phases timing
 * out after timeouts (NULL: the defaults). */
static void start_proxy(const struct socks_timeouts *timeouts)
{
    assert_int_equal(pipe(release), 0);
    int lfd = listen_share(0);
    snprintf(P.path, sizeof P.path, "%s", P.share_path[0]);
    P.upstream = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in in = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof in;
    assert_int_equal(bind(P.upstream, (struct sockaddr *)&in, sizeof in), 0);
    /* Room for every connection the tests make, never accepted. */
    assert_int_equal(listen(P.upstream, 1024), 0);
    assert_int_equal(getsockname(P.upstream, (struct sockaddr *)&in, &len), 0);
    P.port = ntohs(in.sin_port);
    int ctl[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, ctl), 0);
    P.pid = fork();
    assert_true(P.pid >= 0);
    if (P.pid == 0) {
        signal(SIGPIPE, SIG_IGN);
        close(release[1]);
        close(ctl[0]);
        socks_proxy_set_resolver(fake_resolver);
        if (timeouts)
            socks_proxy_set_timeouts(timeouts);
        static const struct socks_policy policy = {.allow_link_local = false};
        socks_proxy_run(lfd, ctl[1], &policy);
    }
    close(ctl[1]);
    close(lfd);
    close(release[0]);
    send_share(ctl[0], listen_share(1));
    send_share(ctl[0], listen_share(2));
    close(ctl[0]);
}

static int setup(void **state)
{
    (void)state;
    start_proxy(NULL);
    return 0;
}

/* Short phases: a lookup waits 1 s for a thread and runs 2 s, a connect
 * runs 2 s, a server has 1 s to finish after the client closed. */
static int setup_short(void **state)
{
    (void)state;
    static const struct socks_timeouts t = {.handshake_ms = 10000,
                                            .lookup_wait_ms = 1000,
                                            .lookup_ms = 2000,
                                            .connect_ms = 2000,
                                            .half_close_ms = 1000};
    start_proxy(&t);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    kill(P.pid, SIGKILL);
    waitpid(P.pid, NULL, 0);
    for (int i = 0; i < 3; i++)
        unlink(P.share_path[i]);
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

/* A client of share sh that greeted the proxy and sent a CONNECT to host
 * (a name) on the upstream's port; its reply is not read yet. */
static int client_of(int sh, const char *host)
{
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", P.share_path[sh]);
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

static int client_to(const char *host)
{
    return client_of(0, host);
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

static long long ms_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Issue 36, finding 2, the first attack: a page of one session opens
 * connections to servers that accept and never answer. Its share holds
 * 128 of them; the rest are answered "general failure" at once, and
 * another session's connections go through, promptly. */
static void test_a_share_full_of_connections_holds_no_other(void **state)
{
    (void)state;
    enum { N = 150 };
    int fds[N], ok = 0, refused = 0;
    for (int i = 0; i < N; i++) {
        fds[i] = client_of(1, "127.0.0.1");
        int code = reply_code(fds[i]);
        ok += code == 0;
        refused += code == 1;
    }
    assert_int_equal(ok, SOCKS_SHARE_MAX_CONNS);
    assert_int_equal(refused, N - SOCKS_SHARE_MAX_CONNS);
    for (int round = 0; round < 5; round++) {
        long long t0 = ms_now();
        int other = client_of(2, "local.test");
        assert_int_equal(reply_code(other), 0);
        int shared = client_of(0, "127.0.0.1");
        assert_int_equal(reply_code(shared), 0);
        long long took = ms_now() - t0;
        if (took > 2000)
            fail_msg("another session's connection took %lld ms", took);
        close(other);
        close(shared);
    }
    /* One of the first session's own goes (its server never answers, so
     * after the half-close time): its share has room again. */
    close(fds[0]);
    int again = -1;
    for (int tries = 0; tries < 100 && again != 0; tries++) {
        int fd = client_of(1, "127.0.0.1");
        again = reply_code(fd);
        close(fd);
        if (again != 0)
            usleep(100 * 1000);
    }
    assert_int_equal(again, 0);
    for (int i = 1; i < N; i++)
        close(fds[i]);
}

/* The second attack: names whose DNS server never answers. A share runs 4
 * lookups at once; the rest wait, and a wait or a lookup that runs out of
 * time answers (1, then 4) instead of holding its connection forever.
 * Another session's names resolve meanwhile, promptly. */
static void test_a_share_of_hanging_lookups_holds_no_other(void **state)
{
    (void)state;
    enum { N = 64 };
    int fds[N];
    for (int i = 0; i < N; i++)
        fds[i] = client_of(1, "slow.test");
    for (int round = 0; round < 5; round++) {
        long long t0 = ms_now();
        int other = client_of(2, "local.test");
        assert_int_equal(reply_code(other), 0);
        long long took = ms_now() - t0;
        if (took > 2000)
            fail_msg("another session's lookup took %lld ms", took);
        close(other);
    }
    int waited = 0, ran = 0;
    for (int i = 0; i < N; i++) {
        int code = reply_code(fds[i]);
        waited += code == 1;
        ran += code == 4;
        close(fds[i]);
    }
    assert_int_equal(ran, 4);
    assert_int_equal(waited, N - 4);
    char ones[N];
    memset(ones, 'x', sizeof ones);
    assert_int_equal(write(release[1], ones, 4), 4);
}

/* A connect that never completes (a full backlog drops the SYN) answers
 * host unreachable once its time is up. */
static void test_a_connect_that_never_completes_times_out(void **state)
{
    (void)state;
    /* A listener whose backlog is full: further SYNs go unanswered. */
    int full = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in in = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof in;
    assert_int_equal(bind(full, (struct sockaddr *)&in, sizeof in), 0);
    assert_int_equal(listen(full, 0), 0);
    assert_int_equal(getsockname(full, (struct sockaddr *)&in, &len), 0);
    int fillers[4];
    for (int i = 0; i < 4; i++) {
        fillers[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        connect(fillers[i], (struct sockaddr *)&in, sizeof in);
    }
    int port = P.port;
    P.port = ntohs(in.sin_port);
    int fd = client_of(2, "127.0.0.1");
    P.port = port;
    long long t0 = ms_now();
    assert_int_equal(reply_code(fd), 4);
    long long took = ms_now() - t0;
    assert_true(took < 10000);
    close(fd);
    for (int i = 0; i < 4; i++)
        close(fillers[i]);
    close(full);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_slow_lookup_holds_only_its_connection, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_lookups_beyond_the_limit_wait_their_turn, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_share_full_of_connections_holds_no_other,
                                        setup_short, teardown),
        cmocka_unit_test_setup_teardown(test_a_share_of_hanging_lookups_holds_no_other, setup_short,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_connect_that_never_completes_times_out, setup_short,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
