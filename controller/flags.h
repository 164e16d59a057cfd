/*
 * flags.h - ota-controller's flag defaults that depend on where it runs.
 */
#ifndef OTA_FLAGS_H
#define OTA_FLAGS_H

#include <stddef.h>

/* The namespace the Lease lives in: the flag if given, else the pod's own
 * namespace (sa_dir/namespace, the service account file the kubelet mounts
 * in every pod), else "ota-system" (what --help says).  Never the
 * kubeconfig context's namespace: a replica run out of the cluster with a
 * kubeconfig must contend for the same Lease as those in it.  Returns flag,
 * buf (filled from the file) or the literal. */
const char *flags_lease_namespace(const char *flag, const char *sa_dir, char *buf, size_t len);

#define FLAGS_DEFAULT_LEASE_NAMESPACE "ota-system"

#endif
