/*
 * docs_md.c - tv-docs-md: the README's tools and options sections, generated
 * from the tool catalog (proto/catalog*.c) and the options table
 * (supervisor/options.c), so the README cannot drift from what the server
 * offers and accepts. scripts/docs.sh splices the output into README.md
 * between its markers; the test docs.generated fails when they differ.
 *
 *   tv-docs-md tools     one table: tool, its capability group (--caps),
 *                        its parameters but sessionId and timeout (every
 *                        tool's, described once beside the table), what it
 *                        does
 *   tv-docs-md options   one table: flag, what it sets, its environment
 *                        variable and config file key
 *
 * Markdown only: every text comes from the tables, none is written here but
 * the headings of the columns.
 */
#include <stdio.h>
#include <string.h>

#include "catalog.h"
#include "options.h"

/* A table cell: a '|' would end the cell, a newline the row, and a '<' start
 * an HTML tag (`<select>` would vanish from the rendered page). */
static void cell(const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", stdout);
        else if (*s == '<')
            fputs("&lt;", stdout);
        else if (*s == '\n')
            fputc(' ', stdout);
        else
            fputc(*s, stdout);
    }
}

static void tool_row(const struct tool_def *t)
{
    printf("| `%s` | %s | ", t->name, catalog_cap_name(t->cap));
    bool first = true;
    for (const struct tool_param *p = t->params; p && p->name; p++) {
        /* sessionId and timeout: every browser tool's, said once beside the
         * table; aliases: accepted, not offered. */
        bool everyones = strcmp(p->name, "sessionId") == 0 || strcmp(p->name, "timeout") == 0;
        if (p->hidden || (everyones && !p->required))
            continue;
        printf("%s`%s`%s", first ? "" : ", ", p->name, p->required ? "*" : "");
        first = false;
    }
    fputs(" | ", stdout);
    cell(t->description);
    fputs(" |\n", stdout);
}

/* One table, the core tools first, then each group in --caps order. */
static void tools_md(void)
{
    puts("| tool | group | its parameters (* required) | what it does |\n|---|---|---|---|");
    for (int cap = CAP_CORE; cap < CAP_COUNT; cap++) {
        for (size_t i = 0; i < catalog_count(); i++) {
            const struct tool_def *t = catalog_at(i);
            if ((int)t->cap == cap)
                tool_row(t);
        }
    }
}

static void options_md(void)
{
    puts("| option | what it sets | environment, config key |\n|---|---|---|");
    for (size_t i = 0; i < options_count; i++) {
        const struct opt_def *o = &options[i];
        char env[64], key[64];
        opt_env_name(o, env, sizeof env);
        opt_key_name(o, key, sizeof key);
        printf("| `--%s%s%s` | ", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        cell(o->help);
        if (*env)
            printf(" | `%s`%s%s%s |\n", env, *key ? ", `" : "", key, *key ? "`" : "");
        else
            puts(" | |");
    }
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "tools") == 0)
        tools_md();
    else if (argc == 2 && strcmp(argv[1], "options") == 0)
        options_md();
    else {
        fputs("usage: tv-docs-md tools|options\n", stderr);
        return 2;
    }
    return ferror(stdout) ? 1 : 0;
}
