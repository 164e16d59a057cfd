"""What bench/repeat_request.py and bench/upgrade_downtime.py share: kubesim
with a 2 GiB image at 10 MB/s per node, ota-webhook registered from the
rendered manifests and ota-controller, as the e2e tests start them
(tests/e2e/harness.py), and an OTA DaemonSet updated to that image.
"""
import contextlib
import os
import shutil
import sys
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))

import harness  # noqa: E402
from harness import OTA, PRELOADED, REG, TIMEOUT_ANN, wait_until  # noqa: E402

MODEL = REG + "/bench/model:2.0"
SIZE = 2 * 1024 ** 3
BANDWIDTH = 10_000_000
REGISTRY = {"includeDefaults": True, "defaultBandwidth": BANDWIDTH,
            "images": [{"image": PRELOADED, "size": 30_000_000}, {"image": MODEL, "size": SIZE}],
            "preloadedImages": ["registry.k8s.io/pause:3.10", PRELOADED]}
NS = "bench"


def cond(pod, ctype):
    return next((c for c in pod["status"].get("conditions") or [] if c["type"] == ctype), None)


@contextlib.contextmanager
def cluster(nodes, scale, track_jobs=False):
    """kubesim with `nodes` nodes and REGISTRY at time scale `scale`,
    ota-webhook, ota-controller (leading) and, with track_jobs, a
    harness.JobTracker; then the OTA DaemonSet "agent" (PRELOADED, pre-pull
    timeout 3600 s) in NS.  Yields them as .sim .webhook .ctl .tracker; all
    stopped on the way out, the state directories removed when the body
    succeeded (else their paths go to stderr)."""
    harness.SCALE = scale
    c = types.SimpleNamespace(webhook=None, sim=None, ctl=None, tracker=None)
    ok = False
    try:
        c.webhook = harness.Webhook("bench-webhook")
        c.sim = sim = harness.Kubesim(nodes, REGISTRY, webhook=c.webhook)
        sim.call("POST", "/api/v1/namespaces", {"metadata": {"name": harness.LEASE_NS}})
        out = sim.kubectl("admin", "apply", "-f", "-", stdin=harness.render_manifests(c.webhook.certs))
        if out.returncode != 0:
            raise SystemExit("applying the manifests failed: " + out.stderr)
        c.ctl = harness.Controller(sim, "bench-controller")
        c.ctl.wait_ready()
        wait_until(c.ctl.leading, 30, "the controller leading")
        if track_jobs:
            c.tracker = harness.JobTracker(sim)
            c.tracker.start()
        sim.call("POST", "/api/v1/namespaces", {"metadata": {"name": NS}})
        ds = {"apiVersion": "apps/v1", "kind": "DaemonSet",
              "metadata": {"name": "agent", "annotations": {OTA: "OTA", TIMEOUT_ANN: "3600"}},
              "spec": {"selector": {"matchLabels": {"app": "agent"}}, "updateStrategy": {"type": "OnDelete"},
                       "template": {"metadata": {"labels": {"app": "agent"}},
                                    "spec": {"containers": [{"name": "main", "image": PRELOADED}]}}}}
        sim.call("POST", "/apis/apps/v1/namespaces/%s/daemonsets" % NS, ds)
        yield c
        ok = True
    finally:
        if c.tracker is not None:
            c.tracker.stopping = True
        if c.ctl is not None:
            c.ctl.close()
        if c.webhook is not None:
            c.webhook.stop()
        if c.sim is not None:
            c.sim.stop()
        if ok:
            for d in harness.STATE_DIRS:
                shutil.rmtree(d, ignore_errors=True)
        else:
            sys.stderr.write("logs: %s\n" % " ".join(harness.STATE_DIRS))


def update_to_model(sim):
    """The DaemonSet's new revision: its image becomes MODEL."""
    sim.call("PATCH", "/apis/apps/v1/namespaces/%s/daemonsets/agent" % NS,
             {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": MODEL}]}}}},
             ctype="application/strategic-merge-patch+json")
