"""Issue 19 §1, "An untrusted webhook", through the apiserver (class
UntrustedWebhook): the webhook configurations' caBundle names another CA,
so the apiserver refuses a node user's pull request with its x509 error, and
the webhook says why: ota_webhook_tls_handshake_failures_total{reason=
"certificate_untrusted"} rises and its log has one `TLS handshake failed`
line with what to do. The right caBundle back, the same request passes.
(The webhook's own integration suite has every reason:
tests/integration/test_handshake_failures.py.)
"""
import base64
import json
import os
import subprocess
import tempfile

from harness import GEN_CERTS, PRELOADED, REG, STATE_DIRS, file_tail, wait_until
from webhook_flow import NEED, VALIDATE_POD, WebhookBase

NEW = REG + "/e2e/untrusted:1.0"
CONFIGS = ("validatingwebhookconfigurations", "mutatingwebhookconfigurations")
UNTRUSTED = 'ota_webhook_tls_handshake_failures_total{reason="certificate_untrusted"}'


class UntrustedWebhook(WebhookBase):
    NODES = 1
    USER_ROLE = True  # status writes with kubectl are user's (webhook_flow)
    REGISTRY = {"includeDefaults": True,
                "images": [{"image": PRELOADED, "size": 30_000_000}, {"image": NEW, "size": 50_000_000}],
                "preloadedImages": ["registry.k8s.io/pause:3.10", PRELOADED]}

    def set_ca_bundles(self, bundle):
        """Every webhook of both configurations gets caBundle `bundle`
        (base64 PEM); returns the ones they had, to put back."""
        had = {}
        for kind in CONFIGS:
            path = "/apis/admissionregistration.k8s.io/v1/%s/ota-prepull" % kind
            cfg = self.sim.get(path)
            had[kind] = [w["clientConfig"].get("caBundle", "") for w in cfg["webhooks"]]
            ops = [{"op": "replace", "path": "/webhooks/%d/clientConfig/caBundle" % i,
                    "value": bundle if isinstance(bundle, str) else bundle[kind][i]}
                   for i in range(len(cfg["webhooks"]))]
            out = self.sim.kubectl("admin", "patch", kind[:-1], "ota-prepull", "--type=json",
                                   "-p", json.dumps(ops))
            self.assertEqual(out.returncode, 0, out.stderr)
        return had

    def untrusted(self):
        return (self.webhook.metrics() or {}).get(UNTRUSTED, 0)

    def said(self):
        """The webhook's `TLS handshake failed` lines for the reason."""
        with open(self.webhook.err_path, errors="replace") as f:
            return [l for l in f if 'msg="TLS handshake failed"' in l and "reason=certificate_untrusted" in l]

    def test_a_ca_bundle_that_does_not_match_is_said_by_the_webhook(self):
        pods = self.apply_ds("agent", PRELOADED)
        h = self.kubectl_set_image("agent", NEW)
        self.wait_need_upgrade(pods, "True", h)
        pod = pods[0]
        # Another CA in caBundle, as a cluster whose bundle was not updated.
        other = tempfile.mkdtemp(prefix="ota-e2e-other-ca-")
        STATE_DIRS.append(other)
        subprocess.run([GEN_CERTS, other], check=True, timeout=60, stdout=subprocess.DEVNULL)
        with open(os.path.join(other, "ca.crt"), "rb") as f:
            wrong = base64.b64encode(f.read()).decode()
        before = self.untrusted()
        self.assertEqual(self.said(), [])
        right = self.set_ca_bundles(wrong)
        try:
            out = self.status_patch("user", pod, [self.pull_request(h)])
            self.assertEqual(out.returncode, 1, out.stdout)
            self.assertIn('failed calling webhook "%s"' % VALIDATE_POD, out.stderr)
            self.assertIn("failed to verify certificate", out.stderr)
            self.assertEqual(self.state(pod), "PendingUpgrade")
            # The webhook saw it: counted, and said once with what to do.
            wait_until(lambda: self.untrusted() > before, 15, "certificate_untrusted counted")
            lines = wait_until(self.said, 15, "the webhook's log line")
            self.assertEqual(len(lines), 1, "".join(lines))
            self.assertIn("check the caBundle in the webhook configurations matches the CA that "
                          "signed --tls-cert-file", lines[0])
            self.assertIn("peer=127.0.0.1:", lines[0])
        finally:
            self.set_ca_bundles(right)
        # The right bundle back: the same request goes through.
        out = self.status_patch("user", pod, [self.pull_request(h)])
        self.assertEqual(out.returncode, 0, out.stderr + file_tail(self.webhook.err_path, 20))
        self.assertNotEqual(self.state(pod), "PendingUpgrade")
        self.assertEqual(self.cond(self.pod(pod["metadata"]["name"]), NEED)["status"], "True")
