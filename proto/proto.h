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
 * when the meaning of an existing field changes, or when a peer of the old
 * version would misbehave against the new one (a message it must now send
 * or answer). The versions:
 *   1  the first.
 *   2  MSG_RELAY_ACK (410): a worker must acknowledge what it reads, or the
 *      relay stops after RELAY_WINDOW messages; a version-1 worker would
 *      stall, so the relay refuses its hello.
 *   3  MSG_STATE (202): a worker sends the session's state between calls; a
 *      version-2 supervisor would take the unknown type for a protocol
 *      violation and kill the worker.
 */
#ifndef TABVISOR_PROTO_H
#define TABVISOR_PROTO_H

#include <stdint.h>

#define PROTO_VERSION 3

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
#define RELAY_WINDOW 2 /* relay messages on their way to a worker (MSG_RELAY_ACK) */
/* The longest browser session id: "NAME." (--instance-id, up to 32
 * characters, and the dot) + a UUID (36). Bounds the sessionId argument and
 * the sessionId of MSG_CONFIG and MSG_RELAY_HELLO. */
#define TV_SESSION_ID_MAX 69
#define PROTO_MAX_STRING (48u * 1024 * 1024) /* one str/bin value, bytes */
#define PROTO_MAX_ELEMENTS (256u * 1024)     /* objects in one message */
/* A session's saved state (MSG_STATE), as compact JSON: the worker leaves
 * storage out to stay within it, the supervisor refuses a larger one. */
#define SESSION_STATE_MAX (1024u * 1024)

enum proto_msg_type {
    /* 1..99 handshake */
    MSG_HELLO = 1,  /* worker->sup {pid:uint, proto:uint}                      */
    MSG_CONFIG = 2, /* sup->worker {sessionId:str, mode:str, cdpEndpoint:str,
                     *              viewportWidth:uint, viewportHeight:uint,
                     *              outputDir:str, restarted:bool,
                     *              maxOutputChars:uint, snapshotMode:str,
                     *              restore?:map (the session's last MSG_STATE),
                     *              keepState?:bool (false: send no MSG_STATE)} */
    MSG_READY = 3,  /* worker->sup {ok:bool, error?:{code,message}, browserVersion?,
                     *              restored?:map (what restore brought back)}  */

    /* 100..199 calls */
    MSG_CALL = 100,     /* sup->worker {tool:str, args:map, deadline:uint (CLOCK_MONOTONIC ms),
                         *              progress:bool}                           */
    MSG_RESULT = 101,   /* worker->sup {content:array, structured:map, isError:bool} */
    MSG_PROGRESS = 102, /* worker->sup {progress:num, total?:num, message?:str}  */
    MSG_CANCEL = 103,   /* sup->worker {reason?:str}; id names the call          */

    /* 200..299 notifications from a worker */
    MSG_LOG = 200,   /* worker->sup {level:str, message:str}                      */
    MSG_EVENT = 201, /* worker->sup {kind:str, detail:map}: "exiting" {reason}: its
                      * last message before it leaves on its own; it then
                      * reads until killed (docs/design.md, closing a
                      * worker's channel)                                    */
    MSG_STATE = 202, /* worker->sup {state:map}: the session's state, between calls,
                      * when it changed; handed back in the next worker's
                      * CONFIG restore (worker/session_state.c)             */

    /* 300..399 lifecycle */
    MSG_HEARTBEAT = 300, /* either way {}                                          */
    MSG_SHUTDOWN = 301,  /* sup->worker {}: close the browser context and exit     */

    /* 400..499 worker<->relay (docs/relay.md). A worker opens a session with
     * RELAY_HELLO, then sends requests with its own ids; the relay answers each
     * with one RELAY_REPLY of the same id {ok, result?, error?{code,message}}.
     * RELAY_EVENT has id 0. tabId is Chrome's tab id.                         */
    MSG_RELAY_HELLO = 400,      /* worker->relay {sessionId, pid, proto, proof:str} */
    MSG_RELAY_TAB_CREATE = 401, /* worker->relay {url?:str}: reply {tabId}             */
    MSG_RELAY_TAB_ATTACH = 402, /* worker->relay {tabId:uint}: debugger attach          */
    MSG_RELAY_TAB_DETACH = 403, /* worker->relay {tabId:uint}                            */
    MSG_RELAY_TAB_CLOSE = 404,  /* worker->relay {tabId:uint}                            */
    MSG_RELAY_CDP = 405,        /* worker->relay {tabId:uint, method:str, params?:map,
                                 *                cdpSession?:str}: reply {result:map}   */
    MSG_RELAY_GROUP = 406,      /* worker->relay {title?:str, color?:str}: group own tabs */
    MSG_RELAY_TABS = 407,       /* worker->relay {}: reply {tabs:[{tabId,created,attached}]} */
    MSG_RELAY_STATUS = 408,     /* worker->relay {}: reply {extension:bool, sessions:uint,
                                 *                          tabs:uint}                   */
    MSG_RELAY_BYE = 409,        /* worker->relay {}: close the session (and its tabs)    */
    MSG_RELAY_ACK = 410,        /* worker->relay {n:uint}: n more relay messages read; the
                                 * relay keeps at most RELAY_WINDOW unread per worker (made
                                 * for nng's polyamorous pair1, which dropped what found a
                                 * pipe's queue full; it now bounds what the relay holds) */
    MSG_RELAY_REPLY = 450,      /* relay->worker {ok:bool, result?:map, error?:map}     */
    MSG_RELAY_EVENT = 451,      /* relay->worker {kind:str, tabId?:uint, method?:str,
                                 *   params?:map, cdpSession?:str, openerTabId?:uint,
                                 *   reason?:str, connected?:bool}; kind: cdp, detached,
                                 *   removed, opened-by, extension                      */
    MSG_RELAY_BATCH = 452,      /* relay->worker {msgs:[{type:uint, id:uint, body:map}]}:
                                 *   replies and events in order, each checked as its
                                 *   own type; see relay/worker_side.c for why        */
};

/* Name of a message type for logs; "unknown" for numbers not listed above. */
const char *proto_msg_name(uint32_t type);

#endif
