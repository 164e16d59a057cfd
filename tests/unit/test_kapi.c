/*
 * test_kapi.c - the Kubernetes wire shapes (kube/kapi): a path per
 * resource (collection, all namespaces, object, subresource) and the shapes
 * the API does not have; escaping of path segments, continue tokens and
 * selectors; label and field selectors; the status-conditions patch and
 * DeleteOptions byte for byte; the URL of a page of a list (kube_sync).
 *
 * The expected texts are what the programs sent before the paths, the
 * selectors and the patch were built here once (hand-written format
 * strings in the controller, kubectl-ota and leader election): the wire
 * must not change.  The controller's calls are checked as execute() makes
 * them (controller_action_call), a row per action kind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller.h"
#include "kapi.h"
#include "kube_sync.h"
#include "ota_names.h"
#include "row_check.h"

typedef struct path_row {
    const char *name;
    kapi_resource r;
    const char *ns, *object, *sub;
    const char *want; /* NULL: no such path (-1, nothing appended) */
} path_row;

static void test_paths(void **state)
{
    (void)state;
    static const path_row rows[] = {
        /* one per resource, as the programs call them */
        {"pod", KAPI_PODS, "ns1", "web-0", NULL, "/api/v1/namespaces/ns1/pods/web-0"},
        {"pod status", KAPI_PODS, "ns1", "web-0", "status",
         "/api/v1/namespaces/ns1/pods/web-0/status"},
        {"pods in a namespace", KAPI_PODS, "ns1", NULL, NULL, "/api/v1/namespaces/ns1/pods"},
        {"pods everywhere", KAPI_PODS, NULL, NULL, NULL, "/api/v1/pods"},
        {"node", KAPI_NODES, NULL, "edge-1", NULL, "/api/v1/nodes/edge-1"},
        {"events", KAPI_EVENTS, "ns1", NULL, NULL, "/api/v1/namespaces/ns1/events"},
        {"daemonset", KAPI_DAEMONSETS, "ns1", "agent", NULL,
         "/apis/apps/v1/namespaces/ns1/daemonsets/agent"},
        {"daemonsets everywhere", KAPI_DAEMONSETS, NULL, NULL, NULL, "/apis/apps/v1/daemonsets"},
        {"revisions", KAPI_CONTROLLERREVISIONS, "ns1", NULL, NULL,
         "/apis/apps/v1/namespaces/ns1/controllerrevisions"},
        {"revisions everywhere", KAPI_CONTROLLERREVISIONS, NULL, NULL, NULL,
         "/apis/apps/v1/controllerrevisions"},
        {"jobs", KAPI_JOBS, "ns1", NULL, NULL, "/apis/batch/v1/namespaces/ns1/jobs"},
        {"job", KAPI_JOBS, "ns1", "prepull-abc", NULL,
         "/apis/batch/v1/namespaces/ns1/jobs/prepull-abc"},
        {"jobs everywhere", KAPI_JOBS, NULL, NULL, NULL, "/apis/batch/v1/jobs"},
        {"leases", KAPI_LEASES, "ota-system", NULL, NULL,
         "/apis/coordination.k8s.io/v1/namespaces/ota-system/leases"},
        {"lease", KAPI_LEASES, "ota-system", "ota-controller", NULL,
         "/apis/coordination.k8s.io/v1/namespaces/ota-system/leases/ota-controller"},
        {"selfsubjectreviews", KAPI_SELFSUBJECTREVIEWS, NULL, NULL, NULL,
         "/apis/authentication.k8s.io/v1/selfsubjectreviews"},
        {"imagecache status", KAPI_IMAGECACHES, "kube-fledged", "imagecache1", "status",
         "/apis/kubefledged.io/v1alpha2/namespaces/kube-fledged/imagecaches/imagecache1/status"},
        {"imagecaches everywhere", KAPI_IMAGECACHES, NULL, NULL, NULL,
         "/apis/kubefledged.io/v1alpha2/imagecaches"},
        /* every segment escaped: a name cannot reach another path */
        {"slash in a name", KAPI_PODS, "ns1", "a/../b", NULL, "/api/v1/namespaces/ns1/pods/a%2F..%2Fb"},
        {"query in a namespace", KAPI_PODS, "x?watch=1", NULL, NULL,
         "/api/v1/namespaces/x%3Fwatch%3D1/pods"},
        {"space and percent", KAPI_NODES, NULL, "a b%", NULL, "/api/v1/nodes/a%20b%25"},
        /* shapes the API does not have */
        {"namespace of a node", KAPI_NODES, "ns1", "edge-1", NULL, NULL},
        {"pod without namespace", KAPI_PODS, NULL, "web-0", NULL, NULL},
        {"subresource without object", KAPI_PODS, "ns1", NULL, "status", NULL},
        {"unknown subresource", KAPI_PODS, "ns1", "web-0", "exec", NULL},
        {"subresource of a job", KAPI_JOBS, "ns1", "j", "status", NULL},
        {"empty namespace", KAPI_PODS, "", NULL, NULL, NULL},
        {"empty name", KAPI_PODS, "ns1", "", NULL, NULL},
        {"out of the enum", KAPI_N_RESOURCES, NULL, NULL, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const path_row *r = &rows[i];
        strbuf b = {0};
        int rc = kapi_path(&b, r->r, r->ns, r->object, r->sub);
        if (r->want == NULL) {
            ROW_CHECK(r->name, rc == -1 && b.data == NULL, "rc %d, path %s", rc,
                      b.data != NULL ? b.data : "(none)");
        } else {
            ROW_CHECK(r->name, rc == 0 && !b.failed && strcmp(b.data, r->want) == 0,
                      "rc %d, path %s, want %s", rc, b.data != NULL ? b.data : "(none)", r->want);
        }
        strbuf_free(&b);
    }
}

/* Every resource has a row: a group/version, a plural; the core group is
 * the only one without a '/'. */
static void test_table_complete(void **state)
{
    (void)state;
    for (int r = 0; r < KAPI_N_RESOURCES; r++) {
        const kapi_resource_def *d = kapi_resource_of((kapi_resource)r);
        assert_non_null(d);
        assert_non_null(d->group_version);
        assert_non_null(d->plural);
    }
    assert_null(kapi_resource_of(KAPI_N_RESOURCES));
}

/* Where a group version says what it serves (an ImageCache's /status
 * with our CRD, none with kube-fledged's). */
static void test_discovery_path(void **state)
{
    (void)state;
    strbuf b = {0};
    assert_int_equal(kapi_discovery_path(&b, KAPI_IMAGECACHES), 0);
    assert_string_equal(b.data, "/apis/kubefledged.io/v1alpha2");
    strbuf_free(&b);
    assert_int_equal(kapi_discovery_path(&b, KAPI_PODS), 0);
    assert_string_equal(b.data, "/api/v1");
    strbuf_free(&b);
    assert_int_equal(kapi_discovery_path(&b, KAPI_N_RESOURCES), -1);
    assert_null(b.data);
}

static void test_escape(void **state)
{
    (void)state;
    static const struct {
        const char *in, *want;
    } rows[] = {
        {"", ""},
        {"AZaz09-._~", "AZaz09-._~"},
        /* a base64 continue token: '+', '/' and '=' escaped */
        {"eyJ2IjoibWV0YS5rOHMuaW8vdjEi+/=", "eyJ2IjoibWV0YS5rOHMuaW8vdjEi%2B%2F%3D"},
        {"a b&c?d#e%", "a%20b%26c%3Fd%23e%25"},
        {"ota-prepull/pod-uid=1a2b-3c_d.e~f", "ota-prepull%2Fpod-uid%3D1a2b-3c_d.e~f"},
        {"&x= +%", "%26x%3D%20%2B%25"},
        {"\xc3\xa9\x01\x7f", "%C3%A9%01%7F"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        strbuf b = {0};
        strbuf_printf(&b, "%s", "");
        kapi_escape(&b, rows[i].in);
        ROW_CHECK(rows[i].in, strcmp(b.data, rows[i].want) == 0, "got %s, want %s", b.data,
                  rows[i].want);
        strbuf_free(&b);
    }
}

typedef struct selector_row {
    const char *name;
    kapi_selector_kind kind;
    kapi_requirement reqs[3];
    const char *want; /* NULL: refused */
} selector_row;

static void test_selectors(void **state)
{
    (void)state;
    static const selector_row rows[] = {
        /* the controller's informers */
        {"daemonset pods", KAPI_LABEL_SELECTOR,
         {{OTA_LABEL_REVISION_HASH, NULL}, {OTA_LABEL_POD_TEMPLATE_GENERATION, NULL}, {NULL, NULL}},
         "labelSelector=controller-revision-hash%2Cpod-template-generation"},
        {"ours", KAPI_LABEL_SELECTOR,
         {{OTA_LABEL_MANAGED_BY, OTA_MANAGED_BY_VALUE}, {NULL, NULL}},
         "labelSelector=app.kubernetes.io%2Fmanaged-by%3Dota-prepull"},
        /* kubectl-ota's */
        {"node", KAPI_FIELD_SELECTOR, {{"spec.nodeName", "edge-1"}, {NULL, NULL}},
         "fieldSelector=spec.nodeName%3Dedge-1"},
        {"pod uid", KAPI_LABEL_SELECTOR,
         {{OTA_LABEL_POD_UID, "0b1e-77"}, {NULL, NULL}},
         "labelSelector=ota-prepull%2Fpod-uid%3D0b1e-77"},
        {"job pods", KAPI_LABEL_SELECTOR,
         {{"batch.kubernetes.io/job-name", "prepull-x"}, {NULL, NULL}},
         "labelSelector=batch.kubernetes.io%2Fjob-name%3Dprepull-x"},
        {"involved object", KAPI_FIELD_SELECTOR,
         {{"involvedObject.name", "prepull-x-5k"}, {NULL, NULL}},
         "fieldSelector=involvedObject.name%3Dprepull-x-5k"},
        /* refused: what would read as another term */
        {"empty", KAPI_LABEL_SELECTOR, {{NULL, NULL}}, NULL},
        {"empty key", KAPI_LABEL_SELECTOR, {{"", "v"}, {NULL, NULL}}, NULL},
        {"comma in a value", KAPI_LABEL_SELECTOR, {{"k", "a,b=c"}, {NULL, NULL}}, NULL},
        {"equals in a key", KAPI_LABEL_SELECTOR, {{"k=v", NULL}, {NULL, NULL}}, NULL},
        {"bang in a value", KAPI_FIELD_SELECTOR, {{"k", "!v"}, {NULL, NULL}}, NULL},
        {"field exists", KAPI_FIELD_SELECTOR, {{"spec.nodeName", NULL}, {NULL, NULL}}, NULL},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const selector_row *r = &rows[i];
        strbuf b = {0};
        int rc = kapi_selector(&b, r->kind, r->reqs);
        if (r->want == NULL)
            ROW_CHECK(r->name, rc == -1 && b.data == NULL, "rc %d", rc);
        else
            ROW_CHECK(r->name, rc == 0 && strcmp(b.data, r->want) == 0, "got %s, want %s",
                      b.data != NULL ? b.data : "(none)", r->want);
        strbuf_free(&b);
    }
    strbuf b = {0};
    assert_int_equal(kapi_selector(&b, KAPI_LABEL_SELECTOR, NULL), -1);
    assert_null(b.data);
}

/* kubectl-ota's pages: path?limit=N[&query][&continue=TOKEN]. */
static void test_page_url(void **state)
{
    (void)state;
    static const struct {
        const char *query, *token, *want;
    } rows[] = {
        {"", NULL, "/api/v1/pods?limit=500"},
        {"fieldSelector=spec.nodeName%3Dedge-1", NULL,
         "/api/v1/pods?limit=500&fieldSelector=spec.nodeName%3Dedge-1"},
        {"fieldSelector=spec.nodeName%3Dedge-1", "x+y/z=",
         "/api/v1/pods?limit=500&fieldSelector=spec.nodeName%3Dedge-1&continue=x%2By%2Fz%3D"},
        {"", "tok", "/api/v1/pods?limit=500&continue=tok"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        kube_pager p = {"/api/v1/pods", rows[i].query, 500, 200, 8192, 64};
        strbuf b = {0};
        kube_sync_page_url(&b, &p, rows[i].token);
        ROW_CHECK(rows[i].want, strcmp(b.data, rows[i].want) == 0, "got %s", b.data);
        strbuf_free(&b);
    }
}

static void test_conditions_patch(void **state)
{
    (void)state;
    /* the controller's pull result (reconcile.c) */
    kapi_condition failed = {OTA_COND_IMAGE_READY, "False", OTA_REASON_PULL_FAIL,
                             "pull of registry.example/app:v2 failed", 0};
    char *p = kapi_conditions_patch(&failed, 1, "4711", "2026-11-27T01:00:00Z");
    assert_string_equal(p, "{\"metadata\":{\"resourceVersion\":\"4711\"},\"status\":{\"conditions\":"
                           "[{\"type\":\"PodImageReady\",\"status\":\"False\",\"reason\":"
                           "\"PullImageFail\",\"message\":\"pull of registry.example/app:v2 "
                           "failed\",\"lastTransitionTime\":\"2026-11-27T01:00:00Z\"}]}}");
    free(p);
    /* the controller's marking: PodNeedUpgrade without a reason, and
     * PodImageReady of an older request removed */
    kapi_condition mark[2] = {
        {OTA_COND_NEED_UPGRADE, "True", NULL, OTA_MSG_REVISION_PREFIX "6d4f8", 0},
        {OTA_COND_IMAGE_READY, NULL, NULL, NULL, 1}};
    p = kapi_conditions_patch(mark, 2, "12", "2026-11-27T01:00:00Z");
    assert_string_equal(p, "{\"metadata\":{\"resourceVersion\":\"12\"},\"status\":{\"conditions\":"
                           "[{\"type\":\"PodNeedUpgrade\",\"status\":\"True\",\"message\":"
                           "\"controllerrevision: 6d4f8\",\"lastTransitionTime\":"
                           "\"2026-11-27T01:00:00Z\"},{\"type\":\"PodImageReady\",\"$patch\":"
                           "\"delete\"}]}}");
    free(p);
    /* a pod without a resourceVersion: no precondition */
    p = kapi_conditions_patch(mark, 1, "", "T");
    assert_string_equal(p, "{\"status\":{\"conditions\":[{\"type\":\"PodNeedUpgrade\",\"status\":"
                           "\"True\",\"message\":\"controllerrevision: 6d4f8\","
                           "\"lastTransitionTime\":\"T\"}]}}");
    free(p);
    /* kubectl-ota pull: YurtHub's write, the reason empty as Go leaves it */
    kapi_condition pull = {OTA_COND_IMAGE_READY, "False", "", OTA_MSG_REVISION_PREFIX "6d4f8", 0};
    p = kapi_conditions_patch(&pull, 1, "99", "2026-11-27T01:00:00Z");
    assert_string_equal(p, "{\"metadata\":{\"resourceVersion\":\"99\"},\"status\":{\"conditions\":"
                           "[{\"type\":\"PodImageReady\",\"status\":\"False\",\"reason\":\"\","
                           "\"message\":\"controllerrevision: 6d4f8\",\"lastTransitionTime\":"
                           "\"2026-11-27T01:00:00Z\"}]}}");
    free(p);
}

static void test_delete_options(void **state)
{
    (void)state;
    char *d = kapi_delete_options("u-1", "55");
    assert_string_equal(d, "{\"apiVersion\":\"v1\",\"kind\":\"DeleteOptions\",\"preconditions\":"
                           "{\"uid\":\"u-1\",\"resourceVersion\":\"55\"}}");
    free(d);
    d = kapi_delete_options("u-1", NULL);
    assert_string_equal(d, "{\"apiVersion\":\"v1\",\"kind\":\"DeleteOptions\",\"preconditions\":"
                           "{\"uid\":\"u-1\"}}");
    free(d);
}

typedef struct action_row {
    action_kind kind;
    const char *ns, *name;
    const char *method, *path, *content_type;
    int idempotent;
} action_row;

/* What execute() sends for each kind of action: the calls the controller
 * made before its table (and its RBAC in manifests/ allows). */
static void test_action_calls(void **state)
{
    (void)state;
    static const action_row rows[] = {
        {ACTION_PATCH_POD_STATUS, "ns1", "web-0", "PATCH",
         "/api/v1/namespaces/ns1/pods/web-0/status", KAPI_CT_STRATEGIC_MERGE, 0},
        {ACTION_CREATE_JOB, "ns1", "prepull-abc", "POST", "/apis/batch/v1/namespaces/ns1/jobs",
         KAPI_CT_JSON, 1},
        {ACTION_DELETE_JOB, "ns1", "prepull-abc", "DELETE",
         "/apis/batch/v1/namespaces/ns1/jobs/prepull-abc?propagationPolicy=Background", NULL, 1},
        {ACTION_CREATE_EVENT, "ns1", NULL, "POST", "/api/v1/namespaces/ns1/events", KAPI_CT_JSON,
         0},
        {ACTION_GET_NODE, NULL, "edge-1", "GET", "/api/v1/nodes/edge-1", NULL, 0},
        {ACTION_PATCH_JOB, "ns1", "ota-ipj-p-1", "PATCH",
         "/apis/batch/v1/namespaces/ns1/jobs/ota-ipj-p-1", KAPI_CT_MERGE, 1},
        {ACTION_PATCH_IPJ_STATUS, "ns1", "p", "PATCH",
         "/apis/apps.kruise.io/v1alpha1/namespaces/ns1/imagepulljobs/p/status", KAPI_CT_MERGE, 1},
        {ACTION_PATCH_IPJ, "ns1", "p", "PATCH",
         "/apis/apps.kruise.io/v1alpha1/namespaces/ns1/imagepulljobs/p", KAPI_CT_MERGE, 0},
        {ACTION_DELETE_IPJ, "ns1", "p", "DELETE",
         "/apis/apps.kruise.io/v1alpha1/namespaces/ns1/imagepulljobs/p", KAPI_CT_JSON, 1},
        {ACTION_GET_IC_DISCOVERY, NULL, "imagecaches", "GET", "/apis/kubefledged.io/v1alpha2", NULL,
         1},
        {ACTION_PATCH_IC_STATUS, "kube-fledged", "imagecache1", "PATCH",
         "/apis/kubefledged.io/v1alpha2/namespaces/kube-fledged/imagecaches/imagecache1/status",
         KAPI_CT_MERGE, 1},
        {ACTION_PATCH_IC, "kube-fledged", "imagecache1", "PATCH",
         "/apis/kubefledged.io/v1alpha2/namespaces/kube-fledged/imagecaches/imagecache1",
         KAPI_CT_MERGE, 0},
        {ACTION_PUT_IC, "kube-fledged", "imagecache1", "PUT",
         "/apis/kubefledged.io/v1alpha2/namespaces/kube-fledged/imagecaches/imagecache1",
         KAPI_CT_JSON, 0},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const action_row *r = &rows[i];
        const char *name = action_kind_name(r->kind);
        action a = {.kind = r->kind, .namespace = (char *)r->ns, .name = (char *)r->name};
        strbuf path = {0};
        kube_call call = {0};
        int rc = controller_action_call(&a, &path, &call);
        ROW_CHECK(name, rc == 0 && strcmp(path.data, r->path) == 0, "rc %d, path %s", rc,
                  path.data != NULL ? path.data : "(none)");
        ROW_CHECK(name, strcmp(call.method, r->method) == 0, "method %s", call.method);
        ROW_CHECK(name,
                  (call.content_type == NULL && r->content_type == NULL) ||
                      (call.content_type != NULL && r->content_type != NULL &&
                       strcmp(call.content_type, r->content_type) == 0),
                  "content type %s", call.content_type != NULL ? call.content_type : "(none)");
        ROW_CHECK(name, call.idempotent == r->idempotent, "idempotent %d", call.idempotent);
        strbuf_free(&path);
    }
    /* a pod status write without its namespace has no path */
    action a = {.kind = ACTION_PATCH_POD_STATUS, .name = "web-0"};
    strbuf path = {0};
    kube_call call = {0};
    assert_int_equal(controller_action_call(&a, &path, &call), -1);
    strbuf_free(&path);
    /* a read carries its own query: a podSelector's pods */
    action list = {.kind = ACTION_LIST_PODS, .namespace = "ns1", .name = "ipj-uid",
                   .query = "labelSelector=app%3Dweb"};
    strbuf lp = {0};
    kube_call lc = {0};
    assert_int_equal(controller_action_call(&list, &lp, &lc), 0);
    /* a page at a time (the next pages carry continue) */
    assert_string_equal(lp.data, "/api/v1/namespaces/ns1/pods?limit=500&labelSelector=app%3Dweb");
    assert_string_equal(lc.method, "GET");
    strbuf_free(&lp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_table_complete),
        cmocka_unit_test(test_discovery_path),
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_selectors),
        cmocka_unit_test(test_page_url),
        cmocka_unit_test(test_conditions_patch),
        cmocka_unit_test(test_delete_options),
        cmocka_unit_test(test_action_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
