/*
 * test_ic.c - an ImageCache's decisions (controller/ic.h, docs/design.md
 * "ImageCache controller: decisions"): one table per decision (image
 * references against Node.status.images, selectors and a node's images,
 * the update diff, the action from the object alone, queueing during
 * Processing, the periodic refresh, the acted-on record and hostile
 * records), then whole passes of ic_decide (status, message, failures,
 * units, Events, waiting on NotReady nodes, purge on and off, restarts)
 * and the status body.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "row_check.h"

#include "arena.h"
#include "ic.h"
#include "ic_spec.h"
#include "json.h"

#define DIGEST "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define DIGEST2 "sha256:1123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define NOW "2026-11-27T10:00:00Z"
#define NOW_EPOCH 1795773600LL /* NOW */
#define EARLIER "2026-11-27T09:50:00Z" /* NOW - 600 s */
#define LONG_AGO "2026-11-27T08:00:00Z" /* NOW - 7200 s */

static int same_str(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    return strcmp(a, b) == 0;
}

static const char *show(const char *s)
{
    return s != NULL ? s : "(null)";
}

static void decode_spec(ic_spec *s, const char *json, arena *a)
{
    char err[256] = "";
    if (ic_decode(s, json, strlen(json), a, err, sizeof(err)) != 0)
        fail_msg("spec does not decode: %s: %s", err, json);
}

/* ---- nodes ------------------------------------------------------------------------ */

/* labels "k=v,k=v"; images "a,b" (Node.status.images names) */
typedef struct node_def {
    const char *name, *labels, *images;
    int not_ready;
} node_def;

static const char **split(const char *s, size_t *n, arena *a)
{
    *n = 0;
    if (s == NULL || *s == '\0')
        return NULL;
    const char **v = arena_alloc(a, (strlen(s) + 1) * sizeof(char *));
    const char *p = s;
    for (;;) {
        const char *c = strchr(p, ',');
        size_t len = c != NULL ? (size_t)(c - p) : strlen(p);
        v[(*n)++] = arena_strndup(a, p, len);
        if (c == NULL)
            break;
        p = c + 1;
    }
    return v;
}

static void make_node(ic_node *n, const node_def *d, arena *a)
{
    memset(n, 0, sizeof(*n));
    n->name = d->name;
    n->not_ready = d->not_ready;
    if (d->not_ready)
        n->not_ready_why = "NodeStatusUnknown: Kubelet stopped posting node status.";
    size_t k;
    const char **pairs = split(d->labels, &k, a);
    const char **keys = arena_alloc(a, (k + 1) * sizeof(char *));
    const char **values = arena_alloc(a, (k + 1) * sizeof(char *));
    for (size_t i = 0; i < k; i++) {
        const char *eq = strchr(pairs[i], '=');
        keys[i] = arena_strndup(a, pairs[i], (size_t)(eq - pairs[i]));
        values[i] = eq + 1;
    }
    n->label_keys = keys;
    n->label_values = values;
    n->n_labels = k;
    n->images = split(d->images, &n->n_images, a);
}

/* ---- image references ------------------------------------------------------------- */

static void test_image_present(void **state)
{
    (void)state;
    static const struct {
        const char *row, *ref, *names;
        int present, already;
    } rows[] = {
        {"short name is docker.io/library/:latest", "nginx", "docker.io/library/nginx:latest", 1, 0},
        {"tagged, listed with registry", "nginx:1.23", "docker.io/library/nginx:1.23", 1, 1},
        {"nginx:1.2 never matches nginx:1.23 (#121)", "nginx:1.2", "docker.io/library/nginx:1.23", 0, 0},
        {"nginx:1.2 never matches nginx:1.2-alpine", "nginx:1.2", "docker.io/library/nginx:1.2-alpine", 0, 0},
        {"nginx:1.23 is not nginx:1.2", "nginx:1.23", "docker.io/library/nginx:1.2", 0, 0},
        {"listed twice, the tag one counts", "nginx:1.25",
         "docker.io/library/nginx@" DIGEST ",docker.io/library/nginx:1.25", 1, 1},
        {"host:port is a registry: untagged, so :latest", "host:5000/app", "host:5000/app:latest", 1, 0},
        {"host:port with a tag", "host:5000/app:v1", "host:5000/app:v1", 1, 1},
        {"host:port/app is not host:5000/app:5000", "host:5000/app", "host:5000/app:5000", 0, 0},
        {"digest against the digest entry", "nginx@" DIGEST, "docker.io/library/nginx@" DIGEST, 1, 1},
        {"another digest", "nginx@" DIGEST, "docker.io/library/nginx@" DIGEST2, 0, 0},
        {"tag and digest: the digest decides", "nginx:1.25@" DIGEST, "docker.io/library/nginx@" DIGEST,
         1, 1},
        {"a digest is not its tag", "nginx@" DIGEST, "docker.io/library/nginx:1.25", 0, 0},
        {"library spelled out", "library/busybox:1.36", "docker.io/library/busybox:1.36", 1, 1},
        {"index.docker.io is docker.io", "index.docker.io/library/busybox:1.36",
         "docker.io/library/busybox:1.36", 1, 1},
        {"another registry is another image", "quay.io/nginx:1.25", "docker.io/library/nginx:1.25", 0,
         0},
        {"no images listed: absence proves nothing", "nginx:1.25", NULL, 0, 0},
        {"an invalid reference is never present", "NGINX:1.25", "docker.io/library/nginx:1.25", 0, 0},
        {"an invalid name in the list is skipped", "nginx:1.25", "Not A Ref,docker.io/library/nginx:1.25",
         1, 1},
        {"the empty reference", "", "docker.io/library/nginx:latest", 0, 0},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        arena a;
        arena_init(&a);
        size_t n;
        const char **names = split(rows[i].names, &n, &a);
        int present = ic_image_present(rows[i].ref, names, n, &a);
        int already = ic_already_present(rows[i].ref, names, n, &a);
        ROW_CHECK(rows[i].row, present == rows[i].present, "present %d", present);
        ROW_CHECK(rows[i].row, already == rows[i].already, "already %d", already);
        arena_free(&a);
    }
    static const struct {
        const char *ref, *want;
    } norm[] = {
        {"nginx", "docker.io/library/nginx:latest"},
        {"nginx:1.2", "docker.io/library/nginx:1.2"},
        {"host:5000/app", "host:5000/app:latest"},
        {"quay.io/x/y:1", "quay.io/x/y:1"},
        {"nginx:1.25@" DIGEST, "docker.io/library/nginx@" DIGEST},
        {"Upper", NULL},
        {"", NULL},
    };
    for (size_t i = 0; i < sizeof(norm) / sizeof(norm[0]); i++) {
        arena a;
        arena_init(&a);
        const char *got = ic_ref_normalize(norm[i].ref, &a);
        ROW_CHECK(norm[i].ref, same_str(got, norm[i].want), "got %s", show(got));
        arena_free(&a);
    }
}

/* ---- a node's images ------------------------------------------------------------------ */

static char *want_text(const ic_want *w, size_t n, arena *a)
{
    char *s = arena_strndup(a, "", 0);
    for (size_t i = 0; i < n; i++)
        s = arena_printf(a, "%s%s%s@%zu.%zu", s, i > 0 ? "," : "", w[i].image, w[i].list, w[i].pos);
    return s;
}

static void test_node_images(void **state)
{
    (void)state;
    static const struct {
        const char *row, *spec;
        node_def node;
        const char *want; /* image@list.pos,... */
        int matched;
    } rows[] = {
        {"no selector: every node", "{\"cacheSpec\":[{\"images\":[\"a:1\",\"b:1\"]}]}",
         {"n1", NULL, NULL, 0}, "a:1@0.0,b:1@0.1", 1},
        {"null selector: every node", "{\"cacheSpec\":[{\"images\":[\"a:1\"],\"nodeSelector\":null}]}",
         {"n1", NULL, NULL, 0}, "a:1@0.0", 1},
        {"empty selector: every node", "{\"cacheSpec\":[{\"images\":[\"a:1\"],\"nodeSelector\":{}}]}",
         {"n1", NULL, NULL, 0}, "a:1@0.0", 1},
        {"equality matches", "{\"cacheSpec\":[{\"images\":[\"a:1\"],\"nodeSelector\":{\"zone\":\"n\"}}]}",
         {"n1", "zone=n", NULL, 0}, "a:1@0.0", 1},
        {"another value", "{\"cacheSpec\":[{\"images\":[\"a:1\"],\"nodeSelector\":{\"zone\":\"n\"}}]}",
         {"n1", "zone=s", NULL, 0}, "", 0},
        {"label missing", "{\"cacheSpec\":[{\"images\":[\"a:1\"],\"nodeSelector\":{\"zone\":\"n\"}}]}",
         {"n1", "gpu=yes", NULL, 0}, "", 0},
        {"every pair must match",
         "{\"cacheSpec\":[{\"images\":[\"a:1\"],\"nodeSelector\":{\"gpu\":\"yes\",\"zone\":\"n\"}}]}",
         {"n1", "zone=n", NULL, 0}, "", 0},
        {"every pair matches",
         "{\"cacheSpec\":[{\"images\":[\"a:1\"],\"nodeSelector\":{\"gpu\":\"yes\",\"zone\":\"n\"}}]}",
         {"n1", "gpu=yes,zone=n,x=y", NULL, 0}, "a:1@0.0", 1},
        {"empty value matches an empty label",
         "{\"cacheSpec\":[{\"images\":[\"a:1\"],\"nodeSelector\":{\"edge\":\"\"}}]}",
         {"n1", "edge=", NULL, 0}, "a:1@0.0", 1},
        {"a key that is a prefix is not the key",
         "{\"cacheSpec\":[{\"images\":[\"a:1\"],\"nodeSelector\":{\"zon\":\"n\"}}]}",
         {"n1", "zone=n", NULL, 0}, "", 0},
        {"union of matching lists, first appearance kept",
         "{\"cacheSpec\":[{\"images\":[\"a:1\",\"b:1\"]},{\"images\":[\"c:1\",\"a:1\"],"
         "\"nodeSelector\":{\"zone\":\"n\"}},{\"images\":[\"d:1\"],\"nodeSelector\":{\"zone\":\"s\"}}]}",
         {"n1", "zone=n", NULL, 0}, "a:1@0.0,b:1@0.1,c:1@1.0", 1},
        {"exact-string dedup: nginx and nginx:latest are two writings",
         "{\"cacheSpec\":[{\"images\":[\"nginx\"]},{\"images\":[\"nginx:latest\",\"nginx\"]}]}",
         {"n1", NULL, NULL, 0}, "nginx@0.0,nginx:latest@1.0", 1},
        {"an empty list matched (#210): nothing, but matched", "{\"cacheSpec\":[{\"images\":[]}]}",
         {"n1", NULL, NULL, 0}, "", 1},
        {"no lists", "{\"cacheSpec\":[]}", {"n1", NULL, NULL, 0}, "", 0},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        arena a;
        arena_init(&a);
        ic_spec s;
        decode_spec(&s, rows[i].spec, &a);
        ic_node n;
        make_node(&n, &rows[i].node, &a);
        ic_lists l;
        assert_int_equal(ic_lists_of_spec(&s, &a, &l), 0);
        ic_want *w;
        int matched = -1;
        size_t k = ic_node_images(&s, &l, &n, &a, &w, &matched);
        assert_true(k != (size_t)-1);
        const char *got = want_text(w, k, &a);
        ROW_CHECK(rows[i].row, strcmp(got, rows[i].want) == 0, "got %s", got);
        ROW_CHECK(rows[i].row, matched == rows[i].matched, "matched %d", matched);
        arena_free(&a);
    }
}

static void test_hostname(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    ic_node n;
    make_node(&n, &(node_def){"node-1", "kubernetes.io/hostname=host-1", NULL, 0}, &a);
    assert_string_equal(ic_node_hostname(&n), "host-1");
    make_node(&n, &(node_def){"node-1", "zone=n", NULL, 0}, &a);
    assert_string_equal(ic_node_hostname(&n), "node-1");
    make_node(&n, &(node_def){"node-1", "kubernetes.io/hostname=", NULL, 0}, &a);
    assert_string_equal(ic_node_hostname(&n), "node-1");
    arena_free(&a);
}

static void test_update_diff(void **state)
{
    (void)state;
    static const struct {
        const char *row, *old_spec, *new_spec;
        node_def node;
        const char *added, *removed;
    } rows[] = {
        {"added and removed in one list", "{\"cacheSpec\":[{\"images\":[\"a:1\",\"b:1\"]}]}",
         "{\"cacheSpec\":[{\"images\":[\"b:1\",\"c:1\"]}]}", {"n1", NULL, NULL, 0}, "c:1@0.1", "a:1@0.0"},
        {"moved between lists: neither", "{\"cacheSpec\":[{\"images\":[\"a:1\"]},{\"images\":[\"b:1\"]}]}",
         "{\"cacheSpec\":[{\"images\":[\"b:1\"]},{\"images\":[\"a:1\"]}]}", {"n1", NULL, NULL, 0}, "", ""},
        {"removed from a list another still holds for this node: kept",
         "{\"cacheSpec\":[{\"images\":[\"a:1\"]},{\"images\":[\"a:1\"],\"nodeSelector\":{\"z\":\"n\"}}]}",
         "{\"cacheSpec\":[{\"images\":[]},{\"images\":[\"a:1\"],\"nodeSelector\":{\"z\":\"n\"}}]}",
         {"n1", "z=n", NULL, 0}, "", ""},
        {"the same on a node the other list does not select: removed",
         "{\"cacheSpec\":[{\"images\":[\"a:1\"]},{\"images\":[\"a:1\"],\"nodeSelector\":{\"z\":\"n\"}}]}",
         "{\"cacheSpec\":[{\"images\":[]},{\"images\":[\"a:1\"],\"nodeSelector\":{\"z\":\"n\"}}]}",
         {"n2", "z=s", NULL, 0}, "", "a:1@0.0"},
        {"a list the node is not selected by: nothing",
         "{\"cacheSpec\":[{\"images\":[\"a:1\"],\"nodeSelector\":{\"z\":\"n\"}}]}",
         "{\"cacheSpec\":[{\"images\":[\"b:1\"],\"nodeSelector\":{\"z\":\"n\"}}]}", {"n2", "z=s", NULL, 0},
         "", ""},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        arena a;
        arena_init(&a);
        ic_spec olds, news;
        decode_spec(&olds, rows[i].old_spec, &a);
        decode_spec(&news, rows[i].new_spec, &a);
        ic_lists ol, nl;
        assert_int_equal(ic_lists_of_spec(&olds, &a, &ol), 0);
        assert_int_equal(ic_lists_of_spec(&news, &a, &nl), 0);
        ic_node n;
        make_node(&n, &rows[i].node, &a);
        ic_want *ad, *rm;
        size_t nad, nrm;
        assert_int_equal(ic_update_diff(&news, &ol, &nl, &n, &a, &ad, &nad, &rm, &nrm), 0);
        const char *got_a = want_text(ad, nad, &a), *got_r = want_text(rm, nrm, &a);
        ROW_CHECK(rows[i].row, strcmp(got_a, rows[i].added) == 0, "added %s", got_a);
        ROW_CHECK(rows[i].row, strcmp(got_r, rows[i].removed) == 0, "removed %s", got_r);
        arena_free(&a);
    }
}

/* ---- the action from the object alone ---------------------------------------------------- */

#define H1 "1111111111111111"
#define H2 "2222222222222222"

typedef struct next_row {
    const char *row;
    const char *status, *reason, *completion;
    int refresh, purge;
    const char *acted; /* NULL: no record */
    long long period;
    ic_step step;
    ic_action act;
} next_row;

static void check_next(const next_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const next_row *r = &rows[i];
        ic_state s = {.status = r->status, .reason = r->reason, .completion_time = r->completion,
                      .has_refresh = r->refresh, .has_purge = r->purge, .spec_hash = H1,
                      .acted_hash = r->acted, .now_epoch = NOW_EPOCH, .refresh_period_s = r->period};
        ic_action act = (ic_action)-1;
        ic_step step = ic_next(&s, &act);
        ROW_CHECK(r->row, step == r->step, "step %d", (int)step);
        ROW_CHECK(r->row, act == r->act, "action %s", show(ic_action_reason(act)));
    }
}

#define P IC_STATUS_PROCESSING
#define OK IC_STATUS_SUCCEEDED
#define NOTHING IC_STEP_NOTHING, IC_ACT_NONE

static void test_next(void **state)
{
    (void)state;
    static const next_row rows[] = {
        {"no status: create", NULL, NULL, NULL, 0, 0, NULL, 900, IC_STEP_START, IC_ACT_CREATE},
        {"empty status: create", "", NULL, NULL, 0, 0, H1, 900, IC_STEP_START, IC_ACT_CREATE},
        {"no status, annotations too: create first", NULL, NULL, NULL, 1, 1, NULL, 900, IC_STEP_START,
         IC_ACT_CREATE},
        {"Processing create: continue", P, IC_REASON_CREATE, NULL, 0, 0, H1, 900, IC_STEP_CONTINUE,
         IC_ACT_CREATE},
        {"Processing update: continue", P, IC_REASON_UPDATE, NULL, 0, 0, H1, 900, IC_STEP_CONTINUE,
         IC_ACT_UPDATE},
        {"Processing refresh: continue", P, IC_REASON_REFRESH, NULL, 0, 0, H1, 900, IC_STEP_CONTINUE,
         IC_ACT_REFRESH},
        {"Processing purge: continue", P, IC_REASON_PURGE, NULL, 0, 0, H1, 900, IC_STEP_CONTINUE,
         IC_ACT_PURGE},
        {"Processing, reason no action: refresh", P, "ImagePullAborted", NULL, 0, 0, H1, 900,
         IC_STEP_START, IC_ACT_REFRESH},
        {"purge annotation", OK, IC_REASON_CREATE, NOW, 0, 1, H1, 900, IC_STEP_START, IC_ACT_PURGE},
        {"purge before refresh (upstream)", OK, IC_REASON_CREATE, NOW, 1, 1, H1, 900, IC_STEP_START,
         IC_ACT_PURGE},
        {"purge before an edit", OK, IC_REASON_CREATE, NOW, 0, 1, H2, 900, IC_STEP_START, IC_ACT_PURGE},
        {"refresh annotation", OK, IC_REASON_CREATE, NOW, 1, 0, H1, 900, IC_STEP_START, IC_ACT_REFRESH},
        {"refresh annotation and an edit: the update (pulls all a refresh would)", OK,
         IC_REASON_CREATE, NOW, 1, 0, H2, 900, IC_STEP_START, IC_ACT_UPDATE},
        {"spec edited", OK, IC_REASON_CREATE, NOW, 0, 0, H2, 900, IC_STEP_START, IC_ACT_UPDATE},
        {"spec edited after a Failed", IC_STATUS_FAILED, IC_REASON_CREATE, NOW, 0, 0, H2, 900,
         IC_STEP_START, IC_ACT_UPDATE},
        {"no record (kube-fledged served it): adopted, nothing runs", OK, IC_REASON_CREATE, NOW, 0,
         0, NULL, 900, IC_STEP_ADOPT, IC_ACT_NONE},
        {"no record, purged by kube-fledged: adopted, stays dormant", OK, IC_REASON_PURGE, NOW, 0, 0,
         NULL, 900, IC_STEP_ADOPT, IC_ACT_NONE},
        {"no record, Failed under kube-fledged: adopted, waits for an edit", IC_STATUS_FAILED,
         IC_REASON_CREATE, NOW, 0, 0, NULL, 900, IC_STEP_ADOPT, IC_ACT_NONE},
        {"no record, Aborted by kube-fledged: refresh", IC_STATUS_ABORTED, "ImagePullAborted", NOW, 0,
         0, NULL, 900, IC_STEP_START, IC_ACT_REFRESH},
        {"no record, a refresh asked: refresh", OK, IC_REASON_CREATE, NOW, 1, 0, NULL, 900,
         IC_STEP_START, IC_ACT_REFRESH},
        {"no record, a purge asked: purge", OK, IC_REASON_CREATE, NOW, 0, 1, NULL, 900, IC_STEP_START,
         IC_ACT_PURGE},
        {"Aborted by kube-fledged: refresh", IC_STATUS_ABORTED, "ImagePullAborted", NOW, 0, 0, H1, 0,
         IC_STEP_START, IC_ACT_REFRESH},
        {"nothing to do", OK, IC_REASON_CREATE, NOW, 0, 0, H1, 900, NOTHING},
        {"periodic refresh due", OK, IC_REASON_REFRESH, LONG_AGO, 0, 0, H1, 900, IC_STEP_START,
         IC_ACT_REFRESH},
        {"periodic refresh due exactly now", OK, IC_REASON_REFRESH, EARLIER, 0, 0, H1, 600,
         IC_STEP_START, IC_ACT_REFRESH},
        {"periodic refresh one second early", OK, IC_REASON_REFRESH, EARLIER, 0, 0, H1, 601, NOTHING},
        {"periodic refresh off (0s)", OK, IC_REASON_REFRESH, LONG_AGO, 0, 0, H1, 0, NOTHING},
        {"no periodic refresh after Failed", IC_STATUS_FAILED, IC_REASON_REFRESH, LONG_AGO, 0, 0, H1,
         900, NOTHING},
        {"no periodic refresh after a purge", OK, IC_REASON_PURGE, LONG_AGO, 0, 0, H1, 900, NOTHING},
        {"periodic refresh after NoImagesPulledOrDeleted", IC_STATUS_NONE, IC_REASON_CREATE, LONG_AGO,
         0, 0, H1, 900, IC_STEP_START, IC_ACT_REFRESH},
        {"no completionTime: no periodic refresh", OK, IC_REASON_CREATE, NULL, 0, 0, H1, 900, NOTHING},
        {"unreadable completionTime: no periodic refresh", OK, IC_REASON_CREATE, "yesterday", 0, 0, H1,
         900, NOTHING},
        {"a purged cache is dormant until an edit", OK, IC_REASON_PURGE, LONG_AGO, 0, 0, H2, 900,
         IC_STEP_START, IC_ACT_UPDATE},
        {"... or a refresh annotation", OK, IC_REASON_PURGE, LONG_AGO, 1, 0, H1, 900, IC_STEP_START,
         IC_ACT_REFRESH},
    };
    check_next(rows, sizeof(rows) / sizeof(rows[0]));
}

/* Edits and annotations while Processing are queued: the running action
 * goes on, and each runs after it (the trigger annotation of the running
 * one was removed at its start, so one still there arrived later). */
static void test_queueing(void **state)
{
    (void)state;
    static const next_row rows[] = {
        {"refresh running, spec edited: continue", P, IC_REASON_REFRESH, NULL, 0, 0, H2, 900,
         IC_STEP_CONTINUE, IC_ACT_REFRESH},
        {"... refresh done: the update", OK, IC_REASON_REFRESH, NOW, 0, 0, H2, 900, IC_STEP_START,
         IC_ACT_UPDATE},
        {"refresh running, refresh annotated again: continue", P, IC_REASON_REFRESH, NULL, 1, 0, H1,
         900, IC_STEP_CONTINUE, IC_ACT_REFRESH},
        {"... refresh done: the second refresh", OK, IC_REASON_REFRESH, NOW, 1, 0, H1, 900,
         IC_STEP_START, IC_ACT_REFRESH},
        {"create running, purge annotated: continue", P, IC_REASON_CREATE, NULL, 0, 1, H1, 900,
         IC_STEP_CONTINUE, IC_ACT_CREATE},
        {"... create done: the purge", OK, IC_REASON_CREATE, NOW, 0, 1, H1, 900, IC_STEP_START,
         IC_ACT_PURGE},
        {"update running, edited again and refresh annotated: continue", P, IC_REASON_UPDATE, NULL, 1,
         0, H2, 900, IC_STEP_CONTINUE, IC_ACT_UPDATE},
        {"... update done: the second update, which covers the refresh", IC_STATUS_FAILED,
         IC_REASON_UPDATE, NOW, 1, 0, H2, 900, IC_STEP_START, IC_ACT_UPDATE},
        {"purge running, all three queued: continue", P, IC_REASON_PURGE, NULL, 1, 1, H2, 900,
         IC_STEP_CONTINUE, IC_ACT_PURGE},
        {"... purge done: the next purge first", OK, IC_REASON_PURGE, NOW, 1, 1, H2, 900,
         IC_STEP_START, IC_ACT_PURGE},
        {"... then the update (the refresh with it)", OK, IC_REASON_PURGE, NOW, 1, 0, H2, 900,
         IC_STEP_START, IC_ACT_UPDATE},
        {"Processing long past any refresh period: continue, no periodic refresh", P,
         IC_REASON_REFRESH, LONG_AGO, 0, 0, H1, 1, IC_STEP_CONTINUE, IC_ACT_REFRESH},
    };
    check_next(rows, sizeof(rows) / sizeof(rows[0]));
}

static void test_refresh_in(void **state)
{
    (void)state;
    ic_state s = {.status = OK, .reason = IC_REASON_CREATE, .completion_time = EARLIER,
                  .spec_hash = H1, .acted_hash = H1, .now_epoch = NOW_EPOCH, .refresh_period_s = 900};
    assert_int_equal(ic_refresh_in(&s), 300);
    s.refresh_period_s = 600;
    assert_int_equal(ic_refresh_in(&s), 0);
    s.refresh_period_s = 0;
    assert_int_equal(ic_refresh_in(&s), -1);
    s.refresh_period_s = 900;
    s.status = IC_STATUS_FAILED;
    assert_int_equal(ic_refresh_in(&s), -1);
    s.status = P;
    assert_int_equal(ic_refresh_in(&s), -1);
}

static void test_action_words(void **state)
{
    (void)state;
    assert_string_equal(ic_action_reason(IC_ACT_CREATE), "ImageCacheCreate");
    assert_string_equal(ic_action_message(IC_ACT_CREATE),
                        "Images are being pulled on to the nodes. Please view the status after some time");
    assert_string_equal(ic_action_message(IC_ACT_PURGE),
                        "Image cache is being purged. Please view the status after some time");
    assert_null(ic_action_reason(IC_ACT_NONE));
    assert_int_equal(ic_action_of_reason("ImageCacheRefresh"), IC_ACT_REFRESH);
    assert_int_equal(ic_action_of_reason("ImageCacheRefresh "), IC_ACT_NONE);
    assert_int_equal(ic_action_of_reason(NULL), IC_ACT_NONE);
}

/* ---- the record ---------------------------------------------------------------------------- */

static void test_record(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    ic_spec s;
    decode_spec(&s, "{\"cacheSpec\":[{\"images\":[\"a:1\",\"b\\\"q\"]},{\"images\":[]}]}", &a);
    ic_lists l;
    assert_int_equal(ic_lists_of_spec(&s, &a, &l), 0);
    char h[17];
    ic_spec_hash(&s, h);
    const char *t = ic_record_encode(h, NOW, &l, NULL, &a);
    assert_non_null(t);
    char want[256];
    snprintf(want, sizeof(want),
             "{\"hash\":\"%s\",\"start\":\"" NOW "\",\"images\":[[\"a:1\",\"b\\\"q\"],[]]}", h);
    assert_string_equal(t, want);
    ic_record r;
    assert_int_equal(ic_record_decode(&r, t, strlen(t), &a), 0);
    assert_string_equal(r.hash, h);
    assert_string_equal(r.start, NOW);
    assert_true(r.has_images);
    assert_false(r.has_removed);
    assert_int_equal(r.images.n, 2);
    assert_int_equal(r.images.list[0].n, 2);
    assert_string_equal(r.images.list[0].v[1], "b\"q");
    assert_int_equal(r.images.list[1].n, 0);

    /* removed rides along */
    t = ic_record_encode(h, NULL, &l, &l, &a);
    assert_int_equal(ic_record_decode(&r, t, strlen(t), &a), 0);
    assert_null(r.start);
    assert_true(r.has_removed);
    assert_int_equal(r.removed.list[0].n, 2);

    /* above IC_RECORD_MAX: the hash alone (no removal purge) */
    size_t big = 3000;
    ic_strs one = {arena_alloc(&a, big * sizeof(char *)), big};
    for (size_t i = 0; i < big; i++)
        one.v[i] = arena_printf(&a, "registry.example.com/team/image-%04zu:1.0", i);
    ic_lists huge = {&one, 1};
    t = ic_record_encode(h, NOW, &huge, NULL, &a);
    assert_non_null(t);
    assert_true(strlen(t) <= IC_RECORD_MAX);
    assert_int_equal(ic_record_decode(&r, t, strlen(t), &a), 0);
    assert_false(r.has_images);
    assert_string_equal(r.hash, h);
    arena_free(&a);
}

static void test_record_hostile(void **state)
{
    (void)state;
    static const char *rows[] = {
        "",
        "null",
        "[]",
        "\"1111111111111111\"",
        "{}",
        "{\"hash\":1}",
        "{\"hash\":\"111111111111111\"}",
        "{\"hash\":\"11111111111111111\"}",
        "{\"hash\":\"111111111111111G\"}",
        "{\"hash\":\"AAAAAAAAAAAAAAAA\"}",
        "{\"hash\":\"1111111111111111\",\"start\":5}",
        "{\"hash\":\"1111111111111111\",\"images\":{}}",
        "{\"hash\":\"1111111111111111\",\"images\":[\"a\"]}",
        "{\"hash\":\"1111111111111111\",\"images\":[[1]]}",
        "{\"hash\":\"1111111111111111\",\"images\":[[null]]}",
        "{\"hash\":\"1111111111111111\",\"images\":[[[\"a\"]]]}",
        "{\"hash\":\"1111111111111111\",\"removed\":[[{}]]}",
        "{\"hash\":\"1111111111111111\"",
        "{\"hash\":\"1111111111111111\"}}",
        "{\"hash\":\"1111111111111111\"} x",
        "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        arena a;
        arena_init(&a);
        ic_record r;
        memset(&r, 0x5a, sizeof(r));
        int rc = ic_record_decode(&r, rows[i], strlen(rows[i]), &a);
        ROW_CHECK(rows[i], rc == -1, "rc %d", rc);
        ROW_CHECK(rows[i], r.hash[0] == '\0' && !r.has_images && r.start == NULL, "not zeroed");
        arena_free(&a);
    }
    /* larger than the bound, however well formed */
    arena a;
    arena_init(&a);
    size_t n = IC_RECORD_MAX + 64;
    char *big = arena_alloc(&a, n + 1);
    memset(big, ' ', n);
    memcpy(big, "{\"hash\":\"1111111111111111\"}", 27);
    big[n] = '\0';
    ic_record r;
    assert_int_equal(ic_record_decode(&r, big, n, &a), -1);
    assert_int_equal(ic_record_decode(&r, big, 27, &a), 0);
    /* unknown keys are ignored (a later version may add some) */
    const char *more = "{\"hash\":\"1111111111111111\",\"next\":[[\"x\"]]}";
    assert_int_equal(ic_record_decode(&r, more, strlen(more), &a), 0);
    arena_free(&a);
}

static void test_spec_hash(void **state)
{
    (void)state;
    static const char *specs[] = {
        "{\"cacheSpec\":[{\"images\":[\"a:1\"]}]}",
        "{\"cacheSpec\":[{\"images\":[\"a:1\",\"b:1\"]}]}",
        "{\"cacheSpec\":[{\"images\":[\"b:1\",\"a:1\"]}]}",
        "{\"cacheSpec\":[{\"images\":[\"a:1b:1\"]}]}",
        "{\"cacheSpec\":[{\"images\":[\"a:1\"]},{\"images\":[]}]}",
        "{\"cacheSpec\":[{\"images\":[\"a:1\"],\"nodeSelector\":{}}]}",
        "{\"cacheSpec\":[{\"images\":[\"a:1\"],\"nodeSelector\":{\"z\":\"n\"}}]}",
        "{\"cacheSpec\":[{\"images\":[\"a:1\"]}],\"imagePullSecrets\":[{\"name\":\"s\"}]}",
        "{\"cacheSpec\":[{\"images\":[\"a:1\"]}],\"imagePullSecrets\":[]}",
    };
    size_t n = sizeof(specs) / sizeof(specs[0]);
    char h[sizeof(specs) / sizeof(specs[0])][17];
    arena a;
    arena_init(&a);
    for (size_t i = 0; i < n; i++) {
        ic_spec s;
        decode_spec(&s, specs[i], &a);
        ic_spec_hash(&s, h[i]);
        assert_int_equal(strlen(h[i]), 16);
        for (size_t j = 0; j < i; j++)
            ROW_CHECK(specs[i], strcmp(h[i], h[j]) != 0, "same hash as %s", specs[j]);
    }
    /* the same spec in other whitespace and key order: the same hash */
    ic_spec s;
    decode_spec(&s, "{ \"imagePullSecrets\":[{\"name\":\"s\"}], \"cacheSpec\":[{\"images\":[\"a:1\"]}]}",
                &a);
    char again[17];
    ic_spec_hash(&s, again);
    assert_string_equal(again, h[7]);
    arena_free(&a);
}

/* ---- whole passes ---------------------------------------------------------------------------- */

static const node_def nodes3[] = {
    {"n1", "kubernetes.io/hostname=host-1,zone=n", "docker.io/library/present:1", 0},
    {"n2", "kubernetes.io/hostname=host-2,zone=s", NULL, 0},
    {"n3", "zone=n", NULL, 0},
};

typedef struct world {
    arena a;
    ic_spec spec;
    ic_node nodes[16];
    ic_input in;
    ic_plan plan;
} world;

static void world_init(world *w, const char *spec, const node_def *nodes, size_t n_nodes)
{
    memset(w, 0, sizeof(*w));
    arena_init(&w->a);
    decode_spec(&w->spec, spec, &w->a);
    for (size_t i = 0; i < n_nodes; i++)
        make_node(&w->nodes[i], &nodes[i], &w->a);
    w->in.spec = &w->spec;
    w->in.nodes = w->nodes;
    w->in.n_nodes = n_nodes;
    w->in.now = NOW;
    w->in.now_epoch = NOW_EPOCH;
    w->in.refresh_period_s = 900;
    w->in.pull_deadline_s = 300;
    w->in.purge_enabled = 1;
}

/* The record as the start of an action on the current spec wrote it. */
static const char *record_now(world *w, const char *start)
{
    ic_lists l;
    assert_int_equal(ic_lists_of_spec(&w->spec, &w->a, &l), 0);
    char h[17];
    ic_spec_hash(&w->spec, h);
    return ic_record_encode(arena_strndup(&w->a, h, 16), start, &l, NULL, &w->a);
}

static void processing(world *w, const char *reason, const char *start)
{
    w->in.status = IC_STATUS_PROCESSING;
    w->in.reason = reason;
    w->in.message = ic_action_message(ic_action_of_reason(reason));
    w->in.start_time = start;
    w->in.record = record_now(w, start);
    w->in.record_len = strlen(w->in.record);
}

static void decide(world *w)
{
    assert_int_equal(ic_decide(&w->in, &w->a, &w->plan), 0);
}

static const char *units_text(world *w)
{
    char *s = arena_strndup(&w->a, "", 0);
    for (size_t i = 0; i < w->plan.n_units; i++) {
        const ic_unit *u = &w->plan.units[i];
        s = arena_printf(&w->a, "%s%s%s/%s:", s, i > 0 ? " " : "", u->node,
                         u->op == IC_OP_PULL ? "pull" : "purge");
        for (size_t j = 0; j < u->n_images; j++)
            s = arena_printf(&w->a, "%s%s%s", s, j > 0 ? "," : "", u->images[j]);
    }
    return s;
}

static const char *items_text(world *w)
{
    char *s = arena_strndup(&w->a, "", 0);
    for (size_t i = 0; i < w->plan.n_items; i++) {
        const ic_item *it = &w->plan.items[i];
        s = arena_printf(&w->a, "%s%s%s/%s/%s=%s", s, i > 0 ? " " : "", it->node,
                         it->op == IC_OP_PULL ? "pull" : "purge", it->image,
                         ic_item_state_name(it->state));
    }
    return s;
}

static void test_create_start(void **state)
{
    (void)state;
    world w;
    world_init(&w, "{\"cacheSpec\":[{\"images\":[\"a:1\"]}]}", nodes3, 3);
    w.in.has_refresh = 1; /* arrived before the create ran: stays for later */
    decide(&w);
    assert_int_equal(w.plan.step, IC_STEP_START);
    assert_int_equal(w.plan.action, IC_ACT_CREATE);
    assert_true(w.plan.started);
    assert_true(w.plan.write_status);
    assert_string_equal(w.plan.status.status, "Processing");
    assert_string_equal(w.plan.status.reason, "ImageCacheCreate");
    assert_string_equal(w.plan.status.message, IC_MSG_CREATE);
    assert_string_equal(w.plan.status.start_time, NOW);
    assert_null(w.plan.status.completion_time);
    assert_int_equal(w.plan.n_units, 0); /* Jobs only once Processing is written */
    assert_false(w.plan.event);
    assert_false(w.plan.remove_refresh);
    assert_non_null(w.plan.record);
    ic_record r;
    assert_int_equal(ic_record_decode(&r, w.plan.record, strlen(w.plan.record), &w.a), 0);
    assert_string_equal(r.hash, w.plan.spec_hash);
    assert_string_equal(r.start, NOW);
    arena_free(&w.a);
}

/* A pass row: the cache Processing `reason` since `start`, its Jobs' rows
 * seen ("node/op/image=state[:reason:message]" separated by ' '); what it
 * decides. */
typedef struct pass_row {
    const char *row, *spec, *reason, *start;
    int purge_enabled;
    const char *seen;
    const char *items, *units;
    const char *status, *message;
    const char *failures; /* "image|node|reason|message;..." */
    const char *event_type;
} pass_row;

static ic_item *parse_seen(const char *text, size_t *n, arena *a)
{
    size_t k;
    const char **v = NULL;
    *n = 0;
    if (text == NULL)
        return NULL;
    /* separated by ' ' */
    char *copy = arena_strndup(a, text, strlen(text));
    for (char *p = copy; *p; p++)
        if (*p == ' ')
            *p = ',';
    v = split(copy, &k, a);
    ic_item *items = arena_alloc(a, (k + 1) * sizeof(*items));
    for (size_t i = 0; i < k; i++) {
        char *t = arena_strndup(a, v[i], strlen(v[i]));
        char *node = t, *op = strchr(node, '/');
        *op++ = '\0';
        char *image = strchr(op, '/');
        *image++ = '\0';
        char *st = strchr(image, '=');
        *st++ = '\0';
        char *reason = strchr(st, ':'), *msg = NULL;
        if (reason != NULL) {
            *reason++ = '\0';
            msg = strchr(reason, ':');
            *msg++ = '\0';
            for (char *p = msg; *p; p++)
                if (*p == '_')
                    *p = ' ';
        }
        ic_item_state s = IC_ITEM_PENDING;
        for (int j = IC_ITEM_PENDING; j <= IC_ITEM_FAILED; j++)
            if (strcmp(st, ic_item_state_name((ic_item_state)j)) == 0)
                s = (ic_item_state)j;
        items[i] = (ic_item){.image = image, .node = node,
                             .op = strcmp(op, "pull") == 0 ? IC_OP_PULL : IC_OP_PURGE,
                             .state = s, .reason = reason, .message = msg};
    }
    *n = k;
    return items;
}

static const char *failures_text(world *w)
{
    char *s = arena_strndup(&w->a, "", 0);
    for (size_t i = 0; i < w->plan.status.n_failures; i++) {
        const ic_failure *f = &w->plan.status.failures[i];
        s = arena_printf(&w->a, "%s%s%s|%s|%s|%s", s, i > 0 ? ";" : "", f->image, f->node, f->reason,
                         f->message);
    }
    return s;
}

#define SPEC_AB "{\"cacheSpec\":[{\"images\":[\"a:1\",\"present:1\"]}]}"
#define SPEC_SEL                                                                                   \
    "{\"cacheSpec\":[{\"images\":[\"a:1\"],\"nodeSelector\":{\"zone\":\"n\"}},"                    \
    "{\"images\":[\"b:1\"],\"nodeSelector\":{\"zone\":\"s\"}}]}"

static void test_passes(void **state)
{
    (void)state;
    static const pass_row rows[] = {
        {"create, no Job yet: a unit per node, present skipped", SPEC_AB, IC_REASON_CREATE, EARLIER,
         1, NULL,
         "n1/pull/a:1=pending n1/pull/present:1=present n2/pull/a:1=pending "
         "n2/pull/present:1=pending n3/pull/a:1=pending n3/pull/present:1=pending",
         "n1/pull:a:1 n2/pull:a:1,present:1 n3/pull:a:1,present:1", P, IC_MSG_CREATE, "", NULL},
        {"create, Jobs made: no second Job (restart), still Processing", SPEC_AB, IC_REASON_CREATE,
         EARLIER, 1, "n1/pull/a:1=running n2/pull/a:1=pulled n2/pull/present:1=running "
                     "n3/pull/a:1=pulled n3/pull/present:1=pulled",
         NULL, "", P, IC_MSG_CREATE, "", NULL},
        {"create, all pulled or present: Succeeded", SPEC_AB, IC_REASON_CREATE, EARLIER, 1,
         "n1/pull/a:1=pulled n2/pull/a:1=pulled n2/pull/present:1=pulled "
         "n3/pull/a:1=pulled n3/pull/present:1=pulled",
         NULL, "", OK, IC_MSG_PULLED, "", "Normal"},
        {"a missing image on every node: Failed, an entry per node, hostname label else name",
         SPEC_AB, IC_REASON_REFRESH, EARLIER, 1,
         "n1/pull/a:1=failed:ErrImagePull:manifest_unknown n2/pull/a:1=failed:ErrImagePull:"
         "manifest_unknown n2/pull/present:1=pulled n3/pull/a:1=failed:ImagePullBackOff:back-off "
         "n3/pull/present:1=pulled",
         NULL, "", IC_STATUS_FAILED, IC_MSG_PULL_FAILED,
         "a:1|host-1|ErrImagePull|manifest unknown;a:1|host-2|ErrImagePull|manifest unknown;"
         "a:1|n3|ImagePullBackOff|back-off",
         "Warning"},
        {"a failure without words gets kube-fledged's unknown words, never empty", SPEC_AB,
         IC_REASON_CREATE, EARLIER, 1,
         "n1/pull/a:1=failed n2/pull/a:1=pulled n2/pull/present:1=pulled n3/pull/a:1=pulled "
         "n3/pull/present:1=pulled",
         NULL, "", IC_STATUS_FAILED, IC_MSG_PULL_FAILED,
         "a:1|host-1|" IC_FAIL_UNKNOWN_REASON "|" IC_FAIL_UNKNOWN_MESSAGE, "Warning"},
        {"a Job made without an image: it was present then, though the node no longer lists "
         "it (the kubelet lists 50): present, not failed",
         SPEC_AB, IC_REASON_CREATE, EARLIER, 1,
         "n1/pull/a:1=pulled n2/pull/a:1=pulled n3/pull/a:1=pulled n3/pull/present:1=pulled",
         "n1/pull/a:1=pulled n1/pull/present:1=present n2/pull/a:1=pulled "
         "n2/pull/present:1=present n3/pull/a:1=pulled n3/pull/present:1=pulled",
         "", OK, IC_MSG_PULLED, "", "Normal"},
        {"a purge Job made without an image: that item fails, not stuck",
         "{\"cacheSpec\":[{\"images\":[\"a:1\",\"b:1\"],\"nodeSelector\":{\"zone\":\"n\"}}]}",
         IC_REASON_PURGE, EARLIER, 1,
         "n1/purge/a:1=deleted n1/purge/b:1=deleted n3/purge/a:1=deleted", NULL, "",
         IC_STATUS_FAILED, IC_MSG_DELETE_FAILED,
         "b:1|n3|" IC_FAIL_DELETE_REASON "|" IC_FAIL_DELETE_MESSAGE, "Warning"},
        {"invalid images fail at once, in no Job: \"\", null, whitespace (pull); the rest run",
         "{\"cacheSpec\":[{\"images\":[\"\",null,\" a:1\",\"a:1\",\"Bad:1\"],"
         "\"nodeSelector\":{\"zone\":\"s\"}}]}",
         IC_REASON_CREATE, EARLIER, 1, NULL,
         "n2/pull/=failed n2/pull/ a:1=failed n2/pull/a:1=pending n2/pull/Bad:1=pending",
         "n2/pull:a:1,Bad:1", P, IC_MSG_CREATE, "", NULL},
        {"invalid images: their failures once the rest are done",
         "{\"cacheSpec\":[{\"images\":[\"\",\"a:1 \",\"a:1\"],"
         "\"nodeSelector\":{\"zone\":\"s\"}}]}",
         IC_REASON_CREATE, EARLIER, 1, "n2/pull/a:1=pulled", NULL, "", IC_STATUS_FAILED,
         IC_MSG_PULL_FAILED,
         "|host-2|" IC_FAIL_INVALID_REASON "|invalid image reference: empty;"
         "a:1 |host-2|" IC_FAIL_INVALID_REASON "|invalid image reference: whitespace at byte 3",
         "Warning"},
        {"purge: a reference that does not parse fails at once, the parser's words",
         "{\"cacheSpec\":[{\"images\":[\"Bad:1\",\"a:1\"],\"nodeSelector\":{\"zone\":\"s\"}}]}",
         IC_REASON_PURGE, EARLIER, 1, NULL, "n2/purge/Bad:1=failed n2/purge/a:1=pending",
         "n2/purge:a:1", P, IC_MSG_PURGE, "", NULL},
        {"purge: two spellings of one image, one container, its outcome under both",
         "{\"cacheSpec\":[{\"images\":[\"nginx\",\"a:1\",\"docker.io/library/nginx:latest\"],"
         "\"nodeSelector\":{\"zone\":\"s\"}}]}",
         IC_REASON_PURGE, EARLIER, 1, NULL,
         "n2/purge/nginx=pending n2/purge/a:1=pending n2/purge/docker.io/library/nginx:latest=pending",
         "n2/purge:nginx,a:1", P, IC_MSG_PURGE, "", NULL},
        {"purge: two spellings, the one container failed: both entries",
         "{\"cacheSpec\":[{\"images\":[\"nginx\",\"docker.io/library/nginx:latest\"],"
         "\"nodeSelector\":{\"zone\":\"s\"}}]}",
         IC_REASON_PURGE, EARLIER, 1, "n2/purge/nginx=failed:Error:in_use", NULL, "",
         IC_STATUS_FAILED, IC_MSG_DELETE_FAILED,
         "docker.io/library/nginx:latest|host-2|Error|in use;nginx|host-2|Error|in use", "Warning"},
        {"selectors: each node its lists", SPEC_SEL, IC_REASON_CREATE, EARLIER, 1, NULL,
         "n1/pull/a:1=pending n2/pull/b:1=pending n3/pull/a:1=pending", "n1/pull:a:1 n2/pull:b:1 n3/pull:a:1",
         P, IC_MSG_CREATE, "", NULL},
        {"no node matched: NoImagesPulledOrDeleted",
         "{\"cacheSpec\":[{\"images\":[\"a:1\"],\"nodeSelector\":{\"zone\":\"x\"}}]}",
         IC_REASON_CREATE, EARLIER, 1, NULL, "", "", IC_STATUS_NONE, IC_MSG_NO_NODES, "", "Normal"},
        {"an empty list (#210): nothing to do, Succeeded", "{\"cacheSpec\":[{\"images\":[]}]}",
         IC_REASON_CREATE, EARLIER, 1, NULL, "", "", OK, IC_MSG_PULLED, "", "Normal"},
        {"purge: every image, present or not, a purge unit per node",
         "{\"cacheSpec\":[{\"images\":[\"a:1\",\"present:1\"],\"nodeSelector\":{\"zone\":\"n\"}}]}",
         IC_REASON_PURGE, EARLIER, 1, NULL,
         "n1/purge/a:1=pending n1/purge/present:1=pending n3/purge/a:1=pending "
         "n3/purge/present:1=pending",
         "n1/purge:a:1,present:1 n3/purge:a:1,present:1", P, IC_MSG_PURGE, "", NULL},
        {"purge done: the deleted message",
         "{\"cacheSpec\":[{\"images\":[\"a:1\"],\"nodeSelector\":{\"zone\":\"n\"}}]}", IC_REASON_PURGE,
         EARLIER, 1, "n1/purge/a:1=deleted n3/purge/a:1=deleted", NULL, "", OK, IC_MSG_DELETED, "",
         "Normal"},
        {"purge failed: crictl's words",
         "{\"cacheSpec\":[{\"images\":[\"a:1\"],\"nodeSelector\":{\"zone\":\"n\"}}]}", IC_REASON_PURGE,
         EARLIER, 1, "n1/purge/a:1=deleted n3/purge/a:1=failed:Error:image_is_in_use", NULL, "",
         IC_STATUS_FAILED, IC_MSG_DELETE_FAILED, "a:1|n3|Error|image is in use", "Warning"},
        {"purge running when the controller came back without purge: Failed, disabled",
         "{\"cacheSpec\":[{\"images\":[\"a:1\"]}]}", IC_REASON_PURGE, EARLIER, 0, NULL, "", "",
         IC_STATUS_FAILED, IC_MSG_PURGE_DISABLED, "", "Warning"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const pass_row *r = &rows[i];
        world w;
        world_init(&w, r->spec, nodes3, 3);
        w.in.purge_enabled = r->purge_enabled;
        processing(&w, r->reason, r->start);
        w.in.seen = parse_seen(r->seen, &w.in.n_seen, &w.a);
        decide(&w);
        ROW_CHECK(r->row, w.plan.step == IC_STEP_CONTINUE, "step %d", (int)w.plan.step);
        ROW_CHECK(r->row, w.plan.started == 0, "started");
        ROW_CHECK(r->row, w.plan.record == NULL, "record rewritten: %s", show(w.plan.record));
        const char *items = items_text(&w), *units = units_text(&w), *fails = failures_text(&w);
        if (r->items != NULL)
            ROW_CHECK(r->row, strcmp(items, r->items) == 0, "items %s", items);
        ROW_CHECK(r->row, strcmp(units, r->units) == 0, "units %s", units);
        ROW_CHECK(r->row, same_str(w.plan.status.status, r->status), "status %s",
                  show(w.plan.status.status));
        ROW_CHECK(r->row, same_str(w.plan.status.message, r->message), "message %s",
                  show(w.plan.status.message));
        ROW_CHECK(r->row, same_str(w.plan.status.reason, r->reason), "reason %s",
                  show(w.plan.status.reason));
        ROW_CHECK(r->row, same_str(w.plan.status.start_time, r->start), "start %s",
                  show(w.plan.status.start_time));
        ROW_CHECK(r->row, strcmp(fails, r->failures) == 0, "failures %s", fails);
        int final = strcmp(r->status, P) != 0;
        ROW_CHECK(r->row, w.plan.done == final && w.plan.event == final && w.plan.write_status == final,
                  "done %d event %d write %d", w.plan.done, w.plan.event, w.plan.write_status);
        ROW_CHECK(r->row, !final || same_str(w.plan.status.completion_time, NOW), "completion %s",
                  show(w.plan.status.completion_time));
        ROW_CHECK(r->row, same_str(w.plan.event_type, r->event_type), "event %s", show(w.plan.event_type));
        if (final) {
            ROW_CHECK(r->row, same_str(w.plan.event_reason, r->reason), "event reason");
            ROW_CHECK(r->row, same_str(w.plan.event_message, r->message), "event message");
        }
        arena_free(&w.a);
    }
}

static void test_unit_identity(void **state)
{
    (void)state;
    world w;
    world_init(&w, SPEC_AB, nodes3, 3);
    processing(&w, IC_REASON_REFRESH, EARLIER);
    decide(&w);
    assert_int_equal(w.plan.n_units, 3);
    const char *id = w.plan.units[0].identity;
    assert_non_null(id);
    assert_non_null(strstr(id, "pull/ImageCacheRefresh/" EARLIER "/"));
    /* a restart computes the same identity: the same Job names */
    ic_plan again;
    assert_int_equal(ic_decide(&w.in, &w.a, &again), 0);
    assert_string_equal(again.units[0].identity, id);
    /* another action start, another identity */
    processing(&w, IC_REASON_REFRESH, NOW);
    decide(&w);
    assert_string_not_equal(w.plan.units[0].identity, id);
    arena_free(&w.a);
}

/* More than IC_JOB_MAX_IMAGES images on a node: parts of 64, a Job each,
 * each its own identity (so its own Job name); the parts stay put as Jobs
 * are made and images turn up present. */
static void test_parts(void **state)
{
    (void)state;
    static const node_def one[] = {{"n1", NULL, "docker.io/library/i70:1", 0}};
    char spec[8192];
    size_t len = (size_t)snprintf(spec, sizeof(spec), "{\"cacheSpec\":[{\"images\":[");
    for (int i = 0; i < 130; i++)
        len += (size_t)snprintf(spec + len, sizeof(spec) - len, "%s\"i%d:1\"", i > 0 ? "," : "", i);
    snprintf(spec + len, sizeof(spec) - len, "]}]}");
    world w;
    world_init(&w, spec, one, 1);
    processing(&w, IC_REASON_CREATE, EARLIER);
    decide(&w);
    assert_int_equal(w.plan.n_units, 3);
    const char *base = w.plan.units[0].identity;
    assert_int_equal(w.plan.units[0].part, 0);
    assert_int_equal(w.plan.units[0].n_images, 64);
    assert_string_equal(w.plan.units[0].images[63], "i63:1");
    assert_int_equal(w.plan.units[1].part, 1);
    assert_int_equal(w.plan.units[1].n_images, 63); /* i70:1 is present */
    assert_string_equal(w.plan.units[1].images[0], "i64:1");
    assert_int_equal(w.plan.units[2].part, 2);
    assert_int_equal(w.plan.units[2].n_images, 2);
    assert_string_equal(w.plan.units[2].images[0], "i128:1");
    assert_string_equal(w.plan.units[1].identity, arena_printf(&w.a, "%s/1", base));
    assert_string_equal(w.plan.units[2].identity, arena_printf(&w.a, "%s/2", base));
    assert_int_equal(ic_identity_part(base, base), 0);
    assert_int_equal(ic_identity_part(base, w.plan.units[2].identity), 2);
    assert_int_equal(ic_identity_part(base, arena_printf(&w.a, "%s/01", base)), -1);
    assert_int_equal(ic_identity_part(base, arena_printf(&w.a, "%s/x", base)), -1);
    assert_int_equal(ic_identity_part(base, arena_printf(&w.a, "%sx", base)), -1);
    assert_int_equal(ic_identity_part(base, "pull/other"), -1);

    /* part 0's Job made (one row of it seen), i70:1 no longer listed: the
     * other two parts still wanted, the same ones */
    w.nodes[0].n_images = 0;
    w.in.seen = parse_seen("n1/pull/i3:1=running", &w.in.n_seen, &w.a);
    decide(&w);
    assert_int_equal(w.plan.n_units, 2);
    assert_int_equal(w.plan.units[0].part, 1);
    assert_int_equal(w.plan.units[0].n_images, 64);
    assert_int_equal(w.plan.units[1].part, 2);
    assert_string_equal(w.plan.status.status, P);

    /* part 1's Job was made without i70:1 (present then): present now */
    char seen[8192];
    len = 0;
    for (int i = 0; i < 130; i++)
        if (i != 70)
            len += (size_t)snprintf(seen + len, sizeof(seen) - len, "%sn1/pull/i%d:1=pulled",
                                    i > 0 ? " " : "", i);
    w.in.seen = parse_seen(seen, &w.in.n_seen, &w.a);
    decide(&w);
    assert_int_equal(w.plan.n_units, 0);
    assert_string_equal(w.plan.status.status, OK);
    arena_free(&w.a);
}

static void test_waiting_node(void **state)
{
    (void)state;
    static const node_def nodes[] = {
        {"n1", NULL, NULL, 0},
        {"n2", NULL, NULL, 1},
        {"n0", NULL, NULL, 1},
    };
    world w;
    world_init(&w, "{\"cacheSpec\":[{\"images\":[\"a:1\"]}]}", nodes, 3);
    processing(&w, IC_REASON_CREATE, EARLIER);
    w.in.seen = parse_seen("n1/pull/a:1=pulled n0/pull/a:1=running", &w.in.n_seen, &w.a);
    decide(&w);
    assert_string_equal(items_text(&w), "n1/pull/a:1=pulled n2/pull/a:1=waiting n0/pull/a:1=waiting");
    assert_string_equal(units_text(&w), ""); /* no Job for a NotReady node */
    assert_string_equal(w.plan.status.status, P);
    assert_string_equal(w.plan.status.message, IC_MSG_CREATE " Waiting for nodes: n0, n2");
    assert_true(w.plan.write_status); /* the message changed */
    assert_false(w.plan.event);
    /* the cache deadline: max(1 h, 2 x 300 s) from startTime (600 s ago) */
    assert_int_equal(w.plan.requeue_after_s, 3600 - 600);

    /* written: no second write */
    w.in.message = w.plan.status.message;
    decide(&w);
    assert_false(w.plan.write_status);

    /* the node comes back: its Job is wanted */
    w.nodes[1].not_ready = 0;
    decide(&w);
    assert_string_equal(units_text(&w), "n2/pull:a:1");
    assert_string_equal(w.plan.status.message, IC_MSG_CREATE " Waiting for nodes: n0");

    /* past the cache deadline: the waiting ones fail NodeNotReady */
    w.nodes[1].not_ready = 1;
    processing(&w, IC_REASON_CREATE, LONG_AGO);
    decide(&w);
    assert_string_equal(w.plan.status.status, IC_STATUS_FAILED);
    assert_string_equal(w.plan.status.message, IC_MSG_PULL_FAILED);
    assert_int_equal(w.plan.status.n_failures, 2);
    assert_string_equal(w.plan.status.failures[0].node, "n0");
    assert_string_equal(w.plan.status.failures[0].reason, "NodeNotReady");
    assert_string_equal(w.plan.status.failures[0].message,
                        "Node n0 was not ready by the image cache's deadline (3600s after its start): "
                        "NodeStatusUnknown: Kubelet stopped posting node status.");
    assert_string_equal(w.plan.status.failures[1].node, "n2");
    arena_free(&w.a);
}

static void test_waiting_many(void **state)
{
    (void)state;
    node_def nodes[8];
    const char *names[] = {"w7", "w6", "w5", "w4", "w3", "w2", "w1", "w0"};
    for (size_t i = 0; i < 8; i++)
        nodes[i] = (node_def){names[i], NULL, NULL, 1};
    world w;
    world_init(&w, "{\"cacheSpec\":[{\"images\":[\"a:1\"]}]}", nodes, 8);
    processing(&w, IC_REASON_REFRESH, EARLIER);
    decide(&w);
    assert_string_equal(w.plan.status.message,
                        IC_MSG_REFRESH " Waiting for nodes: w0, w1, w2, w3, w4, w5, w6, w7");
    arena_free(&w.a);

    /* past IC_WAITING_NAMES_MAX: the first ten by name, then the count */
    node_def more[12];
    char nm[12][8];
    for (size_t i = 0; i < 12; i++) {
        snprintf(nm[i], sizeof(nm[i]), "x%02zu", 11 - i);
        more[i] = (node_def){nm[i], NULL, NULL, 1};
    }
    world_init(&w, "{\"cacheSpec\":[{\"images\":[\"a:1\",\"b:1\"]}]}", more, 12);
    processing(&w, IC_REASON_REFRESH, EARLIER);
    decide(&w);
    assert_string_equal(w.plan.status.message,
                        IC_MSG_REFRESH " Waiting for nodes: x00, x01, x02, x03, x04, x05, x06, x07, "
                                       "x08, x09 and 2 more");
    arena_free(&w.a);
}

static void test_purge_disabled(void **state)
{
    (void)state;
    world w;
    world_init(&w, SPEC_AB, nodes3, 3);
    w.in.purge_enabled = 0;
    w.in.status = OK;
    w.in.reason = IC_REASON_CREATE;
    w.in.start_time = LONG_AGO;
    w.in.completion_time = LONG_AGO;
    w.in.record = record_now(&w, LONG_AGO);
    w.in.record_len = strlen(w.in.record);
    w.in.has_purge = 1;
    w.in.has_refresh = 1;
    decide(&w);
    assert_int_equal(w.plan.action, IC_ACT_PURGE);
    assert_string_equal(w.plan.status.status, "Failed");
    assert_string_equal(w.plan.status.reason, "ImageCachePurge");
    assert_string_equal(w.plan.status.message, IC_MSG_PURGE_DISABLED);
    assert_null(strstr(w.plan.status.message, "succesfully deleted"));
    assert_string_equal(w.plan.status.start_time, NOW);
    assert_string_equal(w.plan.status.completion_time, NOW);
    assert_true(w.plan.remove_purge);
    assert_false(w.plan.remove_refresh); /* runs next */
    assert_int_equal(w.plan.n_units, 0);
    assert_true(w.plan.event);
    assert_string_equal(w.plan.event_type, "Warning");
    assert_string_equal(w.plan.event_reason, "ImageCachePurge");

    /* a pass before the annotation's removal is seen, later: the same
     * decision, the same start (the Event's key), no second Event */
    w.in.status = "Failed";
    w.in.reason = IC_REASON_PURGE;
    w.in.message = IC_MSG_PURGE_DISABLED;
    w.in.start_time = NOW;
    w.in.completion_time = NOW;
    w.in.now = "2026-11-27T10:00:05Z";
    w.in.now_epoch = NOW_EPOCH + 5;
    decide(&w);
    assert_int_equal(w.plan.action, IC_ACT_PURGE);
    assert_string_equal(w.plan.status.message, IC_MSG_PURGE_DISABLED);
    assert_string_equal(w.plan.status.start_time, NOW);
    assert_string_equal(w.plan.status.completion_time, NOW);
    assert_true(w.plan.remove_purge);

    /* the next pass: the annotation gone, the refresh runs */
    w.in.status = "Failed";
    w.in.reason = IC_REASON_PURGE;
    w.in.has_purge = 0;
    decide(&w);
    assert_int_equal(w.plan.action, IC_ACT_REFRESH);
    assert_true(w.plan.remove_refresh);
    arena_free(&w.a);
}

/* An update: the record of the last action holds the old lists; the start
 * records the new ones and what was removed; the continuing pass pulls the
 * added and purges the removed (purge on), not what another list keeps. */
static void test_update_purges_removed(void **state)
{
    (void)state;
    static const node_def nodes[] = {
        {"n1", "zone=n", NULL, 0},
        {"n2", "zone=s", NULL, 0},
    };
    for (int purge = 0; purge <= 1; purge++) {
        world w;
        world_init(&w,
                   "{\"cacheSpec\":[{\"images\":[\"a:1\",\"c:1\"]},"
                   "{\"images\":[\"b:1\"],\"nodeSelector\":{\"zone\":\"n\"}}]}",
                   nodes, 2);
        w.in.purge_enabled = purge;
        w.in.status = OK;
        w.in.reason = IC_REASON_CREATE;
        w.in.start_time = LONG_AGO;
        w.in.completion_time = LONG_AGO;
        /* the spec the create ran on: list 0 [a:1, b:1], list 1 [b:1] */
        ic_strs l0 = {(const char *[]){"a:1", "b:1"}, 2}, l1 = {(const char *[]){"b:1"}, 1};
        ic_strs both[2] = {l0, l1};
        ic_lists old = {both, 2};
        w.in.record = ic_record_encode(H1, LONG_AGO, &old, NULL, &w.a);
        w.in.record_len = strlen(w.in.record);
        decide(&w);
        assert_int_equal(w.plan.action, IC_ACT_UPDATE);
        assert_true(w.plan.started);
        ic_record r;
        assert_int_equal(ic_record_decode(&r, w.plan.record, strlen(w.plan.record), &w.a), 0);
        assert_int_equal(r.has_removed, purge);

        /* the next pass: Processing written with that record */
        w.in.status = P;
        w.in.reason = IC_REASON_UPDATE;
        w.in.message = IC_MSG_UPDATE;
        w.in.start_time = NOW;
        w.in.completion_time = NULL;
        w.in.record = w.plan.record;
        w.in.record_len = strlen(w.in.record);
        decide(&w);
        const char *items = items_text(&w);
        if (purge)
            /* b:1 left list 0, but list 1 keeps it on n1; n2 loses it */
            assert_string_equal(items, "n1/pull/a:1=pending n1/pull/c:1=pending n1/pull/b:1=pending "
                                       "n2/pull/a:1=pending n2/pull/c:1=pending n2/purge/b:1=pending");
        else
            assert_string_equal(items, "n1/pull/a:1=pending n1/pull/c:1=pending n1/pull/b:1=pending "
                                       "n2/pull/a:1=pending n2/pull/c:1=pending");
        /* everything done: the pull message wins over the delete one */
        w.in.seen = parse_seen("n1/pull/a:1=pulled n1/pull/c:1=pulled n1/pull/b:1=pulled "
                               "n2/pull/a:1=pulled n2/pull/c:1=pulled n2/purge/b:1=deleted",
                               &w.in.n_seen, &w.a);
        decide(&w);
        assert_string_equal(w.plan.status.status, OK);
        assert_string_equal(w.plan.status.reason, IC_REASON_UPDATE);
        assert_string_equal(w.plan.status.message, IC_MSG_PULLED);
        /* a failed purge alone: the delete wording */
        w.in.seen = parse_seen("n1/pull/a:1=pulled n1/pull/c:1=pulled n1/pull/b:1=pulled "
                               "n2/pull/a:1=pulled n2/pull/c:1=pulled n2/purge/b:1=failed:Error:busy",
                               &w.in.n_seen, &w.a);
        decide(&w);
        if (purge) {
            assert_string_equal(w.plan.status.message, IC_MSG_DELETE_FAILED);
            /* and a failed pull besides: the pull wording */
            w.in.seen = parse_seen("n1/pull/a:1=failed:ErrImagePull:x n1/pull/c:1=pulled "
                                   "n1/pull/b:1=pulled n2/pull/a:1=pulled n2/pull/c:1=pulled "
                                   "n2/purge/b:1=failed:Error:busy",
                                   &w.in.n_seen, &w.a);
            decide(&w);
            assert_string_equal(w.plan.status.message, IC_MSG_PULL_FAILED);
            assert_string_equal(failures_text(&w), "a:1|n1|ErrImagePull|x;b:1|n2|Error|busy");
        } else {
            assert_string_equal(w.plan.status.message, IC_MSG_PULLED);
        }
        arena_free(&w.a);
    }
}

/* Restarts: a Processing cache is continued whatever the controller
 * remembers; a record that did not land (the /status write went, the
 * metadata patch did not) is written again, with the annotation removal. */
static void test_restart(void **state)
{
    (void)state;
    world w;
    world_init(&w, SPEC_AB, nodes3, 3);
    processing(&w, IC_REASON_REFRESH, EARLIER);
    w.in.record = record_now(&w, LONG_AGO); /* the last action's */
    w.in.record_len = strlen(w.in.record);
    w.in.has_refresh = 1;
    decide(&w);
    assert_int_equal(w.plan.step, IC_STEP_CONTINUE);
    assert_int_equal(w.plan.action, IC_ACT_REFRESH);
    assert_false(w.plan.started);
    assert_non_null(w.plan.record);
    assert_true(w.plan.remove_refresh);
    assert_true(w.plan.write_status);
    assert_string_equal(w.plan.status.start_time, EARLIER); /* kept */
    assert_int_equal(w.plan.n_units, 3);

    /* no startTime at all: started again */
    w.in.start_time = NULL;
    decide(&w);
    assert_true(w.plan.started);
    assert_string_equal(w.plan.status.start_time, NOW);

    /* a hostile record: as none; Processing continues on the spec */
    processing(&w, IC_REASON_CREATE, EARLIER);
    w.in.record = "{\"hash\":[[[[[[[[";
    w.in.record_len = strlen(w.in.record);
    decide(&w);
    assert_int_equal(w.plan.step, IC_STEP_CONTINUE);
    assert_non_null(w.plan.record);
    arena_free(&w.a);
}

static void test_idle(void **state)
{
    (void)state;
    world w;
    world_init(&w, SPEC_AB, nodes3, 3);
    w.in.status = OK;
    w.in.reason = IC_REASON_CREATE;
    w.in.start_time = EARLIER;
    w.in.completion_time = EARLIER;
    w.in.record = record_now(&w, EARLIER);
    w.in.record_len = strlen(w.in.record);
    decide(&w);
    assert_int_equal(w.plan.step, IC_STEP_NOTHING);
    assert_false(w.plan.write_status);
    assert_null(w.plan.record);
    assert_int_equal(w.plan.requeue_after_s, 300); /* the periodic refresh */
    w.in.refresh_period_s = 0;
    decide(&w);
    assert_int_equal(w.plan.requeue_after_s, 0);
    arena_free(&w.a);
}

/* A finished cache kube-fledged served has no record of ours: it is
 * adopted (its spec recorded, its start kept, nothing runs, no status
 * write), so a purge it made stays, and a later edit is an update. */
static void test_adopt(void **state)
{
    (void)state;
    world w;
    world_init(&w, SPEC_AB, nodes3, 3);
    w.in.status = OK;
    w.in.reason = IC_REASON_PURGE;
    w.in.message = IC_MSG_DELETED;
    w.in.start_time = EARLIER;
    w.in.completion_time = EARLIER;
    decide(&w);
    assert_int_equal(w.plan.step, IC_STEP_ADOPT);
    assert_int_equal(w.plan.action, IC_ACT_NONE);
    assert_false(w.plan.write_status);
    assert_false(w.plan.event);
    assert_int_equal(w.plan.n_units, 0);
    assert_int_equal(w.plan.requeue_after_s, 0); /* a purge: no periodic refresh */
    assert_non_null(w.plan.record);
    ic_record rec;
    assert_int_equal(ic_record_decode(&rec, w.plan.record, strlen(w.plan.record), &w.a), 0);
    assert_string_equal(rec.hash, w.plan.spec_hash);
    assert_string_equal(rec.start, EARLIER);
    assert_true(rec.has_images);
    /* the record landed: nothing more, the purge stays */
    w.in.record = w.plan.record;
    w.in.record_len = strlen(w.in.record);
    decide(&w);
    assert_int_equal(w.plan.step, IC_STEP_NOTHING);
    assert_null(w.plan.record);
    /* an edit then is an update */
    decode_spec(&w.spec, "{\"cacheSpec\":[{\"images\":[\"a:1\"]}]}", &w.a);
    decide(&w);
    assert_int_equal(w.plan.step, IC_STEP_START);
    assert_int_equal(w.plan.action, IC_ACT_UPDATE);
    arena_free(&w.a);
}

/* A hostile size: more (image, node) pairs than IC_MAX_ITEMS ends the
 * action Failed with our message, bounded memory, no Jobs. */
static void test_too_large(void **state)
{
    (void)state;
    node_def nodes[16];
    char nm[16][8];
    for (size_t i = 0; i < 16; i++) {
        snprintf(nm[i], sizeof(nm[i]), "n%02zu", i);
        nodes[i] = (node_def){nm[i], NULL, NULL, 0};
    }
    size_t n_images = IC_MAX_ITEMS / 16 + 1;
    arena b;
    arena_init(&b);
    char *spec = arena_strndup(&b, "{\"cacheSpec\":[{\"images\":[", 26);
    size_t cap = 64 + n_images * 24, len = strlen(spec);
    char *buf = arena_alloc(&b, cap);
    memcpy(buf, spec, len);
    for (size_t i = 0; i < n_images; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s\"r.io/i%zu:1\"", i > 0 ? "," : "", i);
    snprintf(buf + len, cap - len, "]}]}");
    world w;
    world_init(&w, buf, nodes, 16);
    processing(&w, IC_REASON_CREATE, EARLIER);
    decide(&w);
    assert_string_equal(w.plan.status.status, "Failed");
    char want[256];
    snprintf(want, sizeof(want), IC_MSG_TOO_LARGE, IC_MAX_ITEMS);
    assert_string_equal(w.plan.status.message, want);
    assert_int_equal(w.plan.n_units, 0);
    assert_true(w.plan.n_items <= IC_MAX_ITEMS);
    assert_true(w.plan.event);
    arena_free(&w.a);
    arena_free(&b);
}

/* ---- one container's outcome --------------------------------------------------------------- */

#define NOTFOUND                                                                                   \
    "rpc error: code = NotFound desc = failed to pull and unpack image \"r.example.com/a:9\": "   \
    "failed to resolve reference \"r.example.com/a:9\": r.example.com/a:9: not found"
#define TIMEOUT "dial tcp 10.0.0.7:443: i/o timeout"

static void test_container_outcome(void **state)
{
    (void)state;
    static const struct {
        const char *row;
        ic_container c;
        ic_item_state want;
        const char *reason, *message;
    } rows[] = {
        {"pull ran: pulled", {.op = IC_OP_PULL, .started = 1}, IC_ITEM_PULLED, NULL, NULL},
        {"pull exited 0: pulled", {.op = IC_OP_PULL, .started = 1, .terminated = 1},
         IC_ITEM_PULLED, NULL, NULL},
        {"pull killed with the pod (ContainerStatusUnknown, 137): not pulled, its words",
         {.op = IC_OP_PULL, .started = 1, .terminated = 1, .exit_code = 137,
          .term_reason = "ContainerStatusUnknown",
          .term_message = "The container could not be located when the pod was terminated"},
         IC_ITEM_FAILED, "ContainerStatusUnknown",
         "The container could not be located when the pod was terminated"},
        {"pull exited non-zero, no words: kube-fledged's unknown",
         {.op = IC_OP_PULL, .terminated = 1, .exit_code = 2}, IC_ITEM_FAILED,
         IC_FAIL_UNKNOWN_REASON, IC_FAIL_UNKNOWN_MESSAGE},
        {"nothing known yet: running", {.op = IC_OP_PULL}, IC_ITEM_RUNNING, NULL, NULL},
        {"pulling, within its deadline",
         {.op = IC_OP_PULL, .waiting_reason = "ContainerCreating", .pull_start_epoch = NOW_EPOCH - 299},
         IC_ITEM_RUNNING, NULL, NULL},
        {"not found twice: fails at once, the kubelet's words",
         {.op = IC_OP_PULL, .waiting_reason = "ErrImagePull", .waiting_message = NOTFOUND, .attempts = 2,
          .pull_start_epoch = NOW_EPOCH - 10},
         IC_ITEM_FAILED, "ErrImagePull", NOTFOUND},
        {"not found once: the registry may be racing a push",
         {.op = IC_OP_PULL, .waiting_reason = "ErrImagePull", .waiting_message = NOTFOUND, .attempts = 1,
          .pull_start_epoch = NOW_EPOCH - 10},
         IC_ITEM_RUNNING, NULL, NULL},
        {"InvalidImageName: final at once",
         {.op = IC_OP_PULL, .waiting_reason = "InvalidImageName", .waiting_message = "invalid reference format"},
         IC_ITEM_FAILED, "InvalidImageName", "invalid reference format"},
        {"a timeout within the deadline: waits",
         {.op = IC_OP_PULL, .waiting_reason = "ErrImagePull", .waiting_message = TIMEOUT,
          .pull_start_epoch = NOW_EPOCH - 100},
         IC_ITEM_RUNNING, NULL, NULL},
        {"a timeout at the deadline: the kubelet's words",
         {.op = IC_OP_PULL, .waiting_reason = "ErrImagePull", .waiting_message = TIMEOUT,
          .pull_start_epoch = NOW_EPOCH - 300},
         IC_ITEM_FAILED, "ErrImagePull", TIMEOUT},
        {"a slow pull at the deadline: ours, never empty",
         {.op = IC_OP_PULL, .waiting_reason = "ContainerCreating", .pull_start_epoch = NOW_EPOCH - 301},
         IC_ITEM_FAILED, IC_FAIL_DEADLINE_REASON, "Image pull did not finish within 300s"},
        {"not started: no deadline", {.op = IC_OP_PULL, .waiting_reason = "PodInitializing"},
         IC_ITEM_RUNNING, NULL, NULL},
        {"the Job given up: its annotations",
         {.op = IC_OP_PULL, .job_ended = 1, .given_up_reason = "ErrImagePull", .given_up_message = "gone"},
         IC_ITEM_FAILED, "ErrImagePull", "gone"},
        {"the Job ended, no words: kube-fledged's unknown",
         {.op = IC_OP_PULL, .job_ended = 1}, IC_ITEM_FAILED, IC_FAIL_UNKNOWN_REASON,
         IC_FAIL_UNKNOWN_MESSAGE},
        {"purge exit 0: deleted", {.op = IC_OP_PURGE, .terminated = 1}, IC_ITEM_DELETED, NULL, NULL},
        {"purge exit 1: crictl's words",
         {.op = IC_OP_PURGE, .terminated = 1, .exit_code = 1, .term_reason = "Error",
          .term_message = "image is in use by a container"},
         IC_ITEM_FAILED, "Error", "image is in use by a container"},
        {"purge exit 1, no words: ours",
         {.op = IC_OP_PURGE, .terminated = 1, .exit_code = 1}, IC_ITEM_FAILED, IC_FAIL_DELETE_REASON,
         IC_FAIL_DELETE_MESSAGE},
        {"purge running", {.op = IC_OP_PURGE, .started = 1}, IC_ITEM_RUNNING, NULL, NULL},
        {"purge, its Job ended around it",
         {.op = IC_OP_PURGE, .job_ended = 1}, IC_ITEM_FAILED, IC_FAIL_DELETE_REASON, IC_FAIL_DELETE_MESSAGE},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        arena a;
        arena_init(&a);
        const char *reason = "x", *message = "x";
        ic_item_state got = ic_container_outcome(&rows[i].c, NOW_EPOCH, 300, &a, &reason, &message);
        ROW_CHECK(rows[i].row, got == rows[i].want, "state %s", ic_item_state_name(got));
        ROW_CHECK(rows[i].row, same_str(reason, rows[i].reason), "reason %s", show(reason));
        ROW_CHECK(rows[i].row, same_str(message, rows[i].message), "message %s", show(message));
        arena_free(&a);
    }
}

/* ---- the status body ---------------------------------------------------------------------- */

static const char *status_body(const ic_status *s, int merge, arena *a)
{
    json_writer w;
    assert_int_equal(json_writer_init(&w, a), 0);
    json_map_open(&w, NULL);
    ic_write_status(&w, s, merge);
    json_map_close(&w);
    size_t len;
    const char *t = json_writer_finish(&w, &len);
    assert_non_null(t);
    return t;
}

static void test_write_status(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    ic_status s = {.status = P, .reason = IC_REASON_CREATE, .message = "m", .start_time = NOW};
    assert_string_equal(status_body(&s, 1, &a),
                        "{\"status\":{\"status\":\"Processing\",\"reason\":\"ImageCacheCreate\","
                        "\"message\":\"m\",\"startTime\":\"" NOW "\",\"completionTime\":null,"
                        "\"failures\":null}}");
    assert_string_equal(status_body(&s, 0, &a),
                        "{\"status\":{\"status\":\"Processing\",\"reason\":\"ImageCacheCreate\","
                        "\"message\":\"m\",\"startTime\":\"" NOW "\"}}");
    ic_failure f[] = {{"a:1", "h1", "ErrImagePull", "x"}, {"a:1", "h2", "ErrImagePull", "y"},
                      {"b:1", "h1", "Error", "z"}};
    s.status = IC_STATUS_FAILED;
    s.completion_time = NOW;
    s.failures = f;
    s.n_failures = 3;
    assert_string_equal(status_body(&s, 0, &a),
                        "{\"status\":{\"status\":\"Failed\",\"reason\":\"ImageCacheCreate\","
                        "\"message\":\"m\",\"startTime\":\"" NOW "\",\"completionTime\":\"" NOW "\","
                        "\"failures\":{\"a:1\":[{\"node\":\"h1\",\"reason\":\"ErrImagePull\",\"message\":\"x\"},"
                        "{\"node\":\"h2\",\"reason\":\"ErrImagePull\",\"message\":\"y\"}],"
                        "\"b:1\":[{\"node\":\"h1\",\"reason\":\"Error\",\"message\":\"z\"}]}}}");
    arena_free(&a);
}

/* Out of memory anywhere: -1, never a half plan that crashes. */
/* The failures map stays within its bounds: cut messages, 50 nodes an
 * image then one entry for the rest, and a budget for the whole map. */
static void test_failures_bound(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    /* a message over IC_FAIL_MESSAGE_MAX: cut on a character, "…" */
    char long_msg[700];
    memset(long_msg, 'x', sizeof(long_msg));
    memcpy(long_msg + 508, "\xc3\xa9\xc3\xa9", 4); /* é at 508..511 */
    long_msg[sizeof(long_msg) - 1] = '\0';
    ic_failure one[] = {{"a:1", "n1", "ErrImagePull", long_msg}};
    assert_int_equal(ic_failures_bound(one, 1, &a), 1);
    size_t len = strlen(one[0].message);
    assert_true(len <= IC_FAIL_MESSAGE_MAX);
    assert_int_equal(len, 508 + 3);
    assert_string_equal(one[0].message + 508, "\xe2\x80\xa6");
    assert_int_equal(strncmp(one[0].message, long_msg, 508), 0);
    ic_failure short_one[] = {{"a:1", "n1", "R", "short"}};
    assert_int_equal(ic_failures_bound(short_one, 1, &a), 1);
    assert_string_equal(short_one[0].message, "short");

    /* 60 nodes for one image: the first 50 by name, then the rest in one */
    ic_failure *f = arena_alloc(&a, 61 * sizeof(*f));
    for (size_t i = 0; i < 60; i++)
        f[i] = (ic_failure){"a:1", arena_printf(&a, "n%02zu", i),
                            i >= 55 ? "ErrImagePull" : "ImagePullBackOff", "m"};
    f[60] = (ic_failure){"b:1", "n00", "R", "m"};
    size_t n = ic_failures_bound(f, 61, &a);
    assert_int_equal(n, 52);
    assert_string_equal(f[49].node, "n49");
    assert_string_equal(f[50].image, "a:1");
    assert_string_equal(f[50].node, "<10 more nodes>");
    assert_string_equal(f[50].reason, "ErrImagePull"); /* 5 and 5: the first by bytes */
    char want[256];
    snprintf(want, sizeof(want), IC_FAIL_MORE_NODES_MESSAGE, (size_t)10, (size_t)5);
    assert_string_equal(f[50].message, want);
    assert_string_equal(f[51].image, "b:1");

    /* 40 images failing on 500 nodes with long messages: within the budget */
    size_t total = 40 * 500;
    f = arena_alloc(&a, total * sizeof(*f));
    char msg[600];
    memset(msg, 'm', sizeof(msg));
    msg[sizeof(msg) - 1] = '\0';
    for (size_t i = 0; i < total; i++)
        f[i] = (ic_failure){arena_printf(&a, "r.io/i%02zu:1", i / 500),
                            arena_printf(&a, "node-%03zu", i % 500), "ErrImagePull", msg};
    n = ic_failures_bound(f, total, &a);
    assert_true(n < total);
    assert_string_equal(f[n - 1].image + strlen(f[n - 1].image) - 13, " more images>");
    ic_status st = {.status = "Failed", .failures = f, .n_failures = n};
    const char *body = status_body(&st, 1, &a);
    assert_true(strlen(body) < IC_FAIL_BUDGET + 1024);
    assert_true(strlen(body) > IC_FAIL_BUDGET / 2);
    arena_free(&a);
}

static void test_oom(void **state)
{
    (void)state;
    for (size_t limit = 256; limit < 64 * 1024; limit += 256) {
        world w;
        world_init(&w, SPEC_AB, nodes3, 3);
        processing(&w, IC_REASON_UPDATE, EARLIER);
        w.in.seen = parse_seen("n1/pull/a:1=failed:E:m n2/pull/a:1=pulled", &w.in.n_seen, &w.a);
        arena b;
        arena_init(&b);
        arena_set_limit(&b, limit);
        ic_plan p;
        int rc = ic_decide(&w.in, &b, &p);
        assert_true(rc == 0 || rc == -1);
        arena_free(&b);
        arena_free(&w.a);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_image_present),
        cmocka_unit_test(test_node_images),
        cmocka_unit_test(test_hostname),
        cmocka_unit_test(test_update_diff),
        cmocka_unit_test(test_next),
        cmocka_unit_test(test_queueing),
        cmocka_unit_test(test_refresh_in),
        cmocka_unit_test(test_action_words),
        cmocka_unit_test(test_record),
        cmocka_unit_test(test_record_hostile),
        cmocka_unit_test(test_spec_hash),
        cmocka_unit_test(test_create_start),
        cmocka_unit_test(test_passes),
        cmocka_unit_test(test_unit_identity),
        cmocka_unit_test(test_parts),
        cmocka_unit_test(test_waiting_node),
        cmocka_unit_test(test_waiting_many),
        cmocka_unit_test(test_purge_disabled),
        cmocka_unit_test(test_update_purges_removed),
        cmocka_unit_test(test_restart),
        cmocka_unit_test(test_idle),
        cmocka_unit_test(test_adopt),
        cmocka_unit_test(test_too_large),
        cmocka_unit_test(test_container_outcome),
        cmocka_unit_test(test_write_status),
        cmocka_unit_test(test_failures_bound),
        cmocka_unit_test(test_oom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
