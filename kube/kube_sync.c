/*
 * kube_sync.c - see kube_sync.h.
 */
#include "kube_sync.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "kapi.h"

void kube_reply_free(kube_reply *r)
{
    free(r->body);
    memset(r, 0, sizeof(*r));
}

static void on_done(void *data, const kube_result *res)
{
    kube_reply *r = data;
    r->done = 1;
    r->status = res->status;
    r->body = malloc(res->body_len + 1);
    if (r->body != NULL) {
        memcpy(r->body, res->body, res->body_len);
        r->body[res->body_len] = '\0';
        r->len = res->body_len;
    }
    if (res->error != NULL)
        snprintf(r->error, sizeof(r->error), "%s", res->error);
}

long kube_sync_call(kube_client *c, const char *method, const char *path,
                    const char *content_type, const char *body, kube_reply *r)
{
    memset(r, 0, sizeof(*r));
    kube_call call = {
        .method = method,
        .path = path,
        .content_type = content_type,
        .body = body,
        .body_len = body != NULL ? strlen(body) : 0,
        .on_done = on_done,
        .data = r,
        .no_retry = strcmp(method, "GET") != 0,
    };
    if (kube_client_call(c, &call) != 0) {
        snprintf(r->error, sizeof(r->error), "cannot queue the call");
        return 0;
    }
    while (!r->done)
        kube_client_step(c, 100);
    if (r->body == NULL && r->status != 0) {
        snprintf(r->error, sizeof(r->error), "out of memory");
        r->status = 0;
    }
    return r->status;
}

void kube_sync_page_url(strbuf *b, const kube_pager *p, const char *token)
{
    strbuf_printf(b, "%s?limit=%u%s%s", p->path, p->page_size, p->query[0] != '\0' ? "&" : "",
                  p->query);
    if (token != NULL) {
        strbuf_printf(b, "&continue=");
        kapi_escape(b, token);
    }
}

static yajl_val field(yajl_val v, const char *a, const char *b)
{
    const char *path[] = {a, b, NULL};
    return v != NULL ? yajl_tree_get(v, path, yajl_t_any) : NULL;
}

/* One page: its items to fn, its continue token (malloc'd) into *next. */
static kube_pages_end read_page(kube_client *c, const kube_pager *p, const char *token,
                                kube_item_fn fn, void *data, kube_pages_result *res, char **next)
{
    strbuf url = {0};
    kube_sync_page_url(&url, p, token);
    if (url.failed) {
        strbuf_free(&url);
        return KUBE_PAGES_NO_MEMORY;
    }
    long status = kube_sync_call(c, "GET", url.data, NULL, NULL, &res->reply);
    strbuf_free(&url);
    if (status != 200)
        return KUBE_PAGES_CALL_FAILED;
    yajl_val tree = json_parse_tree(res->reply.body, res->reply.len, p->max_depth, res->error,
                                    sizeof(res->error));
    kube_reply_free(&res->reply);
    yajl_val items = field(tree, "items", NULL);
    if (tree == NULL || !YAJL_IS_ARRAY(items)) {
        if (tree != NULL) {
            snprintf(res->error, sizeof(res->error), "no items");
            yajl_tree_free(tree);
        }
        return KUBE_PAGES_NOT_A_LIST;
    }
    kube_pages_end end = KUBE_PAGES_DONE;
    for (size_t i = 0; i < items->u.array.len && end == KUBE_PAGES_DONE; i++)
        if ((res->fn_rc = fn(data, items->u.array.values[i])) != 0)
            end = KUBE_PAGES_STOPPED;
    yajl_val cont = field(tree, "metadata", "continue");
    const char *t = YAJL_IS_STRING(cont) ? YAJL_GET_STRING(cont) : NULL;
    if (end == KUBE_PAGES_DONE && t != NULL && t[0] != '\0') {
        if (strlen(t) > p->token_max)
            end = KUBE_PAGES_TOKEN_TOO_LONG;
        else if ((*next = strdup(t)) == NULL)
            end = KUBE_PAGES_NO_MEMORY;
    }
    yajl_tree_free(tree);
    return end;
}

kube_pages_end kube_sync_list(kube_client *c, const kube_pager *p, kube_item_fn fn, void *data,
                              kube_pages_result *res)
{
    memset(res, 0, sizeof(*res));
    char *token = NULL;
    for (int page = 0;; page++) {
        if (page == p->max_pages) {
            res->end = KUBE_PAGES_TOO_MANY;
            break;
        }
        char *next = NULL;
        res->end = read_page(c, p, token, fn, data, res, &next);
        free(token);
        token = next;
        if (res->end != KUBE_PAGES_DONE || token == NULL)
            break;
    }
    free(token);
    return res->end;
}
