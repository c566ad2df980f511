/*
 * test_snaplean.c - the lean view an action's response carries by default
 * (worker/snaplean.c): /url lines go, long texts are cut without breaking a
 * quote, an escape or a UTF-8 character, long runs keep their first items and
 * say how many more there are and where, big regions fold to fit a budget,
 * and names and refs are never cut.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "worker.h"

static char *lean(const char *text, size_t budget, size_t *elided)
{
    return snapshot_lean(text, budget, elided);
}

static void url_lines_go_and_a_bare_link_loses_its_colon(void **state)
{
    (void)state;
    size_t out = 99;
    char *v = lean("- link \"Home\" [ref=e1]:\n  - /url: /index.html\n"
                   "- link \"Logo\" [ref=e2]:\n  - /url: /\n  - img \"Company\" [ref=e3]\n",
                   0, &out);
    assert_string_equal(v, "- link \"Home\" [ref=e1]\n"
                           "- link \"Logo\" [ref=e2]:\n  - img \"Company\" [ref=e3]\n");
    assert_int_equal(out, 0);
    free(v);
}

static void a_long_text_is_cut_at_a_word_break(void **state)
{
    (void)state;
    char line[400];
    snprintf(line, sizeof line, "- paragraph [ref=e1]: %s\n",
             "one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
             "fifteen sixteen seventeen eighteen");
    char *v = lean(line, 0, NULL);
    assert_string_equal(v, "- paragraph [ref=e1]: one two three four five six seven eight nine ten "
                           "eleven twelve thirteen…\n");
    free(v);
    /* A quoted text keeps its closing quote; a colon inside the name is not
     * where the text starts. */
    v = lean("- text: \"aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm nnnn oooo "
             "pppp qqqq rrrr\"\n- button \"a: b\" [ref=e2]\n",
             0, NULL);
    assert_string_equal(v, "- text: \"aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll "
                           "mmmm nnnn oooo pppp…\"\n- button \"a: b\" [ref=e2]\n");
    free(v);
}

static void a_cut_never_splits_an_escape_or_a_character(void **state)
{
    (void)state;
    /* 79 x's then an escaped quote: a cut at 80 characters would end on the
     * backslash. */
    char text[300], want[300];
    snprintf(text, sizeof text, "- text: \"%s\\\"%s\"\n",
             "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
             "yyyyyyyyyyyyyyyyyyyy");
    snprintf(want, sizeof want, "- text: \"%s…\"\n",
             "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
    char *v = lean(text, 0, NULL);
    assert_string_equal(v, want);
    free(v);
    /* 100 two-byte characters: kept whole characters only. */
    char wide[400] = "- text: ";
    for (int i = 0; i < 100; i++)
        strcat(wide, "\xc3\xa9");
    strcat(wide, "\n");
    v = lean(wide, 0, NULL);
    assert_int_equal(utf8_chars(v, strlen(v)), strlen("- text: ") + 80 + 1 + 1);
    free(v);
}

static void a_text_that_holds_refs_is_kept_whole(void **state)
{
    (void)state;
    const char *row = "- row [ref=e1]: 1001 | a rather long customer name that goes on and on | "
                      "an address that is also long, really | button \"Pay\" [ref=e9]\n";
    char *v = lean(row, 0, NULL);
    assert_string_equal(v, row);
    free(v);
}

static void a_long_run_keeps_its_first_items_and_says_where_the_rest_are(void **state)
{
    (void)state;
    char text[4000] = "- list \"Results\" [ref=e1]:\n";
    for (int i = 1; i <= 12; i++) {
        char line[100];
        snprintf(line, sizeof line, "  - listitem [ref=e%d]:\n    - link \"Result %d\" [ref=e%d]\n",
                 100 + i, i, 200 + i);
        strcat(text, line);
    }
    strcat(text, "  - button \"More\" [ref=e3]\n- heading \"After\" [level=2] [ref=e4]\n");
    size_t out = 0;
    char *v = lean(text, 0, &out);
    assert_int_equal(out, 7);
    assert_non_null(strstr(v, "- link \"Result 5\" [ref=e205]\n"
                              "  - text: … 7 more listitem: browser_snapshot target=e1 shows them\n"
                              "  - button \"More\" [ref=e3]\n"
                              "- heading \"After\" [level=2] [ref=e4]\n"));
    assert_null(strstr(v, "Result 6"));
    free(v);
    /* A run of controls (a toolbar's buttons) is the choice itself: kept. */
    char bar[2000] = "- toolbar [ref=e1]:\n";
    for (int i = 1; i <= 15; i++) {
        char line[80];
        snprintf(line, sizeof line, "  - button \"B%d\" [ref=e%d]\n", i, 10 + i);
        strcat(bar, line);
    }
    v = lean(bar, 0, NULL);
    assert_string_equal(v, bar);
    free(v);
    /* Top-level runs have no holder with a ref: browser_find reads them. */
    char top[2000] = "";
    for (int i = 1; i <= 11; i++) {
        char line[80];
        snprintf(line, sizeof line, "- paragraph [ref=e%d]: p%d\n", i, i);
        strcat(top, line);
    }
    v = lean(top, 0, NULL);
    assert_non_null(strstr(v, "- paragraph [ref=e5]: p5\n- text: … 6 more paragraph: browser_find "
                              "shows them\n"));
    free(v);
}

static void over_its_budget_a_view_folds_side_then_nested_collections(void **state)
{
    (void)state;
    /* A page: a side navigation list, and a main list whose items hold
     * lists. The side list folds first, the nested lists before the main
     * list. */
    char text[20000] = "- navigation \"Side\" [ref=e1]:\n  - list [ref=e2]:\n";
    for (int i = 1; i <= 8; i++) {
        char line[120];
        snprintf(line, sizeof line,
                 "    - listitem [ref=e%d]:\n      - link \"Side link %d\" [ref=e%d]\n", 10 + i, i,
                 30 + i);
        strcat(text, line);
    }
    strcat(text, "- main [ref=e3]:\n  - list [ref=e4]:\n");
    for (int i = 1; i <= 4; i++) {
        char line[200];
        snprintf(line, sizeof line,
                 "    - listitem [ref=e%d]:\n      - link \"Chapter %d\" [ref=e%d]\n"
                 "      - list [ref=e%d]:\n",
                 100 + i, i, 200 + i, 300 + i);
        strcat(text, line);
        for (int k = 1; k <= 6; k++) {
            snprintf(
                line, sizeof line,
                "        - listitem [ref=e%d]:\n          - link \"Section %d.%d\" [ref=e%d]\n",
                1000 + i * 10 + k, i, k, 2000 + i * 10 + k);
            strcat(text, line);
        }
    }
    char *whole = lean(text, 0, NULL);
    size_t out = 0;
    char *v = lean(text, 900, &out);
    assert_true(strlen(v) < strlen(whole));
    assert_true(strlen(v) <= 900 + 900 / 4);
    /* The side navigation folds first; the chapters stay, their sections
     * fold, each saying how to read them. */
    assert_non_null(strstr(v, "  - list [ref=e2]:\n    - text: … 16 elements folded: "
                              "browser_snapshot target=e2 shows them\n"));
    for (int i = 1; i <= 4; i++) {
        char want[200];
        snprintf(want, sizeof want,
                 "    - listitem [ref=e%d]:\n      - link \"Chapter %d\" [ref=e%d]\n"
                 "      - list [ref=e%d]:\n"
                 "        - text: … 12 elements folded: browser_snapshot target=e%d shows them\n",
                 100 + i, i, 200 + i, 300 + i, 300 + i);
        assert_non_null(strstr(v, want));
    }
    assert_int_equal(out, 16 + 4 * 12);
    free(v);
    /* Under a budget it already fits, nothing folds. */
    v = lean(text, 100000, NULL);
    assert_string_equal(v, whole);
    free(v);
    free(whole);
}

static void a_child_that_repeats_its_parents_name_goes(void **state)
{
    (void)state;
    size_t out = 0;
    /* The image of a link named for it and a text the heading's name holds
     * go; an image with a name of its own and an interactive child stay. */
    char *v =
        lean("- link \"Fork me on GitHub\" [ref=e1]:\n  - img \"Fork me on GitHub\" [ref=e2]\n"
             "- heading \"Drag and drop Join us\" [level=3] [ref=e3]:\n"
             "  - text: Drag and drop\n  - link \"Join us\" [ref=e4]\n"
             "- link \"Home\" [ref=e5]:\n  - img \"House\" [ref=e6]\n",
             0, &out);
    assert_string_equal(v, "- link \"Fork me on GitHub\" [ref=e1]\n"
                           "- heading \"Drag and drop Join us\" [level=3] [ref=e3]:\n"
                           "  - link \"Join us\" [ref=e4]\n"
                           "- link \"Home\" [ref=e5]:\n  - img \"House\" [ref=e6]\n");
    assert_int_equal(out, 1); /* the image had a ref; the text had none */
    free(v);
    /* A quoted text compares without its quotes. */
    v = lean("- button \"Value: 5\" [ref=e1]:\n  - text: \"Value: 5\"\n", 0, NULL);
    assert_string_equal(v, "- button \"Value: 5\" [ref=e1]\n");
    free(v);
}

static void separators_alone_go_and_words_stay(void **state)
{
    (void)state;
    char *v = lean("- link \"A\" [ref=e1]\n- text: \u2022\n- link \"B\" [ref=e2]\n- text: \" | \"\n"
                   "- link \"C\" [ref=e3]\n- text: .\n- text: \u2014 or \u2014\n- text: \u00a9\n"
                   "- text: \u662f\n",
                   0, NULL);
    assert_string_equal(v, "- link \"A\" [ref=e1]\n- link \"B\" [ref=e2]\n- link \"C\" [ref=e3]\n"
                           "- text: \u2014 or \u2014\n- text: \u00a9\n- text: \u662f\n");
    free(v);
}

static void empty_placeholders_go_and_filled_ones_stay(void **state)
{
    (void)state;
    /* A widget's empty message areas and an empty list item say nothing; the
     * same roles with a name, a text, a state or children stay, and so does
     * any other role (a clickable generic, an empty cell). */
    char *v = lean("- status [ref=e1]\n- log [ref=e2]\n- alert [ref=e3]\n- listitem [ref=e4]\n"
                   "- paragraph [ref=e5]\n- status [ref=e6]: 3 results\n- status \"Saved\" [ref=e7]\n"
                   "- listitem [selected] [ref=e8]\n- generic [ref=e9]\n- cell [ref=e10]\n"
                   "- status [ref=e11]:\n  - link \"Undo\" [ref=e12]\n",
                   0, NULL);
    assert_string_equal(v, "- status [ref=e6]: 3 results\n- status \"Saved\" [ref=e7]\n"
                           "- listitem [selected] [ref=e8]\n- generic [ref=e9]\n- cell [ref=e10]\n"
                           "- status [ref=e11]:\n  - link \"Undo\" [ref=e12]\n");
    free(v);
}

static void a_bare_wrapper_of_one_element_is_unwrapped(void **state)
{
    (void)state;
    /* Items that only wrap a link: the links move up a level. An item with
     * text, a name, two children or a state stays; so does what is under a
     * moved element, moved with it. */
    char *v =
        lean("- list [ref=e1]:\n"
             "  - listitem [ref=e2]:\n    - link \"One\" [ref=e3]:\n      - /url: /1\n"
             "  - listitem [ref=e4]: Two\n"
             "  - listitem \"Three\" [ref=e5]:\n    - link \"3\" [ref=e6]\n"
             "  - listitem [ref=e7]:\n    - link \"Four\" [ref=e8]\n    - link \"4\" [ref=e9]\n"
             "  - listitem [ref=e10]:\n    - list [ref=e11]:\n"
             "      - listitem [ref=e12]:\n        - checkbox \"Five\" [ref=e13]\n"
             "  - listitem [selected] [ref=e14]:\n    - link \"Six\" [ref=e15]\n"
             "- paragraph [ref=e16]:\n  - button \"Go\" [ref=e17]\n",
             0, NULL);
    assert_string_equal(v, "- list [ref=e1]:\n"
                           "  - link \"One\" [ref=e3]\n"
                           "  - listitem [ref=e4]: Two\n"
                           "  - listitem \"Three\" [ref=e5]:\n    - link \"3\" [ref=e6]\n"
                           "  - listitem [ref=e7]:\n    - link \"Four\" [ref=e8]\n"
                           "    - link \"4\" [ref=e9]\n"
                           "  - list [ref=e11]:\n    - checkbox \"Five\" [ref=e13]\n"
                           "  - listitem [selected] [ref=e14]:\n    - link \"Six\" [ref=e15]\n"
                           "- button \"Go\" [ref=e17]\n");
    free(v);
    /* A run's note under unwrapped items takes their place's indentation. */
    char text[4000] = "- list [ref=e1]:\n";
    for (int i = 1; i <= 12; i++) {
        char line[100];
        snprintf(line, sizeof line, "  - listitem [ref=e%d]:\n    - link \"R%d\" [ref=e%d]\n",
                 100 + i, i, 200 + i);
        strcat(text, line);
    }
    v = lean(text, 0, NULL);
    assert_string_equal(v, "- list [ref=e1]:\n  - link \"R1\" [ref=e201]\n"
                           "  - link \"R2\" [ref=e202]\n  - link \"R3\" [ref=e203]\n"
                           "  - link \"R4\" [ref=e204]\n  - link \"R5\" [ref=e205]\n"
                           "  - text: … 7 more listitem: browser_snapshot target=e1 shows them\n");
    free(v);
}

/* browser_find's line: what lean_line_around appends for s with a match
 * at the first occurrence of what (or at -1 when what is NULL). */
static char *around(const char *s, const char *what, bool *cut)
{
    struct sb b = {0};
    const char *m = what ? strstr(s, what) : NULL;
    *cut = lean_line_around(s, strlen(s), m ? (long)(m - s) : -1, what ? strlen(what) : 0, &b);
    return b.p;
}

static void find_cuts_a_long_text_around_its_match(void **state)
{
    (void)state;
    bool cut;
    char long_text[600] = "- paragraph [ref=e4]: ";
    for (int i = 0; i < 30; i++)
        strcat(long_text, i == 20 ? "the needle sits here " : "some words ");
    char *v = around(long_text, "needle", &cut);
    assert_true(cut);
    assert_non_null(strstr(v, "- paragraph [ref=e4]: …"));
    assert_non_null(strstr(v, "the needle sits here"));
    assert_string_equal(v + strlen(v) - strlen("some…"), "some…"); /* at a word break */
    assert_true(strlen(v) < 140);
    free(v);

    /* The match in the head (a name) or not known: the text's start stays. */
    v = around(long_text, NULL, &cut);
    assert_true(cut);
    assert_non_null(strstr(v, "- paragraph [ref=e4]: some words"));
    assert_null(strstr(v, "needle"));
    free(v);

    /* A quoted text keeps its quotes; a cut never leaves half an escape. */
    char quoted[700] = "- text: \"";
    for (int i = 0; i < 30; i++)
        strcat(quoted, i == 15 ? "say \\\"needle\\\" " : "a: b \\\\ ");
    strcat(quoted, "\"");
    v = around(quoted, "needle", &cut);
    assert_true(cut);
    assert_non_null(strstr(v, "- text: \"…"));
    assert_non_null(strstr(v, "needle"));
    size_t n = strlen(v);
    assert_string_equal(v + n - strlen("…\""), "…\"");
    for (const char *p = v; (p = strstr(p, "\\…")); p++) {
        size_t slashes = 0;
        for (const char *q = p; q >= v && *q == '\\'; q--)
            slashes++;
        assert_int_equal(slashes % 2, 0);
    }
    free(v);

    /* Short texts, a row's refs, lines without a text: as they are. */
    const char *same[] = {
        "- paragraph [ref=e1]: a short needle",
        "- row \"a b\" [ref=e2]: cell [ref=e3] needle cell [ref=e4] "
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "- button \"needle\" [ref=e5]", ""};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        v = around(same[i], "needle", &cut);
        assert_false(cut);
        assert_string_equal(v ? v : "", same[i]);
        free(v);
    }
}

static void empty_and_odd_input(void **state)
{
    (void)state;
    char *v = lean("", 100, NULL);
    assert_string_equal(v, "");
    free(v);
    v = lean("no dash here\n  - text: x\n", 10, NULL);
    assert_string_equal(v, "no dash here\n  - text: x\n");
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(url_lines_go_and_a_bare_link_loses_its_colon),
        cmocka_unit_test(a_long_text_is_cut_at_a_word_break),
        cmocka_unit_test(a_cut_never_splits_an_escape_or_a_character),
        cmocka_unit_test(a_text_that_holds_refs_is_kept_whole),
        cmocka_unit_test(a_long_run_keeps_its_first_items_and_says_where_the_rest_are),
        cmocka_unit_test(over_its_budget_a_view_folds_side_then_nested_collections),
        cmocka_unit_test(a_child_that_repeats_its_parents_name_goes),
        cmocka_unit_test(separators_alone_go_and_words_stay),
        cmocka_unit_test(empty_placeholders_go_and_filled_ones_stay),
        cmocka_unit_test(a_bare_wrapper_of_one_element_is_unwrapped),
        cmocka_unit_test(find_cuts_a_long_text_around_its_match),
        cmocka_unit_test(empty_and_odd_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
