"""RBAC as kube-apiserver evaluates it: request attributes, rule matching, bindings,
the 403 wording, the bootstrap roles, SelfSubjectAccessReview and SelfSubjectRulesReview."""
import unittest

from .apisupport import ADMIN, new_api
from kubesim import api as apimod
from kubesim import authz

JANE = apimod.User("jane", ["developers", "system:authenticated"])
SA = apimod.User("system:serviceaccount:ota-system:ota-controller",
                 ["system:serviceaccounts", "system:serviceaccounts:ota-system", "system:authenticated"])
RBAC = "/apis/rbac.authorization.k8s.io/v1"


def role(name, rules, ns=None):
    r = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole" if ns is None else "Role",
         "metadata": {"name": name}, "rules": rules}
    if ns:
        r["metadata"]["namespace"] = ns
    return r


def binding(name, role_kind, role_name, subjects, ns=None):
    return {"apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding" if ns is None else "RoleBinding",
            "metadata": dict({"name": name}, **({"namespace": ns} if ns else {})),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role_name},
            "subjects": subjects}


USER_JANE = [{"kind": "User", "name": "jane"}]


def api_with_namespaces():
    """A fresh Api with the namespaces edge and ota-system besides the default ones."""
    a, _ = new_api()
    for ns in ("edge", "ota-system"):
        a.call(ADMIN, "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                     "metadata": {"name": ns}})
    return a


class AttributesTest(unittest.TestCase):
    """The verb and names the apiserver's RequestInfoFactory gives a request."""

    def attrs(self, method, path, query=None):
        a = authz.attributes(JANE, method, path, query or {})
        return (a.verb, a.group, a.resource, a.subresource, a.namespace, a.name) if a.resource_request \
            else (a.verb, a.path)

    def test_verbs(self):
        P = "/api/v1/namespaces/ns/pods"
        self.assertEqual(self.attrs("GET", P + "/x"), ("get", "", "pods", "", "ns", "x"))
        self.assertEqual(self.attrs("HEAD", P + "/x"), ("get", "", "pods", "", "ns", "x"))
        self.assertEqual(self.attrs("GET", P), ("list", "", "pods", "", "ns", ""))
        self.assertEqual(self.attrs("GET", P, {"watch": "1"}), ("watch", "", "pods", "", "ns", ""))
        self.assertEqual(self.attrs("GET", P, {"watch": "true"}), ("watch", "", "pods", "", "ns", ""))
        self.assertEqual(self.attrs("POST", P), ("create", "", "pods", "", "ns", ""))
        self.assertEqual(self.attrs("PUT", P + "/x"), ("update", "", "pods", "", "ns", "x"))
        self.assertEqual(self.attrs("PATCH", P + "/x"), ("patch", "", "pods", "", "ns", "x"))
        self.assertEqual(self.attrs("DELETE", P + "/x"), ("delete", "", "pods", "", "ns", "x"))
        self.assertEqual(self.attrs("DELETE", P), ("deletecollection", "", "pods", "", "ns", ""))

    def test_a_watch_of_one_named_object_is_a_get(self):
        self.assertEqual(self.attrs("GET", "/api/v1/namespaces/ns/pods/x", {"watch": "1"})[0], "get")

    def test_a_metadata_name_field_selector_names_the_object_of_a_list_or_watch(self):
        P = "/api/v1/namespaces/ns/pods"
        self.assertEqual(self.attrs("GET", P, {"fieldSelector": "metadata.name=x"})[5], "x")
        self.assertEqual(self.attrs("GET", P, {"fieldSelector": "metadata.name==x", "watch": "1"})[5], "x")
        self.assertEqual(self.attrs("GET", P, {"fieldSelector": "metadata.name!=x"})[5], "")
        self.assertEqual(self.attrs("DELETE", P, {"fieldSelector": "metadata.name=x"})[5], "")

    def test_groups_subresources_and_cluster_scope(self):
        self.assertEqual(self.attrs("PUT", "/apis/apps/v1/namespaces/ns/daemonsets/d/status"),
                         ("update", "apps", "daemonsets", "status", "ns", "d"))
        self.assertEqual(self.attrs("GET", "/api/v1/nodes/n1"), ("get", "", "nodes", "", "", "n1"))
        self.assertEqual(self.attrs("GET", "/api/v1/pods"), ("list", "", "pods", "", "", ""))
        self.assertEqual(self.attrs("GET", "/apis/example.com/v1/widgets"), ("list", "example.com", "widgets",
                                                                            "", "", ""))

    def test_a_namespace_is_in_itself(self):
        self.assertEqual(self.attrs("GET", "/api/v1/namespaces/edge"), ("get", "", "namespaces", "", "edge", "edge"))
        self.assertEqual(self.attrs("PUT", "/api/v1/namespaces/edge/status"),
                         ("update", "", "namespaces", "status", "edge", "edge"))
        self.assertEqual(self.attrs("GET", "/api/v1/namespaces"), ("list", "", "namespaces", "", "", ""))

    def test_non_resource_paths(self):
        for p in ("/api", "/api/v1", "/apis", "/apis/apps", "/apis/apps/v1", "/version", "/openapi/v3",
                  "/healthz", "/kubesim/faults"):
            self.assertEqual(self.attrs("GET", p), ("get", p))
        self.assertEqual(self.attrs("POST", "/kubesim/faults"), ("post", "/kubesim/faults"))


class RuleTest(unittest.TestCase):
    """rbac.RuleAllows."""

    def allows(self, rule, method, path, query=None):
        return authz.Rule(rule).allows(authz.attributes(JANE, method, path, query or {}))

    def test_verbs_groups_resources_and_wildcards(self):
        r = {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}
        self.assertTrue(self.allows(r, "GET", "/api/v1/namespaces/n/pods/x"))
        self.assertFalse(self.allows(r, "GET", "/api/v1/namespaces/n/pods"))          # list
        self.assertFalse(self.allows(r, "GET", "/apis/apps/v1/namespaces/n/daemonsets/x"))
        self.assertFalse(self.allows(r, "GET", "/api/v1/namespaces/n/pods/x/status"))  # a subresource
        star = {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}
        for m, p in (("DELETE", "/apis/apps/v1/namespaces/n/daemonsets"), ("PATCH", "/api/v1/nodes/n/status"),
                     ("POST", "/apis/example.com/v1/namespaces/n/widgets")):
            self.assertTrue(self.allows(star, m, p))
        self.assertFalse(self.allows(star, "GET", "/version"))        # resource rules never cover paths

    def test_subresources(self):
        exact = {"verbs": ["patch"], "apiGroups": [""], "resources": ["pods/status"]}
        self.assertTrue(self.allows(exact, "PATCH", "/api/v1/namespaces/n/pods/x/status"))
        self.assertFalse(self.allows(exact, "PATCH", "/api/v1/namespaces/n/pods/x"))
        any_status = {"verbs": ["patch"], "apiGroups": ["*"], "resources": ["*/status"]}
        self.assertTrue(self.allows(any_status, "PATCH", "/api/v1/namespaces/n/pods/x/status"))
        self.assertTrue(self.allows(any_status, "PATCH", "/apis/apps/v1/namespaces/n/daemonsets/d/status"))
        self.assertFalse(self.allows(any_status, "PATCH", "/api/v1/namespaces/n/pods/x"))
        # RBAC has no "pods/*": it names the subresource "*" literally
        pods_star = {"verbs": ["patch"], "apiGroups": [""], "resources": ["pods/*"]}
        self.assertFalse(self.allows(pods_star, "PATCH", "/api/v1/namespaces/n/pods/x/status"))

    def test_resource_names(self):
        r = {"verbs": ["*"], "apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["a"]}
        P = "/api/v1/namespaces/n/configmaps"
        self.assertTrue(self.allows(r, "GET", P + "/a"))
        self.assertTrue(self.allows(r, "PUT", P + "/a"))
        self.assertTrue(self.allows(r, "DELETE", P + "/a"))
        self.assertFalse(self.allows(r, "GET", P + "/b"))
        self.assertFalse(self.allows(r, "POST", P))                   # create names no object
        self.assertFalse(self.allows(r, "DELETE", P))                 # nor deletecollection
        self.assertFalse(self.allows(r, "GET", P))                    # nor a plain list
        self.assertFalse(self.allows(r, "GET", P, {"watch": "1"}))
        self.assertTrue(self.allows(r, "GET", P, {"fieldSelector": "metadata.name=a"}))
        self.assertTrue(self.allows(r, "GET", P, {"fieldSelector": "metadata.name=a", "watch": "1"}))

    def test_non_resource_urls(self):
        r = {"verbs": ["get"], "nonResourceURLs": ["/healthz", "/apis/*"]}
        self.assertTrue(self.allows(r, "GET", "/healthz"))
        self.assertFalse(self.allows(r, "GET", "/healthz/etcd"))
        self.assertTrue(self.allows(r, "GET", "/apis/apps/v1"))
        self.assertFalse(self.allows(r, "GET", "/apis"))
        self.assertFalse(self.allows(r, "POST", "/healthz"))
        self.assertTrue(self.allows({"verbs": ["*"], "nonResourceURLs": ["*"]}, "PUT", "/anything"))
        self.assertFalse(self.allows(r, "GET", "/api/v1/namespaces/n/pods"))    # URL rules never cover resources


class RbacTest(unittest.TestCase):
    def setUp(self):
        self.api = api_with_namespaces()
        self.authz = self.api.authz

    def create(self, path, obj):
        st, body = self.api.call(ADMIN, "POST", RBAC + path, obj)
        self.assertEqual(st, 201, body)

    def check(self, user, method, path, query=None):
        """None when allowed, else the 403's message."""
        try:
            self.authz.check(user, method, path, query or {})
            return None
        except Exception as e:
            self.assertEqual((e.code, e.reason), (403, "Forbidden"))
            return e.message

    def test_messages(self):
        self.assertEqual(self.check(JANE, "PATCH", "/api/v1/namespaces/edge/pods/x/status"),
                         'pods "x" is forbidden: User "jane" cannot patch resource "pods/status" in API group "" '
                         'in the namespace "edge"')
        self.assertEqual(self.check(JANE, "GET", "/api/v1/namespaces/edge/pods"),
                         'pods is forbidden: User "jane" cannot list resource "pods" in API group "" '
                         'in the namespace "edge"')
        self.assertEqual(self.check(JANE, "GET", "/api/v1/nodes/n1"),
                         'nodes "n1" is forbidden: User "jane" cannot get resource "nodes" in API group "" '
                         'at the cluster scope')
        self.assertEqual(self.check(JANE, "DELETE", "/apis/apps/v1/namespaces/edge/daemonsets"),
                         'daemonsets.apps is forbidden: User "jane" cannot deletecollection resource "daemonsets" '
                         'in API group "apps" in the namespace "edge"')
        self.assertEqual(self.check(JANE, "POST", "/kubesim/faults"),
                         'forbidden: User "jane" cannot post path "/kubesim/faults"')
        try:
            self.authz.check(JANE, "GET", "/api/v1/namespaces/edge/pods/x", {})
        except Exception as e:
            self.assertEqual(e.status()["details"], {"name": "x", "kind": "pods"})

    def test_system_masters_may_do_anything(self):
        for m, p in (("DELETE", "/api/v1/nodes/n1"), ("POST", "/kubesim/faults"),
                     ("GET", "/apis/example.com/v1/widgets")):
            self.assertIsNone(self.check(ADMIN, m, p))
        someone = apimod.User("root", ["system:masters"])
        self.assertIsNone(self.check(someone, "PATCH", "/api/v1/namespaces/x/pods/y/status"))

    def test_role_binding_grants_in_its_namespace_only(self):
        self.create("/namespaces/edge/roles", role("r", [{"verbs": ["get", "list"], "apiGroups": [""],
                                                           "resources": ["pods"]}], "edge"))
        self.assertIsNotNone(self.check(JANE, "GET", "/api/v1/namespaces/edge/pods"))
        self.create("/namespaces/edge/rolebindings", binding("b", "Role", "r", USER_JANE, "edge"))
        self.assertIsNone(self.check(JANE, "GET", "/api/v1/namespaces/edge/pods"))
        self.assertIsNone(self.check(JANE, "GET", "/api/v1/namespaces/edge/pods/x"))
        self.assertIsNotNone(self.check(JANE, "GET", "/api/v1/namespaces/default/pods"))
        self.assertIsNotNone(self.check(JANE, "GET", "/api/v1/pods"))
        self.assertIsNotNone(self.check(JANE, "DELETE", "/api/v1/namespaces/edge/pods/x"))

    def test_role_binding_to_a_cluster_role_is_a_namespaced_grant(self):
        self.create("/clusterroles", role("cm-writer", [{"verbs": ["create"], "apiGroups": [""],
                                                         "resources": ["configmaps"]}]))
        self.create("/namespaces/edge/rolebindings", binding("b", "ClusterRole", "cm-writer", USER_JANE, "edge"))
        self.assertIsNone(self.check(JANE, "POST", "/api/v1/namespaces/edge/configmaps"))
        self.assertIsNotNone(self.check(JANE, "POST", "/api/v1/namespaces/default/configmaps"))

    def test_cluster_role_binding_grants_everywhere(self):
        self.create("/clusterroles", role("reader", [{"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]}]))
        self.create("/clusterrolebindings", binding("b", "ClusterRole", "reader",
                                                    [{"kind": "Group", "name": "developers"}]))
        self.assertIsNone(self.check(JANE, "GET", "/api/v1/pods"))
        self.assertIsNone(self.check(JANE, "GET", "/api/v1/namespaces/any/pods"))

    def test_service_account_subjects(self):
        self.create("/namespaces/ota-system/roles", role("r", [{"verbs": ["get"], "apiGroups": ["apps"],
                                                                "resources": ["daemonsets"]}], "ota-system"))
        self.create("/namespaces/ota-system/rolebindings", binding("b", "Role", "r", [
            {"kind": "ServiceAccount", "name": "ota-controller", "namespace": "ota-system"}], "ota-system"))
        self.assertIsNone(self.check(SA, "GET", "/apis/apps/v1/namespaces/ota-system/daemonsets/d"))
        self.create("/clusterroles", role("all-ds", [{"verbs": ["list"], "apiGroups": ["apps"],
                                                      "resources": ["daemonsets"]}]))
        self.create("/clusterrolebindings", binding("sas", "ClusterRole", "all-ds", [
            {"kind": "Group", "name": "system:serviceaccounts:ota-system"}]))
        self.assertIsNone(self.check(SA, "GET", "/apis/apps/v1/daemonsets"))

    def test_a_service_account_subject_without_namespace_is_in_the_bindings(self):
        self.create("/namespaces/ota-system/rolebindings", binding("b", "ClusterRole", "view", [
            {"kind": "ServiceAccount", "name": "ota-controller"}], "ota-system"))
        self.assertIsNone(self.check(SA, "GET", "/api/v1/namespaces/ota-system/pods"))
        self.assertEqual(self.authz.authorize(authz.attributes(SA, "GET", "/api/v1/namespaces/ota-system/pods", {})),
                         (True, 'RBAC: allowed by RoleBinding "b/ota-system" of ClusterRole "view" to '
                                'ServiceAccount "ota-controller/ota-system"'))
        self.create("/clusterrolebindings", binding("c", "ClusterRole", "view", [
            {"kind": "ServiceAccount", "name": "ota-controller"}]))
        self.assertIsNotNone(self.check(SA, "GET", "/api/v1/namespaces/default/pods"))

    def test_a_binding_counts_once_however_many_subjects_match(self):
        self.create("/clusterroles", role("r", [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]))
        self.create("/clusterrolebindings", binding("b", "ClusterRole", "r", [
            {"kind": "Group", "name": "developers"}, {"kind": "User", "name": "jane"}]))
        rules = self.authz.rules_for(JANE, "")[0]
        self.assertEqual(rules.count({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}), 1)
        self.assertEqual(self.authz.authorize(authz.attributes(JANE, "GET", "/api/v1/namespaces/x/pods/p", {}))[1],
                         'RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "r" to Group "developers"')

    def test_writes_to_rbac_objects_take_effect_at_once(self):
        P = "/api/v1/namespaces/edge/secrets/s"
        self.create("/namespaces/edge/roles", role("r", [{"verbs": ["get"], "apiGroups": [""],
                                                           "resources": ["secrets"]}], "edge"))
        self.create("/namespaces/edge/rolebindings", binding("b", "Role", "r", USER_JANE, "edge"))
        self.assertIsNone(self.check(JANE, "GET", P))
        st, _ = self.api.call(ADMIN, "PATCH", RBAC + "/namespaces/edge/roles/r",
                              {"rules": [{"verbs": ["list"], "apiGroups": [""], "resources": ["secrets"]}]},
                              content_type="application/merge-patch+json")
        self.assertEqual(st, 200)
        self.assertIsNotNone(self.check(JANE, "GET", P))
        self.assertIsNone(self.check(JANE, "GET", "/api/v1/namespaces/edge/secrets"))
        self.api.call(ADMIN, "DELETE", RBAC + "/namespaces/edge/rolebindings/b")
        self.assertIsNotNone(self.check(JANE, "GET", "/api/v1/namespaces/edge/secrets"))

    def test_a_binding_to_a_missing_role_says_so(self):
        self.create("/namespaces/edge/rolebindings", binding("b", "Role", "nope", USER_JANE, "edge"))
        self.assertEqual(self.check(JANE, "GET", "/api/v1/namespaces/edge/pods"),
                         'pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the '
                         'namespace "edge": RBAC: role.rbac.authorization.k8s.io "nope" not found')
        self.create("/clusterrolebindings", binding("c", "ClusterRole", "gone", USER_JANE))
        self.assertEqual(self.check(JANE, "GET", "/api/v1/namespaces/edge/pods"),
                         'pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the '
                         'namespace "edge": RBAC: [clusterrole.rbac.authorization.k8s.io "gone" not found, '
                         'role.rbac.authorization.k8s.io "nope" not found]')

    def test_custom_resources_need_no_code(self):
        self.create("/clusterroles", role("widgets", [{"verbs": ["get"], "apiGroups": ["example.com"],
                                                       "resources": ["widgets", "widgets/scale"]}]))
        self.create("/clusterrolebindings", binding("w", "ClusterRole", "widgets", USER_JANE))
        self.assertIsNone(self.check(JANE, "GET", "/apis/example.com/v1/namespaces/n/widgets/a"))
        self.assertIsNone(self.check(JANE, "GET", "/apis/example.com/v1/namespaces/n/widgets/a/scale"))
        self.assertIsNotNone(self.check(JANE, "GET", "/apis/example.com/v1/namespaces/n/gadgets/a"))

    def test_always_allow(self):
        api, _ = new_api()
        api.authz = authz.Authorizer(api.store, "AlwaysAllow")
        api.authz.check(JANE, "DELETE", "/api/v1/nodes/n1", {})
        with self.assertRaises(ValueError):
            authz.parse_modes("Webhook")


class BootstrapPolicyTest(unittest.TestCase):
    def setUp(self):
        self.api, _ = new_api()

    def get(self, path):
        st, body = self.api.call(ADMIN, "GET", RBAC + path)
        self.assertEqual(st, 200, body)
        return body

    def test_roles_and_bindings_exist_with_the_bootstrap_labels(self):
        for name in ("cluster-admin", "admin", "edit", "view", "system:basic-user", "system:discovery",
                     "system:public-info-viewer", "system:node"):
            r = self.get("/clusterroles/" + name)
            self.assertEqual(r["metadata"]["labels"]["kubernetes.io/bootstrapping"], "rbac-defaults")
            self.assertEqual(r["metadata"]["annotations"]["rbac.authorization.kubernetes.io/autoupdate"], "true")
        self.assertEqual(self.get("/clusterroles/edit")["metadata"]["labels"]
                         ["rbac.authorization.k8s.io/aggregate-to-admin"], "true")
        self.assertEqual(self.get("/clusterroles/view")["metadata"]["labels"]
                         ["rbac.authorization.k8s.io/aggregate-to-edit"], "true")
        self.assertEqual(self.get("/clusterroles/admin")["aggregationRule"], {"clusterRoleSelectors": [
            {"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-admin": "true"}}]})
        subjects = {b["metadata"]["name"]: [s["name"] for s in b.get("subjects") or []]
                    for b in self.get("/clusterrolebindings")["items"]}
        self.assertEqual(subjects["cluster-admin"], ["system:masters"])
        self.assertEqual(subjects["system:basic-user"], ["system:authenticated"])
        self.assertEqual(subjects["system:discovery"], ["system:authenticated"])
        self.assertEqual(subjects["system:public-info-viewer"], ["system:authenticated", "system:unauthenticated"])
        self.assertEqual(subjects["system:node"], [])

    def test_what_the_default_roles_give(self):
        z = self.api.authz
        anon = apimod.User("system:anonymous", ["system:unauthenticated"])
        for p in ("/version", "/healthz", "/readyz", "/livez"):
            z.check(anon, "GET", p, {})
        for p in ("/api", "/apis/apps/v1", "/openapi/v3"):
            with self.assertRaises(Exception):
                z.check(anon, "GET", p, {})
            z.check(JANE, "GET", p, {})
        z.check(JANE, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {})
        z.check(JANE, "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", {})
        z.check(JANE, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", {})
        with self.assertRaises(Exception):
            z.check(SA, "GET", "/api/v1/namespaces/ota-system/pods", {})

    def test_view_edit_admin(self):
        z = self.api.authz
        for role_name in ("view", "edit", "admin"):
            self.api.call(ADMIN, "POST", RBAC + "/namespaces/default/rolebindings",
                          binding(role_name, "ClusterRole", role_name, [{"kind": "User", "name": role_name}],
                                  "default"))

        def may(who, method, path):
            try:
                z.check(apimod.User(who, ["system:authenticated"]), method, path, {})
                return True
            except Exception:
                return False
        NS = "/api/v1/namespaces/default"
        self.assertEqual([may(w, "GET", NS + "/pods") for w in ("view", "edit", "admin")], [True] * 3)
        self.assertEqual([may(w, "GET", NS + "/secrets/s") for w in ("view", "edit", "admin")], [False, True, True])
        self.assertEqual([may(w, "POST", NS + "/configmaps") for w in ("view", "edit", "admin")], [False, True, True])
        self.assertEqual([may(w, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles")
                          for w in ("view", "edit", "admin")], [False, False, True])
        self.assertFalse(may("admin", "GET", "/api/v1/namespaces/other/pods"))


class ReviewTest(unittest.TestCase):
    def setUp(self):
        self.api = api_with_namespaces()

    def ssar(self, user, spec):
        st, body = self.api.call(user, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                                 {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                                  "spec": spec})
        self.assertEqual(st, 201, body)
        return body["status"]

    def ssrr(self, user, ns):
        st, body = self.api.call(user, "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
                                 {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
                                  "spec": {"namespace": ns}})
        self.assertEqual(st, 201, body)
        return body["status"]

    def test_access_review(self):
        self.assertEqual(self.ssar(ADMIN, {"resourceAttributes": {"verb": "delete", "resource": "nodes"}}),
                         {"allowed": True})
        self.assertEqual(self.ssar(JANE, {"resourceAttributes": {"verb": "patch", "resource": "pods",
                                                                 "subresource": "status", "namespace": "edge"}}),
                         {"allowed": False})
        self.assertEqual(self.ssar(JANE, {"nonResourceAttributes": {"verb": "get", "path": "/apis/apps"}}),
                         {"allowed": True, "reason": 'RBAC: allowed by ClusterRoleBinding "system:discovery" of '
                                                     'ClusterRole "system:discovery" to Group "system:authenticated"'})
        node = apimod.node_user("node-1")
        self.assertEqual(self.ssar(node, {"resourceAttributes": {"verb": "list", "resource": "pods"}}),
                         {"allowed": False, "reason": "can only list/watch pods with spec.nodeName field selector"})
        self.assertEqual(self.ssar(node, {"resourceAttributes": {
            "verb": "list", "resource": "pods", "fieldSelector": {"rawSelector": "spec.nodeName=node-1"}}}),
            {"allowed": True})
        self.assertEqual(self.ssar(node, {"resourceAttributes": {
            "verb": "watch", "resource": "pods", "fieldSelector": {"requirements": [
                {"key": "spec.nodeName", "operator": "In", "values": ["node-1"]}]}}}), {"allowed": True})
        st, body = self.api.call(JANE, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                                 {"spec": {}})
        self.assertEqual((st, body["message"]), (422, 'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: '
                                                      'spec.resourceAttributes: Invalid value: "null": exactly one of '
                                                      'nonResourceAttributes or resourceAttributes must be specified'))
        st, body = self.api.call(JANE, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                                 {"spec": {"resourceAttributes": {"verb": "get"},
                                           "nonResourceAttributes": {"verb": "get", "path": "/"}}})
        self.assertEqual(st, 422)
        self.assertIn("spec.nonResourceAttributes: Invalid value: ", body["message"])
        self.assertTrue(body["message"].endswith(": cannot be specified in combination with resourceAttributes"))

    def test_access_review_in_protobuf(self):
        """The body kubectl's typed client sends (k8s magic, runtime.Unknown, the review's message),
        with a field selector as requirements: the field numbers of authorization/v1."""
        def field(num, payload):
            data = payload.encode() if isinstance(payload, str) else payload
            key, out = bytes([num << 3 | 2]), b""
            n = len(data)
            while True:
                out += bytes([n & 0x7F | (0x80 if n > 0x7F else 0)])
                n >>= 7
                if not n:
                    break
            return key + out + data
        req = field(1, "spec.nodeName") + field(2, "In") + field(3, "node-1")
        attrs = field(2, "list") + field(5, "pods") + field(8, field(2, req))
        review = field(2, field(1, attrs))
        unknown = field(1, field(1, "authorization.k8s.io/v1") + field(2, "SelfSubjectAccessReview")) + field(2, review)
        from kubesim import protobuf
        body = protobuf.decode(protobuf.MAGIC + unknown)
        self.assertEqual(body["spec"], {"resourceAttributes": {"verb": "list", "resource": "pods", "fieldSelector": {
            "requirements": [{"key": "spec.nodeName", "operator": "In", "values": ["node-1"]}]}}})
        self.assertEqual(self.ssar(apimod.node_user("node-1"), body["spec"]), {"allowed": True})

    def test_rules_review(self):
        st = self.ssrr(JANE, "edge")
        self.assertFalse(st["incomplete"])
        self.assertIn({"verbs": ["create"], "apiGroups": ["authorization.k8s.io"],
                       "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]}, st["resourceRules"])
        self.assertEqual(len(st["resourceRules"]), 2)
        self.assertIn({"verbs": ["get"], "nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version",
                                                             "/version/"]}, st["nonResourceRules"])
        self.api.call(ADMIN, "POST", RBAC + "/namespaces/edge/roles",
                      role("r", [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"],
                                  "resourceNames": ["p"]}], "edge"))
        self.api.call(ADMIN, "POST", RBAC + "/namespaces/edge/rolebindings",
                      binding("b", "Role", "r", USER_JANE, "edge"))
        self.assertIn({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["p"]},
                      self.ssrr(JANE, "edge")["resourceRules"])
        self.assertNotIn({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["p"]},
                         self.ssrr(JANE, "default")["resourceRules"])
        admin = self.ssrr(ADMIN, "default")
        self.assertIn({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}, admin["resourceRules"])
        node = self.ssrr(apimod.node_user("node-1"), "default")
        self.assertEqual((node["incomplete"], node["evaluationError"]),
                         (True, "node authorizer does not support user rule resolution"))


if __name__ == "__main__":
    unittest.main()
