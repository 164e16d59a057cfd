/*
 * kube_config.h - where the apiserver is and who we are to it: in-cluster
 * (service-account token, CA, KUBERNETES_SERVICE_HOST/PORT) or a kubeconfig
 * file or a KUBECONFIG list of them (token, client certificate, CA, insecure
 * flag, the current or a chosen context and its namespace).
 *
 * In-cluster tokens are projected and rotated by the kubelet; kube_config
 * only remembers the token's path, and kube_config_token() re-reads it when
 * the file changes, as client-go does.
 */
#ifndef OTA_KUBE_CONFIG_H
#define OTA_KUBE_CONFIG_H

#include <stddef.h>
#include <sys/stat.h>
#include <time.h>

#define KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

typedef struct kube_config {
    char *server;          /* "https://host:port", no trailing slash */
    char *ca_file;         /* PEM file, or NULL */
    char *ca_pem;          /* PEM in memory (certificate-authority-data), or NULL */
    size_t ca_pem_len;
    int insecure;          /* insecure-skip-tls-verify */
    char *token;           /* bearer token, or NULL */
    char *token_file;      /* re-read when it changes, or NULL */
    struct stat token_stat;
    char *client_cert_file, *client_key_file; /* or in memory: */
    char *client_cert_pem, *client_key_pem;
    size_t client_cert_pem_len, client_key_pem_len;
    char *namespace;       /* the context's, or the service account's; NULL if unset */
    char *context;         /* the kubeconfig context used, or NULL in-cluster */
} kube_config;

/* Most files a KUBECONFIG list may name. */
#define KUBE_CONFIG_MAX_FILES 16

/*
 * Reads kubeconfig files as kubectl does and resolves one context.
 *   path      --kubeconfig: that file only, which must exist; or NULL, then
 *   env_list  $KUBECONFIG: a colon-separated list merged as client-go merges
 *             it: the first file that sets current-context, or a cluster,
 *             context or user of a given name, wins; files that do not exist
 *             are skipped; at most KUBE_CONFIG_MAX_FILES files.
 *   context   --context, or NULL for the merged current-context.
 * Each file is at most 1 MiB.  Relative paths in a file (certificate-
 * authority, client-certificate, client-key, tokenFile) are relative to that
 * file's folder.  0, or -1 with a message in err.  Free with kube_config_free.
 */
int kube_config_load(kube_config *c, const char *path, const char *env_list, const char *context,
                     char *err, size_t errlen);

/* kube_config_load(c, path, NULL, NULL, ...): one file, its current context. */
int kube_config_load_file(kube_config *c, const char *path, char *err, size_t errlen);

/* In-cluster: from the environment and sa_dir (KUBE_SA_DIR in a pod). */
int kube_config_load_incluster(kube_config *c, const char *sa_dir, char *err, size_t errlen);

/* The bearer token to send now (re-read from token_file if it changed), or
 * NULL.  Owned by c. */
const char *kube_config_token(kube_config *c);

void kube_config_free(kube_config *c);

#endif
