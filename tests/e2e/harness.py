"""The e2e harness: kubesim, the controllers under test, and what the tests use.

Each test class starts one kubesim (tests/kubesim/run) on a free loopback port
and one or more controllers (build/ota-controller, or $OTA_CONTROLLER, e.g. the
ASan build build/asan/ota-controller).  Node users' pre-pull requests are the
status patch `kubectl ota pull` makes, sent over HTTPS with the node's token.

Every controller talks to kubesim through its own TLS proxy (proxy.py), whose
log of requests is how the tests see what the controller did.

A JobTracker watches every pre-pull Job in kubesim for the whole class (list,
watch, relist on 410; it connects to kubesim directly and retries through the
injected faults), so "never two Jobs for one request" is checked against every
Job that ever existed, not only the ones left at the end.

A class with WEBHOOK = True also runs ota-webhook (build/ota-webhook, or
$OTA_WEBHOOK) with certificates from certs/gen-certs.sh, starts kubesim with
--webhook-host pointing the manifests' Service name at it, and applies the
whole output of certs/render-manifests.sh with the real kubectl: the webhook
configurations under test are the ones `kubectl kustomize manifests` renders.
Kubesim.kubectl runs the real kubectl as any of kubesim's identities.

kubesim runs with its default authorization, RBAC and the Node authorizer
(with NodeRestriction), as a kube-apiserver started with
--authorization-mode=Node,RBAC: every class applies the ServiceAccounts and
RBAC that `kubectl kustomize manifests` renders (rendered_rbac, from
tests/lib/ota_rbac.py; with the webhook, the whole render) before its controllers start, so the controller
(system:serviceaccount:ota-system:ota-controller) works with exactly what
manifests/ grants it, and node-<i> may do what a kubelet's credentials may.
The tests' own setup and checks are made as admin (system:masters).

Every controller's and webhook's output is scanned for AddressSanitizer,
LeakSanitizer and UBSan ("runtime error:") reports when its class ends (after
SIGTERM, so leaks are reported); any report fails the class.

In this file, in order: paths, images and helpers (log, wait_until,
request_time); Kubesim (the process, an HTTPS client of it, kubectl);
Controller (the process, its probes and metrics); Webhook (the process, its
metrics) and render_manifests; JobTracker; Base, the TestCase every
test class derives from (setUpClass starts the cluster, tearDownClass checks
exit codes and sanitizer reports; helpers to make DaemonSets, request pulls
and wait for their outcome).
"""
import atexit
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse

from proxy import Proxy

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
import kubesim_launch  # noqa: E402
import ota_rbac  # noqa: E402
import promtext  # noqa: E402

CONTROLLER = os.environ.get("OTA_CONTROLLER", os.path.join(ROOT, "build", "ota-controller"))
WEBHOOK = os.environ.get("OTA_WEBHOOK", os.path.join(ROOT, "build", "ota-webhook"))
GEN_CERTS = os.path.join(ROOT, "certs", "gen-certs.sh")
RENDER = os.path.join(ROOT, "certs", "render-manifests.sh")
WEBHOOK_SERVICE = "ota-webhook.ota-system.svc"  # the Service the manifests' clientConfig names
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
# The registry answers its first two pulls with 503 Service Unavailable.
BUSY = REG + "/e2e/busy:1.0"

REGISTRY_CONFIG = {
    "includeDefaults": True,
    "images": [{"image": PRELOADED, "size": 30_000_000}, {"image": BUSY, "size": 10_000_000, "failPulls": 2}]
    + [{"image": i, "size": 100_000_000} for i in FRESH],
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


class Kubesim(kubesim_launch.Kubesim):
    """kubesim (tests/lib/kubesim_launch.py) with its simulated cluster of
    `nodes` nodes at SCALE, its state and log in a directory of STATE_DIRS,
    and the tests' HTTPS client of it."""

    def __init__(self, nodes, registry_config=None, webhook=None, names=(), extra=()):
        self.dir = tempfile.mkdtemp(prefix="ota-e2e-")
        STATE_DIRS.append(self.dir)
        args = ["--nodes", str(nodes), "--time-scale", str(SCALE), "--bookmark-interval", "1"] + list(extra)
        for name in names:  # more nodes, by name
            args += ["--node", name]
        if webhook is not None:  # the manifests' Service name -> the local webhook
            args += ["--webhook-host", "%s=127.0.0.1:%d" % (WEBHOOK_SERVICE, webhook.port)]
        super().__init__(os.path.join(self.dir, "state"), args, registry=registry_config,
                         log=os.path.join(self.dir, "kubesim.err"))
        self.nodes = nodes

    def kubectl(self, who, *args, stdin=None, timeout=60):
        """The real kubectl as who (admin, controller, node-<i>, user): its
        CompletedProcess, with text stdout and stderr."""
        cmd = ["kubectl", "--kubeconfig", self.kubeconfig(who)] + list(args)
        log("kubectl as %s:" % who, " ".join(args))
        return subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=timeout)

    # --- HTTPS, retried through injected faults unless retry=False
    def call(self, method, path, body=None, who="admin", ctype="application/json", retry=True,
             ok=(200, 201), timeout=30):
        deadline = time.monotonic() + timeout
        data = json.dumps(body).encode() if body is not None else None
        while True:
            status, out = None, None
            try:
                conn = self.connect(15)
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



# ---------------------------------------------------------------- controller


def http_probe(path, port):
    """GET http://127.0.0.1:port/path: (status, text), (None, "") when unreachable."""
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        conn.request("GET", path)
        r = conn.getresponse()
        out = (r.status, r.read().decode())
        conn.close()
        return out
    except (OSError, http.client.HTTPException):
        return (None, "")


def file_tail(path, n):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


class Controller:
    def __init__(self, sim, name, max_pulls=10, lease=(15, 10, 2), extra=(), env=None):
        self.sim, self.name = sim, name
        self.env = dict(env or {})
        self.proxy = Proxy(sim, name, free_port())
        self.kubeconfig = sim.kubeconfig("controller", self.proxy.url,
                                         os.path.join(sim.dir, name + ".kubeconfig"))
        self.health, self.metrics_port = free_port(), free_port()
        self.args = [CONTROLLER, "--kubeconfig", self.kubeconfig,
                     "--health-probe-bind-address", "127.0.0.1:%d" % self.health,
                     "--metrics-bind-address", "127.0.0.1:%d" % self.metrics_port,
                     "--max-concurrent-pulls", str(max_pulls),
                     "--helper-image", "busybox:1.36-musl",
                     "--leader-elect-resource-namespace", LEASE_NS, "--leader-elect-identity", name,
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
        env = dict(os.environ, **self.env)
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
        return http_probe(path, port)

    def metrics(self):
        return promtext.scrape(self.metrics_port, timeout=5)

    def leading(self):
        m = self.metrics()
        return bool(m and m.get("ota_controller_leader") == 1)

    def tail(self, n=30):
        return file_tail(self.err_path, n)

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


# ---------------------------------------------------------------- webhook


class Webhook:
    """build/ota-webhook (or $OTA_WEBHOOK) on free loopback ports, with its own
    CA and serving certificate from certs/gen-certs.sh in a temp dir (the CA
    is what certs/render-manifests.sh writes into the caBundle)."""

    def __init__(self, name, extra=()):
        self.name = name
        self.dir = tempfile.mkdtemp(prefix="ota-e2e-webhook-")
        STATE_DIRS.append(self.dir)
        self.certs = os.path.join(self.dir, "certs")
        subprocess.run([GEN_CERTS, self.certs], check=True, timeout=60, stdout=subprocess.DEVNULL)
        self.port, self.health, self.metrics_port = free_port(), free_port(), free_port()
        self.args = [WEBHOOK, "--tls-cert-file", os.path.join(self.certs, "tls.crt"),
                     "--tls-private-key-file", os.path.join(self.certs, "tls.key"),
                     "--bind-address", "127.0.0.1:%d" % self.port,
                     "--health-probe-bind-address", "127.0.0.1:%d" % self.health,
                     "--metrics-bind-address", "127.0.0.1:%d" % self.metrics_port,
                     "--threads", "2", "--log-level", "debug"] + list(extra)
        self.runs = 0
        self.proc = None
        self.start()

    def start(self, timeout=30):
        """Starts it (again, on the same ports) and waits for /readyz."""
        self.runs += 1
        self.err_path = os.path.join(self.dir, "%s.%d.err" % (self.name, self.runs))
        self.err = open(self.err_path, "w")
        env = dict(os.environ)
        env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
        env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1")
        self.proc = subprocess.Popen(self.args, stdin=subprocess.DEVNULL, stdout=self.err,
                                     stderr=subprocess.STDOUT, env=env)
        CHILDREN.append(self.proc)

        def ready():
            if self.proc.poll() is not None:
                raise AssertionError("%s exited with %s: %s" % (self.name, self.proc.returncode, self.tail()))
            return http_probe("/readyz", self.health)[0] == 200
        wait_until(ready, timeout, "%s /readyz" % self.name)

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def metrics(self):
        """{sample with its labels: value}, e.g. 'ota_webhook_requests_total{path="/validate",result="allowed"}'."""
        return promtext.scrape(self.metrics_port, timeout=5)

    def requests(self, path=None):
        """ota_webhook_requests_total summed over results (and paths unless path)."""
        m = self.metrics()
        if m is None:
            raise AssertionError("%s: no /metrics" % self.name)
        return sum(v for k, v in m.items() if k.startswith("ota_webhook_requests_total{")
                   and (path is None or 'path="%s"' % path in k))

    def tail(self, n=30):
        return file_tail(self.err_path, n)

    def sanitizer_reports(self):
        bad = []
        for i in range(1, self.runs + 1):
            path = os.path.join(self.dir, "%s.%d.err" % (self.name, i))
            try:
                with open(path, errors="replace") as f:
                    bad += ["%s: %s" % (os.path.basename(path), l.rstrip()) for l in f if SANITIZER.search(l)]
            except OSError:
                pass
        return bad

    def stop(self):
        """SIGTERM to its PID; returns the exit status ("hung" if it had to be killed)."""
        if self.proc is None:
            return 0
        rc = 0
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
                rc = "hung"
        self.err.close()
        return rc if rc == "hung" else self.proc.returncode


rendered_rbac = ota_rbac.rendered


def render_manifests(certs, overlay=None):
    """certs/render-manifests.sh CERTS [OVERLAY]: `kubectl kustomize
    manifests` (or the overlay's directory) with the caBundle from
    CERTS/ca.crt, plus the serving Secret."""
    out = subprocess.run([RENDER, certs] + ([overlay] if overlay else []), capture_output=True, text=True,
                         timeout=120)
    if out.returncode != 0:
        raise AssertionError("%s failed (%d): %s" % (RENDER, out.returncode, out.stderr))
    return out.stdout


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
        def note(kind, obj):
            self._note(obj, deleted=kind == "DELETED")
        return watch_once(self.sim, path, rv, lambda: self.stopping, note)


def watch_once(sim, path, rv, stopped, on_event):
    """One watch of path (a collection, with or without a query) from
    resourceVersion rv as admin: on_event(type, obj) for each ADDED, MODIFIED
    and DELETED until the server ends it or stopped() is true.  The last
    resourceVersion seen, or None when a list must come first (410 Gone)."""
    sep = "&" if "?" in path else "?"
    conn = sim.connect(30)
    try:
        conn.request("GET", path + sep + "watch=1&allowWatchBookmarks=true&timeoutSeconds=20&resourceVersion="
                     + rv, headers={"Authorization": "Bearer " + sim.tokens["admin"]})
        resp = conn.getresponse()
        if resp.status == 410:
            return None
        if resp.status != 200:
            resp.read()
            time.sleep(0.1)
            return rv
        while not stopped():
            line = resp.readline()
            if not line:
                return rv
            ev = json.loads(line)
            obj = ev.get("object") or {}
            if ev["type"] == "ERROR":
                return None if obj.get("code") == 410 else rv
            rv = obj.get("metadata", {}).get("resourceVersion", rv)
            if ev["type"] in ("ADDED", "MODIFIED", "DELETED"):
                on_event(ev["type"], obj)
        return rv
    finally:
        conn.close()


# ---------------------------------------------------------------- the tests' base


class Base(unittest.TestCase):
    """A class with WEBHOOK = True gets ota-webhook too, registered in kubesim
    the way an admin would: the whole output of certs/render-manifests.sh
    applied with the real kubectl (so the webhook configurations under test
    are the ones `kubectl kustomize manifests` renders)."""
    NODES = 3
    NODE_NAMES = ()  # more nodes besides node-1..node-NODES, by name (kubesim --node)
    WEBHOOK = False
    REGISTRY = REGISTRY_CONFIG
    CONTROLLERS = 1
    MAX_PULLS = 10
    LEASE = (15, 10, 2)
    CONTROLLER_ARGS = ()  # more flags for every controller (a later flag wins)
    CONTROLLER_ENV = {}  # more environment for every controller (TZDIR)
    KUBESIM_ARGS = ()  # more flags for kubesim run (--feature-gates ImageVolume=true)
    WEBHOOK_ARGS = ()  # more flags for the webhook
    OVERLAY = None  # with WEBHOOK: a directory of manifests/overlays to apply instead of the base

    @classmethod
    def setUpClass(cls):
        t0 = time.monotonic()
        cls.ctls = []
        cls.webhook = Webhook("webhook-%s" % cls.__name__.lower(), cls.WEBHOOK_ARGS) if cls.WEBHOOK else None
        try:
            cls.sim = Kubesim(cls.NODES, cls.REGISTRY, webhook=cls.webhook, names=cls.NODE_NAMES,
                              extra=cls.KUBESIM_ARGS)
        except BaseException:
            if cls.webhook:
                cls.webhook.stop()
            raise
        try:
            cls.sim.call("POST", "/api/v1/namespaces", {"metadata": {"name": LEASE_NS}})
            # kubesim enforces RBAC and the Node authorizer: the controller
            # gets exactly what manifests/ grants, before it starts
            if cls.webhook:
                cls.apply_manifests()
            else:
                cls.apply_rbac(cls.rbac())
            cls.tracker = JobTracker(cls.sim)
            cls.tracker.start()
            for i in range(cls.CONTROLLERS):
                cls.ctls.append(Controller(cls.sim, "ctl-%s-%d" % (cls.__name__.lower(), i),
                                           cls.MAX_PULLS, cls.LEASE, cls.CONTROLLER_ARGS,
                                           cls.CONTROLLER_ENV))
            for c in cls.ctls:
                c.wait_ready()
            wait_until(lambda: any(c.leading() for c in cls.ctls), 30, "a leader")
            assert cls.tracker.synced.wait(30), "job tracker did not sync"
            log("%s set up in %.1fs" % (cls.__name__, time.monotonic() - t0))
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def apply_manifests(cls):
        """kubectl apply -f <the render> as admin; the registered webhook
        configurations are then exactly what the render holds."""
        out = cls.sim.kubectl("admin", "apply", "-f", "-", stdin=render_manifests(cls.webhook.certs, cls.OVERLAY))
        if out.returncode != 0:
            raise AssertionError("kubectl apply of the rendered manifests failed: %s%s" % (out.stdout, out.stderr))
        log("applied the manifests:", out.stdout.strip().replace("\n", "; "))
        return out.stdout

    @classmethod
    def rbac(cls):
        """The RBAC applied when the webhook is not: the rendered
        ServiceAccounts, roles and bindings."""
        return rendered_rbac()

    @classmethod
    def apply_rbac(cls, docs):
        """kubectl apply -f - as admin of the YAML documents docs."""
        out = ota_rbac.apply(cls.sim, docs)
        log("applied the RBAC:", out.strip().replace("\n", "; "))
        return out

    @classmethod
    def tearDownClass(cls):
        problems = []
        for c in cls.ctls:
            rc = c.close()
            if rc not in (0, -9):
                problems.append("%s exited with %s on SIGTERM:\n%s" % (c.name, rc, c.tail()))
            problems += c.sanitizer_reports()
        if cls.webhook is not None:
            rc = cls.webhook.stop()
            if rc != 0:
                problems.append("%s exited with %s on SIGTERM:\n%s" % (cls.webhook.name, rc, cls.webhook.tail()))
            problems += cls.webhook.sanitizer_reports()
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
