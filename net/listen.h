/*
 * listen.h - a listening TCP socket from a Kubernetes-style bind address
 * ("HOST:PORT", ":PORT" for every interface, "[V6]:PORT").
 *
 * Sockets both servers open (net/, README "Layout"): both bind their listeners
 * (admission, health, metrics) from the same kind of flag, and the parsing
 * rules must not differ between them.
 */
#ifndef OTA_LISTEN_H
#define OTA_LISTEN_H

#include <stddef.h>

/* Splits address into host ("" for all interfaces) and port.  0, or -1
 * with a message in err. */
int listen_split(const char *address, char *host, size_t host_size, char *port,
                 size_t port_size, char *err, size_t errlen);

/* A non-blocking, close-on-exec socket listening on address, or -1 with a
 * message in err. */
int listen_open(const char *address, char *err, size_t errlen);

#endif
