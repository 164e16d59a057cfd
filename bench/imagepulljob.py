#!/usr/bin/env python3
"""ImagePullJob benchmark (issue 20): one OpenKruise ImagePullJob over every
node of a kubesim cluster, run by ota-controller.  Loopback only, Python 3
standard library only.

kubesim with its simulated cluster (--light by default: one thread for every
kubelet, for 1 000 nodes), the rendered RBAC (benchlib.Kubesim) and, from
manifests/components/imagepulljob-crd and components/imagepulljob, our CRD and the controller's RBAC for
ImagePullJobs, applied with kubectl; the controller runs with
--imagepulljobs.  No webhook, so the ImagePullJob is written with every
default spelled out.
Every node pulls one image no node has (--image-mb, at the registry's
10 MB per simulated second, plus its 0.5 s resolve); the helper image is
preloaded.  Measured, from watches on the Jobs and the ImagePullJob and from
the controller's /metrics and /proc:

  time to complete   from the POST of the ImagePullJob to the status write
                     with completionTime, in simulated seconds, against the
                     ideal: pull time x nodes / parallelism
  Jobs               created in all, per node (1 is right), most unfinished
                     at once (never above --parallelism)
  API writes         the controller's POST/PATCH/DELETE during the run
                     (rest_client_requests_total), per node; PUT apart (the
                     Lease renewals, not the job's work)
  status writes      MODIFIED events of the ImagePullJob whose status
                     changed: per second over the run, and the most in any
                     one second (the controller writes one per second at most)
  peak RSS           the controller's VmRSS, sampled every 100 ms

Usage (after `make all`):
  python3 bench/imagepulljob.py [--nodes 1000] [--parallelism 50] [--image-mb 100]
      [--time-scale 10] [--max-concurrent-pulls 100] [--max-seconds 1800]
      [--binary build/ota-controller] [--kubesim-arg=ARG ...] [--no-light]
      [--controller-arg=ARG ...] [--qps 50] [--burst 100] [--keep]
Try it small first: --nodes 50 --parallelism 5.  Timing is never pass/fail:
exit 1 only when the run could not be set up or did not complete.
"""

import argparse
import json
import os
import sys
import threading
import time
import urllib.parse

from benchlib import ROOT, JobTracker, Kubesim, RssSampler, Setup, log
import benchlib
from controller import Controller, Watch

NS = "bench-ipj"
NAME = "bench"
REG = "registry.example.com"
IMAGE = REG + "/bench/ipj-target:1.0"
HELPER = "busybox:1.36-musl"
BANDWIDTH = 10_000_000  # the registry's default, bytes per simulated second
RESOLVE = 0.5           # simulated seconds per pull before the bytes
CRD = os.path.join(ROOT, "manifests", "components", "imagepulljob-crd", "crd.yaml")
RBAC = os.path.join(ROOT, "manifests", "components", "imagepulljob", "rbac.yaml")  # on top of base's
MANAGED = "app.kubernetes.io/managed-by=ota-prepull"


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--binary", default=os.path.join(ROOT, "build", "ota-controller"))
    p.add_argument("--nodes", type=int, default=1000)
    p.add_argument("--parallelism", type=int, default=50)
    p.add_argument("--image-mb", type=float, default=100.0, help="target image size, MB (10^6 bytes)")
    p.add_argument("--time-scale", type=float, default=10.0)
    p.add_argument("--max-concurrent-pulls", type=int, default=100,
                   help="the controller's global cap (above --parallelism, so the job's own limit rules)")
    p.add_argument("--max-seconds", type=float, default=1800.0, help="real seconds to wait for completion")
    benchlib.add_run_args(p)
    return p.parse_args(argv)


def ipj(parallelism):
    """What our webhook would have defaulted, spelled out (no webhook here)."""
    return {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "ImagePullJob",
            "metadata": {"name": NAME, "namespace": NS},
            "spec": {"image": IMAGE, "parallelism": parallelism, "imagePullPolicy": "IfNotPresent",
                     "completionPolicy": {"type": "Always"},
                     "pullPolicy": {"timeoutSeconds": 600, "backoffLimit": 3}}}


def run(opts, work, procs):
    size = int(opts.image_mb * 1_000_000)
    registry = {"includeDefaults": True, "images": [{"image": IMAGE, "size": size}],
                "preloadedImages": ["registry.k8s.io/pause:3.10", HELPER]}
    extra = list(opts.kubesim_arg) + ([] if opts.no_light else ["--light"])
    t = time.monotonic()
    sim = Kubesim(work, procs, opts.nodes, registry=registry, extra=extra, scale=opts.time_scale, bookmark=5,
                  wait=600)
    api = sim.api
    benchlib.apply_component(sim, [CRD, RBAC], ["imagepulljobs.apps.kruise.io"])
    api.call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    benchlib.wait_nodes(api, opts.nodes)
    log("kubesim with %d nodes ready in %.1fs" % (opts.nodes, time.monotonic() - t))

    ctl = Controller(work, procs, opts.binary, sim, "ctl-ipj", opts.qps, opts.burst,
                     max_pulls=opts.max_concurrent_pulls, extra=["--imagepulljobs"] + opts.controller_arg)
    jobs = JobTracker(NS)
    lock = threading.Lock()
    st = {"status_writes": [], "last_status": None, "done": None, "final": None}

    def on_ipj(kind, obj, now):
        if obj["metadata"]["name"] != NAME:
            return
        s = obj.get("status")
        with lock:
            if s != st["last_status"] and s is not None:
                st["status_writes"].append(now)
            st["last_status"] = s
            st["final"] = obj
            if s and s.get("completionTime") and st["done"] is None:
                st["done"] = now

    try:
        ctl.wait_ready(0, 120)
        jw = Watch(sim, "/apis/batch/v1/namespaces/%s/jobs?labelSelector=%s" % (NS, urllib.parse.quote(MANAGED)),
                   jobs.on_job)
        iw = Watch(sim, "/apis/apps.kruise.io/v1alpha1/namespaces/%s/imagepulljobs" % NS, on_ipj)
        jw.start()
        iw.start()
        if not (jw.synced.wait(30) and iw.synced.wait(30)):
            raise Setup("the watches did not sync")
        sampler = RssSampler(ctl.proc.pid)
        sampler.start()
        rss0 = benchlib.rss_kib(ctl.proc.pid)
        m0 = ctl.metrics() or {}
        t0 = time.monotonic()
        api.call("POST", "/apis/apps.kruise.io/v1alpha1/namespaces/%s/imagepulljobs" % NS, ipj(opts.parallelism))
        deadline = t0 + opts.max_seconds
        last_log = t0
        while time.monotonic() < deadline:
            with lock:
                done, s = st["done"], st["last_status"] or {}
            if done is not None:
                break
            if time.monotonic() - last_log > 30:
                log("  %.0fs: %s" % (time.monotonic() - t0, s.get("message")))
                last_log = time.monotonic()
            time.sleep(0.2)
        time.sleep(1.5)  # the writes that follow completion (annotation, finalizer) count too
        m1 = ctl.metrics() or {}
        rss_peak = sampler.stop()
        jw.stopping = iw.stopping = True
        with lock:
            res = dict(st)
    finally:
        rc = ctl.stop()
    if res["done"] is None:
        raise Setup("the ImagePullJob did not complete within %gs; status %s (see %s)" % (
            opts.max_seconds, json.dumps(res["last_status"]), ctl.log))
    took = res["done"] - t0
    pull = RESOLVE + size / BANDWIDTH
    ideal = pull * opts.nodes / opts.parallelism
    delta = benchlib.writes_between(m0, m1)
    work_writes = sum(delta.get(k, 0) for k in ("POST", "PATCH", "DELETE"))
    n_sw, sw_rate, sw_most = benchlib.rate(res["status_writes"], t0, took)
    final = (res["final"] or {}).get("status") or {}
    out = {
        "nodes": opts.nodes, "parallelism": opts.parallelism, "image_bytes": size, "time_scale": opts.time_scale,
        "light": not opts.no_light, "real_seconds": round(took, 2),
        "sim_seconds": round(took * opts.time_scale, 1), "ideal_sim_seconds": round(ideal, 1),
        "ratio": round(took * opts.time_scale / ideal, 3),
        **jobs.summary(), "writes_by_method": delta,
        "writes_per_node": round(work_writes / opts.nodes, 3),
        "status_writes": n_sw, "status_writes_per_second": sw_rate, "most_status_writes_in_one_second": sw_most,
        "rss_kib_start": rss0, "rss_kib_peak": rss_peak, "controller_exit": rc,
        "final_status": final,
    }
    with open(os.path.join(work, "results.json"), "w") as f:
        json.dump(out, f, indent=1)
    return out


def report(r):
    print("ImagePullJob over %d nodes, parallelism %d, %.0f MB image (%.1f simulated s per pull), "
          "time scale %g, kubesim %s" % (r["nodes"], r["parallelism"], r["image_bytes"] / 1e6,
                                         RESOLVE + r["image_bytes"] / BANDWIDTH, r["time_scale"],
                                         "--light" if r["light"] else "default kubelets"))
    s = r["final_status"]
    print("  outcome              desired %s, succeeded %s, failed %s: %s" % (
        s.get("desired"), s.get("succeeded"), s.get("failed", 0), s.get("message")))
    print("  time to complete     %.1f real s = %.0f simulated s; ideal %.0f (pull x nodes / parallelism): "
          "x%.2f" % (r["real_seconds"], r["sim_seconds"], r["ideal_sim_seconds"], r["ratio"]))
    print("  Jobs                 %d created on %d nodes (%d nodes with more than one); at most %d unfinished "
          "at once" % (r["jobs_created"], r["nodes_with_jobs"], r["nodes_with_more_than_one_job"],
                       r["max_running"]))
    w = r["writes_by_method"]
    print("  controller writes    %.2f per node: POST %d, PATCH %d, DELETE %d (and PUT %d: the Lease)" % (
        r["writes_per_node"], w.get("POST", 0), w.get("PATCH", 0), w.get("DELETE", 0), w.get("PUT", 0)))
    print("  status writes        %d: %.2f per second, at most %d in one second" % (
        r["status_writes"], r["status_writes_per_second"] or 0, r["most_status_writes_in_one_second"]))
    print("  controller RSS       %.1f MiB at start, %.1f MiB peak" % (r["rss_kib_start"] / 1024.0,
                                                                      r["rss_kib_peak"] / 1024.0))


def main(argv):
    opts = parse(argv)
    if not os.access(opts.binary, os.X_OK):
        print("no controller at %s (make all)" % opts.binary)
        return 1
    return benchlib.bench_main("bench-ipj-", opts.keep, lambda work, procs: run(opts, work, procs), report)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
