/*
 * ic_spec.c - see ic_spec.h.
 *
 * The decoder is yajl's parser over the spec's span (lib/jspec's frame)
 * with a stack of contexts, as lib/ipj_spec.c reads an ImagePullJob's, for a
 * smaller object: review_decode() has already held the bytes to its rules
 * (UTF-8, depth, no key twice), so what is left to check is the JSON type
 * of each field kube-fledged's Go types read; anything else is skipped.
 * Lists grow in the arena, doubling.
 */
#include "ic_spec.h"

#include <stdlib.h>
#include <string.h>

#include "jspec.h"

/* What a JSON value is, by where it is. */
enum ctx {
    X_SKIP, /* not read: any JSON */
    X_SPEC,
    X_CACHE_SPEC,
    X_LIST,
    X_IMAGES,
    X_IMAGE,
    X_SELECTOR,
    X_LABEL,
    X_SECRETS,
    X_SECRET,
    X_SECRET_NAME,
};

enum jt { T_ANY, T_OBJ, T_ARR, T_STR };

static const enum jt ctx_type[] = {
    [X_SKIP] = T_ANY,  [X_SPEC] = T_OBJ,     [X_CACHE_SPEC] = T_ARR, [X_LIST] = T_OBJ,
    [X_IMAGES] = T_ARR, [X_IMAGE] = T_STR,   [X_SELECTOR] = T_OBJ,   [X_LABEL] = T_STR,
    [X_SECRETS] = T_ARR, [X_SECRET] = T_OBJ, [X_SECRET_NAME] = T_STR,
};

typedef struct ic_decoder {
    ic_spec *s;
    arena *a;
    jspec_sink sink;
    jspec_stack st;   /* spec, cacheSpec, a list, its images: 4 deep at most */
    enum ctx pending; /* the value of the key just read */
    sv label;         /* the nodeSelector key just read */
    size_t lists_cap, images_cap, selector_cap, secrets_cap;
} ic_decoder;

#define fail(d, ...) jspec_fail(&(d)->sink, __VA_ARGS__)

/* Room for `more` more elements of size bytes in *v (n used, *cap held),
 * or -1 when out of memory. */
static int reserve_n(arena *a, void **v, size_t n, size_t *cap, size_t size, size_t more)
{
    if (n + more <= *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 4;
    while (ncap < n + more)
        ncap *= 2;
    void *nv = arena_alloc(a, ncap * size);
    if (nv == NULL)
        return -1;
    if (n > 0)
        memcpy(nv, *v, n * size);
    *v = nv;
    *cap = ncap;
    return 0;
}

static int reserve(arena *a, void **v, size_t n, size_t *cap, size_t size)
{
    return reserve_n(a, v, n, cap, size, 1);
}

static ic_list *cur_list(ic_decoder *d)
{
    return &d->s->lists[d->s->n_lists - 1];
}

/* Where c is, for a message: "spec.cacheSpec[2].images[0]". */
static const char *path_of(ic_decoder *d, enum ctx c)
{
    arena *a = d->a;
    size_t li = d->s->n_lists > 0 ? d->s->n_lists - 1 : 0;
    switch (c) {
    case X_SPEC:
        return "spec";
    case X_CACHE_SPEC:
        return "spec.cacheSpec";
    case X_LIST: /* not added yet: the next index */
        return arena_printf(a, "spec.cacheSpec[%zu]", d->s->n_lists);
    case X_IMAGES:
        return arena_printf(a, "spec.cacheSpec[%zu].images", li);
    case X_IMAGE:
        return arena_printf(a, "spec.cacheSpec[%zu].images[%zu]", li, cur_list(d)->n_images);
    case X_SELECTOR:
        return arena_printf(a, "spec.cacheSpec[%zu].nodeSelector", li);
    case X_LABEL:
        return arena_printf(a, "spec.cacheSpec[%zu].nodeSelector[%s]", li,
                            arena_quote(a, d->label.ptr, d->label.len));
    case X_SECRETS:
        return "spec.imagePullSecrets";
    case X_SECRET:
        return arena_printf(a, "spec.imagePullSecrets[%zu]", d->s->n_pull_secrets);
    case X_SECRET_NAME:
        return arena_printf(a, "spec.imagePullSecrets[%zu].name", d->s->n_pull_secrets - 1);
    case X_SKIP:
        break;
    }
    return "spec";
}

static int wrong_type(ic_decoder *d, enum ctx c, const char *got)
{
    enum jt t = ctx_type[c];
    const char *want = t == T_OBJ ? "an object" : t == T_ARR ? "an array" : "a string";
    const char *path = path_of(d, c);
    return fail(d, "%s must be %s, got %s", path != NULL ? path : "spec", want, got);
}

/* The context of the value about to arrive: the key's in an object, the
 * element's in an array. */
static enum ctx value_ctx(const ic_decoder *d)
{
    int top = jspec_top(&d->st);
    if (top == JSPEC_TOP)
        return X_SPEC;
    switch ((enum ctx)top) {
    case X_CACHE_SPEC:
        return X_LIST;
    case X_IMAGES:
        return X_IMAGE;
    case X_SECRETS:
        return X_SECRET;
    case X_SPEC:
    case X_LIST:
    case X_SELECTOR:
    case X_SECRET:
        return d->pending;
    default:
        return X_SKIP;
    }
}

/* Adds a string for c: an image, a label's value, a secret's name. */
static int add_string(ic_decoder *d, enum ctx c, sv v)
{
    ic_list *l;
    switch (c) {
    case X_IMAGE:
        l = cur_list(d);
        if (reserve(d->a, (void **)&l->images, l->n_images, &d->images_cap, sizeof(sv)) != 0)
            return fail(d, "out of memory");
        l->images[l->n_images++] = v;
        return 1;
    case X_LABEL:
        l = cur_list(d);
        if (reserve_n(d->a, (void **)&l->selector, 2 * l->n_selector, &d->selector_cap, sizeof(sv), 2) != 0)
            return fail(d, "out of memory");
        l->selector[2 * l->n_selector] = d->label;
        l->selector[2 * l->n_selector + 1] = v;
        l->n_selector++;
        return 1;
    case X_SECRET_NAME:
        d->s->pull_secrets[d->s->n_pull_secrets - 1] = v;
        return 1;
    default:
        return 1;
    }
}

/* A scalar arrived (jspec_events.scalar). */
static int scalar(void *ctx, char kind, const char *p, size_t len)
{
    ic_decoder *d = ctx;
    enum ctx c = value_ctx(d);
    if (c == X_SKIP)
        return 1;
    if (kind == 'z') {
        /* null: Go leaves the field as it was: a nil list or map, "" in a
         * list or map of strings, the zero struct in a list of structs */
        sv empty = {"", 0};
        switch (c) {
        case X_IMAGE:
        case X_LABEL:
            return add_string(d, c, empty);
        case X_LIST:
            if (reserve(d->a, (void **)&d->s->lists, d->s->n_lists, &d->lists_cap, sizeof(ic_list)) != 0)
                return fail(d, "out of memory");
            d->s->lists[d->s->n_lists++] = (ic_list){0};
            return 1;
        case X_SECRET:
            if (reserve(d->a, (void **)&d->s->pull_secrets, d->s->n_pull_secrets, &d->secrets_cap,
                        sizeof(sv)) != 0)
                return fail(d, "out of memory");
            d->s->pull_secrets[d->s->n_pull_secrets++] = empty;
            return 1;
        default:
            return 1;
        }
    }
    if (kind == 's' && ctx_type[c] == T_STR) {
        char *copy = arena_strndup(d->a, p, len);
        if (copy == NULL)
            return fail(d, "out of memory");
        return add_string(d, c, (sv){copy, len});
    }
    return wrong_type(d, c, kind == 's' ? "a string" : kind == 'n' ? "a number" : "a boolean");
}

static int open_container(void *ctx, int is_map)
{
    ic_decoder *d = ctx;
    enum ctx c = value_ctx(d);
    if (c == X_SKIP) {
        jspec_open(&d->st, JSPEC_SKIP);
        return 1;
    }
    enum jt want = ctx_type[c];
    if ((is_map && want != T_OBJ) || (!is_map && want != T_ARR))
        return wrong_type(d, c, is_map ? "an object" : "an array");
    ic_spec *s = d->s;
    switch (c) {
    case X_SPEC:
        s->present = 1;
        break;
    case X_CACHE_SPEC:
        s->has_cache_spec = 1;
        break;
    case X_LIST:
        if (reserve(d->a, (void **)&s->lists, s->n_lists, &d->lists_cap, sizeof(ic_list)) != 0)
            return fail(d, "out of memory");
        s->lists[s->n_lists++] = (ic_list){0};
        d->images_cap = d->selector_cap = 0;
        break;
    case X_IMAGES:
        cur_list(d)->has_images = 1;
        break;
    case X_SELECTOR:
        cur_list(d)->has_node_selector = 1;
        break;
    case X_SECRETS:
        s->has_pull_secrets = 1;
        break;
    case X_SECRET:
        if (reserve(d->a, (void **)&s->pull_secrets, s->n_pull_secrets, &d->secrets_cap, sizeof(sv)) != 0)
            return fail(d, "out of memory");
        s->pull_secrets[s->n_pull_secrets++] = (sv){"", 0};
        break;
    default:
        break;
    }
    /* a key twice is refused by review_decode: a list's images or
     * nodeSelector read again cannot happen */
    jspec_open(&d->st, (int)c);
    d->pending = X_SKIP;
    return 1;
}

static int close_container(void *ctx)
{
    ic_decoder *d = ctx;
    jspec_close(&d->st);
    d->pending = X_SKIP;
    return 1;
}

static int on_key(void *ctx, const char *k, size_t len)
{
    ic_decoder *d = ctx;
    d->pending = X_SKIP;
    sv key = {k, len};
    switch ((enum ctx)jspec_top(&d->st)) {
    case X_SPEC:
        if (sv_eq(key, "cacheSpec"))
            d->pending = X_CACHE_SPEC;
        else if (sv_eq(key, "imagePullSecrets"))
            d->pending = X_SECRETS;
        break;
    case X_LIST:
        if (sv_eq(key, "images"))
            d->pending = X_IMAGES;
        else if (sv_eq(key, "nodeSelector"))
            d->pending = X_SELECTOR;
        break;
    case X_SELECTOR: {
        char *copy = arena_strndup(d->a, key.ptr, len);
        if (copy == NULL)
            return fail(d, "out of memory");
        d->label = (sv){copy, len};
        d->pending = X_LABEL;
        break;
    }
    case X_SECRET:
        if (sv_eq(key, "name"))
            d->pending = X_SECRET_NAME;
        break;
    default:
        break;
    }
    return 1;
}

static const jspec_events ic_events = {scalar, open_container, close_container, on_key};

int ic_decode(ic_spec *s, const char *json, size_t len, arena *a, char *err, size_t errlen)
{
    memset(s, 0, sizeof(*s));
    if (len == 0)
        return 0;
    ic_decoder d = {.s = s, .a = a, .sink = {err, errlen, 0}, .pending = X_SPEC};
    if (jspec_parse(&ic_events, &d, &d.sink, json, len, IC_MAX_SPEC_BYTES, a) != 0)
        return -1;
    /* maps as sets: the pairs in key order (keys are unique) */
    for (size_t i = 0; i < s->n_lists; i++)
        if (s->lists[i].n_selector > 1)
            qsort(s->lists[i].selector, s->lists[i].n_selector, 2 * sizeof(sv), sv_order);
    return 0;
}

int ic_selector_equal(const ic_list *x, const ic_list *y)
{
    return x->has_node_selector == y->has_node_selector &&
           sv_list_same(x->selector, 2 * x->n_selector, y->selector, 2 * y->n_selector);
}

int ic_spec_equal(const ic_spec *x, const ic_spec *y)
{
    if (x->has_cache_spec != y->has_cache_spec || x->n_lists != y->n_lists ||
        x->has_pull_secrets != y->has_pull_secrets ||
        !sv_list_same(x->pull_secrets, x->n_pull_secrets, y->pull_secrets, y->n_pull_secrets))
        return 0;
    for (size_t i = 0; i < x->n_lists; i++) {
        const ic_list *l = &x->lists[i], *m = &y->lists[i];
        if (l->has_images != m->has_images || !sv_list_same(l->images, l->n_images, m->images, m->n_images) ||
            !ic_selector_equal(l, m))
            return 0;
    }
    return 1;
}

/* An image and where it is in its list, sorted by image then place. */
typedef struct placed {
    sv image;
    size_t at;
} placed;

static int placed_order(const void *x, const void *y)
{
    const placed *a = x, *b = y;
    int c = sv_order(&a->image, &b->image);
    return c != 0 ? c : (a->at > b->at) - (a->at < b->at);
}

size_t ic_first_duplicate(const ic_list *l, arena *a)
{
    size_t n = l->n_images, first = n;
    if (n < 2)
        return n;
    placed *p = arena_alloc(a, n * sizeof(*p));
    if (p == NULL)
        return (size_t)-1;
    for (size_t i = 0; i < n; i++)
        p[i] = (placed){l->images[i], i};
    qsort(p, n, sizeof(*p), placed_order);
    /* in each run of one name, the second place is the first repeat */
    for (size_t i = 1; i < n; i++)
        if (sv_same(p[i].image, p[i - 1].image) && (i < 2 || !sv_same(p[i - 1].image, p[i - 2].image)) &&
            p[i].at < first)
            first = p[i].at;
    return first;
}
