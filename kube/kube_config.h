/*
 * kube_config.h - where the apiserver is and who we are to it: in-cluster
 * (service-account token, CA, KUBERNETES_SERVICE_HOST/PORT) or a kubeconfig
 * file (token, client certificate, CA, insecure flag, current context).
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
    char *namespace;       /* the context's, or the service account's */
} kube_config;

/* Reads a kubeconfig file (at most 1 MiB) and resolves its current
 * context.  0, or -1 with a message in err.  Free with kube_config_free. */
int kube_config_load_file(kube_config *c, const char *path, char *err, size_t errlen);

/* In-cluster: from the environment and sa_dir (KUBE_SA_DIR in a pod). */
int kube_config_load_incluster(kube_config *c, const char *sa_dir, char *err, size_t errlen);

/* The bearer token to send now (re-read from token_file if it changed), or
 * NULL.  Owned by c. */
const char *kube_config_token(kube_config *c);

void kube_config_free(kube_config *c);

#endif
