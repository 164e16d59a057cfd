"""The command line and the TLS settings: bad flags and unusable certificate
files make the server exit non-zero with a message (and no sanitizer
report); what both daemons print and exit with for a set of command lines,
--help included, is pinned byte for byte (tests/fixtures/command_line/;
ota-controller from $OTA_CONTROLLER, else beside the webhook); TLS 1.2 and
1.3 are accepted by default, --tls-min-version VersionTLS13 refuses TLS 1.2;
TLS 1.2 offers AEAD suites only; --client-ca-file requires a client
certificate from its CAs.

Part of the integration suite: run_all.py runs it with the others (`make
integration`; one file: run_all.py -k 'test_command_line_and_tls.*').
"""

import json
import os
import re
import ssl
import subprocess
import tempfile
import unittest

import harness
from harness import (BINARY, Conn, Server, child_env, client_context,
                     compact, free_ports, load_fixture, sanitizer_lines,
                     tls_socket)


class TestCommandLine(unittest.TestCase):
    def run_bad(self, args):
        ports = free_ports(3)
        cmd = [BINARY, "--bind-address", "127.0.0.1:%d" % ports[0],
               "--health-probe-bind-address", "127.0.0.1:%d" % ports[1],
               "--metrics-bind-address", "127.0.0.1:%d" % ports[2]] + args
        try:
            p = subprocess.run(cmd, capture_output=True, timeout=10,
                               env=child_env(), stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            self.fail("%s did not exit within 10 s" % " ".join(args))
        err = p.stderr.decode("utf-8", "replace")
        self.assertNotEqual(p.returncode, 0, "accepted %s" % args)
        self.assertTrue(err.strip(), "no message on stderr for %s" % args)
        self.assertEqual(sanitizer_lines(err), [], err)

    def test_bad_command_lines_exit_nonzero(self):
        if not os.access(BINARY, os.X_OK):
            self.fail("server binary %s missing" % BINARY)
        cert = ["--tls-cert-file", harness.CERTS["tls.crt"],
                "--tls-private-key-file", harness.CERTS["tls.key"]]
        for args in ([],
                     ["--tls-cert-file", harness.CERTS["tls.crt"]],
                     cert + ["--no-such-flag"],
                     cert + ["--tls-min-version", "VersionTLS10"],
                     cert + ["--threads", "abc"],
                     cert + ["--max-request-bytes", "-1"],
                     ["--tls-cert-file",
                      os.path.join(harness.WORK, "missing.crt"),
                      "--tls-private-key-file", harness.CERTS["tls.key"]],
                     ["--tls-cert-file", harness.CERTS["tls.crt"],
                      "--tls-private-key-file", harness.CERTS["ca.key"]],
                     cert + ["--client-ca-file",
                             os.path.join(harness.WORK, "missing-ca.crt")],
                     cert + ["--client-ca-file", harness.CERTS["tls.key"]]):
            with self.subTest(args=args):
                self.run_bad(args)


PINNED = os.path.join(harness.FIXTURES, "command_line")
CONTROLLER = os.environ.get("OTA_CONTROLLER",
                            os.path.join(os.path.dirname(BINARY), "ota-controller"))


class TestPinnedCommandLine(unittest.TestCase):
    """Each row of tests/fixtures/command_line/PROGRAM.json is a command line
    and what the program printed and exited with before the flag table
    (lib/flagtab) replaced getopt: the same flags, spellings (getopt's
    abbreviations included), messages and exit codes.  "{help}" in a row
    stands for PROGRAM.help, the --help text.  The command lines end before
    the program does any work: a usage error, --help, or the first thing
    after the flags (the certificate files, the kubeconfig) failing."""

    def run_program(self, binary, name, args):
        env = child_env()
        env.pop("KUBECONFIG", None)  # the controller would read it
        # argv[0] as a container runs it: messages name the program so
        p = subprocess.run([name] + args, executable=binary, capture_output=True,
                           timeout=10, env=env, stdin=subprocess.DEVNULL)
        return p.returncode, p.stdout.decode(), p.stderr.decode()

    def check_program(self, binary, name):
        if not os.access(binary, os.X_OK):
            self.fail("%s missing" % binary)
        with open(os.path.join(PINNED, name + ".help")) as f:
            help_text = f.read()
        with open(os.path.join(PINNED, name + ".json")) as f:
            rows = json.load(f)
        for row in rows:
            with self.subTest(program=name, args=row["args"]):
                got = self.run_program(binary, name, row["args"])
                want = (row["rc"], row["stdout"].replace("{help}", help_text),
                        row["stderr"].replace("{help}", help_text))
                self.assertEqual(got, want)
        with open(os.path.join(harness.ROOT, "VERSION")) as f:
            version = f.read().strip()
        rc, out, err = self.run_program(binary, name, ["--version"])
        self.assertEqual((rc, err), (0, ""))
        self.assertRegex(out, r"\A%s %s \(commit \S+\)\n\Z" % (name, re.escape(version)))

    def test_webhook(self):
        self.check_program(BINARY, "ota-webhook")

    def test_controller(self):
        self.check_program(CONTROLLER, "ota-controller")


def assert_answers(test, port):
    """The server answers a review (after refused handshakes, say)."""
    c = Conn(port)
    review, _ = load_fixture("configmap-create")
    st, _, _ = c.call("POST", "/validate", compact(review))
    c.close()
    test.assertEqual(st, 200)


class TestTLSVersions(unittest.TestCase):
    def handshake(self, port, **ctxargs):
        s = tls_socket(port, client_context(**ctxargs), timeout=5)
        v = s.version()
        s.close()
        return v

    def test_default_accepts_tls12_and_tls13(self):
        srv = Server("tls-default")
        srv.start()
        try:
            self.assertEqual(self.handshake(
                srv.port, max_version=ssl.TLSVersion.TLSv1_2), "TLSv1.2")
            self.assertEqual(self.handshake(
                srv.port, min_version=ssl.TLSVersion.TLSv1_3), "TLSv1.3")
        finally:
            problems = srv.stop()
        self.assertEqual(problems, [])

    def test_min_tls13_rejects_tls12(self):
        srv = Server("tls13", ["--tls-min-version", "VersionTLS13"])
        srv.start()
        try:
            with self.assertRaises(ssl.SSLError):
                self.handshake(srv.port, max_version=ssl.TLSVersion.TLSv1_2)
            self.assertEqual(self.handshake(srv.port), "TLSv1.3")
            # And the server is fine after a failed handshake.
            assert_answers(self, srv.port)
        finally:
            problems = srv.stop()
        self.assertEqual(problems, [])


class TestTLSCiphers(unittest.TestCase):
    """TLS 1.2 offers AEAD suites only (webhook/tls.h, TLS_CIPHERS_TLS12):
    a client that offers nothing but CBC suites is refused, a modern one
    gets an ECDHE suite with GCM or ChaCha20-Poly1305, and the server
    answers after a refused handshake.  The serving certificate is ECDSA
    (certs/gen-certs.sh), so the ECDSA forms are the ones that can
    succeed."""

    CBC = ("ECDHE-ECDSA-AES128-SHA", "ECDHE-ECDSA-AES256-SHA",
           "ECDHE-ECDSA-AES128-SHA256", "ECDHE-ECDSA-AES256-SHA384")
    AEAD = ("ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384",
            "ECDHE-ECDSA-CHACHA20-POLY1305")

    @staticmethod
    def tls12_context(suites):
        ctx = client_context(max_version=ssl.TLSVersion.TLSv1_2)
        ctx.set_ciphers(suites)
        return ctx

    def test_tls12_offers_aead_only(self):
        srv = Server("tls-ciphers")
        srv.start()
        try:
            for suite in self.CBC:
                with self.subTest(refused=suite):
                    with self.assertRaises(ssl.SSLError):
                        tls_socket(srv.port, self.tls12_context(suite),
                                   timeout=5).close()
            for suite in self.AEAD:
                with self.subTest(accepted=suite):
                    s = tls_socket(srv.port, self.tls12_context(suite),
                                   timeout=5)
                    self.assertEqual((s.version(), s.cipher()[0]),
                                     ("TLSv1.2", suite))
                    s.close()
            # A client that offers CBC first still gets an AEAD suite.
            s = tls_socket(srv.port, self.tls12_context(
                ":".join(self.CBC + self.AEAD)), timeout=5)
            self.assertEqual(s.version(), "TLSv1.2")
            self.assertIn(s.cipher()[0], self.AEAD)
            s.close()
            # Python's defaults, as any client: TLS 1.2 negotiates AEAD.
            s = tls_socket(srv.port, client_context(
                max_version=ssl.TLSVersion.TLSv1_2), timeout=5)
            self.assertRegex(s.cipher()[0], r"^ECDHE-.*-(GCM-SHA\d+|CHACHA20-POLY1305)$")
            s.close()
            assert_answers(self, srv.port)
        finally:
            problems = srv.stop()
        self.assertEqual(problems, [])


def make_client_pki(outdir, name):
    """A CA and a client certificate it signs (ECDSA P-256, clientAuth),
    made with the openssl CLI as certs/gen-certs.sh makes the serving
    pair.  Returns {"ca": path, "crt": path, "key": path}."""
    os.makedirs(outdir, exist_ok=True)
    p = {k: os.path.join(outdir, "%s-%s" % (name, k))
         for k in ("ca.crt", "ca.key", "crt", "key", "csr", "ext")}

    def run(*cmd):
        subprocess.run(cmd, check=True, timeout=60, capture_output=True)

    run("openssl", "req", "-x509", "-new", "-newkey", "ec", "-pkeyopt",
        "ec_paramgen_curve:P-256", "-nodes", "-sha256", "-days", "2",
        "-subj", "/CN=%s-client-ca" % name, "-keyout", p["ca.key"],
        "-out", p["ca.crt"],
        "-addext", "basicConstraints=critical,CA:TRUE,pathlen:0",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    run("openssl", "req", "-new", "-newkey", "ec", "-pkeyopt",
        "ec_paramgen_curve:P-256", "-nodes", "-subj",
        "/CN=kube-apiserver-webhook-client", "-keyout", p["key"],
        "-out", p["csr"])
    with open(p["ext"], "w") as f:
        f.write("basicConstraints=critical,CA:FALSE\n"
                "keyUsage=critical,digitalSignature\n"
                "extendedKeyUsage=clientAuth\n")
    run("openssl", "x509", "-req", "-in", p["csr"], "-CA", p["ca.crt"],
        "-CAkey", p["ca.key"], "-CAcreateserial", "-days", "2", "-sha256",
        "-extfile", p["ext"], "-out", p["crt"])
    return {"ca": p["ca.crt"], "crt": p["crt"], "key": p["key"]}


class TestClientCA(unittest.TestCase):
    """--client-ca-file (docs/operations.md "Client certificates"): a
    client without a certificate, or with one from another CA, fails the
    handshake (under TLS 1.3 the server's refusal arrives after the
    client's Finished, so it shows on the first read); one from the
    configured CA gets its answer.  Without the flag no certificate is
    asked (every other class)."""

    @classmethod
    def setUpClass(cls):
        d = tempfile.mkdtemp(prefix="client-pki.", dir=harness.WORK)
        cls.good = make_client_pki(d, "good")
        cls.other = make_client_pki(d, "other")

    def exchange(self, port, cert=None, max_version=None):
        """One review over a new connection; returns the HTTP status, or
        raises what the TLS layer raised."""
        ctx = client_context(max_version=max_version)
        if cert is not None:
            ctx.load_cert_chain(cert["crt"], cert["key"])
        c = Conn(port, context=ctx, timeout=5)
        try:
            review, _ = load_fixture("configmap-create")
            st, _, _ = c.call("POST", "/validate", compact(review))
            return st
        finally:
            c.close()

    def test_client_certificate_required(self):
        srv = Server("client-ca", ["--client-ca-file", self.good["ca"]])
        srv.start()
        try:
            for version in (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3):
                with self.subTest(version=version.name, cert="none"):
                    with self.assertRaises((ssl.SSLError, ConnectionError)):
                        self.exchange(srv.port, None, version)
                with self.subTest(version=version.name, cert="other CA"):
                    with self.assertRaises((ssl.SSLError, ConnectionError)):
                        self.exchange(srv.port, self.other, version)
                with self.subTest(version=version.name, cert="the CA's"):
                    self.assertEqual(
                        self.exchange(srv.port, self.good, version), 200)
        finally:
            problems = srv.stop()
        self.assertEqual(problems, [])

    def test_without_the_flag_no_certificate_is_asked(self):
        srv = Server("no-client-ca")
        srv.start()
        try:
            self.assertEqual(self.exchange(srv.port), 200)
            # one offered anyway is not asked for, and does no harm
            self.assertEqual(self.exchange(srv.port, self.other), 200)
        finally:
            problems = srv.stop()
        self.assertEqual(problems, [])
