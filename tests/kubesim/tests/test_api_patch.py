"""PATCH: JSON Patch, merge patch, strategic merge patch (merge keys and the
directives kubectl apply sends), through patch.py and through the Api."""
import unittest

from .apisupport import ADMIN, new_api, pod
from kubesim import errors, patch
from kubesim.api import write_precondition

SMP = "application/strategic-merge-patch+json"
MERGE = "application/merge-patch+json"
JSONP = "application/json-patch+json"


class PatchFunctionsTest(unittest.TestCase):
    def test_json_patch_ops(self):
        doc = {"a": {"b/c": 1, "x~y": 2}, "l": [1, 2, 3]}
        out = patch.json_patch(doc, [
            {"op": "replace", "path": "/a/b~1c", "value": 10},
            {"op": "remove", "path": "/a/x~0y"},
            {"op": "add", "path": "/l/1", "value": 9},
            {"op": "add", "path": "/l/-", "value": 4},
            {"op": "copy", "from": "/a", "path": "/c"},
            {"op": "move", "from": "/c/b~1c", "path": "/d"},
            {"op": "test", "path": "/d", "value": 10},
        ])
        self.assertEqual(out, {"a": {"b/c": 10}, "l": [1, 9, 2, 3, 4], "c": {}, "d": 10})
        self.assertEqual(doc["l"], [1, 2, 3])    # input untouched
        with self.assertRaises(errors.ApiError):
            patch.json_patch(doc, [{"op": "test", "path": "/l/0", "value": 5}])
        with self.assertRaises(errors.ApiError):
            patch.json_patch(doc, [{"op": "remove", "path": "/nope"}])

    def test_json_patch_rfc_errors(self):
        # What RFC 6901/6902 make an error (evanphx/json-patch lets some
        # through): every one is a 422, never a Python exception.
        for doc, ops in (
                ({"a": [1, 2]}, [{"op": "add", "path": "/a/01", "value": 0}]),
                ({"a": [1, 2]}, [{"op": "add", "path": "/a/+1", "value": 0}]),
                ({"a": [1, 2]}, [{"op": "remove", "path": "/a/-1"}]),
                ({"a": [1, 2]}, [{"op": "replace", "path": "/a/-1", "value": 0}]),
                ({"a": 1}, [{"op": "add", "path": "/a~2", "value": 1}]),
                ({"a": 1}, [{"op": "test", "path": "/a", "value": True}]),
                ({"a": 1}, [{"op": "add", "path": "/b"}]),
                ({"a": 1}, [{"op": "replace", "path": "/a"}]),
                ({"a": 1}, [{"op": "test", "path": "/a"}]),
                ({"a": 1}, [{"op": "move", "path": "/b"}]),
                ({"a": 1}, [{"op": "copy", "path": "/b"}]),
                ({"a": [{"k": 1}, {"k": 2}]}, [{"op": "move", "from": "/a/0", "path": "/a/0/x"}]),
                ({"a": 1}, ["add"]),
                ({"a": 1}, [{"op": "add", "path": 5, "value": 1}])):
            with self.subTest(ops=ops):
                with self.assertRaises(errors.ApiError):
                    patch.json_patch(doc, ops)
        self.assertEqual(patch.json_patch({"a": [1, 2]}, [{"op": "test", "path": "/a/1", "value": 2.0}]),
                         {"a": [1, 2]})
        self.assertEqual(patch.json_patch({"a": [1, 2]}, [{"op": "move", "from": "/a/0", "path": "/a/1"}]),
                         {"a": [2, 1]})

    def test_merge_patch(self):
        self.assertEqual(patch.merge_patch({"a": 1, "b": {"c": 1, "d": 2}, "l": [1, 2]},
                                           {"a": None, "b": {"c": 3}, "l": [3]}),
                         {"b": {"c": 3, "d": 2}, "l": [3]})

    def test_strategic_merge_by_key(self):
        doc = {"status": {"conditions": [{"type": "Ready", "status": "True"},
                                         {"type": "PodNeedUpgrade", "status": "False"}]},
               "spec": {"containers": [{"name": "a", "image": "x", "env": [{"name": "E", "value": "1"}]},
                                       {"name": "b", "image": "y"}],
                        "tolerations": [{"operator": "Exists"}]}}
        out = patch.strategic_merge_patch(doc, {
            "status": {"conditions": [{"type": "PodNeedUpgrade", "status": "True"},
                                      {"type": "PodImageReady", "status": "False"}]},
            "spec": {"containers": [{"name": "a", "env": [{"name": "F", "value": "2"}]},
                                    {"name": "b", "$patch": "delete"}],
                     "tolerations": [{"key": "k", "operator": "Equal"}]}})
        self.assertEqual(out["status"]["conditions"], [{"type": "Ready", "status": "True"},
                                                       {"type": "PodNeedUpgrade", "status": "True"},
                                                       {"type": "PodImageReady", "status": "False"}])
        self.assertEqual(out["spec"]["containers"], [{"name": "a", "image": "x", "env": [
            {"name": "E", "value": "1"}, {"name": "F", "value": "2"}]}])
        self.assertEqual(out["spec"]["tolerations"], [{"key": "k", "operator": "Equal"}])   # no merge key: replaced

    def test_strategic_webhooks_by_name(self):
        # kubectl apply's patch of a webhook configuration names the webhook and its matchConditions
        doc = {"webhooks": [{"name": "a.x.y", "sideEffects": "None", "timeoutSeconds": 5,
                             "matchConditions": [{"name": "m", "expression": "true"}]}]}
        out = patch.strategic_merge_patch(doc, {"webhooks": [{"name": "a.x.y", "timeoutSeconds": 7,
                                                              "matchConditions": [{"name": "n", "expression": "false"}]}]})
        self.assertEqual(out["webhooks"], [{"name": "a.x.y", "sideEffects": "None", "timeoutSeconds": 7,
                                            "matchConditions": [{"name": "m", "expression": "true"},
                                                                {"name": "n", "expression": "false"}]}])

    def test_strategic_directives(self):
        doc = {"spec": {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
                        "containers": [{"name": "a"}, {"name": "b"}]},
               "metadata": {"finalizers": ["f1", "f2"]}}
        out = patch.strategic_merge_patch(doc, {
            "spec": {"updateStrategy": {"$retainKeys": ["type"], "type": "OnDelete"},
                     "$setElementOrder/containers": [{"name": "b"}, {"name": "a"}],
                     "containers": [{"name": "a", "image": "z"}]},
            "metadata": {"$deleteFromPrimitiveList/finalizers": ["f1"], "finalizers": ["f3"]}})
        self.assertEqual(out["spec"]["updateStrategy"], {"type": "OnDelete"})
        self.assertEqual(out["spec"]["containers"], [{"name": "b"}, {"name": "a", "image": "z"}])
        self.assertEqual(out["metadata"]["finalizers"], ["f2", "f3"])
        out = patch.strategic_merge_patch(doc, {"spec": {"$patch": "replace", "x": 1}})
        self.assertEqual(out["spec"], {"x": 1})


class PatchThroughApiTest(unittest.TestCase):
    def setUp(self):
        self.api, self.adm = new_api()
        st, _ = self.api.call(ADMIN, "POST", "/api/v1/namespaces/default/pods", pod("p", node="node-1"))
        self.assertEqual(st, 201)
        self.api.call(ADMIN, "PATCH", "/api/v1/namespaces/default/pods/p/status",
                      {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}, content_type=SMP)

    def tearDown(self):
        self.adm.close()

    def status_patch(self, body, ctype):
        return self.api.call(ADMIN, "PATCH", "/api/v1/namespaces/default/pods/p/status", body, content_type=ctype)

    def test_three_patch_types_on_status(self):
        st, body = self.status_patch({"status": {"conditions": [{"type": "PodImageReady", "status": "False"}]}}, SMP)
        self.assertEqual([c["type"] for c in body["status"]["conditions"]], ["Ready", "PodImageReady"])
        st, body = self.status_patch({"status": {"conditions": [{"type": "PodImageReady", "status": "True"}]}},
                                     MERGE)
        self.assertEqual([c["type"] for c in body["status"]["conditions"]], ["PodImageReady"])   # replaced
        st, body = self.status_patch([{"op": "add", "path": "/status/conditions/-",
                                       "value": {"type": "Ready", "status": "False"}}], JSONP)
        self.assertEqual(st, 200)
        self.assertEqual([c["type"] for c in body["status"]["conditions"]], ["PodImageReady", "Ready"])
        # a status patch cannot touch spec
        st, body = self.status_patch({"spec": {"nodeName": "node-9"}, "status": {"phase": "Running"}}, MERGE)
        self.assertEqual((body["spec"]["nodeName"], body["status"]["phase"]), ("node-1", "Running"))

    def test_errors(self):
        st, body = self.status_patch({"status": {}}, "text/plain")
        self.assertEqual(st, 415)
        st, body = self.status_patch([{"op": "test", "path": "/status/phase", "value": "Nope"}], JSONP)
        self.assertEqual(st, 422)
        st, body = self.api.call(ADMIN, "PATCH", "/api/v1/namespaces/default/pods/missing",
                                 {"metadata": {}}, content_type=MERGE)
        self.assertEqual((st, body["reason"]), (404, "NotFound"))
        st, body = self.status_patch({"metadata": {"resourceVersion": "1"}, "status": {"phase": "X"}}, MERGE)
        self.assertEqual((st, body["reason"]), (409, "Conflict"))
        st, body = self.api.call(ADMIN, "PATCH", "/api/v1/namespaces/default/pods/p",
                                 {"spec": {"containers": [{"name": "c", "imagee": "x"}]}},
                                 content_type=SMP, query={"fieldValidation": "Strict"})
        self.assertEqual(st, 400)
        self.assertIn('unknown field "spec.containers[0].imagee"', body["message"])

    def test_a_patch_retries_a_write_that_raced_it(self):
        """Another writer commits between the patch's read and its write (here
        while admission runs): the patch is applied again to the fresh object,
        not answered 409, and both writes are kept."""
        real, raced, raced_before = self.api._admit, [], []

        def admit(op, user, req, obj, old, *rest, **kw):
            if not raced:
                raced.append(1)
                status = "False" if len(raced_before) == 0 else "Unknown"
                st, _ = self.status_patch({"status": {"conditions": [{"type": "Ready", "status": status}]}}, SMP)
                self.assertEqual(st, 200)
            return real(op, user, req, obj, old, *rest, **kw)
        self.api._admit = admit
        st, body = self.api.call(ADMIN, "PATCH", "/api/v1/namespaces/default/pods/p",
                                 {"metadata": {"labels": {"x": "1"}}}, content_type=MERGE)
        self.assertEqual((st, body["metadata"].get("labels")), (200, {"x": "1"}), body)
        self.assertEqual(body["status"]["conditions"], [{"type": "Ready", "status": "False"}])
        # with a precondition, the race is the client's 409
        raced_before.append(1)
        raced.clear()
        st, cur = self.api.call(ADMIN, "GET", "/api/v1/namespaces/default/pods/p")
        st, body = self.api.call(ADMIN, "PATCH", "/api/v1/namespaces/default/pods/p",
                                 {"metadata": {"labels": {"x": "2"},
                                               "resourceVersion": cur["metadata"]["resourceVersion"]}},
                                 content_type=MERGE)
        self.assertEqual((st, body["reason"]), (409, "Conflict"))

    def test_write_precondition(self):
        for expect, new_rv, cur_rv, want in [
                (None, "7", "7", None),      # a patch that carried the current one along
                (None, None, "7", None),     # a PUT without one
                ("5", "7", "7", "5"),        # the request's own
                ("5", "5", "7", "5"),
                (None, "5", "7", "5"),       # a JSON patch of /metadata/resourceVersion
                ("", "7", "7", None)]:
            self.assertEqual(write_precondition(expect, new_rv, cur_rv), want, (expect, new_rv, cur_rv))

    def test_simplified_server_side_apply(self):
        path = "/api/v1/namespaces/default/configmaps/ssa"
        cfg = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": {"a": "1"}}
        st, body = self.api.call(ADMIN, "PATCH", path, cfg, content_type="application/apply-patch+yaml",
                                 query={"fieldManager": "me"})
        self.assertEqual((st, body["data"]), (201, {"a": "1"}))
        cfg["data"] = {"b": "2"}
        st, body = self.api.call(ADMIN, "PATCH", path, cfg, content_type="application/apply-patch+yaml")
        self.assertEqual((st, body["data"]), (200, {"a": "1", "b": "2"}))

    def test_pod_spec_is_mostly_immutable(self):
        st, body = self.api.call(ADMIN, "PATCH", "/api/v1/namespaces/default/pods/p",
                                 {"spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}, content_type=SMP)
        self.assertEqual(st, 200)
        self.assertEqual(body["spec"]["containers"][0]["image"], "nginx:1")
        st, body = self.api.call(ADMIN, "PATCH", "/api/v1/namespaces/default/pods/p",
                                 {"spec": {"restartPolicy": "Never"}}, content_type=SMP)
        self.assertEqual(st, 422)
        self.assertIn("pod updates may not change fields", body["message"])


if __name__ == "__main__":
    unittest.main()
