"""Our own small CustomResourceDefinitions for the CRD tests: a namespaced Widget
(two served versions, v1beta1 stored, one unserved, status subresource, printer
columns, a schema with required/enum/default) and a cluster-scoped Gadget without
a status subresource."""
import copy

WIDGET_SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["image"],
            "properties": {
                "image": {"type": "string", "description": "The image the widget pulls."},
                "mode": {"type": "string", "enum": ["Once", "Always"], "default": "Once",
                         "description": "How often to pull."},
                "replicas": {"type": "integer", "default": 1},
            },
        },
        "status": {"type": "object", "properties": {"phase": {"type": "string"}, "ready": {"type": "integer"}}},
    },
}

WIDGET_COLUMNS = [
    {"name": "Image", "type": "string", "jsonPath": ".spec.image"},
    {"name": "Mode", "type": "string", "jsonPath": ".spec.mode"},
    {"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
    {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas", "priority": 1},
    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
]

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
WIDGETS_A = "/apis/example.com/v1alpha1/namespaces/default/widgets"
WIDGETS_B = "/apis/example.com/v1beta1/namespaces/default/widgets"
GADGETS = "/apis/example.com/v1/gadgets"


def widget_crd():
    def version(name, served=True, storage=False):
        return {"name": name, "served": served, "storage": storage,
                "schema": {"openAPIV3Schema": copy.deepcopy(WIDGET_SCHEMA)},
                "subresources": {"status": {}}, "additionalPrinterColumns": copy.deepcopy(WIDGET_COLUMNS)}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"]},
                     "versions": [version("v1alpha1"), version("v1beta1", storage=True),
                                  version("v1", served=False)]}}


def gadget_crd():
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "gadgets.example.com"},
            "spec": {"group": "example.com", "scope": "Cluster",
                     "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                         "type": "object", "properties": {
                             "spec": {"type": "object", "properties": {"size": {"type": "integer"}}},
                             "status": {"type": "object", "properties": {"state": {"type": "string"}}}}}}}]}}


def widget(name, version="v1alpha1", image="busybox:1.36", **spec):
    spec = dict(spec, image=image) if image is not None else dict(spec)
    return {"apiVersion": "example.com/" + version, "kind": "Widget",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}
