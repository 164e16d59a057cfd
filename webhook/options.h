/*
 * options.h - ota-webhook's command line: its flags as lib/flagtab rows,
 * parsed into the server's configuration by a pure function.  main.c
 * prints what the parse asks for (flagtab_report) and runs.
 */
#ifndef OTA_WEBHOOK_OPTIONS_H
#define OTA_WEBHOOK_OPTIONS_H

#include <stddef.h>

#include "flagtab.h"
#include "log.h"
#include "server.h"

typedef struct options {
    server_config server; /* version and commit are main's to set */
    const char *cert_file, *key_file;
    const char *client_ca_file; /* NULL: no client certificate asked */
    int tls_min_version; /* TLS1_2_VERSION or TLS1_3_VERSION */
    unsigned cert_poll_ms;
    log_level log_level;
    log_format log_format;
} options;

/* The rows (and --help) of ota-webhook. */
extern const flagtab options_flagtab;

/* Parses argv into *o: flagtab_parse, then --tls-cert-file and
 * --tls-private-key-file are required (a usage error without them).
 * cpus is --threads' default.  err gets the line to print. */
flagtab_result options_parse(int argc, char *const *argv, int cpus, options *o, char *err,
                             size_t errlen);

#endif
