/* config_file.h - settings from the environment and from a JSON file.
 *
 * Both give at most one text value per option (options.h); config_parse()
 * hands it to the option's setter as it would a flag's argument. */
#ifndef TABVISOR_CONFIG_FILE_H
#define TABVISOR_CONFIG_FILE_H

#include <stddef.h>

/* Read the JSON object in path into vals[options_count]: vals[i] is a
 * malloc'd string (owned by the caller, free() each) for each key given,
 * NULL for the others. Values become text: numbers in decimal, booleans
 * true/false, arrays of strings joined with ','; null counts as not given.
 * `from` names where the path came from (--config or TABVISOR_CONFIG).
 * Returns 0, or -1 after printing why (with the line and column of bad
 * JSON, the key that is unknown or of the wrong type). Warns when the file
 * holds a token and other users may read it. */
int config_file_load(const char *path, const char *from, char **vals);
/* vals[i] = the value of option i's environment variable, NULL when it is
 * unset or empty (pointers into the environment). */
void config_env_collect(const char **vals);
/* Warn, once, about TABVISOR_* variables that name no option (they may be
 * for another version of tabvisor, so this is not an error). */
void config_env_warn_unknown(void);
/* The option key (env: variable name) closest to word, for "did you mean";
 * NULL when nothing is close. Points into a static buffer. */
const char *config_suggest(const char *word, int env);

#endif
