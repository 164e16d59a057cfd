#!/usr/bin/env python3
"""How many simulated nodes kubesim's cluster keeps up with (a measurement, not a test).

Starts tests/kubesim/run on loopback (tests/lib/kubesim_launch.py) with --nodes N (and
--light when asked), creates one DaemonSet (busybox:1.36, pulled by every node) and optionally
J Jobs pinned to nodes that pull nginx:1.25 in an init container, then every few seconds counts
pods Running (DaemonSet) and Jobs Complete, and prints kubesim's CPU seconds so far. Ends after
--seconds.

    python3 tests/kubesim/bench_sim.py --nodes 1000 --seconds 120 [--light] [--jobs 200]
        [--authorization-mode Node,RBAC | --compare-authorization]

Prints one line per sample and a last line
    result mode=M nodes=N light=0|1 t=T running=R/N jobs_complete=C/J cpu_s=S
With --compare-authorization it runs AlwaysAllow, then Node,RBAC, and ends with
    compare nodes=N light=0|1: t T0 -> T1 s, cpu_s S0 -> S1 (+P %), running R0 -> R1
"""
import argparse
import json
import os
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import kubesim_launch  # noqa: E402


def call(base, method, path, body=None, token=None, ctx=None):
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = "Bearer " + token
    req = urllib.request.Request(base + path, data=data, method=method, headers=headers)
    with urllib.request.urlopen(req, timeout=120, context=ctx) as r:
        return json.loads(r.read())


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick


def run(a, mode):
    """One kubesim with --authorization-mode mode; returns (t, running, complete, cpu_s).
    The workload is created as admin over the plain-HTTP port; the samples are read by the
    controller's service account over HTTPS (bound to the `view` ClusterRole), so each of
    them is authorized by RBAC."""
    args = ["--http-port", "0", "--nodes", str(a.nodes), "--time-scale", str(a.time_scale),
            "--authorization-mode", mode]
    if a.light:
        args.append("--light")
    try:  # in a temporary state dir, removed by stop()
        sim = kubesim_launch.Kubesim(None, args, wait=600)
    except kubesim_launch.KubesimError as e:
        sys.exit(str(e))
    proc = sim.proc
    try:
        base = sim.http_url
        t0 = time.monotonic()
        print("mode=%s ready after start: cpu_s=%.1f" % (mode, cpu_seconds(proc.pid)), flush=True)
        call(base, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "bench-controller-view"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "ServiceAccount", "name": "ota-controller", "namespace": "ota-system"}]})
        call(base, "POST", "/apis/apps/v1/namespaces/default/daemonsets", {
            "apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "ota-agent", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "ota-agent"}},
                     "updateStrategy": {"type": "OnDelete"},
                     "template": {"metadata": {"labels": {"app": "ota-agent"}},
                                  "spec": {"containers": [{"name": "agent",
                                                           "image": "busybox:1.36"}]}}}})
        for j in range(a.jobs):
            node = "node-%d" % (j % a.nodes + 1)
            call(base, "POST", "/apis/batch/v1/namespaces/default/jobs", {
                "apiVersion": "batch/v1", "kind": "Job",
                "metadata": {"name": "prepull-%d" % j, "namespace": "default"},
                "spec": {"backoffLimit": 0, "template": {"spec": {
                    "nodeName": node, "restartPolicy": "Never",
                    "initContainers": [{"name": "pull", "image": "nginx:1.25",
                                        "command": ["true"]}],
                    "containers": [{"name": "done", "image": "busybox:1.36",
                                    "command": ["true"]}]}}}})
        running = complete = 0
        token = sim.tokens["controller"]
        while True:
            time.sleep(a.interval)
            t = time.monotonic() - t0
            pods = call(sim.url, "GET", "/api/v1/namespaces/default/pods?labelSelector=app%3Dota-agent",
                        token=token, ctx=sim.ctx)
            running = sum(1 for x in pods["items"] if (x.get("status") or {}).get("phase") == "Running")
            if a.jobs:
                jobs = call(sim.url, "GET", "/apis/batch/v1/namespaces/default/jobs", token=token, ctx=sim.ctx)
                complete = sum(1 for x in jobs["items"] if any(
                    c.get("type") == "Complete" and c.get("status") == "True"
                    for c in (x.get("status") or {}).get("conditions") or []))
            print("mode=%s t=%.0f running=%d/%d jobs_complete=%d/%d cpu_s=%.1f" % (
                mode, t, running, a.nodes, complete, a.jobs, cpu_seconds(proc.pid)), flush=True)
            if t >= a.seconds or (running == a.nodes and complete == a.jobs):
                break
        cpu = cpu_seconds(proc.pid)
        print("result mode=%s nodes=%d light=%d t=%.0f running=%d/%d jobs_complete=%d/%d cpu_s=%.1f" % (
            mode, a.nodes, a.light, t, running, a.nodes, complete, a.jobs, cpu), flush=True)
        return t, running, complete, cpu
    finally:
        sim.stop(grace=30)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--nodes", type=int, default=1000)
    p.add_argument("--seconds", type=float, default=120)
    p.add_argument("--light", action="store_true")
    p.add_argument("--jobs", type=int, default=0)
    p.add_argument("--time-scale", type=float, default=1.0)
    p.add_argument("--interval", type=float, default=10)
    p.add_argument("--authorization-mode", default="Node,RBAC",
                   help="kubesim's --authorization-mode (default Node,RBAC)")
    p.add_argument("--compare-authorization", action="store_true",
                   help="run twice, AlwaysAllow then Node,RBAC, and print how much slower the second is")
    a = p.parse_args()
    if not a.compare_authorization:
        run(a, a.authorization_mode)
        return
    off = run(a, "AlwaysAllow")
    on = run(a, "Node,RBAC")
    print("compare nodes=%d light=%d: t %.0f -> %.0f s, cpu_s %.1f -> %.1f (%+.1f %%), running %d -> %d" % (
        a.nodes, a.light, off[0], on[0], off[3], on[3], 100.0 * (on[3] - off[3]) / off[3] if off[3] else 0.0,
        off[1], on[1]), flush=True)


if __name__ == "__main__":
    main()
