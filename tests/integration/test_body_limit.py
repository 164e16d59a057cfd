"""--max-request-bytes: a body over the limit is refused with 413 over
HTTP/1.1 (Content-Length, chunked, a huge Content-Length) and with a reset
stream over HTTP/2, whose other streams go on; a body at the limit is
served; the server keeps serving.

Part of the integration suite: run_all.py runs it with the others (`make
integration`; one file: run_all.py -k 'test_body_limit.*').
"""

import os
import subprocess
import tempfile

import harness
from harness import (SNI, ServerTestCase, compact, curl_batch, load_fixture,
                     raw_exchange)


class TestBodyLimit(ServerTestCase):
    SERVER_ARGS = ("--max-request-bytes", "65536")

    def assert_413(self, st, hdrs, body):
        """docs/DECISIONS.md "413 comes from h2o, before the body is read":
        h2o's own answer, text/plain, Connection: close, is accepted; a
        JSON body, if any, must be the Status of every other error."""
        self.assertEqual(st, 413, body[:300])
        self.assertIn("content-length", hdrs, "no content-length")
        self.assertEqual(int(hdrs["content-length"]), len(body))
        if hdrs.get("content-type", "").startswith("application/json"):
            self.assert_status_body(st, hdrs, body, 413)
        else:
            self.assertTrue(hdrs.get("content-type", "").startswith(
                "text/plain"), hdrs.get("content-type"))
            self.assertTrue(body.strip(), "empty 413 body")
            self.assertEqual(hdrs.get("connection", "").lower(), "close",
                             "413 without reading the body must close")

    def padded_review(self, size, uid):
        body = compact(self.valid_review(uid))
        self.assertLess(len(body), size)
        # JSON whitespace before the closing brace: still a valid review.
        return body[:-1] + b" " * (size - len(body)) + b"}"

    def request_bytes(self, path, body, chunked=False):
        head = (b"POST %s HTTP/1.1\r\nHost: %s\r\n"
                b"Content-Type: application/json\r\n" % (path.encode(),
                                                          SNI.encode()))
        if chunked:
            head += b"Transfer-Encoding: chunked\r\n\r\n"
            body = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 8192]),
                                                 body[i:i + 8192])
                            for i in range(0, len(body), 8192)) + b"0\r\n\r\n"
        else:
            head += b"Content-Length: %d\r\n\r\n" % len(body)
        return head + body

    def test_body_over_limit_is_413(self):
        body = self.padded_review(70000, "0ve71000-0000-4000-8000-000000000001")
        self.assertEqual(len(body), 70000)
        st, hdrs, data = raw_exchange(self.port,
                                      self.request_bytes("/mutate", body))
        self.assert_413(st, hdrs, data)
        self.assert_still_serving()

    def test_body_one_over_limit_is_413(self):
        body = self.padded_review(65537, "0ve71000-0000-4000-8000-000000000002")
        st, hdrs, data = raw_exchange(self.port,
                                      self.request_bytes("/validate", body))
        self.assert_413(st, hdrs, data)
        self.assert_still_serving()

    def test_body_at_limit_is_served(self):
        uid = "a7117000-0000-4000-8000-000000000001"
        body = self.padded_review(65536, uid)
        self.assertEqual(len(body), 65536)
        c = self.conn()
        st, hdrs, data = c.call("POST", "/mutate", body)
        self.assert_review(st, hdrs, data, uid)

    def test_chunked_body_over_limit_is_413(self):
        body = self.padded_review(70000, "0ve71000-0000-4000-8000-000000000003")
        st, hdrs, data = raw_exchange(
            self.port, self.request_bytes("/mutate", body, chunked=True))
        self.assert_413(st, hdrs, data)
        self.assert_still_serving()

    def test_huge_content_length_is_413(self):
        st, hdrs, data = raw_exchange(
            self.port, b"POST /mutate HTTP/1.1\r\nHost: x\r\n"
            b"Content-Type: application/json\r\n"
            b"Content-Length: 99999999999\r\n\r\n{")
        self.assert_413(st, hdrs, data)
        self.assert_still_serving()


class TestBodyLimitHTTP2(ServerTestCase):
    SERVER_ARGS = ("--max-request-bytes", "65536", "--http2")

    def test_body_limit_over_http2(self):
        # docs/DECISIONS.md "HTTP/2 and h2o 2.2": a body over the limit
        # gets its stream reset (REFUSED_STREAM, which curl retries on new
        # connections and then gives up) rather than a 413; the connection
        # and its other streams go on.
        review, _ = load_fixture("ds-create-ota-rollingupdate")
        uid = review["request"]["uid"]
        body = compact(review)
        at_limit = body[:-1] + b" " * (65536 - len(body)) + b"}"
        over = body[:-1] + b" " * (70000 - len(body)) + b"}"
        tr = curl_batch(self.port, [("/mutate", at_limit), ("/mutate", over),
                                    ("/validate", at_limit)], http2=True)
        self.assertEqual(tr[0]["http_code"], 200, tr[0].get("errormsg"))
        self.assertEqual(tr[0]["http_version"], "2")
        self.assert_review(200, tr[0]["headers"], tr[0]["body"], uid)
        self.assertIn(tr[1]["http_code"], (0, 413),
                      "a body over the limit was answered: %r"
                      % tr[1]["body"][:200])
        if tr[1]["http_code"] == 413:
            self.assertIn("content-length", tr[1]["headers"])
        self.assertEqual(tr[2]["http_code"], 200, tr[2].get("errormsg"))
        self.assert_review(200, tr[2]["headers"], tr[2]["body"], uid)
        self.assert_still_serving()

    def test_other_streams_survive_a_refused_one(self):
        # Streams of the same connection: the one over the limit is reset,
        # the others are answered (curl multiplexes --parallel transfers).
        review, _ = load_fixture("ds-create-ota-rollingupdate")
        body = compact(review)
        over = body[:-1] + b" " * (70000 - len(body)) + b"}"
        d = tempfile.mkdtemp(dir=harness.WORK, prefix="h2par.")
        paths = []
        for i, b in enumerate((body, over, body, body)):
            paths.append(os.path.join(d, "b%d" % i))
            with open(paths[-1], "wb") as f:
                f.write(b)
        args = ["curl", "-sS", "--parallel",
                "--http2", "--cacert", harness.CERTS["ca.crt"],
                "--resolve", "%s:%d:127.0.0.1" % (SNI, self.port),
                "--max-time", "30"]
        for i, p in enumerate(paths):
            if i:
                args.append("--next")
            args += ["--http2", "--cacert", harness.CERTS["ca.crt"],
                     "--resolve", "%s:%d:127.0.0.1" % (SNI, self.port),
                     "-H", "Content-Type: application/json",
                     "--data-binary", "@" + p, "-o", p + ".out",
                     "-w", "%{http_code}\n",
                     "https://%s:%d/mutate" % (SNI, self.port)]
        proc = subprocess.run(args, capture_output=True, timeout=60)
        codes = sorted(proc.stdout.decode().split())
        self.assertEqual(codes.count("200"), 3,
                         "codes %s: %s" % (codes, proc.stderr[-300:]))
        others = [c for c in codes if c != "200"]
        self.assertEqual(len(others), 1, codes)
        self.assertIn(others[0], ("000", "413"), codes)
        self.assert_still_serving()
