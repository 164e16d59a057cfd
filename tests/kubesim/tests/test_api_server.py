"""The HTTPS front end: TLS with the generated CA, tokens and kubeconfigs,
discovery, /openapi/v3, Tables, warnings, clean SIGTERM."""
import json
import os
import ssl
import unittest

from .apisupport import Kubesim, TestWebhook, pod, webhook_config

import kubesim_launch  # noqa: E402 (on the path apisupport sets)

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"


class ServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ks = Kubesim("--no-sim", "--nodes", "2", "--node", "store-01", "--http-port", "0")

    @classmethod
    def tearDownClass(cls):
        cls.ks.stop()

    def test_tls_and_kubeconfigs(self):
        for ident in ("admin", "controller", "user", "node-1", "node-2", "store-01"):
            path = self.ks.kubeconfig(ident)
            self.assertTrue(os.path.exists(path), path)
            with open(path) as f:
                text = f.read()
            self.assertIn("server: " + self.ks.url, text)
            self.assertIn("token: " + self.ks.tokens[ident], text)
        self.assertEqual(self.ks.identities["controller"]["user"], "system:serviceaccount:ota-system:ota-controller")
        self.assertEqual(self.ks.identities["node-2"]["user"], "system:node:node-2")
        self.assertIn("system:nodes", self.ks.identities["node-2"]["groups"])
        # --node: a node of that name besides node-1..node-N
        self.assertEqual(self.ks.identities["store-01"]["user"], "system:node:store-01")
        self.assertIn("system:nodes", self.ks.identities["store-01"]["groups"])
        self.assertIn("nodes=3 ", self.ks.ready_line)
        self.assertIn("system:masters", self.ks.identities["admin"]["groups"])
        self.assertNotIn("system:masters", self.ks.identities["user"]["groups"])
        # an unknown CA fails the handshake
        bad = ssl.create_default_context()
        import http.client
        c = http.client.HTTPSConnection("127.0.0.1", self.ks.port, context=bad, timeout=5)
        with self.assertRaises(ssl.SSLCertVerificationError):
            c.request("GET", "/version")
        c.close()

    def test_auth(self):
        st, body, _ = self.ks.request("GET", "/api/v1/pods", token="")
        self.assertEqual((st, body["reason"]), (401, "Unauthorized"))
        st, body, _ = self.ks.request("GET", "/api/v1/pods", token="wrong")
        self.assertEqual(st, 401)
        st, body, _ = self.ks.request("GET", "/version", token="")
        self.assertEqual((st, body["major"]), (200, "1"))
        # a node authenticates as itself: the Node authorizer lets it list its own pods only
        st, _, _ = self.ks.request("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-1", ident="node-1")
        self.assertEqual(st, 200)
        st, _, _ = self.ks.request("GET", "/api/v1/pods", ident="node-1")
        self.assertEqual(st, 403)

    def test_discovery(self):
        st, body, _ = self.ks.request("GET", "/api")
        self.assertEqual(body["versions"], ["v1"])
        st, body, _ = self.ks.request("GET", "/apis")
        groups = {g["name"] for g in body["groups"]}
        self.assertTrue({"apps", "batch", "coordination.k8s.io", "admissionregistration.k8s.io"} <= groups)
        st, body, _ = self.ks.request("GET", "/api/v1")
        names = {r["name"] for r in body["resources"]}
        self.assertTrue({"pods", "pods/status", "nodes", "events", "secrets", "namespaces"} <= names)
        pods = next(r for r in body["resources"] if r["name"] == "pods")
        self.assertEqual((pods["kind"], pods["namespaced"], pods["shortNames"]), ("Pod", True, ["po"]))
        st, body, _ = self.ks.request("GET", "/apis/apps/v1")
        self.assertIn("daemonsets/status", {r["name"] for r in body["resources"]})

    def test_openapi_v3(self):
        st, idx, _ = self.ks.request("GET", "/openapi/v3")
        self.assertEqual(st, 200)
        url = idx["paths"]["apis/apps/v1"]["serverRelativeURL"]
        self.assertTrue(url.startswith("/openapi/v3/apis/apps/v1?hash="))
        st, doc, _ = self.ks.request("GET", url)
        op = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/daemonsets/{name}"]["patch"]
        self.assertEqual(op["x-kubernetes-group-version-kind"], {"group": "apps", "version": "v1",
                                                                 "kind": "DaemonSet"})
        self.assertIn("fieldValidation", [p["name"] for p in op["parameters"] if p["in"] == "query"])
        st, doc, _ = self.ks.request("GET", idx["paths"]["api/v1"]["serverRelativeURL"])
        self.assertIn("/api/v1/namespaces/{namespace}/pods/{name}/status", doc["paths"])

    def test_tables(self):
        p = pod("tp", node="node-1")
        self.assertEqual(self.ks.request("POST", "/api/v1/namespaces/default/pods", p)[0], 201)
        st, body, _ = self.ks.request("PATCH", "/api/v1/namespaces/default/pods/tp/status",
                                      {"status": {"podIP": "10.0.0.7", "phase": "Running",
                                                  "containerStatuses": [{"name": "c", "ready": True,
                                                                         "restartCount": 2,
                                                                         "state": {"running": {}}}]}},
                                      ctype="application/merge-patch+json")
        self.assertEqual(st, 200)
        st, t, _ = self.ks.request("GET", "/api/v1/namespaces/default/pods", headers={"Accept": TABLE})
        self.assertEqual((t["kind"], t["apiVersion"]), ("Table", "meta.k8s.io/v1"))
        cols = [(c["name"], c["priority"]) for c in t["columnDefinitions"]]
        self.assertEqual([n for n, p in cols if p == 0], ["Name", "Ready", "Status", "Restarts", "Age"])
        self.assertEqual([n for n, p in cols if p == 1][:2], ["IP", "Node"])
        row = next(r for r in t["rows"] if r["cells"][0] == "tp")
        self.assertEqual(row["cells"][1:4], ["1/1", "Running", 2])
        self.assertEqual(row["cells"][5:7], ["10.0.0.7", "node-1"])
        self.assertEqual(row["object"]["kind"], "PartialObjectMetadata")
        st, t, _ = self.ks.request("GET", "/api/v1/namespaces/default/pods/tp?includeObject=Object",
                                   headers={"Accept": TABLE})
        self.assertEqual(t["rows"][0]["object"]["kind"], "Pod")
        st, body, _ = self.ks.request("GET", "/api/v1/namespaces/default/pods")
        self.assertEqual(body["kind"], "PodList")                              # plain list otherwise

    def test_warning_header_for_unknown_fields(self):
        p = pod("wp")
        p["spec"]["bogus"] = 1
        st, body, resp = self.ks.request("POST", "/api/v1/namespaces/default/pods", p)
        self.assertEqual(st, 201)
        self.assertEqual(resp.getheader("Warning"), '299 - "unknown field \\"spec.bogus\\""')

    def test_status_body_shape(self):
        st, body, _ = self.ks.request("GET", "/api/v1/namespaces/default/pods/nope")
        self.assertEqual(body, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                "message": 'pods "nope" not found', "reason": "NotFound",
                                "details": {"name": "nope", "kind": "pods"}, "code": 404})
        st, body, _ = self.ks.request("POST", "/api/v1/namespaces/default/pods", None,
                                      headers={"Content-Type": "application/json"})
        self.assertGreaterEqual(st, 400)

    def test_plain_http_debug_port(self):
        line = self.ks.ready_line
        http_url = [w for w in line.split() if w.startswith("http=")][0][5:]
        import http.client
        host, port = http_url[len("http://"):].split(":")
        c = http.client.HTTPConnection(host, int(port), timeout=5)
        c.request("GET", "/api/v1/namespaces")
        r = c.getresponse()
        self.assertEqual(r.status, 200)
        self.assertEqual(json.loads(r.read())["kind"], "NamespaceList")
        c.close()


class WebhookHostFlagTest(unittest.TestCase):
    def test_webhook_host_maps_the_service_name(self):
        hook = TestWebhook(lambda req, path: {"allowed": False, "status": {"message": "no %s" % req["userInfo"]["username"]}},
                           service="ota-webhook", namespace="ota-system")
        ks = Kubesim("--no-sim", "--webhook-host", "ota-webhook.ota-system.svc=127.0.0.1:%d" % hook.port)
        try:
            cfg = webhook_config("ValidatingWebhookConfiguration", "v", [{
                "name": "v.ota.test", "clientConfig": hook.client_config("/validate"), "sideEffects": "None",
                "admissionReviewVersions": ["v1"], "rules": [{"operations": ["CREATE"], "apiGroups": [""],
                                                               "apiVersions": ["v1"], "resources": ["configmaps"]}]}])
            st, body, _ = ks.request("POST", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", cfg)
            self.assertEqual(st, 201, body)
            # the user who may create configmaps (edit in default, as a cluster would grant it)
            st, body, _ = ks.request("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
                                     {"kind": "RoleBinding", "metadata": {"name": "jane-edit"},
                                      "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                                  "name": "edit"},
                                      "subjects": [{"kind": "User", "name": "jane"}]})
            self.assertEqual(st, 201, body)
            st, body, _ = ks.request("POST", "/api/v1/namespaces/default/configmaps",
                                     {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}},
                                     ident="user")
            self.assertEqual(st, 400)
            self.assertEqual(body["message"], 'admission webhook "v.ota.test" denied the request: '
                                              'no jane')
            self.assertEqual(hook.calls[0][0], "/validate?timeout=10s")
        finally:
            self.assertEqual(ks.stop(), 0)
            hook.close()


class LifecycleTest(unittest.TestCase):
    def test_bad_node_names_refused(self):
        for args, why in ((("--node", "Store_01"), "--node wants a DNS subdomain"),
                          (("--nodes", "2", "--node", "node-2"), "--node node-2: a node of that name exists")):
            with self.subTest(args=args):
                with self.assertRaises(kubesim_launch.KubesimError) as cm:
                    Kubesim("--no-sim", *args)
                self.assertIn(why, str(cm.exception))

    def test_sigterm_stops_cleanly(self):
        ks = Kubesim("--no-sim")
        self.assertIn("kubesim ready: https://127.0.0.1:", ks.ready_line)
        self.assertEqual(ks.request("GET", "/healthz", token="")[0], 200)
        self.assertEqual(ks.stop(), 0)


if __name__ == "__main__":
    unittest.main()
