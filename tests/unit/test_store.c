/*
 * test_store.c - the generic hash map the informers' caches and the
 * controller's maps are made of, with a toy object of its own: put/get/
 * replace/delete/take/has, NULL values (a store used as a set), growth past
 * thousands of keys, deletion inside probe runs (backward shift, including
 * runs that wrap around the end of the table) checked against a plain
 * reference with a fixed seed, iteration that visits every object once, an
 * object's own key borrowed rather than copied, and every object freed
 * once with the store's free function; removal by a predicate of every
 * subset of two interleaved runs.  Then the informers' real pairing: kobj
 * under its uid.
 */
#include "kobj_fixture.h"

#include "store.h"

/* The toy object: its own key (which a store may borrow) and a tag that
 * says which put it came from. */
typedef struct item {
    char key[48];
    char tag[48];
} item;

static int items_live; /* made and not freed */

static item *mk_keyed(const char *key, const char *tag)
{
    item *o = calloc(1, sizeof(*o));
    assert_non_null(o);
    snprintf(o->key, sizeof(o->key), "%s", key);
    snprintf(o->tag, sizeof(o->tag), "%s", tag);
    items_live++;
    return o;
}

/* A value that says which key it was stored under. */
static item *mk(const char *tag)
{
    return mk_keyed("", tag);
}

static void item_free(void *o)
{
    items_live--;
    free(o);
}

static const char *item_key(const void *o)
{
    return ((const item *)o)->key;
}

static void assert_tag(const store *s, const char *key, const char *tag)
{
    item *o = store_get(s, key);
    if (o == NULL)
        fail_msg("%s: not found", key);
    if (strcmp(o->tag, tag) != 0)
        fail_msg("%s: holds %s, want %s", key, o->tag, tag);
}

static void test_basics(void **state)
{
    (void)state;
    store s;
    store_init(&s, item_free, item_key);
    /* an empty store answers without a table */
    assert_null(store_get(&s, "a"));
    assert_int_equal(store_has(&s, "a"), 0);
    assert_int_equal(store_delete(&s, "a"), 0);
    assert_null(store_take(&s, "a"));
    size_t it = 0;
    assert_null(store_next(&s, &it));

    assert_int_equal(store_put(&s, "edge/a", mk("a1")), 0);
    assert_int_equal(store_put(&s, "edge/b", mk("b1")), 0);
    assert_int_equal(s.len, 2);
    assert_tag(&s, "edge/a", "a1");
    assert_tag(&s, "edge/b", "b1");
    assert_int_equal(store_has(&s, "edge/a"), 1);
    assert_int_equal(store_has(&s, "edge/c"), 0);
    assert_null(store_get(&s, "edge/"));
    assert_null(store_get(&s, "edge/aa"));
    assert_null(store_get(&s, ""));

    /* replace: same key, new object, the old one freed (ASan's leak check
     * would see it otherwise) */
    assert_int_equal(store_put(&s, "edge/a", mk("a2")), 0);
    assert_int_equal(s.len, 2);
    assert_tag(&s, "edge/a", "a2");

    /* keys are copied */
    char key[16];
    strcpy(key, "edge/k");
    assert_int_equal(store_put(&s, key, mk("k")), 0);
    strcpy(key, "edge/x");
    assert_tag(&s, "edge/k", "k");
    assert_null(store_get(&s, "edge/x"));

    /* take hands the object over */
    item *taken = store_take(&s, "edge/b");
    assert_non_null(taken);
    assert_string_equal(taken->tag, "b1");
    item_free(taken);
    assert_null(store_take(&s, "edge/b"));
    assert_int_equal(store_has(&s, "edge/b"), 0);
    assert_int_equal(s.len, 2);

    assert_int_equal(store_delete(&s, "edge/a"), 1);
    assert_int_equal(store_delete(&s, "edge/a"), 0);
    assert_int_equal(s.len, 1);
    assert_null(store_get(&s, "edge/a"));

    /* the empty key is a key */
    assert_int_equal(store_put(&s, "", mk("empty")), 0);
    assert_tag(&s, "", "empty");

    store_free(&s);
    assert_int_equal(s.len, 0);
    assert_int_equal(s.cap, 0);
    /* a freed store is an empty one, ready for use */
    assert_null(store_get(&s, ""));
    assert_int_equal(store_put(&s, "again", mk("again")), 0);
    assert_tag(&s, "again", "again");
    store_free(&s);
    assert_int_equal(items_live, 0);
}

static void test_set(void **state)
{
    (void)state;
    store s;
    store_init(&s, item_free, item_key);
    assert_int_equal(store_put(&s, "event:u1:PrePullQueued:x", NULL), 0);
    assert_int_equal(store_put(&s, "event:u2:PrePullQueued:x", NULL), 0);
    assert_int_equal(s.len, 2);
    assert_int_equal(store_has(&s, "event:u1:PrePullQueued:x"), 1);
    assert_null(store_get(&s, "event:u1:PrePullQueued:x"));
    assert_int_equal(store_has(&s, "event:u3:PrePullQueued:x"), 0);
    /* putting a member again changes nothing */
    assert_int_equal(store_put(&s, "event:u1:PrePullQueued:x", NULL), 0);
    assert_int_equal(s.len, 2);
    /* deleting a member says it was there, as the header promises */
    assert_int_equal(store_delete(&s, "event:u1:PrePullQueued:x"), 1);
    assert_int_equal(store_has(&s, "event:u1:PrePullQueued:x"), 0);
    assert_int_equal(store_delete(&s, "event:u1:PrePullQueued:x"), 0);
    assert_int_equal(s.len, 1);
    /* take removes a member too (its value, NULL, is all it can return) */
    assert_null(store_take(&s, "event:u2:PrePullQueued:x"));
    assert_int_equal(store_has(&s, "event:u2:PrePullQueued:x"), 0);
    assert_int_equal(s.len, 0);
    /* a value replacing NULL, and NULL replacing a value */
    assert_int_equal(store_put(&s, "k", NULL), 0);
    assert_int_equal(store_put(&s, "k", mk("v")), 0);
    assert_tag(&s, "k", "v");
    assert_int_equal(store_put(&s, "k", NULL), 0);
    assert_int_equal(store_has(&s, "k"), 1);
    assert_null(store_get(&s, "k"));
    store_free(&s);
    assert_int_equal(items_live, 0);
}

static void test_growth(void **state)
{
    (void)state;
    enum { N = 5000 };
    store s;
    store_init(&s, item_free, item_key);
    char key[64];
    for (int i = 0; i < N; i++) {
        snprintf(key, sizeof(key), "kube-system/pod-%d", i);
        assert_int_equal(store_put(&s, key, mk(key)), 0);
        /* the load bound that keeps probe runs short and one slot empty */
        assert_true(s.len * 4 <= s.cap * 3);
        assert_int_equal(s.cap & (s.cap - 1), 0);
    }
    assert_int_equal(s.len, N);
    for (int i = 0; i < N; i++) {
        snprintf(key, sizeof(key), "kube-system/pod-%d", i);
        assert_tag(&s, key, key);
    }
    snprintf(key, sizeof(key), "kube-system/pod-%d", N);
    assert_int_equal(store_has(&s, key), 0);
    store_free(&s);
    assert_int_equal(items_live, 0);
}

/* The store's hash today (FNV-1a), to build keys that collide on purpose.
 * Should store.c change its hash, these become ordinary keys and the
 * checks below still hold; they would only test less. */
static uint64_t fnv1a(const char *k)
{
    uint64_t h = 1469598103934665603ull;
    for (; *k; k++) {
        h ^= (unsigned char)*k;
        h *= 1099511628211ull;
    }
    return h;
}

/* n keys "c<i>" whose home slot in a 16-slot table is home. */
static void colliding(char keys[][16], size_t n, size_t home)
{
    size_t found = 0;
    for (unsigned i = 0; found < n; i++) {
        snprintf(keys[found], 16, "c%u", i);
        if ((fnv1a(keys[found]) & 15) == home)
            found++;
    }
}

/* Deleting from a probe run that wraps around the end of the table: the
 * members after the hole must move back (or stay, when their home slot is
 * after the hole) so that every one is still found. */
static void test_collisions(void **state)
{
    (void)state;
    for (int b_first = 0; b_first < 2; b_first++) {
        for (size_t home = 12; home < 16; home++) {
            for (size_t victim = 0; victim < 5; victim++) {
                store s;
                store_init(&s, item_free, item_key);
                char a[5][16], b[3][16];
                colliding(a, 5, home);           /* run from home, past slot 15 */
                colliding(b, 3, (home + 2) & 15); /* interleaved, home inside the run */
                /* b first: b sits at its home, a's run goes around it, and a
                 * hole left at the end of the table must not pull b back */
                for (size_t i = 0; b_first && i < 3; i++)
                    assert_int_equal(store_put(&s, b[i], mk(b[i])), 0);
                for (size_t i = 0; i < 5; i++)
                    assert_int_equal(store_put(&s, a[i], mk(a[i])), 0);
                for (size_t i = 0; !b_first && i < 3; i++)
                    assert_int_equal(store_put(&s, b[i], mk(b[i])), 0);
                assert_int_equal(s.cap, 16);
                assert_int_equal(store_delete(&s, a[victim]), 1);
                for (size_t i = 0; i < 5; i++) {
                    if (i == victim)
                        assert_int_equal(store_has(&s, a[i]), 0);
                    else
                        assert_tag(&s, a[i], a[i]);
                }
                for (size_t i = 0; i < 3; i++)
                    assert_tag(&s, b[i], b[i]);
                /* and then the interleaved ones, one by one */
                for (size_t i = 0; i < 3; i++) {
                    assert_int_equal(store_delete(&s, b[i]), 1);
                    for (size_t j = i + 1; j < 3; j++)
                        assert_tag(&s, b[j], b[j]);
                    for (size_t j = 0; j < 5; j++)
                        if (j != victim)
                            assert_tag(&s, a[j], a[j]);
                }
                assert_int_equal(s.len, 4);
                store_free(&s);
            }
        }
    }
}

static uint64_t rng_state;

static uint64_t rng(void)
{
    /* xorshift64*, seeded per run: the same sequence every time */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

/* Random puts, replaces, deletes and takes over a key space of n keys,
 * against a reference that is a plain array; after each step the touched
 * key, and every few steps every key, is checked. */
static void random_run(size_t n, size_t steps, uint64_t seed)
{
    rng_state = seed;
    store s;
    store_init(&s, item_free, item_key);
    int *present = calloc(n, sizeof(int));
    unsigned *version = calloc(n, sizeof(unsigned));
    assert_non_null(present);
    assert_non_null(version);
    size_t len = 0;
    char key[32], tag[48];
    for (size_t step = 0; step < steps; step++) {
        size_t k = (size_t)(rng() % n);
        snprintf(key, sizeof(key), "ns/obj-%zu", k);
        unsigned op = (unsigned)(rng() % 10);
        if (op < 5) {
            version[k]++;
            snprintf(tag, sizeof(tag), "%s#%u", key, version[k]);
            assert_int_equal(store_put(&s, key, mk(tag)), 0);
            len += !present[k];
            present[k] = 1;
        } else if (op < 8) {
            assert_int_equal(store_delete(&s, key), present[k]);
            len -= (size_t)present[k];
            present[k] = 0;
        } else {
            item *o = store_take(&s, key);
            assert_int_equal(o != NULL, present[k]);
            if (o != NULL)
                item_free(o);
            len -= (size_t)present[k];
            present[k] = 0;
        }
        assert_int_equal(s.len, len);
        if (step % 97 == 0 || step == steps - 1) {
            for (size_t i = 0; i < n; i++) {
                snprintf(key, sizeof(key), "ns/obj-%zu", i);
                if (!present[i]) {
                    if (store_has(&s, key))
                        fail_msg("n=%zu step %zu: %s found after its removal", n, step, key);
                    continue;
                }
                snprintf(tag, sizeof(tag), "%s#%u", key, version[i]);
                assert_tag(&s, key, tag);
            }
        }
    }
    store_free(&s);
    assert_int_equal(items_live, 0);
    free(present);
    free(version);
}

static void test_random_against_reference(void **state)
{
    (void)state;
    /* small key spaces keep a 16- or 32-slot table near its load bound,
     * where runs are long and wrap; the large one goes through growth */
    random_run(11, 4000, 0x9e3779b97f4a7c15ull);
    random_run(23, 4000, 42);
    random_run(200, 20000, 7);
    random_run(4000, 40000, 2026);
}

static void test_iteration(void **state)
{
    (void)state;
    enum { N = 3000 };
    store s;
    store_init(&s, item_free, item_key);
    char key[32];
    for (int i = 0; i < N; i++) {
        snprintf(key, sizeof(key), "%d", i);
        assert_int_equal(store_put(&s, key, mk(key)), 0);
    }
    /* remove every third one, so the walk crosses holes */
    for (int i = 0; i < N; i += 3) {
        snprintf(key, sizeof(key), "%d", i);
        assert_int_equal(store_delete(&s, key), 1);
    }
    int *seen = calloc(N, sizeof(int));
    assert_non_null(seen);
    size_t visits = 0;
    const item *o;
    for (size_t it = 0; (o = store_next(&s, &it)) != NULL;) {
        int i = atoi(o->tag);
        assert_true(i >= 0 && i < N);
        assert_int_not_equal(i % 3, 0);
        seen[i]++;
        visits++;
    }
    assert_int_equal(visits, s.len);
    for (int i = 0; i < N; i++)
        assert_int_equal(seen[i], i % 3 != 0);
    /* a set's members hold no object: not visited */
    store set;
    store_init(&set, NULL, NULL);
    assert_int_equal(store_put(&set, "a", NULL), 0);
    assert_int_equal(store_put(&set, "b", NULL), 0);
    size_t it = 0;
    assert_null(store_next(&set, &it));
    /* nor between objects */
    assert_int_equal(store_put(&s, "no object", NULL), 0);
    visits = 0;
    for (it = 0; store_next(&s, &it) != NULL;)
        visits++;
    assert_int_equal(visits, s.len - 1);
    store_free(&set);
    free(seen);
    store_free(&s);
    assert_int_equal(items_live, 0);
}

static const store_slot *slot_of(const store *s, const char *key)
{
    for (size_t i = 0; i < s->cap; i++)
        if (s->slots[i].key != NULL && strcmp(s->slots[i].key, key) == 0)
            return &s->slots[i];
    fail_msg("%s: no slot", key);
    return NULL;
}

/* A key that is the object's own key is borrowed, not copied; every way a
 * slot changes hands (replace borrowed by borrowed, by copied and back,
 * take, delete, growth, store_free) keeps the key alive and frees each
 * copy once (ASan's use-after-free and leak checks see the rest). */
static void test_uid_keys(void **state)
{
    (void)state;
    store s;
    store_init(&s, item_free, item_key);
    item *a = mk_keyed("uid-1", "a");
    assert_int_equal(store_put(&s, a->key, a), 0);
    assert_ptr_equal(slot_of(&s, "uid-1")->key, a->key);
    /* borrowed -> borrowed: the key follows the new object */
    item *b = mk_keyed("uid-1", "b");
    assert_int_equal(store_put(&s, b->key, b), 0);
    assert_ptr_equal(slot_of(&s, "uid-1")->key, b->key);
    assert_tag(&s, "uid-1", "b");
    /* borrowed -> copied: a key that is not the object's own string */
    assert_int_equal(store_put(&s, "uid-1", mk_keyed("uid-1", "c")), 0);
    const store_slot *sl = slot_of(&s, "uid-1");
    assert_ptr_not_equal(sl->key, ((const item *)sl->obj)->key);
    assert_tag(&s, "uid-1", "c");
    /* copied -> borrowed: the copy is freed */
    item *d = mk_keyed("uid-1", "d");
    assert_int_equal(store_put(&s, d->key, d), 0);
    assert_ptr_equal(slot_of(&s, "uid-1")->key, d->key);
    assert_int_equal(s.len, 1);
    /* growth moves borrowed keys with their objects */
    char uid[32];
    for (int i = 0; i < 500; i++) {
        snprintf(uid, sizeof(uid), "uid-x%d", i);
        item *o = mk_keyed(uid, uid);
        assert_int_equal(store_put(&s, o->key, o), 0);
    }
    assert_int_equal(s.len, 501);
    assert_tag(&s, "uid-1", "d");
    assert_tag(&s, "uid-x499", "uid-x499");
    /* take hands over the object, whose uid the key was */
    item *taken = store_take(&s, "uid-x7");
    assert_non_null(taken);
    assert_string_equal(taken->key, "uid-x7");
    item_free(taken);
    assert_int_equal(store_delete(&s, "uid-x8"), 1);
    assert_int_equal(store_has(&s, "uid-x8"), 0);
    assert_int_equal(s.len, 499);
    store_free(&s);
    assert_int_equal(items_live, 0);
}

/* Pod i on node `node`, put under its uid as an informer puts it: the slot
 * borrows the kobj's own uid. */
static void put_pod(store *s, int i, const char *node)
{
    static const char fmt[] = "{\"metadata\":{\"namespace\":\"edge\",\"name\":\"p%d\","
                              "\"uid\":\"u-%d\"},\"spec\":{\"nodeName\":\"%s\"}}";
    char json[256];
    snprintf(json, sizeof(json), fmt, i, i, node);
    kobj *o = kf_decode_text(KOBJ_POD, json);
    assert_non_null(o);
    assert_int_equal(store_put(s, kobj_uid(o), o), 0);
    assert_ptr_equal(slot_of(s, o->meta.uid)->key, o->meta.uid);
}

/* The informers' pairing: a kobj under its uid (kobj_uid borrowed, kobj_free_any
 * releasing its interned strings). */
static void test_kobj_cache(void **state)
{
    (void)state;
    store s;
    store_init(&s, kobj_free_any, kobj_uid);
    for (int i = 0; i < 100; i++)
        put_pod(&s, i, "n1");
    assert_true(kobj_interned() > 0);
    /* replaced by a newer version: the old one released */
    put_pod(&s, 7, "m");
    assert_string_equal(((const kobj *)store_get(&s, "u-7"))->u.pod.node_name, "m");
    assert_int_equal(store_delete(&s, "u-8"), 1);
    store_free(&s);
    assert_int_equal(kobj_interned(), 0);
}

/* ---- store_retain ---------------------------------------------------------- */

typedef struct retain_ctx {
    char (*keys)[16];
    size_t n;
    unsigned drop;  /* bit i: keys[i] goes */
    int mismatched; /* keep was handed an object not stored under its key */
} retain_ctx;

static int keep_unless_dropped(const char *key, const void *obj, void *data)
{
    retain_ctx *x = data;
    if (obj == NULL || strcmp(((const item *)obj)->tag, key) != 0)
        x->mismatched = 1;
    for (size_t i = 0; i < x->n; i++)
        if (strcmp(x->keys[i], key) == 0)
            return !(x->drop >> i & 1);
    return 1;
}

/* Every subset of the members of two interleaved probe runs, one wrapping
 * around the end of a 16-slot table, is removed in one walk: the rest are
 * all still found (the walk looks again at a slot a removal shifted a
 * member into, and one shifted back past the end of the table was seen
 * already). */
static void test_retain_runs(void **state)
{
    (void)state;
    store s;
    store_init(&s, item_free, item_key);
    retain_ctx nothing = {0};
    assert_int_equal(store_retain(&s, keep_unless_dropped, &nothing), 0);
    for (size_t home = 12; home < 16; home++) {
        char keys[8][16];
        colliding(keys, 5, home);
        colliding(keys + 5, 3, (home + 2) & 15);
        for (unsigned drop = 0; drop < 256; drop++) {
            for (size_t i = 0; i < 8; i++)
                assert_int_equal(store_put(&s, keys[i], mk(keys[i])), 0);
            assert_int_equal(s.cap, 16);
            retain_ctx x = {keys, 8, drop, 0};
            size_t want = (size_t)__builtin_popcount(drop);
            assert_int_equal(store_retain(&s, keep_unless_dropped, &x), want);
            assert_int_equal(x.mismatched, 0);
            assert_int_equal(s.len, 8 - want);
            assert_int_equal(items_live, (int)(8 - want));
            for (size_t i = 0; i < 8; i++) {
                if (drop >> i & 1) {
                    if (store_has(&s, keys[i]))
                        fail_msg("home %zu drop %02x: %s kept", home, drop, keys[i]);
                } else {
                    assert_tag(&s, keys[i], keys[i]);
                }
            }
            /* nothing more to remove */
            assert_int_equal(store_retain(&s, keep_unless_dropped, &x), 0);
            store_free(&s);
        }
    }
    assert_int_equal(items_live, 0);
}

static int keep_not_tagged_x(const char *key, const void *obj, void *data)
{
    (void)key;
    (void)data;
    return obj == NULL || strcmp(((const item *)obj)->tag, "x") != 0;
}

/* Entries under their object's own key (borrowed), under copies, and a
 * set's members (NULL) are removed alike, each key and object freed once
 * (ASan sees the rest). */
static void test_retain_kinds(void **state)
{
    (void)state;
    store s;
    store_init(&s, item_free, item_key);
    char uid[32];
    for (int i = 0; i < 40; i++) {
        snprintf(uid, sizeof(uid), "uid-%d", i);
        item *o = mk_keyed(uid, i % 2 ? "x" : "y");
        assert_int_equal(store_put(&s, o->key, o), 0);
    }
    assert_int_equal(store_put(&s, "copied-x", mk("x")), 0);
    assert_int_equal(store_put(&s, "copied-y", mk("y")), 0);
    assert_int_equal(store_put(&s, "member", NULL), 0);
    assert_int_equal(store_retain(&s, keep_not_tagged_x, NULL), 21);
    assert_int_equal(s.len, 22);
    assert_int_equal(items_live, 21);
    for (int i = 0; i < 40; i++) {
        snprintf(uid, sizeof(uid), "uid-%d", i);
        assert_int_equal(store_has(&s, uid), i % 2 == 0);
    }
    assert_int_equal(store_has(&s, "copied-x"), 0);
    assert_tag(&s, "copied-y", "y");
    assert_int_equal(store_has(&s, "member"), 1);
    store_free(&s);
    assert_int_equal(items_live, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basics),
        cmocka_unit_test(test_set),
        cmocka_unit_test(test_growth),
        cmocka_unit_test(test_collisions),
        cmocka_unit_test(test_random_against_reference),
        cmocka_unit_test(test_iteration),
        cmocka_unit_test(test_uid_keys),
        cmocka_unit_test(test_kobj_cache),
        cmocka_unit_test(test_retain_runs),
        cmocka_unit_test(test_retain_kinds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
