/*
 * kube_config.c - see kube_config.h.  The kubeconfig is YAML, read with
 * libyaml's document API; nothing else in the controller touches YAML.
 */
#include "kube_config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "base64.h"

#define KUBECONFIG_MAX_BYTES (1u << 20)
#define TOKEN_MAX_BYTES (64u << 10)

/* Writes the message into err; returns -1. */
static int set_error(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int set_error(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* Reads a whole small file into a NUL-terminated malloc buffer. */
static char *read_file(const char *path, size_t max, size_t *len_out)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    char *buf = malloc(max + 1);
    size_t len = buf != NULL ? fread(buf, 1, max + 1, f) : 0;
    int bad = buf == NULL || ferror(f) || len > max;
    fclose(f);
    if (bad) {
        free(buf);
        errno = bad && buf != NULL && len > max ? EFBIG : errno;
        return NULL;
    }
    buf[len] = '\0';
    if (len_out != NULL)
        *len_out = len;
    return buf;
}

static char *trimmed_copy(const char *s)
{
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
        n--;
    char *p = malloc(n + 1);
    if (p != NULL) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

/* ---- YAML navigation ---------------------------------------------------- */

static yaml_node_t *map_get(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
    if (map == NULL || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        if (k != NULL && k->type == YAML_SCALAR_NODE &&
            strlen(key) == k->data.scalar.length &&
            memcmp(k->data.scalar.value, key, k->data.scalar.length) == 0)
            return yaml_document_get_node(doc, p->value);
    }
    return NULL;
}

static const char *scalar(yaml_node_t *n)
{
    return n != NULL && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* The "<what>" member of the entry named name in a list like clusters. */
static yaml_node_t *named_entry(yaml_document_t *doc, yaml_node_t *root, const char *list,
                                const char *name, const char *what)
{
    yaml_node_t *seq = map_get(doc, root, list);
    if (seq == NULL || seq->type != YAML_SEQUENCE_NODE || name == NULL)
        return NULL;
    for (yaml_node_item_t *i = seq->data.sequence.items.start; i < seq->data.sequence.items.top; i++) {
        yaml_node_t *entry = yaml_document_get_node(doc, *i);
        const char *n = scalar(map_get(doc, entry, "name"));
        if (n != NULL && strcmp(n, name) == 0)
            return map_get(doc, entry, what);
    }
    return NULL;
}

static char *dup_scalar(yaml_node_t *n)
{
    const char *s = scalar(n);
    return s != NULL ? strdup(s) : NULL;
}

/* base64 "-data" fields decode to PEM. */
static int decode_data(yaml_node_t *n, char **out, size_t *len, const char *field, char *err,
                       size_t errlen)
{
    const char *s = scalar(n);
    if (s == NULL)
        return 0;
    *out = base64_decode_malloc(s, strlen(s), len);
    if (*out == NULL)
        return set_error(err, errlen, "kubeconfig: %s is not valid base64", field);
    return 0;
}

int kube_config_load_file(kube_config *c, const char *path, char *err, size_t errlen)
{
    memset(c, 0, sizeof(*c));
    size_t len = 0;
    char *text = read_file(path, KUBECONFIG_MAX_BYTES, &len);
    if (text == NULL)
        return set_error(err, errlen, "cannot read kubeconfig %s: %s", path, strerror(errno));

    yaml_parser_t parser;
    yaml_document_t doc;
    int rc = -1, have_doc = 0;
    if (!yaml_parser_initialize(&parser)) {
        free(text);
        return set_error(err, errlen, "out of memory");
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        set_error(err, errlen, "kubeconfig %s: %s at line %zu", path,
                  parser.problem != NULL ? parser.problem : "invalid YAML",
                  parser.problem_mark.line + 1);
        goto cleanup;
    }
    have_doc = 1;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    const char *context_name = scalar(map_get(&doc, root, "current-context"));
    yaml_node_t *context = named_entry(&doc, root, "contexts", context_name, "context");
    if (context == NULL) {
        set_error(err, errlen, "kubeconfig %s: current-context \"%s\" not found", path,
                  context_name != NULL ? context_name : "");
        goto cleanup;
    }
    yaml_node_t *cluster =
        named_entry(&doc, root, "clusters", scalar(map_get(&doc, context, "cluster")), "cluster");
    yaml_node_t *user =
        named_entry(&doc, root, "users", scalar(map_get(&doc, context, "user")), "user");
    if (cluster == NULL || scalar(map_get(&doc, cluster, "server")) == NULL) {
        set_error(err, errlen, "kubeconfig %s: the current context's cluster has no server", path);
        goto cleanup;
    }
    c->server = trimmed_copy(scalar(map_get(&doc, cluster, "server")));
    if (c->server != NULL && c->server[0] != '\0' && c->server[strlen(c->server) - 1] == '/')
        c->server[strlen(c->server) - 1] = '\0';
    c->ca_file = dup_scalar(map_get(&doc, cluster, "certificate-authority"));
    const char *insecure = scalar(map_get(&doc, cluster, "insecure-skip-tls-verify"));
    c->insecure = insecure != NULL && strcmp(insecure, "true") == 0;
    c->namespace = dup_scalar(map_get(&doc, context, "namespace"));
    if (decode_data(map_get(&doc, cluster, "certificate-authority-data"), &c->ca_pem,
                    &c->ca_pem_len, "certificate-authority-data", err, errlen) != 0)
        goto cleanup;
    if (user != NULL) {
        c->token = dup_scalar(map_get(&doc, user, "token"));
        c->token_file = dup_scalar(map_get(&doc, user, "tokenFile"));
        c->client_cert_file = dup_scalar(map_get(&doc, user, "client-certificate"));
        c->client_key_file = dup_scalar(map_get(&doc, user, "client-key"));
        if (decode_data(map_get(&doc, user, "client-certificate-data"), &c->client_cert_pem,
                        &c->client_cert_pem_len, "client-certificate-data", err, errlen) != 0 ||
            decode_data(map_get(&doc, user, "client-key-data"), &c->client_key_pem,
                        &c->client_key_pem_len, "client-key-data", err, errlen) != 0)
            goto cleanup;
    }
    rc = 0;
cleanup:
    if (have_doc)
        yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    free(text);
    if (rc != 0)
        kube_config_free(c);
    return rc;
}

int kube_config_load_incluster(kube_config *c, const char *sa_dir, char *err, size_t errlen)
{
    memset(c, 0, sizeof(*c));
    const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
    if (host == NULL || port == NULL || host[0] == '\0' || port[0] == '\0')
        return set_error(err, errlen,
                         "not in a cluster: KUBERNETES_SERVICE_HOST/PORT unset (use --kubeconfig)");
    char path[4096];
    int v6 = strchr(host, ':') != NULL;
    size_t n = strlen(host) + strlen(port) + 16;
    c->server = malloc(n);
    if (c->server == NULL)
        return set_error(err, errlen, "out of memory");
    snprintf(c->server, n, v6 ? "https://[%s]:%s" : "https://%s:%s", host, port);
    snprintf(path, sizeof(path), "%s/ca.crt", sa_dir);
    c->ca_file = strdup(path);
    snprintf(path, sizeof(path), "%s/token", sa_dir);
    c->token_file = strdup(path);
    snprintf(path, sizeof(path), "%s/namespace", sa_dir);
    char *ns = read_file(path, 256, NULL);
    if (ns != NULL) {
        c->namespace = trimmed_copy(ns);
        free(ns);
    }
    if (kube_config_token(c) == NULL) {
        int e = errno;
        kube_config_free(c);
        return set_error(err, errlen, "cannot read service-account token %s/token: %s", sa_dir,
                         strerror(e));
    }
    return 0;
}

const char *kube_config_token(kube_config *c)
{
    if (c->token_file == NULL)
        return c->token;
    struct stat st;
    if (stat(c->token_file, &st) != 0)
        return c->token; /* mid-rotation: keep the one we have */
    if (c->token != NULL && st.st_ino == c->token_stat.st_ino &&
        st.st_mtim.tv_sec == c->token_stat.st_mtim.tv_sec &&
        st.st_mtim.tv_nsec == c->token_stat.st_mtim.tv_nsec && st.st_size == c->token_stat.st_size)
        return c->token;
    char *text = read_file(c->token_file, TOKEN_MAX_BYTES, NULL);
    if (text == NULL)
        return c->token;
    char *token = trimmed_copy(text);
    free(text);
    if (token == NULL)
        return c->token;
    free(c->token);
    c->token = token;
    c->token_stat = st;
    return c->token;
}

void kube_config_free(kube_config *c)
{
    free(c->server);
    free(c->ca_file);
    free(c->ca_pem);
    free(c->token);
    free(c->token_file);
    free(c->client_cert_file);
    free(c->client_key_file);
    free(c->client_cert_pem);
    free(c->client_key_pem);
    free(c->namespace);
    memset(c, 0, sizeof(*c));
}
