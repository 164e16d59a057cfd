"""The simulated DaemonSet controller: pods per matching node, ControllerRevisions,
OnDelete recreation at the newest revision, RollingUpdate, status counters."""

import copy
import unittest

from kubesim.sim.testing import SimCluster, condition, wait_for

NS = "/apis/apps/v1/namespaces/default"
PODS = "/api/v1/namespaces/default/pods"
CONFIG = {"images": [{"image": "example.com/agent:v1", "size": 1_000_000},
                     {"image": "example.com/agent:v2", "size": 1_000_000},
                     {"image": "example.com/agent:v3", "size": 1_000_000}],
          "nodes": {"node-2": {"labels": {"edge": "true"}},
                    "node-3": {"labels": {"edge": "true"},
                               "taints": [{"key": "dedicated", "value": "edge",
                                           "effect": "NoSchedule"}]}}}


def daemonset(name="agent", image="example.com/agent:v1", strategy="OnDelete", **spec):
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": name}},
                     "updateStrategy": {"type": strategy},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": dict({"containers": [{"name": "agent",
                                                                "image": image}]}, **spec)}}}


class DaemonSetTest(unittest.TestCase):
    LIGHT = False      # test_sim_light.py runs these with the light kubelets
    def setUp(self):
        self.sim = SimCluster(nodes=["node-1", "node-2", "node-3"], scale=100, config=CONFIG, light=self.LIGHT)
        self.addCleanup(self.sim.close)

    def pods(self, name="agent", live=True):
        return [p for p in self.sim.items(PODS, labelSelector="app=" + name)
                if not (live and p["metadata"].get("deletionTimestamp"))]

    def ready_pods(self, n, name="agent", hash_=None):
        def check():
            pods = self.pods(name)
            if len(pods) != n or not all((condition(p, "Ready") or {}).get("status") == "True"
                                         for p in pods):
                return None
            if hash_ and any(p["metadata"]["labels"]["controller-revision-hash"] != hash_
                             for p in pods):
                return None
            return pods
        return wait_for(check, 10, "%d ready %s pods" % (n, name))

    def revisions(self, name="agent"):
        return sorted(self.sim.items(NS + "/controllerrevisions"), key=lambda r: r["revision"])

    def set_image(self, image, name="agent"):
        code, out = self.sim.call("PATCH", NS + "/daemonsets/" + name,
                                  {"spec": {"template": {"spec": {"containers": [
                                      {"name": "agent", "image": image}]}}}},
                                  content_type="application/strategic-merge-patch+json")
        self.assertEqual(code, 200, out)

    def test_one_pod_per_node_with_revision_and_owner(self):
        ds = self.sim.create(NS + "/daemonsets", daemonset())
        pods = self.ready_pods(2)               # node-3's taint is not tolerated
        self.assertEqual(sorted(p["spec"]["nodeName"] for p in pods), ["node-1", "node-2"])
        revs = self.revisions()
        self.assertEqual(len(revs), 1)
        rev = revs[0]
        h = rev["metadata"]["labels"]["controller-revision-hash"]
        self.assertEqual(rev["revision"], 1)
        self.assertEqual(rev["metadata"]["name"], "agent-" + h)
        self.assertEqual(rev["metadata"]["ownerReferences"][0]["uid"], ds["metadata"]["uid"])
        self.assertTrue(rev["metadata"]["ownerReferences"][0]["controller"])
        self.assertEqual(rev["data"]["spec"]["template"]["$patch"], "replace")
        self.assertEqual(rev["data"]["spec"]["template"]["spec"]["containers"][0]["image"],
                         "example.com/agent:v1")
        for p in pods:
            self.assertRegex(p["metadata"]["name"], r"^agent-[a-z0-9]{5}$")
            self.assertEqual(p["metadata"]["labels"]["controller-revision-hash"], h)
            self.assertEqual(p["metadata"]["labels"]["pod-template-generation"], "1")
            ref = p["metadata"]["ownerReferences"][0]
            self.assertEqual((ref["kind"], ref["name"], ref["uid"], ref["controller"]),
                             ("DaemonSet", "agent", ds["metadata"]["uid"], True))
            terms = p["spec"]["affinity"]["nodeAffinity"][
                "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
            self.assertEqual(terms[0]["matchFields"][0]["values"], [p["spec"]["nodeName"]])
        status = wait_for(lambda: (lambda s: s.get("numberReady") == 2 and s)(
            self.sim.get(NS + "/daemonsets/agent").get("status") or {}), what="ds status")
        self.assertEqual(status["desiredNumberScheduled"], 2)
        self.assertEqual(status["currentNumberScheduled"], 2)
        self.assertEqual(status["updatedNumberScheduled"], 2)
        self.assertEqual(status["numberAvailable"], 2)
        self.assertEqual(status["observedGeneration"], 1)

    def test_node_selector_and_tolerations(self):
        self.sim.create(NS + "/daemonsets", daemonset(
            nodeSelector={"edge": "true"},
            tolerations=[{"key": "dedicated", "operator": "Equal", "value": "edge",
                          "effect": "NoSchedule"}]))
        pods = self.ready_pods(2)
        self.assertEqual(sorted(p["spec"]["nodeName"] for p in pods), ["node-2", "node-3"])
        # A new NoExecute taint on node-2 evicts the daemon there.
        code, out = self.sim.call("PATCH", "/api/v1/nodes/node-2", {"spec": {"taints": [
            {"key": "maintenance", "effect": "NoExecute"}]}},
            content_type="application/merge-patch+json")
        self.assertEqual(code, 200, out)
        pods = self.ready_pods(1)
        self.assertEqual(pods[0]["spec"]["nodeName"], "node-3")

    def test_on_delete_recreates_at_newest_revision(self):
        self.sim.create(NS + "/daemonsets", daemonset())
        old = self.ready_pods(2)
        h1 = old[0]["metadata"]["labels"]["controller-revision-hash"]
        self.set_image("example.com/agent:v2")
        revs = wait_for(lambda: len(self.revisions()) == 2 and self.revisions(), what="2 revisions")
        self.assertEqual([r["revision"] for r in revs], [1, 2])
        h2 = revs[1]["metadata"]["labels"]["controller-revision-hash"]
        self.assertNotEqual(h1, h2)
        self.sim.clock.sleep(20)
        # OnDelete: nothing replaced by itself.
        self.assertEqual({p["metadata"]["name"] for p in self.pods()},
                         {p["metadata"]["name"] for p in old})
        victim = [p for p in old if p["spec"]["nodeName"] == "node-1"][0]
        code, _ = self.sim.call("DELETE", PODS + "/" + victim["metadata"]["name"])
        self.assertEqual(code, 200)
        new = wait_for(lambda: [p for p in self.pods() if p["spec"]["nodeName"] == "node-1"
                                and p["metadata"]["name"] != victim["metadata"]["name"]],
                       what="replacement pod")[0]
        self.assertEqual(new["metadata"]["labels"]["controller-revision-hash"], h2)
        self.assertEqual(new["metadata"]["labels"]["pod-template-generation"], "2")
        self.assertEqual(new["spec"]["containers"][0]["image"], "example.com/agent:v2")
        other = [p for p in self.pods() if p["spec"]["nodeName"] == "node-2"][0]
        self.assertEqual(other["metadata"]["labels"]["controller-revision-hash"], h1)
        status = wait_for(lambda: (lambda s: s.get("updatedNumberScheduled") == 1 and s)(
            self.sim.get(NS + "/daemonsets/agent").get("status") or {}), what="status")
        self.assertEqual(status["observedGeneration"], 2)

    def test_rollback_renumbers_the_old_revision(self):
        self.sim.create(NS + "/daemonsets", daemonset())
        self.ready_pods(2)
        self.set_image("example.com/agent:v2")
        wait_for(lambda: len(self.revisions()) == 2, what="2 revisions")
        self.set_image("example.com/agent:v1")
        revs = wait_for(lambda: (lambda r: r[-1]["revision"] == 3 and r)(self.revisions()),
                        what="v1 renumbered to 3")
        self.assertEqual(len(revs), 2)
        self.assertEqual(revs[-1]["data"]["spec"]["template"]["spec"]["containers"][0]["image"],
                         "example.com/agent:v1")

    def test_rolling_update_replaces_pods_itself(self):
        self.sim.create(NS + "/daemonsets", daemonset(strategy="RollingUpdate"))
        self.ready_pods(2)
        wait_for(lambda: (self.sim.get(NS + "/daemonsets/agent").get("status") or {})
                 .get("numberReady") == 2, what="status caught up")
        seen_ready = []
        self.sim.api.subscribe(lambda t, r, o: seen_ready.append(
            (o.get("status") or {}).get("numberReady")) if r == "daemonsets" else None)
        self.set_image("example.com/agent:v3")
        revs = wait_for(lambda: len(self.revisions()) == 2 and self.revisions(), what="revision")
        h = revs[-1]["metadata"]["labels"]["controller-revision-hash"]
        pods = self.ready_pods(2, hash_=h)
        self.assertEqual({p["spec"]["containers"][0]["image"] for p in pods},
                         {"example.com/agent:v3"})
        # maxUnavailable 1: never both pods down at once.
        self.assertNotIn(0, [n for n in seen_ready if n is not None])

    def test_deleted_daemonset_takes_its_pods_and_revisions(self):
        self.sim.create(NS + "/daemonsets", daemonset())
        self.ready_pods(2)
        code, _ = self.sim.call("DELETE", NS + "/daemonsets/agent")
        self.assertEqual(code, 200)
        wait_for(lambda: not self.pods(live=False) and not self.revisions(), what="cascade")

    def test_pod_of_a_deleted_node_goes_away(self):
        self.sim.create(NS + "/daemonsets", daemonset())
        self.ready_pods(2)
        code, _ = self.sim.call("DELETE", "/api/v1/nodes/node-2")
        self.assertEqual(code, 200)
        pods = wait_for(lambda: (lambda p: len(p) == 1 and p)(self.pods(live=False)),
                        what="node-2's pod removed")
        self.assertEqual(pods[0]["spec"]["nodeName"], "node-1")
        self.sim.clock.sleep(30)
        self.assertIsNone(self.sim.get("/api/v1/nodes/node-2"))     # no re-registration
        status = self.sim.get(NS + "/daemonsets/agent")["status"]
        self.assertEqual(status["desiredNumberScheduled"], 1)

    def test_template_without_matching_nodes(self):
        self.sim.create(NS + "/daemonsets", daemonset(nodeSelector={"no": "such"}))
        status = wait_for(lambda: self.sim.get(NS + "/daemonsets/agent").get("status"),
                          what="status")
        self.assertEqual(status["desiredNumberScheduled"], 0)
        self.assertEqual(self.pods(), [])

    def test_two_daemonsets_do_not_share_pods(self):
        self.sim.create(NS + "/daemonsets", daemonset())
        other = copy.deepcopy(daemonset("other"))
        self.sim.create(NS + "/daemonsets", other)
        self.ready_pods(2)
        self.ready_pods(2, name="other")


if __name__ == "__main__":
    unittest.main()
