"""Image volumes (KEP-4639, `spec.volumes[].image`) behind `--feature-gates ImageVolume`:
the apiserver drops the field when the gate is off (a Pod, Job or DaemonSet is refused with
`must specify a volume type`), defaults and validates it when on; the simulated kubelet
pulls every image volume once per pod before any container, shows a volume's error on each
container that mounts it, and fails creating such containers on a node whose runtime
cannot mount images."""

import unittest

from kubesim import defaults
from kubesim.api import SYSTEM_ADMIN, Api
from kubesim.clock import Clock
from kubesim.sim.registry import dockerconfigjson_secret
from kubesim.sim.testing import SimCluster, container_state, wait_for

PODS = "/api/v1/namespaces/default/pods"
JOBS = "/apis/batch/v1/namespaces/default/jobs"
DAEMONSETS = "/apis/apps/v1/namespaces/default/daemonsets"
MB = 1_000_000
HELPER = "busybox:1.36"          # stands for the static helper image; preloaded below
MODEL = "example.com/model:1.0"
DATA = "example.com/data:2.0"
PRIVATE = "registry.example.com/private/model:1.0"
MISSING = "example.com/missing:1.0"
CONFIG = {
    "defaultBandwidth": 10 * MB,
    "images": [
        {"image": HELPER, "size": 4 * MB},
        {"image": "registry.k8s.io/pause:3.10", "size": 320_000},
        {"image": MODEL, "size": 50 * MB},
        {"image": DATA, "size": 30 * MB},
        {"image": PRIVATE, "size": 20 * MB, "username": "ota", "password": "s3cret"},
    ],
    "preloadedImages": ["registry.k8s.io/pause:3.10", HELPER],
    "nodes": {"node-2": {"imageVolumes": False}},
}


def helper(name, *volumes, **extra):
    """A container running the static helper, mounting the given volumes read-only."""
    c = {"name": name, "image": HELPER, "command": ["/ota-bin/true"],
         "volumeMounts": [{"name": v, "mountPath": "/mnt/" + v, "readOnly": True}
                          for v in volumes]}
    c.update(extra)
    return c


def image_volume(name, reference, policy=None):
    iv = {"reference": reference}
    if policy:
        iv["pullPolicy"] = policy
    return {"name": name, "image": iv}


def pod(name, volumes, containers, node="node-1", **spec):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": dict({"nodeName": node, "restartPolicy": "Never", "volumes": volumes,
                          "containers": containers}, **spec)}


def job(name, volumes, containers):
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"backoffLimit": 0, "template": {"spec": {
                "nodeName": "node-1", "restartPolicy": "Never", "volumes": volumes,
                "containers": containers}}}}


def daemonset(name, volumes, containers):
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": labels}, "template": {
                "metadata": {"labels": labels},
                "spec": {"volumes": volumes, "containers": containers}}}}


def node_image_names(sim, node):
    return {n for i in (sim.get("/api/v1/nodes/" + node)["status"].get("images") or [])
            for n in i["names"]}


def full(image):
    return image if image.count("/") >= 1 and "." in image.split("/")[0] \
        else "docker.io/library/" + image


class ApiTest(unittest.TestCase):
    """The apiserver side only (no simulated cluster)."""

    def api(self, on):
        return Api(Clock(1.0), feature_gates={"ImageVolume": on})

    def post(self, api, path, body):
        return api.call(SYSTEM_ADMIN, "POST", path, body)

    def test_feature_gates_flag(self):
        self.assertEqual(defaults.parse_feature_gates(""), {"ImageVolume": False})
        self.assertEqual(defaults.parse_feature_gates("ImageVolume=true"),
                         {"ImageVolume": True})
        self.assertEqual(defaults.parse_feature_gates(" ImageVolume=True ,"),
                         {"ImageVolume": True})
        with self.assertRaisesRegex(ValueError, "unrecognized feature gate: Nope"):
            defaults.parse_feature_gates("Nope=true")
        with self.assertRaisesRegex(ValueError, 'strconv.ParseBool: parsing "yes"'):
            defaults.parse_feature_gates("ImageVolume=yes")
        self.assertEqual(Api(Clock(1.0)).feature_gates, {"ImageVolume": False})

    def test_gate_off_drops_the_field_and_refuses(self):
        api = self.api(False)
        vols = [{"name": "scratch", "emptyDir": {}}, image_volume("model", MODEL)]
        cases = [
            (JOBS, job("j", vols, [helper("c", "model")]),
             'Job.batch "j" is invalid: spec.template.spec.volumes[1]: Required value: '
             'must specify a volume type', "spec.template.spec.volumes[1]"),
            (PODS, pod("p", vols, [helper("c", "model")]),
             'Pod "p" is invalid: spec.volumes[1]: Required value: must specify a volume type',
             "spec.volumes[1]"),
            (DAEMONSETS, daemonset("d", vols, [helper("c", "model")]),
             'DaemonSet.apps "d" is invalid: spec.template.spec.volumes[1]: Required value: '
             'must specify a volume type', "spec.template.spec.volumes[1]"),
        ]
        for path, body, message, field in cases:
            code, out = self.post(api, path, body)
            self.assertEqual(code, 422, out)
            self.assertEqual(out["reason"], "Invalid")
            self.assertEqual(out["message"], message)
            self.assertEqual(out["details"]["causes"], [
                {"reason": "FieldValueRequired", "field": field,
                 "message": "Required value: must specify a volume type"}])
        # an update that adds one is refused the same way
        ds = daemonset("d2", [{"name": "scratch", "emptyDir": {}}], [helper("c")])
        code, cur = self.post(api, DAEMONSETS, ds)
        self.assertEqual(code, 201, cur)
        cur["spec"]["template"]["spec"]["volumes"].append(image_volume("model", MODEL))
        code, out = api.call(SYSTEM_ADMIN, "PUT", DAEMONSETS + "/d2", cur)
        self.assertEqual(code, 422, out)
        self.assertIn("spec.template.spec.volumes[1]: Required value: must specify a volume "
                      "type", out["message"])

    def test_gate_on_keeps_and_defaults(self):
        api = self.api(True)
        vols = [image_volume("a", "example.com/model:latest"),
                image_volume("b", "example.com/model"),
                image_volume("c", MODEL),
                image_volume("d", "example.com/model@sha256:" + "a" * 64),
                image_volume("e", MODEL, "Never"),
                image_volume("f", "example.com/model", "IfNotPresent"),
                {"name": "g", "emptyDir": None}]
        code, out = self.post(api, PODS, pod("p", vols, [helper("c", "a", "b")]))
        self.assertEqual(code, 201, out)
        self.assertEqual(out["spec"]["volumes"][-1], {"name": "g", "emptyDir": {}})
        got = {v["name"]: v["image"] for v in out["spec"]["volumes"] if "image" in v}
        self.assertEqual({n: v["pullPolicy"] for n, v in got.items()},
                         {"a": "Always", "b": "Always", "c": "IfNotPresent",
                          "d": "IfNotPresent", "e": "Never", "f": "IfNotPresent"})
        self.assertEqual(got["b"]["reference"], "example.com/model")
        self.assertNotIn("emptyDir", out["spec"]["volumes"][0])
        code, out = self.post(api, JOBS, job("j", [image_volume("m", MODEL)],
                                             [helper("c", "m")]))
        self.assertEqual(code, 201, out)
        self.assertEqual(out["spec"]["template"]["spec"]["volumes"],
                         [{"name": "m", "image": {"reference": MODEL,
                                                  "pullPolicy": "IfNotPresent"}}])

    def test_gate_on_validation(self):
        api = self.api(True)
        code, out = self.post(api, PODS, pod("noref", [{"name": "m", "image": {}}],
                                             [helper("c", "m")]))
        self.assertEqual(code, 422, out)
        self.assertEqual(out["message"],
                         'Pod "noref" is invalid: spec.volumes[0].image.reference: Required value')
        # a template may leave the reference to whoever makes its pods (ResourceIsPod)
        code, out = self.post(api, JOBS, job("noref", [{"name": "m", "image": {}}],
                                             [helper("c", "m")]))
        self.assertEqual(code, 201, out)
        code, out = self.post(api, PODS, pod("badpol", [image_volume("m", MODEL, "Sometimes")],
                                             [helper("c", "m")]))
        self.assertEqual(code, 422, out)
        self.assertEqual(out["message"], 'Pod "badpol" is invalid: spec.volumes[0].image.'
                         'pullPolicy: Unsupported value: "Sometimes": supported values: '
                         '"Always", "IfNotPresent", "Never"')
        # readOnly false is not refused: the runtime mounts image volumes read-only anyway
        rw = helper("c", "m")
        rw["volumeMounts"][0]["readOnly"] = False
        code, out = self.post(api, PODS, pod("rw", [image_volume("m", MODEL)], [rw]))
        self.assertEqual(code, 201, out)


class KubeletTest(unittest.TestCase):
    LIGHT = False       # LightKubeletTest below runs these with the light kubelets

    def setUp(self):
        self.sim = SimCluster(nodes=["node-1", "node-2"], scale=100.0, config=CONFIG,
                              light=self.LIGHT, feature_gates={"ImageVolume": True})
        self.addCleanup(self.sim.close)

    def wait_state(self, name, cname, want, init=False, timeout=10):
        return wait_for(lambda: container_state(self.sim.pod(name), cname, init) == want and
                        self.sim.pod(name), timeout, "%s/%s in %s" % (name, cname, want))

    def status(self, p, cname):
        return next(cs for cs in p["status"]["containerStatuses"] if cs["name"] == cname)

    def pod_events(self, name):
        """(reason, message, fieldPath) of the Events on pod `name`, oldest first."""
        evs = [e for e in self.sim.items("/api/v1/namespaces/default/events")
               if e["involvedObject"].get("name") == name]
        evs.sort(key=lambda e: (e["firstTimestamp"], e["metadata"]["name"]))
        return [(e["reason"], e["message"], e["involvedObject"].get("fieldPath")) for e in evs]

    def test_nodes_report_their_runtime(self):
        info = {n: self.sim.get("/api/v1/nodes/" + n)["status"]["nodeInfo"]
                for n in ("node-1", "node-2")}
        self.assertEqual(info["node-1"]["containerRuntimeVersion"], "containerd://2.1.4")
        self.assertEqual(info["node-2"]["containerRuntimeVersion"], "containerd://1.7.24")

    def test_two_volumes_pulled_before_any_container(self):
        before = node_image_names(self.sim, "node-1")
        self.assertFalse({full(MODEL), full(DATA)} & before)
        self.sim.create(PODS, pod("two", [image_volume("model", MODEL),
                                          image_volume("data", DATA)],
                                  [helper("pull-model", "model"), helper("pull-data", "data")],
                                  initContainers=[helper("init")]))
        p = wait_for(lambda: (self.sim.pod("two") or {}).get("status", {}).get("phase")
                     == "Succeeded" and self.sim.pod("two"), 10, "pod two Succeeded")
        for cname in ("pull-model", "pull-data"):
            term = self.status(p, cname)["state"]["terminated"]
            self.assertEqual((term["exitCode"], term["reason"]), (0, "Completed"))
        wait_for(lambda: {full(MODEL), full(DATA)} <= node_image_names(self.sim, "node-1"),
                 10, "both images in node-1's status.images")
        if self.LIGHT:
            return
        evs = self.pod_events("two")
        pulls = [(r, m) for r, m, fp in evs if fp is None and r in ("Pulling", "Pulled")]
        self.assertEqual([r for r, _ in pulls], ["Pulling", "Pulled", "Pulling", "Pulled"])
        self.assertEqual(pulls[0][1], 'Pulling image "%s"' % MODEL)
        self.assertTrue(pulls[1][1].startswith('Successfully pulled image "%s" in ' % MODEL))
        self.assertEqual(pulls[2][1], 'Pulling image "%s"' % DATA)
        # the volumes' pulls come before anything of the init container
        first_init = next(i for i, e in enumerate(evs) if e[2] == "spec.initContainers{init}")
        last_pull = max(i for i, e in enumerate(evs) if e[2] is None and e[0] == "Pulled")
        self.assertLess(last_pull, first_init)

    def test_pulled_once_per_pod(self):
        c = helper("loop", "model")
        c["command"] = ["sh", "-c", "sleep 1"]
        self.sim.create(PODS, pod("loop", [image_volume("model", MODEL, "Always")], [c],
                                  restartPolicy="Always"))
        wait_for(lambda: self.status(self.sim.pod("loop"), "loop")["restartCount"] >= 2
                 if (self.sim.pod("loop") or {}).get("status", {}).get("containerStatuses")
                 else False, 20, "two restarts")
        if not self.LIGHT:
            pulling = [m for r, m, fp in self.pod_events("loop") if r == "Pulling"]
            self.assertEqual(pulling, ['Pulling image "%s"' % MODEL])

    def test_missing_image_fails_only_its_container(self):
        seen = self.sim.record_states("miss", "pull-missing")
        self.sim.create(PODS, pod("miss", [image_volume("model", MODEL),
                                           image_volume("missing", MISSING)],
                                  [helper("pull-model", "model"),
                                   helper("pull-missing", "missing")]))
        p = self.wait_state("miss", "pull-model", ("terminated", "Completed"))
        self.assertEqual(self.status(p, "pull-model")["state"]["terminated"]["exitCode"], 0)
        p = self.wait_state("miss", "pull-missing", ("waiting", "ImagePullBackOff"))
        self.assertIn(("waiting", "ErrImagePull"), seen)
        self.assertEqual(self.status(p, "pull-missing")["state"]["waiting"]["message"],
                         'Back-off pulling image "%s"' % MISSING)
        self.assertEqual(p["status"]["phase"], "Pending")
        if self.LIGHT:
            return
        evs = self.pod_events("miss")
        failed = [m for r, m, fp in evs if r == "Failed" and fp is None]
        self.assertEqual(failed[0], 'Failed to pull image "%s": rpc error: code = NotFound '
                         'desc = failed to pull and unpack image "%s": failed to resolve '
                         'reference "%s": %s: not found'
                         % (MISSING, full(MISSING), full(MISSING), full(MISSING)))
        on_ctr = [m for r, m, fp in evs if fp == "spec.containers{pull-missing}"]
        self.assertIn("Error: ErrImagePull", on_ctr)
        self.assertIn("Error: ImagePullBackOff", on_ctr)
        self.assertFalse([e for e in evs if e[2] == "spec.containers{pull-model}"
                          and e[0] == "Failed"])
        self.assertIn(("BackOff", 'Back-off pulling image "%s"' % MISSING, None), evs)

    def test_err_image_pull_message_is_the_runtime_error(self):
        seen = []

        def on_event(event_type, resource, obj):
            if resource == "pods" and obj["metadata"]["name"] == "msg":
                for cs in obj.get("status", {}).get("containerStatuses") or []:
                    w = cs["state"].get("waiting") or {}
                    if w.get("reason") == "ErrImagePull":
                        seen.append(w.get("message"))
        self.sim.api.subscribe(on_event)
        self.sim.create(PODS, pod("msg", [image_volume("missing", MISSING)],
                                  [helper("c", "missing")]))
        wait_for(lambda: seen, 10, "ErrImagePull")
        self.assertTrue(seen[0].startswith("rpc error: code = NotFound desc = failed to pull "
                                           'and unpack image "%s"' % full(MISSING)), seen[0])

    def test_private_image_needs_a_pull_secret(self):
        seen = self.sim.record_states("nosecret", "c")
        self.sim.create(PODS, pod("nosecret", [image_volume("m", PRIVATE)],
                                  [helper("c", "m")]))
        wait_for(lambda: ("waiting", "ErrImagePull") in seen, 10, "ErrImagePull")
        self.sim.create("/api/v1/namespaces/default/secrets", dockerconfigjson_secret(
            "regcred", "default", "registry.example.com", "ota", "s3cret"))
        self.sim.create(PODS, pod("withsecret", [image_volume("m", PRIVATE)],
                                  [helper("c", "m")], node="node-1",
                                  imagePullSecrets=[{"name": "regcred"}]))
        p = self.wait_state("withsecret", "c", ("terminated", "Completed"))
        self.assertEqual(self.status(p, "c")["state"]["terminated"]["exitCode"], 0)
        if not self.LIGHT:
            failed = [m for r, m, fp in self.pod_events("nosecret")
                      if r == "Failed" and fp is None]
            self.assertIn("401 Unauthorized", failed[0])

    def test_runtime_without_image_volumes(self):
        self.sim.create(PODS, pod("old", [image_volume("model", MODEL)],
                                  [helper("pull-model", "model"), helper("plain")],
                                  node="node-2"))
        p = self.wait_state("old", "pull-model", ("waiting", "CreateContainerError"))
        msg = self.status(p, "pull-model")["state"]["waiting"]["message"]
        self.assertRegex(msg, r'^failed to generate container "[0-9a-f]{64}" spec: failed to '
                         r'generate spec: failed to mkdir "": mkdir : no such file or directory$')
        self.wait_state("old", "plain", ("terminated", "Completed"))
        # the image was pulled (the kubelet's PullImage works on any runtime)
        wait_for(lambda: full(MODEL) in node_image_names(self.sim, "node-2"), 10,
                 "model on node-2")
        if not self.LIGHT:
            self.assertIn(("Failed", "Error: " + msg, "spec.containers{pull-model}"),
                          self.pod_events("old"))

    def test_never_with_the_image_absent(self):
        self.sim.create(PODS, pod("never", [image_volume("model", MODEL, "Never")],
                                  [helper("pull-model", "model"), helper("plain")]))
        p = self.wait_state("never", "pull-model", ("waiting", "ErrImageNeverPull"))
        self.assertEqual(self.status(p, "pull-model")["state"]["waiting"]["message"],
                         'Container image "%s" is not present with pull policy of Never'
                         % MODEL)
        self.wait_state("never", "plain", ("terminated", "Completed"))
        self.assertNotIn(full(MODEL), node_image_names(self.sim, "node-1"))

    def test_job_with_image_volumes_completes(self):
        self.sim.create(JOBS, job("pull", [image_volume("model", MODEL)],
                                  [helper("pull-model", "model")]))
        wait_for(lambda: any(c["type"] == "Complete" and c["status"] == "True" for c in
                             (self.sim.get(JOBS + "/pull") or {}).get("status", {})
                             .get("conditions") or []), 10, "Job pull Complete")
        wait_for(lambda: full(MODEL) in node_image_names(self.sim, "node-1"), 10,
                 "model on node-1")


class LightKubeletTest(KubeletTest):
    LIGHT = True


if __name__ == "__main__":
    unittest.main()
