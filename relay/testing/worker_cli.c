/*
 * worker_cli.c - tabvisor-relay-testworker: a fake worker for the relay's
 * end-to-end tests, built only with the tests. It dials the relay's ipc URL
 * (argv[1]) with an nng pair1 socket and translates:
 *   stdin  one JSON object per line: {"type":N, "id":N, "body":{...}}
 *          (encoded with proto_encode, so bodies.c checks it first), or
 *          {"raw":"HEX"} to send those bytes as they are (bad input tests)
 *   stdout one JSON object per line per message received:
 *          {"type":N, "name":"relay-reply", "id":N, "body":{...}}, or
 *          {"error":"..."} for a message that did not decode.
 * Every message read is acknowledged (relay-ack), as a worker does, so the
 * relay keeps sending. It exits on stdin EOF.
 *
 * --no-ack (after the URL): a worker that stops reading in the relay's eyes:
 * nothing is acknowledged and nothing received is printed. A stdin line
 * {"flood":N, "type":T, "body":{...}} sends N such messages as fast as nng
 * takes them.
 */
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/pair1/pair.h>

#include "codec.h"
#include "proto.h"

static void out_json(json_t *o)
{
    char *s = json_dumps(o, JSON_COMPACT);
    if (s) {
        printf("%s\n", s);
        fflush(stdout);
        free(s);
    }
    json_decref(o);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

static void send_line(nng_socket s, const char *line)
{
    json_error_t jerr;
    json_t *in = json_loads(line, 0, &jerr);
    if (!in) {
        out_json(json_pack("{s:s}", "error", "stdin: not JSON"));
        return;
    }
    const char *raw = json_string_value(json_object_get(in, "raw"));
    char *buf = NULL;
    size_t len = 0;
    if (raw) {
        len = strlen(raw) / 2;
        buf = malloc(len + 1);
        for (size_t i = 0; buf && i < len; i++)
            buf[i] = (char)(hexval(raw[2 * i]) << 4 | hexval(raw[2 * i + 1]));
    } else if (proto_encode((uint32_t)json_integer_value(json_object_get(in, "type")),
                            (uint64_t)json_integer_value(json_object_get(in, "id")),
                            json_object_get(in, "body"), &buf, &len) != 0) {
        out_json(json_pack("{s:s}", "error", "stdin: cannot encode"));
        buf = NULL;
    }
    json_int_t copies = json_integer_value(json_object_get(in, "flood"));
    if (copies < 1)
        copies = 1;
    for (json_int_t i = 0; buf && i < copies; i++) {
        int rv = nng_send(s, buf, len, 0);
        if (rv != 0) {
            out_json(json_pack("{s:s}", "error", nng_strerror(rv)));
            break;
        }
    }
    if (copies > 1)
        out_json(json_pack("{s:I}", "flooded", copies));
    free(buf);
    json_decref(in);
}

int main(int argc, char **argv)
{
    bool no_ack = argc == 3 && !strcmp(argv[2], "--no-ack");
    if (argc != 2 && !no_ack) {
        fprintf(stderr, "usage: tabvisor-relay-testworker ipc://DIR/relay.ipc [--no-ack]\n");
        return 2;
    }
    nng_socket s;
    int fd, rv;
    if ((rv = nng_pair1_open(&s)) != 0 ||
        (rv = nng_socket_set_size(s, NNG_OPT_RECVMAXSZ, PROTO_MAX_MESSAGE)) != 0 ||
        (rv = nng_dial(s, argv[1], NULL, 0)) != 0 ||
        (rv = nng_socket_get_int(s, NNG_OPT_RECVFD, &fd)) != 0) {
        fprintf(stderr, "testworker: %s: %s\n", argv[1], nng_strerror(rv));
        return 1;
    }
    out_json(json_pack("{s:b}", "connected", 1));
    /* stdin is read with read(2), not stdio: a FILE buffer would hold lines
     * that poll() no longer reports. */
    static char in[1 << 20];
    size_t have = 0;
    struct pollfd pf[2] = {{.fd = 0, .events = POLLIN}, {.fd = fd, .events = POLLIN}};
    for (;;) {
        if (poll(pf, 2, -1) < 0)
            continue;
        if (pf[1].revents & POLLIN) {
            nng_msg *m;
            while (nng_recvmsg(s, &m, NNG_FLAG_NONBLOCK) == 0) {
                struct proto_msg msg;
                char err[200];
                if (no_ack) {
                    nng_msg_free(m);
                    continue;
                }
                if (proto_decode(nng_msg_body(m), nng_msg_len(m), &msg, err, sizeof(err)) == 0) {
                    if (msg.type == MSG_RELAY_BATCH) {
                        /* One line per message inside, as if each came alone. */
                        size_t i;
                        json_t *inner;
                        json_array_foreach(json_object_get(msg.body, "msgs"), i, inner)
                        {
                            json_int_t t = json_integer_value(json_object_get(inner, "type"));
                            out_json(json_pack("{s:I, s:s, s:I, s:O}", "type", t, "name",
                                               proto_msg_name((uint32_t)t), "id",
                                               json_integer_value(json_object_get(inner, "id")),
                                               "body", json_object_get(inner, "body")));
                        }
                    } else {
                        out_json(json_pack("{s:I, s:s, s:I, s:O}", "type", (json_int_t)msg.type,
                                           "name", proto_msg_name(msg.type), "id",
                                           (json_int_t)msg.id, "body", msg.body));
                    }
                    proto_msg_clear(&msg);
                } else {
                    out_json(json_pack("{s:s}", "error", err));
                }
                nng_msg_free(m);
                char *ack;
                size_t alen;
                json_t *body = json_pack("{s:i}", "n", 1);
                if (proto_encode(MSG_RELAY_ACK, 0, body, &ack, &alen) == 0) {
                    nng_send(s, ack, alen, 0);
                    free(ack);
                }
                json_decref(body);
            }
        }
        if (pf[0].revents & (POLLIN | POLLHUP)) {
            ssize_t n = read(0, in + have, sizeof(in) - 1 - have);
            if (n <= 0)
                break;
            have += (size_t)n;
            char *nl;
            while ((nl = memchr(in, '\n', have))) {
                *nl = '\0';
                if (nl > in)
                    send_line(s, in);
                size_t used = (size_t)(nl - in) + 1;
                memmove(in, in + used, have - used);
                have -= used;
            }
            if (have == sizeof(in) - 1)
                have = 0; /* a line longer than the buffer: dropped */
        }
    }
    nng_close(s);
    return 0;
}
