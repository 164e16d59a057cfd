/*
 * sv.h - string views: a pointer and a length into memory someone else owns
 * (usually the request body, or a cached object's strings).  ptr == NULL
 * means "absent", which sv_present() tells from the empty string:
 * Kubernetes treats a missing reason and "" alike, but a missing condition
 * and an empty one differently.
 */
#ifndef OTA_SV_H
#define OTA_SV_H

#include <stddef.h>
#include <string.h>
#include <strings.h>

typedef struct sv {
    const char *ptr;
    size_t len;
} sv;

#define SV_NULL ((sv){NULL, 0})

static inline sv sv_from(const char *s)
{
    return (sv){s, s == NULL ? 0 : strlen(s)};
}

static inline int sv_present(sv s)
{
    return s.ptr != NULL;
}

/* Absent or "". */
static inline int sv_empty(sv s)
{
    return s.len == 0;
}

static inline int sv_eq(sv a, const char *lit)
{
    size_t n = strlen(lit);
    return a.ptr != NULL && a.len == n && memcmp(a.ptr, lit, n) == 0;
}

static inline int sv_eq_case(sv a, const char *lit)
{
    size_t n = strlen(lit);
    return a.ptr != NULL && a.len == n && strncasecmp(a.ptr, lit, n) == 0;
}

/* Equal content, where absent equals "": Kubernetes' Go types omit empty
 * strings, so a field written "" comes back absent, and the two never mean
 * different things in a condition.  The one string equality of the project;
 * sv_present() tells absent from "" where that matters. */
static inline int sv_same(sv a, sv b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

static inline int sv_starts_with(sv a, const char *lit)
{
    size_t n = strlen(lit);
    return a.ptr != NULL && a.len >= n && memcmp(a.ptr, lit, n) == 0;
}

/* Two lists of views equal element by element (sv_same). */
static inline int sv_list_same(const sv *x, size_t nx, const sv *y, size_t ny)
{
    if (nx != ny)
        return 0;
    for (size_t i = 0; i < nx; i++)
        if (!sv_same(x[i], y[i]))
            return 0;
    return 1;
}

/* qsort's comparator of svs: bytes, then length (the shorter first). */
static inline int sv_order(const void *x, const void *y)
{
    const sv *a = x, *b = y;
    size_t n = a->len < b->len ? a->len : b->len;
    int c = n > 0 ? memcmp(a->ptr, b->ptr, n) : 0;
    return c != 0 ? c : (a->len > b->len) - (a->len < b->len);
}

/* For printf("%.*s", SV_ARG(s)). */
#define SV_ARG(s) (int)(s).len, ((s).ptr != NULL ? (s).ptr : "")

#endif
