/*
 * test_cli_podview.c - what kubectl-ota reads of a pod and decides
 * (cli/podview.c): the state (the rulebook's, through kobj's view), the
 * target revision, when the state began, the columns of `list`, the
 * verdicts of pull, upgrade and status --watch, the replacement `upgrade
 * --wait` waits for, and the kubelet's latest Event.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "json.h"
#include "ota_names.h"
#include "podview.h"
#include "row_check.h"

#define NU_TRUE(h, t)                                                                              \
    "{\"type\":\"PodNeedUpgrade\",\"status\":\"True\",\"message\":\"controllerrevision: " h      \
    "\",\"lastTransitionTime\":\"" t "\"}"
#define IR(st, reason, msg, t)                                                                     \
    "{\"type\":\"PodImageReady\",\"status\":\"" st "\",\"reason\":\"" reason "\",\"message\":\"" \
    msg "\",\"lastTransitionTime\":\"" t "\"}"

/* A DaemonSet pod on node-1 at revision old1 with these conditions. */
static yajl_val pod_tree(const char *conditions)
{
    char json[4096];
    snprintf(json, sizeof(json),
             "{\"metadata\":{\"name\":\"agent-x7k2p\",\"namespace\":\"edge\",\"uid\":\"u-1\","
             "\"resourceVersion\":\"42\",\"creationTimestamp\":\"2026-11-21T20:00:00Z\","
             "\"labels\":{\"controller-revision-hash\":\"old1\"},"
             "\"ownerReferences\":[{\"kind\":\"Node\",\"name\":\"n\",\"uid\":\"x\"},"
             "{\"kind\":\"DaemonSet\",\"name\":\"agent\",\"uid\":\"ds-1\",\"controller\":true}]},"
             "\"spec\":{\"nodeName\":\"node-1\"},"
             "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"},%s]}}",
             conditions);
    char err[128];
    yajl_val t = json_parse_tree(json, strlen(json), 64, err, sizeof(err));
    if (t == NULL)
        fail_msg("fixture: %s: %s", err, json);
    return t;
}

/* A pre-pull Job's pod of pod pod_uid for revision rev, in phase, whose
 * target images are images (JSON strings, comma-separated). */
static cli_jobpod *jobpod(const char *pod_uid, const char *rev, const char *created,
                          const char *phase, const char *images)
{
    char json[4096], inits[2048] = "{\"name\":\"ota-helper\",\"image\":\"busybox:1.36-musl\"}";
    const char *at = images;
    for (int i = 0; at != NULL && at[0] != '\0'; i++) {
        const char *comma = strchr(at, ',');
        int len = comma != NULL ? (int)(comma - at) : (int)strlen(at);
        size_t used = strlen(inits);
        snprintf(inits + used, sizeof(inits) - used, ",{\"name\":\"pull-%d\",\"image\":%.*s}", i,
                 len, at);
        at = comma != NULL ? comma + 1 : NULL;
    }
    snprintf(json, sizeof(json),
             "{\"metadata\":{\"name\":\"ota-prepull-agent-1-abc-%s\",\"namespace\":\"edge\","
             "\"uid\":\"jp-%s\",\"creationTimestamp\":\"%s\",\"labels\":{\"ota-prepull/pod-uid\":"
             "\"%s\",\"batch.kubernetes.io/job-name\":\"ota-prepull-agent-1-abc\"},"
             "\"annotations\":{\"ota-prepull/revision\":\"%s\",\"ota-prepull/request-time\":"
             "\"2026-11-21T20:00:30Z\"}},"
             "\"spec\":{\"nodeName\":\"node-1\",\"initContainers\":[%s],\"containers\":[{\"name\":"
             "\"ota-done\",\"image\":\"busybox:1.36-musl\"}]},"
             "\"status\":{\"phase\":\"%s\",\"initContainerStatuses\":[{\"name\":\"pull-0\","
             "\"state\":{\"waiting\":{\"reason\":\"ErrImagePull\",\"message\":\"not found\"}}}]}}",
             created + 11, created, created, pod_uid, rev, inits, phase);
    char err[128];
    yajl_val t = json_parse_tree(json, strlen(json), 64, err, sizeof(err));
    if (t == NULL)
        fail_msg("fixture: %s: %s", err, json);
    cli_jobpod *j = cli_jobpod_decode(t);
    yajl_tree_free(t);
    if (j == NULL)
        fail_msg("fixture: not a Job pod: %s", json);
    return j;
}

typedef struct row {
    const char *name, *conditions;
    ota_state state;
    const char *target, *since;
    cli_pull_verdict pull;
    cli_upgrade_verdict upgrade, forced;
    int watch_exit;
} row;

static const row states[] = {
    {"no OTA condition: Current", "{\"type\":\"Initialized\",\"status\":\"True\"}",
     OTA_STATE_CURRENT, "old1", "2026-11-21T20:00:00Z", CLI_PULL_NO_UPGRADE,
     CLI_UPGRADE_NO_UPGRADE, CLI_UPGRADE_NO_UPGRADE, CLI_EXIT_NO_UPGRADE},
    {"PodNeedUpgrade False: Current",
     "{\"type\":\"PodNeedUpgrade\",\"status\":\"False\",\"message\":\"controllerrevision: old1\","
     "\"lastTransitionTime\":\"2026-11-21T20:01:00Z\"}",
     OTA_STATE_CURRENT, "old1", "2026-11-21T20:01:00Z", CLI_PULL_NO_UPGRADE,
     CLI_UPGRADE_NO_UPGRADE, CLI_UPGRADE_NO_UPGRADE, CLI_EXIT_NO_UPGRADE},
    {"PendingUpgrade", NU_TRUE("new2", "2026-11-21T20:02:00Z"), OTA_STATE_PENDING_UPGRADE, "new2",
     "2026-11-21T20:02:00Z", CLI_PULL_WRITE, CLI_UPGRADE_NOT_READY, CLI_UPGRADE_DELETE,
     CLI_EXIT_PULL_FAILED},
    {"Pulling (YurtHub's reason-less request)",
     NU_TRUE("new2", "2026-11-21T20:02:00Z") "," IR("False", "", "controllerrevision: new2",
                                                    "2026-11-21T20:03:00Z"),
     OTA_STATE_PULLING, "new2", "2026-11-21T20:03:00Z", CLI_PULL_ALREADY_PULLING,
     CLI_UPGRADE_NOT_READY, CLI_UPGRADE_DELETE, -1},
    {"Pulling (WaitPullImage)",
     NU_TRUE("new2", "2026-11-21T20:02:00Z") "," IR("False", "WaitPullImage",
                                                    "controllerrevision: new2",
                                                    "2026-11-21T20:03:00Z"),
     OTA_STATE_PULLING, "new2", "2026-11-21T20:03:00Z", CLI_PULL_ALREADY_PULLING,
     CLI_UPGRADE_NOT_READY, CLI_UPGRADE_DELETE, -1},
    {"Ready",
     NU_TRUE("new2", "2026-11-21T20:02:00Z") "," IR("True", "PullImageSuccess",
                                                    "controllerrevision: new2",
                                                    "2026-11-21T20:04:00Z"),
     OTA_STATE_READY, "new2", "2026-11-21T20:04:00Z", CLI_PULL_ALREADY_READY, CLI_UPGRADE_DELETE,
     CLI_UPGRADE_DELETE, CLI_EXIT_OK},
    {"Failed",
     NU_TRUE("new2", "2026-11-21T20:02:00Z") "," IR("False", "PullImageFail",
                                                    "pull image job j failed: ErrImagePull",
                                                    "2026-11-21T20:05:00Z"),
     OTA_STATE_FAILED, "new2", "2026-11-21T20:05:00Z", CLI_PULL_WRITE, CLI_UPGRADE_NOT_READY,
     CLI_UPGRADE_DELETE, CLI_EXIT_PULL_FAILED},
    {"Ready for an older revision: PendingUpgrade again",
     NU_TRUE("new3", "2026-11-21T20:06:00Z") "," IR("True", "PullImageSuccess",
                                                    "controllerrevision: new2",
                                                    "2026-11-21T20:04:00Z"),
     OTA_STATE_PENDING_UPGRADE, "new3", "2026-11-21T20:06:00Z", CLI_PULL_WRITE,
     CLI_UPGRADE_NOT_READY, CLI_UPGRADE_DELETE, CLI_EXIT_PULL_FAILED},
    {"no times: the pod's creation",
     "{\"type\":\"PodNeedUpgrade\",\"status\":\"True\",\"message\":\"controllerrevision: new2\"}",
     OTA_STATE_PENDING_UPGRADE, "new2", "2026-11-21T20:00:00Z", CLI_PULL_WRITE,
     CLI_UPGRADE_NOT_READY, CLI_UPGRADE_DELETE, CLI_EXIT_PULL_FAILED},
    {"a message that names no hash: the pod's own",
     "{\"type\":\"PodNeedUpgrade\",\"status\":\"True\",\"message\":\"something else\"}",
     OTA_STATE_PENDING_UPGRADE, "old1", "2026-11-21T20:00:00Z", CLI_PULL_WRITE,
     CLI_UPGRADE_NOT_READY, CLI_UPGRADE_DELETE, CLI_EXIT_PULL_FAILED},
};

static void test_states_and_verdicts(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
        const row *r = &states[i];
        yajl_val t = pod_tree(r->conditions);
        cli_pod *p = cli_pod_decode(t);
        yajl_tree_free(t);
        ROW_CHECK(r->name, p != NULL, "not decoded");
        ROW_CHECK(r->name, cli_pod_state(p) == r->state, "state %s",
                  ota_state_name(cli_pod_state(p)));
        sv target = cli_pod_target(p);
        ROW_CHECK(r->name, sv_eq(target, r->target), "target %.*s", SV_ARG(target));
        const char *since = cli_pod_state_since(p);
        ROW_CHECK(r->name, since != NULL && strcmp(since, r->since) == 0, "since %s",
                  since != NULL ? since : "(null)");
        ROW_CHECK(r->name, cli_pull_decide(cli_pod_state(p)) == r->pull, "pull %d",
                  (int)cli_pull_decide(cli_pod_state(p)));
        ROW_CHECK(r->name, cli_upgrade_decide(cli_pod_state(p), 0) == r->upgrade, "upgrade %d",
                  (int)cli_upgrade_decide(cli_pod_state(p), 0));
        ROW_CHECK(r->name, cli_upgrade_decide(cli_pod_state(p), 1) == r->forced, "forced %d",
                  (int)cli_upgrade_decide(cli_pod_state(p), 1));
        ROW_CHECK(r->name, cli_watch_exit(cli_pod_state(p)) == r->watch_exit, "watch exit %d",
                  cli_watch_exit(cli_pod_state(p)));
        ROW_CHECK(r->name, strcmp(p->owner_kind, "DaemonSet") == 0 &&
                               strcmp(p->owner_name, "agent") == 0,
                  "owner %s %s", p->owner_kind, p->owner_name);
        ROW_CHECK(r->name, strcmp(p->resource_version, "42") == 0 && p->ready, "rv/ready");
        cli_pod_free(p);
    }
}

static void test_row(void **state)
{
    (void)state;
    static const char *const init[] = {"busybox:1.37-musl"};
    static const char *const imgs[] = {"registry.example.com/edge/agent:v2", "side:1"};
    static const char *const old[] = {"registry.example.com/edge/agent:v1"};
    const cli_revision revs[] = {
        {"ds-other", "new2", NULL, 0, old, 1}, /* another DaemonSet's revision of that hash */
        {"ds-1", "old1", NULL, 0, old, 1},
        {"ds-1", "new2", init, 1, imgs, 2},
    };
    long long now = 1795291200 + 312; /* 2026-11-21T20:05:12Z */
    yajl_val t = pod_tree(NU_TRUE("new2", "2026-11-21T20:00:00Z"));
    cli_pod *p = cli_pod_decode(t);
    yajl_tree_free(t);
    char *cells[CLI_N_COLS];
    cli_list_data d = {revs, 3, 0, NULL, 0};
    assert_int_equal(cli_row_of(p, "agent", "ds-1", &d, now, cells), 0);
    const char *want[CLI_N_COLS] = {
        "edge", "agent-x7k2p", "node-1", "agent", "PendingUpgrade", "new2",
        "busybox:1.37-musl,registry.example.com/edge/agent:v2,side:1", "5m12s",
    };
    for (int i = 0; i < CLI_N_COLS; i++)
        ROW_CHECK(cli_col_names[i], strcmp(cells[i], want[i]) == 0, "got \"%s\"", cells[i]);
    cli_row_free(cells);
    /* no revision known: said so */
    d.n_revs = 1;
    assert_int_equal(cli_row_of(p, "agent", "ds-1", &d, now, cells), 0);
    assert_string_equal(cells[CLI_COL_IMAGES], "<unknown>");
    cli_row_free(cells);
    /* revisions unreadable (a node's credentials), no Job pod: said so */
    cli_list_data hidden = {NULL, 0, 1, NULL, 0};
    assert_int_equal(cli_row_of(p, "agent", "ds-1", &hidden, now, cells), 0);
    assert_string_equal(cells[CLI_COL_IMAGES], CLI_IMAGES_HIDDEN);
    cli_row_free(cells);
    /* ... the newest Job pod of this pod pulling the target gives them; an
     * older one, another pod's, or one of another hash does not */
    cli_jobpod *jps[4] = {
        jobpod("u-1", "new2", "2026-11-21T20:01:00Z", "Running", "\"r/a:v1\""),
        jobpod("u-1", "new2", "2026-11-21T20:02:00Z", "Pending", "\"r/a:v2\",\"side:1\""),
        jobpod("u-9", "new2", "2026-11-21T20:03:00Z", "Running", "\"r/other:1\""),
        jobpod("u-1", "old1", "2026-11-21T20:00:00Z", "Succeeded", "\"r/a:v0\""),
    };
    hidden.jobpods = (const cli_jobpod *const *)jps;
    hidden.n_jobpods = 4;
    assert_int_equal(cli_row_of(p, "agent", "ds-1", &hidden, now, cells), 0);
    assert_string_equal(cells[CLI_COL_IMAGES], "r/a:v2,side:1");
    cli_row_free(cells);
    hidden.jobpods = (const cli_jobpod *const *)jps + 2; /* another pod's, an older hash's */
    hidden.n_jobpods = 2;
    assert_int_equal(cli_row_of(p, "agent", "ds-1", &hidden, now, cells), 0);
    assert_string_equal(cells[CLI_COL_IMAGES], CLI_IMAGES_HIDDEN);
    cli_row_free(cells);
    for (int i = 0; i < 4; i++)
        cli_jobpod_free(jps[i]);
    cli_pod_free(p);

    /* hostile cells are made safe and cut */
    char json[4096];
    snprintf(json, sizeof(json),
             "{\"metadata\":{\"name\":\"evil\\u001b[2J\",\"uid\":\"u\",\"namespace\":\"%0300d\"},"
             "\"spec\":{}}",
             7);
    char err[64];
    t = json_parse_tree(json, strlen(json), 64, err, sizeof(err));
    assert_non_null(t);
    p = cli_pod_decode(t);
    yajl_tree_free(t);
    cli_list_data none = {NULL, 0, 0, NULL, 0};
    assert_int_equal(cli_row_of(p, NULL, NULL, &none, now, cells), 0);
    assert_string_equal(cells[CLI_COL_POD], "evil?[2J");
    assert_int_equal(strlen(cells[CLI_COL_NAMESPACE]), CLI_CELL_MAX);
    assert_string_equal(cells[CLI_COL_NODE], "<none>");
    assert_string_equal(cells[CLI_COL_TARGET], "<unknown>");
    assert_string_equal(cells[CLI_COL_AGE], "<unknown>");
    cli_row_free(cells);
    cli_pod_free(p);
}

static void test_replacement(void **state)
{
    (void)state;
    static const struct {
        const char *name, *json;
        int want;
    } rows[] = {
        {"the Ready replacement",
         "{\"metadata\":{\"name\":\"agent-new\",\"uid\":\"u-2\",\"ownerReferences\":[{\"kind\":"
         "\"DaemonSet\",\"name\":\"agent\",\"uid\":\"ds-1\",\"controller\":true}]},\"spec\":{"
         "\"nodeName\":\"node-1\"},\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":"
         "\"True\"}]}}",
         1},
        {"not Ready yet",
         "{\"metadata\":{\"name\":\"agent-new\",\"uid\":\"u-2\",\"ownerReferences\":[{\"kind\":"
         "\"DaemonSet\",\"name\":\"agent\",\"uid\":\"ds-1\",\"controller\":true}]},\"spec\":{"
         "\"nodeName\":\"node-1\"},\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":"
         "\"False\"}]}}",
         0},
        {"the old pod, still terminating and Ready",
         "{\"metadata\":{\"name\":\"agent-old\",\"uid\":\"u-1\",\"deletionTimestamp\":\"x\","
         "\"ownerReferences\":[{\"kind\":\"DaemonSet\",\"name\":\"agent\",\"uid\":\"ds-1\","
         "\"controller\":true}]},\"spec\":{\"nodeName\":\"node-1\"},\"status\":{\"conditions\":"
         "[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
         0},
        {"a new pod already being deleted",
         "{\"metadata\":{\"name\":\"agent-new\",\"uid\":\"u-5\",\"deletionTimestamp\":\"x\","
         "\"ownerReferences\":[{\"kind\":\"DaemonSet\",\"name\":\"agent\",\"uid\":\"ds-1\","
         "\"controller\":true}]},\"spec\":{\"nodeName\":\"node-1\"},\"status\":{\"conditions\":"
         "[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
         0},
        {"another DaemonSet's pod",
         "{\"metadata\":{\"name\":\"other\",\"uid\":\"u-3\",\"ownerReferences\":[{\"kind\":"
         "\"DaemonSet\",\"name\":\"x\",\"uid\":\"ds-2\",\"controller\":true}]},\"spec\":{"
         "\"nodeName\":\"node-1\"},\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":"
         "\"True\"}]}}",
         0},
        {"on another node",
         "{\"metadata\":{\"name\":\"agent-new\",\"uid\":\"u-2\",\"ownerReferences\":[{\"kind\":"
         "\"DaemonSet\",\"name\":\"agent\",\"uid\":\"ds-1\",\"controller\":true}]},\"spec\":{"
         "\"nodeName\":\"node-2\"},\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":"
         "\"True\"}]}}",
         0},
        {"no owner", "{\"metadata\":{\"name\":\"p\",\"uid\":\"u-4\"},\"spec\":{\"nodeName\":\"node-1\"},"
                     "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
         0},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char err[64];
        yajl_val t = json_parse_tree(rows[i].json, strlen(rows[i].json), 64, err, sizeof(err));
        ROW_CHECK(rows[i].name, t != NULL, "%s", err);
        cli_pod *p = cli_pod_decode(t);
        yajl_tree_free(t);
        ROW_CHECK(rows[i].name, p != NULL, "not decoded");
        ROW_CHECK(rows[i].name, cli_is_replacement(p, "ds-1", "node-1", "u-1") == rows[i].want,
                  "want %d", rows[i].want);
        cli_pod_free(p);
    }
}

static void test_latest_kubelet_event(void **state)
{
    (void)state;
    static const struct {
        const char *name, *items, *want_reason;
    } rows[] = {
        {"the latest kubelet Event",
         "[{\"reason\":\"Pulling\",\"source\":{\"component\":\"kubelet\"},\"lastTimestamp\":"
         "\"2026-11-21T20:00:01Z\"},{\"reason\":\"BackOff\",\"source\":{\"component\":\"kubelet\"},"
         "\"lastTimestamp\":\"2026-11-21T20:00:09Z\"},{\"reason\":\"Scheduled\",\"source\":{"
         "\"component\":\"default-scheduler\"},\"lastTimestamp\":\"2026-11-21T20:00:30Z\"}]",
         "BackOff"},
        {"a tie: the later item",
         "[{\"reason\":\"Pulling\",\"source\":{\"component\":\"kubelet\"},\"lastTimestamp\":"
         "\"2026-11-21T20:00:01Z\"},{\"reason\":\"Pulled\",\"source\":{\"component\":\"kubelet\"},"
         "\"lastTimestamp\":\"2026-11-21T20:00:01Z\"}]",
         "Pulled"},
        {"events.k8s.io style: eventTime, reportingComponent",
         "[{\"reason\":\"Failed\",\"reportingComponent\":\"kubelet\",\"eventTime\":"
         "\"2026-11-21T20:00:05.000000Z\"},{\"reason\":\"Pulling\",\"source\":{\"component\":"
         "\"kubelet\"},\"lastTimestamp\":\"2026-11-21T20:00:01Z\"}]",
         "Failed"},
        {"none from the kubelet", "[{\"reason\":\"Scheduled\",\"source\":{\"component\":\"s\"}}]",
         NULL},
        {"not a list", "{\"items\":1}", NULL},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char err[64];
        yajl_val t = json_parse_tree(rows[i].items, strlen(rows[i].items), 64, err, sizeof(err));
        ROW_CHECK(rows[i].name, t != NULL, "%s", err);
        yajl_val ev = cli_latest_kubelet_event(t);
        const char *path[] = {"reason", NULL};
        yajl_val reason = ev != NULL ? yajl_tree_get(ev, path, yajl_t_string) : NULL;
        const char *got = reason != NULL && YAJL_IS_STRING(reason) ? reason->u.string : "(none)";
        if (rows[i].want_reason == NULL)
            ROW_CHECK(rows[i].name, ev == NULL, "found one");
        else
            ROW_CHECK(rows[i].name, strcmp(got, rows[i].want_reason) == 0, "got %s", got);
        yajl_tree_free(t);
    }
}

static void test_watch_lines_and_failure_reasons(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        ota_state last, now;
        const char *last_word, *word;
        int want;
    } lines[] = {
        {"nothing new", OTA_STATE_PULLING, OTA_STATE_PULLING, "Pulling: x", "Pulling: x", 0},
        {"the kubelet says more", OTA_STATE_PULLING, OTA_STATE_PULLING, "Pulling: x", "BackOff: y", 1},
        {"the kubelet's word went", OTA_STATE_PULLING, OTA_STATE_PULLING, "Pulling: x", "", 0},
        {"the state moved", OTA_STATE_PULLING, OTA_STATE_READY, "Pulling: x", "Pulling: x", 1},
        {"the state moved, no word", OTA_STATE_PULLING, OTA_STATE_FAILED, "x", "", 1},
    };
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
        ROW_CHECK(lines[i].name,
                  cli_watch_line(lines[i].last, lines[i].now, lines[i].last_word, lines[i].word) ==
                      lines[i].want,
                  "want %d", lines[i].want);
    static const struct {
        const char *name, *ir, *job, *kubelet, *want;
    } why[] = {
        {"the controller's message first", "pull image job j failed: ErrImagePull: not found",
         "DeadlineExceeded: x", "BackOff: y", "pull image job j failed: ErrImagePull: not found"},
        {"then the Job's", "", "DeadlineExceeded: x", "BackOff: y", "DeadlineExceeded: x"},
        {"then the kubelet's", NULL, "", "BackOff: y", "BackOff: y"},
        {"none", NULL, NULL, NULL, ""},
    };
    for (size_t i = 0; i < sizeof(why) / sizeof(why[0]); i++) {
        const char *got = cli_failure_reason(why[i].ir, why[i].job, why[i].kubelet);
        ROW_CHECK(why[i].name, strcmp(got, why[i].want) == 0, "got \"%s\"", got);
    }
}

/* Issue 19: after a pull the registry refused, "Retry" cannot help; the
 * controller's messages as it writes them. */
static void test_failure_refusal(void **state)
{
    (void)state;
    static const struct {
        const char *name, *why;
        pullerr_refusal want;
    } rows[] = {
        {"not found", "pull image job ota-prepull-a-1 failed: ErrImagePull: rpc error: code = "
                      "NotFound desc = failed to pull and unpack image \"r/e/missing:9.9\": "
                      "failed to resolve reference \"r/e/missing:9.9\": r/e/missing:9.9: not found",
         PULLERR_REFUSED_IMAGE},
        {"401", "pull image job ota-prepull-a-1 failed: ImagePullBackOff: Back-off pulling image "
                "\"r/p/a:2\": ErrImagePull: unexpected status from HEAD request to "
                "https://r/v2/p/a/manifests/2: 401 Unauthorized",
         PULLERR_REFUSED_CREDENTIALS},
        {"denied", "pull image job j failed: ErrImagePull: pull access denied, repository does not "
                   "exist or may require authorization",
         PULLERR_REFUSED_CREDENTIALS},
        {"invalid name", "pull image job j failed: InvalidImageName: couldn't parse image name",
         PULLERR_REFUSED_IMAGE},
        {"a busy registry", "pull image job j failed: ErrImagePull: 503 Service Unavailable",
         PULLERR_REFUSED_NOT},
        {"a timeout", "pull image job j failed: ErrImagePull: dial tcp: i/o timeout",
         PULLERR_REFUSED_NOT},
        {"the deadline", "pull image job j failed: DeadlineExceeded: the Job ran past its deadline",
         PULLERR_REFUSED_NOT},
        {"no kubelet reason named", "not found", PULLERR_REFUSED_NOT},
        {"none", "", PULLERR_REFUSED_NOT},
        {"NULL", NULL, PULLERR_REFUSED_NOT},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        pullerr_refusal got = cli_failure_refusal(rows[i].why);
        ROW_CHECK(rows[i].name, got == rows[i].want, "%d, want %d", (int)got, (int)rows[i].want);
    }
}

static void test_jobpod(void **state)
{
    (void)state;
    cli_jobpod *j = jobpod("u-1", "new2", "2026-11-21T20:01:00Z", "Pending", "\"r/a:v2\",\"s:1\"");
    assert_string_equal(j->pod_uid, "u-1");
    assert_string_equal(j->revision, "new2");
    assert_string_equal(j->request_time, "2026-11-21T20:00:30Z");
    assert_string_equal(j->k->u.job_pod.job_name, "ota-prepull-agent-1-abc");
    assert_string_equal(j->k->u.job_pod.waiting_reason, "ErrImagePull");
    /* the helper is not a target */
    assert_int_equal(j->n_images, 2);
    assert_string_equal(j->images[0], "r/a:v2");
    assert_string_equal(j->images[1], "s:1");
    static const struct {
        const char *phase, *want;
    } phases[] = {{"Pending", "running"},  {"Running", "running"}, {"Succeeded", "complete"},
                  {"Failed", "failed"},    {"Unknown", "running"}};
    for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++) {
        free(j->phase);
        j->phase = strdup(phases[i].phase);
        ROW_CHECK(phases[i].phase, strcmp(cli_jobpod_state(j), phases[i].want) == 0, "%s",
                  cli_jobpod_state(j));
    }
    cli_jobpod_free(j);

    /* a pod that is not a Job's pod of ours (no pod-uid label) is not one */
    char err[64];
    yajl_val t = pod_tree("{\"type\":\"Ready\",\"status\":\"True\"}");
    assert_null(cli_jobpod_decode(t));
    yajl_tree_free(t);
    static const char many_json_head[] =
        "{\"metadata\":{\"name\":\"j\",\"uid\":\"u\",\"labels\":{\"ota-prepull/pod-uid\":\"p\"}},"
        "\"spec\":{\"initContainers\":[";
    /* a hostile pod with more pull containers than CLI_MAX_IMAGES: cut */
    char many[16384];
    size_t n = (size_t)snprintf(many, sizeof(many), "%s", many_json_head);
    for (int i = 0; i < CLI_MAX_IMAGES + 10; i++)
        n += (size_t)snprintf(many + n, sizeof(many) - n, "%s{\"name\":\"pull-%d\",\"image\":\"i\"}",
                              i > 0 ? "," : "", i);
    snprintf(many + n, sizeof(many) - n, "]}}");
    t = json_parse_tree(many, strlen(many), 64, err, sizeof(err));
    assert_non_null(t);
    j = cli_jobpod_decode(t);
    yajl_tree_free(t);
    assert_non_null(j);
    assert_int_equal(j->n_images, CLI_MAX_IMAGES);
    assert_null(j->revision);
    assert_string_equal(cli_jobpod_state(j), "running");
    const cli_jobpod *one[] = {j};
    assert_ptr_equal(cli_jobpod_newest(one, 1, "p"), j);
    assert_null(cli_jobpod_newest(one, 1, "q"));
    assert_null(cli_jobpod_newest(one, 1, NULL));
    cli_jobpod_free(j);
}

static void test_ota_verdict(void **state)
{
    (void)state;
    yajl_val with = pod_tree(NU_TRUE("new2", "2026-11-21T20:00:00Z"));
    yajl_val without = pod_tree("{\"type\":\"Initialized\",\"status\":\"True\"}");
    cli_pod *nu = cli_pod_decode(with), *plain = cli_pod_decode(without);
    yajl_tree_free(with);
    yajl_tree_free(without);
    char err[64];
    static const char ds_ota[] = "{\"metadata\":{\"name\":\"agent\",\"uid\":\"ds-1\","
                                 "\"annotations\":{\"apps.openyurt.io/update-strategy\":\"ota\"}}}";
    static const char ds_other[] = "{\"metadata\":{\"name\":\"agent\",\"uid\":\"ds-2\","
                                   "\"annotations\":{\"apps.openyurt.io/update-strategy\":\"OTA\"}}}";
    static const char ds_plain[] = "{\"metadata\":{\"name\":\"agent\",\"uid\":\"ds-1\"}}";
    static const char ds_auto[] = "{\"metadata\":{\"name\":\"agent\",\"uid\":\"ds-1\","
                                  "\"annotations\":{\"" OTA_ANN_PREDOWNLOAD_PARALLELISM "\":\"4\"}}}";
    yajl_val t1 = json_parse_tree(ds_ota, strlen(ds_ota), 64, err, sizeof(err));
    yajl_val t2 = json_parse_tree(ds_other, strlen(ds_other), 64, err, sizeof(err));
    yajl_val t3 = json_parse_tree(ds_plain, strlen(ds_plain), 64, err, sizeof(err));
    yajl_val t4 = json_parse_tree(ds_auto, strlen(ds_auto), 64, err, sizeof(err));
    kobj *ota = kobj_decode(KOBJ_DAEMONSET, t1), *other = kobj_decode(KOBJ_DAEMONSET, t2),
         *not_ota = kobj_decode(KOBJ_DAEMONSET, t3), *rolling = kobj_decode(KOBJ_DAEMONSET, t4);
    yajl_tree_free(t1);
    yajl_tree_free(t2);
    yajl_tree_free(t3);
    yajl_tree_free(t4);
    const struct {
        const char *name;
        const cli_pod *p;
        long status;
        const kobj *ds;
        cli_ota_verdict want;
    } rows[] = {
        {"read, OTA (any case)", plain, 200, ota, CLI_OTA_YES},
        {"read, OTA but another DaemonSet of that name", nu, 200, other, CLI_OTA_NOT},
        {"read, not annotated: PodNeedUpgrade does not count", nu, 200, not_ota, CLI_OTA_NOT},
        {"read, RollingUpdate opted in to automatic pre-pull", plain, 200, rolling, CLI_OTA_YES},
        {"gone", nu, 404, NULL, CLI_OTA_GONE},
        {"a node's 403, PodNeedUpgrade present", nu, 403, NULL, CLI_OTA_YES},
        {"a node's 403, no PodNeedUpgrade", plain, 403, NULL, CLI_OTA_UNKNOWN},
        {"500", nu, 500, NULL, CLI_OTA_ERROR},
        {"no answer", nu, 0, NULL, CLI_OTA_ERROR},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        cli_ota_verdict got = cli_ota_of(rows[i].p, rows[i].status, rows[i].ds);
        ROW_CHECK(rows[i].name, got == rows[i].want, "%d, want %d", (int)got, (int)rows[i].want);
    }
    kobj_free(ota);
    kobj_free(other);
    kobj_free(not_ota);
    kobj_free(rolling);
    cli_pod_free(nu);
    cli_pod_free(plain);
}

/* Issue 22: a pull that is the DaemonSet's automatic one is marked
 * "(auto)" in list's STATE, read from AutoPrePull: True for the revision
 * PodNeedUpgrade names.  A node user's takeover, an opt-out, a mark for
 * another revision, or a pod with nothing to pull is not marked. */
#define AP(st, reason, h)                                                                          \
    "{\"type\":\"ota-prepull.openyurt.io/AutoPrePull\",\"status\":\"" st "\",\"reason\":\"" reason \
    "\",\"message\":\"controllerrevision: " h "\"}"
static void test_auto_marker(void **state)
{
    (void)state;
    static const struct {
        const char *name, *conditions;
        int is_auto;
        const char *cell;
    } rows[] = {
        {"marked, pending", NU_TRUE("new2", "2026-11-21T20:02:00Z") "," AP("True", "DaemonSetOptedIn", "new2"),
         1, "PendingUpgrade (auto)"},
        {"marked, pulling",
         AP("True", "DaemonSetOptedIn", "new2") "," NU_TRUE("new2", "2026-11-21T20:02:00Z") ","
             IR("False", "WaitPullImage", "controllerrevision: new2", "2026-11-21T20:03:00Z"),
         1, "Pulling (auto)"},
        {"marked, ready",
         NU_TRUE("new2", "2026-11-21T20:02:00Z") "," IR("True", "PullImageSuccess",
                                                        "controllerrevision: new2",
                                                        "2026-11-21T20:04:00Z") ","
             AP("True", "DaemonSetOptedIn", "new2"),
         1, "Ready (auto)"},
        {"marked, failed",
         NU_TRUE("new2", "2026-11-21T20:02:00Z") "," IR("False", "PullImageFail",
                                                        "pull image job j failed: ErrImagePull",
                                                        "2026-11-21T20:05:00Z") ","
             AP("True", "DaemonSetOptedIn", "new2"),
         1, "Failed (auto)"},
        {"taken over by a node user",
         NU_TRUE("new2", "2026-11-21T20:02:00Z") "," IR("False", "WaitPullImage",
                                                        "controllerrevision: new2",
                                                        "2026-11-21T20:03:00Z") ","
             AP("False", "NodeUserRequest", "new2"),
         0, "Pulling"},
        {"opted out", NU_TRUE("new2", "2026-11-21T20:02:00Z") "," AP("False", "OptedOut", "new2"), 0,
         "PendingUpgrade"},
        {"marked for an older revision",
         NU_TRUE("new2", "2026-11-21T20:02:00Z") "," AP("True", "DaemonSetOptedIn", "old1"), 0,
         "PendingUpgrade"},
        {"nothing to pull",
         "{\"type\":\"PodNeedUpgrade\",\"status\":\"False\",\"message\":\"controllerrevision: "
         "new2\"}," AP("True", "DaemonSetOptedIn", "new2"),
         0, "Current"},
        {"no AutoPrePull", NU_TRUE("new2", "2026-11-21T20:02:00Z"), 0, "PendingUpgrade"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        yajl_val t = pod_tree(rows[i].conditions);
        cli_pod *p = cli_pod_decode(t);
        yajl_tree_free(t);
        ROW_CHECK(rows[i].name, p != NULL, "decode");
        ROW_CHECK(rows[i].name, cli_pod_auto(p) == rows[i].is_auto, "auto %d", cli_pod_auto(p));
        char *cells[CLI_N_COLS];
        cli_list_data none = {NULL, 0, 0, NULL, 0};
        ROW_CHECK(rows[i].name, cli_row_of(p, "agent", "ds-1", &none, 1795291200, cells) == 0, "row");
        ROW_CHECK(rows[i].name, strcmp(cells[CLI_COL_STATE], rows[i].cell) == 0, "STATE \"%s\"",
                  cells[CLI_COL_STATE]);
        cli_row_free(cells);
        cli_pod_free(p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_auto_marker),
        cmocka_unit_test(test_states_and_verdicts),
        cmocka_unit_test(test_failure_refusal),
        cmocka_unit_test(test_row),
        cmocka_unit_test(test_jobpod),
        cmocka_unit_test(test_ota_verdict),
        cmocka_unit_test(test_replacement),
        cmocka_unit_test(test_latest_kubelet_event),
        cmocka_unit_test(test_watch_lines_and_failure_reasons),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
