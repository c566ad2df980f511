/*
 * test_relay_logfile.c - the relay's log file (relay/logfile.c): stderr goes
 * to it, it is appended to across opens, rotated to .1 when past its limit
 * (at open and from the tick), and never opened through a symlink.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "logfile.h"

static char dir[64], path[128], older[136];
static int saved_stderr = -1;

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/tv-relaylog-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/relay.log", dir);
    snprintf(older, sizeof older, "%s.1", path);
    saved_stderr = dup(STDERR_FILENO);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    dup2(saved_stderr, STDERR_FILENO);
    close(saved_stderr);
    unlink(path);
    unlink(older);
    rmdir(dir);
    return 0;
}

static long long size_of(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 ? (long long)st.st_size : -1;
}

static void say(const char *s)
{
    assert_int_equal(write(STDERR_FILENO, s, strlen(s)), (ssize_t)strlen(s));
}

static void test_stderr_goes_to_the_file_and_is_kept(void **state)
{
    (void)state;
    char err[256];
    assert_int_equal(logfile_open(path, 1000, err, sizeof err), 0);
    say("first run\n");
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    /* A second open (the next relay) appends. */
    assert_int_equal(logfile_open(path, 1000, err, sizeof err), 0);
    say("second run\n");
    assert_int_equal(size_of(path), (long long)strlen("first run\nsecond run\n"));
    assert_int_equal(size_of(older), -1);
}

static void test_rotated_at_open_when_past_the_limit(void **state)
{
    (void)state;
    char err[256], big[300];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_int_equal(logfile_open(path, 200, err, sizeof err), 0);
    say(big);
    assert_int_equal(logfile_open(path, 200, err, sizeof err), 0);
    assert_int_equal(size_of(older), 299);
    assert_int_equal(size_of(path), 0);
}

static void test_rotated_from_the_tick(void **state)
{
    (void)state;
    char err[256], line[101];
    memset(line, 'y', 99);
    line[99] = '\n';
    line[100] = '\0';
    assert_int_equal(logfile_open(path, 250, err, sizeof err), 0);
    for (int i = 0; i < 2; i++)
        say(line);
    logfile_check(); /* 200 bytes: under the limit */
    assert_int_equal(size_of(older), -1);
    say(line);
    logfile_check(); /* 300: rotated, and writing goes on in a new file */
    assert_int_equal(size_of(older), 300);
    say("after\n");
    assert_true(size_of(path) >= 6 && size_of(path) < 250);
    /* Rotated again: the older file is replaced, so two files at most. */
    for (int i = 0; i < 3; i++)
        say(line);
    logfile_check();
    assert_true(size_of(older) >= 300 && size_of(older) < 600);
    assert_true(size_of(path) < 250);
}

static void test_never_through_a_symlink(void **state)
{
    (void)state;
    char err[256], target[160];
    snprintf(target, sizeof target, "%s/elsewhere", dir);
    assert_int_equal(symlink(target, path), 0);
    assert_int_equal(logfile_open(path, 1000, err, sizeof err), -1);
    assert_non_null(strstr(err, "relay.log"));
    assert_int_equal(size_of(target), -1); /* nothing created behind the link */
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_stderr_goes_to_the_file_and_is_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rotated_at_open_when_past_the_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rotated_from_the_tick, setup, teardown),
        cmocka_unit_test_setup_teardown(test_never_through_a_symlink, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
