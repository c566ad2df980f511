/*
 * json_top.h - find a few top-level members of a JSON object without
 * building it.
 *
 * The CDP bridge routes every message between the browser and the workers by
 * its "id", "sessionId" and "method" members. Building a jansson tree of a
 * 20 MiB screenshot answer just to read its id would cost time and memory,
 * so this scanner walks the text once, skipping nested values, and returns
 * where those members' values lie. It checks the structure it walks over
 * (strings, nesting, separators) but not the contents of numbers or
 * literals inside nested values: the browser's JSON is trusted to be JSON,
 * the scanner is only trusted never to read out of bounds or mis-route.
 *
 * Ownership: the spans point into the caller's text.
 */
#ifndef TABVISOR_JSON_TOP_H
#define TABVISOR_JSON_TOP_H

#include <stddef.h>

struct json_top {
    /* "id": an integer; id_start/id_end delimit its text (id_end == 0: absent). */
    long long id;
    size_t id_start, id_end;
    /* "method" and "sessionId": the raw text between the quotes (NULL: absent
     * or not a string). Raw means escapes are left as they are. */
    const char *method, *session;
    size_t method_len, session_len;
};

/* Nesting deeper than this fails the scan (a stack-free walk needs no
 * limit, but nothing we route is nested this deep). */
#define JSON_TOP_MAX_DEPTH 1000

/* 0, or -1 when s is not one JSON object, when "id" is present but not an
 * integer that fits in 53 bits, or when one of the three members appears twice
 * (a second "sessionId" could otherwise route past an ownership check), or
 * when a top-level key, the method or the session id holds an escape. */
int json_top_scan(const char *s, size_t n, struct json_top *t);

#endif
