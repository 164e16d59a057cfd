"""The default RBAC objects kube-apiserver creates at start (its bootstrap policy), the
ones kubectl and the tests rely on.

ClusterRoles cluster-admin, admin, edit, view, system:basic-user, system:discovery,
system:public-info-viewer and system:node, and the ClusterRoleBindings cluster-admin
(system:masters), system:basic-user and system:discovery (system:authenticated),
system:public-info-viewer (system:authenticated and system:unauthenticated) and
system:node (no subjects: the Node authorizer grants nodes their rights). All carry
the `kubernetes.io/bootstrapping: rbac-defaults` label and the autoupdate annotation.
admin, edit and view have their aggregation rules and labels, but kubesim does not
aggregate: their rules are given directly, the apiserver's aggregated rules for the
groups kubesim serves (core, apps, batch, policy; not autoscaling, networking,
extensions).
"""
from .authz import NODE_RULES, READ, _rule

WRITE = ["create", "delete", "deletecollection", "patch", "update"]
LABELS = {"kubernetes.io/bootstrapping": "rbac-defaults"}
ANNOTATIONS = {"rbac.authorization.kubernetes.io/autoupdate": "true"}


def _view_rules():
    return [
        _rule(READ, [""], ["configmaps", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status",
                           "pods", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
                           "services", "services/status"]),
        _rule(READ, [""], ["bindings", "events", "limitranges", "namespaces/status", "pods/log", "pods/status",
                           "replicationcontrollers/status", "resourcequotas", "resourcequotas/status"]),
        _rule(READ, [""], ["namespaces"]),
        _rule(READ, ["apps"], ["controllerrevisions", "daemonsets", "daemonsets/status", "deployments",
                               "deployments/scale", "deployments/status", "replicasets", "replicasets/scale",
                               "replicasets/status", "statefulsets", "statefulsets/scale", "statefulsets/status"]),
        _rule(READ, ["batch"], ["cronjobs", "cronjobs/status", "jobs", "jobs/status"]),
        _rule(READ, ["policy"], ["poddisruptionbudgets", "poddisruptionbudgets/status"]),
    ]


def _edit_rules():
    return [
        _rule(READ, [""], ["pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "secrets",
                           "services/proxy"]),
        _rule(["impersonate"], [""], ["serviceaccounts"]),
        _rule(WRITE, [""], ["pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"]),
        _rule(["create"], [""], ["pods/eviction"]),
        _rule(WRITE, [""], ["configmaps", "persistentvolumeclaims", "replicationcontrollers",
                            "replicationcontrollers/scale", "secrets", "serviceaccounts", "services",
                            "services/proxy"]),
        _rule(["create"], [""], ["serviceaccounts/token"]),
        _rule(WRITE, ["apps"], ["daemonsets", "deployments", "deployments/rollback", "deployments/scale",
                                "replicasets", "replicasets/scale", "statefulsets", "statefulsets/scale"]),
        _rule(WRITE, ["batch"], ["cronjobs", "jobs"]),
        _rule(WRITE, ["policy"], ["poddisruptionbudgets"]),
    ] + _view_rules()


def _admin_rules():
    return [
        _rule(["create"], ["authorization.k8s.io"], ["localsubjectaccessreviews"]),
        _rule(WRITE + ["get", "list", "watch"], ["rbac.authorization.k8s.io"], ["rolebindings", "roles"]),
    ] + _edit_rules()


def _cluster_role(name, rules, labels=None, aggregate_from=None):
    md = {"name": name, "labels": dict(LABELS, **(labels or {})), "annotations": dict(ANNOTATIONS)}
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": md, "rules": rules}
    if aggregate_from:
        role["aggregationRule"] = {"clusterRoleSelectors": [
            {"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-%s" % aggregate_from: "true"}}]}
    return role


def _binding(name, role, groups):
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": name, "labels": dict(LABELS), "annotations": dict(ANNOTATIONS)},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": g} for g in groups]}


def cluster_roles():
    return [
        _cluster_role("cluster-admin", [_rule(["*"], ["*"], ["*"]), _rule(["*"], (), urls=["*"])]),
        _cluster_role("admin", _admin_rules(), aggregate_from="admin"),
        _cluster_role("edit", _edit_rules(), {"rbac.authorization.k8s.io/aggregate-to-admin": "true"},
                      aggregate_from="edit"),
        _cluster_role("view", _view_rules(), {"rbac.authorization.k8s.io/aggregate-to-edit": "true"},
                      aggregate_from="view"),
        _cluster_role("system:basic-user", [
            _rule(["create"], ["authorization.k8s.io"], ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]),
            _rule(["create"], ["authentication.k8s.io"], ["selfsubjectreviews"])]),
        _cluster_role("system:discovery", [_rule(["get"], (), urls=[
            "/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz",
            "/version", "/version/"])]),
        _cluster_role("system:public-info-viewer", [_rule(["get"], (), urls=[
            "/healthz", "/livez", "/readyz", "/version", "/version/"])]),
        _cluster_role("system:node", [dict(r) for r in NODE_RULES]),
    ]


def cluster_role_bindings():
    b = [
        _binding("cluster-admin", "cluster-admin", ["system:masters"]),
        _binding("system:basic-user", "system:basic-user", ["system:authenticated"]),
        _binding("system:discovery", "system:discovery", ["system:authenticated"]),
        _binding("system:public-info-viewer", "system:public-info-viewer",
                 ["system:authenticated", "system:unauthenticated"]),
        _binding("system:node", "system:node", []),
    ]
    del b[-1]["subjects"]
    return b
