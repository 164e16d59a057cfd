/*
 * tls.c - see tls.h.
 */
#include "tls.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <h2o.h>
#include <openssl/err.h>

#include "log.h"

static void openssl_error(char *err, size_t errlen, const char *what, const char *file)
{
    unsigned long e = ERR_get_error();
    char detail[256] = "unknown error";
    if (e != 0)
        ERR_error_string_n(e, detail, sizeof(detail));
    ERR_clear_error();
    snprintf(err, errlen, "%s %s: %s", what, file, detail);
}

/* Defence in depth (docs/operations.md "Client certificates"): only a
 * client with a certificate from client_ca_file completes a handshake.
 * The apiserver presents one to a webhook when its AdmissionConfiguration
 * names a kubeconfig with a client certificate for the service's name. */
static int require_client_cert(SSL_CTX *ctx, const char *ca_file, char *err, size_t errlen)
{
    STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(ca_file);
    if (names == NULL) {
        openssl_error(err, errlen, "cannot read client CA certificates from", ca_file);
        return -1;
    }
    /* the names go in the CertificateRequest, so a client picks its cert */
    SSL_CTX_set_client_CA_list(ctx, names);
    if (SSL_CTX_load_verify_locations(ctx, ca_file, NULL) != 1) {
        openssl_error(err, errlen, "cannot load client CA certificates from", ca_file);
        return -1;
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    /* Sessions resumed with verified peers need a context id. */
    static const unsigned char sid[] = "ota-webhook";
    SSL_CTX_set_session_id_context(ctx, sid, sizeof(sid) - 1);
    return 0;
}

static SSL_CTX *build_ctx(tls_store *s, char *err, size_t errlen)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == NULL) {
        snprintf(err, errlen, "SSL_CTX_new failed");
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, s->min_version);
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION |
                                 SSL_OP_CIPHER_SERVER_PREFERENCE);
    if (SSL_CTX_set_cipher_list(ctx, TLS_CIPHERS_TLS12) != 1) {
        openssl_error(err, errlen, "cannot set the TLS 1.2 cipher list for", s->cert_file);
        goto fail;
    }
    if (SSL_CTX_use_certificate_chain_file(ctx, s->cert_file) != 1) {
        openssl_error(err, errlen, "cannot load certificate", s->cert_file);
        goto fail;
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, s->key_file, SSL_FILETYPE_PEM) != 1) {
        openssl_error(err, errlen, "cannot load private key", s->key_file);
        goto fail;
    }
    if (SSL_CTX_check_private_key(ctx) != 1) {
        openssl_error(err, errlen, "private key does not match certificate", s->cert_file);
        goto fail;
    }
    if (s->client_ca_file != NULL && require_client_cert(ctx, s->client_ca_file, err, errlen) != 0)
        goto fail;
    /* No ALPN: a client speaks HTTP/1.1, as the apiserver does, and never
     * HTTP/2 (docs/DECISIONS.md "No HTTP/2"). */
    if (s->info_cb != NULL)
        SSL_CTX_set_info_callback(ctx, s->info_cb);
    return ctx;
fail:
    SSL_CTX_free(ctx);
    return NULL;
}

int tls_cert_not_after(const X509 *cert, long long *out)
{
    const ASN1_TIME *t = cert != NULL ? X509_get0_notAfter(cert) : NULL;
    struct tm tm;
    if (t == NULL || ASN1_TIME_to_tm(t, &tm) != 1)
        return -1;
    /* ASN1_TIME_to_tm gives UTC; timegm is its inverse, with no zone */
    time_t secs = timegm(&tm);
    if (secs == (time_t)-1)
        return -1;
    *out = (long long)secs;
    return 0;
}

/* What the gauge says of ctx's certificate: its notAfter, or 0. */
static long long not_after_of(SSL_CTX *ctx)
{
    long long secs = 0;
    if (tls_cert_not_after(SSL_CTX_get0_certificate(ctx), &secs) != 0)
        secs = 0;
    return secs;
}

static int same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

int tls_store_init(tls_store *s, const char *cert_file, const char *key_file,
                   const char *client_ca_file, int min_version,
                   void (*info_cb)(const SSL *ssl, int where, int ret), char *err,
                   size_t errlen)
{
    memset(s, 0, sizeof(*s));
    s->info_cb = info_cb;
    s->cert_file = cert_file;
    s->key_file = key_file;
    s->client_ca_file = client_ca_file;
    s->min_version = min_version;
    pthread_mutex_init(&s->lock, NULL);
    /* stat before reading: a change in between is then seen by the next poll */
    if (stat(cert_file, &s->loaded[0]) != 0 || stat(key_file, &s->loaded[1]) != 0) {
        snprintf(err, errlen, "cannot stat %s or %s: %s", cert_file, key_file, strerror(errno));
        return -1;
    }
    s->current = build_ctx(s, err, errlen);
    if (s->current == NULL)
        return -1;
    memcpy(s->attempted, s->loaded, sizeof(s->loaded));
    atomic_store(&s->not_after, not_after_of(s->current));
    atomic_store(&s->generation, 1);
    return 0;
}

static void reload(tls_store *s, int force)
{
    struct stat now[2];
    if (stat(s->cert_file, &now[0]) != 0 || stat(s->key_file, &now[1]) != 0)
        return; /* mid-rotation: a file is briefly missing */
    if (!force && same_file(&now[0], &s->loaded[0]) && same_file(&now[1], &s->loaded[1]))
        return;
    int retry = !force && same_file(&now[0], &s->attempted[0]) &&
                same_file(&now[1], &s->attempted[1]);
    memcpy(s->attempted, now, sizeof(now));
    char err[512];
    SSL_CTX *ctx = build_ctx(s, err, sizeof(err));
    if (ctx == NULL) {
        if (!retry) {
            metrics_add(&s->reloads_failed, 1);
            log_msg(LOG_WARN, "certificate reload failed, keeping the previous one", "%s", err);
        }
        return;
    }
    long long not_after = not_after_of(ctx);
    pthread_mutex_lock(&s->lock);
    SSL_CTX *old = s->current;
    s->current = ctx;
    atomic_store(&s->not_after, not_after);
    atomic_fetch_add_explicit(&s->generation, 1, memory_order_release);
    pthread_mutex_unlock(&s->lock);
    SSL_CTX_free(old); /* workers and accepted connections hold their own references */
    memcpy(s->loaded, now, sizeof(now));
    metrics_add(&s->reloads_ok, 1);
    log_msg(LOG_INFO, "certificate reloaded", "%s", s->cert_file);
}

void tls_store_poll(tls_store *s)
{
    reload(s, 0);
}

void tls_store_reload(tls_store *s)
{
    reload(s, 1);
}

SSL_CTX *tls_store_acquire(tls_store *s, unsigned *gen)
{
    pthread_mutex_lock(&s->lock);
    SSL_CTX *ctx = s->current;
    SSL_CTX_up_ref(ctx);
    *gen = atomic_load_explicit(&s->generation, memory_order_relaxed);
    pthread_mutex_unlock(&s->lock);
    return ctx;
}

void tls_store_dispose(tls_store *s)
{
    SSL_CTX_free(s->current);
    s->current = NULL;
    pthread_mutex_destroy(&s->lock);
}
