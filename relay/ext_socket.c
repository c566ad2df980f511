/*
 * ext_socket.c - the extension's WebSocket (docs/relay.md, "Security").
 *
 * Accepted only on path /extension, with a Host naming this relay
 * (127.0.0.1:PORT or localhost:PORT: a DNS-rebinding page has another Host)
 * and an Origin of exactly chrome-extension://<pinned id> (any other
 * extension, or a web page, has another Origin). Then the relay sends a
 * challenge and the connection must answer with the HMAC of auth.h within
 * RELAY_AUTH_TIMEOUT_MS; only then does the router see its frames. One
 * extension at a time: a newly authenticated one replaces the old.
 */
#include "relay.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "log.h"
#include "pairing.h"
#include "peer_uid.h"

enum conn_state { CONN_AWAIT_AUTH, CONN_READY };

struct tx_item {
    struct tx_item *next;
    size_t len;
    unsigned char buf[]; /* LWS_PRE bytes of headroom, then the frame */
};

struct ext_conn {
    struct lws *wsi;
    enum conn_state state;
    char relay_nonce[AUTH_NONCE_HEX + 1];
    char *rx;
    size_t rxlen;
    bool rx_bad; /* the current message is refused; skip to its end */
    struct tx_item *tx_head, *tx_tail;
    size_t tx_bytes;
    const char *close_reason; /* static; set: close at the next writable */
    bool counted;             /* in relay.ext_unauthed */
};

static struct relay *relay_of(struct lws *wsi)
{
    return lws_context_user(lws_get_context(wsi));
}

bool ext_ready(const struct relay *r)
{
    return r->ext != NULL;
}

/* Queue text on c (copied). */
static int conn_queue(struct ext_conn *c, const char *text, size_t len)
{
    if (c->tx_bytes + len > RELAY_TX_MAX_BYTES) {
        log_warn("extension: send queue over %u bytes; dropping the connection",
                 RELAY_TX_MAX_BYTES);
        c->close_reason = "not reading";
        lws_callback_on_writable(c->wsi);
        return -1;
    }
    struct tx_item *it = malloc(sizeof(*it) + LWS_PRE + len);
    if (!it)
        return -1;
    it->next = NULL;
    it->len = len;
    memcpy(it->buf + LWS_PRE, text, len);
    if (c->tx_tail)
        c->tx_tail->next = it;
    else
        c->tx_head = it;
    c->tx_tail = it;
    c->tx_bytes += len;
    lws_callback_on_writable(c->wsi);
    return 0;
}

static int conn_send_json(struct ext_conn *c, const json_t *obj)
{
    char *text = json_dumps(obj, JSON_COMPACT);
    if (!text)
        return -1;
    int rc = conn_queue(c, text, strlen(text));
    free(text);
    return rc;
}

int ext_send(struct relay *r, const json_t *obj)
{
    if (!r->ext || r->ext->close_reason)
        return -1;
    return conn_send_json(r->ext, obj);
}

static void conn_free(struct ext_conn *c)
{
    free(c->rx);
    c->rx = NULL;
    c->rxlen = 0;
    while (c->tx_head) {
        struct tx_item *n = c->tx_head->next;
        free(c->tx_head);
        c->tx_head = n;
    }
    c->tx_tail = NULL;
    c->tx_bytes = 0;
}

/* Whether the upgrade request may proceed; logs why not. */
static bool upgrade_allowed(struct relay *r, struct lws *wsi)
{
    char uri[64], host[300], origin[300], want[80];
    if (lws_hdr_copy(wsi, uri, sizeof(uri), WSI_TOKEN_GET_URI) <= 0 ||
        strcmp(uri, "/extension") != 0) {
        log_warn("extension socket refused: path is not /extension");
        return false;
    }
    int hl = lws_hdr_copy(wsi, host, sizeof(host), WSI_TOKEN_HOST);
    char h1[40], h2[40];
    snprintf(h1, sizeof(h1), "127.0.0.1:%d", r->port);
    snprintf(h2, sizeof(h2), "localhost:%d", r->port);
    if (hl <= 0 || (strcmp(host, h1) != 0 && strcmp(host, h2) != 0)) {
        log_warn("extension socket refused: Host '%.80s' does not name this relay",
                 hl > 0 ? host : "");
        return false;
    }
    int ol = lws_hdr_copy(wsi, origin, sizeof(origin), WSI_TOKEN_ORIGIN);
    snprintf(want, sizeof(want), "chrome-extension://%s", r->extension_id);
    if (ol <= 0 || strcmp(origin, want) != 0) {
        log_warn("extension socket refused: foreign Origin '%.120s'", ol > 0 ? origin : "");
        return false;
    }
    return true;
}

static int refuse(struct relay *r, struct lws *wsi, const char *why)
{
    r->ext_refused++;
    lws_close_reason(wsi, LWS_CLOSE_STATUS_POLICY_VIOLATION, (unsigned char *)why, strlen(why));
    return -1;
}

/* c no longer waits to authenticate (it did, or it closed). */
static void unauthed_done(struct relay *r, struct ext_conn *c)
{
    if (c->counted) {
        c->counted = false;
        r->ext_unauthed--;
    }
}

/* The challenge's answer. Returns 0 when authenticated, -1 to close. */
static int conn_auth(struct relay *r, struct ext_conn *c, const struct ext_msg *m)
{
    char secret[AUTH_SECRET_HEX + 1], err[300];
    /* Read on every attempt: `pair` may have run since the relay started. */
    if (auth_load_secret(r->secret_path, secret, err, sizeof(err)) != 0) {
        log_warn("extension refused: no pairing secret: %s", err);
        return -1;
    }
    if (!auth_is_hex(m->nonce, AUTH_NONCE_HEX) ||
        !auth_verify(AUTH_EXTENSION, secret, c->relay_nonce, m->nonce, m->mac)) {
        log_warn("extension refused: wrong pairing secret (HMAC mismatch)");
        return -1;
    }
    char mac[AUTH_MAC_HEX + 1];
    if (auth_mac(AUTH_RELAY, secret, c->relay_nonce, m->nonce, mac) != 0)
        return -1;
    memset(secret, 0, sizeof(secret));
    if (r->ext && r->ext != c) {
        log_info("extension: a new connection replaces the old one");
        struct ext_conn *old = r->ext;
        r->ext = NULL;
        old->close_reason = "replaced";
        lws_callback_on_writable(old->wsi);
        /* What the old one was asked will never be answered. */
        router_ext_down(r);
    }
    c->state = CONN_READY;
    unauthed_done(r, c);
    lws_set_timeout(c->wsi, NO_PENDING_TIMEOUT, 0);
    /* claims: whether this relay still takes the extension's claims (it has
     * not heard any state yet: it was just started), router.c. */
    json_t *welcome = json_pack("{s:i, s:s, s:s, s:o, s:i, s:b}", "v", RELAY_WIRE_VERSION, "type",
                                "welcome", "mac", mac, "owned", router_owned_list(r), "graceMs",
                                RELAY_GRACE_MS, "claims", !r->claims_taken);
    int rc = welcome ? conn_send_json(c, welcome) : -1;
    json_decref(welcome);
    if (rc != 0)
        return -1;
    r->ext = c;
    r->ext_connections++;
    log_info("extension authenticated");
    router_ext_up(r);
    return 0;
}

/* A pairing answer (pairing.h): the extension knows the one-time code; the
 * relay proves it does too and sends the secret wrapped. The connection
 * stays unauthenticated: the extension closes it and connects with the
 * secret as usual. Returns 0, or -1 to close. */
static int conn_pair(struct relay *r, struct ext_conn *c, const struct ext_msg *m)
{
    char code[PAIR_CODE_LEN + 1], err[300];
    if (pair_code_load(r->secret_path, code, err, sizeof err) != 0) {
        log_warn("pairing refused: %s", err);
        return -1;
    }
    if (!auth_is_hex(m->nonce, AUTH_NONCE_HEX) ||
        !pair_verify(AUTH_EXTENSION, code, c->relay_nonce, m->nonce, m->mac)) {
        if (++r->pair_failures >= PAIR_MAX_TRIES) {
            pair_code_remove(r->secret_path);
            r->pair_failures = 0;
            log_warn("pairing refused: wrong code, %d times: the code is void (run `tabvisor "
                     "pair` again)",
                     PAIR_MAX_TRIES);
        } else {
            log_warn("pairing refused: wrong code");
        }
        return -1;
    }
    r->pair_failures = 0;
    pair_code_remove(r->secret_path); /* used once */
    char secret[AUTH_SECRET_HEX + 1], mac[AUTH_MAC_HEX + 1], key[AUTH_SECRET_HEX + 1];
    if (auth_make_secret(r->secret_path, false, secret, err, sizeof err) != 0 ||
        pair_mac(AUTH_RELAY, code, c->relay_nonce, m->nonce, mac) != 0 ||
        pair_wrap(code, c->relay_nonce, m->nonce, secret, key) != 0) {
        log_warn("pairing failed: %s", err);
        return -1;
    }
    OPENSSL_cleanse(secret, sizeof secret);
    json_t *paired = json_pack("{s:i, s:s, s:s, s:s}", "v", RELAY_WIRE_VERSION, "type", "paired",
                               "mac", mac, "key", key);
    int rc = paired ? conn_send_json(c, paired) : -1;
    json_decref(paired);
    if (rc == 0)
        log_info("extension paired");
    return rc;
}

/* One whole frame from the extension. Returns -1 to close the connection. */
static int conn_frame(struct relay *r, struct ext_conn *c)
{
    struct ext_msg m;
    char err[200];
    if (extmsg_parse(c->rx, c->rxlen, &m, err, sizeof(err)) != 0) {
        log_warn("extension: frame refused: %s", err);
        /* Before auth, anything malformed ends the connection; after it, a
         * bad frame is logged and dropped (the extension is ours). */
        return c->state == CONN_READY ? 0 : -1;
    }
    int rc = 0;
    if (c->state == CONN_AWAIT_AUTH) {
        if (m.kind == EXT_AUTH) {
            rc = conn_auth(r, c, &m);
        } else if (m.kind == EXT_PAIR) {
            rc = conn_pair(r, c, &m);
        } else {
            log_warn("extension refused: '%s' before authentication",
                     json_string_value(json_object_get(m.root, "type")));
            rc = -1;
        }
    } else if (r->ext == c) {
        router_ext_msg(r, &m);
    }
    extmsg_clear(&m);
    return rc;
}

static int ext_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                        size_t len)
{
    struct relay *r = relay_of(wsi);
    struct ext_conn *c = user;

    switch (reason) {
    case LWS_CALLBACK_HTTP:
        /* Only the WebSocket upgrade is served. */
        lws_return_http_status(wsi, HTTP_STATUS_FORBIDDEN, NULL);
        return -1;

    case LWS_CALLBACK_FILTER_NETWORK_CONNECTION: {
        /* The extension runs in the user's own browser, a process of our
         * uid: another local user's connection is dropped at accept, before
         * it could hold one of the few unauthenticated slots (issue 36,
         * finding 5). peer_is_us fails closed. */
        char why[200];
        if (peer_is_us((int)(intptr_t)in, why, sizeof why) != 0) {
            r->ext_refused++;
            r->ext_refused_uid++;
            log_debug("extension socket: dropped at accept: %s", why);
            return 1;
        }
        return 0;
    }

    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
        if (!upgrade_allowed(r, wsi)) {
            r->ext_refused++;
            return 1;
        }
        return 0;

    case LWS_CALLBACK_ESTABLISHED: {
        memset(c, 0, sizeof(*c));
        c->wsi = wsi;
        /* Any local uid can forge an Origin header: until a connection
         * proves the secret it gets a few connections, a few seconds and
         * one small frame (RELAY_AUTH_MAX_FRAME). */
        if (r->ext_unauthed >= RELAY_MAX_UNAUTHED) {
            log_warn("extension socket refused: %d connections are already waiting to "
                     "authenticate",
                     RELAY_MAX_UNAUTHED);
            return refuse(r, wsi, "too many unauthenticated connections");
        }
        c->state = CONN_AWAIT_AUTH;
        c->counted = true;
        r->ext_unauthed++;
        if (auth_nonce(c->relay_nonce) != 0)
            return -1;
        lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, RELAY_AUTH_TIMEOUT_MS / 1000);
        json_t *ch = json_pack("{s:i, s:s, s:s}", "v", RELAY_WIRE_VERSION, "type", "challenge",
                               "nonce", c->relay_nonce);
        int rc = ch ? conn_send_json(c, ch) : -1;
        json_decref(ch);
        return rc;
    }

    case LWS_CALLBACK_RECEIVE:
        if (lws_frame_is_binary(wsi))
            return refuse(r, wsi, "binary frames are not part of the protocol");
        if (lws_is_first_fragment(wsi)) {
            c->rxlen = 0;
            c->rx_bad = false;
        }
        if (c->state != CONN_READY) {
            /* A frame lws hands over in pieces has payload still to come;
             * a WebSocket fragment is a whole frame without FIN. */
            bool fragment = !lws_is_final_fragment(wsi) && lws_remaining_packet_payload(wsi) == 0;
            if (c->rxlen + len > RELAY_AUTH_MAX_FRAME || fragment) {
                log_warn("extension: %s before authentication refused",
                         fragment ? "a fragmented message" : "a frame over 1 KiB");
                return refuse(r, wsi, "before authentication only the auth message is read");
            }
        }
        if (!c->rx_bad) {
            if (c->rxlen + len > RELAY_MAX_FRAME) {
                log_warn("extension: frame over %u bytes refused", RELAY_MAX_FRAME);
                if (c->state != CONN_READY)
                    return refuse(r, wsi, "frame too large");
                c->rx_bad = true;
                free(c->rx);
                c->rx = NULL;
                c->rxlen = 0;
            } else {
                char *nb = realloc(c->rx, c->rxlen + len + 1);
                if (!nb)
                    return -1;
                c->rx = nb;
                memcpy(c->rx + c->rxlen, in, len);
                c->rxlen += len;
            }
        }
        if (lws_is_final_fragment(wsi) && lws_remaining_packet_payload(wsi) == 0) {
            int rc = c->rx_bad ? 0 : conn_frame(r, c);
            size_t framelen = c->rxlen;
            c->rxlen = 0;
            c->rx_bad = false;
            if (rc != 0)
                return refuse(r, wsi, "refused");
            /* Keep big buffers from pinning memory between frames. */
            if (c->rx && framelen > 65536) {
                free(c->rx);
                c->rx = NULL;
            }
        }
        return 0;

    case LWS_CALLBACK_SERVER_WRITEABLE: {
        if (c->close_reason) {
            lws_close_reason(wsi, LWS_CLOSE_STATUS_POLICY_VIOLATION,
                             (unsigned char *)c->close_reason, strlen(c->close_reason));
            return -1;
        }
        struct tx_item *it = c->tx_head;
        if (!it)
            return 0;
        c->tx_head = it->next;
        if (!c->tx_head)
            c->tx_tail = NULL;
        c->tx_bytes -= it->len;
        int n = lws_write(wsi, it->buf + LWS_PRE, it->len, LWS_WRITE_TEXT);
        free(it);
        if (n < 0)
            return -1;
        if (c->tx_head)
            lws_callback_on_writable(wsi);
        return 0;
    }

    case LWS_CALLBACK_CLOSED:
        unauthed_done(r, c);
        if (r->ext == c) {
            r->ext = NULL;
            log_warn("extension disconnected; sessions kept for %d s", RELAY_GRACE_MS / 1000);
            router_ext_down(r);
        }
        conn_free(c);
        return 0;

    default:
        break;
    }
    return lws_callback_http_dummy(wsi, reason, user, in, len);
}

const struct lws_protocols ext_protocol = {
    .name = "tabvisor-relay.v1",
    .callback = ext_callback,
    .per_session_data_size = sizeof(struct ext_conn),
    .rx_buffer_size = 65536,
};
