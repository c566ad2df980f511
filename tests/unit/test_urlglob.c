/*
 * test_urlglob.c - browser_route's URL globs: ** crosses '/', * does not,
 * {a,b} alternatives, everything else literal, whole-URL matches.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "urlglob.h"

static void stars(void **state)
{
    (void)state;
    assert_true(url_glob_match("**/api/users", "http://127.0.0.1:80/api/users"));
    assert_false(url_glob_match("**/api/users", "http://127.0.0.1:80/api/users/1"));
    assert_true(url_glob_match("**/api/*", "http://h/api/users"));
    assert_false(url_glob_match("**/api/*", "http://h/api/users/1"));
    assert_true(url_glob_match("**/api/**", "http://h/api/users/1"));
    assert_true(url_glob_match("http://h/*.js", "http://h/app.js"));
    assert_false(url_glob_match("http://h/*.js", "http://h/lib/app.js"));
    assert_true(url_glob_match("**", "http://anything/at/all?x=1"));
    assert_true(url_glob_match("*", "abc"));
    assert_false(url_glob_match("*", "a/c"));
}

static void literals_and_alternatives(void **state)
{
    (void)state;
    assert_true(url_glob_match("http://h/a?b=1", "http://h/a?b=1"));
    assert_false(url_glob_match("http://h/a?b=1", "http://h/aXb=1")); /* ? is literal */
    assert_true(url_glob_match("**/*.{png,jpg}", "http://h/i/x.jpg"));
    assert_true(url_glob_match("**/*.{png,jpg}", "http://h/x.png"));
    assert_false(url_glob_match("**/*.{png,jpg}", "http://h/x.gif"));
    assert_true(url_glob_match("http://{a,b}.test/{x,y}", "http://b.test/y"));
    assert_false(url_glob_match("http://h/x", "http://h/xy"));
    assert_false(url_glob_match("", "http://h/"));
}

static void hostile_patterns_end(void **state)
{
    (void)state;
    /* Many stars against a long URL that nearly matches: memoised, quick. */
    char pat[200], url[5000];
    memset(pat, 0, sizeof pat);
    for (int i = 0; i < 40; i++)
        strcat(pat, "*a");
    strcat(pat, "b");
    memset(url, 'a', sizeof url - 1);
    url[sizeof url - 1] = 0;
    assert_false(url_glob_match(pat, url));
    char big[URLGLOB_MAX + 10];
    memset(big, '*', sizeof big - 1);
    big[sizeof big - 1] = 0;
    assert_false(url_glob_match(big, "x"));      /* over the length cap */
    assert_true(url_glob_match("{a,b", "{a,b")); /* unclosed: literal */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stars),
        cmocka_unit_test(literals_and_alternatives),
        cmocka_unit_test(hostile_patterns_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
