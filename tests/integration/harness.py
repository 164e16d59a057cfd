"""The shared harness of ota-webhook's integration suite; it holds no tests.

Every test_*.py file of this directory imports from here, and run_all.py
(what `make integration` runs) runs them all in one process. Here:
  - Server: one ota-webhook process on free 127.0.0.1 ports, stopped with
    SIGTERM, which must exit 0 with no AddressSanitizer / LeakSanitizer /
    "runtime error:" line on its stderr;
  - ServerTestCase: the base class of tests that share one Server per class
    (SERVER_ARGS), with the assertions on AdmissionReview and Status answers;
  - clients that talk like the kube-apiserver (SNI ota-webhook.ota-system.svc,
    keep-alive): Conn, client_context, tls_socket, raw_exchange, http_get,
    and curl_batch (several POSTs in one curl run; HTTP/2 asked for or not);
  - the fixtures of tests/fixtures: load_fixture, compact, FIXTURE_CASES
    (what each must produce);
  - diff_objects: a patched object against an <name>.expected.json;
  - parse_metrics / metric_sum: the Prometheus text of /metrics
    (tests/lib/promtext.py's parse and sum_of);
  - json_patch and ApiError: kubesim's RFC 6902 JSON Patch applier
    (tests/kubesim/kubesim/patch.py), the one the simulated apiserver applies
    webhook patches with; tests/kubesim is put on sys.path for it.

WORK and CERTS are None until run_all.main() sets them: read them as
harness.WORK and harness.CERTS at test time, never import them by name.
Python 3 standard library only.
"""

import base64
import datetime
import hashlib
import http.client
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
GEN_CERTS = os.path.join(ROOT, "certs", "gen-certs.sh")
SNI = "ota-webhook.ota-system.svc"
STAMPED = "$STAMPED_NOW"
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                     "runtime error:")
# Bounds on every wait. The ASan build starts and answers more slowly.
START_TIMEOUT = 20.0
EXIT_TIMEOUT = 15.0
IO_TIMEOUT = 15.0

BINARY = os.environ.get("OTA_WEBHOOK", "build/ota-webhook")
if not os.path.isabs(BINARY):
    BINARY = os.path.join(ROOT, BINARY)

# Set by run_all.main() before any test runs: a temporary directory and the
# certificates in it. Read them as harness.WORK and harness.CERTS.
WORK = None
CERTS = None

# JSON Patch (RFC 6902) is kubesim's: json_patch(doc, ops) returns a patched
# copy or raises ApiError. json_equal is JSON equality (true is not 1).
sys.path.insert(0, os.path.join(ROOT, "tests", "kubesim"))
from kubesim.errors import ApiError  # noqa: E402
from kubesim.patch import json_equal, json_patch  # noqa: E402

# The Prometheus text of /metrics is read by tests/lib/promtext.py, the
# parser every suite uses: parse_metrics(text) -> [(name, labels, value)],
# metric_sum(samples, name, **labels).
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from promtext import parse as parse_metrics, sum_of as metric_sum  # noqa: E402,F401

# --------------------------------------------------------------------------
# Comparing a patched object with an expected file.

RFC3339_UTC = re.compile(
    r"^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(\.\d{1,9})?Z$")


def check_stamp(value):
    """None when `value` is an RFC 3339 UTC time within a minute of now,
    else what is wrong with it."""
    if not isinstance(value, str):
        return "stamp %r is not a string" % (value,)
    m = RFC3339_UTC.match(value)
    if not m:
        return "stamp %r is not RFC 3339 UTC (…Z)" % value
    try:
        t = datetime.datetime(*map(int, m.groups()[:6]),
                              tzinfo=datetime.timezone.utc)
    except ValueError as e:
        return "stamp %r: %s" % (value, e)
    skew = abs((datetime.datetime.now(datetime.timezone.utc) - t)
               .total_seconds())
    if skew > 60:
        return "stamp %r is %d s away from now" % (value, skew)
    return None


def _sorted_conditions(lst):
    # Pod conditions are a map keyed by `type` (listType=map): where the
    # webhook puts a restored condition in the array does not matter.
    if all(isinstance(c, dict) and isinstance(c.get("type"), str)
           for c in lst):
        return sorted(lst, key=lambda c: c["type"])
    return lst


def diff_objects(exp, act, path="", out=None):
    """Differences between an expected and an actual document, as readable
    lines. "$STAMPED_NOW" in `exp` (only as a lastTransitionTime) matches a
    fresh RFC 3339 UTC time."""
    if out is None:
        out = []
    if isinstance(exp, str) and exp == STAMPED:
        if not path.endswith("/lastTransitionTime"):
            out.append("%s: fixture uses %s outside lastTransitionTime"
                       % (path, STAMPED))
        err = check_stamp(act)
        if err:
            out.append("%s: %s" % (path, err))
        return out
    if isinstance(exp, dict) and isinstance(act, dict):
        for k in exp:
            if k not in act:
                out.append("%s/%s: missing (expected %s)"
                           % (path, k, json.dumps(exp[k])[:200]))
            else:
                diff_objects(exp[k], act[k], path + "/" + k, out)
        for k in act:
            if k not in exp:
                out.append("%s/%s: unexpected %s"
                           % (path, k, json.dumps(act[k])[:200]))
        return out
    if isinstance(exp, list) and isinstance(act, list):
        if path.endswith("/conditions"):
            exp, act = _sorted_conditions(exp), _sorted_conditions(act)
        if len(exp) != len(act):
            out.append("%s: %d elements, expected %d: got %s"
                       % (path, len(act), len(exp), json.dumps(act)[:400]))
            return out
        for i, (e, a) in enumerate(zip(exp, act)):
            diff_objects(e, a, "%s/%d" % (path, i), out)
        return out
    if not json_equal(exp, act):
        out.append("%s: got %s, expected %s"
                   % (path, json.dumps(act)[:200], json.dumps(exp)[:200]))
    return out


# --------------------------------------------------------------------------
# Processes, ports, clients.

def free_ports(n):
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def gen_certs(outdir):
    subprocess.run([GEN_CERTS, outdir], check=True, timeout=60,
                   stdout=subprocess.DEVNULL)
    return {k: os.path.join(outdir, k)
            for k in ("ca.crt", "ca.key", "tls.crt", "tls.key")}


def cert_fingerprint(path):
    pem = open(path).read()
    return hashlib.sha256(ssl.PEM_cert_to_DER_cert(pem)).hexdigest()


def child_env():
    env = dict(os.environ)
    # Defaults for the sanitizer build; a caller's settings win.
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1")
    return env


def sanitizer_lines(text):
    return [ln for ln in text.splitlines()
            if any(m in ln for m in SANITIZER_MARKERS)]


class Server:
    """One ota-webhook process on 127.0.0.1 with free ports."""

    def __init__(self, name, args=(), cert=None, key=None):
        self.name = name
        self.args = list(args)
        self.cert = cert or CERTS["tls.crt"]
        self.key = key or CERTS["tls.key"]
        self.proc = None
        self.log_path = os.path.join(WORK, "%s.log" % name)
        self.starts = 0

    def start(self, attempts=3):
        """Starts the server and waits for /readyz. The free ports may be
        taken by someone else between our probe and the server's bind (other
        suites run in parallel): then it tries again on new ones."""
        for attempt in range(attempts):
            try:
                return self._start_once()
            except AssertionError as e:
                if attempt == attempts - 1 or \
                        "in use" not in str(e).lower():
                    raise
        raise AssertionError("unreachable")

    def _start_once(self):
        if not os.access(BINARY, os.X_OK):
            raise AssertionError(
                "server binary %s does not exist or is not executable "
                "(build it, or set OTA_WEBHOOK)" % BINARY)
        self.port, self.health, self.metrics = free_ports(3)
        self.starts += 1
        cmd = [BINARY,
               "--tls-cert-file", self.cert,
               "--tls-private-key-file", self.key,
               "--bind-address", "127.0.0.1:%d" % self.port,
               "--health-probe-bind-address", "127.0.0.1:%d" % self.health,
               "--metrics-bind-address", "127.0.0.1:%d" % self.metrics,
               ] + self.args
        self.cmd = cmd
        log = open(self.log_path, "ab")
        log.write(("=== start %d: %s\n" % (self.starts, " ".join(cmd)))
                  .encode())
        log.flush()
        self.log_offset = log.tell()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                     stdout=log, stderr=log, env=child_env())
        log.close()
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(
                    "%s exited with %s before it was ready:\n%s"
                    % (self.name, self.proc.returncode, self.log_tail()))
            try:
                st, _, _ = http_get(self.health, "/readyz", timeout=1)
                if st == 200:
                    return self
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.kill()
                raise AssertionError(
                    "%s not ready on /readyz within %.0f s:\n%s"
                    % (self.name, START_TIMEOUT, self.log_tail()))
            time.sleep(0.05)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def log_text(self):
        try:
            with open(self.log_path, "rb") as f:
                f.seek(self.log_offset)
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def log_tail(self, n=40):
        return "\n".join(self.log_text().splitlines()[-n:])

    def kill(self):
        if self.alive():
            self.proc.kill()
            self.proc.wait(timeout=EXIT_TIMEOUT)

    def stop(self):
        """SIGTERM; returns a list of problems (empty when it exited 0
        within EXIT_TIMEOUT with no sanitizer report)."""
        if self.proc is None:
            return []
        problems = []
        if self.proc.poll() is not None:
            problems.append("%s had already exited with %s"
                            % (self.name, self.proc.returncode))
        else:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=EXIT_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=EXIT_TIMEOUT)
                problems.append("%s did not exit within %.0f s of SIGTERM"
                                % (self.name, EXIT_TIMEOUT))
            if self.proc.returncode != 0 and not problems:
                problems.append("%s exited with %s on SIGTERM, expected 0"
                                % (self.name, self.proc.returncode))
        bad = sanitizer_lines(self.log_text())
        if bad:
            problems.append("%s: sanitizer reports:\n  %s"
                            % (self.name, "\n  ".join(bad[:20])))
        if problems:
            problems.append("log tail:\n" + self.log_tail(60))
        self.proc = None
        return problems


def client_context(cafiles=None, max_version=None, min_version=None,
                   alpn=None):
    ctx = ssl.create_default_context()
    ctx.load_verify_locations(cafile=(cafiles or [CERTS["ca.crt"]])[0])
    for ca in (cafiles or [])[1:]:
        ctx.load_verify_locations(cafile=ca)
    if max_version:
        ctx.maximum_version = max_version
    if min_version:
        ctx.minimum_version = min_version
    if alpn:
        ctx.set_alpn_protocols(alpn)
    return ctx


class Conn(http.client.HTTPSConnection):
    """An HTTPS connection to 127.0.0.1 that sends the apiserver's SNI and
    verifies the certificate for it; counts how often it (re)connects."""

    def __init__(self, port, context=None, timeout=IO_TIMEOUT):
        super().__init__(SNI, port, timeout=timeout,
                         context=context or client_context())
        self.connects = 0

    def connect(self):
        sock = socket.create_connection(("127.0.0.1", self.port),
                                        self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=SNI)
        self.connects += 1

    def peer_fingerprint(self):
        return hashlib.sha256(self.sock.getpeercert(binary_form=True)) \
            .hexdigest()

    def call(self, method, path, body=None, headers=None):
        """Returns (status, {lower-case header: value}, body bytes)."""
        h = {"Content-Type": "application/json", "Accept": "application/json"}
        if headers:
            h.update(headers)
        self.request(method, path, body=body, headers=h)
        r = self.getresponse()
        data = r.read()
        hdrs = {}
        for k, v in r.getheaders():
            hdrs[k.lower()] = v if k.lower() not in hdrs \
                else hdrs[k.lower()] + ", " + v
        return r.status, hdrs, data


def http_get(port, path, timeout=IO_TIMEOUT):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("GET", path)
        r = c.getresponse()
        body = r.read()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, body
    finally:
        c.close()


def client_hello():
    """The bytes of a TLS ClientHello (Python's, TLS 1.2 and 1.3)."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(incoming, outgoing, server_hostname=SNI)
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outgoing.read()


def tls_socket(port, context=None, timeout=IO_TIMEOUT):
    s = socket.create_connection(("127.0.0.1", port), timeout)
    return (context or client_context()).wrap_socket(s, server_hostname=SNI)


def read_until_closed(sock, timeout, done=None):
    """Reads until EOF (or until done(bytes so far) holds); returns (bytes,
    seconds waited, closed?)."""
    t0 = time.monotonic()
    data = b""
    while True:
        left = timeout - (time.monotonic() - t0)
        if left <= 0 or (done is not None and done(data)):
            return data, time.monotonic() - t0, False
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except (socket.timeout, TimeoutError):
            return data, time.monotonic() - t0, False
        except (ssl.SSLError, ConnectionError, OSError):
            return data, time.monotonic() - t0, True
        if not chunk:
            return data, time.monotonic() - t0, True
        data += chunk


def raw_exchange(port, data, timeout=10):
    """Sends `data` (a whole HTTP/1.1 request) on a new TLS connection and
    parses the one response. A server may answer and close before it has
    read everything (413): a failed write is tolerated, a missing answer
    is not. Returns (status, {lower-case header: value}, body)."""
    s = tls_socket(port)
    try:
        try:
            s.sendall(data)
        except OSError:
            pass
        raw, _, _ = read_until_closed(s, timeout)
    finally:
        s.close()
    head, sep, body = raw.partition(b"\r\n\r\n")
    if not sep:
        raise AssertionError("no HTTP response: %r" % raw[:300])
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    hdrs = {}
    for ln in lines[1:]:
        k, _, v = ln.partition(":")
        hdrs[k.strip().lower()] = v.strip()
    if "content-length" in hdrs:
        body = body[:int(hdrs["content-length"])]
    return status, hdrs, body


def crd_review(obj, group, resource, operation="CREATE", old=None, uid="0d7f3c1a-2b4e-4f60-8a9d-5e6f7a8b9c0d"):
    """The AdmissionReview the apiserver sends for a custom resource obj of
    group/resource (its version and kind from obj), as an admin."""
    version = obj["apiVersion"].split("/")[1]
    kind = {"group": group, "version": version, "kind": obj["kind"]}
    res = {"group": group, "version": version, "resource": resource}
    req = {"uid": uid, "kind": kind, "resource": res, "requestKind": kind, "requestResource": res,
           "name": obj["metadata"]["name"], "namespace": obj["metadata"]["namespace"],
           "operation": operation,
           "userInfo": {"username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]},
           "object": obj, "oldObject": old, "dryRun": False,
           "options": {"kind": "CreateOptions" if operation == "CREATE" else "UpdateOptions",
                       "apiVersion": "meta.k8s.io/v1"}}
    return {"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "request": req}


def compact(doc):
    return json.dumps(doc, separators=(",", ":")).encode()


def load_fixture(name):
    with open(os.path.join(FIXTURES, name + ".json")) as f:
        review = json.load(f)
    with open(os.path.join(FIXTURES, name + ".expected.json")) as f:
        expected = json.load(f)
    return review, expected


def curl_batch(port, transfers, http2=False, timeout=60):
    """One curl invocation, several POSTs (--next) that may share one
    connection. transfers: [(path, body bytes)]. Returns a list of dicts:
    the %{json} write-out plus 'body' and 'headers' (lower-case)."""
    d = tempfile.mkdtemp(dir=WORK, prefix="curl.")
    args = ["curl", "-sS"]
    for i, (path, body) in enumerate(transfers):
        bodyf = os.path.join(d, "req%d" % i)
        with open(bodyf, "wb") as f:
            f.write(body)
        if i:
            args.append("--next")
        args += ["-sS", "--http2" if http2 else "--http1.1",
                 "--cacert", CERTS["ca.crt"],
                 "--resolve", "%s:%d:127.0.0.1" % (SNI, port),
                 "--max-time", str(timeout),
                 "-H", "Content-Type: application/json",
                 "-H", "Accept: application/json",
                 "-H", "Expect:",
                 "--data-binary", "@" + bodyf,
                 "-o", os.path.join(d, "resp%d" % i),
                 "-D", os.path.join(d, "hdr%d" % i),
                 "-w", "%{json}\n",
                 "https://%s:%d%s" % (SNI, port, path)]
    p = subprocess.run(args, capture_output=True, timeout=timeout + 10)
    lines = [ln for ln in p.stdout.decode().splitlines() if ln.strip()]
    if p.returncode != 0 or len(lines) != len(transfers):
        raise AssertionError("curl failed (exit %d): %s\n%s"
                             % (p.returncode, p.stderr.decode()[-2000:],
                                p.stdout.decode()[-2000:]))
    out = []
    for i, ln in enumerate(lines):
        w = json.loads(ln)
        try:
            with open(os.path.join(d, "resp%d" % i), "rb") as f:
                w["body"] = f.read()
        except FileNotFoundError:
            w["body"] = b""
        hdrs = {}
        with open(os.path.join(d, "hdr%d" % i), "rb") as f:
            for hl in f.read().decode("latin-1").split("\r\n")[1:]:
                if ":" in hl:
                    k, v = hl.split(":", 1)
                    hdrs[k.strip().lower()] = v.strip()
        w["headers"] = hdrs
        out.append(w)
    shutil.rmtree(d, ignore_errors=True)
    return out


# --------------------------------------------------------------------------
# What the fixtures must produce (DESIGN §3/§4, DECISIONS).
#   patched: the mutating webhook returns a patch (False: no patch at all);
#   warn: a warning mentioning this word is required (None: no warnings);
#   validate: verdict of /validate on the object after mutation;
#   validate_raw: verdict of /validate on the review as received (what
#     happens when the mutating webhook, failurePolicy Ignore, did not run);
#   deny: substrings every denial message must contain.
POD_REF = "edge/edge-agent-x7k2p"
FIXTURE_CASES = {
    "pod-status-kubelet-routine": dict(patched=False, validate=True),
    "pod-status-prepull-kubectl": dict(patched=False, validate=True),
    "pod-status-prepull-yurthub": dict(
        patched=True, warn="kept PodNeedUpgrade", validate=True,
        validate_raw=False,
        deny=[POD_REF, "rule"]),
    "pod-status-controller-ready": dict(patched=False, validate=True),
    "pod-status-node-claims-ready": dict(
        patched=False, validate=False, deny=[POD_REF, "rule", "Pulling"]),
    "pod-status-other-node": dict(
        patched=False, validate=False,
        deny=[POD_REF, "rule", "PendingUpgrade"]),
    "ds-create-ota-rollingupdate": dict(
        patched=True, warn="OnDelete", validate=True, validate_raw=False,
        deny=["OnDelete"]),
    "ds-create-ota-no-strategy": dict(
        patched=True, warn="OnDelete", validate=True, validate_raw=False,
        deny=["OnDelete"]),
    "ds-update-ota-ondelete": dict(patched=False, validate=True),
    "ds-create-invalid-strategy": dict(
        patched=False, validate=False,
        deny=["OTA", "AdvancedRollingUpdate"]),
    "ds-create-bad-timeout": dict(
        patched=False, validate=False,
        deny=["apps.openyurt.io/image-prepull-timeout-seconds"]),
    "ds-create-advanced-rolling-update": dict(patched=False, validate=True),
    "configmap-create": dict(patched=False, validate=True),
}

# --------------------------------------------------------------------------
# The base class of tests that share one server.

class ServerTestCase(unittest.TestCase):
    """Tests that share one server per class. SERVER_ARGS configures it.
    A crashed server fails the test that was running and is restarted; at
    the end it must exit 0 on SIGTERM with no sanitizer report."""

    SERVER_ARGS = ()
    server = None
    start_error = None

    @classmethod
    def setUpClass(cls):
        cls.server = Server(cls.__name__, cls.SERVER_ARGS)
        cls.start_error = None

    @classmethod
    def tearDownClass(cls):
        problems = cls.server.stop() if cls.server else []
        if problems:
            raise AssertionError("server of %s at shutdown: %s"
                                 % (cls.__name__, "\n".join(problems)))

    def setUp(self):
        srv = type(self).server
        if not srv.alive():
            if srv.proc is not None:
                # Crashed during an earlier test (already reported there).
                srv.stop()
            try:
                srv.start()
            except AssertionError as e:
                self.fail(str(e))

    def tearDown(self):
        srv = type(self).server
        if srv.proc is not None and srv.proc.poll() is not None:
            text = srv.log_tail(60)
            rc = srv.proc.returncode
            srv.proc = None
            why = ""
            if rc == 0 and "signal 15" in text:
                # This suite signals a shared server only in tearDownClass.
                why = (" after a SIGTERM this suite did not send (another "
                       "process signalled it; a recycled PID?)")
            self.fail("server died during this test (exit %s)%s:\n%s"
                      % (rc, why, text))

    # -- helpers ----------------------------------------------------------

    @property
    def port(self):
        return type(self).server.port

    def conn(self, **kw):
        c = Conn(self.port, **kw)
        self.addCleanup(c.close)
        return c

    def assert_status_body(self, st, hdrs, body, code, mentions=None):
        """An HTTP error answer: `code`, a content-length, and a meta/v1
        Status body whose message mentions one of `mentions`."""
        self.assertEqual(st, code, "HTTP status: body %r" % body[:300])
        self.assertIn("content-length", hdrs, "no content-length header")
        self.assertEqual(int(hdrs["content-length"]), len(body))
        self.assertTrue(hdrs.get("content-type", "").startswith(
            "application/json"), "content-type %r" % hdrs.get("content-type"))
        try:
            doc = json.loads(body)
        except ValueError:
            self.fail("error body is not JSON: %r" % body[:300])
        self.assertIsInstance(doc, dict, body[:300])
        self.assertEqual(doc.get("kind"), "Status", doc)
        self.assertEqual(doc.get("apiVersion"), "v1", doc)
        self.assertEqual(doc.get("status"), "Failure", doc)
        self.assertEqual(doc.get("code"), code, doc)
        self.assertIsInstance(doc.get("reason"), str, doc)
        self.assertTrue(doc["reason"], "empty reason: %r" % doc)
        msg = doc.get("message")
        self.assertIsInstance(msg, str, doc)
        self.assertTrue(msg, "empty message")
        if mentions:
            self.assertTrue(
                any(m.lower() in msg.lower() for m in mentions),
                "message %r names none of %r" % (msg, mentions))
        return doc

    def assert_review(self, st, hdrs, body, uid, denial_codes=(403,)):
        """A 200 AdmissionReview answer for `uid` (a denial's status.code one
        of denial_codes); returns (response, decoded patch or None)."""
        self.assertEqual(st, 200, "HTTP status: body %r" % body[:500])
        self.assertIn("content-length", hdrs, "no content-length header")
        self.assertEqual(int(hdrs["content-length"]), len(body))
        self.assertTrue(hdrs.get("content-type", "").startswith(
            "application/json"), "content-type %r" % hdrs.get("content-type"))
        doc = json.loads(body)
        self.assertEqual(doc.get("apiVersion"), "admission.k8s.io/v1", doc)
        self.assertEqual(doc.get("kind"), "AdmissionReview", doc)
        resp = doc.get("response")
        self.assertIsInstance(resp, dict, doc)
        self.assertEqual(resp.get("uid"), uid, doc)
        self.assertIsInstance(resp.get("allowed"), bool, doc)
        patch = None
        if "patch" in resp:
            self.assertEqual(resp.get("patchType"), "JSONPatch", resp)
            self.assertIsInstance(resp["patch"], str, resp)
            patch = json.loads(base64.b64decode(resp["patch"],
                                                validate=True))
            self.assertIsInstance(patch, list, patch)
        else:
            self.assertNotIn("patchType", resp)
        if "warnings" in resp:
            self.assertIsInstance(resp["warnings"], list, resp)
            for w in resp["warnings"]:
                self.assertIsInstance(w, str, resp)
        if not resp["allowed"]:
            status = resp.get("status")
            self.assertIsInstance(status, dict, resp)
            self.assertIn(status.get("code"), denial_codes, resp)
            self.assertIsInstance(status.get("message"), str, resp)
            self.assertTrue(status["message"], resp)
            self.assertIsNone(patch, "a denial carries a patch: %r" % resp)
        return resp, patch

    def valid_review(self, uid="00000000-0000-4000-8000-000000000001"):
        review, _ = load_fixture("ds-create-ota-rollingupdate")
        review["request"]["uid"] = uid
        return review

    def assert_still_serving(self, conn=None):
        """A valid review still gets its answer (on `conn`: the same
        keep-alive connection, which must not have reconnected)."""
        uid = "5e1f0000-0000-4000-8000-00000000beef"
        c = conn or self.conn()
        before = c.connects
        st, hdrs, body = c.call("POST", "/mutate?timeout=10s",
                                compact(self.valid_review(uid)))
        self.assert_review(st, hdrs, body, uid)
        if conn is not None and before:
            self.assertEqual(c.connects, before,
                             "the keep-alive connection was closed after "
                             "the previous answer")
        st, _, body = http_get(type(self).server.health, "/healthz")
        self.assertEqual(st, 200)
