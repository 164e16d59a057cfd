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
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from benchlib import NS, ROOT, Kubesim, Setup, create_pods, free_port, marked, metrics, patches_ok, \
    setup_daemonset, stop_procs
import benchlib


def revision(ds, rev, h):
    return benchlib.revision(ds, rev, h, "busybox:1.%d" % rev)


def pod(ds, i, h):
    return benchlib.pod(ds, i, h, "node-%d" % (i % 100 + 1), "busybox:1.1")


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
        stop_procs(procs, 20)
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
    try:
        sim = Kubesim(work, procs, 1, api_timeout=120, wait=60)
        api = sim.api
        h1, h2 = "rev1hash01", "rev2hash02"
        ds = setup_daemonset(api, "busybox:1.1", lambda d: revision(d, 1, h1))
        create_pods(sim, opts.pods, lambda i: pod(ds, i, h1))
    except Setup as e:
        print(e, file=sys.stderr)
        return None
    state = sim.state

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
