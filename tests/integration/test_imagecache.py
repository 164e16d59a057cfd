"""kube-fledged ImageCache admission through the real server, over HTTPS
(docs/design.md "ImageCache admission").

  denials       each of kube-fledged's messages, byte for byte, code 400,
                on CREATE; on UPDATE the count of lists and each list's
                nodeSelector; an UPDATE that leaves the spec alone
                (refresh/purge annotations, a status write) not looked at;
                an edit while Processing allowed
  hostile       wrong JSON types (denied 400, naming the field), a list of
                200 000 images, nesting past the bound, a key twice, a spec
                over 1.5 MiB; the server keeps serving
  metrics       requests under /validate-imagecache, denials by rule

Part of the integration suite: run_all.py runs it with the others (`make
integration`; one file: run_all.py -k 'test_imagecache.*').
"""

import copy

from harness import ServerTestCase, compact, crd_review, http_get, metric_sum, parse_metrics

PATH = "/validate-imagecache"


def cache(spec, name="edge-runtime", annotations=None, status=None):
    meta = {"name": name, "namespace": "edge-cache", "uid": "5b0c7e1e-6f51-4c1e-9a4c-2f1e0d9c8b7a",
            "labels": {"team": "edge"}}
    if annotations:
        meta["annotations"] = annotations
    obj = {"apiVersion": "kubefledged.io/v1alpha2", "kind": "ImageCache", "metadata": meta, "spec": spec}
    if status:
        obj["status"] = status
    return obj


def valid_spec():
    return {"cacheSpec": [{"images": ["registry.example.com/edge/agent:2.4.1", "registry.example.com/edge/proxy:1.9"]},
                          {"images": ["registry.example.com/vision/model:3.1"],
                           "nodeSelector": {"node-role.example.com/gpu": "true", "zone": "hz-2"}}],
            "imagePullSecrets": [{"name": "edge-registry"}]}


def review(obj, operation="CREATE", old=None):
    return crd_review(obj, "kubefledged.io", "imagecaches", operation, old)


NO_IMAGES = "No images specified within image list"
DUPLICATE = "Duplicate image names within image list: "
COUNT = "Mismatch in no. of image lists"
SELECTOR = "Mismatch in node selector"
PROCESSING = {"status": "Processing", "reason": "ImageCacheUpdate",
              "message": "Image cache is being updated. Please view the status after some time",
              "startTime": "2026-11-27T08:00:00Z"}


class TestImageCache(ServerTestCase):
    SERVER_ARGS = ("--threads", "2")

    def post(self, path, doc_or_body, conn=None):
        c = conn or self.conn()
        body = doc_or_body if isinstance(doc_or_body, bytes) else compact(doc_or_body)
        return c.call("POST", path + "?timeout=10s", body)

    def admit(self, doc, path=PATH):
        st, h, b = self.post(path, doc)
        resp, patch = self.assert_review(st, h, b, doc["request"]["uid"], denial_codes=(400,))
        self.assertIsNone(patch)
        return resp

    def assert_denied(self, resp, message):
        self.assertFalse(resp["allowed"], resp)
        self.assertEqual(resp["status"]["code"], 400, resp)
        self.assertEqual(resp["status"]["message"], message)

    def test_create(self):
        self.assertTrue(self.admit(review(cache(valid_spec())))["allowed"])
        rows = [
            ("no images", [{"images": []}], NO_IMAGES),
            ("images missing", [{"nodeSelector": {"zone": "hz-1"}}], NO_IMAGES),
            ("second list empty", [{"images": ["a"]}, {"images": []}], NO_IMAGES),
            ("a repeat", [{"images": ["nginx:1.25", "redis:7", "nginx:1.25"]}], DUPLICATE + "nginx:1.25"),
            ("first repeat found", [{"images": ["a", "b", "b", "a"]}], DUPLICATE + "b"),
            ("repeat before a later empty list", [{"images": ["x", "x"]}, {"images": []}], DUPLICATE + "x"),
        ]
        for name, lists, message in rows:
            with self.subTest(row=name):
                self.assert_denied(self.admit(review(cache({"cacheSpec": lists}))), message)
        # the same image in two lists, tags apart: kube-fledged allows it
        ok = {"cacheSpec": [{"images": ["nginx", "nginx:1"]}, {"images": ["nginx"]}]}
        self.assertTrue(self.admit(review(cache(ok)))["allowed"])

    def test_update(self):
        old = cache(valid_spec())

        def edited(edit):
            new = copy.deepcopy(old)
            edit(new["spec"])
            return new
        rows = [
            ("an image added", lambda s: s["cacheSpec"][0]["images"].append("registry.example.com/edge/log:1"), None),
            ("an image removed", lambda s: s["cacheSpec"][0]["images"].pop(), None),
            ("pull secrets changed", lambda s: s.update(imagePullSecrets=[{"name": "other"}]), None),
            ("a list added", lambda s: s["cacheSpec"].append({"images": ["busybox:1.36"]}), COUNT),
            ("a list removed", lambda s: s["cacheSpec"].pop(), COUNT),
            ("a selector changed", lambda s: s["cacheSpec"][1]["nodeSelector"].update(zone="hz-3"), SELECTOR),
            ("a selector added", lambda s: s["cacheSpec"][0].update(nodeSelector={"zone": "hz-1"}), SELECTOR),
            ("a selector removed", lambda s: s["cacheSpec"][1].pop("nodeSelector"), SELECTOR),
            ("an empty selector is not none", lambda s: s["cacheSpec"][0].update(nodeSelector={}), SELECTOR),
            ("a list emptied", lambda s: s["cacheSpec"][0].update(images=[]), NO_IMAGES),
            ("a repeat added", lambda s: s["cacheSpec"][1]["images"].append("registry.example.com/vision/model:3.1"),
             DUPLICATE + "registry.example.com/vision/model:3.1"),
        ]
        for name, edit, message in rows:
            with self.subTest(row=name):
                resp = self.admit(review(edited(edit), "UPDATE", old))
                if message is None:
                    self.assertTrue(resp["allowed"], resp)
                else:
                    self.assert_denied(resp, message)

    def test_spec_unchanged_not_looked_at(self):
        # a spec kube-fledged refuses on CREATE, stored before any webhook:
        # the refresh and purge annotations, a status write (kube-fledged's
        # CRD has no /status: the whole object is PUT) all pass
        bad = {"cacheSpec": [{"images": []}, {"images": ["a", "a"]}]}
        old = cache(bad)
        for annotation in ("kubefledged.io/refresh-imagecache", "kubefledged.io/purge-imagecache"):
            with self.subTest(annotation=annotation):
                new = cache(copy.deepcopy(bad), annotations={annotation: ""}, status=PROCESSING)
                self.assertTrue(self.admit(review(new, "UPDATE", old))["allowed"])
        new = cache(copy.deepcopy(bad), status=dict(PROCESSING, status="Succeeded"))
        self.assertTrue(self.admit(review(new, "UPDATE", cache(copy.deepcopy(bad), status=PROCESSING)))["allowed"])

    def test_edit_while_processing_allowed(self):
        # kube-fledged's v0.11 refuses this; our controller queues it
        old = cache(valid_spec(), status=PROCESSING)
        new = copy.deepcopy(old)
        new["spec"]["cacheSpec"][0]["images"].append("registry.example.com/edge/log:1")
        new["metadata"]["annotations"] = {"kubefledged.io/refresh-imagecache": ""}
        self.assertTrue(self.admit(review(new, "UPDATE", old))["allowed"])

    def test_wrong_types(self):
        rows = [("cacheSpec", {}, "spec.cacheSpec must be an array, got an object"),
                ("cacheSpec", ["nginx"], "spec.cacheSpec[0] must be an object, got a string"),
                ("cacheSpec", [{"images": "nginx"}], "spec.cacheSpec[0].images must be an array, got a string"),
                ("cacheSpec", [{"images": ["a"]}, {"images": ["b", 5]}],
                 "spec.cacheSpec[1].images[1] must be a string, got a number"),
                ("cacheSpec", [{"images": ["a"], "nodeSelector": "zone=hz-1"}],
                 "spec.cacheSpec[0].nodeSelector must be an object, got a string"),
                ("cacheSpec", [{"images": ["a"], "nodeSelector": {"zone": 1}}],
                 'spec.cacheSpec[0].nodeSelector["zone"] must be a string, got a number'),
                ("imagePullSecrets", {"name": "x"}, "spec.imagePullSecrets must be an array, got an object"),
                ("imagePullSecrets", ["x"], "spec.imagePullSecrets[0] must be an object, got a string"),
                ("imagePullSecrets", [{"name": False}], "spec.imagePullSecrets[0].name must be a string, got a boolean")]
        for field, value, message in rows:
            with self.subTest(field=field, message=message):
                spec = valid_spec()
                spec[field] = value
                self.assert_denied(self.admit(review(cache(spec))), message)
        # the old object's spec, said so
        bad_old = cache({"cacheSpec": [{"images": 7}]})
        self.assert_denied(self.admit(review(cache(valid_spec()), "UPDATE", bad_old)),
                           "oldObject: spec.cacheSpec[0].images must be an array, got a number")

    def test_huge_list(self):
        images = ["registry.example.com/app/%06d:1" % i for i in range(30000)]
        spec = {"cacheSpec": [{"images": images}]}
        self.assertTrue(self.admit(review(cache(spec)))["allowed"])
        images.append("registry.example.com/app/012345:1")
        self.assert_denied(self.admit(review(cache(spec))), DUPLICATE + "registry.example.com/app/012345:1")
        # as many images as 1.5 MiB holds: answered, not a 500
        spec = {"cacheSpec": [{"images": ["%x" % i for i in range(200000)]}]}
        self.assertLess(len(compact(spec)), 1536 * 1024)
        resp = self.admit(review(cache(spec)))
        self.assertTrue(resp["allowed"], resp)

    def test_spec_too_large(self):
        spec = valid_spec()
        spec["padding"] = "y" * (1600 * 1024)
        resp = self.admit(review(cache(spec)))
        self.assertFalse(resp["allowed"])
        self.assertEqual(resp["status"]["code"], 400)
        self.assertIn("more than the 1572864", resp["status"]["message"])

    def test_deep_nesting_and_duplicate_keys(self):
        doc = review(cache(valid_spec()))
        body = compact(doc)
        deep = b'"extra":' + b'{"a":' * 150 + b'1' + b'}' * 150 + b','
        st, h, b = self.post(PATH, body.replace(b'"spec":{', b'"spec":{' + deep, 1))
        self.assert_status_body(st, h, b, 400, ["deep", "nest"])
        twice = body.replace(b'"spec":{', b'"spec":{"cacheSpec":[],', 1)
        st, h, b = self.post(PATH, twice)
        self.assert_status_body(st, h, b, 400, ["twice", "duplicate", "repeat"])
        # and the server still answers
        self.assertTrue(self.admit(doc)["allowed"])

    def test_dispatch_by_resource_and_unknown_path(self):
        # the verdict is the resource's: the generic /validate gives it too
        bad = review(cache({"cacheSpec": [{"images": []}]}))
        self.assert_denied(self.admit(bad, "/validate"), NO_IMAGES)
        st, h, b = self.post("/validate-image-cache", bad)
        self.assert_status_body(st, h, b, 404, ["/validate-imagecache"])

    def test_metrics(self):
        before = parse_metrics(http_get(type(self).server.metrics, "/metrics")[2].decode())
        self.admit(review(cache(valid_spec())))
        self.admit(review(cache({"cacheSpec": [{"images": ["a", "a"]}]})))
        after = parse_metrics(http_get(type(self).server.metrics, "/metrics")[2].decode())

        def delta(name, **labels):
            return metric_sum(after, name, **labels) - metric_sum(before, name, **labels)
        self.assertEqual(delta("ota_webhook_requests_total", path=PATH, result="allowed"), 1)
        self.assertEqual(delta("ota_webhook_requests_total", path=PATH, result="denied"), 1)
        self.assertEqual(delta("ota_webhook_denials_total", rule="imagecache-duplicate-image"), 1)
