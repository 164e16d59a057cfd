/*
 * kube_config.c - see kube_config.h.  The kubeconfig is YAML, read with
 * libyaml's document API; nothing else in the controller touches YAML.
 */
#include "kube_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "base64.h"
#include "errmsg.h"

#define KUBECONFIG_MAX_BYTES (1u << 20)
#define TOKEN_MAX_BYTES (64u << 10)

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
        return errmsg_set(err, errlen, "kubeconfig: %s is not valid base64", field);
    return 0;
}

/* One kubeconfig file, parsed. */
typedef struct kc_doc {
    const char *path;
    yaml_document_t doc;
    yaml_node_t *root;
} kc_doc;

/* The first file that has an entry of this name in list ("clusters",
 * "contexts", "users") wins, as client-go merges KUBECONFIG. */
static yaml_node_t *merged_entry(kc_doc *docs, size_t n, const char *list, const char *name,
                                 const char *what, kc_doc **from)
{
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *e = named_entry(&docs[i].doc, docs[i].root, list, name, what);
        if (e != NULL) {
            *from = &docs[i];
            return e;
        }
    }
    return NULL;
}

/* A path a kubeconfig names, made relative to that file's folder when it is
 * relative (client-go resolves them so). */
static char *dup_path(kc_doc *d, yaml_node_t *n)
{
    const char *s = scalar(n);
    if (s == NULL)
        return NULL;
    const char *slash = strrchr(d->path, '/');
    if (s[0] == '/' || s[0] == '\0' || slash == NULL)
        return strdup(s);
    size_t dir = (size_t)(slash - d->path) + 1, len = strlen(s);
    char *p = malloc(dir + len + 1);
    if (p != NULL) {
        memcpy(p, d->path, dir);
        memcpy(p + dir, s, len + 1);
    }
    return p;
}

/* Parses one file into d.  1 when loaded, 0 when it does not exist and
 * missing_ok, -1 on an error (message in err). */
static int load_doc(kc_doc *d, const char *path, int missing_ok, char *err, size_t errlen)
{
    d->path = path;
    size_t len = 0;
    char *text = read_file(path, KUBECONFIG_MAX_BYTES, &len);
    if (text == NULL) {
        if (missing_ok && errno == ENOENT)
            return 0;
        return errmsg_set(err, errlen, "cannot read kubeconfig %s: %s", path, strerror(errno));
    }
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) {
        free(text);
        return errmsg_set(err, errlen, "out of memory");
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    int rc = 1;
    if (!yaml_parser_load(&parser, &d->doc))
        rc = errmsg_set(err, errlen, "kubeconfig %s: %s at line %zu", path,
                        parser.problem != NULL ? parser.problem : "invalid YAML",
                        parser.problem_mark.line + 1);
    else
        d->root = yaml_document_get_root_node(&d->doc);
    yaml_parser_delete(&parser);
    free(text);
    return rc;
}

/* Fills c from the merged files: context, cluster, user. */
static int resolve(kube_config *c, kc_doc *docs, size_t n, const char *context_name,
                   const char *where, char *err, size_t errlen)
{
    int from_flag = context_name != NULL;
    for (size_t i = 0; context_name == NULL && i < n; i++) {
        const char *cur = scalar(map_get(&docs[i].doc, docs[i].root, "current-context"));
        if (cur != NULL && cur[0] != '\0')
            context_name = cur;
    }
    kc_doc *cd = NULL, *sd = NULL, *ud = NULL;
    yaml_node_t *context = merged_entry(docs, n, "contexts", context_name, "context", &cd);
    if (context == NULL)
        return errmsg_set(err, errlen, "kubeconfig %s: %s \"%s\" not found", where,
                          from_flag ? "context" : "current-context",
                          context_name != NULL ? context_name : "");
    yaml_node_t *cluster = merged_entry(docs, n, "clusters",
                                        scalar(map_get(&cd->doc, context, "cluster")), "cluster", &sd);
    yaml_node_t *user =
        merged_entry(docs, n, "users", scalar(map_get(&cd->doc, context, "user")), "user", &ud);
    if (cluster == NULL || scalar(map_get(&sd->doc, cluster, "server")) == NULL)
        return errmsg_set(err, errlen, "kubeconfig %s: context \"%s\": its cluster has no server",
                          where, context_name);
    c->context = strdup(context_name);
    c->server = trimmed_copy(scalar(map_get(&sd->doc, cluster, "server")));
    if (c->server != NULL && c->server[0] != '\0' && c->server[strlen(c->server) - 1] == '/')
        c->server[strlen(c->server) - 1] = '\0';
    c->ca_file = dup_path(sd, map_get(&sd->doc, cluster, "certificate-authority"));
    const char *insecure = scalar(map_get(&sd->doc, cluster, "insecure-skip-tls-verify"));
    c->insecure = insecure != NULL && strcmp(insecure, "true") == 0;
    const char *ns = scalar(map_get(&cd->doc, context, "namespace"));
    c->namespace = ns != NULL && ns[0] != '\0' ? strdup(ns) : NULL;
    if (decode_data(map_get(&sd->doc, cluster, "certificate-authority-data"), &c->ca_pem,
                    &c->ca_pem_len, "certificate-authority-data", err, errlen) != 0)
        return -1;
    if (user != NULL) {
        yaml_document_t *ydoc = &ud->doc;
        c->token = dup_scalar(map_get(ydoc, user, "token"));
        c->token_file = dup_path(ud, map_get(ydoc, user, "tokenFile"));
        c->client_cert_file = dup_path(ud, map_get(ydoc, user, "client-certificate"));
        c->client_key_file = dup_path(ud, map_get(ydoc, user, "client-key"));
        if (decode_data(map_get(ydoc, user, "client-certificate-data"), &c->client_cert_pem,
                        &c->client_cert_pem_len, "client-certificate-data", err, errlen) != 0 ||
            decode_data(map_get(ydoc, user, "client-key-data"), &c->client_key_pem,
                        &c->client_key_pem_len, "client-key-data", err, errlen) != 0)
            return -1;
    }
    if (c->server == NULL || c->context == NULL)
        return errmsg_set(err, errlen, "out of memory");
    return 0;
}

int kube_config_load(kube_config *c, const char *path, const char *env_list, const char *context,
                     char *err, size_t errlen)
{
    memset(c, 0, sizeof(*c));
    char *paths[KUBE_CONFIG_MAX_FILES];
    kc_doc docs[KUBE_CONFIG_MAX_FILES];
    size_t n_paths = 0, n_docs = 0;
    char *list = NULL;
    int rc = -1;
    if (path != NULL) {
        paths[n_paths++] = NULL; /* path itself, not a copy */
    } else if (env_list != NULL && env_list[0] != '\0') {
        if ((list = strdup(env_list)) == NULL)
            return errmsg_set(err, errlen, "out of memory");
        for (char *save = NULL, *p = strtok_r(list, ":", &save); p != NULL;
             p = strtok_r(NULL, ":", &save)) {
            int dup = 0;
            for (size_t i = 0; i < n_paths; i++)
                dup |= strcmp(paths[i], p) == 0;
            if (dup)
                continue;
            if (n_paths == KUBE_CONFIG_MAX_FILES) {
                errmsg_set(err, errlen, "KUBECONFIG lists more than %d files",
                           KUBE_CONFIG_MAX_FILES);
                goto cleanup;
            }
            paths[n_paths++] = p;
        }
    }
    if (n_paths == 0) {
        errmsg_set(err, errlen, "no kubeconfig: KUBECONFIG is empty");
        goto cleanup;
    }
    for (size_t i = 0; i < n_paths; i++) {
        int got = load_doc(&docs[n_docs], path != NULL ? path : paths[i], path == NULL, err, errlen);
        if (got < 0)
            goto cleanup;
        n_docs += (size_t)got;
    }
    if (n_docs == 0) {
        errmsg_set(err, errlen, "no kubeconfig: none of the files in KUBECONFIG=%s exists",
                   env_list);
        goto cleanup;
    }
    rc = resolve(c, docs, n_docs, context, path != NULL ? path : env_list, err, errlen);
cleanup:
    for (size_t i = 0; i < n_docs; i++)
        yaml_document_delete(&docs[i].doc);
    free(list);
    if (rc != 0)
        kube_config_free(c);
    return rc;
}

int kube_config_load_file(kube_config *c, const char *path, char *err, size_t errlen)
{
    return kube_config_load(c, path, NULL, NULL, err, errlen);
}

int kube_config_load_incluster(kube_config *c, const char *sa_dir, char *err, size_t errlen)
{
    memset(c, 0, sizeof(*c));
    const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
    if (host == NULL || port == NULL || host[0] == '\0' || port[0] == '\0')
        return errmsg_set(err, errlen,
                          "not in a cluster: KUBERNETES_SERVICE_HOST/PORT unset (use --kubeconfig "
                          "or KUBECONFIG)");
    char path[4096];
    int v6 = strchr(host, ':') != NULL;
    size_t n = strlen(host) + strlen(port) + 16;
    c->server = malloc(n);
    if (c->server == NULL)
        return errmsg_set(err, errlen, "out of memory");
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
        return errmsg_set(err, errlen, "cannot read service-account token %s/token: %s", sa_dir,
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
    free(c->context);
    memset(c, 0, sizeof(*c));
}
