"""OpenYurt YurtHub v1.7 against the registered webhook (class YurtHubCompat).

YurtHub's OTA endpoints (pkg/yurthub/otaupdate/ota.go in openyurtio/openyurt,
v1.7) make two kinds of writes to the apiserver with the node's identity;
YurtHub below makes exactly those requests, in our own code:

- POST .../pods/{pod}/imagepull: GET the pod; refuse unless it is not being
  deleted, runs on this node and has PodNeedUpgrade True; then set
  PodImageReady {status False, no reason, message "controllerrevision: " +
  the hash in PodNeedUpgrade's message} in the conditions it read (appended
  when absent, replaced in place otherwise; a condition whose status does not
  change keeps its lastTransitionTime) and send the WHOLE conditions array
  as a JSON merge patch of pods/{pod}/status (fieldManager yurthub-ota), each
  condition as Go encodes it (lastProbeTime null, no reason).
- POST .../pods/{pod}/upgrade: the same checks, then the readiness check
  (PodImageReady absent, or True with the hash PodNeedUpgrade names), then
  DELETE the pod.
"""
import time
import urllib.parse

from harness import MISSING, PRELOADED, REG, ApiError, wait_until
from webhook_flow import NEED, READY, WebhookBase, cond, state_of

AUTO = "ota-prepull.openyurt.io/AutoPrePull"
SLOW = [REG + "/e2e/yurthub-%d:1.0" % i for i in range(1, 4)]  # 300 MB: 30 simulated seconds
SLOWER = REG + "/e2e/yurthub-slower:1.0"  # 3 GB: 300 simulated seconds, 10 s
PREFIX = "controllerrevision: "


class YurtHub:
    """The apiserver writes of YurtHub v1.7's imagepull and upgrade, as node."""

    def __init__(self, sim, node):
        self.sim, self.node = sim, node

    def path(self, ns, name):
        return "/api/v1/namespaces/%s/pods/%s" % (ns, name)

    def get(self, ns, name):
        return self.sim.get(self.path(ns, name), who=self.node)

    def check_pod_status(self, pod):
        """None when YurtHub goes on, else why it answers 403."""
        if pod["metadata"].get("deletionTimestamp"):
            return "pod is deleting"
        if pod["spec"].get("nodeName") != self.node:
            return "pod runs on %s" % pod["spec"].get("nodeName")
        need = cond(pod, NEED)
        if not need or need.get("status") != "True":
            return "update status is False"
        return None

    @staticmethod
    def next_hash(pod):
        need = cond(pod, NEED) or {}
        m = need.get("message", "")
        return m[len(PREFIX):] if m.startswith(PREFIX) else m

    def check_image_ready(self, pod):
        """YurtHub's readiness check before an upgrade: None when it passes."""
        c = cond(pod, READY)
        if c is None:
            return None
        if c.get("status") != "True":
            return "image is not ready, reason: %s" % c.get("reason", "")
        m = c.get("message", "")
        if (m[len(PREFIX):] if m.startswith(PREFIX) else m) != self.next_hash(pod):
            return "image is not ready, message: %s" % m
        return None

    @staticmethod
    def go_condition(c):
        """A PodCondition as encoding/json writes it: zero times are null,
        empty reason and message are left out."""
        out = {"type": c["type"], "status": c["status"], "lastProbeTime": c.get("lastProbeTime"),
               "lastTransitionTime": c.get("lastTransitionTime")}
        for k in ("reason", "message"):
            if c.get(k):
                out[k] = c[k]
        return out

    def imagepull(self, ns, name, transition_time=None):
        """Returns (HTTP status YurtHub answers, the patch it sent or None)."""
        pod = self.get(ns, name)
        if self.check_pod_status(pod):
            return 403, None
        conds = [dict(c) for c in pod["status"].get("conditions") or []]
        new = {"type": READY, "status": "False", "lastProbeTime": None, "lastTransitionTime": transition_time,
               "message": PREFIX + self.next_hash(pod)}
        for i, c in enumerate(conds):
            if c["type"] == READY:
                if c.get("status") == new["status"]:
                    new["lastTransitionTime"] = c.get("lastTransitionTime")
                conds[i] = new
                break
        else:
            conds.append(new)
        patch = {"status": {"conditions": [self.go_condition(c) for c in conds]}}
        self.sim.call("PATCH", self.path(ns, name) + "/status?" + urllib.parse.urlencode(
            {"fieldManager": "yurthub-ota"}), patch, who=self.node, ctype="application/merge-patch+json",
            retry=False)
        return 200, patch

    def upgrade(self, ns, name):
        """Returns the HTTP status YurtHub answers (200 after the DELETE)."""
        pod = self.get(ns, name)
        if self.check_pod_status(pod) or self.check_image_ready(pod):
            return 403
        self.sim.call("DELETE", self.path(ns, name), who=self.node, retry=False)
        return 200


class YurtHubCompat(WebhookBase):
    NODES = 3
    REGISTRY = {"includeDefaults": True,
                "images": [{"image": PRELOADED, "size": 30_000_000}] +
                          [{"image": i, "size": 300_000_000} for i in SLOW] +
                          [{"image": SLOWER, "size": 3_000_000_000}],
                "preloadedImages": ["registry.k8s.io/pause:3.10", PRELOADED]}

    def replacement(self, name, old, timeout=60):
        node = old["spec"]["nodeName"]
        return wait_until(lambda: [p for p in self.pods(name) if p["spec"]["nodeName"] == node
                                   and p["metadata"]["uid"] != old["metadata"]["uid"]
                                   and (cond(p, "Ready") or {}).get("status") == "True"], timeout,
                          "the replacement of %s, Ready" % old["metadata"]["name"])[0]

    def kubelet_events(self, pod):
        return [(e["reason"], e["message"]) for e in self.events(pod)
                if e.get("source", {}).get("component") == "kubelet"]

    def test_imagepull_then_upgrade(self):
        pods = self.apply_ds("agent", PRELOADED, nodes=["node-1", "node-2"])
        h = self.kubectl_set_image("agent", SLOW[0])
        self.wait_need_upgrade(pods, "True", h)
        n1, n2 = pods
        hub1 = YurtHub(self.sim, "node-1")
        # before any pre-pull, YurtHub v1.7 would upgrade (no PodImageReady)
        self.assertIsNone(hub1.check_image_ready(self.pod(n1["metadata"]["name"])))

        # imagepull, lastTransitionTime null: accepted, stamped by the
        # mutating webhook, and the kubelet's conditions and PodNeedUpgrade kept
        kubelet_types = sorted(c["type"] for c in self.pod(n1["metadata"]["name"])["status"]["conditions"])
        status, patch = hub1.imagepull(self.ns, n1["metadata"]["name"])
        self.assertEqual(status, 200)
        sent = [c for c in patch["status"]["conditions"] if c["type"] == READY]
        self.assertEqual(sent, [{"type": READY, "status": "False", "lastProbeTime": None,
                                 "lastTransitionTime": None, "message": PREFIX + h}])
        now = self.pod(n1["metadata"]["name"])
        c = cond(now, READY)
        self.assertEqual((c["status"], c.get("reason"), c["message"]), ("False", "WaitPullImage", PREFIX + h))
        self.assertTrue(c.get("lastTransitionTime"), c)
        self.assertEqual(sorted(c["type"] for c in now["status"]["conditions"]), sorted(kubelet_types + [READY]))
        self.assertEqual(state_of(now), "Pulling")
        # while it pulls, YurtHub's readiness check refuses the upgrade
        self.assertIsNotNone(hub1.check_image_ready(now))
        self.assertEqual(hub1.upgrade(self.ns, n1["metadata"]["name"]), 403)

        # our pre-pull completes, and YurtHub's readiness check passes
        ready = self.wait_state(n1, "Ready")
        self.assertIsNone(hub1.check_image_ready(ready))
        self.assertEqual(cond(ready, READY)["message"], PREFIX + hub1.next_hash(ready))

        # upgrade: the pod is deleted, the replacement runs h, and its kubelet
        # did not pull: the image was already there
        self.assertEqual(hub1.upgrade(self.ns, n1["metadata"]["name"]), 200)
        fresh = self.replacement("agent", n1)
        self.assertEqual(fresh["metadata"]["labels"]["controller-revision-hash"], h)
        events = self.kubelet_events(fresh)
        self.assertIn(("Pulled", 'Container image "%s" already present on machine' % SLOW[0]), events)
        self.assertNotIn("Pulling", [r for r, _ in events])

        # the same write with a time (a PodImageReady that is new gets "now"
        # from YurtHub's UpdatePodCondition) works the same way
        hub2 = YurtHub(self.sim, "node-2")
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.assertEqual(hub2.imagepull(self.ns, n2["metadata"]["name"], stamp)[0], 200)
        self.assertEqual(self.state(n2), "Pulling")
        self.assertIsNone(hub2.check_image_ready(self.wait_state(n2, "Ready")))

    def test_imagepull_on_another_nodes_pod(self):
        """Node-1's credentials on node-2's pod: the apiserver's Node
        authorizer refuses the read YurtHub starts with; the merge patch sent
        anyway (a YurtHub that had the pod and skipped its check) is refused
        by NodeRestriction, before the webhook (whose own-node-only rule says
        the same, for clusters without NodeRestriction)."""
        pods = self.apply_ds("agent", PRELOADED, nodes=["node-2"])
        h = self.kubectl_set_image("agent", SLOW[1])
        self.wait_need_upgrade(pods, "True", h)
        pod = pods[0]
        name = pod["metadata"]["name"]
        hub = YurtHub(self.sim, "node-1")
        with self.assertRaises(ApiError) as e:
            hub.imagepull(self.ns, name)
        self.assertEqual(e.exception.status, 403)
        self.assertEqual(e.exception.body["message"],
                         'pods "%s" is forbidden: User "system:node:node-1" cannot get resource "pods" in API '
                         'group "" in the namespace "%s": no relationship found between node \'node-1\' and '
                         'this object' % (name, self.ns))
        hub.get = lambda ns, n: self.sim.get(hub.path(ns, n))  # the pod, read as the admin
        hub.check_pod_status = lambda p: None
        with self.assertRaises(ApiError) as e:
            hub.imagepull(self.ns, name)
        self.assertEqual(e.exception.status, 403)
        self.assertEqual(e.exception.body["message"],
                         'pods "%s" is forbidden: node "node-1" can only update pod status for pods with '
                         'spec.nodeName set to itself' % name)
        self.assertEqual(self.state(pod), "PendingUpgrade")

    def test_imagepull_again_after_a_failure(self):
        """After PullImageFail, YurtHub's retry keeps the old lastTransitionTime
        (the status stays False) and drops the reason: a new request all the
        same, stamped afresh, so it gets a Job of its own."""
        pods = self.apply_ds("broken", PRELOADED, nodes=["node-3"], timeout=30)
        h = self.kubectl_set_image("broken", MISSING)
        self.wait_need_upgrade(pods, "True", h)
        pod = pods[0]
        hub = YurtHub(self.sim, "node-3")
        self.assertEqual(hub.imagepull(self.ns, pod["metadata"]["name"])[0], 200)
        failed = self.wait_state(pod, "Failed")
        self.assertIsNotNone(hub.check_image_ready(failed))
        self.assertEqual(hub.upgrade(self.ns, pod["metadata"]["name"]), 403)
        old_time = cond(failed, READY)["lastTransitionTime"]
        # at once, in the second of the failure, maybe of the first request
        # too: request times have whole seconds, and the webhook stamps the
        # retry after the failure it follows
        status, patch = hub.imagepull(self.ns, pod["metadata"]["name"])
        self.assertEqual(status, 200)
        sent = [c for c in patch["status"]["conditions"] if c["type"] == READY][0]
        self.assertEqual((sent["lastTransitionTime"], "reason" in sent), (old_time, False))
        self.assertEqual(self.state(pod), "Pulling")
        self.wait_state(pod, "Failed")
        self.assertEqual(len(self.tracker.jobs_of(pod["metadata"]["uid"])), 2)
        self.assert_no_duplicate_jobs()

    def test_imagepull_repeated_while_pulling(self):
        """YurtHub's imagepull repeated while its pull runs (a node agent
        retrying, an operator pressing again): the status stays False, so
        YurtHub keeps the stored lastTransitionTime and drops the reason.
        The webhook keeps the stored time, so the request names the same Job:
        the running pull goes on, and one Job pulls the image once."""
        pods = self.apply_ds("repeat", PRELOADED, nodes=["node-3"])
        h = self.kubectl_set_image("repeat", SLOWER)
        self.wait_need_upgrade(pods, "True", h)
        pod = pods[0]
        name, uid = pod["metadata"]["name"], pod["metadata"]["uid"]
        hub = YurtHub(self.sim, "node-3")
        self.assertEqual(hub.imagepull(self.ns, name)[0], 200)
        first = cond(self.pod(name), READY)["lastTransitionTime"]
        job = wait_until(lambda: self.tracker.jobs_of(uid), 20, "the Job")[0]
        for _ in range(3):
            time.sleep(1.1)  # a new second each time: a fresh stamp would differ
            self.assertEqual(hub.imagepull(self.ns, name)[0], 200)
            c = cond(self.pod(name), READY)
            self.assertEqual((c["lastTransitionTime"], c.get("reason")), (first, "WaitPullImage"))
        self.wait_state(pod, "Ready", timeout=60)
        jobs = self.tracker.jobs_of(uid)
        self.assertEqual([j["metadata"]["uid"] for j in jobs], [job["metadata"]["uid"]],
                         "the running pull was replaced: %s" % [j["metadata"]["name"] for j in jobs])

    def test_imagepull_on_an_auto_marked_pod(self):
        """Issue 22: a pod whose DaemonSet opted in to automatic pre-pull
        carries AutoPrePull (the controller's; written here as the admin).
        YurtHub's merge patch rewrites the whole conditions array from its
        cache, which may predate the mark: a routine write that drops it gets
        it restored, and YurtHub's imagepull from such a cache is a node
        user's request as ever, with AutoPrePull turned False/NodeUserRequest
        in the same write (the pull is the node user's now). The pull is
        served, YurtHub's readiness check passes, and its upgrade goes."""
        pods = self.apply_ds("marked", PRELOADED, nodes=["node-2"])
        h = self.kubectl_set_image("marked", SLOW[2])
        self.wait_need_upgrade(pods, "True", h)
        pod = pods[0]
        name = pod["metadata"]["name"]
        mark = {"type": AUTO, "status": "True", "reason": "DaemonSetOptedIn", "message": PREFIX + h}
        out = self.status_patch("admin", pod, [mark])
        self.assertEqual(out.returncode, 0, out.stderr)
        marked = self.pod(name)
        self.assertEqual({k: cond(marked, AUTO).get(k) for k in mark}, mark)

        # a routine whole-array write from a cache without the mark, as
        # YurtHub sends it: the webhook keeps the mark
        hub = YurtHub(self.sim, "node-2")
        stale = [hub.go_condition(c) for c in marked["status"]["conditions"] if c["type"] != AUTO]
        self.sim.call("PATCH", hub.path(self.ns, name) + "/status?fieldManager=yurthub-ota",
                      {"status": {"conditions": stale}}, who="node-2",
                      ctype="application/merge-patch+json", retry=False)
        kept = self.pod(name)
        self.assertEqual({k: cond(kept, AUTO).get(k) for k in mark}, mark)
        self.assertEqual(state_of(kept), "PendingUpgrade")

        # imagepull from the same stale cache: the request goes through and
        # takes the pull over
        real_get = hub.get
        hub.get = lambda ns, n: (lambda p: dict(p, status=dict(p["status"], conditions=[
            c for c in p["status"]["conditions"] if c["type"] != AUTO])))(real_get(ns, n))
        status, patch = hub.imagepull(self.ns, name)
        self.assertEqual(status, 200)
        self.assertNotIn(AUTO, [c["type"] for c in patch["status"]["conditions"]])
        now = self.pod(name)
        self.assertEqual(state_of(now), "Pulling")
        taken = cond(now, AUTO)
        self.assertEqual((taken["status"], taken.get("reason"), taken.get("message")),
                         ("False", "NodeUserRequest", PREFIX + h))
        self.assertTrue(taken.get("lastTransitionTime"), taken)
        ready = self.wait_state(pod, "Ready", timeout=60)
        self.assertIsNone(hub.check_image_ready(ready))
        self.assertEqual(hub.upgrade(self.ns, name), 200)
        fresh = self.replacement("marked", pod)
        self.assertEqual(fresh["metadata"]["labels"]["controller-revision-hash"], h)
        self.assertIn(("Pulled", 'Container image "%s" already present on machine' % SLOW[2]),
                      self.kubelet_events(fresh))
