/*
 * webhook_ref.c - the reference servers of bench/webhook.py: what an
 * admission webhook costs at the least, with ota-webhook's own h2o and
 * OpenSSL setup (webhook/server.c, webhook/tls.c).
 *
 * Built twice (Makefile, bench-webhook):
 *   REF_PARSE=0  the transport ceiling: TLS, HTTP/1.1, the body read whole
 *                (h2o buffers it, as it does for ota-webhook), a fixed
 *                AdmissionReview answered;
 *   REF_PARSE=1  the parse ceiling: the same plus one yajl callback parse
 *                of the body with callbacks that do nothing.
 * One event loop on the calling thread (ota-webhook --threads 1), accept4
 * and TCP_NODELAY as ota-webhook does, the same SSL_CTX options and
 * TLS 1.2 floor, HTTP/1.1 only (no ALPN).  It binds 127.0.0.1 on a port the
 * kernel picks, prints "port N" on stdout and serves until killed.
 *
 * Not a server to deploy: no limits, no drain, no logging.
 */
#include <netinet/in.h>
#include <signal.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <h2o.h>
#include <openssl/ssl.h>
#include "bench_util.h"

#ifndef REF_PARSE
#define REF_PARSE 0
#endif

static h2o_globalconf_t config;
static h2o_context_t ctx;
static h2o_accept_ctx_t accept_ctx;

static const char answer[] =
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"response\":"
    "{\"uid\":\"2b7e4c1a-9d3f-4e8b-a1c6-5f0d2e9b8a71\",\"allowed\":true}}";

static int on_req(h2o_handler_t *self, h2o_req_t *req)
{
    (void)self;
    static h2o_generator_t generator = {NULL, NULL};
    int ok = 1;
#if REF_PARSE
    ok = bench_yajl_parse(req->entity.base, req->entity.len, &bench_empty_callbacks, NULL) == 0;
#endif
    req->res.status = ok ? 200 : 400;
    req->res.reason = ok ? "OK" : "Bad Request";
    req->res.content_length = sizeof(answer) - 1;
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL,
                   H2O_STRLIT("application/json"));
    h2o_start_response(req, &generator);
    h2o_iovec_t buf = h2o_iovec_init(answer, sizeof(answer) - 1);
    h2o_send(req, &buf, 1, H2O_SEND_STATE_FINAL);
    return 0;
}

static void on_accept(h2o_socket_t *listener, const char *err)
{
    if (err != NULL)
        return;
    for (int i = 0; i < 16; i++) {
        int fd = accept4(h2o_socket_get_fd(listener), NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        h2o_socket_t *sock =
            h2o_evloop_socket_create(ctx.loop, fd, H2O_SOCKET_FLAG_IS_ACCEPTED_CONNECTION);
        h2o_accept(&accept_ctx, sock);
    }
}

static SSL_CTX *tls_ctx(const char *cert, const char *key)
{
    SSL_CTX *c = SSL_CTX_new(TLS_server_method());
    if (c == NULL)
        return NULL;
    SSL_CTX_set_min_proto_version(c, TLS1_2_VERSION);
    SSL_CTX_set_options(c, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION |
                               SSL_OP_CIPHER_SERVER_PREFERENCE);
    if (SSL_CTX_use_certificate_chain_file(c, cert) != 1 ||
        SSL_CTX_use_PrivateKey_file(c, key, SSL_FILETYPE_PEM) != 1) {
        SSL_CTX_free(c);
        return NULL;
    }
    return c;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s CERT KEY\n", argv[0]);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN); /* a client that closes first, as ota-webhook does */
    SSL_CTX *ssl = tls_ctx(argv[1], argv[2]);
    if (ssl == NULL) {
        fprintf(stderr, "cannot load %s / %s\n", argv[1], argv[2]);
        return 1;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t salen = sizeof(sa);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 128) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &salen) != 0) {
        perror("listen");
        return 1;
    }

    h2o_config_init(&config);
    config.server_name = h2o_iovec_init(H2O_STRLIT("webhook-ref"));
    h2o_hostconf_t *host = h2o_config_register_host(&config, h2o_iovec_init(H2O_STRLIT("ref")), 65535);
    h2o_pathconf_t *path = h2o_config_register_path(host, "/", 0);
    h2o_create_handler(path, sizeof(h2o_handler_t))->on_req = on_req;
    h2o_context_init(&ctx, h2o_evloop_create(), &config);
    accept_ctx.ctx = &ctx;
    accept_ctx.hosts = config.hosts;
    accept_ctx.ssl_ctx = ssl;

    h2o_socket_t *listener = h2o_evloop_socket_create(ctx.loop, fd, H2O_SOCKET_FLAG_DONT_READ);
    h2o_socket_read_start(listener, on_accept);
    printf("port %d\n", ntohs(sa.sin_port));
    fflush(stdout);
    for (;;)
        h2o_evloop_run(ctx.loop, INT32_MAX);
}
