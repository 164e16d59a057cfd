"""--max-request-bytes: a body over the limit is refused with 413
(Content-Length, chunked, a huge Content-Length); a body at the limit is
served; the server keeps serving.

Part of the integration suite: run_all.py runs it with the others (`make
integration`; one file: run_all.py -k 'test_body_limit.*').
"""

from harness import SNI, ServerTestCase, compact, raw_exchange


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
