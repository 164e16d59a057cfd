/*
 * test_httpd.c - the controller's probe server answers each connection's own
 * request: a new connection that has sent nothing yet must not be answered
 * with the previous client's request left in a reused slot (a /healthz probe
 * answered as /readyz would restart a pod whose caches are still syncing).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "httpd.h"
#include "json.h"

static char seen[8][64];
static int n_seen;

static int route(void *data, const char *path, strbuf *body)
{
    (void)data;
    if (n_seen < 8)
        snprintf(seen[n_seen++], sizeof(seen[0]), "%s", path);
    if (strcmp(path, "/nope") == 0) {
        strbuf_printf(body, "no such path: use /livez, /healthz or /readyz\n");
        return 404;
    }
    strbuf_printf(body, "%s\n", path);
    return 200;
}

static int connect_to(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    return fd;
}

/* Steps the server until it has seen `want` requests, or 200 rounds. */
static void step_until(httpd *h, int want)
{
    for (int i = 0; i < 200 && n_seen < want; i++) {
        httpd_step(h, 0);
        usleep(1000);
    }
}

static void test_each_connection_gets_its_own_answer(void **state)
{
    (void)state;
    httpd h;
    char err[128];
    assert_int_equal(httpd_open(&h, "127.0.0.1:0", route, NULL, err, sizeof(err)), 0);
    struct sockaddr_in sa;
    socklen_t len = sizeof(sa);
    assert_int_equal(getsockname(h.listen_fd, (struct sockaddr *)&sa, &len), 0);
    int port = ntohs(sa.sin_port);

    int a = connect_to(port);
    const char req_a[] = "GET /readyz HTTP/1.0\r\n\r\n";
    assert_int_equal(send(a, req_a, strlen(req_a), 0), (ssize_t)strlen(req_a));
    step_until(&h, 1);
    assert_int_equal(n_seen, 1);
    assert_string_equal(seen[0], "/readyz");
    close(a);

    /* B connects and is silent for a while: no answer may be made up. */
    int b = connect_to(port);
    for (int i = 0; i < 20; i++) {
        httpd_step(&h, 0);
        usleep(1000);
    }
    assert_int_equal(n_seen, 1);
    const char req_b[] = "GET /healthz HTTP/1.0\r\n\r\n";
    assert_int_equal(send(b, req_b, strlen(req_b), 0), (ssize_t)strlen(req_b));
    step_until(&h, 2);
    assert_int_equal(n_seen, 2);
    assert_string_equal(seen[1], "/healthz");
    char answer[256] = "";
    ssize_t n = recv(b, answer, sizeof(answer) - 1, 0);
    assert_true(n > 0);
    assert_non_null(strstr(answer, "\r\n\r\n/healthz\n"));
    close(b);
    httpd_close(&h);
}

/* Sends req on a new connection and steps the server until the whole
 * answer (closed by the server) is in out. */
static void exchange(httpd *h, int port, const char *req, char *out, size_t len)
{
    int fd = connect_to(port);
    assert_int_equal(send(fd, req, strlen(req), 0), (ssize_t)strlen(req));
    size_t got = 0;
    for (int i = 0; i < 400; i++) {
        httpd_step(h, 0);
        ssize_t n = recv(fd, out + got, len - 1 - got, MSG_DONTWAIT);
        if (n == 0)
            break;
        if (n > 0)
            got += (size_t)n;
        else
            usleep(1000);
    }
    out[got] = '\0';
    close(fd);
}

/* Client errors are a meta/v1 Status in JSON, as the apiserver's and the
 * webhook's are. */
static void test_errors_are_status(void **state)
{
    (void)state;
    static const struct {
        const char *req, *head, *reason, *message;
        long code;
    } rows[] = {
        {"GET /nope HTTP/1.0\r\n\r\n", "HTTP/1.0 404 Not Found\r\n", "NotFound",
         "no such path: use /livez, /healthz or /readyz", 404},
        {"POST /healthz HTTP/1.0\r\n\r\n", "HTTP/1.0 405 Method Not Allowed\r\n",
         "MethodNotAllowed", "use GET", 405},
        {"GARBAGE\r\n\r\n", "HTTP/1.0 400 Bad Request\r\n", "BadRequest", "bad request line", 400},
    };
    httpd h;
    char err[128];
    assert_int_equal(httpd_open(&h, "127.0.0.1:0", route, NULL, err, sizeof(err)), 0);
    struct sockaddr_in sa;
    socklen_t slen = sizeof(sa);
    assert_int_equal(getsockname(h.listen_fd, (struct sockaddr *)&sa, &slen), 0);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char answer[1024];
        exchange(&h, ntohs(sa.sin_port), rows[i].req, answer, sizeof(answer));
        if (strncmp(answer, rows[i].head, strlen(rows[i].head)) != 0 ||
            strstr(answer, "\r\nContent-Type: application/json\r\n") == NULL)
            fail_msg("%s: %s", rows[i].req, answer);
        const char *body = strstr(answer, "\r\n\r\n");
        assert_non_null(body);
        body += 4;
        char perr[128];
        yajl_val v = json_parse_tree(body, strlen(body), 8, perr, sizeof(perr));
        if (v == NULL)
            fail_msg("%s: body %s: %s", rows[i].req, body, perr);
        const char *kind[] = {"kind", NULL}, *reason[] = {"reason", NULL},
                   *message[] = {"message", NULL}, *code[] = {"code", NULL},
                   *status[] = {"status", NULL};
        assert_string_equal(YAJL_GET_STRING(yajl_tree_get(v, kind, yajl_t_string)), "Status");
        assert_string_equal(YAJL_GET_STRING(yajl_tree_get(v, status, yajl_t_string)), "Failure");
        assert_string_equal(YAJL_GET_STRING(yajl_tree_get(v, reason, yajl_t_string)),
                            rows[i].reason);
        assert_string_equal(YAJL_GET_STRING(yajl_tree_get(v, message, yajl_t_string)),
                            rows[i].message);
        assert_int_equal(YAJL_GET_INTEGER(yajl_tree_get(v, code, yajl_t_number)), rows[i].code);
        yajl_tree_free(v);
    }
    httpd_close(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_connection_gets_its_own_answer),
        cmocka_unit_test(test_errors_are_status),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
