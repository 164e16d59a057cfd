/*
 * test_log.c - logfmt lines on stderr: the line's shape, quoting of values,
 * level filtering, the 2048-byte bound, RFC 3339 time, and that lines from
 * several threads never interleave (one write(2) per line).
 *
 * stderr is pointed at a temporary file for each test and read back.
 */
#include "review_fixture.h"

#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "log.h"

static int saved_stderr = -1;
static FILE *capture;

/* stderr goes to a temporary file until captured() puts it back, so that
 * cmocka's own messages about a failure are not swallowed. */
static void capture_begin(void)
{
    capture = tmpfile();
    assert_non_null(capture);
    fflush(stderr);
    saved_stderr = dup(STDERR_FILENO);
    assert_true(saved_stderr >= 0);
    assert_true(dup2(fileno(capture), STDERR_FILENO) >= 0);
}

/* Everything written meanwhile (malloc'd, NUL-terminated). */
static char *captured(void)
{
    dup2(saved_stderr, STDERR_FILENO);
    close(saved_stderr);
    long n = lseek(fileno(capture), 0, SEEK_END);
    assert_true(n >= 0);
    char *buf = malloc((size_t)n + 1);
    assert_int_equal(pread(fileno(capture), buf, (size_t)n, 0), n);
    buf[n] = '\0';
    fclose(capture);
    return buf;
}

/* "ts=2026-11-21T21:00:00.123Z " */
static void assert_time_prefix(const char *line)
{
    assert_true(strncmp(line, "ts=", 3) == 0);
    const char *t = line + 3;
    static const char shape[] = "dddd-dd-ddTdd:dd:dd.dddZ ";
    for (size_t i = 0; i < sizeof(shape) - 1; i++) {
        if (shape[i] == 'd' ? (t[i] < '0' || t[i] > '9') : t[i] != shape[i])
            fail_msg("bad time at %zu: %s", i, line);
    }
}

static void test_line_shape(void **state)
{
    (void)state;
    capture_begin();
    log_line l;
    log_begin(&l, LOG_INFO, "denied");
    log_str(&l, "uid", "705ab4f5");
    log_sv(&l, "user", (sv){"system:node:node-1XXX", 18});
    log_int(&l, "n", -42);
    log_str(&l, "rule", "own-node-only");
    log_end(&l, LOG_INFO);
    char *out = captured();
    assert_time_prefix(out);
    assert_string_equal(out + 28, "level=info msg=denied uid=705ab4f5 user=system:node:node-1 n=-42 "
                                  "rule=own-node-only\n");
    free(out);
}

static void test_quoting(void **state)
{
    (void)state;
    static const struct {
        const char *value, *logged;
    } rows[] = {
        {"plain", "plain"},
        {"", "\"\""},
        {"two words", "\"two words\""},
        {"a\"b", "\"a\\\"b\""},
        {"a\\b", "\"a\\\\b\""},
        {"k=v", "\"k=v\""},
        {"line\nbreak", "\"line\\x0abreak\""},
        {"tab\t", "\"tab\\x09\""},
        {"\x1b[31m", "\"\\x1b[31m\""}, /* no terminal escapes from a request */
        {"caf\xc3\xa9", "caf\xc3\xa9"},
        {"pod edge/x: \"y\"", "\"pod edge/x: \\\"y\\\"\""},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        capture_begin();
        log_line l;
        log_begin(&l, LOG_WARN, "m");
        log_str(&l, "v", rows[i].value);
        log_end(&l, LOG_WARN);
        char *out = captured();
        char *want = malloc(strlen(rows[i].logged) + 32);
        sprintf(want, "level=warn msg=m v=%s\n", rows[i].logged);
        FX_CHECK(rows[i].logged, strcmp(out + 28, want) == 0, "got %s", out + 28);
        free(want);
        free(out);
    }
}

static void test_null_and_empty_values(void **state)
{
    (void)state;
    capture_begin();
    log_line l;
    log_begin(&l, LOG_ERROR, "two words");
    log_str(&l, "a", NULL);
    log_sv(&l, "b", SV_NULL);
    log_sv(&l, "c", (sv){"x y", 3});
    log_end(&l, LOG_ERROR);
    char *out = captured();
    assert_string_equal(out + 28, "level=error msg=\"two words\" a=\"\" b=\"\" c=\"x y\"\n");
    free(out);
}

static void test_levels(void **state)
{
    (void)state;
    capture_begin();
    log_set_level(LOG_WARN);
    log_msg(LOG_DEBUG, "d", NULL);
    log_msg(LOG_INFO, "i", NULL);
    log_msg(LOG_WARN, "w", NULL);
    log_msg(LOG_ERROR, "e", "%d %s", 7, "x");
    log_line l;
    log_begin(&l, LOG_INFO, "built-but-dropped");
    log_end(&l, LOG_INFO);
    log_set_level(LOG_DEBUG);
    log_msg(LOG_DEBUG, "d2", NULL);
    char *out = captured();
    log_set_level(LOG_INFO);
    char *second = strchr(out, '\n') + 1;
    char *third = strchr(second, '\n') + 1;
    assert_true(strncmp(out + 28, "level=warn msg=w\n", 17) == 0);
    assert_true(strncmp(second + 28, "level=error msg=e detail=\"7 x\"\n", 31) == 0);
    assert_string_equal(third + 28, "level=debug msg=d2\n");
    free(out);
}

/* A line never exceeds its buffer and always ends the line. */
static void test_truncation(void **state)
{
    (void)state;
    capture_begin();
    char *big = malloc(5000);
    memset(big, 'x', 4999);
    big[4999] = '\0';
    log_line l;
    log_begin(&l, LOG_INFO, "big");
    log_str(&l, "v", big);
    assert_true(l.truncated);
    log_str(&l, "after", "more \"quoted\"");
    log_int(&l, "n", 1);
    log_end(&l, LOG_INFO);
    /* and a line with a quoted value cut in the middle of an escape */
    memset(big, '"', 4999);
    log_begin(&l, LOG_INFO, "big2");
    log_str(&l, "v", big);
    log_end(&l, LOG_INFO);
    char *out = captured();
    char *nl = strchr(out, '\n');
    assert_non_null(nl);
    assert_int_equal(nl - out + 1, (long)sizeof(l.buf));
    assert_true(strncmp(out + 28, "level=info msg=big v=xxxx", 25) == 0);
    char *nl2 = strchr(nl + 1, '\n');
    assert_non_null(nl2);
    assert_int_equal(nl2 - nl, (long)sizeof(l.buf));
    assert_int_equal(nl2[1], '\0');
    free(out);
    free(big);
}


/* ---- threads ---------------------------------------------------------------- */

enum { THREADS = 4, LINES = 400 };

static void *log_lines(void *arg)
{
    long id = (long)arg;
    char value[600];
    memset(value, 'a' + (int)id, sizeof(value) - 1);
    value[sizeof(value) - 1] = '\0';
    for (int i = 0; i < LINES; i++) {
        log_line l;
        log_begin(&l, LOG_INFO, "t");
        log_int(&l, "thread", id);
        log_int(&l, "i", i);
        log_str(&l, "v", value);
        log_end(&l, LOG_INFO);
    }
    return NULL;
}

static void test_threads_do_not_interleave(void **state)
{
    (void)state;
    capture_begin();
    pthread_t th[THREADS];
    for (long i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, log_lines, (void *)i), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    char *out = captured();
    int seen[THREADS] = {0};
    char *line = out;
    int n = 0;
    while (*line != '\0') {
        char *nl = strchr(line, '\n');
        assert_non_null(nl);
        *nl = '\0';
        long id;
        int i, used = 0;
        if (sscanf(line + 28, "level=info msg=t thread=%ld i=%d v=%n", &id, &i, &used) != 2 ||
            id < 0 || id >= THREADS)
            fail_msg("mangled line %d: %.80s", n, line);
        const char *v = line + 28 + used;
        assert_int_equal(strlen(v), 599);
        for (int k = 0; k < 599; k++)
            if (v[k] != 'a' + id)
                fail_msg("line %d of thread %ld mixed at %d", i, id, k);
        assert_int_equal(i, seen[id]); /* each thread's lines in order */
        seen[id]++;
        n++;
        line = nl + 1;
    }
    assert_int_equal(n, THREADS * LINES);
    free(out);
}

/* Both programs' --log-level goes through log_level_parse. */
static void test_level_names(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int ok;
        log_level level;
    } rows[] = {
        {"debug", 1, LOG_DEBUG}, {"info", 1, LOG_INFO},  {"warn", 1, LOG_WARN},
        {"error", 1, LOG_ERROR}, {"INFO", 0, LOG_INFO},  {"warning", 0, LOG_INFO},
        {"", 0, LOG_INFO},       {"bogus", 0, LOG_INFO},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        log_level got = LOG_INFO;
        int rc = log_level_parse(rows[i].name, &got);
        assert_int_equal(rc, rows[i].ok ? 0 : -1);
        if (rows[i].ok)
            assert_int_equal(got, rows[i].level);
    }
}

/* ---- json ------------------------------------------------------------------- */

/* The line of l, finished, parsed as one JSON object (yajl checks UTF-8). */
static yajl_val json_line(log_line *l)
{
    log_finish(l);
    assert_true(l->len > 0 && l->buf[l->len - 1] == '\n');
    assert_null(memchr(l->buf, '\n', l->len - 1)); /* one line */
    char err[128] = "";
    yajl_val v = json_parse_tree(l->buf, l->len - 1, 8, err, sizeof(err));
    if (v == NULL || !YAJL_IS_OBJECT(v))
        fail_msg("not a JSON object (%s): %.*s", err, (int)l->len, l->buf);
    return v;
}

static const char *jget(yajl_val v, const char *key)
{
    const char *path[] = {key, NULL};
    yajl_val s = yajl_tree_get(v, path, yajl_t_string);
    return s != NULL ? YAJL_GET_STRING(s) : NULL;
}

static void test_json_line_shape(void **state)
{
    (void)state;
    log_set_format(LOG_FORMAT_JSON);
    capture_begin();
    log_kv(LOG_INFO, "job created", "pod", "edge/agent-x7k2p", "job", "ota-prepull-1", "node",
           NULL, NULL);
    char *out = captured();
    log_set_format(LOG_FORMAT_TEXT);
    assert_true(strncmp(out, "{\"ts\":\"", 7) == 0);
    const char *t = out + 7;
    static const char shape[] = "dddd-dd-ddTdd:dd:dd.dddZ\"";
    for (size_t i = 0; i < sizeof(shape) - 1; i++)
        if (shape[i] == 'd' ? (t[i] < '0' || t[i] > '9') : t[i] != shape[i])
            fail_msg("bad time at %zu: %s", i, out);
    assert_string_equal(t + 25, ",\"level\":\"info\",\"msg\":\"job created\",\"pod\":"
                                "\"edge/agent-x7k2p\",\"job\":\"ota-prepull-1\",\"node\":\"\"}\n");
    free(out);
}

/* A program that cannot start says so in the format asked for (issue 19:
 * under --log-format json the startup error was plain text): text keeps
 * "program: error"; json is a line like the others, at any level. */
static void test_startup_error(void **state)
{
    (void)state;
    log_line l;
    log_startup_line(&l, "ota-controller", "cannot read kubeconfig /nope: No such file");
    l.buf[l.len] = '\0';
    assert_string_equal(l.buf, "ota-controller: cannot read kubeconfig /nope: No such file\n");

    log_set_format(LOG_FORMAT_JSON);
    log_set_level(LOG_ERROR);
    log_startup_line(&l, "ota-webhook", "key \"x\" does not match");
    log_set_level(LOG_INFO);
    log_set_format(LOG_FORMAT_TEXT);
    l.buf[l.len] = '\0';
    assert_true(strncmp(l.buf, "{\"ts\":\"", 7) == 0);
    assert_string_equal(l.buf + 32, ",\"level\":\"error\",\"msg\":\"cannot start\",\"program\":"
                                    "\"ota-webhook\",\"error\":\"key \\\"x\\\" does not match\"}\n");
    char err[200];
    yajl_val v = yajl_tree_parse(l.buf, err, sizeof(err));
    assert_non_null(v);
    yajl_tree_free(v);
}

static void test_json_escaping(void **state)
{
    (void)state;
    static const struct {
        const char *value, *written, *parsed;
    } rows[] = {
        {"plain", "\"plain\"", "plain"},
        {"", "\"\"", ""},
        {"a\"b", "\"a\\\"b\"", "a\"b"},
        {"a\\b", "\"a\\\\b\"", "a\\b"},
        {"line\nbreak\ttab\r", "\"line\\nbreak\\ttab\\r\"", "line\nbreak\ttab\r"},
        {"\x1b[31m\x7f", "\"\\u001b[31m\\u007f\"", "\x1b[31m\x7f"},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xb3", "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xb3\"",
         "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xb3"},
        /* not UTF-8: a lone continuation, an overlong '/', a surrogate, a cut sequence */
        {"a\x80z", "\"a\\ufffdz\"", "a\xef\xbf\xbdz"},
        {"\xc0\xaf", "\"\\ufffd\\ufffd\"", "\xef\xbf\xbd\xef\xbf\xbd"},
        {"\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
        {"x\xe2\x82", "\"x\\ufffd\\ufffd\"", "x\xef\xbf\xbd\xef\xbf\xbd"},
    };
    log_set_format(LOG_FORMAT_JSON);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        log_line l;
        log_begin(&l, LOG_WARN, "m");
        log_str(&l, "v", rows[i].value);
        log_int(&l, "n", -7);
        yajl_val v = json_line(&l);
        char want[128];
        snprintf(want, sizeof(want), ",\"v\":%s,\"n\":-7}\n", rows[i].written);
        size_t wl = strlen(want);
        ROW_CHECK(rows[i].written, l.len >= wl && memcmp(l.buf + l.len - wl, want, wl) == 0,
                  "got %.*s", (int)l.len, l.buf);
        const char *got = jget(v, "v");
        ROW_CHECK(rows[i].written, got != NULL && strcmp(got, rows[i].parsed) == 0, "parsed %s",
                  got != NULL ? got : "(none)");
        ROW_CHECK(rows[i].written, strcmp(jget(v, "level"), "warn") == 0, "level");
        yajl_tree_free(v);
    }
    log_set_format(LOG_FORMAT_TEXT);
}

/* A cut line is still one JSON object, says so, and never splits an
 * escape or a UTF-8 character. */
static void test_json_truncation(void **state)
{
    (void)state;
    static const char *const fills[] = {"x", "\"", "\xc3\xa9", "\x01", "\xf0\x9f\x90\xb3"};
    log_set_format(LOG_FORMAT_JSON);
    for (size_t f = 0; f < sizeof(fills) / sizeof(fills[0]); f++) {
        for (size_t extra = 0; extra < 8; extra++) {
            char big[5000];
            size_t n = 0, fl = strlen(fills[f]);
            while (n + fl < sizeof(big) - 1 - extra) {
                memcpy(big + n, fills[f], fl);
                n += fl;
            }
            memset(big + n, 'y', extra); /* shifts where the cut falls */
            big[n + extra] = '\0';
            log_line l;
            log_begin(&l, LOG_INFO, "big");
            log_str(&l, "v", big);
            assert_true(l.truncated);
            log_str(&l, "after", "more");
            log_int(&l, "n", 1);
            yajl_val v = json_line(&l);
            assert_true(l.len <= sizeof(l.buf));
            const char *path[] = {"truncated", NULL};
            assert_true(YAJL_IS_TRUE(yajl_tree_get(v, path, yajl_t_true)));
            assert_non_null(jget(v, "v"));
            assert_null(jget(v, "after"));
            yajl_tree_free(v);
        }
    }
    /* a message alone too long */
    char msg[3000];
    memset(msg, 'm', sizeof(msg) - 1);
    msg[sizeof(msg) - 1] = '\0';
    log_line l;
    log_begin(&l, LOG_ERROR, msg);
    yajl_val v = json_line(&l);
    assert_true(strlen(jget(v, "msg")) > 1900);
    yajl_tree_free(v);
    log_set_format(LOG_FORMAT_TEXT);
}

static void test_format_names(void **state)
{
    (void)state;
    log_format f = LOG_FORMAT_TEXT;
    assert_int_equal(log_format_parse("json", &f), 0);
    assert_int_equal(f, LOG_FORMAT_JSON);
    assert_int_equal(log_format_parse("text", &f), 0);
    assert_int_equal(f, LOG_FORMAT_TEXT);
    assert_int_equal(log_format_parse("JSON", &f), -1);
    assert_int_equal(log_format_parse("logfmt", &f), -1);
    assert_int_equal(log_format_parse("", &f), -1);
}

/* The programs' --log-level and --log-format: taken, or refused with what
 * the flag wants. */
static void test_from_flag(void **state)
{
    (void)state;
    char err[160] = "";
    log_level level = LOG_DEBUG;
    log_format format = LOG_FORMAT_TEXT;
    assert_int_equal(log_level_from_flag("error", &level, err, sizeof(err)), 0);
    log_set_level(level);
    capture_begin();
    log_kv(LOG_WARN, "dropped below error", NULL);
    log_kv(LOG_ERROR, "kept", NULL);
    char *out = captured();
    assert_null(strstr(out, "dropped"));
    assert_non_null(strstr(out, "msg=kept"));
    free(out);
    assert_int_equal(log_level_from_flag("info", &level, err, sizeof(err)), 0);
    log_set_level(level);
    assert_int_equal(log_level_from_flag("verbose", &level, err, sizeof(err)), -1);
    assert_string_equal(err, "--log-level wants debug, info, warn or error, got \"verbose\"");
    assert_int_equal(level, LOG_INFO);
    assert_int_equal(log_format_from_flag("json", &format, err, sizeof(err)), 0);
    log_set_format(format);
    capture_begin();
    log_kv(LOG_INFO, "as json", NULL);
    out = captured();
    assert_int_equal(out[0], '{');
    free(out);
    assert_int_equal(log_format_from_flag("text", &format, err, sizeof(err)), 0);
    log_set_format(format);
    assert_int_equal(log_format_from_flag("logfmt", &format, err, sizeof(err)), -1);
    assert_string_equal(err, "--log-format wants text or json, got \"logfmt\"");
}

/* log_kv in text: the pairs in order, a NULL value as "". */
static void test_kv_text(void **state)
{
    (void)state;
    capture_begin();
    log_kv(LOG_INFO, "pull finished", "pod", "edge/a", "outcome", "failed", "reason",
           "not found: x", "job", NULL, NULL);
    char *out = captured();
    assert_string_equal(out + 28, "level=info msg=\"pull finished\" pod=edge/a outcome=failed "
                                  "reason=\"not found: x\" job=\"\"\n");
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_line_shape),
        cmocka_unit_test(test_level_names),
        cmocka_unit_test(test_from_flag),
        cmocka_unit_test(test_quoting),
        cmocka_unit_test(test_null_and_empty_values),
        cmocka_unit_test(test_levels),
        cmocka_unit_test(test_truncation),
        cmocka_unit_test(test_threads_do_not_interleave),
        cmocka_unit_test(test_json_line_shape),
        cmocka_unit_test(test_json_escaping),
        cmocka_unit_test(test_json_truncation),
        cmocka_unit_test(test_startup_error),
        cmocka_unit_test(test_format_names),
        cmocka_unit_test(test_kv_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
