/*
 * app.h - what every kubectl-ota command shares: the cluster found as
 * kubectl finds it, the client, errors printed as kubectl prints them, an
 * API error turned into an exit code, and a list read to the end.
 *
 * The I/O shell of the commands (cmd.h); the calls themselves are kube/'s
 * (kube_sync: one call at a time, waited for; kapi: the paths), what they
 * mean is decided in args.c, podview.c and format.c.
 */
#ifndef OTA_CLI_APP_H
#define OTA_CLI_APP_H

#include <stddef.h>
#include <stdio.h>

#include "args.h"
#include "kapi.h"
#include "kube_client.h"
#include "kube_config.h"
#include "kube_sync.h"
#include "strbuf.h"

/* A list is read in pages of CLI_PAGE items, at most CLI_MAX_PAGES pages
 * (100 000 objects), with continue tokens of at most CLI_TOKEN_MAX bytes;
 * a parsed answer nests at most CLI_JSON_DEPTH deep. */
#define CLI_PAGE 500
#define CLI_MAX_PAGES 200
#define CLI_TOKEN_MAX 8192
#define CLI_JSON_DEPTH 64

typedef struct cli_app {
    cli_args args;
    kube_config cfg;
    kube_client *client;
    const char *ns; /* -n, else the kubeconfig context's, else "default" */
    const char *user_agent; /* main's: "kubectl-ota/<version> ..." */
} cli_app;

/* Finds the cluster (--kubeconfig, else $KUBECONFIG, else ~/.kube/config,
 * else in-cluster: kubectl's order) and makes the client.  0, or the exit
 * code after printing why. */
int cli_app_open(cli_app *a);
void cli_app_close(cli_app *a);

/* "error: ..." on stderr, as kubectl says it. */
void cli_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints b to f and frees it. */
void cli_put(strbuf *b, FILE *f);

/* Prints why a call failed (a webhook's denial in its own words); returns
 * the exit code it means. */
int cli_fail_call(const cli_app *a, const char *what, const kube_reply *r);

/* cli_fail_call for a call about pod ns/pod: a 403 the apiserver gives a
 * node's credentials on another node's pod, or an identity RBAC grants
 * nothing, is said in words (cli_say_refusal) and exits CLI_EXIT_DENIED. */
int cli_fail_pod_call(const cli_app *a, const char *what, const char *pod, const kube_reply *r);

/* The answer parsed into a tree the caller frees; 0, or the exit code after
 * printing why. */
int cli_decode(const kube_reply *r, const char *what, yajl_val *tree);
/* v's value at a.b (b NULL: at a), or NULL; cli_field_str: its string. */
yajl_val cli_field(yajl_val v, const char *a, const char *b);
const char *cli_field_str(yajl_val v, const char *a, const char *b);

/* kapi_path as a C string: malloc'd, NULL when out of memory (or for a
 * path the API does not have). */
char *cli_path(kapi_resource r, const char *ns, const char *name, const char *sub);

/* GETs the collection at path (no query; query is "" or "k=v&..." sent with
 * every page) to its end, handing each item to fn.  0, fn's non-zero code,
 * or the exit code after printing why (what names the list). */
int cli_list_all(cli_app *a, const char *what, const char *path, const char *query,
                 kube_item_fn fn, void *data);

/* cli_list_all for a read the command can do without: a 403 (the identity
 * may not list these; a node's may not list DaemonSets, ControllerRevisions,
 * Jobs or Events) sets *hidden and returns 0, unsaid. */
int cli_list_optional(cli_app *a, const char *what, const char *path, const char *query,
                      kube_item_fn fn, void *data, int *hidden);

#endif
