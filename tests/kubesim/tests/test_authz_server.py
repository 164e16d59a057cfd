"""Authorization over HTTPS: every request, watches and admin endpoints included, gets the
apiserver's 403 Status; --authorization-mode."""
import os
import subprocess
import sys
import tempfile
import unittest

from .apisupport import Kubesim

RUN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "run")


class EnforcedTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ks = Kubesim("--no-sim", "--nodes", "2")

    @classmethod
    def tearDownClass(cls):
        cls.ks.stop()

    def test_a_denial_is_the_apiservers_status(self):
        st, body, _ = self.ks.request("PATCH", "/api/v1/namespaces/edge/pods/x/status", {"status": {}},
                                      ident="user", ctype="application/merge-patch+json")
        self.assertEqual(st, 403)
        self.assertEqual(body, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                "message": 'pods "x" is forbidden: User "jane" cannot patch resource "pods/status" '
                                           'in API group "" in the namespace "edge"',
                                "reason": "Forbidden", "details": {"name": "x", "kind": "pods"}, "code": 403})

    def test_non_resource_paths(self):
        st, body, _ = self.ks.request("POST", "/kubesim/faults", {"error": {"code": 500}}, ident="controller")
        self.assertEqual((st, body["message"], body["details"]), (
            403, 'forbidden: User "system:serviceaccount:ota-system:ota-controller" cannot post path '
                 '"/kubesim/faults"', {}))
        self.assertEqual(self.ks.request("GET", "/apis", ident="user")[0], 200)
        self.assertEqual(self.ks.request("GET", "/openapi/v3", ident="node-1")[0], 200)
        self.assertEqual(self.ks.request("GET", "/version", token="")[0], 200)
        self.assertEqual(self.ks.request("GET", "/apis", token="")[0], 401)

    def test_watches_are_authorized_before_they_start(self):
        st, body, _ = self.ks.request("GET", "/api/v1/pods?watch=1", ident="node-1")
        self.assertEqual((st, body["message"]), (
            403, 'pods is forbidden: User "system:node:node-1" cannot watch resource "pods" in API group "" at the '
                 'cluster scope: can only list/watch pods with spec.nodeName field selector'))
        st, _, _ = self.ks.request("GET", "/api/v1/pods?watch=1&timeoutSeconds=1"
                                          "&fieldSelector=spec.nodeName%3Dnode-1", ident="node-1")
        self.assertEqual(st, 200)

    def test_the_controller_may_do_what_a_role_grants(self):
        P = "/api/v1/namespaces/default/configmaps"
        self.assertEqual(self.ks.request("GET", P, ident="controller")[0], 403)
        st, body, _ = self.ks.request("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", {
            "kind": "Role", "metadata": {"name": "cm"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}]})
        self.assertEqual(st, 201, body)
        st, body, _ = self.ks.request("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", {
            "kind": "RoleBinding", "metadata": {"name": "cm"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm"},
            "subjects": [{"kind": "ServiceAccount", "name": "ota-controller", "namespace": "ota-system"}]})
        self.assertEqual(st, 201, body)
        self.assertEqual(self.ks.request("GET", P, ident="controller")[0], 200)
        self.assertEqual(self.ks.request("POST", P, {"metadata": {"name": "x"}}, ident="controller")[0], 403)


class AlwaysAllowTest(unittest.TestCase):
    def test_always_allow_turns_authorization_off(self):
        ks = Kubesim("--no-sim", "--authorization-mode", "AlwaysAllow")
        try:
            self.assertEqual(ks.request("GET", "/api/v1/pods", ident="user")[0], 200)
            self.assertEqual(ks.request("GET", "/api/v1/nodes", ident="node-1")[0], 200)
            # the admin endpoint stays system:masters only
            st, body, _ = ks.request("GET", "/kubesim/faults", ident="user")
            self.assertEqual(st, 403)
        finally:
            self.assertEqual(ks.stop(), 0)

    def test_an_unknown_mode_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            p = subprocess.run([sys.executable, RUN, "--port", "0", "--state-dir", d, "--no-sim",
                                "--authorization-mode", "Node,Webhook"], capture_output=True, text=True, timeout=60)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("--authorization-mode: authorization mode 'Webhook' is not one of Node, RBAC, AlwaysAllow",
                      p.stderr)


if __name__ == "__main__":
    unittest.main()
