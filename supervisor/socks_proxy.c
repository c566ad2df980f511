/*
 * socks_proxy.c - a SOCKS5 CONNECT proxy on a Unix socket for Firefox
 * (socks_proxy.h).
 */
#include "socks_proxy.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fdpass.h"
#include "log.h"

/* Each direction of a connection; loopback moves 16 KiB a wake-up. */
#define SOCKS_BUF 16384
/* Name lookups run at once, each on a thread of its own; more wait. At
 * most SHARE_MAX_LOOKUPS of them are one share's. */
#define MAX_LOOKUPS 32
#define SHARE_MAX_LOOKUPS 4
#define LOOKUP_STACK (512 * 1024)
/* Connections beyond every share's quota: room to answer a refusal. */
#define REFUSAL_ROOM 64

enum phase {
    GREETING,   /* waiting for the client's methods */
    REQUEST,    /* waiting for its CONNECT */
    RESOLVING,  /* the CONNECT's name is being looked up (struct lookup) */
    CONNECTING, /* our connect to the target is under way */
    SPLICING,   /* bytes both ways */
    CLOSING,    /* a refusal is being written; then close */
};

struct conn {
    int cfd, ufd;       /* client (Firefox), upstream (the target); -1 when none */
    int share;          /* the listener it came in on (struct share) */
    bool counted;       /* in its share's quota; else it is refused */
    long long deadline; /* CLOCK_MONOTONIC ms its phase may last; 0: none */
    enum phase phase;
    unsigned char up[SOCKS_BUF]; /* from the client, for the target (and the handshake) */
    int nup;
    unsigned char down[SOCKS_BUF]; /* for the client */
    int ndown;
    bool c_eof, u_eof, c_shut, u_shut;
    struct lookup *lookup; /* while RESOLVING */
};

/* A name lookup. getaddrinfo blocks, for seconds when a DNS server is slow
 * (Firefox asks for its update and settings hosts at start), so it runs on
 * a detached thread, which must not hold the other connections. The thread
 * reads host and service and writes rc and ai, then hands the struct back
 * through done_pipe; everything else, and the struct once handed back, is
 * the loop's. */
struct lookup {
    struct conn *conn; /* NULL once the connection went away or gave up */
    int share;
    bool started;
    int port;
    char host[256], service[8];
    int rc;
    struct addrinfo *ai;
};

/* One session's share of the proxy: a listener of its own (share 0 is
 * the Unix socket every other connection of Firefox comes through), its
 * connections and its running lookups, each held to a quota, so that one
 * page cannot take the proxy from every other session (issue 36, finding
 * 2). */
struct share {
    int lfd;
    int nconns;  /* counted connections */
    int lookups; /* running lookup threads (until each thread returns) */
    bool full;   /* said so in the log; again once below 3/4 */
    unsigned refused;
};

static struct share shares[SOCKS_MAX_SHARES];
static int nshares;
static struct conn *conns[SOCKS_MAX_CONNS];
static int nconns;
static int max_conns = SOCKS_MAX_CONNS; /* lower when the fd limit is */
static int lookups_running;
static int done_pipe[2] = {-1, -1};
static socks_resolver resolver = getaddrinfo;
static struct socks_timeouts T = {.handshake_ms = 10000,
                                  .lookup_wait_ms = 10000,
                                  .lookup_ms = 15000,
                                  .connect_ms = 15000,
                                  .half_close_ms = 30000};

void socks_proxy_set_resolver(socks_resolver r)
{
    resolver = r ? r : getaddrinfo;
}

void socks_proxy_set_timeouts(const struct socks_timeouts *t)
{
    T = *t;
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int socks_parse_request(const unsigned char *buf, int len, char *host, int hostlen, int *port,
                        int *reply_code)
{
    *reply_code = 1;
    if (len < 5)
        return 0;
    if (buf[0] != 5 || buf[2] != 0)
        return -1;
    int need;
    switch (buf[3]) {
    case 1:
        need = 4 + 4 + 2;
        break;
    case 3:
        need = 4 + 1 + buf[4] + 2;
        break;
    case 4:
        need = 4 + 16 + 2;
        break;
    default:
        *reply_code = 8;
        return -1;
    }
    if (len < need)
        return 0;
    if (buf[1] != 1) {
        *reply_code = 7; /* only CONNECT */
        return -1;
    }
    if (buf[3] == 1) {
        if (!inet_ntop(AF_INET, buf + 4, host, (socklen_t)hostlen))
            return -1;
    } else if (buf[3] == 4) {
        if (!inet_ntop(AF_INET6, buf + 4, host, (socklen_t)hostlen))
            return -1;
    } else {
        int n = buf[4];
        if (n == 0 || n >= hostlen || memchr(buf + 5, '\0', (size_t)n))
            return -1;
        memcpy(host, buf + 5, (size_t)n);
        host[n] = '\0';
    }
    *port = (buf[need - 2] << 8) | buf[need - 1];
    if (*port == 0)
        return -1;
    return need;
}

static void conn_free(int i)
{
    struct conn *c = conns[i];
    if (c->counted) {
        struct share *sh = &shares[c->share];
        sh->nconns--;
        if (sh->full && sh->nconns < SOCKS_SHARE_MAX_CONNS * 3 / 4)
            sh->full = false;
    }
    if (c->lookup && c->lookup->started)
        c->lookup->conn = NULL; /* the loop frees it when the thread is done */
    else
        free(c->lookup);
    if (c->cfd >= 0)
        close(c->cfd);
    if (c->ufd >= 0)
        close(c->ufd);
    free(c);
    conns[i] = conns[--nconns];
}

/* Queue a SOCKS5 reply for the client; a refusal closes after it. */
static void reply(struct conn *c, int code)
{
    const unsigned char r[10] = {5, (unsigned char)code, 0, 1, 0, 0, 0, 0, 0, 0};
    if (c->ndown + (int)sizeof r <= SOCKS_BUF) {
        memcpy(c->down + c->ndown, r, sizeof r);
        c->ndown += sizeof r;
    }
    if (code != 0) {
        c->phase = CLOSING;
        c->deadline = now_ms() + T.handshake_ms; /* to write it */
        if (c->ufd >= 0) {
            close(c->ufd);
            c->ufd = -1;
        }
    }
}

static void consume(struct conn *c, int n)
{
    memmove(c->up, c->up + n, (size_t)(c->nup - n));
    c->nup -= n;
}

/* Whether a rule names host:port (its scheme, which a proxy cannot see,
 * left out); blocking, another name of its server too (origin_rule_blocks).
 * host as a CONNECT names it, or an address as text. */
static bool rule_names(const struct origin_rule *r, const char *host, int port, bool blocking)
{
    struct url_origin o = {.port = port};
    snprintf(o.scheme, sizeof o.scheme, "%s", r->scheme);
    /* The rules write IPv6 hosts in brackets, lowercased, canonical. */
    bool v6 = strchr(host, ':') != NULL;
    int n = snprintf(o.host, sizeof o.host, v6 ? "[%s]" : "%s", host);
    if (n < 0 || (size_t)n >= sizeof o.host)
        return false;
    for (char *c = o.host; *c; c++)
        if (*c >= 'A' && *c <= 'Z')
            *c = (char)(*c - 'A' + 'a');
    origin_host_canon(o.host);
    return blocking ? origin_rule_blocks(r, &o) : origin_rule_matches(r, &o);
}

const char *socks_policy_refuses_host(const struct socks_policy *p, const char *host, int port)
{
    if (!p)
        return NULL;
    for (int i = 0; i < p->nblocked; i++)
        if (rule_names(&p->blocked[i], host, port, true))
            return "an origin --blocked-origins names";
    if (p->nallowed == 0)
        return NULL;
    for (int i = 0; i < p->nallowed; i++)
        if (rule_names(&p->allowed[i], host, port, false))
            return NULL;
    return "an origin --allowed-origins does not name";
}

const char *socks_policy_refuses(const struct socks_policy *p, const struct sockaddr *sa, int port)
{
    for (int i = 0; p && i < SOCKS_MAX_BLOCKED_PORTS && p->blocked_ports[i]; i++)
        if (p->blocked_ports[i] == port)
            return "a port of tabvisor's own";
    /* The address connected to, whatever name led here: rules naming an
     * address hold for every name of it (localhost, a DNS name). */
    char addr[INET6_ADDRSTRLEN] = "";
    if (sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, addr, sizeof addr);
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, addr, sizeof addr);
    if (!addr[0])
        return "not an internet address";
    char canon[ORIGIN_MAX_HOST];
    snprintf(canon, sizeof canon, strchr(addr, ':') ? "[%s]" : "%s", addr);
    origin_host_canon(canon);
    if (!(p && p->allow_link_local) && origin_host_is_metadata(canon))
        return "a link-local address or a cloud's metadata service";
    for (int i = 0; p && i < p->nblocked; i++)
        if (rule_names(&p->blocked[i], addr, port, true))
            return "an address --blocked-origins names";
    return NULL;
}

/* Connect to the first address ai names, as the CONNECT asked. */
static void connect_to(struct conn *c, const struct addrinfo *ai, int port,
                       const struct socks_policy *policy)
{
    if (socks_policy_refuses(policy, ai->ai_addr, port)) {
        reply(c, 2); /* not allowed by ruleset */
        return;
    }
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int rc = fd < 0 ? -1 : connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (fd < 0 || (rc != 0 && errno != EINPROGRESS)) {
        if (fd >= 0)
            close(fd);
        reply(c, 5); /* refused */
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->ufd = fd;
    c->phase = CONNECTING;
    c->deadline = now_ms() + T.connect_ms;
}

static void *lookup_main(void *arg)
{
    struct lookup *l = arg;
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
    l->rc = resolver(l->host, l->service, &hints, &l->ai);
    if (l->rc != 0)
        l->ai = NULL;
    /* A pointer is one atomic pipe write; the pipe never fills (at most
     * MAX_LOOKUPS are under way). */
    while (write(done_pipe[1], &l, sizeof l) < 0 && errno == EINTR)
        ;
    return NULL;
}

/* Start l's thread: true when it runs. */
static bool lookup_start(struct lookup *l)
{
    pthread_attr_t attr;
    pthread_t t;
    if (pthread_attr_init(&attr) != 0)
        return false;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, LOOKUP_STACK);
    l->started = pthread_create(&t, &attr, lookup_main, l) == 0;
    pthread_attr_destroy(&attr);
    lookups_running += l->started;
    shares[l->share].lookups += l->started;
    return l->started;
}

/* Start the lookups that wait for a slot, in the table's order, each
 * share at most SHARE_MAX_LOOKUPS at once. A lookup no thread can be made
 * for when none runs fails its connection (nothing would ever free a slot
 * for it). */
static void lookups_start_waiting(void)
{
    for (int i = 0; i < nconns && lookups_running < MAX_LOOKUPS; i++) {
        struct conn *c = conns[i];
        if (!c->lookup || c->lookup->started || shares[c->share].lookups >= SHARE_MAX_LOOKUPS)
            continue;
        if (lookup_start(c->lookup)) {
            c->deadline = now_ms() + T.lookup_ms;
            continue;
        }
        if (lookups_running > 0)
            return;
        free(c->lookup);
        c->lookup = NULL;
        reply(c, 1); /* general failure */
    }
}

/* The lookups done_pipe hands back: connect their connections. */
static void lookups_done(const struct socks_policy *policy)
{
    struct lookup *l;
    while (read(done_pipe[0], &l, sizeof l) == (ssize_t)sizeof l) {
        lookups_running--;
        shares[l->share].lookups--;
        struct conn *c = l->conn;
        if (c) {
            c->lookup = NULL;
            if (l->rc == 0 && l->ai)
                connect_to(c, l->ai, l->port, policy);
            else
                reply(c, 4); /* host unreachable */
        }
        if (l->ai)
            freeaddrinfo(l->ai);
        free(l);
    }
    lookups_start_waiting();
}

/* Start the connection a CONNECT asked for: at once for an address, after
 * a lookup (struct lookup) for a name. */
static void start_connect(struct conn *c, const char *host, int port,
                          const struct socks_policy *policy)
{
    if (socks_policy_refuses_host(policy, host, port)) {
        reply(c, 2); /* not allowed by ruleset */
        return;
    }
    char service[8];
    snprintf(service, sizeof service, "%d", port);
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICSERV | AI_NUMERICHOST};
    struct addrinfo *ai = NULL;
    if (getaddrinfo(host, service, &hints, &ai) == 0 && ai) {
        connect_to(c, ai, port, policy);
        freeaddrinfo(ai);
        return;
    }
    struct lookup *l = calloc(1, sizeof *l);
    if (!l) {
        reply(c, 1);
        return;
    }
    l->conn = c;
    l->share = c->share;
    l->port = port;
    snprintf(l->host, sizeof l->host, "%s", host);
    snprintf(l->service, sizeof l->service, "%s", service);
    c->lookup = l;
    c->phase = RESOLVING;
    c->deadline = now_ms() + T.lookup_wait_ms; /* until a thread takes it */
    lookups_start_waiting();
}

/* The handshake bytes the client sent so far. */
static void handshake(struct conn *c, const struct socks_policy *policy)
{
    if (c->phase == GREETING && c->nup >= 2) {
        int n = c->up[1];
        if (c->up[0] != 5) {
            c->phase = CLOSING;
            return;
        }
        if (c->nup < 2 + n)
            return;
        bool none = memchr(c->up + 2, 0, (size_t)n) != NULL;
        const unsigned char r[2] = {5, none ? 0 : 0xff};
        memcpy(c->down + c->ndown, r, 2);
        c->ndown += 2;
        consume(c, 2 + n);
        c->phase = none ? REQUEST : CLOSING;
    }
    if (c->phase == REQUEST) {
        char host[256];
        int port, code;
        int n = socks_parse_request(c->up, c->nup, host, sizeof host, &port, &code);
        if (n < 0)
            reply(c, code);
        else if (n > 0 && !c->counted)
            reply(c, 1); /* its share is full: general failure */
        else if (n > 0) {
            consume(c, n);
            start_connect(c, host, port, policy);
        }
    }
}

/* Read what fd has into buf (at *n of cap). false on EOF; errors count as EOF. */
static bool fill(int fd, unsigned char *buf, int *n, int cap)
{
    ssize_t r = recv(fd, buf + *n, (size_t)(cap - *n), 0);
    if (r > 0) {
        *n += (int)r;
        return true;
    }
    return r < 0 && (errno == EAGAIN || errno == EINTR);
}

/* Write what buf holds to fd. false on a broken peer. */
static bool drain(int fd, unsigned char *buf, int *n)
{
    ssize_t w = send(fd, buf, (size_t)*n, MSG_NOSIGNAL);
    if (w < 0)
        return errno == EAGAIN || errno == EINTR;
    memmove(buf, buf + w, (size_t)(*n - w));
    *n -= (int)w;
    return true;
}

/* One connection's events; false when it is over. */
static bool service(struct conn *c, short cev, short uev, const struct socks_policy *policy)
{
    if (cev & POLLIN && c->nup < SOCKS_BUF && !c->c_eof)
        c->c_eof = !fill(c->cfd, c->up, &c->nup, SOCKS_BUF);
    if (c->phase < CONNECTING)
        handshake(c, policy);
    if (c->phase == CONNECTING && uev & (POLLOUT | POLLERR | POLLHUP)) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err == 0) {
            reply(c, 0);
            c->phase = SPLICING;
            c->deadline = 0;
        } else {
            reply(c, err == ECONNREFUSED ? 5 : 4);
        }
    }
    if (c->phase == SPLICING) {
        if (uev & (POLLIN | POLLHUP) && c->ndown < SOCKS_BUF && !c->u_eof)
            c->u_eof = !fill(c->ufd, c->down, &c->ndown, SOCKS_BUF);
        if (c->nup > 0 && !drain(c->ufd, c->up, &c->nup))
            return false;
    }
    if (c->ndown > 0 && !drain(c->cfd, c->down, &c->ndown))
        return false;
    if (c->phase == CLOSING)
        return c->ndown > 0;
    if (c->phase != SPLICING)
        return !c->c_eof;
    /* Half-closes pass through once what came before them is written. */
    if (c->c_eof && c->nup == 0 && !c->u_shut) {
        shutdown(c->ufd, SHUT_WR);
        c->u_shut = true;
        /* Firefox has closed (it never half-closes): the server gets a
         * while to finish, not forever, or one that never answers would
         * keep the connection in its share's quota. */
        c->deadline = now_ms() + T.half_close_ms;
    }
    if (c->u_eof && c->ndown == 0 && !c->c_shut) {
        shutdown(c->cfd, SHUT_WR);
        c->c_shut = true;
    }
    return !(c->u_shut && c->c_shut);
}

/* A connection on share sh's listener. Over the share's quota (or when
 * every share together holds all but REFUSAL_ROOM of the proxy) it is
 * still accepted, to be told "general failure" at its CONNECT: Firefox
 * fails that one request at once instead of waiting on a backlog. */
static void accept_one(int sh)
{
    int fd = accept4(shares[sh].lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0)
        return;
    struct conn *c = nconns < max_conns ? calloc(1, sizeof *c) : NULL;
    if (!c) {
        close(fd);
        return;
    }
    struct share *s = &shares[sh];
    c->cfd = fd;
    c->ufd = -1;
    c->share = sh;
    c->deadline = now_ms() + T.handshake_ms;
    c->counted = s->nconns < SOCKS_SHARE_MAX_CONNS && nconns < max_conns - REFUSAL_ROOM;
    if (c->counted) {
        s->nconns++;
    } else {
        s->refused++;
        if (!s->full)
            log_warn("SOCKS proxy: %s %d is full (%d connections, the proxy %d of %d): further "
                     "connections get a general failure (%u so far)",
                     sh ? "the share of session slot" : "the shared socket,", sh, s->nconns, nconns,
                     max_conns, s->refused);
        s->full = true;
    }
    conns[nconns++] = c;
}

/* A share's listener passed over ctl (one fd per message, SCM_RIGHTS).
 * false once ctl has ended (its sender closed it, or it failed). */
static bool take_share(int ctl)
{
    char b;
    int fd;
    ssize_t r = fdpass_recv(ctl, &b, 1, &fd, MSG_DONTWAIT);
    if (r < 0)
        return errno == EAGAIN;
    if (r == 0)
        return false;
    if (fd < 0)
        return true;
    if (nshares == SOCKS_MAX_SHARES) {
        close(fd);
        return true;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    shares[nshares++] = (struct share){.lfd = fd};
    return true;
}

/* What a connection's phase took too long for: false when it is over. */
static bool expire(struct conn *c)
{
    switch (c->phase) {
    case RESOLVING: {
        /* A running lookup's thread is left to finish (its share keeps
         * counting it); the connection is answered now: host unreachable
         * for a lookup that ran out of time, general failure for one that
         * never got a thread. */
        bool running = c->lookup && c->lookup->started;
        if (running)
            c->lookup->conn = NULL;
        else
            free(c->lookup);
        c->lookup = NULL;
        reply(c, running ? 4 : 1);
        return true;
    }
    case CONNECTING:
        reply(c, 4); /* host unreachable */
        return true;
    default:
        return false; /* a handshake never finished, or a refusal never read */
    }
}

/* Raise the fd limit to what the connections need, or fewer connections. */
static void fit_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return;
    rlim_t want = 2 * SOCKS_MAX_CONNS + SOCKS_MAX_SHARES + MAX_LOOKUPS + 64;
    if (rl.rlim_cur < want) {
        rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    rlim_t room = rl.rlim_cur > SOCKS_MAX_SHARES + MAX_LOOKUPS + 64
                      ? (rl.rlim_cur - SOCKS_MAX_SHARES - MAX_LOOKUPS - 64) / 2
                      : 0;
    if (room < (rlim_t)max_conns)
        max_conns = room > 2 * REFUSAL_ROOM ? (int)room : 2 * REFUSAL_ROOM;
}

/* pfd's slots: done_pipe, ctl, the shares' listeners, then two per
 * connection. */
#define FIRST_SHARE 2
#define FIRST_CONN (FIRST_SHARE + SOCKS_MAX_SHARES)

void socks_proxy_run(int lfd, int ctl, const struct socks_policy *policy)
{
    static struct pollfd pfd[FIRST_CONN + 2 * SOCKS_MAX_CONNS];
    if (pipe2(done_pipe, O_CLOEXEC) != 0 ||
        fcntl(done_pipe[0], F_SETFL, fcntl(done_pipe[0], F_GETFL) | O_NONBLOCK) != 0)
        _exit(1);
    fit_fd_limit();
    shares[nshares++] = (struct share){.lfd = lfd};
    for (;;) {
        long long now = now_ms(), next = -1;
        pfd[0] = (struct pollfd){.fd = done_pipe[0], .events = POLLIN};
        pfd[1] = (struct pollfd){.fd = ctl, .events = POLLIN};
        for (int i = 0; i < SOCKS_MAX_SHARES; i++)
            pfd[FIRST_SHARE + i] = (struct pollfd){
                .fd = i < nshares && nconns < max_conns ? shares[i].lfd : -1, .events = POLLIN};
        int n = FIRST_CONN;
        for (int i = 0; i < nconns; i++) {
            struct conn *c = conns[i];
            short ce = 0, ue = 0;
            if (c->nup < SOCKS_BUF && !c->c_eof && c->phase != CLOSING)
                ce |= POLLIN;
            if (c->ndown > 0)
                ce |= POLLOUT;
            if (c->phase == CONNECTING)
                ue |= POLLOUT;
            if (c->phase == SPLICING) {
                if (c->ndown < SOCKS_BUF && !c->u_eof)
                    ue |= POLLIN;
                if (c->nup > 0)
                    ue |= POLLOUT;
            }
            pfd[n++] = (struct pollfd){.fd = c->cfd, .events = ce};
            pfd[n++] = (struct pollfd){.fd = c->ufd, .events = ue};
            if (c->deadline && (next < 0 || c->deadline < next))
                next = c->deadline;
        }
        int wait = next < 0 ? -1 : next <= now ? 0 : (int)(next - now);
        if (poll(pfd, (nfds_t)n, wait) < 0) {
            if (errno == EINTR)
                continue;
            _exit(1);
        }
        /* Connections first (their slots match pfd), from the end, so a
         * removal's swap moves only a connection already serviced. */
        now = now_ms();
        for (int i = nconns - 1; i >= 0; i--) {
            struct conn *c = conns[i];
            short ce = pfd[FIRST_CONN + 2 * i].revents, ue = pfd[FIRST_CONN + 1 + 2 * i].revents;
            bool alive = true;
            if (ce | ue)
                alive = service(c, ce, ue, policy);
            if (alive && c->deadline && c->deadline <= now)
                alive = expire(c);
            if (!alive)
                conn_free(i);
        }
        if (pfd[0].revents & POLLIN)
            lookups_done(policy);
        if (pfd[1].revents && !take_share(ctl)) {
            close(ctl);
            ctl = -1; /* no more shares to come */
        }
        for (int i = 0; i < nshares; i++) {
            if (pfd[FIRST_SHARE + i].revents & POLLIN)
                accept_one(i);
            else if (i == 0 && pfd[FIRST_SHARE].revents & (POLLERR | POLLNVAL))
                _exit(1);
        }
    }
}
