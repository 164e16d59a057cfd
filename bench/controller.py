#!/usr/bin/env python3
"""Controller benchmark (issue 11, docs/BENCHMARKS.md "Controller"): one command,
two parts, loopback only, Python 3 standard library only.

Part 1, scale (kubesim --no-sim: API server only, objects created through the
API).  For each --pods N: one OTA DaemonSet, its ControllerRevision and N pods
(one per node name, PodNeedUpgrade=False for the revision: nothing to do).
Then, for each --qps Q, a fresh ota-controller (leader election on) is started
and measured:
  cold start   seconds from exec to /readyz 200 with N pods cached and the
               lease held, and VmRSS then;
  steady state API calls per minute while idle (--steady-seconds, from the
               controller's ota_controller_api_calls_total), by verb;
  rollout      a new ControllerRevision is created; seconds until N status
               PATCHes were answered 2xx and every pod carries the new
               PodNeedUpgrade message (patches/s against Q), VmRSS peak
               (sampled every 100 ms) during it and VmRSS 5 s after.
The rollout-vs-QPS sweep with leadership checks is bench/rollout.py's job;
this part is about memory and cold start, with the rollout as the load.

Part 2, pulls (kubesim with its simulated cluster: --pull-nodes nodes, their
kubelets, the DaemonSet and Job controllers).  An OTA DaemonSet on every node,
updated to an image no node has; once every pod is marked, one pre-pull
request per pod (--pulls of them, as `kubectl ota pull` writes it, each with
its own lastTransitionTime one second after the previous: a strict FIFO
order), with --max-concurrent-pulls 10.  From watches on Jobs and pods:
  request -> Job created  p50/p99 (all requests: includes waiting for a slot)
  eligible -> Job created p50/p99 (from the later of the request and the
               moment a slot was free: the (i-10)th Job completion)
  Job complete -> PodImageReady True  p50/p99
  most Jobs running at once (never more than 10), FIFO: pairs of Jobs
  created out of the requests' order, and the largest displacement (places
  between a Job's creation rank and its request's rank; concurrent POSTs of
  one pass can reorder by fewer than --max-concurrent-pulls places).
`--kubesim-arg=--light` (or any flag) is passed to that kubesim: for its light
mode (1 000 nodes) once it has one.

Usage (after `make all`; `make bench-controller` runs the defaults):
  python3 bench/controller.py [--binary build/ota-controller] [--pods 1000,10000]
      [--qps 20,200] [--steady-seconds 60] [--rollout-max-seconds 600]
      [--pulls 200] [--pull-nodes 200] [--time-scale 10] [--kubesim-arg=ARG ...]
      [--part scale|pulls|all] [--controller-arg=ARG ...] [--keep]
Timing is never pass/fail: exit 1 only when a run could not be set up.
"""

import argparse
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

from benchlib import MSG, NS, ROOT, Kubesim, RssSampler, Setup, create_namespaces, create_pods, free_port, \
    log, marked, metrics, patches_ok, rss_kib, setup_daemonset, stop_proc, stop_procs
import benchlib

MANAGED = "app.kubernetes.io/managed-by=ota-prepull"
REG = "registry.example.com"
PRELOADED = REG + "/bench/agent:1.0"
FRESH = REG + "/bench/agent:2.0"
REGISTRY = {"includeDefaults": True,
            "images": [{"image": PRELOADED, "size": 30_000_000}, {"image": FRESH, "size": 50_000_000}],
            "preloadedImages": ["registry.k8s.io/pause:3.10", PRELOADED]}


def pct(values, p):
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]


def probe(port, path):
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        conn.request("GET", path)
        status = conn.getresponse().status
        conn.close()
        return status
    except (OSError, http.client.HTTPException):
        return None


def leadership_lost(path):
    with open(path, errors="replace") as f:
        return sum(1 for line in f if "lost leadership" in line)


class Controller:
    def __init__(self, work, procs, binary, sim, name, qps, burst, max_pulls=10, extra=()):
        self.mport, self.hport = free_port(), free_port()
        self.log = os.path.join(work, name + ".err")
        self.out = open(self.log, "w")
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(
            [binary, "--kubeconfig", os.path.join(sim.state, "controller.kubeconfig"),
             "--kube-api-qps", str(qps), "--kube-api-burst", str(burst),
             "--max-concurrent-pulls", str(max_pulls), "--helper-image", "busybox:1.36-musl",
             # the older spelling of --leader-elect-resource-namespace: builds
             # from before issue 10 know only it, so before/after runs compare
             "--leader-elect-namespace", "ota-system", "--leader-elect-identity", name,
             "--health-probe-bind-address", "127.0.0.1:%d" % self.hport,
             "--metrics-bind-address", "127.0.0.1:%d" % self.mport] + list(extra),
            stdout=self.out, stderr=subprocess.STDOUT)
        procs.append(self.proc)

    def metrics(self):
        return metrics(self.mport)

    def wait_ready(self, pods, timeout):
        """Seconds from exec until ready, leading and holding `pods` pods."""
        deadline = self.t0 + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise Setup("the controller exited with %s (see %s)" % (self.proc.returncode, self.log))
            m = self.metrics()
            if m and m.get("ota_controller_leader") == 1 and \
                    m.get('ota_controller_cached_objects{resource="pods"}', -1) >= pods and \
                    probe(self.hport, "/readyz") == 200:
                return time.monotonic() - self.t0
            time.sleep(0.05)
        raise Setup("the controller was not ready with %d pods within %gs (see %s)" % (pods, timeout, self.log))

    def stop(self):
        stop_proc(self.proc, 30)
        self.out.close()
        return self.proc.returncode


def revision(ds, rev, h):
    return benchlib.revision(ds, rev, h, "%s/bench/agent:%d.0" % (REG, rev))


def pod(ds, i, h):
    """A DaemonSet pod (one per node), marked up to date for revision h."""
    return benchlib.pod(ds, i, h, "edge-node-%05d" % i, PRELOADED)


# ------------------------------------------------------------------ part 1


def run_scale(opts, work, procs, n):
    sim = Kubesim(work, procs, 1, scale=1.0, bookmark=5)
    h = "rev01hash"
    api = sim.api
    ds = setup_daemonset(api, PRELOADED, lambda d: revision(d, 1, h))
    create_pods(sim, n, lambda i: pod(ds, i, h))
    rows = []
    rev = 1
    for qps in opts.qps:
        burst = opts.burst if opts.burst else max(30, int(qps * 1.5))
        ctl = Controller(work, procs, opts.binary, sim, "ctl-%d-%g" % (n, qps), qps, burst,
                         extra=opts.controller_arg)
        try:
            cold = ctl.wait_ready(n, opts.ready_timeout)
            rss_ready = rss_kib(ctl.proc.pid)
            time.sleep(2)  # the first pass over every pod (nothing to patch)
            rss_idle = rss_kib(ctl.proc.pid)
            m0, t0 = ctl.metrics(), time.monotonic()
            time.sleep(opts.steady_seconds)
            m1, t1 = ctl.metrics(), time.monotonic()
            c0, c1 = benchlib.calls_by_verb(m0), benchlib.calls_by_verb(m1)
            per_min = {v: (c1.get(v, 0) - c0.get(v, 0)) * 60.0 / (t1 - t0) for v in c1}
            total_min = sum(per_min.values())
            rss_steady = rss_kib(ctl.proc.pid)

            rev += 1
            h2 = "rev%02dhash" % rev
            before = patches_ok(ctl.metrics())
            sampler = RssSampler(ctl.proc.pid)
            sampler.start()
            t0 = time.monotonic()
            api.call("POST", "/apis/apps/v1/namespaces/%s/controllerrevisions" % NS, revision(ds, rev, h2))
            done = None
            end = t0 + opts.rollout_max_seconds
            while time.monotonic() < end and ctl.proc.poll() is None:
                if patches_ok(ctl.metrics()) - before >= n:
                    done = time.monotonic()
                    break
                time.sleep(0.2)
            elapsed = (done or time.monotonic()) - t0
            time.sleep(5)
            peak = sampler.stop()
            rss_after = rss_kib(ctl.proc.pid)
            n_marked, _ = marked(api, h2)
            patches = patches_ok(ctl.metrics()) - before
            # the revision marked now is the next run's "nothing to do"
            h = h2
            lost = leadership_lost(ctl.log)  # before SIGTERM, whose release logs it too
        finally:
            rc = ctl.stop()
        rows.append({"lost_leadership": lost, "pods": n, "qps": qps, "burst": burst, "cold_s": cold, "rss_ready": rss_ready,
                     "rss_idle": rss_idle, "rss_steady": rss_steady, "calls_min": total_min,
                     "calls_by_verb": {k: round(v, 1) for k, v in sorted(per_min.items()) if v},
                     "rollout_s": elapsed, "rollout_done": done is not None, "marked": n_marked,
                     "patches": patches, "patches_per_s": n_marked / elapsed if elapsed else 0,
                     "rss_peak": peak, "rss_after": rss_after, "exit": rc})
        log(json.dumps(rows[-1]))
    return rows


def print_scale(rows):
    print("\n== scale: kubesim --no-sim, objects created through the API (RSS in MiB)")
    print("%6s %5s %6s | %7s %6s %6s | %9s | %9s %6s %7s %6s | %6s %6s"
          % ("pods", "qps", "burst", "cold s", "RSS", "idle", "calls/min", "rollout s", "pat/s",
             "marked", "%qps", "peak", "after"))
    for r in rows:
        print("%6d %5g %6d | %7.2f %6.1f %6.1f | %9.1f | %9.1f%s %6.1f %7d %5.0f%% | %6.1f %6.1f"
              % (r["pods"], r["qps"], r["burst"], r["cold_s"], r["rss_ready"] / 1024.0,
                 r["rss_steady"] / 1024.0, r["calls_min"], r["rollout_s"], "" if r["rollout_done"] else "+",
                 r["patches_per_s"], r["marked"], 100.0 * r["patches_per_s"] / r["qps"],
                 r["rss_peak"] / 1024.0, r["rss_after"] / 1024.0))
    for r in rows:
        print("  %d pods qps %g: steady calls/min by verb %s; status PATCHes 2xx %d; leadership lost %d "
              "times; exit %s" % (r["pods"], r["qps"], r["calls_by_verb"], r["patches"], r["lost_leadership"],
                                  r["exit"]))


# ------------------------------------------------------------------ part 2


class Watch(threading.Thread):
    """List then watch a path as admin; on_event(type, obj, monotonic time)."""

    def __init__(self, sim, path, on_event):
        super().__init__(daemon=True)
        self.sim, self.path, self.on_event = sim, path, on_event
        self.stopping = False
        self.synced = threading.Event()

    def run(self):
        rv = None
        api = self.sim.client("admin")
        sep = "&" if "?" in self.path else "?"
        while not self.stopping:
            try:
                if rv is None:
                    lst = api.call("GET", self.path)
                    now = time.monotonic()
                    for item in lst["items"]:
                        self.on_event("ADDED", item, now)
                    rv = lst["metadata"]["resourceVersion"]
                    self.synced.set()
                conn = http.client.HTTPSConnection("127.0.0.1", self.sim.port, context=api.ctx, timeout=60)
                conn.request("GET", self.path + sep + "watch=1&allowWatchBookmarks=true&timeoutSeconds=30"
                             "&resourceVersion=" + rv, headers={"Authorization": "Bearer " + api.token})
                resp = conn.getresponse()
                if resp.status != 200:
                    resp.read()
                    rv = None
                    continue
                while not self.stopping:
                    line = resp.readline()
                    if not line:
                        break
                    ev = json.loads(line)
                    obj = ev.get("object") or {}
                    if ev["type"] == "ERROR":
                        rv = None
                        break
                    rv = obj.get("metadata", {}).get("resourceVersion", rv)
                    if ev["type"] != "BOOKMARK":
                        self.on_event(ev["type"], obj, time.monotonic())
                conn.close()
            except (OSError, http.client.HTTPException, ValueError, Setup):
                time.sleep(0.2)


def cond(obj, ctype):
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return c
    return None


def run_pulls(opts, work, procs):
    nodes = opts.pull_nodes
    sim = Kubesim(work, procs, nodes, registry=REGISTRY, extra=opts.kubesim_arg, scale=opts.time_scale,
                  bookmark=5)
    api = sim.api
    create_namespaces(api)
    ctl = Controller(work, procs, opts.binary, sim, "ctl-pulls", opts.pull_qps, max(30, int(opts.pull_qps * 1.5)),
                     max_pulls=opts.max_pulls, extra=opts.controller_arg)
    lock = threading.Lock()
    st = {"jobs": {}, "order": [], "created": {}, "complete": {}, "ready": {}, "running": set(), "max_running": 0}

    def on_job(kind, job, now):
        m = job["metadata"]
        uid = (m.get("labels") or {}).get("ota-prepull/pod-uid")
        with lock:
            if m["uid"] not in st["jobs"]:
                st["order"].append((uid, (m.get("annotations") or {}).get("ota-prepull/request-time")))
                st["created"].setdefault(uid, now)
            st["jobs"][m["uid"]] = job
            finished = any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
                           for c in (job.get("status") or {}).get("conditions") or [])
            if finished and uid not in st["complete"]:
                st["complete"][uid] = now
            if kind == "DELETED" or finished or m.get("deletionTimestamp"):
                st["running"].discard(m["uid"])
            else:
                st["running"].add(m["uid"])
            st["max_running"] = max(st["max_running"], len(st["running"]))

    def on_pod(kind, p, now):
        c = cond(p, "PodImageReady")
        if c and c.get("status") == "True" and c.get("reason") == "PullImageSuccess":
            with lock:
                st["ready"].setdefault(p["metadata"]["uid"], now)

    try:
        ctl.wait_ready(0, 120)
        t = time.monotonic()
        api.call("POST", "/apis/apps/v1/namespaces/%s/daemonsets" % NS, benchlib.ota_ds(PRELOADED))

        def running():
            items = api.call("GET", "/api/v1/namespaces/%s/pods?labelSelector=app%%3Dagent" % NS)["items"]
            return [p for p in items if (p.get("status") or {}).get("phase") == "Running"
                    and not p["metadata"].get("deletionTimestamp")]
        pods = []
        deadline = time.monotonic() + opts.setup_seconds
        while time.monotonic() < deadline:
            pods = running()
            if len(pods) >= nodes:
                break
            time.sleep(2)
        if len(pods) < nodes:
            raise Setup("only %d of %d DaemonSet pods Running after %gs" % (len(pods), nodes, opts.setup_seconds))
        log("%d pods running in %.1fs" % (len(pods), time.monotonic() - t))
        api.call("PATCH", "/apis/apps/v1/namespaces/%s/daemonsets/agent" % NS,
                 {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": FRESH}]}}}},
                 ctype="application/strategic-merge-patch+json")
        h = None
        deadline = time.monotonic() + opts.setup_seconds
        while time.monotonic() < deadline:
            items = api.call("GET", "/api/v1/namespaces/%s/pods?labelSelector=app%%3Dagent" % NS)["items"]
            msgs = [(cond(p, "PodNeedUpgrade") or {}) for p in items]
            marked_now = [c.get("message", "") for c in msgs if c.get("status") == "True"]
            if len(marked_now) >= nodes and len(set(marked_now)) == 1:
                h = marked_now[0][len(MSG):]
                pods = items
                break
            time.sleep(1)
        if h is None:
            raise Setup("the pods were not all marked PodNeedUpgrade=True")
        log("all %d pods marked for %s" % (nodes, h))
        jw = Watch(sim, "/apis/batch/v1/jobs?labelSelector=" + urllib.parse.quote(MANAGED), on_job)
        pw = Watch(sim, "/api/v1/namespaces/%s/pods?labelSelector=app%%3Dagent" % NS, on_pod)
        jw.start()
        pw.start()
        jw.synced.wait(30)
        pw.synced.wait(30)
        pods = sorted(pods, key=lambda p: p["spec"]["nodeName"])[:opts.pulls]
        sampler = RssSampler(ctl.proc.pid)
        sampler.start()
        base = int(time.time()) - len(pods) - 5
        sent = {}
        reqtime = {}
        for i, p in enumerate(pods):
            t_req = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(base + i))
            body = {"status": {"conditions": [{"type": "PodImageReady", "status": "False",
                                               "reason": "WaitPullImage", "message": MSG + h,
                                               "lastTransitionTime": t_req}]}}
            node = p["spec"]["nodeName"]
            who = sim.tokens.get(node) and node or "admin"
            sim.client(who).call("PATCH", "/api/v1/namespaces/%s/pods/%s/status" % (NS, p["metadata"]["name"]),
                                 body, ctype="application/strategic-merge-patch+json")
            sent[p["metadata"]["uid"]] = time.monotonic()
            reqtime[p["metadata"]["uid"]] = t_req
        log("%d requests sent" % len(sent))
        deadline = time.monotonic() + opts.pull_max_seconds
        while time.monotonic() < deadline:
            with lock:
                if len(st["ready"]) >= len(sent):
                    break
            time.sleep(0.5)
        jw.stopping = pw.stopping = True
        with lock:
            created = dict(st["created"])
            complete = dict(st["complete"])
            ready = dict(st["ready"])
            order = list(st["order"])
            max_running = st["max_running"]
        m = ctl.metrics() or {}
        rss_peak = sampler.stop()
    finally:
        rc = ctl.stop()
    with open(os.path.join(work, "pulls.json"), "w") as f:  # per request, for a closer look (--keep)
        json.dump({u: {"request_time": reqtime[u], "sent": sent[u], "job": created.get(u),
                       "complete": complete.get(u), "ready": ready.get(u)} for u in sent}, f, indent=1)
    to_job = [created[u] - sent[u] for u in sent if u in created]
    comps = sorted(complete.values())
    by_created = sorted((created[u], u) for u in sent if u in created)
    eligible = []
    k = opts.max_pulls
    for i, (tc, u) in enumerate(by_created):
        free_at = comps[i - k] if i >= k and i - k < len(comps) else sent[u]
        eligible.append(tc - max(sent[u], free_at))
    to_ready = [ready[u] - complete[u] for u in sent if u in complete and u in ready]
    # FIFO: Jobs in creation order (the watch's, i.e. the apiserver's) should
    # follow the requests' order.  The Jobs of one pass are POSTed together
    # and land in whatever order a loaded apiserver finishes them, so a
    # reordering by fewer places than --max-concurrent-pulls says nothing; a
    # queue that is not FIFO shows as displacements of tens of places.
    seq = [(reqtime[u], u) for u, _ in order if u in sent and u in created]
    rank = {k: i for i, k in enumerate(sorted(seq))}
    displacement = max([abs(rank[k] - i) for i, k in enumerate(seq)] or [0])
    inversions = sum(1 for i in range(len(seq)) for j in range(i + 1, len(seq)) if seq[j] < seq[i])
    return {"nodes": nodes, "requests": len(sent), "jobs": len(created), "ready": len(ready),
            "max_running": max_running, "max_pulls": opts.max_pulls, "fifo_inversions": inversions, "fifo_displacement": displacement,
            "to_job_p50": pct(to_job, 50), "to_job_p99": pct(to_job, 99),
            "eligible_p50": pct(eligible, 50), "eligible_p99": pct(eligible, 99),
            "to_ready_p50": pct(to_ready, 50), "to_ready_p99": pct(to_ready, 99),
            "rss_peak": rss_peak, "qps": opts.pull_qps, "time_scale": opts.time_scale, "exit": rc,
            "pulls_total": {k2: v for k2, v in m.items() if k2.startswith("ota_controller_pulls_total")}}


def print_pulls(r):
    print("\n== pulls: kubesim with its simulated cluster, %d nodes, time scale %g, --max-concurrent-pulls %d, "
          "--kube-api-qps %g" % (r["nodes"], r["time_scale"], r["max_pulls"], r["qps"]))
    print("requests %d, Jobs created %d, PodImageReady True %d, controller VmRSS peak %.1f MiB"
          % (r["requests"], r["jobs"], r["ready"], r["rss_peak"] / 1024.0))
    print("request -> Job created (incl. waiting for a slot)  p50 %7.3f s  p99 %7.3f s (real seconds)"
          % (r["to_job_p50"], r["to_job_p99"]))
    print("eligible -> Job created (slot free, request seen)  p50 %7.3f s  p99 %7.3f s"
          % (r["eligible_p50"], r["eligible_p99"]))
    print("Job complete -> PodImageReady True                 p50 %7.3f s  p99 %7.3f s"
          % (r["to_ready_p50"], r["to_ready_p99"]))
    print("most Jobs running at once %d (limit %d); FIFO: %d pairs of Jobs created out of request order, "
          "none displaced by more than %d places; controller exit %s"
          % (r["max_running"], r["max_pulls"], r["fifo_inversions"], r["fifo_displacement"], r["exit"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "ota-controller"))
    ap.add_argument("--part", choices=("scale", "pulls", "all"), default="all")
    ap.add_argument("--pods", default="1000,10000")
    ap.add_argument("--qps", default="20,200")
    ap.add_argument("--burst", type=int, default=0, help="default: max(30, 1.5 x qps)")
    ap.add_argument("--steady-seconds", type=float, default=60)
    ap.add_argument("--rollout-max-seconds", type=float, default=600)
    ap.add_argument("--ready-timeout", type=float, default=300)
    ap.add_argument("--pulls", type=int, default=200)
    ap.add_argument("--pull-nodes", type=int, default=200)
    ap.add_argument("--pull-qps", type=float, default=200)
    ap.add_argument("--max-pulls", type=int, default=10)
    ap.add_argument("--time-scale", type=float, default=10)
    ap.add_argument("--setup-seconds", type=float, default=600)
    ap.add_argument("--pull-max-seconds", type=float, default=600)
    ap.add_argument("--kubesim-arg", action="append", default=[], help="extra flag for the pulls part's kubesim")
    ap.add_argument("--controller-arg", action="append", default=[],
                    help="extra flag for every ota-controller (e.g. --controller-arg=--leader-elect=false)")
    ap.add_argument("--keep", action="store_true", help="keep the work directories (logs)")
    opts = ap.parse_args()
    opts.qps = [float(q) for q in opts.qps.split(",") if q]
    pods = [int(n) for n in opts.pods.split(",") if n]
    if not os.access(opts.binary, os.X_OK):
        print("no %s: run make all first" % opts.binary, file=sys.stderr)
        return 1
    rows, pulls, ok = [], None, True
    parts = []
    if opts.part in ("scale", "all"):
        parts += [("scale", n) for n in pods]
    if opts.part in ("pulls", "all"):
        parts.append(("pulls", None))
    for part, n in parts:
        work = tempfile.mkdtemp(prefix="ota-bench-controller.")
        procs = []
        try:
            if part == "scale":
                rows += run_scale(opts, work, procs, n)
            else:
                pulls = run_pulls(opts, work, procs)
        except Setup as e:
            print("setup failed: %s (work directory %s)" % (e, work), file=sys.stderr)
            ok, opts.keep = False, True
        finally:
            stop_procs(procs, 30)
            if opts.keep:
                print("work directory:", work, file=sys.stderr)
            else:
                shutil.rmtree(work, ignore_errors=True)
    if rows:
        print_scale(rows)
    if pulls:
        print_pulls(pulls)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
