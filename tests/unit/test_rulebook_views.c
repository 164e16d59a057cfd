/*
 * test_rulebook_views.c - the webhook and the controller ask one rulebook
 * (lib/ota_state.h) about the same pod and must get the same answer.
 *
 * The webhook reads a pod from an AdmissionReview (webhook/review.h,
 * review_pod_view), the controller from its cache (lib/kobj.h,
 * kobj_pod_view).  Each row is one pod's conditions, decoded both ways from
 * the same JSON, classified by ota_state_of_pod; the pull-request test and
 * the node name must agree too.
 */
#include "review_fixture.h"

#include "kobj.h"
#include "ota_state.h"
#include "review.h"

#define H "5d8f6c9b7d"
#define REV OTA_MSG_REVISION_PREFIX H
#define NU_TRUE "{\"type\":\"PodNeedUpgrade\",\"status\":\"True\",\"message\":\"" REV "\"}"

static const struct {
    const char *name, *conditions; /* NULL: no conditions array */
    ota_state want;
} rows[] = {
    {"no conditions", NULL, OTA_STATE_CURRENT},
    {"kubelet's only", "[{\"type\":\"Ready\",\"status\":\"True\"}]", OTA_STATE_CURRENT},
    {"need-upgrade False",
     "[{\"type\":\"PodNeedUpgrade\",\"status\":\"False\",\"message\":\"" REV "\"}]",
     OTA_STATE_CURRENT},
    {"pending", "[" NU_TRUE "]", OTA_STATE_PENDING_UPGRADE},
    {"pulling",
     "[" NU_TRUE ",{\"type\":\"PodImageReady\",\"status\":\"False\",\"reason\":\"WaitPullImage\","
     "\"message\":\"" REV "\"}]",
     OTA_STATE_PULLING},
    {"pulling as YurtHub asks (no reason, null time)",
     "[" NU_TRUE ",{\"type\":\"PodImageReady\",\"status\":\"False\",\"message\":\"" REV "\","
     "\"lastTransitionTime\":null}]",
     OTA_STATE_PULLING},
    {"pulling, reason \"\"",
     "[" NU_TRUE ",{\"type\":\"PodImageReady\",\"status\":\"False\",\"reason\":\"\","
     "\"message\":\"" REV "\"}]",
     OTA_STATE_PULLING},
    {"ready",
     "[" NU_TRUE ",{\"type\":\"PodImageReady\",\"status\":\"True\",\"reason\":\"PullImageSuccess\","
     "\"message\":\"" REV "\"}]",
     OTA_STATE_READY},
    {"failed",
     "[" NU_TRUE ",{\"type\":\"PodImageReady\",\"status\":\"False\",\"reason\":\"PullImageFail\","
     "\"message\":\"pull image job j failed: ErrImagePull: not found\"}]",
     OTA_STATE_FAILED},
    {"ready for an older revision",
     "[" NU_TRUE ",{\"type\":\"PodImageReady\",\"status\":\"True\",\"reason\":\"PullImageSuccess\","
     "\"message\":\"" OTA_MSG_REVISION_PREFIX "7c9d5f8b64\"}]",
     OTA_STATE_PENDING_UPGRADE},
    {"the first of a type wins",
     "[" NU_TRUE ",{\"type\":\"PodImageReady\",\"status\":\"False\",\"reason\":\"WaitPullImage\","
     "\"message\":\"" REV "\"},{\"type\":\"PodImageReady\",\"status\":\"True\","
     "\"reason\":\"PullImageSuccess\",\"message\":\"" REV "\"}]",
     OTA_STATE_PULLING},
    /* AutoPrePull (issue 22): both read it, the first of its type */
    {"auto-marked",
     "[" NU_TRUE ",{\"type\":\"" OTA_COND_AUTO_PREPULL "\",\"status\":\"True\","
     "\"reason\":\"DaemonSetOptedIn\",\"message\":\"" REV "\"},{\"type\":\""
     OTA_COND_AUTO_PREPULL "\",\"status\":\"False\",\"reason\":\"OptedOut\"}]",
     OTA_STATE_PENDING_UPGRADE},
    {"taken by a node user",
     "[{\"type\":\"" OTA_COND_AUTO_PREPULL "\",\"status\":\"False\",\"reason\":\"NodeUserRequest\","
     "\"message\":\"" REV "\"}," NU_TRUE ",{\"type\":\"PodImageReady\",\"status\":\"False\","
     "\"reason\":\"WaitPullImage\",\"message\":\"" REV "\"}]",
     OTA_STATE_PULLING},
};

/* The pod of review_fixture.h, with the uid a cached object always has. */
static char *pod_json(arena *a, const char *conditions)
{
    const char *pod = fx_pod(a, "node-1", conditions);
    const char *at = strstr(pod, "\"name\":\"agent-x7k2p\",");
    assert_non_null(at);
    size_t head = (size_t)(at - pod) + strlen("\"name\":\"agent-x7k2p\",");
    return arena_printf(a, "%.*s\"uid\":\"u-1\",%s", (int)head, pod, pod + head);
}

static void test_same_answer_both_ways(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        arena a;
        arena_init(&a);
        const char *pod = pod_json(&a, rows[i].conditions);

        const char *body = fx_pod_status_review(&a, "alice", NULL, pod, pod);
        review rv;
        char err[256];
        FX_CHECK(rows[i].name, review_decode(&rv, body, strlen(body), &a, err, sizeof(err)) == 0,
                 "%s", err);
        ota_pod from_review = review_pod_view(&rv.object);

        yajl_val tree = json_parse_tree(pod, strlen(pod), 64, err, sizeof(err));
        FX_CHECK(rows[i].name, tree != NULL, "%s", err);
        kobj *cached = kobj_decode(KOBJ_POD, tree);
        yajl_tree_free(tree);
        FX_CHECK(rows[i].name, cached != NULL, "kobj_decode failed");
        ota_pod from_cache = kobj_pod_view(cached);

        ota_state webhook = ota_state_of_pod(&from_review);
        ota_state controller = ota_state_of_pod(&from_cache);
        FX_CHECK(rows[i].name, webhook == rows[i].want, "webhook reads %s, want %s",
                 ota_state_name(webhook), ota_state_name(rows[i].want));
        FX_CHECK(rows[i].name, controller == rows[i].want, "controller reads %s, want %s",
                 ota_state_name(controller), ota_state_name(rows[i].want));
        FX_CHECK(rows[i].name,
                 ota_state_is_pull_request(&from_review.image_ready) ==
                     ota_state_is_pull_request(&from_cache.image_ready),
                 "the pull-request test disagrees");
        FX_CHECK(rows[i].name, !ota_state_conditions_changed(&from_review, &from_cache),
                 "the two views of one pod differ");
        int marked = rows[i].conditions != NULL &&
                     strstr(rows[i].conditions, OTA_COND_AUTO_PREPULL) != NULL;
        FX_CHECK(rows[i].name, from_cache.auto_prepull.present == marked,
                 "AutoPrePull read %d, want %d", from_cache.auto_prepull.present, marked);
        FX_CHECK(rows[i].name,
                 ota_state_auto_prepull_allows(&from_review.auto_prepull, sv_from(REV)) ==
                     ota_state_auto_prepull_allows(&from_cache.auto_prepull, sv_from(REV)),
                 "the opt-in test disagrees");
        FX_CHECK(rows[i].name, sv_same(from_review.node_name, from_cache.node_name) &&
                                   sv_eq(from_cache.node_name, "node-1"),
                 "node names differ");
        kobj_free(cached);
        arena_free(&a);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_answer_both_ways),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
