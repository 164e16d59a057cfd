#!/usr/bin/env python3
"""Automatic pre-pull benchmark (issue 22 §1): an OTA DaemonSet of one pod
per node on a kubesim cluster, opted in with Kruise's
apps.kruise.io/image-predownload-parallelism, gets a new image; the
controller pulls it ahead on every node on its own.  Loopback only, Python 3
standard library only.

kubesim with its simulated cluster (--light by default: 1 000 nodes) and
the rendered RBAC (benchlib.Kubesim); ota-webhook (as the e2e tests start
it, tests/e2e/harness.py) registered through the rendered manifests'
webhook configurations only (no Deployments), so every pod and pods/status
write, the kubelets' and the controller's automatic ones, is admitted by
its rules (--no-webhook: none); ota-controller with --max-concurrent-pulls
(default 51: an automatic pull is a bulk unit of the pull queue, and bulk
units leave the last slot of the cap to node users' requests, so
parallelism 50 needs a cap of 51 or more).  The DaemonSet (OnDelete, OTA,
parallelism --parallelism, Kruise's image-predownload-timeout-seconds
--timeout-seconds: 3600 by default, as a loaded kubesim at time scale 10
can take longer than the usual 600 simulated s to run a Job) runs the
preloaded image on every node; once all
its pods are Running, `spec.template` gets an image no node has (--image-mb,
at the registry's 10 MB per simulated second plus its 0.5 s resolve; the
helper image is preloaded).  Measured, from watches on the ControllerRevisions,
the pods, the Jobs, the controller's Lease and the DaemonSet's Events, and
from the controller's /metrics and /proc:

  time to Ready      from the new ControllerRevision seen (ADDED) to every pod
                     PodImageReady True/PullImageSuccess `controllerrevision:
                     H` (or PullImageFail: the run ends when every pod has
                     an outcome), in simulated seconds, against the ideal ceil(nodes /
                     parallelism) x pull (waves of `parallelism` pulls with
                     no marking, Job turnaround or status write); also from
                     the revision to every pod marked (AutoPrePull True)
  in flight          the most automatic pulls at once (AutoPrePull True and
                     PodImageReady False/WaitPullImage, after every pod
                     event, as tests/e2e/test_auto_prepull.py counts them: at
                     most parallelism) and the most unfinished Jobs at once
  Jobs               created, per node (1 is right); each Job's time from its
                     creation to its end (the simulator's share: above one
                     pull is kubesim's time per Job) and the refill, from a
                     Job's end seen to the next Job's create; per pod, its
                     pull started (WaitPullImage) to its Job created, and its
                     Job's end to PodImageReady True (the controller's share)
  controller passes  ota_controller_reconcile_duration_seconds during the run:
                     passes, their mean, and the histogram's upper buckets
  API writes         the controller's POST/PATCH/PUT/DELETE during the run
                     (rest_client_requests_total) less its Lease renewals,
                     per node
  RSS                the controller's VmRSS sampled every 100 ms: peak during
                     the run, against the same process idle with the same
                     cluster cached (ready, before the new image) and after
  load               /proc/loadavg at the start and the end

Usage (after `make all`):
  python3 bench/autoprepull.py [--nodes 1000] [--parallelism 50] [--timeout-seconds 3600] [--image-mb 100]
      [--time-scale 10] [--max-concurrent-pulls 51] [--max-seconds 1800]
      [--binary build/ota-controller] [--webhook-binary build/ota-webhook]
      [--no-webhook] [--no-light] [--kubesim-arg=ARG ...]
      [--controller-arg=ARG ...] [--qps 50] [--burst 100] [--keep]
Try it small first: --nodes 50 --parallelism 5.  Timing is never pass/fail:
exit 1 only when the run could not be set up or did not end.
"""

import argparse
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.parse

from benchlib import MSG, OTA_ANN, REG, ROOT, HELPER, JobTracker, Kubesim, LeaseRenewals, RssSampler, Setup, log
import benchlib
from controller import Controller, Watch, cond, pct

sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
import harness  # noqa: E402  (ota-webhook as the e2e tests run it)
from test_auto_prepull import AUTO, PARALLELISM, auto_running  # noqa: E402

NS = "bench-auto"
CTL = "ctl-auto"
TIMEOUT_ANN = "apps.kruise.io/image-predownload-timeout-seconds"
OLD = REG + "/bench/auto-agent:1.0"
NEW = REG + "/bench/auto-agent:2.0"
WEBHOOK_KINDS = ("kind: MutatingWebhookConfiguration", "kind: ValidatingWebhookConfiguration")


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--binary", default=os.path.join(ROOT, "build", "ota-controller"))
    p.add_argument("--webhook-binary", default=os.path.join(ROOT, "build", "ota-webhook"))
    p.add_argument("--no-webhook", action="store_true", help="no admission webhook")
    p.add_argument("--nodes", type=int, default=1000)
    p.add_argument("--parallelism", type=int, default=50, help="apps.kruise.io/image-predownload-parallelism")
    p.add_argument("--timeout-seconds", type=int, default=3600,
                   help="apps.kruise.io/image-predownload-timeout-seconds: a pull's deadline, simulated s (the "
                        "default 600 fails Jobs that a loaded kubesim takes over 60 real s to run at time scale 10)")
    p.add_argument("--image-mb", type=float, default=100.0, help="the new image's size, MB (10^6 bytes)")
    p.add_argument("--time-scale", type=float, default=10.0)
    p.add_argument("--max-concurrent-pulls", type=int, default=51,
                   help="the controller's global cap (parallelism + 1: bulk units leave one slot)")
    p.add_argument("--max-seconds", type=float, default=1800.0, help="real seconds to wait for every pod Ready")
    p.add_argument("--setup-seconds", type=float, default=900.0, help="real seconds for the pods to run")
    benchlib.add_run_args(p)
    return p.parse_args(argv)


def daemonset(parallelism, timeout):
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "agent", "namespace": NS,
                         "annotations": {OTA_ANN: "OTA", PARALLELISM: str(parallelism), TIMEOUT_ANN: str(timeout)}},
            "spec": {"selector": {"matchLabels": {"app": "agent"}}, "updateStrategy": {"type": "OnDelete"},
                     "template": {"metadata": {"labels": {"app": "agent"}},
                                  "spec": {"containers": [{"name": "main", "image": OLD}]}}}}


def ideal(nodes, parallelism, pull):
    """Simulated seconds: ceil(nodes / parallelism) waves of one pull."""
    return math.ceil(nodes / max(1, parallelism)) * pull


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def webhook_configurations(certs):
    """The rendered manifests' webhook configurations alone (their
    caBundle our CA's), as one YAML stream."""
    docs = harness.render_manifests(certs).split("\n---\n")
    return "\n---\n".join(d for d in docs if any(k in d.split("\n") for k in WEBHOOK_KINDS))


def start_webhook(opts, work, procs):
    """ota-webhook on free loopback ports (harness.Webhook), its directory
    moved under work; None with --no-webhook."""
    if opts.no_webhook:
        return None
    harness.WEBHOOK = opts.webhook_binary
    try:
        wh = harness.Webhook("bench-webhook", extra=["--log-level", "info"])
    except (AssertionError, subprocess.SubprocessError) as e:
        raise Setup("ota-webhook did not start: %s" % e) from None
    procs.append(wh.proc)
    return wh


class Pods:
    """The DaemonSet's pods as a watch reports them: per pod, when its
    AutoPrePull, its automatic pull (WaitPullImage) and its PodImageReady
    True were first seen for each revision, and the most automatic pulls in
    flight after any event."""

    def __init__(self):
        self.lock = threading.Lock()
        self.node = {}
        self.marked, self.started, self.ready, self.failed = {}, {}, {}, {}
        self.running, self.max_running = set(), 0
        self.trace = []  # (time, event, pod, resourceVersion, AutoPrePull, PodImageReady, in flight after)

    def on_pod(self, kind, p, now):
        uid = p["metadata"]["uid"]
        with self.lock:
            self.node[uid] = p["spec"].get("nodeName")
            a, r = cond(p, AUTO), cond(p, "PodImageReady")
            if a and a.get("status") == "True":
                self.marked.setdefault((uid, a.get("message")), now)
            if kind != "DELETED" and auto_running(p):
                self.started.setdefault((uid, a.get("message")), now)
                self.running.add(uid)
            else:
                self.running.discard(uid)
            self.max_running = max(self.max_running, len(self.running))
            self.trace.append((now, kind, p["metadata"]["name"], p["metadata"].get("resourceVersion"),
                               a and (a.get("status"), a.get("reason")), r and (r.get("status"), r.get("reason")),
                               len(self.running)))
            if r and r.get("status") == "True" and r.get("reason") == "PullImageSuccess":
                self.ready.setdefault((uid, r.get("message")), now)
            if a and r and r.get("status") == "False" and r.get("reason") == "PullImageFail":
                self.failed.setdefault((uid, a.get("message")), now)  # r's says why

    def of(self, table, h):
        """{pod uid: first seen} of table for revision h."""
        with self.lock:
            return {u: t for (u, m), t in table.items() if m == MSG + h}


class Revisions:
    """ControllerRevisions: the first one whose hash is not old, and when
    it was seen."""

    def __init__(self):
        self.old, self.new, self.seen = None, None, None

    def on_rev(self, kind, obj, now):
        h = (obj["metadata"].get("labels") or {}).get("controller-revision-hash")
        if kind == "ADDED" and self.old is not None and h != self.old and self.new is None:
            self.new, self.seen = h, now


def passes_between(m0, m1):
    """(passes, their total seconds, [(le, passes)]) from
    ota_controller_reconcile_duration_seconds between two /metrics reads."""
    name = "ota_controller_reconcile_duration_seconds"
    d = {k: (m1 or {}).get(k, 0) - (m0 or {}).get(k, 0) for k in (m1 or {}) if k.startswith(name)}
    buckets = sorted((float(k.split('le="')[1].split('"')[0]), v) for k, v in d.items()
                     if 'le="' in k and 'le="+Inf"' not in k)
    return int(d.get(name + "_count", 0)), d.get(name + "_sum", 0.0), buckets


def run(opts, work, procs):
    size = int(opts.image_mb * 1_000_000)
    registry = {"includeDefaults": True,
                "images": [{"image": OLD, "size": 30_000_000}, {"image": NEW, "size": size}],
                "preloadedImages": ["registry.k8s.io/pause:3.10", HELPER, OLD]}
    load0 = loadavg()
    wh = start_webhook(opts, work, procs)
    extra = list(opts.kubesim_arg) + ([] if opts.no_light else ["--light"])
    if wh is not None:
        extra += ["--webhook-host", "%s=127.0.0.1:%d" % (harness.WEBHOOK_SERVICE, wh.port)]
    try:
        return measure(opts, work, procs, registry, size, extra, wh, load0)
    finally:
        if wh is not None:
            wh_rc = wh.stop()
            if wh_rc not in (0, None):
                log("ota-webhook exited with %s (see %s)" % (wh_rc, wh.err_path))
            if opts.keep:
                shutil.copytree(wh.dir, os.path.join(work, "webhook"), dirs_exist_ok=True)
            shutil.rmtree(wh.dir, ignore_errors=True)


def measure(opts, work, procs, registry, size, extra, wh, load0):
    t = time.monotonic()
    sim = Kubesim(work, procs, opts.nodes, registry=registry, extra=extra, scale=opts.time_scale, bookmark=5,
                  wait=600)
    api = sim.api
    if wh is not None:
        out = subprocess.run(["kubectl", "--kubeconfig", sim.kubeconfig("admin"), "apply", "-f", "-"],
                             input=webhook_configurations(wh.certs), capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            raise Setup("applying the webhook configurations failed: %s" % out.stderr)
    api.call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    benchlib.wait_nodes(api, opts.nodes)
    log("kubesim with %d nodes ready in %.1fs" % (opts.nodes, time.monotonic() - t))

    ctl = Controller(work, procs, opts.binary, sim, CTL, opts.qps, opts.burst,
                     max_pulls=opts.max_concurrent_pulls, extra=opts.controller_arg)
    jobs, pods, revs, lease = JobTracker(NS), Pods(), Revisions(), LeaseRenewals(CTL)
    events = []

    def on_event(kind, e, now):
        if kind == "ADDED":
            events.append((now, e.get("involvedObject", {}).get("kind"), e.get("reason"),
                           (e.get("source") or {}).get("component") or e.get("reportingComponent"), e.get("message")))

    try:
        ctl.wait_ready(0, 120)
        api.call("POST", "/apis/apps/v1/namespaces/%s/daemonsets" % NS, daemonset(opts.parallelism, opts.timeout_seconds))
        sel = "/api/v1/namespaces/%s/pods?labelSelector=%s" % (NS, urllib.parse.quote("app=agent"))
        deadline, n = time.monotonic() + opts.setup_seconds, 0
        while time.monotonic() < deadline:
            items = api.call("GET", sel)["items"]
            n = sum(1 for p in items if (p.get("status") or {}).get("phase") == "Running")
            if n >= opts.nodes:
                break
            time.sleep(2)
        if n < opts.nodes:
            raise Setup("only %d of %d DaemonSet pods Running after %gs" % (n, opts.nodes, opts.setup_seconds))
        log("%d pods running %.1fs after the start" % (n, time.monotonic() - t))
        items = api.call("GET", "/apis/apps/v1/namespaces/%s/controllerrevisions" % NS)["items"]
        revs.old = max(items, key=lambda r: r["revision"])["metadata"]["labels"]["controller-revision-hash"]
        watches = [Watch(sim, "/apis/batch/v1/namespaces/%s/jobs" % NS, jobs.on_job),
                   Watch(sim, sel, pods.on_pod),
                   Watch(sim, "/apis/apps/v1/namespaces/%s/controllerrevisions" % NS, revs.on_rev),
                   Watch(sim, "/api/v1/namespaces/%s/events" % NS, on_event),
                   Watch(sim, "/apis/coordination.k8s.io/v1/namespaces/ota-system/leases", lease.on_lease)]
        for w in watches:
            w.start()
        if not all(w.synced.wait(60) for w in watches):
            raise Setup("the watches did not sync")
        time.sleep(3)  # the controller's passes over the cluster, idle
        sampler = RssSampler(ctl.proc.pid)
        sampler.start()
        rss0 = benchlib.rss_kib(ctl.proc.pid)
        m0 = ctl.metrics() or {}
        who = {"kubesim": sim.proc.pid, "controller": ctl.proc.pid, "bench (watches)": os.getpid()}
        if wh is not None:
            who["webhook"] = wh.proc.pid
        cpu0 = {k: benchlib.cpu_seconds(pid) for k, pid in who.items()}
        t_patch = time.monotonic()
        api.call("PATCH", "/apis/apps/v1/namespaces/%s/daemonsets/agent" % NS,
                 {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": NEW}]}}}},
                 ctype="application/strategic-merge-patch+json")
        deadline, last_log, last_scrape, done = t_patch + opts.max_seconds, t_patch, 0.0, None
        waiting = []  # ota_controller_api_calls{state="waiting"} once a second: QPS-bound when lasting
        while time.monotonic() < deadline and ctl.proc.poll() is None:
            if time.monotonic() - last_scrape >= 1.0:
                last_scrape = time.monotonic()
                waiting.append((ctl.metrics() or {}).get('ota_controller_api_calls{state="waiting"}', 0))
            h = revs.new
            if h is not None:
                ready, failed = pods.of(pods.ready, h), pods.of(pods.failed, h)
                if len(ready) + len(failed) >= opts.nodes:
                    done = max(list(ready.values()) + list(failed.values()))
                    break
                if time.monotonic() - last_log > 30:
                    log("  %.0fs: %d marked, %d started, %d ready, %d failed, %d Jobs, %d in flight" % (
                        time.monotonic() - t_patch, len(pods.of(pods.marked, h)), len(pods.of(pods.started, h)),
                        len(ready), len(failed), len(jobs.created), len(pods.running)))
                    last_log = time.monotonic()
            time.sleep(0.2)
        # the writes that follow the end count too (the Finished Event): 3 s
        time.sleep(3)
        m1 = ctl.metrics() or {}
        t1 = time.monotonic()
        cpu = {k: round(benchlib.cpu_seconds(pid) - cpu0[k], 1) for k, pid in who.items()}
        rss_peak = sampler.stop()
        time.sleep(3)
        rss_after = benchlib.rss_kib(ctl.proc.pid)
        for w in watches:
            w.stopping = True
    finally:
        rc = ctl.stop()
    h = revs.new
    if done is None:
        raise Setup("not every pod was Ready or failed within %gs: revision %s, %d ready (see %s)" % (
            opts.max_seconds, h, len(pods.of(pods.ready, h)) if h else 0, ctl.log))
    t0 = revs.seen
    took = done - t0
    pull = benchlib.pull_seconds(size)
    best = ideal(opts.nodes, opts.parallelism, pull)
    delta = benchlib.writes_between(m0, m1)
    renewals = lease.between(t_patch, t1)
    writes = sum(delta.get(k, 0) for k in ("POST", "PATCH", "PUT", "DELETE")) - renewals
    calls_made = max(0, sum(delta.values()) - renewals - opts.burst)  # what --kube-api-qps paced
    marked, started, ready = pods.of(pods.marked, h), pods.of(pods.started, h), pods.of(pods.ready, h)
    scale = opts.time_scale
    with jobs.lock:
        job_of = {}  # node -> (created, ended) of its Job
        for uid, j in jobs.jobs.items():
            job_of[j["spec"]["template"]["spec"].get("nodeName")] = (jobs.first_seen[uid], jobs.ended.get(uid))
    to_job = [job_of[pods.node[u]][0] - s for u, s in started.items() if pods.node.get(u) in job_of]
    to_ready = [ready[u] - job_of[pods.node[u]][1] for u in ready
                if pods.node.get(u) in job_of and job_of[pods.node[u]][1] is not None]
    dur = [d * scale for d in jobs.durations()]
    refill = [x * scale for x in jobs.refills(min(opts.parallelism, opts.max_concurrent_pulls - benchlib.RESERVE))]
    n_pass, pass_sum, buckets = passes_between(m0, m1)
    by_source = {}
    for t, k, r, c, _ in events:
        if t_patch <= t <= t1:
            key = "%s %s %s" % (c, k, r)
            by_source[key] = by_source.get(key, 0) + 1

    def sim_pct(values, p):
        return round(pct(values, p) * scale, 2) if values else None
    out = {
        "nodes": opts.nodes, "parallelism": opts.parallelism, "cap": opts.max_concurrent_pulls,
        "image_bytes": size, "pull_sim_seconds": pull, "time_scale": scale, "light": not opts.no_light,
        "webhook": wh is not None, "revision": h, "load_start": load0, "load_end": loadavg(),
        "patch_to_revision_real_s": round(t0 - t_patch, 2),
        "real_seconds": round(took, 2), "sim_seconds": round(took * scale, 1),
        "ideal_sim_seconds": round(best, 1), "ratio": round(took * scale / best, 3),
        "all_marked_sim_seconds": round((max(marked.values()) - t0) * scale, 1) if len(marked) >= opts.nodes
        else None, "marked": len(marked), "started": len(started), "ready": len(ready),
        "failed": len(pods.of(pods.failed, h)), "max_auto_in_flight": pods.max_running,
        **jobs.summary(), "jobs_ended": len(dur),
        "job_sim_seconds_median": sim_pct(jobs.durations(), 50), "job_sim_seconds_p90": sim_pct(jobs.durations(), 90),
        "job_sim_seconds_max": round(dur[-1], 1) if dur else None,
        "refill_sim_seconds_median": round(pct(refill, 50), 2) if refill else None,
        "refill_sim_seconds_p99": round(pct(refill, 99), 2) if refill else None,
        "start_to_job_sim_seconds_median": sim_pct(to_job, 50), "start_to_job_sim_seconds_p99": sim_pct(to_job, 99),
        "job_end_to_ready_sim_seconds_median": sim_pct(to_ready, 50),
        "job_end_to_ready_sim_seconds_p99": sim_pct(to_ready, 99),
        "cpu_seconds": cpu, "passes": n_pass, "pass_mean_ms": round(1000 * pass_sum / n_pass, 2) if n_pass else None,
        "pass_seconds_total": round(pass_sum, 2), "run_real_seconds": round(t1 - t_patch, 2),
        "pass_buckets": buckets,
        "api_waiting_samples": len(waiting), "api_waiting_nonzero": sum(1 for x in waiting if x),
        "api_waiting_max": max(waiting or [0]),
        "api_waiting_mean": round(sum(waiting) / len(waiting), 2) if waiting else None,
        "qps": opts.qps, "burst": opts.burst,
        "qps_bound_sim_seconds": round(calls_made * scale / opts.qps, 1),
        "writes_by_method": delta, "lease_renewals": renewals, "writes": writes,
        "writes_per_node": round(writes / opts.nodes, 3),
        "daemonset_events": [(round((t - t0) * scale, 1), r, m) for t, k, r, _, m in events
                             if t >= t_patch and k == "DaemonSet"],
        "events_by_source": by_source,
        "rss_kib_idle": rss0, "rss_kib_peak": rss_peak, "rss_kib_after": rss_after, "controller_exit": rc,
    }
    with open(os.path.join(work, "results.json"), "w") as f:
        json.dump(out, f, indent=1)
    with open(os.path.join(work, "pod_events.txt"), "w") as f:  # for a closer look (--keep)
        for e in pods.trace:
            f.write("%.3f %s\n" % (e[0] - t0, " ".join(map(str, e[1:]))))
    return out


def report(r):
    print("Automatic pre-pull: OTA DaemonSet on %d nodes, parallelism %d, cap %d, %.0f MB image (%.1f simulated s "
          "per pull), time scale %g, kubesim %s, %s; load %s at the start, %s at the end" % (
              r["nodes"], r["parallelism"], r["cap"], r["image_bytes"] / 1e6, r["pull_sim_seconds"], r["time_scale"],
              "--light" if r["light"] else "default kubelets", "ota-webhook" if r["webhook"] else "no webhook",
              r["load_start"], r["load_end"]))
    print("  outcome              revision %s: %d marked, %d started, %d ready, %d failed" % (
        r["revision"], r["marked"], r["started"], r["ready"], r["failed"]))
    print("  time to all Ready    %.1f real s = %.0f simulated s from the revision; ideal %.0f (ceil(%d / %d) x %.1f): "
          "x%.2f; every pod marked after %s simulated s" % (
              r["real_seconds"], r["sim_seconds"], r["ideal_sim_seconds"], r["nodes"], r["parallelism"],
              r["pull_sim_seconds"], r["ratio"], r["all_marked_sim_seconds"]))
    print("  in flight            at most %d automatic pulls at once (parallelism %d), at most %d Jobs unfinished" % (
        r["max_auto_in_flight"], r["parallelism"], r["max_running"]))
    print("  Jobs                 %d created on %d nodes (%d nodes with more than one)" % (
        r["jobs_created"], r["nodes_with_jobs"], r["nodes_with_more_than_one_job"]))
    print("  where the time goes  Job creation to end (simulated s): median %s, p90 %s, max %s (pull %.1f); "
          "refill median %s, p99 %s; pull started to Job created median %s, p99 %s; Job end to PodImageReady "
          "median %s, p99 %s" % (
              r["job_sim_seconds_median"], r["job_sim_seconds_p90"], r["job_sim_seconds_max"], r["pull_sim_seconds"],
              r["refill_sim_seconds_median"], r["refill_sim_seconds_p99"], r["start_to_job_sim_seconds_median"],
              r["start_to_job_sim_seconds_p99"], r["job_end_to_ready_sim_seconds_median"],
              r["job_end_to_ready_sim_seconds_p99"]))
    print("  CPU in the run       %s over %.1f real s (2 cores)" % (
        ", ".join("%s %.1f s" % kv for kv in sorted(r["cpu_seconds"].items(), key=lambda kv: -kv[1])),
        r["run_real_seconds"]))
    print("  controller passes    %d in %.1f real s, mean %s ms, %.1f s in all; histogram (le, passes) %s" % (
        r["passes"], r["run_real_seconds"], r["pass_mean_ms"], r["pass_seconds_total"],
        [(le, int(v)) for i, (le, v) in enumerate(r["pass_buckets"])
         if v and (i == 0 or v != r["pass_buckets"][i - 1][1])]))
    print("  API rate limit       calls waiting for a token in %d of %d one-second samples (mean %s, max %d); "
          "the run's calls beyond the burst at --kube-api-qps %g take %.0f simulated s" % (
              r["api_waiting_nonzero"], r["api_waiting_samples"], r["api_waiting_mean"], r["api_waiting_max"],
              r["qps"], r["qps_bound_sim_seconds"]))
    w = r["writes_by_method"]
    print("  controller writes    %d: %.2f per node: POST %d, PATCH %d, PUT %d, DELETE %d, less %d Lease renewals" % (
        r["writes"], r["writes_per_node"], w.get("POST", 0), w.get("PATCH", 0), w.get("PUT", 0),
        w.get("DELETE", 0), r["lease_renewals"]))
    for t, reason, msg in r["daemonset_events"]:
        print("  DaemonSet Event      %s at %s simulated s: %s" % (reason, t, msg))
    print("  Events in the run    (source, object, reason: count) %s" % ", ".join(
        "%s: %d" % kv for kv in sorted(r["events_by_source"].items())))
    print("  controller RSS       %.1f MiB idle (ready, same cluster, before the new image), %.1f MiB peak (x%.2f), "
          "%.1f MiB after" % (r["rss_kib_idle"] / 1024.0, r["rss_kib_peak"] / 1024.0,
                              r["rss_kib_peak"] / max(1, r["rss_kib_idle"]), r["rss_kib_after"] / 1024.0))


def stop_on_sigterm(signum, frame):
    raise SystemExit(128 + signum)  # the finally blocks stop what the run started


def main(argv):
    opts = parse(argv)
    signal.signal(signal.SIGTERM, stop_on_sigterm)
    for b in [opts.binary] + ([] if opts.no_webhook else [opts.webhook_binary]):
        if not os.access(b, os.X_OK):
            print("no %s (make all)" % b)
            return 1
    return benchlib.bench_main("bench-auto-", opts.keep, lambda work, procs: run(opts, work, procs), report)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
