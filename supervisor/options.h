/* options.h - the one table of tabvisor's settings.
 *
 * Every setting is one row: its command-line flag, how its value is read,
 * its bounds, its help text and the setter that checks and stores it. The
 * environment variable (TABVISOR_<FLAG_IN_UPPER_SNAKE>) and the config file
 * key (the flag in camelCase) are derived from the flag's name, so the
 * getopt_long array, the environment, the JSON file and --help cannot
 * disagree about which settings exist. */
#ifndef TABVISOR_OPTIONS_H
#define TABVISOR_OPTIONS_H

#include <stddef.h>
#include <stdio.h>
#include "config.h"

/* How a value is written: decides getopt's has_arg, the JSON type a config
 * file must use and how the environment's text is read. */
enum opt_kind {
    OPT_BOOL,   /* flag without argument; env true|false|1|0; JSON true/false */
    OPT_INT,    /* whole number in lo..hi; JSON number */
    OPT_STR,    /* text; JSON string */
    OPT_LIST,   /* comma-separated text; JSON string or array of strings */
    OPT_ACTION, /* --help, --version: command line only */
};

/* Where an option may be given besides the command line. */
enum opt_scope {
    SCOPE_ALL,      /* flag, environment and config file */
    SCOPE_NO_FILE,  /* flag and environment (--config itself) */
    SCOPE_CLI_ONLY, /* flag only */
};

/* Where a value came from, in increasing precedence. */
enum opt_source { SRC_NONE, SRC_FILE, SRC_ENV, SRC_CLI };

/* The source of one value, for setters' error messages. name is how the
 * user wrote the setting there: "--max-sessions", "TABVISOR_MAX_SESSIONS"
 * or "FILE: maxSessions". */
struct opt_src {
    enum opt_source kind;
    const char *file; /* the config file's path (SRC_FILE) */
    char name[PATH_MAX + 64];
};

struct opt_def;
/* Check value (NULL for an OPT_BOOL flag on the command line: true) and
 * store it in c. Returns 0, or -1 after printing "tabvisor: NAME ..." to
 * stderr. value must outlive c (config keeps pointers to some values). */
typedef int (*opt_setter)(struct config *c, const struct opt_def *o, const char *value,
                          const struct opt_src *src);

struct opt_def {
    const char *name; /* flag without "--" */
    const char *arg;  /* metavariable in --help; NULL for OPT_BOOL/OPT_ACTION */
    enum opt_kind kind;
    enum opt_scope scope;
    /* Options sharing a nonzero group are one setting written two ways
     * (--auth-token/--auth-token-file, --browser-mode/--extension): the
     * highest source giving any of them wins for all of them. */
    unsigned char group;
    long long lo, hi; /* OPT_INT bounds */
    long long scale;  /* OPT_INT stored as value * scale (seconds -> ms); 0 means 1 */
    size_t off;       /* offsetof(struct config, field) for the generic setters */
    size_t size;      /* sizeof that field (char arrays) */
    const char *help; /* lines separated by '\n', without indentation */
    opt_setter set;
};

/* Room for options in config.c's per-option arrays (checked at build). */
#define OPTIONS_MAX 64

extern const struct opt_def options[];
extern const size_t options_count;

/* "max-sessions" -> "TABVISOR_MAX_SESSIONS"; "" for SCOPE_CLI_ONLY. */
void opt_env_name(const struct opt_def *o, char *out, size_t len);
/* "max-sessions" -> "maxSessions"; "" unless SCOPE_ALL. */
void opt_key_name(const struct opt_def *o, char *out, size_t len);
/* Fill src->name for o given in src->kind (and src->file). */
void opt_src_name(struct opt_src *src, const struct opt_def *o);
/* The option whose flag name is name, or NULL. */
const struct opt_def *opt_by_name(const char *name);
/* Parse an environment boolean: true|false|1|0 (any case). 0/1, or -1. */
int opt_parse_bool(const char *s);
/* Print --help: every option with its environment variable and key. */
void options_usage(FILE *f);

#endif
