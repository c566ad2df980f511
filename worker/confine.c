/*
 * confine.c - Landlock, seccomp, capabilities and resource limits for the
 * worker (confine.h says what and when; docs/confinement.md says why).
 *
 * Written against the 6.1 kernel headers of Debian 12: the Landlock access
 * rights and ruleset fields of later ABIs are defined here, and a ruleset
 * only ever names what the running kernel's ABI knows.
 */
#include "confine.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "worker.h"

/* LeakSanitizer stops the world with ptrace from a helper process it
 * clones at exit; the seccomp filter lets ptrace through in such builds,
 * where Landlock still limits it to the worker's own threads. */
#if defined(__SANITIZE_ADDRESS__)
#define CONFINE_ALLOW_PTRACE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(leak_sanitizer)
#define CONFINE_ALLOW_PTRACE 1
#endif
#endif

/* Landlock access rights by ABI (include/uapi/linux/landlock.h). */
#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_TRUNCATE (1ULL << 14)        /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15)       /* ABI 5 */
#define LL_NET_BIND_TCP (1ULL << 0)        /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1)     /* ABI 4 */
#define LL_SCOPE_ABSTRACT_UNIX (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)        /* ABI 6 */
/* Rights that apply to a file (the rest only to directories). */
#define LL_FS_FILE_RIGHTS                                                                          \
    (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)
#define LL_READ (LL_FS_READ_FILE | LL_FS_READ_DIR)

/* struct landlock_ruleset_attr as of ABI 6; older kernels get a prefix. */
struct ll_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};

static long long now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

/* Keep the first failure: it is the one require mode reports. */
static void note(struct confine *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct confine *c, const char *fmt, ...)
{
    if (c->error[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->error, sizeof c->error, fmt, ap);
    va_end(ap);
}

static int parse_count(const char *s, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < 0 || v > hi)
        return -1;
    *out = v;
    return 0;
}

int confine_option(struct confine *c, int opt, const char *arg)
{
    switch (opt) {
    case CONFINE_OPT_BASE:
        if (strcmp(arg, "auto") == 0)
            c->mode = CONFINE_AUTO;
        else if (strcmp(arg, "require") == 0)
            c->mode = CONFINE_REQUIRE;
        else if (strcmp(arg, "off") == 0)
            c->mode = CONFINE_OFF;
        else
            return -1;
        return 1;
    case CONFINE_OPT_BASE + 1:
        c->output_dir = *arg ? arg : NULL;
        return 1;
    case CONFINE_OPT_BASE + 2:
        return parse_count(arg, 1LL << 30, &c->max_memory_mb) < 0 ? -1 : 1;
    case CONFINE_OPT_BASE + 3:
        return parse_count(arg, 1LL << 20, &c->max_fds) < 0 ? -1 : 1;
    case CONFINE_OPT_BASE + 4:
        return parse_count(arg, 1LL << 31, &c->cpu_seconds) < 0 ? -1 : 1;
    default:
        return 0;
    }
}

int confine_landlock_abi(void)
{
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return abi > 0 ? (int)abi : 0;
}

/* Number of threads of this process, from /proc/self/status; -1 unknown. */
static int thread_count(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    if (!f)
        return -1;
    char line[256];
    int n = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %d", &n) == 1)
            break;
    fclose(f);
    return n;
}

/* Allow `access` beneath path (or on it, for a file). A missing path is
 * skipped: not every system has /lib64. Returns 0 or -1 with errno. */
static int ll_allow(int ruleset, const char *path, uint64_t access, uint64_t handled)
{
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0 : -1;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        close(fd);
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        access &= LL_FS_FILE_RIGHTS;
    struct landlock_path_beneath_attr pb = {.allowed_access = access & handled, .parent_fd = fd};
    int r = pb.allowed_access
                ? (int)syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0)
                : 0;
    int e = errno;
    close(fd);
    errno = e;
    return r;
}

static void landlock(struct confine *c)
{
    int abi = confine_landlock_abi();
    if (!abi) {
        note(c, "this kernel has no Landlock (%s)", strerror(errno));
        c->unsupported = true;
        return;
    }
    /* Every file system right this ABI knows is handled: what no rule
     * grants is denied. */
    struct ll_ruleset_attr attr = {.handled_access_fs = (1ULL << 13) - 1};
    size_t size = sizeof attr.handled_access_fs;
    if (abi >= 2)
        attr.handled_access_fs |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3)
        attr.handled_access_fs |= LL_FS_TRUNCATE;
    if (abi >= 5)
        attr.handled_access_fs |= LL_FS_IOCTL_DEV;
    if (abi >= 4) {
        /* A worker never listens nor dials TCP: its browser connection is
         * the socketpair end it got at exec (the CDP bridge). */
        attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
        size = offsetof(struct ll_ruleset_attr, scoped);
    }
    if (abi >= 6) {
        attr.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
        size = sizeof attr;
    }
    uint64_t h = attr.handled_access_fs;
    int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
    if (rs < 0) {
        note(c, "landlock_create_ruleset: %s", strerror(errno));
        return;
    }
    /* Read-only: the libraries (the sanitizers' symbolizer reads them and
     * this binary), /proc/self (glibc and the sanitizers read maps, task),
     * the CPU list nng sizes its threads by, and the random device. */
    static const char *const ro[] = {"/usr",           "/lib",       "/lib64",
                                     "/proc/self/exe", "/proc/self", "/sys/devices/system/cpu",
                                     "/dev/urandom"};
    const char *failed = NULL;
    for (size_t k = 0; k < sizeof ro / sizeof ro[0] && !failed; k++)
        if (ll_allow(rs, ro[k], LL_READ, h) < 0)
            failed = ro[k];
    if (!failed && c->output_dir) {
        if (output_make_dirs(c->output_dir) < 0)
            log_warn("cannot create the output dir %s: %s; no file can be written", c->output_dir,
                     strerror(errno));
        /* REMOVE_FILE: a finished download is renamed from the browser's
         * name for it (worker/downloads.c), a cancelled one's part removed. */
        else if (ll_allow(rs, c->output_dir,
                          LL_READ | LL_FS_WRITE_FILE | LL_FS_MAKE_DIR | LL_FS_MAKE_REG |
                              LL_FS_REMOVE_FILE | LL_FS_TRUNCATE,
                          h) < 0)
            failed = c->output_dir;
    }
    if (failed) {
        note(c, "landlock_add_rule %s: %s", failed, strerror(errno));
    } else if (syscall(SYS_landlock_restrict_self, rs, 0) < 0) {
        note(c, "landlock_restrict_self: %s", strerror(errno));
    } else {
        c->landlock_abi = abi;
    }
    close(rs);
}

/* A worker needs no capability; one run as root keeps its uid but loses
 * the rest of root's power. Capabilities belong to each thread, so this too
 * must come before the first thread. */
static void drop_caps(struct confine *c)
{
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
    struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {0};
    if (syscall(SYS_capset, &hdr, data) < 0)
        note(c, "capset: %s", strerror(errno));
}

void confine_start(struct confine *c)
{
    if (c->mode == CONFINE_OFF)
        return;
    long long t0 = now_us();
    int threads = thread_count();
    if (threads != 1)
        note(c, "Landlock must be set while the worker has one thread, not %d", threads);
    else if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        note(c, "no_new_privs: %s", strerror(errno));
    else
        landlock(c);
    drop_caps(c);
    c->start_us = now_us() - t0;
}

/* Resource limits, soft = hard so the worker cannot raise them again. */
static int set_limit(struct confine *c, int res, const char *name, rlim_t v)
{
    struct rlimit old;
    if (getrlimit(res, &old) == 0 && old.rlim_max != RLIM_INFINITY && old.rlim_max < v)
        v = old.rlim_max; /* never above what we were given */
    struct rlimit rl = {v, v};
    if (setrlimit(res, &rl) == 0)
        return 0;
    note(c, "setrlimit %s: %s", name, strerror(errno));
    return -1;
}

/* Private writable mappings now (VmData), in bytes; -1 unknown. */
static long long data_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    if (!f)
        return -1;
    char line[256];
    long long kb = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmData: %lld kB", &kb) == 1)
            break;
    fclose(f);
    return kb < 0 ? -1 : kb * 1024;
}

static void limits(struct confine *c)
{
    if (c->max_fds)
        set_limit(c, RLIMIT_NOFILE, "RLIMIT_NOFILE", (rlim_t)c->max_fds);
    if (c->cpu_seconds)
        set_limit(c, RLIMIT_CPU, "RLIMIT_CPU", (rlim_t)c->cpu_seconds);
    if (c->max_memory_mb) {
        /* RLIMIT_DATA counts private writable mappings: the heap, not code
         * or shared libraries. What start-up mapped (thread stacks, and in
         * sanitizer builds terabytes of reserved shadow) is the base the
         * limit adds to, so one number means the same in every build. */
        long long base = data_bytes();
        if (base < 0)
            note(c, "cannot read VmData: %s", strerror(errno));
        else
            set_limit(c, RLIMIT_DATA, "RLIMIT_DATA", (rlim_t)(base + (c->max_memory_mb << 20)));
    }
}

#if defined(__x86_64__)
#define CONFINE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define CONFINE_ARCH AUDIT_ARCH_AARCH64
#endif

/* System calls a worker never makes after start-up and an attacker in it
 * would want. */
static const int denied_syscalls[] = {
    SYS_execve,
    SYS_execveat, /* no other program */
#ifndef CONFINE_ALLOW_PTRACE
    SYS_ptrace,
#endif
    SYS_process_vm_readv,
    SYS_process_vm_writev, /* no other process's memory */
    SYS_socket,            /* no new connection: the worker has its two */
    SYS_io_uring_setup,
    SYS_io_uring_enter,
    SYS_io_uring_register, /* would bypass this filter */
    SYS_bpf,
    SYS_userfaultfd,
    SYS_perf_event_open,
    SYS_keyctl,
    SYS_add_key,
    SYS_request_key,
    SYS_unshare,
    SYS_setns,
    SYS_mount,
    SYS_umount2,
    SYS_pivot_root,
    SYS_chroot,
    SYS_open_tree,
    SYS_move_mount,
    SYS_fsopen,
    SYS_fsconfig,
    SYS_fsmount,
    SYS_fspick,
    SYS_mount_setattr,
    SYS_open_by_handle_at,
    SYS_name_to_handle_at,
    SYS_init_module,
    SYS_finit_module,
    SYS_delete_module,
    SYS_kexec_load,
#ifdef SYS_kexec_file_load
    SYS_kexec_file_load,
#endif
    SYS_reboot,
    SYS_swapon,
    SYS_swapoff,
    SYS_acct,
};
#define N_DENIED (sizeof denied_syscalls / sizeof denied_syscalls[0])

/* Denied calls fail with EPERM rather than killing the worker: the worker
 * reports errors it gets, the sanitizers' reports survive (they try to
 * start a symbolizer), and an attacker learns nothing from EPERM that it
 * could use. A foreign architecture's calls (int 0x80 on x86-64) kill. */
static void seccomp_filter(struct confine *c)
{
#ifndef CONFINE_ARCH
    note(c, "no seccomp filter for this architecture");
#else
    struct sock_filter f[N_DENIED + 16];
    size_t n = 0;
    f[n++] =
        (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CONFINE_ARCH, 1, 0);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    f[n++] =
        (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    if (c->unix_sockets) {
        /* socket(AF_UNIX, ...) only: nng redials the relay's ipc path; any
         * other family stays denied. The accumulator keeps nr on the way on. */
        f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 0, 4);
        f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                              offsetof(struct seccomp_data, args[0]));
        f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1);
        f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
        f[n++] =
            (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & 0xffff));
    }
#ifdef __x86_64__
    /* x32 system calls are x86-64 numbers with bit 30 set. */
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000U, N_DENIED + 1, 0);
#endif
    for (size_t k = 0; k < N_DENIED; k++)
        f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
                                              (uint32_t)denied_syscalls[k], N_DENIED - k, 0);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & 0xffff));
    struct sock_fprog prog = {.len = (unsigned short)n, .filter = f};
    /* TSYNC: nng's threads exist by now; all of them get the filter. */
    long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
    if (r != 0) {
        note(c, "seccomp: %s", r > 0 ? "a thread could not be synchronised" : strerror(errno));
        c->unsupported |= r < 0 && (errno == EINVAL || errno == ENOSYS);
    } else
        c->seccomp = true;
#endif
}

int confine_finish(struct confine *c)
{
    if (c->mode == CONFINE_OFF)
        return 0;
    long long t0 = now_us();
    limits(c);
    seccomp_filter(c);
    c->finish_us = now_us() - t0;
    /* A kernel without Landlock or seccomp is reported once by the
     * supervisor; any other failure is a surprise worth a warning. */
    log_msg(c->error[0] && !c->unsupported ? LOG_WARNING : LOG_DEBUG,
            "confined: Landlock ABI %d (0: none), seccomp %s, limits fds %lld cpu %llds memory "
            "%lld MB; took %lld + %lld us%s%s",
            c->landlock_abi, c->seccomp ? "on" : "off", c->max_fds, c->cpu_seconds,
            c->max_memory_mb, c->start_us, c->finish_us, c->error[0] ? "; " : "", c->error);
    return c->mode == CONFINE_REQUIRE && c->error[0] ? -1 : 0;
}
