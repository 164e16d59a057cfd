#!/usr/bin/env python3
"""Writes bench/fixtures/*.json, the request bodies of bench/webhook.py.

Each is built from a test fixture (tests/fixtures/, captured in the shapes
the apiserver sends) and written compact, as the apiserver sends it:

  pod-status-10k.json   kubelet pods/status UPDATE, one container, ~10 KB
  pod-status-23k.json   the same pod with three sidecars (their spec, status
                        and managedFields entries), ~23 KB
  prepull.json          a node user's pre-pull request (pods/status UPDATE
                        that the mutating webhook stamps)
  ds-update.json        a DaemonSet UPDATE of an OTA DaemonSet

Deterministic: rerunning it rewrites the same bytes.
"""
import copy
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "tests", "fixtures")
OUT = os.path.join(ROOT, "bench", "fixtures")


def load(name):
    with open(os.path.join(SRC, name), encoding="utf-8") as f:
        return json.load(f)


def write(name, review):
    data = json.dumps(review, separators=(",", ":"), ensure_ascii=False).encode()
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
    print(f"{name}: {len(data)} bytes")


def trim(pod):
    """The routine pod with the tolerations a DaemonSet pod gets by default
    only, as a small cluster's kubelet sends it (~10 KB for the review)."""
    pod["spec"]["tolerations"] = pod["spec"]["tolerations"][:1]
    del pod["spec"]["affinity"]


def add_sidecars(pod, n):
    """n more containers, each with its spec, status and the kubelet's
    managedFields entry for it: what makes real pods/status bodies grow."""
    base_c = pod["spec"]["containers"][0]
    base_s = pod["status"]["containerStatuses"][0]
    kubelet = pod["metadata"]["managedFields"][0]["fieldsV1"]["f:status"]
    statuses = kubelet.setdefault("f:containerStatuses", {})
    for i in range(n):
        name = f"sidecar-{i}"
        c = copy.deepcopy(base_c)
        c["name"] = name
        c["image"] = f"registry.example.com/edge/{name}:v1.{i}.0"
        c["ports"] = [{"name": f"m{i}", "containerPort": 9200 + i, "protocol": "TCP"}]
        c["env"] += [{"name": f"SIDECAR_{i}_MODE", "value": "forward"},
                     {"name": "POD_IP", "valueFrom": {"fieldRef": {"apiVersion": "v1",
                                                                   "fieldPath": "status.podIP"}}}]
        c["livenessProbe"] = {"httpGet": {"path": "/healthz", "port": 9200 + i, "scheme": "HTTP"},
                              "initialDelaySeconds": 10, "timeoutSeconds": 1, "periodSeconds": 10,
                              "successThreshold": 1, "failureThreshold": 3}
        pod["spec"]["containers"].append(c)
        s = copy.deepcopy(base_s)
        s["name"] = name
        s["image"] = c["image"]
        digest = (f"{i:x}" * 64)[:64]
        s["imageID"] = f"registry.example.com/edge/{name}@sha256:{digest}"
        s["containerID"] = f"containerd://{digest}"
        pod["status"]["containerStatuses"].append(s)
        statuses[f'k:{{"name":"{name}"}}'] = {
            ".": {}, "f:containerID": {}, "f:image": {}, "f:imageID": {}, "f:lastState": {},
            "f:name": {}, "f:ready": {}, "f:restartCount": {}, "f:started": {},
            "f:state": {"f:running": {".": {}, "f:startedAt": {}}}}
    pod["metadata"]["managedFields"].append({
        "manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1",
        "time": "2026-11-21T19:02:41Z", "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app": {},
                                                                        "f:controller-revision-hash": {},
                                                                        "f:pod-template-generation": {}},
                                    "f:ownerReferences": {".": {}}},
                     "f:spec": {f"f:containers": {f'k:{{"name":"{c["name"]}"}}': {
                         ".": {}, "f:env": {}, "f:image": {}, "f:imagePullPolicy": {}, "f:name": {},
                         "f:ports": {}, "f:resources": {}, "f:volumeMounts": {}}
                         for c in pod["spec"]["containers"]}}}})


def main():
    os.makedirs(OUT, exist_ok=True)
    small = load("pod-status-kubelet-routine.json")
    for key in ("object", "oldObject"):
        trim(small["request"][key])
    write("pod-status-10k.json", small)
    big = load("pod-status-kubelet-routine.json")
    for key in ("object", "oldObject"):
        add_sidecars(big["request"][key], 3)
    write("pod-status-23k.json", big)
    write("prepull.json", load("pod-status-prepull-kubectl.json"))
    write("ds-update.json", load("ds-update-ota-ondelete.json"))


if __name__ == "__main__":
    main()
