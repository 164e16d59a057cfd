"""SIGTERM: the server stops accepting, /readyz turns 503, the request in
flight (a half-sent body, a slow upload) is still
answered, idle keep-alive connections are closed, and it exits 0 promptly
with no sanitizer report. Each test starts its own server.

Part of the integration suite: run_all.py runs it with the others (`make
integration`; one file: run_all.py -k 'test_shutdown.*').
"""

import json
import os
import signal
import socket
import ssl
import subprocess
import time
import unittest

import harness
from harness import (SNI, Conn, Server, client_context, compact, http_get,
                     load_fixture, read_until_closed, sanitizer_lines,
                     tls_socket)


class TestShutdown(unittest.TestCase):
    def test_sigterm_drains(self):
        srv = Server("drain", ["--threads", "2"])
        srv.start()
        try:
            self.drain(srv)
        finally:
            srv.kill()

    def drain(self, srv):
        review, _ = load_fixture("ds-create-ota-rollingupdate")
        uid = review["request"]["uid"]
        body = compact(review)
        idle = Conn(srv.port)
        self.addCleanup(idle.close)
        st, _, _ = idle.call("POST", "/mutate", body)
        self.assertEqual(st, 200)

        inflight = tls_socket(srv.port)
        self.addCleanup(inflight.close)
        inflight.sendall(b"POST /mutate?timeout=10s HTTP/1.1\r\nHost: %s\r\n"
                         b"Content-Type: application/json\r\n"
                         b"Content-Length: %d\r\n\r\n"
                         % (SNI.encode(), len(body)) + body[:len(body) // 2])
        time.sleep(0.3)
        t_term = time.monotonic()
        srv.proc.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        early_exit = srv.proc.poll()

        # No longer accepting: refused, or at least never answered.
        try:
            late = socket.create_connection(("127.0.0.1", srv.port), 1)
        except OSError:
            late = None
        if late is not None:
            ls = late
            try:
                ls = client_context().wrap_socket(late, server_hostname=SNI)
                ls.settimeout(1)
                ls.sendall(b"POST /mutate HTTP/1.1\r\nHost: x\r\n"
                           b"Content-Length: %d\r\n\r\n" % len(body) + body)
                answer = ls.recv(100)
                self.assertFalse(answer.startswith(b"HTTP/1.1 200"),
                                 "a new connection was served after SIGTERM")
            except (OSError, ssl.SSLError):
                pass
            finally:
                ls.close()

        # DECISIONS: /readyz is 503 while the drain runs, so the endpoint
        # leaves the Service.
        ready = None
        if early_exit is None:
            try:
                ready = http_get(srv.health, "/readyz", timeout=2)[0]
            except OSError as e:
                ready = repr(e)
        try:
            inflight.sendall(body[len(body) // 2:])
        except OSError:
            pass
        data, _, _ = read_until_closed(inflight, 10)
        head, _, resp_body = data.partition(b"\r\n\r\n")
        self.assertTrue(head.startswith(b"HTTP/1.1 200"),
                        "the in-flight request (headers and half its body "
                        "received before SIGTERM) was not completed: got %r%s"
                        % (data[:300], "; the server had already exited "
                           "(%s) 0.5 s after SIGTERM" % early_exit
                           if early_exit is not None else ""))
        self.assertIn(b"content-length", head.lower())
        self.assertIn(b"connection: close", head.lower(),
                      "an answer during the drain keeps the connection")
        doc = json.loads(resp_body)
        self.assertEqual(doc["response"]["uid"], uid)
        self.assertEqual(ready, 503, "/readyz during the drain")

        try:
            rc = srv.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.fail("still running 5 s after the in-flight request "
                      "finished (SIGTERM %.1f s ago)"
                      % (time.monotonic() - t_term))
        self.assertEqual(rc, 0, srv.log_tail())
        bad = sanitizer_lines(srv.log_text())
        self.assertEqual(bad, [], srv.log_tail())
        data, _, closed = read_until_closed(idle.sock, 2)
        self.assertTrue(closed, "idle keep-alive connection not closed")
        with self.assertRaises(OSError):
            socket.create_connection(("127.0.0.1", srv.port), 2).close()
        srv.proc = None

    def test_sigterm_drains_slow_upload(self):
        """curl uploads a 60 KB review at 20 KB/s; SIGTERM arrives one
        second in. The request must still be answered 200, then the server
        exits 0."""
        srv = Server("drain-slow", [])
        srv.start()
        try:
            review, _ = load_fixture("ds-create-ota-rollingupdate")
            body = compact(review)
            body = body[:-1] + b" " * (60000 - len(body)) + b"}"
            path = os.path.join(harness.WORK, "slow.json")
            with open(path, "wb") as f:
                f.write(body)
            out = os.path.join(harness.WORK, "slow.out")
            curl = subprocess.Popen(
                ["curl", "-sS", "--http1.1",
                 "--limit-rate", "20k", "--cacert", harness.CERTS["ca.crt"],
                 "--resolve", "%s:%d:127.0.0.1" % (SNI, srv.port),
                 "--max-time", "30", "-H", "Content-Type: application/json",
                 "-H", "Expect:", "--data-binary", "@" + path, "-o", out,
                 "-w", "%{http_code} %{http_version}",
                 "https://%s:%d/mutate?timeout=10s" % (SNI, srv.port)],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            time.sleep(1.0)
            self.assertIsNone(curl.poll(), "the upload was not slow")
            srv.proc.send_signal(signal.SIGTERM)
            try:
                so, se = curl.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                curl.kill()
                so, se = curl.communicate()
            self.assertEqual(so.decode(), "200 1.1",
                             "slow request during the drain: curl %s %s"
                             % (curl.returncode, se.decode()[-300:]))
            with open(out, "rb") as f:
                doc = json.load(f)
            self.assertEqual(doc["response"]["uid"], review["request"]["uid"])
            try:
                rc = srv.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.fail("still running 5 s after the last request ended")
            self.assertEqual(rc, 0, srv.log_tail())
            self.assertEqual(sanitizer_lines(srv.log_text()), [],
                             srv.log_tail())
            srv.proc = None
        finally:
            srv.kill()

    def test_sigterm_idle_exits_promptly(self):
        srv = Server("drain-idle")
        srv.start()
        c = Conn(srv.port)
        self.addCleanup(c.close)
        review, _ = load_fixture("ds-create-ota-rollingupdate")
        st, _, _ = c.call("POST", "/mutate", compact(review))
        self.assertEqual(st, 200)
        t0 = time.monotonic()
        problems = srv.stop()
        self.assertEqual(problems, [])
        self.assertLess(time.monotonic() - t0, 5,
                        "an idle keep-alive connection delayed exit")
