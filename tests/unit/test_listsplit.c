/*
 * test_listsplit.c - a list body cut into its items as it streams: the same
 * items (byte for byte) and the same resourceVersion/continue whether the
 * body comes whole, a byte at a time or in random pieces (fixed seeds);
 * items whose strings hold braces, brackets and escaped quotes, items with
 * their own "items" and "metadata", empty items; the bound on an item's
 * size; a body cut short; bodies that are not JSON; a caller that stops.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "listsplit.h"

/* The items of the list below, exactly as they appear in the body. */
static const char *const items[] = {
    /* a pod, compact, as the apiserver sends it; its own metadata has a
     * resourceVersion, and it has keys named "items" and "continue" */
    "{\"metadata\":{\"name\":\"edge-agent-x7k2p\",\"namespace\":\"edge\",\"uid\":\"9f3c\","
    "\"resourceVersion\":\"999\",\"continue\":\"not-the-list's\",\"labels\":"
    "{\"controller-revision-hash\":\"5c4b9a8d7\"}},\"items\":[{\"a\":[1,2,{\"b\":null}]}],"
    "\"spec\":{\"nodeName\":\"edge-node-1\"},\"status\":{\"conditions\":[{\"type\":\"Ready\","
    "\"status\":\"True\"}]}}",
    /* strings that would fool a brace counter */
    "{\"metadata\":{\"name\":\"tricky\",\"annotations\":{\"x\":\"}}]]{{[[\",\"y\":\"\\\"}\\\"\","
    "\"z\":\"\\\\\",\"w\":\"\\\\\\\"{\",\"u\":\"\\u007d\\u005d\"}},\"n\":[-1.5e3,0,true,false,null]}",
    /* empty */
    "{}",
    /* pretty-printed, with whitespace inside kept as is */
    "{\n      \"metadata\": {\n        \"name\": \"pretty\"\n      },\n      \"spec\": {}\n    }",
    /* unicode in a string, raw */
    "{\"metadata\":{\"name\":\"\xe8\x8a\x82\xe7\x82\xb9\",\"labels\":{}},\"deep\":[[[[{\"k\":[{}]}]]]]}",
};
#define N_ITEMS (sizeof(items) / sizeof(items[0]))

#define LIST_RV "48213"
#define LIST_CONTINUE "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NDgyMTMsInN0YXJ0IjoiZWRnZS9hZ2VudCJ9"

/* What the callback saw. */
typedef struct seen {
    char *item[64];
    size_t len[64];
    size_t n;
    size_t stop_at; /* return 0 on this item (1-based); 0: never */
} seen;

static int on_item(void *data, const char *json, size_t len)
{
    seen *s = data;
    assert_true(s->n < 64);
    s->item[s->n] = malloc(len + 1);
    assert_non_null(s->item[s->n]);
    memcpy(s->item[s->n], json, len);
    s->item[s->n][len] = '\0';
    s->len[s->n] = len;
    s->n++;
    return s->stop_at == 0 || s->n < s->stop_at;
}

static void seen_free(seen *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->item[i]);
    memset(s, 0, sizeof(*s));
}

/* A PodList with the items above; metadata before or after them. */
static char *list_body(int metadata_last, const char *sep)
{
    size_t cap = 8192;
    char *b = malloc(cap);
    assert_non_null(b);
    const char *meta = "\"metadata\":{\"resourceVersion\":\"" LIST_RV "\",\"continue\":\"" LIST_CONTINUE
                       "\",\"remainingItemCount\":1200}";
    size_t len = (size_t)snprintf(b, cap, "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",%s%s\"items\":[",
                                  metadata_last ? "" : meta, metadata_last ? "" : ",");
    for (size_t i = 0; i < N_ITEMS; i++)
        len += (size_t)snprintf(b + len, cap - len, "%s%s", i > 0 ? sep : "", items[i]);
    len += (size_t)snprintf(b + len, cap - len, "]%s%s}", metadata_last ? "," : "",
                            metadata_last ? meta : "");
    assert_true(len < cap);
    return b;
}

static uint64_t rng_state;

static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

/* Feeds body in pieces: size 0 = whole, 1 = byte by byte, else random
 * pieces of 1..size bytes.  Each piece is a fresh copy, freed right after,
 * so an item that points into an old piece shows up under ASan. */
static int feed(listsplit *ls, const char *body, size_t len, size_t size)
{
    size_t off = 0;
    while (off < len) {
        size_t n = size == 0 ? len : size == 1 ? 1 : 1 + (size_t)(rng() % size);
        if (n > len - off)
            n = len - off;
        char *piece = malloc(n);
        assert_non_null(piece);
        memcpy(piece, body + off, n);
        int rc = listsplit_feed(ls, piece, n);
        free(piece);
        if (rc != 0)
            return rc;
        off += n;
    }
    return 0;
}

static void check_items(const seen *s, const char *how)
{
    if (s->n != N_ITEMS)
        fail_msg("%s: %zu items, want %zu", how, s->n, N_ITEMS);
    for (size_t i = 0; i < N_ITEMS; i++)
        if (s->len[i] != strlen(items[i]) || memcmp(s->item[i], items[i], s->len[i]) != 0)
            fail_msg("%s: item %zu is\n%s\nwant\n%s", how, i, s->item[i], items[i]);
}

static void test_pieces(void **state)
{
    (void)state;
    static const char *const seps[] = {",", " ,\n    ", "\r\n,\t"};
    for (int metadata_last = 0; metadata_last < 2; metadata_last++) {
        for (size_t k = 0; k < sizeof(seps) / sizeof(seps[0]); k++) {
            char *body = list_body(metadata_last, seps[k]);
            size_t len = strlen(body);
            static const size_t sizes[] = {0, 1, 2, 3, 7, 16, 64, 300};
            for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
                for (uint64_t seed = 1; seed <= (sizes[z] > 1 ? 20u : 1u); seed++) {
                    rng_state = seed * 0x9e3779b97f4a7c15ull;
                    char how[96];
                    snprintf(how, sizeof(how), "metadata %s, sep %zu, pieces of %zu, seed %llu",
                             metadata_last ? "last" : "first", k, sizes[z],
                             (unsigned long long)seed);
                    seen s = {0};
                    listsplit ls;
                    assert_int_equal(listsplit_init(&ls, 4096, on_item, &s), 0);
                    if (feed(&ls, body, len, sizes[z]) != 0 || listsplit_finish(&ls) != 0)
                        fail_msg("%s: %s", how, ls.err);
                    check_items(&s, how);
                    assert_int_equal(ls.n_items, N_ITEMS);
                    /* the list's, not an item's */
                    assert_string_equal(ls.resource_version, LIST_RV);
                    assert_string_equal(listsplit_continue(&ls), LIST_CONTINUE);
                    listsplit_free(&ls);
                    seen_free(&s);
                }
            }
            free(body);
        }
    }
}

typedef struct shape_row {
    const char *name;
    const char *body;
    int ok;
    size_t n_items;
    const char *rv, *cont;
} shape_row;

static const shape_row shapes[] = {
    {"empty list", "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"7\"},\"items\":[]}", 1,
     0, "7", ""},
    {"null items", "{\"metadata\":{\"resourceVersion\":\"7\",\"continue\":\"\"},\"items\":null}", 1, 0,
     "7", ""},
    {"only empty items", "{\"items\":[{},{},{}],\"metadata\":{\"resourceVersion\":\"8\"}}", 1, 3, "8",
     ""},
    {"last page: empty continue", "{\"metadata\":{\"continue\":\"\",\"resourceVersion\":\"9\"},"
                                  "\"items\":[{\"a\":1}]}",
     1, 1, "9", ""},
    /* the Status the apiserver sends with an error code: no items; the
     * caller looks at the HTTP status first */
    {"a Status", "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
                 "\"reason\":\"Expired\",\"code\":410}",
     1, 0, "", ""},
    /* members other than objects in items are not items */
    {"scalars in items", "{\"items\":[1,\"x\",null,[{}],{\"a\":{}}]}", 1, 1, "", ""},
    {"whitespace around", " \n\t{\"items\":[{}]}\n ", 1, 1, "", ""},
    {"resourceVersion not a string", "{\"metadata\":{\"resourceVersion\":7},\"items\":[]}", 1, 0, "",
     ""},
    {"not JSON", "<html><body>502 Bad Gateway</body></html>", 0, 0, NULL, NULL},
    {"broken inside an item", "{\"items\":[{\"a\":}]}", 0, 0, NULL, NULL},
    {"unterminated string", "{\"items\":[{\"a\":\"b}]}", 0, 0, NULL, NULL},
    {"trailing garbage", "{\"items\":[]} {}", 0, 0, NULL, NULL},
    {"two lists", "{\"items\":[]}{\"items\":[]}", 0, 0, NULL, NULL},
    {"empty body", "", 0, 0, NULL, NULL},
    /* built below: a continue token of 4096 bytes and one of the bound are
     * kept whole (the old fixed buffer cut at 4095), one byte more is an error */
    {"continue of 4096 bytes", NULL, 1, 0, "", ""},
    {"continue of the bound", NULL, 1, 0, "", ""},
    {"continue over the bound", NULL, 0, 0, NULL, NULL},
};

/* {"metadata":{"continue":"AAA..."},"items":[]} with n A's (malloc'd) */
static char *continue_body(size_t n)
{
    char *b = malloc(n + 64);
    assert_non_null(b);
    int len = snprintf(b, 64, "{\"metadata\":{\"continue\":\"");
    memset(b + len, 'A', n);
    snprintf(b + (size_t)len + n, 64, "\"},\"items\":[]}");
    return b;
}

static void test_shapes(void **state)
{
    (void)state;
    static const size_t cont_len[] = {4096, LISTSPLIT_MAX_CONTINUE, LISTSPLIT_MAX_CONTINUE + 1};
    char *built[3];
    char *want_cont[3];
    for (size_t k = 0; k < 3; k++) {
        built[k] = continue_body(cont_len[k]);
        want_cont[k] = calloc(1, cont_len[k] + 1);
        assert_non_null(want_cont[k]);
        memset(want_cont[k], 'A', cont_len[k]);
    }
    size_t n_built = 0;
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
        shape_row row = shapes[i];
        const shape_row *r = &row;
        if (r->body == NULL) {
            row.body = built[n_built];
            if (row.cont != NULL)
                row.cont = want_cont[n_built];
            n_built++;
        }
        const char *body = r->body;
        for (size_t size = 0; size < 2; size++) {
            seen s = {0};
            listsplit ls;
            assert_int_equal(listsplit_init(&ls, 4096, on_item, &s), 0);
            int ok = feed(&ls, body, strlen(body), size) == 0 && listsplit_finish(&ls) == 0;
            if (ok != r->ok)
                fail_msg("%s (pieces of %zu): %s (%s)", r->name, size, ok ? "accepted" : "refused",
                         ls.err);
            if (ok) {
                assert_int_equal(s.n, r->n_items);
                assert_string_equal(ls.resource_version, r->rv);
                assert_string_equal(listsplit_continue(&ls), r->cont);
            } else {
                assert_true(ls.err[0] != '\0');
                if (r->body == built[2] && strstr(ls.err, "metadata.continue longer than 65536") == NULL)
                    fail_msg("%s: error \"%s\"", r->name, ls.err);
            }
            listsplit_free(&ls);
            seen_free(&s);
        }
    }
    for (size_t k = 0; k < 3; k++) {
        free(built[k]);
        free(want_cont[k]);
    }
}

static void test_max_item(void **state)
{
    (void)state;
    char *body = list_body(0, ",");
    size_t len = strlen(body), longest = 0;
    for (size_t i = 0; i < N_ITEMS; i++)
        if (strlen(items[i]) > longest)
            longest = strlen(items[i]);
    static const size_t sizes[] = {0, 1, 5, 100};
    for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
        rng_state = 99;
        /* exactly the longest item fits */
        seen s = {0};
        listsplit ls;
        assert_int_equal(listsplit_init(&ls, longest, on_item, &s), 0);
        if (feed(&ls, body, len, sizes[z]) != 0 || listsplit_finish(&ls) != 0)
            fail_msg("bound %zu, pieces of %zu: %s", longest, sizes[z], ls.err);
        check_items(&s, "at the bound");
        listsplit_free(&ls);
        seen_free(&s);

        /* one byte less does not, and nothing after it is delivered */
        rng_state = 99;
        assert_int_equal(listsplit_init(&ls, longest - 1, on_item, &s), 0);
        int rc = feed(&ls, body, len, sizes[z]);
        assert_int_equal(rc, -1);
        assert_non_null(strstr(ls.err, "larger than the bound"));
        assert_int_equal(listsplit_finish(&ls), -1);
        /* every item before the long one came through */
        for (size_t i = 0; i < s.n; i++)
            assert_true(strlen(items[i]) < longest);
        assert_true(s.n < N_ITEMS);
        /* and a failed splitter stays failed */
        assert_int_equal(listsplit_feed(&ls, "{}", 2), -1);
        listsplit_free(&ls);
        seen_free(&s);
    }
    free(body);
}

static void test_truncated(void **state)
{
    (void)state;
    char *body = list_body(0, ",");
    size_t len = strlen(body);
    /* every proper prefix is an incomplete list */
    for (size_t cut = 0; cut < len; cut++) {
        seen s = {0};
        listsplit ls;
        assert_int_equal(listsplit_init(&ls, 4096, on_item, &s), 0);
        int rc = feed(&ls, body, cut, cut % 3 == 0 ? 0 : 1);
        if (rc == 0 && listsplit_finish(&ls) == 0)
            fail_msg("cut at %zu of %zu: accepted", cut, len);
        assert_true(ls.err[0] != '\0');
        /* items delivered so far are whole ones */
        for (size_t i = 0; i < s.n; i++)
            assert_string_equal(s.item[i], items[i]);
        listsplit_free(&ls);
        seen_free(&s);
    }
    free(body);
}

static void test_stop_and_depth(void **state)
{
    (void)state;
    char *body = list_body(0, ",");
    /* the caller stops at the second item */
    seen s = {.stop_at = 2};
    listsplit ls;
    assert_int_equal(listsplit_init(&ls, 4096, on_item, &s), 0);
    assert_int_equal(feed(&ls, body, strlen(body), 0), -1);
    assert_int_equal(s.n, 2);
    assert_non_null(strstr(ls.err, "stopped"));
    listsplit_free(&ls);
    seen_free(&s);
    free(body);

    /* nesting: root (1) + items (2) + 62 levels inside an item is 64 */
    for (int extra = 0; extra < 2; extra++) {
        char deep[512];
        size_t n = (size_t)snprintf(deep, sizeof(deep), "{\"items\":[");
        int levels = 62 + extra;
        for (int i = 0; i < levels; i++)
            deep[n++] = '[';
        for (int i = 0; i < levels; i++)
            deep[n++] = ']';
        n += (size_t)snprintf(deep + n, sizeof(deep) - n, "]}");
        s = (seen){0};
        assert_int_equal(listsplit_init(&ls, 4096, on_item, &s), 0);
        int ok = listsplit_feed(&ls, deep, n) == 0 && listsplit_finish(&ls) == 0;
        assert_int_equal(ok, extra == 0);
        if (!ok)
            assert_non_null(strstr(ls.err, "deep"));
        listsplit_free(&ls);
        seen_free(&s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pieces),
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_max_item),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_stop_and_depth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
