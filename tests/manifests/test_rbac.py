"""Least privilege, checked against what the controller really does.

ControllerRbac runs build/ota-controller against kubesim (the e2e harness:
kubesim with its simulated cluster, the controller behind the logging
proxy) through the flows that exercise each kind of call: a pre-pull that
succeeds, one that fails and its retry (which deletes the failed Job), and
a SIGTERM (which releases the Lease).  Each request the controller made is
turned into the authorizer's attributes and checked against the RBAC
rendered from manifests/ for system:serviceaccount:ota-system:ota-controller;
then every verb of every rule must have been used at least once.  kubesim
enforces RBAC (its default authorization, Node,RBAC) and the e2e harness
applies the rendered RBAC before the controller starts, so the run itself
must meet no 403.  Then each grant is shown to be needed: with the RBAC
applied without it (one verb of one resource of one rule), each call of the
run that grant served, made again with the controller's credentials, gets
a 403 from kubesim.

ControllerRbacImagePullJob does the same for what
manifests/components/imagepulljob adds (its ClusterRole, the controller's
--imagepulljobs): the render of overlays/imagepulljob applied, our CRD
installed, and ImagePullJobs run to each kind of write: one completes
(its status written, Kruise's finalizer dropped, its completion marked)
and is deleted by its TTL; one selects by podSelector (a pod list) and
pulls an image that is not there (its node given up: a Job patch).
ControllerRbacImageCache likewise for components/imagecache (its
ClusterRole, --imagecaches), under our CRD and then kube-fledged's.

RbacEvaluator is the table for the evaluator itself (manifests.py).
"""
import os
import json
import time
import unittest
import urllib.parse

from harness import AGENT, FRESH, MISSING, ApiError, Base as E2EBase, wait_until
from manifests import (MANIFESTS, NS, allowed, render, request_attributes, role_grants, rule_allows,
                       subject_rules, unused_grants, without_grant)
import ota_rbac


class RbacEvaluator(unittest.TestCase):
    def test_request_attributes(self):
        rows = [
            ("GET", "/api/v1/pods?labelSelector=a%2Cb&limit=500", ("list", "", "pods", "", "", "")),
            ("GET", "/api/v1/pods?watch=1&resourceVersion=5", ("watch", "", "pods", "", "", "")),
            ("GET", "/apis/apps/v1/controllerrevisions?limit=500", ("list", "apps", "controllerrevisions", "", "", "")),
            ("PATCH", "/api/v1/namespaces/e/pods/p/status", ("patch", "", "pods", "status", "e", "p")),
            ("POST", "/apis/batch/v1/namespaces/e/jobs", ("create", "batch", "jobs", "", "e", "")),
            ("DELETE", "/apis/batch/v1/namespaces/e/jobs/j?propagationPolicy=Background",
             ("delete", "batch", "jobs", "", "e", "j")),
            ("GET", "/api/v1/nodes/node-1", ("get", "", "nodes", "", "", "node-1")),
            ("PUT", "/apis/coordination.k8s.io/v1/namespaces/ota-system/leases/ota-controller",
             ("update", "coordination.k8s.io", "leases", "", "ota-system", "ota-controller")),
            ("GET", "/version", None),
            ("GET", "/apis", None),
        ]
        for method, path, want in rows:
            self.assertEqual(request_attributes(method, path), want, path)

    def test_rules(self):
        rule = {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "update"],
                "resourceNames": ["ota-controller"]}
        rows = [
            (("get", "coordination.k8s.io", "leases", "", "ota-system", "ota-controller"), True),
            (("get", "coordination.k8s.io", "leases", "", "ota-system", "other"), False),
            (("create", "coordination.k8s.io", "leases", "", "ota-system", ""), False),
            (("get", "", "leases", "", "ota-system", "ota-controller"), False),
            (("update", "coordination.k8s.io", "leases", "status", "ota-system", "ota-controller"), False),
        ]
        for attrs, want in rows:
            self.assertEqual(rule_allows(rule, attrs), want, attrs)
        pods = {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}
        self.assertFalse(rule_allows(pods, ("patch", "", "pods", "status", "e", "p")))  # subresources are apart
        # a Role's rules hold in its namespace only
        granted = [("ota-system", rule)]
        self.assertTrue(allowed(granted, ("get", "coordination.k8s.io", "leases", "", "ota-system",
                                          "ota-controller")))
        self.assertFalse(allowed(granted, ("get", "coordination.k8s.io", "leases", "", "kube-system",
                                           "ota-controller")))
        # unused: each verb of each rule on its own
        self.assertEqual(unused_grants(granted, [("get", "coordination.k8s.io", "leases", "", "ota-system",
                                                  "ota-controller")]),
                         [("ota-system", "coordination.k8s.io", "leases", "update", ("ota-controller",))])

    def test_without_grant(self):
        role = {"kind": "ClusterRole", "metadata": {"name": "r"},
                "rules": [{"apiGroups": ["apps"], "resources": ["daemonsets", "controllerrevisions"],
                           "verbs": ["list", "watch"]},
                          {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]}]}
        grants = role_grants([role])
        self.assertEqual(len(grants), 5)
        ds_list = (("ClusterRole", "", "r"), 0, "apps", "daemonsets", "list")
        self.assertIn(ds_list, grants)
        out = without_grant([role], ds_list)[0]
        self.assertEqual(out["rules"], [
            {"apiGroups": ["apps"], "resources": ["controllerrevisions"], "verbs": ["list", "watch"]},
            {"apiGroups": ["apps"], "resources": ["daemonsets"], "verbs": ["watch"]},
            {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]}])
        self.assertEqual(len(role["rules"]), 2)  # the original is left alone
        # the last verb of a rule: the rule goes
        out = without_grant([role], (("ClusterRole", "", "r"), 1, "", "nodes", "get"))[0]
        self.assertEqual(len(out["rules"]), 1)


class ControllerRbac(E2EBase):
    NODES = 2

    def upgraded(self, name, new, **kw):
        pods = self.make_ds(AGENT + "v1", name=name, **kw)
        h = self.set_image(new, name=name)
        self.wait_need_upgrade(pods, "True", h)
        return pods, h

    def test_every_call_granted_every_grant_used(self):
        objs = render(MANIFESTS)
        granted = subject_rules(objs, NS, "ota-controller")
        self.assertTrue(granted)
        t0 = time.monotonic()
        # a pre-pull that succeeds: node read, Job created, status patched, Events
        pods, h = self.upgraded("ok", FRESH[0], nodes=["node-1"])
        self.request_pull(pods[0], h)
        self.wait_image_ready(pods[0], "PullImageSuccess")
        # one that fails by its deadline, and its retry, which deletes the failed Job
        pods, h = self.upgraded("bad", MISSING, timeout=30, nodes=["node-2"])
        self.request_pull(pods[0], h)
        self.wait_image_ready(pods[0], "PullImageFail")
        self.request_pull(pods[0], h)
        wait_until(lambda: any(e["method"] == "DELETE" and "/jobs/" in e["path"]
                               for e in self.ctl.proxy.entries(t0)), 20, "the failed Job deleted")
        # SIGTERM: the Lease is released (an update)
        self.assertEqual(self.ctl.stop(), 0)
        calls, used, denied = self.judged_calls(granted)
        self.assertEqual(denied, [], "calls the RBAC in manifests/ would refuse")
        # the apiserver's audit log names the caller: every call says ota-controller/<version>
        agents = {e["user_agent"] for e in self.ctl.proxy.entries()}
        self.assertTrue(agents and all(a is not None and a.startswith("ota-controller/") for a in agents),
                        agents)
        self.assertEqual(unused_grants(granted, used), [], "granted but never used")
        # and the flow did what it says: each kind of call is there
        kinds = {(a[0], a[2] + ("/" + a[3] if a[3] else "")) for a in used}
        for k in [("create", "jobs"), ("delete", "jobs"), ("patch", "pods/status"), ("create", "events"),
                  ("get", "nodes"), ("list", "nodes"), ("watch", "nodes"),
                  ("create", "leases"), ("update", "leases")]:
            self.assertIn(k, kinds)
        # kubesim enforced exactly that RBAC, and refused nothing
        refused = ["%s %s" % (e["method"], e["path"]) for e in self.ctl.proxy.entries() if e["status"] == 403]
        self.assertEqual(refused, [], "calls kubesim refused with the rendered RBAC")
        self.each_grant_needed(objs, calls)

    def judged_calls(self, granted):
        """The controller's calls (method, path), the authorizer attributes of
        those that need a grant, and those granted refuses, in words."""
        calls = [(e["method"], e["path"]) for e in self.ctl.proxy.entries()]
        used, denied = [], []
        for method, path in calls:
            attrs = request_attributes(method, path)
            if attrs is None:
                continue  # /version and discovery: every authenticated user may
            used.append(attrs)
            if not allowed(granted, attrs):
                denied.append("%s %s -> %s" % (method, path, attrs))
        return calls, used, denied

    def replay(self, method, path):
        """The call again, straight to kubesim with the controller's token
        (a watch cut short): its HTTP status."""
        if request_attributes(method, path)[0] == "watch":
            u = urllib.parse.urlsplit(path)
            q = [(k, v) for k, v in urllib.parse.parse_qsl(u.query) if k != "timeoutSeconds"]
            path = u.path + "?" + urllib.parse.urlencode(q + [("timeoutSeconds", "1")])
        try:
            self.sim.call(method, path, who="controller", retry=False, ok=(), timeout=10)
        except ApiError as e:
            return e.status
        raise AssertionError("unreachable: ok=() raises")

    def apply_roles(self, objs):
        roles = [o for o in objs if o.get("kind") in ("ClusterRole", "Role")]
        out = self.sim.kubectl("admin", "apply", "-f", "-", stdin="\n".join(json.dumps(r) for r in roles))
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)

    def each_grant_needed(self, objs, calls, role=None):
        """For each grant (of the ClusterRole named role, or of every role):
        the roles applied without it, each call of the run it served (one
        per distinct request kind) gets a 403; at the end the rendered roles
        are applied again."""
        granted = subject_rules(objs, NS, "ota-controller")
        grants = [g for g in role_grants(objs) if role is None or g[0][2] == role]
        self.assertGreaterEqual(len(grants), 10 if role is None else 5)
        try:
            for grant in grants:
                reduced = without_grant(objs, grant)
                left = subject_rules(reduced, NS, "ota-controller")
                served, seen = [], set()
                for method, path in calls:
                    attrs = request_attributes(method, path)
                    if attrs is None or not allowed(granted, attrs) or allowed(left, attrs):
                        continue
                    kind = (attrs[0], attrs[2], attrs[3], attrs[4] != "")
                    if kind not in seen:
                        seen.add(kind)
                        served.append((method, path))
                self.assertTrue(served, "no call of the run needs %s" % (grant,))
                self.apply_roles(reduced)
                for method, path in served:
                    # RBAC changes are seen at once by kubesim; the wait
                    # only bounds the test
                    wait_until(lambda: self.replay(method, path) == 403, 10,
                               "a 403 for %s %s without %s" % (method, path, grant))
        finally:
            self.apply_roles(objs)
        # and with every grant back, those calls are not refused
        for method, path in calls[:50]:
            attrs = request_attributes(method, path)
            if attrs is not None and attrs[0] in ("get", "list"):
                self.assertNotEqual(self.replay(method, path), 403, "%s %s" % (method, path))


IPJ_OVERLAY = os.path.join(MANIFESTS, "overlays", "imagepulljob")
IPJ_ROLE = "ota-prepull-controller-imagepulljobs"


class ControllerRbacImagePullJob(ControllerRbac):
    NODES = 2
    CONTROLLER_ARGS = ("--imagepulljobs=true",)

    @classmethod
    def rbac(cls):
        # the overlay's RBAC, and our CRD before the controller lists it
        path = os.path.relpath(IPJ_OVERLAY, os.path.dirname(MANIFESTS))
        return ota_rbac.rendered(path) + ota_rbac.rendered(path, ("CustomResourceDefinition",))

    def ipj(self, name, spec, finalizers=()):
        body = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "ImagePullJob",
                "metadata": {"name": name, "namespace": self.ns}, "spec": spec}
        if finalizers:
            body["metadata"]["finalizers"] = list(finalizers)
        return self.sim.call("POST", "/apis/apps.kruise.io/v1alpha1/namespaces/%s/imagepulljobs" % self.ns, body)

    def ipj_status(self, name):
        try:
            obj = self.sim.call("GET", "/apis/apps.kruise.io/v1alpha1/namespaces/%s/imagepulljobs/%s"
                                % (self.ns, name), retry=False, ok=(200,))
        except ApiError as e:
            if e.status == 404:
                return None
            raise
        return obj.get("status") or {}

    def test_every_call_granted_every_grant_used(self):
        objs = render(IPJ_OVERLAY)
        granted = subject_rules(objs, NS, "ota-controller")
        role_only = subject_rules([o for o in objs if o["metadata"].get("name") == IPJ_ROLE], NS,
                                  "ota-controller")
        self.assertTrue(role_only)
        # one that completes, with Kruise's finalizer, and goes by its TTL
        self.ipj("done", {"image": FRESH[1], "selector": {"names": ["node-1"]},
                          "completionPolicy": {"type": "Always", "ttlSecondsAfterFinished": 1}},
                 finalizers=["apps.kruise.io/deletion-protection"])
        # one by podSelector (the pods of a DaemonSet, in the job's
        # namespace) whose image is not there: its node is given up
        self.make_ds(AGENT + "v1", name="sel", nodes=["node-2"])
        self.ipj("bad", {"image": MISSING, "podSelector": {"matchLabels": {"app": "sel"}},
                         "completionPolicy": {"type": "Always"}})
        wait_until(lambda: (self.ipj_status("bad") or {}).get("failed") == 1, 120, "the missing image failed")
        wait_until(lambda: self.ipj_status("done") is None, 120, "the completed job deleted by its TTL")
        self.assertEqual(self.ctl.stop(), 0)
        calls, used, denied = self.judged_calls(granted)
        self.assertEqual(denied, [], "calls the RBAC of overlays/imagepulljob would refuse")
        self.assertEqual(unused_grants(role_only, used), [], "granted by %s but never used" % IPJ_ROLE)
        kinds = {(a[0], a[2] + ("/" + a[3] if a[3] else "")) for a in used}
        for k in [("list", "imagepulljobs"), ("watch", "imagepulljobs"), ("patch", "imagepulljobs/status"),
                  ("patch", "imagepulljobs"), ("delete", "imagepulljobs"), ("patch", "jobs"),
                  ("list", "pods"), ("create", "jobs")]:
            self.assertIn(k, kinds)
        refused = ["%s %s" % (e["method"], e["path"]) for e in self.ctl.proxy.entries() if e["status"] == 403]
        self.assertEqual(refused, [], "calls kubesim refused with the rendered RBAC")
        self.each_grant_needed(objs, calls, role=IPJ_ROLE)


IC_OVERLAY = os.path.join(MANIFESTS, "overlays", "imagecache")
IC_ROLE = "ota-prepull-controller-imagecaches"
IC_API = "/apis/kubefledged.io/v1alpha2"
IC_UPSTREAM_CRD = os.path.join(os.environ.get("OTA_UPSTREAM_KUBEFLEDGED") or os.path.join(
    os.path.dirname(os.path.dirname(MANIFESTS)), "shared", "upstream", "kube-fledged"), "kubefledged-crd.yaml")


class ControllerRbacImageCache(ControllerRbac):
    """What manifests/components/imagecache adds: the render of
    overlays/imagecache applied, our CRD (with /status) installed, and
    ImageCaches run to each kind of write: one with a missing image (its
    status by /status patches, its record and annotations by metadata
    patches, the kubelet's words kept on its Jobs by Job patches); then
    kube-fledged's CRD (no /status) applied over ours, and a cache whose
    status is written by a PUT of the whole object (update).  Without
    kube-fledged's CRD beside the repository the update grant alone is
    left unexercised."""
    NODES = 2
    CONTROLLER_ARGS = ("--imagecaches=true", "--image-cache-refresh-frequency=0s", "--resync-period=2s")

    @classmethod
    def rbac(cls):
        path = os.path.relpath(IC_OVERLAY, os.path.dirname(MANIFESTS))
        return ota_rbac.rendered(path) + ota_rbac.rendered(path, ("CustomResourceDefinition",))

    def cache(self, name, images):
        body = {"apiVersion": "kubefledged.io/v1alpha2", "kind": "ImageCache",
                "metadata": {"name": name, "namespace": self.ns}, "spec": {"cacheSpec": [{"images": images}]}}
        return self.sim.call("POST", "%s/namespaces/%s/imagecaches" % (IC_API, self.ns), body)

    def ic_status(self, name):
        obj = self.sim.call("GET", "%s/namespaces/%s/imagecaches/%s" % (IC_API, self.ns, name), retry=False,
                            ok=(200,))
        return obj.get("status") or {}

    def test_every_call_granted_every_grant_used(self):
        objs = render(IC_OVERLAY)
        granted = subject_rules(objs, NS, "ota-controller")
        role_only = subject_rules([o for o in objs if o["metadata"].get("name") == IC_ROLE], NS, "ota-controller")
        self.assertTrue(role_only)
        self.cache("bad", [FRESH[2], MISSING])
        wait_until(lambda: self.ic_status("bad").get("status") == "Failed", 120, "the missing image failed")
        upstream = os.path.exists(IC_UPSTREAM_CRD)
        if upstream:
            out = self.sim.kubectl("admin", "apply", "-f", IC_UPSTREAM_CRD)
            self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
            self.cache("put", [FRESH[3]])
            wait_until(lambda: self.ic_status("put").get("status") == "Succeeded", 120,
                       "a cache written by PUT succeeded")
        self.assertEqual(self.ctl.stop(), 0)
        calls, used, denied = self.judged_calls(granted)
        self.assertEqual(denied, [], "calls the RBAC of overlays/imagecache would refuse")
        unused = unused_grants(role_only, used)
        self.assertEqual(unused, [] if upstream else [("", "kubefledged.io", "imagecaches", "update", ())],
                         "granted by %s but never used" % IC_ROLE)
        kinds = {(a[0], a[2] + ("/" + a[3] if a[3] else "")) for a in used}
        want = [("list", "imagecaches"), ("watch", "imagecaches"), ("patch", "imagecaches/status"),
                ("patch", "imagecaches"), ("patch", "jobs"), ("create", "jobs"), ("create", "events")]
        for k in want + ([("update", "imagecaches")] if upstream else []):
            self.assertIn(k, kinds)
        refused = ["%s %s" % (e["method"], e["path"]) for e in self.ctl.proxy.entries() if e["status"] == 403]
        self.assertEqual(refused, [], "calls kubesim refused with the rendered RBAC")
        if upstream:
            self.each_grant_needed(objs, calls, role=IC_ROLE)
