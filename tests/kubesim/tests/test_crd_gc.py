"""The simulated garbage collector with custom resources: a Job owned by a custom
resource goes with it (also when the CRD goes), a custom resource owned by a
built-in goes with its owner, and a custom resource whose owner (a cluster-scoped
custom resource) never existed is collected."""
import unittest

from .crdsupport import CRDS, WIDGETS_A, gadget_crd, widget, widget_crd
from kubesim.sim.testing import SimCluster, wait_for

JOBS = "/apis/batch/v1/namespaces/default/jobs"
SECRETS = "/api/v1/namespaces/default/secrets"


def job(name, owner, api_version="example.com/v1alpha1", kind="Widget"):
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
        "name": name, "namespace": "default",
        "ownerReferences": [{"apiVersion": api_version, "kind": kind, "name": owner["metadata"]["name"],
                             "uid": owner["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
                                       "containers": [{"name": "c", "image": "busybox:1.36"}]}}}}


class CrdGarbageCollectorTest(unittest.TestCase):
    def setUp(self):
        self.sim = SimCluster(nodes=["node-1"], scale=100)
        self.addCleanup(self.sim.close)
        self.sim.create(CRDS, widget_crd())
        self.sim.create(CRDS, gadget_crd())

    def test_job_owned_by_a_custom_resource(self):
        owner = self.sim.create(WIDGETS_A, widget("owner"))
        self.sim.create(JOBS, job("pull", owner))
        keep = self.sim.create(WIDGETS_A, widget("keep"))
        self.sim.create(JOBS, job("kept", keep))
        code, _ = self.sim.call("DELETE", WIDGETS_A + "/owner", query={"propagationPolicy": "Background"})
        self.assertEqual(code, 200)
        wait_for(lambda: self.sim.get(JOBS + "/pull") is None, what="job collected")
        self.assertIsNotNone(self.sim.get(JOBS + "/kept"))
        # deleting the CRD deletes its objects, and the collector their Jobs
        code, _ = self.sim.call("DELETE", CRDS + "/widgets.example.com")
        self.assertEqual(code, 200)
        wait_for(lambda: self.sim.get(JOBS + "/kept") is None, what="job of a CRD's object collected")

    def test_foreground_deletion_waits_for_blocking_dependents(self):
        gone = []
        self.sim.api.subscribe(lambda t, r, o: gone.append((r, o["metadata"]["name"])) if t == "DELETED" else None)
        owner = self.sim.create(WIDGETS_A, widget("owner"))
        self.sim.create(JOBS, job("pull", owner))
        loose = job("loose", owner)
        loose["metadata"]["ownerReferences"][0]["blockOwnerDeletion"] = False
        self.sim.create(JOBS, loose)
        code, out = self.sim.call("DELETE", WIDGETS_A + "/owner", query={"propagationPolicy": "Foreground"})
        self.assertEqual(code, 200, out)
        self.assertEqual(out["metadata"]["finalizers"], ["foregroundDeletion"])
        self.assertTrue(out["metadata"]["deletionTimestamp"])
        wait_for(lambda: self.sim.get(WIDGETS_A + "/owner") is None, what="owner finalized")
        self.assertIsNone(self.sim.get(JOBS + "/pull"))
        self.assertLess(gone.index(("jobs", "pull")), gone.index(("widgets.example.com", "owner")))
        wait_for(lambda: self.sim.get(JOBS + "/loose") is None, what="non-blocking dependent collected")

    def test_foreground_deletion_of_a_built_in_owner(self):
        owner = self.sim.create(SECRETS, {"apiVersion": "v1", "kind": "Secret",
                                          "metadata": {"name": "fg", "namespace": "default"}})
        w = widget("dep")
        w["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Secret", "name": "fg",
                                             "uid": owner["metadata"]["uid"], "blockOwnerDeletion": True}]
        w["metadata"]["finalizers"] = ["example.com/hold"]
        self.sim.create(WIDGETS_A, w)
        code, out = self.sim.call("DELETE", SECRETS + "/fg", body={"kind": "DeleteOptions", "apiVersion": "v1",
                                                                    "propagationPolicy": "Foreground"})
        self.assertEqual((code, out["metadata"]["finalizers"]), (200, ["foregroundDeletion"]))
        wait_for(lambda: (self.sim.get(WIDGETS_A + "/dep") or {}).get("metadata", {}).get("deletionTimestamp"),
                 what="dependent deleted")
        self.sim.clock.sleep(5)
        self.assertIsNotNone(self.sim.get(SECRETS + "/fg"))       # held while its blocking dependent is there
        self.sim.call("PATCH", WIDGETS_A + "/dep", {"metadata": {"finalizers": None}},
                      content_type="application/merge-patch+json")
        wait_for(lambda: self.sim.get(SECRETS + "/fg") is None, what="owner gone after its dependent")

    def test_custom_resources_as_dependents(self):
        owner = self.sim.create(SECRETS, {"apiVersion": "v1", "kind": "Secret",
                                          "metadata": {"name": "owner", "namespace": "default"}})
        g = widget("g")
        g["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Secret", "name": "owner",
                                             "uid": owner["metadata"]["uid"]}]
        self.sim.create(WIDGETS_A, g)
        w = widget("stray")
        w["metadata"]["ownerReferences"] = [{"apiVersion": "example.com/v1", "kind": "Gadget", "name": "ghost",
                                             "uid": "00000000-0000-0000-0000-000000000000"}]
        self.sim.create(WIDGETS_A, w)
        wait_for(lambda: self.sim.get(WIDGETS_A + "/stray") is None, what="stray widget collected")
        self.sim.call("DELETE", SECRETS + "/owner")
        wait_for(lambda: self.sim.get(WIDGETS_A + "/g") is None, what="widget collected with its owner")


if __name__ == "__main__":
    unittest.main()
