"""The resource catalogue and the discovery documents built from it.

One table (RESOURCES) names every built-in resource kubesim serves: group,
version, kind, plural, scope, short names, subresources. Each Api has a
Registry: those built-ins plus the custom resources its
CustomResourceDefinitions add and remove at runtime (crd.py). Routing,
storage, OpenAPI, tables and discovery all read the Registry, so adding a
built-in resource is one line here.
The discovery answers come in both shapes: aggregated (apidiscovery.k8s.io/v2
APIGroupDiscoveryList for `/api` and `/apis`, which kubectl 1.32 asks for
first) and legacy (APIVersions, APIGroupList, APIGroup, APIResourceList).
"""
import re
import threading

VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
SERVER_VERSION = {
    "major": "1", "minor": "32", "gitVersion": "v1.32.0-kubesim",
    "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean",
    "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.23.0", "compiler": "gc",
    "platform": "linux/amd64",
}


class Resource:
    def __init__(self, group, version, kind, plural, namespaced, short=(), subresources=(),
                 categories=(), verbs=VERBS):
        self.group = group
        self.key = plural       # the store's name for the objects (a CR's is "<plural>.<group>")
        self.crd = None         # for a custom resource: its CrdVersion (crd.py)
        self.version = version
        self.kind = kind
        self.plural = plural
        self.singular = kind.lower()
        self.namespaced = namespaced
        self.short = list(short)
        self.subresources = list(subresources)
        self.categories = list(categories)
        self.verbs = list(verbs)

    @property
    def api_version(self):
        return self.version if not self.group else "%s/%s" % (self.group, self.version)

    @property
    def gv_path(self):
        return "/api/v1" if not self.group else "/apis/%s/%s" % (self.group, self.version)

    def present(self, obj):
        """A stored object as this resource's version serves it (in place; returns it).
        Built-ins are stored as served; a custom resource is stored in its CRD's
        storage version and read through any served version."""
        if self.crd is not None:
            return self.crd.present(obj)
        obj.setdefault("apiVersion", self.api_version)
        obj.setdefault("kind", self.kind)
        return obj

    def __repr__(self):
        return "<Resource %s/%s>" % (self.api_version, self.plural)


RESOURCES = [
    Resource("", "v1", "Namespace", "namespaces", False, ["ns"], ["status"],
             verbs=["create", "delete", "get", "list", "patch", "update", "watch"]),
    Resource("", "v1", "Node", "nodes", False, ["no"], ["status"]),
    Resource("", "v1", "Pod", "pods", True, ["po"], ["status"], ["all"]),
    Resource("", "v1", "Event", "events", True, ["ev"]),
    Resource("", "v1", "Secret", "secrets", True),
    Resource("", "v1", "ConfigMap", "configmaps", True, ["cm"]),
    Resource("", "v1", "ServiceAccount", "serviceaccounts", True, ["sa"]),
    Resource("", "v1", "Service", "services", True, ["svc"], ["status"], ["all"]),
    Resource("apps", "v1", "DaemonSet", "daemonsets", True, ["ds"], ["status"], ["all"]),
    Resource("apps", "v1", "ControllerRevision", "controllerrevisions", True),
    # Stored only (no controller runs them): lets `kubectl apply -k manifests` succeed.
    Resource("apps", "v1", "Deployment", "deployments", True, ["deploy"], ["status"], ["all"]),
    Resource("batch", "v1", "Job", "jobs", True, [], ["status"], ["all"]),
    # Stored only, like Deployments: the webhook's disruption budget in manifests/.
    Resource("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", True, ["pdb"], ["status"]),
    Resource("coordination.k8s.io", "v1", "Lease", "leases", True),
    Resource("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", False),
    Resource("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", False),
    Resource("rbac.authorization.k8s.io", "v1", "Role", "roles", True),
    Resource("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", True),
    # Virtual, create-only: `kubectl auth whoami` and `kubectl auth can-i [--list]`.
    Resource("authentication.k8s.io", "v1", "SelfSubjectReview", "selfsubjectreviews", False, verbs=["create"]),
    Resource("authorization.k8s.io", "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews", False,
             verbs=["create"]),
    Resource("authorization.k8s.io", "v1", "SelfSubjectRulesReview", "selfsubjectrulesreviews", False,
             verbs=["create"]),
    Resource("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration",
             "mutatingwebhookconfigurations", False),
    Resource("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration",
             "validatingwebhookconfigurations", False),
    Resource("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", False,
             ["crd", "crds"], ["status"], ["api-extensions"]),
]

BY_GVR = {(r.group, r.version, r.plural): r for r in RESOURCES}
BY_PLURAL = {}
for _r in RESOURCES:
    BY_PLURAL.setdefault(_r.plural, _r)   # core first: "events" means v1 events


def lookup(group, version, plural):
    """A built-in resource (Registry.lookup also finds custom resources)."""
    return BY_GVR.get((group, version, plural))


_KUBE_VERSION = re.compile(r"^v([1-9][0-9]*)(?:(alpha|beta)([1-9][0-9]*))?$")


def version_priority(version):
    """Sort key of the apiserver's version priority: GA before beta before alpha, higher
    numbers first within each; versions that are not Kubernetes-like ("v1", "v2beta1")
    come last, alphabetically."""
    m = _KUBE_VERSION.match(version)
    if not m:
        return (3, 0, 0, version)
    stage = {None: 0, "beta": 1, "alpha": 2}[m.group(2)]
    return (stage, -int(m.group(1)), -int(m.group(3) or 0), "")


class Registry:
    """The resources one Api serves: the built-ins, and for each established
    CustomResourceDefinition one Resource per served version. Thread-safe: writers
    (crd.py, on CRD writes) replace a CRD's entries under the lock; readers get
    snapshots."""

    def __init__(self):
        self.lock = threading.Lock()
        self.dynamic = {}       # CRD name -> [Resource], served versions in priority order

    def set_crd(self, name, resources):
        """Serves these resources for the CRD `name` (none: stops serving it)."""
        with self.lock:
            if resources:
                self.dynamic[name] = list(resources)
            else:
                self.dynamic.pop(name, None)

    def custom(self):
        with self.lock:
            return [r for rs in self.dynamic.values() for r in rs]

    def resources(self):
        """Every resource: built-ins first, then custom resources by group and priority."""
        return RESOURCES + sorted(self.custom(), key=lambda r: (r.group, version_priority(r.version), r.plural))

    def lookup(self, group, version, plural):
        r = BY_GVR.get((group, version, plural))
        if r is not None:
            return r
        for r in self.custom():
            if (r.group, r.version, r.plural) == (group, version, plural):
                return r
        return None

    def equivalents(self, res):
        """The other served versions of the same custom resource (for webhooks'
        matchPolicy: Equivalent); none for built-ins, which kubesim serves in one version."""
        if res.crd is None:
            return []
        with self.lock:
            return [r for r in self.dynamic.get(res.crd.crd_name, []) if r.version != res.version]

    def by_kind(self, group, version, kind):
        """The resource serving group/version, Kind=kind (owner references name kinds)."""
        for r in self.resources():
            if (r.group, r.version, r.kind) == (group, version, kind):
                return r
        return None

    def stored(self):
        """One resource per store key (a custom resource's preferred version)."""
        seen, out = set(), []
        for r in self.resources():
            if r.key not in seen:
                seen.add(r.key)
                out.append(r)
        return out

    def group_versions(self):
        """[(group, version)] in the order the apiserver lists them."""
        seen = []
        for r in self.resources():
            if r.group and (r.group, r.version) not in seen:
                seen.append((r.group, r.version))
        return seen


def api_versions(server_address):
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]}


def api_group_list(reg):
    groups = []
    names = []
    for g, _v in reg.group_versions():
        if g not in names:
            names.append(g)
    for g in names:
        groups.append(api_group(reg, g))
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(reg, group):
    vs = [v for g, v in reg.group_versions() if g == group]
    if not vs:
        return None
    gvs = [{"groupVersion": "%s/%s" % (group, v), "version": v} for v in vs]
    return {"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": gvs,
            "preferredVersion": gvs[0]}


def api_resource_list(reg, group, version):
    out = []
    for r in reg.resources():
        if r.group != group or r.version != version:
            continue
        entry = {"name": r.plural, "singularName": r.singular, "namespaced": r.namespaced,
                 "kind": r.kind, "verbs": r.verbs}
        if r.short:
            entry["shortNames"] = r.short
        if r.categories:
            entry["categories"] = r.categories
        out.append(entry)
        for sub in r.subresources:
            out.append({"name": "%s/%s" % (r.plural, sub), "singularName": "", "namespaced": r.namespaced,
                        "kind": r.kind, "verbs": ["get", "patch", "update"]})
    if not out:
        return None
    gv = version if not group else "%s/%s" % (group, version)
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": out}


AGGREGATED_TYPE = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def wants_aggregated(accept):
    """True when the Accept header asks for apidiscovery.k8s.io/v2 (kubesim serves no v2beta1)."""
    for part in (accept or "").split(","):
        params = {k.strip(): v.strip() for k, _, v in (p.partition("=") for p in part.split(";")[1:])}
        if params.get("g") == "apidiscovery.k8s.io" and params.get("v") == "v2" and \
                params.get("as") == "APIGroupDiscoveryList":
            return True
    return False


def _discovery_resource(r):
    gvk = {"group": r.group, "version": r.version, "kind": r.kind}
    d = {"resource": r.plural, "responseKind": gvk, "scope": "Namespaced" if r.namespaced else "Cluster",
         "singularResource": r.singular, "verbs": r.verbs}
    if r.short:
        d["shortNames"] = r.short
    if r.categories:
        d["categories"] = r.categories
    if r.subresources:
        d["subresources"] = [{"subresource": s, "responseKind": gvk, "verbs": ["get", "patch", "update"]}
                             for s in r.subresources]
    return d


def aggregated(reg, core):
    """The APIGroupDiscoveryList of `/api` (core) or `/apis`: every group with its
    versions in priority order (the first is the preferred one) and their resources."""
    groups = {}
    for r in reg.resources():
        if (r.group == "") != core:
            continue
        versions = groups.setdefault(r.group, {})
        versions.setdefault(r.version, []).append(_discovery_resource(r))
    items = []
    for g, versions in groups.items():
        md = {"name": g, "creationTimestamp": None} if g else {"creationTimestamp": None}
        items.append({"metadata": md, "versions": [
            {"version": v, "resources": versions[v], "freshness": "Current"}
            for v in sorted(versions, key=version_priority)]})
    return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {},
            "items": items}
