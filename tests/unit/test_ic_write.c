/*
 * test_ic_write.c - how an ImageCache's status reaches the apiserver
 * (controller/ic_write.h): discovery says whether /status is served; the
 * metadata patch carries resourceVersion; the PUT body for the upstream
 * CRD keeps every field of the object as read (unknown ones included),
 * replaces the status, edits the annotations and keeps resourceVersion;
 * and what each answer leads to (409: read again, never the same body).
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

#include "ic_write.h"

static yajl_val tree(const char *text)
{
    char err[256];
    yajl_val v = json_parse_tree(text, strlen(text), 64, err, sizeof(err));
    if (v == NULL)
        fail_msg("not JSON: %s: %s", err, text);
    return v;
}

static void test_status_served(void **state)
{
    (void)state;
    static const struct {
        const char *name, *doc;
        int want;
    } rows[] = {
        {"our CRD: /status listed",
         "{\"kind\":\"APIResourceList\",\"groupVersion\":\"kubefledged.io/v1alpha2\",\"resources\":["
         "{\"name\":\"imagecaches\",\"namespaced\":true,\"kind\":\"ImageCache\"},"
         "{\"name\":\"imagecaches/status\",\"namespaced\":true,\"kind\":\"ImageCache\"}]}",
         1},
        {"upstream CRD: no subresource",
         "{\"kind\":\"APIResourceList\",\"resources\":[{\"name\":\"imagecaches\"}]}", 0},
        {"empty list", "{\"resources\":[]}", 0},
        {"a name that only looks like it",
         "{\"resources\":[{\"name\":\"imagecaches/status2\"},{\"name\":7},{}]}", 0},
        {"not a list: a Status", "{\"kind\":\"Status\",\"code\":404}", -1},
        {"resources not an array", "{\"resources\":{\"name\":\"imagecaches/status\"}}", -1},
        {"not an object", "[1,2]", -1},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        yajl_val v = tree(rows[i].doc);
        int got = ic_status_served(v);
        ROW_CHECK(rows[i].name, got == rows[i].want, "got %d", got);
        yajl_tree_free(v);
    }
}

/* A status as controller/ic.h's ic_write_status would write it: its
 * bytes are ic's business; here only where they go. */
static void write_test_status(json_writer *w, const void *arg)
{
    json_map_open(w, "status");
    json_kv_str(w, "status", arg);
    json_kv_str(w, "reason", "ImageCacheRefresh");
    json_map_close(w);
}

static void test_meta_patch(void **state)
{
    (void)state;
    const char *set[] = {"ota-prepull.openyurt.io/imagecache-spec", "abc123"};
    const char *drop[] = {"kubefledged.io/refresh-imagecache", "kubefledged.io/refresh-imagecache",
                          "ota-prepull.openyurt.io/imagecache-spec"};
    char *got = ic_meta_patch("4711", set, 1, drop, 3);
    assert_string_equal(got, "{\"metadata\":{\"resourceVersion\":\"4711\",\"annotations\":{"
                             "\"ota-prepull.openyurt.io/imagecache-spec\":\"abc123\","
                             "\"kubefledged.io/refresh-imagecache\":null}}}");
    free(got);
    got = ic_meta_patch(NULL, NULL, 0, drop, 1);
    assert_string_equal(got, "{\"metadata\":{\"annotations\":{"
                             "\"kubefledged.io/refresh-imagecache\":null}}}");
    free(got);
}

/* The upstream sample as the apiserver returns it, with fields this
 * controller does not know (managedFields, a label, a future top-level
 * field): all kept, in order. */
#define OBJ_HEAD                                                                                   \
    "{\"apiVersion\":\"kubefledged.io/v1alpha2\",\"kind\":\"ImageCache\",\"metadata\":{"          \
    "\"name\":\"imagecache1\",\"namespace\":\"kube-fledged\",\"uid\":\"u-1\","                     \
    "\"resourceVersion\":\"4711\",\"generation\":3,\"labels\":{\"app\":\"kubefledged\"},"          \
    "\"managedFields\":[{\"manager\":\"kubectl\",\"operation\":\"Update\",\"fieldsV1\":{\"f:x\":{}}}]"
#define OBJ_SPEC                                                                                   \
    "\"spec\":{\"cacheSpec\":[{\"images\":[\"ghcr.io/jitesoft/nginx:1.23.1\"]},{\"images\":["     \
    "\"us.gcr.io/k8s-artifacts-prod/etcd:3.5.4-0\"],\"nodeSelector\":{\"tier\":\"backend\"}}],"    \
    "\"imagePullSecrets\":[{\"name\":\"myregistrykey\"}],\"futureField\":1.50}"

static void test_put_body(void **state)
{
    (void)state;
    const char *set[] = {"ota-prepull.openyurt.io/imagecache-spec", "h2"};
    const char *drop[] = {"kubefledged.io/refresh-imagecache"};
    const struct {
        const char *name, *obj;
        const char *st; /* the new status's status, or NULL: as read */
        size_t n_set, n_drop;
        const char *want;
    } rows[] = {
        {"refresh done: annotation removed, ours replaced in place, status replaced",
         OBJ_HEAD ",\"annotations\":{\"a\":\"1\",\"kubefledged.io/refresh-imagecache\":\"\","
                  "\"ota-prepull.openyurt.io/imagecache-spec\":\"h1\"}}," OBJ_SPEC
                  ",\"status\":{\"status\":\"Processing\",\"reason\":\"ImageCacheRefresh\","
                  "\"message\":\"x\",\"startTime\":\"2026-11-27T10:00:00Z\",\"failures\":{\"a\":[]}},"
                  "\"extra\":[true,null]}",
         "Succeeded", 1, 1,
         OBJ_HEAD ",\"annotations\":{\"a\":\"1\","
                  "\"ota-prepull.openyurt.io/imagecache-spec\":\"h2\"}}," OBJ_SPEC
                  ",\"status\":{\"status\":\"Succeeded\",\"reason\":\"ImageCacheRefresh\"},"
                  "\"extra\":[true,null]}"},
        {"a new cache: no status, no annotations: both added",
         OBJ_HEAD "}," OBJ_SPEC "}", "Processing", 1, 1,
         OBJ_HEAD ",\"annotations\":{\"ota-prepull.openyurt.io/imagecache-spec\":\"h2\"}},"
                  OBJ_SPEC ",\"status\":{\"status\":\"Processing\",\"reason\":"
                  "\"ImageCacheRefresh\"}}"},
        {"annotations only (no status): the status as read",
         OBJ_HEAD ",\"annotations\":{\"kubefledged.io/refresh-imagecache\":\"x\"}}," OBJ_SPEC
                  ",\"status\":{\"status\":\"Succeeded\"}}",
         NULL, 0, 1,
         OBJ_HEAD ",\"annotations\":{}}," OBJ_SPEC ",\"status\":{\"status\":\"Succeeded\"}}"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        yajl_val obj = tree(rows[i].obj);
        char *got = ic_put_body(obj, rows[i].st != NULL ? write_test_status : NULL, rows[i].st,
                                set, rows[i].n_set, drop, rows[i].n_drop);
        ROW_CHECK(rows[i].name, got != NULL && strcmp(got, rows[i].want) == 0, "got\n%s\nwant\n%s",
                  got, rows[i].want);
        free(got);
        yajl_tree_free(obj);
    }
    yajl_val arr = tree("[1]");
    assert_null(ic_put_body(arr, write_test_status, "Failed", NULL, 0, NULL, 0));
    yajl_tree_free(arr);
}

static void test_write_sends(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int served, started, write_status, meta, holds, same_words, want;
    } rows[] = {
        {"discovery not answered yet: nothing", -1, 0, 1, 1, 0, 0, 0},
        {"nothing to write", 1, 0, 0, 0, 1, 1, 0},
        {"kube-fledged's CRD: one PUT for both", 0, 0, 1, 1, 0, 0, IC_SEND_PUT},
        {"kube-fledged's CRD: a start, one PUT for both", 0, 1, 1, 1, 0, 0, IC_SEND_PUT},
        {"kube-fledged's CRD: annotations only, still a PUT", 0, 0, 0, 1, 1, 1, IC_SEND_PUT},
        {"ours, status alone", 1, 0, 1, 0, 1, 0, IC_SEND_STATUS},
        {"ours, annotations alone", 1, 0, 0, 1, 1, 1, IC_SEND_META},
        {"a start: the record (and the action it starts) first, Processing next pass", 1, 1, 1,
         1, 0, 0, IC_SEND_META},
        {"a start read back from its record: Processing alone", 1, 1, 1, 0, 0, 0,
         IC_SEND_STATUS},
        {"an end at once (purge disabled): the status first, the request kept until then", 1, 0,
         1, 1, 0, 0, IC_SEND_STATUS},
        {"the action held: its record and removal first, the final status next pass", 1, 0, 1, 1,
         1, 0, IC_SEND_META},
        {"held, the same words (a record that did not land)", 1, 0, 1, 1, 1, 1, IC_SEND_META},
        {"purge disabled asked again: the same Failed, the annotation goes", 1, 0, 1, 1, 0, 1,
         IC_SEND_META},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        int got = ic_write_sends(rows[i].served, rows[i].started, rows[i].write_status,
                                 rows[i].meta, rows[i].holds, rows[i].same_words);
        ROW_CHECK(rows[i].name, got == rows[i].want, "got %d, want %d", got, rows[i].want);
    }
}

static void test_write_next(void **state)
{
    (void)state;
    static const struct {
        int code, to_status;
        ic_write_next_step want;
    } rows[] = {
        {200, 0, IC_WRITE_DONE},     {201, 1, IC_WRITE_DONE},     {409, 0, IC_WRITE_REREAD},
        {409, 1, IC_WRITE_REREAD},   {404, 1, IC_WRITE_REDISCOVER}, {404, 0, IC_WRITE_GONE},
        {405, 1, IC_WRITE_REDISCOVER}, {422, 0, IC_WRITE_REFUSED}, {403, 1, IC_WRITE_REFUSED},
        {500, 0, IC_WRITE_RETRY},    {429, 0, IC_WRITE_RETRY},    {0, 0, IC_WRITE_RETRY},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char name[32];
        snprintf(name, sizeof(name), "%d/%d", rows[i].code, rows[i].to_status);
        ROW_CHECK(name, ic_write_next(rows[i].code, rows[i].to_status) == rows[i].want, "got %d",
                  ic_write_next(rows[i].code, rows[i].to_status));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_served), cmocka_unit_test(test_meta_patch),
        cmocka_unit_test(test_put_body),
        cmocka_unit_test(test_write_sends),       cmocka_unit_test(test_write_next),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
