/*
 * listen.c - see listen.h.
 */
#include "listen.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int listen_split(const char *address, char *host, size_t host_size, char *port,
                 size_t port_size, char *err, size_t errlen)
{
    const char *colon = strrchr(address, ':');
    size_t host_len = colon != NULL ? (size_t)(colon - address) : 0;
    if (colon == NULL || colon[1] == '\0' || host_len >= host_size ||
        strlen(colon + 1) >= port_size) {
        snprintf(err, errlen, "bad address \"%s\": want HOST:PORT or :PORT", address);
        return -1;
    }
    const char *h = address;
    if (host_len >= 2 && h[0] == '[' && h[host_len - 1] == ']') {
        h++;
        host_len -= 2;
    } else if (memchr(h, ':', host_len) != NULL) {
        snprintf(err, errlen, "bad address \"%s\": put an IPv6 host in brackets", address);
        return -1;
    }
    memcpy(host, h, host_len);
    host[host_len] = '\0';
    for (const char *p = colon + 1; *p; p++) {
        if (*p < '0' || *p > '9') {
            snprintf(err, errlen, "bad address \"%s\": the port must be a number", address);
            return -1;
        }
    }
    snprintf(port, port_size, "%s", colon + 1);
    return 0;
}

int listen_open(const char *address, char *err, size_t errlen)
{
    char host[256], port[16];
    if (listen_split(address, host, sizeof(host), port, sizeof(port), err, errlen) != 0)
        return -1;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(host[0] != '\0' ? host : NULL, port, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "cannot resolve \"%s\": %s", address, gai_strerror(rc));
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
        if (fd < 0)
            continue;
        int on = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0) {
            snprintf(err, errlen, "cannot listen on \"%s\": %s", address, strerror(errno));
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    return fd;
}
