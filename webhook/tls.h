/*
 * tls.h - the serving certificate, loaded from files and re-loaded when they
 * change (cert-manager and kubelet's secret volumes replace them in place).
 *
 * The main thread polls the files; each reload builds a fresh SSL_CTX and
 * publishes it with a generation number.  Workers pick the new context up
 * for the connections they accept next; connections already open keep the
 * context they were accepted with, so a rotation never drops one.
 *
 * Who keeps a context alive: the store holds one reference to the current
 * context, each worker one to the context it hands to new connections, and
 * each accepted TLS connection one of its own until it closes (conn.c,
 * conn_rec).  The last is needed because libh2o 2.2.5 keeps only a raw
 * SSL_CTX pointer for an accepted connection and calls SSL_new() when its
 * ClientHello arrives, which may be after any number of reloads; once the
 * SSL exists it holds a reference too, but not before.
 */
#ifndef OTA_WEBHOOK_TLS_H
#define OTA_WEBHOOK_TLS_H

#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>

#include <openssl/ssl.h>

#include "metrics.h"

/* The suites offered under TLS 1.2, the one place they are named: the
 * ECDHE suites of Mozilla's "intermediate" configuration (v5.7), all AEAD,
 * in its order.  Its three DHE suites are left out: they need DH parameters
 * we do not load, and Go's crypto/tls (the apiserver) has no DHE at all.
 * TLS 1.3's suites are AEAD by definition and keep OpenSSL's defaults. */
#define TLS_CIPHERS_TLS12                                                                  \
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"                           \
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"                           \
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"

typedef struct tls_store {
    const char *cert_file, *key_file;
    const char *client_ca_file; /* NULL: no client certificate asked */
    int min_version; /* TLS1_2_VERSION or TLS1_3_VERSION */
    void (*info_cb)(const SSL *ssl, int where, int ret); /* set on every context; may be NULL */
    pthread_mutex_t lock;
    SSL_CTX *current;           /* guarded by lock */
    atomic_uint generation;     /* bumped after each publish */
    struct stat loaded[2];      /* cert and key as last loaded */
    struct stat attempted[2];   /* as last tried, to log a bad pair once */
    metrics_counter reloads_ok; /* written by the polling thread only */
    metrics_counter reloads_failed;
    /* The current certificate's notAfter in seconds since 1970 (0: not
     * known), published with it; on /metrics as
     * ota_webhook_certificate_expiration_timestamp_seconds. */
    atomic_llong not_after;
} tls_store;

/* Loads the pair for the first time.  0, or -1 with a message in err.
 * client_ca_file, when not NULL: every handshake must present a client
 * certificate that chains to one of its CAs (PEM), or fails; the file is
 * read again with the pair at each reload. */
int tls_store_init(tls_store *s, const char *cert_file, const char *key_file,
                   const char *client_ca_file, int min_version,
                   void (*info_cb)(const SSL *ssl, int where, int ret), char *err,
                   size_t errlen);

/* The notAfter of cert in seconds since 1970, into *out: 0, or -1 when it
 * has none or it does not convert. */
int tls_cert_not_after(const X509 *cert, long long *out);

/* Re-loads now, whether or not the files changed (SIGHUP). */
void tls_store_reload(tls_store *s);

/* Re-loads if either file changed; keeps the old pair if the new one does
 * not load (a half-written rotation is retried on the next poll). */
void tls_store_poll(tls_store *s);

/* The current context with a reference the caller must SSL_CTX_free, and
 * its generation in *gen. */
SSL_CTX *tls_store_acquire(tls_store *s, unsigned *gen);

static inline unsigned tls_store_generation(tls_store *s)
{
    return atomic_load_explicit(&s->generation, memory_order_acquire);
}

void tls_store_dispose(tls_store *s);

#endif
