/*
 * fuzz_catalog.c - the catalog's argument validation (catalog_validate).
 *
 * The input is JSON text (NUL allowed inside strings, as the supervisor
 * parses it); whatever jansson parses is validated as the arguments of every
 * tool. Checks, per tool:
 *  - no crash, and no overrun of the error buffer (heap-allocated at its
 *    exact size, 1, 24 and 256 bytes, so ASan sees one byte past it);
 *  - a failure says why and leaves the arguments untouched;
 *  - a success changes nothing but whole-number reals given for integer
 *    parameters (now integers), and validating again succeeds;
 *  - the verdict agrees with the tool's published inputSchema, checked here
 *    by a small independent JSON Schema reader (type, enum, minLength and
 *    maxLength in characters, minimum, maximum, items, maxItems, required,
 *    additionalProperties false): what a client is told is what is enforced.
 *
 * Strings with NUL inside: catalog_validate refuses every one (a rule the
 * schema cannot say: C code downstream would cut the string at the NUL, so
 * "load\0x" would pass for "load"). Such arguments must fail validation;
 * the schema agreement is checked on the rest.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"

static json_t **schemas; /* inputSchema of catalog_at(i) */

static void check(int ok, const char *tool, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_catalog: %s: %s\n", tool, what);
        abort();
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    schemas = calloc(catalog_count(), sizeof *schemas);
    for (size_t i = 0; i < catalog_count(); i++) {
        json_t *tool = catalog_tool_json(catalog_at(i), true);
        schemas[i] = json_incref(json_object_get(tool, "inputSchema"));
        json_decref(tool);
        /* No arguments at all: fine exactly when nothing is required. */
        char err[256] = "";
        int rc = catalog_validate(catalog_at(i), NULL, err, sizeof err);
        check((rc == 0) == (json_array_size(json_object_get(schemas[i], "required")) == 0),
              catalog_at(i)->name, "verdict on no arguments disagrees with 'required'");
    }
    return 0;
}

/* Code points in valid UTF-8 (jansson only hands out valid UTF-8). */
static size_t chars(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

static int has_nul(const json_t *v)
{
    if (json_is_string(v))
        return strlen(json_string_value(v)) != json_string_length(v);
    const char *key;
    json_t *m;
    size_t i;
    if (json_is_object(v)) {
        json_object_foreach((json_t *)v, key, m) if (has_nul(m)) return 1;
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, m) if (has_nul(m)) return 1;
    }
    return 0;
}

static int schema_type_ok(const char *type, const json_t *v)
{
    if (strcmp(type, "string") == 0)
        return json_is_string(v);
    if (strcmp(type, "integer") == 0)
        /* JSON Schema counts 5.0 as an integer. The catalog also wants it to
         * fit a double exactly (below 2^53), so it converts losslessly. */
        return json_is_integer(v) ||
               (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)) &&
                fabs(json_real_value(v)) < 9007199254740992.0);
    if (strcmp(type, "number") == 0)
        return json_is_number(v);
    if (strcmp(type, "boolean") == 0)
        return json_is_boolean(v);
    if (strcmp(type, "array") == 0)
        return json_is_array(v);
    if (strcmp(type, "object") == 0)
        return json_is_object(v);
    return 0;
}

/* Does v satisfy the property schema s? */
static int schema_value_ok(const json_t *s, const json_t *v)
{
    if (!schema_type_ok(json_string_value(json_object_get(s, "type")), v))
        return 0;
    json_t *e = json_object_get(s, "enum"), *x;
    if (e) {
        size_t i;
        int found = 0;
        json_array_foreach(e, i, x) found |= json_equal(x, v); /* length-aware */
        if (!found)
            return 0;
    }
    if (json_is_string(v)) {
        size_t n = chars(json_string_value(v), json_string_length(v));
        if ((x = json_object_get(s, "minLength")) && n < (size_t)json_integer_value(x))
            return 0;
        if ((x = json_object_get(s, "maxLength")) && n > (size_t)json_integer_value(x))
            return 0;
    }
    if (json_is_number(v)) {
        double d = json_number_value(v);
        if ((x = json_object_get(s, "minimum")) && d < json_number_value(x))
            return 0;
        if ((x = json_object_get(s, "maximum")) && d > json_number_value(x))
            return 0;
    }
    if (json_is_array(v)) {
        if ((x = json_object_get(s, "maxItems")) &&
            json_array_size(v) > (size_t)json_integer_value(x))
            return 0;
        json_t *items = json_object_get(s, "items"), *item;
        size_t i;
        json_array_foreach(v, i, item) if (items && !schema_value_ok(items, item)) return 0;
    }
    return 1;
}

static int schema_ok(const json_t *schema, const json_t *args)
{
    if (!json_is_object(args))
        return 0;
    json_t *props = json_object_get(schema, "properties"), *v, *r;
    const char *key;
    json_object_foreach((json_t *)args, key, v)
    {
        json_t *p = json_object_get(props, key);
        if (!p || !schema_value_ok(p, v))
            return 0;
    }
    size_t i;
    json_array_foreach(json_object_get(schema, "required"), i,
                       r) if (!json_object_get(args, json_string_value(r))) return 0;
    return 1;
}

/* After a success: the same keys; integer parameters are integers of the
 * given value; everything else unchanged. */
static int only_integers_converted(const json_t *schema, const json_t *before, const json_t *after)
{
    if (json_object_size(before) != json_object_size(after))
        return 0;
    const char *key;
    json_t *b;
    json_object_foreach((json_t *)before, key, b)
    {
        json_t *a = json_object_get(after, key);
        const char *type = json_string_value(
            json_object_get(json_object_get(json_object_get(schema, "properties"), key), "type"));
        if (!a)
            return 0;
        if (type && strcmp(type, "integer") == 0) {
            if (!json_is_integer(a) || (double)json_integer_value(a) != json_number_value(b))
                return 0;
        } else if (!json_equal(a, b)) {
            return 0;
        }
    }
    return 1;
}

static void one_tool(size_t i, const json_t *input)
{
    const struct tool_def *t = catalog_at(i);
    static const size_t lens[] = {1, 24, 256};
    int verdict = 0;
    for (size_t k = 0; k < sizeof lens / sizeof *lens; k++) {
        json_t *args = json_deep_copy(input);
        char *err = malloc(lens[k]);
        memset(err, 'x', lens[k]);
        int rc = catalog_validate(t, args, err, lens[k]);
        check(rc == 0 || rc == -1, t->name, "returns neither 0 nor -1");
        if (k > 0)
            check(rc == verdict, t->name, "verdict depends on the error buffer's size");
        verdict = rc;
        if (rc < 0) {
            check(memchr(err, '\0', lens[k]) != NULL, t->name, "error not terminated");
            check(lens[k] == 1 || err[0] != '\0', t->name, "failure without a reason");
            check(json_equal(args, input), t->name, "failure changed the arguments");
        } else {
            check(only_integers_converted(schemas[i], input, args), t->name,
                  "success changed more than integer representations");
            check(catalog_validate(t, args, err, lens[k]) == 0, t->name,
                  "accepted arguments fail a second validation");
        }
        free(err);
        json_decref(args);
    }
    if (has_nul(input)) {
        check(verdict < 0, t->name, "accepts a string holding a NUL");
        return;
    }
    int want = schema_ok(schemas[i], input);
    check((verdict == 0) == want, t->name,
          want ? "rejects arguments its inputSchema accepts"
               : "accepts arguments its inputSchema rejects");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t jerr;
    json_t *j = json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
    if (!j)
        return 0;
    for (size_t i = 0; i < catalog_count(); i++)
        one_tool(i, j);
    json_decref(j);
    return 0;
}
