/*
 * json_mp.c - msgpack validation and JSON <-> msgpack conversion.
 *
 * Decoding never trusts a count or length from the wire: mp_validate proves
 * the whole object fits in the buffer before anything is built, and the
 * builder re-checks bounds as it goes so that it is safe on its own too.
 */
#include "json_mp.h"

#include "errbuf.h"
#include "proto.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- one msgpack header ------------------------------------------------ */

enum mp_kind {
    MPK_NIL,
    MPK_BOOL,
    MPK_UINT, /* any integer >= 0, whatever the encoding */
    MPK_INT,  /* a negative integer */
    MPK_FLOAT,
    MPK_STR,
    MPK_BIN,
    MPK_EXT,
    MPK_ARRAY,
    MPK_MAP,
};

struct mp_head {
    enum mp_kind kind;
    size_t size; /* header bytes; a str/bin/ext payload follows */
    uint64_t n;  /* UINT value; STR/BIN/EXT payload length; ARRAY/MAP count */
    int64_t i;   /* INT value */
    double f;    /* FLOAT value */
    bool b;      /* BOOL value */
    int8_t ext_type;
};

static uint64_t load_be(const unsigned char *p, size_t w)
{
    uint64_t v = 0;
    for (size_t k = 0; k < w; k++)
        v = (v << 8) | p[k];
    return v;
}

/* Sign-extend a w-byte two's complement value. */
static int64_t sign_extend(uint64_t v, size_t w)
{
    switch (w) {
    case 1:
        return (int8_t)v;
    case 2:
        return (int16_t)v;
    case 4:
        return (int32_t)v;
    default:
        return (int64_t)v;
    }
}

/*
 * Parse the header at p (avail bytes left). Fills h and returns 0, or -1
 * with *why set when the header is cut short or uses the reserved byte.
 * Payload lengths are not checked here.
 */
static int mp_head(const unsigned char *p, size_t avail, struct mp_head *h, const char **why)
{
    memset(h, 0, sizeof(*h));
    if (avail < 1) {
        *why = "truncated";
        return -1;
    }
    unsigned c = p[0];
    h->size = 1;
    if (c <= 0x7f) {
        h->kind = MPK_UINT;
        h->n = c;
        return 0;
    }
    if (c <= 0x8f) {
        h->kind = MPK_MAP;
        h->n = c & 0x0f;
        return 0;
    }
    if (c <= 0x9f) {
        h->kind = MPK_ARRAY;
        h->n = c & 0x0f;
        return 0;
    }
    if (c <= 0xbf) {
        h->kind = MPK_STR;
        h->n = c & 0x1f;
        return 0;
    }
    if (c >= 0xe0) {
        h->kind = MPK_INT;
        h->i = (int8_t)c;
        return 0;
    }

    /* 0xc0..0xdf: the width of what follows the type byte */
    size_t w = 0;
    switch (c) {
    case 0xc0:
        h->kind = MPK_NIL;
        return 0;
    case 0xc1:
        *why = "reserved byte 0xc1";
        return -1;
    case 0xc2:
    case 0xc3:
        h->kind = MPK_BOOL;
        h->b = c == 0xc3;
        return 0;
    case 0xc4: /* bin 8/16/32 */
    case 0xc5:
    case 0xc6:
        h->kind = MPK_BIN;
        w = (size_t)1 << (c - 0xc4);
        break;
    case 0xc7: /* ext 8/16/32: length, then the type byte */
    case 0xc8:
    case 0xc9:
        h->kind = MPK_EXT;
        w = (size_t)1 << (c - 0xc7);
        break;
    case 0xca:
        h->kind = MPK_FLOAT;
        w = 4;
        break;
    case 0xcb:
        h->kind = MPK_FLOAT;
        w = 8;
        break;
    case 0xcc: /* uint 8/16/32/64 */
    case 0xcd:
    case 0xce:
    case 0xcf:
        h->kind = MPK_UINT;
        w = (size_t)1 << (c - 0xcc);
        break;
    case 0xd0: /* int 8/16/32/64 */
    case 0xd1:
    case 0xd2:
    case 0xd3:
        h->kind = MPK_INT;
        w = (size_t)1 << (c - 0xd0);
        break;
    case 0xd4: /* fixext 1/2/4/8/16: only the type byte follows */
    case 0xd5:
    case 0xd6:
    case 0xd7:
    case 0xd8:
        h->kind = MPK_EXT;
        h->n = (uint64_t)1 << (c - 0xd4);
        w = 0;
        break;
    case 0xd9: /* str 8/16/32 */
    case 0xda:
    case 0xdb:
        h->kind = MPK_STR;
        w = (size_t)1 << (c - 0xd9);
        break;
    case 0xdc: /* array 16/32 */
    case 0xdd:
        h->kind = MPK_ARRAY;
        w = (size_t)2 << (c - 0xdc);
        break;
    default: /* 0xde, 0xdf: map 16/32 */
        h->kind = MPK_MAP;
        w = (size_t)2 << (c - 0xde);
        break;
    }

    size_t extra = h->kind == MPK_EXT ? 1 : 0; /* the ext type byte */
    if (avail - 1 < w + extra) {
        *why = "truncated header";
        return -1;
    }
    uint64_t v = load_be(p + 1, w);
    h->size = 1 + w + extra;
    switch (h->kind) {
    case MPK_FLOAT:
        if (w == 4) {
            uint32_t bits = (uint32_t)v;
            float f;
            memcpy(&f, &bits, sizeof(f));
            h->f = f;
        } else {
            memcpy(&h->f, &v, sizeof(h->f));
        }
        break;
    case MPK_INT: {
        int64_t s = sign_extend(v, w);
        if (s >= 0) {
            h->kind = MPK_UINT; /* as msgpack-c does: a sign is not a type */
            h->n = (uint64_t)s;
        } else {
            h->i = s;
        }
        break;
    }
    case MPK_EXT:
        if (w > 0)
            h->n = v;
        h->ext_type = (int8_t)p[1 + w];
        break;
    default:
        h->n = v;
        break;
    }
    return 0;
}

static bool has_payload(enum mp_kind k)
{
    return k == MPK_STR || k == MPK_BIN || k == MPK_EXT;
}

/* ---- validation --------------------------------------------------------- */

long mp_validate(const void *buf, size_t len, int max_depth, char *err, size_t errlen)
{
    static const unsigned char none[1];
    const unsigned char *start = buf ? buf : none; /* NULL + 0 is UB */
    const unsigned char *p = start;
    const unsigned char *end = start + (buf ? len : 0);
    /* left[d]: elements still to read in the d-th open container. need: their
     * sum, i.e. how many objects must still follow; each takes >= 1 byte. */
    uint64_t left[MP_VALIDATE_MAX_DEPTH];
    uint64_t need = 0, seen = 0;
    int depth = 0;

    if (!buf && len > 0) {
        errbuf_set(err, errlen, "null buffer");
        return -1;
    }
    if (max_depth > MP_VALIDATE_MAX_DEPTH)
        max_depth = MP_VALIDATE_MAX_DEPTH;

    do {
        if (depth > 0) { /* this object fills one slot of the innermost container */
            left[depth - 1]--;
            need--;
        }
        struct mp_head h;
        const char *why = NULL;
        size_t off = (size_t)(p - start);
        if (++seen > PROTO_MAX_ELEMENTS) {
            errbuf_set(err, errlen, "offset %zu: more than %u elements", off, PROTO_MAX_ELEMENTS);
            return -1;
        }
        if (mp_head(p, (size_t)(end - p), &h, &why) < 0) {
            errbuf_set(err, errlen, "offset %zu: %s", off, why);
            return -1;
        }
        p += h.size;
        size_t rem = (size_t)(end - p);

        if (has_payload(h.kind)) {
            if (h.n > PROTO_MAX_STRING) {
                errbuf_set(err, errlen, "offset %zu: length %llu exceeds limit %u", off,
                           (unsigned long long)h.n, PROTO_MAX_STRING);
                return -1;
            }
            if (h.n > rem) {
                errbuf_set(err, errlen, "offset %zu: length %llu exceeds the %zu bytes left", off,
                           (unsigned long long)h.n, rem);
                return -1;
            }
            p += h.n;
        } else if (h.kind == MPK_ARRAY || h.kind == MPK_MAP) {
            if (depth >= max_depth) {
                errbuf_set(err, errlen, "offset %zu: nesting deeper than %d", off, max_depth);
                return -1;
            }
            uint64_t count = h.kind == MPK_MAP ? 2 * h.n : h.n; /* n < 2^32: no overflow */
            if (need > rem || count > rem - need) {
                errbuf_set(err, errlen, "offset %zu: %s of %llu elements cannot fit in %zu bytes",
                           off, h.kind == MPK_MAP ? "map" : "array", (unsigned long long)h.n, rem);
                return -1;
            }
            if (count > 0) {
                left[depth++] = count;
                need += count;
            }
        }

        while (depth > 0 && left[depth - 1] == 0)
            depth--;
    } while (depth > 0);

    return (long)(p - start);
}

/* ---- msgpack bytes -> JSON ---------------------------------------------- */

/* A str or bin payload as a JSON string: NULL unless valid UTF-8. */
static json_t *payload_string(const unsigned char *s, size_t n, bool bin, char *err, size_t errlen)
{
    /* libmsgpackc may hand over ptr == NULL for an empty str, which
     * json_stringn would refuse. */
    json_t *j = json_stringn(n ? (const char *)s : "", n);
    if (!j)
        errbuf_set(err, errlen, "%s is not valid UTF-8", bin ? "bin" : "str");
    return j;
}

static json_t *read_value(struct mp_reader *r, int max_depth, int depth, char *err, size_t errlen);

static json_t *read_container(struct mp_reader *r, const struct mp_head *h, int max_depth,
                              int depth, char *err, size_t errlen)
{
    if (depth >= max_depth) {
        errbuf_set(err, errlen, "nesting deeper than %d", max_depth);
        return NULL;
    }
    if (h->kind == MPK_ARRAY) {
        json_t *arr = json_array();
        if (!arr)
            goto oom;
        for (uint64_t k = 0; k < h->n; k++) {
            json_t *v = read_value(r, max_depth, depth + 1, err, errlen);
            if (!v || json_array_append_new(arr, v) < 0) {
                json_decref(arr);
                return NULL;
            }
        }
        return arr;
    }

    json_t *obj = json_object();
    if (!obj)
        goto oom;
    for (uint64_t k = 0; k < h->n; k++) {
        struct mp_head kh;
        const char *why = NULL;
        if (mp_head(r->p, (size_t)(r->end - r->p), &kh, &why) < 0) {
            errbuf_set(err, errlen, "map key: %s", why);
            goto fail;
        }
        if (kh.kind != MPK_STR) {
            errbuf_set(err, errlen, "map key is not a string");
            goto fail;
        }
        if (kh.n > (size_t)(r->end - r->p) - kh.size) {
            errbuf_set(err, errlen, "map key: length exceeds the buffer");
            goto fail;
        }
        const char *key = (const char *)r->p + kh.size;
        size_t klen = kh.n;
        if (memchr(key, '\0', klen)) {
            errbuf_set(err, errlen, "map key contains NUL");
            goto fail;
        }
        r->p += kh.size + kh.n;
        json_t *v = read_value(r, max_depth, depth + 1, err, errlen);
        if (!v)
            goto fail;
        /* setn_new consumes v even when it fails (bad UTF-8 in the key). */
        if (json_object_setn_new(obj, key, klen, v) < 0) {
            errbuf_set(err, errlen, "map key is not valid UTF-8");
            goto fail;
        }
    }
    return obj;
fail:
    json_decref(obj);
    return NULL;
oom:
    errbuf_set(err, errlen, "out of memory");
    return NULL;
}

/* depth: containers enclosing this value. */
static json_t *read_value(struct mp_reader *r, int max_depth, int depth, char *err, size_t errlen)
{
    struct mp_head h;
    const char *why = NULL;
    json_t *j = NULL;

    if (mp_head(r->p, (size_t)(r->end - r->p), &h, &why) < 0) {
        errbuf_set(err, errlen, "%s", why);
        return NULL;
    }
    if (has_payload(h.kind) && (h.n > PROTO_MAX_STRING || h.n > (size_t)(r->end - r->p) - h.size)) {
        errbuf_set(err, errlen, "length %llu exceeds the buffer or the limit",
                   (unsigned long long)h.n);
        return NULL;
    }
    const unsigned char *payload = r->p + h.size;
    r->p += h.size;
    if (has_payload(h.kind))
        r->p += h.n;

    switch (h.kind) {
    case MPK_NIL:
        return json_null();
    case MPK_BOOL:
        return json_boolean(h.b);
    case MPK_UINT:
        if (h.n > INT64_MAX) {
            errbuf_set(err, errlen, "integer %llu exceeds int64", (unsigned long long)h.n);
            return NULL;
        }
        j = json_integer((json_int_t)h.n);
        break;
    case MPK_INT:
        j = json_integer((json_int_t)h.i);
        break;
    case MPK_FLOAT:
        if (!isfinite(h.f)) {
            errbuf_set(err, errlen, "non-finite real");
            return NULL;
        }
        j = json_real(h.f);
        break;
    case MPK_STR:
    case MPK_BIN:
        return payload_string(payload, h.n, h.kind == MPK_BIN, err, errlen);
    case MPK_EXT:
        errbuf_set(err, errlen, "ext type %d not supported", h.ext_type);
        return NULL;
    case MPK_ARRAY:
    case MPK_MAP:
        return read_container(r, &h, max_depth, depth, err, errlen);
    }
    if (!j)
        errbuf_set(err, errlen, "out of memory");
    return j;
}

json_t *mp_read_json(struct mp_reader *r, int max_depth, char *err, size_t errlen)
{
    const unsigned char *save = r->p;
    if (max_depth > MP_VALIDATE_MAX_DEPTH) /* bounds the recursion */
        max_depth = MP_VALIDATE_MAX_DEPTH;
    json_t *j = read_value(r, max_depth, 0, err, errlen);
    if (!j)
        r->p = save;
    return j;
}

int mp_read_array(struct mp_reader *r, uint64_t *count)
{
    struct mp_head h;
    const char *why;
    if (mp_head(r->p, (size_t)(r->end - r->p), &h, &why) < 0 || h.kind != MPK_ARRAY)
        return -1;
    r->p += h.size;
    *count = h.n;
    return 0;
}

int mp_read_uint(struct mp_reader *r, uint64_t *v)
{
    struct mp_head h;
    const char *why;
    if (mp_head(r->p, (size_t)(r->end - r->p), &h, &why) < 0 || h.kind != MPK_UINT)
        return -1;
    r->p += h.size;
    *v = h.n;
    return 0;
}

int mp_peek_map(const struct mp_reader *r)
{
    struct mp_head h;
    const char *why;
    return mp_head(r->p, (size_t)(r->end - r->p), &h, &why) == 0 && h.kind == MPK_MAP;
}

json_t *json_mp_decode(const void *buf, size_t len, char *err, size_t errlen)
{
    long n = mp_validate(buf, len, PROTO_MAX_DEPTH, err, errlen);
    if (n < 0)
        return NULL;
    if ((size_t)n != len) {
        errbuf_set(err, errlen, "%zu trailing bytes after the object", len - (size_t)n);
        return NULL;
    }
    struct mp_reader r = {.p = buf, .end = (const unsigned char *)buf + len};
    return mp_read_json(&r, PROTO_MAX_DEPTH, err, errlen);
}

/* ---- msgpack_object -> JSON ----------------------------------------------- */

/* *budget: objects still allowed (PROTO_MAX_ELEMENTS in all, map keys too). */
static json_t *object_to_json(const msgpack_object *o, int depth, size_t *budget, char *err,
                              size_t errlen)
{
    json_t *j = NULL;

    if (*budget == 0) {
        errbuf_set(err, errlen, "more than %u elements", PROTO_MAX_ELEMENTS);
        return NULL;
    }
    --*budget;
    switch (o->type) {
    case MSGPACK_OBJECT_NIL:
        return json_null();
    case MSGPACK_OBJECT_BOOLEAN:
        return json_boolean(o->via.boolean);
    case MSGPACK_OBJECT_POSITIVE_INTEGER:
        if (o->via.u64 > INT64_MAX) {
            errbuf_set(err, errlen, "integer %llu exceeds int64", (unsigned long long)o->via.u64);
            return NULL;
        }
        j = json_integer((json_int_t)o->via.u64);
        break;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER:
        j = json_integer((json_int_t)o->via.i64);
        break;
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64:
        if (!isfinite(o->via.f64)) {
            errbuf_set(err, errlen, "non-finite real");
            return NULL;
        }
        j = json_real(o->via.f64);
        break;
    case MSGPACK_OBJECT_STR:
        if (o->via.str.size > PROTO_MAX_STRING) {
            errbuf_set(err, errlen, "string exceeds limit");
            return NULL;
        }
        return payload_string((const unsigned char *)o->via.str.ptr, o->via.str.size, false, err,
                              errlen);
    case MSGPACK_OBJECT_BIN:
        if (o->via.bin.size > PROTO_MAX_STRING) {
            errbuf_set(err, errlen, "bin exceeds limit");
            return NULL;
        }
        return payload_string((const unsigned char *)o->via.bin.ptr, o->via.bin.size, true, err,
                              errlen);
    case MSGPACK_OBJECT_EXT:
        errbuf_set(err, errlen, "ext type %d not supported", o->via.ext.type);
        return NULL;
    case MSGPACK_OBJECT_ARRAY:
        if (depth >= PROTO_MAX_DEPTH) {
            errbuf_set(err, errlen, "nesting deeper than %d", PROTO_MAX_DEPTH);
            return NULL;
        }
        j = json_array();
        if (!j)
            break;
        for (uint32_t k = 0; k < o->via.array.size; k++) {
            json_t *v = object_to_json(&o->via.array.ptr[k], depth + 1, budget, err, errlen);
            if (!v || json_array_append_new(j, v) < 0) {
                json_decref(j);
                return NULL;
            }
        }
        return j;
    case MSGPACK_OBJECT_MAP:
        if (depth >= PROTO_MAX_DEPTH) {
            errbuf_set(err, errlen, "nesting deeper than %d", PROTO_MAX_DEPTH);
            return NULL;
        }
        j = json_object();
        if (!j)
            break;
        for (uint32_t k = 0; k < o->via.map.size; k++) {
            const msgpack_object_kv *kv = &o->via.map.ptr[k];
            if (kv->key.type != MSGPACK_OBJECT_STR) {
                errbuf_set(err, errlen, "map key is not a string");
                json_decref(j);
                return NULL;
            }
            if (*budget == 0) { /* the key */
                errbuf_set(err, errlen, "more than %u elements", PROTO_MAX_ELEMENTS);
                json_decref(j);
                return NULL;
            }
            --*budget;
            const char *key = kv->key.via.str.size ? kv->key.via.str.ptr : "";
            if (memchr(key, '\0', kv->key.via.str.size)) {
                errbuf_set(err, errlen, "map key contains NUL");
                json_decref(j);
                return NULL;
            }
            json_t *v = object_to_json(&kv->val, depth + 1, budget, err, errlen);
            if (!v) {
                json_decref(j);
                return NULL;
            }
            if (json_object_setn_new(j, key, kv->key.via.str.size, v) < 0) {
                errbuf_set(err, errlen, "map key is not valid UTF-8");
                json_decref(j);
                return NULL;
            }
        }
        return j;
    default:
        errbuf_set(err, errlen, "unknown msgpack type %d", (int)o->type);
        return NULL;
    }
    if (!j)
        errbuf_set(err, errlen, "out of memory");
    return j;
}

json_t *msgpack_to_json(const msgpack_object *o, char *err, size_t errlen)
{
    size_t budget = PROTO_MAX_ELEMENTS;
    return object_to_json(o, 0, &budget, err, errlen);
}

/* ---- JSON -> msgpack ------------------------------------------------------ */

/* *budget: msgpack objects still allowed (map keys count, as mp_validate
 * counts them). */
static int pack_value(msgpack_packer *pk, const json_t *j, int depth, int max_depth, size_t *budget)
{
    if (*budget == 0)
        return -1;
    --*budget;
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        if (depth >= max_depth)
            return -1;
        const char *key;
        size_t klen;
        json_t *v;
        if (msgpack_pack_map(pk, json_object_size(j)) != 0)
            return -1;
        /* The macro wants a non-const object; iteration does not modify it. */
        json_t *obj = (json_t *)j;
        json_object_keylen_foreach(obj, key, klen, v)
        {
            if (*budget == 0 || klen > PROTO_MAX_STRING || memchr(key, '\0', klen) ||
                msgpack_pack_str_with_body(pk, key, klen) != 0)
                return -1;
            --*budget;
            if (pack_value(pk, v, depth + 1, max_depth, budget) != 0)
                return -1;
        }
        return 0;
    }
    case JSON_ARRAY: {
        if (depth >= max_depth)
            return -1;
        size_t n = json_array_size(j);
        if (msgpack_pack_array(pk, n) != 0)
            return -1;
        for (size_t k = 0; k < n; k++)
            if (pack_value(pk, json_array_get(j, k), depth + 1, max_depth, budget) != 0)
                return -1;
        return 0;
    }
    case JSON_STRING: {
        size_t n = json_string_length(j);
        if (n > PROTO_MAX_STRING)
            return -1;
        return msgpack_pack_str_with_body(pk, json_string_value(j), n) != 0 ? -1 : 0;
    }
    case JSON_INTEGER:
        return msgpack_pack_int64(pk, (int64_t)json_integer_value(j)) != 0 ? -1 : 0;
    case JSON_REAL: {
        double d = json_real_value(j);
        if (!isfinite(d))
            return -1;
        return msgpack_pack_double(pk, d) != 0 ? -1 : 0;
    }
    case JSON_TRUE:
        return msgpack_pack_true(pk) != 0 ? -1 : 0;
    case JSON_FALSE:
        return msgpack_pack_false(pk) != 0 ? -1 : 0;
    case JSON_NULL:
        return msgpack_pack_nil(pk) != 0 ? -1 : 0;
    }
    return -1;
}

int json_to_msgpack_bounded(msgpack_packer *pk, const json_t *j, int max_depth, size_t max_elements)
{
    if (!j)
        return -1;
    if (max_depth > MP_VALIDATE_MAX_DEPTH) /* bounds the recursion */
        max_depth = MP_VALIDATE_MAX_DEPTH;
    if (max_elements > PROTO_MAX_ELEMENTS)
        max_elements = PROTO_MAX_ELEMENTS;
    return pack_value(pk, j, 0, max_depth, &max_elements);
}

int json_to_msgpack(msgpack_packer *pk, const json_t *j)
{
    return json_to_msgpack_bounded(pk, j, PROTO_MAX_DEPTH, PROTO_MAX_ELEMENTS);
}

int json_mp_encode(const json_t *j, char **out, size_t *outlen)
{
    msgpack_sbuffer sb;
    msgpack_packer pk;

    *out = NULL;
    *outlen = 0;
    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    if (json_to_msgpack(&pk, j) != 0) {
        msgpack_sbuffer_destroy(&sb);
        return -1;
    }
    *outlen = sb.size;
    *out = msgpack_sbuffer_release(&sb);
    return 0;
}
