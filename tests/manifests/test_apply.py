"""kubectl apply -k against kubesim (API only, --no-sim): the base, the base
with certificates (certs/render-manifests.sh), and the pre-1.28 overlay go
through, and what kubesim stores is what was rendered."""
import json
import os
import shutil
import tempfile
import unittest

import kubesim_launch
from manifests import CONFIG_KINDS_ALL, MANIFESTS, NS, ROOT, render, run, yaml_to_objects

PATHS = {  # kind -> collection path (namespaced ones in ota-system)
    "Namespace": "/api/v1/namespaces",
    "ServiceAccount": "/api/v1/namespaces/%s/serviceaccounts" % NS,
    "Service": "/api/v1/namespaces/%s/services" % NS,
    "Secret": "/api/v1/namespaces/%s/secrets" % NS,
    "Deployment": "/apis/apps/v1/namespaces/%s/deployments" % NS,
    "PodDisruptionBudget": "/apis/policy/v1/namespaces/%s/poddisruptionbudgets" % NS,
    "Role": "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/roles" % NS,
    "RoleBinding": "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/rolebindings" % NS,
    "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
    "MutatingWebhookConfiguration": "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
    "ValidatingWebhookConfiguration": "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
}
# what each kind is about (metadata aside, which the server adds to)
BODY = {"Deployment": ["spec"], "Service": ["spec"], "PodDisruptionBudget": ["spec"], "Role": ["rules"],
        "ClusterRole": ["rules"], "RoleBinding": ["roleRef", "subjects"],
        "ClusterRoleBinding": ["roleRef", "subjects"], "Secret": ["type", "data"],
        "ServiceAccount": ["automountServiceAccountToken"], "Namespace": [],
        "MutatingWebhookConfiguration": ["webhooks"], "ValidatingWebhookConfiguration": ["webhooks"]}


def ours(want, have):
    """have, cut down to the fields want has (recursively): the server's
    defaults (a webhook's scope, matchPolicy, empty selectors) left out."""
    if isinstance(want, dict) and isinstance(have, dict):
        return {k: ours(want[k], have[k]) for k in want if k in have}
    if isinstance(want, list) and isinstance(have, list) and len(want) == len(have):
        return [ours(w, h) for w, h in zip(want, have)]
    return have


class Apply(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="ota-apply-")
        try:
            cls.sim = kubesim_launch.Kubesim(os.path.join(cls.dir, "state"), ["--no-sim"],
                                             log=os.path.join(cls.dir, "kubesim.err"))
        except BaseException:
            shutil.rmtree(cls.dir, ignore_errors=True)
            raise
        cls.env = dict(os.environ, KUBECONFIG=cls.sim.kubeconfig("admin"))

    @classmethod
    def tearDownClass(cls):
        cls.sim.stop()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def kubectl(self, *args, stdin=None):
        return run(["kubectl"] + list(args), stdin=stdin, env=self.env)

    def assert_stored(self, objs):
        for o in objs:
            kind, name = o["kind"], o["metadata"]["name"]
            got = json.loads(self.kubectl("get", "--raw", PATHS[kind] + "/" + name))
            for k in BODY[kind]:
                # what we set; the server may add defaults around it
                self.assertEqual(ours(o.get(k), got.get(k)), o.get(k), (kind, name, k))
            labels = dict(got["metadata"].get("labels") or {})
            if kind == "Namespace":  # the server's own label
                self.assertEqual(labels.pop("kubernetes.io/metadata.name"), name)
            self.assertEqual(labels, o["metadata"].get("labels"), (kind, name))

    def test_apply_base_certs_and_pre_1_28(self):
        out = self.kubectl("apply", "-k", MANIFESTS)
        objs = render(MANIFESTS)
        self.assertEqual(len(out.strip().splitlines()), len(objs), out)
        self.assertNotIn("unchanged", out)
        self.assert_stored(objs)
        # with our CA and the serving pair
        certs = os.path.join(self.dir, "certs")
        text = run(["bash", os.path.join(ROOT, "certs", "render-manifests.sh"), certs])
        out = self.kubectl("apply", "-f", "-", stdin=text)
        self.assertIn("secret/ota-webhook-tls created", out)
        self.assert_stored(yaml_to_objects(text))
        # the pre-1.28 overlay over it: matchConditions go, selectors come
        pre = os.path.join(MANIFESTS, "overlays", "pre-1.28")
        text = run(["bash", os.path.join(ROOT, "certs", "render-manifests.sh"), certs, pre])
        self.kubectl("apply", "-f", "-", stdin=text)
        self.assert_stored(yaml_to_objects(text))
        for kind in CONFIG_KINDS_ALL:
            self.assertNotIn("matchConditions", self.kubectl("get", kind, "ota-prepull", "-o", "json"))
