"""Custom resources through the in-process Api: versions (conversion None),
pruning and fieldValidation, defaults, schema validation, the status
subresource and generation, finalizers, paging, selectors, watches, tables,
admission webhooks (matchPolicy Equivalent) and the garbage collector."""
import threading
import unittest

from .apisupport import ADMIN, TestWebhook, new_api, webhook_config
from .crdsupport import CRDS, GADGETS, WIDGETS_A, WIDGETS_B, gadget_crd, widget, widget_crd
from kubesim import api as apimod
from kubesim import tables, watch


class CrdObjectsTest(unittest.TestCase):
    def setUp(self):
        self.api, self.adm = new_api()
        for crd in (widget_crd(), gadget_crd()):
            st, out = self.call("POST", CRDS, crd)
            self.assertEqual(st, 201, out)

    def tearDown(self):
        self.adm.close()

    def call(self, method, path, body=None, **kw):
        return self.api.call(ADMIN, method, path, body, **kw)

    def create(self, path, obj, **kw):
        st, out = self.call("POST", path, obj, **kw)
        self.assertEqual(st, 201, out)
        return out

    def test_versions_share_storage(self):
        a = self.create(WIDGETS_A, widget("a"))
        self.assertEqual(a["apiVersion"], "example.com/v1alpha1")
        stored = self.api.store.get("widgets.example.com", "default", "a")
        self.assertEqual(stored["apiVersion"], "example.com/v1beta1")      # the storage version
        st, b = self.call("GET", WIDGETS_B + "/a")
        self.assertEqual((st, b["apiVersion"], b["kind"]), (200, "example.com/v1beta1", "Widget"))
        self.assertEqual(b["spec"], a["spec"])
        self.create(WIDGETS_B, widget("b", "v1beta1"))
        st, lst = self.call("GET", WIDGETS_A)
        self.assertEqual((lst["kind"], lst["apiVersion"]), ("WidgetList", "example.com/v1alpha1"))
        self.assertEqual([(o["metadata"]["name"], o["apiVersion"]) for o in lst["items"]],
                         [("a", "example.com/v1alpha1"), ("b", "example.com/v1alpha1")])
        b["spec"]["image"] = "nginx:1.27"
        st, upd = self.call("PUT", WIDGETS_B + "/a", b)
        self.assertEqual((st, upd["apiVersion"]), (200, "example.com/v1beta1"))
        st, again = self.call("GET", WIDGETS_A + "/a")
        self.assertEqual(again["spec"]["image"], "nginx:1.27")
        st, _ = self.call("DELETE", WIDGETS_A + "/b")
        self.assertEqual(st, 200)
        self.assertEqual(self.call("GET", WIDGETS_B + "/b")[0], 404)
        st, out = self.call("GET", WIDGETS_B + "/nope")
        self.assertEqual(out["message"], 'widgets.example.com "nope" not found')
        st, out = self.call("POST", WIDGETS_A, widget("a"))
        self.assertEqual((st, out["message"]), (409, 'widgets.example.com "a" already exists'))

    def test_pruning_and_field_validation(self):
        obj = widget("x", extra="1")
        obj["metadata"]["bogus"] = 1
        st, out = self.call("POST", WIDGETS_A, obj, query={"fieldValidation": "Strict"})
        self.assertEqual(st, 400)
        self.assertEqual(out["message"], 'Widget in version "v1alpha1" cannot be handled as a Widget: strict '
                                         'decoding error: unknown field "metadata.bogus", unknown field "spec.extra"')
        st, out, warnings = self.api.call_ex(ADMIN, "POST", WIDGETS_A, obj, {"fieldValidation": "Warn"})
        self.assertEqual(st, 201, out)
        self.assertEqual(warnings, ['unknown field "metadata.bogus"', 'unknown field "spec.extra"'])
        self.assertNotIn("extra", out["spec"])
        st, out, warnings = self.api.call_ex(ADMIN, "POST", WIDGETS_A, widget("y", extra="1"),
                                             {"fieldValidation": "Ignore"})
        self.assertEqual((st, warnings), (201, []))
        self.assertNotIn("extra", out["spec"])

    def test_defaults_and_validation(self):
        out = self.create(WIDGETS_A, widget("d"))
        self.assertEqual((out["spec"]["mode"], out["spec"]["replicas"]), ("Once", 1))
        st, out = self.call("POST", WIDGETS_A, widget("e", mode="Sometimes"))
        self.assertEqual((st, out["reason"]), (422, "Invalid"))
        self.assertTrue(out["message"].startswith('Widget.example.com "e" is invalid: spec.mode: Unsupported value'),
                        out["message"])
        self.assertEqual(out["details"]["kind"], "Widget")
        self.assertEqual(out["details"]["group"], "example.com")
        st, out = self.call("POST", WIDGETS_A, widget("f", image=None))
        self.assertEqual(st, 422)
        self.assertIn("spec.image: Required value", out["message"])
        # defaults are applied on read too (an object stored before the default existed)
        self.api.store.commit("widgets.example.com", "default", "old", {
            "apiVersion": "example.com/v1beta1", "kind": "Widget",
            "metadata": {"name": "old", "namespace": "default", "uid": "u"}, "spec": {"image": "busybox"}},
            must_not_exist=True)
        st, old = self.call("GET", WIDGETS_A + "/old")
        self.assertEqual(old["spec"]["mode"], "Once")

    def test_cel_rules_of_the_schema(self):
        crd = widget_crd()
        crd["metadata"]["name"] = "gizmos.example.com"
        crd["spec"]["names"] = {"plural": "gizmos", "kind": "Gizmo"}
        for v in crd["spec"]["versions"]:
            v["schema"]["openAPIV3Schema"]["properties"]["spec"]["x-kubernetes-validations"] = [
                {"rule": "self.replicas <= 10", "message": "at most 10 replicas"}]
        self.create(CRDS, crd)
        path = "/apis/example.com/v1alpha1/namespaces/default/gizmos"
        ok = dict(widget("g", replicas=10), kind="Gizmo")
        self.create(path, ok)
        st, out = self.call("POST", path, dict(widget("h", replicas=11), kind="Gizmo"))
        self.assertEqual(st, 422, out)
        self.assertIn("at most 10 replicas", out["message"])
        crd["metadata"]["name"] = "doodads.example.com"
        crd["spec"]["names"] = {"plural": "doodads", "kind": "Doodad"}
        crd["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["properties"]["spec"][
            "x-kubernetes-validations"] = [{"rule": "self.replicas <="}]
        st, out = self.call("POST", CRDS, crd)
        self.assertEqual(st, 422, out)
        self.assertIn("spec.versions[1].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule",
                      out["message"])

    def test_status_subresource_and_generation(self):
        w = self.create(WIDGETS_A, widget("s"))
        self.assertEqual(w["metadata"]["generation"], 1)
        w["status"] = {"phase": "Pulling"}
        st, w = self.call("PUT", WIDGETS_A + "/s", w)            # main resource: status ignored
        self.assertEqual(st, 200)
        self.assertNotIn("status", w)
        w["status"] = {"phase": "Pulling"}
        w["spec"]["image"] = "changed"                           # status write: spec and metadata ignored
        w["metadata"]["labels"] = {"via": "status"}
        st, w = self.call("PUT", WIDGETS_A + "/s/status", w)
        self.assertEqual(st, 200, w)
        self.assertEqual((w["status"], w["spec"]["image"], w["metadata"]["generation"]),
                         ({"phase": "Pulling"}, "busybox:1.36", 1))
        self.assertNotIn("labels", w["metadata"])
        st, w = self.call("PATCH", WIDGETS_B + "/s/status", {"status": {"ready": 1}},
                          content_type="application/merge-patch+json")
        self.assertEqual((st, w["status"], w["metadata"]["generation"]), (200, {"phase": "Pulling", "ready": 1}, 1))
        st, w = self.call("PATCH", WIDGETS_A + "/s", {"metadata": {"labels": {"a": "b"}}},
                          content_type="application/merge-patch+json")
        self.assertEqual(w["metadata"]["generation"], 1)         # metadata only
        st, w = self.call("PATCH", WIDGETS_A + "/s", {"spec": {"replicas": 3}, "status": {"phase": "x"}},
                          content_type="application/merge-patch+json")
        self.assertEqual((w["metadata"]["generation"], w["status"]["phase"]), (2, "Pulling"))
        st, out = self.call("PATCH", WIDGETS_A + "/s/status", {"status": {"ready": "many"}},
                            content_type="application/merge-patch+json")
        self.assertEqual(st, 422, out)
        self.assertIn("status.ready", out["message"])

    def test_no_strategic_merge_patch(self):
        self.create(WIDGETS_A, widget("p"))
        st, out = self.call("PATCH", WIDGETS_A + "/p", {"spec": {"replicas": 2}},
                            content_type="application/strategic-merge-patch+json")
        self.assertEqual((st, out["reason"]), (415, "UnsupportedMediaType"))
        self.assertEqual(out["message"], "the body of the request was in an unknown format - accepted media types "
                         "include: application/json-patch+json, application/merge-patch+json, "
                         "application/apply-patch+yaml")

    def test_without_status_subresource(self):
        g = self.create(GADGETS, {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"},
                                  "spec": {"size": 1}, "status": {"state": "new"}})
        self.assertEqual((g["status"], g["metadata"]["generation"]), ({"state": "new"}, 1))
        self.assertNotIn("namespace", g["metadata"])
        g["status"]["state"] = "used"
        st, g = self.call("PUT", GADGETS + "/g", g)
        self.assertEqual((st, g["status"]["state"], g["metadata"]["generation"]), (200, "used", 2))
        self.assertEqual(self.call("PUT", GADGETS + "/g/status", g)[0], 404)

    def test_finalizers_hold_deletion(self):
        w = widget("f")
        w["metadata"]["finalizers"] = ["example.com/hold"]
        self.create(WIDGETS_A, w)
        st, out = self.call("DELETE", WIDGETS_B + "/f")
        self.assertEqual((st, out["apiVersion"]), (200, "example.com/v1beta1"))
        self.assertTrue(out["metadata"]["deletionTimestamp"])
        st, out = self.call("PATCH", WIDGETS_A + "/f", [{"op": "remove", "path": "/metadata/finalizers"}],
                            content_type="application/json-patch+json")
        self.assertEqual(st, 200, out)
        self.assertEqual(self.call("GET", WIDGETS_A + "/f")[0], 404)

    def test_paging_and_selectors(self):
        for i in range(5):
            w = widget("w%d" % i)
            w["metadata"]["labels"] = {"n": str(i % 2)}
            self.create(WIDGETS_A, w)

        def names(q, path=WIDGETS_B):
            st, lst = self.call("GET", path, query=q)
            self.assertEqual(st, 200, lst)
            return [o["metadata"]["name"] for o in lst["items"]], lst["metadata"]
        got, md = names({"limit": "2"})
        self.assertEqual((got, md["remainingItemCount"]), (["w0", "w1"], 3))
        got2, md2 = names({"limit": "2", "continue": md["continue"]})
        self.assertEqual(got2, ["w2", "w3"])
        self.assertEqual(names({"labelSelector": "n=1"})[0], ["w1", "w3"])
        self.assertEqual(names({"fieldSelector": "metadata.name=w4"})[0], ["w4"])
        self.assertEqual(names({"fieldSelector": "metadata.namespace=default,metadata.name!=w0"},
                               "/apis/example.com/v1alpha1/widgets")[0], ["w1", "w2", "w3", "w4"])
        st, out = self.call("GET", WIDGETS_B, query={"fieldSelector": "spec.image=x"})
        self.assertEqual((st, out["message"]), (400, "field label not supported: spec.image"))

    def test_watch_by_version(self):
        self.create(WIDGETS_A, widget("before"))
        _k, req = apimod.parse_path(WIDGETS_B, self.api.registry)
        events = []
        done = threading.Event()

        def send(ev):
            events.append(ev)
            if len(events) == 3:
                done.set()
        t = threading.Thread(target=watch.run, args=(self.api.store, req, watch.WatchOptions(
            {"timeoutSeconds": "5"}, req), send, 60, done.is_set), daemon=True)
        t.start()
        self.create(WIDGETS_A, widget("after"))
        self.call("DELETE", WIDGETS_A + "/before")
        self.assertTrue(done.wait(5))
        t.join(5)
        self.assertEqual([(e["type"], e["object"]["metadata"]["name"], e["object"]["apiVersion"]) for e in events],
                         [("ADDED", "before", "example.com/v1beta1"), ("ADDED", "after", "example.com/v1beta1"),
                          ("DELETED", "before", "example.com/v1beta1")])

    def test_table(self):
        w = self.create(WIDGETS_A, widget("t", replicas=2))
        self.call("PATCH", WIDGETS_A + "/t/status", {"status": {"phase": "Done"}},
                  content_type="application/merge-patch+json")
        _k, req = apimod.parse_path(WIDGETS_A, self.api.registry)
        st, lst = self.call("GET", WIDGETS_A)
        t = tables.to_table(req.res, lst, self.api.clock.now())
        self.assertEqual([(c["name"], c["priority"]) for c in t["columnDefinitions"]],
                         [("Name", 0), ("Image", 0), ("Mode", 0), ("Phase", 0), ("Replicas", 1), ("Age", 0)])
        self.assertEqual(t["rows"][0]["cells"][:5], ["t", "busybox:1.36", "Once", "Done", 2])
        self.assertEqual(t["rows"][0]["object"]["metadata"]["uid"], w["metadata"]["uid"])
        _k, req = apimod.parse_path(GADGETS, self.api.registry)
        t = tables.to_table(req.res, {"items": []}, self.api.clock.now())
        self.assertEqual([c["name"] for c in t["columnDefinitions"]], ["Name", "Age"])

    def test_orphan_and_namespace_purge(self):
        owner = self.create(WIDGETS_A, widget("owner"))
        dep = widget("dep")
        dep["metadata"]["ownerReferences"] = [{"apiVersion": "example.com/v1alpha1", "kind": "Widget",
                                               "name": "owner", "uid": owner["metadata"]["uid"]}]
        self.create(WIDGETS_A, dep)
        st, _ = self.call("DELETE", WIDGETS_A + "/owner", query={"propagationPolicy": "Orphan"})
        self.assertEqual(st, 200)
        st, dep = self.call("GET", WIDGETS_A + "/dep")
        self.assertFalse(dep["metadata"].get("ownerReferences"))
        self.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "tmp"}})
        w = widget("in-tmp")
        w["metadata"]["namespace"] = "tmp"
        self.create("/apis/example.com/v1alpha1/namespaces/tmp/widgets", w)
        self.call("DELETE", "/api/v1/namespaces/tmp")
        self.assertIsNone(self.api.store.get("widgets.example.com", "tmp", "in-tmp"))


class CrdWebhookTest(unittest.TestCase):
    """Webhooks match a CRD's group/version/resource; Equivalent sends other versions, converted."""

    def setUp(self):
        self.hook = TestWebhook(self.review)
        self.api, self.adm = new_api(self.hook.host_map())
        st, out = self.api.call(ADMIN, "POST", CRDS, widget_crd())
        self.assertEqual(st, 201, out)

    def tearDown(self):
        self.adm.close()
        self.hook.close()

    @staticmethod
    def review(request, path):
        if path.startswith("/mutate"):
            import base64
            import json
            ops = [{"op": "add", "path": "/metadata/labels", "value": {"seen": request["kind"]["version"]}},
                   {"op": "add", "path": "/spec/bogus", "value": 1}]
            return {"allowed": True, "patchType": "JSONPatch",
                    "patch": base64.b64encode(json.dumps(ops).encode()).decode()}
        return {"allowed": True}

    def register(self, policy):
        wh = {"name": "widgets.example.com", "clientConfig": self.hook.client_config("/mutate"),
              "rules": [{"operations": ["CREATE"], "apiGroups": ["example.com"], "apiVersions": ["v1beta1"],
                         "resources": ["widgets"]}],
              "sideEffects": "None", "admissionReviewVersions": ["v1"], "matchPolicy": policy}
        st, out = self.api.call(ADMIN, "POST", "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
                                webhook_config("MutatingWebhookConfiguration", "widgets", [wh]))
        self.assertEqual(st, 201, out)

    def test_equivalent_converts_to_the_webhook_version(self):
        self.register("Equivalent")
        st, out = self.api.call(ADMIN, "POST", WIDGETS_A, widget("a"))
        self.assertEqual(st, 201, out)
        self.assertEqual((out["apiVersion"], out["metadata"]["labels"]), ("example.com/v1alpha1", {"seen": "v1beta1"}))
        self.assertNotIn("bogus", out["spec"])          # what a webhook adds is pruned as well
        req = self.hook.calls[-1][2]["request"]
        self.assertEqual(req["kind"], {"group": "example.com", "version": "v1beta1", "kind": "Widget"})
        self.assertEqual(req["requestKind"], {"group": "example.com", "version": "v1alpha1", "kind": "Widget"})
        self.assertEqual(req["resource"]["version"], "v1beta1")
        self.assertEqual(req["requestResource"]["version"], "v1alpha1")
        self.assertEqual(req["object"]["apiVersion"], "example.com/v1beta1")

    def test_exact_skips_other_versions(self):
        self.register("Exact")
        st, out = self.api.call(ADMIN, "POST", WIDGETS_A, widget("a"))
        self.assertEqual(st, 201, out)
        self.assertEqual(self.hook.calls, [])
        st, out = self.api.call(ADMIN, "POST", WIDGETS_B, widget("b", "v1beta1"))
        self.assertEqual(out["metadata"]["labels"], {"seen": "v1beta1"})


if __name__ == "__main__":
    unittest.main()
