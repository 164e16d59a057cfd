"""The simulated DaemonSet controller.

For each DaemonSet it keeps one pod on every node the template fits (scheduling.py), and
records the template history as ControllerRevisions owned by the DaemonSet: the current
template's revision is named <ds>-<hash>, labelled controller-revision-hash=<hash>, holds
{"spec": {"template": {"$patch": "replace", ...}}} as Kubernetes writes it, and has the
highest .revision (a template that comes back gets its old revision renumbered, as in
Kubernetes). New pods are named <ds>-<5 random chars> (generateName), bound with
spec.nodeName plus the node affinity the real controller writes, labelled
controller-revision-hash and pod-template-generation, and owned by the DaemonSet.

Updates: OnDelete replaces nothing itself; a pod deleted by someone is recreated from the
newest revision once the old one is really gone (a Terminating pod still holds its node).
RollingUpdate deletes stale pods itself, at most maxUnavailable (default 1) unavailable at a
time (maxSurge is not simulated). Status counters are written with PUT daemonsets/status.
"""

import collections
import copy
import hashlib
import json
import math

from .events import EventRecorder
from .identities import SYSTEM_DS_CONTROLLER
from .scheduling import DAEMON_TOLERATIONS, should_continue_running, should_run
from .workqueue import RESYNC, Worker, controller_of, meta, owner_ref, selector_query

HASH_LABEL = "controller-revision-hash"
GENERATION_LABEL = "pod-template-generation"
ALL = ("*all*",)
CREATE_RETRY = 5.0      # simulated seconds before trying again after a refused pod create
_SAFE_CHARS = "bcdfghjklmnpqrstvwxz2456789"


def template_hash(template):
    """A stable 10-character hash of a pod template (Kubernetes' alphabet, not its value)."""
    digest = hashlib.sha256(json.dumps(template, sort_keys=True,
                                       separators=(",", ":")).encode()).digest()
    return "".join(_SAFE_CHARS[b % len(_SAFE_CHARS)] for b in digest[:10])


def _ready(pod):
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def _max_unavailable(ds, desired):
    value = (((ds.get("spec") or {}).get("updateStrategy") or {}).get("rollingUpdate")
             or {}).get("maxUnavailable", 1)
    if isinstance(value, str) and value.endswith("%"):
        value = math.ceil(int(value[:-1]) * desired / 100.0)
    return max(1, int(value))


class DaemonSetController(Worker):
    name = "daemonset-controller"

    def __init__(self, api):
        super().__init__(api, SYSTEM_DS_CONTROLLER)
        self.events = EventRecorder(self, "daemonset-controller")

    def keys_for(self, event_type, resource, obj):
        if resource == "daemonsets":
            return [(meta(obj).get("namespace"), meta(obj).get("name"))]
        if resource in ("pods", "controllerrevisions"):
            ref = controller_of(obj)
            if ref and ref.get("kind") == "DaemonSet":
                return [(meta(obj).get("namespace"), ref.get("name"))]
        if resource == "nodes":
            if self.light and event_type == "MODIFIED" and not self._node_changed(obj):
                return []
            return [ALL]
        return []

    def _node_changed(self, node):
        """Light mode: whether what decides placement (labels, taints, unschedulable,
        the Ready condition) changed since the last event of this node. Status writes
        that only list new images, as every finished pull makes, change nothing here."""
        spec = node.get("spec") or {}
        ready = [c.get("status") for c in (node.get("status") or {}).get("conditions") or []
                 if c.get("type") == "Ready"]
        seen = (repr(sorted((meta(node).get("labels") or {}).items())), repr(spec.get("taints")),
                spec.get("unschedulable"), repr(ready))
        cache = self.__dict__.setdefault("_nodes_seen", {})
        name = meta(node).get("name")
        if cache.get(name) == seen:
            return False
        cache[name] = seen
        return True

    def sync(self, key):
        if key in (RESYNC, ALL):
            for ds in self.list("/apis/apps/v1/daemonsets"):
                self.enqueue((meta(ds)["namespace"], meta(ds)["name"]))
            return
        ns, name = key
        ds = self.get("/apis/apps/v1/namespaces/%s/daemonsets/%s" % (ns, name))
        if ds is None or meta(ds).get("deletionTimestamp"):
            return
        self._sync(ds)

    # -- revisions --------------------------------------------------------------------------------
    def _revision(self, ds):
        """Make sure the current template has the newest ControllerRevision; its hash."""
        ns, name, uid = meta(ds)["namespace"], meta(ds)["name"], meta(ds)["uid"]
        template = (ds.get("spec") or {}).get("template") or {}
        h = template_hash(template)
        path = "/apis/apps/v1/namespaces/%s/controllerrevisions" % ns
        revs = [r for r in self.list(path) if (controller_of(r) or {}).get("uid") == uid]
        top = max([int(r.get("revision", 0)) for r in revs] or [0])
        mine = [r for r in revs if (meta(r).get("labels") or {}).get(HASH_LABEL) == h]
        if mine:
            cur = mine[0]
            if int(cur.get("revision", 0)) < top:
                code, obj = self.call("PATCH", "%s/%s" % (path, meta(cur)["name"]),
                                      body={"revision": top + 1},
                                      content_type="application/merge-patch+json")
                if code != 200:
                    raise RuntimeError("renumbering revision: %s %s" % (code, obj))
        else:
            labels = dict((template.get("metadata") or {}).get("labels") or {})
            labels[HASH_LABEL] = h
            data_template = {"$patch": "replace"}
            data_template.update(copy.deepcopy(template))
            body = {"apiVersion": "apps/v1", "kind": "ControllerRevision",
                    "metadata": {"name": "%s-%s" % (name, h), "namespace": ns,
                                 "labels": labels,
                                 "annotations": {"deprecated.daemonset.template.generation":
                                                 str(meta(ds).get("generation", 1))},
                                 "ownerReferences": [owner_ref("apps/v1", "DaemonSet", ds)]},
                    "data": {"spec": {"template": data_template}},
                    "revision": top + 1}
            code, obj = self.call("POST", path, body=body)
            if code not in (200, 201):
                raise RuntimeError("creating revision %s-%s: %s %s" % (name, h, code, obj))
            revs.append(obj)
        return h, revs

    def _trim_history(self, ds, h, revs, pods):
        limit = (ds.get("spec") or {}).get("revisionHistoryLimit", 10)
        live = {(meta(p).get("labels") or {}).get(HASH_LABEL) for p in pods}
        old = sorted((r for r in revs if (meta(r).get("labels") or {}).get(HASH_LABEL)
                      not in live | {h}), key=lambda r: int(r.get("revision", 0)))
        for r in old[:max(0, len(old) - limit)]:
            self.call("DELETE", "/apis/apps/v1/namespaces/%s/controllerrevisions/%s"
                      % (meta(r)["namespace"], meta(r)["name"]))

    # -- pods -------------------------------------------------------------------------------------
    def _sync(self, ds):
        ns, uid = meta(ds)["namespace"], meta(ds)["uid"]
        h, revs = self._revision(ds)
        pod_spec = ((ds.get("spec") or {}).get("template") or {}).get("spec") or {}
        # Every node and every pod of the DaemonSet, at each event of one of its pods: read
        # as stored, not copied (nothing here changes them), or the copies of a thousand
        # nodes' image lists take all of kubesim's CPU.
        nodes = self.list("/api/v1/nodes", read_only=True)
        sel = selector_query((ds.get("spec") or {}).get("selector")) if self.light else None
        pods = [p for p in self.list("/api/v1/namespaces/%s/pods" % ns,
                                     {"labelSelector": sel} if sel else None, read_only=True)
                if (controller_of(p) or {}).get("uid") == uid]
        by_node = collections.defaultdict(list)
        for p in pods:
            by_node[(p.get("spec") or {}).get("nodeName")].append(p)
        create, delete, desired, misscheduled = [], [], {}, 0
        for node in nodes:
            nn = meta(node)["name"]
            on_node = by_node.pop(nn, [])
            live = sorted((p for p in on_node if not meta(p).get("deletionTimestamp")),
                          key=lambda p: meta(p).get("creationTimestamp") or "")
            if should_run(pod_spec, node) or (live and should_continue_running(pod_spec, node)):
                failed = [p for p in live if (p.get("status") or {}).get("phase") == "Failed"]
                live = [p for p in live if p not in failed]
                delete += failed
                if not on_node:
                    create.append(nn)
                delete += live[1:]          # more than one daemon on a node: keep the oldest
                desired[nn] = live[0] if live else None
            elif live:
                misscheduled += 1
                delete += live
        for stray in by_node.values():      # pods on nodes that no longer exist
            delete += [p for p in stray if not meta(p).get("deletionTimestamp")]
        strategy = ((ds.get("spec") or {}).get("updateStrategy") or {}).get("type")
        if strategy != "OnDelete":
            delete += self._rolling_update(ds, h, desired)
        for nn in create:
            if not self._create_pod(ds, h, nn):
                self.enqueue_after((ns, meta(ds)["name"]), CREATE_RETRY)
        for p in delete:
            code, _ = self.call("DELETE", "/api/v1/namespaces/%s/pods/%s" % (ns, meta(p)["name"]))
            if code == 200:
                self.events.record(ds, "Normal", "SuccessfulDelete",
                                   "Deleted pod: " + meta(p)["name"])
        self._trim_history(ds, h, revs, pods)
        self._write_status(ds, h, desired, misscheduled)

    def _rolling_update(self, ds, h, desired):
        budget = _max_unavailable(ds, len(desired))
        unavailable = sum(1 for p in desired.values() if p is None or not _ready(p))
        old = [p for p in desired.values()
               if p is not None and (meta(p).get("labels") or {}).get(HASH_LABEL) != h]
        delete = [p for p in old if not _ready(p)]     # already unavailable: free to go
        for p in old:
            if _ready(p) and unavailable < budget:
                delete.append(p)
                unavailable += 1
        return delete

    def _create_pod(self, ds, h, node):
        template = copy.deepcopy((ds.get("spec") or {}).get("template") or {})
        tmeta = template.get("metadata") or {}
        labels = dict(tmeta.get("labels") or {})
        labels[HASH_LABEL] = h
        labels[GENERATION_LABEL] = str(meta(ds).get("generation", 1))
        spec = template.get("spec") or {}
        spec["nodeName"] = node
        spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})[
            "requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}
        tolerations = spec.setdefault("tolerations", [])
        for t in DAEMON_TOLERATIONS:
            if not any(x.get("key") == t["key"] and x.get("effect") == t["effect"]
                       for x in tolerations):
                tolerations.append(dict(t))
        pod_meta = {"generateName": meta(ds)["name"] + "-", "namespace": meta(ds)["namespace"],
                    "labels": labels,
                    "ownerReferences": [owner_ref("apps/v1", "DaemonSet", ds)]}
        if tmeta.get("annotations"):
            pod_meta["annotations"] = tmeta["annotations"]
        body = {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": spec}
        code, obj = self.call("POST", "/api/v1/namespaces/%s/pods" % meta(ds)["namespace"],
                              body=body)
        if code in (200, 201):
            self.events.record(ds, "Normal", "SuccessfulCreate",
                               "Created pod: " + meta(obj)["name"])
            return True
        msg = (obj or {}).get("message", "") if isinstance(obj, dict) else str(obj)
        self.events.record(ds, "Warning", "FailedCreate", "Error creating: " + msg)
        self.log.warning("creating pod for %s on %s: %s %s", meta(ds)["name"], node, code, msg)
        return False

    def _write_status(self, ds, h, desired, misscheduled):
        scheduled = [p for p in desired.values() if p is not None]
        ready = sum(1 for p in scheduled if _ready(p))
        updated = sum(1 for p in scheduled if (meta(p).get("labels") or {}).get(HASH_LABEL) == h)
        status = {"currentNumberScheduled": len(scheduled),
                  "desiredNumberScheduled": len(desired),
                  "numberMisscheduled": misscheduled,
                  "numberReady": ready,
                  "observedGeneration": meta(ds).get("generation", 1)}
        for k, v in (("updatedNumberScheduled", updated), ("numberAvailable", ready),
                     ("numberUnavailable", len(desired) - ready)):
            if v:
                status[k] = v       # omitempty in the Go type
        old = dict(ds.get("status") or {})
        if old.get("collisionCount") is not None:
            status["collisionCount"] = old["collisionCount"]
        if status == old:
            return
        body = dict(ds)
        body["status"] = status
        code, obj = self.call("PUT", "/apis/apps/v1/namespaces/%s/daemonsets/%s/status"
                              % (meta(ds)["namespace"], meta(ds)["name"]), body=body)
        if code == 409:
            self.enqueue((meta(ds)["namespace"], meta(ds)["name"]))
        elif code not in (200, 404):
            raise RuntimeError("daemonset status: %s %s" % (code, obj))
