/*
 * imageref.c - see imageref.h.  The grammar is distribution/reference's
 * (reference.go, regexp.go, normalize.go), checked by hand instead of with
 * regular expressions so every rejection can say what is wrong:
 *
 *   reference  := name [ ":" tag ] [ "@" digest ]
 *   name       := [ domain "/" ] path-component [ "/" path-component ]*
 *   domain     := host [ ":" port ]     host := domain-name | "[" ipv6 "]"
 *   domain-name:= label ( "." label )*  label := [A-Za-z0-9] ([A-Za-z0-9-]* [A-Za-z0-9])?
 *   path-component := [a-z0-9]+ ( ( "." | "_" | "__" | "-"+ ) [a-z0-9]+ )*
 *   tag        := [A-Za-z0-9_] [A-Za-z0-9_.-]{0,127}
 *   digest     := algorithm ":" hex, for sha256/384/512 lowercase hex of 64/96/128
 */
#include "imageref.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "errmsg.h"

#define LOWER(c) ((c) >= 'a' && (c) <= 'z')
#define UPPER(c) ((c) >= 'A' && (c) <= 'Z')
#define DIGIT(c) ((c) >= '0' && (c) <= '9')
#define LOWER_ALNUM(c) (LOWER(c) || DIGIT(c))
#define ALNUM(c) (LOWER_ALNUM(c) || UPPER(c))
#define WORD(c) (ALNUM(c) || (c) == '_')
#define LOWER_HEX(c) (DIGIT(c) || ((c) >= 'a' && (c) <= 'f'))

typedef struct span {
    const char *p;
    size_t n;
} span;

/* Writes 'invalid image reference "<s>": <why>' into err, or without the
 * quoted reference when s is NULL (it is only quoted once it is known to be
 * printable ASCII, so the message is safe to put anywhere).  Returns -1. */
__attribute__((format(printf, 5, 6))) static int set_error(char *err, size_t errlen, const char *s,
                                                           size_t len, const char *fmt, ...)
{
    if (errlen == 0)
        return -1;
    int n;
    if (s != NULL)
        n = snprintf(err, errlen,
                     "invalid image reference \"%.*s%s\": ", len > 100 ? 100 : (int)len, s,
                     len > 100 ? "..." : "");
    else
        n = snprintf(err, errlen, "invalid image reference: ");
    if (n >= 0 && (size_t)n < errlen) {
        va_list ap;
        va_start(ap, fmt);
        errmsg_vset(err + n, errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int span_eq(span s, const char *lit)
{
    return s.n == strlen(lit) && memcmp(s.p, lit, s.n) == 0;
}

static int domain_label_ok(span l)
{
    if (l.n == 0 || !ALNUM(l.p[0]) || !ALNUM(l.p[l.n - 1]))
        return 0;
    for (size_t i = 0; i < l.n; i++)
        if (!ALNUM(l.p[i]) && l.p[i] != '-')
            return 0;
    return 1;
}

/* host [":" port] */
static int domain_ok(span d)
{
    size_t i = 0;
    if (d.n > 0 && d.p[0] == '[') {
        i = 1;
        while (i < d.n && (DIGIT(d.p[i]) || (d.p[i] >= 'a' && d.p[i] <= 'f') ||
                           (d.p[i] >= 'A' && d.p[i] <= 'F') || d.p[i] == ':'))
            i++;
        if (i == 1 || i >= d.n || d.p[i] != ']')
            return 0;
        i++;
    } else {
        size_t start = 0;
        for (;;) {
            while (i < d.n && d.p[i] != '.' && d.p[i] != ':')
                i++;
            if (!domain_label_ok((span){d.p + start, i - start}))
                return 0;
            if (i < d.n && d.p[i] == '.') {
                start = ++i;
                continue;
            }
            break;
        }
    }
    if (i == d.n)
        return 1;
    if (d.p[i] != ':' || i + 1 == d.n)
        return 0;
    for (i++; i < d.n; i++)
        if (!DIGIT(d.p[i]))
            return 0;
    return 1;
}

/* One path component: [a-z0-9]+ with single '.', '_', "__" or runs of '-'
 * between alphanumerics. */
static int component_ok(span c)
{
    size_t i = 0;
    if (c.n == 0 || !LOWER_ALNUM(c.p[0]) || !LOWER_ALNUM(c.p[c.n - 1]))
        return 0;
    while (i < c.n) {
        if (LOWER_ALNUM(c.p[i])) {
            i++;
            continue;
        }
        size_t j = i;
        if (c.p[i] == '.') {
            j = i + 1;
        } else if (c.p[i] == '_') {
            j = (i + 1 < c.n && c.p[i + 1] == '_') ? i + 2 : i + 1;
        } else if (c.p[i] == '-') {
            while (j < c.n && c.p[j] == '-')
                j++;
        } else {
            return 0;
        }
        if (j >= c.n || !LOWER_ALNUM(c.p[j]))
            return 0;
        i = j;
    }
    return 1;
}

static const char *path_problem(span path)
{
    for (size_t i = 0; i < path.n; i++)
        if (UPPER(path.p[i]))
            return "repository name must be lowercase";
    size_t start = 0;
    for (size_t i = 0; i <= path.n; i++) {
        if (i < path.n && path.p[i] != '/')
            continue;
        if (!component_ok((span){path.p + start, i - start}))
            return i == start ? "repository path has an empty component"
                              : "repository path components are lowercase letters and digits "
                                "joined by '.', '_', '__' or dashes";
        start = i + 1;
    }
    return NULL;
}

static const char *tag_problem(span t)
{
    if (t.n == 0)
        return "empty tag after ':'";
    if (t.n > IMAGEREF_TAG_MAX)
        return "tag is longer than 128 characters";
    if (!WORD(t.p[0]))
        return "tag must start with a letter, digit or '_'";
    for (size_t i = 1; i < t.n; i++)
        if (!WORD(t.p[i]) && t.p[i] != '.' && t.p[i] != '-')
            return "tag may only contain letters, digits, '_', '.' and '-'";
    return NULL;
}

static const char *digest_problem(span d)
{
    static const struct {
        const char *alg;
        size_t hex;
        const char *wrong_length;
    } known[] = {
        {"sha256", 64, "sha256 digest must have 64 hex digits"},
        {"sha384", 96, "sha384 digest must have 96 hex digits"},
        {"sha512", 128, "sha512 digest must have 128 hex digits"},
    };
    const char *colon = memchr(d.p, ':', d.n);
    if (d.n == 0 || colon == NULL)
        return "digest must be <algorithm>:<hex>";
    span alg = {d.p, (size_t)(colon - d.p)}, hex = {colon + 1, d.n - alg.n - 1};
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
        if (!span_eq(alg, known[i].alg))
            continue;
        if (hex.n != known[i].hex)
            return known[i].wrong_length;
        for (size_t j = 0; j < hex.n; j++)
            if (!LOWER_HEX(hex.p[j]))
                return "digest must be lowercase hexadecimal";
        return NULL;
    }
    return "unsupported digest algorithm (sha256, sha384 or sha512)";
}

/* The first path component decides whether it names a registry
 * (normalize.go, splitDockerDomain). */
static int names_registry(span first)
{
    if (span_eq(first, "localhost"))
        return 1;
    for (size_t i = 0; i < first.n; i++)
        if (first.p[i] == '.' || first.p[i] == ':' || UPPER(first.p[i]))
            return 1;
    return 0;
}

int imageref_parse(imageref *r, const char *s, size_t len, arena *a, char *err, size_t errlen)
{
    memset(r, 0, sizeof(*r));
    if (len == 0)
        return set_error(err, errlen, NULL, 0, "empty");
    if (len > IMAGEREF_MAX_LEN)
        return set_error(err, errlen, NULL, 0, "longer than %d bytes", IMAGEREF_MAX_LEN);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
            return set_error(err, errlen, NULL, 0, "whitespace at byte %zu", i);
        if (c < 0x21 || c > 0x7e)
            return set_error(err, errlen, NULL, 0, "control or non-ASCII byte 0x%02x at byte %zu",
                             c, i);
    }
    if (len == 64) {
        size_t i = 0;
        while (i < len && LOWER_HEX(s[i]))
            i++;
        if (i == len)
            return set_error(err, errlen, s, len,
                             "a 64-digit hexadecimal string is an image ID, not a reference");
    }

    span rest = {s, len}, domain = {IMAGEREF_DEFAULT_DOMAIN, strlen(IMAGEREF_DEFAULT_DOMAIN)};
    const char *slash = memchr(s, '/', len);
    if (slash != NULL && names_registry((span){s, (size_t)(slash - s)})) {
        domain = (span){s, (size_t)(slash - s)};
        rest = (span){slash + 1, len - domain.n - 1};
        if (!domain_ok(domain))
            return set_error(err, errlen, s, len, "malformed registry \"%.*s\"", (int)domain.n,
                             domain.p);
        if (span_eq(domain, "index.docker.io"))
            domain = (span){IMAGEREF_DEFAULT_DOMAIN, strlen(IMAGEREF_DEFAULT_DOMAIN)};
    }

    span path = rest, tag = {NULL, 0}, digest = {NULL, 0};
    const char *at = memchr(rest.p, '@', rest.n);
    if (at != NULL) {
        digest = (span){at + 1, (size_t)(rest.p + rest.n - at - 1)};
        path.n = (size_t)(at - rest.p);
    }
    /* Path components hold no ':', so the first one starts the tag. */
    const char *colon = memchr(path.p, ':', path.n);
    if (colon != NULL) {
        tag = (span){colon + 1, (size_t)(path.p + path.n - colon - 1)};
        path.n = (size_t)(colon - path.p);
    }

    const char *why = path.n == 0 ? "no repository name" : path_problem(path);
    if (why == NULL && tag.p != NULL)
        why = tag_problem(tag);
    if (why == NULL && digest.p != NULL)
        why = digest_problem(digest);
    if (why != NULL)
        return set_error(err, errlen, s, len, "%s", why);

    int library = span_eq(domain, IMAGEREF_DEFAULT_DOMAIN) && memchr(path.p, '/', path.n) == NULL;
    size_t name_len = domain.n + 1 + (library ? 8 : 0) + path.n;
    if (name_len > IMAGEREF_NAME_MAX)
        return set_error(err, errlen, s, len, "repository name is longer than %d characters",
                         IMAGEREF_NAME_MAX);

    r->domain = arena_strndup(a, domain.p, domain.n);
    r->path = arena_printf(a, "%s%.*s", library ? "library/" : "", (int)path.n, path.p);
    r->tag = tag.p != NULL ? arena_strndup(a, tag.p, tag.n) : NULL;
    r->digest = digest.p != NULL ? arena_strndup(a, digest.p, digest.n) : NULL;
    if (r->domain == NULL || r->path == NULL || (tag.p != NULL && r->tag == NULL) ||
        (digest.p != NULL && r->digest == NULL)) {
        memset(r, 0, sizeof(*r));
        if (errlen > 0)
            snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

char *imageref_format(const imageref *r, arena *a)
{
    if (r->digest != NULL)
        return arena_printf(a, "%s/%s@%s", r->domain, r->path, r->digest);
    return arena_printf(a, "%s/%s:%s", r->domain, r->path,
                        r->tag != NULL ? r->tag : IMAGEREF_DEFAULT_TAG);
}

char *imageref_normalize(const char *s, size_t len, arena *a, char *err, size_t errlen)
{
    imageref r;
    if (imageref_parse(&r, s, len, a, err, errlen) != 0)
        return NULL;
    char *out = imageref_format(&r, a);
    if (out == NULL && errlen > 0)
        snprintf(err, errlen, "out of memory");
    return out;
}

const char *imageref_pull_policy(const imageref *r)
{
    if (r->digest == NULL && (r->tag == NULL || strcmp(r->tag, IMAGEREF_DEFAULT_TAG) == 0))
        return "Always";
    return "IfNotPresent";
}

int imageref_same(const char *x, const char *y)
{
    if (x == NULL || y == NULL)
        return 0;
    arena a;
    arena_init(&a);
    char err[16];
    const char *nx = imageref_normalize(x, strlen(x), &a, err, sizeof(err));
    const char *ny = nx != NULL ? imageref_normalize(y, strlen(y), &a, err, sizeof(err)) : NULL;
    int same = nx != NULL && ny != NULL && strcmp(nx, ny) == 0;
    arena_free(&a);
    return same;
}
