/*
 * test_metrics.c - Prometheus text rendering: histogram buckets (le is
 * "less or equal", cumulative, summed over threads), _sum and _count, the
 * HELP/TYPE header (the text buffer itself: test_strbuf.c).
 */
#include "review_fixture.h"

#include <time.h>

#include "metrics.h"

static void test_counter(void **state)
{
    (void)state;
    metrics_counter c = 0;
    assert_int_equal(metrics_get(&c), 0);
    metrics_add(&c, 1);
    metrics_add(&c, 41);
    assert_int_equal(metrics_get(&c), 42);
    metrics_add(&c, UINT64_MAX - 42);
    assert_int_equal(metrics_get(&c), UINT64_MAX);
}

static size_t bucket_of(uint64_t ns)
{
    metrics_histogram h;
    memset(&h, 0, sizeof(h));
    metrics_observe(&h, ns);
    size_t found = SIZE_MAX;
    for (size_t b = 0; b <= METRICS_N_BUCKETS; b++) {
        if (metrics_get(&h.buckets[b]) == 1) {
            assert_int_equal(found, SIZE_MAX);
            found = b;
        } else {
            assert_int_equal(metrics_get(&h.buckets[b]), 0);
        }
    }
    assert_int_equal(metrics_get(&h.count), 1);
    assert_int_equal(metrics_get(&h.sum_ns), ns);
    return found;
}

static void test_observe_buckets(void **state)
{
    (void)state;
    /* bounds are increasing */
    for (size_t b = 1; b < METRICS_N_BUCKETS; b++)
        assert_true(metrics_bucket_bounds[b] > metrics_bucket_bounds[b - 1]);
    assert_int_equal(bucket_of(0), 0);
    assert_int_equal(bucket_of(100000), 0);   /* exactly 100 µs: le="0.0001" */
    assert_int_equal(bucket_of(100001), 1);
    assert_int_equal(bucket_of(250000), 1);
    assert_int_equal(bucket_of(1000000), 3);  /* 1 ms */
    assert_int_equal(bucket_of(999999999), 10);
    assert_int_equal(bucket_of(1000000000), 10); /* 1 s */
    assert_int_equal(bucket_of(5000000000), 11); /* 5 s */
    assert_int_equal(bucket_of(5000000001), METRICS_N_BUCKETS); /* +Inf */
    assert_int_equal(bucket_of(UINT64_MAX), METRICS_N_BUCKETS);
}

static void test_histogram_render(void **state)
{
    (void)state;
    metrics_histogram a, b;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    metrics_observe(&a, 50000);      /* 0.00005 s */
    metrics_observe(&a, 2000000);    /* 0.002 */
    metrics_observe(&b, 2000000);
    metrics_observe(&b, 7000000000); /* 7 s: +Inf */
    metrics_histogram *const hs[] = {&a, &b};
    strbuf t = {0};
    metrics_header(&t, "ota_webhook_request_duration_seconds", "histogram", "Time to decide.");
    metrics_histogram_render(&t, "ota_webhook_request_duration_seconds", "path=\"/mutate\"", hs, 2);
    metrics_histogram_render(&t, "x", "", hs, 1);
    assert_false(t.failed);
    assert_int_equal(t.len, strlen(t.data));
    assert_string_equal(
        t.data,
        "# HELP ota_webhook_request_duration_seconds Time to decide.\n"
        "# TYPE ota_webhook_request_duration_seconds histogram\n"
        "ota_webhook_request_duration_seconds_bucket{path=\"/mutate\",le=\"0.0001\"} 1\n"
        "ota_webhook_request_duration_seconds_bucket{path=\"/mutate\",le=\"0.00025\"} 1\n"
        "ota_webhook_request_duration_seconds_bucket{path=\"/mutate\",le=\"0.0005\"} 1\n"
        "ota_webhook_request_duration_seconds_bucket{path=\"/mutate\",le=\"0.001\"} 1\n"
        "ota_webhook_request_duration_seconds_bucket{path=\"/mutate\",le=\"0.0025\"} 3\n"
        "ota_webhook_request_duration_seconds_bucket{path=\"/mutate\",le=\"0.005\"} 3\n"
        "ota_webhook_request_duration_seconds_bucket{path=\"/mutate\",le=\"0.01\"} 3\n"
        "ota_webhook_request_duration_seconds_bucket{path=\"/mutate\",le=\"0.025\"} 3\n"
        "ota_webhook_request_duration_seconds_bucket{path=\"/mutate\",le=\"0.1\"} 3\n"
        "ota_webhook_request_duration_seconds_bucket{path=\"/mutate\",le=\"0.5\"} 3\n"
        "ota_webhook_request_duration_seconds_bucket{path=\"/mutate\",le=\"1\"} 3\n"
        "ota_webhook_request_duration_seconds_bucket{path=\"/mutate\",le=\"5\"} 3\n"
        "ota_webhook_request_duration_seconds_bucket{path=\"/mutate\",le=\"+Inf\"} 4\n"
        "ota_webhook_request_duration_seconds_sum{path=\"/mutate\"} 7.004050000\n"
        "ota_webhook_request_duration_seconds_count{path=\"/mutate\"} 4\n"
        "x_bucket{le=\"0.0001\"} 1\n"
        "x_bucket{le=\"0.00025\"} 1\n"
        "x_bucket{le=\"0.0005\"} 1\n"
        "x_bucket{le=\"0.001\"} 1\n"
        "x_bucket{le=\"0.0025\"} 2\n"
        "x_bucket{le=\"0.005\"} 2\n"
        "x_bucket{le=\"0.01\"} 2\n"
        "x_bucket{le=\"0.025\"} 2\n"
        "x_bucket{le=\"0.1\"} 2\n"
        "x_bucket{le=\"0.5\"} 2\n"
        "x_bucket{le=\"1\"} 2\n"
        "x_bucket{le=\"5\"} 2\n"
        "x_bucket{le=\"+Inf\"} 2\n"
        "x_sum 0.002050000\n"
        "x_count 2\n");
    strbuf_free(&t);
    assert_null(t.data);
    assert_int_equal(t.len, 0);
    assert_int_equal(t.cap, 0);
}

/* No histograms: zeros, still well-formed. */
static void test_histogram_render_empty(void **state)
{
    (void)state;
    strbuf t = {0};
    metrics_histogram_render(&t, "h", "a=\"b\"", NULL, 0);
    assert_false(t.failed);
    assert_contains(t.data, "h_bucket{a=\"b\",le=\"+Inf\"} 0\nh_sum{a=\"b\"} 0.000000000\n"
                            "h_count{a=\"b\"} 0\n");
    strbuf_free(&t);
}

/* ---- build info and process_* ---------------------------------------------- */

static void test_build_info(void **state)
{
    (void)state;
    strbuf t = {0};
    metrics_build_info(&t, "0.1.0", "2f265c9abcde");
    metrics_build_info(&t, "a\"b\\c\nd", "");
    assert_false(t.failed);
    assert_non_null(strstr(t.data, "# TYPE ota_prepull_build_info gauge\n"));
    assert_non_null(strstr(t.data, "\nota_prepull_build_info{version=\"0.1.0\",commit=\"2f265c9abcde\"} 1\n"));
    assert_non_null(strstr(t.data, "\nota_prepull_build_info{version=\"a\\\"b\\\\c\\nd\",commit=\"\"} 1\n"));
    strbuf_free(&t);
}

static void test_process_parse_stat(void **state)
{
    (void)state;
    /* utime 250, stime 50 (ticks), starttime 1000, rss 3000 pages */
    static const char tail[] = "S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 4 0 1000 123456 3000 18446744073709551615";
    static const struct {
        const char *name, *head;
        int ok;
    } rows[] = {
        {"plain", "4242 (ota-controller) ", 1},
        {"comm with spaces and parens", "4242 (a) b (c)) ", 1},
        {"no parenthesis", "4242 ota ", 0},
        {"empty", "", 0},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char stat[512];
        snprintf(stat, sizeof(stat), "%s%s", rows[i].head, rows[i].ok || rows[i].head[0] ? tail : "");
        metrics_process p = {.cpu_seconds = -1};
        int rc = metrics_process_parse_stat(stat, 1700000000, 100, 4096, &p);
        ROW_CHECK(rows[i].name, rc == (rows[i].ok ? 0 : -1), "rc %d", rc);
        if (!rows[i].ok) {
            ROW_CHECK(rows[i].name, p.cpu_seconds == -1, "touched");
            continue;
        }
        ROW_CHECK(rows[i].name, p.cpu_seconds == 3.0, "cpu %g", p.cpu_seconds);
        ROW_CHECK(rows[i].name, p.start_time == 1700000010.0, "start %f", p.start_time);
        ROW_CHECK(rows[i].name, p.resident_bytes == 3000ull * 4096, "rss %llu",
                  (unsigned long long)p.resident_bytes);
    }
    /* cut before rss, and a non-number where utime belongs */
    metrics_process p = {0};
    assert_int_equal(metrics_process_parse_stat("1 (x) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 4 0 1000",
                                                0, 100, 4096, &p), -1);
    assert_int_equal(metrics_process_parse_stat("1 (x) S 1 2 3 4 5 6 7 8 9 10 x 50 0 0 20 0 4 0 1000 1 2",
                                                0, 100, 4096, &p), -1);
    assert_int_equal(metrics_process_parse_stat("1 (x) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 4 0 1000 1 2",
                                                0, 0, 4096, &p), -1);
}

static unsigned long long sample(const char *text, const char *name)
{
    char key[128];
    snprintf(key, sizeof(key), "\n%s ", name);
    const char *at = strstr(text, key);
    if (at == NULL)
        fail_msg("no %s in:\n%s", name, text);
    return strtoull(at + strlen(key), NULL, 10);
}

/* From this test's own /proc: what it reads moves with the process. */
static void test_process_render(void **state)
{
    (void)state;
    strbuf a = {0}, b = {0};
    metrics_process_render(&a);
    FILE *files[3];
    for (int i = 0; i < 3; i++)
        assert_non_null(files[i] = fopen("/proc/self/stat", "r"));
    void *big = malloc(64u << 20);
    memset(big, 1, 64u << 20); /* resident */
    metrics_process_render(&b);
    assert_false(a.failed || b.failed);
    assert_int_equal(sample(b.data, "process_open_fds"), sample(a.data, "process_open_fds") + 3);
    assert_true(sample(b.data, "process_resident_memory_bytes") >=
                sample(a.data, "process_resident_memory_bytes") + (60u << 20));
    unsigned long long start = sample(a.data, "process_start_time_seconds");
    if (start < 1600000000ull || start > (unsigned long long)time(NULL) + 5)
        fail_msg("start %llu, now %lld", start, (long long)time(NULL));
    assert_non_null(strstr(a.data, "# TYPE process_cpu_seconds_total counter\n"));
    assert_true(sample(a.data, "process_max_fds") > 0);
    for (int i = 0; i < 3; i++)
        fclose(files[i]);
    free(big);
    strbuf_free(&a);
    strbuf_free(&b);
}

static void test_long_bounds(void **state)
{
    (void)state;
    metrics_histogram h;
    memset(&h, 0, sizeof(h));
    metrics_observe_bounds(&h, 45ull * 1000000000ull, metrics_long_bounds);   /* le 60 */
    metrics_observe_bounds(&h, 10000ull * 1000000000ull, metrics_long_bounds); /* +Inf */
    metrics_histogram *hp = &h;
    strbuf t = {0};
    metrics_histogram_render_bounds(&t, "x", "outcome=\"succeeded\"", &hp, 1, metrics_long_bounds);
    assert_false(t.failed);
    assert_non_null(strstr(t.data, "x_bucket{outcome=\"succeeded\",le=\"30\"} 0\n"));
    assert_non_null(strstr(t.data, "x_bucket{outcome=\"succeeded\",le=\"60\"} 1\n"));
    assert_non_null(strstr(t.data, "x_bucket{outcome=\"succeeded\",le=\"7200\"} 1\n"));
    assert_non_null(strstr(t.data, "x_bucket{outcome=\"succeeded\",le=\"+Inf\"} 2\n"));
    assert_non_null(strstr(t.data, "x_sum{outcome=\"succeeded\"} 10045.000000000\n"));
    strbuf_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counter),
        cmocka_unit_test(test_build_info),
        cmocka_unit_test(test_process_parse_stat),
        cmocka_unit_test(test_process_render),
        cmocka_unit_test(test_long_bounds),
        cmocka_unit_test(test_observe_buckets),
        cmocka_unit_test(test_histogram_render),
        cmocka_unit_test(test_histogram_render_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
