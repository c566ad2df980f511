/*
 * firefox.c - Firefox in its own user and network namespace, its BiDi
 * socket handed out (firefox.h).
 */
#include "firefox.h"
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "fdpass.h"
#include "rundir.h"
#include "socks_proxy.h"

#define FIREFOX_LOG_MAX (1u << 20) /* bytes of Firefox's stderr kept */
#define HOLDER_MSG 1024

/* Prefs for a quiet, hermetic profile: no first-run pages, updates,
 * telemetry or background connections of its own. */
static const char user_js[] =
    "user_pref(\"app.update.disabledForTesting\", true);\n"
    "user_pref(\"browser.shell.checkDefaultBrowser\", false);\n"
    "user_pref(\"browser.startup.homepage_override.mstone\", \"ignore\");\n"
    "user_pref(\"browser.startup.page\", 0);\n"
    "user_pref(\"browser.aboutwelcome.enabled\", false);\n"
    "user_pref(\"datareporting.policy.dataSubmissionEnabled\", false);\n"
    "user_pref(\"datareporting.healthreport.uploadEnabled\", false);\n"
    "user_pref(\"toolkit.telemetry.reportingpolicy.firstRun\", false);\n"
    "user_pref(\"browser.safebrowsing.malware.enabled\", false);\n"
    "user_pref(\"browser.safebrowsing.phishing.enabled\", false);\n"
    "user_pref(\"network.captive-portal-service.enabled\", false);\n"
    "user_pref(\"network.connectivity-service.enabled\", false);\n"
    "user_pref(\"extensions.update.enabled\", false);\n"
    /* Services Firefox calls home to at start and on timers (remote
     * settings, plugin and add-on updates, region, push, Normandy, network
     * geolocation): each is a name the proxy would look up for nothing,
     * and traffic no session asked for. */
    "user_pref(\"services.settings.server\", \"data:,#remote-settings-dummy/v1\");\n"
    "user_pref(\"media.gmp-manager.updateEnabled\", false);\n"
    "user_pref(\"extensions.systemAddon.update.enabled\", false);\n"
    "user_pref(\"extensions.getAddons.cache.enabled\", false);\n"
    "user_pref(\"browser.region.network.url\", \"\");\n"
    "user_pref(\"browser.search.update\", false);\n"
    "user_pref(\"dom.push.connection.enabled\", false);\n"
    "user_pref(\"app.normandy.enabled\", false);\n"
    "user_pref(\"app.normandy.api_url\", \"\");\n"
    "user_pref(\"geo.provider.network.url\", \"\");\n"
    /* A session's state stays in memory (README, Security; issue 36,
     * finding 8): the session store keeps no cookies or form data (it
     * still writes tabs, every 15 s), and pages are cached in memory
     * only, where a response's Set-Cookie would otherwise be kept. */
    "user_pref(\"browser.sessionstore.privacy_level\", 2);\n"
    "user_pref(\"browser.cache.disk.enable\", false);\n"
    "user_pref(\"browser.cache.memory.enable\", true);\n"
    /* A page restored from the back-forward cache sends BiDi no load
     * events, so history steps could not be waited for: pages load again. */
    "user_pref(\"browser.sessionhistory.max_total_viewers\", 0);\n"
    /* No /favicon.ico fetch of Firefox's own in the page's request list
     * (Chromium's headless shell makes none). */
    "user_pref(\"browser.chrome.site_icons\", false);\n"
    "user_pref(\"fission.bfcacheInParent\", false);\n"
    /* A JSON response is its text, as Chromium shows it, not Firefox's
     * viewer (tabs, a filter box) in the snapshot. */
    "user_pref(\"devtools.jsonview.enabled\", false);\n"
    /* Its only way out: the SOCKS proxy on a Unix socket (socks_proxy.h),
     * for every host, 127.0.0.1 included; names resolved there. */
    "user_pref(\"network.proxy.type\", 1);\n"
    "user_pref(\"network.proxy.socks_version\", 5);\n"
    "user_pref(\"network.proxy.socks_remote_dns\", true);\n"
    "user_pref(\"network.proxy.allow_hijacking_localhost\", true);\n"
    "user_pref(\"network.proxy.no_proxies_on\", \"\");\n";

static void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static int write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    size_t len = strlen(text);
    ssize_t n = write(fd, text, len);
    int rc = n == (ssize_t)len ? 0 : -1;
    close(fd);
    return rc;
}

static int append_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t len = strlen(text);
    ssize_t n = write(fd, text, len);
    close(fd);
    return n == (ssize_t)len ? 0 : -1;
}

/* --- the holder: runs in the new namespaces, never returns --- */

/* One message to the parent: text, and fd when >= 0. */
static void holder_send(int sp, const char *text, int fd)
{
    fdpass_send(sp, text, strlen(text), fd);
}

static void holder_fail(int sp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void holder_fail(int sp, const char *fmt, ...)
{
    char msg[HOLDER_MSG] = "err ";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + 4, sizeof msg - 4, fmt, ap);
    va_end(ap);
    holder_send(sp, msg, -1);
    _exit(1);
}

/* Our own user namespace (same uid and gid inside) and network namespace,
 * with its loopback up. */
static int enter_namespaces(char *err, size_t errlen)
{
    uid_t uid = geteuid();
    gid_t gid = getegid();
    if (unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) {
        set_err(err, errlen, "unshare(user, net): %s", strerror(errno));
        return -1;
    }
    char map[64];
    if (write_file("/proc/self/setgroups", "deny") != 0) {
        set_err(err, errlen, "setgroups: %s", strerror(errno));
        return -1;
    }
    snprintf(map, sizeof map, "%u %u 1", (unsigned)uid, (unsigned)uid);
    if (write_file("/proc/self/uid_map", map) != 0) {
        set_err(err, errlen, "uid_map: %s", strerror(errno));
        return -1;
    }
    snprintf(map, sizeof map, "%u %u 1", (unsigned)gid, (unsigned)gid);
    if (write_file("/proc/self/gid_map", map) != 0) {
        set_err(err, errlen, "gid_map: %s", strerror(errno));
        return -1;
    }
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
    int rc = s < 0 ? -1 : ioctl(s, SIOCGIFFLAGS, &ifr);
    if (rc == 0) {
        ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
        rc = ioctl(s, SIOCSIFFLAGS, &ifr);
    }
    if (rc != 0)
        set_err(err, errlen, "loopback up: %s", strerror(errno));
    if (s >= 0)
        close(s);
    return rc;
}

static pid_t start_browser(const char *binary, const char *dir, bool headed, int errfd)
{
    char profile[PATH_MAX + 16], home[PATH_MAX + 16], tmp[PATH_MAX + 16], tmpenv[PATH_MAX + 24];
    snprintf(profile, sizeof profile, "%s/profile", dir);
    snprintf(home, sizeof home, "HOME=%s", dir);
    /* Its temp files go with its profile, not to the system's /tmp. */
    snprintf(tmp, sizeof tmp, "%s/tmp", dir);
    snprintf(tmpenv, sizeof tmpenv, "TMPDIR=%s", tmp);
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(errfd, 2);
    closefrom(3);
    putenv(home);
    if (mkdir(tmp, 0700) == 0 || errno == EEXIST)
        putenv(tmpenv);
    putenv("MOZ_CRASHREPORTER_DISABLE=1");
    putenv("MOZ_CRASHREPORTER=0");
    /* A release build ignores services.settings.server (user_js) unless
     * this is set: without it, remote settings are fetched from Mozilla. */
    putenv("MOZ_REMOTE_SETTINGS_DEVTOOLS=1");
    const char *argv[10];
    int n = 0;
    argv[n++] = binary;
    if (!headed)
        argv[n++] = "--headless";
    argv[n++] = "--no-remote";
    argv[n++] = "--profile";
    argv[n++] = profile;
    argv[n++] = "--remote-debugging-port";
    argv[n++] = "0";
    argv[n] = NULL;
    execvp(binary, (char *const *)argv);
    fprintf(stderr, "tabvisor: exec %s: %s\n", binary, strerror(errno));
    _exit(127);
}

/* Append what Firefox wrote to its log; the BiDi port once it says it. */
static void log_append(int logfd, size_t *logged, const char *buf, size_t n)
{
    if (*logged >= FIREFOX_LOG_MAX)
        return;
    if (n > FIREFOX_LOG_MAX - *logged)
        n = FIREFOX_LOG_MAX - *logged;
    if (write(logfd, buf, n) > 0)
        *logged += n;
}

/* Connect to port on this namespace's loopback, IPv4 first. */
static int connect_local(int port)
{
    struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
    a6.sin6_addr = in6addr_loopback;
    for (int v6 = 0; v6 < 2; v6++) {
        int s = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0)
            continue;
        if (connect(s, v6 ? (struct sockaddr *)&a6 : (struct sockaddr *)&a4,
                    v6 ? sizeof a6 : sizeof a4) == 0)
            return s;
        close(s);
    }
    return -1;
}

/* What Firefox prints once BiDi listens; the host is 127.0.0.1, or
 * localhost when a proxy is set. */
static const char announce[] = "WebDriver BiDi listening on ws://";

/* The proxy, still in the host's namespace: listening at dir/socks.sock
 * before Firefox starts; the session shares' listeners come later over
 * *ctl (share_listeners). Its pid, or -1. */
static pid_t start_proxy(const char *dir, const struct socks_policy *policy, int *ctl, char *err,
                         size_t errlen)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if ((size_t)snprintf(sa.sun_path, sizeof sa.sun_path, "%s/socks.sock", dir) >=
        sizeof sa.sun_path) {
        set_err(err, errlen, "the proxy's socket path in %s is too long", dir);
        return -1;
    }
    int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(lfd, 64) != 0) {
        set_err(err, errlen, "the proxy's socket %s: %s", sa.sun_path, strerror(errno));
        if (lfd >= 0)
            close(lfd);
        return -1;
    }
    int cp[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, cp) != 0) {
        set_err(err, errlen, "socketpair: %s", strerror(errno));
        close(lfd);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        prctl(PR_SET_NAME, "tv-ff-socks");
        signal(SIGPIPE, SIG_IGN);
        close(cp[0]);
        socks_proxy_run(lfd, cp[1], policy);
    }
    close(cp[1]);
    *ctl = cp[0];
    close(lfd);
    if (pid < 0)
        set_err(err, errlen, "fork: %s", strerror(errno));
    return pid;
}

/* In Firefox's namespace: n TCP listeners on its 127.0.0.1, handed to the
 * proxy over ctl (which it then closes), one per session share; their
 * ports as ",P1,P2..." into ports. Only Firefox can connect to them: the
 * namespace's loopback is its alone. 0, or -1 with err. */
static int share_listeners(int ctl, int n, char *ports, size_t portslen, char *err, size_t errlen)
{
    size_t used = 0;
    ports[0] = '\0';
    for (int i = 0; i < n; i++) {
        struct sockaddr_in a = {.sin_family = AF_INET};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t al = sizeof a;
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 128) != 0 ||
            getsockname(fd, (struct sockaddr *)&a, &al) != 0) {
            set_err(err, errlen, "a proxy share's socket: %s", strerror(errno));
            if (fd >= 0)
                close(fd);
            close(ctl);
            return -1;
        }
        ssize_t w = fdpass_send(ctl, "s", 1, fd);
        close(fd); /* the proxy's now */
        int m = snprintf(ports + used, portslen - used, ",%d", ntohs(a.sin_port));
        if (w != 1 || m < 0 || (size_t)m >= portslen - used) {
            set_err(err, errlen, "handing a proxy share to the proxy: %s", strerror(errno));
            close(ctl);
            return -1;
        }
        used += (size_t)m;
    }
    close(ctl);
    return 0;
}

static void holder_main(int sp, int alive, const char *binary, const char *dir, const char *logpath,
                        bool headed, const struct socks_policy *policy, long long deadline_ms)
{
    char err[256], ports[SOCKS_MAX_SHARES * 7 + 1];
    int ctl = -1;
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    prctl(PR_SET_NAME, "tv-ff-holder");
    pid_t proxy = start_proxy(dir, policy, &ctl, err, sizeof err);
    if (proxy < 0)
        holder_fail(sp, "%s", err);
    if (enter_namespaces(err, sizeof err) != 0)
        holder_fail(sp, "%s", err);
    int nshares = policy && policy->shares > 0 ? policy->shares : 0;
    if (nshares > SOCKS_MAX_SHARES - 1)
        nshares = SOCKS_MAX_SHARES - 1;
    if (share_listeners(ctl, nshares, ports, sizeof ports, err, sizeof err) != 0)
        holder_fail(sp, "%s", err);
    int logfd = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    int errp[2];
    if (logfd < 0 || pipe2(errp, O_CLOEXEC) != 0)
        holder_fail(sp, "log: %s", strerror(errno));
    pid_t browser = start_browser(binary, dir, headed, errp[1]);
    close(errp[1]);
    if (browser < 0)
        holder_fail(sp, "fork: %s", strerror(errno));
    char seen[8192];
    size_t nseen = 0, logged = 0;
    int port = 0;
    bool told = false;
    for (;;) {
        /* alive: our caller's process holds its other end; its end (the
         * caller exited, or firefox_stop) ends Firefox. */
        struct pollfd pf[2] = {{.fd = errp[0], .events = POLLIN}, {.fd = alive, .events = POLLIN}};
        struct pollfd *p = &pf[0];
        long long left = told ? -1 : deadline_ms - mono_ms();
        if (!told && left <= 0) {
            kill(-browser, SIGKILL);
            holder_fail(sp, "Firefox did not open its BiDi endpoint in time (log: %s)", logpath);
        }
        int r = poll(pf, 2, left < 0 ? -1 : (int)(left > 1000 ? 1000 : left));
        if (r < 0 && errno != EINTR)
            break;
        if (r > 0 && pf[1].revents)
            break;
        if (r <= 0 || !p->revents)
            continue;
        char buf[4096];
        ssize_t n = read(errp[0], buf, sizeof buf);
        if (n <= 0)
            break; /* Firefox (and its children) closed stderr: it is gone */
        log_append(logfd, &logged, buf, (size_t)n);
        if (told)
            continue;
        /* Keep the tail: the announcement may follow pages of warnings.
         * (n <= 4096 and seen holds 8192, so half of it always makes room.) */
        if ((size_t)n > sizeof seen - 1 - nseen) {
            size_t keep = nseen / 2;
            memmove(seen, seen + nseen - keep, keep);
            nseen = keep;
        }
        size_t take = (size_t)n;
        memcpy(seen + nseen, buf, take);
        nseen += take;
        seen[nseen] = '\0';
        const char *at = strstr(seen, announce);
        if (!at || !strchr(at, '\n'))
            continue;
        at += strlen(announce);
        const char *colon = strchr(at, ':');
        char host[32];
        int hostlen = colon ? (int)(colon - at) : 0;
        if (hostlen <= 0 || hostlen >= (int)sizeof host) {
            kill(-browser, SIGKILL);
            holder_fail(sp, "Firefox announced BiDi where expected nothing: %.80s", at);
        }
        snprintf(host, sizeof host, "%.*s", hostlen, at);
        port = atoi(colon + 1);
        int fd = port > 0 && port < 65536 ? connect_local(port) : -1;
        if (fd < 0) {
            kill(-browser, SIGKILL);
            holder_fail(sp, "cannot connect to Firefox's BiDi port %d: %s", port, strerror(errno));
        }
        char msg[HOLDER_MSG];
        snprintf(msg, sizeof msg, "ok %d ws://%s:%d/session %s", (int)browser, host, port,
                 ports[0] ? ports + 1 : "-");
        holder_send(sp, msg, fd);
        close(fd);
        told = true;
    }
    if (!told) {
        /* Its last words are the best reason there is. */
        while (nseen && (seen[nseen - 1] == '\n' || seen[nseen - 1] == ' '))
            seen[--nseen] = '\0';
        const char *last = strrchr(seen, '\n');
        char msg[HOLDER_MSG];
        snprintf(msg, sizeof msg, "err Firefox exited before opening its BiDi endpoint%s%.300s",
                 nseen ? ": " : "", last ? last + 1 : seen);
        holder_send(sp, msg, -1);
    }
    kill(-browser, SIGKILL); /* stragglers of its group */
    kill(proxy, SIGKILL);
    /* The holder is a subreaper: Firefox's orphaned children come to it, and
     * it leaves only when every one of them is reaped. */
    int st;
    while (waitpid(-1, &st, 0) > 0 || errno == EINTR)
        ;
    _exit(0);
}

/* --- the caller's side --- */

/* Wait for the holder's one message until deadline_ms: its text into msg,
 * the socket it passed (or -1) into *fd. 0; -1 at the deadline; -2 when
 * the holder is gone. */
static int holder_recv(int sp, long long deadline_ms, char *msg, size_t msglen, int *fd)
{
    *fd = -1;
    for (;;) {
        long long left = deadline_ms - mono_ms();
        struct pollfd p = {.fd = sp, .events = POLLIN};
        int r = left > 0 ? poll(&p, 1, left > 1000 ? 1000 : (int)left) : 0;
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0) {
            if (left <= 0)
                return -1;
            continue;
        }
        break;
    }
    ssize_t n = fdpass_recv(sp, msg, msglen - 1, fd, 0);
    if (n <= 0)
        return -2; /* the holder died without a word */
    msg[n] = '\0';
    return 0;
}

int firefox_launch(const char *binary, const char *tmpdir, bool headed,
                   const struct socks_policy *policy, long long deadline_ms, struct firefox *ff,
                   char *err, size_t errlen)
{
    memset(ff, 0, sizeof *ff);
    ff->bidi_fd = -1;
    ff->alive_fd = -1;
    if (!binary)
        binary = "firefox-esr";
    if (!tmpdir)
        tmpdir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(ff->dir, sizeof ff->dir, "%s/tabvisor-firefox-XXXXXX", tmpdir);
    if (!mkdtemp(ff->dir)) {
        set_err(err, errlen, "profile dir in %s: %s", tmpdir, strerror(errno));
        ff->dir[0] = '\0';
        return -1;
    }
    char profile[PATH_MAX + 16], prefs[PATH_MAX + 32];
    snprintf(profile, sizeof profile, "%s/profile", ff->dir);
    snprintf(prefs, sizeof prefs, "%s/user.js", profile);
    snprintf(ff->log, sizeof ff->log, "%s/firefox.log", ff->dir);
    char proxy_pref[PATH_MAX + 80];
    snprintf(proxy_pref, sizeof proxy_pref,
             "user_pref(\"network.proxy.socks\", \"file://%s/socks.sock\");\n", ff->dir);
    if (mkdir(profile, 0700) != 0 || write_file(prefs, user_js) != 0 ||
        append_file(prefs, proxy_pref) != 0) {
        set_err(err, errlen, "profile %s: %s", profile, strerror(errno));
        firefox_stop(ff, 0);
        return -1;
    }
    int sp[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) != 0) {
        set_err(err, errlen, "socketpair: %s", strerror(errno));
        firefox_stop(ff, 0);
        return -1;
    }
    /* The holder's tie to us: not PR_SET_PDEATHSIG, which fires when the
     * forking thread ends (the supervisor launches from a short-lived
     * thread), but a pipe whose write end only this process holds. */
    int alive[2];
    if (pipe2(alive, O_CLOEXEC) != 0) {
        set_err(err, errlen, "pipe: %s", strerror(errno));
        close(sp[0]);
        close(sp[1]);
        firefox_stop(ff, 0);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        set_err(err, errlen, "fork: %s", strerror(errno));
        close(sp[0]);
        close(sp[1]);
        close(alive[0]);
        close(alive[1]);
        firefox_stop(ff, 0);
        return -1;
    }
    if (pid == 0) {
        close(sp[0]);
        close(alive[1]);
        holder_main(sp[1], alive[0], binary, ff->dir, ff->log, headed, policy, deadline_ms);
    }
    close(sp[1]);
    close(alive[0]);
    ff->alive_fd = alive[1];
    ff->holder = pid;
    char msg[HOLDER_MSG];
    int fd = -1;
    int rc = holder_recv(sp[0], deadline_ms, msg, sizeof msg, &fd);
    close(sp[0]);
    int bpid = 0, at = 0;
    char url[sizeof ff->ws_url];
    if (rc == 0 && fd >= 0 && sscanf(msg, "ok %d %95s %n", &bpid, url, &at) == 2 && bpid > 0) {
        ff->browser = bpid;
        ff->bidi_fd = fd;
        snprintf(ff->ws_url, sizeof ff->ws_url, "%s", url);
        /* The shares' ports, "P1,P2,..." or "-". */
        for (const char *p = msg + at; *p >= '0' && *p <= '9' && ff->nshares < SOCKS_MAX_SHARES;) {
            char *end;
            long port = strtol(p, &end, 10);
            if (port > 0 && port < 65536)
                ff->share_ports[ff->nshares++] = (int)port;
            p = *end == ',' ? end + 1 : end;
        }
        return 0;
    }
    if (fd >= 0)
        close(fd);
    if (rc == -2)
        set_err(err, errlen, "the process starting Firefox died (log: %s)", ff->log);
    else if (rc != 0)
        set_err(err, errlen, "Firefox did not start in time (log: %s)", ff->log);
    else
        set_err(err, errlen, "%s", strncmp(msg, "err ", 4) == 0 ? msg + 4 : msg);
    firefox_stop(ff, 0);
    return -1;
}

void firefox_stop(struct firefox *ff, int grace_ms)
{
    if (ff->holder > 0) {
        /* Firefox is stopped; the holder that waits for it is reaped. */
        spawn_stop(&(struct child_stop){.pid = ff->holder,
                                        .term = ff->browser > 0 ? -ff->browser : 0,
                                        .group = ff->browser},
                   grace_ms);
        ff->holder = 0;
        ff->browser = 0;
    }
    if (ff->alive_fd >= 0)
        close(ff->alive_fd);
    ff->alive_fd = -1;
    if (ff->dir[0]) {
        rundir_remove(ff->dir);
        ff->dir[0] = '\0';
    }
}
