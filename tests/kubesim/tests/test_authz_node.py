"""The Node authorizer of Kubernetes 1.32 (AuthorizeNodeWithSelectors on), row by row of
the README's table, and the NodeRestriction admission plugin, with the apiserver's words."""
import unittest

from .apisupport import ADMIN, new_api, pod
from kubesim import api as apimod

NODE1 = apimod.node_user("node-1")
NODE2 = apimod.node_user("node-2")
NS = "/api/v1/namespaces/default"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"
U1 = 'User "system:node:node-1" cannot '


class NodeAuthorizerTest(unittest.TestCase):
    def setUp(self):
        self.api, _ = new_api()
        p = pod("p1", node="node-1")
        p["spec"]["imagePullSecrets"] = [{"name": "pull"}]
        p["spec"]["serviceAccountName"] = "runner"
        p["spec"]["volumes"] = [{"name": "v", "secret": {"secretName": "vol"}},
                                {"name": "c", "configMap": {"name": "cfg"}},
                                {"name": "pr", "projected": {"sources": [{"secret": {"name": "proj"}},
                                                                         {"configMap": {"name": "pcfg"}}]}}]
        p["spec"]["containers"][0]["env"] = [
            {"name": "A", "valueFrom": {"secretKeyRef": {"name": "env", "key": "k"}}},
            {"name": "B", "valueFrom": {"configMapKeyRef": {"name": "envcfg", "key": "k"}}}]
        p["spec"]["containers"][0]["envFrom"] = [{"secretRef": {"name": "envfrom"}}]
        for obj in (p, pod("p2", node="node-2"), pod("unbound")):
            st, body = self.api.call(ADMIN, "POST", NS + "/pods", obj)
            self.assertEqual(st, 201, body)

    def deny(self, user, method, path, query=None):
        """None when allowed, else the 403's message."""
        try:
            self.api.authz.check(user, method, path, query or {})
            return None
        except Exception as e:
            self.assertEqual(e.code, 403)
            return e.message

    def test_nodes(self):
        self.assertIsNone(self.deny(NODE1, "GET", "/api/v1/nodes/node-1"))
        self.assertIsNone(self.deny(NODE1, "GET", "/api/v1/nodes", {"fieldSelector": "metadata.name=node-1"}))
        self.assertIsNone(self.deny(NODE1, "GET", "/api/v1/nodes",
                                    {"fieldSelector": "metadata.name=node-1", "watch": "1"}))
        self.assertEqual(self.deny(NODE1, "GET", "/api/v1/nodes"),
                         'nodes is forbidden: ' + U1 + 'list resource "nodes" in API group "" at the cluster scope: '
                         "node 'node-1' cannot read all nodes, only its own Node object")
        self.assertEqual(self.deny(NODE1, "GET", "/api/v1/nodes/node-2"),
                         'nodes "node-2" is forbidden: ' + U1 + 'get resource "nodes" in API group "" at the cluster '
                         "scope: node 'node-1' cannot read 'node-2', only its own Node object")
        for m in ("POST", "PUT", "PATCH"):    # any Node: NodeRestriction narrows it
            self.assertIsNone(self.deny(NODE1, m, "/api/v1/nodes" + ("" if m == "POST" else "/node-2")))
        self.assertIsNone(self.deny(NODE1, "PATCH", "/api/v1/nodes/node-1/status"))
        self.assertEqual(self.deny(NODE1, "DELETE", "/api/v1/nodes/node-1"),
                         'nodes "node-1" is forbidden: ' + U1 + 'delete resource "nodes" in API group "" at the '
                         'cluster scope')
        self.assertIsNotNone(self.deny(NODE1, "GET", "/api/v1/nodes/node-1/status"))

    def test_pods(self):
        self.assertIsNone(self.deny(NODE1, "GET", NS + "/pods/p1"))
        self.assertEqual(self.deny(NODE1, "GET", NS + "/pods/p2"),
                         'pods "p2" is forbidden: ' + U1 + 'get resource "pods" in API group "" in the namespace '
                         "\"default\": no relationship found between node 'node-1' and this object")
        self.assertIsNotNone(self.deny(NODE1, "GET", NS + "/pods/unbound"))
        self.assertEqual(self.deny(NODE1, "GET", "/api/v1/pods"),
                         'pods is forbidden: ' + U1 + 'list resource "pods" in API group "" at the cluster scope: '
                         'can only list/watch pods with spec.nodeName field selector')
        self.assertIsNotNone(self.deny(NODE1, "GET", NS + "/pods", {"watch": "1"}))
        self.assertIsNotNone(self.deny(NODE1, "GET", "/api/v1/pods", {"fieldSelector": "spec.nodeName=node-2"}))
        self.assertIsNotNone(self.deny(NODE1, "GET", "/api/v1/pods", {"fieldSelector": "spec.nodeName!=node-2"}))
        for q in ({"fieldSelector": "spec.nodeName=node-1"}, {"fieldSelector": "spec.nodeName==node-1"},
                  {"fieldSelector": "status.phase=Running,spec.nodeName=node-1", "watch": "1"}):
            self.assertIsNone(self.deny(NODE1, "GET", "/api/v1/pods", q), q)
        self.assertIsNone(self.deny(NODE1, "GET", NS + "/pods", {"fieldSelector": "metadata.name=p1"}))
        self.assertIsNotNone(self.deny(NODE1, "GET", "/api/v1/pods", {"fieldSelector": "metadata.name=p1"}))
        self.assertIsNotNone(self.deny(NODE1, "GET", NS + "/pods", {"fieldSelector": "metadata.name=p2"}))
        for m, p in (("POST", NS + "/pods"), ("DELETE", NS + "/pods/p2"), ("PUT", NS + "/pods/p2/status"),
                     ("PATCH", NS + "/pods/p2/status"), ("POST", NS + "/pods/p2/eviction")):
            self.assertIsNone(self.deny(NODE1, m, p), (m, p))      # NodeRestriction narrows these
        self.assertEqual(self.deny(NODE1, "PATCH", NS + "/pods/p1"),
                         'pods "p1" is forbidden: ' + U1 + 'patch resource "pods" in API group "" in the namespace '
                         '"default"')
        self.assertIsNotNone(self.deny(NODE1, "DELETE", NS + "/pods"))
        self.assertIsNotNone(self.deny(NODE1, "GET", NS + "/pods/p1/status"))

    def test_secrets_and_configmaps_referenced_by_its_pods(self):
        for name in ("pull", "vol", "proj", "env", "envfrom"):
            self.assertIsNone(self.deny(NODE1, "GET", NS + "/secrets/" + name), name)
            self.assertIsNone(self.deny(NODE1, "GET", NS + "/secrets", {"fieldSelector": "metadata.name=" + name}))
            self.assertIsNotNone(self.deny(NODE2, "GET", NS + "/secrets/" + name), name)
        for name in ("cfg", "pcfg", "envcfg"):
            self.assertIsNone(self.deny(NODE1, "GET", NS + "/configmaps/" + name), name)
            self.assertIsNotNone(self.deny(NODE2, "GET", NS + "/configmaps/" + name), name)
        self.assertEqual(self.deny(NODE1, "GET", NS + "/secrets/other"),
                         'secrets "other" is forbidden: ' + U1 + 'get resource "secrets" in API group "" in the '
                         "namespace \"default\": no relationship found between node 'node-1' and this object")
        self.assertIsNotNone(self.deny(NODE1, "GET", "/api/v1/namespaces/kube-system/secrets/pull"))
        self.assertEqual(self.deny(NODE1, "GET", NS + "/secrets"),
                         'secrets is forbidden: ' + U1 + 'list resource "secrets" in API group "" in the namespace '
                         '"default": No Object name found')
        self.assertEqual(self.deny(NODE1, "GET", "/api/v1/secrets"),
                         'secrets is forbidden: ' + U1 + 'list resource "secrets" in API group "" at the cluster '
                         'scope: can only read namespaced object of this type')
        self.assertEqual(self.deny(NODE1, "PUT", NS + "/secrets/pull"),
                         'secrets "pull" is forbidden: ' + U1 + 'update resource "secrets" in API group "" in the '
                         'namespace "default": can only read resources of this type')

    def test_service_account_tokens(self):
        self.assertEqual(self.deny(NODE1, "GET", NS + "/serviceaccounts/runner"),
                         'serviceaccounts "runner" is forbidden: ' + U1 + 'get resource "serviceaccounts" in API '
                         'group "" in the namespace "default": can only create tokens for individual service '
                         'accounts')
        self.assertIsNone(self.deny(NODE1, "POST", NS + "/serviceaccounts/runner/token"))
        self.assertIsNotNone(self.deny(NODE1, "POST", NS + "/serviceaccounts/other/token"))
        self.assertIsNotNone(self.deny(NODE2, "POST", NS + "/serviceaccounts/runner/token"))

    def test_leases(self):
        for m in ("GET", "PUT", "PATCH", "DELETE"):
            self.assertIsNone(self.deny(NODE1, m, LEASES + "/node-1"))
        self.assertIsNone(self.deny(NODE1, "POST", LEASES))
        self.assertEqual(self.deny(NODE1, "PUT", LEASES + "/node-2"),
                         'leases.coordination.k8s.io "node-2" is forbidden: ' + U1 + 'update resource "leases" in '
                         'API group "coordination.k8s.io" in the namespace "kube-node-lease": can only access node '
                         'lease with the same name as the requesting node')
        self.assertEqual(self.deny(NODE1, "GET", LEASES),
                         'leases.coordination.k8s.io is forbidden: ' + U1 + 'list resource "leases" in API group '
                         '"coordination.k8s.io" in the namespace "kube-node-lease": can only get, create, update, '
                         'patch, or delete a node lease')
        self.assertIn('can only access leases in the "kube-node-lease" system namespace',
                      self.deny(NODE1, "GET", "/apis/coordination.k8s.io/v1/namespaces/default/leases/node-1"))

    def test_static_rules(self):
        self.assertIsNone(self.deny(NODE1, "POST", NS + "/events"))
        self.assertIsNone(self.deny(NODE1, "PATCH", NS + "/events/e"))
        self.assertIsNotNone(self.deny(NODE1, "GET", NS + "/events"))
        self.assertIsNone(self.deny(NODE1, "GET", "/api/v1/services"))
        self.assertIsNotNone(self.deny(NODE1, "GET", "/api/v1/namespaces/default"))
        self.assertIsNotNone(self.deny(NODE1, "GET", "/apis/apps/v1/daemonsets"))
        self.assertIsNotNone(self.deny(NODE1, "GET", "/api/v1/configmaps"))
        self.assertIsNone(self.deny(NODE1, "GET", "/api"))           # system:discovery via RBAC

    def test_only_system_node_users_in_system_nodes(self):
        impostor = apimod.User("system:node:node-1", ["system:authenticated"])
        self.assertIsNotNone(self.deny(impostor, "GET", "/api/v1/nodes/node-1"))
        nameless = apimod.User("system:node:", ["system:nodes", "system:authenticated"])
        self.assertEqual(self.deny(nameless, "GET", "/api/v1/services"),
                         'services is forbidden: User "system:node:" cannot list resource "services" in API group '
                         '"" at the cluster scope: unknown node for user "system:node:"')

    def test_rbac_still_applies_after_the_node_authorizer(self):
        rb = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
              "metadata": {"name": "nodes-read-ds"},
              "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
              "subjects": [{"kind": "Group", "name": "system:nodes"}]}
        self.assertEqual(self.api.call(ADMIN, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
                                       rb)[0], 201)
        self.assertIsNone(self.deny(NODE1, "GET", "/apis/apps/v1/daemonsets"))
        self.assertIsNone(self.deny(NODE1, "GET", "/api/v1/pods"))    # view lists all pods: RBAC allows


class NodeRestrictionTest(unittest.TestCase):
    def setUp(self):
        self.api, _ = new_api()
        for obj in (pod("p1", node="node-1"), pod("p2", node="node-2")):
            self.assertEqual(self.api.call(ADMIN, "POST", NS + "/pods", obj)[0], 201)
        for n in ("node-1", "node-2"):
            self.assertEqual(self.api.call(ADMIN, "POST", "/api/v1/nodes", {
                "apiVersion": "v1", "kind": "Node", "metadata": {"name": n}})[0], 201)

    def call(self, user, method, path, body=None, ctype="application/merge-patch+json", query=None):
        return self.api.call(user, method, path, body, query=query, content_type=ctype)

    def assertForbidden(self, answer, message):
        st, body = answer
        self.assertEqual((st, body.get("reason"), body.get("message")), (403, "Forbidden", message))

    def test_pod_status_only_of_its_own_pods(self):
        self.assertEqual(self.call(NODE1, "PATCH", NS + "/pods/p1/status", {"status": {"phase": "Running"}})[0], 200)
        self.assertForbidden(self.call(NODE1, "PATCH", NS + "/pods/p2/status", {"status": {"phase": "Running"}}),
                             'pods "p2" is forbidden: node "node-1" can only update pod status for pods with '
                             'spec.nodeName set to itself')
        st, cur = self.call(ADMIN, "GET", NS + "/pods/p2")
        self.assertForbidden(self.call(NODE1, "PUT", NS + "/pods/p2/status", cur),
                             'pods "p2" is forbidden: node "node-1" can only update pod status for pods with '
                             'spec.nodeName set to itself')

    def test_delete_only_its_own_pods(self):
        self.assertForbidden(self.call(NODE1, "DELETE", NS + "/pods/p2"),
                             'pods "p2" is forbidden: node "node-1" can only delete pods with spec.nodeName set to '
                             'itself')
        self.assertEqual(self.call(NODE1, "DELETE", NS + "/pods/p1", query={"gracePeriodSeconds": "0"})[0], 200)

    def test_create_only_mirror_pods(self):
        self.assertForbidden(self.call(NODE1, "POST", NS + "/pods", pod("m", node="node-1")),
                             'pods "m" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, '
                             'node "node-1" can only create mirror pods')
        m = pod("m", node="node-2")
        m["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "x"}
        self.assertForbidden(self.call(NODE1, "POST", NS + "/pods", m),
                             'pods "m" is forbidden: node "node-1" can only create pods with spec.nodeName set to '
                             'itself')

    def test_only_its_own_node(self):
        self.assertForbidden(self.call(NODE1, "PATCH", "/api/v1/nodes/node-2", {"metadata": {"labels": {"a": "b"}}}),
                             'nodes "node-2" is forbidden: node "node-1" is not allowed to modify node "node-2"')
        self.assertForbidden(self.call(NODE1, "PATCH", "/api/v1/nodes/node-2/status", {"status": {}}),
                             'nodes "node-2" is forbidden: node "node-1" is not allowed to modify node "node-2"')
        self.assertForbidden(self.call(NODE1, "POST", "/api/v1/nodes", {"metadata": {"name": "node-3"}}),
                             'nodes "node-3" is forbidden: node "node-1" is not allowed to modify node "node-3"')
        self.assertEqual(self.call(NODE1, "PATCH", "/api/v1/nodes/node-1", {"metadata": {"labels": {
            "a": "b", "topology.kubernetes.io/zone": "z"}}})[0], 200)
        self.assertForbidden(self.call(NODE1, "PATCH", "/api/v1/nodes/node-1", {"spec": {"taints": [
            {"key": "k", "effect": "NoSchedule"}]}}),
            'nodes "node-1" is forbidden: node "node-1" is not allowed to modify taints')
        self.assertForbidden(self.call(NODE1, "PATCH", "/api/v1/nodes/node-1", {"metadata": {"labels": {
            "node-role.kubernetes.io/edge": ""}}}),
            'nodes "node-1" is forbidden: is not allowed to modify labels: node-role.kubernetes.io/edge')

    def test_its_own_lease(self):
        lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "node-2"}}
        self.assertForbidden(self.call(NODE1, "POST", LEASES, lease, "application/json"),
                             'leases.coordination.k8s.io "node-2" is forbidden: can only access node lease with the '
                             'same name as the requesting node')
        lease["metadata"]["name"] = "node-1"
        self.assertEqual(self.call(NODE1, "POST", LEASES, lease, "application/json")[0], 201)

    def test_other_users_are_not_restricted(self):
        self.assertEqual(self.call(ADMIN, "DELETE", NS + "/pods/p2", query={"gracePeriodSeconds": "0"})[0], 200)


if __name__ == "__main__":
    unittest.main()
