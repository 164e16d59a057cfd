/*
 * tlsfail.h - why a TLS handshake on the admission port failed, and when
 * to say so in the log; pure functions.
 *
 * An apiserver whose caBundle does not match the serving certificate
 * refuses every write with an x509 error, and before this module the
 * webhook saw nothing of it (issue 19, "An untrusted webhook").  conn.c
 * gathers what OpenSSL says about a handshake that failed (its last error
 * and the alert we sent, from the info callback) or that a client closed
 * mid-handshake, and asks tlsfail_classify() for one of a fixed set of
 * reasons: the `reason` label of ota_webhook_tls_handshake_failures_total,
 * so the label set is bounded whatever a client sends.  tlsfail_say()
 * decides when a reason gets a log line: the first failure at once, then
 * at most one line a minute, each saying how many failures it stands for.
 *
 * What is not a failure here: a connection the server cuts in its
 * handshake (--handshake-timeout-seconds, or evicted on a full port) is
 * counted once, by ota_webhook_connections_cut_total; a connection that
 * closes before sending any byte never started TLS (a TCP probe).  Why
 * these reasons: docs/DECISIONS.md "Handshake failures, by reason".
 */
#ifndef OTA_WEBHOOK_TLSFAIL_H
#define OTA_WEBHOOK_TLSFAIL_H

#include <stdint.h>

typedef enum tlsfail_reason {
    TLSFAIL_CERTIFICATE_UNTRUSTED, /* the client refused our certificate (its alert) */
    TLSFAIL_CLIENT_CERTIFICATE,    /* --client-ca-file: none presented, or not from those CAs */
    TLSFAIL_PROTOCOL_VERSION,      /* no TLS version in common */
    TLSFAIL_NO_SHARED_CIPHER,      /* no suite (or group, or signature algorithm) in common */
    TLSFAIL_PLAIN_HTTP,            /* an HTTP request on the TLS port */
    TLSFAIL_NOT_TLS,               /* other bytes that are not a TLS record */
    TLSFAIL_CLIENT_ALERT,          /* the client ended the handshake with another alert */
    TLSFAIL_CLIENT_CLOSED,         /* the client closed mid-handshake, without an alert */
    TLSFAIL_OTHER,                 /* any other error OpenSSL reports */
    TLSFAIL_N
} tlsfail_reason;

/* What the server knows of a handshake that did not complete. */
typedef struct tlsfail_facts {
    int lib;        /* ERR_GET_LIB of OpenSSL's last error as the handshake failed; 0: none */
    int reason;     /* ERR_GET_REASON of it (a received alert is SSL_AD_REASON_OFFSET + its
                     * description) */
    int alert_sent; /* the fatal alert the server sent (its description), or -1: none */
    int closed;     /* no error: the client closed the connection mid-handshake */
} tlsfail_facts;

/* The reason for a failed handshake. */
tlsfail_reason tlsfail_classify(const tlsfail_facts *f);

/* The description of the fatal alert the client sent (SSL3_AD_*,
 * TLS1_AD_*), or -1 when the failure is not one. */
int tlsfail_alert_received(const tlsfail_facts *f);

/* The reason's label value ("certificate_untrusted", ...), lower case and
 * underscores; "other" for a value out of range. */
const char *tlsfail_reason_name(tlsfail_reason r);

/* What an operator should do about the reason: the log line's hint. */
const char *tlsfail_reason_hint(tlsfail_reason r);

/* A reason that goes on failing is said again at most this often. */
#define TLSFAIL_SAY_EVERY_NS (60ull * 1000000000ull)

/* What has been said of one reason. */
typedef struct tlsfail_said {
    int ever;        /* a line was said */
    uint64_t at;     /* when (monotonic ns) */
    uint64_t unsaid; /* failures since then that no line counted */
} tlsfail_said;

/* One failure of a reason at now (monotonic ns): how many failures the
 * line to log now stands for (those since the last line, this one
 * included), or 0 when no line is due.  The first failure is said at once,
 * the next line at least TLSFAIL_SAY_EVERY_NS after the previous one.
 * Updates *said. */
uint64_t tlsfail_say(tlsfail_said *said, uint64_t now);

#endif
