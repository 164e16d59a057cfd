/*
 * app.c - see app.h.
 */
#include "app.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "json.h"
#include "podview.h"

void cli_errorf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void cli_put(strbuf *b, FILE *f)
{
    if (b->data != NULL)
        fputs(b->data, f);
    strbuf_free(b);
}

int cli_fail_call(const cli_app *a, const char *what, const kube_reply *r)
{
    if (r->status == 0) {
        cli_errorf("%s: cannot reach the apiserver at %s: %s", what, a->cfg.server, r->error);
        return CLI_EXIT_ERROR;
    }
    char msg[CLI_MESSAGE_MAX];
    cli_status_message(msg, sizeof(msg), r->status, r->body, r->len);
    if (cli_is_webhook_denial(msg)) {
        /* the webhook's words, as the apiserver passed them on */
        fprintf(stderr, "%s\n", msg);
        return CLI_EXIT_DENIED;
    }
    cli_errorf("%s: %s", what, msg);
    return CLI_EXIT_ERROR;
}

int cli_fail_pod_call(const cli_app *a, const char *what, const char *pod, const kube_reply *r)
{
    if (r->status == 403) {
        char msg[CLI_MESSAGE_MAX];
        strbuf out = {0};
        cli_status_message(msg, sizeof(msg), r->status, r->body, r->len);
        if (cli_say_refusal(&out, a->ns, pod, msg) != CLI_REFUSED_OTHER) {
            cli_put(&out, stderr);
            return CLI_EXIT_DENIED;
        }
        strbuf_free(&out);
    }
    return cli_fail_call(a, what, r);
}

int cli_decode(const kube_reply *r, const char *what, yajl_val *tree)
{
    char err[128];
    *tree = json_parse_tree(r->body, r->len, CLI_JSON_DEPTH, err, sizeof(err));
    if (*tree == NULL) {
        cli_errorf("%s: unreadable answer: %s", what, err);
        return CLI_EXIT_ERROR;
    }
    return 0;
}

yajl_val cli_field(yajl_val v, const char *a, const char *b)
{
    const char *path[] = {a, b, NULL};
    return v != NULL ? yajl_tree_get(v, path, yajl_t_any) : NULL;
}

const char *cli_field_str(yajl_val v, const char *a, const char *b)
{
    yajl_val s = cli_field(v, a, b);
    return YAJL_IS_STRING(s) ? YAJL_GET_STRING(s) : NULL;
}

char *cli_path(kapi_resource r, const char *ns, const char *name, const char *sub)
{
    strbuf b = {0};
    if (kapi_path(&b, r, ns, name, sub) != 0 || b.failed) {
        strbuf_free(&b);
        return NULL;
    }
    return b.data;
}

static int list_pages(cli_app *a, const char *what, const char *path, const char *query,
                      kube_item_fn fn, void *data, int *hidden)
{
    kube_pager p = {path, query, CLI_PAGE, CLI_MAX_PAGES, CLI_TOKEN_MAX, CLI_JSON_DEPTH};
    kube_pages_result res;
    int rc = CLI_EXIT_ERROR;
    switch (kube_sync_list(a->client, &p, fn, data, &res)) {
    case KUBE_PAGES_DONE:
        rc = 0;
        break;
    case KUBE_PAGES_STOPPED:
        rc = res.fn_rc;
        break;
    case KUBE_PAGES_CALL_FAILED:
        if (hidden != NULL && res.reply.status == 403) {
            *hidden = 1;
            rc = 0;
        } else {
            rc = cli_fail_call(a, what, &res.reply);
        }
        break;
    case KUBE_PAGES_NOT_A_LIST:
        cli_errorf("%s: the apiserver's answer is not a list: %s", what, res.error);
        break;
    case KUBE_PAGES_TOO_MANY:
        cli_errorf("%s: more than %d objects; narrow it with -n or --node", what,
                   CLI_PAGE * CLI_MAX_PAGES);
        break;
    case KUBE_PAGES_TOKEN_TOO_LONG:
        cli_errorf("%s: the apiserver's continue token is longer than %d bytes", what,
                   CLI_TOKEN_MAX);
        break;
    case KUBE_PAGES_NO_MEMORY:
        cli_errorf("out of memory");
        break;
    }
    kube_reply_free(&res.reply);
    return rc;
}

int cli_list_all(cli_app *a, const char *what, const char *path, const char *query,
                 kube_item_fn fn, void *data)
{
    return list_pages(a, what, path, query, fn, data, NULL);
}

int cli_list_optional(cli_app *a, const char *what, const char *path, const char *query,
                      kube_item_fn fn, void *data, int *hidden)
{
    *hidden = 0;
    return list_pages(a, what, path, query, fn, data, hidden);
}

/* --kubeconfig, else $KUBECONFIG, else ~/.kube/config, else in-cluster:
 * kubectl's order. */
static int load_config(cli_app *a)
{
    char err[600], home_config[4096];
    const char *env = getenv("KUBECONFIG"), *home = getenv("HOME");
    int rc;
    if (a->args.kubeconfig != NULL || (env != NULL && env[0] != '\0')) {
        rc = kube_config_load(&a->cfg, a->args.kubeconfig, env, a->args.context, err, sizeof(err));
    } else {
        snprintf(home_config, sizeof(home_config), "%s/.kube/config", home != NULL ? home : "");
        FILE *f = home != NULL ? fopen(home_config, "r") : NULL;
        if (f != NULL) {
            fclose(f);
            rc = kube_config_load(&a->cfg, home_config, NULL, a->args.context, err, sizeof(err));
        } else {
            rc = kube_config_load_incluster(&a->cfg, KUBE_SA_DIR, err, sizeof(err));
            if (rc != 0)
                snprintf(err, sizeof(err),
                         "no configuration: pass --kubeconfig, set KUBECONFIG, or create "
                         "~/.kube/config");
        }
    }
    if (rc != 0) {
        cli_errorf("%s", err);
        return CLI_EXIT_ERROR;
    }
    a->ns = a->args.namespace != NULL         ? a->args.namespace
            : a->cfg.namespace != NULL &&
                    cli_name_valid(a->cfg.namespace, CLI_NAMESPACE_MAX, 0)
                ? a->cfg.namespace
                : "default";
    return 0;
}

int cli_app_open(cli_app *a)
{
    int rc = load_config(a);
    if (rc != 0)
        return rc;
    char err[512];
    a->client = kube_client_new(&a->cfg, 50, 100, err, sizeof(err));
    if (a->client == NULL) {
        cli_errorf("%s", err);
        kube_config_free(&a->cfg);
        return CLI_EXIT_ERROR;
    }
    if (a->user_agent != NULL)
        kube_client_set_user_agent(a->client, a->user_agent);
    return 0;
}

void cli_app_close(cli_app *a)
{
    kube_client_free(a->client);
    kube_config_free(&a->cfg);
}
