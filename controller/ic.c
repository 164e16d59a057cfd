/*
 * ic.c - see ic.h.  In order: actions and the rules that pick one; image
 * references; nodes and their images; the record; items, status and the
 * one pass (ic_decide).
 */
#include "ic.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "imageref.h"
#include "pullerr.h"

static int same(const char *a, const char *b)
{
    return sv_same(sv_from(a), sv_from(b));
}

static int empty(const char *s)
{
    return s == NULL || s[0] == '\0';
}

/* ---- actions ------------------------------------------------------------------- */

static const struct {
    ic_action act;
    const char *reason, *message;
} actions[] = {
    {IC_ACT_CREATE, IC_REASON_CREATE, IC_MSG_CREATE},
    {IC_ACT_UPDATE, IC_REASON_UPDATE, IC_MSG_UPDATE},
    {IC_ACT_REFRESH, IC_REASON_REFRESH, IC_MSG_REFRESH},
    {IC_ACT_PURGE, IC_REASON_PURGE, IC_MSG_PURGE},
};
#define N_ACTIONS (sizeof(actions) / sizeof(actions[0]))

const char *ic_action_reason(ic_action act)
{
    for (size_t i = 0; i < N_ACTIONS; i++)
        if (actions[i].act == act)
            return actions[i].reason;
    return NULL;
}

const char *ic_action_message(ic_action act)
{
    for (size_t i = 0; i < N_ACTIONS; i++)
        if (actions[i].act == act)
            return actions[i].message;
    return NULL;
}

ic_action ic_action_of_reason(const char *reason)
{
    for (size_t i = 0; reason != NULL && i < N_ACTIONS; i++)
        if (same(reason, actions[i].reason))
            return actions[i].act;
    return IC_ACT_NONE;
}

long long ic_refresh_in(const ic_state *s)
{
    long long done;
    if (s->refresh_period_s <= 0 || empty(s->status) || same(s->status, IC_STATUS_PROCESSING) ||
        same(s->status, IC_STATUS_FAILED) || same(s->reason, IC_REASON_PURGE) ||
        empty(s->completion_time) ||
        clock_parse_rfc3339(sv_from(s->completion_time), &done) != 0)
        return -1;
    long long due = done + s->refresh_period_s;
    return due <= s->now_epoch ? 0 : due - s->now_epoch;
}

ic_step ic_next(const ic_state *s, ic_action *act)
{
    *act = IC_ACT_NONE;
    if (empty(s->status)) {
        *act = IC_ACT_CREATE;
        return IC_STEP_START;
    }
    if (same(s->status, IC_STATUS_PROCESSING)) {
        /* after a restart too: never Aborted.  A Processing status with a
         * reason that names no action (written by hand) is refreshed. */
        *act = ic_action_of_reason(s->reason);
        if (*act != IC_ACT_NONE)
            return IC_STEP_CONTINUE;
        *act = IC_ACT_REFRESH;
        return IC_STEP_START;
    }
    int edited = s->acted_hash != NULL && !same(s->acted_hash, s->spec_hash);
    if (s->has_purge) /* before refresh, as upstream */
        *act = IC_ACT_PURGE;
    else if (s->has_refresh)
        /* an edit waiting too: the update pulls all a refresh would */
        *act = edited ? IC_ACT_UPDATE : IC_ACT_REFRESH;
    else if (s->acted_hash == NULL && same(s->status, IC_STATUS_ABORTED))
        *act = IC_ACT_REFRESH; /* kube-fledged's, at its restart: it would refresh it */
    else if (s->acted_hash == NULL) /* no record: a cache kube-fledged served */
        return IC_STEP_ADOPT;
    else if (edited)
        *act = IC_ACT_UPDATE;
    else if (same(s->status, IC_STATUS_ABORTED)) /* kube-fledged's, at its restart */
        *act = IC_ACT_REFRESH;
    else if (ic_refresh_in(s) == 0)
        *act = IC_ACT_REFRESH;
    return *act == IC_ACT_NONE ? IC_STEP_NOTHING : IC_STEP_START;
}

/* ---- image references ------------------------------------------------------------ */

const char *ic_ref_normalize(const char *ref, arena *a)
{
    char err[128];
    if (ref == NULL)
        return NULL;
    return imageref_normalize(ref, strlen(ref), a, err, sizeof(err));
}

int ic_image_present(const char *ref, const char *const *names, size_t n, arena *a)
{
    const char *want = ic_ref_normalize(ref, a);
    if (want == NULL)
        return 0;
    for (size_t i = 0; i < n; i++) {
        const char *have = ic_ref_normalize(names[i], a);
        if (have != NULL && same(want, have))
            return 1;
    }
    return 0;
}

int ic_already_present(const char *ref, const char *const *names, size_t n, arena *a)
{
    imageref r;
    char err[128];
    if (ref == NULL || imageref_parse(&r, ref, strlen(ref), a, err, sizeof(err)) != 0)
        return 0;
    return same(imageref_pull_policy(&r), "IfNotPresent") && ic_image_present(ref, names, n, a);
}

/* ---- nodes ---------------------------------------------------------------------- */

static const char *label_of(const ic_node *n, const char *key, size_t key_len)
{
    for (size_t i = 0; i < n->n_labels; i++)
        if (n->label_keys[i] != NULL && strlen(n->label_keys[i]) == key_len &&
            memcmp(n->label_keys[i], key, key_len) == 0)
            return n->label_values[i] != NULL ? n->label_values[i] : "";
    return NULL;
}

const char *ic_node_hostname(const ic_node *n)
{
    const char *h = label_of(n, IC_LABEL_HOSTNAME, strlen(IC_LABEL_HOSTNAME));
    return !empty(h) ? h : n->name;
}

int ic_selector_matches(const ic_list *l, const ic_node *n)
{
    if (!l->has_node_selector)
        return 1;
    for (size_t i = 0; i < l->n_selector; i++) {
        sv key = l->selector[2 * i], value = l->selector[2 * i + 1];
        const char *v = label_of(n, key.ptr != NULL ? key.ptr : "", key.len);
        if (v == NULL || strlen(v) != value.len || (value.len > 0 && memcmp(v, value.ptr, value.len) != 0))
            return 0;
    }
    return 1;
}

int ic_lists_of_spec(const ic_spec *s, arena *a, ic_lists *out)
{
    *out = (ic_lists){0};
    if (s->n_lists == 0)
        return 0;
    out->list = arena_alloc(a, s->n_lists * sizeof(*out->list));
    if (out->list == NULL)
        return -1;
    out->n = s->n_lists;
    for (size_t i = 0; i < s->n_lists; i++) {
        const ic_list *l = &s->lists[i];
        out->list[i] = (ic_strs){0};
        if (l->n_images == 0)
            continue;
        out->list[i].v = arena_alloc(a, l->n_images * sizeof(char *));
        if (out->list[i].v == NULL)
            return -1;
        for (size_t j = 0; j < l->n_images; j++) {
            out->list[i].v[j] = arena_strndup(a, l->images[j].ptr != NULL ? l->images[j].ptr : "",
                                              l->images[j].len);
            if (out->list[i].v[j] == NULL)
                return -1;
        }
        out->list[i].n = l->n_images;
    }
    return 0;
}

/* An arena set of strings (open addressing, FNV-1a): lists are hostile and
 * may hold many thousands of names, so no quadratic dedup. */
typedef struct sset {
    const char **slot;
    size_t cap; /* a power of two, at least twice the most members */
} sset;

static uint64_t fnv(const char *s)
{
    uint64_t h = 14695981039346656037ULL;
    for (; *s != '\0'; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

static int sset_init(sset *s, size_t most, arena *a)
{
    s->cap = 16;
    while (s->cap < 2 * most + 2)
        s->cap *= 2;
    s->slot = arena_alloc(a, s->cap * sizeof(*s->slot));
    if (s->slot == NULL)
        return -1;
    memset(s->slot, 0, s->cap * sizeof(*s->slot));
    return 0;
}

/* 1 when str was there already, else adds it (the caller sized the set). */
static int sset_add(sset *s, const char *str, int add)
{
    size_t i = (size_t)fnv(str) & (s->cap - 1);
    while (s->slot[i] != NULL) {
        if (strcmp(s->slot[i], str) == 0)
            return 1;
        i = (i + 1) & (s->cap - 1);
    }
    if (add)
        s->slot[i] = str;
    return 0;
}

static size_t count_matching(const ic_spec *sel, const ic_lists *l, const ic_node *n)
{
    size_t total = 0;
    for (size_t i = 0; i < l->n && i < sel->n_lists; i++)
        if (ic_selector_matches(&sel->lists[i], n))
            total += l->list[i].n;
    return total;
}

size_t ic_node_images(const ic_spec *sel, const ic_lists *images, const ic_node *n, arena *a,
                      ic_want **out, int *matched)
{
    *out = NULL;
    *matched = 0;
    size_t most = count_matching(sel, images, n), k = 0;
    sset seen;
    if (sset_init(&seen, most, a) != 0)
        return (size_t)-1;
    if (most > 0 && (*out = arena_alloc(a, most * sizeof(**out))) == NULL)
        return (size_t)-1;
    for (size_t i = 0; i < images->n && i < sel->n_lists; i++) {
        if (!ic_selector_matches(&sel->lists[i], n))
            continue;
        *matched = 1;
        for (size_t j = 0; j < images->list[i].n; j++) {
            const char *img = images->list[i].v[j];
            if (sset_add(&seen, img, 1))
                continue;
            (*out)[k++] = (ic_want){img, i, j};
        }
    }
    return k;
}

int ic_update_diff(const ic_spec *sel, const ic_lists *old_lists, const ic_lists *new_lists,
                   const ic_node *n, arena *a, ic_want **added, size_t *n_added, ic_want **removed,
                   size_t *n_removed)
{
    ic_want *was, *now;
    int m1, m2;
    size_t n_was = ic_node_images(sel, old_lists, n, a, &was, &m1);
    size_t n_now = ic_node_images(sel, new_lists, n, a, &now, &m2);
    sset s_was, s_now;
    if (n_was == (size_t)-1 || n_now == (size_t)-1 || sset_init(&s_was, n_was, a) != 0 ||
        sset_init(&s_now, n_now, a) != 0)
        return -1;
    for (size_t i = 0; i < n_was; i++)
        sset_add(&s_was, was[i].image, 1);
    for (size_t i = 0; i < n_now; i++)
        sset_add(&s_now, now[i].image, 1);
    *n_added = *n_removed = 0;
    *added = now; /* subsequences of the two, in place */
    *removed = was;
    for (size_t i = 0; i < n_now; i++)
        if (!sset_add(&s_was, now[i].image, 0))
            (*added)[(*n_added)++] = now[i];
    for (size_t i = 0; i < n_was; i++)
        if (!sset_add(&s_now, was[i].image, 0))
            (*removed)[(*n_removed)++] = was[i];
    return 0;
}

/* ---- the record ----------------------------------------------------------------- */

static void fnv_bytes(uint64_t *h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        *h ^= b[i];
        *h *= 1099511628211ULL;
    }
}

/* a field: its length first, so no two specs share a byte stream */
static void fnv_field(uint64_t *h, const char *tag, sv v)
{
    uint64_t len = v.ptr == NULL ? UINT64_MAX : (uint64_t)v.len;
    fnv_bytes(h, tag, 1);
    fnv_bytes(h, &len, sizeof(len));
    if (v.ptr != NULL)
        fnv_bytes(h, v.ptr, v.len);
}

static sv flag_sv(int on)
{
    return sv_from(on ? "1" : "0");
}

void ic_spec_hash(const ic_spec *s, char out[17])
{
    uint64_t h = 14695981039346656037ULL;
    fnv_field(&h, "p", flag_sv(s->present));
    fnv_field(&h, "c", flag_sv(s->has_cache_spec));
    for (size_t i = 0; i < s->n_lists; i++) {
        const ic_list *l = &s->lists[i];
        fnv_field(&h, "L", flag_sv(l->has_images));
        for (size_t j = 0; j < l->n_images; j++)
            fnv_field(&h, "i", l->images[j]);
        fnv_field(&h, "S", flag_sv(l->has_node_selector));
        for (size_t j = 0; j < 2 * l->n_selector; j++)
            fnv_field(&h, "s", l->selector[j]);
    }
    fnv_field(&h, "P", flag_sv(s->has_pull_secrets));
    for (size_t i = 0; i < s->n_pull_secrets; i++)
        fnv_field(&h, "n", s->pull_secrets[i]);
    snprintf(out, 17, "%016" PRIx64, h);
}

static void write_lists(json_writer *w, const char *key, const ic_lists *l)
{
    json_array_open(w, key);
    for (size_t i = 0; i < l->n; i++) {
        json_array_open(w, NULL);
        for (size_t j = 0; j < l->list[i].n; j++)
            json_str(w, l->list[i].v[j]);
        json_array_close(w);
    }
    json_array_close(w);
}

static const char *record_text(const char *hash, const char *start, const ic_lists *images,
                               const ic_lists *removed, arena *a, size_t *len)
{
    json_writer w;
    if (json_writer_init(&w, a) != 0) {
        json_writer_free(&w);
        return NULL;
    }
    json_map_open(&w, NULL);
    json_kv_str(&w, "hash", hash);
    if (start != NULL)
        json_kv_str(&w, "start", start);
    if (images != NULL)
        write_lists(&w, "images", images);
    if (removed != NULL)
        write_lists(&w, "removed", removed);
    json_map_close(&w);
    return json_writer_finish(&w, len);
}

const char *ic_record_encode(const char *hash, const char *start, const ic_lists *images,
                             const ic_lists *removed, arena *a)
{
    size_t len = 0;
    const char *t = record_text(hash, start, images, removed, a, &len);
    if (t != NULL && len > IC_RECORD_MAX) /* the hash alone: an update purges nothing */
        t = record_text(hash, start, NULL, NULL, a, &len);
    return t;
}

static int is_hash(const char *s)
{
    if (s == NULL || strlen(s) != 16)
        return 0;
    for (size_t i = 0; i < 16; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

static yajl_val member(yajl_val obj, const char *key)
{
    for (size_t i = 0; i < obj->u.object.len; i++)
        if (strcmp(obj->u.object.keys[i], key) == 0)
            return obj->u.object.values[i];
    return NULL;
}

static int read_lists(yajl_val v, arena *a, ic_lists *out)
{
    *out = (ic_lists){0};
    if (!YAJL_IS_ARRAY(v))
        return -1;
    size_t n = v->u.array.len;
    if (n > 0 && (out->list = arena_alloc(a, n * sizeof(*out->list))) == NULL)
        return -1;
    out->n = n;
    for (size_t i = 0; i < n; i++) {
        yajl_val l = v->u.array.values[i];
        out->list[i] = (ic_strs){0};
        if (!YAJL_IS_ARRAY(l))
            return -1;
        size_t m = l->u.array.len;
        if (m > 0 && (out->list[i].v = arena_alloc(a, m * sizeof(char *))) == NULL)
            return -1;
        for (size_t j = 0; j < m; j++) {
            yajl_val s = l->u.array.values[j];
            if (!YAJL_IS_STRING(s) ||
                (out->list[i].v[j] = arena_strndup(a, s->u.string, strlen(s->u.string))) == NULL)
                return -1;
        }
        out->list[i].n = m;
    }
    return 0;
}

int ic_record_decode(ic_record *r, const char *json, size_t len, arena *a)
{
    char err[128];
    *r = (ic_record){0};
    if (json == NULL || len == 0 || len > IC_RECORD_MAX)
        return -1;
    /* a record nests three deep: {images: [[...]]} */
    yajl_val t = json_parse_tree(json, len, 3, err, sizeof(err));
    if (t == NULL)
        return -1;
    int rc = -1;
    yajl_val hash, start, images, removed;
    if (!YAJL_IS_OBJECT(t) || !is_hash(YAJL_GET_STRING(hash = member(t, "hash"))))
        goto out;
    memcpy(r->hash, hash->u.string, 17);
    if ((start = member(t, "start")) != NULL) {
        if (!YAJL_IS_STRING(start) ||
            (r->start = arena_strndup(a, start->u.string, strlen(start->u.string))) == NULL)
            goto out;
    }
    if ((images = member(t, "images")) != NULL) {
        if (read_lists(images, a, &r->images) != 0)
            goto out;
        r->has_images = 1;
    }
    if ((removed = member(t, "removed")) != NULL) {
        if (read_lists(removed, a, &r->removed) != 0)
            goto out;
        r->has_removed = 1;
    }
    rc = 0;
out:
    yajl_tree_free(t);
    if (rc != 0)
        *r = (ic_record){0};
    return rc;
}

/* ---- items and the status --------------------------------------------------------- */

const char *ic_item_state_name(ic_item_state s)
{
    switch (s) {
    case IC_ITEM_PENDING: return "pending";
    case IC_ITEM_WAITING: return "waiting";
    case IC_ITEM_RUNNING: return "running";
    case IC_ITEM_PULLED: return "pulled";
    case IC_ITEM_PRESENT: return "present";
    case IC_ITEM_DELETED: return "deleted";
    case IC_ITEM_FAILED: return "failed";
    }
    return "unknown";
}

ic_item_state ic_container_outcome(const ic_container *c, long long now_epoch,
                                   long long pull_deadline_s, arena *a, const char **reason,
                                   const char **message)
{
    *reason = *message = NULL;
    if (c->op == IC_OP_PULL && ((c->started && !c->terminated) ||
                                (c->terminated && c->exit_code == 0)))
        return IC_ITEM_PULLED; /* its image was there to run */
    if (c->op == IC_OP_PULL && c->terminated) {
        /* ended otherwise (ContainerStatusUnknown, 137: the pod was killed
         * around it, it may never have run): not proof of the image, and
         * it will not run again (restartPolicy Never) */
        *reason = !empty(c->term_reason) ? c->term_reason : IC_FAIL_UNKNOWN_REASON;
        *message = !empty(c->term_message) ? c->term_message : IC_FAIL_UNKNOWN_MESSAGE;
        return IC_ITEM_FAILED;
    }
    if (c->op == IC_OP_PURGE && c->terminated) {
        if (c->exit_code == 0)
            return IC_ITEM_DELETED;
        *reason = !empty(c->term_reason) ? c->term_reason : IC_FAIL_DELETE_REASON;
        *message = !empty(c->term_message) ? c->term_message : IC_FAIL_DELETE_MESSAGE;
        return IC_ITEM_FAILED;
    }
    int has_words = !empty(c->waiting_reason);
    if (c->op == IC_OP_PULL && has_words &&
        pullerr_judge(c->waiting_reason, c->waiting_message, c->attempts) == PULLERR_GIVE_UP) {
        *reason = c->waiting_reason;
        *message = c->waiting_message;
    } else if (c->op == IC_OP_PULL && c->pull_start_epoch > 0 && pull_deadline_s > 0 &&
               now_epoch - c->pull_start_epoch >= pull_deadline_s) {
        int kubelet = has_words && pullerr_classify(c->waiting_reason, c->waiting_message) != PULLERR_NONE;
        *reason = kubelet ? c->waiting_reason : IC_FAIL_DEADLINE_REASON;
        *message = kubelet && !empty(c->waiting_message)
                       ? c->waiting_message
                       : arena_printf(a, "Image pull did not finish within %llds", pull_deadline_s);
    } else if (c->job_ended) {
        *reason = !empty(c->given_up_reason) ? c->given_up_reason
                  : c->op == IC_OP_PULL      ? IC_FAIL_UNKNOWN_REASON
                                             : IC_FAIL_DELETE_REASON;
        *message = !empty(c->given_up_message) ? c->given_up_message
                   : c->op == IC_OP_PULL       ? IC_FAIL_UNKNOWN_MESSAGE
                                               : IC_FAIL_DELETE_MESSAGE;
    } else {
        return IC_ITEM_RUNNING;
    }
    if (empty(*reason))
        *reason = c->op == IC_OP_PULL ? IC_FAIL_UNKNOWN_REASON : IC_FAIL_DELETE_REASON;
    if (empty(*message))
        *message = c->op == IC_OP_PULL ? IC_FAIL_UNKNOWN_MESSAGE : IC_FAIL_DELETE_MESSAGE;
    return IC_ITEM_FAILED;
}

/* s cut to at most max bytes on a UTF-8 boundary, ending in "…". */
static const char *cut_utf8(const char *s, size_t max, arena *a)
{
    static const char ell[] = "\xe2\x80\xa6";
    size_t len = strlen(s);
    if (len <= max)
        return s;
    size_t k = max - (sizeof(ell) - 1);
    while (k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80)
        k--; /* s[k] starts a character: keep what is before it */
    return arena_printf(a, "%.*s%s", (int)k, s, ell);
}

/* Bytes s takes as a JSON string (at most; quotes included). */
static size_t json_cost(const char *s)
{
    size_t n = 2;
    for (; *s != '\0'; s++)
        n += (unsigned char)*s < 0x20 ? 6 : (*s == '"' || *s == '\\') ? 2 : 1;
    return n;
}

static size_t entry_cost(const ic_failure *e)
{
    return json_cost(e->node) + json_cost(e->reason) + json_cost(e->message) + 40;
}

static int cmp_cstr(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* The most common reason of f[0..n) (ties: the first by bytes), its count
 * in *count; NULL out of memory. */
static const char *common_reason(const ic_failure *f, size_t n, arena *a, size_t *count)
{
    const char **r = arena_alloc(a, n * sizeof(char *));
    if (r == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++)
        r[i] = f[i].reason;
    qsort(r, n, sizeof(*r), cmp_cstr);
    const char *best = r[0];
    *count = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && strcmp(r[j], r[i]) == 0)
            j++;
        if (j - i > *count) {
            *count = j - i;
            best = r[i];
        }
        i = j;
    }
    return best;
}

#define FAIL_SUMMARY_MAX 4096 /* an entry of ours: short node, cut reason and message */

size_t ic_failures_bound(ic_failure *f, size_t n, arena *a)
{
    size_t out = 0, used = 16, i = 0;
    for (size_t k = 0; k < n; k++) {
        if ((f[k].reason = cut_utf8(f[k].reason, IC_FAIL_REASON_MAX, a)) == NULL ||
            (f[k].message = cut_utf8(f[k].message, IC_FAIL_MESSAGE_MAX, a)) == NULL)
            return (size_t)-1;
    }
    while (i < n) {
        size_t j = i;
        while (j < n && same(f[j].image, f[i].image))
            j++;
        size_t key = json_cost(f[i].image) + 8;
        if (used + key + entry_cost(&f[i]) + 2 * FAIL_SUMMARY_MAX > IC_FAIL_BUDGET)
            break; /* this image and the rest: one entry */
        used += key;
        size_t e = i, kept = 0;
        for (; e < j; e++) {
            size_t cost = entry_cost(&f[e]);
            if (kept == IC_FAIL_NODES_MAX || used + cost + 2 * FAIL_SUMMARY_MAX > IC_FAIL_BUDGET)
                break;
            f[out++] = f[e];
            used += cost;
            kept++;
        }
        if (e < j) {
            size_t count = 0;
            const char *why = common_reason(&f[e], j - e, a, &count);
            ic_failure sum = {
                .image = f[i].image,
                .node = arena_printf(a, "<%zu more nodes>", j - e),
                .reason = why,
                .message = arena_printf(a, IC_FAIL_MORE_NODES_MESSAGE, j - e, count),
            };
            if (why == NULL || sum.node == NULL || sum.message == NULL)
                return (size_t)-1;
            f[out++] = sum; /* out <= e: nothing unread is overwritten */
            used += entry_cost(&sum);
        }
        i = j;
    }
    if (i < n) {
        size_t images = 0, count = 0;
        for (size_t k = i; k < n; k++)
            images += k == i || !same(f[k].image, f[k - 1].image);
        const char *why = common_reason(&f[i], n - i, a, &count);
        ic_failure sum = {
            .image = arena_printf(a, "<%zu more images>", images),
            .node = arena_printf(a, "<%zu more failures>", n - i),
            .reason = why,
            .message = arena_printf(a, IC_FAIL_MORE_IMAGES_MESSAGE, n - i, images, count),
        };
        if (why == NULL || sum.image == NULL || sum.node == NULL || sum.message == NULL)
            return (size_t)-1;
        f[out++] = sum;
    }
    return out;
}

static void kv_or_null(json_writer *w, const char *key, const char *v, int merge)
{
    if (v != NULL)
        json_kv_str(w, key, v);
    else if (merge)
        json_kv_null(w, key);
}

void ic_write_status(json_writer *w, const ic_status *s, int merge)
{
    json_map_open(w, "status");
    kv_or_null(w, "status", s->status, merge);
    kv_or_null(w, "reason", s->reason, merge);
    kv_or_null(w, "message", s->message, merge);
    kv_or_null(w, "startTime", s->start_time, merge);
    kv_or_null(w, "completionTime", s->completion_time, merge);
    if (s->n_failures == 0) {
        if (merge)
            json_kv_null(w, "failures");
    } else {
        /* a merge patch merges maps (RFC 7386), so an image that failed
         * last time would stay; but every action's Processing write sent
         * failures null, and failures come with the final write only: the
         * map sent here is the whole map. */
        json_map_open(w, "failures");
        for (size_t i = 0; i < s->n_failures;) {
            const char *img = s->failures[i].image;
            json_array_open(w, img);
            for (; i < s->n_failures && same(s->failures[i].image, img); i++) {
                json_map_open(w, NULL);
                json_kv_str(w, "node", s->failures[i].node);
                json_kv_str(w, "reason", s->failures[i].reason);
                json_kv_str(w, "message", s->failures[i].message);
                json_map_close(w);
            }
            json_array_close(w);
        }
        json_map_close(w);
    }
    json_map_close(w);
}

/* ---- one pass ---------------------------------------------------------------------- */

static int cmp_item(const ic_item *x, const ic_item *y)
{
    int c = strcmp(x->node != NULL ? x->node : "", y->node != NULL ? y->node : "");
    if (c != 0)
        return c;
    if (x->op != y->op)
        return x->op < y->op ? -1 : 1;
    return strcmp(x->image != NULL ? x->image : "", y->image != NULL ? y->image : "");
}

static int cmp_item_q(const void *x, const void *y)
{
    return cmp_item(x, y);
}

/* The first of sorted[0..n) not below key. */
static size_t lower_bound(const ic_item *sorted, size_t n, const ic_item *key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_item(&sorted[mid], key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static const ic_item *seen_item(const ic_item *seen, size_t n, const char *node, ic_op op,
                                const char *image)
{
    ic_item key = {.image = image, .node = node, .op = op};
    size_t i = lower_bound(seen, n, &key);
    return i < n && cmp_item(&seen[i], &key) == 0 ? &seen[i] : NULL;
}

static int cmp_failure(const void *x, const void *y)
{
    const ic_failure *a = x, *b = y;
    int c = strcmp(a->image, b->image);
    return c != 0 ? c : strcmp(a->node, b->node);
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* Per list: the images of old that new no longer holds (exact strings). */
static int removed_lists(const ic_lists *old, const ic_lists *now, arena *a, ic_lists *out)
{
    *out = (ic_lists){0};
    if (old->n == 0)
        return 0;
    if ((out->list = arena_alloc(a, old->n * sizeof(*out->list))) == NULL)
        return -1;
    out->n = old->n;
    for (size_t i = 0; i < old->n; i++) {
        const ic_strs *o = &old->list[i];
        const ic_strs *n = i < now->n ? &now->list[i] : NULL;
        sset keep;
        out->list[i] = (ic_strs){0};
        if (o->n == 0)
            continue;
        if (sset_init(&keep, n != NULL ? n->n : 0, a) != 0 ||
            (out->list[i].v = arena_alloc(a, o->n * sizeof(char *))) == NULL)
            return -1;
        for (size_t j = 0; n != NULL && j < n->n; j++)
            sset_add(&keep, n->v[j], 1);
        for (size_t j = 0; j < o->n; j++)
            if (!sset_add(&keep, o->v[j], 1)) /* also drops a repeat */
                out->list[i].v[out->list[i].n++] = o->v[j];
    }
    return 0;
}

typedef struct pass {
    const ic_input *in;
    arena *a;
    ic_plan *p;
    ic_action act;
    const char *hash;       /* the acted spec's */
    const char *start;      /* status.startTime of the action */
    long long start_epoch;
    ic_lists acted, removed;
    int has_removed;
    ic_item *seen;          /* in->seen sorted */
    size_t n_items_cap;
    int too_large;          /* IC_MAX_ITEMS reached */
    sset forms;             /* images asked about, with form_of[] their present_form */
    const char **form_of;
    size_t n_forms;
    size_t n_units_cap;
    /* the current node's items[from..), by i - from (classify_node) */
    size_t *part;           /* its Job's part; NO_PART: no Job can carry it (failed) */
    const char **job_image; /* the spelling its Job carries (a purge's first) */
    unsigned char *in_job;  /* it is that spelling: its unit lists it */
    unsigned char *part_seen[2]; /* per op and part: that Job exists */
    size_t n_parts[2];
} pass;

#define NO_PART ((size_t)-1)

static int add_item(pass *ps, const char *image, const char *node, ic_op op)
{
    ic_plan *p = ps->p;
    if (p->n_items >= IC_MAX_ITEMS) {
        ps->too_large = 1;
        return 0;
    }
    if (p->n_items == ps->n_items_cap) {
        size_t cap = ps->n_items_cap == 0 ? 64 : 2 * ps->n_items_cap;
        ic_item *v = arena_alloc(ps->a, cap * sizeof(*v));
        if (v == NULL)
            return -1;
        if (p->n_items > 0)
            memcpy(v, p->items, p->n_items * sizeof(*v));
        p->items = v;
        ps->n_items_cap = cap;
    }
    p->items[p->n_items++] = (ic_item){.image = image, .node = node, .op = op};
    return 0;
}

/* The items of one node; *matched when a list matched it. */
static int node_items(pass *ps, const ic_node *n, int *matched)
{
    ic_want *want;
    int m = 0;
    size_t k = ic_node_images(ps->in->spec, &ps->acted, n, ps->a, &want, &m);
    if (k == (size_t)-1)
        return -1;
    *matched |= m;
    ic_op op = ps->act == IC_ACT_PURGE ? IC_OP_PURGE : IC_OP_PULL;
    for (size_t i = 0; i < k; i++)
        if (add_item(ps, want[i].image, n->name, op) != 0)
            return -1;
    if (ps->act != IC_ACT_UPDATE || !ps->has_removed || !ps->in->purge_enabled)
        return 0;
    /* an update purges what it removed from a list, unless another list
     * still wants it on this node */
    ic_want *gone;
    int m2;
    size_t g = ic_node_images(ps->in->spec, &ps->removed, n, ps->a, &gone, &m2);
    sset keep;
    if (g == (size_t)-1 || sset_init(&keep, k, ps->a) != 0)
        return -1;
    for (size_t i = 0; i < k; i++)
        sset_add(&keep, want[i].image, 1);
    for (size_t i = 0; i < g; i++)
        if (!sset_add(&keep, gone[i].image, 0) &&
            add_item(ps, gone[i].image, n->name, IC_OP_PURGE) != 0)
            return -1;
    return 0;
}

static long long cache_deadline_s(const ic_input *in)
{
    long long d = IC_CACHE_DEADLINE_PULLS * in->pull_deadline_s;
    return d > IC_CACHE_DEADLINE_MIN_S ? d : IC_CACHE_DEADLINE_MIN_S;
}

/* The node's status.images, normalised once per pass and node (an item
 * against each name would normalise items x names times). */
static int node_names(pass *ps, const ic_node *n, sset *have)
{
    if (sset_init(have, n->n_images, ps->a) != 0)
        return -1;
    for (size_t i = 0; i < n->n_images; i++) {
        const char *norm = ic_ref_normalize(n->images[i], ps->a);
        if (norm != NULL)
            sset_add(have, norm, 1);
    }
    return 0;
}

/* An image's normal form when it may be taken as present (IfNotPresent),
 * else "": once per image per pass, in a map beside the set of images. */
static const char *present_form(pass *ps, const char *ref)
{
    size_t i = (size_t)fnv(ref) & (ps->forms.cap - 1);
    while (ps->forms.slot[i] != NULL) {
        if (strcmp(ps->forms.slot[i], ref) == 0)
            return ps->form_of[i];
        i = (i + 1) & (ps->forms.cap - 1);
    }
    imageref r;
    char err[128];
    const char *form = "";
    if (imageref_parse(&r, ref, strlen(ref), ps->a, err, sizeof(err)) == 0 &&
        same(imageref_pull_policy(&r), "IfNotPresent"))
        form = imageref_format(&r, ps->a);
    if (form == NULL)
        return NULL;
    if (ps->n_forms + 1 < ps->forms.cap / 2) { /* else: not kept, still right */
        ps->forms.slot[i] = ref;
        ps->form_of[i] = form;
        ps->n_forms++;
    }
    return form;
}

/* ic_already_present against a node's status.images, normalised on the
 * first question about the node. 1, 0, or -1 out of memory. */
static int present_on(pass *ps, const ic_node *n, sset *have, int *built, const char *ref)
{
    const char *form = present_form(ps, ref);
    if (form == NULL)
        return -1;
    if (form[0] == '\0')
        return 0;
    if (!*built) {
        if (node_names(ps, n, have) != 0)
            return -1;
        *built = 1;
    }
    return sset_add(have, form, 0);
}

/* An image no Job can carry: "" (null), surrounding whitespace (the
 * apiserver refuses such a container image), and for a purge any reference
 * that does not parse (purge_job_render refuses it).  NULL when it can be
 * carried, else the item's message; *oom when memory ran out. */
static const char *invalid_image(pass *ps, const char *image, ic_op op, int *oom)
{
    char err[160];
    size_t len = strlen(image);
    imageref r;
    *oom = 0;
    int blank = len == 0 || isspace((unsigned char)image[0]) ||
                isspace((unsigned char)image[len - 1]);
    if (!blank && op == IC_OP_PULL)
        return NULL; /* the kubelet says InvalidImageName, in its words, for it alone */
    if (imageref_parse(&r, image, len, ps->a, err, sizeof(err)) == 0) {
        if (!blank)
            return NULL;
        snprintf(err, sizeof(err), "invalid image reference: surrounding whitespace");
    }
    const char *msg = arena_strndup(ps->a, err, strlen(err));
    *oom = msg == NULL;
    return msg;
}

/* The slot of str in s: where it is, or the empty one it would take. */
static size_t sset_slot(const sset *s, const char *str)
{
    size_t i = (size_t)fnv(str) & (s->cap - 1);
    while (s->slot[i] != NULL && strcmp(s->slot[i], str) != 0)
        i = (i + 1) & (s->cap - 1);
    return i;
}

/* Which Job carries each item of the node (items[from..)): invalid images
 * fail at once (no Job), a purge's spellings of one reference share the
 * first one's container, and the rest are numbered in order into parts of
 * IC_JOB_MAX_IMAGES; then which parts' Jobs were seen.  0, or -1. */
static int classify_node(pass *ps, size_t from)
{
    ic_plan *p = ps->p;
    size_t m = p->n_items - from;
    ps->n_parts[0] = ps->n_parts[1] = 0;
    if (m == 0)
        return 0;
    if ((ps->part = arena_alloc(ps->a, m * sizeof(*ps->part))) == NULL ||
        (ps->job_image = arena_alloc(ps->a, m * sizeof(*ps->job_image))) == NULL ||
        (ps->in_job = arena_alloc(ps->a, m)) == NULL)
        return -1;
    for (int op = IC_OP_PULL; op <= IC_OP_PURGE; op++) {
        size_t k = 0, ordinal = 0;
        for (size_t i = from; i < p->n_items; i++)
            k += p->items[i].op == (ic_op)op;
        sset norms = {0};
        size_t *first = NULL;
        if (op == IC_OP_PURGE && k > 0 &&
            (sset_init(&norms, k, ps->a) != 0 ||
             (first = arena_alloc(ps->a, norms.cap * sizeof(*first))) == NULL))
            return -1;
        for (size_t i = from; i < p->n_items; i++) {
            ic_item *it = &p->items[i];
            size_t j = i - from;
            if (it->op != (ic_op)op)
                continue;
            int oom;
            const char *bad = invalid_image(ps, it->image, it->op, &oom);
            if (oom)
                return -1;
            ps->part[j] = NO_PART;
            ps->job_image[j] = it->image;
            ps->in_job[j] = 0;
            if (bad != NULL) {
                it->state = IC_ITEM_FAILED;
                it->reason = IC_FAIL_INVALID_REASON;
                it->message = bad;
                continue;
            }
            if (op == IC_OP_PURGE) {
                const char *norm = ic_ref_normalize(it->image, ps->a);
                if (norm == NULL)
                    return -1; /* parsed above: out of memory */
                size_t slot = sset_slot(&norms, norm);
                if (norms.slot[slot] != NULL) { /* another spelling of an earlier one */
                    ps->part[j] = ps->part[first[slot] - from];
                    ps->job_image[j] = p->items[first[slot]].image;
                    continue;
                }
                norms.slot[slot] = norm;
                first[slot] = i;
            }
            ps->part[j] = ordinal++ / IC_JOB_MAX_IMAGES;
            ps->in_job[j] = 1;
        }
        size_t parts = (ordinal + IC_JOB_MAX_IMAGES - 1) / IC_JOB_MAX_IMAGES;
        ps->n_parts[op] = parts;
        ps->part_seen[op] = NULL;
        if (parts > 0) {
            if ((ps->part_seen[op] = arena_alloc(ps->a, parts)) == NULL)
                return -1;
            memset(ps->part_seen[op], 0, parts);
        }
    }
    return 0;
}

/* What the action's Jobs say of items[i] (the current node's): under its
 * own spelling, else under the one its Job carries. */
static const ic_item *seen_of(pass *ps, size_t from, size_t i)
{
    const ic_item *it = &ps->p->items[i];
    const ic_item *s = seen_item(ps->seen, ps->in->n_seen, it->node, it->op, it->image);
    const char *carried = ps->job_image[i - from];
    if (s == NULL && carried != it->image)
        s = seen_item(ps->seen, ps->in->n_seen, it->node, it->op, carried);
    return s;
}

/* The state of each item from what was seen, the node and the clock. */
static int judge_items(pass *ps, size_t from, const ic_node *n, int *waiting)
{
    const ic_input *in = ps->in;
    ic_plan *p = ps->p;
    sset have;
    int built = 0, present = 0;
    int late = ps->start_epoch + cache_deadline_s(in) <= in->now_epoch;
    if (classify_node(ps, from) != 0)
        return -1;
    for (size_t i = from; i < p->n_items; i++)
        if (ps->part[i - from] != NO_PART && seen_of(ps, from, i) != NULL)
            ps->part_seen[p->items[i].op][ps->part[i - from]] = 1;
    for (size_t i = from; i < p->n_items; i++) {
        ic_item *it = &p->items[i];
        size_t part = ps->part[i - from];
        if (part == NO_PART)
            continue; /* failed: no Job can carry it */
        const ic_item *s = seen_of(ps, from, i);
        if (s != NULL) {
            it->state = s->state;
            it->reason = s->reason;
            it->message = s->message;
            if (it->state == IC_ITEM_PENDING || it->state == IC_ITEM_WAITING)
                it->state = IC_ITEM_RUNNING; /* its Job exists */
        } else if (it->op == IC_OP_PULL &&
                   (present = present_on(ps, n, &have, &built, it->image)) != 0) {
            if (present < 0)
                return -1;
            it->state = IC_ITEM_PRESENT;
        } else if (ps->part_seen[it->op][part] && it->op == IC_OP_PULL) {
            /* its Job was made without it: it was present then (the Job
             * takes every pending item of its part).  That the node no
             * longer lists it proves nothing (the kubelet lists 50). */
            it->state = IC_ITEM_PRESENT;
        } else if (ps->part_seen[it->op][part]) {
            /* a purge Job made without it: no one will tell */
            it->state = IC_ITEM_FAILED;
            it->reason = IC_FAIL_DELETE_REASON;
            it->message = IC_FAIL_DELETE_MESSAGE;
        } else {
            it->state = n->not_ready ? IC_ITEM_WAITING : IC_ITEM_PENDING;
        }
        if (it->state == IC_ITEM_RUNNING && n->not_ready)
            it->state = IC_ITEM_WAITING;
        if (it->state == IC_ITEM_WAITING && late) {
            it->state = IC_ITEM_FAILED;
            it->reason = IC_FAIL_NODE_NOT_READY;
            it->message = arena_printf(ps->a,
                                       "Node %s was not ready by the image cache's deadline "
                                       "(%llds after its start)%s%s",
                                       n->name, cache_deadline_s(in),
                                       empty(n->not_ready_why) ? "" : ": ",
                                       empty(n->not_ready_why) ? "" : n->not_ready_why);
            if (it->message == NULL)
                return -1;
        }
        if (it->state == IC_ITEM_FAILED && empty(it->reason))
            it->reason = it->op == IC_OP_PULL ? IC_FAIL_UNKNOWN_REASON : IC_FAIL_DELETE_REASON;
        if (it->state == IC_ITEM_FAILED && empty(it->message))
            it->message = it->op == IC_OP_PULL ? IC_FAIL_UNKNOWN_MESSAGE : IC_FAIL_DELETE_MESSAGE;
        if (it->state == IC_ITEM_WAITING)
            *waiting = 1;
    }
    return 0;
}

static int push_unit(pass *ps, ic_unit u)
{
    ic_plan *p = ps->p;
    if (p->n_units == ps->n_units_cap) {
        size_t cap = ps->n_units_cap == 0 ? 16 : 2 * ps->n_units_cap;
        ic_unit *v = arena_alloc(ps->a, cap * sizeof(*v));
        if (v == NULL)
            return -1;
        if (p->n_units > 0)
            memcpy(v, p->units, p->n_units * sizeof(*v));
        p->units = v;
        ps->n_units_cap = cap;
    }
    p->units[p->n_units++] = u;
    return 0;
}

long ic_identity_part(const char *base, const char *id)
{
    if (base == NULL || id == NULL)
        return -1;
    size_t n = strlen(base);
    if (strncmp(id, base, n) != 0)
        return -1;
    if (id[n] == '\0')
        return 0;
    if (id[n] != '/' || id[n + 1] < '1' || id[n + 1] > '9' || strlen(id + n + 1) > 9)
        return -1;
    long part = 0;
    for (const char *c = id + n + 1; *c != '\0'; c++) {
        if (*c < '0' || *c > '9')
            return -1;
        part = part * 10 + (*c - '0');
    }
    return part;
}

/* Units: (node, op, part) groups of items[from..) with pending items and
 * no Job. */
static int node_units(pass *ps, size_t from, const ic_node *n, const char *const identity[2])
{
    ic_plan *p = ps->p;
    for (int op = IC_OP_PULL; op <= IC_OP_PURGE; op++) {
        for (size_t part = 0; part < ps->n_parts[op]; part++) {
            if (ps->part_seen[op][part])
                continue;
            size_t k = 0;
            const char **images = NULL;
            for (int fill = 0; fill < 2; fill++) {
                k = 0;
                for (size_t i = from; i < p->n_items; i++) {
                    const ic_item *it = &p->items[i];
                    if (it->op != (ic_op)op || it->state != IC_ITEM_PENDING ||
                        ps->part[i - from] != part || !ps->in_job[i - from])
                        continue;
                    if (fill)
                        images[k] = it->image;
                    k++;
                }
                if (k == 0)
                    break;
                if (!fill && (images = arena_alloc(ps->a, k * sizeof(char *))) == NULL)
                    return -1;
            }
            if (k == 0)
                continue;
            const char *id = part == 0 ? identity[op]
                                       : arena_printf(ps->a, "%s/%zu", identity[op], part);
            if (id == NULL ||
                push_unit(ps, (ic_unit){.node = n->name, .op = (ic_op)op, .part = part,
                                        .images = images, .n_images = k, .identity = id}) != 0)
                return -1;
        }
    }
    return 0;
}

/* "<message> Waiting for nodes: a, b and 3 more" */
static const char *waiting_message(pass *ps, const char *msg)
{
    ic_plan *p = ps->p;
    const char **names = arena_alloc(ps->a, (p->n_items + 1) * sizeof(char *));
    if (names == NULL)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < p->n_items; i++)
        if (p->items[i].state == IC_ITEM_WAITING && (k == 0 || !same(names[k - 1], p->items[i].node)))
            names[k++] = p->items[i].node; /* items come node by node */
    qsort(names, k, sizeof(*names), cmp_str);

    size_t len = strlen(msg) + strlen(IC_MSG_WAITING_PREFIX) + 32;
    for (size_t i = 0; i < k && i < IC_WAITING_NAMES_MAX; i++)
        len += strlen(names[i]) + 2;
    char *out = arena_alloc(ps->a, len);
    if (out == NULL)
        return NULL;
    size_t o = (size_t)snprintf(out, len, "%s%s", msg, IC_MSG_WAITING_PREFIX);
    for (size_t i = 0; i < k && i < IC_WAITING_NAMES_MAX; i++)
        o += (size_t)snprintf(out + o, len - o, "%s%s", i > 0 ? ", " : "", names[i]);
    if (k > IC_WAITING_NAMES_MAX)
        snprintf(out + o, len - o, " and %zu more", k - IC_WAITING_NAMES_MAX);
    return out;
}

static void final_status(pass *ps, const char *status, const char *message)
{
    ic_plan *p = ps->p;
    p->status.status = status;
    p->status.reason = ic_action_reason(ps->act);
    p->status.message = message;
    p->status.start_time = ps->start;
    p->status.completion_time = ps->in->now;
    p->write_status = 1;
    p->done = 1;
    p->event = 1;
    p->event_type = same(status, IC_STATUS_FAILED) ? "Warning" : "Normal";
    p->event_reason = p->status.reason;
    p->event_message = message;
}

/* The record and annotation removals of an action's start. */
static int start_metadata(pass *ps, const ic_record *rec, int rec_ok)
{
    const ic_input *in = ps->in;
    ic_plan *p = ps->p;
    if (ic_lists_of_spec(in->spec, ps->a, &ps->acted) != 0)
        return -1;
    ps->has_removed = 0;
    if (ps->act == IC_ACT_UPDATE && in->purge_enabled && rec_ok && rec->has_images) {
        if (removed_lists(&rec->images, &ps->acted, ps->a, &ps->removed) != 0)
            return -1;
        ps->has_removed = 1;
    }
    ps->hash = p->spec_hash;
    p->record = ic_record_encode(p->spec_hash, ps->start, &ps->acted,
                                 ps->has_removed ? &ps->removed : NULL, ps->a);
    if (p->record == NULL)
        return -1;
    p->remove_purge = in->has_purge && ps->act == IC_ACT_PURGE;
    p->remove_refresh = in->has_refresh && (ps->act == IC_ACT_REFRESH || ps->act == IC_ACT_UPDATE);
    return 0;
}

int ic_decide(const ic_input *in, arena *a, ic_plan *out)
{
    ic_plan *p = out;
    *p = (ic_plan){0};
    ic_spec_hash(in->spec, p->spec_hash);
    ic_record rec;
    int rec_ok = in->record != NULL && ic_record_decode(&rec, in->record, in->record_len, a) == 0;
    ic_state st = {
        .status = in->status, .reason = in->reason, .completion_time = in->completion_time,
        .has_refresh = in->has_refresh, .has_purge = in->has_purge, .spec_hash = p->spec_hash,
        .acted_hash = rec_ok ? rec.hash : NULL, .now_epoch = in->now_epoch,
        .refresh_period_s = in->refresh_period_s,
    };
    pass ps = {.in = in, .a = a, .p = p};
    p->step = ic_next(&st, &ps.act);
    p->action = ps.act;
    if (p->step == IC_STEP_ADOPT) {
        /* the spec as it is becomes the one acted on; the start kept */
        ic_lists lists;
        if (ic_lists_of_spec(in->spec, a, &lists) != 0 ||
            (p->record = ic_record_encode(p->spec_hash, !empty(in->start_time) ? in->start_time : "",
                                          &lists, NULL, a)) == NULL)
            return -1;
    }
    if (p->step == IC_STEP_NOTHING || p->step == IC_STEP_ADOPT) {
        long long due = ic_refresh_in(&st);
        p->requeue_after_s = due > 0 ? due : 0;
        return 0;
    }
    long long start_epoch = 0;
    if (p->step == IC_STEP_CONTINUE &&
        (empty(in->start_time) || clock_parse_rfc3339(sv_from(in->start_time), &start_epoch) != 0))
        p->step = IC_STEP_START; /* no start to count from: start it again */
    if (ps.act == IC_ACT_PURGE && !in->purge_enabled) {
        /* at once, no Processing: nothing can run.  Decided already (the
         * annotation's removal not seen yet): the same decision, its
         * start and completion kept, so the Event's key stays the same */
        int again = same(in->status, IC_STATUS_FAILED) && same(in->reason, IC_REASON_PURGE) &&
                    same(in->message, IC_MSG_PURGE_DISABLED) && !empty(in->start_time);
        ps.start = again || p->step == IC_STEP_CONTINUE ? in->start_time : in->now;
        final_status(&ps, IC_STATUS_FAILED, IC_MSG_PURGE_DISABLED);
        if (again && !empty(in->completion_time))
            p->status.completion_time = in->completion_time;
        p->remove_purge = in->has_purge;
        return 0;
    }
    if (p->step == IC_STEP_START) {
        p->started = 1;
        ps.start = in->now;
        if (start_metadata(&ps, &rec, rec_ok) != 0)
            return -1;
        p->status = (ic_status){.status = IC_STATUS_PROCESSING, .reason = ic_action_reason(ps.act),
                                .message = ic_action_message(ps.act), .start_time = in->now};
        p->write_status = 1;
        return 0;
    }

    /* continue: the action named by the record of its start, or (that
     * record did not land) the spec as it is, recorded now */
    ps.start = in->start_time;
    ps.start_epoch = start_epoch;
    if (rec_ok && rec.start != NULL && same(rec.start, in->start_time)) {
        ps.hash = rec.hash;
        if (rec.has_images)
            ps.acted = rec.images;
        else if (ic_lists_of_spec(in->spec, a, &ps.acted) != 0)
            return -1;
        ps.removed = rec.removed;
        ps.has_removed = rec.has_removed;
    } else if (start_metadata(&ps, &rec, rec_ok) != 0) {
        return -1;
    }
    if (in->n_seen > 0) {
        if ((ps.seen = arena_alloc(a, in->n_seen * sizeof(*ps.seen))) == NULL)
            return -1;
        memcpy(ps.seen, in->seen, in->n_seen * sizeof(*ps.seen));
        qsort(ps.seen, in->n_seen, sizeof(*ps.seen), cmp_item_q);
    }
    size_t distinct = 0;
    for (size_t i = 0; i < ps.acted.n; i++)
        distinct += ps.acted.list[i].n;
    if (distinct > IC_MAX_ITEMS)
        distinct = IC_MAX_ITEMS;
    if (sset_init(&ps.forms, distinct, a) != 0 ||
        (ps.form_of = arena_alloc(a, ps.forms.cap * sizeof(char *))) == NULL)
        return -1;
    const char *why = ic_action_reason(ps.act);
    if (why == NULL || ps.start == NULL || ps.hash == NULL)
        return -1;
    const char *identity[2] = {
        arena_printf(a, "pull/%s/%s/%s", why, ps.start, ps.hash),
        arena_printf(a, "purge/%s/%s/%s", why, ps.start, ps.hash),
    };
    if (identity[0] == NULL || identity[1] == NULL)
        return -1;
    int matched = 0, waiting = 0;
    for (size_t i = 0; i < in->n_nodes; i++) {
        size_t from = p->n_items;
        if (node_items(&ps, &in->nodes[i], &matched) != 0)
            return -1;
        if (judge_items(&ps, from, &in->nodes[i], &waiting) != 0)
            return -1;
        if (node_units(&ps, from, &in->nodes[i], identity) != 0)
            return -1;
        if (ps.too_large)
            break;
    }

    if (ps.too_large) {
        const char *msg = arena_printf(a, IC_MSG_TOO_LARGE, IC_MAX_ITEMS);
        if (msg == NULL)
            return -1;
        final_status(&ps, IC_STATUS_FAILED, msg);
        p->units = NULL;
        p->n_units = 0;
        return 0;
    }
    size_t open = 0, failed = 0, failed_pulls = 0;
    for (size_t i = 0; i < p->n_items; i++) {
        ic_item_state s = p->items[i].state;
        open += s == IC_ITEM_PENDING || s == IC_ITEM_RUNNING || s == IC_ITEM_WAITING;
        failed += s == IC_ITEM_FAILED;
        failed_pulls += s == IC_ITEM_FAILED && p->items[i].op == IC_OP_PULL;
    }
    if (open > 0) {
        const char *msg = ic_action_message(ps.act);
        if (waiting && (msg = waiting_message(&ps, msg)) == NULL)
            return -1;
        p->status = (ic_status){.status = IC_STATUS_PROCESSING, .reason = ic_action_reason(ps.act),
                                .message = msg, .start_time = ps.start};
        p->write_status = !same(in->status, p->status.status) ||
                          !same(in->reason, p->status.reason) ||
                          !same(in->message, p->status.message) || !empty(in->completion_time) ||
                          p->record != NULL;
        if (waiting)
            p->requeue_after_s = ps.start_epoch + cache_deadline_s(in) - in->now_epoch;
        if (p->requeue_after_s < 0)
            p->requeue_after_s = 0;
        return 0;
    }
    if (p->n_items == 0 && !matched) {
        final_status(&ps, IC_STATUS_NONE, IC_MSG_NO_NODES);
    } else if (failed > 0) {
        final_status(&ps, IC_STATUS_FAILED,
                     failed_pulls > 0 ? IC_MSG_PULL_FAILED : IC_MSG_DELETE_FAILED);
        if ((p->status.failures = arena_alloc(a, failed * sizeof(ic_failure))) == NULL)
            return -1;
        for (size_t i = 0; i < p->n_items; i++) {
            const ic_item *it = &p->items[i];
            if (it->state != IC_ITEM_FAILED)
                continue;
            const ic_node *n = NULL;
            for (size_t j = 0; j < in->n_nodes && n == NULL; j++)
                if (same(in->nodes[j].name, it->node))
                    n = &in->nodes[j];
            p->status.failures[p->status.n_failures++] = (ic_failure){
                .image = it->image, .node = n != NULL ? ic_node_hostname(n) : it->node,
                .reason = it->reason, .message = it->message};
        }
        qsort(p->status.failures, p->status.n_failures, sizeof(ic_failure), cmp_failure);
        size_t bounded = ic_failures_bound(p->status.failures, p->status.n_failures, a);
        if (bounded == (size_t)-1)
            return -1;
        p->status.n_failures = bounded;
    } else {
        final_status(&ps, IC_STATUS_SUCCEEDED,
                     ps.act == IC_ACT_PURGE ? IC_MSG_DELETED : IC_MSG_PULLED);
    }
    p->units = NULL;
    p->n_units = 0;
    return 0;
}
