/* config_file.c - the JSON config file and TABVISOR_* environment variables
 * (config_file.h). The file is the operator's own local input: it is
 * checked strictly (unknown keys and wrong types are errors) so that a
 * typo cannot silently leave a default in place. */
#include "config_file.h"
#include "log.h"
#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

/* Edit distance of a and b ignoring case, capped: anything above 9 is 9. */
static size_t distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return 9;
    size_t row[64];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            size_t best = diag + cost;
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb] > 9 ? 9 : row[lb];
}

const char *config_suggest(const char *word, int env)
{
    static char best[64];
    size_t best_d = 9;
    /* Up to 2 edits, 3 for long names: close enough to be a typo. */
    size_t limit = strlen(word) > 12 ? 3 : 2;
    for (size_t i = 0; i < options_count; i++) {
        char name[64], flag[64];
        if (env)
            opt_env_name(&options[i], name, sizeof name);
        else
            opt_key_name(&options[i], name, sizeof name);
        if (!*name)
            continue;
        size_t d = distance(word, name);
        /* A file key written as the flag ("max-sessions") is a typo too. */
        snprintf(flag, sizeof flag, "%s", options[i].name);
        if (!env && distance(word, flag) == 0)
            d = 0;
        if (d < best_d) {
            best_d = d;
            snprintf(best, sizeof best, "%s", name);
        }
    }
    return best_d <= limit ? best : NULL;
}

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    default:
        return "null";
    }
}

/* An array of strings as one comma-separated string; NULL (message
 * printed) if an item is not a string or holds a separator. */
static char *join_list(const json_t *arr, const char *path, const char *key)
{
    size_t len = 1, i;
    json_t *item;
    json_array_foreach(arr, i, item)
    {
        const char *s = json_string_value(item);
        if (!s) {
            fprintf(stderr, "tabvisor: %s: %s[%zu] must be a string, not %s\n", path, key, i,
                    type_name(item));
            return NULL;
        }
        if (strpbrk(s, ",;")) {
            fprintf(stderr, "tabvisor: %s: %s[%zu] '%s' holds ',' or ';' (one item per string)\n",
                    path, key, i, s);
            return NULL;
        }
        len += strlen(s) + 1;
    }
    char *out = malloc(len);
    if (!out)
        return NULL;
    size_t n = 0;
    json_array_foreach(arr, i, item)
    {
        n += (size_t)sprintf(out + n, "%s%s", i ? "," : "", json_string_value(item));
    }
    out[n] = 0;
    return out;
}

/* The text of v for option o, or NULL (message printed) for a wrong type. */
static char *value_text(const struct opt_def *o, const json_t *v, const char *path, const char *key)
{
    const char *want = "a string";
    switch (o->kind) {
    case OPT_BOOL:
        if (json_is_boolean(v))
            return strdup(json_is_true(v) ? "true" : "false");
        want = "true or false";
        break;
    case OPT_INT:
        if (json_is_integer(v)) {
            char num[32];
            snprintf(num, sizeof num, "%lld", (long long)json_integer_value(v));
            return strdup(num);
        }
        want = json_is_real(v) ? "a whole number" : "a number";
        break;
    case OPT_LIST:
        if (json_is_array(v))
            return join_list(v, path, key);
        want = "a string or an array of strings";
        /* fall through */
    default:
        if (json_is_string(v))
            return strdup(json_string_value(v));
    }
    if (json_is_real(v) && o->kind == OPT_INT)
        fprintf(stderr, "tabvisor: %s: %s must be a whole number, not %g\n", path, key,
                json_real_value(v));
    else
        fprintf(stderr, "tabvisor: %s: %s must be %s, not %s\n", path, key, want, type_name(v));
    return NULL;
}

/* The option whose config key is key (SCOPE_ALL only). */
static const struct opt_def *by_key(const char *key, size_t *index)
{
    for (size_t i = 0; i < options_count; i++) {
        char k[64];
        opt_key_name(&options[i], k, sizeof k);
        if (*k && strcmp(k, key) == 0) {
            *index = i;
            return &options[i];
        }
    }
    return NULL;
}

int config_file_load(const char *path, const char *from, char **vals)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    const char *why = NULL;
    if (fd < 0 || fstat(fd, &st) < 0)
        why = strerror(errno);
    else if (!S_ISREG(st.st_mode))
        why = "not a regular file";
    if (why) {
        fprintf(stderr, "tabvisor: %s %s: %s\n", from, path, why);
        if (fd >= 0)
            close(fd);
        return -1;
    }
    json_error_t err;
    json_t *root = json_loadfd(fd, JSON_REJECT_DUPLICATES, &err);
    close(fd);
    if (!root) {
        fprintf(stderr, "tabvisor: %s:%d:%d: %s\n", path, err.line, err.column, err.text);
        return -1;
    }
    int rc = -1;
    if (!json_is_object(root)) {
        fprintf(stderr,
                "tabvisor: %s: must hold a JSON object ({\"maxSessions\": 4, ...}), not %s\n", path,
                type_name(root));
        goto out;
    }
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v)
    {
        size_t i;
        const struct opt_def *o = by_key(key, &i);
        if (!o) {
            const char *near = config_suggest(key, 0);
            fprintf(stderr, "tabvisor: %s: unknown key \"%s\"", path, key);
            if (near)
                fprintf(stderr, " (did you mean %s?)", near);
            fprintf(stderr, "; see tabvisor --help\n");
            goto out;
        }
        if (json_is_null(v))
            continue;
        char *text = value_text(o, v, path, key);
        if (!text)
            goto out;
        vals[i] = text;
        if (strcmp(o->name, "auth-token") == 0 && (st.st_mode & 077))
            log_warn("%s holds authToken and can be read by other users (mode %03o); chmod 600 it",
                     path, (unsigned)(st.st_mode & 0777));
    }
    rc = 0;
out:
    if (rc < 0) {
        for (size_t i = 0; i < options_count; i++) {
            free(vals[i]);
            vals[i] = NULL;
        }
    }
    json_decref(root);
    return rc;
}

void config_env_collect(const char **vals)
{
    for (size_t i = 0; i < options_count; i++) {
        char name[64];
        opt_env_name(&options[i], name, sizeof name);
        const char *v = *name ? getenv(name) : NULL;
        vals[i] = v && *v ? v : NULL;
    }
}

void config_env_warn_unknown(void)
{
    char list[1024];
    size_t n = 0;
    list[0] = 0;
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "TABVISOR_", 9) != 0)
            continue;
        size_t len = strcspn(*e, "=");
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)len, *e);
        bool known = false;
        for (size_t i = 0; i < options_count && !known; i++) {
            char env[64];
            opt_env_name(&options[i], env, sizeof env);
            known = *env && strcmp(env, name) == 0;
        }
        if (known || n + 1 >= sizeof list)
            continue;
        const char *near = config_suggest(name, 1);
        n += (size_t)snprintf(list + n, sizeof list - n, "%s%s%s%s%s", n ? ", " : "", name,
                              near ? " (did you mean " : "", near ? near : "", near ? "?)" : "");
        if (n >= sizeof list)
            n = sizeof list - 1;
    }
    if (n)
        log_warn("ignoring %s: not settings of this tabvisor (see tabvisor --help)", list);
}
