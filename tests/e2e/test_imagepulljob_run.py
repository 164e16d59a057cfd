"""Issue 20: ota-controller runs OpenKruise ImagePullJobs (the lead's design
D1-D11), driven as an admin would, with the real kubectl, through the
registered webhook (the overlay manifests/overlays/imagepulljob rendered by
certs/render-manifests.sh, so the controller runs with the RBAC manifests/
grants it).

ImagePullJobRun (our CRD, 6 nodes), one namespace per test:
  01 Kruise's documentation sample (v1.8, read from ../shared/upstream/kruise
     at run time, its selector's matchLabels dropped: Kruise's own webhook
     refuses names with labels) -> desired/succeeded, "job has completed",
     one Job per selected node named ota-ipj-<name>-<16 hex>, controlled by
     the ImagePullJob, pod pinned to the node, deadline timeout x (backoff+1)
     + 60; `kubectl get imagepulljobs` shows it
  03 a missing image fails fast: failed = desired, failedNodes sorted, one
     Warning PullImageFailed Event per node with the kubelet's message, long
     before timeoutSeconds
  04 parallelism 2 over 6 nodes: never more than 2 of its Jobs unfinished at
     once (every Job write replayed in order), all succeed
  05 a node NotReady mid-job waits (no Job, not failed, PrePullQueued) and is
     pulled once Ready
  06 completionPolicy Never follows a node labelled with kubectl label, and
     never completes
  07 ttlSecondsAfterFinished deletes the completed ImagePullJob (and the
     collector its Jobs)
  08 the controller SIGKILLed mid-job and started again: one Job per node,
     same outcome; a never-completing job's PullImageFailed Events, asked
     again by the restarted controller, answered 409: each Event once
  10 `kubectl get imagepulljobs` columns and values, `kubectl describe
     imagepulljob` shows the Events
  11 an image edit after completion runs again: completionTime cleared, new
     Jobs (the old ones deleted), completes again at the new generation
  12 Kruise's finalizer apps.kruise.io/deletion-protection: removed once
     complete; a running ImagePullJob carrying it is deleted without hanging
  13 completionPolicy.activeDeadlineSeconds: "job exceeds
     activeDeadlineSeconds", the nodes not done failed, the running Job deleted
ImagePullJobRunExamples: the project's own docs/examples/imagepulljob-*.yaml,
  each applied unchanged with kubectl -n <ns> -f, on nodes labelled as they
  select (two named store-01, store-02) with the Secrets they name: the
  Always ones complete (succeeded == desired, one Job per node, the deadline
  their comments compute), the Never ones reach "job is running, progress
  100.0%" and stay running, the pull-secrets example's Jobs carry its
  Secret as imagePullSecrets (the registry refuses the image without it)
ImagePullJobRunKruise19 / ImagePullJobRunKruise18: Kruise's v1.9.0 CRD (both
  versions served, v1beta1 stored) or v1.8.4's (v1alpha1 only) applied
  unchanged, and that version's documentation sample(s) run to completion
  (skipped without ../shared/upstream/kruise, or $OTA_UPSTREAM_KRUISE).
ImagePullJobRunLeaders: two replicas; the follower writes nothing, the leader
  is killed mid-job, the other carries on: one Job per node; the Events the
  new leader asks again are 409s: each Event once.

Time: kubesim runs at harness.SCALE (30) simulated seconds per real second, so
a 100 MB image takes 10 simulated seconds (0.3 s) and a 600 MB one 60 (2 s);
the controller's own timers (ttlSecondsAfterFinished) are real seconds.
Every wait is bounded.
"""
import copy
import json
import os
import re
import threading
import time
import unittest
import urllib.parse

from harness import MISSING, REG, REGISTRY_CONFIG, ApiError, log, wait_until, watch_once
from test_imagepulljob import EXAMPLES, ImagePullJobBase, UPSTREAM

try:
    import yaml
except ImportError:  # Debian's python3-yaml; only the sample tests need it
    yaml = None

SAMPLES = os.path.join(UPSTREAM, "docs-samples")
SAMPLE_V18 = os.path.join(SAMPLES, "imagepulljob.md-v1.8-job-with-always.v1alpha1.yaml")
SAMPLE_V19 = os.path.join(SAMPLES, "imagepulljob.md-v1.9-job-with-always.v1beta1.yaml")
KRUISE = "/apis/apps.kruise.io/v1alpha1"
FINALIZER = "apps.kruise.io/deletion-protection"
MANAGED_BY = "app.kubernetes.io/managed-by"
COMPLETED = "job has completed"
PROGRESS = re.compile(r"^job is running, (progress \d+\.\d%|no progress)$")

SAMPLE_IMAGE = "nginx:1.9.1"  # what Kruise's samples pull
QUICK = [REG + "/ipj/app-%02d:1.0" % i for i in range(1, 31)]  # 100 MB: 10 simulated s
SLOW = [REG + "/ipj/slow-%02d:1.0" % i for i in range(1, 11)]  # 600 MB: 60 simulated s (2 real)
REGISTRY = copy.deepcopy(REGISTRY_CONFIG)
REGISTRY["images"] = REGISTRY["images"] + [{"image": SAMPLE_IMAGE, "size": 50_000_000}] + \
    [{"image": i, "size": 100_000_000} for i in QUICK] + [{"image": i, "size": 600_000_000} for i in SLOW]


def finished(job):
    """A Job's outcome once decided (interim or terminal condition):
    "Complete" or "Failed"; None while it runs."""
    types = {c.get("type") for c in (job.get("status") or {}).get("conditions") or [] if c.get("status") == "True"}
    if types & {"Failed", "FailureTarget"}:
        return "Failed"
    if types & {"Complete", "SuccessCriteriaMet"}:
        return "Complete"
    return None


def job_node(job):
    return job["spec"]["template"]["spec"].get("nodeName")


def pull_container(job):
    spec = job["spec"]["template"]["spec"]
    for c in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        if c["name"] == "pull-0":
            return c
    return None


class Watch(threading.Thread):
    """Every ADDED/MODIFIED/DELETED of the objects at path (a list path), in
    the order the apiserver sent them: a list first, then a watch from its
    resourceVersion, relisting (and marking a gap) on 410 or an error."""

    def __init__(self, sim, path):
        super().__init__(daemon=True)
        self.sim, self.path = sim, path
        self.lock = threading.Lock()
        self.events = []  # (monotonic time, type, object)
        self.stopping = False
        self.gaps = 0
        self.synced = threading.Event()
        self.start()
        assert self.synced.wait(20), "watch of %s did not sync" % path

    def _add(self, kind, obj):
        with self.lock:
            self.events.append((time.monotonic(), kind, obj))

    def snapshot(self):
        with self.lock:
            return list(self.events)

    def objects(self, name):
        """Every version seen of the object called name."""
        return [o for _, k, o in self.snapshot() if o["metadata"]["name"] == name and k != "DELETED"]

    def run(self):
        rv = None
        while not self.stopping:
            try:
                if rv is None:
                    lst = self.sim.get(self.path, timeout=10)
                    if self.synced.is_set():
                        self.gaps += 1
                    for item in lst["items"]:
                        self._add("ADDED", item)
                    rv = lst["metadata"]["resourceVersion"]
                    self.synced.set()
                rv = self._watch(rv)
            except Exception:  # noqa: BLE001 - a probe failed: list again
                rv = None
                time.sleep(0.1)

    def _watch(self, rv):
        return watch_once(self.sim, self.path, rv, lambda: self.stopping, self._add)

    def stop(self):
        self.stopping = True


class ImagePullJobRunBase(ImagePullJobBase):
    """The webhook and the overlay with ImagePullJob (ImagePullJobBase), a
    registry with the images these tests pull, and helpers."""
    NODES = 6
    REGISTRY = REGISTRY
    CONTROLLER_ARGS = ("--imagepulljobs",)  # what the overlay's Deployment patch adds

    def kubectl(self, *args, stdin=None, timeout=60):
        return self.sim.kubectl("admin", *args, stdin=stdin, timeout=timeout)

    def completed_generation(self, name, generation, timeout=10):
        """Waits for the annotation D7 sets on completion."""
        def check():
            o = self.ipj(name)
            return o if (o["metadata"].get("annotations") or {}).get(
                "ota-prepull/completed-generation") == str(generation) else None
        return wait_until(check, timeout, "%s: completed-generation %s" % (name, generation))

    # --- objects
    def cr(self, name, image, names=None, labels=None, parallelism=None, never=False, deadline=None, ttl=None,
           timeout=None, backoff=None, finalizers=None, version="v1alpha1"):
        spec = {"image": image}
        if names is not None:
            spec["selector"] = {"names": list(names)}
        elif labels is not None:
            spec["selector"] = {"matchLabels": dict(labels)}
        if parallelism is not None:
            spec["parallelism"] = parallelism
        cp = {"type": "Never" if never else "Always"}
        if deadline is not None:
            cp["activeDeadlineSeconds"] = deadline
        if ttl is not None:
            cp["ttlSecondsAfterFinished"] = ttl
        spec["completionPolicy"] = cp
        if timeout is not None or backoff is not None:
            spec["pullPolicy"] = {k: v for k, v in (("timeoutSeconds", timeout), ("backoffLimit", backoff))
                                  if v is not None}
        meta = {"name": name, "namespace": self.ns}
        if finalizers:
            meta["finalizers"] = list(finalizers)
        return {"apiVersion": "apps.kruise.io/" + version, "kind": "ImagePullJob", "metadata": meta, "spec": spec}

    def apply(self, doc):
        res = self.kubectl("apply", "-f", "-", stdin=json.dumps(doc))
        self.assertEqual(res.returncode, 0, "kubectl apply: %s%s" % (res.stdout, res.stderr))
        return self.ipj(doc["metadata"]["name"])

    def ipj_path(self, name=None):
        return "%s/namespaces/%s/imagepulljobs%s" % (KRUISE, self.ns, "/" + name if name else "")

    def ipj(self, name):
        """The object as the controller reads it (v1alpha1), or None when gone."""
        try:
            return self.sim.get(self.ipj_path(name))
        except ApiError as e:
            if e.status == 404:
                return None
            raise

    def watch(self, path):
        w = Watch(self.sim, path)
        self.addCleanup(w.stop)
        return w

    def watch_ipjs(self):
        return self.watch(self.ipj_path())

    def watch_jobs(self):
        return self.watch("/apis/batch/v1/namespaces/%s/jobs" % self.ns)

    def wait_status(self, name, pred, timeout, what):
        def check():
            o = self.ipj(name)
            return o if o is not None and pred(o.get("status") or {}) else None
        try:
            return wait_until(check, timeout, "%s: %s" % (name, what), interval=0.1)
        except AssertionError:
            raise AssertionError("%s: %s not reached in %gs; status now %s; controller log:\n%s" % (
                name, what, timeout, json.dumps((self.ipj(name) or {}).get("status")), self.ctl_tail()))

    def ctl_tail(self):
        return "\n".join(c.tail(15) for c in self.ctls)

    def ipj_writes(self, since, name=None):
        """The controllers' writes of ImagePullJobs since (monotonic), as
        their proxies saw them: for failure messages."""
        out = []
        for c in self.ctls:
            for e in c.proxy.writes(since):
                if "/imagepulljobs" in e["path"] and (name is None or "/imagepulljobs/%s" % name in e["path"]):
                    body = e["body"].decode(errors="replace") if isinstance(e["body"], bytes) else e["body"]
                    out.append("%.2f %s %s %s %s" % (e["t"] - since, e["method"], e["path"].split("/imagepulljobs/")[-1],
                                                     e["status"], body[:400]))
        return "\n".join(out)

    def wait_completed(self, name, timeout=30):
        return self.wait_status(name, lambda s: s.get("completionTime") and s.get("message") == COMPLETED,
                                timeout, "completed")

    def jobs_of(self, uid):
        """Every Job ever owned by the ImagePullJob uid (the class's JobTracker
        saw them all, deleted ones too)."""
        return [j for j in self.tracker.all_jobs()
                if any(r.get("uid") == uid for r in j["metadata"].get("ownerReferences") or [])]

    def jobs_per_node(self, uid):
        out = {}
        for j in self.jobs_of(uid):
            out.setdefault(job_node(j), []).append(j)
        return out

    def assert_one_job_per_node(self, uid, nodes):
        per = self.jobs_per_node(uid)
        self.assertEqual(sorted(per), sorted(nodes), "nodes with Jobs")
        for node, jobs in sorted(per.items()):
            self.assertEqual(len(jobs), 1, "Jobs on %s: %s" % (node, [j["metadata"]["name"] for j in jobs]))

    def assert_unique_names(self, uid):
        """No Job name was used twice (a Job deleted and made again)."""
        names = [j["metadata"]["name"] for j in self.jobs_of(uid)]
        self.assertEqual(sorted(names), sorted(set(names)), "a Job name used twice")

    def set_ready(self, node, status):
        """The Node's Ready condition as its kubelet would post it (the
        simulated kubelet writes only status.images afterwards)."""
        n = self.sim.get("/api/v1/nodes/" + node)
        conds = [dict(c, status=status, reason="KubeletReady" if status == "True" else "KubeletNotReady")
                 if c["type"] == "Ready" else c for c in n["status"]["conditions"]]
        self.sim.call("PATCH", "/api/v1/nodes/%s/status" % node, {"status": {"conditions": conds}},
                      ctype="application/merge-patch+json")

    def events_of(self, name):
        sel = urllib.parse.quote("involvedObject.name=%s,involvedObject.kind=ImagePullJob" % name)
        return self.sim.get("/api/v1/namespaces/%s/events?fieldSelector=%s" % (self.ns, sel))["items"]

    def assert_events_once(self, *names):
        """Every Event on the ImagePullJobs called names, by (reason,
        involvedObject, message): each is one object with count 1 (Events
        are named from their keys, so one asked again after a restart or by
        a new leader is a 409, not a second Event).  The keys, with each
        Event's name."""
        out = {}
        for name in names:
            for e in self.events_of(name):
                io = e["involvedObject"]
                key = (e["reason"], io.get("kind"), io.get("namespace"), io.get("name"), io.get("uid"),
                       e["message"])
                if key in out:
                    self.fail("an Event posted twice: %s and %s (%s on %s: %s)" % (
                        out[key], e["metadata"]["name"], key[0], key[3], key[5]))
                self.assertEqual(e.get("count", 1), 1, "Event %s: %s" % (e["metadata"]["name"], e))
                out[key] = e["metadata"]["name"]
        return out

    def wait_failed_events(self, name, n, timeout=20):
        """Waits for n PullImageFailed Events on the ImagePullJob name (one
        per node)."""
        return wait_until(lambda: len({e["message"] for e in self.events_of(name)
                                       if e["reason"] == "PullImageFailed"}) >= n or None,
                          timeout, "%s: %d PullImageFailed Events" % (name, n))

    def assert_events_asked_again(self, ctl, since, n, *names, timeout=15):
        """After a restart or handover at since (monotonic): waits for ctl
        to ask again for the n Events it was asked for before (n Event
        creates answered), then checks each Event is on the apiserver once
        (assert_events_once) and every create ctl sent since was a 409 (the
        apiserver had it already), not a second Event.  Only the Events
        on the ImagePullJobs names count.  The keys."""
        def about(e):
            try:
                return json.loads(e["body"])["involvedObject"]["name"]
            except (ValueError, KeyError, TypeError):
                return None
        def creates():
            return [e for e in ctl.proxy.writes(since)
                    if e["method"] == "POST" and e["path"].split("?")[0].endswith("/events")
                    and e["status"] is not None and about(e) in names]
        def said():
            return "Event creates since:\n%s\n%s" % (
                "\n".join("%.2f %s %s" % (e["t"] - since, e["path"], e["status"]) for e in creates()),
                self.ctl_tail())
        try:
            wait_until(lambda: len(creates()) >= n, timeout, "%d Events asked again" % n)
        except AssertionError:
            raise AssertionError("the Events were not asked again: the test proves nothing; " + said())
        keys = self.assert_events_once(*names)
        self.assertEqual([e["status"] for e in creates()], [409] * len(creates()), said())
        return keys

    def assert_messages_well_formed(self, versions):
        for o in versions:
            msg = (o.get("status") or {}).get("message")
            if msg is not None:
                self.assertTrue(msg == COMPLETED or PROGRESS.match(msg), "status.message %r" % msg)

    def get_rows(self):
        res = self.kubectl("get", "imagepulljobs", "-n", self.ns)
        self.assertEqual(res.returncode, 0, res.stderr)
        lines = res.stdout.splitlines()
        return lines[0].split(), {ln.split()[0]: ln.split() for ln in lines[1:]}

    # --- Kruise's documentation sample, as its user manual shows it
    def sample(self, path, name=None):
        """The sample at path, read now (never copied into the repository),
        put in this test's namespace; its selector's matchLabels dropped
        (Kruise's own webhook refuses names and labels together, and so
        does ours)."""
        if yaml is None:
            self.skipTest("PyYAML (python3-yaml) is not installed")
        with open(path) as f:
            doc = yaml.safe_load(f)
        doc["spec"]["selector"].pop("matchLabels", None)
        doc["metadata"]["namespace"] = self.ns
        if name:
            doc["metadata"]["name"] = name
        return doc

    def check_sample(self, doc):
        """Runs the sample and checks its outcome and its Jobs."""
        name = doc["metadata"]["name"]
        t0 = time.monotonic()
        obj = self.apply(doc)
        uid = obj["metadata"]["uid"]
        done = self.wait_completed(name, 40)
        log("%s completed in %.1fs" % (name, time.monotonic() - t0))
        st = done["status"]
        self.assertEqual((st["desired"], st.get("succeeded"), st.get("failed", 0), st.get("active", 0)),
                         (2, 2, 0, 0), st)
        self.assertFalse(st.get("failedNodes"), st)
        self.assertTrue(st.get("startTime"), st)
        self.assertLessEqual(st["startTime"], st["completionTime"])
        self.assert_one_job_per_node(uid, ["node-1", "node-2"])
        hashes = set()
        for node, (job,) in sorted(self.jobs_per_node(uid).items()):
            m = job["metadata"]
            self.assertRegex(m["name"], r"^ota-ipj-%s-[0-9a-f]{16}$" % re.escape(name))
            self.assertEqual(m["namespace"], self.ns)
            refs = [r for r in m.get("ownerReferences") or [] if r.get("controller")]
            self.assertEqual(len(refs), 1, m.get("ownerReferences"))
            self.assertEqual({k: refs[0].get(k) for k in ("apiVersion", "kind", "name", "uid")},
                             {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "ImagePullJob", "name": name,
                              "uid": uid})
            self.assertEqual(m["labels"].get(MANAGED_BY), "ota-prepull")
            hashes.add(m["annotations"].get("ota-prepull/spec-hash"))
            # timeoutSeconds 300, backoffLimit 3: 300 x 4 + 60
            self.assertEqual(job["spec"].get("activeDeadlineSeconds"), 1260)
            c = pull_container(job)
            self.assertIsNotNone(c, "no pull-0 container in %s" % m["name"])
            self.assertEqual((c["image"], c.get("imagePullPolicy")), (SAMPLE_IMAGE, "IfNotPresent"))
            self.assertEqual(finished(job), "Complete", "%s on %s" % (m["name"], node))
        self.assertEqual(len(hashes), 1, hashes)
        self.assertRegex(hashes.pop() or "", r"^[0-9a-f]{8}$")
        # the node has the image now
        wait_until(lambda: "docker.io/library/nginx:1.9.1" in [
            n for i in self.sim.get("/api/v1/nodes/node-1")["status"].get("images") or [] for n in i["names"]],
            10, "nginx:1.9.1 in node-1's images")
        return done


class ImagePullJobRun(ImagePullJobRunBase):
    @unittest.skipUnless(os.path.exists(SAMPLE_V18), "no Kruise sample at %s" % SAMPLE_V18)
    def test_01_kruise_sample(self):
        done = self.check_sample(self.sample(SAMPLE_V18))
        head, rows = self.get_rows()
        self.assertEqual(head, ["NAME", "TOTAL", "ACTIVE", "SUCCEED", "FAILED", "AGE", "MESSAGE"])
        row = rows["job-with-always"]
        self.assertEqual(row[1:5] + row[6:], ["2", "0", "2", "0"] + COMPLETED.split())
        self.completed_generation("job-with-always", done["metadata"]["generation"])

    def test_03_missing_image_fails_fast(self):
        nodes = ["node-3", "node-1", "node-2"]  # not in order: failedNodes is sorted
        t0 = time.monotonic()
        obj = self.apply(self.cr("missing", MISSING, names=nodes, parallelism=3, timeout=3600, backoff=3))
        done = self.wait_completed("missing", 30)
        took = time.monotonic() - t0
        log("missing image: completed in %.1fs" % took)
        st = done["status"]
        self.assertEqual((st["desired"], st.get("succeeded", 0), st.get("failed"), st.get("active", 0)),
                         (3, 0, 3, 0), st)
        self.assertEqual(st.get("failedNodes"), ["node-1", "node-2", "node-3"])
        # 3600 simulated seconds of timeout are 120 real ones: not waited for
        self.assertLess(took, 30)
        self.assert_one_job_per_node(obj["metadata"]["uid"], nodes)
        for node, (job,) in sorted(self.jobs_per_node(obj["metadata"]["uid"]).items()):
            self.assertEqual(finished(job), "Failed", "%s on %s" % (job["metadata"]["name"], node))
            ann = job["metadata"].get("annotations") or {}
            self.assertIn(ann.get("ota-prepull/given-up-reason"), ("ErrImagePull", "ImagePullBackOff"), ann)
            self.assertIn("not found", ann.get("ota-prepull/given-up-message", ""), ann)
        def warnings():
            evs = [e for e in self.events_of("missing") if e["reason"] == "PullImageFailed"]
            return evs if len({e["message"] for e in evs}) >= 3 else None
        evs = wait_until(warnings, 10, "a PullImageFailed Event per node")
        by_node = {}
        for e in evs:
            self.assertEqual(e["type"], "Warning")
            self.assertEqual(e["involvedObject"].get("uid"), obj["metadata"]["uid"])
            m = re.match(r"^Failed to pull image (\S+) on node (\S+) for (\w+): (.*)$", e["message"])
            self.assertIsNotNone(m, e["message"])
            self.assertEqual(m.group(1), MISSING)
            by_node.setdefault(m.group(2), []).append(e)
            self.assertIn(m.group(3), ("ErrImagePull", "ImagePullBackOff"), e["message"])
            # the kubelet's words
            self.assertIn('rpc error: code = NotFound desc = failed to pull and unpack image "%s"' % MISSING,
                          m.group(4))
        self.assertEqual(sorted(by_node), ["node-1", "node-2", "node-3"])
        for node, es in by_node.items():
            self.assertEqual(sum(e.get("count", 1) for e in es), 1, "Events for %s: %s" % (node, es))

    def test_04_parallelism_two_over_six_nodes(self):
        jobs = self.watch_jobs()
        ipjs = self.watch_ipjs()
        t0 = time.monotonic()
        obj = self.apply(self.cr("par", SLOW[0], parallelism=2))
        done = self.wait_completed("par", 60)
        took = time.monotonic() - t0
        st = done["status"]
        self.assertEqual((st["desired"], st.get("succeeded"), st.get("failed", 0)), (6, 6, 0), st)
        self.assert_one_job_per_node(obj["metadata"]["uid"], ["node-%d" % i for i in range(1, 7)])
        # replay every write of its Jobs, in order: how many were unfinished at once
        state, most, samples = {}, 0, []
        for _, kind, j in jobs.snapshot():
            uid = j["metadata"]["uid"]
            if kind == "DELETED":
                state.pop(uid, None)
            else:
                state[uid] = j
            n = sum(1 for x in state.values() if not finished(x) and not x["metadata"].get("deletionTimestamp"))
            samples.append(n)
            most = max(most, n)
        self.assertEqual(jobs.gaps, 0, "the Job watch lost history: the replay is incomplete")
        log("parallelism 2: at most %d Jobs running over %d writes, %.1fs" % (most, len(samples), took))
        self.assertEqual(most, 2, "Jobs running at once (parallelism 2)")
        # 6 pulls of 2 s, 2 at a time: at least 3 rounds
        self.assertGreater(took, 5.0)
        self.assert_messages_well_formed(ipjs.objects("par"))
        self.assertTrue(any(((o.get("status") or {}).get("message") or "").startswith("job is running, progress ")
                            for o in ipjs.objects("par")), "no progress was shown")

    def test_05_not_ready_node_waits(self):
        nodes = ["node-4", "node-5", "node-6"]
        ipjs = self.watch_ipjs()
        obj = self.apply(self.cr("ready", SLOW[1], names=nodes, parallelism=1))
        uid = obj["metadata"]["uid"]
        first = wait_until(lambda: self.jobs_of(uid), 15, "the first Job")
        # a node not reached yet (parallelism 1, 2 s per pull) goes NotReady
        idle = [n for n in nodes if n not in {job_node(j) for j in self.jobs_of(uid)}]
        self.assertEqual(len(idle), 2, [j["metadata"]["name"] for j in first])
        down = idle[-1]
        self.set_ready(down, "False")
        self.addCleanup(self.set_ready, down, "True")
        t_down = time.monotonic()
        self.wait_status("ready", lambda s: s.get("succeeded") == 2, 30, "the two Ready nodes pulled")
        time.sleep(max(0.0, t_down + 4 - time.monotonic()))  # and some more passes
        st = self.ipj("ready")["status"]
        self.assertEqual((st["desired"], st.get("succeeded"), st.get("failed", 0), st.get("active")),
                         (3, 2, 0, 1), st)
        self.assertNotIn(down, st.get("failedNodes") or [])
        self.assertFalse(st.get("completionTime"), st)
        self.assertNotIn(down, self.jobs_per_node(uid), "a Job for a NotReady node")
        queued = [e for e in self.events_of("ready") if e["reason"] == "PrePullQueued"]
        self.assertTrue(any(down in e["message"] and e["type"] == "Normal" for e in queued),
                        "no PrePullQueued Event for %s: %s" % (down, [e["message"] for e in queued]))
        self.set_ready(down, "True")
        done = self.wait_completed("ready", 30)
        st = done["status"]
        self.assertEqual((st["desired"], st.get("succeeded"), st.get("failed", 0)), (3, 3, 0), st)
        self.assert_one_job_per_node(uid, nodes)
        self.assertFalse(any((o.get("status") or {}).get("failed") for o in ipjs.objects("ready")),
                         "a node counted failed on the way")

    def test_06_never_follows_a_labelled_node(self):
        label = "ipj-e2e-follow"
        ipjs = self.watch_ipjs()
        for node in ("node-1", "node-2"):
            self.addCleanup(self.kubectl, "label", "node", node, label + "-")
        res = self.kubectl("label", "node", "node-1", label + "=yes")
        self.assertEqual(res.returncode, 0, res.stderr)
        # parallelism as an integer string (int-or-string, as docs/examples/imagepulljob-never-pods.yaml)
        obj = self.apply(self.cr("never", QUICK[0], labels={label: "yes"}, never=True, parallelism="2"))
        self.addCleanup(self.kubectl, "delete", "imagepulljob", "never", "-n", self.ns, "--wait=false")
        self.wait_status("never", lambda s: s.get("desired") == 1 and s.get("succeeded") == 1, 20,
                         "node-1 pulled")
        res = self.kubectl("label", "node", "node-2", label + "=yes")
        self.assertEqual(res.returncode, 0, res.stderr)
        t_label = time.monotonic()
        self.wait_status("never", lambda s: s.get("desired") == 2 and s.get("succeeded") == 2, 20,
                         "the newly labelled node-2 pulled")
        log("node-2 followed in %.1fs" % (time.monotonic() - t_label))
        time.sleep(3)  # a few more passes: still never completes
        versions = ipjs.objects("never")
        self.assertFalse([o for o in versions if (o.get("status") or {}).get("completionTime")],
                         "a Never job completed")
        st = self.ipj("never")["status"]
        self.assertEqual(st.get("message"), "job is running, progress 100.0%")
        self.assertEqual(st.get("failed", 0), 0)
        self.assert_messages_well_formed(versions)
        self.assert_one_job_per_node(obj["metadata"]["uid"], ["node-1", "node-2"])

    def test_07_ttl_deletes_the_completed_job(self):
        ipjs = self.watch_ipjs()
        obj = self.apply(self.cr("ttl", QUICK[1], names=["node-1"], ttl=3))
        uid = obj["metadata"]["uid"]
        wait_until(lambda: any((o.get("status") or {}).get("message") == COMPLETED for o in ipjs.objects("ttl")),
                   30, "ttl completed")
        t_done = time.monotonic()
        wait_until(lambda: self.ipj("ttl") is None, 30, "the ImagePullJob deleted by its TTL")
        log("deleted %.1fs after completion was seen (ttlSecondsAfterFinished 3)" % (time.monotonic() - t_done))
        gone = [o for _, k, o in ipjs.snapshot() if k == "DELETED" and o["metadata"]["uid"] == uid]
        self.assertEqual(len(gone), 1)
        self.assertEqual(gone[0]["status"].get("succeeded"), 1)
        wait_until(lambda: not self.live_jobs(), 20, "its Jobs collected")

    def test_08_controller_restart_mid_job(self):
        # a missing image on nodes 5 and 6, never completing: its failed
        # nodes are decided again by the restarted controller, and their
        # PullImageFailed Events asked again
        self.apply(self.cr("restart-missing", MISSING, names=["node-5", "node-6"], parallelism=2, never=True,
                           timeout=3600))
        self.wait_failed_events("restart-missing", 2)
        nodes = ["node-1", "node-2", "node-3", "node-4"]
        obj = self.apply(self.cr("restart", SLOW[2], names=nodes, parallelism=1))
        uid = obj["metadata"]["uid"]
        # the second node's Job running: kill the controller then
        wait_until(lambda: len(self.jobs_of(uid)) >= 2 and any(not finished(j) for j in self.jobs_of(uid)), 30,
                   "the second Job running")
        self.ctl.kill()
        running = [j["metadata"]["name"] for j in self.live_jobs() if not finished(j)]
        log("killed the controller; running:", running)
        self.assertTrue(running, "nothing was running at the kill: the test proves nothing")
        before = self.assert_events_once("restart", "restart-missing")
        self.assertEqual(sum(k[0] == "PullImageFailed" for k in before), 2, before)
        time.sleep(1)
        t_start = time.monotonic()
        self.ctl.start()
        self.ctl.wait_ready()
        wait_until(self.ctl.leading, 30, "the restarted controller leading")
        done = self.wait_completed("restart", 60)
        st = done["status"]
        self.assertEqual((st["desired"], st.get("succeeded"), st.get("failed", 0)), (4, 4, 0), st)
        self.assert_one_job_per_node(uid, nodes)
        self.assert_unique_names(uid)
        # no Event posted twice: the two asked again were 409s
        after = self.assert_events_asked_again(self.ctl, t_start, 2, "restart", "restart-missing")
        self.assertEqual({k: after.get(k) for k in before}, before, "Events before the restart, after it")

    def test_10_kubectl_get_and_describe(self):
        self.apply(self.cr("fine", QUICK[2], names=["node-1", "node-2"], parallelism=2))
        self.apply(self.cr("broken", MISSING, names=["node-1", "node-2"], parallelism=2, timeout=3600))
        self.wait_completed("fine")
        self.wait_completed("broken")
        head, rows = self.get_rows()
        self.assertEqual(head, ["NAME", "TOTAL", "ACTIVE", "SUCCEED", "FAILED", "AGE", "MESSAGE"])
        self.assertEqual(rows["fine"][1:5] + rows["fine"][6:], ["2", "0", "2", "0"] + COMPLETED.split())
        self.assertEqual(rows["broken"][1:5] + rows["broken"][6:], ["2", "0", "0", "2"] + COMPLETED.split())
        self.assertRegex(rows["fine"][5], r"^\d+(s|m\d*s?)$")

        def described():
            res = self.kubectl("describe", "imagepulljob", "broken", "-n", self.ns)
            self.assertEqual(res.returncode, 0, res.stderr)
            lines = [ln.split(None, 4) for ln in res.stdout.split("\nEvents:\n", 1)[-1].splitlines()]
            rows = [ln for ln in lines if len(ln) == 5 and ln[1] == "PullImageFailed"]
            return (res.stdout, rows) if len(rows) >= 2 else None
        text, evs = wait_until(described, 10, "describe showing two PullImageFailed Events")
        self.assertIn("Failed:", text)
        for node in ("node-1", "node-2"):
            self.assertTrue(any(e[0] == "Warning" and e[3] == "ota-controller"
                                and e[4].startswith("Failed to pull image %s on node %s for " % (MISSING, node))
                                for e in evs), "describe's Events: %s" % evs)

    def test_11_edit_after_completion_runs_again(self):
        ipjs = self.watch_ipjs()
        obj = self.apply(self.cr("edit", QUICK[3], names=["node-1", "node-2"], parallelism=2))
        uid = obj["metadata"]["uid"]
        first = self.wait_completed("edit")
        self.completed_generation("edit", 1)
        old = {j["metadata"]["uid"] for j in self.jobs_of(uid)}
        self.assertEqual(len(old), 2)
        n_before = len(ipjs.snapshot())
        t_edit = time.monotonic()
        # Edited right after the completion's status write, to a 2 s pull:
        # the re-run ends while that write's key is still held back (the
        # executor's 3 s), which must not lose the re-run's status (an edit
        # made 4 s later is written; this one was not, 2026-11-27)
        res = self.kubectl("patch", "imagepulljob", "edit", "-n", self.ns, "--type=merge",
                           "-p", json.dumps({"spec": {"image": SLOW[5]}}))
        self.assertEqual(res.returncode, 0, res.stderr)

        def again():
            o = self.ipj("edit")
            ann = (o["metadata"].get("annotations") or {}).get("ota-prepull/completed-generation")
            st = o.get("status") or {}
            return o if ann == "2" and st.get("message") == COMPLETED and \
                st.get("completionTime", "") > first["status"]["completionTime"] else None
        try:
            done = wait_until(again, 30, "completed again at generation 2")
        except AssertionError:
            o = self.ipj("edit")
            raise AssertionError("not completed again at generation 2 in 30s: annotations %s, status %s; Jobs %s;"
                                 "\nthe controller's writes since the edit:\n%s" % (
                                     o["metadata"].get("annotations", {}).get("ota-prepull/completed-generation"),
                                     json.dumps(o.get("status")),
                                     [(j["metadata"]["name"], job_node(j), finished(j), pull_container(j)["image"])
                                      for j in self.jobs_of(uid)], self.ipj_writes(t_edit)))
        later = [o for _, k, o in ipjs.snapshot()[n_before:] if k != "DELETED"]
        self.assertTrue(any(not (o.get("status") or {}).get("completionTime") for o in later),
                        "completionTime never cleared after the edit: %s\nthe controller's writes since the edit:\n%s"
                        % ([(o["metadata"].get("annotations"), o.get("status")) for o in later],
                           self.ipj_writes(t_edit)))
        self.assertEqual(done["metadata"]["generation"], 2)
        st = done["status"]
        self.assertEqual((st["desired"], st.get("succeeded"), st.get("failed", 0)), (2, 2, 0), st)
        self.assertGreaterEqual(st["startTime"], first["status"]["completionTime"])
        new = [j for j in self.jobs_of(uid) if j["metadata"]["uid"] not in old]
        self.assertEqual(sorted(job_node(j) for j in new), ["node-1", "node-2"])
        self.assertEqual({pull_container(j)["image"] for j in new}, {SLOW[5]})
        old_hash = {j["metadata"]["annotations"]["ota-prepull/spec-hash"] for j in self.jobs_of(uid)
                    if j["metadata"]["uid"] in old}
        new_hash = {j["metadata"]["annotations"]["ota-prepull/spec-hash"] for j in new}
        self.assertEqual(len(new_hash), 1)
        self.assertNotEqual(old_hash, new_hash)

    def test_12_kruise_finalizer(self):
        # completed: the controller drops the finalizer, deletion is immediate
        self.apply(self.cr("kept", QUICK[5], names=["node-1"], finalizers=[FINALIZER]))
        self.wait_completed("kept")
        wait_until(lambda: FINALIZER not in (self.ipj("kept")["metadata"].get("finalizers") or []), 10,
                   "the finalizer removed after completion")
        res = self.kubectl("delete", "imagepulljob", "kept", "-n", self.ns, "--timeout=20s")
        self.assertEqual(res.returncode, 0, res.stderr)
        # running: deleted without hanging, its Jobs collected
        obj = self.apply(self.cr("busy", SLOW[3], names=["node-1", "node-2", "node-3"], parallelism=1,
                                 finalizers=[FINALIZER]))
        wait_until(lambda: self.jobs_of(obj["metadata"]["uid"]), 15, "a Job running")
        self.assertIn(FINALIZER, self.ipj("busy")["metadata"].get("finalizers") or [])
        t0 = time.monotonic()
        res = self.kubectl("delete", "imagepulljob", "busy", "-n", self.ns, "--timeout=30s", timeout=60)
        self.assertEqual(res.returncode, 0, "kubectl delete: %s%s\n%s" % (res.stdout, res.stderr, self.ctl_tail()))
        log("a running ImagePullJob with Kruise's finalizer deleted in %.1fs" % (time.monotonic() - t0))
        self.assertIsNone(self.ipj("busy"))
        wait_until(lambda: not self.live_jobs(), 20, "its Jobs collected")

    def test_13_active_deadline(self):
        """completionPolicy.activeDeadlineSeconds (the controller's clock,
        real seconds, from status.startTime): Kruise's message, every node
        not succeeded counted failed, the running pull's Job deleted."""
        nodes = ["node-1", "node-2", "node-3", "node-4"]
        t0 = time.monotonic()
        obj = self.apply(self.cr("deadline", SLOW[6], names=nodes, parallelism=1, timeout=5, deadline=5))
        uid = obj["metadata"]["uid"]
        done = self.wait_status("deadline", lambda s: s.get("completionTime"), 30, "completed at its deadline")
        took = time.monotonic() - t0
        log("deadline reached after %.1fs" % took)
        st = done["status"]
        self.assertEqual(st.get("message"), "job exceeds activeDeadlineSeconds")
        self.assertGreaterEqual(took, 3.0, "completed before its 5 s deadline")
        ok = st.get("succeeded", 0)
        self.assertLess(ok, 4, "every node pulled before the deadline: the test proves nothing")
        self.assertEqual((st["desired"], st.get("active", 0), st.get("failed")), (4, 0, 4 - ok), st)
        self.assertEqual(len(st.get("failedNodes") or []), 4 - ok, st)
        self.assertEqual(st["failedNodes"], sorted(st["failedNodes"]))
        # a pull still running at the deadline: its Job is deleted
        wait_until(lambda: not [j for j in self.jobs_of(uid) if not finished(j)
                                and j["metadata"]["uid"] in {x["metadata"]["uid"] for x in self.live_jobs()}],
                   20, "no Job of it left running")
        time.sleep(2)  # and no new one starts
        self.assertEqual(len(self.jobs_of(uid)), len({job_node(j) for j in self.jobs_of(uid)}))
        self.assertEqual(self.ipj("deadline")["status"]["message"], "job exceeds activeDeadlineSeconds")

    def test_14_pod_selector(self):
        """podSelector: the nodes of the namespace's active scheduled pods
        that match, each pulled once (the pods listed a page at a time)."""
        self.make_ds(QUICK[20], name="web", nodes=["node-2", "node-4", "node-5"])
        self.make_ds(QUICK[21], name="other", nodes=["node-1"])
        doc = self.cr("by-pods", QUICK[22], parallelism=3)
        doc["spec"]["podSelector"] = {"matchLabels": {"app": "web"}}
        obj = self.apply(doc)
        done = self.wait_completed("by-pods", 60)
        st = done["status"]
        self.assertEqual((st["desired"], st.get("succeeded"), st.get("failed", 0)), (3, 3, 0), st)
        self.assert_one_job_per_node(obj["metadata"]["uid"], ["node-2", "node-4", "node-5"])


# docs/examples/imagepulljob-*.yaml, and what ImagePullJobRunExamples gives
# them: their images (the private ones only with the Secret each example
# names), a cluster whose nodes carry the labels they select
EX = "registry.example.com"
EX_AGENT = EX + "/edge/agent:2.4"
EX_WEB = EX + "/team/web:2.0"
EX_BASE = EX + "/edge/runtime-base:1.8"
EX_VISION = EX + "/vendor/vision-model:3.1"
EX_MINIMAL = "nginx:1.25"  # kubesim's registry has it (70.5 MB)
EX_CREDS = {"regcred": ("web-deployer", "web-token"), "vendor-registry": ("vision-user", "vision-token")}
EX_REGISTRY = copy.deepcopy(REGISTRY)
EX_REGISTRY["images"] = EX_REGISTRY["images"] + [
    {"image": EX_AGENT, "size": 150_000_000},
    {"image": EX_WEB, "size": 100_000_000, "pullSecret": "regcred",
     "username": EX_CREDS["regcred"][0], "password": EX_CREDS["regcred"][1]},
    {"image": EX_BASE, "size": 600_000_000},
    {"image": EX_VISION, "size": 300_000_000, "pullSecret": "vendor-registry",
     "username": EX_CREDS["vendor-registry"][0], "password": EX_CREDS["vendor-registry"][1]},
]
STORE, POOL = "example.com/site-tier", "apps.openyurt.io/nodepool"
EX_REGISTRY["nodes"] = {"store-01": {"labels": {STORE: "store"}}, "store-02": {"labels": {STORE: "store"}},
                        "node-4": {"labels": {STORE: "store"}},
                        "node-2": {"labels": {POOL: "hangzhou"}}, "node-3": {"labels": {POOL: "hangzhou"}}}
RUNNING_100 = "job is running, progress 100.0%"


class ImagePullJobRunExamples(ImagePullJobRunBase):
    """The project's own examples, each file applied unchanged with the
    real kubectl (`kubectl apply -n <ns> -f docs/examples/<file>`), run
    by the controller to the state it ends in.  Nodes: node-1..node-4 and
    store-01, store-02 (kubesim --node; the pull-secrets example's
    store-03 is no node); store-01, store-02, node-4 are
    example.com/site-tier=store, node-2 and node-3 are in the node pool
    hangzhou."""
    NODES = 4
    NODE_NAMES = ("store-01", "store-02")
    ALL = ["node-1", "node-2", "node-3", "node-4", "store-01", "store-02"]
    REGISTRY = EX_REGISTRY
    RESYNC_S = 3  # the never-pods example's pods are listed again each resync
    CONTROLLER_ARGS = ImagePullJobRunBase.CONTROLLER_ARGS + ("--resync-period", "%ds" % RESYNC_S)

    # each has its test below
    COVERED = ("imagepulljob-always.yaml", "imagepulljob-minimal.yaml", "imagepulljob-never-pods.yaml",
               "imagepulljob-never-pool.yaml", "imagepulljob-pull-secrets.yaml")

    def test_every_example_is_run(self):
        self.assertEqual(sorted(f for f in os.listdir(EXAMPLES) if f.startswith("imagepulljob-")),
                         sorted(self.COVERED), "an ImagePullJob example this class does not run")

    def example(self, fname, image):
        """Applies docs/examples/<fname> as it is in the repository; the
        ImagePullJob as the controller reads it."""
        if yaml is None:
            self.skipTest("PyYAML (python3-yaml) is not installed")
        self.assertIn(fname, self.COVERED)
        path = os.path.join(EXAMPLES, fname)
        with open(path) as f:
            doc = yaml.safe_load(f)
        # the registry here was given the example's image: a changed
        # example wants this test changed too
        self.assertEqual(doc["spec"]["image"], image, "%s: the image this test provides" % fname)
        self.assertNotIn("namespace", doc["metadata"], "%s: the examples set no namespace" % fname)
        res = self.kubectl("apply", "-n", self.ns, "-f", path)
        self.assertEqual(res.returncode, 0, "kubectl apply -f %s: %s%s" % (path, res.stdout, res.stderr))
        obj = self.ipj(doc["metadata"]["name"])
        self.assertIsNotNone(obj, res.stdout)
        return obj

    def docker_registry_secret(self, name):
        """The Secret as the pull-secrets example's comment creates it."""
        user, password = EX_CREDS[name]
        res = self.kubectl("create", "secret", "docker-registry", name, "-n", self.ns,
                           "--docker-server=" + EX, "--docker-username=" + user, "--docker-password=" + password)
        self.assertEqual(res.returncode, 0, res.stderr)

    def check_jobs(self, obj, nodes, image, policy, deadline, secrets=()):
        """One finished-Complete Job per node, pulling image with policy,
        its deadline and its pod's imagePullSecrets as given."""
        uid = obj["metadata"]["uid"]
        self.assert_one_job_per_node(uid, nodes)
        for node, (job,) in sorted(self.jobs_per_node(uid).items()):
            what = "%s on %s" % (job["metadata"]["name"], node)
            self.assertEqual(finished(job), "Complete", what)
            self.assertEqual(job["spec"].get("activeDeadlineSeconds"), deadline, what)
            c = pull_container(job)
            self.assertIsNotNone(c, "no pull-0 container in " + what)
            self.assertEqual((c["image"], c.get("imagePullPolicy")), (image, policy), what)
            self.assertEqual(job["spec"]["template"]["spec"].get("imagePullSecrets") or [],
                             [{"name": s} for s in secrets], what)

    def passes(self):
        return (self.ctl.metrics() or {}).get("ota_controller_reconcile_duration_seconds_count", 0)

    def assert_stays_running(self, name, ipjs):
        """A Never job at 100%: the controller looks at it again (an
        annotation edit, then two more reconcile passes, the second begun
        after the edit) and it still runs; no version of it ever
        completed."""
        res = self.kubectl("annotate", "--overwrite", "imagepulljob", name, "-n", self.ns,
                           "e2e.ota-prepull/poke=%d" % time.monotonic_ns())
        self.assertEqual(res.returncode, 0, res.stderr)
        before = self.passes()  # read after the edit: the second pass from here began after it
        wait_until(lambda: self.passes() >= before + 2, 15, "two reconcile passes after the edit")
        st = self.ipj(name)["status"]
        self.assertEqual(st.get("message"), RUNNING_100, st)
        self.assertFalse(st.get("completionTime"), st)
        versions = ipjs.objects(name)
        self.assertFalse([o for o in versions if (o.get("status") or {}).get("completionTime")],
                         "a Never job completed")
        self.assert_messages_well_formed(versions)
        return st

    def test_always(self):
        """imagepulljob-always.yaml: every store node, deadline 600 x (3 + 1)
        + 60 = 2460 s as its comment says; completed and kept (TTL a day)."""
        obj = self.example("imagepulljob-always.yaml", EX_AGENT)
        done = self.wait_completed("agent-2-4-stores", 40)
        st = done["status"]
        self.assertEqual((st["desired"], st.get("succeeded"), st.get("failed", 0), st.get("active", 0)),
                         (3, 3, 0, 0), st)
        self.assertFalse(st.get("failedNodes"), st)
        self.check_jobs(obj, ["node-4", "store-01", "store-02"], EX_AGENT, "IfNotPresent", 2460)
        self.completed_generation("agent-2-4-stores", done["metadata"]["generation"])

    def test_minimal(self):
        """imagepulljob-minimal.yaml: no selector, every node; the
        webhook's defaults (Always, 600 s, 3, IfNotPresent) are what runs."""
        obj = self.example("imagepulljob-minimal.yaml", EX_MINIMAL)
        done = self.wait_completed("job-minimal", 40)
        st = done["status"]
        self.assertEqual((st["desired"], st.get("succeeded"), st.get("failed", 0), st.get("active", 0)),
                         (6, 6, 0, 0), st)
        self.check_jobs(obj, self.ALL, EX_MINIMAL, "IfNotPresent", 2460)

    def web_pod(self, node):
        """A pod labelled app=web on node (a bare pod: kubesim's kubelet
        runs what names its node)."""
        self.sim.call("POST", "/api/v1/namespaces/%s/pods" % self.ns, {
            "metadata": {"name": "web-" + node, "labels": {"app": "web"}},
            "spec": {"nodeName": node, "containers": [{"name": "web", "image": QUICK[0]}]}})

    def test_never_pods(self):
        """imagepulljob-never-pods.yaml: the nodes of the pods labelled
        app=web (node-1 and node-3), pulled with regcred and
        imagePullPolicy Always; a web pod started later on node-2 brings
        node-2 in within a resync (--resync-period RESYNC_S here), as the
        comment says; at 100% it keeps running."""
        self.docker_registry_secret("regcred")
        # the web pods run another image: the example pre-pulls their next one
        for node in ("node-1", "node-3"):
            self.web_pod(node)
        ipjs = self.watch_ipjs()
        obj = self.example("imagepulljob-never-pods.yaml", EX_WEB)
        self.addCleanup(self.kubectl, "delete", "imagepulljob", "job-never", "-n", self.ns, "--wait=false")
        self.wait_status("job-never", lambda s: s.get("desired") == 2 and s.get("succeeded") == 2
                         and s.get("message") == RUNNING_100, 40, "both web nodes pulled")
        self.assert_stays_running("job-never", ipjs)
        self.check_jobs(obj, ["node-1", "node-3"], EX_WEB, "Always", 2460, secrets=["regcred"])
        t0 = time.monotonic()
        self.web_pod("node-2")
        self.wait_status("job-never", lambda s: s.get("desired") == 3, self.RESYNC_S + 5,
                         "node-2, with a web pod now, selected within a resync")
        log("node-2 selected %.1fs after its web pod" % (time.monotonic() - t0))
        self.wait_status("job-never", lambda s: s.get("succeeded") == 3 and s.get("message") == RUNNING_100, 20,
                         "node-2 pulled")
        st = self.assert_stays_running("job-never", ipjs)
        self.assertEqual((st["desired"], st.get("succeeded"), st.get("failed", 0), st.get("active", 0)),
                         (3, 3, 0, 0), st)
        self.check_jobs(obj, ["node-1", "node-2", "node-3"], EX_WEB, "Always", 2460, secrets=["regcred"])

    def test_never_pool(self):
        """imagepulljob-never-pool.yaml: the pool hangzhou's nodes, deadline
        1800 x (2 + 1) + 60 = 5460 s as its comment says; at 100% it keeps
        running."""
        ipjs = self.watch_ipjs()
        obj = self.example("imagepulljob-never-pool.yaml", EX_BASE)
        self.addCleanup(self.kubectl, "delete", "imagepulljob", "runtime-base-hangzhou", "-n", self.ns,
                        "--wait=false")
        self.wait_status("runtime-base-hangzhou", lambda s: s.get("desired") == 2 and s.get("succeeded") == 2
                         and s.get("message") == RUNNING_100, 40, "the pool's nodes pulled")
        st = self.assert_stays_running("runtime-base-hangzhou", ipjs)
        self.assertEqual((st["desired"], st.get("succeeded"), st.get("failed", 0), st.get("active", 0)),
                         (2, 2, 0, 0), st)
        self.check_jobs(obj, ["node-2", "node-3"], EX_BASE, "IfNotPresent", 5460)

    def test_pull_secrets(self):
        """imagepulljob-pull-secrets.yaml after the Secret its comment
        creates: store-01 and store-02 pulled with vendor-registry as their
        Jobs' imagePullSecrets (the registry refuses the image without
        it), store-03, no node, skipped; deadline 900 x (1 + 1) + 60."""
        self.docker_registry_secret("vendor-registry")
        obj = self.example("imagepulljob-pull-secrets.yaml", EX_VISION)
        done = self.wait_completed("vision-model-3-1", 40)
        st = done["status"]
        self.assertEqual((st["desired"], st.get("succeeded"), st.get("failed", 0), st.get("active", 0)),
                         (2, 2, 0, 0), st)
        self.assertFalse(st.get("failedNodes"), st)
        self.check_jobs(obj, ["store-01", "store-02"], EX_VISION, "Always", 1860, secrets=["vendor-registry"])
        # "nothing is copied elsewhere": the one Secret of that name is ours
        sel = urllib.parse.quote("metadata.name=vendor-registry")
        self.assertEqual([(x["metadata"]["namespace"], x["metadata"]["name"])
                          for x in self.sim.get("/api/v1/secrets?fieldSelector=" + sel)["items"]],
                         [(self.ns, "vendor-registry")])


class UpstreamCrdRun(ImagePullJobRunBase):
    """Kruise's CRD (CRD_VERSION) instead of ours, applied unchanged before
    the controller starts."""
    NODES = 3
    CRD_VERSION = None

    @classmethod
    def apply_manifests(cls):
        super().apply_manifests()
        path = os.path.join(UPSTREAM, cls.CRD_VERSION, "apps.kruise.io_imagepulljobs.yaml")
        for args in (("delete", "crd", "imagepulljobs.apps.kruise.io", "--wait=true"), ("create", "-f", path),
                     ("wait", "--for=condition=Established", "crd/imagepulljobs.apps.kruise.io", "--timeout=30s")):
            res = cls.sim.kubectl("admin", *args)
            if res.returncode != 0:
                raise AssertionError("kubectl %s: %s%s" % (" ".join(args), res.stdout, res.stderr))
        log("replaced our CRD with Kruise's", cls.CRD_VERSION)

    def served(self):
        crd = self.sim.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/imagepulljobs.apps.kruise.io")
        return {v["name"]: (v["served"], v["storage"]) for v in crd["spec"]["versions"]}


@unittest.skipUnless(os.path.exists(SAMPLE_V19), "no upstream Kruise files at %s" % UPSTREAM)
class ImagePullJobRunKruise19(UpstreamCrdRun):
    CRD_VERSION = "v1.9.0"

    def test_samples_of_both_versions(self):
        self.assertEqual(self.served(), {"v1alpha1": (True, False), "v1beta1": (True, True)})
        self.check_sample(self.sample(SAMPLE_V19))
        self.check_sample(self.sample(SAMPLE_V18, name="job-with-always-v1alpha1"))
        self.assertEqual(self.sim.get("/apis/apps.kruise.io/v1beta1/namespaces/%s/imagepulljobs/job-with-always"
                                      % self.ns)["status"]["message"], COMPLETED)


@unittest.skipUnless(os.path.exists(SAMPLE_V18), "no upstream Kruise files at %s" % UPSTREAM)
class ImagePullJobRunKruise18(UpstreamCrdRun):
    CRD_VERSION = "v1.8.4"

    def test_sample(self):
        self.assertEqual(self.served(), {"v1alpha1": (True, True)})
        self.check_sample(self.sample(SAMPLE_V18))


class ImagePullJobRunLeaders(ImagePullJobRunBase):
    NODES = 5  # node-5: a missing image's PullImageFailed Event before the handover
    CONTROLLERS = 2
    LEASE = (3, 2, 0.5)

    def leader(self):
        leaders = [c for c in self.ctls if c.proc.poll() is None and c.leading()]
        return leaders[0] if len(leaders) == 1 else None

    def test_one_job_per_node_across_a_handover(self):
        lead = wait_until(self.leader, 10, "one leader")
        other = [c for c in self.ctls if c is not lead][0]
        t0 = time.monotonic()
        # a missing image on node-5, never completing: the new leader
        # decides its failed node again and asks its Event again
        self.apply(self.cr("ha-missing", MISSING, names=["node-5"], never=True, timeout=3600))
        self.wait_failed_events("ha-missing", 1)
        nodes = ["node-%d" % i for i in range(1, 5)]
        obj = self.apply(self.cr("ha", SLOW[4], names=nodes, parallelism=1))
        uid = obj["metadata"]["uid"]
        wait_until(lambda: len(self.jobs_of(uid)) >= 2 and any(not finished(j) for j in self.jobs_of(uid)), 30,
                   "the second Job running")
        self.assertEqual(other.proxy.writes(t0), [], "the follower wrote")
        self.assertGreater(len(lead.proxy.writes(t0)), 0)
        before = self.assert_events_once("ha", "ha-missing")
        self.assertEqual(sum(k[0] == "PullImageFailed" for k in before), 1, before)
        lead.kill()
        t_kill = time.monotonic()
        wait_until(other.leading, self.LEASE[0] + self.LEASE[2] + 3, "the other replica taking over")
        done = self.wait_completed("ha", 60)
        st = done["status"]
        self.assertEqual((st["desired"], st.get("succeeded"), st.get("failed", 0)), (4, 4, 0), st)
        self.assert_one_job_per_node(uid, nodes)
        self.assert_unique_names(uid)
        # no Event posted twice: the one the new leader asked again was a 409
        after = self.assert_events_asked_again(other, t_kill, 1, "ha", "ha-missing")
        self.assertEqual({k: after.get(k) for k in before}, before, "Events before the handover, after it")
        self.assertEqual(lead.proxy.writes(t_kill), [])
        self.assertGreater(len(other.proxy.writes(t_kill)), 0)
        lead.start()
        lead.wait_ready()
