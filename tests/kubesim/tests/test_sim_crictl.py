"""The simulated kubelet running a CRI client: `crictl rmi` in a pod that mounts the node's
runtime socket deletes images from the node (and from Node.status.images), with crictl's
output and exit codes; an image that is missing or in use, and a socket that is not
mounted or not the node's, fail as crictl does. The Job is shaped like ota-controller's
ImageCache purge Job (docs/design.md "Purge Job")."""

import unittest

from kubesim.sim import crictl
from kubesim.sim.testing import SimCluster, condition, wait_for

MB = 1_000_000
NS = "kube-fledged"
CRICTL = "example.com/tools/crictl:v1.30"
CONTAINERD = "/run/containerd/containerd.sock"
CONFIG = {
    "defaultBandwidth": 10 * MB,
    "images": [
        {"image": "busybox:1.36", "size": 4 * MB},
        {"image": "nginx:1.25", "size": 70 * MB},
        {"image": "nginx:1.27", "size": 72 * MB},
        {"image": "registry.k8s.io/pause:3.10", "size": 1 * MB},
        {"image": CRICTL, "size": 20 * MB},
    ],
    "preloadedImages": ["registry.k8s.io/pause:3.10", "nginx:1.25", "busybox:1.36"],
    "nodes": {"node-2": {"criSocket": "/var/run/crio/crio.sock"}},
}


def purge_job(name, images, node="node-1", sock=CONTAINERD, mount=True, volume=None,
              policy="FallbackToLogsOnError"):
    """A Job as ota-controller renders an ImageCache purge (controller/purge_job.c)."""
    def container(i, image):
        c = {"name": "rmi-%d" % i, "image": CRICTL, "imagePullPolicy": "IfNotPresent",
             "command": ["crictl", "--runtime-endpoint=unix://" + sock,
                         "--image-endpoint=unix://" + sock, "rmi", image],
             "terminationMessagePolicy": policy,
             "securityContext": {"runAsUser": 0, "runAsNonRoot": False,
                                 "allowPrivilegeEscalation": False,
                                 "capabilities": {"drop": ["ALL"]}}}
        if mount:
            c["volumeMounts"] = [{"name": "cri-socket", "mountPath": sock, "readOnly": True}]
        return c
    vol = volume or {"name": "cri-socket", "hostPath": {"path": sock, "type": "Socket"}}
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": NS,
                         "labels": {"app.kubernetes.io/managed-by": "ota-prepull"}},
            "spec": {"backoffLimit": 0, "activeDeadlineSeconds": 300, "template": {
                "metadata": {"labels": {"app.kubernetes.io/managed-by": "ota-prepull"}},
                "spec": {"restartPolicy": "Never", "nodeName": node,
                         "tolerations": [{"operator": "Exists"}],
                         "automountServiceAccountToken": False,
                         "volumes": [vol] if mount or volume else [],
                         "containers": [container(i, im) for i, im in enumerate(images)]}}}}


class CrictlParseTest(unittest.TestCase):
    """Which commands are a crictl rmi, without a cluster."""

    def inv(self, *argv):
        return crictl.parse({"command": list(argv)})

    def test_forms_of_the_endpoint_flags(self):
        i = self.inv("crictl", "--runtime-endpoint=unix:///a.sock", "--image-endpoint",
                     "unix:///b.sock", "rmi", "nginx", "busybox:1.36")
        self.assertEqual((i.runtime_endpoint, i.image_endpoint, i.images),
                         ("unix:///a.sock", "unix:///b.sock", ["nginx", "busybox:1.36"]))
        i = self.inv("/usr/local/bin/crictl", "-D", "-r", "/a.sock", "-t", "5s", "rmi", "x")
        self.assertEqual((i.runtime_endpoint, i.image_endpoint, i.images), ("/a.sock", None,
                                                                             ["x"]))
        i = crictl.parse({"command": ["crictl"], "args": ["rmi", "nginx"]})
        self.assertEqual(i.images, ["nginx"])

    def test_other_commands_are_not_rmi(self):
        for argv in (["crictl", "images"], ["crictl", "rmi"], ["crictl", "rmi", "--prune"],
                     ["crictl", "--bogus", "rmi", "x"], ["crictl", "-r"],
                     ["sh", "-c", "crictl rmi x"], ["/bin/crictl-wrapper", "rmi", "x"], []):
            self.assertIsNone(self.inv(*argv), argv)

    def test_socket_reached_only_through_a_host_path_of_the_node_socket(self):
        def reach(path, mounts, volumes, node_sock=CONTAINERD):
            return crictl.reaches_socket(path, {"volumeMounts": mounts}, {"volumes": volumes},
                                         node_sock)
        sock = {"name": "s", "hostPath": {"path": CONTAINERD, "type": "Socket"}}
        at = [{"name": "s", "mountPath": CONTAINERD}]
        self.assertTrue(reach(CONTAINERD, at, [sock]))
        self.assertTrue(reach(CONTAINERD, at, [{"name": "s", "hostPath": {"path": CONTAINERD}}]))
        self.assertTrue(reach("/var/run/containerd/containerd.sock",
                              [{"name": "s", "mountPath": "/var/run/containerd/containerd.sock"}],
                              [sock]))
        d = {"name": "s", "hostPath": {"path": "/run/containerd", "type": "Directory"}}
        self.assertTrue(reach(CONTAINERD, [{"name": "s", "mountPath": "/run/containerd"}], [d]))
        self.assertTrue(reach("/host/containerd.sock", [{"name": "s", "mountPath": "/host"}],
                              [d]))
        self.assertFalse(reach(CONTAINERD, [], [sock]))                     # not mounted
        self.assertFalse(reach(CONTAINERD, at, [{"name": "s", "emptyDir": {}}]))
        self.assertFalse(reach(CONTAINERD, at, [dict(sock, hostPath={
            "path": CONTAINERD, "type": "File"})]))
        self.assertFalse(reach(CONTAINERD, at, [sock], "/var/run/crio/crio.sock"))
        self.assertFalse(reach(CONTAINERD, [{"name": "s", "mountPath": "/run/containerd",
                                             "subPath": "x"}], [d]))

    def test_termination_message_keeps_the_end(self):
        out = "".join("line %d\n" % i for i in range(200))
        msg = crictl.termination_message(out)
        self.assertTrue(msg.endswith("line 199\n"))
        self.assertEqual(msg.count("\n"), 80)
        self.assertLessEqual(len(crictl.termination_message("x" * 5000)), 2048)


class CrictlKubeletTest(unittest.TestCase):
    LIGHT = False

    def setUp(self):
        self.sim = SimCluster(nodes=["node-1", "node-2"], scale=100.0, config=CONFIG,
                              light=self.LIGHT)
        self.addCleanup(self.sim.close)
        self.sim.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                               "metadata": {"name": NS}})

    def node_images(self, node="node-1"):
        return {n for i in self.sim.get("/api/v1/nodes/" + node)["status"]["images"]
                for n in i["names"]}

    def run_job(self, job, want):
        """Creates the Job, waits for it to end with condition `want`; its pod's
        container statuses by name."""
        self.sim.create("/apis/batch/v1/namespaces/%s/jobs" % NS, job)
        path = "/apis/batch/v1/namespaces/%s/jobs/%s" % (NS, job["metadata"]["name"])
        done = wait_for(lambda: (condition(self.sim.get(path), "Complete") or
                                 condition(self.sim.get(path), "Failed")),
                        what="job %s to end" % job["metadata"]["name"])
        self.assertEqual((done["type"], done["status"]), (want, "True"))
        pods = self.sim.items("/api/v1/namespaces/%s/pods" % NS,
                              labelSelector="job-name=" + job["metadata"]["name"])
        self.assertEqual(len(pods), 1)
        return {cs["name"]: cs for cs in pods[0]["status"]["containerStatuses"]}

    def terminated(self, cs):
        self.assertIn("terminated", cs["state"], cs)
        return cs["state"]["terminated"]

    def test_purge_job_deletes_images_from_the_node(self):
        self.assertIn("docker.io/library/nginx:1.25", self.node_images())
        st = self.run_job(purge_job("purge-1", ["nginx:1.25", "docker.io/library/busybox:1.36"]),
                          "Complete")
        for name in ("rmi-0", "rmi-1"):
            t = self.terminated(st[name])
            self.assertEqual((t["exitCode"], t["reason"]), (0, "Completed"))
            self.assertNotIn("message", t)      # logs are the message only on failure
        images = wait_for(lambda: (lambda i: "docker.io/library/nginx:1.25" not in i and i)(
            self.node_images()), what="nginx:1.25 to leave Node.status.images")
        self.assertFalse(any(n.startswith("docker.io/library/nginx:1.25") or
                             n.startswith("docker.io/library/busybox") for n in images), images)
        self.assertIn("registry.k8s.io/pause:3.10", images)
        self.assertIn("example.com/tools/crictl:v1.30", images)
        # node-2 keeps its own copies
        self.assertIn("docker.io/library/nginx:1.25", self.node_images("node-2"))

    def test_missing_image_fails_its_container_only(self):
        st = self.run_job(purge_job("purge-2", ["nginx:1.27", "nginx:1.25"]), "Failed")
        t = self.terminated(st["rmi-0"])
        self.assertEqual((t["exitCode"], t["reason"]), (1, "Error"))
        self.assertRegex(t["message"], r'^time="[0-9T:Z-]+" level=error msg="no such image '
                         r'nginx:1.27"\ntime="[0-9T:Z-]+" level=fatal msg="unable to remove '
                         r'the image\(s\)"\n$')
        self.assertEqual(self.terminated(st["rmi-1"])["exitCode"], 0)
        wait_for(lambda: "docker.io/library/nginx:1.25" not in self.node_images(),
                 what="nginx:1.25 deleted by the other container")

    def test_image_used_by_a_running_container_is_kept(self):
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": NS},
               "spec": {"nodeName": "node-1", "containers": [
                   {"name": "web", "image": "nginx:1.25", "imagePullPolicy": "IfNotPresent"}]}}
        self.sim.create("/api/v1/namespaces/%s/pods" % NS, pod)
        wait_for(lambda: (self.sim.pod("web", NS) or {}).get("status", {}).get("phase") ==
                 "Running", what="web running")
        st = self.run_job(purge_job("purge-3", ["nginx:1.25"]), "Failed")
        t = self.terminated(st["rmi-0"])
        self.assertEqual(t["exitCode"], 1)
        self.assertIn('msg="error of removing image \\"nginx:1.25\\": rpc error: code = Unknown '
                      'desc = image used by ', t["message"])
        self.assertIn(": image is in use by a container\"\n", t["message"])
        self.assertIn("docker.io/library/nginx:1.25", self.node_images())

    def test_without_the_socket_mounted_crictl_cannot_connect(self):
        st = self.run_job(purge_job("purge-4", ["nginx:1.25"], mount=False), "Failed")
        t = self.terminated(st["rmi-0"])
        self.assertEqual(t["exitCode"], 1)
        self.assertIn('level=fatal msg="validate service connection: validate CRI v1 image API '
                      'for endpoint \\"unix:///run/containerd/containerd.sock\\": rpc error: '
                      'code = Unavailable desc = connection error: ', t["message"])
        self.assertIn("dial unix /run/containerd/containerd.sock: connect: no such file or "
                      "directory", t["message"])
        self.assertIn("docker.io/library/nginx:1.25", self.node_images())

    def test_the_socket_must_be_the_nodes_runtime_socket(self):
        # node-2 runs CRI-O: containerd's socket is not there
        st = self.run_job(purge_job("purge-5", ["nginx:1.25"], node="node-2"), "Failed")
        self.assertIn("connect: no such file or directory",
                      self.terminated(st["rmi-0"])["message"])
        self.assertIn("docker.io/library/nginx:1.25", self.node_images("node-2"))
        # its own socket, under /run (= /var/run), works
        self.run_job(purge_job("purge-6", ["nginx:1.25"], node="node-2",
                               sock="/run/crio/crio.sock"), "Complete")
        wait_for(lambda: "docker.io/library/nginx:1.25" not in self.node_images("node-2"),
                 what="nginx:1.25 deleted on node-2")

    def test_without_fallback_to_logs_a_failure_has_no_message(self):
        st = self.run_job(purge_job("purge-7", ["nginx:1.27"], policy="File"), "Failed")
        t = self.terminated(st["rmi-0"])
        self.assertEqual(t["exitCode"], 1)
        self.assertNotIn("message", t)


class CrictlLightKubeletTest(CrictlKubeletTest):
    """The same with the light kubelets (--light), which share the kubelet's logic."""
    LIGHT = True


if __name__ == "__main__":
    unittest.main()
