#!/usr/bin/env python3
"""A pre-pull request repeated while it runs (docs/BENCHMARKS.md, issue 10 §4).

Starts kubesim (1 node, a 2 GiB image at 10 MB/s: 215 simulated seconds of
pull), ota-webhook registered from the rendered manifests and ota-controller,
as the e2e tests do (tests/e2e/harness.py).  On an OTA DaemonSet updated to
the image, the node asks for a pre-pull as YurtHub v1.7's imagepull does (the
whole conditions array as a JSON merge patch; PodImageReady False, no reason,
the stored lastTransitionTime kept while the status stays False), then asks
again every --every simulated seconds, --repeats times, while the pull runs.
Reported: Jobs created and deleted for the pod, pulls the kubelet started
(Pulling events of the Jobs' pods), and the simulated seconds from the first
request to PodImageReady True.

Usage: bench/repeat_request.py [--time-scale F] [--repeats N] [--every S]
  OTA_CONTROLLER, OTA_WEBHOOK   the binaries (default build/ota-controller, build/ota-webhook)
"""
import argparse
import time
import urllib.parse

from prepull_bench import BANDWIDTH, MODEL, NS, SIZE, cluster, cond, update_to_model, wait_until

READY = "PodImageReady"


def pod_path(pod):
    return "/api/v1/namespaces/%s/pods/%s" % (NS, pod["metadata"]["name"])


def imagepull(sim, pod):
    """YurtHub v1.7's write: its conditions, PodImageReady False with no reason
    (lastTransitionTime kept when the status does not change)."""
    cur = sim.get(pod_path(pod), who="node-1")
    h = cond(cur, "PodNeedUpgrade")["message"]
    conds = [dict(c) for c in cur["status"]["conditions"]]
    new = {"type": READY, "status": "False", "lastProbeTime": None, "lastTransitionTime": None, "message": h}
    for i, c in enumerate(conds):
        if c["type"] == READY:
            if c.get("status") == "False":
                new["lastTransitionTime"] = c.get("lastTransitionTime")
            conds[i] = new
            break
    else:
        conds.append(new)
    for c in conds:
        for k in ("reason", "message"):
            if not c.get(k):
                c.pop(k, None)
    sim.call("PATCH", pod_path(pod) + "/status?fieldManager=yurthub-ota", {"status": {"conditions": conds}},
             who="node-1", ctype="application/merge-patch+json")


def pulls_started(sim, jobs):
    n = 0
    for j in jobs:
        sel = urllib.parse.quote("involvedObject.kind=Pod")
        for e in sim.get("/api/v1/namespaces/%s/events?fieldSelector=%s" % (NS, sel))["items"]:
            if e["reason"] == "Pulling" and e["involvedObject"]["name"].startswith(j) and MODEL in e["message"]:
                n += 1
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--time-scale", type=float, default=10)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--every", type=float, default=20, help="simulated seconds between requests")
    args = ap.parse_args()
    scale = args.time_scale
    with cluster(1, scale, track_jobs=True) as cl:
        sim, tracker = cl.sim, cl.tracker
        q = urllib.parse.quote("app=agent")
        pod = wait_until(lambda: [p for p in sim.get("/api/v1/namespaces/%s/pods?labelSelector=%s" % (NS, q))["items"]
                                  if p["status"].get("phase") == "Running"], 60, "the agent pod")[0]
        update_to_model(sim)
        wait_until(lambda: (cond(sim.get(pod_path(pod)), "PodNeedUpgrade") or {}).get("status") == "True", 30,
                   "PodNeedUpgrade")
        t0 = time.monotonic()
        imagepull(sim, pod)
        for _ in range(args.repeats):
            time.sleep(args.every / scale)
            imagepull(sim, pod)

        def done():
            c = cond(sim.get(pod_path(pod)), READY)
            return c and c.get("reason") in ("PullImageSuccess", "PullImageFail") and c
        c = wait_until(done, 3600 / scale, "the pre-pull")
        took = (time.monotonic() - t0) * scale
        jobs = tracker.jobs_of(pod["metadata"]["uid"])
        names = [j["metadata"]["name"] for j in jobs]
        deleted = [j["metadata"]["name"] for j in jobs if j["metadata"].get("deletionTimestamp")
                   or j["metadata"]["name"] not in [x["metadata"]["name"] for x in
                                                    sim.get("/apis/batch/v1/namespaces/%s/jobs" % NS)["items"]]]
        print("image %d bytes at %d B/s, time scale %g, %d repeats every %g simulated s"
              % (SIZE, BANDWIDTH, scale, args.repeats, args.every))
        print("outcome %s after %.0f simulated s; Jobs created %d, deleted %d; kubelet pulls started %d"
              % (c["reason"], took, len(names), len(deleted), pulls_started(sim, names)))


if __name__ == "__main__":
    main()
