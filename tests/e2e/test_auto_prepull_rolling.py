"""Automatic pre-pull of a RollingUpdate DaemonSet's new revision (issue 22 §1).

Class AutoPrePullRolling (12 nodes, a slow image): a DaemonSet that is not
OTA (RollingUpdate, maxUnavailable 1: kubesim's DaemonSet controller
replaces its pods itself) opted in with apps.kruise.io/image-predownload-
parallelism "4".  When its template changes, the controller pulls the new
revision's images on the nodes as it would for an OTA DaemonSet, while the
rollout goes on without waiting for it:

- the rollout completes (updatedNumberScheduled == desiredNumberScheduled,
  every pod Ready): nothing holds it back;
- never more than 4 automatic pulls at once (the pods/status writes replayed
  in order from a watch; a pod the rollout is deleting no longer counts:
  its Job goes with it);
- each node the rollout reached after its automatic pull had finished
  started its new pod with the kubelet's "already present on machine"
  (Pulled, no Pulling): it had nothing left to download.  At least one such
  node is required, or the test would prove nothing.
"""
import time

from harness import REG, REGISTRY_CONFIG, log, wait_until
from test_auto_prepull import AUTO, PARALLELISM, AutoBase, PodReplay, auto_running
from webhook_flow import cond

HASH = "controller-revision-hash"
# 3 GB at the default 10 MB/s: 300 simulated seconds, 10 real ones: a node
# the rollout reaches first is slower than one pulled ahead
ROLLING_SLOW = REG + "/e2e/rolling-slow:1.0"


class RollingReplay(PodReplay):
    """PodReplay, and when (monotonic, as the watch saw them) each node's
    automatic pull of h succeeded and its pod at h was created.  A pod being
    deleted (the rollout reached it) is not counted as running."""

    def __init__(self, sim, ns, h):
        super().__init__(sim, ns)
        self.h = h
        self.at_max = []      # the pods running when the most were
        self.pulled_at = {}   # node -> first time an old pod there said PullImageSuccess for h
        self.created_at = {}  # node -> first time a pod at h there was seen

    def note(self, kind, obj):
        now = time.monotonic()
        with self.lock:
            uid = obj["metadata"]["uid"]
            if kind == "DELETED":
                self.pods.pop(uid, None)
            else:
                self.pods[uid] = obj
            running = [p for p in self.pods.values()
                       if auto_running(p) and not p["metadata"].get("deletionTimestamp")]
            if len(running) > self.max_running:
                self.max_running = len(running)
                self.at_max = [(p["metadata"]["name"], p["spec"].get("nodeName"), p["metadata"]["resourceVersion"])
                               for p in running]
            if kind == "DELETED" or self.h is None:
                return
            node = obj["spec"].get("nodeName")
            if obj["metadata"].get("labels", {}).get(HASH) == self.h:
                self.created_at.setdefault(node, now)
                return
            a, r = cond(obj, AUTO), cond(obj, "PodImageReady")
            msg = "controllerrevision: " + self.h
            if (a and a.get("status") == "True" and a.get("message") == msg and r
                    and r.get("reason") == "PullImageSuccess" and r.get("message") == msg):
                self.pulled_at.setdefault(node, now)


class AutoPrePullRolling(AutoBase):
    NODES = 12
    MAX_PULLS = 10
    REGISTRY = dict(REGISTRY_CONFIG, images=REGISTRY_CONFIG["images"]
                    + [{"image": ROLLING_SLOW, "size": 3_000_000_000}])

    def rolling_ds(self, name, image, annotations):
        """A RollingUpdate DaemonSet (maxUnavailable 1), not OTA, as admin;
        its running pods."""
        ds = {"apiVersion": "apps/v1", "kind": "DaemonSet",
              "metadata": {"name": name, "namespace": self.ns, "annotations": annotations},
              "spec": {"selector": {"matchLabels": {"app": name}},
                       "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
                       "template": {"metadata": {"labels": {"app": name}},
                                    "spec": {"containers": [{"name": "main", "image": image}]}}}}
        self.sim.call("POST", "/apis/apps/v1/namespaces/%s/daemonsets" % self.ns, ds)
        return wait_until(lambda: self.running_pods(name, self.NODES), 60, "%d running pods" % self.NODES)

    def rolled_out(self, name):
        """The DaemonSet's rollout is complete: every pod at the newest
        revision and Ready (as `kubectl rollout status` reads it)."""
        st = self.sim.get("/apis/apps/v1/namespaces/%s/daemonsets/%s" % (self.ns, name)).get("status") or {}
        want = st.get("desiredNumberScheduled")
        return (want == self.NODES and st.get("updatedNumberScheduled") == want
                and st.get("numberReady") == want and st)

    def test_rollout_not_held_and_nodes_pulled_ahead(self):
        old = self.rolling_ds("agent", REG + "/e2e/app-01:1.0", {PARALLELISM: "4"})
        # the watch starts before the new revision: every write is seen
        replay = RollingReplay(self.sim, self.ns, None)
        replay.start()
        self.assertTrue(replay.synced.wait(30), "pod watch did not sync")
        self.addCleanup(setattr, replay, "stopping", True)
        h = self.kubectl_set_image("agent", ROLLING_SLOW)
        with replay.lock:
            replay.h = h
            # nothing of h can have been pulled before h was known here;
            # a pod at h created before this line is a node reached first
            for p in replay.pods.values():
                if p["metadata"].get("labels", {}).get(HASH) == h:
                    replay.created_at.setdefault(p["spec"]["nodeName"], 0.0)
        st = wait_until(lambda: self.rolled_out("agent"), 240, "the rollout complete")
        log("rollout complete", st)
        log("max automatic pulls at once", replay.max_running, replay.at_max)
        self.assertLessEqual(replay.max_running, 4, "more than 4 automatic pulls at once: %s" % replay.at_max)
        self.assertGreaterEqual(replay.max_running, 2, "the parallelism was never used")
        # every old pod was replaced
        olds = {p["metadata"]["uid"] for p in old}
        pods = self.pods("agent")
        self.assertEqual(len(pods), self.NODES)
        for p in pods:
            self.assertNotIn(p["metadata"]["uid"], olds)
            self.assertEqual(p["metadata"]["labels"][HASH], h)
        with replay.lock:
            ahead = sorted(n for n, t in replay.pulled_at.items()
                           if n in replay.created_at and t < replay.created_at[n])
            log("pulled ahead of the rollout:", ahead, "reached first:",
                sorted(n for n in replay.created_at if n not in ahead))
        self.assertGreaterEqual(len(ahead), 1, "no node was pulled before the rollout reached it")
        for node in ahead:
            pod = [p for p in pods if p["spec"]["nodeName"] == node][0]
            events = [(e["reason"], e["message"]) for e in self.events(pod)
                      if e.get("source", {}).get("component") == "kubelet"]
            self.assertIn(("Pulled", 'Container image "%s" already present on machine' % ROLLING_SLOW), events,
                          "%s: %s" % (node, events))
            self.assertNotIn("Pulling", [r for r, _ in events], "%s: %s" % (node, events))
        # the DaemonSet's owner reads it
        started = wait_until(lambda: self.ds_events("agent", "AutoPrePullStarted"), 30, "AutoPrePullStarted")
        self.assertIn("at most 4 at once", started[0]["message"])
        # the new pods are Current: PodNeedUpgrade False, no automatic mark
        self.wait_need_upgrade(pods, "False", h)
        for p in pods:
            self.assertIsNone(cond(self.pod(p["metadata"]["name"]), AUTO))

    def test_never_opted_in_costs_nothing(self):
        """A RollingUpdate DaemonSet without the annotation: its rollout
        gets no write from us (no condition of ours on any pod, no Job)."""
        self.rolling_ds("plain", REG + "/e2e/app-02:1.0", {})
        self.kubectl_set_image("plain", REG + "/e2e/app-03:1.0")
        wait_until(lambda: self.rolled_out("plain"), 120, "the rollout complete")
        ours = ("PodNeedUpgrade", "PodImageReady", AUTO)
        for p in self.pods("plain"):
            self.assertEqual([c["type"] for c in p["status"].get("conditions") or [] if c["type"] in ours], [])
        self.assertEqual(self.live_jobs(), [])
