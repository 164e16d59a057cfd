/*
 * test_tlsfail.c - why a handshake failed (webhook/tlsfail.h), one row per
 * kind of failure, with what OpenSSL 3.0 reported for it when a real
 * client did it to ota-webhook (its last error's reason, the alert the
 * server sent); the label names and hints; and when a reason gets a log
 * line, on an injected clock.
 */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "row_check.h"

#include "tlsfail.h"

#define NO_ALERT -1
#define RECEIVED(desc) (SSL_AD_REASON_OFFSET + (desc))

static void test_classify(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        tlsfail_facts f;
        tlsfail_reason want;
    } rows[] = {
        /* the issue: a client that does not trust the serving certificate */
        {"curl/python with another CA, TLS 1.2 and 1.3: unknown_ca received",
         {ERR_LIB_SSL, RECEIVED(TLS1_AD_UNKNOWN_CA), NO_ALERT, 0},
         TLSFAIL_CERTIFICATE_UNTRUSTED},
        {"Go (the apiserver), python on a name mismatch: bad_certificate received",
         {ERR_LIB_SSL, RECEIVED(SSL3_AD_BAD_CERTIFICATE), NO_ALERT, 0},
         TLSFAIL_CERTIFICATE_UNTRUSTED},
        {"an expired certificate, as OpenSSL clients say it",
         {ERR_LIB_SSL, RECEIVED(SSL3_AD_CERTIFICATE_EXPIRED), NO_ALERT, 0},
         TLSFAIL_CERTIFICATE_UNTRUSTED},
        {"certificate_unknown received",
         {ERR_LIB_SSL, RECEIVED(SSL3_AD_CERTIFICATE_UNKNOWN), NO_ALERT, 0},
         TLSFAIL_CERTIFICATE_UNTRUSTED},
        {"certificate_revoked received",
         {ERR_LIB_SSL, RECEIVED(SSL3_AD_CERTIFICATE_REVOKED), NO_ALERT, 0},
         TLSFAIL_CERTIFICATE_UNTRUSTED},
        {"unsupported_certificate received",
         {ERR_LIB_SSL, RECEIVED(SSL3_AD_UNSUPPORTED_CERTIFICATE), NO_ALERT, 0},
         TLSFAIL_CERTIFICATE_UNTRUSTED},
        /* --client-ca-file: the alert is ours, not the client's */
        {"no client certificate, TLS 1.2 (handshake_failure sent)",
         {ERR_LIB_SSL, SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE, SSL3_AD_HANDSHAKE_FAILURE, 0},
         TLSFAIL_CLIENT_CERTIFICATE},
        {"no client certificate, TLS 1.3 (certificate_required sent)",
         {ERR_LIB_SSL, SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE, TLS13_AD_CERTIFICATE_REQUIRED, 0},
         TLSFAIL_CLIENT_CERTIFICATE},
        {"a client certificate from another CA (unknown_ca sent, not received)",
         {ERR_LIB_SSL, SSL_R_CERTIFICATE_VERIFY_FAILED, TLS1_AD_UNKNOWN_CA, 0},
         TLSFAIL_CLIENT_CERTIFICATE},
        {"an empty certificate list",
         {ERR_LIB_SSL, SSL_R_NO_CERTIFICATES_RETURNED, SSL3_AD_HANDSHAKE_FAILURE, 0},
         TLSFAIL_CLIENT_CERTIFICATE},
        /* versions and suites */
        {"a TLS 1.0 client (protocol_version sent)",
         {ERR_LIB_SSL, SSL_R_UNSUPPORTED_PROTOCOL, TLS1_AD_PROTOCOL_VERSION, 0},
         TLSFAIL_PROTOCOL_VERSION},
        {"version too low",
         {ERR_LIB_SSL, SSL_R_VERSION_TOO_LOW, TLS1_AD_PROTOCOL_VERSION, 0},
         TLSFAIL_PROTOCOL_VERSION},
        {"a record version that changed under way (an alert sent)",
         {ERR_LIB_SSL, SSL_R_WRONG_VERSION_NUMBER, TLS1_AD_PROTOCOL_VERSION, 0},
         TLSFAIL_PROTOCOL_VERSION},
        {"the client refuses our version",
         {ERR_LIB_SSL, RECEIVED(TLS1_AD_PROTOCOL_VERSION), NO_ALERT, 0},
         TLSFAIL_PROTOCOL_VERSION},
        {"a TLS 1.2 client with CBC suites only (handshake_failure sent)",
         {ERR_LIB_SSL, SSL_R_NO_SHARED_CIPHER, SSL3_AD_HANDSHAKE_FAILURE, 0},
         TLSFAIL_NO_SHARED_CIPHER},
        {"no shared group",
         {ERR_LIB_SSL, SSL_R_NO_SHARED_GROUPS, SSL3_AD_HANDSHAKE_FAILURE, 0},
         TLSFAIL_NO_SHARED_CIPHER},
        {"no shared signature algorithm",
         {ERR_LIB_SSL, SSL_R_NO_SHARED_SIGNATURE_ALGORITHMS, SSL3_AD_HANDSHAKE_FAILURE, 0},
         TLSFAIL_NO_SHARED_CIPHER},
        {"the client finds our choice too weak",
         {ERR_LIB_SSL, RECEIVED(TLS1_AD_INSUFFICIENT_SECURITY), NO_ALERT, 0},
         TLSFAIL_NO_SHARED_CIPHER},
        /* not TLS at all */
        {"curl http:// to the TLS port (GET)",
         {ERR_LIB_SSL, SSL_R_HTTP_REQUEST, NO_ALERT, 0},
         TLSFAIL_PLAIN_HTTP},
        {"a proxy's CONNECT",
         {ERR_LIB_SSL, SSL_R_HTTPS_PROXY_REQUEST, NO_ALERT, 0},
         TLSFAIL_PLAIN_HTTP},
        {"PATCH, text, zero bytes: no alert sent",
         {ERR_LIB_SSL, SSL_R_WRONG_VERSION_NUMBER, NO_ALERT, 0},
         TLSFAIL_NOT_TLS},
        {"unknown protocol", {ERR_LIB_SSL, SSL_R_UNKNOWN_PROTOCOL, NO_ALERT, 0}, TLSFAIL_NOT_TLS},
        /* the client's other alerts, and closes */
        {"the client's handshake_failure",
         {ERR_LIB_SSL, RECEIVED(SSL3_AD_HANDSHAKE_FAILURE), NO_ALERT, 0},
         TLSFAIL_CLIENT_ALERT},
        {"the client's decrypt_error",
         {ERR_LIB_SSL, RECEIVED(TLS1_AD_DECRYPT_ERROR), NO_ALERT, 0},
         TLSFAIL_CLIENT_ALERT},
        {"the client's internal_error",
         {ERR_LIB_SSL, RECEIVED(TLS1_AD_INTERNAL_ERROR), NO_ALERT, 0},
         TLSFAIL_CLIENT_ALERT},
        {"a ClientHello, then the connection closed", {0, 0, NO_ALERT, 1}, TLSFAIL_CLIENT_CLOSED},
        /* the rest */
        {"an alert record before any ClientHello (unexpected_message sent)",
         {ERR_LIB_SSL, SSL_R_UNEXPECTED_MESSAGE, SSL3_AD_UNEXPECTED_MESSAGE, 0},
         TLSFAIL_OTHER},
        {"a reason past the alerts' range",
         {ERR_LIB_SSL, SSL_AD_REASON_OFFSET + 300, NO_ALERT, 0},
         TLSFAIL_OTHER},
        {"another library's error", {ERR_LIB_X509, 1048, NO_ALERT, 0}, TLSFAIL_OTHER},
        {"no error and not closed", {0, 0, NO_ALERT, 0}, TLSFAIL_OTHER},
        {"an error wins over closed",
         {ERR_LIB_SSL, SSL_R_HTTP_REQUEST, NO_ALERT, 1},
         TLSFAIL_PLAIN_HTTP},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        tlsfail_reason got = tlsfail_classify(&rows[i].f);
        ROW_CHECK(rows[i].name, got == rows[i].want, "got %s, want %s", tlsfail_reason_name(got),
                  tlsfail_reason_name(rows[i].want));
    }
}

/* The alert the log names: the client's, never the one we sent. */
static void test_alert_received(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        tlsfail_facts f;
        int want;
    } rows[] = {
        {"unknown_ca received", {ERR_LIB_SSL, RECEIVED(TLS1_AD_UNKNOWN_CA), NO_ALERT, 0}, 48},
        {"close_notify as the reason", {ERR_LIB_SSL, RECEIVED(0), NO_ALERT, 0}, 0},
        {"the last description", {ERR_LIB_SSL, RECEIVED(255), NO_ALERT, 0}, 255},
        {"past the alerts' range", {ERR_LIB_SSL, RECEIVED(256), NO_ALERT, 0}, -1},
        {"one we sent", {ERR_LIB_SSL, SSL_R_CERTIFICATE_VERIFY_FAILED, TLS1_AD_UNKNOWN_CA, 0}, -1},
        {"another library", {ERR_LIB_X509, RECEIVED(TLS1_AD_UNKNOWN_CA), NO_ALERT, 0}, -1},
        {"no error", {0, 0, NO_ALERT, 1}, -1},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        int got = tlsfail_alert_received(&rows[i].f);
        ROW_CHECK(rows[i].name, got == rows[i].want, "got %d, want %d", got, rows[i].want);
    }
}

/* The names are label values: a fixed set, distinct, [a-z_]; every
 * reason has a hint; out of range is "other". */
static void test_names_and_hints(void **state)
{
    (void)state;
    for (int r = 0; r < TLSFAIL_N; r++) {
        const char *name = tlsfail_reason_name((tlsfail_reason)r);
        assert_non_null(name);
        assert_true(name[0] != '\0');
        for (const char *p = name; *p != '\0'; p++)
            assert_true(islower((unsigned char)*p) || *p == '_');
        for (int s = 0; s < r; s++)
            assert_string_not_equal(name, tlsfail_reason_name((tlsfail_reason)s));
        assert_true(strlen(tlsfail_reason_hint((tlsfail_reason)r)) > 10);
    }
    assert_string_equal(tlsfail_reason_name(TLSFAIL_N), "other");
    assert_string_equal(tlsfail_reason_name((tlsfail_reason)-1), "other");
    assert_string_equal(tlsfail_reason_hint(TLSFAIL_N), tlsfail_reason_hint(TLSFAIL_OTHER));
    /* what the operator reads for the case */
    assert_non_null(strstr(tlsfail_reason_hint(TLSFAIL_CERTIFICATE_UNTRUSTED),
                           "the apiserver does not trust this certificate: check the caBundle "
                           "in the webhook configurations matches the CA that signed "
                           "--tls-cert-file"));
}

#define SEC 1000000000ull
#define T0 (5000 * SEC) /* an arbitrary monotonic start */

static void test_say(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        struct {
            uint64_t at_ms; /* since T0; the script ends at a row with want -1 */
            int64_t want;   /* failures the line says, or 0: no line */
        } steps[10];
    } rows[] = {
        {"the first failure is said at once", {{0, 1}, {0, -1}}},
        {"a second within the minute adds no line",
         {{0, 1}, {1, 0}, {30000, 0}, {59999, 0}, {0, -1}}},
        {"a minute after the last line, the next says all since it",
         {{0, 1}, {1000, 0}, {2000, 0}, {60000, 3}, {60001, 0}, {120000, 2}, {0, -1}}},
        {"a failure long after is said at once, and counts only itself",
         {{0, 1}, {3600000, 1}, {3600001, 0}, {0, -1}}},
        {"the minute runs from the last line, not the last failure",
         {{0, 1}, {59000, 0}, {61000, 2}, {119000, 0}, {121000, 2}, {0, -1}}},
        {"a time before the last line says nothing", {{5000, 1}, {0, 0}, {65000, 2}, {0, -1}}},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        tlsfail_said said = {0};
        for (size_t k = 0; k < 10 && rows[i].steps[k].want >= 0; k++) {
            uint64_t got = tlsfail_say(&said, T0 + rows[i].steps[k].at_ms * 1000000ull);
            ROW_CHECK(rows[i].name, got == (uint64_t)rows[i].steps[k].want,
                      "step %zu: got %llu, want %lld", k, (unsigned long long)got,
                      (long long)rows[i].steps[k].want);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classify),
        cmocka_unit_test(test_alert_received),
        cmocka_unit_test(test_names_and_hints),
        cmocka_unit_test(test_say),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
