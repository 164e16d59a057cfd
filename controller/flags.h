/*
 * flags.h - ota-controller's command line: its flags as lib/flagtab rows,
 * parsed by a pure function, and the defaults that depend on where it
 * runs (the Lease's namespace, the replica's identity).  main.c prints
 * what the parse asks for (flagtab_report) and runs.
 */
#ifndef OTA_FLAGS_H
#define OTA_FLAGS_H

#include <stddef.h>

#include "controller.h"
#include "flagtab.h"
#include "log.h"

typedef struct flags {
    const char *kubeconfig; /* NULL: $KUBECONFIG, else in-cluster */
    const char *health_address, *metrics_address;
    double qps;
    int burst;
    /* ctl.leader.namespace and .identity stay NULL unless given: main
     * fills them with flags_lease_namespace and flags_identity */
    controller_config ctl;
    log_level log_level;
    log_format log_format;
} flags;

/* The rows (and --help) of ota-controller. */
extern const flagtab flags_flagtab;

/* Parses argv into *f: flagtab_parse, then the leader-election periods
 * must nest (retry period < renew deadline < lease duration) and
 * --helper-image must be a reference controller/imageref.c reads (the
 * kubelet would refuse it in every Job).  err gets the line to print. */
flagtab_result flags_parse(int argc, char *const *argv, flags *f, char *err, size_t errlen);

/* The namespace the Lease lives in: the flag if given, else the pod's own
 * namespace (sa_dir/namespace, the service account file the kubelet mounts
 * in every pod), else "ota-system" (what --help says).  Never the
 * kubeconfig context's namespace: a replica run out of the cluster with a
 * kubeconfig must contend for the same Lease as those in it.  Returns flag,
 * buf (filled from the file) or the literal. */
const char *flags_lease_namespace(const char *flag, const char *sa_dir, char *buf, size_t len);

/* The replica's identity in the Lease unless --leader-elect-identity
 * says: hostname_pid, as client-go's leader election spells it; into buf,
 * which it returns. */
const char *flags_identity(char *buf, size_t len);

#define FLAGS_DEFAULT_LEASE_NAMESPACE "ota-system"

#endif
