"""Issue 19 §1, "An untrusted webhook": when the apiserver does not trust
the serving certificate (its caBundle names another CA) it refuses writes
with an x509 error, and ota-webhook used to log nothing and move no
metric. Now a failed TLS handshake is counted by reason
(ota_webhook_tls_handshake_failures_total{reason}) and said in the log at
most once a minute per reason, with the peer and what to do; and the
serving certificate's notAfter is a gauge
(ota_webhook_certificate_expiration_timestamp_seconds) that follows a
rotation. docs/DECISIONS.md "Handshake failures, by reason" has the set.

  TestUntrustedCertificate  the reproduction: clients that trust another
                            CA (Python's ssl under TLS 1.3 and 1.2, curl)
                            fail, certificate_untrusted counts each, the
                            log says it once (text and JSON formats);
  TestOtherReasons          plain HTTP, bytes that are not TLS, CBC-only
                            suites, a ClientHello and a hang-up, each under
                            its own reason; a good client moves none;
                            handshakes the server cuts are cuts only;
                            protocol_version and client_certificate with
                            --tls-min-version VersionTLS13 and
                            --client-ca-file;
  TestCertificateExpiry     the gauge is the served certificate's notAfter
                            (as `openssl x509 -enddate` says it), and a
                            rotation changes it.

Each test starts its own server (a reason is said once a minute per
process). Every wait is bounded; loopback only.

Part of the integration suite (run_all.py -k 'test_handshake_failures.*').
"""

import calendar
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import tempfile
import time
import unittest

import harness
from harness import (SNI, Conn, Server, client_context, client_hello, compact, gen_certs,
                     http_get, load_fixture, metric_sum, parse_metrics,
                     tls_socket)
from test_budgets import closed_by_server_after_reading, silent_connection
from test_command_line_and_tls import make_client_pki

FAILURES = "ota_webhook_tls_handshake_failures_total"
EXPIRY = "ota_webhook_certificate_expiration_timestamp_seconds"
REASONS = ("certificate_untrusted", "client_certificate", "protocol_version",
           "no_shared_cipher", "plain_http", "not_tls", "client_alert",
           "client_closed", "other")
WAIT = 10.0  # the longest any count or line may take to show (ASan)
HINT = ("the apiserver does not trust this certificate: check the caBundle "
        "in the webhook configurations matches the CA that signed "
        "--tls-cert-file")


class OwnServers(unittest.TestCase):
    """Tests that start their servers themselves, each stopped at the end
    (exit 0, no sanitizer report)."""

    def serve(self, name, args=(), cert=None, key=None):
        srv = Server("%s-%s" % (type(self).__name__, name), args, cert=cert,
                     key=key)
        srv.start()

        def stop():
            problems = srv.stop()
            if problems:
                self.fail("\n".join(problems))
        self.addCleanup(stop)
        return srv

    def samples(self, srv):
        st, _, body = http_get(srv.metrics, "/metrics")
        self.assertEqual(st, 200)
        return parse_metrics(body.decode())

    def failures(self, srv):
        """{reason: count} of the failures family; a reason the page
        lacks is missing from the dict."""
        return {labels.get("reason"): v for n, labels, v in self.samples(srv)
                if n == FAILURES}

    def wait_failures(self, srv, want):
        """Waits until every reason in want has reached its count (the
        server counts as it reads the client's alert, after the client
        has given up); returns the last reading."""
        deadline = time.monotonic() + WAIT
        while True:
            got = self.failures(srv)
            if all(got.get(r, 0) >= n for r, n in want.items()):
                return got
            if time.monotonic() > deadline:
                self.fail("%s: wanted at least %r, have %r\nlog:\n%s"
                          % (FAILURES, want, got, srv.log_tail()))
            time.sleep(0.05)

    @staticmethod
    def lines(srv, reason):
        """The text-format log lines that say a handshake failed for
        reason."""
        return [ln for ln in srv.log_text().splitlines()
                if 'msg="TLS handshake failed"' in ln
                and re.search(r"\breason=%s\b" % reason, ln)]

    def wait_lines(self, srv, reason, n):
        deadline = time.monotonic() + WAIT
        while len(self.lines(srv, reason)) < n:
            if time.monotonic() > deadline:
                self.fail("no %d log line(s) for %s:\n%s"
                          % (n, reason, srv.log_tail()))
            time.sleep(0.05)
        return self.lines(srv, reason)


def other_ca(test):
    """A CA (and pair) the server does not serve from."""
    d = tempfile.mkdtemp(prefix="other-ca.", dir=harness.WORK)
    test.addCleanup(shutil.rmtree, d, True)
    return gen_certs(d)


def handshake_refused(port, cafile, max_version=None):
    """A client that trusts cafile only: its handshake must fail on the
    server's certificate."""
    ctx = client_context([cafile], max_version=max_version)
    try:
        tls_socket(port, ctx, timeout=5).close()
    except ssl.SSLCertVerificationError:
        return True
    return False


def curl_untrusted(port, cafile):
    """curl with another CA: exit 60 (peer certificate cannot be
    authenticated), as the apiserver's x509 error."""
    p = subprocess.run(
        ["curl", "-sS", "--http1.1", "--tls-max", "1.2", "--cacert", cafile,
         "--resolve", "%s:%d:127.0.0.1" % (SNI, port), "--max-time", "5",
         "-o", "/dev/null", "https://%s:%d/validate" % (SNI, port)],
        capture_output=True, timeout=20)
    return p.returncode


def assert_answers(test, port):
    """A trusted client still gets its review answered."""
    c = Conn(port)
    try:
        review, _ = load_fixture("configmap-create")
        st, _, _ = c.call("POST", "/validate", compact(review))
    finally:
        c.close()
    test.assertEqual(st, 200)


class TestUntrustedCertificate(OwnServers):

    def test_untrusted_client_is_counted_and_said_once(self):
        srv = self.serve("text", ["--threads", "2"])
        other = other_ca(self)
        before = self.failures(srv)
        # The reproduction: on a webhook that counts nothing, the reason's
        # sample is missing and this waits in vain.
        self.assertTrue(handshake_refused(srv.port, other["ca.crt"]))
        self.assertTrue(handshake_refused(srv.port, other["ca.crt"],
                                          ssl.TLSVersion.TLSv1_2))
        self.assertEqual(curl_untrusted(srv.port, other["ca.crt"]), 60)
        got = self.wait_failures(srv, {"certificate_untrusted": 3})
        self.assertEqual(got["certificate_untrusted"], 3)
        # Only that reason moved.
        for r in REASONS:
            if r != "certificate_untrusted":
                self.assertEqual(got.get(r), before.get(r), r)
        # One line for all three: said at once, then once a minute.
        lines = self.wait_lines(srv, "certificate_untrusted", 1)
        time.sleep(0.3)
        lines = self.lines(srv, "certificate_untrusted")
        self.assertEqual(len(lines), 1, "\n".join(lines))
        line = lines[0]
        self.assertIn("level=warn", line)
        self.assertIn("failures=1 ", line)
        self.assertRegex(line, r"\bpeer=127\.0\.0\.1:\d+\b")
        self.assertIn('alert="unknown CA"', line)
        self.assertIn(HINT, line)
        # A fourth failure within the minute: counted, not said.
        self.assertTrue(handshake_refused(srv.port, other["ca.crt"]))
        self.wait_failures(srv, {"certificate_untrusted": 4})
        time.sleep(0.3)
        self.assertEqual(len(self.lines(srv, "certificate_untrusted")), 1)
        # The webhook itself is fine, and a good client moves nothing.
        assert_answers(self, srv.port)
        self.assertEqual(self.failures(srv)["certificate_untrusted"], 4)

    def test_json_log_line(self):
        srv = self.serve("json", ["--threads", "1", "--log-format", "json"])
        other = other_ca(self)
        self.assertTrue(handshake_refused(srv.port, other["ca.crt"]))
        self.assertTrue(handshake_refused(srv.port, other["ca.crt"]))
        self.wait_failures(srv, {"certificate_untrusted": 2})

        def said():
            # every line the server writes is one JSON object
            docs = [json.loads(ln) for ln in srv.log_text().splitlines()
                    if ln.startswith("{")]
            return [doc for doc in docs
                    if doc.get("msg") == "TLS handshake failed"]
        deadline = time.monotonic() + WAIT
        while not said() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
        docs = said()
        self.assertEqual(len(docs), 1, srv.log_tail())
        doc = docs[0]
        self.assertEqual(doc["level"], "warn")
        self.assertEqual(doc["reason"], "certificate_untrusted")
        self.assertEqual(doc["failures"], 1)
        self.assertRegex(doc["peer"], r"^127\.0\.0\.1:\d+$")
        self.assertIn(HINT, doc["hint"])


def send_and_close(port, data, wait=0.3):
    s = socket.create_connection(("127.0.0.1", port), 5)
    try:
        s.sendall(data)
        time.sleep(wait)
    finally:
        s.close()


class TestOtherReasons(OwnServers):

    def test_each_under_its_own_reason(self):
        srv = self.serve("default", ["--threads", "2"])
        # Plain HTTP to the TLS port (a probe or a client with http://).
        st = subprocess.run(
            ["curl", "-sS", "--max-time", "5", "-o", "/dev/null",
             "http://127.0.0.1:%d/validate" % srv.port],
            capture_output=True, timeout=20).returncode
        self.assertNotEqual(st, 0)
        # Bytes that are not TLS: a method OpenSSL does not spot, and text.
        send_and_close(srv.port, b"PATCH /validate HTTP/1.1\r\n\r\n")
        send_and_close(srv.port, b"hello there\r\n")
        # TLS 1.2 with CBC suites only (docs/DECISIONS.md "TLS 1.2 offers
        # AEAD suites only").
        ctx = client_context(max_version=ssl.TLSVersion.TLSv1_2)
        ctx.set_ciphers("ECDHE-ECDSA-AES128-SHA")
        with self.assertRaises(ssl.SSLError):
            tls_socket(srv.port, ctx, timeout=5).close()
        # A ClientHello, then the client hangs up without an alert.
        send_and_close(srv.port, client_hello())
        # A TCP connection that sends nothing never began TLS: not one.
        send_and_close(srv.port, b"", wait=0.1)
        got = self.wait_failures(srv, {"plain_http": 1, "not_tls": 2,
                                       "no_shared_cipher": 1,
                                       "client_closed": 1})
        self.assertEqual(got, {"plain_http": 1, "not_tls": 2,
                               "no_shared_cipher": 1, "client_closed": 1,
                               "certificate_untrusted": 0,
                               "client_certificate": 0,
                               "protocol_version": 0, "client_alert": 0,
                               "other": 0})
        # One line per reason, each with its own advice.
        for reason, words in (("plain_http", "plain HTTP"),
                              ("not_tls", "not TLS"),
                              ("no_shared_cipher", "cipher suite"),
                              ("client_closed", "without an alert")):
            with self.subTest(reason=reason):
                lines = self.wait_lines(srv, reason, 1)
                self.assertEqual(len(lines), 1, "\n".join(lines))
                self.assertIn(words, lines[0])
        # A client that trusts the CA: no reason moves.
        assert_answers(self, srv.port)
        self.assertEqual(self.failures(srv), got)

    def test_cut_handshakes_are_cuts_only(self):
        # --handshake-timeout-seconds cuts a connection in its handshake:
        # ota_webhook_connections_cut_total counts it, and the failures do
        # not count it again.
        srv = self.serve("deadline", ["--threads", "1",
                                      "--handshake-timeout-seconds", "1"])
        before = self.failures(srv)

        def cuts():
            return metric_sum(self.samples(srv),
                              "ota_webhook_connections_cut_total",
                              reason="handshake_timeout")
        cut0 = cuts()
        silent = silent_connection(srv.port)
        self.addCleanup(silent.close)
        half = silent_connection(srv.port)
        self.addCleanup(half.close)
        half.sendall(client_hello())  # and never answers the ServerHello
        self.assertTrue(closed_by_server_after_reading(half, 8))
        self.assertTrue(closed_by_server_after_reading(silent, 8))
        deadline = time.monotonic() + WAIT
        while cuts() < cut0 + 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(cuts(), cut0 + 2)
        time.sleep(0.3)
        self.assertEqual(self.failures(srv), before)
        self.assertEqual(self.lines(srv, r"\w+"), [])

    def test_version_and_client_certificate(self):
        d = tempfile.mkdtemp(prefix="client-pki.", dir=harness.WORK)
        self.addCleanup(shutil.rmtree, d, True)
        good = make_client_pki(d, "good")
        srv = self.serve("strict", ["--threads", "1", "--tls-min-version",
                                    "VersionTLS13", "--client-ca-file",
                                    good["ca"]])
        # TLS 1.2 only, against a TLS 1.3 minimum.
        with self.assertRaises(ssl.SSLError):
            tls_socket(srv.port, client_context(
                max_version=ssl.TLSVersion.TLSv1_2), timeout=5).close()
        # No client certificate: under TLS 1.3 the refusal arrives after
        # the client's Finished, so it shows on the first read.
        s = tls_socket(srv.port, timeout=5)
        with self.assertRaises((ssl.SSLError, ConnectionError)):
            s.sendall(b"GET / HTTP/1.1\r\n\r\n")
            if not s.recv(1):
                raise ConnectionError("closed")
        s.close()
        got = self.wait_failures(srv, {"protocol_version": 1,
                                       "client_certificate": 1})
        self.assertEqual((got["protocol_version"], got["client_certificate"],
                          got["certificate_untrusted"]), (1, 1, 0))
        self.assertIn("--tls-min-version",
                      self.wait_lines(srv, "protocol_version", 1)[0])
        self.assertIn("--client-ca-file",
                      self.wait_lines(srv, "client_certificate", 1)[0])


def enddate(path):
    """notAfter of a PEM certificate as `openssl x509 -enddate` prints
    it, in seconds since 1970."""
    out = subprocess.run(["openssl", "x509", "-noout", "-enddate", "-in",
                          path], capture_output=True, check=True,
                         timeout=30, text=True).stdout.strip()
    # notAfter=Nov 27 04:52:38 2027 GMT
    when = out.split("=", 1)[1]
    return calendar.timegm(time.strptime(when, "%b %d %H:%M:%S %Y %Z"))


def sign_pair(ca, outdir, days):
    """A serving pair for SNI signed by ca's CA, valid `days` days (so its
    notAfter differs from gen-certs.sh's year)."""
    os.makedirs(outdir, exist_ok=True)
    crt, key = os.path.join(outdir, "tls.crt"), os.path.join(outdir, "tls.key")
    csr, ext = os.path.join(outdir, "tls.csr"), os.path.join(outdir, "ext")
    with open(ext, "w") as f:
        f.write("basicConstraints=critical,CA:FALSE\n"
                "keyUsage=critical,digitalSignature\n"
                "extendedKeyUsage=serverAuth\n"
                "subjectAltName=DNS:%s,IP:127.0.0.1\n" % SNI)

    def run(*cmd):
        subprocess.run(cmd, check=True, timeout=60, capture_output=True)
    run("openssl", "req", "-new", "-newkey", "ec", "-pkeyopt",
        "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=%s" % SNI,
        "-keyout", key, "-out", csr)
    run("openssl", "x509", "-req", "-in", csr, "-CA", ca["ca.crt"], "-CAkey",
        ca["ca.key"], "-CAcreateserial", "-days", str(days), "-sha256",
        "-extfile", ext, "-out", crt)
    return {"tls.crt": crt, "tls.key": key}


class TestCertificateExpiry(OwnServers):

    def expiry(self, srv):
        vals = [v for n, _, v in self.samples(srv) if n == EXPIRY]
        self.assertEqual(len(vals), 1, "one %s sample" % EXPIRY)
        return vals[0]

    def test_gauge_is_not_after_and_follows_rotation(self):
        d = tempfile.mkdtemp(prefix="expiry.", dir=harness.WORK)
        self.addCleanup(shutil.rmtree, d, True)
        first = gen_certs(os.path.join(d, "first"))
        second = sign_pair(first, os.path.join(d, "second"), 30)
        live = os.path.join(d, "live")
        os.mkdir(live)
        for f in ("tls.crt", "tls.key"):
            shutil.copyfile(first[f], os.path.join(live, f))
        srv = self.serve("rotation", ["--threads", "1",
                                      "--cert-poll-interval-ms", "200"],
                         cert=os.path.join(live, "tls.crt"),
                         key=os.path.join(live, "tls.key"))
        text = http_get(srv.metrics, "/metrics")[2].decode()
        self.assertTrue(re.search(r"(?m)^# TYPE %s gauge$" % EXPIRY, text),
                        "no gauge %s on /metrics" % EXPIRY)
        self.assertEqual(self.expiry(srv), enddate(first["tls.crt"]))
        want = enddate(second["tls.crt"])
        self.assertNotEqual(want, enddate(first["tls.crt"]))
        # Key first, then the certificate, each by rename (as
        # test_cert_rotation.py): the gauge changes with the reload.
        for f in ("tls.key", "tls.crt"):
            tmp = os.path.join(live, f + ".tmp")
            shutil.copyfile(second[f], tmp)
            os.rename(tmp, os.path.join(live, f))
        deadline = time.monotonic() + WAIT
        while self.expiry(srv) != want and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(self.expiry(srv), want)
        # And it is the certificate now served.
        c = Conn(srv.port, context=client_context([first["ca.crt"]]))
        self.addCleanup(c.close)
        review, _ = load_fixture("configmap-create")
        self.assertEqual(c.call("POST", "/validate", compact(review))[0], 200)
        self.assertEqual(c.peer_fingerprint(),
                         harness.cert_fingerprint(second["tls.crt"]))
