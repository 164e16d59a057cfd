"""Admission webhooks are called as kube-apiserver calls them."""
import base64
import json
import unittest

from .apisupport import ADMIN, TestWebhook, new_api, pod, webhook_config
from kubesim import api as apimod

NODE1 = apimod.node_user("node-1")


def b64patch(ops):
    return base64.b64encode(json.dumps(ops).encode()).decode()


class AdmissionTest(unittest.TestCase):
    def setUp(self):
        self.seen = []
        self.answer = lambda req, path: {"allowed": True}

        def handler(req, path):
            self.seen.append((req, path))
            return self.answer(req, path)

        self.hook = TestWebhook(handler)
        self.api, self.adm = new_api(self.hook.host_map())
        st, _ = self.api.call(ADMIN, "POST", "/api/v1/namespaces/default/pods", pod("p1", node="node-1"))
        self.assertEqual(st, 201)

    def tearDown(self):
        self.adm.close()
        self.hook.close()

    def register(self, kind, webhooks, name="cfg"):
        plural = kind.lower() + "s"
        st, body = self.api.call(ADMIN, "POST", "/apis/admissionregistration.k8s.io/v1/" + plural,
                                 webhook_config(kind, name, webhooks))
        self.assertEqual(st, 201, body)

    def status_hook(self, **kw):
        wh = {"name": "status.hooks.test", "clientConfig": self.hook.client_config("/validate"),
              "rules": [{"operations": ["UPDATE"], "apiGroups": [""], "apiVersions": ["v1"],
                         "resources": ["pods/status"]}],
              "sideEffects": "None", "admissionReviewVersions": ["v1"], "timeoutSeconds": 5}
        wh.update(kw)
        return wh

    def patch_status(self, user=NODE1, cond=("PodImageReady", "False")):
        return self.api.call(user, "PATCH", "/api/v1/namespaces/default/pods/p1/status",
                             {"status": {"conditions": [{"type": cond[0], "status": cond[1]}]}},
                             content_type="application/strategic-merge-patch+json")

    def test_review_shape_transport_and_rules(self):
        self.register("ValidatingWebhookConfiguration", [self.status_hook()])
        st, _ = self.patch_status()
        self.assertEqual(st, 200)
        self.assertEqual(len(self.seen), 1)
        req, path = self.seen[0]
        self.assertEqual(path, "/validate?timeout=5s")
        self.assertEqual(req["operation"], "UPDATE")
        self.assertEqual(req["subResource"], "status")
        self.assertEqual(req["resource"], {"group": "", "version": "v1", "resource": "pods"})
        self.assertEqual(req["kind"], {"group": "", "version": "v1", "kind": "Pod"})
        self.assertEqual(req["name"], "p1")
        self.assertEqual(req["namespace"], "default")
        self.assertEqual(req["userInfo"]["username"], "system:node:node-1")
        self.assertIn("system:nodes", req["userInfo"]["groups"])
        self.assertFalse(req["dryRun"])
        self.assertEqual(req["object"]["status"]["conditions"][0]["type"], "PodImageReady")
        self.assertNotIn("conditions", req["oldObject"]["status"])
        _path, headers, _body, version, _ = self.hook.calls[0]
        self.assertEqual(version, "HTTP/1.1")
        self.assertEqual(headers["Content-Type"], "application/json")
        self.assertEqual(self.hook.snis[0], "hook.hooks.svc")
        # a pod spec update (not pods/status) and a create do not match the rule
        self.api.call(ADMIN, "PATCH", "/api/v1/namespaces/default/pods/p1",
                      {"metadata": {"labels": {"a": "b"}}}, content_type="application/merge-patch+json")
        self.api.call(ADMIN, "POST", "/api/v1/namespaces/default/pods", pod("p2"))
        self.assertEqual(len(self.seen), 1)
        # keep-alive: a second call reuses the connection
        self.patch_status(cond=("PodImageReady", "True"))
        self.assertEqual(len(self.seen), 2)
        self.assertEqual(self.hook.connections, 1)

    def test_denial_wording_and_nothing_written(self):
        self.answer = lambda req, path: {"allowed": False, "status": {"code": 403, "reason": "Forbidden",
                                                                      "message": "pod default/p1 says no"}}
        self.register("ValidatingWebhookConfiguration", [self.status_hook()])
        st, body = self.patch_status()
        self.assertEqual(st, 403)
        self.assertEqual(body["message"], 'admission webhook "status.hooks.test" denied the request: '
                                          'pod default/p1 says no')
        self.assertEqual(body["reason"], "Forbidden")
        _, cur = self.api.call(ADMIN, "GET", "/api/v1/namespaces/default/pods/p1")
        self.assertNotIn("conditions", cur["status"])
        # without a code the apiserver answers 400, without message/reason "without explanation"
        self.answer = lambda req, path: {"allowed": False}
        st, body = self.patch_status()
        self.assertEqual(st, 400)
        self.assertEqual(body["message"], 'admission webhook "status.hooks.test" denied the request '
                                          'without explanation')

    def test_mutating_patch_applied_before_validating(self):
        def answer(req, path):
            if path.startswith("/mutate"):
                return {"allowed": True, "patchType": "JSONPatch", "warnings": ["mutated it"],
                        "patch": b64patch([{"op": "add", "path": "/status/conditions/0/reason",
                                            "value": "WaitPullImage"}])}
            return {"allowed": req["object"]["status"]["conditions"][0].get("reason") == "WaitPullImage"}
        self.answer = answer
        mut = self.status_hook(name="m.hooks.test", clientConfig=self.hook.client_config("/mutate"))
        self.register("MutatingWebhookConfiguration", [mut])
        self.register("ValidatingWebhookConfiguration", [self.status_hook()])
        st, body, warnings = self.api.call_ex(NODE1, "PATCH", "/api/v1/namespaces/default/pods/p1/status",
                                              {"status": {"conditions": [{"type": "PodImageReady",
                                                                          "status": "False"}]}},
                                              content_type="application/strategic-merge-patch+json")
        self.assertEqual(st, 200, body)
        self.assertEqual(body["status"]["conditions"][0]["reason"], "WaitPullImage")
        self.assertEqual(warnings, ["mutated it"])
        self.assertEqual([p.split("?")[0] for _, p in self.seen], ["/mutate", "/validate"])

    def test_no_op_writes_are_admitted_too(self):
        # the apiserver calls webhooks before it finds out that nothing changed
        self.register("ValidatingWebhookConfiguration", [self.status_hook()])
        self.patch_status()
        st, before = self.api.call(ADMIN, "GET", "/api/v1/namespaces/default/pods/p1")
        st, after = self.patch_status()
        self.assertEqual(st, 200)
        self.assertEqual(len(self.seen), 2)
        self.assertEqual(after["metadata"]["resourceVersion"], before["metadata"]["resourceVersion"])

    def test_match_conditions(self):
        expr = ("!has(oldObject.status.conditions) || object.status.conditions.filter(c, c.type == "
                "'PodImageReady') != oldObject.status.conditions.filter(c, c.type == 'PodImageReady')")
        self.register("ValidatingWebhookConfiguration", [self.status_hook(matchConditions=[
            {"name": "ota-conditions-changed", "expression": expr},
            {"name": "not-admin", "expression": "!('system:masters' in request.userInfo.groups)"}])])
        self.patch_status()                                  # first OTA write: sent
        self.assertEqual(len(self.seen), 1)
        self.patch_status(cond=("Ready", "True"))            # kubelet's routine write: kept away
        self.assertEqual(len(self.seen), 1)
        self.patch_status(cond=("PodImageReady", "True"))    # OTA condition changes: sent
        self.assertEqual(len(self.seen), 2)
        self.patch_status(user=ADMIN, cond=("PodImageReady", "False"))   # request binding: admin skipped
        self.assertEqual(len(self.seen), 2)

    def test_cel_error_applies_failure_policy(self):
        bad = [{"name": "missing-key", "expression": "object.metadata.annotations['nope'] == 'x'"}]
        self.register("ValidatingWebhookConfiguration", [self.status_hook(matchConditions=bad)])
        st, body = self.patch_status()
        self.assertEqual(st, 403)
        self.assertIn('pods "p1" is forbidden: expression', body["message"])
        self.assertIn("no such key", body["message"])
        self.assertEqual(self.seen, [])
        self.api.call(ADMIN, "DELETE", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/cfg")
        self.register("ValidatingWebhookConfiguration", [self.status_hook(matchConditions=bad,
                                                                          failurePolicy="Ignore")])
        st, _ = self.patch_status()
        self.assertEqual(st, 200)
        self.assertEqual(self.seen, [])

    def test_selectors(self):
        self.api.call(ADMIN, "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                            "metadata": {"name": "edge", "labels": {"ota": "on"}}})
        self.api.call(ADMIN, "POST", "/api/v1/namespaces/edge/pods", pod("e1", ns="edge", labels={"app": "a"}))
        self.api.call(ADMIN, "POST", "/api/v1/namespaces/edge/pods", pod("e2", ns="edge", labels={"app": "b"}))
        wh = self.status_hook(namespaceSelector={"matchLabels": {"ota": "on"}},
                              objectSelector={"matchExpressions": [{"key": "app", "operator": "In", "values": ["a"]}]},
                              rules=[{"operations": ["UPDATE"], "apiGroups": [""], "apiVersions": ["v1"],
                                      "resources": ["pods"]}])
        self.register("ValidatingWebhookConfiguration", [wh])
        for ns, name in (("default", "p1"), ("edge", "e2"), ("edge", "e1")):
            st, _ = self.api.call(ADMIN, "PATCH", "/api/v1/namespaces/%s/pods/%s" % (ns, name),
                                  {"metadata": {"annotations": {"x": "y"}}},
                                  content_type="application/merge-patch+json")
            self.assertEqual(st, 200)
        self.assertEqual([r["name"] for r, _ in self.seen], ["e1"])

    def test_failure_policy_and_timeout(self):
        self.hook.delay = 2.0
        self.register("ValidatingWebhookConfiguration", [self.status_hook(timeoutSeconds=1)])
        st, body = self.patch_status()
        self.assertEqual(st, 500)
        self.assertIn('failed calling webhook "status.hooks.test"', body["message"])
        self.assertIn("context deadline exceeded", body["message"])
        self.api.call(ADMIN, "DELETE", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/cfg")
        self.register("ValidatingWebhookConfiguration", [self.status_hook(timeoutSeconds=1, failurePolicy="Ignore")])
        st, _ = self.patch_status()
        self.assertEqual(st, 200)

    def test_tls_verified_against_ca_bundle(self):
        other = TestWebhook(lambda r, p: {"allowed": True}, service="other", namespace="hooks")
        try:
            wh = self.status_hook()
            wh["clientConfig"]["caBundle"] = other.ca_bundle     # wrong CA
            self.register("ValidatingWebhookConfiguration", [wh])
            st, body = self.patch_status()
            self.assertEqual(st, 500)
            self.assertIn("failed to verify certificate", body["message"])
            self.assertEqual(self.seen, [])
        finally:
            other.close()

    def test_unmapped_service(self):
        wh = self.status_hook()
        wh["clientConfig"]["service"]["name"] = "nowhere"
        self.register("ValidatingWebhookConfiguration", [wh])
        st, body = self.patch_status()
        self.assertEqual(st, 500)
        self.assertIn('service "nowhere" not found', body["message"])

    def test_delete_and_dry_run(self):
        wh = self.status_hook(rules=[{"operations": ["DELETE", "CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                                      "resources": ["pods"]}])
        self.register("ValidatingWebhookConfiguration", [wh])
        st, _ = self.api.call(ADMIN, "POST", "/api/v1/namespaces/default/pods", pod("p9"),
                              query={"dryRun": "All"})
        self.assertEqual(st, 201)
        self.assertTrue(self.seen[-1][0]["dryRun"])
        self.assertEqual(self.api.call(ADMIN, "GET", "/api/v1/namespaces/default/pods/p9")[0], 404)
        st, _ = self.api.call(ADMIN, "DELETE", "/api/v1/namespaces/default/pods/p1", query={"gracePeriodSeconds": "0"})
        self.assertEqual(st, 200)
        req = self.seen[-1][0]
        self.assertEqual(req["operation"], "DELETE")
        self.assertIsNone(req["object"])
        self.assertEqual(req["oldObject"]["metadata"]["name"], "p1")
        self.assertEqual(req["options"]["kind"], "DeleteOptions")


    def test_url_client_config_and_generate_name(self):
        wh = self.status_hook(rules=[{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                                      "resources": ["pods"]}])
        wh["clientConfig"] = {"url": "https://hook.hooks.svc:8443/check?x=1", "caBundle": self.hook.ca_bundle}
        self.register("MutatingWebhookConfiguration", [wh], name="m")
        self.register("ValidatingWebhookConfiguration", [wh], name="v")
        p = pod("")
        del p["metadata"]["name"]
        p["metadata"]["generateName"] = "gen-"
        st, body = self.api.call(ADMIN, "POST", "/api/v1/namespaces/default/pods", p)
        self.assertEqual(st, 201, body)
        self.assertEqual([path for _, path in self.seen], ["/check?x=1&timeout=5s"] * 2)
        # storage names the object between mutating and validating admission
        self.assertEqual(self.seen[0][0]["name"], "")
        self.assertEqual(self.seen[1][0]["name"], body["metadata"]["name"])
        self.assertEqual(self.hook.snis[-1], "hook.hooks.svc")

    def test_configuration_validation(self):
        wh = self.status_hook(matchConditions=[{"name": "c", "expression": "object.metadata.name =="}])
        del wh["sideEffects"]
        st, body = self.api.call(ADMIN, "POST", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
                                 webhook_config("ValidatingWebhookConfiguration", "bad", [wh]))
        self.assertEqual(st, 422)
        self.assertTrue(body["message"].startswith(
            'ValidatingWebhookConfiguration.admissionregistration.k8s.io "bad" is invalid: ['), body["message"])
        self.assertIn("webhooks[0].sideEffects: Required value", body["message"])
        self.assertIn('webhooks[0].matchConditions[0].expression: Invalid value: "object.metadata.name ==": '
                      'compilation failed', body["message"])
        fields = [c["field"] for c in body["details"]["causes"]]
        self.assertEqual(fields, ["webhooks[0].sideEffects", "webhooks[0].matchConditions[0].expression"])


if __name__ == "__main__":
    unittest.main()
