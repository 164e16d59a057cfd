#!/usr/bin/env python3
"""Integration tests of ota-webhook: the real server, on loopback, over TLS.

Starts build/ota-webhook (or $OTA_WEBHOOK, e.g. the ASan build) with
certificates from certs/gen-certs.sh, and drives it the way the
kube-apiserver does (HTTP/1.1 keep-alive, POST application/json,
`/mutate?timeout=10s`, SNI ota-webhook.ota-system.svc), with curl and with
Python's http.client/ssl. Python 3 standard library only.

What is checked, against ../../../shared/DESIGN.md §3/§4 and
docs/DECISIONS.md:
  - the AdmissionReview fixtures of tests/fixtures: the patch the mutating
    webhook returns, applied with an RFC 6902 applier written here, gives
    <name>.expected.json; the validating webhook's verdict on the mutated
    object (the apiserver runs validating webhooks after mutating ones);
    over HTTP/1.1 keep-alive and over HTTP/2;
  - malformed input of every kind answers 400/404/405/413 with a
    meta/v1 Status body and a content-length, keeps the connection, and the
    server keeps serving;
  - a client stalled mid-request is cut after --request-read-timeout-seconds;
  - certificate rotation under traffic, SIGTERM drain, health and metrics.

Every server is stopped with SIGTERM at the end and must exit 0 with no
sanitizer report on its stderr (the same suite runs against the ASan+UBSan
build).

Usage: tests/integration/run_tests.py [-k PATTERN] [-v]
Prints "N passed, N failed" as its last line; exits 1 on any failure.
"""

import argparse
import base64
import copy
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
import threading
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

# Set by main(): a temporary directory and the certificates in it.
WORK = None
CERTS = None


# --------------------------------------------------------------------------
# RFC 6902 JSON Patch and RFC 6901 JSON Pointer, as the apiserver applies
# them (evanphx/json-patch semantics for the operations we accept).

class PatchError(Exception):
    pass


def pointer_tokens(ptr):
    if ptr == "":
        return []
    if not isinstance(ptr, str) or not ptr.startswith("/"):
        raise PatchError("bad JSON pointer %r" % (ptr,))
    toks = ptr[1:].split("/")
    out = []
    for t in toks:
        if re.search(r"~(?![01])", t):
            raise PatchError("bad escape in JSON pointer %r" % ptr)
        out.append(t.replace("~1", "/").replace("~0", "~"))
    return out


def _index(container, tok, allow_end):
    if allow_end and tok == "-":
        return len(container)
    if not re.fullmatch(r"0|[1-9][0-9]*", tok):
        raise PatchError("bad array index %r" % tok)
    i = int(tok)
    limit = len(container) + (1 if allow_end else 0)
    if i >= limit:
        raise PatchError("array index %d out of range" % i)
    return i


def _parent(doc, toks):
    cur = doc
    for t in toks[:-1]:
        if isinstance(cur, dict):
            if t not in cur:
                raise PatchError("path component %r missing" % t)
            cur = cur[t]
        elif isinstance(cur, list):
            cur = cur[_index(cur, t, False)]
        else:
            raise PatchError("path goes through a scalar at %r" % t)
    return cur


def _get(doc, ptr):
    toks = pointer_tokens(ptr)
    if not toks:
        return doc
    par = _parent(doc, toks)
    last = toks[-1]
    if isinstance(par, dict):
        if last not in par:
            raise PatchError("%s does not exist" % ptr)
        return par[last]
    if isinstance(par, list):
        return par[_index(par, last, False)]
    raise PatchError("%s: parent is a scalar" % ptr)


def _add(doc, ptr, value):
    toks = pointer_tokens(ptr)
    if not toks:
        return value
    par = _parent(doc, toks)
    last = toks[-1]
    if isinstance(par, dict):
        par[last] = value
    elif isinstance(par, list):
        par.insert(_index(par, last, True), value)
    else:
        raise PatchError("%s: parent is a scalar" % ptr)
    return doc


def _remove(doc, ptr):
    toks = pointer_tokens(ptr)
    if not toks:
        raise PatchError("cannot remove the root")
    par = _parent(doc, toks)
    last = toks[-1]
    if isinstance(par, dict):
        if last not in par:
            raise PatchError("%s does not exist" % ptr)
        return par.pop(last)
    if isinstance(par, list):
        return par.pop(_index(par, last, False))
    raise PatchError("%s: parent is a scalar" % ptr)


def json_equal(a, b):
    """JSON equality: unlike Python's ==, true is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    return a == b


def apply_patch(doc, ops):
    """Returns a new document: `ops` (a decoded RFC 6902 array) applied to
    a deep copy of `doc`. Raises PatchError on any invalid operation."""
    if not isinstance(ops, list):
        raise PatchError("a JSON Patch is an array")
    doc = copy.deepcopy(doc)
    for op in ops:
        if not isinstance(op, dict) or not isinstance(op.get("op"), str) \
                or not isinstance(op.get("path"), str):
            raise PatchError("malformed operation %r" % (op,))
        kind, path = op["op"], op["path"]
        if kind in ("add", "replace", "test") and "value" not in op:
            raise PatchError("%s without value" % kind)
        if kind == "add":
            doc = _add(doc, path, copy.deepcopy(op["value"]))
        elif kind == "remove":
            _remove(doc, path)
        elif kind == "replace":
            if pointer_tokens(path):
                _get(doc, path)  # must exist
                _remove(doc, path)
            doc = _add(doc, path, copy.deepcopy(op["value"]))
        elif kind == "test":
            if not json_equal(_get(doc, path), op["value"]):
                raise PatchError("test failed at %s" % path)
        elif kind in ("move", "copy"):
            src = op.get("from")
            if not isinstance(src, str):
                raise PatchError("%s without from" % kind)
            if kind == "move" and (path + "/").startswith(src + "/") \
                    and path != src:
                raise PatchError("cannot move %s into itself" % src)
            val = copy.deepcopy(_get(doc, src))
            if kind == "move":
                _remove(doc, src)
            doc = _add(doc, path, val)
        else:
            raise PatchError("unknown op %r" % kind)
    return doc


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


def tls_socket(port, context=None, timeout=IO_TIMEOUT):
    s = socket.create_connection(("127.0.0.1", port), timeout)
    return (context or client_context()).wrap_socket(s, server_hostname=SNI)


def read_until_closed(sock, timeout):
    """Reads until EOF; returns (bytes, seconds waited, closed?)."""
    t0 = time.monotonic()
    data = b""
    while True:
        left = timeout - (time.monotonic() - t0)
        if left <= 0:
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
        patched=True, validate=True, validate_raw=False,
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

    def assert_review(self, st, hdrs, body, uid):
        """A 200 AdmissionReview answer for `uid`; returns (response,
        decoded patch or None)."""
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
            self.assertEqual(status.get("code"), 403, resp)
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


# --------------------------------------------------------------------------
# Self-tests of the JSON Patch applier and the comparison (no server).

class TestJsonPatchApplier(unittest.TestCase):
    def test_rfc6902_examples(self):
        cases = [  # RFC 6902 appendix A
            ({"foo": "bar"}, [{"op": "add", "path": "/baz", "value": "qux"}],
             {"baz": "qux", "foo": "bar"}),
            ({"foo": ["bar", "baz"]},
             [{"op": "add", "path": "/foo/1", "value": "qux"}],
             {"foo": ["bar", "qux", "baz"]}),
            ({"baz": "qux", "foo": "bar"}, [{"op": "remove", "path": "/baz"}],
             {"foo": "bar"}),
            ({"foo": ["bar", "qux", "baz"]},
             [{"op": "remove", "path": "/foo/1"}], {"foo": ["bar", "baz"]}),
            ({"baz": "qux", "foo": "bar"},
             [{"op": "replace", "path": "/baz", "value": "boo"}],
             {"baz": "boo", "foo": "bar"}),
            ({"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "g"}},
             [{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}],
             {"foo": {"bar": "baz"}, "qux": {"corge": "g", "thud": "fred"}}),
            ({"foo": ["all", "grass", "cows", "eat"]},
             [{"op": "move", "from": "/foo/1", "path": "/foo/3"}],
             {"foo": ["all", "cows", "eat", "grass"]}),
            ({"foo": ["bar"]},
             [{"op": "add", "path": "/foo/-", "value": ["abc", "def"]}],
             {"foo": ["bar", ["abc", "def"]]}),
            ({"/": 9, "~1": 10}, [{"op": "test", "path": "/~01", "value": 10}],
             {"/": 9, "~1": 10}),
            ({"a": {}}, [{"op": "add", "path": "/a/b~1c~0d", "value": 1}],
             {"a": {"b/c~d": 1}}),
            ({"a": 1}, [{"op": "replace", "path": "", "value": [1]}], [1]),
            ({"a": None}, [{"op": "add", "path": "/a", "value": "t"}],
             {"a": "t"}),
            ({"a": [1]}, [{"op": "copy", "from": "/a", "path": "/b"}],
             {"a": [1], "b": [1]}),
        ]
        for doc, ops, want in cases:
            with self.subTest(ops=ops):
                before = copy.deepcopy(doc)
                self.assertTrue(json_equal(apply_patch(doc, ops), want))
                self.assertEqual(doc, before, "input was modified")

    def test_rfc6902_errors(self):
        cases = [
            ({"foo": "bar"}, [{"op": "add", "path": "/baz/bat", "value": 1}]),
            ({"a": 1}, [{"op": "remove", "path": "/b"}]),
            ({"a": 1}, [{"op": "replace", "path": "/b", "value": 1}]),
            ({"a": [1]}, [{"op": "add", "path": "/a/2", "value": 1}]),
            ({"a": [1]}, [{"op": "add", "path": "/a/01", "value": 1}]),
            ({"a": [1]}, [{"op": "remove", "path": "/a/-"}]),
            ({"baz": "qux"}, [{"op": "test", "path": "/baz", "value": "bar"}]),
            ({"a": 1}, [{"op": "test", "path": "/a", "value": True}]),
            ({"a": 1}, [{"op": "add", "path": "a", "value": 1}]),
            ({"a": 1}, [{"op": "add", "path": "/a~2", "value": 1}]),
            ({"a": 1}, [{"op": "frobnicate", "path": "/a"}]),
            ({"a": 1}, [{"op": "add", "path": "/b"}]),
            ({"a": {"b": 1}}, [{"op": "move", "from": "/a", "path": "/a/c"}]),
            ({"a": 1}, {"op": "add", "path": "/b", "value": 1}),
        ]
        for doc, ops in cases:
            with self.subTest(ops=ops):
                with self.assertRaises(PatchError):
                    apply_patch(doc, ops)

    def test_diff_objects(self):
        now = datetime.datetime.now(datetime.timezone.utc) \
            .strftime("%Y-%m-%dT%H:%M:%SZ")
        exp = {"status": {"conditions": [
            {"type": "B", "lastTransitionTime": STAMPED},
            {"type": "A", "x": True}]}}
        ok = {"status": {"conditions": [
            {"type": "A", "x": True},
            {"type": "B", "lastTransitionTime": now}]}}
        self.assertEqual(diff_objects(exp, ok), [])
        bad = copy.deepcopy(ok)
        bad["status"]["conditions"][1]["lastTransitionTime"] = \
            "2020-01-01T00:00:00Z"
        self.assertEqual(len(diff_objects(exp, bad)), 1)
        bad["status"]["conditions"][1]["lastTransitionTime"] = \
            now.replace("Z", "+00:00")
        self.assertEqual(len(diff_objects(exp, bad)), 1)
        bad = copy.deepcopy(ok)
        bad["status"]["conditions"][0]["x"] = 1
        self.assertEqual(len(diff_objects(exp, bad)), 1)
        bad = copy.deepcopy(ok)
        bad["extra"] = 1
        self.assertEqual(len(diff_objects(exp, bad)), 1)
        self.assertEqual(len(diff_objects({"a": STAMPED}, {"a": now})), 1)

    def test_fixtures_are_consistent(self):
        for name in FIXTURE_CASES:
            with self.subTest(fixture=name):
                review, expected = load_fixture(name)
                req = review["request"]
                self.assertEqual(review["apiVersion"], "admission.k8s.io/v1")
                self.assertEqual(review["kind"], "AdmissionReview")
                self.assertEqual(req["name"],
                                 req["object"]["metadata"]["name"])
                if not FIXTURE_CASES[name]["patched"]:
                    self.assertEqual(expected, req["object"])
                else:
                    self.assertNotEqual(expected, req["object"])
        routine, _ = load_fixture("pod-status-kubelet-routine")
        size = len(compact(routine))
        self.assertTrue(9000 < size < 14000, size)


# --------------------------------------------------------------------------
# a. Fixtures over HTTP/1.1 keep-alive and over HTTP/2.

class FixtureMixin:
    HTTP2 = False

    def check_transfer(self, w, what):
        want = "2" if self.HTTP2 else "1.1"
        self.assertEqual(w["http_version"], want,
                         "%s: HTTP version %s, expected %s"
                         % (what, w["http_version"], want))
        self.assertIn("content-length", w["headers"],
                      "%s: no content-length" % what)
        self.assertEqual(int(w["headers"]["content-length"]), len(w["body"]),
                         what)

    def run_fixture(self, name):
        case = FIXTURE_CASES[name]
        review, expected = load_fixture(name)
        req = review["request"]
        uid = req["uid"]
        body = compact(review)
        tr = curl_batch(self.port, [("/mutate?timeout=10s", body),
                                    ("/validate?timeout=10s", body),
                                    ("/mutate?timeout=10s", body)],
                        http2=self.HTTP2)
        self.assertEqual(sum(w["num_connects"] for w in tr), 1,
                         "3 requests in one curl run used %s connections "
                         "(keep-alive broken)"
                         % [w["num_connects"] for w in tr])
        for w, what in zip(tr, ("mutate", "validate", "mutate again")):
            self.check_transfer(w, what)
        mresp, patch = self.assert_review(200, tr[0]["headers"], tr[0]["body"],
                                          uid)
        mresp2, patch2 = self.assert_review(200, tr[2]["headers"],
                                            tr[2]["body"], uid)
        self.assertEqual(patch is None, patch2 is None,
                         "same request, different answers")

        # The mutating webhook.
        if not mresp["allowed"]:
            # Allowed to deny here too (the validating webhook must).
            self.assertFalse(case["validate"],
                             "/mutate denied an allowed request: %s" % mresp)
            patched = req["object"]
        else:
            if case["patched"]:
                self.assertTrue(patch, "/mutate returned no patch: %s" % mresp)
            else:
                self.assertFalse(patch, "/mutate returned an unexpected "
                                 "patch: %s" % json.dumps(patch))
            try:
                patched = apply_patch(req["object"], patch or [])
            except PatchError as e:
                self.fail("the patch does not apply to request.object: %s\n"
                          "patch: %s" % (e, json.dumps(patch)))
            diffs = diff_objects(expected, patched)
            self.assertEqual(diffs, [], "patched object differs from %s."
                             "expected.json:\n  %s\npatch: %s"
                             % (name, "\n  ".join(diffs), json.dumps(patch)))
            warns = mresp.get("warnings") or []
            if case.get("warn"):
                self.assertTrue(any(case["warn"] in w for w in warns),
                                "no warning mentioning %s: %s"
                                % (case["warn"], warns))
            else:
                self.assertEqual(warns, [], "unexpected warnings")

        # The validating webhook on the review as received.
        vresp, vpatch = self.assert_review(200, tr[1]["headers"],
                                           tr[1]["body"], uid)
        self.assertIsNone(vpatch, "/validate returned a patch")
        raw_verdict = case.get("validate_raw", case["validate"])
        self.assertEqual(vresp["allowed"], raw_verdict,
                         "/validate on the request as received: %s" % vresp)
        if not vresp["allowed"]:
            msg = vresp["status"]["message"]
            for m in case.get("deny", []):
                self.assertIn(m, msg, "denial message lacks %r" % m)

        # The validating webhook on the mutated object, as the apiserver
        # chains them.
        if patch:
            review2 = copy.deepcopy(review)
            review2["request"]["object"] = patched
            tr2 = curl_batch(self.port, [("/validate?timeout=10s",
                                          compact(review2))],
                             http2=self.HTTP2)
            self.check_transfer(tr2[0], "validate after mutation")
            vresp, vpatch = self.assert_review(200, tr2[0]["headers"],
                                               tr2[0]["body"], uid)
            self.assertIsNone(vpatch, "/validate returned a patch")
            self.assertEqual(vresp["allowed"], case["validate"],
                             "/validate after mutation: %s" % vresp)
        else:
            self.assertEqual(vresp["allowed"], case["validate"],
                             "/validate (nothing to mutate): %s" % vresp)
        if not vresp["allowed"]:
            msg = vresp["status"]["message"]
            for m in case.get("deny", []):
                self.assertIn(m, msg, "denial message lacks %r" % m)

    def test_all_fixtures_on_one_connection(self):
        transfers = []
        for name in sorted(FIXTURE_CASES):
            body = compact(load_fixture(name)[0])
            transfers += [("/mutate?timeout=10s", body),
                          ("/validate?timeout=10s", body)]
        tr = curl_batch(self.port, transfers, http2=self.HTTP2)
        self.assertEqual(sum(w["num_connects"] for w in tr), 1,
                         [w["num_connects"] for w in tr])
        for w in tr:
            self.check_transfer(w, w.get("url_effective"))
            self.assertEqual(w["http_code"], 200, w["body"][:300])


def _add_fixture_tests(cls):
    for name in FIXTURE_CASES:
        def t(self, name=name):
            self.run_fixture(name)
        t.__name__ = "test_fixture_" + name.replace("-", "_")
        t.__doc__ = "fixture %s" % name
        setattr(cls, t.__name__, t)
    return cls


@_add_fixture_tests
class TestFixturesHTTP1(FixtureMixin, ServerTestCase):
    SERVER_ARGS = ("--threads", "2")
    HTTP2 = False

    def test_http2_is_off_by_default(self):
        tr = curl_batch(self.port, [("/mutate", compact(self.valid_review()))],
                        http2=True)
        self.assertEqual(tr[0]["http_version"], "1.1",
                         "HTTP/2 negotiated without --http2")
        self.assertEqual(tr[0]["http_code"], 200)


@_add_fixture_tests
class TestFixturesHTTP2(FixtureMixin, ServerTestCase):
    SERVER_ARGS = ("--http2", "--threads", "2")
    HTTP2 = True

    def test_http1_still_served_with_http2_on(self):
        c = self.conn()
        uid = "1d1d1d1d-0000-4000-8000-000000000001"
        st, h, b = c.call("POST", "/mutate", compact(self.valid_review(uid)))
        self.assert_review(st, h, b, uid)

    def test_bad_input_over_http2(self):
        good = compact(self.valid_review())
        bad = [("/mutate", b"", 400), ("/mutate", b'{"apiVersion":', 400),
               ("/validate", b"[" * 200000 + b"]" * 200000, 400),
               ("/nowhere", good, 404), ("/validate", b"[]", 400),
               ("/mutate", good, 200)]
        tr = curl_batch(self.port, [(p, b) for p, b, _ in bad], http2=True)
        self.assertEqual(sum(w["num_connects"] for w in tr), 1)
        for w, (p, b, code) in zip(tr, bad):
            self.check_transfer(w, p)
            if code == 200:
                self.assert_review(200, w["headers"], w["body"],
                                   self.valid_review()["request"]["uid"])
            else:
                self.assert_status_body(w["http_code"], w["headers"],
                                        w["body"], code)


# --------------------------------------------------------------------------
# a2. DESIGN §3 end to end: pod-status writes per requester kind, and the
# DaemonSet annotation values (the unit tests hold the full tables; these
# rows check the server wires the same decisions).

H = "5d8f6c9b7d"
H2 = "9a8b7c6d5e"
OLD_H = "7c9d5f8b64"
OTA_TYPES = ("PodNeedUpgrade", "PodImageReady")


def ota_cond(ctype, status, reason=None, message=None,
             ltt="2026-11-21T20:30:00Z"):
    c = {"type": ctype, "status": status, "lastProbeTime": None,
         "lastTransitionTime": ltt}
    if reason is not None:
        c["reason"] = reason
    if message is not None:
        c["message"] = message
    return c


NU_T = ota_cond("PodNeedUpgrade", "True", message="controllerrevision: " + H,
                ltt="2026-11-21T19:40:05Z")
NU_F = ota_cond("PodNeedUpgrade", "False", message="controllerrevision: " + H)
NU_T2 = ota_cond("PodNeedUpgrade", "True", message="controllerrevision: " + H2)
IR_PULL = ota_cond("PodImageReady", "False", "WaitPullImage",
                   "controllerrevision: " + H)
IR_PULL_LATER = ota_cond("PodImageReady", "False", "WaitPullImage",
                         "controllerrevision: " + H,
                         ltt="2026-11-21T21:00:00Z")
IR_PULL_OLD = ota_cond("PodImageReady", "False", "WaitPullImage",
                       "controllerrevision: " + OLD_H)
IR_PULL_BARE = ota_cond("PodImageReady", "False", "", ltt=None)
IR_PULL_STAMPED = ota_cond("PodImageReady", "False", "WaitPullImage",
                           "controllerrevision: " + H, ltt=STAMPED)
IR_READY = ota_cond("PodImageReady", "True", "PullImageSuccess",
                    "controllerrevision: " + H)
IR_FAIL = ota_cond("PodImageReady", "False", "PullImageFail",
                   "pull image job ota-prepull-edge-agent-x7k2p-1a2b3c4d "
                   "failed: ErrImagePull")

WHO = {
    "controller": {"username": "system:serviceaccount:ota-system:"
                   "ota-controller",
                   "groups": ["system:serviceaccounts",
                              "system:serviceaccounts:ota-system",
                              "system:authenticated"]},
    "node": {"username": "system:node:edge-node-1",
             "groups": ["system:nodes", "system:authenticated"]},
    "other-node": {"username": "system:node:edge-node-2",
                   "groups": ["system:nodes", "system:authenticated"]},
    "user": {"username": "edge-operator",
             "groups": ["edge-operators", "system:authenticated"]},
    "admin": {"username": "kubernetes-admin",
              "groups": ["system:masters", "system:authenticated"]},
}

# (name, requester, old OTA conditions, new OTA conditions,
#  /validate allows?, state the denial names,
#  mutation: None = not checked, [] = no patch, else the OTA conditions
#  expected after the patch)
TRANSITIONS = [
    ("controller_current_to_pending", "controller", [], [NU_T], True, None,
     []),
    ("node_sets_need_upgrade", "node", [], [NU_T], False, "Current", None),
    ("user_pending_to_pulling", "user", [NU_T], [NU_T, IR_PULL], True, None,
     []),
    ("node_pending_to_pulling", "node", [NU_T], [NU_T, IR_PULL], True, None,
     []),
    ("user_failed_to_pulling", "user", [NU_T, IR_FAIL], [NU_T, IR_PULL],
     True, None, None),
    ("user_ready_to_pulling", "user", [NU_T, IR_READY], [NU_T, IR_PULL],
     True, None, None),
    ("user_pull_without_upgrade", "user", [], [IR_PULL], False, "Current",
     None),
    ("user_pull_after_upgrade_cleared", "user", [NU_F], [NU_F, IR_PULL],
     False, "Current", None),
    ("user_pull_older_hash", "user", [NU_T], [NU_T, IR_PULL_OLD], False,
     "PendingUpgrade", None),
    ("user_reports_failure", "user", [NU_T, IR_PULL], [NU_T, IR_FAIL], False,
     "Pulling", None),
    ("controller_pulling_to_failed", "controller", [NU_T, IR_PULL],
     [NU_T, IR_FAIL], True, None, []),
    ("controller_pulling_to_ready", "controller", [NU_T, IR_PULL],
     [NU_T, IR_READY], True, None, []),
    ("controller_may_not_start_pull", "controller", [NU_T], [NU_T, IR_PULL],
     False, "PendingUpgrade", None),
    ("controller_new_revision", "controller", [NU_T, IR_READY], [NU_T2],
     True, None, []),
    # DECISIONS: a pull request is the node user's to make, whatever the
    # revision: not even Pulling about H -> Pulling about H2.
    ("controller_pulling_to_pulling_new_revision", "controller",
     [NU_T, IR_PULL], [NU_T2, dict(IR_PULL, message="controllerrevision: "
                                   + H2)], False, "Pulling", None),
    ("controller_failed_to_pending_drop", "controller", [NU_T, IR_FAIL],
     [NU_T], True, None, []),
    ("user_clears_need_upgrade", "user", [NU_T], [NU_F], False,
     "PendingUpgrade", None),
    ("admin_removes_everything", "admin", [NU_T, IR_PULL], [], True, None,
     []),
    ("other_node_routine_write", "other-node", [NU_T, IR_PULL],
     [NU_T, IR_PULL], True, None, []),
    ("user_new_time_only", "user", [NU_T, IR_PULL], [NU_T, IR_PULL_LATER],
     True, None, []),
    ("user_drops_image_ready", "user", [NU_T, IR_PULL], [NU_T], False,
     "Pulling", [NU_T, IR_PULL]),
    ("node_drops_need_upgrade", "node", [NU_T, IR_PULL], [IR_PULL], False,
     "Pulling", [IR_PULL, NU_T]),
    # Without a message the request is not "about H" until the mutating
    # webhook fills it in (DECISIONS): as received it is denied.
    ("node_pull_empty_reason", "node", [NU_T], [NU_T, IR_PULL_BARE], False,
     "PendingUpgrade", [NU_T, IR_PULL_STAMPED]),
    ("duplicate_types_first_wins", "user", [NU_T], [NU_T, IR_PULL, IR_READY],
     True, None, None),
    # Duplicate types: the first is the one read, so the first is stamped.
    ("duplicate_bare_first_gets_stamped", "node", [NU_T],
     [NU_T, IR_PULL_BARE, IR_READY], False, "PendingUpgrade",
     [NU_T, IR_PULL_STAMPED, IR_READY]),
    # The whole conditions array gone (a merge patch that wrote none):
    # the patch has to add /status/conditions itself.
    ("node_write_without_conditions", "node", [NU_T, IR_PULL], "absent",
     False, "Pulling", [NU_T, IR_PULL]),
    ("node_write_null_conditions", "node", [NU_T, IR_PULL], "null",
     False, "Pulling", [NU_T, IR_PULL]),
    ("node_write_without_status", "node", [NU_T, IR_PULL], "no-status",
     False, "Pulling", [NU_T, IR_PULL]),
]


def transition_review(uid, who, old_ota, new_ota):
    review, _ = load_fixture("pod-status-kubelet-routine")
    req = review["request"]
    req["uid"] = uid
    req["userInfo"] = copy.deepcopy(WHO[who])
    for where, ota in (("oldObject", old_ota), ("object", new_ota)):
        if ota == "absent":
            del req[where]["status"]["conditions"]
        elif ota == "null":
            req[where]["status"]["conditions"] = None
        elif ota == "no-status":
            del req[where]["status"]
        else:
            conds = [c for c in req[where]["status"]["conditions"]
                     if c["type"] not in OTA_TYPES]
            req[where]["status"]["conditions"] = conds + copy.deepcopy(ota)
    # A template for what mutation yields: the kubelet's conditions as sent
    # plus the expected OTA ones.
    return review


class TestTransitions(ServerTestCase):
    SERVER_ARGS = ("--threads", "2")

    def run_transition(self, name, who, old, new, allowed, state, mutated):
        uid = "7a000000-0000-4000-8000-" + hashlib.sha256(
            name.encode()).hexdigest()[:12]
        review = transition_review(uid, who, old, new)
        c = self.conn()
        body = compact(review)
        st, h, b = c.call("POST", "/validate?timeout=10s", body)
        resp, patch = self.assert_review(st, h, b, uid)
        self.assertIsNone(patch)
        self.assertEqual(resp["allowed"], allowed,
                         "/validate: %s" % json.dumps(resp))
        if not allowed:
            msg = resp["status"]["message"]
            for m in (POD_REF, "rule", state):
                self.assertIn(m, msg, "denial message lacks %r" % m)
        if mutated is None:
            return
        st, h, b = c.call("POST", "/mutate?timeout=10s", body)
        resp, patch = self.assert_review(st, h, b, uid)
        self.assertTrue(resp["allowed"], "/mutate denied: %s" % resp)
        if mutated == []:
            self.assertFalse(patch, "unexpected patch %s" % json.dumps(patch))
            return
        self.assertTrue(patch, "/mutate returned no patch")
        try:
            obj = apply_patch(review["request"]["object"], patch)
        except PatchError as e:
            self.fail("the patch does not apply to request.object: %s\n"
                      "patch: %s" % (e, json.dumps(patch)))
        sent = review["request"]["object"].get("status") or {}
        kubelet = [x for x in sent.get("conditions") or []
                   if x["type"] not in OTA_TYPES]
        want = kubelet + copy.deepcopy(mutated)
        got = (obj.get("status") or {}).get("conditions")
        diffs = diff_objects(want, got, "/status/conditions")
        self.assertEqual(diffs, [], "after the patch %s:\n  %s"
                         % (json.dumps(patch), "\n  ".join(diffs)))
        def without_conditions(o):
            o = copy.deepcopy(o)
            status = o.get("status")
            if isinstance(status, dict):
                status.pop("conditions", None)
                if not status:
                    del o["status"]
            return o

        orig = without_conditions(review["request"]["object"])
        rest = without_conditions(obj)
        self.assertEqual(diff_objects(orig, rest), [],
                         "the patch touched more than the conditions")
        # The apiserver then calls the validating webhook on the result.
        review2 = copy.deepcopy(review)
        review2["request"]["object"] = obj
        st, h, b = c.call("POST", "/validate?timeout=10s", compact(review2))
        resp, _ = self.assert_review(st, h, b, uid)
        self.assertTrue(resp["allowed"], "/validate after the mutation: %s"
                        % json.dumps(resp))

    def test_own_node_rule_uses_stored_pod(self):
        # DECISIONS: the own-node rule reads spec.nodeName of oldObject
        # (what is stored), not of the write.
        review = transition_review(
            "0d0d0d0d-0000-4000-8000-000000000001", "other-node",
            [NU_T], [NU_T, IR_PULL])
        review["request"]["object"]["spec"]["nodeName"] = "edge-node-2"
        resp, _ = self.verdict("/validate", review)
        self.assertFalse(resp["allowed"], "a node claimed another node's pod "
                         "by rewriting spec.nodeName in its write")
        review = transition_review(
            "0d0d0d0d-0000-4000-8000-000000000002", "node",
            [NU_T], [NU_T, IR_PULL])
        review["request"]["object"]["spec"]["nodeName"] = "edge-node-2"
        resp, _ = self.verdict("/validate", review)
        self.assertTrue(resp["allowed"], resp)

    def ds_review(self, annotations, strategy=None):
        review, _ = load_fixture("ds-create-ota-rollingupdate")
        obj = review["request"]["object"]
        obj["metadata"]["annotations"] = annotations
        if strategy is None:
            obj["spec"]["updateStrategy"] = {"type": "OnDelete"}
        else:
            obj["spec"]["updateStrategy"] = strategy
        return review

    def verdict(self, path, review):
        c = self.conn()
        st, h, b = c.call("POST", path, compact(review))
        return self.assert_review(st, h, b, review["request"]["uid"])

    def test_update_strategy_values(self):
        ann = "apps.openyurt.io/update-strategy"
        for v, ok in (("OTA", True), ("ota", True), ("oTa", True),
                      ("AdvancedRollingUpdate", True),
                      ("advancedrollingupdate", True),
                      ("ADVANCEDROLLINGUPDATE", True),
                      ("", False), (" OTA", False), ("OTA ", False),
                      ("RollingUpdate", False), ("OnDelete", False),
                      ("OTA,AdvancedRollingUpdate", False),
                      ("OTA\u0000", False), ("OTAx", False),
                      ("AdvancedRollingUpdat", False)):
            with self.subTest(value=v):
                resp, _ = self.verdict("/validate", self.ds_review({ann: v}))
                self.assertEqual(resp["allowed"], ok, resp)
                if not ok:
                    msg = resp["status"]["message"]
                    self.assertIn("OTA", msg)
                    self.assertIn("AdvancedRollingUpdate", msg)

    def test_ota_value_case_insensitive_mutation(self):
        ann = "apps.openyurt.io/update-strategy"
        rolling = {"type": "RollingUpdate",
                   "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
        for v, patched in (("oTa", True), ("OTA", True),
                           ("AdvancedRollingUpdate", False),
                           ("OTA\u0000", False), ("", False)):
            with self.subTest(value=v):
                review = self.ds_review({ann: v}, copy.deepcopy(rolling))
                resp, patch = self.verdict("/mutate", review)
                if patched:
                    self.assertTrue(resp["allowed"], resp)
                    obj = apply_patch(review["request"]["object"], patch or [])
                    self.assertEqual(obj["spec"]["updateStrategy"],
                                     {"type": "OnDelete"})
                else:
                    self.assertFalse(patch, "patched a non-OTA DaemonSet")

    def test_prepull_timeout_values(self):
        ota = "apps.openyurt.io/update-strategy"
        ann = "apps.openyurt.io/image-prepull-timeout-seconds"
        for v, ok in (("30", True), ("600", True), ("86400", True),
                      ("29", False), ("86401", False), ("0", False),
                      ("-60", False), ("+60", False), (" 60", False),
                      ("60 ", False), ("60s", False), ("10m", False),
                      ("", False), ("1e3", False), ("0x3c", False),
                      ("60.0", False), ("６０", False),
                      ("99999999999999999999999", False),
                      ("18446744073709551676", False),   # 2^64 + 60
                      ("4294967356", False),             # 2^32 + 60
                      ("60\u0000", False)):
            with self.subTest(value=v):
                resp, _ = self.verdict("/validate",
                                       self.ds_review({ota: "OTA", ann: v}))
                self.assertEqual(resp["allowed"], ok, resp)
                if not ok:
                    self.assertIn(ann, resp["status"]["message"])

    def test_one_log_line_per_denial_and_mutation(self):
        srv = type(self).server
        deny, _ = load_fixture("pod-status-node-claims-ready")
        deny["request"]["uid"] = "10610610-0000-4000-8000-000000000001"
        mut, _ = load_fixture("ds-create-ota-rollingupdate")
        mut["request"]["uid"] = "10610610-0000-4000-8000-000000000002"
        c = self.conn()
        st, _, _ = c.call("POST", "/validate", compact(deny))
        self.assertEqual(st, 200)
        st, _, _ = c.call("POST", "/mutate", compact(mut))
        self.assertEqual(st, 200)
        time.sleep(0.3)
        log = srv.log_text()
        for uid in (deny["request"]["uid"], mut["request"]["uid"]):
            lines = [ln for ln in log.splitlines() if uid in ln]
            self.assertEqual(len(lines), 1, "log lines for %s: %r"
                             % (uid, lines))


def _add_transition_tests(cls):
    for row in TRANSITIONS:
        def t(self, row=row):
            self.run_transition(*row)
        t.__name__ = "test_transition_" + row[0]
        setattr(cls, t.__name__, t)
    return cls


_add_transition_tests(TestTransitions)


class TestControllerUsername(ServerTestCase):
    SERVER_ARGS = ("--controller-username", "system:serviceaccount:edge:ctl")

    def test_controller_username_flag(self):
        review, _ = load_fixture("pod-status-controller-ready")
        c = self.conn()
        st, h, b = c.call("POST", "/validate", compact(review))
        resp, _ = self.assert_review(st, h, b, review["request"]["uid"])
        self.assertFalse(resp["allowed"], "the default controller identity "
                         "is still trusted with --controller-username set")
        review["request"]["userInfo"]["username"] = \
            "system:serviceaccount:edge:ctl"
        st, h, b = c.call("POST", "/validate", compact(review))
        resp, _ = self.assert_review(st, h, b, review["request"]["uid"])
        self.assertTrue(resp["allowed"], resp)


# --------------------------------------------------------------------------
# b. Bad input.

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
                             apply_patch(review["request"]["object"], patch))
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
        # 7 MB of annotations: under the 8 MiB default, answered quickly.
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
        d = tempfile.mkdtemp(dir=WORK, prefix="h2par.")
        paths = []
        for i, b in enumerate((body, over, body, body)):
            paths.append(os.path.join(d, "b%d" % i))
            with open(paths[-1], "wb") as f:
                f.write(b)
        args = ["curl", "-sS", "--parallel",
                "--http2", "--cacert", CERTS["ca.crt"],
                "--resolve", "%s:%d:127.0.0.1" % (SNI, self.port),
                "--max-time", "30"]
        for i, p in enumerate(paths):
            if i:
                args.append("--next")
            args += ["--http2", "--cacert", CERTS["ca.crt"],
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


# --------------------------------------------------------------------------
# c. Certificate rotation under traffic.

def replace_atomically(src, dst):
    tmp = dst + ".tmp-rotate"
    shutil.copyfile(src, tmp)
    os.chmod(tmp, 0o600)
    os.rename(tmp, dst)


class TestCertRotation(unittest.TestCase):
    DURATION_AFTER_SWAP = 3.5

    def setUp(self):
        self.dir = tempfile.mkdtemp(dir=WORK, prefix="rot.")
        self.old = gen_certs(os.path.join(self.dir, "old"))
        self.new = gen_certs(os.path.join(self.dir, "new"))
        self.old_fp = cert_fingerprint(self.old["tls.crt"])
        self.new_fp = cert_fingerprint(self.new["tls.crt"])
        self.ctx = client_context([self.old["ca.crt"], self.new["ca.crt"]])
        self.srv = None

    def tearDown(self):
        if self.srv:
            problems = self.srv.stop()
            if problems:
                self.fail("\n".join(problems))

    def start(self, cert, key):
        self.srv = Server(self.id().split(".")[-1],
                          ["--cert-poll-interval-ms", "200", "--threads", "2"],
                          cert=cert, key=key)
        self.srv.start()

    def reloads(self, failed=False):
        """ota_webhook_cert_reloads_total: the successful reloads, or the
        failed ones (a result label naming a failure)."""
        st, _, body = http_get(self.srv.metrics, "/metrics")
        self.assertEqual(st, 200)
        return metric_sum(parse_metrics(body.decode()),
                          "ota_webhook_cert_reloads_total",
                          result=lambda r: ("fail" in r) == failed)

    def traffic(self, swap):
        """Runs clients for ~1.5 s, calls swap(), runs on; returns the
        results."""
        stop = threading.Event()
        errors = []
        seen = []  # (t, fingerprint) of new connections
        ka = {"n": 0, "fps": set(), "connects": 0}
        review = compact(self.valid_review())

        def new_conns():
            while not stop.is_set():
                t = time.monotonic()
                c = Conn(self.srv.port, context=self.ctx, timeout=10)
                try:
                    st, _, b = c.call("POST", "/mutate", review)
                    seen.append((t, c.peer_fingerprint()))
                    if st != 200:
                        errors.append(("new", st, b[:200]))
                except Exception as e:  # noqa: BLE001
                    errors.append(("new", repr(e)))
                finally:
                    c.close()

        def keepalive():
            c = Conn(self.srv.port, context=self.ctx, timeout=10)
            try:
                while not stop.is_set():
                    st, _, b = c.call("POST", "/validate", review)
                    ka["n"] += 1
                    ka["fps"].add(c.peer_fingerprint())
                    if st != 200:
                        errors.append(("keepalive", st, b[:200]))
                    time.sleep(0.02)
                ka["connects"] = c.connects
            except Exception as e:  # noqa: BLE001
                errors.append(("keepalive", repr(e)))
            finally:
                c.close()

        def curl_loop():
            # curl, trusting both CAs, new connection each time.
            bundle = os.path.join(self.dir, "both-cas.crt")
            with open(bundle, "w") as f:
                f.write(open(self.old["ca.crt"]).read())
                f.write(open(self.new["ca.crt"]).read())
            path = os.path.join(self.dir, "review.json")
            with open(path, "wb") as f:
                f.write(review)
            while not stop.is_set():
                p = subprocess.run(
                    ["curl", "-sS", "--http1.1", "--cacert", bundle,
                     "--resolve", "%s:%d:127.0.0.1" % (SNI, self.srv.port),
                     "--max-time", "10", "-o", "/dev/null",
                     "-w", "%{http_code}", "-H",
                     "Content-Type: application/json",
                     "--data-binary", "@" + path,
                     "https://%s:%d/mutate" % (SNI, self.srv.port)],
                    capture_output=True, timeout=20)
                if p.returncode != 0 or p.stdout != b"200":
                    errors.append(("curl", p.returncode, p.stdout,
                                   p.stderr[-300:]))

        threads = [threading.Thread(target=f) for f in
                   (new_conns, new_conns, keepalive, curl_loop)]
        for t in threads:
            t.start()
        time.sleep(1.5)
        t_swap = time.monotonic()
        swap()
        time.sleep(self.DURATION_AFTER_SWAP)
        stop.set()
        for t in threads:
            t.join(30)
        self.assertFalse(any(t.is_alive() for t in threads), "clients hung")
        return errors, seen, ka, t_swap

    def valid_review(self):
        review, _ = load_fixture("ds-create-ota-rollingupdate")
        return review

    def check_rotation(self, errors, seen, ka, t_swap, reloads_before):
        self.assertEqual(errors[:10], [], "%d requests failed during "
                         "rotation" % len(errors))
        before = [fp for t, fp in seen if t < t_swap]
        self.assertTrue(before and set(before) == {self.old_fp},
                        "before the swap connections must see the old cert")
        # Poll interval 200 ms: from 2 s after the swap every new
        # connection must see the new certificate.
        late = [fp for t, fp in seen if t > t_swap + 2.0]
        self.assertTrue(late, "no connections late after the swap")
        self.assertEqual(set(late), {self.new_fp},
                         "new connections 2 s after the swap still see the "
                         "old certificate (%d of %d)"
                         % (late.count(self.old_fp), len(late)))
        self.assertGreater(ka["n"], 20, "keep-alive client made few requests")
        self.assertEqual(ka["connects"], 1,
                         "the keep-alive connection was dropped by the "
                         "rotation (%d connects)" % ka["connects"])
        self.assertEqual(ka["fps"], {self.old_fp})
        self.assertGreater(self.reloads(), reloads_before,
                           "ota_webhook_cert_reloads_total did not move")

    def test_rotation_rename_files(self):
        live = os.path.join(self.dir, "live")
        os.mkdir(live)
        for f in ("tls.crt", "tls.key"):
            shutil.copyfile(self.old[f], os.path.join(live, f))
        self.start(os.path.join(live, "tls.crt"), os.path.join(live, "tls.key"))
        r0 = self.reloads()

        def swap():
            # Key first: a reader that sees the new key with the old cert
            # must keep the old pair until both match.
            replace_atomically(self.new["tls.key"],
                               os.path.join(live, "tls.key"))
            replace_atomically(self.new["tls.crt"],
                               os.path.join(live, "tls.crt"))

        self.check_rotation(*self.traffic(swap), reloads_before=r0)

    def test_rotation_cert_first_key_lags(self):
        # The two renames 300 ms apart: more than a poll interval with a
        # certificate that does not match the key. Handshakes must keep
        # using the old, consistent pair meanwhile.
        live = os.path.join(self.dir, "live")
        os.mkdir(live)
        for f in ("tls.crt", "tls.key"):
            shutil.copyfile(self.old[f], os.path.join(live, f))
        self.start(os.path.join(live, "tls.crt"), os.path.join(live, "tls.key"))
        r0 = self.reloads()

        def swap():
            replace_atomically(self.new["tls.crt"],
                               os.path.join(live, "tls.crt"))
            time.sleep(0.3)
            replace_atomically(self.new["tls.key"],
                               os.path.join(live, "tls.key"))

        self.check_rotation(*self.traffic(swap), reloads_before=r0)

    def test_rotation_secret_volume_symlinks(self):
        # How the kubelet updates a Secret volume (cert-manager's path):
        # tls.crt -> ..data/tls.crt, ..data -> ..<timestamp>/, and the
        # update is one rename of a new ..data symlink.
        vol = os.path.join(self.dir, "vol")
        os.mkdir(vol)
        v1 = os.path.join(vol, "..2026_11_21_21_00_00.000000001")
        os.mkdir(v1)
        for f in ("tls.crt", "tls.key"):
            shutil.copyfile(self.old[f], os.path.join(v1, f))
        os.symlink(os.path.basename(v1), os.path.join(vol, "..data"))
        for f in ("tls.crt", "tls.key"):
            os.symlink(os.path.join("..data", f), os.path.join(vol, f))
        self.start(os.path.join(vol, "tls.crt"), os.path.join(vol, "tls.key"))
        r0 = self.reloads()

        def swap():
            v2 = os.path.join(vol, "..2026_11_21_21_05_00.000000002")
            os.mkdir(v2)
            for f in ("tls.crt", "tls.key"):
                shutil.copyfile(self.new[f], os.path.join(v2, f))
            os.symlink(os.path.basename(v2), os.path.join(vol, "..data_tmp"))
            os.rename(os.path.join(vol, "..data_tmp"),
                      os.path.join(vol, "..data"))
            shutil.rmtree(v1)

        self.check_rotation(*self.traffic(swap), reloads_before=r0)

    def test_broken_files_keep_old_certificate(self):
        # A cert file replaced with garbage must not take the server down
        # nor break handshakes; a good one afterwards is picked up.
        live = os.path.join(self.dir, "live")
        os.mkdir(live)
        for f in ("tls.crt", "tls.key"):
            shutil.copyfile(self.old[f], os.path.join(live, f))
        self.start(os.path.join(live, "tls.crt"), os.path.join(live, "tls.key"))
        failures0 = self.reloads(failed=True)
        junk = os.path.join(self.dir, "junk.pem")
        with open(junk, "w") as f:
            f.write("-----BEGIN CERTIFICATE-----\nnot base64\n")
        replace_atomically(junk, os.path.join(live, "tls.crt"))
        time.sleep(1.0)
        self.assertTrue(self.srv.alive(), self.srv.log_tail())
        c = Conn(self.srv.port, context=self.ctx)
        self.addCleanup(c.close)
        st, _, _ = c.call("POST", "/mutate", compact(self.valid_review()))
        self.assertEqual(st, 200)
        self.assertEqual(c.peer_fingerprint(), self.old_fp)
        self.assertGreater(self.reloads(failed=True), failures0,
                           "a certificate that does not load was not "
                           "counted as a failed reload")
        replace_atomically(self.new["tls.key"], os.path.join(live, "tls.key"))
        replace_atomically(self.new["tls.crt"], os.path.join(live, "tls.crt"))
        deadline = time.monotonic() + 3
        fp = None
        while time.monotonic() < deadline:
            c2 = Conn(self.srv.port, context=self.ctx)
            c2.call("POST", "/mutate", compact(self.valid_review()))
            fp = c2.peer_fingerprint()
            c2.close()
            if fp == self.new_fp:
                break
            time.sleep(0.1)
        self.assertEqual(fp, self.new_fp, "good files after bad ones were "
                         "not picked up within 3 s")


# --------------------------------------------------------------------------
# d. SIGTERM drain.

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

    def slow_upload_drain(self, http2):
        """curl uploads a 60 KB review at 20 KB/s; SIGTERM arrives one
        second in. The request must still be answered 200, then the server
        exits 0."""
        srv = Server("drain-slow-h%d" % (2 if http2 else 1),
                     ["--http2"] if http2 else [])
        srv.start()
        try:
            review, _ = load_fixture("ds-create-ota-rollingupdate")
            body = compact(review)
            body = body[:-1] + b" " * (60000 - len(body)) + b"}"
            path = os.path.join(WORK, "slow-%d.json" % http2)
            with open(path, "wb") as f:
                f.write(body)
            out = os.path.join(WORK, "slow-%d.out" % http2)
            curl = subprocess.Popen(
                ["curl", "-sS", "--http2" if http2 else "--http1.1",
                 "--limit-rate", "20k", "--cacert", CERTS["ca.crt"],
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
            self.assertEqual(so.decode(), "200 %s" % ("2" if http2 else "1.1"),
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

    def test_sigterm_drains_slow_upload_http1(self):
        self.slow_upload_drain(http2=False)

    def test_sigterm_drains_slow_upload_http2(self):
        self.slow_upload_drain(http2=True)

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


# --------------------------------------------------------------------------
# e. Health and metrics.

METRIC_LINE = re.compile(
    r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$")
LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?')


def parse_metrics(text):
    """Prometheus text format -> [(name, {label: value}, float)]; raises
    ValueError on a malformed line."""
    out = []
    for ln in text.splitlines():
        if not ln.strip() or ln.startswith("#"):
            continue
        m = METRIC_LINE.match(ln)
        if not m:
            raise ValueError("bad metrics line %r" % ln)
        labels = {}
        rest = m.group(2) or ""
        pos = 0
        while pos < len(rest):
            lm = LABEL.match(rest, pos)
            if not lm:
                raise ValueError("bad labels in %r" % ln)
            labels[lm.group(1)] = lm.group(2)
            pos = lm.end()
        out.append((m.group(1), labels, float(m.group(3))))
    return out


def metric_sum(samples, name, **match):
    return sum(v for n, lab, v in samples if n == name and all(
        f(lab.get(k, "")) if callable(f) else lab.get(k) == f
        for k, f in match.items()))


class TestHealthAndMetrics(ServerTestCase):
    SERVER_ARGS = ("--threads", "2")

    def metrics(self):
        st, hdrs, body = http_get(type(self).server.metrics, "/metrics")
        self.assertEqual(st, 200)
        self.assertTrue(hdrs.get("content-type", "").startswith("text/plain"),
                        hdrs.get("content-type"))
        text = body.decode()
        return text, parse_metrics(text)

    def test_healthz_readyz(self):
        for path in ("/healthz", "/readyz"):
            with self.subTest(path=path):
                st, hdrs, body = http_get(type(self).server.health, path)
                self.assertEqual(st, 200)
                self.assertEqual(body.strip(), b"ok")
                self.assertIn("content-length", hdrs)

    def test_metrics_families(self):
        text, samples = self.metrics()
        for fam, typ in (("ota_webhook_requests_total", "counter"),
                         ("ota_webhook_request_duration_seconds", "histogram"),
                         ("ota_webhook_denials_total", "counter"),
                         ("ota_webhook_mutations_total", "counter"),
                         ("ota_webhook_cert_reloads_total", "counter")):
            with self.subTest(family=fam):
                self.assertRegex(text, r"(?m)^# TYPE %s %s$" % (fam, typ))
        names = {n for n, _, _ in samples}
        self.assertIn("ota_webhook_cert_reloads_total", names)

    def test_counters_exact_under_concurrency(self):
        # Per-thread counters, summed when read: nothing lost or doubled.
        _, s0 = self.metrics()
        ds = compact(load_fixture("ds-create-ota-rollingupdate")[0])
        errors = []

        def worker():
            try:
                c = Conn(self.port)
                try:
                    for _ in range(25):
                        st, _, _ = c.call("POST", "/mutate", ds)
                        if st != 200:
                            errors.append(st)
                finally:
                    c.close()
            except Exception as e:  # noqa: BLE001
                errors.append(repr(e))

        threads = [threading.Thread(target=worker) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        self.assertEqual(errors, [])
        _, s1 = self.metrics()
        req = "ota_webhook_requests_total"
        self.assertEqual(metric_sum(s1, req, path=lambda p: "mutate" in p)
                         - metric_sum(s0, req, path=lambda p: "mutate" in p),
                         200)
        mut = "ota_webhook_mutations_total"
        self.assertEqual(metric_sum(s1, mut) - metric_sum(s0, mut), 200)

    def test_counters_move(self):
        _, s0 = self.metrics()
        c = self.conn()
        ds = compact(load_fixture("ds-create-ota-rollingupdate")[0])
        deny = compact(load_fixture("pod-status-node-claims-ready")[0])
        for _ in range(3):
            st, _, _ = c.call("POST", "/mutate?timeout=10s", ds)
            self.assertEqual(st, 200)
        st, _, _ = c.call("POST", "/mutate", b"[]")
        self.assertEqual(st, 400)
        for _ in range(2):
            st, _, b = c.call("POST", "/validate?timeout=10s", deny)
            self.assertEqual(st, 200)
            self.assertFalse(json.loads(b)["response"]["allowed"])
        _, s1 = self.metrics()

        def is_mutate(p):
            return "mutate" in p

        def is_validate(p):
            return "validate" in p

        req = "ota_webhook_requests_total"
        series = [(n, lab) for n, lab, _ in s1 if n == req]
        self.assertTrue(series, "no %s samples" % req)
        for _, lab in series:
            self.assertIn("path", lab)
            self.assertIn("result", lab)
        self.assertEqual(metric_sum(s1, req, path=is_mutate)
                         - metric_sum(s0, req, path=is_mutate), 4)
        self.assertEqual(metric_sum(s1, req, path=is_validate)
                         - metric_sum(s0, req, path=is_validate), 2)
        # The 400 is counted under another result than the 200s.
        moved = {lab["result"]: v - metric_sum(s0, req, **lab)
                 for n, lab, v in s1 if n == req and is_mutate(lab["path"])}
        moved = {k: v for k, v in moved.items() if v}
        self.assertEqual(sorted(moved.values()), [1, 3], moved)

        dur = "ota_webhook_request_duration_seconds"
        self.assertGreaterEqual(metric_sum(s1, dur + "_count")
                                - metric_sum(s0, dur + "_count"), 5)
        self.assertGreater(metric_sum(s1, dur + "_sum"),
                           metric_sum(s0, dur + "_sum"))
        buckets = [(lab, v) for n, lab, v in s1 if n == dur + "_bucket"]
        self.assertTrue(buckets)
        self.assertTrue(all("le" in lab for lab, _ in buckets))
        inf = [(lab, v) for lab, v in buckets if lab["le"] == "+Inf"]
        self.assertTrue(inf, "no +Inf bucket")
        for lab, v in inf:
            rest = {k: x for k, x in lab.items() if k != "le"}
            self.assertEqual(v, metric_sum(s1, dur + "_count", **rest), lab)

        den = "ota_webhook_denials_total"
        self.assertEqual(metric_sum(s1, den) - metric_sum(s0, den), 2)
        self.assertTrue(all("rule" in lab for n, lab, _ in s1 if n == den))
        mut = "ota_webhook_mutations_total"
        self.assertEqual(metric_sum(s1, mut) - metric_sum(s0, mut), 3)


# --------------------------------------------------------------------------
# Command line and TLS settings.

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
        cert = ["--tls-cert-file", CERTS["tls.crt"],
                "--tls-private-key-file", CERTS["tls.key"]]
        for args in ([],
                     ["--tls-cert-file", CERTS["tls.crt"]],
                     cert + ["--no-such-flag"],
                     cert + ["--tls-min-version", "VersionTLS10"],
                     cert + ["--threads", "abc"],
                     cert + ["--max-request-bytes", "-1"],
                     ["--tls-cert-file", os.path.join(WORK, "missing.crt"),
                      "--tls-private-key-file", CERTS["tls.key"]],
                     ["--tls-cert-file", CERTS["tls.crt"],
                      "--tls-private-key-file", CERTS["ca.key"]]):
            with self.subTest(args=args):
                self.run_bad(args)


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
            c = Conn(srv.port)
            review, _ = load_fixture("configmap-create")
            st, _, _ = c.call("POST", "/validate", compact(review))
            c.close()
            self.assertEqual(st, 200)
        finally:
            problems = srv.stop()
        self.assertEqual(problems, [])


# --------------------------------------------------------------------------

def main():
    global WORK, CERTS
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-k", action="append", default=[],
                    help="only tests whose name contains PATTERN "
                    "(or matches it as a glob)")
    ap.add_argument("-v", action="store_true", help="list each test")
    ap.add_argument("--keep", action="store_true",
                    help="keep the temporary directory (logs, certs)")
    opts = ap.parse_args()

    WORK = tempfile.mkdtemp(prefix="ota-webhook-it.")
    try:
        CERTS = gen_certs(os.path.join(WORK, "certs"))
        loader = unittest.TestLoader()
        if opts.k:
            loader.testNamePatterns = [p if any(ch in p for ch in "*?[")
                                       else "*%s*" % p for p in opts.k]
        suite = loader.loadTestsFromModule(sys.modules[__name__])
        t0 = time.monotonic()
        runner = unittest.TextTestRunner(stream=sys.stderr,
                                         verbosity=2 if opts.v else 1)
        result = runner.run(suite)
        # A test with failing subtests counts once; errors outside any test
        # (a class's server that did not exit cleanly) count as failures.
        failed_ids, outside = set(), 0
        for t, _ in result.failures + result.errors:
            if isinstance(t, unittest.TestCase):
                failed_ids.add(getattr(t, "test_case", t).id())
            else:
                outside += 1
        failed = len(failed_ids) + outside + \
            len(result.unexpectedSuccesses)
        passed = result.testsRun - len(failed_ids) - len(result.skipped)
        print("took %.1f s; binary %s" % (time.monotonic() - t0, BINARY),
              file=sys.stderr)
        sys.stderr.flush()
        print("%d passed, %d failed" % (passed, failed), flush=True)
        return 1 if failed or result.testsRun == 0 else 0
    finally:
        if opts.keep:
            print("kept %s" % WORK, file=sys.stderr)
        else:
            shutil.rmtree(WORK, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
