/*
 * cache_memory.c - what the controller's pod cache costs, in heap bytes and
 * decode time, for N pods arriving as a Kubernetes list.
 *
 * The list body is built from a real pod (tests/fixtures/objects/
 * pod-agent-pulling.json, about 3 KB of JSON), fed in 64 KiB pieces through
 * the same path the informer takes (listsplit -> json_parse_tree -> kobj_decode ->
 * store), and the heap in use is read with mallinfo2() before and after.
 * The body itself is not counted: the informer never holds it, it streams.
 *
 *   build/bench/cache_memory [N ...]      (default: 1000 10000 88000)
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kobj.h"
#include "listsplit.h"
#include "store.h"

#define FIXTURE "tests/fixtures/objects/pod-agent-pulling.json"
#define PIECE (64 * 1024)

typedef struct sink {
    store pods;
    size_t max_item;
} sink;

static int on_item(void *data, const char *json, size_t len)
{
    sink *s = data;
    char err[128];
    if (len > s->max_item)
        s->max_item = len;
    yajl_val tree = json_parse_tree(json, len, 64, err, sizeof(err));
    if (tree == NULL)
        return 0;
    kobj *o = kobj_decode(KOBJ_POD, tree);
    yajl_tree_free(tree);
    if (o == NULL)
        return 0;
    return store_put(&s->pods, o->meta.uid, o) == 0;
}

static char *read_fixture(size_t *len)
{
    FILE *f = fopen(FIXTURE, "rb");
    if (f == NULL)
        return NULL;
    static char buf[1 << 20];
    *len = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[*len] = '\0';
    return buf;
}

/* One pod with its name and uid made unique: the template's uid and name
 * are replaced by same-length strings derived from i. */
static size_t render_pod(char *out, const char *tmpl, size_t len, size_t i)
{
    memcpy(out, tmpl, len);
    char *uid = strstr(out, "\"uid\": \"");
    char *name = strstr(out, "\"name\": \"");
    if (uid != NULL) {
        char repl[64];
        snprintf(repl, sizeof(repl), "%08x-0000-4000-8000-%012x", (unsigned)(i & 0xffffffffu),
                 (unsigned)(i & 0xffffffffu));
        memcpy(uid + 8, repl, 36);
    }
    if (name != NULL) {
        char repl[16];
        snprintf(repl, sizeof(repl), "%05x", (unsigned)(i & 0xfffff));
        memcpy(name + 9 + 11, repl, 5); /* "edge-agent-x7k2p": keep "edge-agent-" */
    }
    return len;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int run(size_t n, const char *tmpl, size_t tmpl_len)
{
    size_t body_cap = n * (tmpl_len + 2) + 256;
    char *body = malloc(body_cap);
    if (body == NULL)
        return -1;
    size_t off = (size_t)sprintf(body, "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":"
                                       "{\"resourceVersion\":\"1\"},\"items\":[");
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            body[off++] = ',';
        off += render_pod(body + off, tmpl, tmpl_len, i);
    }
    off += (size_t)sprintf(body + off, "]}");

    struct mallinfo2 before = mallinfo2();
    double t0 = now_s();
    sink s = {0};
    store_init(&s.pods, kobj_free_any, kobj_uid);
    listsplit ls;
    if (listsplit_init(&ls, 8u << 20, on_item, &s) != 0)
        return -1;
    for (size_t pos = 0; pos < off; pos += PIECE) {
        size_t piece = off - pos < PIECE ? off - pos : PIECE;
        if (listsplit_feed(&ls, body + pos, piece) != 0) {
            fprintf(stderr, "feed failed: %s\n", ls.err);
            return -1;
        }
    }
    if (listsplit_finish(&ls) != 0) {
        fprintf(stderr, "finish failed: %s\n", ls.err);
        return -1;
    }
    listsplit_free(&ls);
    double t1 = now_s();
    struct mallinfo2 after = mallinfo2();
    size_t heap = after.uordblks - before.uordblks;
    printf("%7zu pods  %6zu cached  json %8.1f MiB  cache %7.2f MiB  %5zu B/pod  "
           "decode %6.1f us/pod  largest item %zu B\n",
           n, s.pods.len, (double)off / (1 << 20), (double)heap / (1 << 20),
           s.pods.len ? heap / s.pods.len : 0, (t1 - t0) * 1e6 / (double)n, s.max_item);
    int ok = s.pods.len == n;
    store_free(&s.pods);
    free(body);
    return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
    size_t tmpl_len = 0;
    const char *tmpl = read_fixture(&tmpl_len);
    if (tmpl == NULL) {
        fprintf(stderr, "cannot read %s (run from the repository root)\n", FIXTURE);
        return 1;
    }
    static const size_t defaults[] = {1000, 10000, 88000};
    size_t count = argc > 1 ? (size_t)(argc - 1) : sizeof(defaults) / sizeof(defaults[0]);
    for (size_t i = 0; i < count; i++) {
        size_t n = argc > 1 ? strtoul(argv[i + 1], NULL, 10) : defaults[i];
        if (n == 0 || run(n, tmpl, tmpl_len) != 0)
            return 1;
    }
    return 0;
}
