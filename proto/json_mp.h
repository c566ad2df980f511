/*
 * json_mp.h - JSON (jansson) <-> msgpack conversion, and the msgpack validator.
 *
 * Mapping: null, true/false, integers (int64 range; uint64 above INT64_MAX is
 * rejected on decode), reals, strings (UTF-8, may contain NUL), arrays,
 * objects with string keys. msgpack bin decodes to a string only when it is
 * valid UTF-8, else it is rejected; ext types are rejected; a map key that is
 * not a string, or contains NUL, is rejected both ways (jansson's parser refuses
 * such keys and json_equal/json_object_get cannot handle them); duplicate keys
 * keep the last value.
 */
#ifndef TABVISOR_JSON_MP_H
#define TABVISOR_JSON_MP_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include <msgpack.h>

/* Walk one msgpack object at buf without allocating. Checks: every
 * container's element count fits in the bytes left (each element takes at
 * least one byte, a map entry two; counted across all open containers), at
 * most PROTO_MAX_ELEMENTS objects in all (each scalar, container and map key
 * is one), str/bin/ext lengths fit and are <= PROTO_MAX_STRING, nesting <=
 * max_depth (a
 * top-level array is depth 1; max_depth is clamped to MP_VALIDATE_MAX_DEPTH),
 * no reserved byte 0xc1. Bytes after the object are not looked at. On success
 * returns the object's size in bytes; on failure -1 with a reason in err (err
 * may be NULL). Structure only: ext, non-string keys etc. pass here and are
 * rejected by the converters. */
#define MP_VALIDATE_MAX_DEPTH 256
long mp_validate(const void *buf, size_t len, int max_depth, char *err, size_t errlen);

/* Append the msgpack form of j to pk. Returns 0 or -1 (e.g. a NaN real, a
 * string longer than PROTO_MAX_STRING, nesting deeper than PROTO_MAX_DEPTH,
 * more than PROTO_MAX_ELEMENTS objects): whatever this accepts,
 * json_mp_decode accepts. On -1, pk holds a partial object and must be
 * discarded. */
int json_to_msgpack(msgpack_packer *pk, const json_t *j);
/* Same with explicit limits for j itself (a body inside an envelope gets
 * PROTO_MAX_DEPTH - 1 levels and PROTO_MAX_ELEMENTS less the envelope's own
 * objects); clamped to MP_VALIDATE_MAX_DEPTH and PROTO_MAX_ELEMENTS. */
int json_to_msgpack_bounded(msgpack_packer *pk, const json_t *j, int max_depth,
                            size_t max_elements);

/* Convert an unpacked msgpack object to a new jansson value (caller owns).
 * Returns NULL with a reason in err on a type that JSON cannot hold, nesting
 * deeper than PROTO_MAX_DEPTH, or more than PROTO_MAX_ELEMENTS objects. */
json_t *msgpack_to_json(const msgpack_object *o, char *err, size_t errlen);

/* Convenience: validate (nesting <= PROTO_MAX_DEPTH) and convert one object
 * that fills exactly len bytes; nothing is allocated before validation
 * passes. Returns a new reference or NULL with err set. */
json_t *json_mp_decode(const void *buf, size_t len, char *err, size_t errlen);

/* Convenience: encode j into a fresh malloc'd buffer (*out, *outlen).
 * Returns 0, or -1 with *out NULL. */
int json_mp_encode(const json_t *j, char **out, size_t *outlen);

/*
 * Sequential reader for a known layout (the envelope). Use only on bytes that
 * mp_validate accepted; reads still bounds-check. Each call consumes one
 * object; on a type mismatch it returns -1 and consumes nothing.
 *
 * json_mp_decode and mp_read_json build jansson values straight from the
 * bytes rather than through msgpack_unpack: libmsgpackc's unpacker has a
 * compiled-in nesting limit of 32 (MSGPACK_EMBED_STACK_SIZE), below
 * PROTO_MAX_DEPTH. msgpack_to_json is for callers that already hold a
 * msgpack_object; both paths apply the same rules.
 */
struct mp_reader {
    const unsigned char *p;
    const unsigned char *end;
};

int mp_read_array(struct mp_reader *r, uint64_t *count);
/* A non-negative integer, whatever its encoding width or signedness. */
int mp_read_uint(struct mp_reader *r, uint64_t *v);
/* 1 if the next object is a map, else 0. */
int mp_peek_map(const struct mp_reader *r);
/* Convert the next object; containers may nest max_depth deep (the object
 * itself counts; clamped to MP_VALIDATE_MAX_DEPTH). NULL with a reason in err
 * on failure, and nothing consumed. */
json_t *mp_read_json(struct mp_reader *r, int max_depth, char *err, size_t errlen);

#endif
