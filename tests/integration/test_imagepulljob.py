"""OpenKruise ImagePullJob admission through the real server, over HTTPS
(docs/design.md "ImagePullJob admission").

  fixtures      tests/fixtures/imagepulljob/*.json, CREATEd as the apiserver
                sends them to /mutate-imagepulljob then (the patched object)
                /validate-imagepulljob: Kruise's defaults, Kruise's verdict
                and message, for v1alpha1 and v1beta1
  denials       each of Kruise's messages, byte for byte, with its code
                (400; 403 for spec.pullSecrets on UPDATE)
  hostile       wrong JSON types (denied 400, naming the field), a huge
                names list, nesting past the bound, a key twice, a spec
                over 1.5 MiB; the server keeps serving
  metrics       requests under the two paths, denials by rule, the
                mutation counted

Part of the integration suite: run_all.py runs it with the others (`make
integration`; one file: run_all.py -k 'test_imagepulljob.*').
"""

import copy
import json
import os

from harness import (FIXTURES, ServerTestCase, compact, crd_review, http_get, json_patch,
                     metric_sum, parse_metrics)

IPJ_FIXTURES = os.path.join(FIXTURES, "imagepulljob")
DEFAULTS = {"completionPolicy": {"type": "Always"},
            "pullPolicy": {"timeoutSeconds": 600, "backoffLimit": 3},
            "imagePullPolicy": "IfNotPresent"}

# fixture -> (spec after the mutating webhook, (code, message) of the
# validating webhook's denial or None)
CASES = {
    "v1beta1-always": (
        {"image": "nginx:1.9.1", "parallelism": 10, "selector": {"names": ["node-1", "node-2"]},
         "completionPolicy": {"type": "Always", "activeDeadlineSeconds": 1200, "ttlSecondsAfterFinished": 300},
         "pullPolicy": {"backoffLimit": 3, "timeoutSeconds": 300}, "imagePullPolicy": "IfNotPresent"},
        None),
    "v1alpha1-minimal": (dict({"image": "nginx:1.25"}, **DEFAULTS), None),
    "v1beta1-never-podselector": (
        {"image": "registry.example.com/team/web:2.0", "parallelism": "2", "pullSecrets": ["regcred"],
         "podSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]},
         "completionPolicy": {"type": "Never"}, "imagePullPolicy": "Always",
         "sandboxConfig": {"labels": {"team": "web"}},
         "pullPolicy": {"timeoutSeconds": 600, "backoffLimit": 3}},
        None),
    "v1alpha1-names-and-labels": (
        {"image": "nginx:1.9.1", "selector": {"names": ["node-1"], "matchLabels": {"node-type": "xxx"}},
         "completionPolicy": {"type": "Always"}, "pullPolicy": {"timeoutSeconds": 600, "backoffLimit": 3},
         "imagePullPolicy": "IfNotPresent"},
        (400, "can not set both names and labelSelector in this spec.selector")),
}

# (name, spec edits on a defaulted valid job, code, message)
DENIALS = [
    ("image empty", {"image": ""}, 400, "image can not be empty"),
    ("image upper case", {"image": "Nginx"}, 400,
     "invalid image Nginx: invalid reference format: repository name must be lowercase"),
    ("image malformed", {"image": "nginx::1"}, 400, "invalid image nginx::1: invalid reference format"),
    ("duplicated names", {"selector": {"names": ["a", "a"]}}, 400, "duplicated name in selector names"),
    ("invalid selector", {"selector": {"matchExpressions": [{"key": "k", "operator": "Equals"}]}}, 400,
     'invalid selector: "Equals" is not a valid label selector operator'),
    ("selector and podSelector", {"selector": {"names": ["a"]}, "podSelector": {"matchLabels": {"a": "b"}}}, 400,
     "can not set both selector and podSelector"),
    ("invalid podSelector", {"podSelector": {"matchExpressions": [{"key": "k", "operator": "NotIn"}]}}, 400,
     "invalid podSelector: values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't "
     "be empty"),
    ("parallelism percentage", {"parallelism": "10%"}, 400, "parallelism does not support percentage value"),
    ("parallelism not integer", {"parallelism": "1.5"}, 400,
     'parallelism must be a valid integer: strconv.Atoi: parsing "1.5": invalid syntax'),
    ("unknown completion type", {"completionPolicy": {"type": "Once"}}, 400,
     "unknown type of completionPolicy: Once"),
    ("deadline below timeout", {"completionPolicy": {"type": "Always", "activeDeadlineSeconds": 60}}, 400,
     "completionPolicy.activeDeadlineSeconds must be greater than pullPolicy.timeoutSeconds(default 600)"),
    ("ttl with Never", {"completionPolicy": {"type": "Never", "ttlSecondsAfterFinished": 60}}, 400,
     "activeDeadlineSeconds and ttlSecondsAfterFinished can only work with Always CompletionPolicyType"),
]


def load(name):
    with open(os.path.join(IPJ_FIXTURES, name + ".json")) as f:
        return json.load(f)


def review(obj, operation="CREATE", old=None):
    return crd_review(obj, "apps.kruise.io", "imagepulljobs", operation, old)


class TestImagePullJob(ServerTestCase):
    SERVER_ARGS = ("--threads", "2")

    def post(self, path, doc_or_body, conn=None):
        c = conn or self.conn()
        body = doc_or_body if isinstance(doc_or_body, bytes) else compact(doc_or_body)
        return c.call("POST", path + "?timeout=10s", body)

    def admit(self, path, doc, conn=None):
        st, h, b = self.post(path, doc, conn)
        # Kruise's codes: 400, and 403 for spec.pullSecrets
        return self.assert_review(st, h, b, doc["request"]["uid"], denial_codes=(400, 403))

    def mutate_then_validate(self, obj, operation="CREATE", old=None):
        """(patched object, validating response)"""
        c = self.conn()
        resp, patch = self.admit("/mutate-imagepulljob", review(obj, operation, old), c)
        self.assertTrue(resp["allowed"], resp)
        patched = json_patch(obj, patch) if patch else obj
        vresp, vpatch = self.admit("/validate-imagepulljob", review(patched, operation, old), c)
        self.assertIsNone(vpatch)
        self.assertEqual(c.connects, 1)
        return patched, vresp

    def assert_denied(self, resp, code, message):
        self.assertFalse(resp["allowed"], resp)
        self.assertEqual(resp["status"]["code"], code, resp)
        self.assertEqual(resp["status"]["message"], message)

    def valid(self):
        obj = load("v1beta1-always")
        obj["spec"]["imagePullPolicy"] = "IfNotPresent"
        return obj

    def test_fixtures(self):
        self.assertEqual(sorted(CASES), sorted(n[:-5] for n in os.listdir(IPJ_FIXTURES)))
        for name, (want_spec, denial) in sorted(CASES.items()):
            with self.subTest(fixture=name):
                obj = load(name)
                patched, vresp = self.mutate_then_validate(obj)
                self.assertEqual(patched["spec"], want_spec)
                # nothing but spec is touched: no finalizer, no status
                self.assertEqual({k: v for k, v in patched.items() if k != "spec"},
                                 {k: v for k, v in obj.items() if k != "spec"})
                if denial is None:
                    self.assertTrue(vresp["allowed"], vresp)
                else:
                    self.assert_denied(vresp, *denial)

    def test_each_denial(self):
        for version in ("v1alpha1", "v1beta1"):
            for name, edits, code, message in DENIALS:
                with self.subTest(version=version, denial=name):
                    obj = self.valid()
                    obj["apiVersion"] = "apps.kruise.io/" + version
                    obj["spec"].update(copy.deepcopy(edits))
                    if "podSelector" in edits and "selector" not in edits:
                        del obj["spec"]["selector"]
                    resp, patch = self.admit("/validate-imagepulljob", review(obj))
                    self.assert_denied(resp, code, message)

    def test_pull_secrets_immutable(self):
        old = self.valid()
        new = copy.deepcopy(old)
        new["spec"]["pullSecrets"] = ["regcred"]
        resp, _ = self.admit("/validate-imagepulljob", review(new, "UPDATE", old))
        self.assert_denied(resp, 403, "spec.pullSecrets is immutable")
        # any other edit goes through (the controller re-runs the nodes:
        # docs/DECISIONS.md "ImagePullJob spec edits")
        new = copy.deepcopy(old)
        new["spec"]["image"] = "nginx:1.27"
        resp, _ = self.admit("/validate-imagepulljob", review(new, "UPDATE", old))
        self.assertTrue(resp["allowed"], resp)

    def test_wrong_types(self):
        rows = [("image", 5, "spec.image must be a string, got a number"),
                ("selector", [], "spec.selector must be an object, got an array"),
                ("parallelism", True, "spec.parallelism must be a whole number or a string, got a boolean"),
                ("pullSecrets", "regcred", "spec.pullSecrets must be an array, got a string"),
                ("completionPolicy", {"type": "Always", "activeDeadlineSeconds": "600"},
                 "spec.completionPolicy.activeDeadlineSeconds must be a whole number, got a string")]
        for path in ("/mutate-imagepulljob", "/validate-imagepulljob"):
            for field, value, message in rows:
                with self.subTest(path=path, field=field):
                    obj = self.valid()
                    obj["spec"][field] = value
                    resp, patch = self.admit(path, review(obj))
                    self.assert_denied(resp, 400, message)
                    self.assertIsNone(patch)

    def test_huge_names(self):
        obj = self.valid()
        obj["spec"]["selector"] = {"names": ["node-%06d" % i for i in range(100000)]}
        resp, _ = self.admit("/validate-imagepulljob", review(obj))
        self.assertTrue(resp["allowed"], resp)
        obj["spec"]["selector"]["names"].append("node-054321")
        resp, _ = self.admit("/validate-imagepulljob", review(obj))
        self.assert_denied(resp, 400, "duplicated name in selector names")
        # as many names as 1.5 MiB holds: answered, not a 500
        obj["spec"]["selector"]["names"] = ["%x" % i for i in range(200000)]
        self.assertLess(len(compact(obj["spec"])), 1536 * 1024)
        resp, _ = self.admit("/validate-imagepulljob", review(obj))
        self.assertTrue(resp["allowed"], resp)

    def test_spec_too_large(self):
        obj = self.valid()
        obj["spec"]["sandboxConfig"] = {"labels": {"x": "y" * (1600 * 1024)}}
        resp, _ = self.admit("/mutate-imagepulljob", review(obj))
        self.assertFalse(resp["allowed"])
        self.assertEqual(resp["status"]["code"], 400)
        self.assertIn("more than the 1572864", resp["status"]["message"])

    def test_deep_nesting_and_duplicate_keys(self):
        obj = self.valid()
        body = compact(review(obj))
        deep = b'"sandboxConfig":{"labels":' + b'{"a":' * 150 + b'1' + b'}' * 150 + b'},'
        nested = body.replace(b'"spec":{', b'"spec":{' + deep, 1)
        st, h, b = self.post("/validate-imagepulljob", nested)
        self.assert_status_body(st, h, b, 400, ["deep", "nest"])
        twice = body.replace(b'"spec":{', b'"spec":{"image":"busybox",', 1)
        st, h, b = self.post("/mutate-imagepulljob", twice)
        self.assert_status_body(st, h, b, 400, ["twice", "duplicate", "repeat"])
        # and the server still answers
        resp, _ = self.admit("/validate-imagepulljob", review(obj))
        self.assertTrue(resp["allowed"])

    def test_metrics(self):
        before = parse_metrics(http_get(type(self).server.metrics, "/metrics")[2].decode())
        self.mutate_then_validate(load("v1alpha1-names-and-labels"))
        after = parse_metrics(http_get(type(self).server.metrics, "/metrics")[2].decode())

        def delta(name, **labels):
            return metric_sum(after, name, **labels) - metric_sum(before, name, **labels)
        self.assertEqual(delta("ota_webhook_requests_total", path="/mutate-imagepulljob", result="patched"), 1)
        self.assertEqual(delta("ota_webhook_requests_total", path="/validate-imagepulljob", result="denied"), 1)
        self.assertEqual(delta("ota_webhook_denials_total", rule="imagepulljob-names-and-labels"), 1)
        self.assertEqual(delta("ota_webhook_mutations_total", kind="imagepulljob-defaults"), 1)
