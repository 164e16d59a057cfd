"""What the controller benchmarks share (bench/controller.py, bench/rollout.py,
bench/imagepulljob.py, bench/imagecache.py): kubesim started on a free
loopback port (--no-sim, or its simulated cluster), components applied with
kubectl, the OTA DaemonSet, its ControllerRevisions and pods created through
the API, Jobs tracked from a watch, the controller's /metrics, VmRSS
sampling, a bench's work directory and stopping the processes.
kubesim's launcher and the /metrics parser are tests/lib's (kubesim_launch,
promtext).  Python 3 standard library only; loopback only.
"""

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

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
import kubesim_launch  # noqa: E402
import ota_rbac  # noqa: E402
import promtext  # noqa: E402

NS = "bench"
MSG = "controllerrevision: "
OTA_ANN = "apps.openyurt.io/update-strategy"
REG = "registry.example.com"
HELPER = "busybox:1.36-musl"
BANDWIDTH = 10_000_000  # kubesim's registry default, bytes per simulated second
RESOLVE = 0.5           # simulated seconds per pull before the bytes (kubesim's imagestore)
RESERVE = 1             # slots bulk units leave free (controller/pullq.h PULLQ_INTERACTIVE_RESERVE)


class Setup(RuntimeError):
    """The run could not be set up."""


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def rss_kib(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def cpu_seconds(pid):
    """User + system CPU seconds of pid so far (0.0 when gone)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


class RssSampler(threading.Thread):
    """VmRSS of pid every 100 ms until stop(): peak and samples."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.peak, self.samples = pid, 0, []
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            r = rss_kib(self.pid)
            self.samples.append(r)
            self.peak = max(self.peak, r)
            self.done.wait(0.1)

    def stop(self):
        self.done.set()
        self.join()
        return self.peak


def stop_proc(p, grace):
    """SIGTERM, then SIGKILL after grace seconds."""
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(grace)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(5)


def stop_procs(procs, grace):
    """The processes a run started, last first."""
    for p in reversed(procs):
        stop_proc(p, grace)


class Api:
    """One keep-alive HTTPS connection to kubesim (one per thread)."""

    def __init__(self, port, ca, token, timeout=300):
        self.port, self.token, self.timeout = port, token, timeout
        self.ctx = ssl.create_default_context(cafile=ca)
        self.conn = None

    def call(self, method, path, body=None, ctype="application/json", ok=(200, 201)):
        data = json.dumps(body).encode() if body is not None else None
        for attempt in range(5):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx,
                                                            timeout=self.timeout)
                headers = {"Authorization": "Bearer " + self.token, "Accept": "application/json"}
                if data is not None:
                    headers["Content-Type"] = ctype
                self.conn.request(method, path, body=data, headers=headers)
                resp = self.conn.getresponse()
                raw = resp.read()
                if resp.status in ok:
                    return json.loads(raw) if raw else None
                raise Setup("%s %s: HTTP %d %s" % (method, path, resp.status, raw[:300]))
            except (OSError, http.client.HTTPException):
                self.conn = None
                if attempt == 4:
                    raise
                time.sleep(0.2)
        return None


class Kubesim(kubesim_launch.Kubesim):
    """kubesim (tests/lib/kubesim_launch.py) on a free port, its state in
    work/state and its stderr in work/kubesim.err.  registry: None for
    --no-sim (API server only), else the simulated cluster with this
    --registry-config.  bookmark, scale: --bookmark-interval, --time-scale
    (None: kubesim's default).  The process goes into procs."""

    def __init__(self, work, procs, nodes, registry=None, extra=(), scale=None, bookmark=None,
                 api_timeout=300, wait=120):
        args = ["--nodes", str(nodes)]
        if bookmark is not None:
            args += ["--bookmark-interval", str(bookmark)]
        if scale is not None:
            args += ["--time-scale", str(scale)]
        if registry is None:
            args.append("--no-sim")
        try:
            super().__init__(os.path.join(work, "state"), args + list(extra), registry=registry,
                             log=os.path.join(work, "kubesim.err"), wait=wait)
        except kubesim_launch.KubesimError as e:
            raise Setup(str(e)) from None
        procs.append(self.proc)
        self.api_timeout = api_timeout
        self.api = self.client("admin")
        # kubesim enforces RBAC (Node,RBAC): the controller gets what
        # manifests/ grants it, in its namespace, before it starts
        try:
            self.api.call("POST", "/api/v1/namespaces",
                          {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ota_rbac.NAMESPACE}})
            ota_rbac.apply(self, ota_rbac.rendered())
        except RuntimeError as e:
            raise Setup(str(e)) from None

    def client(self, who):
        return Api(self.port, self.ca, self.tokens[who], self.api_timeout)


def kubectl(sim, *args, timeout=120):
    """kubectl as sim's admin; its stdout, or Setup with its output."""
    out = subprocess.run(["kubectl", "--kubeconfig", sim.kubeconfig("admin")] + list(args),
                         capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        raise Setup("kubectl %s: %s%s" % (" ".join(args), out.stdout, out.stderr))
    return out.stdout


def apply_component(sim, files, crds):
    """kubectl apply -f of each file (a component's CRD and RBAC, on top of
    base's, which Kubesim applied), then each CRD in crds Established."""
    for f in files:
        kubectl(sim, "apply", "-f", f)
    for c in crds:
        kubectl(sim, "wait", "--for=condition=Established", "crd/" + c, "--timeout=60s")


def wait_nodes(api, n, timeout=300):
    """Until n Nodes have registered (Setup after timeout seconds)."""
    deadline = time.monotonic() + timeout
    while len(api.call("GET", "/api/v1/nodes")["items"]) < n:
        if time.monotonic() > deadline:
            raise Setup("the %d nodes did not register" % n)
        time.sleep(1)


def job_finished(job):
    return any(c.get("status") == "True" and c.get("type") in ("Complete", "Failed")
               for c in (job.get("status") or {}).get("conditions") or [])


class JobTracker:
    """The Jobs of namespace ns as a watch reports them (on_job is the
    callback of a controller.Watch): each Job seen, when each was first
    seen, which are unfinished (no Complete or Failed condition, not
    deleted or deleting), the most unfinished at once, when each was first
    seen finished and when each was deleted."""

    def __init__(self, ns):
        self.ns = ns
        self.lock = threading.Lock()
        self.jobs, self.created, self.running, self.max_running = {}, [], set(), 0
        self.first_seen, self.ended, self.deleted = {}, {}, {}

    def on_job(self, kind, job, now):
        m = job["metadata"]
        if m.get("namespace") != self.ns:
            return
        with self.lock:
            if m["uid"] not in self.jobs:
                self.created.append(now)
                self.first_seen[m["uid"]] = now
            self.jobs[m["uid"]] = job
            if job_finished(job):
                self.ended.setdefault(m["uid"], now)
            if kind == "DELETED":
                self.deleted.setdefault(m["uid"], now)
            if kind == "DELETED" or job_finished(job) or m.get("deletionTimestamp"):
                self.running.discard(m["uid"])
            else:
                self.running.add(m["uid"])
            self.max_running = max(self.max_running, len(self.running))

    def summary(self):
        """{jobs_created, nodes_with_jobs, nodes_with_more_than_one_job, max_running}"""
        with self.lock:
            per_node = {}
            for j in self.jobs.values():
                n = j["spec"]["template"]["spec"].get("nodeName")
                per_node[n] = per_node.get(n, 0) + 1
            return {"jobs_created": len(self.created), "nodes_with_jobs": len(per_node),
                    "nodes_with_more_than_one_job": sum(1 for v in per_node.values() if v > 1),
                    "max_running": self.max_running}

    def refills(self, slots):
        """Seconds from a slot freed to the next Job's creation: with at
        most slots Jobs at once, the k-th Job created (k >= slots) waited
        for the (k - slots)-th end (Complete or Failed as the watch saw it);
        sorted (negative: created before the watch saw the end)."""
        with self.lock:
            created = sorted(self.first_seen.values())
            ends = sorted(self.ended.values())
        return sorted(created[k] - ends[k - slots] for k in range(slots, len(created)) if k - slots < len(ends))

    def durations(self):
        """Seconds from each Job's creation to its end (Complete or Failed,
        else its deletion), as the watch saw them, sorted."""
        with self.lock:
            ends = dict(self.deleted, **self.ended)
            return sorted(min(t, self.deleted.get(u, t)) - self.first_seen[u] for u, t in ends.items())


def pull_seconds(size):
    """Simulated seconds kubesim's kubelet takes to pull an image of size
    bytes from its registry at the default bandwidth."""
    return RESOLVE + size / BANDWIDTH


class LeaseRenewals:
    """The watch callback that notes each MODIFIED event of a Lease held
    by identity (the controller's renewals, its writes that are not the
    work measured)."""

    def __init__(self, identity):
        self.identity, self.times = identity, []

    def on_lease(self, kind, obj, now):
        if kind == "MODIFIED" and (obj.get("spec") or {}).get("holderIdentity") == self.identity:
            self.times.append(now)

    def between(self, t0, t1):
        return sum(1 for x in list(self.times) if t0 <= x <= t1)


def writes_between(m0, m1):
    """{method: requests} the controller sent between two /metrics reads."""
    before, after = calls_by_verb(m0), calls_by_verb(m1)
    return {k: after.get(k, 0) - before.get(k, 0) for k in set(after) | set(before)}


def rate(times, t0, took):
    """(count, per second over took, most in any one second) of the
    monotonic instants times at or after t0."""
    rel = [x - t0 for x in times if x >= t0]
    per_second = {}
    for x in rel:
        per_second[int(x)] = per_second.get(int(x), 0) + 1
    return len(rel), (round(len(rel) / took, 3) if took else None), max(per_second.values() or [0])


def add_run_args(p):
    """The flags the kubesim --light benchmarks share (argparse parser p):
    the controller's client limits, kubesim's mode, extra flags for each
    and --keep."""
    p.add_argument("--qps", type=float, default=50.0)
    p.add_argument("--burst", type=int, default=100)
    p.add_argument("--no-light", action="store_true", help="kubesim's default kubelets (a thread pair per node)")
    p.add_argument("--kubesim-arg", action="append", default=[])
    p.add_argument("--controller-arg", action="append", default=[])
    p.add_argument("--keep", action="store_true", help="keep the work directory (logs, results.json)")


def bench_main(prefix, keep, run, report):
    """A bench's main: run(work, procs) in a fresh work directory, then
    report(its result); every process run started stopped, last first.
    The work directory is removed unless keep or the run failed.  0, or 1
    when run raised Setup."""
    work = tempfile.mkdtemp(prefix=prefix)
    procs = []
    ok = False
    try:
        report(run(work, procs))
        ok = True
    except Setup as e:
        print("setup failed: %s" % e)
    finally:
        stop_procs(procs, 30)
        if keep or not ok:
            print("work directory: %s" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


# ------------------------------------------------------------------ objects


def owner(ds):
    return [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": ds["metadata"]["name"],
             "uid": ds["metadata"]["uid"], "controller": True}]


def ota_ds(image):
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "agent", "namespace": NS, "annotations": {OTA_ANN: "OTA"}},
            "spec": {"selector": {"matchLabels": {"app": "agent"}}, "updateStrategy": {"type": "OnDelete"},
                     "template": {"metadata": {"labels": {"app": "agent"}},
                                  "spec": {"containers": [{"name": "main", "image": image}]}}}}


def revision(ds, rev, h, image):
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision",
            "metadata": {"name": "agent-" + h, "namespace": NS,
                         "labels": {"app": "agent", "controller-revision-hash": h},
                         "ownerReferences": owner(ds)},
            "data": {"spec": {"template": {"spec": {"containers": [
                {"name": "main", "image": image}]}}}},
            "revision": rev}


def pod(ds, i, h, node, image):
    """A DaemonSet pod as the kubelet and the DaemonSet controller leave it,
    marked up to date (PodNeedUpgrade=False) for revision h."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "agent-%05d" % i, "namespace": NS,
                         "labels": {"app": "agent", "controller-revision-hash": h,
                                    "pod-template-generation": "1"},
                         "ownerReferences": owner(ds)},
            "spec": {"nodeName": node,
                     "containers": [{"name": "main", "image": image}]},
            "status": {"phase": "Running", "conditions": [
                {"type": "PodNeedUpgrade", "status": "False", "message": MSG + h,
                 "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}


def create_namespaces(api):
    """bench (the DaemonSet's; ota-system, the controller's lease, Kubesim made)."""
    api.call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})


def setup_daemonset(api, image, rev1):
    """The namespaces, the OTA DaemonSet with image, and rev1(ds) as its
    first ControllerRevision; returns the DaemonSet."""
    create_namespaces(api)
    ds = api.call("POST", "/apis/apps/v1/namespaces/%s/daemonsets" % NS, ota_ds(image))
    api.call("POST", "/apis/apps/v1/namespaces/%s/controllerrevisions" % NS, rev1(ds))
    return ds


def create_pods(sim, n, make):
    """POST make(i) for i in 0..n-1 as admin, over 4 connections."""
    t = time.monotonic()
    errors = []

    def create(lo, hi):
        a = sim.client("admin")
        try:
            for i in range(lo, hi):
                a.call("POST", "/api/v1/namespaces/%s/pods" % NS, make(i))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=create, args=(k * n // 4, (k + 1) * n // 4)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        raise Setup("creating pods failed: %s" % errors[0])
    log("created %d pods in %.1fs" % (n, time.monotonic() - t))


def marked(api, h):
    """(pods marked PodNeedUpgrade=True for revision h, pods) in NS."""
    items = api.call("GET", "/api/v1/namespaces/%s/pods" % NS)["items"]
    n = 0
    for p in items:
        for c in p.get("status", {}).get("conditions") or []:
            if c["type"] == "PodNeedUpgrade" and c["status"] == "True" and c.get("message") == MSG + h:
                n += 1
                break
    return n, len(items)


# ------------------------------------------------------------------ /metrics


def metrics(port):
    """The controller's /metrics as {sample with its labels: value}, None
    when unreachable."""
    return promtext.scrape(port)


def calls(m):
    """[(method, code, count)] from /metrics: client-go's rest_client_requests_total
    or the older ota_controller_api_calls_total."""
    out = []
    for k, v in (m or {}).items():
        a = re.match(r'rest_client_requests_total\{code="([^"]+)",method="([^"]+)"\}', k)
        b = re.match(r'ota_controller_api_calls_total\{verb="([^"]+)",code="([^"]+)"\}', k)
        if a:
            out.append((a.group(2), a.group(1), v))
        elif b:
            out.append((b.group(1), b.group(2), v))
    return out


def calls_by_verb(m):
    """{method: count} of the requests /metrics counts (any code)."""
    out = {}
    for verb, _, v in calls(m):
        out[verb] = out.get(verb, 0) + v
    return out


def patches_ok(m):
    """Status PATCHes answered 2xx."""
    return int(sum(v for verb, code, v in calls(m) if verb == "PATCH" and code.startswith("2")))
