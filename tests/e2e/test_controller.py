#!/usr/bin/env python3
"""End-to-end tests of ota-controller against kubesim (DESIGN.md §5, issue 4).

Each test class starts one kubesim (tests/kubesim/run) on a free loopback port
and one or more controllers (build/ota-controller, or $OTA_CONTROLLER, e.g. the
ASan build build/asan/ota-controller).  Node users' pre-pull requests are the
status patch `kubectl ota pull` makes, sent over HTTPS with the node's token.

Every controller talks to kubesim through a small TLS proxy in this file
(kubesim's own serving certificate, so the controller's kubeconfig only changes
its server URL).  The proxy logs each request the controller makes (time,
method, path, body, answer code).  That log is how the tests see who wrote what
(two controllers), whether Retry-After is honoured, and it lets a test take the
apiserver away and bring it back on the same address: kubesim keeps its objects
in memory and makes a fresh CA and fresh tokens on every start, so stopping and
starting kubesim itself would be a new, empty cluster, not a restart.

A JobTracker watches every pre-pull Job in kubesim for the whole class (list,
watch, relist on 410; it connects to kubesim directly and retries through the
injected faults), so "never two Jobs for one request" is checked against every
Job that ever existed, not only the ones left at the end.

Every controller's output is scanned for AddressSanitizer, LeakSanitizer and
UBSan ("runtime error:") reports when its class ends (after SIGTERM, so leaks
are reported); any report fails the class.

Run: python3 tests/e2e/test_controller.py [-v] [Class[.test] ...]
  -v               progress and timings on stderr
  OTA_CONTROLLER   the binary (default build/ota-controller)
  OTA_E2E_KEEP=1   keep the state dirs (kubesim and controller logs), which are
                   otherwise removed after a run where everything passed
The last line is "N passed, N failed"; the exit status is non-zero on failure.
"""
import atexit
import base64
import http.client
import json
import os
import re
import select
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
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KUBESIM = os.path.join(ROOT, "tests", "kubesim", "run")
CONTROLLER = os.environ.get("OTA_CONTROLLER", os.path.join(ROOT, "build", "ota-controller"))
SCALE = 30  # simulated seconds per real second
VERBOSE = False
STATE_DIRS = []  # removed after a run where everything passed
CHILDREN = []    # killed at exit, whatever happened


@atexit.register
def _kill_children():
    for p in CHILDREN:
        if p.poll() is None:
            p.kill()

OTA = "apps.openyurt.io/update-strategy"
TIMEOUT_ANN = "apps.openyurt.io/image-prepull-timeout-seconds"
MANAGED = "app.kubernetes.io/managed-by=ota-prepull"
REG = "registry.example.com"
AGENT = REG + "/edge/agent:"
BIG = REG + "/edge/big-model:"
PRIVATE = REG + "/private/app:"
PRELOADED = REG + "/edge/preloaded:1.0"
MISSING = REG + "/edge/missing:9.9"
LEASE_NS = "ota-system"
SANITIZER = re.compile(r"ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:")

# Images no node has pulled yet, one per test that needs one (a node that has
# the image already short-cuts the pull: no Job).  100 MB: 10 simulated seconds.
FRESH = [REG + "/e2e/app-%02d:1.0" % i for i in range(1, 41)]

REGISTRY_CONFIG = {
    "includeDefaults": True,
    "images": [{"image": PRELOADED, "size": 30_000_000}] + [{"image": i, "size": 100_000_000} for i in FRESH],
    # every node has the pause image (the default) and the "preloaded" one
    "preloadedImages": ["registry.k8s.io/pause:3.10", PRELOADED],
}


def log(*args):
    if VERBOSE:
        sys.stderr.write("  [%s] %s\n" % (time.strftime("%H:%M:%S"), " ".join(str(a) for a in args)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(pred, timeout, what, interval=0.1):
    """Polls pred() until it returns something true; fails the test after timeout."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        try:
            last = pred()
        except ApiError as e:  # a fault made the probe fail: probe again
            last = e
        if last and not isinstance(last, ApiError):
            return last
        if time.monotonic() > deadline:
            raise AssertionError("timed out after %gs waiting for %s (last: %r)" % (timeout, what, last))
        time.sleep(interval)


_last_request_time = [0]


def request_time():
    """RFC 3339 now, strictly later than the previous call (the controller names a
    request's Job after its lastTransitionTime, which has whole seconds)."""
    t = max(int(time.time()), _last_request_time[0] + 1)
    _last_request_time[0] = t
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


# ---------------------------------------------------------------- kubesim


class ApiError(Exception):
    def __init__(self, status, body):
        super().__init__("HTTP %s: %s" % (status, body))
        self.status = status
        self.body = body


class Kubesim:
    def __init__(self, nodes, registry_config=None):
        self.dir = tempfile.mkdtemp(prefix="ota-e2e-")
        STATE_DIRS.append(self.dir)
        self.state = os.path.join(self.dir, "state")
        args = [sys.executable, KUBESIM, "--port", "0", "--nodes", str(nodes), "--time-scale",
                str(SCALE), "--state-dir", self.state, "--bookmark-interval", "1"]
        if registry_config is not None:
            path = os.path.join(self.dir, "registry.json")
            with open(path, "w") as f:
                json.dump(registry_config, f)
            args += ["--registry-config", path]
        self.err = open(os.path.join(self.dir, "kubesim.err"), "w")
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self.err, text=True)
        CHILDREN.append(self.proc)
        ready = select.select([self.proc.stdout], [], [], 60)[0]
        line = self.proc.stdout.readline() if ready else ""
        m = re.search(r"kubesim ready: (https://[\d.]+:(\d+))", line)
        if not m:
            self.stop()
            raise RuntimeError("kubesim did not start: %r (see %s)" % (line, self.err.name))
        self.url, self.port = m.group(1), int(m.group(2))
        with open(os.path.join(self.state, "tokens.json")) as f:
            self.tokens = {k: v["token"] for k, v in json.load(f).items()}
        self.ca = os.path.join(self.state, "ca.crt")
        self.cert = os.path.join(self.state, "apiserver.crt")
        self.key = os.path.join(self.state, "apiserver.key")
        self.ctx = ssl.create_default_context(cafile=self.ca)
        self.nodes = nodes

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc.stdout.close()
        self.err.close()

    def kubeconfig(self, identity, server, path):
        """identity's kubeconfig from the state dir, pointed at server."""
        with open(os.path.join(self.state, identity + ".kubeconfig")) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text.replace(self.url, server))
        return path

    # --- HTTPS, retried through injected faults unless retry=False
    def call(self, method, path, body=None, who="admin", ctype="application/json", retry=True,
             ok=(200, 201), timeout=30):
        deadline = time.monotonic() + timeout
        data = json.dumps(body).encode() if body is not None else None
        while True:
            status, out = None, None
            try:
                conn = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx, timeout=15)
                headers = {"Authorization": "Bearer " + self.tokens[who], "Accept": "application/json"}
                if data is not None:
                    headers["Content-Type"] = ctype
                conn.request(method, path, body=data, headers=headers)
                resp = conn.getresponse()
                status, raw = resp.status, resp.read()
                conn.close()
                out = json.loads(raw) if raw else None
            except (OSError, http.client.HTTPException, ValueError) as e:
                out = str(e)
            if status in ok:
                return out
            transient = status is None or status in (429, 500, 503) or \
                (status == 409 and isinstance(out, dict) and "injected" in out.get("message", ""))
            if not retry or not transient or time.monotonic() > deadline:
                raise ApiError(status, out)
            time.sleep(0.1)

    def get(self, path, **kw):
        return self.call("GET", path, **kw)

    def faults(self, cfg):
        return self.call("POST", "/kubesim/faults", cfg)

    def clear_faults(self):
        return self.call("DELETE", "/kubesim/faults")

    def fault_state(self):
        return self.get("/kubesim/faults")


# ---------------------------------------------------------------- proxy


class Proxy:
    """TLS in, TLS out, HTTP/1.1 requests logged.  stop() is the apiserver going
    away (every connection cut, the port refuses), start() it coming back."""

    def __init__(self, sim, name):
        self.sim, self.name = sim, name
        self.port = free_port()
        self.log = []  # dicts: t, method, path, body, status, t_done
        self.lock = threading.Lock()
        self.server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.server_ctx.load_cert_chain(sim.cert, sim.key)
        self.conns = set()
        self.listener = None
        self.reset_writes = False  # cut the connection of every write but the Lease's
        self.resets = []           # the writes cut so: (time, method, path)
        self.start()

    @property
    def url(self):
        return "https://127.0.0.1:%d" % self.port

    def start(self):
        self.up = True
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", self.port))
        s.listen(64)
        self.listener = s
        threading.Thread(target=self._accept, args=(s,), daemon=True).start()

    def stop(self):
        self.up = False  # connections still in their handshake die too
        s, self.listener = self.listener, None
        if s is not None:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()
        self.cut()

    def cut(self):
        """Every open connection dies at once, mid-stream (the listener stays)."""
        with self.lock:
            conns = list(self.conns)
        for c in conns:
            for sock in c:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def _accept(self, listener):
        while self.listener is listener:
            try:
                raw, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(raw, time.monotonic()), daemon=True).start()

    def _serve(self, raw, t_accept):
        pair = None
        try:
            raw.settimeout(10)
            down = self.server_ctx.wrap_socket(raw, server_side=True)
            up = self.sim.ctx.wrap_socket(socket.create_connection(("127.0.0.1", self.sim.port), 10),
                                          server_hostname="127.0.0.1")
            down.settimeout(None)
            up.settimeout(None)
            pair = (down, up)
            with self.lock:
                self.conns.add(pair)
            self._relay(down, up, t_accept)
        except (OSError, ssl.SSLError):
            pass
        finally:
            if pair is not None:
                with self.lock:
                    self.conns.discard(pair)
                for s in pair:
                    s.close()
            else:
                raw.close()

    def _relay(self, down, up, t_accept):
        req = _RequestParser(self, t_accept)
        resp = _ResponseParser(req)
        while self.up:
            ready = [s for s in (down, up) if s.pending()]
            if not ready:
                ready = select.select([down, up], [], [], 1.0)[0]
            for s in ready:
                # Readable may mean a TLS record without data (a TLS 1.3
                # session ticket): a blocking recv would wait for data that
                # only comes once the other direction has moved on.
                s.setblocking(False)
                try:
                    data = s.recv(65536)
                except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
                    continue
                finally:
                    s.setblocking(True)
                if not data or not self.up:
                    return
                if s is down:
                    try:
                        req.feed(data)
                    except _Reset:
                        return
                    up.sendall(data)
                else:
                    resp.feed(data)
                    down.sendall(data)

    # --- what the log says
    def entries(self, since=0.0):
        with self.lock:
            return [e for e in self.log if e["t"] >= since]

    def writes(self, since=0.0):
        """Requests that change something, Lease updates aside."""
        return [e for e in self.entries(since)
                if e["method"] in ("POST", "PUT", "PATCH", "DELETE") and "/leases" not in e["path"]]


class _Reset(Exception):
    pass


class _RequestParser:
    """t is when the request reached the proxy; t_sent when the controller sent
    it, as near as the proxy can tell: for the first request on a connection,
    when the connection was accepted (the TLS handshakes come between)."""

    def __init__(self, proxy, t_accept):
        self.proxy, self.buf, self.pending = proxy, b"", []
        self.entry, self.need = None, 0
        self.t_accept = t_accept

    def feed(self, data):
        self.buf += data
        while True:
            if self.entry is None:
                end = self.buf.find(b"\r\n\r\n")
                if end < 0:
                    return
                head = self.buf[:end].decode("latin-1").split("\r\n")
                self.buf = self.buf[end + 4:]
                method, path = head[0].split(" ")[:2]
                if self.proxy.reset_writes and method != "GET" and "/leases" not in path:
                    with self.proxy.lock:
                        self.proxy.resets.append((time.monotonic(), method, path))
                    raise _Reset()  # the request never reaches kubesim
                length = 0
                for h in head[1:]:
                    k, _, v = h.partition(":")
                    if k.strip().lower() == "content-length":
                        length = int(v.strip())
                now = time.monotonic()
                self.entry = {"t": now, "t_sent": min(now, self.t_accept), "method": method, "path": path,
                              "body": b"", "status": None, "t_done": None}
                self.t_accept = float("inf")  # later requests reuse the connection
                self.need = length
            take = min(self.need, len(self.buf))
            self.entry["body"] += self.buf[:take]
            self.buf = self.buf[take:]
            self.need -= take
            if self.need > 0:
                return
            with self.proxy.lock:
                self.proxy.log.append(self.entry)
            self.pending.append(self.entry)
            self.entry = None


class _ResponseParser:
    """Pairs each answer with its request (HTTP/1.1 answers in order)."""

    def __init__(self, req):
        self.req, self.buf, self.state, self.need = req, b"", "head", 0

    def feed(self, data):
        self.buf += data
        while True:
            if self.state == "head":
                end = self.buf.find(b"\r\n\r\n")
                if end < 0:
                    return
                head = self.buf[:end].decode("latin-1").split("\r\n")
                self.buf = self.buf[end + 4:]
                status = int(head[0].split(" ")[1])
                if 100 <= status < 200:
                    continue  # 100 Continue: the answer comes after the body
                hdrs = {}
                for h in head[1:]:
                    k, _, v = h.partition(":")
                    hdrs[k.strip().lower()] = v.strip()
                e = self.req.pending.pop(0) if self.req.pending else None
                if e is not None:
                    e["status"], e["t_done"] = status, time.monotonic()
                    e["retry_after"] = hdrs.get("retry-after")
                if "chunked" in hdrs.get("transfer-encoding", ""):
                    self.state = "size"
                else:
                    self.state, self.need = "body", int(hdrs.get("content-length", "0"))
            elif self.state == "body":
                take = min(self.need, len(self.buf))
                self.buf = self.buf[take:]
                self.need -= take
                if self.need > 0:
                    return
                self.state = "head"
            elif self.state == "size":
                end = self.buf.find(b"\r\n")
                if end < 0:
                    return
                size = int(self.buf[:end].split(b";")[0], 16)
                self.buf = self.buf[end + 2:]
                self.state, self.need = ("trailer", 0) if size == 0 else ("chunk", size + 2)
            elif self.state == "chunk":
                take = min(self.need, len(self.buf))
                self.buf = self.buf[take:]
                self.need -= take
                if self.need > 0:
                    return
                self.state = "size"
            elif self.state == "trailer":
                end = self.buf.find(b"\r\n")
                if end < 0:
                    return
                line = self.buf[:end]
                self.buf = self.buf[end + 2:]
                if line == b"":
                    self.state = "head"


# ---------------------------------------------------------------- controller


class Controller:
    def __init__(self, sim, name, max_pulls=10, lease=(15, 10, 2), extra=()):
        self.sim, self.name = sim, name
        self.proxy = Proxy(sim, name)
        self.kubeconfig = sim.kubeconfig("controller", self.proxy.url,
                                         os.path.join(sim.dir, name + ".kubeconfig"))
        self.health, self.metrics_port = free_port(), free_port()
        self.args = [CONTROLLER, "--kubeconfig", self.kubeconfig,
                     "--health-probe-bind-address", "127.0.0.1:%d" % self.health,
                     "--metrics-bind-address", "127.0.0.1:%d" % self.metrics_port,
                     "--max-concurrent-pulls", str(max_pulls),
                     "--helper-image", "busybox:1.36-musl",
                     "--leader-elect-namespace", LEASE_NS, "--leader-elect-identity", name,
                     "--leader-elect-lease-duration", str(lease[0]),
                     "--leader-elect-renew-deadline", str(lease[1]),
                     "--leader-elect-retry-period", str(lease[2]),
                     "--log-level", "debug"] + list(extra)
        self.runs = 0
        self.proc = None
        self.start()

    def start(self):
        self.runs += 1
        self.err_path = os.path.join(self.sim.dir, "%s.%d.err" % (self.name, self.runs))
        self.err = open(self.err_path, "w")
        env = dict(os.environ)
        env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
        env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1")
        self.proc = subprocess.Popen(self.args, stdout=self.err, stderr=subprocess.STDOUT, env=env)
        CHILDREN.append(self.proc)

    def wait_ready(self, timeout=30):
        def ready():
            if self.proc.poll() is not None:
                raise AssertionError("%s exited with %s: %s" % (self.name, self.proc.returncode, self.tail()))
            return self.probe("/readyz", self.health)[0] == 200
        wait_until(ready, timeout, "%s /readyz" % self.name)

    def probe(self, path, port):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", path)
            r = conn.getresponse()
            out = (r.status, r.read().decode())
            conn.close()
            return out
        except (OSError, http.client.HTTPException):
            return (None, "")

    def metrics(self):
        status, text = self.probe("/metrics", self.metrics_port)
        if status != 200:
            return None
        out = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                k, _, v = line.rpartition(" ")
                out[k] = float(v)
        return out

    def leading(self):
        m = self.metrics()
        return bool(m and m.get("ota_controller_leader") == 1)

    def tail(self, n=30):
        try:
            with open(self.err_path) as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""

    def sanitizer_reports(self):
        bad = []
        for i in range(1, self.runs + 1):
            path = os.path.join(self.sim.dir, "%s.%d.err" % (self.name, i))
            try:
                with open(path, errors="replace") as f:
                    bad += ["%s: %s" % (os.path.basename(path), l.rstrip()) for l in f if SANITIZER.search(l)]
            except OSError:
                pass
        return bad

    def kill(self):
        """SIGKILL: no lease release, nothing flushed."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        self.err.close()

    def stop(self):
        """SIGTERM; returns the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
                self.err.close()
                return "hung"
        self.err.close()
        return self.proc.returncode

    def close(self):
        rc = self.stop()
        self.proxy.stop()
        return rc


# ---------------------------------------------------------------- job tracker


class JobTracker(threading.Thread):
    """Every pre-pull Job that exists at any moment, and how many were running
    (neither Complete nor Failed nor being deleted) after each change."""

    def __init__(self, sim):
        super().__init__(daemon=True)
        self.sim = sim
        self.lock = threading.Lock()
        self.jobs = {}  # uid -> latest object
        self.order = []  # uids, in the order the Jobs were created
        self.gone = set()
        self.max_running = 0
        self.stopping = False
        self.synced = threading.Event()

    @staticmethod
    def finished(job):
        for c in (job.get("status") or {}).get("conditions") or []:
            if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
                return True
        return False

    def running(self):
        with self.lock:
            return [j for u, j in self.jobs.items() if u not in self.gone and not self.finished(j)
                    and not j["metadata"].get("deletionTimestamp")]

    def reset_max(self):
        with self.lock:
            self.max_running = 0

    def _note(self, obj, deleted=False):
        uid = obj["metadata"]["uid"]
        with self.lock:
            if uid not in self.jobs:
                self.order.append(uid)
            self.jobs[uid] = obj
            if deleted:
                self.gone.add(uid)
        n = len(self.running())
        with self.lock:
            self.max_running = max(self.max_running, n)

    def all_jobs(self):
        with self.lock:
            return list(self.jobs.values())

    def jobs_of(self, pod_uid):
        return [j for j in self.all_jobs() if j["metadata"]["labels"].get("ota-prepull/pod-uid") == pod_uid]

    def live_jobs_of(self, pod_uid):
        with self.lock:
            gone = set(self.gone)
        return [j for j in self.jobs_of(pod_uid) if j["metadata"]["uid"] not in gone]

    def duplicates(self):
        """Requests (pod uid, revision, request time) or names with more than one Job."""
        seen = {}
        for j in self.all_jobs():
            m = j["metadata"]
            a = m.get("annotations") or {}
            for key in [("request", m["labels"].get("ota-prepull/pod-uid"), a.get("ota-prepull/revision"),
                         a.get("ota-prepull/request-time")), ("name", m["namespace"], m["name"])]:
                seen.setdefault(key, set()).add(m["uid"])
        return {k: v for k, v in seen.items() if len(v) > 1}

    def run(self):
        path = "/apis/batch/v1/jobs?labelSelector=" + urllib.parse.quote(MANAGED)
        rv = None
        while not self.stopping:
            try:
                if rv is None:
                    lst = self.sim.get(path, timeout=10)
                    live = set()
                    for item in lst["items"]:
                        self._note(item)
                        live.add(item["metadata"]["uid"])
                    with self.lock:
                        missing = [u for u in self.jobs if u not in live]
                        self.gone.update(missing)
                    rv = lst["metadata"]["resourceVersion"]
                    self.synced.set()
                rv = self._watch(path, rv)
            except (ApiError, OSError, http.client.HTTPException, ValueError):
                time.sleep(0.1)

    def _watch(self, path, rv):
        conn = http.client.HTTPSConnection("127.0.0.1", self.sim.port, context=self.sim.ctx, timeout=30)
        try:
            conn.request("GET", path + "&watch=1&allowWatchBookmarks=true&timeoutSeconds=20&resourceVersion="
                         + rv, headers={"Authorization": "Bearer " + self.sim.tokens["admin"]})
            resp = conn.getresponse()
            if resp.status == 410:
                return None
            if resp.status != 200:
                resp.read()
                time.sleep(0.1)
                return rv
            while not self.stopping:
                line = resp.readline()
                if not line:
                    return rv
                ev = json.loads(line)
                obj = ev.get("object") or {}
                if ev["type"] == "ERROR":
                    return None if obj.get("code") == 410 else rv
                rv = obj.get("metadata", {}).get("resourceVersion", rv)
                if ev["type"] in ("ADDED", "MODIFIED"):
                    self._note(obj)
                elif ev["type"] == "DELETED":
                    self._note(obj, deleted=True)
            return rv
        finally:
            conn.close()


# ---------------------------------------------------------------- the tests' base


class Base(unittest.TestCase):
    NODES = 3
    REGISTRY = REGISTRY_CONFIG
    CONTROLLERS = 1
    MAX_PULLS = 10
    LEASE = (15, 10, 2)

    @classmethod
    def setUpClass(cls):
        t0 = time.monotonic()
        cls.sim = Kubesim(cls.NODES, cls.REGISTRY)
        cls.ctls = []
        try:
            cls.sim.call("POST", "/api/v1/namespaces", {"metadata": {"name": LEASE_NS}})
            cls.tracker = JobTracker(cls.sim)
            cls.tracker.start()
            for i in range(cls.CONTROLLERS):
                cls.ctls.append(Controller(cls.sim, "ctl-%s-%d" % (cls.__name__.lower(), i),
                                           cls.MAX_PULLS, cls.LEASE))
            for c in cls.ctls:
                c.wait_ready()
            wait_until(lambda: any(c.leading() for c in cls.ctls), 30, "a leader")
            assert cls.tracker.synced.wait(30), "job tracker did not sync"
            log("%s set up in %.1fs" % (cls.__name__, time.monotonic() - t0))
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        problems = []
        for c in cls.ctls:
            rc = c.close()
            if rc not in (0, -9):
                problems.append("%s exited with %s on SIGTERM:\n%s" % (c.name, rc, c.tail()))
            problems += c.sanitizer_reports()
        if hasattr(cls, "tracker"):
            cls.tracker.stopping = True
        cls.sim.stop()
        if problems:
            raise AssertionError("\n".join(problems))

    def setUp(self):
        self.t_start = time.monotonic()
        self.ns = re.sub(r"[^a-z0-9]+", "-", self.id().split(".")[-1].lower())[:50].strip("-")
        self.sim.call("POST", "/api/v1/namespaces", {"metadata": {"name": self.ns}})

    def tearDown(self):
        # whatever a test injected, the next one starts clean
        self.sim.clear_faults()
        log("%s took %.1fs" % (self.id().split(".")[-1], time.monotonic() - self.t_start))

    @property
    def ctl(self):
        return self.ctls[0]

    # --- objects
    def make_ds(self, image, name="agent", secrets=(), timeout=None, nodes=None, init_image=None):
        meta = {"name": name, "namespace": self.ns, "annotations": {OTA: "OTA"}}
        if timeout is not None:
            meta["annotations"][TIMEOUT_ANN] = str(timeout)
        tmpl = {"containers": [{"name": "main", "image": image}]}
        if init_image is not None:
            tmpl["initContainers"] = [{"name": "setup", "image": init_image, "command": ["true"]}]
        if secrets:
            tmpl["imagePullSecrets"] = [{"name": s} for s in secrets]
        if nodes is not None:
            tmpl["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "kubernetes.io/hostname", "operator": "In", "values": list(nodes)}]}]}}}
        ds = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": meta,
              "spec": {"selector": {"matchLabels": {"app": name}},
                       "updateStrategy": {"type": "OnDelete"},
                       "template": {"metadata": {"labels": {"app": name}}, "spec": tmpl}}}
        self.sim.call("POST", "/apis/apps/v1/namespaces/%s/daemonsets" % self.ns, ds)
        want = len(nodes) if nodes is not None else self.NODES
        return wait_until(lambda: self.running_pods(name, want), 60, "%d running pods of %s" % (want, name))

    def set_image(self, image, name="agent"):
        """A new template, hence a new ControllerRevision; returns its hash."""
        old = self.newest_hash(name)
        patch = {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": image}]}}}}
        self.sim.call("PATCH", "/apis/apps/v1/namespaces/%s/daemonsets/%s" % (self.ns, name), patch,
                      ctype="application/strategic-merge-patch+json")
        return wait_until(lambda: (lambda h: h != old and h)(self.newest_hash(name)), 30,
                          "a new revision of %s" % name)

    def newest_hash(self, name="agent"):
        ds = self.sim.get("/apis/apps/v1/namespaces/%s/daemonsets/%s" % (self.ns, name))
        revs = [r for r in self.sim.get("/apis/apps/v1/namespaces/%s/controllerrevisions" % self.ns)["items"]
                if any(o.get("uid") == ds["metadata"]["uid"] for o in r["metadata"].get("ownerReferences", []))]
        if not revs:
            return None
        return max(revs, key=lambda r: r["revision"])["metadata"]["labels"]["controller-revision-hash"]

    def pods(self, name="agent"):
        q = urllib.parse.quote("app=" + name)
        return [p for p in self.sim.get("/api/v1/namespaces/%s/pods?labelSelector=%s" % (self.ns, q))["items"]
                if not p["metadata"].get("deletionTimestamp")]

    def running_pods(self, name, want):
        pods = [p for p in self.pods(name) if p["status"].get("phase") == "Running"]
        return sorted(pods, key=lambda p: p["spec"]["nodeName"]) if len(pods) == want else None

    def pod(self, name):
        return self.sim.get("/api/v1/namespaces/%s/pods/%s" % (self.ns, name))

    @staticmethod
    def cond(pod, ctype):
        for c in pod["status"].get("conditions") or []:
            if c["type"] == ctype:
                return c
        return None

    def wait_need_upgrade(self, pods, status, h, timeout=30):
        def check():
            out = []
            for p in pods:
                c = self.cond(self.pod(p["metadata"]["name"]), "PodNeedUpgrade")
                if not c or c["status"] != status or c.get("message") != "controllerrevision: " + h:
                    return None
                out.append(c)
            return out
        return wait_until(check, timeout, "PodNeedUpgrade=%s %s on %d pods" % (status, h, len(pods)))

    def request_pull(self, pod, h):
        """The node user's pre-pull request, as `kubectl ota pull` writes it."""
        t = request_time()
        body = {"status": {"conditions": [{"type": "PodImageReady", "status": "False", "reason": "WaitPullImage",
                                           "message": "controllerrevision: " + h, "lastTransitionTime": t}]}}
        self.sim.call("PATCH", "/api/v1/namespaces/%s/pods/%s/status" % (self.ns, pod["metadata"]["name"]),
                      body, who=pod["spec"]["nodeName"], ctype="application/strategic-merge-patch+json")
        return t

    def wait_image_ready(self, pod, reason, timeout=20, message=None):
        """PodImageReady ends with reason (PullImageSuccess or PullImageFail)."""
        def check():
            c = self.cond(self.pod(pod["metadata"]["name"]), "PodImageReady")
            return c if c and c.get("reason") == reason else None
        c = wait_until(check, timeout, "PodImageReady %s on %s" % (reason, pod["metadata"]["name"]))
        self.assertEqual(c["status"], "True" if reason == "PullImageSuccess" else "False")
        if message is not None:
            self.assertEqual(c["message"], message)
        return c

    def events(self, pod):
        sel = urllib.parse.quote("involvedObject.name=%s" % pod["metadata"]["name"])
        return self.sim.get("/api/v1/namespaces/%s/events?fieldSelector=%s" % (self.ns, sel))["items"]

    def event_reasons(self, pod):
        return [e["reason"] for e in self.events(pod) if e.get("source", {}).get("component") == "ota-controller"]

    def live_jobs(self):
        return self.sim.get("/apis/batch/v1/namespaces/%s/jobs" % self.ns)["items"]

    def assert_no_duplicate_jobs(self):
        dups = self.tracker.duplicates()
        self.assertEqual(dups, {}, "more than one Job for one request")

    def assert_one_job_per_request(self, pods, requests_per_pod=1):
        for p in pods:
            jobs = self.tracker.jobs_of(p["metadata"]["uid"])
            self.assertEqual(len(jobs), requests_per_pod,
                             "Jobs of %s: %s" % (p["metadata"]["name"], [j["metadata"]["name"] for j in jobs]))

    def upgraded_ds(self, old=AGENT + "v1", new=AGENT + "v2", **kw):
        """An OTA DaemonSet at old, then updated to new: (pods, new hash)."""
        pods = self.make_ds(old, **kw)
        h = self.set_image(new)
        self.wait_need_upgrade(pods, "True", h)
        return pods, h


# ---------------------------------------------------------------- behaviour


class ControllerBehaviour(Base):
    """One node (or two) per test, so that no test's pull waits behind another's
    (kubelets pull one image at a time, and the big ones take seconds)."""
    NODES = 6

    def test_update_marks_exactly_the_stale_pods(self):
        pods = self.make_ds(AGENT + "v1")
        h1 = self.newest_hash()
        # current pods: False (written once the controller sees them)
        self.wait_need_upgrade(pods, "False", h1)
        h2 = self.set_image(AGENT + "v2")
        self.assertNotEqual(h1, h2)
        self.wait_need_upgrade(pods, "True", h2)
        # the upgrade of one pod: the DaemonSet controller recreates it at h2
        gone = pods[0]
        self.sim.call("DELETE", "/api/v1/namespaces/%s/pods/%s" % (self.ns, gone["metadata"]["name"]),
                      who=gone["spec"]["nodeName"])
        fresh = wait_until(lambda: [p for p in self.running_pods("agent", self.NODES) or []
                                    if p["spec"]["nodeName"] == gone["spec"]["nodeName"]
                                    and p["metadata"]["uid"] != gone["metadata"]["uid"]], 30, "the new pod")
        self.assertEqual(fresh[0]["metadata"]["labels"]["controller-revision-hash"], h2)
        self.wait_need_upgrade(fresh, "False", h2)
        self.wait_need_upgrade(pods[1:], "True", h2)
        # and it stays so, written once: nothing flips back, nothing rewritten
        t_quiet = time.monotonic() + 0.5
        time.sleep(2)
        self.wait_need_upgrade(fresh, "False", h2, timeout=1)
        self.wait_need_upgrade(pods[1:], "True", h2, timeout=1)
        rewrites = [e["path"] for e in self.ctl.proxy.writes(t_quiet) if self.ns in e["path"]]
        self.assertEqual(rewrites, [], "writes with nothing to change")
        # a strategic merge by type: the kubelet's conditions are all still there
        for p in pods[1:] + fresh:
            types = [c["type"] for c in self.pod(p["metadata"]["name"])["status"]["conditions"]]
            for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready", "PodNeedUpgrade"):
                self.assertIn(t, types)
        # no pull was asked for: no Job, no PodImageReady
        self.assertEqual(self.live_jobs(), [])
        for p in pods[1:] + fresh:
            self.assertIsNone(self.cond(self.pod(p["metadata"]["name"]), "PodImageReady"))

    def test_request_becomes_one_job_on_the_node(self):
        pods, h = self.upgraded_ds(nodes=["node-5"], init_image="busybox:1.37-musl")
        pod = pods[0]
        self.request_pull(pod, h)
        self.wait_image_ready(pod, "PullImageSuccess", message="controllerrevision: " + h)
        jobs = self.tracker.jobs_of(pod["metadata"]["uid"])
        self.assertEqual(len(jobs), 1, [j["metadata"]["name"] for j in jobs])
        job = jobs[0]
        self.assertTrue(job["metadata"]["name"].startswith("ota-prepull-"))
        self.assertEqual(job["metadata"]["namespace"], self.ns)
        self.assertEqual(job["spec"]["template"]["spec"]["nodeName"], "node-5")
        spec = job["spec"]["template"]["spec"]
        # the revision's images, init containers' too, after the helper
        images = [c["image"] for c in spec["initContainers"]]
        self.assertEqual(images[0], "busybox:1.36-musl")
        self.assertEqual(sorted(images[1:]), sorted([AGENT + "v2", "busybox:1.37-musl"]))
        self.assertEqual(spec["tolerations"], [{"operator": "Exists"}])
        self.assertEqual(spec["restartPolicy"], "Never")
        self.assertIs(spec.get("automountServiceAccountToken"), False)
        self.assertEqual(job["spec"]["activeDeadlineSeconds"], 600)  # --pull-timeout's default
        self.assertNotIn("ttlSecondsAfterFinished", job["spec"])
        owner = job["metadata"]["ownerReferences"][0]
        self.assertEqual((owner["kind"], owner["uid"]), ("Pod", pod["metadata"]["uid"]))
        live = self.live_jobs()
        self.assertEqual([j["metadata"]["name"] for j in live], [job["metadata"]["name"]])
        self.assertTrue(JobTracker.finished(live[0]))
        reasons = wait_until(lambda: (lambda r: "PrePullSucceeded" in r and r)(self.event_reasons(pod)),
                             10, "PrePullSucceeded event")
        self.assertIn("PrePullStarted", reasons)
        self.assertNotIn("PrePullFailed", reasons)

    def test_private_image_with_and_without_pull_secret(self):
        cred = base64.b64encode(b"ota:ota-secret").decode()
        cfg = json.dumps({"auths": {REG: {"auth": cred}}}).encode()
        self.sim.call("POST", "/api/v1/namespaces/%s/secrets" % self.ns,
                      {"metadata": {"name": "regcred"}, "type": "kubernetes.io/dockerconfigjson",
                       "data": {".dockerconfigjson": base64.b64encode(cfg).decode()}})
        # with the secret in the template: pulled
        pods = self.make_ds(AGENT + "v1", name="with", secrets=["regcred"], nodes=["node-3"], timeout=30)
        h = self.set_image(PRIVATE + "1.0", name="with")
        self.wait_need_upgrade(pods, "True", h)
        self.request_pull(pods[0], h)
        self.wait_image_ready(pods[0], "PullImageSuccess")
        job = self.tracker.jobs_of(pods[0]["metadata"]["uid"])[0]
        self.assertEqual(job["spec"]["template"]["spec"].get("imagePullSecrets"), [{"name": "regcred"}])
        # without: 401 from the registry, the pull fails by the deadline.  Node 4
        # has never pulled the image, so no cached copy lets it through.
        pods = self.make_ds(AGENT + "v1", name="without", nodes=["node-4"], timeout=30)
        h = self.set_image(PRIVATE + "2.0", name="without")
        self.wait_need_upgrade(pods, "True", h)
        self.request_pull(pods[0], h)
        c = self.wait_image_ready(pods[0], "PullImageFail", timeout=20)
        self.assertIn("401", c["message"])
        self.assertTrue(c["message"].startswith("pull image job ota-prepull-"), c["message"])
        self.assertIn("PrePullFailed", self.event_reasons(pods[0]))

    def test_unknown_image_fails_within_deadline(self):
        pods, h = self.upgraded_ds(new=MISSING, timeout=30, nodes=["node-5"])
        t0 = time.monotonic()
        self.request_pull(pods[0], h)
        c = self.wait_image_ready(pods[0], "PullImageFail", timeout=20)
        took = time.monotonic() - t0
        # deadline 30 simulated seconds = 1 s; the Job controller, the kubelet's
        # back-off and our reaction add a few
        self.assertLess(took, 30.0 / SCALE + 6, "failure reported after %.1fs" % took)
        self.assertIn("ErrImagePull", c["message"])
        self.assertIn("not found", c["message"])
        job = self.tracker.jobs_of(pods[0]["metadata"]["uid"])[0]
        self.assertEqual(job["spec"]["activeDeadlineSeconds"], 30)
        self.assertIn(job["metadata"]["name"], c["message"])

    def test_retry_after_failure(self):
        cred = base64.b64encode(b"ota:ota-secret").decode()
        pods, h = self.upgraded_ds(new=PRIVATE + "2.0", timeout=30, nodes=["node-6"], secrets=["regcred"])
        pod = pods[0]
        # the secret is missing at first: the pull fails
        self.request_pull(pod, h)
        self.wait_image_ready(pod, "PullImageFail", timeout=20)
        first = self.tracker.jobs_of(pod["metadata"]["uid"])
        self.assertEqual(len(first), 1)
        # the admin adds the secret; the node user asks again
        cfg = json.dumps({"auths": {REG: {"auth": cred}}}).encode()
        self.sim.call("POST", "/api/v1/namespaces/%s/secrets" % self.ns,
                      {"metadata": {"name": "regcred"}, "type": "kubernetes.io/dockerconfigjson",
                       "data": {".dockerconfigjson": base64.b64encode(cfg).decode()}})
        self.request_pull(pod, h)
        self.wait_image_ready(pod, "PullImageSuccess", timeout=20)
        jobs = self.tracker.jobs_of(pod["metadata"]["uid"])
        self.assertEqual(len(jobs), 2, [j["metadata"]["name"] for j in jobs])
        live = [j["metadata"]["name"] for j in self.live_jobs()]
        second = [j for j in jobs if j["metadata"]["uid"] != first[0]["metadata"]["uid"]][0]
        wait_until(lambda: [j["metadata"]["name"] for j in self.live_jobs()] == [second["metadata"]["name"]],
                   10, "only the second Job left (live: %s)" % live)
        self.assert_no_duplicate_jobs()

    def test_second_revision_while_pulling(self):
        pods, h2 = self.upgraded_ds(new=BIG + "1.0", nodes=["node-1"])
        pod = pods[0]
        self.request_pull(pod, h2)
        job = wait_until(lambda: self.tracker.live_jobs_of(pod["metadata"]["uid"]), 10, "the Job")[0]
        self.assertFalse(JobTracker.finished(job))
        h3 = self.set_image(AGENT + "v3")
        self.wait_need_upgrade(pods, "True", h3)
        wait_until(lambda: self.cond(self.pod(pod["metadata"]["name"]), "PodImageReady") is None, 10,
                   "PodImageReady dropped")
        wait_until(lambda: not self.tracker.live_jobs_of(pod["metadata"]["uid"]), 10, "the stale Job deleted")
        self.assertFalse(JobTracker.finished(self.tracker.jobs_of(pod["metadata"]["uid"])[0]),
                         "the Job finished before the new revision came: the test proves nothing")
        # and a request for the new revision works
        self.request_pull(pod, h3)
        self.wait_image_ready(pod, "PullImageSuccess", message="controllerrevision: " + h3)
        self.assert_no_duplicate_jobs()

    def test_pod_deleted_while_pulling(self):
        pods, h = self.upgraded_ds(new=BIG + "2.0", nodes=["node-2"])
        pod = pods[0]
        self.request_pull(pod, h)
        job = wait_until(lambda: self.tracker.live_jobs_of(pod["metadata"]["uid"]), 10, "the Job")[0]
        self.sim.call("DELETE", "/api/v1/namespaces/%s/pods/%s" % (self.ns, pod["metadata"]["name"]),
                      who="node-2")
        wait_until(lambda: not self.tracker.live_jobs_of(pod["metadata"]["uid"]), 20,
                   "Job %s garbage-collected" % job["metadata"]["name"])
        self.assertFalse(JobTracker.finished(self.tracker.jobs_of(pod["metadata"]["uid"])[0]),
                         "the Job finished before the pod went: the test proves nothing")
        self.assertEqual(len(self.tracker.jobs_of(pod["metadata"]["uid"])), 1)

    def test_image_already_on_node(self):
        node = self.sim.get("/api/v1/nodes/node-1")
        names = [n for i in node["status"].get("images", []) for n in i["names"]]
        self.assertIn("%s" % PRELOADED, names)
        pods, h = self.upgraded_ds(new=PRELOADED, nodes=["node-1"])
        self.request_pull(pods[0], h)
        self.wait_image_ready(pods[0], "PullImageSuccess", message="controllerrevision: " + h)
        time.sleep(0.5)
        self.assertEqual(self.tracker.jobs_of(pods[0]["metadata"]["uid"]), [])
        reasons = self.event_reasons(pods[0])
        self.assertIn("PrePullSucceeded", reasons)
        self.assertNotIn("PrePullStarted", reasons)


class Concurrency(Base):
    NODES = 50
    MAX_PULLS = 5

    def test_fifty_requests_five_at_a_time(self):
        pods, h = self.upgraded_ds()
        self.assertEqual(len(pods), 50)
        self.tracker.reset_max()
        samples = []
        stop = threading.Event()

        def sample():
            while not stop.is_set():
                jobs = self.sim.get("/apis/batch/v1/namespaces/%s/jobs" % self.ns)["items"]
                samples.append(sum(1 for j in jobs if not JobTracker.finished(j)
                                   and not j["metadata"].get("deletionTimestamp")))
                time.sleep(0.05)
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        try:
            for p in pods:
                self.request_pull(p, h)
            for p in pods:
                self.wait_image_ready(p, "PullImageSuccess", timeout=90, message="controllerrevision: " + h)
        finally:
            stop.set()
            sampler.join(5)
        log("samples", len(samples), "max sampled", max(samples), "max tracked", self.tracker.max_running)
        self.assertLessEqual(max(samples), 5)
        self.assertLessEqual(self.tracker.max_running, 5)
        self.assertEqual(max(samples), 5, "never 5 at once: the limit was not exercised")
        self.assert_one_job_per_request(pods)
        self.assert_no_duplicate_jobs()
        # FIFO (request order = lastTransitionTime order): a free slot goes to
        # the oldest waiting request.  One whose node is still being read (the
        # images shortcut) keeps its slot meanwhile, so a later request may
        # start first, but never past more than max-concurrent-pulls - 1
        # older ones still waiting
        uids = {p["metadata"]["uid"] for p in pods}
        with self.tracker.lock:
            made = [self.tracker.jobs[u] for u in self.tracker.order]
        times = [j["metadata"]["annotations"]["ota-prepull/request-time"] for j in made
                 if j["metadata"]["labels"]["ota-prepull/pod-uid"] in uids]
        waiting = sorted(times)
        for t in times:
            overtaken = waiting.index(t)
            self.assertLess(overtaken, 5, "the request of %s started before %d older ones: %s" % (
                t, overtaken, [x[-6:-1] for x in times]))
            waiting.remove(t)
        queued = sum(1 for p in pods if "PrePullQueued" in self.event_reasons(p))
        self.assertGreaterEqual(queued, 40, "PrePullQueued events on %d pods" % queued)


# ---------------------------------------------------------------- faults


class Faults(Base):
    """Each test: a DaemonSet on all nodes, updated, a request on every pod, with
    a fault going on; every request must end PullImageSuccess, one Job each."""
    NODES = 3
    LEASE = (4, 3, 0.5)

    def run_flow(self, during, settle=20, image=None):
        """settle: how long after the fault the requests may take to end; well
        under the controller's 30 s resync, so that a request left for the
        resync to find counts as lost."""
        image = image or FRESH.pop()
        pods = self.make_ds(AGENT + "v1")
        h = self.set_image(image)
        self.wait_need_upgrade(pods, "True", h, timeout=60)
        for p in pods:
            self.request_pull(p, h)
        during(pods, h)
        self.sim.clear_faults()
        for p in pods:
            self.wait_image_ready(p, "PullImageSuccess", timeout=settle, message="controllerrevision: " + h)
        self.assert_one_job_per_request(pods)
        self.assert_no_duplicate_jobs()
        return pods, h

    def test_watches_dropped(self):
        """kubesim ends every watch (cleanly, as at its timeout) every 0.25 s,
        and every 1 s the proxy cuts every connection mid-stream."""
        t0 = time.monotonic()
        dropped = [0]
        before = self.ctl.metrics()

        def during(pods, h):
            for i in range(20):
                dropped[0] += self.sim.call("POST", "/kubesim/faults/drop-watches")["dropped"]
                if i % 4 == 3:
                    self.ctl.proxy.cut()
                time.sleep(0.25)
        self.run_flow(during)
        watches = [e for e in self.ctl.proxy.entries(t0) if "watch=1" in e["path"]]
        self.assertGreater(dropped[0], 20 * 4, "the watches were not dropped")
        self.assertGreater(len(watches), 20 * 4, "the watches were not opened again")
        after = self.ctl.metrics()
        restarts = sum(v - before.get(k, 0) for k, v in after.items()
                       if k.startswith("ota_controller_watch_restarts_total"))
        self.assertGreaterEqual(restarts, 1, "no watch was cut mid-stream")

    def test_410_on_relist(self):
        before = self.ctl.metrics()

        def during(pods, h):
            # the resuming watches meet forgotten history; the first relists answer 410 too
            self.sim.faults({"error": {"code": 410, "watch": False, "methods": ["GET"], "count": 6,
                                       "pathContains": "/apis/"}})
            self.sim.call("POST", "/kubesim/faults/compact")
            self.sim.call("POST", "/kubesim/faults/drop-watches")
            time.sleep(1)
            # 410 as a watch ERROR event
            self.sim.faults({"error": {"code": 410, "watch": True, "count": 10}})
            self.sim.call("POST", "/kubesim/faults/drop-watches")
            time.sleep(1)
            self.sim.clear_faults()
            self.sim.call("POST", "/kubesim/faults/compact")
            self.sim.call("POST", "/kubesim/faults/drop-watches")
        self.run_flow(during)
        after = self.ctl.metrics()
        relists = sum(v - before.get(k, 0) for k, v in after.items()
                      if k.startswith("ota_controller_relists_total"))
        self.assertGreaterEqual(relists, 5, "no relist happened")

    def test_429_storm_with_retry_after(self):
        retry_after = 2
        window = {}

        def during(pods, h):
            window["start"] = time.monotonic()
            self.sim.faults({"error": {"code": 429, "rate": 1.0, "retryAfter": retry_after}})
            self.sim.call("POST", "/kubesim/faults/drop-watches")
            time.sleep(6)
            window["end"] = time.monotonic()
        before = self.ctl.metrics()
        self.run_flow(during)
        after = self.ctl.metrics()
        log_ = [e for e in self.ctl.proxy.entries(window["start"]) if e["t"] < window["end"]]
        hits = [e for e in log_ if e["status"] == 429]
        self.assertGreater(len(hits), 3, "the controller met no 429: the test proves nothing")
        counted = sum(v - before.get(k, 0) for k, v in after.items()
                      if k.startswith("ota_controller_api_calls_total") and 'code="429"' in k)
        self.assertGreaterEqual(counted, len(hits), "api_calls_total misses 429s")
        # no storm: each Retry-After period ends with one call going out, the
        # rest waiting for its answer (7 calls in all, typically; ~27 when
        # calls that had their rate-limit token kept going during pauses)
        log("%d requests, %d answered 429, in the storm" % (len(log_), len(hits)))
        self.assertLess(len(log_), 20, "%d requests in a 6 s 429 storm" % len(log_))
        # Retry-After honoured: after an answer 429, nothing new goes out for
        # retryAfter seconds (what was already on the wire aside)
        for hit in hits:
            early = [e for e in log_ if hit["t_done"] + 0.2 < e["t_sent"] < hit["t_done"] + retry_after - 0.3]
            if early:
                t0 = window["start"]
                self.fail("%d requests %.2fs after a 429 with Retry-After %d: %s\n%s" % (
                    len(early), early[0]["t_sent"] - hit["t_done"], retry_after,
                    [(e["method"], e["path"][:80]) for e in early[:5]],
                    "\n".join("%.3f %.3f %s %s %s %s" % (e["t_sent"] - t0, e["t"] - t0, e["method"], e["path"][:70],
                                                      e["status"], (e["t_done"] or t0) - t0) for e in log_)))

    def test_500s(self):
        t0 = time.monotonic()

        def during(pods, h):
            self.sim.faults({"error": {"code": 500, "rate": 1.0}})
            self.sim.call("POST", "/kubesim/faults/drop-watches")
            time.sleep(2)
            self.sim.faults({"error": {"code": 500, "rate": 0.3}})
            time.sleep(4)
        self.run_flow(during)
        log_ = self.ctl.proxy.entries(t0)
        failed_writes = [e for e in log_ if e["status"] == 500 and e["method"] != "GET"]
        self.assertGreater(len([e for e in log_ if e["status"] == 500]), 10)
        self.assertGreater(len(failed_writes), 0, "no write met a 500: the test proves little")

    def test_409_on_writes(self):
        """An injected 409 on a create is a lie the controller believes
        ("already there"): the Job it thinks exists never shows up in its
        cache, so it must try again by itself, soon."""
        t0 = time.monotonic()

        def during(pods, h):
            self.sim.faults({"error": {"code": 409, "rate": 1.0, "count": 6, "methods": ["POST", "PATCH"],
                                       "pathContains": "/namespaces/" + self.ns + "/"}})
            time.sleep(2)
        self.run_flow(during)
        conflicts = [e for e in self.ctl.proxy.entries(t0) if e["status"] == 409 and "/jobs" in e["path"]]
        self.assertGreater(len(conflicts), 0, "no Job create met the 409: the test proves little")

    def test_slow_apiserver(self):
        def during(pods, h):
            self.sim.faults({"delay": {"seconds": 1.5, "rate": 0.5}})
            time.sleep(5)
        self.run_flow(during)

    def test_apiserver_restarted(self):
        """kubesim keeps no state across its own restarts (objects in memory,
        a fresh CA and fresh tokens each start), so the restart is what the
        controller sees of one: every connection cut, the port refusing for
        3 s, the watch history gone when it comes back, and the cluster
        having moved on meanwhile (the pulls finish while it is away)."""
        seen = {}

        def during(pods, h):
            wait_until(lambda: len(self.live_jobs()) >= 1, 10, "a Job")
            self.ctl.proxy.stop()
            seen["down"] = time.monotonic()
            time.sleep(3)
            self.sim.call("POST", "/kubesim/faults/compact")
            seen["finished"] = [j["metadata"]["name"] for j in self.live_jobs() if JobTracker.finished(j)]
            seen["waiting"] = [p["metadata"]["name"] for p in pods if (self.cond(
                self.pod(p["metadata"]["name"]), "PodImageReady") or {}).get("reason") == "WaitPullImage"]
            self.ctl.proxy.start()
            seen["up"] = time.monotonic()
        before = self.ctl.metrics()
        self.run_flow(during)
        self.assertTrue(self.ctl.proc.poll() is None, "the controller died: " + self.ctl.tail())
        self.assertTrue(seen["finished"] and seen["waiting"],
                        "nothing happened while the apiserver was away: %s" % seen)
        self.assertEqual([e for e in self.ctl.proxy.entries(seen["down"]) if e["t"] < seen["up"]], [])
        after = self.ctl.metrics()
        relists = sum(v - before.get(k, 0) for k, v in after.items()
                      if k.startswith("ota_controller_relists_total"))
        # the watches of what changed meanwhile (pods, Jobs) met lost history
        self.assertGreaterEqual(relists, 1, "no relist after the history was lost")

    def test_controller_sigkilled_mid_pull(self):
        def during(pods, h):
            jobs = wait_until(lambda: [j for j in self.live_jobs() if not JobTracker.finished(j)], 10,
                              "a running Job")
            self.ctl.kill()
            self.assertFalse(JobTracker.finished(self.sim.get(
                "/apis/batch/v1/namespaces/%s/jobs/%s" % (self.ns, jobs[0]["metadata"]["name"]))),
                "the pull ended before the kill: the test proves nothing")
            self.ctl.start()
            self.ctl.wait_ready()
        # big images: several seconds of pulling
        self.run_flow(during, image=BIG + "1.0", settle=25)


class LeaderElection(Base):
    NODES = 3
    CONTROLLERS = 2
    LEASE = (3, 2, 0.5)

    def leader(self):
        leaders = [c for c in self.ctls if c.proc.poll() is None and c.leading()]
        return leaders[0] if len(leaders) == 1 else None

    def test_only_the_leader_writes_and_hands_over(self):
        t0 = time.monotonic()
        lead = wait_until(self.leader, 10, "one leader")
        other = [c for c in self.ctls if c is not lead][0]
        pods, h = self.upgraded_ds(nodes=["node-1", "node-2"])
        self.request_pull(pods[0], h)
        self.wait_image_ready(pods[0], "PullImageSuccess")
        self.assertEqual(other.proxy.writes(t0), [], "the follower wrote")
        self.assertEqual([e for e in other.proxy.entries(t0) if "/leases" in e["path"] and e["method"] != "GET"],
                         [], "the follower wrote the Lease while the leader held it")
        self.assertGreater(len(lead.proxy.writes(t0)), 0)
        self.assertFalse(other.leading())
        # the leader dies without releasing the Lease: the other takes over
        # within a lease duration (plus a retry period) and carries on
        lead.kill()
        t_kill = time.monotonic()
        wait_until(other.leading, self.LEASE[0] + self.LEASE[2] + 1, "the follower taking over")
        took = time.monotonic() - t_kill
        log("handover took %.2fs" % took)
        self.request_pull(pods[1], h)
        self.wait_image_ready(pods[1], "PullImageSuccess")
        self.assertEqual([e for e in lead.proxy.writes(t_kill)], [])
        self.assertGreater(len(other.proxy.writes(t_kill)), 0)
        self.assert_one_job_per_request(pods)
        self.assert_no_duplicate_jobs()
        # and the old leader, restarted, stays a follower
        lead.start()
        lead.wait_ready()
        t1 = time.monotonic()
        time.sleep(2)
        self.assertFalse(lead.leading())
        self.assertTrue(other.leading())
        self.assertEqual(lead.proxy.writes(t1), [])


    def test_partitioned_leader_stops_writing(self):
        """The leader loses the apiserver (not the process) while its writes
        for a request are failing and being retried: the other replica takes
        over within a lease duration, and the old leader, once it reaches the
        apiserver again, writes nothing (no retry of a write it queued while
        it led: losing the lease stops writing at once)."""
        lead = wait_until(self.leader, 10, "one leader")
        other = [c for c in self.ctls if c is not lead][0]
        pods, h = self.upgraded_ds(new=FRESH.pop(), nodes=["node-3"])
        # its writes fail (connection reset), its Lease renewals still pass
        lead.proxy.reset_writes = True
        self.request_pull(pods[0], h)
        wait_until(lambda: len(lead.proxy.resets) >= 4, 10, "the leader retrying its writes")
        lead.proxy.stop()
        lead.proxy.reset_writes = False
        t_cut = time.monotonic()
        wait_until(other.leading, self.LEASE[0] + self.LEASE[2] + 3, "the other replica taking over")
        self.wait_image_ready(pods[0], "PullImageSuccess")
        time.sleep(max(0.0, t_cut + 6 - time.monotonic()))  # long enough for retries to pile up
        lead.proxy.start()
        t_heal = time.monotonic()
        time.sleep(3)
        self.assertEqual([(e["method"], e["path"]) for e in lead.proxy.writes(t_heal)], [],
                         "the old leader wrote after it lost the lease")
        self.assertFalse(lead.leading())
        self.assertTrue(other.leading())
        self.assert_no_duplicate_jobs()
        self.assert_one_job_per_request(pods)

    def test_sigterm_releases_the_lease(self):
        """A leader stopped with SIGTERM gives the Lease up: the other replica
        leads after a retry period, not a lease duration, and carries on."""
        lead = wait_until(self.leader, 10, "one leader")
        other = [c for c in self.ctls if c is not lead][0]
        t_stop = time.monotonic()
        self.assertEqual(lead.stop(), 0, lead.tail())
        wait_until(other.leading, self.LEASE[2] + 1.5, "the other replica taking over at once")
        log("takeover after SIGTERM took %.2fs" % (time.monotonic() - t_stop))
        pods, h = self.upgraded_ds(new=FRESH.pop(), nodes=["node-1"])
        self.request_pull(pods[0], h)
        self.wait_image_ready(pods[0], "PullImageSuccess")
        self.assert_one_job_per_request(pods)
        lead.start()
        lead.wait_ready()


# ---------------------------------------------------------------- runner


def main(argv):
    global VERBOSE
    args = [a for a in argv if a != "-v"]
    VERBOSE = len(args) != len(argv)
    if not os.access(CONTROLLER, os.X_OK):
        print("no controller binary at %s (make build/ota-controller)" % CONTROLLER)
        print("0 passed, 1 failed")
        return 1
    names = args or ["ControllerBehaviour", "Concurrency", "Faults", "LeaderElection"]
    suite = unittest.TestLoader().loadTestsFromNames(names, sys.modules[__name__])
    sys.stderr.write("controller: %s, time scale %g\n" % (CONTROLLER, SCALE))
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    # a class's setUp/tearDown failure (sanitizer reports among them) counts too
    bad = result.failures + result.errors
    failed_tests = {t.id() for t, _ in bad if isinstance(t, unittest.TestCase)}
    passed = result.testsRun - len(failed_tests)
    failed = len(failed_tests) + len([t for t, _ in bad if not isinstance(t, unittest.TestCase)])
    if failed == 0 and not os.environ.get("OTA_E2E_KEEP"):
        for d in STATE_DIRS:
            shutil.rmtree(d, ignore_errors=True)
    else:
        print("logs (kubesim, controllers): %s" % " ".join(STATE_DIRS))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 and result.testsRun > 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
