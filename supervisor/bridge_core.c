/*
 * bridge_core.c - see bridge_core.h.
 */
#include "bridge_core.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "owner_map.h"

static void want_write(struct bridge_client *c)
{
    loop_set_events(c->set->loop, c->fd, (short)(POLLIN | (nf_queue_len(&c->out) ? POLLOUT : 0)));
}

static void on_client(struct loop *l, int fd, short revents, void *ud)
{
    struct bridge_client *c = ud;
    (void)l;
    if (revents & POLLOUT) {
        if (nf_queue_write(&c->out, fd) < 0) {
            bridge_client_close(c, "write failed");
            return;
        }
        want_write(c);
    }
    if (!(revents & (POLLIN | POLLHUP | POLLERR)))
        return;
    long n = nf_reader_read(&c->in, fd, BRIDGE_CLIENT_READ_CHUNK);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        bridge_client_close(c, n == 0 ? "it closed the connection" : strerror(errno));
        return;
    }
    char *msg;
    size_t len;
    int r;
    while (!c->dead && (r = nf_reader_next(&c->in, &msg, &len)) == 1)
        c->set->ops->message(c, msg, len);
    if (!c->dead && r < 0)
        bridge_client_close(c, "it sent a message over the size limit");
}

int bridge_client_open(struct bridge_clients *set, struct bridge_client *c, const char *label,
                       size_t max_msg)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return -1;
    c->set = set;
    c->ops = set->ops;
    c->fd = sv[0];
    c->in.max_msg = max_msg;
    snprintf(c->label, sizeof c->label, "%s", label);
    fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
    c->next = set->list;
    set->list = c;
    set->count++;
    loop_add_fd(set->loop, c->fd, POLLIN, on_client, c);
    return sv[1];
}

void bridge_client_send(struct bridge_client *c, const char *msg, size_t len,
                        const struct json_top *t, long long id)
{
    if (c->dead)
        return;
    int r = t ? nf_queue_message_with_id(&c->out, msg, len, t->id_start, t->id_end, id,
                                         BRIDGE_MAX_QUEUE)
            : (nf_queue_append(&c->out, msg, len, BRIDGE_MAX_QUEUE) < 0 ||
               nf_queue_append(&c->out, "", 1, BRIDGE_MAX_QUEUE) < 0)
                ? -1
                : 0;
    if (r < 0) {
        bridge_client_close(c, "it stopped reading (output queue full)");
        return;
    }
    if (nf_queue_write(&c->out, c->fd) < 0) {
        bridge_client_close(c, "write failed");
        return;
    }
    want_write(c);
}

static void free_client(void *ud)
{
    struct bridge_client *c = ud;
    nf_reader_free(&c->in);
    nf_queue_free(&c->out);
    c->ops->free(c); /* not through c->set: the bridge may be freed already */
}

void bridge_client_close(struct bridge_client *c, const char *why)
{
    if (c->dead)
        return;
    struct bridge_clients *set = c->set;
    c->dead = true;
    log_debug("%s: %s disconnected: %s", set->name, c->label, why);
    loop_del_fd(set->loop, c->fd);
    close(c->fd);
    c->fd = -1;
    set->ops->closed(c, why);
    for (struct bridge_client **p = &set->list; *p; p = &(*p)->next) {
        if (*p == c) {
            *p = c->next;
            break;
        }
    }
    set->count--;
    loop_defer(set->loop, free_client, c);
}

void bridge_clients_close_all(struct bridge_clients *set, const char *why)
{
    while (set->list)
        bridge_client_close(set->list, why);
}

int bridge_core_setup(struct bridge_clients *clients, struct nf_reader *in,
                      json_t **const maps[], size_t nmaps, struct loop *l,
                      const struct bridge_client_ops *ops, const char *name)
{
    if (owner_maps_new(maps, nmaps) < 0)
        return -1;
    *clients = (struct bridge_clients){.loop = l, .ops = ops, .name = name};
    in->max_msg = BRIDGE_MAX_MESSAGE;
    return 0;
}
