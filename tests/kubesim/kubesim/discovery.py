"""The resource catalogue and the discovery documents built from it.

One table (RESOURCES) names every resource kubesim serves: group, version,
kind, plural, scope, short names, subresources. Routing, storage, OpenAPI,
tables and discovery all read it, so adding a resource is one line here.
The discovery answers are the legacy (non-aggregated) shapes: kubectl 1.32
asks for aggregated discovery first and falls back when the answer comes as
plain application/json.
"""

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

    def __repr__(self):
        return "<Resource %s>" % self.plural


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
]

BY_GVR = {(r.group, r.version, r.plural): r for r in RESOURCES}
BY_PLURAL = {}
for _r in RESOURCES:
    BY_PLURAL.setdefault(_r.plural, _r)   # core first: "events" means v1 events


def lookup(group, version, plural):
    return BY_GVR.get((group, version, plural))


def group_versions():
    """[(group, version)] in the order the apiserver lists them."""
    seen = []
    for r in RESOURCES:
        if r.group and (r.group, r.version) not in seen:
            seen.append((r.group, r.version))
    return seen


def api_versions(server_address):
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]}


def api_group_list():
    groups = []
    for g, v in group_versions():
        gv = {"groupVersion": "%s/%s" % (g, v), "version": v}
        groups.append({"name": g, "versions": [gv], "preferredVersion": gv})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(group):
    vs = [v for g, v in group_versions() if g == group]
    if not vs:
        return None
    gvs = [{"groupVersion": "%s/%s" % (group, v), "version": v} for v in vs]
    return {"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": gvs,
            "preferredVersion": gvs[0]}


def api_resource_list(group, version):
    out = []
    for r in RESOURCES:
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
