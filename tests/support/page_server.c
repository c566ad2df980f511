/*
 * page_server.c - one page on 127.0.0.1 (page_server.h).
 */
#include "page_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static atomic_int hits;

int page_listen_local(int *port)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0 || listen(s, 64) != 0 ||
        getsockname(s, (struct sockaddr *)&a, &len) != 0) {
        if (s >= 0)
            close(s);
        return -1;
    }
    *port = ntohs(a.sin_port);
    return s;
}

struct served {
    int fd;
    const char *page;
};

static void *serve(void *arg)
{
    struct served sv = *(struct served *)arg;
    for (;;) {
        int c = accept(sv.fd, NULL, NULL);
        if (c < 0)
            continue;
        char req[4096];
        size_t n = 0;
        ssize_t r;
        while (n < sizeof req - 1 && (r = read(c, req + n, sizeof req - 1 - n)) > 0) {
            n += (size_t)r;
            req[n] = '\0';
            if (strstr(req, "\r\n\r\n"))
                break;
        }
        hits++;
        char head[256];
        int len = snprintf(head, sizeof head,
                           "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: "
                           "%zu\r\nConnection: close\r\n\r\n",
                           strlen(sv.page));
        if (write(c, head, (size_t)len) < 0 || write(c, sv.page, strlen(sv.page)) < 0)
            perror("page_server: write");
        close(c);
    }
    return NULL;
}

int page_server_start(const char *page, int *port)
{
    static struct served sv[8];
    static int nsv;
    if (nsv >= 8)
        return -1;
    int fd = page_listen_local(port);
    if (fd < 0)
        return -1;
    sv[nsv] = (struct served){fd, page};
    pthread_t t;
    if (pthread_create(&t, NULL, serve, &sv[nsv]) != 0) {
        close(fd);
        return -1;
    }
    nsv++;
    pthread_detach(t);
    return 0;
}

int page_server_hits(void)
{
    return hits;
}
