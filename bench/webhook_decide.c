/*
 * webhook_decide.c - the decision's share of a request, without sockets.
 *
 * For each fixture named on the command line (bench/fixtures/ holds them), the
 * CPU time per body of:
 *   yajl     one yajl callback parse with empty callbacks (the parse
 *            ceiling of bench/webhook_ref.c, without the transport)
 *   jcheck   the strict pass alone (webhook/jcheck.c)
 *   scan     webhook/jscan.c with every value skipped: the strict check of
 *            the whole body with no callback, what the fast path pays for
 *            the bytes the decoder does not read
 *   ref      review_decode_reference(): jcheck + yajl's streaming decode
 *   decode   review_decode(): the fast path (webhook/jscan.c), which serves
 *            every body it accepts
 *   admit    admit_review(): decode, rules, patch and response encoding,
 *            with an arena per request as the server has
 * each repeated for about --ms milliseconds (default 300), best of 3.
 * bench/webhook.py measures the whole server; this says where in the
 * decision the time goes, and is what a profiler is pointed at.
 *
 * Usage: webhook_decide [--ms N] [--only admit|decode|...] FILE[:mutate] ...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admit.h"
#include "arena.h"
#include "jcheck.h"
#include "jscan.h"
#include "review.h"

#include "bench_util.h"

enum step { S_YAJL, S_JCHECK, S_SCAN, S_REF, S_DECODE, S_ADMIT, S_N };
static const char *const step_names[S_N] = {"yajl", "jcheck", "scan", "ref", "decode", "admit"};

static int skip_all(void *ctx)
{
    (void)ctx;
    return 1;
}

static volatile int sink;

static int run_once(enum step s, const char *body, size_t len, admit_phase phase)
{
    char err[256];
    switch (s) {
    case S_YAJL:
        return bench_yajl_parse(body, len, &bench_empty_callbacks, NULL);
    case S_JCHECK:
        return jcheck_body(body, len, err, sizeof(err));
    case S_SCAN: {
        jscan_sink check = {.skips = skip_all};
        return jscan_parse(body, len, REVIEW_MAX_DEPTH, &check);
    }
    case S_REF:
    case S_DECODE: {
        arena a;
        arena_init(&a);
        review rv;
        int r = s == S_REF ? review_decode_reference(&rv, body, len, &a, err, sizeof(err))
                           : review_decode(&rv, body, len, &a, err, sizeof(err));
        arena_free(&a);
        return r;
    }
    case S_ADMIT: {
        arena a;
        arena_init(&a);
        admit_config cfg = {
            .controller_username = "system:serviceaccount:ota-system:ota-controller"};
        admit_outcome out;
        int r = admit_review(phase, body, len, "2026-11-23T10:00:00Z", &cfg, &a, &out);
        if (r == 0 && out.http_status != 200)
            r = -1;
        sink += (int)out.body_len;
        arena_free(&a);
        return r;
    }
    default:
        return -1;
    }
}

int main(int argc, char **argv)
{
    double ms = 300;
    const char *only = NULL;
    int i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
        if (i + 1 >= argc)
            break;
        if (strcmp(argv[i], "--ms") == 0)
            ms = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--only") == 0)
            only = argv[i + 1];
    }
    if (i >= argc) {
        fprintf(stderr, "usage: %s [--ms N] [--only STEP] FILE[:mutate] ...\n", argv[0]);
        return 2;
    }
    printf("%-28s %7s", "fixture", "bytes");
    for (int s = 0; s < S_N; s++)
        printf(" %10s", step_names[s]);
    printf("   (CPU ns per body, best of 3)\n");
    for (; i < argc; i++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s", argv[i]);
        admit_phase phase = ADMIT_VALIDATE;
        char *colon = strrchr(path, ':');
        if (colon != NULL && strcmp(colon, ":mutate") == 0) {
            *colon = '\0';
            phase = ADMIT_MUTATE;
        }
        size_t len = 0;
        char *body = bench_slurp(path, &len);
        if (body == NULL) {
            fprintf(stderr, "cannot read %s\n", path);
            return 1;
        }
        const char *base = strrchr(path, '/');
        printf("%-28s %7zu", base != NULL ? base + 1 : path, len);
        for (int s = 0; s < S_N; s++) {
            if (only != NULL && strcmp(only, step_names[s]) != 0) {
                printf(" %10s", "-");
                continue;
            }
            if (run_once((enum step)s, body, len, phase) != 0) {
                printf(" %10s", "FAILED");
                continue;
            }
            double best = 0;
            for (int round = 0; round < 3; round++) {
                double start = bench_cpu_ns(), end = start;
                long n = 0;
                while (end - start < ms * 1e6 / 3) {
                    for (int k = 0; k < 64; k++)
                        run_once((enum step)s, body, len, phase);
                    n += 64;
                    end = bench_cpu_ns();
                }
                double per = (end - start) / (double)n;
                if (round == 0 || per < best)
                    best = per;
            }
            printf(" %10.0f", best);
        }
        printf("\n");
        free(body);
    }
    return 0;
}
