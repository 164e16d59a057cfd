"""Hostile and malformed input: bodies that are not AdmissionReviews, every
field the server reads given the wrong JSON type, nesting 200 000 deep,
invalid UTF-8, wrong methods and paths, stalled and pipelined clients,
concurrent clients. Each answers 400/404/405 with a meta/v1 Status body and
a content-length, keeps the keep-alive connection, and the server keeps
serving; a stalled client is cut after --request-read-timeout-seconds.
(Request bodies over --max-request-bytes: test_body_limit.py.)

Part of the integration suite: run_all.py runs it with the others (`make
integration`; one file: run_all.py -k 'test_bad_input.*').
"""

import copy
import http.client
import json
import re
import threading
import time

from harness import (IO_TIMEOUT, SNI, Conn, ServerTestCase, compact,
                     curl_batch, diff_objects, json_patch, load_fixture,
                     read_until_closed, tls_socket)


def _set_path(doc, path, value):
    cur = doc
    for k in path[:-1]:
        cur = cur[k]
    cur[path[-1]] = value


def _get_path(doc, path):
    cur = doc
    for k in path:
        cur = cur[k]
    return cur


def wrong_type_cases():
    """(test name, base fixture, path, names the message may use). Every
    field of DESIGN §3/§4 the server has to read, in the fixture whose
    decision reads it."""
    pod = "pod-status-prepull-yurthub"
    ds = "ds-update-ota-ondelete"
    cases = [
        ("uid", pod, ["request", "uid"], ["uid"]),
        ("kind", pod, ["request", "kind"], ["kind"]),
        ("resource", pod, ["request", "resource"], ["resource"]),
        ("resource_group", pod, ["request", "resource", "group"], ["group"]),
        ("resource_version", pod, ["request", "resource", "version"],
         ["version"]),
        ("resource_resource", pod, ["request", "resource", "resource"],
         ["resource"]),
        ("subresource", pod, ["request", "subResource"], ["subResource"]),
        ("operation", pod, ["request", "operation"], ["operation"]),
        ("namespace", pod, ["request", "namespace"], ["namespace"]),
        ("name", pod, ["request", "name"], ["name"]),
        ("userinfo", pod, ["request", "userInfo"], ["userInfo"]),
        ("username", pod, ["request", "userInfo", "username"],
         ["username"]),
        ("groups", pod, ["request", "userInfo", "groups"], ["groups"]),
        ("groups_element", pod, ["request", "userInfo", "groups", 0],
         ["groups"]),
        # "object" alone would match the words "must be an object".
        ("object", pod, ["request", "object"], ["request.object"]),
        ("old_object", pod, ["request", "oldObject"], ["oldObject"]),
        ("ds_object", ds, ["request", "object"], ["request.object"]),
        ("ds_old_object", ds, ["request", "oldObject"], ["oldObject"]),
    ]
    for where, tag in (("object", "object"), ("oldObject", "old_object")):
        base = ["request", where]
        cases += [
            (tag + "_metadata", pod, base + ["metadata"], ["metadata"]),
            (tag + "_metadata_name", pod, base + ["metadata", "name"],
             ["name"]),
            (tag + "_metadata_namespace", pod,
             base + ["metadata", "namespace"], ["namespace"]),
            (tag + "_labels", pod, base + ["metadata", "labels"], ["labels"]),
            (tag + "_label_value", pod,
             base + ["metadata", "labels", "controller-revision-hash"],
             ["labels", "controller-revision-hash"]),
            (tag + "_spec", pod, base + ["spec"], ["spec"]),
            (tag + "_node_name", pod, base + ["spec", "nodeName"],
             ["nodeName"]),
            (tag + "_status", pod, base + ["status"], ["status"]),
            (tag + "_conditions", pod, base + ["status", "conditions"],
             ["conditions"]),
            (tag + "_condition_element", pod,
             base + ["status", "conditions", 0], ["conditions", "condition"]),
            (tag + "_ota_condition_element", pod,
             base + ["status", "conditions", -1],
             ["conditions", "condition"]),
            (tag + "_condition_type", pod,
             base + ["status", "conditions", 0, "type"], ["type"]),
        ]
        for field in ("type", "status", "reason", "message"):
            cases.append((tag + "_ota_condition_" + field, pod,
                          base + ["status", "conditions", -1, field],
                          [field]))
        cases += [
            (tag + "_ds_metadata", ds, base + ["metadata"], ["metadata"]),
            (tag + "_ds_annotations", ds, base + ["metadata", "annotations"],
             ["annotations"]),
            (tag + "_ds_annotation_value", ds,
             base + ["metadata", "annotations",
                     "apps.openyurt.io/update-strategy"],
             ["annotations", "apps.openyurt.io/update-strategy"]),
            (tag + "_ds_timeout_annotation_value", ds,
             base + ["metadata", "annotations",
                     "apps.openyurt.io/image-prepull-timeout-seconds"],
             ["annotations", "apps.openyurt.io/image-prepull-timeout-seconds"]),
            (tag + "_ds_spec", ds, base + ["spec"], ["spec"]),
            (tag + "_ds_update_strategy", ds,
             base + ["spec", "updateStrategy"], ["updateStrategy"]),
            (tag + "_ds_update_strategy_type", ds,
             base + ["spec", "updateStrategy", "type"],
             ["updateStrategy", "type"]),
        ]
    return cases


WRONG_VALUES = {  # by the type the field should have
    str: [42, {"x": "y"}, ["x"], True],
    dict: [42, "x", ["x"], True],
    list: [42, "x", {"x": "y"}, True],
}


class TestBadInput(ServerTestCase):
    SERVER_ARGS = ("--threads", "2", "--request-read-timeout-seconds", "2")
    READ_TIMEOUT = 2.0

    def post_expect_error(self, body, code, mentions=None, path="/mutate",
                          method="POST", conn=None, headers=None):
        c = conn or self.conn()
        st, hdrs, data = c.call(method, path, body, headers)
        doc = self.assert_status_body(st, hdrs, data, code, mentions)
        if code in (400, 404, 405):
            self.assert_still_serving(c)
        else:
            self.assert_still_serving()
        return doc, hdrs

    def test_sanity_valid_review(self):
        c = self.conn()
        for i in range(3):
            uid = "aaaaaaaa-0000-4000-8000-00000000000%d" % i
            st, h, b = c.call("POST", "/mutate?timeout=10s",
                              compact(self.valid_review(uid)))
            self.assert_review(st, h, b, uid)
        self.assertEqual(c.connects, 1)

    def test_empty_body(self):
        self.post_expect_error(b"", 400)

    def test_truncated_json(self):
        body = compact(self.valid_review())
        for cut in (1, len(body) // 2, len(body) - 1):
            with self.subTest(cut=cut):
                self.post_expect_error(body[:cut], 400)

    def test_not_json(self):
        for body in (b"hello", b"<AdmissionReview/>", b"\x00\x01\x02",
                     b"{'apiVersion': 'admission.k8s.io/v1'}",
                     compact(self.valid_review()) + b"garbage"):
            with self.subTest(body=body[:20]):
                self.post_expect_error(body, 400)

    def test_json_not_an_object(self):
        for body in (b"[]", b'[{"kind":"AdmissionReview"}]', b'"review"',
                     b"42", b"null", b"true"):
            with self.subTest(body=body):
                self.post_expect_error(body, 400)

    def test_wrong_api_version(self):
        for v in ("admission.k8s.io/v1beta1", "", "v1"):
            with self.subTest(v=v):
                r = self.valid_review()
                r["apiVersion"] = v
                self.post_expect_error(compact(r), 400, ["apiVersion"])
        r = self.valid_review()
        del r["apiVersion"]
        self.post_expect_error(compact(r), 400, ["apiVersion"])

    def test_wrong_kind(self):
        for v in ("AdmissionRequest", "admissionreview", ""):
            with self.subTest(v=v):
                r = self.valid_review()
                r["kind"] = v
                self.post_expect_error(compact(r), 400, ["kind"])
        r = self.valid_review()
        del r["kind"]
        self.post_expect_error(compact(r), 400, ["kind"])

    def test_missing_request(self):
        r = self.valid_review()
        del r["request"]
        self.post_expect_error(compact(r), 400, ["request"])
        r["request"] = None
        self.post_expect_error(compact(r), 400, ["request"])

    def test_missing_uid(self):
        r = self.valid_review()
        del r["request"]["uid"]
        self.post_expect_error(compact(r), 400, ["uid"])
        r["request"]["uid"] = None
        self.post_expect_error(compact(r), 400, ["uid"])
        r["request"]["uid"] = ""
        self.post_expect_error(compact(r), 400, ["uid"])

    def test_top_level_wrong_types(self):
        for field in ("apiVersion", "kind"):
            for v in WRONG_VALUES[str]:
                with self.subTest(field=field, value=v):
                    r = self.valid_review()
                    r[field] = v
                    self.post_expect_error(compact(r), 400, [field])
        for v in WRONG_VALUES[dict]:
            with self.subTest(field="request", value=v):
                r = self.valid_review()
                r["request"] = v
                self.post_expect_error(compact(r), 400, ["request"])

    def run_wrong_type(self, base, path, mentions):
        review, _ = load_fixture(base)
        path = list(path)
        # -1 stands for the last condition (the OTA one of the fixture).
        for i, k in enumerate(path):
            if k == -1:
                path[i] = len(_get_path(review, path[:i])) - 1
        try:
            orig = _get_path(review, path)
        except (KeyError, IndexError):
            orig = ""  # absent in the fixture (e.g. reason): a string field
        if orig is None:
            orig = ""
        kind = dict if isinstance(orig, dict) else \
            list if isinstance(orig, list) else str
        c = self.conn()
        for v in WRONG_VALUES[kind]:
            with self.subTest(value=v):
                r = copy.deepcopy(review)
                _set_path(r, path, v)
                st, hdrs, data = c.call("POST", "/mutate?timeout=10s",
                                        compact(r))
                self.assert_status_body(st, hdrs, data, 400, mentions)
                st, hdrs, data = c.call("POST", "/validate?timeout=10s",
                                        compact(r))
                self.assert_status_body(st, hdrs, data, 400, mentions)
        self.assert_still_serving(c)

    def test_null_means_absent(self):
        # DECISIONS: null for a field we read counts as the field being
        # absent (Go writes null for nil maps and slices).
        review, _ = load_fixture("ds-create-ota-rollingupdate")
        review["request"]["object"]["metadata"]["labels"] = None
        review["request"]["userInfo"]["groups"] = None
        review["request"]["oldObject"] = None
        c = self.conn()
        st, h, b = c.call("POST", "/mutate", compact(review))
        resp, patch = self.assert_review(st, h, b, review["request"]["uid"])
        self.assertTrue(resp["allowed"])
        self.assertTrue(patch)
        review, _ = load_fixture("pod-status-kubelet-routine")
        review["request"]["object"]["metadata"]["annotations"] = None
        review["request"]["oldObject"]["metadata"]["annotations"] = None
        st, h, b = c.call("POST", "/validate", compact(review))
        resp, _ = self.assert_review(st, h, b, review["request"]["uid"])
        self.assertTrue(resp["allowed"])

    def test_nesting_arrays_200000(self):
        n = 200000
        # A top-level array may be refused as "not an object" at once.
        self.post_expect_error(b"[" * n + b"]" * n, 400,
                               ["nesting", "depth", "deep", "object"])
        self.post_expect_error(b"[" * n, 400,
                               ["nesting", "depth", "deep", "object"])
        self.post_expect_error(b'{"a":' + b"[" * n + b"]" * n + b"}", 400,
                               ["nesting", "depth", "deep"])
        self.post_expect_error(b'{"a":' + b"[" * n, 400,
                               ["nesting", "depth", "deep"])

    def test_nesting_objects_200000(self):
        n = 200000
        self.post_expect_error(b'{"a":' * n + b"1" + b"}" * n, 400,
                               ["nesting", "depth", "deep"])

    def test_nesting_inside_object(self):
        # Deep nesting where a real review has free-form JSON (a pod's
        # spec): the limit must hold there too.
        n = 200000
        r = compact(self.valid_review())
        marker = b'"spec":{'
        i = r.index(marker) + len(marker)
        body = r[:i] + b'"x":' + b'{"a":' * n + b"1" + b"}" * n + b"," + r[i:]
        self.post_expect_error(body, 400, ["nesting", "depth", "deep"])
        body = r[:i] + b'"x":' + b"[" * n + b"]" * n + b"," + r[i:]
        self.post_expect_error(body, 400, ["nesting", "depth", "deep"],
                               path="/validate")

    def test_moderate_nesting_is_fine(self):
        # 30 levels of free-form JSON inside an object is a real manifest.
        r = self.valid_review()
        deep = "leaf"
        for _ in range(30):
            deep = {"a": [deep]}
        r["request"]["object"]["spec"]["template"]["metadata"]["annotations"] \
            = {"x": json.dumps(deep)}
        r["request"]["object"]["spec"]["template"]["spec"]["x-deep"] = deep
        c = self.conn()
        st, h, b = c.call("POST", "/mutate", compact(r))
        self.assert_review(st, h, b, r["request"]["uid"])

    def test_invalid_utf8_in_read_field(self):
        body = compact(self.valid_review()).replace(
            b'"uid":"00000000', b'"uid":"\xc3\x28\xff0000', 1)
        self.assertIn(b"\xff", body)
        self.post_expect_error(body, 400, ["utf"])

    def test_invalid_utf8_in_other_field(self):
        for bad in (b"\xff", b"\xc3\x28", b"\xe2\x82"):
            with self.subTest(bad=bad):
                body = compact(self.valid_review()).replace(
                    b"registry.example.com/edge/agent", b"registry" + bad, 1)
                self.assertIn(bad, body)
                self.post_expect_error(body, 400, ["utf"])

    def test_invalid_utf8_overlong_and_surrogates(self):
        # RFC 3629: overlong forms (C0 AF = "/") and UTF-16 surrogates
        # (ED A0 80) are not UTF-8. yajl's own check lets both through; a
        # uid that carries them is echoed into the response, which is then
        # not valid JSON text for the apiserver either.
        for where, old in (("uid", b'"uid":"00000000'),
                           ("image", b"registry.example.com/edge/agent")):
            for bad in (b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"):
                with self.subTest(where=where, bad=bad):
                    body = compact(self.valid_review()).replace(
                        old, old[:-4] + bad + old[-4:], 1)
                    self.assertIn(bad, body)
                    self.post_expect_error(body, 400, ["utf"])

    def test_get_is_405(self):
        for method in ("GET", "PUT", "DELETE", "PATCH"):
            for path in ("/mutate", "/validate", "/mutate?timeout=10s"):
                with self.subTest(method=method, path=path):
                    c = self.conn()
                    body = None if method in ("GET", "DELETE") \
                        else compact(self.valid_review())
                    _, hdrs = self.post_expect_error(
                        body, 405, ["method", method], path=path,
                        method=method, conn=c)
                    self.assertIn("allow", hdrs, "405 without Allow")
                    self.assertEqual(
                        [m.strip() for m in hdrs["allow"].split(",")],
                        ["POST"], hdrs["allow"])

    def test_unknown_path_is_404(self):
        good = compact(self.valid_review())
        for method, path in (("POST", "/"), ("POST", "/mutatex"),
                             ("POST", "/mutate/extra"), ("POST", "/Mutate"),
                             ("POST", "/validating"), ("GET", "/"),
                             ("GET", "/healthz"), ("POST", "/metrics")):
            with self.subTest(method=method, path=path):
                # DECISIONS: the 404 names the valid paths.
                self.post_expect_error(good if method == "POST" else None,
                                       404, ["/mutate"], path=path,
                                       method=method)

    def test_plain_ports_404_and_405(self):
        srv = type(self).server
        for port, good, bad in ((srv.health, "/healthz", "/metrics"),
                                (srv.health, "/readyz", "/mutate"),
                                (srv.metrics, "/metrics", "/healthz")):
            with self.subTest(port=port, path=bad):
                c = http.client.HTTPConnection("127.0.0.1", port,
                                               timeout=IO_TIMEOUT)
                self.addCleanup(c.close)
                c.request("GET", bad)
                r = c.getresponse()
                body = r.read()
                hdrs = {k.lower(): v for k, v in r.getheaders()}
                self.assert_status_body(r.status, hdrs, body, 404, [good])
                c.request("POST", good, body=b"x")
                r = c.getresponse()
                body = r.read()
                hdrs = {k.lower(): v for k, v in r.getheaders()}
                self.assert_status_body(r.status, hdrs, body, 405)
                self.assertIn("GET", hdrs.get("allow", ""))
                c.request("GET", good)  # same connection still serves
                r = c.getresponse()
                r.read()
                self.assertEqual(r.status, 200)

    def test_errors_keep_connection_in_one_curl_run(self):
        # The apiserver reuses connections: errors must not close them.
        good = compact(self.valid_review())
        tr = curl_batch(self.port, [("/mutate", b"[]"), ("/nope", good),
                                    ("/validate", b"{"), ("/mutate", good)])
        self.assertEqual([w["http_code"] for w in tr], [400, 404, 400, 200])
        self.assertEqual(sum(w["num_connects"] for w in tr), 1,
                         [w["num_connects"] for w in tr])
        for w in tr:
            self.assertIn("content-length", w["headers"])

    def test_chunked_request_body(self):
        # Not what the apiserver sends, but valid HTTP/1.1.
        uid = "c4c4c4c4-0000-4000-8000-000000000001"
        body = compact(self.valid_review(uid))
        c = self.conn()
        c.request("POST", "/mutate", body=iter([body[:100], body[100:]]),
                  headers={"Content-Type": "application/json"},
                  encode_chunked=True)
        r = c.getresponse()
        data = r.read()
        self.assert_review(r.status, {k.lower(): v for k, v in
                                      r.getheaders()}, data, uid)

    def test_client_stalls_mid_body(self):
        body = compact(self.valid_review())
        s = tls_socket(self.port)
        self.addCleanup(s.close)
        s.sendall(b"POST /mutate?timeout=10s HTTP/1.1\r\nHost: %s\r\n"
                  b"Content-Type: application/json\r\n"
                  b"Content-Length: %d\r\n\r\n" % (SNI.encode(), len(body))
                  + body[:len(body) // 2])
        t_sent = time.monotonic()
        # While it stalls, others are served, on new connections and on
        # one keep-alive connection.
        c = self.conn()
        for i in range(5):
            uid = "5a11ed00-0000-4000-8000-00000000000%d" % i
            st, h, b = c.call("POST", "/mutate", compact(self.valid_review(uid)))
            self.assert_review(st, h, b, uid)
        self.assert_still_serving()
        waited = time.monotonic() - t_sent
        data, t, closed = read_until_closed(
            s, self.READ_TIMEOUT + 6 - waited)
        elapsed = waited + t
        self.assertTrue(closed, "stalled connection still open %.1f s after "
                        "the last byte (--request-read-timeout-seconds 2)"
                        % elapsed)
        self.assertGreaterEqual(elapsed, self.READ_TIMEOUT * 0.5,
                                "closed too early: %.2f s, answer %r"
                                % (elapsed, data[:200]))
        if data:
            self.assertFalse(data.startswith(b"HTTP/1.1 200"),
                             "a half body was answered 200: %r" % data[:200])
        self.assert_still_serving()

    def test_client_stalls_mid_headers(self):
        s = tls_socket(self.port)
        self.addCleanup(s.close)
        s.sendall(b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Le")
        t_sent = time.monotonic()
        self.assert_still_serving()
        data, t, closed = read_until_closed(s, self.READ_TIMEOUT + 6)
        self.assertTrue(closed, "connection stalled in its headers still open"
                        " after %.1f s" % (time.monotonic() - t_sent))
        self.assertGreaterEqual(time.monotonic() - t_sent,
                                self.READ_TIMEOUT * 0.5)
        self.assert_still_serving()

    def test_unicode_escapes_are_decoded(self):
        # JSON may spell any key or value with \\u escapes; the decision
        # must not change (a reader that compared raw bytes would miss
        # PodNeedUpgrade and skip the restoration).
        review, expected = load_fixture("pod-status-prepull-yurthub")
        plain = compact(review)
        esc = plain
        for word in (b'"uid"', b'"request"', b'"object"', b'"oldObject"',
                     b'"conditions"', b'"PodNeedUpgrade"', b'"PodImageReady"',
                     b'"userInfo"', b'"username"', b'"nodeName"'):
            inner = word[1:-1]
            spelled = b"".join(b"\\u%04x" % c if i % 2 == 0 else bytes([c])
                               for i, c in enumerate(inner))
            self.assertIn(word, esc)
            esc = esc.replace(word, b'"' + spelled + b'"')
        self.assertEqual(json.loads(esc), review)
        c = self.conn()
        uid = review["request"]["uid"]
        st, h, b = c.call("POST", "/mutate", esc)
        resp, patch = self.assert_review(st, h, b, uid)
        self.assertTrue(patch, "no patch for the escaped YurtHub review")
        diffs = diff_objects(expected,
                             json_patch(review["request"]["object"], patch))
        self.assertEqual(diffs, [], "\n".join(diffs))

    def test_uid_echo_escaping(self):
        # The uid is echoed byte for byte, JSON-escaped as needed.
        c = self.conn()
        for uid in ('a"b\\c', "tab\there", "\u00e9\u2028\U0001F600",
                    "</script>", "x" * 4096, "\u0001\u001f"):
            with self.subTest(uid=uid[:20]):
                st, h, b = c.call("POST", "/mutate",
                                  compact(self.valid_review(uid)))
                self.assert_review(st, h, b, uid)

    def test_uid_lone_surrogate_escape(self):
        # "\\ud800" is valid JSON text but no character: whatever the
        # server answers (400, or the uid echoed), its answer must be
        # valid UTF-8 JSON.
        for esc in (b"\\ud800", b"\\udfff", b"x\\ud83dy"):
            with self.subTest(esc=esc):
                body = compact(self.valid_review()).replace(
                    b'"uid":"00000000', b'"uid":"' + esc + b'00000000', 1)
                self.assertIn(esc, body)
                c = self.conn()
                st, h, b = c.call("POST", "/mutate", body)
                try:
                    json.loads(b.decode("utf-8"))
                except (UnicodeDecodeError, ValueError) as e:
                    self.fail("answer %d is not UTF-8 JSON (%s): %r"
                              % (st, e, b[:200]))
                self.assertIn(st, (200, 400))
                if st == 400:
                    self.assert_status_body(st, h, b, 400)
                self.assert_still_serving(c)

    def test_large_review_near_default_limit(self):
        # 7 MB of annotations: under the 7 MiB default (7 340 032), answered
        # quickly.
        r = self.valid_review("b16b16b1-0000-4000-8000-000000000001")
        r["request"]["object"]["metadata"]["annotations"].update(
            {"example.com/blob-%d" % i: "x" * 70000 for i in range(100)})
        body = compact(r)
        self.assertGreater(len(body), 7000000)
        c = self.conn()
        t0 = time.monotonic()
        st, h, b = c.call("POST", "/mutate", body)
        self.assert_review(st, h, b, r["request"]["uid"])
        self.assertLess(time.monotonic() - t0, 5)

    def test_many_conditions(self):
        # 20 000 conditions (near 2 MB): linear work, not quadratic.
        review, _ = load_fixture("pod-status-prepull-yurthub")
        extra = [{"type": "example.com/Gate%d" % i, "status": "True"}
                 for i in range(20000)]
        for where in ("object", "oldObject"):
            review["request"][where]["status"]["conditions"][:0] = extra
        c = self.conn()
        t0 = time.monotonic()
        st, h, b = c.call("POST", "/mutate", compact(review))
        resp, patch = self.assert_review(st, h, b, review["request"]["uid"])
        self.assertTrue(patch)
        self.assertLess(time.monotonic() - t0, 5)

    def test_pipelined_requests(self):
        # Two requests in one write: two answers, in order.
        a = compact(self.valid_review("919e0000-0000-4000-8000-000000000001"))
        b = compact(self.valid_review("919e0000-0000-4000-8000-000000000002"))
        req = b"".join(b"POST /mutate HTTP/1.1\r\nHost: x\r\n"
                       b"Content-Type: application/json\r\n"
                       b"Content-Length: %d\r\n\r\n%s" % (len(x), x)
                       for x in (a, b))
        s = tls_socket(self.port)
        self.addCleanup(s.close)
        s.sendall(req + b"GET /nope HTTP/1.1\r\nHost: x\r\n"
                  b"Connection: close\r\n\r\n")
        data, _, closed = read_until_closed(s, 10)
        self.assertTrue(closed, "Connection: close not honoured")
        uids = re.findall(rb'"uid":"(919e[^"]*)"', data)
        self.assertEqual(uids, [b"919e0000-0000-4000-8000-000000000001",
                                b"919e0000-0000-4000-8000-000000000002"])
        self.assertEqual(re.findall(rb"HTTP/1.1 (\d+)", data),
                         [b"200", b"200", b"404"])

    def test_concurrent_clients(self):
        errors = []

        def worker(n):
            try:
                c = Conn(self.port)
                try:
                    for i in range(15):
                        uid = "cc%06d-0000-4000-8000-%012d" % (n, i)
                        body = compact(self.valid_review(uid))
                        st, h, b = c.call("POST", "/mutate", body)
                        doc = json.loads(b)
                        if st != 200 or doc["response"]["uid"] != uid:
                            errors.append((n, i, st, b[:200]))
                        if i % 5 == 4:
                            st, h, b = c.call("POST", "/validate", b"[]")
                            if st != 400:
                                errors.append((n, i, st, b[:200]))
                    if c.connects != 1:
                        errors.append((n, "reconnected", c.connects))
                finally:
                    c.close()
            except Exception as e:  # noqa: BLE001 (reported below)
                errors.append((n, repr(e)))

        threads = [threading.Thread(target=worker, args=(n,))
                   for n in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        self.assertFalse(any(t.is_alive() for t in threads), "clients hung")
        self.assertEqual(errors, [])


def _add_wrong_type_tests(cls):
    for tag, base, path, mentions in wrong_type_cases():
        def t(self, base=base, path=path, mentions=mentions):
            self.run_wrong_type(base, path, mentions)
        t.__name__ = "test_wrong_type_" + tag
        t.__doc__ = "wrong type for %s in %s" % (
            ".".join(map(str, path)), base)
        setattr(cls, t.__name__, t)
    return cls


_add_wrong_type_tests(TestBadInput)
