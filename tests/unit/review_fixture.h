/*
 * review_fixture.h - what the unit tests share: AdmissionReview request text
 * rendered from a few fields, and the response read back (base64 patch
 * decoded, status, warnings).
 *
 * Header-only because the Makefile builds every tests/unit/test_*.c on its
 * own against build/libota.a.  Reading the response uses yajl's tree parser
 * on purpose: it is independent of webhook/review.c's streaming decoder, so a
 * bug there cannot hide itself.  Everything lives in the test's arena.
 */
#ifndef OTA_TEST_REVIEW_FIXTURE_H
#define OTA_TEST_REVIEW_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "row_check.h"
#include <yajl/yajl_tree.h>

#include "admit.h"
#include "arena.h"
#include "ota_names.h"

#define FX_UNUSED __attribute__((unused))

#define FX_NOW "2026-11-21T21:30:00Z"
#define FX_CONTROLLER OTA_DEFAULT_CONTROLLER_USERNAME
/* --co-writer-usernames of fx_admit: yurt-manager's daemonpodupdater, whose
 * controller clients each have a service account of their own, and the
 * single account of older yurt-managers. */
#define FX_CO_WRITER "system:serviceaccount:kube-system:yurt-manager-daemon-pod-updater-controller"
#define FX_CO_WRITERS "system:serviceaccount:kube-system:yurt-manager," FX_CO_WRITER

#define FX_CHECK ROW_CHECK /* row_check.h */

/* hay contains needle; both printed when not. */
#define assert_contains(hay, needle)                                                               \
    do {                                                                                           \
        const char *hay_ = (hay), *needle_ = (needle);                                             \
        if (hay_ == NULL || strstr(hay_, needle_) == NULL)                                         \
            fail_msg("\"%s\" does not contain \"%s\"", hay_ != NULL ? hay_ : "(null)", needle_);   \
    } while (0)

/* ---- requests ------------------------------------------------------------ */

typedef struct fx_request {
    const char *uid;                 /* NULL: "uid-1" */
    const char *group, *version, *resource, *sub_resource;
    const char *operation;
    const char *namespace, *name;
    const char *username;
    const char *groups;              /* JSON array text, or NULL to omit */
    const char *object, *old_object; /* JSON text, or NULL to omit */
} fx_request;

/* The AdmissionReview text the apiserver would send for r. */
FX_UNUSED static char *fx_review(arena *a, const fx_request *r)
{
    char *sub = r->sub_resource != NULL
                    ? arena_printf(a, "\"subResource\":\"%s\",\"requestSubResource\":\"%s\",",
                                   r->sub_resource, r->sub_resource)
                    : "";
    char *groups = r->groups != NULL ? arena_printf(a, ",\"groups\":%s", r->groups) : "";
    char *object = r->object != NULL ? arena_printf(a, ",\"object\":%s", r->object) : "";
    char *old = r->old_object != NULL ? arena_printf(a, ",\"oldObject\":%s", r->old_object) : "";
    char *s = arena_printf(
        a,
        "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\",\"request\":{"
        "\"uid\":\"%s\",\"kind\":{\"group\":\"%s\",\"version\":\"%s\",\"kind\":\"X\"},"
        "\"resource\":{\"group\":\"%s\",\"version\":\"%s\",\"resource\":\"%s\"},%s"
        "\"name\":\"%s\",\"namespace\":\"%s\",\"operation\":\"%s\","
        "\"userInfo\":{\"username\":\"%s\"%s,\"extra\":{\"k\":[\"v\"]}}%s%s,"
        "\"dryRun\":false,\"options\":{\"kind\":\"UpdateOptions\",\"apiVersion\":\"meta.k8s.io/v1\"}}}",
        r->uid != NULL ? r->uid : "uid-1", r->group, r->version, r->group, r->version, r->resource,
        sub, r->name, r->namespace, r->operation, r->username, groups, object, old);
    assert_non_null(s);
    return s;
}

/* ---- pods ---------------------------------------------------------------- */

/* One condition as a compact row: status NULL means "absent". */
typedef struct fx_cond {
    const char *status, *reason, *message, *ltt;
} fx_cond;

#define FX_LTT "2026-11-21T19:40:05Z"

/* {"type":..,"status":..,"lastProbeTime":null,"lastTransitionTime":..,
 * "reason":..,"message":..}, leaving out what is NULL, as Go's encoder
 * leaves out empty strings. */
FX_UNUSED static char *fx_cond_json(arena *a, const char *type, const fx_cond *c)
{
    char *reason = c->reason != NULL ? arena_printf(a, ",\"reason\":\"%s\"", c->reason) : "";
    char *message = c->message != NULL ? arena_printf(a, ",\"message\":\"%s\"", c->message) : "";
    char *s = arena_printf(a,
                           "{\"type\":\"%s\",\"status\":\"%s\",\"lastProbeTime\":null,"
                           "\"lastTransitionTime\":\"%s\"%s%s}",
                           type, c->status, c->ltt != NULL ? c->ltt : FX_LTT, reason, message);
    assert_non_null(s);
    return s;
}

/* A pod in namespace edge, name agent-x7k2p, on node (NULL: no nodeName),
 * with status.conditions = conditions (JSON array text; NULL: no conditions
 * key) and metadata.ownerReferences = owners (JSON array text; NULL: none,
 * as an orphan's, whose DaemonSet was deleted with --cascade=orphan). */
FX_UNUSED static char *fx_pod_owned(arena *a, const char *node, const char *conditions,
                                    const char *owners)
{
    char *nn = node != NULL ? arena_printf(a, ",\"nodeName\":\"%s\"", node) : "";
    char *conds = conditions != NULL ? arena_printf(a, "\"conditions\":%s,", conditions) : "";
    char *refs = owners != NULL ? arena_printf(a, ",\"ownerReferences\":%s", owners) : "";
    char *s = arena_printf(
        a,
        "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"agent-x7k2p\","
        "\"generateName\":\"agent-\",\"namespace\":\"edge\",\"labels\":{\"app\":\"agent\","
        "\"controller-revision-hash\":\"7c9d5f8b64\"}%s},"
        "\"spec\":{\"containers\":[{\"name\":\"agent\",\"image\":\"reg.example/agent:v2\"}]%s},"
        "\"status\":{\"phase\":\"Running\",%s\"hostIP\":\"192.168.50.21\"}}",
        refs, nn, conds);
    assert_non_null(s);
    return s;
}

#define FX_DS_OWNER                                                                                \
    "[{\"apiVersion\":\"apps/v1\",\"kind\":\"DaemonSet\",\"name\":\"agent\",\"controller\":true}]"

/* The same, a pod of DaemonSet agent. */
FX_UNUSED static char *fx_pod(arena *a, const char *node, const char *conditions)
{
    return fx_pod_owned(a, node, conditions, FX_DS_OWNER);
}

/* A pods/status UPDATE of pod edge/agent-x7k2p. */
FX_UNUSED static char *fx_pod_status_review(arena *a, const char *username, const char *groups,
                                            const char *old_pod, const char *new_pod)
{
    fx_request r = {.group = "", .version = "v1", .resource = "pods", .sub_resource = "status",
                    .operation = "UPDATE", .namespace = "edge", .name = "agent-x7k2p",
                    .username = username, .groups = groups, .object = new_pod,
                    .old_object = old_pod};
    return fx_review(a, &r);
}

/* ---- responses ----------------------------------------------------------- */

/* RFC 4648 base64 with padding; -1 on anything else.  out needs n/4*3+1
 * bytes and comes back NUL-terminated. */
FX_UNUSED static int fx_base64_decode(const char *in, size_t n, char *out, size_t *out_len)
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (n % 4 != 0)
        return -1;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 4) {
        uint32_t v = 0;
        int pad = 0;
        for (size_t j = 0; j < 4; j++) {
            char c = in[i + j];
            const char *p = c != '\0' ? strchr(alphabet, c) : NULL;
            if (c == '=' && i + 4 == n && j >= 2 && (j == 3 || in[i + 3] == '=')) {
                pad++;
                v <<= 6;
            } else if (p != NULL && pad == 0) {
                v = v << 6 | (uint32_t)(p - alphabet);
            } else {
                return -1;
            }
        }
        out[o++] = (char)(v >> 16);
        if (pad < 2)
            out[o++] = (char)(v >> 8 & 0xff);
        if (pad < 1)
            out[o++] = (char)(v & 0xff);
    }
    out[o] = '\0';
    *out_len = o;
    return 0;
}

typedef struct fx_response {
    const char *api_version, *kind;
    const char *uid;
    int allowed;
    int has_status;
    long long code;
    const char *status_reason, *message;
    const char *patch_type; /* NULL when absent */
    const char *patch;      /* decoded, NUL-terminated; NULL when absent */
    const char *warnings[8];
    size_t n_warnings;
    int n_keys;             /* keys of "response" */
} fx_response;

FX_UNUSED static const char *fx_str(arena *a, yajl_val root, const char **path)
{
    yajl_val v = yajl_tree_get(root, path, yajl_t_string);
    if (v == NULL)
        return NULL;
    const char *s = v->u.string;
    return arena_strndup(a, s, strlen(s));
}

/* Parses an AdmissionReview response body; fails the test when it is not
 * well-formed JSON of that shape. */
FX_UNUSED static void fx_parse_response(arena *a, const char *body, size_t len, fx_response *r)
{
    memset(r, 0, sizeof(*r));
    assert_non_null(body);
    char *text = arena_strndup(a, body, len);
    char err[256];
    yajl_val root = yajl_tree_parse(text, err, sizeof(err));
    if (root == NULL)
        fail_msg("response is not JSON (%s): %s", err, text);
    r->api_version = fx_str(a, root, (const char *[]){"apiVersion", NULL});
    r->kind = fx_str(a, root, (const char *[]){"kind", NULL});
    yajl_val resp = yajl_tree_get(root, (const char *[]){"response", NULL}, yajl_t_object);
    assert_non_null(resp);
    r->n_keys = (int)resp->u.object.len;
    r->uid = fx_str(a, resp, (const char *[]){"uid", NULL});
    yajl_val allowed = yajl_tree_get(resp, (const char *[]){"allowed", NULL}, yajl_t_any);
    assert_true(allowed != NULL && (YAJL_IS_TRUE(allowed) || YAJL_IS_FALSE(allowed)));
    r->allowed = YAJL_IS_TRUE(allowed);
    yajl_val status = yajl_tree_get(resp, (const char *[]){"status", NULL}, yajl_t_object);
    if (status != NULL) {
        r->has_status = 1;
        yajl_val code = yajl_tree_get(status, (const char *[]){"code", NULL}, yajl_t_number);
        assert_true(code != NULL && YAJL_IS_INTEGER(code));
        r->code = YAJL_GET_INTEGER(code);
        r->status_reason = fx_str(a, status, (const char *[]){"reason", NULL});
        r->message = fx_str(a, status, (const char *[]){"message", NULL});
    }
    r->patch_type = fx_str(a, resp, (const char *[]){"patchType", NULL});
    const char *b64 = fx_str(a, resp, (const char *[]){"patch", NULL});
    if (b64 != NULL) {
        size_t n = strlen(b64), plen;
        char *patch = arena_alloc(a, n / 4 * 3 + 1);
        if (fx_base64_decode(b64, n, patch, &plen) != 0)
            fail_msg("patch is not base64: %s", b64);
        assert_int_equal(plen, strlen(patch)); /* no NUL inside */
        r->patch = patch;
    }
    yajl_val warnings = yajl_tree_get(resp, (const char *[]){"warnings", NULL}, yajl_t_array);
    if (warnings != NULL) {
        for (size_t i = 0; i < warnings->u.array.len && i < 8; i++) {
            assert_true(YAJL_IS_STRING(warnings->u.array.values[i]));
            const char *w = YAJL_GET_STRING(warnings->u.array.values[i]);
            r->warnings[r->n_warnings++] = arena_strndup(a, w, strlen(w));
        }
    }
    yajl_tree_free(root);
}

/* admit_review() with the default controller name (and FX_CO_WRITERS) at FX_NOW; asserts it did
 * not run out of memory and returned a 200 with a well-formed review. */
FX_UNUSED static void fx_admit(arena *a, admit_phase phase, const char *body, admit_outcome *out,
                               fx_response *resp)
{
    const admit_config cfg = {FX_CONTROLLER, FX_CO_WRITERS};
    assert_int_equal(admit_review(phase, body, strlen(body), FX_NOW, &cfg, a, out), 0);
    if (out->http_status != 200)
        fail_msg("HTTP %d (%s) for %s", out->http_status,
                 out->message != NULL ? out->message : "", body);
    fx_parse_response(a, out->body, out->body_len, resp);
    assert_string_equal(resp->api_version, "admission.k8s.io/v1");
    assert_string_equal(resp->kind, "AdmissionReview");
}

/* Checks row `name`'s verdict: allowed with no status when rule is
 * OTA_RULE_NONE, else denied by rule with code and exactly message, in the
 * response and in the outcome. */
FX_UNUSED static void fx_check_verdict(const char *name, const admit_outcome *out, const fx_response *resp,
                                       ota_rule rule, long long code, const char *message)
{
    if (rule == OTA_RULE_NONE) {
        FX_CHECK(name, resp->allowed && !resp->has_status && out->result == ADMIT_ALLOWED, "denied: %s",
                 resp->message);
        return;
    }
    FX_CHECK(name, !resp->allowed && out->result == ADMIT_DENIED, "allowed");
    FX_CHECK(name, out->rule == rule, "rule %s", ota_rule_name(out->rule));
    FX_CHECK(name, resp->code == code, "code %lld", resp->code);
    FX_CHECK(name, resp->message != NULL && strcmp(resp->message, message) == 0, "message\n  got  %s\n  want %s",
             resp->message, message);
    FX_CHECK(name, out->message != NULL && strcmp(out->message, message) == 0, "outcome message %s",
             out->message);
}

/* Fails unless every rule from first to last (ota_rule.h) is the rule of
 * some row of table (an array of structs with a member `rule`): a table
 * of denials that leaves a rule untested shows here. */
#define FX_EVERY_RULE_HAS_A_ROW(table, first, last)                                                \
    do {                                                                                           \
        for (int r_ = (first); r_ <= (last); r_++) {                                               \
            int n_ = 0;                                                                            \
            for (size_t i_ = 0; i_ < sizeof(table) / sizeof((table)[0]); i_++)                     \
                n_ += (table)[i_].rule == (ota_rule)r_;                                            \
            if (n_ == 0)                                                                           \
                fail_msg("no row is denied by %s", ota_rule_name((ota_rule)r_));                   \
        }                                                                                          \
    } while (0)

/* The decoded patch of a mutation, NULL when the response carries none;
 * checks the patch and patchType come together and agree with result. */
FX_UNUSED static const char *fx_mutate(arena *a, const char *body, admit_outcome *out)
{
    fx_response resp;
    fx_admit(a, ADMIT_MUTATE, body, out, &resp);
    assert_true(resp.allowed);
    assert_false(resp.has_status);
    if (resp.patch != NULL) {
        assert_string_equal(resp.patch_type, "JSONPatch");
        assert_int_equal(out->result, ADMIT_PATCHED);
        assert_int_not_equal(out->mutations, 0);
    } else {
        assert_null(resp.patch_type);
        assert_int_equal(out->result, ADMIT_ALLOWED);
        assert_int_equal(out->mutations, 0);
    }
    return resp.patch;
}

#endif
