"""Issue 21: ota-controller runs kube-fledged ImageCaches, driven as an admin
would, with the real kubectl, through the registered webhook (the overlay
manifests/overlays/imagecache rendered by certs/render-manifests.sh, so the
controller runs with the RBAC manifests/ grants it).

ImageCacheRun (our CRD: /status served, 3 nodes, node-1 labelled
tier=backend), one namespace per test:
  01 kube-fledged's sample CR (read from ../shared/upstream/kube-fledged at
     run time, its namespace made ours) -> Succeeded, reason
     ImageCacheCreate, the exact message; one Job per node, controlled by the
     ImageCache, pinned by nodeName, never upstream's Job labels; node-1's
     Job pulls the three images of both lists, the others one
  02 a missing image -> Failed, "Image pull failed for some images...", one
     failures entry per node (its hostname label) with the kubelet's reason
     and message (an uppercase name: InvalidImageName, the kubelet's words), long before --image-pull-deadline-duration; a Warning
     Event with the status's reason and message
  03 a nodeSelector that matches no node -> NoImagesPulledOrDeleted, no Job
  04 the refresh annotation runs an ImageCacheRefresh and is removed; the
     create's Jobs stay until then and go with it
  05 an update adding an image pulls it (ImageCacheUpdate, Succeeded) and
     the node reports it
  06 the controller SIGKILLed mid-action and started again: the action
     finishes (never Aborted), one Job per (cache, node, action)
  07 purge asked while purge is off: Failed/ImageCachePurge saying so, the
     annotation removed, the images kept
  08 a NotReady node is waited for (Processing, "Waiting for nodes: node-3",
     no Job there), then pulled once Ready
  09 an edit while the create runs is not dropped: the create ends, then an
     ImageCacheUpdate pulls the added image
  10 an edit during a refresh (node-2 lost two slow images to crictl rmi, so
     the refresh pulls them again) is not dropped: the refresh ends with its
     Event, then an ImageCacheUpdate pulls the added image
  11 the controller SIGKILLed mid-refresh and started again: the refresh
     finishes (never Aborted, its startTime kept), one Job per (cache, node,
     action)
ImageCacheRunPurge (--image-cache-purge-image): the purge annotation runs
  crictl rmi Jobs (one per node) and the images are gone: Succeeded with
  kube-fledged's "deleted" message; an update removing an image purges it.
ImageCacheRunUpstreamCrd: kube-fledged's CRD (no /status) applied unchanged,
  the status written by a PUT of the whole object; skipped without
  ../shared/upstream/kube-fledged ($OTA_UPSTREAM_KUBEFLEDGED):
  01 the sample reaches Succeeded with the exact message, and a refresh
     removes its annotation
  02 a missing image: Failed, one failures entry per node, by PUT only
  03 a label and an annotation added with kubectl during the create survive
     every PUT (the final object holds them)
  04 a cache kube-fledged purged (status given on create) is adopted: our
     record written, the status as it was, no Job; an edit then runs an
     ImageCacheUpdate
  05 one kube-fledged left Aborted (ImagePullAborted) is refreshed at once
ImageCacheRunRequeue (--resync-period=60s, --image-cache-refresh-frequency=8s):
  the periodic refresh starts within 2 s of completionTime + 8 s, twice: the
  plan's requeue time wakes a pass, not the resync.

Every wait is bounded.
"""
import calendar
import copy
import json
import os
import time
import unittest
import urllib.parse

from harness import MISSING, REG, REGISTRY_CONFIG, ApiError, Base, log, wait_until
from test_imagecache import OVERLAY, UPSTREAM

try:
    import yaml
except ImportError:  # Debian's python3-yaml; only the sample tests need it
    yaml = None

SAMPLE = os.path.join(UPSTREAM, "kubefledged-imagecache.yaml")
UPSTREAM_CRD = os.path.join(UPSTREAM, "kubefledged-crd.yaml")
API = "/apis/kubefledged.io/v1alpha2"
SAMPLE_IMAGES = ["ghcr.io/jitesoft/nginx:1.23.1", "us.gcr.io/k8s-artifacts-prod/cassandra:v7",
                 "us.gcr.io/k8s-artifacts-prod/etcd:3.5.4-0"]
QUICK = [REG + "/ic/app-%02d:1.0" % i for i in range(1, 21)]  # 100 MB: 10 simulated s
SLOW = [REG + "/ic/slow-%02d:1.0" % i for i in range(1, 10)]  # 900 MB: 90 simulated s (3 real)
CRICTL = REG + "/tools/crictl:1.30"
REGISTRY = copy.deepcopy(REGISTRY_CONFIG)
REGISTRY["images"] = REGISTRY["images"] + [{"image": i, "size": 50_000_000} for i in SAMPLE_IMAGES + [CRICTL]] + \
    [{"image": i, "size": 100_000_000} for i in QUICK] + [{"image": i, "size": 900_000_000} for i in SLOW]

PULLED = "All requested images pulled succesfully to respective nodes"
PULL_FAILED = 'Image pull failed for some images. Please see "failures" section'
NO_NODES = "No images were pulled or deleted because nodeSelector specified did not match any nodes"
UPSTREAM_LABELS = {"app": "kubefledged", "kubefledged": "kubefledged-image-manager"}
REFRESH = "kubefledged.io/refresh-imagecache"
PURGE = "kubefledged.io/purge-imagecache"
DELETED = "All cached images succesfully deleted from respective nodes"
ABORTED_MSG = "Image cache processing aborted. Image cache will get refreshed during next refresh cycle"
SPEC_ANN = "ota-prepull.openyurt.io/imagecache-spec"
JOB_ID_ANN = "ota-prepull/spec-hash"  # a Job's (op, action, start, spec) identity
CRI_SOCKET = "/run/containerd/containerd.sock"
PURGE_DISABLED = ("Image purge is disabled in ota-controller: start it with --image-cache-purge-image to "
                  "delete cached images")


def clock_parse(text):
    """Seconds of an RFC 3339 time the apiserver wrote (Z, whole seconds)."""
    return calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ")) if text else 0


class ImageCacheRunBase(Base):
    NODES = 3
    WEBHOOK = True
    OVERLAY = OVERLAY
    REGISTRY = REGISTRY
    # what the overlay's Deployment patch adds; the refresh only on request
    CONTROLLER_ARGS = ("--imagecaches=true", "--image-cache-refresh-frequency=0s", "--resync-period=2s")

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        node = cls.sim.get("/api/v1/nodes/node-1")
        labels = dict(node["metadata"].get("labels") or {}, tier="backend")
        cls.sim.call("PATCH", "/api/v1/nodes/node-1", {"metadata": {"labels": labels}},
                     ctype="application/merge-patch+json")

    def kubectl(self, *args, stdin=None):
        return self.sim.kubectl("admin", *args, stdin=stdin)

    def cache(self, name, lists, secrets=None):
        spec = {"cacheSpec": lists}
        if secrets:
            spec["imagePullSecrets"] = [{"name": s} for s in secrets]
        return {"apiVersion": "kubefledged.io/v1alpha2", "kind": "ImageCache",
                "metadata": {"name": name, "namespace": self.ns}, "spec": spec}

    def create(self, doc):
        res = self.kubectl("create", "-f", "-", stdin=json.dumps(doc))
        self.assertEqual(res.returncode, 0, "kubectl create: %s%s" % (res.stdout, res.stderr))
        return self.ic(doc["metadata"]["name"], doc["metadata"]["namespace"])

    def ic(self, name, ns=None):
        try:
            return self.sim.get("%s/namespaces/%s/imagecaches/%s" % (API, ns or self.ns, name))
        except ApiError as e:
            if e.status == 404:
                return None
            raise

    def ctl_tail(self):
        return "\n".join(c.tail(25) for c in self.ctls)

    def wait_status(self, name, pred, timeout, what, ns=None, aborted_before=False):
        """aborted_before: the cache was created Aborted (kube-fledged's)."""
        seen = ["Aborted"] if aborted_before else []

        def check():
            o = self.ic(name, ns)
            st = (o or {}).get("status") or {}
            if st.get("status") and (not seen or seen[-1] != st.get("status")):
                seen.append(st.get("status"))
            return o if o is not None and pred(st) else None
        try:
            o = wait_until(check, timeout, "%s: %s" % (name, what), interval=0.1)
        except AssertionError:
            raise AssertionError("%s: %s not reached in %gs; status now %s; controller log:\n%s" % (
                name, what, timeout, json.dumps((self.ic(name, ns) or {}).get("status")), self.ctl_tail()))
        self.assertNotIn("Aborted", seen[1:] if aborted_before else seen, "statuses seen: %s" % seen)
        return o

    def wait_done(self, name, reason, timeout=60, ns=None, aborted_before=False):
        """The final status of the action reason (each test's next action
        has another reason than the one before: a startTime may repeat
        within one second)."""
        return self.wait_status(
            name, lambda s: s.get("status") not in (None, "Processing") and s.get("reason") == reason
            and s.get("completionTime"), timeout, "%s finished" % reason, ns, aborted_before)

    def wait_record(self, name, start):
        """Our record of the action that started at start has landed."""
        wait_until(lambda: '"start":"%s"' % start in (self.ic(name)["metadata"].get("annotations") or {}).get(
            SPEC_ANN, ""), 10, "%s: the record of the action of %s" % (name, start))

    def rmi(self, node, image):
        """The image deleted from node as an admin would: a pod there running
        crictl rmi on the runtime's socket (what kubesim's kubelet fakes for
        the purge Job), then gone from Node.status.images."""
        name = "rmi-%s-%d" % (node, int(time.monotonic() * 1000) % 1000000)
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": self.ns},
               "spec": {"nodeName": node, "restartPolicy": "Never",
                        "containers": [{"name": "rmi", "image": CRICTL,
                                        "command": ["crictl", "--image-endpoint=unix://" + CRI_SOCKET,
                                                    "rmi", image],
                                        "volumeMounts": [{"name": "sock", "mountPath": CRI_SOCKET}]}],
                        "volumes": [{"name": "sock", "hostPath": {"path": CRI_SOCKET, "type": "Socket"}}]}}
        self.sim.call("POST", "/api/v1/namespaces/%s/pods" % self.ns, pod)
        wait_until(lambda: self.sim.get("/api/v1/namespaces/%s/pods/%s" % (self.ns, name))["status"].get("phase")
                   in ("Succeeded", "Failed") or None, 30, "crictl rmi on " + node)
        phase = self.sim.get("/api/v1/namespaces/%s/pods/%s" % (self.ns, name))["status"]["phase"]
        self.assertEqual(phase, "Succeeded", "crictl rmi %s on %s" % (image, node))
        wait_until(lambda: image not in self.node_images(node), 10, "%s gone from %s" % (image, node))

    def jobs_by_action(self, uid):
        """(node, action reason) -> the names of the cache's Jobs."""
        per = {}
        for j in self.jobs_of(uid):
            ident = (j["metadata"].get("annotations") or {}).get(JOB_ID_ANN, "")
            key = (j["spec"]["template"]["spec"]["nodeName"], ident.split("/")[1] if "/" in ident else ident)
            per.setdefault(key, []).append(j["metadata"]["name"])
        return per

    def jobs_of(self, uid):
        """Every Job ever owned by the ImageCache uid (the class's JobTracker
        saw them all, deleted ones too)."""
        return [j for j in self.tracker.all_jobs()
                if any(r.get("uid") == uid for r in j["metadata"].get("ownerReferences") or [])]

    def events_of(self, name, ns=None):
        sel = urllib.parse.quote("involvedObject.name=%s,involvedObject.kind=ImageCache" % name)
        return self.sim.get("/api/v1/namespaces/%s/events?fieldSelector=%s" % (ns or self.ns, sel))["items"]

    def node_images(self, node):
        n = self.sim.get("/api/v1/nodes/" + node)
        return {name for i in n["status"].get("images") or [] for name in i.get("names") or []}

    def check_jobs(self, uid, name, want):
        """The Jobs of the cache: one per node in want (node -> images in
        order), each pinned, controlled by the ImageCache, ours."""
        jobs = self.jobs_of(uid)
        per = {}
        for j in jobs:
            per.setdefault(j["spec"]["template"]["spec"]["nodeName"], []).append(j)
        self.assertEqual(sorted(per), sorted(want), "nodes with Jobs")
        for node, js in per.items():
            self.assertEqual(len(js), 1, "Jobs on %s: %s" % (node, [j["metadata"]["name"] for j in js]))
            j = js[0]
            self.assertTrue(j["metadata"]["name"].startswith("ota-ic-%s-" % name), j["metadata"]["name"])
            ref = j["metadata"]["ownerReferences"][0]
            self.assertEqual((ref["apiVersion"], ref["kind"], ref["name"], ref["uid"], ref["controller"]),
                             ("kubefledged.io/v1alpha2", "ImageCache", name, uid, True))
            for labels in (j["metadata"].get("labels") or {}, j["spec"]["template"]["metadata"].get("labels") or {}):
                for k, v in UPSTREAM_LABELS.items():
                    self.assertNotEqual(labels.get(k), v, "upstream's Job label %s=%s" % (k, v))
            pulls = [c["image"] for c in j["spec"]["template"]["spec"]["containers"]]
            self.assertEqual(pulls, want[node], "images of the Job on %s" % node)


class ImageCacheRun(ImageCacheRunBase):
    @unittest.skipUnless(yaml is not None and os.path.exists(SAMPLE), "no PyYAML or no sample at %s" % SAMPLE)
    def test_01_upstream_sample_succeeds(self):
        with open(SAMPLE) as f:
            doc = yaml.safe_load(f)
        doc["metadata"]["namespace"] = self.ns
        obj = self.create(doc)
        done = self.wait_done("imagecache1", "ImageCacheCreate")
        st = done["status"]
        self.assertEqual((st["status"], st["message"]), ("Succeeded", PULLED), st)
        self.assertNotIn("failures", st)
        self.assertTrue(st.get("startTime"))
        self.check_jobs(obj["metadata"]["uid"], "imagecache1",
                        {"node-1": SAMPLE_IMAGES, "node-2": SAMPLE_IMAGES[:1], "node-3": SAMPLE_IMAGES[:1]})
        for img in SAMPLE_IMAGES:
            self.assertIn(img, self.node_images("node-1"))
        self.assertNotIn(SAMPLE_IMAGES[1], self.node_images("node-2"))
        evs = wait_until(lambda: [e for e in self.events_of("imagecache1") if e["reason"] == "ImageCacheCreate"]
                         or None, 10, "the ImageCacheCreate Event")
        self.assertEqual((evs[0]["type"], evs[0]["message"]), ("Normal", PULLED))

    def test_02_missing_image_fails_per_node(self):
        t0 = time.monotonic()
        upper = REG + "/ic/Upper:1.0"  # the kubelet refuses the name itself
        self.create(self.cache("broken", [{"images": [QUICK[0], MISSING, upper]}]))
        done = self.wait_done("broken", "ImageCacheCreate", timeout=60)
        log("missing image failed in %.1fs" % (time.monotonic() - t0))
        st = done["status"]
        self.assertEqual((st["status"], st["message"]), ("Failed", PULL_FAILED), st)
        self.assertEqual(sorted(st["failures"]), sorted([MISSING, upper]), st)
        for e in st["failures"][upper]:
            self.assertEqual(e["reason"], "InvalidImageName", e)
            self.assertIn("invalid reference format", e["message"], e)
        self.assertEqual(len(st["failures"][upper]), 3)
        entries = st["failures"][MISSING]
        self.assertEqual(sorted(e["node"] for e in entries), ["node-1", "node-2", "node-3"])
        for e in entries:
            self.assertTrue(e["reason"] and e["message"], e)
            self.assertIn(e["reason"], ("ErrImagePull", "ImagePullBackOff"), e)
            self.assertIn("missing", e["message"], e)
        evs = wait_until(lambda: [e for e in self.events_of("broken") if e["type"] == "Warning"] or None, 10,
                         "the Warning Event")
        self.assertEqual((evs[0]["reason"], evs[0]["message"]), ("ImageCacheCreate", PULL_FAILED))

    def test_03_selector_matches_no_node(self):
        obj = self.create(self.cache("nowhere", [{"images": [QUICK[1]], "nodeSelector": {"zone": "mars"}}]))
        st = self.wait_done("nowhere", "ImageCacheCreate")["status"]
        self.assertEqual((st["status"], st["message"]), ("NoImagesPulledOrDeleted", NO_NODES), st)
        self.assertEqual(self.jobs_of(obj["metadata"]["uid"]), [])

    def live_jobs(self):
        return [j["metadata"]["name"] for j in
                self.sim.get("/apis/batch/v1/namespaces/%s/jobs" % self.ns)["items"]
                if not j["metadata"].get("deletionTimestamp")]

    def test_04_refresh_annotation(self):
        self.create(self.cache("fresh", [{"images": [QUICK[2]]}]))
        first = self.wait_done("fresh", "ImageCacheCreate")["status"]
        self.assertEqual(first["status"], "Succeeded", first)
        created = self.live_jobs()
        self.assertEqual(len(created), 3, "the create's Jobs stay until the next action")
        res = self.kubectl("annotate", "ic", "fresh", "-n", self.ns, REFRESH + "=")
        self.assertEqual(res.returncode, 0, res.stderr)
        done = self.wait_done("fresh", "ImageCacheRefresh")
        self.assertEqual((done["status"]["status"], done["status"]["message"]), ("Succeeded", PULLED))
        self.assertNotIn(REFRESH, done["metadata"].get("annotations") or {})
        # the image is on every node: no Job; the create's went with the refresh
        wait_until(lambda: not set(created) & set(self.live_jobs()), 10, "the create's Jobs deleted")

    def test_05_update_adds_an_image(self):
        self.create(self.cache("grow", [{"images": [QUICK[3]]}, {"images": [QUICK[4]],
                                                                 "nodeSelector": {"tier": "backend"}}]))
        first = self.wait_done("grow", "ImageCacheCreate")["status"]
        self.assertEqual(first["status"], "Succeeded", first)
        self.assertNotIn(QUICK[5], self.node_images("node-1"))
        res = self.kubectl("patch", "ic", "grow", "-n", self.ns, "--type=json", "-p", json.dumps(
            [{"op": "add", "path": "/spec/cacheSpec/1/images/-", "value": QUICK[5]}]))
        self.assertEqual(res.returncode, 0, res.stderr)
        done = self.wait_done("grow", "ImageCacheUpdate")
        self.assertEqual((done["status"]["status"], done["status"]["message"]), ("Succeeded", PULLED))
        self.assertIn(QUICK[5], self.node_images("node-1"))
        self.assertNotIn(QUICK[5], self.node_images("node-2"))

    def test_06_restart_mid_action(self):
        obj = self.create(self.cache("restart", [{"images": SLOW[:3]}]))
        uid = obj["metadata"]["uid"]
        wait_until(lambda: len(self.jobs_of(uid)) >= 1, 30, "a Job of the cache")
        self.ctl.kill()
        self.assertEqual((self.ic("restart")["status"] or {}).get("status"), "Processing")
        log("killed the controller mid-action; Jobs:", [j["metadata"]["name"] for j in self.jobs_of(uid)])
        time.sleep(0.5)
        self.ctl.start()
        self.ctl.wait_ready()
        wait_until(self.ctl.leading, 30, "the restarted controller leading")
        st = self.wait_done("restart", "ImageCacheCreate", timeout=90)["status"]
        self.assertEqual((st["status"], st["message"]), ("Succeeded", PULLED), st)
        per = {}
        for j in self.jobs_of(uid):
            per.setdefault(j["spec"]["template"]["spec"]["nodeName"], []).append(j["metadata"]["name"])
        self.assertEqual(sorted(per), ["node-1", "node-2", "node-3"])
        for node, names in per.items():
            self.assertEqual(len(names), 1, "Jobs on %s: %s" % (node, names))

    def set_ready(self, node, status):
        """The Node's Ready condition as its kubelet would post it."""
        n = self.sim.get("/api/v1/nodes/" + node)
        conds = [dict(c, status=status, reason="KubeletReady" if status == "True" else "KubeletNotReady")
                 if c["type"] == "Ready" else c for c in n["status"]["conditions"]]
        self.sim.call("PATCH", "/api/v1/nodes/%s/status" % node, {"status": {"conditions": conds}},
                      ctype="application/merge-patch+json")

    def test_08_not_ready_node_waited_for(self):
        self.set_ready("node-3", "False")
        self.addCleanup(self.set_ready, "node-3", "True")
        obj = self.create(self.cache("wait", [{"images": [QUICK[10]]}]))
        uid = obj["metadata"]["uid"]
        want = "Images are being pulled on to the nodes. Please view the status after some time Waiting for nodes: node-3"
        self.wait_status("wait", lambda s: s.get("message") == want, 30, "Processing, waiting for node-3")
        wait_until(lambda: len(self.jobs_of(uid)) == 2, 20, "Jobs on the two Ready nodes")
        self.assertNotIn("node-3", [j["spec"]["template"]["spec"]["nodeName"] for j in self.jobs_of(uid)])
        self.assertEqual(self.ic("wait")["status"]["status"], "Processing")
        self.set_ready("node-3", "True")
        st = self.wait_done("wait", "ImageCacheCreate")["status"]
        self.assertEqual((st["status"], st["message"]), ("Succeeded", PULLED), st)
        self.assertIn(QUICK[10], self.node_images("node-3"))

    def test_09_edit_while_processing_runs_after(self):
        self.create(self.cache("busy", [{"images": [SLOW[3]]}]))
        o = self.wait_status("busy", lambda s: s.get("status") == "Processing", 20, "Processing")
        self.wait_record("busy", o["status"]["startTime"])  # the edit after it (DECISIONS)
        res = self.kubectl("patch", "ic", "busy", "-n", self.ns, "--type=json", "-p", json.dumps(
            [{"op": "add", "path": "/spec/cacheSpec/0/images/-", "value": QUICK[11]}]))
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertEqual(self.ic("busy")["status"]["status"], "Processing", "the edit came during the create")
        done = self.wait_done("busy", "ImageCacheUpdate", timeout=90)
        self.assertEqual((done["status"]["status"], done["status"]["message"]), ("Succeeded", PULLED))
        for node in ("node-1", "node-2", "node-3"):
            self.assertIn(QUICK[11], self.node_images(node))
        # the create finished first, with its own Event
        reasons = [e["reason"] for e in self.events_of("busy")]
        self.assertIn("ImageCacheCreate", reasons)

    def test_10_edit_during_refresh_runs_after(self):
        obj = self.create(self.cache("redo", [{"images": SLOW[4:6]}]))
        first = self.wait_done("redo", "ImageCacheCreate", timeout=90)["status"]
        self.assertEqual(first["status"], "Succeeded", first)
        # node-2 lost both: the refresh must pull them again (6 s)
        for img in SLOW[4:6]:
            self.rmi("node-2", img)
        res = self.kubectl("annotate", "ic", "redo", "-n", self.ns, REFRESH + "=")
        self.assertEqual(res.returncode, 0, res.stderr)
        o = self.wait_status("redo", lambda s: s.get("status") == "Processing" and
                             s.get("reason") == "ImageCacheRefresh", 20, "the refresh Processing")
        # the edit once the refresh's record is there (DECISIONS: "An edit
        # before an action's record lands joins it")
        self.wait_record("redo", o["status"]["startTime"])
        res = self.kubectl("patch", "ic", "redo", "-n", self.ns, "--type=json", "-p", json.dumps(
            [{"op": "add", "path": "/spec/cacheSpec/0/images/-", "value": QUICK[12]}]))
        self.assertEqual(res.returncode, 0, res.stderr)
        st = self.ic("redo")["status"]
        self.assertEqual((st["status"], st["reason"]), ("Processing", "ImageCacheRefresh"),
                         "the edit came during the refresh")
        done = self.wait_done("redo", "ImageCacheUpdate", timeout=90)
        self.assertEqual((done["status"]["status"], done["status"]["message"]), ("Succeeded", PULLED))
        self.assertNotIn(REFRESH, done["metadata"].get("annotations") or {})
        for node in ("node-1", "node-2", "node-3"):
            self.assertIn(QUICK[12], self.node_images(node))
            for img in SLOW[4:6]:
                self.assertIn(img, self.node_images(node))
        # the refresh ended first, with its own Event
        evs = wait_until(lambda: [e for e in self.events_of("redo") if e["reason"] == "ImageCacheRefresh"] or None,
                         10, "the ImageCacheRefresh Event")
        self.assertEqual((evs[0]["type"], evs[0]["message"]), ("Normal", PULLED))
        jobs = self.jobs_by_action(obj["metadata"]["uid"])
        self.assertEqual(sorted(k for k in jobs if k[1] == "ImageCacheRefresh"), [("node-2", "ImageCacheRefresh")])
        self.assertEqual(sorted(k[0] for k in jobs if k[1] == "ImageCacheUpdate"), ["node-1", "node-2", "node-3"])

    def test_11_restart_mid_refresh(self):
        obj = self.create(self.cache("reborn", [{"images": SLOW[6:8]}]))
        uid = obj["metadata"]["uid"]
        first = self.wait_done("reborn", "ImageCacheCreate", timeout=90)["status"]
        self.assertEqual(first["status"], "Succeeded", first)
        for node in ("node-1", "node-3"):
            for img in SLOW[6:8]:
                self.rmi(node, img)
        res = self.kubectl("annotate", "ic", "reborn", "-n", self.ns, REFRESH + "=")
        self.assertEqual(res.returncode, 0, res.stderr)
        wait_until(lambda: any(k[1] == "ImageCacheRefresh" for k in self.jobs_by_action(uid)), 30,
                   "a Job of the refresh")
        self.ctl.kill()
        st = self.ic("reborn")["status"]
        self.assertEqual((st["status"], st["reason"]), ("Processing", "ImageCacheRefresh"), st)
        log("killed the controller mid-refresh; Jobs:", self.jobs_by_action(uid))
        self.ctl.start()
        self.ctl.wait_ready()
        wait_until(self.ctl.leading, 30, "the restarted controller leading")
        done = self.wait_done("reborn", "ImageCacheRefresh", timeout=90)["status"]
        self.assertEqual((done["status"], done["message"], done["startTime"]), ("Succeeded", PULLED, st["startTime"]))
        jobs = self.jobs_by_action(uid)
        self.assertEqual(sorted(k for k in jobs if k[1] == "ImageCacheRefresh"),
                         [("node-1", "ImageCacheRefresh"), ("node-3", "ImageCacheRefresh")])
        for key, names in jobs.items():
            self.assertEqual(len(names), 1, "Jobs of %s: %s" % (key, names))
        for node in ("node-1", "node-2", "node-3"):
            for img in SLOW[6:8]:
                self.assertIn(img, self.node_images(node))

    def test_07_purge_disabled(self):
        self.create(self.cache("keep", [{"images": [QUICK[6]]}]))
        first = self.wait_done("keep", "ImageCacheCreate")["status"]
        res = self.kubectl("annotate", "ic", "keep", "-n", self.ns, PURGE + "=")
        self.assertEqual(res.returncode, 0, res.stderr)
        done = self.wait_done("keep", "ImageCachePurge")
        self.assertEqual((done["status"]["status"], done["status"]["message"]), ("Failed", PURGE_DISABLED))
        # the status first, the annotation on the next pass (ic_write_sends)
        wait_until(lambda: PURGE not in (self.ic("keep")["metadata"].get("annotations") or {}), 10,
                   "the purge annotation removed")
        st = self.ic("keep")["status"]
        self.assertEqual((st["status"], st["reason"], st["message"], st["startTime"]),
                         ("Failed", "ImageCachePurge", PURGE_DISABLED, done["status"]["startTime"]))
        for node in ("node-1", "node-2", "node-3"):
            self.assertIn(QUICK[6], self.node_images(node))


class ImageCacheRunPurge(ImageCacheRunBase):
    """Purge on (--image-cache-purge-image): crictl rmi Jobs on each node."""
    CONTROLLER_ARGS = ImageCacheRunBase.CONTROLLER_ARGS + ("--image-cache-purge-image=" + CRICTL,)

    def test_01_purge_annotation_deletes(self):
        obj = self.create(self.cache("gone", [{"images": [QUICK[7]]}]))
        first = self.wait_done("gone", "ImageCacheCreate")["status"]
        self.assertEqual(first["status"], "Succeeded", first)
        res = self.kubectl("annotate", "ic", "gone", "-n", self.ns, PURGE + "=")
        self.assertEqual(res.returncode, 0, res.stderr)
        done = self.wait_done("gone", "ImageCachePurge")
        self.assertEqual((done["status"]["status"], done["status"]["message"]), ("Succeeded", DELETED),
                         done["status"])
        self.assertNotIn(PURGE, done["metadata"].get("annotations") or {})
        for node in ("node-1", "node-2", "node-3"):
            self.assertNotIn(QUICK[7], self.node_images(node))
        purges = [j for j in self.jobs_of(obj["metadata"]["uid"])
                  if j["spec"]["template"]["spec"]["containers"][0]["name"] == "rmi-0"]
        self.assertEqual(sorted(j["spec"]["template"]["spec"]["nodeName"] for j in purges),
                         ["node-1", "node-2", "node-3"])
        c = purges[0]["spec"]["template"]["spec"]["containers"][0]
        self.assertEqual((c["image"], c["command"][0], c["command"][-2:]), (CRICTL, "crictl", ["rmi", QUICK[7]]))

    def test_02_update_removing_an_image_purges_it(self):
        self.create(self.cache("shrink", [{"images": [QUICK[8], QUICK[9]]}]))
        first = self.wait_done("shrink", "ImageCacheCreate")["status"]
        self.assertEqual(first["status"], "Succeeded", first)
        res = self.kubectl("patch", "ic", "shrink", "-n", self.ns, "--type=json", "-p", json.dumps(
            [{"op": "remove", "path": "/spec/cacheSpec/0/images/1"}]))
        self.assertEqual(res.returncode, 0, res.stderr)
        done = self.wait_done("shrink", "ImageCacheUpdate")
        self.assertEqual(done["status"]["status"], "Succeeded", done["status"])
        for node in ("node-1", "node-2", "node-3"):
            images = self.node_images(node)
            self.assertIn(QUICK[8], images)
            self.assertNotIn(QUICK[9], images)


@unittest.skipUnless(os.path.exists(UPSTREAM_CRD), "no kube-fledged CRD at %s" % UPSTREAM_CRD)
class ImageCacheRunUpstreamCrd(ImageCacheRunBase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        res = cls.sim.kubectl("admin", "delete", "crd", "imagecaches.kubefledged.io", "--wait=true")
        assert res.returncode == 0, res.stderr
        res = cls.sim.kubectl("admin", "create", "-f", UPSTREAM_CRD)
        assert res.returncode == 0, res.stderr
        res = cls.sim.kubectl("admin", "wait", "--for=condition=Established",
                              "crd/imagecaches.kubefledged.io", "--timeout=30s")
        assert res.returncode == 0, res.stderr

    @unittest.skipUnless(yaml is not None and os.path.exists(SAMPLE), "no PyYAML or no sample at %s" % SAMPLE)
    def test_01_sample_then_refresh_by_put(self):
        with open(SAMPLE) as f:
            doc = yaml.safe_load(f)
        doc["metadata"]["namespace"] = self.ns
        self.create(doc)
        done = self.wait_done("imagecache1", "ImageCacheCreate", timeout=90)
        st = done["status"]
        self.assertEqual((st["status"], st["message"]), ("Succeeded", PULLED), st)
        # no /status: every status write was a PUT of the whole object
        puts = [e for c in self.ctls for e in c.proxy.writes(0) if "/imagecaches/" in e["path"]]
        self.assertTrue(puts)
        self.assertEqual({e["method"] for e in puts}, {"PUT"}, [(e["method"], e["path"]) for e in puts])
        self.assertFalse(any(e["path"].endswith("/status") for e in puts))
        # the sample's labels kept through the PUTs
        self.assertEqual(done["metadata"]["labels"], {"app": "kubefledged", "kubefledged": "imagecache"})
        res = self.kubectl("annotate", "ic", "imagecache1", "-n", self.ns, REFRESH + "=")
        self.assertEqual(res.returncode, 0, res.stderr)
        again = self.wait_done("imagecache1", "ImageCacheRefresh", timeout=90)
        self.assertEqual(again["status"]["status"], "Succeeded", again["status"])
        self.assertNotIn(REFRESH, again["metadata"].get("annotations") or {})

    def ic_puts(self, name):
        return [e for c in self.ctls for e in c.proxy.writes(0)
                if "/imagecaches/%s" % name in e["path"]]

    def test_02_missing_image_fails_by_put(self):
        self.create(self.cache("broken", [{"images": [QUICK[0], MISSING]}]))
        st = self.wait_done("broken", "ImageCacheCreate", timeout=60)["status"]
        self.assertEqual((st["status"], st["message"]), ("Failed", PULL_FAILED), st)
        self.assertEqual(sorted(st["failures"]), [MISSING], st)
        entries = st["failures"][MISSING]
        self.assertEqual(sorted(e["node"] for e in entries), ["node-1", "node-2", "node-3"])
        for e in entries:
            self.assertIn(e["reason"], ("ErrImagePull", "ImagePullBackOff"), e)
            self.assertIn("missing", e["message"], e)
        writes = self.ic_puts("broken")
        self.assertTrue(writes)
        self.assertEqual({e["method"] for e in writes}, {"PUT"}, [(e["method"], e["path"]) for e in writes])

    def test_03_concurrent_edits_survive_the_puts(self):
        self.create(self.cache("shared", [{"images": [SLOW[8]]}]))
        self.wait_status("shared", lambda s: s.get("status") == "Processing", 20, "Processing")
        # a user's edits while the controller PUTs the status (3 s of pulls)
        for args in (("label", "ic", "shared", "team=edge"), ("annotate", "ic", "shared", "note=kept")):
            res = self.kubectl(*args, "-n", self.ns)
            self.assertEqual(res.returncode, 0, res.stderr)
        self.assertEqual(self.ic("shared")["status"]["status"], "Processing", "the edits came during the create")
        done = self.wait_done("shared", "ImageCacheCreate", timeout=90)
        self.assertEqual((done["status"]["status"], done["status"]["message"]), ("Succeeded", PULLED))
        self.assertEqual(done["metadata"]["labels"].get("team"), "edge", done["metadata"])
        ann = done["metadata"]["annotations"]
        self.assertEqual(ann.get("note"), "kept", ann)
        self.assertIn(SPEC_ANN, ann)
        self.assertEqual({e["method"] for e in self.ic_puts("shared")}, {"PUT"})

    def kf_cache(self, name, images, status):
        doc = self.cache(name, [{"images": images}])
        doc["status"] = status
        return doc

    def test_04_adopts_a_cache_kube_fledged_purged(self):
        purged = {"status": "Succeeded", "reason": "ImageCachePurge", "message": DELETED,
                  "startTime": "2026-01-02T03:04:05Z", "completionTime": "2026-01-02T03:04:35Z"}
        obj = self.create(self.kf_cache("adopted", [QUICK[14]], purged))
        uid = obj["metadata"]["uid"]
        self.assertEqual(obj["status"], purged, "kube-fledged's CRD keeps a status on create")
        o = wait_until(lambda: (lambda o: o if SPEC_ANN in (o["metadata"].get("annotations") or {}) else None)(
            self.ic("adopted")), 20, "the record of the adopted cache")
        self.assertEqual(o["status"], purged, "the status as kube-fledged left it")
        self.assertEqual(self.jobs_of(uid), [])
        for node in ("node-1", "node-2", "node-3"):
            self.assertNotIn(QUICK[14], self.node_images(node), "not pulled back by the adoption")
        res = self.kubectl("patch", "ic", "adopted", "-n", self.ns, "--type=json", "-p", json.dumps(
            [{"op": "add", "path": "/spec/cacheSpec/0/images/-", "value": QUICK[15]}]))
        self.assertEqual(res.returncode, 0, res.stderr)
        done = self.wait_done("adopted", "ImageCacheUpdate")
        self.assertEqual((done["status"]["status"], done["status"]["message"]), ("Succeeded", PULLED))
        # the adoption ran nothing: only the update's Jobs (which pull what
        # the nodes miss: docs/design.md)
        jobs = self.jobs_by_action(uid)
        self.assertEqual(sorted(jobs), [(n, "ImageCacheUpdate") for n in ("node-1", "node-2", "node-3")])
        for node in ("node-1", "node-2", "node-3"):
            self.assertIn(QUICK[15], self.node_images(node))

    def test_05_aborted_by_kube_fledged_is_refreshed(self):
        aborted = {"status": "Aborted", "reason": "ImagePullAborted", "message": ABORTED_MSG,
                   "startTime": "2026-01-02T03:04:05Z"}
        self.create(self.kf_cache("cutoff", [QUICK[16]], aborted))
        done = self.wait_done("cutoff", "ImageCacheRefresh", aborted_before=True)
        self.assertEqual((done["status"]["status"], done["status"]["message"]), ("Succeeded", PULLED))
        for node in ("node-1", "node-2", "node-3"):
            self.assertIn(QUICK[16], self.node_images(node))


class ImageCacheRunRequeue(ImageCacheRunBase):
    """The periodic refresh on time: --image-cache-refresh-frequency=8s under
    a --resync-period of 60s (the plan's requeue time wakes a pass)."""
    PERIOD = 8  # past the 3 s and 5 s holds of a write, which end in a pass (RECENT_*_NS)
    CONTROLLER_ARGS = ImageCacheRunBase.CONTROLLER_ARGS + (
        "--resync-period=60s", "--image-cache-refresh-frequency=%ds" % PERIOD)

    def test_01_periodic_refresh_on_time(self):
        self.create(self.cache("tick", [{"images": [QUICK[13]]}]))
        st = self.wait_done("tick", "ImageCacheCreate")["status"]
        self.assertEqual(st["status"], "Succeeded", st)
        done = clock_parse(st["completionTime"])
        for cycle in range(2):
            # the next refresh: its startTime after the last completionTime
            o = self.wait_status("tick", lambda s: s.get("reason") == "ImageCacheRefresh" and
                                 clock_parse(s.get("startTime")) > done, 20, "refresh %d started" % cycle)
            start = clock_parse(o["status"]["startTime"])
            log("refresh %d started %ds after the completion before" % (cycle, start - done))
            self.assertGreaterEqual(start - done, self.PERIOD)
            self.assertLessEqual(start - done, self.PERIOD + 2, "on time, not a resync later")
            st = self.wait_done("tick", "ImageCacheRefresh")["status"]
            self.assertEqual((st["status"], st["startTime"]), ("Succeeded", o["status"]["startTime"]), st)
            done = clock_parse(st["completionTime"])
