"""Least privilege, checked against what the controller really does.

ControllerRbac runs build/ota-controller against kubesim (the e2e harness:
kubesim with its simulated cluster, the controller behind the logging
proxy) through the flows that exercise each kind of call: a pre-pull that
succeeds, one that fails and its retry (which deletes the failed Job), and
a SIGTERM (which releases the Lease).  Each request the controller made is
turned into the authorizer's attributes and checked against the RBAC
rendered from manifests/ for system:serviceaccount:ota-system:ota-controller;
then every verb of every rule must have been used at least once.

RbacEvaluator is the table for the evaluator itself (manifests.py).
"""
import os
import time
import unittest

from harness import AGENT, FRESH, MISSING, Base as E2EBase, wait_until
from manifests import (MANIFESTS, NS, allowed, render, request_attributes, rule_allows, subject_rules,
                       unused_grants)


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
        calls = [(e["method"], e["path"]) for e in self.ctl.proxy.entries()]
        used, denied = [], []
        for method, path in calls:
            attrs = request_attributes(method, path)
            if attrs is None:
                continue  # /version and discovery: every authenticated user may
            used.append(attrs)
            if not allowed(granted, attrs):
                denied.append("%s %s -> %s" % (method, path, attrs))
        self.assertEqual(denied, [], "calls the RBAC in manifests/ would refuse")
        self.assertEqual(unused_grants(granted, used), [], "granted but never used")
        # and the flow did what it says: each kind of call is there
        kinds = {(a[0], a[2] + ("/" + a[3] if a[3] else "")) for a in used}
        for k in [("create", "jobs"), ("delete", "jobs"), ("patch", "pods/status"), ("create", "events"),
                  ("get", "nodes"), ("create", "leases"), ("update", "leases")]:
            self.assertIn(k, kinds)
