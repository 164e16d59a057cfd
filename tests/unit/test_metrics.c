/*
 * test_metrics.c - Prometheus text rendering: histogram buckets (le is
 * "less or equal", cumulative, summed over threads), _sum and _count, the
 * HELP/TYPE header (the text buffer itself: test_strbuf.c).
 */
#include "review_fixture.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counter),
        cmocka_unit_test(test_observe_buckets),
        cmocka_unit_test(test_histogram_render),
        cmocka_unit_test(test_histogram_render_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
