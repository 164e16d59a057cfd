/*
 * test_imageref.c - image references as the kubelet and containerd read
 * them: Docker Hub defaults ("docker.io", "library/", tag "latest"),
 * registries with ports, tags, digests, tag plus digest, the pull policy
 * rule of docs/design.md §5, the normal form Node.status.images uses, and one row
 * per way a reference can be invalid, each with the reason it must give.
 */
#include "review_fixture.h"

#include "imageref.h"

#define D64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define D96 D64 "0123456789abcdef0123456789abcdef"
#define D128 D64 D64

typedef struct parse_row {
    const char *in;
    const char *normal; /* NULL: invalid */
    const char *policy; /* valid rows */
    const char *domain, *path, *tag, *digest;
} parse_row;

static const parse_row valid[] = {
    {"nginx", "docker.io/library/nginx:latest", "Always", "docker.io", "library/nginx", NULL, NULL},
    {"nginx:latest", "docker.io/library/nginx:latest", "Always", "docker.io", "library/nginx",
     "latest", NULL},
    {"nginx:1.25", "docker.io/library/nginx:1.25", "IfNotPresent", "docker.io", "library/nginx",
     "1.25", NULL},
    {"nginx:Latest", "docker.io/library/nginx:Latest", "IfNotPresent", "docker.io", "library/nginx",
     "Latest", NULL},
    {"library/nginx", "docker.io/library/nginx:latest", "Always", "docker.io", "library/nginx",
     NULL, NULL},
    {"docker.io/nginx", "docker.io/library/nginx:latest", "Always", "docker.io", "library/nginx",
     NULL, NULL},
    {"docker.io/library/nginx:1.25", "docker.io/library/nginx:1.25", "IfNotPresent", "docker.io",
     "library/nginx", "1.25", NULL},
    {"index.docker.io/nginx", "docker.io/library/nginx:latest", "Always", "docker.io",
     "library/nginx", NULL, NULL},
    {"index.docker.io/user/app:v1", "docker.io/user/app:v1", "IfNotPresent", "docker.io",
     "user/app", "v1", NULL},
    {"user/app:v1", "docker.io/user/app:v1", "IfNotPresent", "docker.io", "user/app", "v1", NULL},
    {"nginx@sha256:" D64, "docker.io/library/nginx@sha256:" D64, "IfNotPresent", "docker.io",
     "library/nginx", NULL, "sha256:" D64},
    {"nginx:1.25@sha256:" D64, "docker.io/library/nginx@sha256:" D64, "IfNotPresent", "docker.io",
     "library/nginx", "1.25", "sha256:" D64},
    /* the apiserver would default this one to Always; a digest pins it */
    {"nginx:latest@sha256:" D64, "docker.io/library/nginx@sha256:" D64, "IfNotPresent", "docker.io",
     "library/nginx", "latest", "sha256:" D64},
    {"quay.io/org/app@sha384:" D96, "quay.io/org/app@sha384:" D96, "IfNotPresent", "quay.io",
     "org/app", NULL, "sha384:" D96},
    {"quay.io/org/app@sha512:" D128, "quay.io/org/app@sha512:" D128, "IfNotPresent", "quay.io",
     "org/app", NULL, "sha512:" D128},
    {"localhost:5000/x", "localhost:5000/x:latest", "Always", "localhost:5000", "x", NULL, NULL},
    {"localhost/x:1", "localhost/x:1", "IfNotPresent", "localhost", "x", "1", NULL},
    {"registry:5000/a/b:tag", "registry:5000/a/b:tag", "IfNotPresent", "registry:5000", "a/b",
     "tag", NULL},
    {"registry.k8s.io/pause:3.10", "registry.k8s.io/pause:3.10", "IfNotPresent", "registry.k8s.io",
     "pause", "3.10", NULL},
    {"gcr.io/a/b/c/d:v", "gcr.io/a/b/c/d:v", "IfNotPresent", "gcr.io", "a/b/c/d", "v", NULL},
    {"[::1]:5000/app:1", "[::1]:5000/app:1", "IfNotPresent", "[::1]:5000", "app", "1", NULL},
    {"10.0.0.1:5000/edge/agent", "10.0.0.1:5000/edge/agent:latest", "Always", "10.0.0.1:5000",
     "edge/agent", NULL, NULL},
    /* an uppercase first component is taken as a registry (normalize.go) */
    {"Foo/bar", "Foo/bar:latest", "Always", "Foo", "bar", NULL, NULL},
    /* no '/': "localhost:5000" is an image named localhost with tag 5000 */
    {"localhost:5000", "docker.io/library/localhost:5000", "IfNotPresent", "docker.io",
     "library/localhost", "5000", NULL},
    {"a-b--c_d__e.f:x", "docker.io/library/a-b--c_d__e.f:x", "IfNotPresent", "docker.io",
     "library/a-b--c_d__e.f", "x", NULL},
    {"app:_V1.2-rc.3", "docker.io/library/app:_V1.2-rc.3", "IfNotPresent", "docker.io",
     "library/app", "_V1.2-rc.3", NULL},
    {"my-reg.example.com:443/team/app:v2", "my-reg.example.com:443/team/app:v2", "IfNotPresent",
     "my-reg.example.com:443", "team/app", "v2", NULL},
};

typedef struct bad_row {
    const char *in;
    const char *why;
} bad_row;

static const bad_row invalid[] = {
    {"", "empty"},
    {"Nginx", "must be lowercase"},
    {"docker.io/Library/nginx", "must be lowercase"},
    {"localhost:5000/App", "must be lowercase"},
    {"ngi nx", "whitespace at byte 3"},
    {" nginx", "whitespace at byte 0"},
    {"nginx\t", "whitespace at byte 5"},
    {"nginx:1\n", "whitespace at byte 7"},
    {"ng\x01inx", "control or non-ASCII byte 0x01 at byte 2"},
    {"caf\xc3\xa9", "non-ASCII byte 0xc3 at byte 3"},
    {"nginx:", "empty tag"},
    {"nginx:-x", "tag must start"},
    {"nginx:a+b", "tag may only contain"},
    {"nginx@", "digest must be <algorithm>:<hex>"},
    {"nginx@sha256", "digest must be <algorithm>:<hex>"},
    {"nginx@sha256:abc", "64 hex digits"},
    {"nginx@sha256:" D64 "0", "64 hex digits"},
    {"nginx@sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef",
     "lowercase hexadecimal"},
    {"nginx@sha256:" D64 "@sha256:" D64, "64 hex digits"},
    {"nginx@sha384:" D64, "96 hex digits"},
    {"nginx@sha512:" D64, "128 hex digits"},
    {"nginx@md5:0123456789abcdef0123456789abcdef", "unsupported digest algorithm"},
    {"nginx:1.0@", "digest must be"},
    {D64, "image ID"},
    {"a..b", "components are lowercase"},
    {"a___b", "components are lowercase"},
    {"a-_b", "components are lowercase"},
    {"-a", "components are lowercase"},
    {"a-", "components are lowercase"},
    {"a//b", "empty component"},
    {"/a", "empty component"},
    {"a/", "empty component"},
    {"localhost:5000/", "no repository name"},
    {"localhost:5000/:tag", "no repository name"},
    {"localhost:abc/x", "malformed registry \"localhost:abc\""},
    {"localhost:/x", "malformed registry"},
    {"reg-.io/x", "malformed registry"},
    {"my_reg.io/x", "malformed registry"},
    {"reg..io/x", "malformed registry"},
    {"[]:5000/x", "malformed registry"},
    {"[::1/x", "malformed registry"},
    {"nginx:a/b", "malformed registry \"nginx:a\""},
};

static void check_valid(const parse_row *row)
{
    arena a;
    arena_init(&a);
    char err[256] = "";
    imageref r;
    int rc = imageref_parse(&r, row->in, strlen(row->in), &a, err, sizeof(err));
    FX_CHECK(row->in, rc == 0, "error: %s", err);
#define SAME_STR(got, want)                                                                        \
    FX_CHECK(row->in, (got == NULL && want == NULL) || (got && want && strcmp(got, want) == 0),    \
             "%s: got %s, want %s", #got, got ? got : "(null)", want ? want : "(null)")
    SAME_STR(r.domain, row->domain);
    SAME_STR(r.path, row->path);
    SAME_STR(r.tag, row->tag);
    SAME_STR(r.digest, row->digest);
    const char *normal = imageref_format(&r, &a);
    SAME_STR(normal, row->normal);
    const char *policy = imageref_pull_policy(&r);
    SAME_STR(policy, row->policy);
    err[0] = '\0';
    normal = imageref_normalize(row->in, strlen(row->in), &a, err, sizeof(err));
    SAME_STR(normal, row->normal);
    /* the normal form is a fixed point */
    normal = imageref_normalize(row->normal, strlen(row->normal), &a, err, sizeof(err));
    SAME_STR(normal, row->normal);
#undef SAME_STR
    arena_free(&a);
}

static void test_valid_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++)
        check_valid(&valid[i]);
}

static void test_invalid_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
        const bad_row *row = &invalid[i];
        arena a;
        arena_init(&a);
        char err[512] = "";
        imageref r;
        int rc = imageref_parse(&r, row->in, strlen(row->in), &a, err, sizeof(err));
        FX_CHECK(row->in, rc == -1, "accepted");
        FX_CHECK(row->in, strstr(err, row->why) != NULL, "error \"%s\" lacks \"%s\"", err,
                 row->why);
        FX_CHECK(row->in, strncmp(err, "invalid image reference", 23) == 0, "error \"%s\"", err);
        FX_CHECK(row->in, r.domain == NULL && r.path == NULL, "parts left set");
        FX_CHECK(row->in,
                 imageref_normalize(row->in, strlen(row->in), &a, err, sizeof(err)) == NULL,
                 "normalize accepted");
        arena_free(&a);
    }
}

/* Lengths: the input bound, the 255-character name bound (counted after
 * "docker.io/library/" is added) and the 128-character tag bound. */
static void test_lengths(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    char err[256];
    imageref r;
    char *buf = arena_alloc(&a, IMAGEREF_MAX_LEN + 2);

    /* 18 + 237 = 255 characters of name: the longest allowed */
    memset(buf, 'a', 237);
    assert_int_equal(imageref_parse(&r, buf, 237, &a, err, sizeof(err)), 0);
    assert_int_equal(strlen(r.domain) + 1 + strlen(r.path), IMAGEREF_NAME_MAX);
    memset(buf, 'a', 238);
    assert_int_equal(imageref_parse(&r, buf, 238, &a, err, sizeof(err)), -1);
    assert_contains(err, "longer than 255 characters");
    /* the reference is quoted, but cut */
    assert_contains(err, "...\"");
    assert_true(strlen(err) < 200);

    memcpy(buf, "x:", 2);
    memset(buf + 2, 't', IMAGEREF_TAG_MAX);
    assert_int_equal(imageref_parse(&r, buf, 2 + IMAGEREF_TAG_MAX, &a, err, sizeof(err)), 0);
    assert_int_equal(strlen(r.tag), IMAGEREF_TAG_MAX);
    buf[2 + IMAGEREF_TAG_MAX] = 't';
    assert_int_equal(imageref_parse(&r, buf, 3 + IMAGEREF_TAG_MAX, &a, err, sizeof(err)), -1);
    assert_contains(err, "longer than 128");

    memset(buf, 'a', IMAGEREF_MAX_LEN + 1);
    assert_int_equal(imageref_parse(&r, buf, IMAGEREF_MAX_LEN + 1, &a, err, sizeof(err)), -1);
    assert_contains(err, "longer than 4096 bytes");
    /* exactly at the bound it is the name rule that speaks */
    assert_int_equal(imageref_parse(&r, buf, IMAGEREF_MAX_LEN, &a, err, sizeof(err)), -1);
    assert_contains(err, "longer than 255 characters");

    /* a NUL inside the given length is a control byte, not an end */
    assert_int_equal(imageref_parse(&r, "nginx\0:1", 8, &a, err, sizeof(err)), -1);
    assert_contains(err, "0x00 at byte 5");
    arena_free(&a);
}

/* The error buffer is always NUL-terminated, however small, and may be
 * absent. */
static void test_small_error_buffer(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    imageref r;
    char err[8];
    memset(err, 'x', sizeof(err));
    assert_int_equal(imageref_parse(&r, "Nginx", 5, &a, err, sizeof(err)), -1);
    assert_string_equal(err, "invalid");
    assert_int_equal(imageref_parse(&r, "Nginx", 5, &a, NULL, 0), -1);
    arena_free(&a);
}

static void test_out_of_memory(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    arena_set_limit(&a, 16); /* room for the domain, not the path */
    imageref r;
    char err[64] = "";
    assert_int_equal(imageref_parse(&r, "nginx", 5, &a, err, sizeof(err)), -1);
    assert_string_equal(err, "out of memory");
    assert_null(r.domain);
    arena_free(&a);
}

typedef struct same_row {
    const char *a, *b;
    int same;
} same_row;

static const same_row sames[] = {
    {"nginx", "docker.io/library/nginx:latest", 1},
    {"nginx", "nginx:latest", 1},
    {"nginx", "library/nginx", 1},
    {"nginx:1.25", "docker.io/library/nginx:1.25", 1},
    {"index.docker.io/user/app:v1", "user/app:v1", 1},
    {"nginx:1.25@sha256:" D64, "docker.io/library/nginx@sha256:" D64, 1},
    {"registry:5000/a/b:tag", "registry:5000/a/b:tag", 1},
    {"nginx:1.25", "nginx:1.27", 0},
    {"nginx:1.25", "nginx", 0},
    {"nginx@sha256:" D64, "nginx:latest", 0},
    {"nginx@sha256:" D64, "nginx@sha512:" D128, 0},
    {"localhost:5000/x", "localhost:5001/x", 0},
    {"localhost:5000/x", "docker.io/library/x", 0},
    {"user/app", "docker.io/library/app", 0},
    {"Nginx", "Nginx", 0},
    {"", "", 0},
    {NULL, "nginx", 0},
    {"nginx", NULL, 0},
};

static void test_same_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(sames) / sizeof(sames[0]); i++) {
        const same_row *row = &sames[i];
        char name[128];
        snprintf(name, sizeof(name), "%s vs %s", row->a ? row->a : "NULL",
                 row->b ? row->b : "NULL");
        FX_CHECK(name, imageref_same(row->a, row->b) == row->same, "want %d", row->same);
        FX_CHECK(name, imageref_same(row->b, row->a) == row->same, "not symmetric");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_table),   cmocka_unit_test(test_invalid_table),
        cmocka_unit_test(test_lengths),       cmocka_unit_test(test_small_error_buffer),
        cmocka_unit_test(test_out_of_memory), cmocka_unit_test(test_same_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
