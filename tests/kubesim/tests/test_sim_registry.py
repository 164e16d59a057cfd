"""Pure parts of the simulated cluster: image references, the registry and its
configuration file, pull secrets, container behaviour, node fitting, Go durations."""

import json
import os
import tempfile
import unittest

from kubesim.sim.kubelet import go_duration
from kubesim.sim.registry import (DEFAULT_CONFIG, ImageRef, InvalidReference, PullError,
                                  Registry, credentials_from_secret, dockerconfigjson_secret,
                                  load_config)
from kubesim.sim.runtime import SHORT_RUN, behaviour
from kubesim.sim.scheduling import should_continue_running, should_run


class ImageRefTest(unittest.TestCase):
    def test_normalisation(self):
        cases = {"busybox": "docker.io/library/busybox:latest",
                 "busybox:1.36": "docker.io/library/busybox:1.36",
                 "library/nginx:1.25": "docker.io/library/nginx:1.25",
                 "foo/bar": "docker.io/foo/bar:latest",
                 "registry.example.com/edge/agent:v1": "registry.example.com/edge/agent:v1",
                 "localhost:5000/a/b:c": "localhost:5000/a/b:c",
                 "nginx@sha256:" + "a" * 64: "docker.io/library/nginx@sha256:" + "a" * 64}
        for text, name in cases.items():
            self.assertEqual(ImageRef(text).name, name, text)

    def test_default_pull_policy(self):
        self.assertEqual(ImageRef("busybox").default_pull_policy(), "Always")
        self.assertEqual(ImageRef("busybox:latest").default_pull_policy(), "Always")
        self.assertEqual(ImageRef("busybox:1.36").default_pull_policy(), "IfNotPresent")
        self.assertEqual(ImageRef("busybox@sha256:" + "b" * 64).default_pull_policy(),
                         "IfNotPresent")

    def test_invalid(self):
        for bad in ("", "Busybox", "busybox:", "a b", "nginx@sha256:short"):
            with self.assertRaises(InvalidReference, msg=bad):
                ImageRef(bad)


class RegistryTest(unittest.TestCase):
    def test_default_config_has_the_promised_images(self):
        reg = Registry(load_config(None))
        for image in ("busybox:1.36-musl", "nginx:1.25", "registry.example.com/edge/big-model:1.0"):
            self.assertIsNotNone(reg.lookup(ImageRef(image)), image)
        big = reg.lookup(ImageRef("registry.example.com/edge/big-model:1.0"))
        self.assertGreaterEqual(big.size, 2_000_000_000)
        self.assertGreater(big.size / reg.bandwidth("node-1"), 120)     # minutes, unscaled
        private = [i for i in DEFAULT_CONFIG["images"] if i.get("username")]
        self.assertTrue(private)

    def test_resolve_by_tag_and_digest_with_credentials(self):
        reg = Registry({"images": [{"image": "example.com/p/app:1", "size": 5,
                                    "username": "u", "password": "p"}]})
        ref = ImageRef("example.com/p/app:1")
        with self.assertRaises(PullError) as e:
            reg.resolve(ref, [])
        self.assertIn("401 Unauthorized", str(e.exception))
        with self.assertRaises(PullError):
            reg.resolve(ref, [("example.com", "u", "wrong")])
        with self.assertRaises(PullError):
            reg.resolve(ref, [("other.example.com", "u", "p")])
        img = reg.resolve(ref, [("example.com", "u", "p")])
        self.assertEqual(img.size, 5)
        by_digest = reg.resolve(ImageRef("example.com/p/app@" + img.digest), [("example.com", "u", "p")])
        self.assertIs(by_digest, img)
        with self.assertRaises(PullError) as e:
            reg.resolve(ImageRef("example.com/p/app:2"), [])
        self.assertIn("rpc error: code = NotFound", str(e.exception))

    def test_busy_registry_fails_the_first_pulls(self):
        reg = Registry({"images": [{"image": "example.com/p/app:1", "size": 5, "failPulls": 2}]})
        ref = ImageRef("example.com/p/app:1")
        for _ in range(2):
            with self.assertRaises(PullError) as e:
                reg.resolve(ref, [])
            self.assertIn("HEAD request to https://example.com/v2/p/app/manifests/1: "
                          "503 Service Unavailable", str(e.exception))
        self.assertEqual(reg.resolve(ref, []).size, 5)
        self.assertEqual(reg.resolve(ref, []).size, 5)

    def test_config_file_and_include_defaults(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump({"includeDefaults": True, "defaultBandwidth": 5,
                       "images": [{"image": "example.com/x:1", "size": 10}],
                       "nodes": {"node-2": {"bandwidth": 50}}}, f)
        self.addCleanup(os.unlink, f.name)
        reg = Registry(load_config(f.name))
        self.assertIsNotNone(reg.lookup(ImageRef("example.com/x:1")))
        self.assertIsNotNone(reg.lookup(ImageRef("busybox:1.36")))
        self.assertEqual(reg.bandwidth("node-1"), 5)
        self.assertEqual(reg.bandwidth("node-2"), 50)

    def test_secret_round_trip(self):
        s = dockerconfigjson_secret("r", "ns", "https://registry.example.com/v2/", "u", "p")
        self.assertEqual(s["type"], "kubernetes.io/dockerconfigjson")
        self.assertEqual(credentials_from_secret(s), [("registry.example.com", "u", "p")])
        self.assertEqual(credentials_from_secret({"type": "Opaque", "data": s["data"]}), [])
        docker = dockerconfigjson_secret("r", "ns", "https://index.docker.io/v1/", "u", "p")
        self.assertEqual(credentials_from_secret(docker)[0][0], "docker.io")


class BehaviourTest(unittest.TestCase):
    def test_rules(self):
        self.assertEqual(behaviour({}), (None, 0))
        self.assertEqual(behaviour({"command": ["/ota-bin/true"]}), (SHORT_RUN, 0))
        self.assertEqual(behaviour({"command": ["cp", "/bin/busybox", "/ota-bin/true"]}),
                         (SHORT_RUN, 0))
        self.assertEqual(behaviour({"command": ["false"]}), (SHORT_RUN, 1))
        self.assertEqual(behaviour({"command": ["sh", "-c", "sleep 5; exit 3"]}), (5.0, 3))
        self.assertEqual(behaviour({"command": ["sleep"], "args": ["2m"]}), (120.0, 0))
        self.assertEqual(behaviour({"args": ["sleep", "infinity"]}), (None, 0))
        self.assertEqual(behaviour({"command": ["nginx", "-g", "daemon off;"]}), (None, 0))


class SchedulingTest(unittest.TestCase):
    node = {"metadata": {"name": "n1", "labels": {"zone": "a", "tier": "3"}},
            "spec": {"taints": [{"key": "edge", "value": "yes", "effect": "NoSchedule"}]}}

    def test_taints(self):
        self.assertFalse(should_run({}, self.node))
        self.assertTrue(should_continue_running({}, self.node))   # NoSchedule: stays
        tol = [{"key": "edge", "operator": "Equal", "value": "yes", "effect": "NoSchedule"}]
        self.assertTrue(should_run({"tolerations": tol}, self.node))
        self.assertTrue(should_run({"tolerations": [{"operator": "Exists"}]}, self.node))
        self.assertFalse(should_run({"tolerations": [{"key": "edge", "value": "no"}]}, self.node))
        noexec = {"metadata": {"name": "n2"},
                  "spec": {"taints": [{"key": "gone", "effect": "NoExecute"}]}}
        self.assertFalse(should_continue_running({}, noexec))
        unschedulable = {"metadata": {"name": "n3"}, "spec": {"taints": [
            {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]}}
        self.assertTrue(should_run({}, unschedulable))           # daemons tolerate it

    def test_selectors_and_affinity(self):
        tol = {"tolerations": [{"operator": "Exists"}]}
        self.assertTrue(should_run(dict(tol, nodeSelector={"zone": "a"}), self.node))
        self.assertFalse(should_run(dict(tol, nodeSelector={"zone": "b"}), self.node))

        def aff(*terms):
            return dict(tol, affinity={"nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}})
        self.assertTrue(should_run(aff({"matchExpressions": [
            {"key": "zone", "operator": "In", "values": ["a", "b"]}]}), self.node))
        self.assertFalse(should_run(aff({"matchExpressions": [
            {"key": "zone", "operator": "NotIn", "values": ["a"]}]}), self.node))
        self.assertTrue(should_run(aff({"matchExpressions": [
            {"key": "tier", "operator": "Gt", "values": ["2"]}]}), self.node))
        self.assertTrue(should_run(aff({"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}), self.node))
        self.assertTrue(should_run(aff({"matchExpressions": [{"key": "x", "operator": "Exists"}]},
                                       {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}),
                                   self.node))


class GoDurationTest(unittest.TestCase):
    def test_format(self):
        self.assertEqual([go_duration(s) for s in (0, 0.5, 1, 1.2345, 20.5, 60, 200.5, 3725.25)],
                         ["0s", "500ms", "1s", "1.234s", "20.5s", "1m0s", "3m20.5s", "1h2m5.25s"])


if __name__ == "__main__":
    unittest.main()
