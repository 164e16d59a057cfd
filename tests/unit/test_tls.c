/*
 * test_tls.c - the TLS 1.2 suites the webhook offers (TLS_CIPHERS_TLS12 in
 * webhook/tls.h): OpenSSL knows every name in the list (it drops unknown
 * names silently, so a typo would shrink the offer unseen), and each suite
 * it selects is an AEAD one with an ECDHE key exchange.  What a client
 * sees on the wire is tests/integration/test_command_line_and_tls.py's.
 * And the serving certificate's notAfter as the expiry gauge says it
 * (tls_cert_not_after), in both encodings X.509 uses for it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/x509.h>

#include "row_check.h"

#include "tls.h"

static void test_tls12_suites_are_ecdhe_aead(void **state)
{
    (void)state;
    size_t names = 1;
    for (const char *p = TLS_CIPHERS_TLS12; *p != '\0'; p++)
        names += *p == ':';
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    assert_non_null(ctx);
    assert_int_equal(SSL_CTX_set_cipher_list(ctx, TLS_CIPHERS_TLS12), 1);
    STACK_OF(SSL_CIPHER) *list = SSL_CTX_get_ciphers(ctx);
    size_t tls12 = 0;
    for (int i = 0; i < sk_SSL_CIPHER_num(list); i++) {
        const SSL_CIPHER *c = sk_SSL_CIPHER_value(list, i);
        const char *name = SSL_CIPHER_get_name(c);
        if (SSL_CIPHER_get_kx_nid(c) == NID_kx_any)
            continue; /* TLS 1.3's own suites, AEAD by definition */
        tls12++;
        assert_true(SSL_CIPHER_is_aead(c));
        assert_int_equal(SSL_CIPHER_get_kx_nid(c), NID_kx_ecdhe);
        assert_non_null(strstr(TLS_CIPHERS_TLS12, name));
    }
    assert_int_equal(tls12, names);
    SSL_CTX_free(ctx);
}

static void test_not_after(void **state)
{
    (void)state;
    static const struct {
        const char *name, *when; /* as X.509 would carry it; NULL: no certificate */
        int ok;
        long long want;
    } rows[] = {
        {"UTCTime, before 2050", "20301231235959Z", 0, 1924991999LL},
        {"GeneralizedTime, from 2050", "20510101000000Z", 0, 2556144000LL},
        {"last century", "19991231235959Z", 0, 946684799LL},
        {"a leap day", "20280229120000Z", 0, 1835438400LL},
        {"no certificate", NULL, -1, 0},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        X509 *x = NULL;
        if (rows[i].when != NULL) {
            x = X509_new();
            assert_non_null(x);
            assert_int_equal(ASN1_TIME_set_string_X509(X509_getm_notAfter(x), rows[i].when), 1);
        }
        long long got = 0;
        int rc = tls_cert_not_after(x, &got);
        ROW_CHECK(rows[i].name, rc == rows[i].ok, "returned %d", rc);
        if (rc == 0)
            ROW_CHECK(rows[i].name, got == rows[i].want, "got %lld, want %lld", got, rows[i].want);
        X509_free(x);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tls12_suites_are_ecdhe_aead),
        cmocka_unit_test(test_not_after),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
