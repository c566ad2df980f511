/*
 * test_confine.c - the worker's confinement (worker/confine.c), applied for
 * real in forked children: what it must deny fails, what a worker needs
 * still works, limits bite. The last test prints what each part costs
 * (docs/confinement.md).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>

#include "confine.h"

static char tmp[64]; /* a fresh directory per test; out/ inside is the output dir */
static char out[128];

static int setup(void **state)
{
    (void)state;
    snprintf(tmp, sizeof tmp, "/tmp/tv-confine-XXXXXX");
    if (!mkdtemp(tmp))
        return -1;
    snprintf(out, sizeof out, "%s/out", tmp);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    return system(cmd) == 0 ? 0 : -1;
}

/* In the child: report the first failed expectation and exit 1. */
#define EXPECT(cond)                                                                               \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "child: line %d: %s (errno %s)\n", __LINE__, #cond, strerror(errno));  \
            _exit(1);                                                                              \
        }                                                                                          \
    } while (0)
#define EXPECT_FAILS(call, err)                                                                    \
    do {                                                                                           \
        errno = 0;                                                                                 \
        long r_ = (long)(call);                                                                    \
        if (r_ != -1 || errno != (err)) {                                                          \
            fprintf(stderr, "child: line %d: %s returned %ld errno %s, wanted %s\n", __LINE__,     \
                    #call, r_, strerror(errno), strerror(err));                                    \
            _exit(1);                                                                              \
        }                                                                                          \
    } while (0)

/* Run fn in a forked child; the test fails unless it exits 0. The child
 * never returns into cmocka, and _exit skips the leak check of a copy of
 * this process. */
static void in_child(void (*fn)(void))
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        fn();
        _exit(0);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (WIFSIGNALED(st))
        fail_msg("child killed by signal %d", WTERMSIG(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

static const char *outside(const char *name)
{
    static char p[160];
    snprintf(p, sizeof p, "%s/%s", tmp, name);
    return p;
}

static void confine_all(struct confine *c)
{
    c->mode = CONFINE_REQUIRE;
    c->output_dir = out;
    confine_start(c);
    EXPECT(c->error[0] == 0);
    EXPECT(confine_finish(c) == 0);
}

static void files_child(void)
{
    /* A file next to the output dir, made before confinement. */
    int fd = open(outside("secret"), O_WRONLY | O_CREAT, 0600);
    EXPECT(fd >= 0 && write(fd, "s", 1) == 1 && close(fd) == 0);
    struct sockaddr_in listen_addr = {.sin_family = AF_INET,
                                      .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof listen_addr;
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    EXPECT(lfd >= 0 && bind(lfd, (struct sockaddr *)&listen_addr, sizeof listen_addr) == 0 &&
           listen(lfd, 1) == 0 && getsockname(lfd, (struct sockaddr *)&listen_addr, &alen) == 0);
    struct confine c = {.mode = CONFINE_REQUIRE, .output_dir = out};
    confine_start(&c);
    EXPECT(c.error[0] == 0 && c.landlock_abi > 0);

    /* Outside: no read, no write, no new file, no exec. */
    EXPECT_FAILS(open(outside("secret"), O_RDONLY), EACCES);
    EXPECT_FAILS(open(outside("secret"), O_WRONLY), EACCES);
    EXPECT_FAILS(open(outside("new"), O_WRONLY | O_CREAT, 0600), EACCES);
    EXPECT_FAILS(open("/etc/passwd", O_RDONLY), EACCES);
    EXPECT_FAILS(mkdir(outside("dir"), 0700), EACCES);
    char *argv[] = {"/bin/true", NULL}, *envp[] = {NULL};
    EXPECT_FAILS(execve("/bin/true", argv, envp), EACCES);
    /* System files read, not written. */
    EXPECT((fd = open("/usr/lib/os-release", O_RDONLY)) >= 0 && close(fd) == 0);
    EXPECT_FAILS(open("/usr/lib/os-release", O_WRONLY), EACCES);
    EXPECT((fd = open("/proc/self/maps", O_RDONLY)) >= 0 && close(fd) == 0);

    /* No TCP: neither dialling (a listener made before confinement waits on
     * 127.0.0.1) nor binding. */
    int cfd = socket(AF_INET, SOCK_STREAM, 0), bfd = socket(AF_INET, SOCK_STREAM, 0);
    EXPECT(cfd >= 0 && bfd >= 0);
    EXPECT_FAILS(connect(cfd, (struct sockaddr *)&listen_addr, sizeof listen_addr), EACCES);
    struct sockaddr_in any = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    EXPECT_FAILS(bind(bfd, (struct sockaddr *)&any, sizeof any), EACCES);
    close(cfd);
    close(bfd);
    close(lfd);

    /* The output dir (created by confine_start) works as output.c uses it. */
    char p[200];
    snprintf(p, sizeof p, "%s/sub", out);
    EXPECT(mkdir(p, 0700) == 0);
    snprintf(p, sizeof p, "%s/sub/file.txt", out);
    EXPECT((fd = open(p, O_WRONLY | O_CREAT | O_NOFOLLOW, 0600)) >= 0);
    EXPECT(ftruncate(fd, 0) == 0 && write(fd, "hello", 5) == 5 && close(fd) == 0);
    char buf[8] = {0};
    EXPECT((fd = open(p, O_RDONLY)) >= 0 && read(fd, buf, sizeof buf) == 5 && close(fd) == 0);
    EXPECT(strcmp(buf, "hello") == 0);
}

static void landlock_confines_files(void **state)
{
    (void)state;
    if (!confine_landlock_abi())
        skip();
    in_child(files_child);
    /* The child created the output dir and wrote in it, nothing beside it. */
    assert_int_equal(access(outside("out/sub/file.txt"), F_OK), 0);
    assert_int_equal(access(outside("new"), F_OK), -1);
}

static volatile int thread_go;
static volatile long thread_errno;

/* Started before the filter: TSYNC must cover it too. */
static void *early_thread(void *arg)
{
    (void)arg;
    while (!thread_go)
        usleep(1000);
    errno = 0;
    thread_errno = syscall(SYS_socket, AF_INET, SOCK_STREAM, 0) == -1 ? errno : 0;
    return NULL;
}

static void seccomp_child(void)
{
    pthread_t t;
    EXPECT(pthread_create(&t, NULL, early_thread, NULL) == 0);
    /* Only the filter (Landlock would deny exec first): no_new_privs as
     * confine_start sets it. */
    EXPECT(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
    struct confine c = {.mode = CONFINE_REQUIRE};
    EXPECT(confine_finish(&c) == 0 && c.seccomp);

    char *argv[] = {"/bin/true", NULL}, *envp[] = {NULL};
    EXPECT_FAILS(execve("/bin/true", argv, envp), EPERM);
    EXPECT_FAILS(syscall(SYS_execveat, AT_FDCWD, "/bin/true", argv, envp, 0), EPERM);
    EXPECT_FAILS(socket(AF_INET, SOCK_STREAM, 0), EPERM);
    EXPECT_FAILS(socket(AF_UNIX, SOCK_STREAM, 0), EPERM);
    EXPECT_FAILS(syscall(SYS_io_uring_setup, 1, NULL), EPERM);
    EXPECT_FAILS(unshare(CLONE_NEWUSER), EPERM);
    char byte;
    struct iovec local = {&byte, 1}, remote = {&byte, 1};
    EXPECT_FAILS(process_vm_readv(getppid(), &local, 1, &remote, 1, 0), EPERM);
    /* What a worker does keeps working. */
    int sv[2];
    EXPECT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    EXPECT(getpid() > 0);
    thread_go = 1;
    EXPECT(pthread_join(t, NULL) == 0);
    EXPECT(thread_errno == EPERM);
}

static void seccomp_denies(void **state)
{
    (void)state;
    in_child(seccomp_child);
}

/* A process outside the worker's domain, with no more privilege than a
 * confined worker (same uid, no capabilities): only confinement can keep
 * the worker from it. */
static pid_t victim;

static pid_t start_victim(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
        struct __user_cap_data_struct d[2] = {{0}};
        syscall(SYS_capset, &h, d);
        for (;;)
            pause();
    }
    return pid;
}

/* Lines of /proc/thread-self/status, read by a thread that, like nng's,
 * starts between the two steps and reads once the worker is confined. */
static char cap_line[128], seccomp_line[128];
static volatile int confined;
static void *read_status(void *arg)
{
    (void)arg;
    while (!confined)
        usleep(1000);
    char line[128];
    FILE *f = fopen("/proc/thread-self/status", "r");
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "CapEff:", 7) == 0)
            snprintf(cap_line, sizeof cap_line, "%s", line);
        if (strncmp(line, "Seccomp:", 8) == 0)
            snprintf(seccomp_line, sizeof seccomp_line, "%s", line);
    }
    if (f)
        fclose(f);
    return NULL;
}

static void ptrace_child(void)
{
    struct confine c = {.mode = CONFINE_REQUIRE, .output_dir = out};
    confine_start(&c);
    pthread_t t;
    EXPECT(pthread_create(&t, NULL, read_status, NULL) == 0);
    EXPECT(confine_finish(&c) == 0);
    confined = 1;
    /* That thread has no capability (even as root) and the filter. */
    EXPECT(pthread_join(t, NULL) == 0);
    EXPECT(strcmp(cap_line, "CapEff:\t0000000000000000\n") == 0);
    EXPECT(strcmp(seccomp_line, "Seccomp:\t2\n") == 0);
    /* Denied by seccomp in release builds; sanitizer builds let ptrace
     * through for LeakSanitizer and Landlock denies it here instead. */
    EXPECT_FAILS(ptrace(PTRACE_ATTACH, victim, NULL, NULL), EPERM);
    char byte;
    struct iovec local = {&byte, 1}, remote = {&byte, 1};
    EXPECT_FAILS(process_vm_readv(victim, &local, 1, &remote, 1, 0), EPERM);
    if (c.landlock_abi >= 6) /* scoped signals */
        EXPECT_FAILS(kill(victim, SIGKILL), EPERM);
    EXPECT(kill(getpid(), 0) == 0);
}

static void no_ptrace_or_signal_outside(void **state)
{
    (void)state;
    if (!confine_landlock_abi())
        skip();
    victim = start_victim();
    assert_true(victim > 0);
    usleep(20000); /* let it drop its capabilities */
    in_child(ptrace_child);
    kill(victim, SIGKILL);
    waitpid(victim, NULL, 0);
}

static void limits_child(void)
{
    struct confine c = {.max_fds = 40, .cpu_seconds = 100, .max_memory_mb = 64};
    confine_all(&c);
    struct rlimit rl;
    EXPECT(getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur == 40 && rl.rlim_max == 40);
    EXPECT(getrlimit(RLIMIT_CPU, &rl) == 0 && rl.rlim_cur == 100 && rl.rlim_max == 100);
    /* Limits cannot be raised again. */
    rl.rlim_cur = rl.rlim_max = 200;
    EXPECT_FAILS(setrlimit(RLIMIT_CPU, &rl), EPERM);
    /* 64 MB more than at confinement: 16 MB maps, 256 MB does not. */
    void *small = mmap(NULL, 16 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT(small != MAP_FAILED);
    errno = 0;
    void *big = mmap(NULL, 256 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT(big == MAP_FAILED && errno == ENOMEM);
    /* Descriptors stop at 40. */
    int fd, last = -1;
    while ((fd = open("/dev/urandom", O_RDONLY)) >= 0)
        last = fd;
    EXPECT(errno == EMFILE && last == 39);
}

static void limits_take_effect(void **state)
{
    (void)state;
    if (!confine_landlock_abi())
        skip();
    in_child(limits_child);
}

static void options_parse(void **state)
{
    (void)state;
    struct confine c = {0};
    assert_int_equal(confine_option(&c, CONFINE_OPT_BASE, "require"), 1);
    assert_int_equal(c.mode, CONFINE_REQUIRE);
    assert_int_equal(confine_option(&c, CONFINE_OPT_BASE, "off"), 1);
    assert_int_equal(c.mode, CONFINE_OFF);
    assert_int_equal(confine_option(&c, CONFINE_OPT_BASE, "sometimes"), -1);
    assert_int_equal(confine_option(&c, CONFINE_OPT_BASE + 3, "256"), 1);
    assert_int_equal(c.max_fds, 256);
    assert_int_equal(confine_option(&c, CONFINE_OPT_BASE + 2, "-1"), -1);
    assert_int_equal(confine_option(&c, CONFINE_OPT_BASE + 4, "12x"), -1);
    assert_int_equal(confine_option(&c, 'c', "x"), 0);
}

/* Off means off: nothing is set. */
static void off_child(void)
{
    struct confine c = {.mode = CONFINE_OFF, .output_dir = out, .max_fds = 40};
    confine_start(&c);
    EXPECT(confine_finish(&c) == 0 && !c.seccomp && !c.landlock_abi);
    EXPECT(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 0);
    struct rlimit rl;
    EXPECT(getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != 40);
    int fd = open(outside("new"), O_WRONLY | O_CREAT, 0600);
    EXPECT(fd >= 0 && close(fd) == 0);
}

static void off_applies_nothing(void **state)
{
    (void)state;
    in_child(off_child);
}

/* --- costs (printed, not asserted: the machine may be loaded) --- */

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Per-call cost of a cheap system call (getppid, through the filter) and
 * of an open+close of a file under Landlock. */
static void per_call(double *syscall_ns, double *open_ns)
{
    enum { N = 200000, M = 20000 };
    double t = now_ns();
    for (int k = 0; k < N; k++)
        syscall(SYS_getppid);
    *syscall_ns = (now_ns() - t) / N;
    char p[200];
    snprintf(p, sizeof p, "%s/bench", out);
    close(open(p, O_WRONLY | O_CREAT, 0600));
    t = now_ns();
    for (int k = 0; k < M; k++)
        close(open(p, O_RDONLY));
    *open_ns = (now_ns() - t) / M;
}

static void costs_child(void)
{
    mkdir(out, 0700);
    double s0, o0, s1, o1;
    per_call(&s0, &o0);
    struct confine c = {.mode = CONFINE_REQUIRE, .output_dir = out, .max_fds = 256};
    confine_start(&c);
    EXPECT(confine_finish(&c) == 0);
    per_call(&s1, &o1);
    printf("confine costs: start (Landlock, caps) %lld us, finish (limits, seccomp) %lld us; "
           "getppid %.0f -> %.0f ns; open+close %.0f -> %.0f ns\n",
           c.start_us, c.finish_us, s0, s1, o0, o1);
    fflush(stdout);
}

static void costs(void **state)
{
    (void)state;
    if (!confine_landlock_abi())
        skip();
    in_child(costs_child);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(options_parse),
        cmocka_unit_test_setup_teardown(landlock_confines_files, setup, teardown),
        cmocka_unit_test_setup_teardown(seccomp_denies, setup, teardown),
        cmocka_unit_test_setup_teardown(no_ptrace_or_signal_outside, setup, teardown),
        cmocka_unit_test_setup_teardown(limits_take_effect, setup, teardown),
        cmocka_unit_test_setup_teardown(off_applies_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(costs, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
