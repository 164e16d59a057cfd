"""The OTA story on the simulated cluster, played by hand the way ota-controller will:
a pre-pull Job pinned to the node (owned by the DaemonSet pod) pulls the new revision's
image while the old pod keeps running; deleting the pod then upgrades it in seconds, and
the garbage collector removes the Job with its owner."""

import unittest

from kubesim.sim.registry import dockerconfigjson_secret
from kubesim.sim.testing import SimCluster, condition, wait_for

NS = "/apis/apps/v1/namespaces/edge"
PODS = "/api/v1/namespaces/edge/pods"
JOBS = "/apis/batch/v1/namespaces/edge/jobs"
V1 = "registry.example.com/edge/agent:v1"
V2 = "registry.example.com/edge/agent:v2"
CONFIG = {"defaultBandwidth": 1_000_000,            # 1 MB/s: 300 s for a 300 MB image
          "images": [{"image": V1, "size": 300_000_000, "username": "u", "password": "p"},
                     {"image": V2, "size": 300_000_000, "username": "u", "password": "p"},
                     {"image": "busybox:1.36-musl", "size": 1_000_000}]}


class PrePullFlowTest(unittest.TestCase):
    def setUp(self):
        self.sim = SimCluster(nodes=["node-1"], scale=200, config=CONFIG)
        self.addCleanup(self.sim.close)
        self.sim.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                               "metadata": {"name": "edge"}})
        self.sim.create("/api/v1/namespaces/edge/secrets", dockerconfigjson_secret(
            "regcred", "edge", "registry.example.com", "u", "p"))

    def agent_pods(self):
        return [p for p in self.sim.items(PODS, labelSelector="app=agent")
                if not p["metadata"].get("deletionTimestamp")]

    def running_pod(self, image):
        return wait_for(lambda: [p for p in self.agent_pods()
                                 if p["spec"]["containers"][0]["image"] == image
                                 and (condition(p, "Ready") or {}).get("status") == "True"],
                        20, "agent running " + image)[0]

    def test_prepull_then_fast_upgrade(self):
        clock = self.sim.clock
        self.sim.create(NS + "/daemonsets", {
            "apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "agent", "namespace": "edge"},
            "spec": {"selector": {"matchLabels": {"app": "agent"}},
                     "updateStrategy": {"type": "OnDelete"},
                     "template": {"metadata": {"labels": {"app": "agent"}}, "spec": {
                         "imagePullSecrets": [{"name": "regcred"}],
                         "containers": [{"name": "agent", "image": V1}]}}}})
        old = self.running_pod(V1)
        code, out = self.sim.call("PATCH", NS + "/daemonsets/agent", {"spec": {"template": {
            "spec": {"containers": [{"name": "agent", "image": V2}]}}}},
            content_type="application/strategic-merge-patch+json")
        self.assertEqual(code, 200, out)
        newest = wait_for(lambda: (lambda r: len(r) == 2 and max(r, key=lambda x: x["revision"]))(
            self.sim.items(NS + "/controllerrevisions")), what="revision 2")
        h = newest["metadata"]["labels"]["controller-revision-hash"]
        template = newest["data"]["spec"]["template"]["spec"]
        self.assertEqual(template["containers"][0]["image"], V2)

        t0 = clock.now()
        self.sim.create(JOBS, {
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "ota-prepull-" + old["metadata"]["name"], "namespace": "edge",
                         "labels": {"app.kubernetes.io/managed-by": "ota-prepull"},
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Pod",
                                              "name": old["metadata"]["name"],
                                              "uid": old["metadata"]["uid"]}]},
            "spec": {"backoffLimit": 1, "activeDeadlineSeconds": 600, "template": {"spec": {
                "nodeName": "node-1", "restartPolicy": "Never",
                "tolerations": [{"operator": "Exists"}],
                "imagePullSecrets": template["imagePullSecrets"],
                "volumes": [{"name": "bin", "emptyDir": {}}],
                "initContainers": [{"name": "helper", "image": "busybox:1.36-musl",
                                    "command": ["cp", "/bin/busybox", "/ota-bin/true"]}],
                "containers": [{"name": "c0", "image": V2, "command": ["/ota-bin/true"],
                                "imagePullPolicy": "IfNotPresent"}]}}}})
        job = wait_for(lambda: (lambda j: (condition(j, "Complete") or {}).get("status") == "True"
                                and j)(self.sim.get(JOBS + "/ota-prepull-" + old["metadata"]["name"])),
                       20, "pre-pull job complete")
        self.assertGreaterEqual(clock.now() - t0, 300)      # the pull really took its time
        self.assertEqual(job["status"]["succeeded"], 1)
        # Meanwhile the old pod kept running.
        self.assertEqual(self.sim.pod(old["metadata"]["name"], "edge")["status"]["phase"], "Running")
        wait_for(lambda: V2 in [n for i in self.sim.get("/api/v1/nodes/node-1")["status"]["images"]
                                for n in i["names"]], what="v2 in Node.status.images")

        # The upgrade: delete the old pod; the replacement needs no pull.
        t1 = clock.now()
        self.sim.call("DELETE", PODS + "/" + old["metadata"]["name"])
        new = self.running_pod(V2)
        self.assertLess(clock.now() - t1, 150)    # a pull would take 300 s
        self.assertEqual(new["metadata"]["labels"]["controller-revision-hash"], h)
        self.assertIn(("Pulled", 'Container image "%s" already present on machine' % V2),
                      self.sim.events(new["metadata"]["name"], "edge"))
        # The Job went with its owner, and its pod with the Job.
        wait_for(lambda: not self.sim.items(JOBS) and not self.sim.items(
            PODS, labelSelector="job-name"), what="job collected")


if __name__ == "__main__":
    unittest.main()
