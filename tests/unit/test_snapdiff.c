/*
 * test_snapdiff.c - the line-level helpers behind bounded responses, diffs
 * and browser_find: cuts land on a line break and never inside a UTF-8
 * character, picked lines come with their ancestors, and a diff shows what
 * changed and which elements are gone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "worker.h"

static void cut_text_cuts_at_a_line_break(void **state)
{
    (void)state;
    const char *t = "- a\n- bb\n- ccc\n";
    assert_int_equal(cut_text(t, strlen(t), 100), strlen(t));
    assert_int_equal(cut_text(t, strlen(t), strlen(t)), strlen(t));
    assert_int_equal(cut_text(t, strlen(t), 10), 9); /* "- a\n- bb\n" */
    assert_int_equal(cut_text(t, strlen(t), 3), 3);  /* no break before: hard cut */
    assert_int_equal(cut_text(t, strlen(t), 0), 0);
}

static void cut_text_counts_characters_not_bytes(void **state)
{
    (void)state;
    const char *t = "\xc3\xa9\xc3\xa9\xc3\xa9"; /* three 2-byte characters, no break */
    assert_int_equal(utf8_chars(t, strlen(t)), 3);
    assert_int_equal(cut_text(t, strlen(t), 2), 4);
    assert_int_equal(cut_text(t, strlen(t), 3), 6);
    const char *e = "\xf0\x9f\x98\x80x"; /* a 4-byte character, then x */
    assert_int_equal(cut_text(e, strlen(e), 1), 4);
}

static void count_lines_counts_a_last_line_without_break(void **state)
{
    (void)state;
    assert_int_equal(count_lines(""), 0);
    assert_int_equal(count_lines("a"), 1);
    assert_int_equal(count_lines("a\n"), 1);
    assert_int_equal(count_lines("a\nb"), 2);
}

static const char page[] = "- main [ref=e1]:\n"
                           "  - heading \"Title\" [ref=e2]\n"
                           "  - list [ref=e3]:\n"
                           "    - listitem [ref=e4]: One\n"
                           "    - listitem [ref=e5]: Two\n"
                           "  - button \"Go\" [ref=e6]\n"
                           "- contentinfo [ref=e7]";

static void picked_lines_come_with_their_ancestors(void **state)
{
    (void)state;
    unsigned char keep[7] = {0, 0, 0, 0, 1, 0, 1};
    char *out = lines_with_ancestors(page, keep);
    assert_string_equal(out, "- main [ref=e1]:\n"
                             "  - list [ref=e3]:\n"
                             "    - listitem [ref=e5]: Two\n"
                             "- contentinfo [ref=e7]\n");
    free(out);
    unsigned char none[7] = {0};
    out = lines_with_ancestors(page, none);
    assert_string_equal(out, "");
    free(out);
}

static void diff_shows_changes_with_ancestors_and_gone_elements(void **state)
{
    (void)state;
    const char *cur = "- main [ref=e1]:\n"
                      "  - heading \"Title\" [ref=e2]\n"
                      "  - list [ref=e3]:\n"
                      "    - listitem [ref=e4]: One\n"
                      "    - listitem [ref=e5]: Two!\n"
                      "    - listitem [ref=e8]: Three\n"
                      "- contentinfo [ref=e7]";
    size_t changed, removed;
    char *gone;
    char *d = snapshot_diff(page, cur, &gone, &changed, &removed);
    assert_string_equal(d, "- main [ref=e1]:\n"
                           "  - list [ref=e3]:\n"
                           "    - listitem [ref=e5]: Two!\n"
                           "    - listitem [ref=e8]: Three\n");
    assert_int_equal(changed, 2);
    /* e5 changed (its ref lives on): not gone; the button is. */
    assert_string_equal(gone, "  - button \"Go\" [ref=e6]\n");
    assert_int_equal(removed, 2);
    free(d);
    free(gone);

    d = snapshot_diff(page, page, &gone, &changed, &removed);
    assert_string_equal(d, "");
    assert_string_equal(gone, "");
    assert_int_equal(changed + removed, 0);
    free(d);
    free(gone);
}

static void diff_reports_only_the_top_of_a_gone_subtree(void **state)
{
    (void)state;
    const char *cur = "- main [ref=e1]:\n"
                      "  - heading \"Title\" [ref=e2]\n"
                      "  - button \"Go\" [ref=e6]\n"
                      "- contentinfo [ref=e7]";
    size_t changed, removed;
    char *gone;
    char *d = snapshot_diff(page, cur, &gone, &changed, &removed);
    assert_string_equal(d, "");
    assert_string_equal(gone, "  - list [ref=e3]:\n");
    assert_int_equal(removed, 3);
    free(d);
    free(gone);
}

static void a_long_run_of_gone_siblings_is_counted(void **state)
{
    (void)state;
    /* A table's page of five rows replaced by the next: the first gone row
     * and a count; three gone list items (not more than GONE_RUN) each. */
    const char *prev = "- table [ref=e1]:\n"
                       "  - row [ref=e2]: Ada | 1\n  - row [ref=e3]: Bo | 2\n"
                       "  - row [ref=e4]: Cy | 3\n  - row [ref=e5]: Di | 4\n"
                       "  - row [ref=e6]: Ed | 5\n"
                       "- list [ref=e7]:\n"
                       "  - listitem [ref=e8]: x\n  - listitem [ref=e9]: y\n"
                       "  - listitem [ref=e10]: z\n";
    const char *cur = "- table [ref=e1]:\n  - row [ref=e11]: Fay | 6\n- list [ref=e7]\n";
    size_t changed, removed;
    char *gone;
    char *d = snapshot_diff(prev, cur, &gone, &changed, &removed);
    assert_string_equal(gone, "  - row [ref=e2]: Ada | 1\n  - text: … 4 more row gone\n"
                              "  - listitem [ref=e8]: x\n  - listitem [ref=e9]: y\n"
                              "  - listitem [ref=e10]: z\n");
    free(d);
    free(gone);
}

static void diff_counts_repeated_lines(void **state)
{
    (void)state;
    /* Lines without refs repeat; one more copy is one new line. */
    size_t changed, removed;
    char *gone;
    char *d =
        snapshot_diff("- a:\n  - text: x\n  - text: x",
                      "- a:\n  - text: x\n  - text: x\n  - text: x", &gone, &changed, &removed);
    assert_int_equal(changed, 1);
    assert_int_equal(removed, 0);
    assert_string_equal(d, "- a:\n  - text: x\n");
    free(d);
    free(gone);
}

/* Issue 37, item 2: a change in a long text's tail shows in the diff's
 * lean view, cut to the words around it, not hidden behind the head. */
static void diff_shows_a_change_in_a_long_texts_tail(void **state)
{
    (void)state;
    const char *head = "- paragraph [ref=e4]: Guess a number between one and ten, type it in the "
                       "box below and press Submit to see whether you are right. ";
    char prev[1000], cur[1000];
    snprintf(prev, sizeof prev,
             "- heading \"Guess\" [level=1] [ref=e2]\n%sGood luck!\n"
             "- button \"Submit\" [ref=e5]\n",
             head);
    snprintf(cur, sizeof cur,
             "- heading \"Guess\" [level=1] [ref=e2]\n%sThe number is higher "
             "than 4.\n- button \"Submit\" [ref=e5]\n",
             head);
    char *gone;
    size_t changed, removed;
    char *d = snapshot_diff(prev, cur, &gone, &changed, &removed);
    assert_int_equal(changed, 1);
    assert_non_null(strstr(d, "The number is higher than 4."));
    assert_non_null(strstr(d, "[ref=e4]: \xe2\x80\xa6")); /* cut before, and says so */
    char *lean = snapshot_lean(d, 1500, NULL);
    assert_non_null(strstr(lean, "The number is higher than 4."));
    free(lean);
    free(d);
    free(gone);
    /* A change in the head needs no window: the line is as it is. */
    snprintf(cur, sizeof cur,
             "- heading \"Guess\" [level=1] [ref=e2]\n- paragraph [ref=e4]: Pick "
             "a number between one and ten, type it in the box below and press Submit to see "
             "whether you are right. Good luck!\n- button \"Submit\" [ref=e5]\n");
    d = snapshot_diff(prev, cur, &gone, &changed, &removed);
    assert_non_null(strstr(d, "[ref=e4]: Pick a number"));
    free(d);
    free(gone);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(diff_shows_a_change_in_a_long_texts_tail),
        cmocka_unit_test(cut_text_cuts_at_a_line_break),
        cmocka_unit_test(cut_text_counts_characters_not_bytes),
        cmocka_unit_test(count_lines_counts_a_last_line_without_break),
        cmocka_unit_test(picked_lines_come_with_their_ancestors),
        cmocka_unit_test(diff_shows_changes_with_ancestors_and_gone_elements),
        cmocka_unit_test(diff_reports_only_the_top_of_a_gone_subtree),
        cmocka_unit_test(a_long_run_of_gone_siblings_is_counted),
        cmocka_unit_test(diff_counts_repeated_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
