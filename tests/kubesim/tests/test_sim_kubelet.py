"""The simulated kubelet: node registration, image pulls, pull secrets, pull errors and
back-off, pull policies, init containers, Node.status.images, pod phases, and a pod deleted
while its image is pulling."""

import re
import unittest

from kubesim.sim.kubelet import IMAGE_GC_KEY
from kubesim.sim.registry import dockerconfigjson_secret
from kubesim.sim.testing import SimCluster, condition, container_state, wait_for

PODS = "/api/v1/namespaces/default/pods"
MB = 1_000_000
CONFIG = {
    "defaultBandwidth": 10 * MB,
    "images": [
        {"image": "busybox:1.36", "size": 4 * MB},
        {"image": "busybox:latest", "size": 4 * MB},
        {"image": "example.com/app:v1", "size": 200 * MB},
        {"image": "example.com/big:1.0", "size": 2_000 * MB},
        {"image": "registry.example.com/private/app:1.0", "size": 10 * MB,
         "pullSecret": "regcred", "username": "ota", "password": "s3cret"},
    ],
    "nodes": {"node-2": {"bandwidth": 100 * MB}},
}


def pod(name, image="busybox:1.36", node="node-1", **spec):
    containers = spec.pop("containers", None) or [dict({"name": "c", "image": image},
                                                       **spec.pop("container", {}))]
    body = {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": dict({"nodeName": node, "containers": containers}, **spec)}
    return body


class KubeletTest(unittest.TestCase):
    LIGHT = False      # test_sim_light.py runs these with the light kubelets
    scale = 100.0

    def setUp(self):
        self.sim = SimCluster(nodes=["node-1", "node-2"], scale=self.scale, config=CONFIG, light=self.LIGHT)
        self.addCleanup(self.sim.close)

    def wait_state(self, name, want, init=False, cname=None, timeout=10):
        return wait_for(lambda: container_state(self.sim.pod(name), cname, init) == want and
                        self.sim.pod(name), timeout, "%s in %s" % (name, want))

    def test_node_registered(self):
        node = self.sim.get("/api/v1/nodes/node-1")
        self.assertEqual(node["metadata"]["labels"]["kubernetes.io/hostname"], "node-1")
        self.assertEqual(condition(node, "Ready")["status"], "True")
        self.assertIn({"type": "InternalIP", "address": "172.18.0.2"}, node["status"]["addresses"])
        self.assertEqual(node["status"]["capacity"]["pods"], "110")
        self.assertTrue(node["status"]["nodeInfo"]["kubeletVersion"].startswith("v1."))

    def test_pull_time_follows_size_and_bandwidth(self):
        clock = self.sim.clock
        t0 = clock.now()
        self.sim.create(PODS, pod("p1", "example.com/app:v1"))
        p = self.wait_state("p1", ("waiting", "ContainerCreating"))
        self.assertEqual(p["status"]["phase"], "Pending")
        p = self.wait_state("p1", ("running", None))
        took = clock.now() - t0
        # 200 MB at 10 MB/s is 20 s of simulated time (+0.5 s to resolve), 0.2 s real here.
        self.assertGreaterEqual(took, 20.5)
        self.assertLess(took, 30)
        self.assertEqual(p["status"]["phase"], "Running")
        for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready"):
            self.assertEqual(condition(p, t)["status"], "True", t)
        cs = p["status"]["containerStatuses"][0]
        self.assertTrue(cs["ready"])
        self.assertTrue(cs["imageID"].startswith("example.com/app@sha256:"))
        pulled = [m for r, m in self.sim.events("p1") if r == "Pulled"]
        secs = float(re.search(r" in ([0-9.]+)s", pulled[0]).group(1))
        self.assertGreaterEqual(secs, 20.5)
        self.assertLess(secs, 25)
        wait_for(lambda: "example.com/app:v1" in [
            n for i in self.sim.get("/api/v1/nodes/node-1")["status"]["images"]
            for n in i["names"]], what="image in Node.status.images")

    def test_per_node_bandwidth(self):
        clock = self.sim.clock
        t0 = clock.now()
        self.sim.create(PODS, pod("fast", "example.com/app:v1", node="node-2"))
        self.wait_state("fast", ("running", None))
        self.assertLess(clock.now() - t0, 15)      # 100 MB/s: 2.5 s, not 20.5 s

    def wait_seen(self, seen, want, timeout=10):
        wait_for(lambda: want in seen, timeout, "state %s (seen %s)" % (want, seen))

    def test_private_image_needs_the_right_secret(self):
        image = "registry.example.com/private/app:1.0"
        seen = self.sim.record_states("nosecret")
        self.sim.create(PODS, pod("nosecret", image))
        self.wait_seen(seen, ("waiting", "ErrImagePull"))
        failed = [m for r, m in self.sim.events("nosecret") if m.startswith("Failed to pull")]
        self.assertIn("401 Unauthorized", failed[0])
        self.sim.create("/api/v1/namespaces/default/secrets", dockerconfigjson_secret(
            "wrong", "default", "registry.example.com", "ota", "nope"))
        seen = self.sim.record_states("wrongsecret")
        self.sim.create(PODS, pod("wrongsecret", image, imagePullSecrets=[{"name": "wrong"}]))
        self.wait_seen(seen, ("waiting", "ErrImagePull"))
        self.sim.create("/api/v1/namespaces/default/secrets", dockerconfigjson_secret(
            "regcred", "default", "https://registry.example.com", "ota", "s3cret"))
        self.sim.create(PODS, pod("withsecret", image, imagePullSecrets=[{"name": "regcred"}]))
        self.wait_state("withsecret", ("running", None))
        # As in Kubernetes, IfNotPresent lets any pod on node-1 use the now cached image.
        self.sim.create(PODS, pod("cached", image))
        self.wait_state("cached", ("running", None))
        # A secret of the right content in another namespace does not help (on node-2).
        self.sim.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                               "metadata": {"name": "other"}})
        self.sim.create("/api/v1/namespaces/other/secrets", dockerconfigjson_secret(
            "regcred2", "other", "registry.example.com", "ota", "s3cret"))
        seen = self.sim.record_states("cross")
        self.sim.create(PODS, pod("cross", image, node="node-2",
                                  imagePullSecrets=[{"name": "regcred2"}]))
        self.wait_seen(seen, ("waiting", "ErrImagePull"))
        self.assertIn("FailedToRetrieveImagePullSecret", [r for r, _ in self.sim.events("cross")])

    def test_unknown_image_err_image_pull_then_backoff(self):
        seen = self.sim.record_states("ghost")
        self.sim.create(PODS, pod("ghost", "example.com/ghost:1.0"))
        self.wait_seen(seen, ("waiting", "ImagePullBackOff"))
        self.assertEqual(seen[:3], [("waiting", "ContainerCreating"), ("waiting", "ErrImagePull"),
                                    ("waiting", "ImagePullBackOff")])
        failed = [m for r, m in self.sim.events("ghost") if m.startswith("Failed to pull")]
        self.assertIn('failed to resolve reference "example.com/ghost:1.0"', failed[0])
        self.assertIn("example.com/ghost:1.0: not found", failed[0])
        p = self.sim.pod("ghost")
        self.assertEqual(p["status"]["phase"], "Pending")
        self.assertEqual(p["status"]["containerStatuses"][0]["state"]["waiting"]["message"],
                         'Back-off pulling image "example.com/ghost:1.0"')
        self.assertEqual(condition(p, "Ready")["reason"], "ContainersNotReady")
        # After the 10 s back-off the kubelet tries again, and fails again.
        wait_for(lambda: len(seen) >= 5, 10, "a second ErrImagePull (seen %s)" % seen)
        self.assertEqual(seen[3:5], [("waiting", "ErrImagePull"), ("waiting", "ImagePullBackOff")])
        self.assertEqual([r for r, _ in self.sim.events("ghost")].count("Pulling"), 1)
        self.assertEqual([e["count"] for e in self.sim.items("/api/v1/namespaces/default/events")
                          if e["reason"] == "Pulling"], [2])

    def test_pull_policies(self):
        # IfNotPresent with the image present: no pull.
        self.sim.create(PODS, pod("a", "busybox:1.36"))
        self.wait_state("a", ("running", None))
        self.sim.create(PODS, pod("b", "busybox:1.36", container={"imagePullPolicy": "IfNotPresent"}))
        self.wait_state("b", ("running", None))
        self.assertIn(("Pulled", 'Container image "busybox:1.36" already present on machine'),
                      self.sim.events("b"))
        self.assertNotIn("Pulling", [r for r, _ in self.sim.events("b")])
        # Always pulls even when present.
        self.sim.create(PODS, pod("c", "busybox:1.36", container={"imagePullPolicy": "Always"}))
        self.wait_state("c", ("running", None))
        self.assertIn(("Pulling", 'Pulling image "busybox:1.36"'), self.sim.events("c"))
        # Never: fine when present, ErrImageNeverPull when not.
        self.sim.create(PODS, pod("d", "busybox:1.36", container={"imagePullPolicy": "Never"}))
        self.wait_state("d", ("running", None))
        self.sim.create(PODS, pod("e", "example.com/app:v1", container={"imagePullPolicy": "Never"}))
        p = self.wait_state("e", ("waiting", "ErrImageNeverPull"))
        self.assertEqual(p["status"]["containerStatuses"][0]["state"]["waiting"]["message"],
                         'Container image "example.com/app:v1" is not present with pull policy '
                         'of Never')

    def test_latest_and_untagged_default_to_always(self):
        self.sim.create(PODS, pod("l1", "busybox:latest", node="node-2"))
        self.wait_state("l1", ("running", None))
        self.sim.create(PODS, pod("l2", "busybox", node="node-2"))
        self.wait_state("l2", ("running", None))
        self.assertIn(("Pulling", 'Pulling image "busybox"'), self.sim.events("l2"))

    def test_init_containers_run_first_in_order(self):
        inits = [{"name": "one", "image": "busybox:1.36", "command": ["cp", "/bin/busybox", "/x/true"]},
                 {"name": "two", "image": "busybox:1.36", "command": ["sh", "-c", "sleep 5"]}]
        self.sim.create(PODS, pod("i", "example.com/app:v1", initContainers=inits))
        p = self.wait_state("i", ("running", None), init=True, cname="two")
        self.assertEqual(container_state(p, "one", init=True), ("terminated", "Completed"))
        self.assertEqual(container_state(p, "c"), ("waiting", "PodInitializing"))
        self.assertEqual(condition(p, "Initialized")["status"], "False")
        self.assertIn("two", condition(p, "Initialized")["message"])
        p = self.wait_state("i", ("running", None), timeout=15)
        self.assertEqual(container_state(p, "two", init=True), ("terminated", "Completed"))
        self.assertEqual(condition(p, "Initialized")["status"], "True")
        started = [m for r, m in self.sim.events("i") if r == "Started"]
        self.assertEqual(started, ["Started container one", "Started container two",
                                   "Started container c"])

    def test_exiting_containers_succeed_or_fail(self):
        self.sim.create(PODS, pod("ok", containers=[
            {"name": "t", "image": "busybox:1.36", "command": ["/ota-bin/true"]}],
            restartPolicy="Never"))
        p = wait_for(lambda: (self.sim.pod("ok")["status"]["phase"] == "Succeeded"
                              and self.sim.pod("ok")), what="Succeeded")
        self.assertEqual(p["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"], 0)
        self.sim.create(PODS, pod("bad", containers=[
            {"name": "f", "image": "busybox:1.36", "command": ["false"]}], restartPolicy="Never"))
        p = wait_for(lambda: (self.sim.pod("bad")["status"]["phase"] == "Failed"
                              and self.sim.pod("bad")), what="Failed")
        self.assertEqual(p["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"], 1)
        # Long-running containers stay Running.
        self.sim.create(PODS, pod("long", "busybox:1.36", restartPolicy="Never"))
        self.wait_state("long", ("running", None))
        self.sim.clock.sleep(60)
        self.assertEqual(self.sim.pod("long")["status"]["phase"], "Running")

    def test_restart_policy_always_crash_loops_exiting_containers(self):
        seen = self.sim.record_states("loop")
        self.sim.create(PODS, pod("loop", containers=[
            {"name": "t", "image": "busybox:1.36", "command": ["true"]}]))
        self.wait_seen(seen, ("waiting", "CrashLoopBackOff"))
        p = self.sim.pod("loop")
        cs = p["status"]["containerStatuses"][0]
        self.assertGreaterEqual(cs["restartCount"], 1)
        self.assertEqual(cs["lastState"]["terminated"]["reason"], "Completed")
        self.assertIn("back-off 10s restarting failed container=t pod=loop_default",
                      cs["state"]["waiting"]["message"])
        self.assertEqual(p["status"]["phase"], "Running")
        wait_for(lambda: self.sim.pod("loop")["status"]["containerStatuses"][0]
                 ["restartCount"] >= 2, what="restarted after the back-off")

    def test_node_images_capped_at_50(self):
        images = [{"image": "example.com/img%02d:1" % i, "size": (i + 1) * 1000}
                  for i in range(60)]
        sim = SimCluster(nodes=["node-9"], scale=self.scale, light=self.LIGHT, config={
            "images": images + [{"image": "example.com/huge:1", "size": 10**9}],
            "nodes": {"node-9": {"images": [i["image"] for i in images]}}})
        self.addCleanup(sim.close)
        status_images = sim.get("/api/v1/nodes/node-9")["status"]["images"]
        self.assertEqual(len(status_images), 50)
        sim.create(PODS, pod("h", "example.com/huge:1", node="node-9"))
        wait_for(lambda: container_state(sim.pod("h")) == ("running", None), what="huge running")
        status_images = wait_for(lambda: [i for i in sim.get("/api/v1/nodes/node-9")["status"]
                                          ["images"] if "example.com/huge:1" in i["names"]]
                                 and sim.get("/api/v1/nodes/node-9")["status"]["images"],
                                 what="huge in node images")
        self.assertEqual(len(status_images), 50)
        sizes = [i["sizeBytes"] for i in status_images]
        self.assertEqual(sizes, sorted(sizes, reverse=True))

    def test_image_gc_spares_images_of_existing_pods(self):
        images = {x: "example.com/gc-%s:1" % x for x in "abcd"}
        sim = SimCluster(nodes=["node-9"], scale=self.scale, light=self.LIGHT, config={
            "images": [{"image": i, "size": 300_000_000} for i in images.values()],
            "preloadedImages": [], "imageMinimumGCAge": 0,
            "nodes": {"node-9": {"imageFsBytes": 1_000_000_000, "bandwidth": 10**9}}})
        self.addCleanup(sim.close)
        kubelet = sim.cluster.kubelets["node-9"]

        def node_images():
            return {n for i in sim.get("/api/v1/nodes/node-9")["status"]["images"]
                    for n in i["names"] if ":" in n.rsplit("/", 1)[-1] and "@" not in n}

        def run(name, image, **kw):
            sim.create(PODS, pod(name, image, node="node-9", **kw))
            wait_for(lambda: container_state(sim.pod(name))[0] in ("running", "terminated"),
                     what=name + " started")

        def delete(name):
            sim.call("DELETE", PODS + "/" + name)
            wait_for(lambda: sim.pod(name) is None, what=name + " gone")

        # A finished pod (like a pre-pull Job's) keeps its exited container, so its image.
        run("keep", images["a"], restartPolicy="Never", container={"command": ["true"]})
        run("b", images["b"])
        run("c", images["c"])
        delete("b")
        delete("c")
        kubelet.enqueue(IMAGE_GC_KEY)         # 900 of 1000 MB used: above the 85 % mark
        wait_for(lambda: node_images() == {images["a"], images["c"]}, what="b collected")
        delete("keep")
        run("d", images["d"])
        delete("d")
        kubelet.enqueue(IMAGE_GC_KEY)
        wait_for(lambda: node_images() == {images["c"], images["d"]}, what="a collected")

    def test_pod_deleted_while_pulling_stays_terminating(self):
        clock = self.sim.clock
        self.sim.create(PODS, pod("slow", "example.com/big:1.0"))      # 200 s of pulling
        self.wait_state("slow", ("waiting", "ContainerCreating"))
        t0 = clock.now()
        code, _ = self.sim.call("DELETE", PODS + "/slow")
        self.assertEqual(code, 200)
        clock.sleep(50)
        p = self.sim.pod("slow")
        self.assertIsNotNone(p, "pod vanished while its image was still pulling")
        self.assertTrue(p["metadata"].get("deletionTimestamp"))
        wait_for(lambda: self.sim.pod("slow") is None, 10, "pod removed after the pull")
        self.assertGreater(clock.now() - t0, 150)
        wait_for(lambda: "example.com/big:1.0" in [
            n for i in self.sim.get("/api/v1/nodes/node-1")["status"]["images"]
            for n in i["names"]], what="the pull finished regardless")

    def test_status_keeps_conditions_the_kubelet_does_not_own(self):
        self.sim.create(PODS, pod("k", "example.com/app:v1"))
        self.wait_state("k", ("waiting", "ContainerCreating"))
        cond = {"type": "PodNeedUpgrade", "status": "True", "message": "controllerrevision: abc"}
        code, out = self.sim.call("PATCH", PODS + "/k/status",
                                  {"status": {"conditions": [cond]}},
                                  content_type="application/strategic-merge-patch+json")
        self.assertEqual(code, 200, out)
        p = self.wait_state("k", ("running", None))
        self.assertEqual(condition(p, "PodNeedUpgrade")["message"], "controllerrevision: abc")
        self.assertEqual(condition(p, "Ready")["status"], "True")

    def test_kubelet_writes_as_its_node(self):
        calls = []
        real_call = self.sim.api.call

        def recording_call(user, method, path, *a, **kw):
            calls.append((user.name, method, path))
            return real_call(user, method, path, *a, **kw)
        self.sim.api.call = recording_call
        self.sim.create(PODS, pod("w", "busybox:1.36", node="node-2"))
        self.wait_state("w", ("running", None))
        writers = {u for u, m, p in calls if p == PODS + "/w/status" and m in ("PUT", "PATCH")}
        self.assertEqual(writers, {"system:node:node-2"})


if __name__ == "__main__":
    unittest.main()
