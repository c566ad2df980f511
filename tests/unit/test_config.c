/*
 * test_config.c - settings from flags, TABVISOR_* variables and a JSON
 * --config file: names derived from one table, precedence flag > env > file
 * > default, errors that name their source, and malformed files that are
 * refused without a crash.
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

#include "config.h"
#include "config_file.h"
#include "options.h"

extern char **environ;

static char dir[] = "/tmp/tv-unit-config-XXXXXX";
static char file[sizeof dir + 16];
static char err[8192]; /* what the last parse printed to stderr */

/* Remove every TABVISOR_* variable (the test runner may set some). */
static void clear_env(void)
{
    for (;;) {
        char **e = environ;
        while (*e && strncmp(*e, "TABVISOR_", 9) != 0)
            e++;
        if (!*e)
            return;
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(*e, "="), *e);
        unsetenv(name);
    }
}

static int setup(void **state)
{
    (void)state;
    clear_env();
    return 0;
}

/* Write text to the config file with mode. */
static void write_file(const char *text, mode_t mode)
{
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    chmod(file, mode);
}

/* config_parse() with argv = "tabvisor" --chromium /bin/true ARGS... (NULL
 * ended); its stderr lands in err. */
static int parse(struct config *c, ...)
{
    char *argv[32] = {"tabvisor", "--chromium", "/bin/true"};
    int argc = 3;
    va_list ap;
    va_start(ap, c);
    for (char *a; (a = va_arg(ap, char *)) != NULL && argc < 31;)
        argv[argc++] = a;
    va_end(ap);
    /* argv strings must be writable: --auth-token erases its argument. */
    char copies[32][256];
    for (int k = 0; k < argc; k++) {
        snprintf(copies[k], sizeof copies[k], "%s", argv[k]);
        argv[k] = copies[k];
    }
    argv[argc] = NULL;
    fflush(stderr);
    int saved = dup(2);
    FILE *tmp = tmpfile();
    dup2(fileno(tmp), 2);
    int rc = config_parse(c, argc, argv);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t n = fread(err, 1, sizeof err - 1, tmp);
    err[n] = 0;
    fclose(tmp);
    return rc;
}

static void names_come_from_the_flag(void **state)
{
    (void)state;
    char env[64], key[64];
    opt_env_name(opt_by_name("max-sessions"), env, sizeof env);
    opt_key_name(opt_by_name("max-sessions"), key, sizeof key);
    assert_string_equal(env, "TABVISOR_MAX_SESSIONS");
    assert_string_equal(key, "maxSessions");
    opt_key_name(opt_by_name("http-unused-session-timeout"), key, sizeof key);
    assert_string_equal(key, "httpUnusedSessionTimeout");
    opt_env_name(opt_by_name("config"), env, sizeof env);
    opt_key_name(opt_by_name("config"), key, sizeof key);
    assert_string_equal(env, "TABVISOR_CONFIG");
    assert_string_equal(key, ""); /* a file cannot name another file */
    opt_env_name(opt_by_name("help"), env, sizeof env);
    assert_string_equal(env, "");
    /* Every row is complete and no two share a name, variable or key. */
    for (size_t i = 0; i < options_count; i++) {
        assert_non_null(options[i].set);
        assert_non_null(options[i].help);
        assert_true((options[i].arg != NULL) ==
                    (options[i].kind != OPT_BOOL && options[i].kind != OPT_ACTION));
        for (size_t j = 0; j < i; j++) {
            char a[64], b[64];
            assert_string_not_equal(options[i].name, options[j].name);
            opt_key_name(&options[i], a, sizeof a);
            opt_key_name(&options[j], b, sizeof b);
            if (*a)
                assert_string_not_equal(a, b);
        }
    }
}

static void help_lists_every_option_with_its_names(void **state)
{
    (void)state;
    FILE *f = tmpfile();
    options_usage(f);
    rewind(f);
    static char text[32768];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
    for (size_t i = 0; i < options_count; i++) {
        char flag[80], env[64], key[64], line[160];
        snprintf(flag, sizeof flag, "  --%s", options[i].name);
        assert_non_null(strstr(text, flag));
        opt_env_name(&options[i], env, sizeof env);
        opt_key_name(&options[i], key, sizeof key);
        if (*key)
            snprintf(line, sizeof line, "%s, key %s\n", env, key);
        else
            snprintf(line, sizeof line, "%s\n", env);
        if (*env)
            assert_non_null(strstr(text, line));
    }
}

static void flag_beats_env_beats_file_beats_default(void **state)
{
    (void)state;
    struct config c;
    write_file("{\"maxSessions\": 3, \"sessionIdleTimeout\": 60}", 0600);
    assert_int_equal(parse(&c, NULL), 0);
    assert_int_equal(c.max_sessions, 16);
    assert_int_equal(parse(&c, "--config", file, NULL), 0);
    assert_int_equal(c.max_sessions, 3);
    assert_int_equal(c.idle_ms, 60000); /* seconds, as on the command line */
    setenv("TABVISOR_CONFIG", file, 1);
    assert_int_equal(parse(&c, NULL), 0);
    assert_int_equal(c.max_sessions, 3);
    setenv("TABVISOR_MAX_SESSIONS", "5", 1);
    assert_int_equal(parse(&c, NULL), 0);
    assert_int_equal(c.max_sessions, 5);
    assert_int_equal(c.idle_ms, 60000);
    assert_int_equal(parse(&c, "--max-sessions", "7", NULL), 0);
    assert_int_equal(c.max_sessions, 7);
    setenv("TABVISOR_MAX_SESSIONS", "", 1); /* empty is unset */
    assert_int_equal(parse(&c, NULL), 0);
    assert_int_equal(c.max_sessions, 3);
    clear_env();
}

static void lists_replace_across_sources(void **state)
{
    (void)state;
    struct config c;
    const unsigned core = 1u << CAP_CORE;
    write_file("{\"caps\": [\"storage\", \"network\"], \"tools\": \"browser_click\"}", 0600);
    assert_int_equal(parse(&c, "--config", file, NULL), 0);
    assert_int_equal(c.caps, core | 1u << CAP_STORAGE | 1u << CAP_NETWORK);
    assert_string_equal(c.tools, "browser_click");
    setenv("TABVISOR_CAPS", "pdf", 1);
    assert_int_equal(parse(&c, "--config", file, NULL), 0);
    assert_int_equal(c.caps, core | 1u << CAP_PDF);
    assert_int_equal(parse(&c, "--config", file, "--caps", "vision", "--caps", "testing", NULL), 0);
    assert_int_equal(c.caps, core | 1u << CAP_VISION | 1u << CAP_TESTING);
    clear_env();
}

static void booleans(void **state)
{
    (void)state;
    struct config c;
    setenv("TABVISOR_EXTENSION", "TRUE", 1);
    assert_int_equal(parse(&c, NULL), 0);
    assert_true(c.extension);
    assert_string_equal(c.browser_mode, "extension");
    setenv("TABVISOR_EXTENSION", "0", 1);
    assert_int_equal(parse(&c, NULL), 0);
    assert_false(c.extension);
    setenv("TABVISOR_EXTENSION", "maybe", 1);
    assert_int_equal(parse(&c, NULL), -1);
    assert_non_null(strstr(err, "TABVISOR_EXTENSION wants true, false, 1 or 0, not 'maybe'"));
    unsetenv("TABVISOR_EXTENSION");
    /* --browser-mode and --extension are one setting: the flag wins. */
    setenv("TABVISOR_EXTENSION", "1", 1);
    assert_int_equal(parse(&c, "--browser-mode", "shared", NULL), 0);
    assert_false(c.extension);
    unsetenv("TABVISOR_EXTENSION");
    write_file("{\"extension\": \"yes\"}", 0600);
    assert_int_equal(parse(&c, "--config", file, NULL), -1);
    assert_non_null(strstr(err, ": extension must be true or false, not a string"));
}

static void headed_needs_a_display(void **state)
{
    (void)state;
    struct config c;
    char *display = getenv("DISPLAY") ? strdup(getenv("DISPLAY")) : NULL;
    char *wayland = getenv("WAYLAND_DISPLAY") ? strdup(getenv("WAYLAND_DISPLAY")) : NULL;
    unsetenv("DISPLAY");
    unsetenv("WAYLAND_DISPLAY");
    assert_int_equal(parse(&c, "--headed", NULL), -1);
    assert_non_null(strstr(err, "neither DISPLAY nor WAYLAND_DISPLAY is set"));
    setenv("DISPLAY", ":99", 1);
    assert_int_equal(parse(&c, "--headed", NULL), 0);
    assert_true(c.headed);
    setenv("TABVISOR_HEADED", "false", 1);
    assert_int_equal(parse(&c, NULL), 0);
    assert_false(c.headed);
    clear_env();
    if (display)
        setenv("DISPLAY", display, 1);
    else
        unsetenv("DISPLAY");
    if (wayland)
        setenv("WAYLAND_DISPLAY", wayland, 1);
    free(display);
    free(wayland);
}

/* --instance-id from each source; a bad name is refused naming its source. */
static void instance_id(void **state)
{
    (void)state;
    struct config c;
    assert_int_equal(parse(&c, NULL), 0);
    assert_null(c.instance_id);
    assert_int_equal(parse(&c, "--instance-id", "r1", NULL), 0);
    assert_string_equal(c.instance_id, "r1");
    setenv("TABVISOR_INSTANCE_ID", "tabvisor-0", 1);
    assert_int_equal(parse(&c, NULL), 0);
    assert_string_equal(c.instance_id, "tabvisor-0");
    unsetenv("TABVISOR_INSTANCE_ID");
    write_file("{\"instanceId\": \"abcdefghijklmnopqrstuvwxyz-01234\"}", 0600);
    assert_int_equal(parse(&c, "--config", file, NULL), 0);
    assert_string_equal(c.instance_id, "abcdefghijklmnopqrstuvwxyz-01234");

    assert_int_equal(parse(&c, "--instance-id", "R1", NULL), -1);
    assert_non_null(strstr(err, "tabvisor: --instance-id wants 1 to 32 characters of a-z, 0-9 "
                                "and '-' (e.g. r1 or tabvisor-0), not 'R1'"));
    assert_int_equal(parse(&c, "--instance-id", "", NULL), -1);
    assert_non_null(strstr(err, "--instance-id wants 1 to 32"));
    setenv("TABVISOR_INSTANCE_ID", "r1.x", 1);
    assert_int_equal(parse(&c, NULL), -1);
    assert_non_null(strstr(err, "TABVISOR_INSTANCE_ID wants 1 to 32"));
    unsetenv("TABVISOR_INSTANCE_ID");
    write_file("{\"instanceId\": \"abcdefghijklmnopqrstuvwxyz-012345\"}", 0600);
    assert_int_equal(parse(&c, "--config", file, NULL), -1);
    assert_non_null(strstr(err, ": instanceId wants 1 to 32"));
    write_file("{\"instanceId\": 1}", 0600);
    assert_int_equal(parse(&c, "--config", file, NULL), -1);
}

static void errors_name_their_source(void **state)
{
    (void)state;
    struct config c;
    setenv("TABVISOR_MAX_SESSIONS", "x", 1);
    assert_int_equal(parse(&c, NULL), -1);
    assert_non_null(strstr(err, "TABVISOR_MAX_SESSIONS wants a whole number from 1 to 1024"));
    /* The flag would win, so the environment's bad value is not read. */
    assert_int_equal(parse(&c, "--max-sessions", "2", NULL), 0);
    unsetenv("TABVISOR_MAX_SESSIONS");
    assert_int_equal(parse(&c, "--max-sessions", "0", NULL), -1);
    assert_non_null(strstr(err, "tabvisor: --max-sessions wants a whole number"));

    write_file("{\"maxSesions\": 3}", 0600);
    assert_int_equal(parse(&c, "--config", file, NULL), -1);
    assert_non_null(strstr(err, "unknown key \"maxSesions\" (did you mean maxSessions?)"));
    write_file("{\"max-sessions\": 3}", 0600);
    assert_int_equal(parse(&c, "--config", file, NULL), -1);
    assert_non_null(strstr(err, "(did you mean maxSessions?)"));
    write_file("{\"config\": \"other.json\"}", 0600);
    assert_int_equal(parse(&c, "--config", file, NULL), -1);
    assert_non_null(strstr(err, "unknown key \"config\""));
    write_file("{\"maxSessions\": \"3\"}", 0600);
    assert_int_equal(parse(&c, "--config", file, NULL), -1);
    assert_non_null(strstr(err, ": maxSessions must be a number, not a string"));
    write_file("{\"caps\": \"storage,bogus\"}", 0600);
    assert_int_equal(parse(&c, "--config", file, NULL), -1);
    assert_non_null(strstr(err, ": caps: unknown group 'bogus'"));
    write_file("{\"caps\": [\"storage,network\"]}", 0600);
    assert_int_equal(parse(&c, "--config", file, NULL), -1);
    assert_non_null(strstr(err, "caps[0] 'storage,network' holds ','"));
    write_file("{\"maxSessions\": 3,\n  \"caps\": [\"storage\",]\n}", 0600);
    assert_int_equal(parse(&c, "--config", file, NULL), -1);
    char where[sizeof file + 8];
    snprintf(where, sizeof where, "%s:2:", file);
    assert_non_null(strstr(err, where)); /* line and column of the error */
    assert_int_equal(parse(&c, "--config", "/nonexistent/tv.json", NULL), -1);
    assert_non_null(strstr(err, "--config /nonexistent/tv.json: No such file"));
    setenv("TABVISOR_CONFIG", "/nonexistent/tv.json", 1);
    assert_int_equal(parse(&c, NULL), -1);
    assert_non_null(strstr(err, "TABVISOR_CONFIG /nonexistent/tv.json"));
    clear_env();
    assert_string_equal(config_suggest("TABVISOR_MAX_SESION", 1), "TABVISOR_MAX_SESSIONS");
    assert_null(config_suggest("somethingElse", 0));
}

static void malformed_files_are_refused(void **state)
{
    (void)state;
    struct config c;
    static const char *const bad[] = {
        "",
        "   ",
        "null",
        "[]",
        "42",
        "\"text\"",
        "{",
        "{\"maxSessions\": }",
        "{\"maxSessions\": 1 \"caps\": []}",
        "{\"a\":1,\"a\":2}",
        "{\"maxSessions\": 99999999999999999999999}",
        "{\"maxSessions\": -1}",
        "{\"maxSessions\": 1e3}",
        "{\"maxSessions\": true}",
        "{\"caps\": {\"storage\": true}}",
        "{\"caps\": [[\"storage\"]]}",
        "{\"caps\": [null]}",
        "{\"outputDir\": \"a\\u0000b\"}",
        "{\"maxSessions\": 3}\n{\"maxSessions\": 4}",
        "\xff\xfe{}",
        "{\"viewport\": \"1280x720junk\"}",
        "{\"logLevel\": \"loud\"}",
        "{\"http\": \"[::1\"}",
        "{\"cdpAllow\": [\"DOM.\"]}",
        "{\"chromium\": 1}",
        "{\"headed\": 1}",
        "{\"allowedOrigins\": [\"http://[bad\"]}",
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        write_file(bad[k], 0600);
        if (parse(&c, "--config", file, NULL) != -1)
            fail_msg("accepted: %s", bad[k]);
        assert_non_null(strstr(err, "tabvisor: "));
    }
    /* Deep nesting: jansson bounds its depth; we must only refuse it. */
    static char deep[40000];
    size_t n = (size_t)snprintf(deep, sizeof deep, "{\"caps\": ");
    for (size_t k = 0; k < 10000; k++)
        deep[n++] = '[';
    deep[n] = 0;
    write_file(deep, 0600);
    assert_int_equal(parse(&c, "--config", file, NULL), -1);
    /* null is "not given", an empty object is all defaults. */
    write_file("{\"maxSessions\": null}", 0600);
    assert_int_equal(parse(&c, "--config", file, NULL), 0);
    assert_int_equal(c.max_sessions, 16);
    write_file("{}", 0600);
    assert_int_equal(parse(&c, "--config", file, NULL), 0);
}

static void tokens(void **state)
{
    (void)state;
    struct config c;
    setenv("TABVISOR_AUTH_TOKEN", "env-token", 1);
    assert_int_equal(parse(&c, NULL), 0);
    assert_string_equal(c.auth_token, "env-token");
    assert_null(getenv("TABVISOR_AUTH_TOKEN")); /* gone from our environment */
    setenv("TABVISOR_AUTH_TOKEN", "env-token", 1);
    assert_int_equal(parse(&c, "--auth-token", "flag-token", NULL), 0);
    assert_string_equal(c.auth_token, "flag-token");
    assert_null(getenv("TABVISOR_AUTH_TOKEN"));

    /* A world-readable file holding the token is used, with a warning. */
    write_file("{\"authToken\": \"file-token\"}", 0644);
    assert_int_equal(parse(&c, "--config", file, NULL), 0);
    assert_string_equal(c.auth_token, "file-token");
    assert_non_null(strstr(err, "holds authToken and can be read by other users"));
    write_file("{\"authToken\": \"file-token\"}", 0600);
    assert_int_equal(parse(&c, "--config", file, NULL), 0);
    assert_null(strstr(err, "can be read by other users"));
    /* The environment's token file wins over the file's token: one setting. */
    char tokfile[sizeof dir + 16];
    snprintf(tokfile, sizeof tokfile, "%s/token", dir);
    FILE *f = fopen(tokfile, "w");
    fputs("from-token-file\n", f);
    fclose(f);
    chmod(tokfile, 0600);
    setenv("TABVISOR_AUTH_TOKEN_FILE", tokfile, 1);
    assert_int_equal(parse(&c, "--config", file, NULL), 0);
    assert_string_equal(c.auth_token, "from-token-file");
    /* Both spellings in one source are refused, as on the command line. */
    setenv("TABVISOR_AUTH_TOKEN", "x", 1);
    assert_int_equal(parse(&c, NULL), -1);
    assert_non_null(strstr(err, "give one of TABVISOR_AUTH_TOKEN and TABVISOR_AUTH_TOKEN_FILE"));
    clear_env();
    unlink(tokfile);
}

static void unknown_variables_warn(void **state)
{
    (void)state;
    struct config c;
    setenv("TABVISOR_MAX_SESION", "3", 1);
    assert_int_equal(parse(&c, NULL), 0);
    assert_non_null(strstr(err, "TABVISOR_MAX_SESION (did you mean TABVISOR_MAX_SESSIONS?)"));
    clear_env();
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    snprintf(file, sizeof file, "%s/tv.json", dir);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(names_come_from_the_flag, setup),
        cmocka_unit_test_setup(help_lists_every_option_with_its_names, setup),
        cmocka_unit_test_setup(flag_beats_env_beats_file_beats_default, setup),
        cmocka_unit_test_setup(lists_replace_across_sources, setup),
        cmocka_unit_test_setup(booleans, setup),
        cmocka_unit_test_setup(headed_needs_a_display, setup),
        cmocka_unit_test_setup(errors_name_their_source, setup),
        cmocka_unit_test_setup(instance_id, setup),
        cmocka_unit_test_setup(malformed_files_are_refused, setup),
        cmocka_unit_test_setup(tokens, setup),
        cmocka_unit_test_setup(unknown_variables_warn, setup),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(file);
    rmdir(dir);
    return rc;
}
