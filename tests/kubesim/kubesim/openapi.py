"""/openapi/v3: the index and one document per group-version.

kubectl 1.32's `apply` (default `--validate=strict`) first fetches
/openapi/v3 and, for the object's kind, looks for a PATCH operation tagged
with `x-kubernetes-group-version-kind` that takes a `fieldValidation` query
parameter. When it finds one it leaves validation to the server and sends
`fieldValidation=Strict` (api.py honours it with schemas.py). The documents
therefore carry every path with its operations, GVK tags and query
parameters; object schemas are not needed by kubectl for that and are left
out (kubectl falls back to its compiled-in types for strategic merge
patches). A custom resource's group-version document also carries its
CRD schema in components.schemas, tagged with the GVK, which is what
`kubectl explain <plural>.spec.<field>` reads.
"""
import copy
import hashlib
import json

_WRITE_PARAMS = ["dryRun", "fieldManager", "fieldValidation"]


def _params(names):
    return [{"name": n, "in": "query", "description": n, "schema": {"type": "string", "uniqueItems": True}}
            for n in names]


def _op(action, r, verb_id):
    gvk = {"group": r.group, "version": r.version, "kind": r.kind}
    op = {"operationId": verb_id, "x-kubernetes-action": action, "x-kubernetes-group-version-kind": gvk,
          "responses": {"200": {"description": "OK"}}, "tags": [r.gv_path.strip("/").replace("/", "_")]}
    if action in ("post", "put"):
        op["parameters"] = _params(_WRITE_PARAMS)
    elif action == "patch":
        op["parameters"] = _params(_WRITE_PARAMS + ["force"])
        types = ["application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json"]
        if r.crd is None:   # custom resources take no strategic merge patch (kubectl then merge-patches)
            types.append("application/strategic-merge-patch+json")
        op["requestBody"] = {"content": {t: {"schema": {"type": "object"}} for t in types}, "required": True}
    elif action in ("list", "deletecollection"):
        op["parameters"] = _params(["labelSelector", "fieldSelector", "resourceVersion", "timeoutSeconds",
                                    "watch", "allowWatchBookmarks", "limit", "continue"])
    elif action == "delete":
        op["parameters"] = _params(["dryRun", "gracePeriodSeconds", "propagationPolicy"])
    return op


def _schema_name(r):
    """The apiserver's component name for a custom resource: reversed group, version, kind."""
    return "%s.%s.%s" % (".".join(reversed(r.group.split("."))), r.version, r.kind)


OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


def _object_meta_schema():
    """ObjectMeta as custom resource documents reference it: enough for kubectl's
    openapi-driven apply patch (labels, annotations, owner references merged by uid,
    finalizers merged as a set) and for `kubectl explain <plural>.metadata`."""
    string = {"type": "string"}
    strings = {"type": "object", "additionalProperties": {"type": "string", "default": ""}}
    owner = {"type": "object", "required": ["apiVersion", "kind", "name", "uid"],
             "properties": {k: {"type": "boolean"} if k in ("controller", "blockOwnerDeletion") else string
                            for k in ("apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion")},
             "x-kubernetes-map-type": "atomic"}
    props = {k: string for k in ("name", "generateName", "namespace", "uid", "resourceVersion", "selfLink")}
    props.update({
        "generation": {"type": "integer", "format": "int64"},
        "deletionGracePeriodSeconds": {"type": "integer", "format": "int64"},
        "creationTimestamp": {"type": "string", "format": "date-time"},
        "deletionTimestamp": {"type": "string", "format": "date-time"},
        "labels": strings, "annotations": strings,
        "finalizers": {"type": "array", "items": {"type": "string", "default": ""},
                       "x-kubernetes-list-type": "set", "x-kubernetes-patch-strategy": "merge"},
        "ownerReferences": {"type": "array", "items": owner, "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["uid"], "x-kubernetes-patch-merge-key": "uid",
                            "x-kubernetes-patch-strategy": "merge"},
        "managedFields": {"type": "array", "items": {"type": "object"}},
    })
    return {"type": "object", "description": "ObjectMeta is metadata that all persisted resources must have, "
            "which includes all objects users must create.", "properties": props}


def _cr_schema(r):
    """A custom resource version's published schema: the CRD's openAPIV3Schema with
    apiVersion, kind and metadata described and the GVK tag."""
    s = copy.deepcopy(r.crd.schema)
    props = s.setdefault("properties", {})
    props["apiVersion"] = {"type": "string", "description": "APIVersion defines the versioned schema of this "
                           "representation of an object."}
    props["kind"] = {"type": "string", "description": "Kind is a string value representing the REST resource "
                     "this object represents."}
    props["metadata"] = {"description": "Standard object's metadata.", "allOf": [
        {"$ref": "#/components/schemas/" + OBJECT_META}]}
    s.setdefault("type", "object")
    s["x-kubernetes-group-version-kind"] = [{"group": r.group, "version": r.version, "kind": r.kind}]
    return s


def group_version_doc(reg, group, version):
    paths = {}
    schemas = {}
    for r in reg.resources():
        if r.group != group or r.version != version:
            continue
        base = r.gv_path + ("/namespaces/{namespace}/" if r.namespaced else "/") + r.plural
        k = r.kind
        if r.crd is not None:
            schemas[_schema_name(r)] = _cr_schema(r)
            schemas[OBJECT_META] = _object_meta_schema()
        paths[base] = {"get": _op("list", r, "list" + k), "post": _op("post", r, "create" + k),
                       "delete": _op("deletecollection", r, "deleteCollection" + k)}
        paths[base + "/{name}"] = {"get": _op("get", r, "read" + k), "put": _op("put", r, "replace" + k),
                                   "patch": _op("patch", r, "patch" + k), "delete": _op("delete", r, "delete" + k)}
        for sub in r.subresources:
            s = sub.capitalize()
            paths[base + "/{name}/" + sub] = {"get": _op("get", r, "read%s%s" % (k, s)),
                                             "put": _op("put", r, "replace%s%s" % (k, s)),
                                             "patch": _op("patch", r, "patch%s%s" % (k, s))}
    if not paths:
        return None
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.32.0"}, "paths": paths,
            "components": {"schemas": schemas}}


def _gv_key(group, version):
    return "api/v1" if not group else "apis/%s/%s" % (group, version)


def _hash(doc):
    return hashlib.sha512(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:128].upper()


def index(reg):
    paths = {}
    gvs = [("", "v1")] + reg.group_versions()
    for g, v in gvs:
        doc = group_version_doc(reg, g, v)
        key = _gv_key(g, v)
        paths[key] = {"serverRelativeURL": "/openapi/v3/%s?hash=%s" % (key, _hash(doc))}
    return {"paths": paths}


def document(reg, path):
    """path like 'apis/apps/v1' or 'api/v1' -> document or None."""
    parts = path.strip("/").split("/")
    if parts == ["api", "v1"]:
        return group_version_doc(reg, "", "v1")
    if len(parts) == 3 and parts[0] == "apis":
        return group_version_doc(reg, parts[1], parts[2])
    return None
