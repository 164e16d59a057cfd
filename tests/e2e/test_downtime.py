"""One pod's upgrade with and without pre-pull, same image (class UpgradeDowntime).

A 2 GiB image at 10 MB/s per node. Without pre-pull the replacement pod's
kubelet pulls it after the delete; with pre-pull it is already on the node.
The test asserts that mechanism, not a time: bench/upgrade_downtime.py
measures the downtime itself (docs/BENCHMARKS.md).
"""
from harness import PRELOADED, REG, wait_until
from webhook_flow import WebhookBase, cond

MODEL = REG + "/e2e/model:2.0"
MODEL_BYTES = 2 * 1024 ** 3
REGISTRY = {"includeDefaults": True, "defaultBandwidth": 10_000_000,
            "images": [{"image": PRELOADED, "size": 30_000_000}, {"image": MODEL, "size": MODEL_BYTES}],
            "preloadedImages": ["registry.k8s.io/pause:3.10", PRELOADED]}


class UpgradeDowntime(WebhookBase):
    USER_ROLE = True  # status writes with kubectl are user's (webhook_flow)
    NODES = 2
    REGISTRY = REGISTRY

    def replacement(self, old, timeout=60):
        return wait_until(lambda: [p for p in self.pods("agent") if p["spec"]["nodeName"] == old["spec"]["nodeName"]
                                   and p["metadata"]["uid"] != old["metadata"]["uid"]
                                   and (cond(p, "Ready") or {}).get("status") == "True"], timeout,
                          "the replacement of %s, Ready" % old["metadata"]["name"])[0]

    def kubelet_events(self, pod):
        return [(e["reason"], e["message"]) for e in self.events(pod)
                if e.get("source", {}).get("component") == "kubelet"]

    def test_prepull_takes_the_pull_out_of_the_upgrade(self):
        # the pull deadline covers 2 GiB at 10 MB/s (215 simulated seconds)
        pods = self.apply_ds("agent", PRELOADED, timeout=600)
        h = self.kubectl_set_image("agent", MODEL)
        self.wait_need_upgrade(pods, "True", h)
        plain, prepulled = self.on_node(pods, "node-1"), self.on_node(pods, "node-2")

        # node-2 pre-pulls while node-1 upgrades straight away
        self.assertEqual(self.status_patch("user", prepulled, [self.pull_request(h)]).returncode, 0)
        self.kubectl_ok("node-1", "delete", "pod", plain["metadata"]["name"], "--wait=false")
        self.wait_state(prepulled, "Ready", timeout=60)
        self.kubectl_ok("node-2", "delete", "pod", prepulled["metadata"]["name"], "--wait=false")

        # without pre-pull: the replacement's kubelet pulled the whole image
        fresh = self.replacement(plain)
        events = self.kubelet_events(fresh)
        self.assertIn(("Pulling", 'Pulling image "%s"' % MODEL), events)
        pulled = [m for r, m in events if r == "Pulled"]
        self.assertEqual(len(pulled), 1, events)
        self.assertTrue(pulled[0].startswith('Successfully pulled image "%s" in ' % MODEL), pulled)
        self.assertTrue(pulled[0].endswith("Image size: %d bytes." % MODEL_BYTES), pulled)

        # with pre-pull: the image was there; no pull between delete and Ready
        fresh = self.replacement(prepulled)
        events = self.kubelet_events(fresh)
        self.assertIn(("Pulled", 'Container image "%s" already present on machine' % MODEL), events)
        self.assertNotIn("Pulling", [r for r, _ in events])
        for p in (plain, prepulled):
            self.assertEqual(self.replacement(p)["metadata"]["labels"]["controller-revision-hash"], h)
