"""The simulated garbage collector: cascading deletion by ownerReferences.

It keeps an index owner uid -> dependents from the API's write events. When an object is
deleted, each of its dependents is deleted too (DELETE with propagationPolicy=Background,
so a pod bound to a node goes Terminating and its kubelet finishes it), unless the
dependent has another owner that still exists, in which case only the dead owner's
reference is removed. A dependent created with no existing owner is deleted as well.
Foreground deletion: an owner the API marked with the `foregroundDeletion` finalizer
(DELETE with propagationPolicy=Foreground, while this collector runs) has its dependents
deleted first (Foreground for those whose reference says blockOwnerDeletion, Background
for the others); the finalizer is removed once no blocking dependent is left.
Orphan deletion needs nothing here: the API strips the ownerReferences of the orphaned
dependents before it deletes the owner. Custom resources take part as owners and as
dependents (their store name is "<plural>.<group>"; their owner kinds are looked up in the
Api's registry).
"""

import threading

from ..api import FOREGROUND_FINALIZER
from .identities import SYSTEM_GC
from .workqueue import RESYNC, Worker, meta

# Resources whose objects may have owners (listed once at start).
DEPENDENT_RESOURCES = [("/api/v1", "pods"), ("/apis/apps/v1", "controllerrevisions"),
                       ("/apis/batch/v1", "jobs"), ("/apis/apps/v1", "daemonsets"),
                       ("/api/v1", "secrets"), ("/api/v1", "configmaps"),
                       ("/apis/coordination.k8s.io/v1", "leases")]
# Owner kinds the collector can look up: kind -> (plural, namespaced).
OWNER_KINDS = {"Pod": ("pods", True), "DaemonSet": ("daemonsets", True),
               "ControllerRevision": ("controllerrevisions", True), "Job": ("jobs", True),
               "Secret": ("secrets", True), "ConfigMap": ("configmaps", True),
               "ServiceAccount": ("serviceaccounts", True), "Service": ("services", True),
               "Lease": ("leases", True), "Node": ("nodes", False),
               "Namespace": ("namespaces", False)}


def _base(api_version):
    return "/api/v1" if api_version == "v1" else "/apis/" + api_version


class GarbageCollector(Worker):
    name = "garbage-collector"

    def __init__(self, api):
        super().__init__(api, SYSTEM_GC)
        self._lock = threading.Lock()
        self._dependents = {}   # owner uid -> {(base, resource, namespace, name)}
        self._owners = {}       # (base, resource, namespace, name) -> {owner uids}
        self._foreground = {}   # uid of an owner in foreground deletion -> its (base, resource, ns, name)
        api.foreground_gc = True

    def _index(self, dep, refs):
        with self._lock:
            for uid in self._owners.pop(dep, set()):
                self._dependents.get(uid, set()).discard(dep)
            uids = {r.get("uid") for r in refs or [] if r.get("uid")}
            if uids:
                self._owners[dep] = uids
            for uid in uids:
                self._dependents.setdefault(uid, set()).add(dep)

    def keys_for(self, event_type, resource, obj):
        m = meta(obj)
        dep = (_base(obj.get("apiVersion", "v1")), resource.split(".", 1)[0], m.get("namespace") or "",
               m.get("name"))
        keys = []
        if event_type == "DELETED":
            with self._lock:
                waiting = [uid for uid in self._owners.get(dep, ()) if uid in self._foreground]
                self._foreground.pop(m.get("uid"), None)
            self._index(dep, [])
            keys.append(("owner", m.get("uid")))
            keys += [("foreground", uid) for uid in waiting]
        else:
            self._index(dep, m.get("ownerReferences"))
            if event_type == "ADDED" and m.get("ownerReferences"):
                keys.append(("dependent",) + dep)
            if m.get("deletionTimestamp") and FOREGROUND_FINALIZER in (m.get("finalizers") or []):
                with self._lock:
                    self._foreground[m.get("uid")] = dep
                keys.append(("foreground", m.get("uid")))
        return keys

    def sync(self, key):
        if key == RESYNC:
            for base, resource in DEPENDENT_RESOURCES:
                code, lst = self.call("GET", "%s/%s" % (base, resource))
                for obj in (lst or {}).get("items") or [] if code == 200 else []:
                    m = meta(obj)
                    if m.get("ownerReferences"):
                        dep = (base, resource, m.get("namespace") or "", m["name"])
                        self._index(dep, m["ownerReferences"])
                        self.enqueue(("dependent",) + dep)
        elif key[0] == "owner":
            with self._lock:
                deps = list(self._dependents.pop(key[1], set()))
            for dep in deps:
                self._collect(dep, gone=key[1])
        elif key[0] == "foreground":
            self._foreground_delete(key[1])
        else:
            self._collect(key[1:])

    def _path(self, dep):
        base, resource, ns, name = dep
        return "%s/%s%s/%s" % (base, "namespaces/%s/" % ns if ns else "", resource, name)

    def _owner_exists(self, ref, namespace):
        plural, namespaced = OWNER_KINDS.get(ref.get("kind"), (None, None))
        if plural is None:
            group, _, version = (ref.get("apiVersion") or "").rpartition("/")
            res = self.api.registry.by_kind(group, version, ref.get("kind"))
            if res is None:
                return True     # a kind we cannot look up: never collect on its account
            plural, namespaced = res.plural, res.namespaced
        path = "%s/%s%s/%s" % (_base(ref.get("apiVersion", "v1")),
                               "namespaces/%s/" % namespace if namespaced else "",
                               plural, ref.get("name"))
        obj = self.get(path)
        return obj is not None and meta(obj).get("uid") == ref.get("uid")

    def _foreground_delete(self, uid):
        """Deletes the dependents of an owner in foreground deletion; removes its
        finalizer once none that blocks owner deletion is left (a dependent's DELETED
        event brings this back)."""
        with self._lock:
            owner_dep = self._foreground.get(uid)
            deps = list(self._dependents.get(uid, ()))
        if owner_dep is None:
            return
        owner = self.get(self._path(owner_dep))
        om = meta(owner) if owner is not None else {}
        if om.get("uid") != uid or FOREGROUND_FINALIZER not in (om.get("finalizers") or []):
            with self._lock:
                self._foreground.pop(uid, None)
            return
        blocked = False
        for dep in deps:
            obj = self.get(self._path(dep))
            refs = [r for r in meta(obj).get("ownerReferences") or [] if r.get("uid") == uid] if obj else []
            if not refs:
                continue
            block = any(r.get("blockOwnerDeletion") for r in refs)
            blocked = blocked or block
            if not meta(obj).get("deletionTimestamp"):
                policy = "Foreground" if block else "Background"
                self.call("DELETE", self._path(dep), query={"propagationPolicy": policy},
                          body={"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": policy,
                                "preconditions": {"uid": meta(obj)["uid"]}})
        if blocked:
            return
        code, _ = self.call("PATCH", self._path(owner_dep), content_type="application/merge-patch+json",
                            body={"metadata": {"finalizers": [f for f in om["finalizers"]
                                                              if f != FOREGROUND_FINALIZER] or None,
                                               "resourceVersion": om["resourceVersion"]}})
        if code == 409:
            self.enqueue(("foreground", uid))

    def _collect(self, dep, gone=None):
        obj = self.get(self._path(dep))
        if obj is None:
            return
        refs = meta(obj).get("ownerReferences") or []
        if not refs or (gone and not any(r.get("uid") == gone for r in refs)):
            return
        alive = [r for r in refs if r.get("uid") != gone and self._owner_exists(r, dep[2])]
        if alive == refs:
            return
        if alive:
            code, _ = self.call("PATCH", self._path(dep), content_type="application/merge-patch+json",
                                body={"metadata": {"ownerReferences": alive,
                                                   "resourceVersion": meta(obj)["resourceVersion"]}})
            if code == 409:
                self.enqueue(("dependent",) + tuple(dep))
            return
        code, out = self.call("DELETE", self._path(dep), query={"propagationPolicy": "Background"},
                              body={"kind": "DeleteOptions", "apiVersion": "v1",
                                    "propagationPolicy": "Background",
                                    "preconditions": {"uid": meta(obj)["uid"]}})
        if code not in (200, 202, 404, 409):
            raise RuntimeError("collecting %s: %s %s" % (self._path(dep), code, out))
        self.log.info("deleted %s (owner gone)", self._path(dep))
