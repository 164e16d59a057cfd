#!/usr/bin/env python3
"""The downtime of one pod's upgrade, with and without pre-pull (docs/BENCHMARKS.md).

Starts kubesim (2 nodes, a 2 GiB image at 10 MB/s per node), ota-webhook
registered from the rendered manifests and ota-controller, as the e2e tests
do (tests/e2e/harness.py), then on an OTA DaemonSet updated to the 2 GiB image:
  without: node-1 deletes its pod at once;
  with:    node-2 asks for a pre-pull, waits for PodImageReady True, then deletes.
Downtime is the time from the DELETE until the replacement pod is Ready, in
simulated seconds (real seconds times the time scale; the pod is polled every
20 ms of real time, so the resolution is 0.02 x scale simulated seconds).

Usage: bench/upgrade_downtime.py [--time-scale F]   (default 10; needs `make all`)
  OTA_CONTROLLER, OTA_WEBHOOK   the binaries (default build/ota-controller, build/ota-webhook)
"""
import argparse
import time
import urllib.parse

from prepull_bench import BANDWIDTH, NS, SIZE, cluster, cond, update_to_model, wait_until


def pods(sim):
    q = urllib.parse.quote("app=agent")
    return [p for p in sim.get("/api/v1/namespaces/%s/pods?labelSelector=%s" % (NS, q))["items"]
            if not p["metadata"].get("deletionTimestamp")]


def on_node(sim, node):
    return wait_until(lambda: [p for p in pods(sim) if p["spec"]["nodeName"] == node
                               and p["status"].get("phase") == "Running"], 60, "agent on " + node)[0]


def upgrade(sim, pod, scale):
    """DELETE as the pod's node; simulated seconds until the replacement is Ready."""
    node = pod["spec"]["nodeName"]
    t0 = time.monotonic()
    sim.call("DELETE", "/api/v1/namespaces/%s/pods/%s" % (NS, pod["metadata"]["name"]), who=node)
    deadline = t0 + 3600 / scale
    while time.monotonic() < deadline:
        for p in pods(sim):
            if p["spec"]["nodeName"] == node and p["metadata"]["uid"] != pod["metadata"]["uid"] \
                    and (cond(p, "Ready") or {}).get("status") == "True":
                return (time.monotonic() - t0) * scale, p
        time.sleep(0.02)
    raise SystemExit("the replacement of %s was not Ready within an hour of simulated time" % pod["metadata"]["name"])


def kubelet_pull(sim, pod):
    sel = urllib.parse.quote("involvedObject.name=%s" % pod["metadata"]["name"])
    ev = sim.get("/api/v1/namespaces/%s/events?fieldSelector=%s" % (NS, sel))["items"]
    return [e["message"] for e in ev if e["reason"] == "Pulled"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--time-scale", type=float, default=10)
    scale = ap.parse_args().time_scale
    with cluster(2, scale) as cl:
        sim = cl.sim
        old = [on_node(sim, n) for n in ("node-1", "node-2")]
        update_to_model(sim)

        def pending(p):
            c = cond(sim.get("/api/v1/namespaces/%s/pods/%s" % (NS, p["metadata"]["name"])), "PodNeedUpgrade")
            return c and c["status"] == "True" and c["message"].split(": ")[1]
        h = wait_until(lambda: pending(old[0]) and pending(old[1]), 30, "PodNeedUpgrade on both pods")

        without, fresh = upgrade(sim, old[0], scale)
        pulled_without = kubelet_pull(sim, fresh)

        t0 = time.monotonic()
        sim.call("PATCH", "/api/v1/namespaces/%s/pods/%s/status" % (NS, old[1]["metadata"]["name"]),
                 {"status": {"conditions": [{"type": "PodImageReady", "status": "False", "reason": "WaitPullImage",
                                             "message": "controllerrevision: " + h}]}},
                 who="node-2", ctype="application/strategic-merge-patch+json")

        def image_ready():
            c = cond(sim.get("/api/v1/namespaces/%s/pods/%s" % (NS, old[1]["metadata"]["name"])), "PodImageReady")
            return c and c.get("reason") in ("PullImageSuccess", "PullImageFail") and c
        c = wait_until(image_ready, 3600 / scale, "the pre-pull")
        if c["reason"] != "PullImageSuccess":
            raise SystemExit("the pre-pull failed: %s" % c["message"])
        prepull = (time.monotonic() - t0) * scale
        with_pp, fresh = upgrade(sim, old[1], scale)
        pulled_with = kubelet_pull(sim, fresh)

        print("image %d bytes, %d B/s per node, time scale %g, revision %s" % (SIZE, BANDWIDTH, scale, h))
        print("without pre-pull: %7.1f simulated s from delete to Ready  (kubelet: %s)"
              % (without, "; ".join(pulled_without)))
        print("with pre-pull:    %7.1f simulated s from delete to Ready  (kubelet: %s)"
              % (with_pp, "; ".join(pulled_with)))
        print("                  the pre-pull itself took %.1f simulated s, while the old pod served" % prepull)
        print("ratio: %.0fx less downtime (resolution %.1f simulated s: one 20 ms poll)"
              % (without / max(with_pp, 0.02 * scale), 0.02 * scale))


if __name__ == "__main__":
    main()
