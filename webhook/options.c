/*
 * options.c - see options.h.  One row per flag; --help is written from
 * these rows, so the text right of each name and the defaults are here
 * and nowhere else.
 */
#include "options.h"

#include <openssl/ssl.h>

#include "errmsg.h"
#include "ota_names.h"

#define AT(field) FLAGTAB_FIELD(options, field)

static const flagtab_choice tls_versions[] = {
    {"VersionTLS12", TLS1_2_VERSION},
    {"VersionTLS13", TLS1_3_VERSION},
    {"1.2", TLS1_2_VERSION},
    {"1.3", TLS1_3_VERSION},
    {NULL, 0},
};

static const flagtab_row rows[] = {
    {"tls-cert-file", FLAGTAB_STRING, "FILE", NULL,
     "serving certificate chain (PEM); re-read when it changes", AT(cert_file)},
    {"tls-private-key-file", FLAGTAB_STRING, "FILE", NULL, "its private key (PEM)", AT(key_file)},
    {"client-ca-file", FLAGTAB_STRING, "FILE", NULL,
     "require a client certificate chained to these CAs\n"
     "(PEM; docs/operations.md); default: none asked",
     AT(client_ca_file), .nonempty = 1},
    {"tls-min-version", FLAGTAB_CHOICE, "V", "VersionTLS12", "{} (default) or VersionTLS13",
     AT(tls_min_version), .choices = tls_versions},
    {"bind-address", FLAGTAB_STRING, "HOST:PORT", ":9443", "admission port",
     AT(server.bind_address)},
    {"health-probe-bind-address", FLAGTAB_STRING, "H:P", ":8081",
     "plain HTTP /livez, /healthz, /readyz", AT(server.health_address)},
    {"metrics-bind-address", FLAGTAB_STRING, "H:P", ":8080", "plain HTTP /metrics",
     AT(server.metrics_address)},
    {"threads", FLAGTAB_WHOLE, "N", NULL, "event loops (default: number of CPUs)",
     AT(server.threads), .min = 1, .max = 256},
    {"max-request-bytes", FLAGTAB_WHOLE, "N", "7340032",
     "larger bodies get 413 (default {}: object and\noldObject of 3 MiB each, and the envelope)",
     AT(server.max_request_bytes), .min = 1024, .max = 1u << 30},
    {"controller-username", FLAGTAB_STRING, "NAME", OTA_DEFAULT_CONTROLLER_USERNAME,
     "the controller's identity (default\n{})", AT(server.controller_username),
     .nonempty = 1},
    {"cert-poll-interval-ms", FLAGTAB_WHOLE, "N", "1000",
     "how often the certificate files are checked", AT(cert_poll_ms), .min = 10, .max = 3600000},
    {"request-read-timeout-seconds", FLAGTAB_WHOLE, "N", "10",
     "a stalled request is cut", AT(server.read_timeout_ms), .min = 1, .max = 3600,
     .unit = 1000},
    {"handshake-timeout-seconds", FLAGTAB_WHOLE, "N", "3",
     "a TLS handshake not done within N seconds of accept\n"
     "is cut; on a full port the oldest unfinished one\n"
     "gives its slot to a new connection",
     AT(server.handshake_timeout_ms), .min = 1, .max = 60, .unit = 1000},
    {"upload-grace-seconds", FLAGTAB_WHOLE, "N", "5",
     "a request arriving gets N seconds, plus one second per\n"
     "--upload-min-bytes-per-second bytes in; slower is\n"
     "cut with 408",
     AT(server.upload_grace_ms), .min = 1, .max = 3600, .unit = 1000},
    {"upload-min-bytes-per-second", FLAGTAB_WHOLE, "N", "16384", "0: no minimum rate",
     AT(server.upload_min_rate), .min = 0, .max = 1u << 30},
    {"shutdown-grace-seconds", FLAGTAB_WHOLE, "N", "25", "drain waits at most this long",
     AT(server.shutdown_grace_ms), .min = 0, .max = 3600, .unit = 1000},
    {"max-connections", FLAGTAB_WHOLE, "N", "1024",
     "admission connections per process; more are closed at\n"
     "accept, unless an unfinished handshake gives way\n(default {}; lowered to fit RLIMIT_NOFILE)",
     AT(server.max_connections), .min = 1, .max = 1u << 20},
    {"max-header-bytes", FLAGTAB_WHOLE, "N", "65536",
     "request line + headers; a longer head closes the\nconnection",
     AT(server.max_header_bytes), .min = 1024, .max = 1u << 20},
    {"max-buffered-bytes", FLAGTAB_WHOLE, "N", "67108864",
     "request input buffered by all connections together; over\n"
     "it, requests still arriving wait, and the oldest one\narriving for over 1 s is cut (503)",
     AT(server.max_buffered_bytes), .min = 1u << 16, .max = 1ull << 40},
    {"write-timeout-seconds", FLAGTAB_WHOLE, "N", "10",
     "a reply not wholly sent within N seconds is cut\n", AT(server.write_timeout_ms), .min = 1,
     .max = 3600, .unit = 1000},
    FLAGTAB_COMMON_ROWS(options, log_level, log_format),
};

const flagtab options_flagtab = {
    .program = "ota-webhook",
    .synopsis =
        "usage: ota-webhook --tls-cert-file FILE --tls-private-key-file FILE [options]\n"
        "\n"
        "The ota-prepull admission webhook: POST /mutate and POST /validate over TLS.\n"
        "\n",
    .epilogue =
        "\n"
        "Memory ceiling with the defaults (docs/DECISIONS.md \"Webhook limits\"): about\n"
        "max-buffered-bytes + threads x 2 x max-request-bytes + max-connections x 200 KiB,\n"
        "i.e. 64 + 28 + 200 = ~300 MiB for 2 threads.\n"
        "\n"
        "Signals: SIGTERM/SIGINT drain and exit 0; SIGHUP re-reads the certificate pair.\n",
    .rows = rows,
    .n_rows = sizeof(rows) / sizeof(rows[0]),
};

flagtab_result options_parse(int argc, char *const *argv, int cpus, options *o, char *err,
                             size_t errlen)
{
    *o = (options){.server = {.threads = cpus > 0 ? cpus : 1}};
    flagtab_result r = flagtab_parse(&options_flagtab, argc, argv, o, err, errlen);
    if (r == FLAGTAB_RUN && (o->cert_file == NULL || o->key_file == NULL)) {
        errmsg_set(err, errlen,
                   "ota-webhook: --tls-cert-file and --tls-private-key-file are required");
        return FLAGTAB_BAD_USAGE;
    }
    return r;
}
