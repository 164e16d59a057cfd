"""What ota-controller's ImagePullJob support (issue 20) asks of kubesim, pinned
with the CRDs it meets: the project's own (manifests/components/imagepulljob-crd/
crd.yaml) and, when ../shared/upstream/kruise is beside the repository (or
$OTA_UPSTREAM_KRUISE names it), Kruise's v1.8.4 (v1alpha1 only) and v1.9.0
(v1alpha1 served, v1beta1 stored) applied unchanged.  The controller reads and
writes apps.kruise.io/v1alpha1 (which all three serve):

- a merge patch of imagepulljobs/status sets fields and clears one set to null;
- a merge patch of metadata carrying a stale resourceVersion is 409;
- removing Kruise's finalizer (apps.kruise.io/deletion-protection) from a
  deleting custom resource by a merge patch of metadata.finalizers lets it go;
- DELETE with the body DeleteOptions {"preconditions": {"uid"},
  "propagationPolicy": "Background"}: a wrong uid is 409, the right one
  deletes, and the garbage collector deletes the Jobs whose controller
  ownerReference (apps.kruise.io/v1alpha1 ImagePullJob) is the object;
- a pull Job given up by the controller: a merge patch setting
  spec.activeDeadlineSeconds to 1 and two annotations is allowed (Kubernetes
  lets activeDeadlineSeconds change), and the Job controller, synced by the
  Job's update event, fails it with DeadlineExceeded at once and deletes its
  pod, whose missing image the kubelet reports as ErrImagePull /
  ImagePullBackOff on the init container "pull-0";
- a node made NotReady through its status stays NotReady (the kubelet posts
  only status.images afterwards), and labels set on it stay.

PyYAML reads the CRD manifests (Debian's python3-yaml); the class is skipped
without it.
"""
import copy
import os
import unittest

from kubesim.sim.testing import SimCluster, condition, container_state, wait_for

try:
    import yaml
except ImportError:     # pragma: no cover - Debian's python3-yaml is a test dependency
    yaml = None

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
OWN_CRD = os.path.join(ROOT, "manifests", "components", "imagepulljob-crd", "crd.yaml")
UPSTREAM = os.environ.get("OTA_UPSTREAM_KRUISE") or \
    os.path.join(os.path.dirname(ROOT), "shared", "upstream", "kruise")
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
IPJS = "/apis/apps.kruise.io/v1alpha1/namespaces/default/imagepulljobs"
JOBS = "/apis/batch/v1/namespaces/default/jobs"
PODS = "/api/v1/namespaces/default/pods"
MERGE = "application/merge-patch+json"
FINALIZER = "apps.kruise.io/deletion-protection"
MISSING = "registry.example.com/edge/missing:9.9"
CONFIG = {"includeDefaults": True, "images": [{"image": "example.com/big:1", "size": 2_000_000_000}]}


def load_crd(path):
    with open(path) as f:
        return yaml.safe_load(f)


def imagepulljob(name, finalizers=()):
    meta = {"name": name, "namespace": "default"}
    if finalizers:
        meta["finalizers"] = list(finalizers)
    return {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "ImagePullJob", "metadata": meta,
            "spec": {"image": "nginx:1.25", "completionPolicy": {"type": "Always"},
                     "pullPolicy": {"timeoutSeconds": 600, "backoffLimit": 3}}}


def pull_job(name, owner, node="node-1", image="nginx:1.25", deadline=3600):
    """A pull Job as the controller renders one (docs/design.md, issue 20 D1)."""
    ref = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "ImagePullJob", "name": owner["metadata"]["name"],
           "uid": owner["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True} if owner else None
    meta = {"name": name, "namespace": "default", "labels": {"app.kubernetes.io/managed-by": "ota-prepull"},
            "annotations": {"ota-prepull/spec-hash": "0123abcd"}}
    if ref:
        meta["ownerReferences"] = [ref]
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
            "spec": {"backoffLimit": 0, "activeDeadlineSeconds": deadline, "template": {
                "metadata": {"labels": {"app.kubernetes.io/managed-by": "ota-prepull"}},
                "spec": {"restartPolicy": "Never", "nodeName": node,
                         "initContainers": [{"name": "helper", "image": "busybox:1.36", "command": ["true"]},
                                            {"name": "pull-0", "image": image, "command": ["/ota-bin/true"]}],
                         "containers": [{"name": "ota-done", "image": "busybox:1.36", "command": ["true"]}]}}}}


@unittest.skipIf(yaml is None, "PyYAML (python3-yaml) is not installed")
class ImagePullJobWire(unittest.TestCase):
    """Run once per CRD the controller may meet (subTest per CRD)."""

    def crds(self):
        out = [("own", OWN_CRD)]
        for v in ("v1.8.4", "v1.9.0"):
            p = os.path.join(UPSTREAM, v, "apps.kruise.io_imagepulljobs.yaml")
            if os.path.exists(p):
                out.append((v, p))
        return out

    def each_crd(self, body):
        for which, path in self.crds():
            with self.subTest(crd=which):
                sim = SimCluster(nodes=["node-1"], scale=100, config=CONFIG)
                try:
                    code, out = sim.call("POST", CRDS, load_crd(path))
                    self.assertEqual(code, 201, out)
                    body(sim)
                finally:
                    sim.close()

    def test_status_merge_patch_sets_and_clears(self):
        def body(sim):
            sim.create(IPJS, imagepulljob("j"))
            status = {"desired": 3, "active": 2, "succeeded": 0, "failed": 1, "failedNodes": ["node-2"],
                      "startTime": "2026-11-27T07:00:00Z", "message": "job is running, progress 33.3%"}
            code, out = sim.call("PATCH", IPJS + "/j/status", {"status": status}, content_type=MERGE)
            self.assertEqual(code, 200, out)
            self.assertEqual(out["status"], status)
            gen = out["metadata"]["generation"]
            # the next pass: counts change, failedNodes cleared by null, completionTime set
            code, out = sim.call("PATCH", IPJS + "/j/status", {"status": {
                "active": 0, "succeeded": 3, "failed": 0, "failedNodes": None,
                "completionTime": "2026-11-27T07:01:00Z", "message": "job has completed"}}, content_type=MERGE)
            self.assertEqual(code, 200, out)
            self.assertNotIn("failedNodes", out["status"])
            self.assertEqual((out["status"]["succeeded"], out["status"]["message"], out["status"]["desired"]),
                             (3, "job has completed", 3))
            self.assertEqual(out["metadata"]["generation"], gen, "a status write bumped the generation")
            # an edit re-runs: completionTime cleared with null
            code, out = sim.call("PATCH", IPJS + "/j/status", {"status": {"completionTime": None}},
                                 content_type=MERGE)
            self.assertEqual(code, 200, out)
            self.assertNotIn("completionTime", out["status"])
            # the status subresource leaves spec and metadata alone
            code, out = sim.call("PATCH", IPJS + "/j/status", {"spec": {"image": "nginx:1.27"},
                                                               "metadata": {"annotations": {"a": "b"}}},
                                 content_type=MERGE)
            self.assertEqual(code, 200, out)
            self.assertEqual(out["spec"]["image"], "nginx:1.25")
            self.assertNotIn("annotations", out["metadata"])
        self.each_crd(body)

    def test_metadata_merge_patch_with_stale_resource_version(self):
        def body(sim):
            first = sim.create(IPJS, imagepulljob("j", [FINALIZER]))
            rv = first["metadata"]["resourceVersion"]
            code, out = sim.call("PATCH", IPJS + "/j", {"metadata": {
                "resourceVersion": rv, "annotations": {"ota-prepull/completed-generation": "1"}}},
                content_type=MERGE)
            self.assertEqual(code, 200, out)
            self.assertEqual(out["metadata"]["annotations"], {"ota-prepull/completed-generation": "1"})
            self.assertEqual(out["metadata"]["generation"], 1, "a metadata patch bumped the generation")
            code, out = sim.call("PATCH", IPJS + "/j", {"metadata": {"resourceVersion": rv, "finalizers": None}},
                                 content_type=MERGE)
            self.assertEqual(code, 409, out)
            self.assertIn("the object has been modified", out["message"])
            self.assertEqual(sim.get(IPJS + "/j")["metadata"]["finalizers"], [FINALIZER])
        self.each_crd(body)

    def test_finalizer_removed_from_a_deleting_object(self):
        def body(sim):
            sim.create(IPJS, imagepulljob("j", [FINALIZER, "example.com/other"]))
            code, out = sim.call("DELETE", IPJS + "/j", {"kind": "DeleteOptions", "apiVersion": "v1",
                                                         "propagationPolicy": "Background"})
            self.assertEqual(code, 200, out)
            cur = sim.get(IPJS + "/j")
            self.assertTrue(cur["metadata"].get("deletionTimestamp"))
            # the controller removes only Kruise's: the other holds it still
            code, out = sim.call("PATCH", IPJS + "/j", {"metadata": {
                "resourceVersion": cur["metadata"]["resourceVersion"], "finalizers": ["example.com/other"]}},
                content_type=MERGE)
            self.assertEqual(code, 200, out)
            self.assertEqual(sim.get(IPJS + "/j")["metadata"]["finalizers"], ["example.com/other"])
            code, out = sim.call("PATCH", IPJS + "/j", {"metadata": {"finalizers": None}}, content_type=MERGE)
            self.assertEqual(code, 200, out)
            self.assertIsNone(sim.get(IPJS + "/j"))
        self.each_crd(body)

    def test_delete_with_uid_precondition_collects_owned_jobs(self):
        def body(sim):
            owner = sim.create(IPJS, imagepulljob("j"))
            other = sim.create(IPJS, imagepulljob("k"))
            sim.create(JOBS, pull_job("ota-ipj-j-00000001", owner))
            sim.create(JOBS, pull_job("ota-ipj-k-00000002", other))
            opts = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background",
                    "preconditions": {"uid": other["metadata"]["uid"]}}
            code, out = sim.call("DELETE", IPJS + "/j", opts)
            self.assertEqual(code, 409, out)
            self.assertIn("Precondition failed: UID in precondition: %s" % other["metadata"]["uid"], out["message"])
            self.assertIsNotNone(sim.get(IPJS + "/j"))
            opts["preconditions"]["uid"] = owner["metadata"]["uid"]
            code, out = sim.call("DELETE", IPJS + "/j", opts)
            self.assertEqual(code, 200, out)
            self.assertIsNone(sim.get(IPJS + "/j"))
            wait_for(lambda: sim.get(JOBS + "/ota-ipj-j-00000001") is None, 10, "the owned Job collected")
            wait_for(lambda: not sim.items(PODS, labelSelector="job-name=ota-ipj-j-00000001"), 10,
                     "its pod collected")
            self.assertIsNotNone(sim.get(JOBS + "/ota-ipj-k-00000002"), "another object's Job went too")
            # a repeat is 404
            code, out = sim.call("DELETE", IPJS + "/j", opts)
            self.assertEqual(code, 404, out)
        self.each_crd(body)


class PullJobGivenUp(unittest.TestCase):
    def setUp(self):
        self.sim = SimCluster(nodes=["node-1", "node-2"], scale=100, config=CONFIG)
        self.addCleanup(self.sim.close)

    def pods(self, job):
        return self.sim.items(PODS, labelSelector="job-name=" + job)

    def test_missing_image_then_deadline_patched_to_one(self):
        self.sim.create(JOBS, pull_job("ota-ipj-j-00000001", None, image=MISSING))
        seen = []

        def pulling_failed():
            pods = self.pods("ota-ipj-j-00000001")
            st = container_state(pods[0], "pull-0", init=True) if pods else (None, None)
            if st not in seen:
                seen.append(st)
            return st in (("waiting", "ErrImagePull"), ("waiting", "ImagePullBackOff")) and pods[0]
        pod = wait_for(pulling_failed, 10, "the missing image's pull error on pull-0")
        cs = [c for c in pod["status"]["initContainerStatuses"] if c["name"] == "pull-0"][0]
        self.assertIn(cs["state"]["waiting"]["reason"], ("ErrImagePull", "ImagePullBackOff"))
        events = [m for r, m in self.sim.events(pod["metadata"]["name"]) if r == "Failed"]
        self.assertIn('Failed to pull image "%s": rpc error: code = NotFound desc = failed to pull and unpack '
                      'image "%s": failed to resolve reference "%s": %s: not found' % ((MISSING,) * 4), events)
        job = self.sim.get(JOBS + "/ota-ipj-j-00000001")
        self.assertIsNone(condition(job, "Failed"))
        # the controller gives up: deadline 1 and why, in one merge patch
        code, out = self.sim.call("PATCH", JOBS + "/ota-ipj-j-00000001", {
            "metadata": {"annotations": {"ota-prepull/given-up-reason": "ErrImagePull",
                                         "ota-prepull/given-up-message": "not found"}},
            "spec": {"activeDeadlineSeconds": 1}}, content_type=MERGE)
        self.assertEqual(code, 200, out)
        self.assertEqual(out["spec"]["activeDeadlineSeconds"], 1)
        self.assertEqual(out["metadata"]["annotations"]["ota-prepull/spec-hash"], "0123abcd")
        job = wait_for(lambda: (lambda j: condition(j, "Failed") and j)(self.sim.get(JOBS + "/ota-ipj-j-00000001")),
                       5, "the Job Failed at its next sync")
        self.assertEqual(condition(job, "Failed")["reason"], "DeadlineExceeded")
        self.assertEqual(condition(job, "FailureTarget")["reason"], "DeadlineExceeded")
        self.assertEqual(job["metadata"]["annotations"]["ota-prepull/given-up-reason"], "ErrImagePull")
        wait_for(lambda: not self.pods("ota-ipj-j-00000001"), 10, "its pod deleted")
        # the whole template is still immutable
        bad = copy.deepcopy(job["spec"]["template"])
        bad["spec"]["nodeName"] = "node-2"
        code, out = self.sim.call("PATCH", JOBS + "/ota-ipj-j-00000001", {"spec": {"template": bad}},
                                  content_type=MERGE)
        self.assertEqual(code, 422, out)

    def test_running_pull_job_deadline_patched(self):
        # a pull under way (2 GB): the Job is FailureTarget at once, Failed when the pod is
        # gone, which the blocked pod worker allows only after the pull (kubernetes#125050)
        self.sim.create(JOBS, pull_job("ota-ipj-j-00000002", None, image="example.com/big:1"))
        def pulling(pods):
            return pods and container_state(pods[0], "helper", init=True)[0] == "terminated" and \
                container_state(pods[0], "pull-0", init=True) == ("waiting", "PodInitializing")
        wait_for(lambda: pulling(self.pods("ota-ipj-j-00000002")), 10, "pull-0 pulling")
        code, out = self.sim.call("PATCH", JOBS + "/ota-ipj-j-00000002", {"spec": {"activeDeadlineSeconds": 1}},
                                  content_type=MERGE)
        self.assertEqual(code, 200, out)
        job = wait_for(lambda: (lambda j: condition(j, "FailureTarget") and j)(
            self.sim.get(JOBS + "/ota-ipj-j-00000002")), 5, "FailureTarget at the next sync")
        self.assertEqual(condition(job, "FailureTarget")["reason"], "DeadlineExceeded")
        self.assertTrue(self.pods("ota-ipj-j-00000002")[0]["metadata"].get("deletionTimestamp"))
        job = wait_for(lambda: (lambda j: condition(j, "Failed") and j)(self.sim.get(JOBS + "/ota-ipj-j-00000002")),
                       15, "Failed once the pull ended and the pod went")
        self.assertEqual(condition(job, "Failed")["reason"], "DeadlineExceeded")

    def test_node_not_ready_and_labels_stay(self):
        node = self.sim.get("/api/v1/nodes/node-2")
        conds = [dict(c, status="False", reason="KubeletNotReady") if c["type"] == "Ready" else c
                 for c in node["status"]["conditions"]]
        code, out = self.sim.call("PATCH", "/api/v1/nodes/node-2/status", {"status": {"conditions": conds}},
                                  content_type=MERGE)
        self.assertEqual(code, 200, out)
        code, out = self.sim.call("PATCH", "/api/v1/nodes/node-2", {"metadata": {"labels": {"pool": "edge"}}},
                                  content_type=MERGE)
        self.assertEqual(code, 200, out)
        # the kubelet posts its images after a pull on the node: conditions and labels stay
        self.sim.create(JOBS, pull_job("ota-ipj-j-00000003", None, node="node-2"))
        wait_for(lambda: (lambda j: condition(j, "Complete"))(self.sim.get(JOBS + "/ota-ipj-j-00000003")), 10,
                 "a Job on the node completes")
        wait_for(lambda: any("docker.io/library/nginx:1.25" in i["names"]
                             for i in self.sim.get("/api/v1/nodes/node-2")["status"].get("images") or []),
                 10, "the node's images posted")
        node = self.sim.get("/api/v1/nodes/node-2")
        self.assertEqual(condition(node, "Ready")["status"], "False")
        self.assertEqual(node["metadata"]["labels"]["pool"], "edge")


if __name__ == "__main__":
    unittest.main()
