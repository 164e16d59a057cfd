/*
 * ipj_spec.c - see ipj_spec.h.
 *
 * The decoder is yajl's parser over the spec's span (lib/jspec's frame)
 * with a stack of contexts, like the webhook's review decoder but for one small
 * object: strings keep their length (a NUL inside one is carried,
 * docs/DECISIONS.md "Embedded NUL"), lists grow in the arena, and nothing
 * is read that Kruise does not read (sandboxConfig and unknown keys are
 * only held to JSON).
 */
#include "ipj_spec.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "imageref.h"
#include "jspec.h"

/* What a JSON value is, by where it is. */
enum ctx {
    X_SKIP,        /* not read: any JSON */
    X_SPEC,
    X_IMAGE,
    X_PULL_SECRETS,
    X_PULL_SECRET,
    X_SELECTOR,     /* selector and podSelector: which says ipj_selector */
    X_NAMES,
    X_NAME,
    X_LABELS,
    X_LABEL,
    X_EXPRS,
    X_EXPR,
    X_EXPR_KEY,
    X_EXPR_OP,
    X_EXPR_VALUES,
    X_EXPR_VALUE,
    X_PARALLELISM,
    X_PULL_POLICY,
    X_TIMEOUT,
    X_BACKOFF,
    X_COMPLETION,
    X_COMPLETION_TYPE,
    X_DEADLINE,
    X_TTL,
    X_IMAGE_PULL_POLICY,
};

enum jt { T_OBJ, T_ARR, T_STR, T_INT32, T_INT64, T_INT_OR_STR, T_ANY };

static const struct {
    const char *path;
    enum jt type;
} ctx_info[] = {
    [X_SKIP] = {"", T_ANY},
    [X_SPEC] = {"spec", T_OBJ},
    [X_IMAGE] = {"spec.image", T_STR},
    [X_PULL_SECRETS] = {"spec.pullSecrets", T_ARR},
    [X_PULL_SECRET] = {"spec.pullSecrets[]", T_STR},
    [X_SELECTOR] = {"", T_OBJ},
    [X_NAMES] = {".names", T_ARR},
    [X_NAME] = {".names[]", T_STR},
    [X_LABELS] = {".matchLabels", T_OBJ},
    [X_LABEL] = {".matchLabels[]", T_STR},
    [X_EXPRS] = {".matchExpressions", T_ARR},
    [X_EXPR] = {".matchExpressions[]", T_OBJ},
    [X_EXPR_KEY] = {".matchExpressions[].key", T_STR},
    [X_EXPR_OP] = {".matchExpressions[].operator", T_STR},
    [X_EXPR_VALUES] = {".matchExpressions[].values", T_ARR},
    [X_EXPR_VALUE] = {".matchExpressions[].values[]", T_STR},
    [X_PARALLELISM] = {"spec.parallelism", T_INT_OR_STR},
    [X_PULL_POLICY] = {"spec.pullPolicy", T_OBJ},
    [X_TIMEOUT] = {"spec.pullPolicy.timeoutSeconds", T_INT32},
    [X_BACKOFF] = {"spec.pullPolicy.backoffLimit", T_INT32},
    [X_COMPLETION] = {"spec.completionPolicy", T_OBJ},
    [X_COMPLETION_TYPE] = {"spec.completionPolicy.type", T_STR},
    [X_DEADLINE] = {"spec.completionPolicy.activeDeadlineSeconds", T_INT64},
    [X_TTL] = {"spec.completionPolicy.ttlSecondsAfterFinished", T_INT32},
    [X_IMAGE_PULL_POLICY] = {"spec.imagePullPolicy", T_STR},
};

typedef struct sv_list {
    sv *v;
    size_t n, cap;
} sv_list;

typedef struct ipj_decoder {
    ipj_spec *s;
    arena *a;
    jspec_sink sink;
    jspec_stack st;   /* review_decode has bounded the depth already */
    enum ctx pending; /* the value of the key just read */
    ipj_selector *sel; /* the selector being read */
    sv pending_label;
    sv_list names, label_keys, label_values, values, secrets;
    size_t exprs_cap;
} ipj_decoder;

#define fail(d, ...) jspec_fail(&(d)->sink, __VA_ARGS__)

static int push_sv(ipj_decoder *d, sv_list *l, sv v)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        sv *nv = arena_alloc(d->a, cap * sizeof(*nv));
        if (nv == NULL)
            return fail(d, "out of memory");
        if (l->n)
            memcpy(nv, l->v, l->n * sizeof(*nv));
        l->v = nv;
        l->cap = cap;
    }
    l->v[l->n++] = v;
    return 1;
}

static const char *sel_name(const ipj_decoder *d)
{
    return d->sel == &d->s->pod_selector ? "spec.podSelector" : "spec.selector";
}

static const char *jt_name(enum jt t)
{
    switch (t) {
    case T_OBJ:
        return "an object";
    case T_ARR:
        return "an array";
    case T_STR:
        return "a string";
    case T_INT32:
    case T_INT64:
        return "a whole number";
    case T_INT_OR_STR:
        return "a whole number or a string";
    case T_ANY:
        break;
    }
    return "a value";
}

static int wrong_type(ipj_decoder *d, enum ctx c, const char *got)
{
    int in_sel = c >= X_SELECTOR && c <= X_EXPR_VALUE;
    return fail(d, "%s%s must be %s, got %s", in_sel ? sel_name(d) : "", ctx_info[c].path,
                jt_name(ctx_info[c].type), got);
}

/* The context of the value about to arrive: the key's in an object, the
 * element's in an array. */
static enum ctx value_ctx(ipj_decoder *d)
{
    int top = jspec_top(&d->st);
    if (top == JSPEC_TOP)
        return X_SPEC;
    switch ((enum ctx)top) {
    case X_PULL_SECRETS:
        return X_PULL_SECRET;
    case X_NAMES:
        return X_NAME;
    case X_EXPRS:
        return X_EXPR;
    case X_EXPR_VALUES:
        return X_EXPR_VALUE;
    case X_LABELS:
    case X_SPEC:
    case X_SELECTOR:
    case X_EXPR:
    case X_PULL_POLICY:
    case X_COMPLETION:
        return d->pending;
    default:
        return X_SKIP;
    }
}

static ipj_requirement *cur_expr(ipj_decoder *d)
{
    return &d->sel->exprs[d->sel->n_exprs - 1];
}

/* A scalar arrived for context c. kind: 's' string, 'n' number, 'b' bool,
 * 'z' null. */
static int scalar(ipj_decoder *d, enum ctx c, char kind, const char *p, size_t len)
{
    if (c == X_SKIP)
        return 1;
    if (kind == 'z') {
        /* null: absent; inside a list or map of strings Go reads it as "" */
        sv empty = {"", 0};
        switch (c) {
        case X_PULL_SECRET:
            return push_sv(d, &d->secrets, empty);
        case X_NAME:
            return push_sv(d, &d->names, empty);
        case X_EXPR_VALUE:
            return push_sv(d, &d->values, empty);
        case X_LABEL:
            return push_sv(d, &d->label_keys, d->pending_label) &&
                   push_sv(d, &d->label_values, empty);
        default:
            return 1;
        }
    }
    enum jt want = ctx_info[c].type;
    if (kind == 's' && (want == T_STR || want == T_INT_OR_STR)) {
        char *copy = arena_strndup(d->a, p, len);
        if (copy == NULL)
            return fail(d, "out of memory");
        sv v = {copy, len};
        switch (c) {
        case X_IMAGE:
            d->s->image = v;
            return 1;
        case X_PULL_SECRET:
            return push_sv(d, &d->secrets, v);
        case X_NAME:
            return push_sv(d, &d->names, v);
        case X_LABEL:
            return push_sv(d, &d->label_keys, d->pending_label) && push_sv(d, &d->label_values, v);
        case X_EXPR_KEY:
            cur_expr(d)->key = v;
            return 1;
        case X_EXPR_OP:
            cur_expr(d)->op = v;
            return 1;
        case X_EXPR_VALUE:
            return push_sv(d, &d->values, v);
        case X_PARALLELISM:
            d->s->parallelism_set = 1;
            d->s->parallelism_is_string = 1;
            d->s->parallelism_str = v;
            return 1;
        case X_COMPLETION_TYPE:
            d->s->completion_type = v;
            return 1;
        case X_IMAGE_PULL_POLICY:
            d->s->image_pull_policy = v;
            return 1;
        default:
            return 1;
        }
    }
    if (kind == 'n' && (want == T_INT32 || want == T_INT64 || want == T_INT_OR_STR)) {
        /* Go's decoder: a whole number in the field's range, no fraction
         * or exponent */
        char buf[32];
        int64_t v = 0;
        int ok = len > 0 && len < sizeof(buf);
        for (size_t i = 0; ok && i < len; i++)
            if (!(p[i] == '-' && i == 0) && (p[i] < '0' || p[i] > '9'))
                ok = 0;
        if (ok) {
            memcpy(buf, p, len);
            buf[len] = '\0';
            errno = 0;
            long long ll = strtoll(buf, NULL, 10);
            ok = errno == 0;
            v = ll;
        }
        int64_t lo = want == T_INT64 ? INT64_MIN : INT32_MIN, hi = want == T_INT64 ? INT64_MAX : INT32_MAX;
        if (!ok || v < lo || v > hi)
            return fail(d, "%s must be a whole number that fits in %d bits, got %.*s", ctx_info[c].path,
                        want == T_INT64 ? 64 : 32, len > 40 ? 40 : (int)len, p);
        ipj_int iv = {1, v};
        switch (c) {
        case X_PARALLELISM:
            d->s->parallelism_set = 1;
            d->s->parallelism_int = v;
            return 1;
        case X_TIMEOUT:
            d->s->timeout_seconds = iv;
            return 1;
        case X_BACKOFF:
            d->s->backoff_limit = iv;
            return 1;
        case X_DEADLINE:
            d->s->active_deadline_seconds = iv;
            return 1;
        case X_TTL:
            d->s->ttl_seconds_after_finished = iv;
            return 1;
        default:
            return 1;
        }
    }
    return wrong_type(d, c, kind == 's' ? "a string" : kind == 'n' ? "a number" : "a boolean");
}

static int on_scalar(void *ctx, char kind, const char *p, size_t len)
{
    ipj_decoder *d = ctx;
    return scalar(d, value_ctx(d), kind, p, len);
}

static int open_container(void *ctx, int is_map)
{
    ipj_decoder *d = ctx;
    enum ctx c = value_ctx(d);
    if (c == X_SKIP) {
        jspec_open(&d->st, JSPEC_SKIP);
        return 1;
    }
    enum jt want = ctx_info[c].type;
    if ((is_map && want != T_OBJ) || (!is_map && want != T_ARR))
        return wrong_type(d, c, is_map ? "an object" : "an array");
    switch (c) {
    case X_SPEC:
        d->s->present = 1;
        break;
    case X_PULL_SECRETS:
        d->s->has_pull_secrets = 1;
        d->secrets = (sv_list){0};
        break;
    case X_SELECTOR:
        d->sel->present = 1;
        break;
    case X_NAMES:
        d->sel->has_names = 1;
        d->names = (sv_list){0};
        break;
    case X_LABELS:
        d->sel->has_labels = 1;
        d->label_keys = d->label_values = (sv_list){0};
        break;
    case X_EXPRS:
        d->sel->has_exprs = 1;
        d->exprs_cap = 0;
        break;
    case X_EXPR: {
        ipj_selector *sel = d->sel;
        if (sel->n_exprs == d->exprs_cap) {
            size_t cap = d->exprs_cap ? d->exprs_cap * 2 : 4;
            ipj_requirement *nv = arena_alloc(d->a, cap * sizeof(*nv));
            if (nv == NULL)
                return fail(d, "out of memory");
            if (sel->n_exprs)
                memcpy(nv, sel->exprs, sel->n_exprs * sizeof(*nv));
            sel->exprs = nv;
            d->exprs_cap = cap;
        }
        memset(&sel->exprs[sel->n_exprs++], 0, sizeof(ipj_requirement));
        break;
    }
    case X_EXPR_VALUES:
        cur_expr(d)->has_values = 1;
        d->values = (sv_list){0};
        break;
    case X_PULL_POLICY:
        d->s->has_pull_policy = 1;
        break;
    case X_COMPLETION:
        d->s->has_completion_policy = 1;
        break;
    default:
        break;
    }
    jspec_open(&d->st, (int)c);
    d->pending = X_SKIP;
    return 1;
}

static int close_container(void *ctx)
{
    ipj_decoder *d = ctx;
    enum ctx c = (enum ctx)jspec_close(&d->st);
    d->pending = X_SKIP;
    switch (c) {
    case X_PULL_SECRETS:
        d->s->pull_secrets = d->secrets.v;
        d->s->n_pull_secrets = d->secrets.n;
        break;
    case X_NAMES:
        d->sel->names = d->names.v;
        d->sel->n_names = d->names.n;
        break;
    case X_LABELS:
        d->sel->label_keys = d->label_keys.v;
        d->sel->label_values = d->label_values.v;
        d->sel->n_labels = d->label_keys.n;
        break;
    case X_EXPR_VALUES:
        cur_expr(d)->values = d->values.v;
        cur_expr(d)->n_values = d->values.n;
        break;
    default:
        break;
    }
    return 1;
}

#define KEY_IS(lit) (len == sizeof(lit) - 1 && memcmp(key, lit, len) == 0)

static int on_key(void *ctx, const char *key, size_t len)
{
    ipj_decoder *d = ctx;
    d->pending = X_SKIP;
    switch ((enum ctx)jspec_top(&d->st)) {
    case X_SPEC:
        if (KEY_IS("image"))
            d->pending = X_IMAGE;
        else if (KEY_IS("pullSecrets"))
            d->pending = X_PULL_SECRETS;
        else if (KEY_IS("selector") || KEY_IS("podSelector")) {
            d->pending = X_SELECTOR;
            d->sel = KEY_IS("selector") ? &d->s->selector : &d->s->pod_selector;
        } else if (KEY_IS("parallelism"))
            d->pending = X_PARALLELISM;
        else if (KEY_IS("pullPolicy"))
            d->pending = X_PULL_POLICY;
        else if (KEY_IS("completionPolicy"))
            d->pending = X_COMPLETION;
        else if (KEY_IS("imagePullPolicy"))
            d->pending = X_IMAGE_PULL_POLICY;
        break;
    case X_SELECTOR:
        /* podSelector has no names: Kruise's type has none, Go drops it */
        if (KEY_IS("names") && d->sel == &d->s->selector)
            d->pending = X_NAMES;
        else if (KEY_IS("matchLabels"))
            d->pending = X_LABELS;
        else if (KEY_IS("matchExpressions"))
            d->pending = X_EXPRS;
        break;
    case X_LABELS: {
        char *copy = arena_strndup(d->a, key, len);
        if (copy == NULL)
            return fail(d, "out of memory");
        d->pending_label = (sv){copy, len};
        d->pending = X_LABEL;
        break;
    }
    case X_EXPR:
        if (KEY_IS("key"))
            d->pending = X_EXPR_KEY;
        else if (KEY_IS("operator"))
            d->pending = X_EXPR_OP;
        else if (KEY_IS("values"))
            d->pending = X_EXPR_VALUES;
        break;
    case X_PULL_POLICY:
        if (KEY_IS("timeoutSeconds"))
            d->pending = X_TIMEOUT;
        else if (KEY_IS("backoffLimit"))
            d->pending = X_BACKOFF;
        break;
    case X_COMPLETION:
        if (KEY_IS("type"))
            d->pending = X_COMPLETION_TYPE;
        else if (KEY_IS("activeDeadlineSeconds"))
            d->pending = X_DEADLINE;
        else if (KEY_IS("ttlSecondsAfterFinished"))
            d->pending = X_TTL;
        break;
    default:
        break;
    }
    return 1;
}

static const jspec_events ipj_events = {on_scalar, open_container, close_container, on_key};

/* matchLabels in key order, as the messages need one order and Go's map
 * order is random. */
static int sort_labels(ipj_selector *sel, arena *a)
{
    if (sel->n_labels < 2)
        return 0;
    /* pairs sorted by key: sort an index of keys, then permute */
    sv *pairs = arena_alloc(a, sel->n_labels * 2 * sizeof(sv));
    if (pairs == NULL)
        return -1;
    for (size_t i = 0; i < sel->n_labels; i++) {
        pairs[2 * i] = sel->label_keys[i];
        pairs[2 * i + 1] = sel->label_values[i];
    }
    qsort(pairs, sel->n_labels, 2 * sizeof(sv), sv_order);
    for (size_t i = 0; i < sel->n_labels; i++) {
        sel->label_keys[i] = pairs[2 * i];
        sel->label_values[i] = pairs[2 * i + 1];
    }
    return 0;
}

int ipj_decode(ipj_spec *s, const char *json, size_t len, arena *a, char *err, size_t errlen)
{
    memset(s, 0, sizeof(*s));
    if (len == 0)
        return 0;
    ipj_decoder d = {.s = s, .a = a, .sink = {err, errlen, 0}, .pending = X_SPEC};
    if (jspec_parse(&ipj_events, &d, &d.sink, json, len, IPJ_MAX_SPEC_BYTES, a) != 0)
        return -1;
    if (sort_labels(&s->selector, a) != 0 || sort_labels(&s->pod_selector, a) != 0)
        return errmsg_set(err, errlen, "out of memory");
    return 0;
}

/* ---- images: distribution/reference's ParseNormalizedNamed, by its words */

static int has_upper(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] >= 'A' && p[i] <= 'Z')
            return 1;
    return 0;
}

const char *ipj_image_error(sv image, arena *a)
{
    const char *p = image.ptr;
    size_t n = image.len;
    /* anchoredIdentifierRegexp: an image ID alone */
    if (n == 64) {
        size_t i = 0;
        while (i < 64 && ((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
            i++;
        if (i == 64)
            return arena_printf(a, "invalid repository name (%.*s), cannot specify 64-byte hexadecimal strings",
                                64, p);
    }
    /* splitDockerDomain: the first component is a registry when it has '.'
     * or ':', is "localhost", or has an upper-case letter */
    const char *slash = memchr(p, '/', n);
    const char *rest = p;
    if (slash != NULL) {
        size_t fl = (size_t)(slash - p);
        if (memchr(p, '.', fl) != NULL || memchr(p, ':', fl) != NULL ||
            (fl == 9 && memcmp(p, "localhost", 9) == 0) || has_upper(p, fl))
            rest = slash + 1;
    }
    size_t rn = n - (size_t)(rest - p);
    const char *colon = memchr(rest, ':', rn);
    size_t remote = colon != NULL ? (size_t)(colon - rest) : rn;
    if (has_upper(rest, remote))
        return "invalid reference format: repository name must be lowercase";
    char err[256];
    imageref r;
    if (imageref_parse(&r, p, n, a, err, sizeof(err)) != 0) {
        /* NameTotalLengthMax: distribution checks it after the format */
        if (strstr(err, "repository name is longer than") != NULL)
            return "repository name must not be more than 255 characters";
        return "invalid reference format";
    }
    return NULL;
}

/* ---- label selectors: apimachinery's LabelSelectorAsSelector, by its words */

#define QNAME_MSG                                                                                  \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "    \
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "         \
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
#define DNS1123_MSG                                                                                \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "   \
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "  \
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
#define LABEL_VALUE_MSG                                                                            \
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "    \
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "             \
    "'my_value',  or '12345', regex used for validation is "                                       \
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"

#define ALNUM(c) (((c) >= 'a' && (c) <= 'z') || ((c) >= 'A' && (c) <= 'Z') || ((c) >= '0' && (c) <= '9'))

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] */
static int qname_ok(const char *p, size_t n)
{
    if (n == 0 || !ALNUM(p[0]) || !ALNUM(p[n - 1]))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!ALNUM(p[i]) && p[i] != '-' && p[i] != '_' && p[i] != '.')
            return 0;
    return 1;
}

static int dns1123_subdomain_ok(const char *p, size_t n)
{
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && p[i] != '.') {
            char c = p[i];
            if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
                return 0;
            continue;
        }
        size_t l = i - start;
        if (l == 0 || p[start] == '-' || p[i - 1] == '-')
            return 0;
        start = i + 1;
    }
    return 1;
}

/* IsQualifiedName's messages joined with "; ", or NULL. */
static const char *qualified_name_problems(sv k, arena *a)
{
    const char *p = k.ptr;
    size_t n = k.len, slashes = 0;
    for (size_t i = 0; i < n; i++)
        slashes += p[i] == '/';
    if (slashes > 1)
        return "a qualified name " QNAME_MSG " with an optional DNS subdomain prefix and '/' (e.g. "
               "'example.com/MyName')";
    const char *out = NULL;
#define ADD(msg) out = out == NULL ? (msg) : arena_printf(a, "%s; %s", out, (msg))
    const char *name = p;
    size_t nn = n;
    if (slashes == 1) {
        const char *slash = memchr(p, '/', n);
        size_t pl = (size_t)(slash - p);
        name = slash + 1;
        nn = n - pl - 1;
        if (pl == 0) {
            ADD("prefix part must be non-empty");
        } else {
            if (pl > 253)
                ADD("prefix part must be no more than 253 characters");
            if (!dns1123_subdomain_ok(p, pl))
                ADD("prefix part " DNS1123_MSG);
        }
    }
    if (nn == 0)
        ADD("name part must be non-empty");
    else if (nn > 63)
        ADD("name part must be no more than 63 characters");
    if (!qname_ok(name, nn))
        ADD("name part " QNAME_MSG);
    return out;
}

static const char *label_value_problems(sv v, arena *a)
{
    const char *out = NULL;
    if (v.len > 63)
        ADD("must be no more than 63 characters");
    if (v.len > 0 && !qname_ok(v.ptr, v.len))
        ADD(LABEL_VALUE_MSG);
    return out;
#undef ADD
}

/* Go's %#v of a []string: []string(nil), []string{"a", "b"}. */
static const char *go_string_slice(const sv *v, size_t n, int is_nil, arena *a)
{
    if (is_nil)
        return "[]string(nil)";
    const char *out = "[]string{";
    for (size_t i = 0; i < n && out != NULL; i++)
        out = arena_printf(a, "%s%s%s", out, i ? ", " : "", arena_quote(a, v[i].ptr, v[i].len));
    return out == NULL ? NULL : arena_printf(a, "%s}", out);
}

/* NewRequirement's errors for one requirement, appended to list (n). */
static void requirement_errors(sv key, const char *op, const sv *vals, size_t nv, int vals_nil, const char **list,
                               size_t *n, size_t max, arena *a)
{
#define PUSH(e)            \
    do {                   \
        if (*n < max)      \
            list[(*n)++] = (e); \
    } while (0)
    const char *kp = qualified_name_problems(key, a);
    if (kp != NULL)
        PUSH(arena_printf(a, "key: Invalid value: %s: %s", arena_quote(a, key.ptr, key.len), kp));
    const char *why = NULL;
    if ((!strcmp(op, "in") || !strcmp(op, "notin")) && nv == 0)
        why = "for 'in', 'notin' operators, values set can't be empty";
    else if (!strcmp(op, "=") && nv != 1)
        why = "exact-match compatibility requires one single value";
    else if ((!strcmp(op, "exists") || !strcmp(op, "!")) && nv != 0)
        why = "values set must be empty for exists and does not exist";
    if (why != NULL)
        PUSH(arena_printf(a, "values: Invalid value: %s: %s", go_string_slice(vals, nv, vals_nil, a), why));
    for (size_t i = 0; i < nv; i++) {
        const char *vp = label_value_problems(vals[i], a);
        if (vp != NULL)
            PUSH(arena_printf(a, "values[%zu][%s]: Invalid value: %s: %s", i, arena_escape(a, key.ptr, key.len),
                              arena_quote(a, vals[i].ptr, vals[i].len), vp));
    }
#undef PUSH
}

/* An aggregate's Error(): the one message, or "[a, b]". */
static const char *aggregate(const char **list, size_t n, arena *a)
{
    if (n == 0)
        return NULL;
    if (n == 1)
        return list[0];
    const char *out = "[";
    for (size_t i = 0; i < n && out != NULL; i++)
        out = arena_printf(a, "%s%s%s", out, i ? ", " : "", list[i]);
    return out == NULL ? NULL : arena_printf(a, "%s]", out);
}

const char *ipj_selector_error(const ipj_selector *sel, arena *a)
{
    const char *list[8];
    size_t n = 0;
    for (size_t i = 0; i < sel->n_labels; i++) {
        requirement_errors(sel->label_keys[i], "=", &sel->label_values[i], 1, 0, list, &n, 8, a);
        if (n > 0)
            return aggregate(list, n, a);
    }
    for (size_t i = 0; i < sel->n_exprs; i++) {
        const ipj_requirement *r = &sel->exprs[i];
        const char *op = sv_eq(r->op, "In")             ? "in"
                         : sv_eq(r->op, "NotIn")        ? "notin"
                         : sv_eq(r->op, "Exists")       ? "exists"
                         : sv_eq(r->op, "DoesNotExist") ? "!"
                                                        : NULL;
        if (op == NULL)
            return arena_printf(a, "%s is not a valid label selector operator",
                                arena_quote(a, r->op.ptr, r->op.len));
        /* Kruise copies values with append([]string(nil), ...): nil when none */
        requirement_errors(r->key, op, r->values, r->n_values, r->n_values == 0, list, &n, 8, a);
        if (n > 0)
            return aggregate(list, n, a);
    }
    return NULL;
}

/* ---- the verdict */

/* ---- matching: a parsed selector against a set of labels ------------------ */

/* The value of key in labels (keys sorted), or NULL. */
static const char *label_value(sv key, char *const *keys, char *const *values, size_t n)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        size_t kl = strlen(keys[mid]);
        size_t m = kl < key.len ? kl : key.len;
        int c = memcmp(keys[mid], key.ptr, m);
        if (c == 0)
            c = kl < key.len ? -1 : kl > key.len ? 1 : 0;
        if (c == 0)
            return values[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static int in_values(const char *v, const sv *values, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (sv_eq(values[i], v))
            return 1;
    return 0;
}

int ipj_selector_matches(const ipj_selector *sel, char *const *keys, char *const *values,
                         size_t n)
{
    for (size_t i = 0; i < sel->n_labels; i++) {
        const char *v = label_value(sel->label_keys[i], keys, values, n);
        if (v == NULL || !sv_eq(sel->label_values[i], v))
            return 0;
    }
    for (size_t i = 0; i < sel->n_exprs; i++) {
        const ipj_requirement *r = &sel->exprs[i];
        const char *v = label_value(r->key, keys, values, n);
        int ok;
        if (sv_eq(r->op, "In"))
            ok = v != NULL && in_values(v, r->values, r->n_values);
        else if (sv_eq(r->op, "NotIn"))
            ok = v == NULL || !in_values(v, r->values, r->n_values);
        else if (sv_eq(r->op, "Exists"))
            ok = v != NULL;
        else if (sv_eq(r->op, "DoesNotExist"))
            ok = v == NULL;
        else
            ok = 0; /* does not parse: matches nothing */
        if (!ok)
            return 0;
    }
    return 1;
}

/* ---- the selector as a query ---------------------------------------------- */

/* Writes the query into out (NULL: only counts); its length.  One pass,
 * each piece copied once: a selector with thousands of values costs its
 * size, not its size squared. */
static size_t selector_text(const ipj_selector *sel, char *out)
{
    size_t n = 0;
#define PUT(p, len)                                                                                \
    do {                                                                                           \
        if (out != NULL && (len) > 0)                                                              \
            memcpy(out + n, (p), (len));                                                           \
        n += (len);                                                                                \
    } while (0)
#define PUTS(lit) PUT(lit, sizeof(lit) - 1)
    for (size_t i = 0; i < sel->n_labels; i++) {
        if (n > 0)
            PUTS(",");
        PUT(sel->label_keys[i].ptr, sel->label_keys[i].len);
        PUTS("=");
        PUT(sel->label_values[i].ptr, sel->label_values[i].len);
    }
    for (size_t i = 0; i < sel->n_exprs; i++) {
        const ipj_requirement *r = &sel->exprs[i];
        if (n > 0)
            PUTS(",");
        if (sv_eq(r->op, "Exists") || sv_eq(r->op, "DoesNotExist")) {
            if (sv_eq(r->op, "DoesNotExist"))
                PUTS("!");
            PUT(r->key.ptr, r->key.len);
            continue;
        }
        PUT(r->key.ptr, r->key.len);
        if (sv_eq(r->op, "In"))
            PUTS(" in (");
        else
            PUTS(" notin (");
        for (size_t j = 0; j < r->n_values; j++) {
            if (j > 0)
                PUTS(",");
            PUT(r->values[j].ptr, r->values[j].len);
        }
        PUTS(")");
    }
#undef PUTS
#undef PUT
    return n;
}

size_t ipj_selector_string_len(const ipj_selector *sel)
{
    return selector_text(sel, NULL);
}

const char *ipj_selector_string(const ipj_selector *sel, arena *a)
{
    size_t n = selector_text(sel, NULL);
    if (n > IPJ_SELECTOR_STRING_MAX)
        return NULL;
    char *out = arena_alloc(a, n + 1);
    if (out == NULL)
        return NULL;
    selector_text(sel, out);
    out[n] = '\0';
    return out;
}
