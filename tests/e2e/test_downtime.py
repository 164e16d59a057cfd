"""One pod's upgrade with and without pre-pull, same image (class UpgradeDowntime).

A 2 GiB image at 10 MB/s per node. Without pre-pull the replacement pod's
kubelet pulls it after the delete; with pre-pull it is already on the node.
The test asserts that mechanism, not a time: bench/upgrade_downtime.py
measures the downtime itself (docs/BENCHMARKS.md).
"""
import time

from harness import PRELOADED, REG, log, wait_until
from webhook_flow import WebhookBase, cond

MODEL = REG + "/e2e/model:2.0"
MODEL_BYTES = 2 * 1024 ** 3
REGISTRY = {"includeDefaults": True, "defaultBandwidth": 10_000_000,
            "images": [{"image": PRELOADED, "size": 30_000_000}, {"image": MODEL, "size": MODEL_BYTES}],
            "preloadedImages": ["registry.k8s.io/pause:3.10", PRELOADED]}


class DowntimeBase(WebhookBase):
    USER_ROLE = True  # status writes with kubectl are user's (webhook_flow)
    NODES = 2
    REGISTRY = REGISTRY

    def replacement(self, old, timeout=60, name="agent", interval=0.5):
        return wait_until(lambda: [p for p in self.pods(name) if p["spec"]["nodeName"] == old["spec"]["nodeName"]
                                   and p["metadata"]["uid"] != old["metadata"]["uid"]
                                   and (cond(p, "Ready") or {}).get("status") == "True"], timeout,
                          "the replacement of %s, Ready" % old["metadata"]["name"], interval=interval)[0]

    def kubelet_events(self, pod):
        return [(e["reason"], e["message"]) for e in self.events(pod)
                if e.get("source", {}).get("component") == "kubelet"]

    def assert_no_download(self, pod, image):
        """The replacement's kubelet found the image on the node: no pull
        between the delete and Ready."""
        events = self.kubelet_events(pod)
        self.assertIn(("Pulled", 'Container image "%s" already present on machine' % image), events)
        self.assertNotIn("Pulling", [r for r, _ in events])


class UpgradeDowntime(DowntimeBase):

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
        self.assert_no_download(self.replacement(prepulled), MODEL)
        for p in (plain, prepulled):
            self.assertEqual(self.replacement(p)["metadata"]["labels"]["controller-revision-hash"], h)


class AutoPrePullDowntime(DowntimeBase):
    """The upgrade after an automatic pre-pull (DaemonSet "auto" on node-1,
    opted in) against the upgrade after a node user's (DaemonSet "asked"
    on node-2), same image, same run: both replacements find the image on
    the node.  The downtimes (delete -> the replacement Ready) are logged,
    not judged: bench/upgrade_downtime.py measures."""
    PARALLELISM = "apps.kruise.io/image-predownload-parallelism"

    def test_automatic_matches_asked_for(self):
        auto = self.apply_ds("auto", PRELOADED, nodes=["node-1"], timeout=600)[0]
        asked = self.apply_ds("asked", PRELOADED, nodes=["node-2"], timeout=600)[0]
        self.sim.call("PATCH", "/apis/apps/v1/namespaces/%s/daemonsets/auto" % self.ns,
                      {"metadata": {"annotations": {self.PARALLELISM: "1"}}},
                      ctype="application/merge-patch+json")
        h_auto = self.kubectl_set_image("auto", MODEL)
        h_asked = self.kubectl_set_image("asked", MODEL)
        self.wait_need_upgrade([asked], "True", h_asked)
        self.assertEqual(self.status_patch("user", asked, [self.pull_request(h_asked)]).returncode, 0)
        self.wait_state(auto, "Ready", timeout=60)  # nobody asked
        self.wait_state(asked, "Ready", timeout=60)
        downtime = {}
        for name, old, h in (("auto", auto, h_auto), ("asked", asked, h_asked)):
            t0 = time.monotonic()
            self.kubectl_ok(old["spec"]["nodeName"], "delete", "pod", old["metadata"]["name"], "--wait=false")
            fresh = self.replacement(old, name=name, interval=0.05)
            downtime[name] = time.monotonic() - t0
            self.assertEqual(fresh["metadata"]["labels"]["controller-revision-hash"], h)
            self.assert_no_download(fresh, MODEL)
        log("upgrade downtime after the automatic pre-pull %.2fs, after the asked-for one %.2fs"
            % (downtime["auto"], downtime["asked"]))
