/*
 * test_tls.c - the TLS 1.2 suites the webhook offers (TLS_CIPHERS_TLS12 in
 * webhook/tls.h): OpenSSL knows every name in the list (it drops unknown
 * names silently, so a typo would shrink the offer unseen), and each suite
 * it selects is an AEAD one with an ECDHE key exchange.  What a client
 * sees on the wire is tests/integration/test_command_line_and_tls.py's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tls12_suites_are_ecdhe_aead),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
