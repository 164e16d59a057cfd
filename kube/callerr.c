/*
 * callerr.c - see callerr.h.
 */
#include "callerr.h"

#include <string.h>

callerr_cause callerr_classify(long status, const char *error)
{
    if (status >= 200 && status < 300)
        return CALLERR_NONE;
    if (status == 401)
        return CALLERR_UNAUTHORIZED;
    /* No answer: curl's words for a certificate that fails (CURLE_PEER_FAILED_VERIFICATION:
     * "SSL certificate problem: unable to get local issuer certificate",
     * "... self-signed certificate in certificate chain", "SSL: no
     * alternative certificate subject name matches target host name"), or
     * a client certificate it cannot use or the server refuses. */
    if (status == 0 && error != NULL &&
        (strstr(error, "certificate") != NULL || strstr(error, "x509") != NULL ||
         strstr(error, "SSL peer") != NULL))
        return CALLERR_TLS;
    return CALLERR_OTHER;
}

int callerr_is_config(callerr_cause c)
{
    return c == CALLERR_UNAUTHORIZED || c == CALLERR_TLS;
}

const char *callerr_hint(callerr_cause c)
{
    switch (c) {
    case CALLERR_UNAUTHORIZED:
        return "check the token or client certificate of the kubeconfig (or the mounted "
               "service-account token): the apiserver does not accept it";
    case CALLERR_TLS:
        return "check the CA (certificate-authority of the kubeconfig, or the mounted ca.crt) "
               "and the server name: the apiserver's certificate does not verify";
    case CALLERR_NONE:
    case CALLERR_OTHER:
        break;
    }
    return "";
}

int callerr_say_now(callerr_state *st, callerr_cause c)
{
    if (c == CALLERR_NONE) {
        st->said = CALLERR_NONE;
        return 0;
    }
    if (!callerr_is_config(c) || st->said == c)
        return 0;
    st->said = c;
    return 1;
}
