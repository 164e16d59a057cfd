"""What the registered webhook costs the kubelet, and what an outage blocks
(class WebhookOutage).

The pods/status webhooks carry matchConditions that fire only when an OTA
condition changes, so the kubelet's routine status writes of OTA pods never
reach the webhook and keep working while it is down. With it down, the
validating pods/status webhook (failurePolicy Fail) refuses OTA condition
changes, while DaemonSet writes on an OTA DaemonSet (failurePolicy Ignore)
go through: an admin can always label or roll back.
"""
import json
import urllib.parse

from harness import PRELOADED, REG, wait_until
from webhook_flow import NEED, WebhookBase, cond

NEW = REG + "/e2e/outage:1.0"


class WebhookOutage(WebhookBase):
    USER_ROLE = True  # status writes with kubectl are user's (webhook_flow)
    NODES = 2
    REGISTRY = {"includeDefaults": True,
                "images": [{"image": PRELOADED, "size": 30_000_000}, {"image": NEW, "size": 50_000_000}],
                "preloadedImages": ["registry.k8s.io/pause:3.10", PRELOADED]}

    def restarts(self, name):
        """{pod: restartCount}: each restart is the kubelet writing pods/status."""
        q = urllib.parse.quote("app=" + name)
        pods = self.sim.get("/api/v1/namespaces/%s/pods?labelSelector=%s" % (self.ns, q))["items"]
        return {p["metadata"]["name"]: sum(c.get("restartCount", 0) for c in p["status"].get("containerStatuses")
                                           or []) for p in pods}

    def wait_restarts(self, name, base, more, what):
        """Until every pod restarted `more` times since base."""
        return wait_until(lambda: (lambda now: now if all(now.get(k, 0) >= v + more for k, v in base.items())
                                   else None)(self.restarts(name)), 60, what)

    def test_kubelet_writes_skip_the_webhook_and_survive_its_outage(self):
        # an OTA DaemonSet whose container exits every 5 simulated seconds: its
        # kubelet writes pods/status on every exit and restart
        pods = self.apply_ds("agent", PRELOADED, command=["sleep", "5"])
        h = self.kubectl_set_image("agent", NEW)
        self.wait_need_upgrade(pods, "True", h)
        status_writes = self.webhook.requests()
        base = self.restarts("agent")
        self.wait_restarts("agent", base, 2, "two restarts of every pod, webhook up")
        # the pods kept their OTA conditions, and the webhook saw none of it
        for p in pods:
            self.assertEqual(cond(self.pod(p["metadata"]["name"]), NEED)["status"], "True")
        self.assertEqual(self.webhook.requests(), status_writes)

        # the webhook goes down
        self.assertEqual(self.webhook.stop(), 0)
        try:
            base = self.restarts("agent")
            self.wait_restarts("agent", base, 2, "two restarts of every pod, webhook down")
            # a routine status write (no OTA condition changes) works
            pod = self.on_node(pods, "node-1")
            out = self.status_patch("user", pod, [{"type": "example.com/Probe", "status": "True"}])
            self.assertEqual(out.returncode, 0, out.stderr)
            # an OTA condition change is refused (failurePolicy Fail) ...
            out = self.status_patch("user", pod, [self.pull_request(h)])
            self.assertEqual(out.returncode, 1)
            self.assertTrue(out.stderr.startswith(
                'Error from server (InternalError): Internal error occurred: failed calling webhook '
                '"podstatus.validate.ota-prepull.openyurt.io": '), out.stderr)
            self.assertEqual(self.state(pod), "PendingUpgrade")
            # ... and so is the controller's: the admin rolls the DaemonSet back,
            # which a label and the old image on an OTA DaemonSet may do
            self.assertEqual(self.kubectl_ok("admin", "label", "daemonset/agent", "team=edge"),
                             "daemonset.apps/agent labeled\n")
            self.assertEqual(self.kubectl_ok("admin", "set", "image", "daemonset/agent", "main=" + PRELOADED),
                             "daemonset.apps/agent image updated\n")
            ds = self.sim.get("/apis/apps/v1/namespaces/%s/daemonsets/agent" % self.ns)
            self.assertEqual((ds["metadata"]["labels"]["team"], ds["spec"]["template"]["spec"]["containers"][0]
                              ["image"]), ("edge", PRELOADED))
            h0 = wait_until(lambda: (lambda x: x != h and x)(self.newest_hash("agent")), 30, "the rollback")
            self.assertEqual(h0, pods[0]["metadata"]["labels"]["controller-revision-hash"])
        finally:
            self.webhook.start()
        # back up: the controller's PodNeedUpgrade False goes through at last
        self.wait_need_upgrade(pods, "False", h0, timeout=60)
        for p in pods:
            self.assertEqual(self.state(p), "Current")

    def test_a_daemonset_denial_needs_the_webhook(self):
        """With the webhook up, a bad OTA DaemonSet is denied; the same write
        while it is down goes through (Ignore): the outage costs validation,
        never an admin's write."""
        ds = {"apiVersion": "apps/v1", "kind": "DaemonSet",
              "metadata": {"name": "odd", "annotations": {"apps.openyurt.io/update-strategy": "Sometimes"}},
              "spec": {"selector": {"matchLabels": {"app": "odd"}},
                       "template": {"metadata": {"labels": {"app": "odd"}},
                                    "spec": {"containers": [{"name": "main", "image": PRELOADED}]}}}}
        out = self.kubectl("admin", "apply", "-f", "-", stdin=json.dumps(ds))
        self.assertEqual(out.returncode, 1)
        self.assertIn('admission webhook "daemonsets.validate.ota-prepull.openyurt.io" denied the request: ',
                      out.stderr)
        self.assertIn("rule: unknown-update-strategy", out.stderr)
        self.assertEqual(self.webhook.stop(), 0)
        try:
            self.assertEqual(self.kubectl_ok("admin", "apply", "-f", "-", stdin=json.dumps(ds)),
                             "daemonset.apps/odd created\n")
        finally:
            self.webhook.start()
