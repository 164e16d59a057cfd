"""Image volumes (issue 22 part 2; docs/design.md §5 "Pull methods").

ImageVolumePull: kubesim with --feature-gates ImageVolume=true.  A DaemonSet
revision that adds an OCI artifact as an image volume is pre-pulled on
request, and automatically for a DaemonSet opted in: the helper Job for
the runnable image, then an image-volume Job for the artifact, and the pod
says PodImageReady True.  On a node whose
runtime cannot mount image volumes (registry configuration imageVolumes:
false, containerd 1.7), the runnable image is still pulled and the request
fails naming the artifact and why; on one that reports containerd 2.1 but
fails the container (CreateContainerError), the node is remembered, the
image-volume Job deleted and the request fails saying so.

ImageVolumeGateOff: the gate off and --pull-method image-volume: the
apiserver refuses the image-volume Job (422 "must specify a volume type"),
the controller remembers it and pulls with the helper.
"""
import copy

from harness import AGENT, REGISTRY_CONFIG, Base, wait_until

MODEL = "registry.example.com/models/detector:1.0"
NO_IV_NODE = "node-2"
# says containerd 2.1 but cannot mount them: the container is not created
LYING_NODE = "node-3"
# a node of its own for the automatic pull: node-1's images hold the
# artifact once the request's test ran
AUTO_NODE = "node-4"
PARALLELISM = "apps.kruise.io/image-predownload-parallelism"


def registry():
    cfg = copy.deepcopy(REGISTRY_CONFIG)
    cfg["images"].append({"image": MODEL, "size": 20_000_000})
    cfg["nodes"] = {NO_IV_NODE: {"imageVolumes": False},
                    LYING_NODE: {"imageVolumes": False, "containerRuntimeVersion": "containerd://2.1.4"}}
    return cfg


class ImageVolumePull(Base):
    NODES = 4
    REGISTRY = registry()
    KUBESIM_ARGS = ("--feature-gates", "ImageVolume=true")

    def add_artifact(self, image, name="agent"):
        """A new revision: image, and MODEL mounted as an image volume."""
        old = self.newest_hash(name)
        patch = {"spec": {"template": {"spec": {
            "containers": [{"name": "main", "image": image,
                            "volumeMounts": [{"name": "model", "mountPath": "/model", "readOnly": True}]}],
            "volumes": [{"name": "model", "image": {"reference": MODEL, "pullPolicy": "IfNotPresent"}}]}}}}
        self.sim.call("PATCH", "/apis/apps/v1/namespaces/%s/daemonsets/%s" % (self.ns, name), patch,
                      ctype="application/strategic-merge-patch+json")
        return wait_until(lambda: (lambda h: h != old and h)(self.newest_hash(name)), 30,
                          "a new revision of %s" % name)

    def node_images(self, node):
        n = self.sim.get("/api/v1/nodes/" + node)
        return {name for i in n["status"].get("images") or [] for name in i.get("names") or []}

    def test_artifact_pre_pulled_on_request(self):
        pods = self.make_ds(AGENT + "v1", nodes=["node-1"])
        h = self.add_artifact(AGENT + "v2")
        self.wait_need_upgrade(pods, "True", h)
        pod = pods[0]
        self.request_pull(pod, h)
        self.wait_image_ready(pod, "PullImageSuccess", timeout=60, message="controllerrevision: " + h)
        self.assert_artifact_pulled(pod, "node-1")

    def test_artifact_pre_pulled_automatically(self):
        """Nobody asks: the DaemonSet opted in (Kruise's parallelism), the
        controller starts the pull, and the artifact goes through the
        image-volume Job as for a request."""
        pods = self.make_ds(AGENT + "v1", name="auto", nodes=[AUTO_NODE])
        self.sim.call("PATCH", "/apis/apps/v1/namespaces/%s/daemonsets/auto" % self.ns,
                      {"metadata": {"annotations": {PARALLELISM: "1"}}}, ctype="application/merge-patch+json")
        h = self.add_artifact(AGENT + "v2", name="auto")
        self.wait_need_upgrade(pods, "True", h)
        pod = pods[0]
        self.wait_image_ready(pod, "PullImageSuccess", timeout=60, message="controllerrevision: " + h)
        auto = self.cond(self.pod(pod["metadata"]["name"]), "ota-prepull.openyurt.io/AutoPrePull")
        self.assertEqual((auto["status"], auto["reason"]), ("True", "DaemonSetOptedIn"))
        self.assert_artifact_pulled(pod, AUTO_NODE)

    def assert_artifact_pulled(self, pod, node):
        """Two Jobs: the helper's for the runnable image, an image-volume
        Job for the artifact; the artifact then in the node's images."""
        jobs = self.tracker.jobs_of(pod["metadata"]["uid"])
        self.assertEqual(len(jobs), 2, [j["metadata"]["name"] for j in jobs])
        helper = [j for j in jobs if j["spec"]["template"]["spec"].get("initContainers")]
        volume = [j for j in jobs if not j["spec"]["template"]["spec"].get("initContainers")]
        self.assertEqual(len(helper), 1)
        self.assertEqual(len(volume), 1)
        # today's Job for the runnable image; the artifact in its own
        images = [c["image"] for c in helper[0]["spec"]["template"]["spec"]["initContainers"]]
        self.assertEqual(images, ["busybox:1.36-musl", AGENT + "v2"])
        spec = volume[0]["spec"]["template"]["spec"]
        self.assertEqual(spec["volumes"], [{"name": "img-0", "image": {"reference": MODEL,
                                                                       "pullPolicy": "IfNotPresent"}}])
        self.assertEqual([(c["name"], c["image"], c["command"]) for c in spec["containers"]],
                         [("pull-0", "busybox:1.36-musl", ["/bin/busybox", "true"])])
        self.assertEqual(spec["containers"][0]["volumeMounts"],
                         [{"name": "img-0", "mountPath": "/ota-img", "readOnly": True}])
        # the artifact is on the node (Node.status.images follows with a lag)
        wait_until(lambda: any(n.startswith("registry.example.com/models/detector") and n.endswith(":1.0")
                               for n in self.node_images(node)),
                   30, "the artifact in %s's images" % node)

    def test_node_without_image_volumes(self):
        pods = self.make_ds(AGENT + "v1", name="edge", nodes=[NO_IV_NODE])
        h = self.add_artifact(AGENT + "v3", name="edge")
        self.wait_need_upgrade(pods, "True", h)
        pod = pods[0]
        self.request_pull(pod, h)
        c = self.wait_image_ready(pod, "PullImageFail", timeout=60)
        self.assertIn(MODEL, c["message"])
        self.assertIn("node %s cannot mount image volumes" % NO_IV_NODE, c["message"])
        self.assertIn("containerd://1.7.24", c["message"])
        # the runnable image was pulled all the same, with the helper
        jobs = self.tracker.jobs_of(pod["metadata"]["uid"])
        self.assertEqual(len(jobs), 1, [j["metadata"]["name"] for j in jobs])
        self.assertTrue(jobs[0]["spec"]["template"]["spec"].get("initContainers"))
        wait_until(lambda: (self.sim.get("/apis/batch/v1/namespaces/%s/jobs/%s"
                                         % (self.ns, jobs[0]["metadata"]["name"]))
                            .get("status", {}).get("succeeded")), 30, "the helper Job complete")


    def test_create_container_error_remembered(self):
        pods = self.make_ds(AGENT + "v1", name="lying", nodes=[LYING_NODE])
        h = self.add_artifact(AGENT + "v2", name="lying")
        self.wait_need_upgrade(pods, "True", h)
        pod = pods[0]
        self.request_pull(pod, h)
        c = self.wait_image_ready(pod, "PullImageFail", timeout=60)
        self.assertIn(MODEL, c["message"])
        self.assertIn("node %s cannot mount image volumes (its container runtime failed to create a "
                      "container mounting one: CreateContainerError)" % LYING_NODE, c["message"])
        self.assertIn("node cannot mount image volumes", self.ctl.tail(2000))
        # the image-volume Job was tried, then deleted; the helper's stays
        jobs = self.tracker.jobs_of(pod["metadata"]["uid"])
        self.assertEqual(len(jobs), 2, [j["metadata"]["name"] for j in jobs])
        wait_until(lambda: len(self.tracker.live_jobs_of(pod["metadata"]["uid"])) == 1, 20,
                   "the image-volume Job deleted")
        live = self.tracker.live_jobs_of(pod["metadata"]["uid"])
        self.assertTrue(live[0]["spec"]["template"]["spec"].get("initContainers"))


class ImageVolumeGateOff(Base):
    NODES = 1
    CONTROLLER_ARGS = ("--pull-method", "image-volume")

    def test_gate_off_falls_back_to_helper(self):
        pods, h = self.upgraded_ds()
        pod = pods[0]
        self.request_pull(pod, h)
        self.wait_image_ready(pod, "PullImageSuccess", timeout=60, message="controllerrevision: " + h)
        jobs = self.tracker.jobs_of(pod["metadata"]["uid"])
        # the image-volume Job was never made: the apiserver refused it
        self.assertEqual(len(jobs), 1, [j["metadata"]["name"] for j in jobs])
        self.assertTrue(jobs[0]["spec"]["template"]["spec"].get("initContainers"))
        wait_until(lambda: "image volumes are off in this cluster" in self.ctl.tail(400), 10,
                   "the controller saying the gate is off")
        self.assertIn("must specify a volume type", self.ctl.tail(400))
