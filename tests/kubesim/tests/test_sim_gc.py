"""The simulated garbage collector: background cascade by ownerReferences, orphaning,
dependents with a surviving second owner, dependents created with a missing owner."""

import unittest

from kubesim.sim.testing import SimCluster, wait_for

NS = "/api/v1/namespaces/default"


def secret(name, owners=()):
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {
        "name": name, "namespace": "default",
        "ownerReferences": [{"apiVersion": "v1", "kind": "Secret", "name": o["metadata"]["name"],
                             "uid": o["metadata"]["uid"]} for o in owners]}}


class GarbageCollectorTest(unittest.TestCase):
    def setUp(self):
        self.sim = SimCluster(nodes=["node-1"], scale=100)
        self.addCleanup(self.sim.close)

    def exists(self, name):
        return self.sim.get(NS + "/secrets/" + name) is not None

    def test_background_cascade_through_generations(self):
        root = self.sim.create(NS + "/secrets", secret("root"))
        child = self.sim.create(NS + "/secrets", secret("child", [root]))
        self.sim.create(NS + "/secrets", secret("grandchild", [child]))
        self.sim.create(NS + "/secrets", secret("bystander"))
        code, _ = self.sim.call("DELETE", NS + "/secrets/root")
        self.assertEqual(code, 200)
        wait_for(lambda: not self.exists("child") and not self.exists("grandchild"),
                 what="cascade")
        self.assertTrue(self.exists("bystander"))

    def test_orphan_keeps_dependents(self):
        root = self.sim.create(NS + "/secrets", secret("root"))
        self.sim.create(NS + "/secrets", secret("child", [root]))
        code, _ = self.sim.call("DELETE", NS + "/secrets/root",
                                query={"propagationPolicy": "Orphan"})
        self.assertEqual(code, 200)
        self.sim.clock.sleep(30)
        child = self.sim.get(NS + "/secrets/child")
        self.assertIsNotNone(child)
        self.assertFalse(child["metadata"].get("ownerReferences"))

    def test_surviving_owner_keeps_dependent(self):
        a = self.sim.create(NS + "/secrets", secret("a"))
        b = self.sim.create(NS + "/secrets", secret("b"))
        self.sim.create(NS + "/secrets", secret("shared", [a, b]))
        self.sim.call("DELETE", NS + "/secrets/a")
        refs = wait_for(lambda: (lambda o: o and len(o["metadata"]["ownerReferences"]) == 1
                                 and o["metadata"]["ownerReferences"])(
            self.sim.get(NS + "/secrets/shared")), what="dead owner reference removed")
        self.assertEqual(refs[0]["uid"], b["metadata"]["uid"])
        self.sim.call("DELETE", NS + "/secrets/b")
        wait_for(lambda: not self.exists("shared"), what="last owner gone")

    def test_dependent_of_a_missing_owner_is_collected(self):
        ghost = {"metadata": {"name": "ghost", "uid": "00000000-0000-0000-0000-000000000000"}}
        self.sim.create(NS + "/secrets", secret("stray", [ghost]))
        wait_for(lambda: not self.exists("stray"), what="stray collected")

    def test_bound_pod_of_deleted_owner_is_terminated_by_its_kubelet(self):
        owner = self.sim.create(NS + "/secrets", secret("owner"))
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": "dep", "namespace": "default",
            "ownerReferences": [{"apiVersion": "v1", "kind": "Secret", "name": "owner",
                                 "uid": owner["metadata"]["uid"]}]},
            "spec": {"nodeName": "node-1",
                     "containers": [{"name": "c", "image": "busybox:1.36"}]}}
        self.sim.create(NS + "/pods", pod)
        wait_for(lambda: (self.sim.pod("dep")["status"].get("phase") == "Running"), what="run")
        self.sim.call("DELETE", NS + "/secrets/owner")
        wait_for(lambda: self.sim.pod("dep") is None, what="pod gone")


if __name__ == "__main__":
    unittest.main()
