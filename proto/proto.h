/*
 * proto.h - the wire protocol between the supervisor and its workers.
 *
 * Every message is a msgpack array [version, type, id, body]:
 *   version  uint, PROTO_VERSION of the sender; a peer rejects any other.
 *   type     uint, one of enum proto_msg_type.
 *   id       uint, the call id for MSG_CALL/RESULT/PROGRESS/CANCEL, else 0.
 *   body     map with string keys; its fields are listed beside each type,
 *            and typed in bodies.c (one field table per type, checked by
 *            both ends: unknown types and unknown fields are refused).
 *
 * Message numbers live in ranges by purpose. A number is never reused or
 * renumbered: a retired type stays here, marked unused. Bump PROTO_VERSION
 * when the meaning of an existing field changes.
 */
#ifndef TABVISOR_PROTO_H
#define TABVISOR_PROTO_H

#include <stdint.h>

#define PROTO_VERSION 1

/*
 * Hard caps checked by the decoder before anything is allocated, and by the
 * encoder, so that a sender learns at its own end that a body is too big
 * (docs/limits.md). PROTO_MAX_MESSAGE is also each channel's
 * NNG_OPT_RECVMAXSZ: nng drops a longer message and the connection with it.
 * PROTO_MAX_ELEMENTS bounds what a message can expand to once decoded: every
 * msgpack object (scalar, container, map key), the envelope's included, can
 * become a jansson value of up to ~240 bytes (an empty map), so a message of
 * one-byte objects would otherwise grow ~40-240x; with the cap a decoded
 * message takes at most its strings' bytes plus 64 MiB (test_codec.c).
 */
#define PROTO_MAX_MESSAGE (64u * 1024 * 1024) /* one message, bytes */
#define PROTO_MAX_DEPTH 64                    /* nesting of arrays/maps */
#define PROTO_MAX_STRING (48u * 1024 * 1024)  /* one str/bin value, bytes */
#define PROTO_MAX_ELEMENTS (256u * 1024)      /* objects in one message */

enum proto_msg_type {
    /* 1..99 handshake */
    MSG_HELLO = 1,  /* worker->sup {pid:uint, proto:uint}                      */
    MSG_CONFIG = 2, /* sup->worker {sessionId:str, mode:str, cdpEndpoint:str,
                     *              viewportWidth:uint, viewportHeight:uint,
                     *              outputDir:str, restarted:bool,
                     *              maxOutputChars:uint, snapshotMode:str}       */
    MSG_READY = 3,  /* worker->sup {ok:bool, error?:{code,message}, browserVersion?} */

    /* 100..199 calls */
    MSG_CALL = 100,     /* sup->worker {tool:str, args:map, deadline:uint (CLOCK_MONOTONIC ms),
                         *              progress:bool}                           */
    MSG_RESULT = 101,   /* worker->sup {content:array, structured:map, isError:bool} */
    MSG_PROGRESS = 102, /* worker->sup {progress:num, total?:num, message?:str}  */
    MSG_CANCEL = 103,   /* sup->worker {reason?:str}; id names the call          */

    /* 200..299 notifications from a worker */
    MSG_LOG = 200,   /* worker->sup {level:str, message:str}                      */
    MSG_EVENT = 201, /* worker->sup {kind:str, detail:map}: dialog, crash, console */

    /* 300..399 lifecycle */
    MSG_HEARTBEAT = 300, /* either way {}                                          */
    MSG_SHUTDOWN = 301,  /* sup->worker {}: close the browser context and exit     */
};

/* Name of a message type for logs; "unknown" for numbers not listed above. */
const char *proto_msg_name(uint32_t type);

#endif
