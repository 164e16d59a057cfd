/*
 * target.h - the pod named on kubectl-ota's command line and its DaemonSet,
 * read from the apiserver: what pull, status and upgrade act on.
 */
#ifndef OTA_CLI_TARGET_H
#define OTA_CLI_TARGET_H

#include <stddef.h>

#include "app.h"
#include "podview.h"

typedef struct cli_target {
    cli_pod *pod;
    int pod_forbidden; /* the GET of the pod answered 403 (and was not said: see load) */
    char ds_name[CLI_NAME_MAX + 1];
    char ds_uid[128];
} cli_target;

/* Reads the pod and checks it belongs to an OTA DaemonSet (reading the
 * DaemonSet when the identity may; cli_ota_of).  0, or the exit code after
 * printing why, except that a 403 on the pod itself with quiet_forbidden
 * sets pod_forbidden and returns CLI_EXIT_DENIED unsaid; t is freed with
 * cli_target_free either way. */
int cli_target_load(cli_app *a, const char *name, cli_target *t, int quiet_forbidden);
void cli_target_free(cli_target *t);

/* The pod named on the command line, its state and target hash: what pull
 * and upgrade decide from.  On failure t is freed and the exit code is
 * returned. */
int cli_target_decidable(cli_app *a, cli_target *t, ota_state *s, char *hash, size_t size,
                         int quiet_forbidden);

/* Its node, "<no node>" when unscheduled. */
const char *cli_target_node(const cli_target *t);
/* The target hash as a C string made safe to print ("" when unknown). */
const char *cli_target_hash(const cli_target *t, char *buf, size_t size);

/* Says the pod needs no upgrade; returns CLI_EXIT_NO_UPGRADE. */
int cli_no_upgrade(const cli_app *a);

#endif
