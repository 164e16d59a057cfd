/*
 * tlsfail.c - see tlsfail.h.
 *
 * OpenSSL's reason codes as OpenSSL 3.0 reports them when our server's
 * handshake fails (tests/unit/test_tlsfail.c has one row per code taken
 * from a real handshake of each kind against ota-webhook).
 */
#include "tlsfail.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

/* An alert the client sent about our certificate (RFC 8446 §6.2; Go's
 * crypto/tls, the apiserver's, sends bad_certificate for any verification
 * error, OpenSSL clients unknown_ca for an issuer they do not know). */
static int alert_about_our_certificate(int desc)
{
    switch (desc) {
    case SSL3_AD_BAD_CERTIFICATE:
    case SSL3_AD_UNSUPPORTED_CERTIFICATE:
    case SSL3_AD_CERTIFICATE_REVOKED:
    case SSL3_AD_CERTIFICATE_EXPIRED:
    case SSL3_AD_CERTIFICATE_UNKNOWN:
    case TLS1_AD_UNKNOWN_CA:
        return 1;
    default:
        return 0;
    }
}

static tlsfail_reason alert_received(int desc)
{
    if (alert_about_our_certificate(desc))
        return TLSFAIL_CERTIFICATE_UNTRUSTED;
    if (desc == TLS1_AD_PROTOCOL_VERSION)
        return TLSFAIL_PROTOCOL_VERSION;
    if (desc == TLS1_AD_INSUFFICIENT_SECURITY)
        return TLSFAIL_NO_SHARED_CIPHER;
    return TLSFAIL_CLIENT_ALERT;
}

int tlsfail_alert_received(const tlsfail_facts *f)
{
    /* OpenSSL reports a fatal alert it received as this offset plus the
     * alert's description (ssl3_read_bytes). */
    if (f->lib == ERR_LIB_SSL && f->reason >= SSL_AD_REASON_OFFSET &&
        f->reason < SSL_AD_REASON_OFFSET + 256)
        return f->reason - SSL_AD_REASON_OFFSET;
    return -1;
}

tlsfail_reason tlsfail_classify(const tlsfail_facts *f)
{
    if (f->lib == 0)
        return f->closed ? TLSFAIL_CLIENT_CLOSED : TLSFAIL_OTHER;
    if (f->lib != ERR_LIB_SSL)
        return TLSFAIL_OTHER;
    int alert = tlsfail_alert_received(f);
    if (alert >= 0)
        return alert_received(alert);
    switch (f->reason) {
    /* The record layer recognises these methods in the first record
     * (GET, POST, HEAD, PUT; CONNECT is the proxy form). */
    case SSL_R_HTTP_REQUEST:
    case SSL_R_HTTPS_PROXY_REQUEST:
        return TLSFAIL_PLAIN_HTTP;
    /* In the first record, without an alert sent: the bytes are not TLS
     * (any other method, a binary protocol); after it, a version that
     * changed under way. */
    case SSL_R_WRONG_VERSION_NUMBER:
        return f->alert_sent < 0 ? TLSFAIL_NOT_TLS : TLSFAIL_PROTOCOL_VERSION;
    case SSL_R_UNKNOWN_PROTOCOL:
        return TLSFAIL_NOT_TLS;
    case SSL_R_UNSUPPORTED_PROTOCOL:
    case SSL_R_UNSUPPORTED_SSL_VERSION:
    case SSL_R_VERSION_TOO_LOW:
    case SSL_R_VERSION_TOO_HIGH:
    case SSL_R_WRONG_SSL_VERSION:
    case SSL_R_BAD_PROTOCOL_VERSION_NUMBER:
    case SSL_R_NO_PROTOCOLS_AVAILABLE:
        return TLSFAIL_PROTOCOL_VERSION;
    case SSL_R_NO_SHARED_CIPHER:
    case SSL_R_NO_SHARED_GROUPS:
    case SSL_R_NO_SHARED_SIGNATURE_ALGORITHMS:
    case SSL_R_NO_SUITABLE_SIGNATURE_ALGORITHM:
        return TLSFAIL_NO_SHARED_CIPHER;
    case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
    case SSL_R_NO_CERTIFICATES_RETURNED:
    case SSL_R_CERTIFICATE_VERIFY_FAILED:
        return TLSFAIL_CLIENT_CERTIFICATE;
    default:
        return TLSFAIL_OTHER;
    }
}

static const struct {
    const char *name, *hint;
} reasons[TLSFAIL_N] = {
    [TLSFAIL_CERTIFICATE_UNTRUSTED] =
        {"certificate_untrusted",
         "the apiserver does not trust this certificate: check the caBundle in the webhook "
         "configurations matches the CA that signed --tls-cert-file, and that the certificate "
         "has not expired (ota_webhook_certificate_expiration_timestamp_seconds)"},
    [TLSFAIL_CLIENT_CERTIFICATE] =
        {"client_certificate",
         "the client presented no certificate, or one not from the CAs of --client-ca-file: "
         "check the apiserver's admission configuration (docs/operations.md, \"Client "
         "certificates\")"},
    [TLSFAIL_PROTOCOL_VERSION] = {"protocol_version",
                                  "the client and this server have no TLS version in common: "
                                  "check --tls-min-version against what the client offers"},
    [TLSFAIL_NO_SHARED_CIPHER] =
        {"no_shared_cipher",
         "the client offers no cipher suite this server accepts: under TLS 1.2 it must offer "
         "ECDHE with AES-GCM or ChaCha20-Poly1305 (docs/DECISIONS.md, \"TLS 1.2 offers AEAD "
         "suites only\")"},
    [TLSFAIL_PLAIN_HTTP] = {"plain_http",
                            "a client sent plain HTTP to the TLS port: it must use https"},
    [TLSFAIL_NOT_TLS] = {"not_tls",
                         "a client sent bytes that are not TLS to the TLS port: check what "
                         "connects to it (peer)"},
    [TLSFAIL_CLIENT_ALERT] = {"client_alert",
                              "the client ended the handshake with an alert (alert): see its "
                              "own log for why"},
    [TLSFAIL_CLIENT_CLOSED] = {"client_closed",
                               "the client closed the connection during the handshake without "
                               "an alert: a client that gave up, or a probe that does not "
                               "finish TLS"},
    [TLSFAIL_OTHER] = {"other", "OpenSSL's reason is in detail"},
};

const char *tlsfail_reason_name(tlsfail_reason r)
{
    return (unsigned)r < TLSFAIL_N ? reasons[r].name : reasons[TLSFAIL_OTHER].name;
}

const char *tlsfail_reason_hint(tlsfail_reason r)
{
    return (unsigned)r < TLSFAIL_N ? reasons[r].hint : reasons[TLSFAIL_OTHER].hint;
}

uint64_t tlsfail_say(tlsfail_said *said, uint64_t now)
{
    said->unsaid++;
    /* now before the last line (a caller's clock mix-up) is within the minute */
    if (said->ever && (now < said->at || now - said->at < TLSFAIL_SAY_EVERY_NS))
        return 0;
    uint64_t n = said->unsaid;
    said->ever = 1;
    said->at = now;
    said->unsaid = 0;
    return n;
}
