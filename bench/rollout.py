#!/usr/bin/env python3
"""Rollout benchmark of ota-controller (issue 10 §1): how fast a new revision
of an OTA DaemonSet marks N pods PodNeedUpgrade=True, with leader election
on, against the client-side rate limit (--kube-api-qps).

    python3 bench/rollout.py [--binary build/ota-controller] [--pods 5000]
                             [--qps 20] [--burst 30] [--max-seconds 600]

kubesim runs with --no-sim (API server only): the DaemonSet, its first
ControllerRevision and N pods (already marked PodNeedUpgrade=False for it)
are created through the API, spread over 100 node names. Then
ota-controller starts (leader election on, default lease timings), and
once it is leader and idle a second ControllerRevision is created: the
clock runs from there until every pod is marked for it.

Prints one line of figures: seconds until all N pods were marked,
patches/s and its share of --kube-api-qps, status PATCHes sent (more than N
means pods patched twice), leadership changes ("lost leadership" and
"became leader" after the first, from the log) and warnings in the log.
A run that does not finish within --max-seconds reports how far it got.
Timing is never pass/fail: exit 1 only when the run could not be set up.
Loopback only; Python 3 standard library only.
"""

import argparse
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

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
KUBESIM = os.path.join(ROOT, "tests", "kubesim", "run")
NS = "bench"
MSG = "controllerrevision: "
OTA_ANN = "apps.openyurt.io/update-strategy"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Api:
    """One keep-alive HTTPS connection to kubesim as admin (one per thread)."""

    def __init__(self, port, ca, token):
        self.port, self.token = port, token
        self.ctx = ssl.create_default_context(cafile=ca)
        self.conn = None

    def call(self, method, path, body=None, ctype="application/json", ok=(200, 201)):
        data = json.dumps(body).encode() if body is not None else None
        for attempt in range(5):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx,
                                                            timeout=120)
                headers = {"Authorization": "Bearer " + self.token, "Accept": "application/json"}
                if data is not None:
                    headers["Content-Type"] = ctype
                self.conn.request(method, path, body=data, headers=headers)
                resp = self.conn.getresponse()
                raw = resp.read()
                if resp.status in ok:
                    return json.loads(raw) if raw else None
                raise RuntimeError("%s %s: HTTP %d %s" % (method, path, resp.status, raw[:300]))
            except (OSError, http.client.HTTPException):
                self.conn = None
                if attempt == 4:
                    raise
                time.sleep(0.2)
        return None


def metrics(port):
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/metrics")
        text = conn.getresponse().read().decode()
        conn.close()
    except (OSError, http.client.HTTPException):
        return None
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            k, _, v = line.rpartition(" ")
            out[k] = float(v)
    return out


def patches_ok(m):
    """Status PATCHes answered 2xx, under today's or the older metric name."""
    n = 0
    for k, v in m.items():
        if k.startswith("rest_client_requests_total{") and 'method="PATCH"' in k and 'code="2' in k:
            n += v
        elif k.startswith("ota_controller_api_calls_total{") and 'verb="PATCH"' in k and 'code="2xx"' in k:
            n += v
    return int(n)


def revision(ds, rev, h):
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision",
            "metadata": {"name": "agent-" + h, "namespace": NS,
                         "labels": {"app": "agent", "controller-revision-hash": h},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent",
                                              "uid": ds["metadata"]["uid"], "controller": True}]},
            "data": {"spec": {"template": {"spec": {"containers": [
                {"name": "main", "image": "busybox:1.%d" % rev}]}}}},
            "revision": rev}


def pod(ds, i, h):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "agent-%05d" % i, "namespace": NS,
                         "labels": {"app": "agent", "controller-revision-hash": h,
                                    "pod-template-generation": "1"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent",
                                              "uid": ds["metadata"]["uid"], "controller": True}]},
            "spec": {"nodeName": "node-%d" % (i % 100 + 1),
                     "containers": [{"name": "main", "image": "busybox:1.1"}]},
            "status": {"phase": "Running", "conditions": [
                {"type": "PodNeedUpgrade", "status": "False", "message": MSG + h,
                 "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}


def marked(api, h):
    items = api.call("GET", "/api/v1/namespaces/%s/pods" % NS)["items"]
    n = 0
    for p in items:
        for c in p.get("status", {}).get("conditions") or []:
            if c["type"] == "PodNeedUpgrade" and c["status"] == "True" and c.get("message") == MSG + h:
                n += 1
    return n, len(items)


def count_log(path):
    leader_on = leader_off = warns = 0
    with open(path, errors="replace") as f:
        for line in f:
            if "became leader" in line:
                leader_on += 1
            if "lost leadership" in line:
                leader_off += 1
            if re.search(r'level=warn|"level":"warn"', line):
                warns += 1
    return leader_on, leader_off, warns


def rollout(binary, pods, qps, burst, max_seconds, lease=None, keep=False):
    """One rollout; returns its figures as a dict (None when it could not be
    set up).  lease: (duration, renew deadline, retry period) in seconds, or
    None for the controller's defaults."""
    opts = argparse.Namespace(binary=binary, pods=pods, qps=qps, burst=burst, max_seconds=max_seconds,
                              lease=lease, keep=keep)
    work = tempfile.mkdtemp(prefix="ota-rollout.")
    procs = []
    try:
        return run(opts, work, procs)
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait(5)
        if keep:
            print("work directory:", work, file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "ota-controller"))
    ap.add_argument("--pods", type=int, default=5000)
    ap.add_argument("--qps", type=float, default=20)
    ap.add_argument("--burst", type=int, default=30)
    ap.add_argument("--max-seconds", type=float, default=600)
    ap.add_argument("--keep", action="store_true", help="keep the work directory (logs)")
    opts = ap.parse_args()
    r = rollout(opts.binary, opts.pods, opts.qps, opts.burst, opts.max_seconds, keep=opts.keep)
    if r is None:
        return 1
    print("pods=%(pods)d qps=%(qps)g burst=%(burst)d marked=%(marked)d/%(total)d in %(seconds).1fs%(cut)s: "
          "%(rate).1f patches/s = %(share).0f%% of qps (ideal %(ideal).1fs), status patches 2xx=%(patches)d, "
          "leadership changes=%(changes)d (became leader %(became)d, lost %(lost)d), warnings=%(warnings)d" % r)
    return 0


def run(opts, work, procs):
    state = os.path.join(work, "state")
    kerr = open(os.path.join(work, "kubesim.err"), "w")
    sim = subprocess.Popen([sys.executable, KUBESIM, "--port", "0", "--no-sim", "--nodes", "1",
                            "--state-dir", state], stdout=subprocess.PIPE, stderr=kerr, text=True)
    procs.append(sim)
    ready = select.select([sim.stdout], [], [], 60)[0]
    line = sim.stdout.readline() if ready else ""
    m = re.search(r"kubesim ready: https://[\d.]+:(\d+)", line)
    if not m:
        print("kubesim did not start: %r" % line, file=sys.stderr)
        return None
    port = int(m.group(1))
    with open(os.path.join(state, "tokens.json")) as f:
        token = json.load(f)["admin"]["token"]
    ca = os.path.join(state, "ca.crt")
    api = Api(port, ca, token)
    for ns in (NS, "ota-system"):
        api.call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    ds = api.call("POST", "/apis/apps/v1/namespaces/%s/daemonsets" % NS, {
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": NS, "annotations": {OTA_ANN: "OTA"}},
        "spec": {"selector": {"matchLabels": {"app": "agent"}}, "updateStrategy": {"type": "OnDelete"},
                 "template": {"metadata": {"labels": {"app": "agent"}},
                              "spec": {"containers": [{"name": "main", "image": "busybox:1.1"}]}}}})
    h1, h2 = "rev1hash01", "rev2hash02"
    api.call("POST", "/apis/apps/v1/namespaces/%s/controllerrevisions" % NS, revision(ds, 1, h1))
    t = time.monotonic()
    errors = []

    def create(lo, hi):
        a = Api(port, ca, token)
        try:
            for i in range(lo, hi):
                a.call("POST", "/api/v1/namespaces/%s/pods" % NS, pod(ds, i, h1))
        except Exception as e:  # reported below
            errors.append(e)
    threads = [threading.Thread(target=create, args=(k * opts.pods // 4, (k + 1) * opts.pods // 4))
               for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        print("creating pods failed: %s" % errors[0], file=sys.stderr)
        return None
    print("created %d pods in %.1fs" % (opts.pods, time.monotonic() - t), file=sys.stderr)

    mport, hport = free_port(), free_port()
    log_path = os.path.join(work, "controller.err")
    clog = open(log_path, "w")
    args = [opts.binary, "--kubeconfig", os.path.join(state, "controller.kubeconfig"),
            "--kube-api-qps", str(opts.qps), "--kube-api-burst", str(opts.burst),
            "--leader-elect-resource-namespace", "ota-system",
            "--health-probe-bind-address", "127.0.0.1:%d" % hport,
            "--metrics-bind-address", "127.0.0.1:%d" % mport]
    if opts.lease is not None:
        args += ["--leader-elect-lease-duration", str(opts.lease[0]),
                 "--leader-elect-renew-deadline", str(opts.lease[1]),
                 "--leader-elect-retry-period", str(opts.lease[2])]
    ctl = subprocess.Popen(args, stdout=clog, stderr=subprocess.STDOUT)
    procs.append(ctl)
    deadline = time.monotonic() + 120
    while True:
        mm = metrics(mport)
        if mm and mm.get("ota_controller_leader") == 1 and \
                mm.get('ota_controller_cached_objects{resource="pods"}', 0) == opts.pods:
            break
        if ctl.poll() is not None or time.monotonic() > deadline:
            print("controller not leader with %d cached pods in time" % opts.pods, file=sys.stderr)
            return None
        time.sleep(0.5)
    time.sleep(2)  # idle: nothing to patch for revision 1
    before = patches_ok(metrics(mport))

    t0 = time.monotonic()
    api.call("POST", "/apis/apps/v1/namespaces/%s/controllerrevisions" % NS, revision(ds, 2, h2))
    end = t0 + opts.max_seconds
    done_at = None
    while time.monotonic() < end:
        mm = metrics(mport)
        if mm is not None and patches_ok(mm) - before >= opts.pods:
            n, _ = marked(api, h2)
            if n >= opts.pods:
                done_at = time.monotonic()
                break
        if ctl.poll() is not None:
            break
        time.sleep(0.5)
    stop_at = done_at if done_at is not None else time.monotonic()
    elapsed = stop_at - t0
    n, total = marked(api, h2)
    mm = metrics(mport) or {}
    patches = patches_ok(mm) - before
    on, off, warns = count_log(log_path)
    changes = off + max(0, on - 1)
    rate = n / elapsed if elapsed > 0 else 0.0
    return {"pods": opts.pods, "qps": opts.qps, "burst": opts.burst, "marked": n, "total": total,
            "seconds": elapsed, "cut": "" if done_at is not None else " (stopped at --max-seconds)",
            "rate": rate, "share": 100.0 * rate / opts.qps,
            "ideal": max(0, opts.pods - opts.burst) / opts.qps, "patches": patches,
            "changes": changes, "became": on, "lost": off, "warnings": warns,
            "log_tail": "".join(open(log_path, errors="replace").readlines()[-30:])}


if __name__ == "__main__":
    sys.exit(main())
