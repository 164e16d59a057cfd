#!/usr/bin/env python3
"""ImageCache benchmark (issue 21): one kube-fledged ImageCache of 20 images
on every node of a kubesim cluster, run by ota-controller.  Loopback only,
Python 3 standard library only.

kubesim with its simulated cluster (--light by default), the rendered RBAC
(benchlib.Kubesim) and, from manifests/components/imagecache-crd and
components/imagecache, our CRD (or --crd FILE: kube-fledged's, whose status
is written by a PUT of the whole object) and the controller's RBAC for
ImageCaches, applied with kubectl; the controller runs with --imagecaches
--image-cache-refresh-frequency 0s and the global cap
--max-concurrent-pulls.  No webhook.  One ImageCache, one list of --images
images no node has (--image-mb each, at the registry's 10 MB per simulated
second plus its 0.5 s resolve), no nodeSelector: every node; the helper
image is preloaded.  The controller makes one Job per (cache, node) with a
container per image, and the kubelet pulls them one after the other.
Measured, from watches on the Jobs, the ImageCache and the Lease, and from
the controller's /metrics and /proc:

  time to Succeeded  from the POST of the ImageCache to its status write with
                     Succeeded (or any end), in simulated seconds, against the
                     ideal: ceil(nodes / slots) x images x pull, slots the
                     Jobs the cap lets an ImageCache run at once (cap - 1:
                     bulk units leave the last slot to OTA requests), every
                     node's Job as long (the kubelet pulls serially), no Job
                     turnaround; and the fluid bound nodes x images x pull /
                     cap (at least one node's images x pull) for comparison
  Jobs               created in all, per node (1 is right), most unfinished
                     at once (never above the cap), deleted (before or after
                     the end); each Job's time from its creation to its end
                     or deletion (median, p90, max: above images x pull,
                     the simulator's time per container), and the refill:
                     from a slot freed (the (k - slots)-th Job end the watch
                     saw) to the k-th Job's create (median, p99, max), the
                     controller's share of the time
  API writes         the controller's POST/PATCH/PUT/DELETE during the run
                     (rest_client_requests_total) less the Lease renewals
                     (MODIFIED events of its Lease held by it), per
                     (image, node) pair and per node
  status writes      MODIFIED events of the ImageCache whose status changed:
                     count, per second over the run, most in one second
  RSS                the controller's VmRSS sampled every 100 ms: peak
                     during the run, against the same process idle with the
                     same cluster cached (ready, before the POST) and after

Usage (after `make all`):
  python3 bench/imagecache.py [--nodes 500] [--images 20] [--image-mb 50]
      [--time-scale 10] [--max-concurrent-pulls 100] [--max-seconds 1800]
      [--crd FILE] [--binary build/ota-controller] [--kubesim-arg=ARG ...]
      [--no-light] [--controller-arg=ARG ...] [--qps 50] [--burst 100] [--keep]
Try it small first: --nodes 50.  Timing is never pass/fail: exit 1 only
when the run could not be set up or did not end.
"""

import argparse
import json
import math
import os
import sys
import threading
import time

from benchlib import ROOT, JobTracker, Kubesim, RssSampler, Setup, log
import benchlib
from controller import Controller, Watch

NS = "bench-ic"
NAME = "bench"
CTL = "ctl-ic"
REG = "registry.example.com"
HELPER = "busybox:1.36-musl"
BANDWIDTH = 10_000_000  # the registry's default, bytes per simulated second
RESOLVE = 0.5           # simulated seconds per pull before the bytes
RESERVE = 1             # slots bulk units leave free (controller/pullq.h PULLQ_INTERACTIVE_RESERVE)
API = "/apis/kubefledged.io/v1alpha2"
CRD = os.path.join(ROOT, "manifests", "components", "imagecache-crd", "crd.yaml")
RBAC = os.path.join(ROOT, "manifests", "components", "imagecache", "rbac.yaml")  # on top of base's
ENDS = ("Succeeded", "Failed", "NoImagesPulledOrDeleted")


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--binary", default=os.path.join(ROOT, "build", "ota-controller"))
    p.add_argument("--nodes", type=int, default=500)
    p.add_argument("--images", type=int, default=20)
    p.add_argument("--image-mb", type=float, default=50.0, help="each image's size, MB (10^6 bytes)")
    p.add_argument("--time-scale", type=float, default=10.0)
    p.add_argument("--max-concurrent-pulls", type=int, default=100, help="the controller's global cap")
    p.add_argument("--max-seconds", type=float, default=1800.0, help="real seconds to wait for the end")
    p.add_argument("--crd", default=CRD, help="the ImageCache CRD (default ours, with /status)")
    benchlib.add_run_args(p)
    return p.parse_args(argv)


def images(n):
    return [REG + "/bench/ic-%02d:1.0" % i for i in range(1, n + 1)]


def imagecache(imgs):
    return {"apiVersion": "kubefledged.io/v1alpha2", "kind": "ImageCache",
            "metadata": {"name": NAME, "namespace": NS},
            "spec": {"cacheSpec": [{"images": imgs}]}}


def ideal(nodes, n_images, pull, cap):
    """(the ideal, the fluid bound, slots) in simulated seconds: every
    node's Job pulls n_images one after the other; at most slots Jobs at
    once."""
    slots = max(1, min(nodes, cap - RESERVE if cap > RESERVE else cap))
    per_node = n_images * pull
    return math.ceil(nodes / slots) * per_node, max(per_node, nodes * per_node / cap), slots


def run(opts, work, procs):
    size = int(opts.image_mb * 1_000_000)
    imgs = images(opts.images)
    registry = {"includeDefaults": True, "images": [{"image": i, "size": size} for i in imgs],
                "preloadedImages": ["registry.k8s.io/pause:3.10", HELPER]}
    extra = list(opts.kubesim_arg) + ([] if opts.no_light else ["--light"])
    t = time.monotonic()
    sim = Kubesim(work, procs, opts.nodes, registry=registry, extra=extra, scale=opts.time_scale, bookmark=5,
                  wait=600)
    api = sim.api
    benchlib.apply_component(sim, [opts.crd, RBAC], ["imagecaches.kubefledged.io"])
    api.call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    benchlib.wait_nodes(api, opts.nodes)
    log("kubesim with %d nodes ready in %.1fs" % (opts.nodes, time.monotonic() - t))

    ctl = Controller(work, procs, opts.binary, sim, CTL, opts.qps, opts.burst,
                     max_pulls=opts.max_concurrent_pulls,
                     extra=["--imagecaches", "--image-cache-refresh-frequency", "0s"] + opts.controller_arg)
    jobs = JobTracker(NS)
    lock = threading.Lock()
    st = {"status_writes": [], "object_writes": [], "renewals": [], "last_status": None, "statuses": [],
          "done": None, "final": None}

    def on_ic(kind, obj, now):
        if obj["metadata"]["name"] != NAME:
            return
        s = obj.get("status")
        with lock:
            if kind == "MODIFIED":
                st["object_writes"].append(now)
            if s != st["last_status"] and s is not None:
                st["status_writes"].append(now)
                if not st["statuses"] or st["statuses"][-1] != s.get("status"):
                    st["statuses"].append(s.get("status"))
            st["last_status"] = s
            st["final"] = obj
            if s and s.get("status") in ENDS and st["done"] is None:
                st["done"] = now

    def on_lease(kind, obj, now):
        if kind == "MODIFIED" and (obj.get("spec") or {}).get("holderIdentity") == CTL:
            with lock:
                st["renewals"].append(now)

    try:
        ctl.wait_ready(0, 120)
        watches = [Watch(sim, "/apis/batch/v1/namespaces/%s/jobs" % NS, jobs.on_job),
                   Watch(sim, "%s/namespaces/%s/imagecaches" % (API, NS), on_ic),
                   Watch(sim, "/apis/coordination.k8s.io/v1/namespaces/ota-system/leases", on_lease)]
        for w in watches:
            w.start()
        if not all(w.synced.wait(30) for w in watches):
            raise Setup("the watches did not sync")
        time.sleep(2)  # the controller's first passes over the cluster, idle
        sampler = RssSampler(ctl.proc.pid)
        sampler.start()
        rss0 = benchlib.rss_kib(ctl.proc.pid)
        m0 = ctl.metrics() or {}
        t0 = time.monotonic()
        api.call("POST", "%s/namespaces/%s/imagecaches" % (API, NS), imagecache(imgs))
        deadline = t0 + opts.max_seconds
        last_log = t0
        while time.monotonic() < deadline:
            with lock:
                done, s = st["done"], st["last_status"] or {}
            if done is not None or ctl.proc.poll() is not None:
                break
            if time.monotonic() - last_log > 30:
                log("  %.0fs: %s, %d Jobs, %d unfinished: %s" % (
                    time.monotonic() - t0, s.get("status"), len(jobs.created), len(jobs.running), s.get("message")))
                last_log = time.monotonic()
            time.sleep(0.2)
        # the writes that follow the end count too: the Jobs' deletes, until
        # none for 5 s (at most 60 s)
        settle, seen = time.monotonic(), -1
        while time.monotonic() - settle < 5 and time.monotonic() - t0 < opts.max_seconds + 60:
            n = len(jobs.deleted)
            if n != seen:
                settle, seen = time.monotonic(), n
            if n >= len(jobs.created):
                time.sleep(1.5)
                break
            time.sleep(0.2)
        m1 = ctl.metrics() or {}
        t1 = time.monotonic()
        rss_peak = sampler.stop()
        time.sleep(3)
        rss_after = benchlib.rss_kib(ctl.proc.pid)
        for w in watches:
            w.stopping = True
        with lock:
            res = {k: (list(v) if isinstance(v, list) else v) for k, v in st.items()}
    finally:
        rc = ctl.stop()
    if res["done"] is None:
        raise Setup("the ImageCache did not end within %gs; status %s (see %s)" % (
            opts.max_seconds, json.dumps(res["last_status"]), ctl.log))
    took = res["done"] - t0
    pull = RESOLVE + size / BANDWIDTH
    best, fluid, slots = ideal(opts.nodes, opts.images, pull, opts.max_concurrent_pulls)
    delta = benchlib.writes_between(m0, m1)
    renewals = sum(1 for x in res["renewals"] if t0 <= x <= t1)
    writes = sum(delta.get(k, 0) for k in ("POST", "PATCH", "PUT", "DELETE")) - renewals
    pairs = opts.nodes * opts.images
    n_sw, sw_rate, sw_most = benchlib.rate(res["status_writes"], t0, took)
    n_ow = sum(1 for x in res["object_writes"] if x >= t0)
    dur = [d * opts.time_scale for d in jobs.durations()]
    job_median = dur[len(dur) // 2] if dur else 0.0
    refill = [x * opts.time_scale for x in jobs.refills(slots)]
    deleted = list(jobs.deleted.values())
    out = {
        "nodes": opts.nodes, "images": opts.images, "image_bytes": size, "time_scale": opts.time_scale,
        "cap": opts.max_concurrent_pulls, "slots": slots, "light": not opts.no_light,
        "crd": os.path.relpath(opts.crd, ROOT), "real_seconds": round(took, 2),
        "sim_seconds": round(took * opts.time_scale, 1), "ideal_sim_seconds": round(best, 1),
        "fluid_sim_seconds": round(fluid, 1), "ratio": round(took * opts.time_scale / best, 3),
        **jobs.summary(), "jobs_ended": len(dur), "job_sim_seconds_median": round(job_median, 1),
        "job_sim_seconds_p90": round(dur[int(0.9 * (len(dur) - 1))], 1) if dur else None,
        "job_sim_seconds_max": round(dur[-1], 1) if dur else None, "refills": len(refill),
        "refill_sim_seconds_median": round(refill[len(refill) // 2], 2) if refill else None,
        "refill_sim_seconds_p99": round(refill[int(0.99 * (len(refill) - 1))], 2) if refill else None,
        "refill_sim_seconds_max": round(refill[-1], 2) if refill else None,
        "jobs_deleted_before_end": sum(1 for x in deleted if x <= res["done"]),
        "jobs_deleted_after_end": sum(1 for x in deleted if x > res["done"]),
        "writes_by_method": delta, "lease_renewals": renewals, "writes": writes,
        "writes_per_pair": round(writes / pairs, 4), "writes_per_node": round(writes / opts.nodes, 3),
        "status_writes": n_sw, "status_writes_per_second": sw_rate, "most_status_writes_in_one_second": sw_most,
        "object_writes": n_ow, "statuses_seen": res["statuses"],
        "rss_kib_idle": rss0, "rss_kib_peak": rss_peak, "rss_kib_after": rss_after, "controller_exit": rc,
        "final_status": (res["final"] or {}).get("status") or {},
    }
    with open(os.path.join(work, "results.json"), "w") as f:
        json.dump(out, f, indent=1)
    return out


def report(r):
    pull = RESOLVE + r["image_bytes"] / BANDWIDTH
    print("ImageCache of %d images on %d nodes, %.0f MB each (%.1f simulated s per pull), cap %d, time scale %g, "
          "kubesim %s, CRD %s" % (r["images"], r["nodes"], r["image_bytes"] / 1e6, pull, r["cap"], r["time_scale"],
                                  "--light" if r["light"] else "default kubelets", r["crd"]))
    s = r["final_status"]
    print("  outcome              %s (%s): %s; statuses seen %s; %d failure images" % (
        s.get("status"), s.get("reason"), s.get("message"), " -> ".join(map(str, r["statuses_seen"])),
        len(s.get("failures") or {})))
    print("  time to end          %.1f real s = %.0f simulated s; ideal %.0f (ceil(%d nodes / %d slots) x %d x "
          "%.1f s): x%.2f; fluid bound %.0f (nodes x images x pull / cap)" % (
              r["real_seconds"], r["sim_seconds"], r["ideal_sim_seconds"], r["nodes"], r["slots"], r["images"],
              pull, r["ratio"], r["fluid_sim_seconds"]))
    print("  Jobs                 %d created on %d nodes (%d nodes with more than one); at most %d unfinished "
          "at once (cap %d, %d for an ImageCache)" % (
              r["jobs_created"], r["nodes_with_jobs"], r["nodes_with_more_than_one_job"], r["max_running"],
              r["cap"], r["slots"]))
    print("  Job time             creation to end (or deletion), %d Jobs: median %.0f simulated s (%d x %.1f = %.0f "
          "pulling), p90 %.0f, max %.0f" % (
              r["jobs_ended"], r["job_sim_seconds_median"], r["images"], pull, r["images"] * pull,
              r["job_sim_seconds_p90"] or 0, r["job_sim_seconds_max"] or 0))
    if r["refills"]:
        print("  slot refill          a Job's end seen to the next Job's create, %d refills: median %.2f simulated s, "
              "p99 %.2f, max %.2f" % (r["refills"], r["refill_sim_seconds_median"], r["refill_sim_seconds_p99"],
                                      r["refill_sim_seconds_max"]))
    print("  Jobs deleted         %d before the end, %d after" % (
        r["jobs_deleted_before_end"], r["jobs_deleted_after_end"]))
    w = r["writes_by_method"]
    print("  controller writes    %d: %.4f per (image, node), %.2f per node: POST %d, PATCH %d, PUT %d, DELETE %d, "
          "less %d Lease renewals" % (r["writes"], r["writes_per_pair"], r["writes_per_node"], w.get("POST", 0),
                                      w.get("PATCH", 0), w.get("PUT", 0), w.get("DELETE", 0), r["lease_renewals"]))
    print("  ImageCache writes    %d status: %.3f per second, at most %d in one second; %d MODIFIED in all" % (
        r["status_writes"], r["status_writes_per_second"] or 0, r["most_status_writes_in_one_second"],
        r["object_writes"]))
    print("  controller RSS       %.1f MiB idle (ready, same cluster, before the POST), %.1f MiB peak (x%.2f), "
          "%.1f MiB after" % (r["rss_kib_idle"] / 1024.0, r["rss_kib_peak"] / 1024.0,
                              r["rss_kib_peak"] / max(1, r["rss_kib_idle"]), r["rss_kib_after"] / 1024.0))


def main(argv):
    opts = parse(argv)
    if not os.access(opts.binary, os.X_OK):
        print("no controller at %s (make all)" % opts.binary)
        return 1
    return benchlib.bench_main("bench-ic-", opts.keep, lambda work, procs: run(opts, work, procs), report)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
