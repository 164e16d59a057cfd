/*
 * jscan_ref.h - what tests/unit/test_jscan.c and the fuzz harnesses share
 * to hold webhook/jscan.c to the reference it stands in for: a recorder of
 * callbacks, the reference (jcheck_body() + yajl, nothing but whitespace
 * after the value, nesting bounded as the review decoder bounds it, no key
 * twice in one object), and a
 * field-by-field comparison of two decoded reviews.
 *
 * Header-only because each test and harness is built on its own against the
 * archives.  Memory the recorder cannot get aborts: these are tests.
 */
#ifndef OTA_TEST_JSCAN_REF_H
#define OTA_TEST_JSCAN_REF_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "jcheck.h"
#include "jscan.h"
#include "review.h"
#include "strbuf.h"

#define JREF_UNUSED __attribute__((unused))

#define JREF_DEPTH 100 /* REVIEW_MAX_DEPTH, as the webhook asks */

/* What a parse said: every callback with its arguments, strings byte for
 * byte, and the offset at each bracket. */
typedef struct rec {
    strbuf ev;
    yajl_handle h;    /* the reference: its offsets */
    jscan_sink *sink; /* jscan: its offsets */
    int depth, too_deep;
    size_t value_end; /* just past the top-level value, once it closed */
    size_t len;       /* of the text */
    char key[16];     /* the last key, cut */
    int completing;   /* in yajl_complete_parse(): its offsets restart */
    /* The keys of the open objects, innermost last, each with its depth:
     * the reference refuses a key its object already has (naively: a
     * search of the object's keys, sharing nothing with webhook/jkeys.c). */
    struct jref_key {
        int depth;
        unsigned char *s;
        size_t n;
    } *keys;
    size_t n_keys, cap_keys;
    int duplicate;
} rec;

static void jref_keys_free(rec *r)
{
    for (size_t i = 0; i < r->n_keys; i++)
        free(r->keys[i].s);
    free(r->keys);
    r->keys = NULL;
    r->n_keys = r->cap_keys = 0;
}

/* 1 when the innermost object already has the key; else keeps it. */
static int jref_key_repeats(rec *r, const unsigned char *s, size_t n)
{
    for (size_t i = r->n_keys; i-- > 0 && r->keys[i].depth == r->depth;)
        if (r->keys[i].n == n && memcmp(r->keys[i].s, s, n) == 0)
            return 1;
    if (r->n_keys == r->cap_keys) {
        r->cap_keys = r->cap_keys == 0 ? 16 : 2 * r->cap_keys;
        r->keys = realloc(r->keys, r->cap_keys * sizeof(*r->keys));
        if (r->keys == NULL)
            abort();
    }
    unsigned char *copy = malloc(n + 1);
    if (copy == NULL)
        abort();
    memcpy(copy, s, n);
    r->keys[r->n_keys++] = (struct jref_key){r->depth, copy, n};
    return 0;
}

static size_t at(const rec *r)
{
    return r->h != NULL ? yajl_get_bytes_consumed(r->h) : r->sink->consumed;
}

/* A scalar at the top: where the value ends (yajl's complete_parse fires
 * one at the end of the text, its count restarted). */
static void scalar_end(rec *r, size_t len)
{
    r->key[0] = '\0';
    if (r->depth == 0)
        r->value_end = r->completing ? len : at(r);
}

/* Strings are recorded byte for byte: printable ASCII as it is, the rest
 * (NUL included) as \xHH. */
static void put_str(rec *r, char tag, const unsigned char *s, size_t n)
{
    strbuf_printf(&r->ev, "%c\"", tag);
    for (size_t i = 0; i < n;) {
        size_t run = 0;
        while (i + run < n && s[i + run] >= 0x20 && s[i + run] < 0x7f && s[i + run] != '\\')
            run++;
        if (run > 0) {
            strbuf_printf(&r->ev, "%.*s", (int)run, (const char *)s + i);
            i += run;
        } else {
            strbuf_printf(&r->ev, "\\x%02x", s[i++]);
        }
    }
    strbuf_printf(&r->ev, "\" ");
}

static int r_null(void *c)
{
    strbuf_printf(&((rec *)c)->ev, "null ");
    scalar_end(c, ((rec *)c)->len);
    return 1;
}
static int r_bool(void *c, int b)
{
    strbuf_printf(&((rec *)c)->ev, "%s ", b ? "true" : "false");
    scalar_end(c, ((rec *)c)->len);
    return 1;
}
static int r_number(void *c, const char *s, size_t n)
{
    strbuf_printf(&((rec *)c)->ev, "n%.*s ", (int)n, s);
    scalar_end(c, ((rec *)c)->len);
    return 1;
}
static int r_string(void *c, const unsigned char *s, size_t n)
{
    put_str(c, 's', s, n);
    scalar_end(c, ((rec *)c)->len);
    return 1;
}
static int r_key(void *c, const unsigned char *s, size_t n)
{
    rec *r = c;
    if (jref_key_repeats(r, s, n)) {
        r->duplicate = 1;
        return 0;
    }
    put_str(r, 'k', s, n);
    snprintf(r->key, sizeof(r->key), "%.*s", (int)(n < 15 ? n : 15), (const char *)s);
    return 1;
}
static int r_open(rec *r, char what)
{
    strbuf_printf(&r->ev, "%c@%zu ", what, at(r));
    r->key[0] = '\0';
    if (++r->depth > JREF_DEPTH) {
        r->too_deep = 1;
        return 0;
    }
    return 1;
}
static int r_close(rec *r, char what)
{
    strbuf_printf(&r->ev, "%c@%zu ", what, at(r));
    r->key[0] = '\0';
    while (r->n_keys > 0 && r->keys[r->n_keys - 1].depth == r->depth)
        free(r->keys[--r->n_keys].s);
    if (--r->depth == 0)
        r->value_end = at(r);
    return 1;
}
static int r_start_map(void *c)
{
    return r_open(c, '{');
}
static int r_end_map(void *c)
{
    return r_close(c, '}');
}
static int r_start_array(void *c)
{
    return r_open(c, '[');
}
static int r_end_array(void *c)
{
    return r_close(c, ']');
}

static const yajl_callbacks recording = {
    .yajl_null = r_null,
    .yajl_boolean = r_bool,
    .yajl_number = r_number,
    .yajl_string = r_string,
    .yajl_start_map = r_start_map,
    .yajl_map_key = r_key,
    .yajl_end_map = r_end_map,
    .yajl_start_array = r_start_array,
    .yajl_end_array = r_end_array,
};

/* The reference: 0 and the events when jcheck + yajl accept the text as
 * one value with only whitespace after it, nested no deeper than DEPTH. */
static JREF_UNUSED int jref_reference(const char *s, size_t len, strbuf *ev)
{
    char err[256];
    if (len == 0 || jcheck_body(s, len, err, sizeof(err)) != 0)
        return -1;
    rec r = {0};
    r.len = len;
    r.h = yajl_alloc(&recording, NULL, &r);
    if (r.h == NULL)
        abort();
    yajl_status st = yajl_parse(r.h, (const unsigned char *)s, len);
    r.completing = 1;
    if (st == yajl_status_ok)
        st = yajl_complete_parse(r.h);
    yajl_free(r.h);
    jref_keys_free(&r);
    int ok = st == yajl_status_ok && !r.too_deep && !r.duplicate && r.value_end > 0 &&
             jcheck_skip_space(s, len, r.value_end) == len;
    *ev = r.ev;
    return ok ? 0 : -1;
}

static JREF_UNUSED int jref_skip_key(void *c)
{
    rec *r = c;
    return strcmp(r->key, "skip") == 0;
}

static JREF_UNUSED int jref_scan(const char *s, size_t len, int (*skips)(void *), strbuf *ev)
{
    rec r = {.len = len};
    jscan_sink sink = {.cb = &recording, .ctx = &r, .skips = skips};
    r.sink = &sink;
    int rc = jscan_parse(s, len, JREF_DEPTH, &sink);
    jref_keys_free(&r);
    *ev = r.ev;
    return rc;
}

/* ---- two decoded reviews ------------------------------------------------ */

/* The first difference between a and b, written to out; 0 when none. */
static int jref_sv_diff(const char *field, sv a, sv b, char *out, size_t n)
{
    if (a.len == b.len && (a.ptr == NULL) == (b.ptr == NULL) &&
        (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0))
        return 0;
    snprintf(out, n, "%s: \"%.*s\" and \"%.*s\"", field, SV_ARG(a), SV_ARG(b));
    return 1;
}

static int jref_cond_diff(const char *what, const review_cond *a, const review_cond *b, char *out,
                          size_t n)
{
    if (a->present != b->present || a->index != b->index || a->raw_off != b->raw_off ||
        a->raw_len != b->raw_len) {
        snprintf(out, n, "%s: present %d/%d, index %zu/%zu, at %zu+%zu and %zu+%zu", what,
                 a->present, b->present, a->index, b->index, a->raw_off, a->raw_len, b->raw_off,
                 b->raw_len);
        return 1;
    }
    return jref_sv_diff(what, a->type, b->type, out, n) ||
           jref_sv_diff(what, a->status, b->status, out, n) ||
           jref_sv_diff(what, a->reason, b->reason, out, n) ||
           jref_sv_diff(what, a->message, b->message, out, n) ||
           jref_sv_diff(what, a->last_transition_time, b->last_transition_time, out, n);
}

static int jref_object_diff(const review_object *a, const review_object *b, char *out, size_t n)
{
    if (a->present != b->present || a->has_spec != b->has_spec ||
        a->has_update_strategy != b->has_update_strategy ||
        a->update_strategy_extra != b->update_strategy_extra || a->has_status != b->has_status ||
        a->has_conditions != b->has_conditions || a->n_conditions != b->n_conditions ||
        a->n_need_upgrade != b->n_need_upgrade || a->n_image_ready != b->n_image_ready ||
        a->n_auto_prepull != b->n_auto_prepull ||
        a->n_ota != b->n_ota) {
        snprintf(out, n, "object flags or counts");
        return 1;
    }
    if (a->spec_off != b->spec_off || a->spec_len != b->spec_len) {
        snprintf(out, n, "spec span %zu+%zu vs %zu+%zu", a->spec_off, a->spec_len, b->spec_off,
                 b->spec_len);
        return 1;
    }
    if (jref_sv_diff("name", a->name, b->name, out, n) ||
        jref_sv_diff("namespace", a->namespace, b->namespace, out, n) ||
        jref_sv_diff("ann_update_strategy", a->ann_update_strategy, b->ann_update_strategy, out,
                     n) ||
        jref_sv_diff("ann_prepull_timeout", a->ann_prepull_timeout, b->ann_prepull_timeout, out,
                     n) ||
        jref_sv_diff("label_revision_hash", a->label_revision_hash, b->label_revision_hash, out,
                     n) ||
        jref_sv_diff("node_name", a->node_name, b->node_name, out, n) ||
        jref_sv_diff("update_strategy_type", a->update_strategy_type, b->update_strategy_type, out,
                     n) ||
        jref_cond_diff("need_upgrade", &a->need_upgrade, &b->need_upgrade, out, n) ||
        jref_cond_diff("image_ready", &a->image_ready, &b->image_ready, out, n) ||
        jref_cond_diff("auto_prepull", &a->auto_prepull, &b->auto_prepull, out, n))
        return 1;
    size_t kept = a->n_ota < REVIEW_MAX_OTA_ENTRIES ? a->n_ota : REVIEW_MAX_OTA_ENTRIES;
    for (size_t i = 0; i < kept; i++) {
        const ota_entry *x = &a->ota[i], *y = &b->ota[i];
        if (x->need_upgrade != y->need_upgrade || x->auto_prepull != y->auto_prepull ||
            x->cond.present != y->cond.present) {
            snprintf(out, n, "ota[%zu]", i);
            return 1;
        }
        if (jref_sv_diff("ota status", x->cond.status, y->cond.status, out, n) ||
            jref_sv_diff("ota reason", x->cond.reason, y->cond.reason, out, n) ||
            jref_sv_diff("ota message", x->cond.message, y->cond.message, out, n))
            return 1;
    }
    return 0;
}

/* The first field where two decoded reviews differ, in out; 0 when none. */
static JREF_UNUSED int jref_review_diff(const review *a, const review *b, char *out, size_t n)
{
    if (a->has_request != b->has_request || a->is_master != b->is_master) {
        snprintf(out, n, "has_request or is_master");
        return 1;
    }
    return jref_sv_diff("apiVersion", a->api_version, b->api_version, out, n) ||
           jref_sv_diff("kind", a->kind, b->kind, out, n) ||
           jref_sv_diff("uid", a->uid, b->uid, out, n) ||
           jref_sv_diff("group", a->group, b->group, out, n) ||
           jref_sv_diff("version", a->version, b->version, out, n) ||
           jref_sv_diff("resource", a->resource, b->resource, out, n) ||
           jref_sv_diff("subResource", a->sub_resource, b->sub_resource, out, n) ||
           jref_sv_diff("operation", a->operation, b->operation, out, n) ||
           jref_sv_diff("namespace", a->namespace, b->namespace, out, n) ||
           jref_sv_diff("name", a->name, b->name, out, n) ||
           jref_sv_diff("username", a->username, b->username, out, n) ||
           jref_object_diff(&a->object, &b->object, out, n) ||
           jref_object_diff(&a->old_object, &b->old_object, out, n);
}

#endif
