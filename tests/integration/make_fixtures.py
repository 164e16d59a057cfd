#!/usr/bin/env python3
"""Writes the AdmissionReview fixtures of the integration suite.

Each fixture is tests/fixtures/<name>.json, an admission.k8s.io/v1
AdmissionReview in the shape the kube-apiserver sends (objects after
defaulting, `null` where Go's encoder writes it: `lastProbeTime`, a zero
`lastTransitionTime`, `oldObject` on CREATE), and <name>.expected.json, the
object we expect after the mutating webhook's JSON Patch is applied. The
string "$STAMPED_NOW" in an expected file stands for a `lastTransitionTime`
the webhook must stamp with the current time.

The expected objects are written out by hand below from docs/design.md §3/§4 and
docs/DECISIONS.md, never from the server's answers. The files are committed;
run this again only to change them, and review the diff.
"""

import copy
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "fixtures")

STAMPED = "$STAMPED_NOW"
H = "5d8f6c9b7d"          # newest ControllerRevision hash of the DaemonSet
OLD_H = "7c9d5f8b64"      # the revision the pods run
NS = "edge"
POD = "edge-agent-x7k2p"
NODE = "edge-node-1"
CONTROLLER = "system:serviceaccount:ota-system:ota-controller"


def cond(ctype, status, ltt, reason=None, message=None):
    """A pod condition as the apiserver re-encodes it: Go's metav1.Time
    writes null for a zero time, reason/message are omitempty."""
    c = {"type": ctype, "status": status, "lastProbeTime": None,
         "lastTransitionTime": ltt}
    if reason is not None:
        c["reason"] = reason
    if message is not None:
        c["message"] = message
    return c


def kubelet_conditions(ready="True"):
    return [
        cond("PodReadyToStartContainers", "True", "2026-11-02T07:14:31Z"),
        cond("Initialized", "True", "2026-11-02T07:14:33Z"),
        cond("Ready", ready, "2026-11-21T20:58:12Z"),
        cond("ContainersReady", ready, "2026-11-21T20:58:12Z"),
        cond("PodScheduled", "True", "2026-11-02T07:14:29Z"),
    ]


NEED_UPGRADE = cond("PodNeedUpgrade", "True", "2026-11-21T19:40:05Z",
                    message="controllerrevision: " + H)
PULLING = cond("PodImageReady", "False", "2026-11-21T20:01:47Z",
               reason="WaitPullImage", message="controllerrevision: " + H)


def managed_fields():
    """managedFields as a real pod carries them: a large part of every
    pods/status review, and nothing the webhook should read."""
    return [
        {"manager": "kubelet", "operation": "Update", "apiVersion": "v1",
         "time": "2026-11-21T20:58:12Z", "fieldsType": "FieldsV1",
         "subresource": "status",
         "fieldsV1": {"f:status": {
             "f:conditions": {
                 "k:{\"type\":\"ContainersReady\"}": {
                     ".": {}, "f:lastProbeTime": {},
                     "f:lastTransitionTime": {}, "f:status": {},
                     "f:type": {}},
                 "k:{\"type\":\"Initialized\"}": {
                     ".": {}, "f:lastProbeTime": {},
                     "f:lastTransitionTime": {}, "f:status": {},
                     "f:type": {}},
                 "k:{\"type\":\"PodReadyToStartContainers\"}": {
                     ".": {}, "f:lastProbeTime": {},
                     "f:lastTransitionTime": {}, "f:status": {},
                     "f:type": {}},
                 "k:{\"type\":\"Ready\"}": {
                     ".": {}, "f:lastProbeTime": {},
                     "f:lastTransitionTime": {}, "f:status": {},
                     "f:type": {}}},
             "f:containerStatuses": {}, "f:hostIP": {}, "f:hostIPs": {},
             "f:initContainerStatuses": {}, "f:phase": {}, "f:podIP": {},
             "f:podIPs": {".": {}, "k:{\"ip\":\"10.244.3.17\"}": {
                 ".": {}, "f:ip": {}}},
             "f:startTime": {}}}},
        {"manager": "ota-controller", "operation": "Update",
         "apiVersion": "v1", "time": "2026-11-21T19:40:05Z",
         "fieldsType": "FieldsV1", "subresource": "status",
         "fieldsV1": {"f:status": {"f:conditions": {
             "k:{\"type\":\"PodNeedUpgrade\"}": {
                 ".": {}, "f:lastProbeTime": {},
                 "f:lastTransitionTime": {}, "f:message": {},
                 "f:status": {}, "f:type": {}}}}}},
    ]


def container_status(name, image, digest, restarts, ready, started):
    return {
        "name": name,
        "state": {"running": {"startedAt": started}},
        "lastState": {} if restarts == 0 else {"terminated": {
            "exitCode": 137, "reason": "OOMKilled",
            "startedAt": "2026-11-21T20:41:02Z",
            "finishedAt": "2026-11-21T20:57:58Z",
            "containerID": "containerd://9b1f0c3e4d5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c"}},
        "ready": ready,
        "restartCount": restarts,
        "image": image,
        "imageID": image.split(":")[0] + "@sha256:" + digest,
        "containerID": "containerd://" + digest[:64],
        "started": ready,
    }


def agent_pod(conditions, node=NODE, agent_restarts=2, ready=True):
    """A pod of the OTA DaemonSet `edge-agent`, running revision OLD_H."""
    return {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {
            "name": POD,
            "generateName": "edge-agent-",
            "namespace": NS,
            "uid": "8c1d7e52-0f3a-4b69-a2d4-6e5f7a8b9c0d",
            "resourceVersion": "4816203",
            "creationTimestamp": "2026-11-02T07:14:29Z",
            "labels": {
                "app": "edge-agent",
                "controller-revision-hash": OLD_H,
                "pod-template-generation": "3",
            },
            "annotations": {
                "kubectl.kubernetes.io/default-container": "agent",
                "prometheus.io/scrape": "true",
                "prometheus.io/port": "9100",
            },
            "ownerReferences": [{
                "apiVersion": "apps/v1", "kind": "DaemonSet",
                "name": "edge-agent",
                "uid": "3f0c2a9e-5b1d-4c8e-9a7f-1d2e3c4b5a69",
                "controller": True, "blockOwnerDeletion": True}],
            "managedFields": managed_fields(),
        },
        "spec": {
            "volumes": [
                {"name": "config", "configMap": {"name": "edge-agent-config",
                                                 "defaultMode": 420}},
                {"name": "kube-api-access-h7x2q", "projected": {
                    "sources": [
                        {"serviceAccountToken": {"expirationSeconds": 3607,
                                                 "path": "token"}},
                        {"configMap": {"name": "kube-root-ca.crt", "items": [
                            {"key": "ca.crt", "path": "ca.crt"}]}},
                        {"downwardAPI": {"items": [{"path": "namespace",
                                                    "fieldRef": {
                                                        "apiVersion": "v1",
                                                        "fieldPath": "metadata.namespace"}}]}}],
                    "defaultMode": 420}},
            ],
            "containers": [
                {"name": "agent",
                 "image": "registry.example.com/edge/agent:v2.3.1",
                 "ports": [{"name": "metrics", "containerPort": 9100,
                            "protocol": "TCP"}],
                 "env": [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {
                     "apiVersion": "v1", "fieldPath": "spec.nodeName"}}}],
                 "resources": {"limits": {"memory": "256Mi"},
                               "requests": {"cpu": "50m", "memory": "64Mi"}},
                 "volumeMounts": [
                     {"name": "config", "mountPath": "/etc/edge-agent",
                      "readOnly": True},
                     {"name": "kube-api-access-h7x2q", "readOnly": True,
                      "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}],
                 "terminationMessagePath": "/dev/termination-log",
                 "terminationMessagePolicy": "File",
                 "imagePullPolicy": "IfNotPresent"},
            ],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default",
            "serviceAccount": "default",
            "nodeName": node,
            "hostNetwork": True,
            "securityContext": {},
            "affinity": {"nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchFields": [{
                        "key": "metadata.name", "operator": "In",
                        "values": [node]}]}]}}},
            "schedulerName": "default-scheduler",
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                 "effect": "NoExecute"},
                {"key": "node.kubernetes.io/unreachable",
                 "operator": "Exists", "effect": "NoExecute"},
                {"key": "node.kubernetes.io/disk-pressure",
                 "operator": "Exists", "effect": "NoSchedule"},
                {"key": "node.kubernetes.io/memory-pressure",
                 "operator": "Exists", "effect": "NoSchedule"},
                {"key": "node.kubernetes.io/pid-pressure",
                 "operator": "Exists", "effect": "NoSchedule"},
                {"key": "node.kubernetes.io/unschedulable",
                 "operator": "Exists", "effect": "NoSchedule"},
                {"key": "node.kubernetes.io/network-unavailable",
                 "operator": "Exists", "effect": "NoSchedule"},
            ],
            "priority": 0,
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
        },
        "status": {
            "phase": "Running",
            "conditions": conditions,
            "hostIP": "192.168.50.21",
            "hostIPs": [{"ip": "192.168.50.21"}],
            "podIP": "10.244.3.17",
            "podIPs": [{"ip": "10.244.3.17"}],
            "startTime": "2026-11-02T07:14:29Z",
            "containerStatuses": [
                container_status(
                    "agent", "registry.example.com/edge/agent:v2.3.1",
                    "4a7f3c2e1d0b9a8f7e6d5c4b3a29180f7e6d5c4b3a29180f7e6d5c4b3a291807",
                    agent_restarts, ready, "2026-11-21T20:58:10Z"),
            ],
            "qosClass": "Burstable",
        },
    }


def user(name, groups, extra=None):
    u = {"username": name, "groups": groups}
    if name.startswith("system:node:") or name.startswith("system:serviceaccount:"):
        u["uid"] = ""
    if extra:
        u["extra"] = extra
    return u


NODE_USER = user("system:node:" + NODE, ["system:nodes", "system:authenticated"])
OTHER_NODE = user("system:node:edge-node-2", ["system:nodes", "system:authenticated"])
EDGE_OPERATOR = user("edge-operator", ["edge-operators", "system:authenticated"],
                     {"authentication.kubernetes.io/credential-id":
                      ["X509SHA256=7d1c0b9f4e2a6c8d3f5b7a9e1c3d5f7b9a1c3e5d7f9b1d3f5a7c9e1b3d5f7a9c"]})
CONTROLLER_USER = {"username": CONTROLLER,
                   "uid": "6a2b8c4d-1e3f-4a5b-9c7d-0e1f2a3b4c5d",
                   "groups": ["system:serviceaccounts",
                              "system:serviceaccounts:ota-system",
                              "system:authenticated"],
                   "extra": {"authentication.kubernetes.io/pod-name":
                             ["ota-controller-6d9f8b7c5-q2w4e"],
                             "authentication.kubernetes.io/pod-uid":
                             ["0b1c2d3e-4f5a-6b7c-8d9e-0f1a2b3c4d5e"]}}
ADMIN = user("kubernetes-admin", ["kubeadm:cluster-admins", "system:masters",
                                  "system:authenticated"])


def review(uid, gvk, gvr, sub, name, ns, op, who, obj, old, options):
    req = {"uid": uid, "kind": gvk, "resource": gvr}
    if sub:
        req["subResource"] = sub
    req["requestKind"] = gvk
    req["requestResource"] = gvr
    if sub:
        req["requestSubResource"] = sub
    req["name"] = name
    if ns:
        req["namespace"] = ns
    req.update({"operation": op, "userInfo": who, "object": obj,
                "oldObject": old, "dryRun": False, "options": options})
    return {"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1",
            "request": req}


POD_GVK = {"group": "", "version": "v1", "kind": "Pod"}
POD_GVR = {"group": "", "version": "v1", "resource": "pods"}
DS_GVK = {"group": "apps", "version": "v1", "kind": "DaemonSet"}
DS_GVR = {"group": "apps", "version": "v1", "resource": "daemonsets"}


def update_options(manager=None):
    o = {"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1"}
    if manager:
        o["fieldManager"] = manager
    return o


def create_options(manager):
    return {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1",
            "fieldManager": manager}


def status_review(uid, who, old_conds, new_conds, manager, node=NODE,
                  new_pod=None):
    old = agent_pod(old_conds, node=node)
    new = new_pod or agent_pod(new_conds, node=node)
    # The apiserver bumps nothing before admission; resourceVersion and
    # managedFields of `object` are those of the stored object.
    return review(uid, POD_GVK, POD_GVR, "status", POD, NS, "UPDATE", who,
                  new, old, update_options(manager))


def daemonset(annotations, strategy, generation=1, uid=None, status=None,
              name="edge-agent"):
    meta = {"name": name, "namespace": NS}
    if uid:
        meta.update({"uid": uid, "resourceVersion": "4810552",
                     "generation": generation,
                     "creationTimestamp": "2026-10-30T09:12:44Z"})
    meta["labels"] = {"app": name}
    meta["annotations"] = annotations
    spec = {
        "selector": {"matchLabels": {"app": name}},
        "template": {
            "metadata": {"creationTimestamp": None,
                         "labels": {"app": name}},
            "spec": {
                "containers": [{
                    "name": "agent",
                    "image": "registry.example.com/edge/agent:v2.4.0",
                    "resources": {"limits": {"memory": "256Mi"},
                                  "requests": {"cpu": "50m",
                                               "memory": "64Mi"}},
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                    "imagePullPolicy": "IfNotPresent"}],
                "restartPolicy": "Always",
                "terminationGracePeriodSeconds": 30,
                "dnsPolicy": "ClusterFirst",
                "hostNetwork": True,
                "securityContext": {},
                "schedulerName": "default-scheduler",
                "tolerations": [{"operator": "Exists"}]}},
    }
    if strategy is not None:
        spec["updateStrategy"] = strategy
    spec["revisionHistoryLimit"] = 10
    ds = {"kind": "DaemonSet", "apiVersion": "apps/v1", "metadata": meta,
          "spec": spec}
    if status is not None:
        ds["status"] = status
    else:
        ds["status"] = {"currentNumberScheduled": 0,
                        "numberMisscheduled": 0,
                        "desiredNumberScheduled": 0, "numberReady": 0}
    return ds


ROLLING = {"type": "RollingUpdate",
           "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
ONDELETE = {"type": "OnDelete"}
DS_STATUS = {"currentNumberScheduled": 12, "numberMisscheduled": 0,
             "desiredNumberScheduled": 12, "numberReady": 12,
             "observedGeneration": 3, "updatedNumberScheduled": 4,
             "numberAvailable": 12}
DS_UID = "3f0c2a9e-5b1d-4c8e-9a7f-1d2e3c4b5a69"
OTA_ANN = "apps.openyurt.io/update-strategy"
TIMEOUT_ANN = "apps.openyurt.io/image-prepull-timeout-seconds"


def ds_create(uid, annotations, strategy):
    obj = daemonset(annotations, strategy)
    return review(uid, DS_GVK, DS_GVR, None, obj["metadata"]["name"], NS,
                  "CREATE", ADMIN, obj, None,
                  create_options("kubectl-client-side-apply"))


def ds_update(uid, annotations, strategy, old_strategy):
    obj = daemonset(annotations, strategy, generation=4, uid=DS_UID,
                    status=DS_STATUS)
    old = daemonset(annotations, old_strategy, generation=3, uid=DS_UID,
                    status=DS_STATUS)
    old["spec"]["template"]["spec"]["containers"][0]["image"] = \
        "registry.example.com/edge/agent:v2.3.1"
    return review(uid, DS_GVK, DS_GVR, None, obj["metadata"]["name"], NS,
                  "UPDATE", ADMIN, obj, old, update_options("kubectl-edit"))


def fixtures():
    """name -> (review, expected object after the mutating webhook)."""
    f = {}

    # a. kubelet's routine status write: the agent restarted and is Ready
    # again; the OTA conditions (state Pulling) are untouched.
    old = kubelet_conditions(ready="False") + [NEED_UPGRADE, PULLING]
    new = kubelet_conditions(ready="True") + [copy.deepcopy(NEED_UPGRADE),
                                              copy.deepcopy(PULLING)]
    r = status_review("2b7e4c1a-9d3f-4e8b-a1c6-5f0d2e9b8a71", NODE_USER,
                      old, new, None)
    r["request"]["oldObject"]["status"]["containerStatuses"][0]["ready"] = False
    r["request"]["oldObject"]["status"]["containerStatuses"][0]["started"] = False
    r["request"]["oldObject"]["status"]["containerStatuses"][0]["restartCount"] = 1
    r["request"]["object"]["status"]["containerStatuses"][0]["restartCount"] = 2
    f["pod-status-kubelet-routine"] = (r, copy.deepcopy(r["request"]["object"]))

    # b. a node user's pre-pull through `kubectl patch --subresource=status`
    # (strategic merge on conditions, merge key type): PendingUpgrade ->
    # Pulling, with reason and message already right.
    old = kubelet_conditions() + [NEED_UPGRADE]
    new = kubelet_conditions() + [
        copy.deepcopy(NEED_UPGRADE),
        cond("PodImageReady", "False", "2026-11-21T21:02:00Z",
             reason="WaitPullImage", message="controllerrevision: " + H)]
    r = status_review("c41f0a3b-6e2d-4d7a-9b85-0e3f1a2c4d6b", EDGE_OPERATOR,
                      old, new, "kubectl-patch")
    f["pod-status-prepull-kubectl"] = (r, copy.deepcopy(r["request"]["object"]))

    # c. YurtHub's imagepull: a merge patch that replaces the whole
    # conditions array from its cache, which lacks PodNeedUpgrade; the new
    # PodImageReady has no reason, no message, a zero (null) time.
    old = kubelet_conditions() + [NEED_UPGRADE]
    new = kubelet_conditions() + [cond("PodImageReady", "False", None)]
    r = status_review("7f3a9c2e-1b4d-4f6a-8e0c-2d5b7a9c1e3f", NODE_USER,
                      old, new, None)
    exp = copy.deepcopy(r["request"]["object"])
    exp["status"]["conditions"] = kubelet_conditions() + [
        cond("PodImageReady", "False", STAMPED, reason="WaitPullImage",
             message="controllerrevision: " + H),
        copy.deepcopy(NEED_UPGRADE)]
    f["pod-status-prepull-yurthub"] = (r, exp)

    # d. the controller reports the Job's success: Pulling -> Ready.
    old = kubelet_conditions() + [NEED_UPGRADE, PULLING]
    new = kubelet_conditions() + [
        copy.deepcopy(NEED_UPGRADE),
        cond("PodImageReady", "True", "2026-11-21T21:09:31Z",
             reason="PullImageSuccess", message="controllerrevision: " + H)]
    r = status_review("e8d2b6f4-3a1c-4b9e-8d7f-6c5a4b3e2d1f", CONTROLLER_USER,
                      old, new, "ota-controller")
    f["pod-status-controller-ready"] = (r, copy.deepcopy(r["request"]["object"]))

    # e. the node claims Ready itself: only the controller reports results.
    r = status_review("1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d", NODE_USER,
                      old, new, None)
    f["pod-status-node-claims-ready"] = (r, copy.deepcopy(r["request"]["object"]))

    # f. a node asks for a pre-pull of a pod on another node.
    old = kubelet_conditions() + [NEED_UPGRADE]
    new = kubelet_conditions() + [
        copy.deepcopy(NEED_UPGRADE),
        cond("PodImageReady", "False", "2026-11-21T21:03:10Z",
             reason="WaitPullImage", message="controllerrevision: " + H)]
    r = status_review("9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b", OTHER_NODE,
                      old, new, None)
    f["pod-status-other-node"] = (r, copy.deepcopy(r["request"]["object"]))

    # g. OTA DaemonSet created with the defaulted RollingUpdate strategy.
    r = ds_create("d1e2f3a4-b5c6-4d7e-8f9a-0b1c2d3e4f5a", {OTA_ANN: "OTA"},
                  copy.deepcopy(ROLLING))
    exp = copy.deepcopy(r["request"]["object"])
    exp["spec"]["updateStrategy"] = {"type": "OnDelete"}
    f["ds-create-ota-rollingupdate"] = (r, exp)

    # h. OTA DaemonSet (value in lower case) without updateStrategy.
    r = ds_create("0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c", {OTA_ANN: "ota"},
                  None)
    exp = copy.deepcopy(r["request"]["object"])
    exp["spec"]["updateStrategy"] = {"type": "OnDelete"}
    f["ds-create-ota-no-strategy"] = (r, exp)

    # i. OTA DaemonSet already OnDelete, a new image: nothing to do.
    r = ds_update("5c4b3a29-1807-4f6e-9d5c-4b3a29180f7e",
                  {OTA_ANN: "OTA", TIMEOUT_ANN: "1800",
                   "deprecated.daemonset.template.generation": "4"},
                  copy.deepcopy(ONDELETE), copy.deepcopy(ONDELETE))
    f["ds-update-ota-ondelete"] = (r, copy.deepcopy(r["request"]["object"]))

    # j. an unknown strategy value: the validating webhook denies it.
    r = ds_create("a9b8c7d6-e5f4-4a3b-9c2d-1e0f9a8b7c6d",
                  {OTA_ANN: "Rolling"}, copy.deepcopy(ROLLING))
    f["ds-create-invalid-strategy"] = (r, copy.deepcopy(r["request"]["object"]))

    # k. a pull deadline with a unit: the validating webhook denies it.
    r = ds_create("b2c3d4e5-f6a7-4b8c-9d0e-1f2a3b4c5d6e",
                  {OTA_ANN: "OTA", TIMEOUT_ANN: "10m"},
                  copy.deepcopy(ONDELETE))
    f["ds-create-bad-timeout"] = (r, copy.deepcopy(r["request"]["object"]))

    # l. AdvancedRollingUpdate is valid and not ours: allowed unchanged.
    r = ds_create("c3d4e5f6-a7b8-4c9d-8e0f-2a3b4c5d6e7f",
                  {OTA_ANN: "AdvancedRollingUpdate"}, copy.deepcopy(ROLLING))
    f["ds-create-advanced-rolling-update"] = (
        r, copy.deepcopy(r["request"]["object"]))

    # m. a request for a resource we do not handle.
    cm = {"kind": "ConfigMap", "apiVersion": "v1",
          "metadata": {"name": "edge-agent-config", "namespace": NS,
                       "annotations": {OTA_ANN: "OTA"}},
          "data": {"agent.yaml": "interval: 30s\nendpoint: https://collector.example.com\n"}}
    r = review("f0e1d2c3-b4a5-4968-8776-5a4b3c2d1e0f",
               {"group": "", "version": "v1", "kind": "ConfigMap"},
               {"group": "", "version": "v1", "resource": "configmaps"},
               None, "edge-agent-config", NS, "CREATE", ADMIN, cm, None,
               create_options("kubectl-client-side-apply"))
    f["configmap-create"] = (r, copy.deepcopy(cm))
    return f


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, (rev, exp) in sorted(fixtures().items()):
        for suffix, doc in ((".json", rev), (".expected.json", exp)):
            path = os.path.join(OUT, name + suffix)
            with open(path, "w") as fh:
                json.dump(doc, fh, indent=2)
                fh.write("\n")
        size = len(json.dumps(rev, separators=(",", ":")))
        print("%-40s %6d bytes compact" % (name, size), file=sys.stderr)


if __name__ == "__main__":
    main()
