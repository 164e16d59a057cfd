"""CustomResourceDefinitions themselves through the in-process Api: defaults,
status (acceptedNames, conditions, storedVersions), validation messages,
discovery and OpenAPI of the resources they add, deletion."""
import unittest

from .apisupport import ADMIN, new_api
from .crdsupport import CRDS, GADGETS, WIDGETS_A, WIDGETS_B, gadget_crd, widget, widget_crd
from kubesim import discovery, openapi


class CrdDefinitionTest(unittest.TestCase):
    def setUp(self):
        self.api, self.adm = new_api()

    def tearDown(self):
        self.adm.close()

    def call(self, method, path, body=None, **kw):
        return self.api.call(ADMIN, method, path, body, **kw)

    def create_crd(self, crd):
        st, out = self.call("POST", CRDS, crd)
        self.assertEqual(st, 201, out)
        return out

    def test_create_fills_names_and_status(self):
        out = self.create_crd(widget_crd())
        names = out["spec"]["names"]
        self.assertEqual((names["singular"], names["listKind"]), ("widget", "WidgetList"))
        self.assertEqual(out["spec"]["conversion"], {"strategy": "None"})
        st = out["status"]
        self.assertEqual(st["acceptedNames"], {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"],
                                               "singular": "widget", "listKind": "WidgetList"})
        conds = {c["type"]: (c["status"], c["reason"], c["message"]) for c in st["conditions"]}
        self.assertEqual(conds["NamesAccepted"], ("True", "NoConflicts", "no conflicts found"))
        self.assertEqual(conds["Established"], ("True", "InitialNamesAccepted",
                                                "the initial names have been accepted"))
        self.assertEqual(st["storedVersions"], ["v1beta1"])
        self.assertEqual(out["metadata"]["generation"], 1)
        st, got = self.call("GET", CRDS + "/widgets.example.com")
        self.assertEqual((st, got["kind"]), (200, "CustomResourceDefinition"))

    def test_update_keeps_status_and_adds_stored_versions(self):
        out = self.create_crd(widget_crd())
        out["spec"]["versions"][1]["storage"] = False
        out["spec"]["versions"][0]["storage"] = True
        out["status"] = {"storedVersions": ["bogus"]}          # ignored: status is a subresource
        st, upd = self.call("PUT", CRDS + "/widgets.example.com", out)
        self.assertEqual(st, 200, upd)
        self.assertEqual(upd["status"]["storedVersions"], ["v1beta1", "v1alpha1"])
        self.assertEqual(upd["metadata"]["generation"], 2)
        upd["spec"]["group"] = "other.example.com"
        st, bad = self.call("PUT", CRDS + "/widgets.example.com", upd)
        self.assertEqual(st, 422)
        self.assertIn('spec.group: Invalid value: "other.example.com": field is immutable', bad["message"])

    def test_validation_messages(self):
        def invalid(mutate):
            crd = widget_crd()
            mutate(crd)
            st, out = self.call("POST", CRDS, crd)
            self.assertEqual(st, 422, out)
            self.assertEqual(out["reason"], "Invalid")
            self.assertTrue(out["message"].startswith(
                'CustomResourceDefinition.apiextensions.k8s.io "%s" is invalid: ' % crd["metadata"]["name"]),
                out["message"])
            return out["message"]

        msg = invalid(lambda c: c["metadata"].update(name="widget.example.com"))
        self.assertIn('metadata.name: Invalid value: "widget.example.com": must be spec.names.plural+"."+spec.group',
                      msg)
        msg = invalid(lambda c: c["spec"]["versions"][0].update(storage=True))
        self.assertIn("spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{...}: "
                      "must have exactly one version marked as storage version", msg)
        msg = invalid(lambda c: c["spec"].update(versions=[]))
        self.assertIn("must have exactly one version marked as storage version", msg)
        self.assertIn("status.storedVersions: Invalid value: []string{}: must have at least one stored version", msg)
        msg = invalid(lambda c: c["spec"]["names"].pop("kind"))
        self.assertIn("spec.names.kind: Required value", msg)
        self.assertIn("spec.names.listKind: Required value", msg)
        msg = invalid(lambda c: c["spec"]["names"].pop("plural"))
        self.assertIn("spec.names.plural: Required value", msg)
        msg = invalid(lambda c: c["spec"].update(scope="Global"))
        self.assertIn('spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"', msg)
        msg = invalid(lambda c: c["spec"]["versions"][2].pop("schema"))
        self.assertIn("spec.versions[2].schema.openAPIV3Schema: Required value: schemas are required", msg)
        msg = invalid(lambda c: c["spec"].update(group="example"))
        self.assertIn('spec.group: Invalid value: "example": should be a domain with at least one dot', msg)
        st, out = self.call("POST", CRDS, dict(widget_crd(), spec=dict(widget_crd()["spec"], bogus=1)),
                            query={"fieldValidation": "Strict"})
        self.assertEqual(st, 400)
        self.assertIn('strict decoding error: unknown field "spec.bogus"', out["message"])

    def test_name_conflict_is_not_established(self):
        self.create_crd(widget_crd())
        other = gadget_crd()
        other["spec"]["names"]["shortNames"] = ["wd"]
        out = self.create_crd(other)
        conds = {c["type"]: (c["status"], c["reason"], c["message"]) for c in out["status"]["conditions"]}
        self.assertEqual(conds["NamesAccepted"], ("False", "NameConflict", '"wd" is already in use'))
        self.assertEqual(conds["Established"][:2], ("False", "NotAccepted"))
        st, _ = self.call("GET", GADGETS)
        self.assertEqual(st, 404)
        # the naming controller accepts it once the other CRD gives the name up
        st, _ = self.call("DELETE", CRDS + "/widgets.example.com")
        self.assertEqual(st, 200)
        st, out = self.call("GET", CRDS + "/gadgets.example.com")
        conds = {c["type"]: (c["status"], c["reason"]) for c in out["status"]["conditions"]}
        self.assertEqual((conds["NamesAccepted"], conds["Established"]),
                         (("True", "NoConflicts"), ("True", "InitialNamesAccepted")))
        self.assertEqual(out["status"]["acceptedNames"]["shortNames"], ["wd"])
        self.assertEqual(self.call("GET", GADGETS)[0], 200)

    def test_discovery_and_routes(self):
        reg = self.api.registry
        self.assertIsNone(reg.lookup("example.com", "v1beta1", "widgets"))
        st, _ = self.call("GET", WIDGETS_B)
        self.assertEqual(st, 404)
        self.create_crd(widget_crd())
        self.create_crd(gadget_crd())
        group = discovery.api_group(reg, "example.com")
        self.assertEqual([v["version"] for v in group["versions"]], ["v1", "v1beta1", "v1alpha1"])
        self.assertEqual(group["preferredVersion"]["version"], "v1")
        self.assertIn(group, discovery.api_group_list(reg)["groups"])
        self.assertIn("apiextensions.k8s.io", [g["name"] for g in discovery.api_group_list(reg)["groups"]])
        lst = discovery.api_resource_list(reg, "example.com", "v1alpha1")
        entries = {e["name"]: e for e in lst["resources"]}
        self.assertEqual(set(entries), {"widgets", "widgets/status"})
        self.assertEqual((entries["widgets"]["kind"], entries["widgets"]["singularName"],
                          entries["widgets"]["namespaced"], entries["widgets"]["shortNames"]),
                         ("Widget", "widget", True, ["wd"]))
        gad = discovery.api_resource_list(reg, "example.com", "v1")["resources"]
        self.assertEqual([(e["name"], e["namespaced"]) for e in gad], [("gadgets", False)])
        for path in (WIDGETS_A, WIDGETS_B, GADGETS):
            st, out = self.call("GET", path)
            self.assertEqual(st, 200, (path, out))
        st, out = self.call("GET", "/apis/example.com/v1/namespaces/default/widgets")   # served: false
        self.assertEqual(st, 404)
        st, out = self.call("GET", "/apis/example.com/v1/namespaces/default/gadgets")   # cluster-scoped
        self.assertEqual(st, 404)

    def test_aggregated_discovery(self):
        self.create_crd(widget_crd())
        reg = self.api.registry
        self.assertTrue(discovery.wants_aggregated(
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"))
        self.assertFalse(discovery.wants_aggregated("application/json, */*"))
        doc = discovery.aggregated(reg, core=False)
        groups = {g["metadata"]["name"]: g for g in doc["items"]}
        ex = groups["example.com"]
        self.assertEqual([v["version"] for v in ex["versions"]], ["v1beta1", "v1alpha1"])
        w = ex["versions"][1]["resources"][0]
        self.assertEqual((w["resource"], w["scope"], w["singularResource"], w["shortNames"], w["responseKind"]),
                         ("widgets", "Namespaced", "widget", ["wd"],
                          {"group": "example.com", "version": "v1alpha1", "kind": "Widget"}))
        self.assertEqual([s["subresource"] for s in w["subresources"]], ["status"])
        core = discovery.aggregated(reg, core=True)["items"]
        self.assertEqual([(g["metadata"], [v["version"] for v in g["versions"]]) for g in core],
                         [({"creationTimestamp": None}, ["v1"])])
        self.assertIn("pods", [r["resource"] for r in core[0]["versions"][0]["resources"]])

    def test_openapi_carries_the_schema(self):
        self.create_crd(widget_crd())
        reg = self.api.registry
        self.assertIn("apis/example.com/v1beta1", openapi.index(reg)["paths"])
        doc = openapi.document(reg, "apis/example.com/v1alpha1")
        s = doc["components"]["schemas"]["com.example.v1alpha1.Widget"]
        self.assertEqual(s["x-kubernetes-group-version-kind"],
                         [{"group": "example.com", "version": "v1alpha1", "kind": "Widget"}])
        self.assertEqual(s["properties"]["spec"]["properties"]["mode"]["enum"], ["Once", "Always"])
        patch = doc["paths"]["/apis/example.com/v1alpha1/namespaces/{namespace}/widgets/{name}"]["patch"]
        self.assertIn("fieldValidation", [p["name"] for p in patch["parameters"]])
        self.assertNotIn("application/strategic-merge-patch+json", patch["requestBody"]["content"])
        self.assertEqual(patch["x-kubernetes-group-version-kind"]["kind"], "Widget")
        self.assertIn("/apis/example.com/v1alpha1/namespaces/{namespace}/widgets/{name}/status", doc["paths"])
        self.assertEqual(s["properties"]["metadata"]["allOf"],
                         [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}])
        self.assertIn("labels", doc["components"]["schemas"]["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"][
            "properties"])

    def test_delete_crd_deletes_its_objects(self):
        self.create_crd(widget_crd())
        for n in ("a", "b"):
            st, out = self.call("POST", WIDGETS_A, widget(n))
            self.assertEqual(st, 201, out)
        held = widget("held")
        held["metadata"]["finalizers"] = ["example.com/hold"]
        self.assertEqual(self.call("POST", WIDGETS_A, held)[0], 201)
        st, out = self.call("DELETE", CRDS + "/widgets.example.com")
        self.assertEqual(st, 200, out)
        # the finalizer of "held" keeps the CRD Terminating, its objects readable
        self.assertEqual(out["kind"], "CustomResourceDefinition")
        self.assertIn("customresourcecleanup.apiextensions.k8s.io", out["metadata"]["finalizers"])
        conds = {c["type"]: c for c in out["status"]["conditions"]}
        self.assertEqual((conds["Terminating"]["status"], conds["Terminating"]["reason"]),
                         ("True", "InstanceDeletionInProgress"))
        st, lst = self.call("GET", WIDGETS_B)
        self.assertEqual([o["metadata"]["name"] for o in lst["items"]], ["held"])
        self.assertTrue(lst["items"][0]["metadata"]["deletionTimestamp"])
        st, out = self.call("POST", WIDGETS_A, widget("late"))
        self.assertEqual((st, out["message"]), (405, "create not allowed while custom resource definition is "
                                                     "terminating"))
        st, out = self.call("PATCH", WIDGETS_A + "/held", {"metadata": {"finalizers": None}},
                            content_type="application/merge-patch+json")
        self.assertEqual(st, 200, out)
        st, _ = self.call("GET", CRDS + "/widgets.example.com")
        self.assertEqual(st, 404)
        st, _ = self.call("GET", WIDGETS_A)
        self.assertEqual(st, 404)
        self.assertIsNone(self.api.registry.lookup("example.com", "v1alpha1", "widgets"))
        # created again, it starts empty
        self.create_crd(widget_crd())
        st, lst = self.call("GET", WIDGETS_A)
        self.assertEqual((st, lst["items"]), (200, []))

    def test_delete_crd_without_objects_is_immediate(self):
        self.create_crd(gadget_crd())
        st, out = self.call("DELETE", CRDS + "/gadgets.example.com")
        self.assertEqual((st, out["status"]), (200, "Success"))
        self.assertEqual(self.call("GET", CRDS + "/gadgets.example.com")[0], 404)


if __name__ == "__main__":
    unittest.main()
