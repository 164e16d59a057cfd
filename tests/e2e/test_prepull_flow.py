"""The pre-pull flow, one request at a time (class ControllerBehaviour).

An OTA DaemonSet updated to a new revision marks exactly its stale pods
PodNeedUpgrade; a node user's request becomes one Job on the pod's node with
the revision's images, and PodImageReady and events report how it ended:
private images with and without a pull secret, an unknown image failing by
its deadline, a busy registry (503) backed off and pulled, a retry after a failure, a new revision or the pod's deletion
while a pull runs, an image the node already has (no Job).
"""
import base64
import json
import time

from harness import (AGENT, BIG, BUSY, MISSING, PRELOADED, PRIVATE, REG, SCALE, Base, JobTracker,
                     wait_until)


class ControllerBehaviour(Base):
    """One node (or two) per test, so that no test's pull waits behind another's
    (kubelets pull one image at a time, and the big ones take seconds)."""
    NODES = 6

    def test_update_marks_exactly_the_stale_pods(self):
        pods = self.make_ds(AGENT + "v1")
        h1 = self.newest_hash()
        # current pods: False (written once the controller sees them)
        self.wait_need_upgrade(pods, "False", h1)
        h2 = self.set_image(AGENT + "v2")
        self.assertNotEqual(h1, h2)
        self.wait_need_upgrade(pods, "True", h2)
        # the upgrade of one pod: the DaemonSet controller recreates it at h2
        gone = pods[0]
        self.sim.call("DELETE", "/api/v1/namespaces/%s/pods/%s" % (self.ns, gone["metadata"]["name"]),
                      who=gone["spec"]["nodeName"])
        fresh = wait_until(lambda: [p for p in self.running_pods("agent", self.NODES) or []
                                    if p["spec"]["nodeName"] == gone["spec"]["nodeName"]
                                    and p["metadata"]["uid"] != gone["metadata"]["uid"]], 30, "the new pod")
        self.assertEqual(fresh[0]["metadata"]["labels"]["controller-revision-hash"], h2)
        self.wait_need_upgrade(fresh, "False", h2)
        self.wait_need_upgrade(pods[1:], "True", h2)
        # and it stays so, written once: nothing flips back, nothing rewritten
        t_quiet = time.monotonic() + 0.5
        time.sleep(2)
        self.wait_need_upgrade(fresh, "False", h2, timeout=1)
        self.wait_need_upgrade(pods[1:], "True", h2, timeout=1)
        rewrites = [e["path"] for e in self.ctl.proxy.writes(t_quiet) if self.ns in e["path"]]
        self.assertEqual(rewrites, [], "writes with nothing to change")
        # a strategic merge by type: the kubelet's conditions are all still there
        for p in pods[1:] + fresh:
            types = [c["type"] for c in self.pod(p["metadata"]["name"])["status"]["conditions"]]
            for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready", "PodNeedUpgrade"):
                self.assertIn(t, types)
        # no pull was asked for: no Job, no PodImageReady
        self.assertEqual(self.live_jobs(), [])
        for p in pods[1:] + fresh:
            self.assertIsNone(self.cond(self.pod(p["metadata"]["name"]), "PodImageReady"))

    def test_request_becomes_one_job_on_the_node(self):
        pods, h = self.upgraded_ds(nodes=["node-5"], init_image="busybox:1.37-musl")
        pod = pods[0]
        self.request_pull(pod, h)
        self.wait_image_ready(pod, "PullImageSuccess", message="controllerrevision: " + h)
        jobs = self.tracker.jobs_of(pod["metadata"]["uid"])
        self.assertEqual(len(jobs), 1, [j["metadata"]["name"] for j in jobs])
        job = jobs[0]
        self.assertTrue(job["metadata"]["name"].startswith("ota-prepull-"))
        self.assertEqual(job["metadata"]["namespace"], self.ns)
        self.assertEqual(job["spec"]["template"]["spec"]["nodeName"], "node-5")
        spec = job["spec"]["template"]["spec"]
        # the revision's images, init containers' too, after the helper
        images = [c["image"] for c in spec["initContainers"]]
        self.assertEqual(images[0], "busybox:1.36-musl")
        self.assertEqual(sorted(images[1:]), sorted([AGENT + "v2", "busybox:1.37-musl"]))
        self.assertEqual(spec["tolerations"], [{"operator": "Exists"}])
        self.assertEqual(spec["restartPolicy"], "Never")
        self.assertIs(spec.get("automountServiceAccountToken"), False)
        self.assertEqual(job["spec"]["activeDeadlineSeconds"], 600)  # --pull-timeout's default
        self.assertNotIn("ttlSecondsAfterFinished", job["spec"])
        owner = job["metadata"]["ownerReferences"][0]
        self.assertEqual((owner["kind"], owner["uid"]), ("Pod", pod["metadata"]["uid"]))
        live = self.live_jobs()
        self.assertEqual([j["metadata"]["name"] for j in live], [job["metadata"]["name"]])
        self.assertTrue(JobTracker.finished(live[0]))
        reasons = wait_until(lambda: (lambda r: "PrePullSucceeded" in r and r)(self.event_reasons(pod)),
                             10, "PrePullSucceeded event")
        self.assertIn("PrePullStarted", reasons)
        self.assertNotIn("PrePullFailed", reasons)

    def test_private_image_with_and_without_pull_secret(self):
        cred = base64.b64encode(b"ota:ota-secret").decode()
        cfg = json.dumps({"auths": {REG: {"auth": cred}}}).encode()
        self.sim.call("POST", "/api/v1/namespaces/%s/secrets" % self.ns,
                      {"metadata": {"name": "regcred"}, "type": "kubernetes.io/dockerconfigjson",
                       "data": {".dockerconfigjson": base64.b64encode(cfg).decode()}})
        # with the secret in the template: pulled
        pods = self.make_ds(AGENT + "v1", name="with", secrets=["regcred"], nodes=["node-3"], timeout=30)
        h = self.set_image(PRIVATE + "1.0", name="with")
        self.wait_need_upgrade(pods, "True", h)
        self.request_pull(pods[0], h)
        self.wait_image_ready(pods[0], "PullImageSuccess")
        job = self.tracker.jobs_of(pods[0]["metadata"]["uid"])[0]
        self.assertEqual(job["spec"]["template"]["spec"].get("imagePullSecrets"), [{"name": "regcred"}])
        # without: 401 from the registry, the pull fails by the deadline.  Node 4
        # has never pulled the image, so no cached copy lets it through.
        pods = self.make_ds(AGENT + "v1", name="without", nodes=["node-4"], timeout=30)
        h = self.set_image(PRIVATE + "2.0", name="without")
        self.wait_need_upgrade(pods, "True", h)
        self.request_pull(pods[0], h)
        c = self.wait_image_ready(pods[0], "PullImageFail", timeout=20)
        self.assertIn("401", c["message"])
        self.assertTrue(c["message"].startswith("pull image job ota-prepull-"), c["message"])
        self.assertIn("PrePullFailed", self.event_reasons(pods[0]))

    def test_unknown_image_fails_within_deadline(self):
        pods, h = self.upgraded_ds(new=MISSING, timeout=30, nodes=["node-5"])
        t0 = time.monotonic()
        self.request_pull(pods[0], h)
        c = self.wait_image_ready(pods[0], "PullImageFail", timeout=20)
        took = time.monotonic() - t0
        # deadline 30 simulated seconds = 1 s; the Job controller, the kubelet's
        # back-off and our reaction add a few
        self.assertLess(took, 30.0 / SCALE + 6, "failure reported after %.1fs" % took)
        self.assertIn("ErrImagePull", c["message"])
        self.assertIn("not found", c["message"])
        job = self.tracker.jobs_of(pods[0]["metadata"]["uid"])[0]
        self.assertEqual(job["spec"]["activeDeadlineSeconds"], 30)
        self.assertIn(job["metadata"]["name"], c["message"])

    def test_busy_registry_backs_off_then_pulls(self):
        """A registry that answers the first two pulls with 503: the kubelet
        backs off and tries again, the controller says why it waits (one
        PrePullBackOff Warning per message), neither fails the request nor
        makes a second Job, and the third try pulls."""
        pods, h = self.upgraded_ds(new=BUSY, nodes=["node-2"])
        pod = pods[0]
        self.request_pull(pod, h)
        self.wait_image_ready(pod, "PullImageSuccess", timeout=40)
        backoffs = [e for e in self.events(pod) if e["reason"] == "PrePullBackOff"]
        self.assertEqual(len(backoffs), 1, [e["message"] for e in backoffs])
        ev = backoffs[0]
        self.assertEqual(ev["type"], "Warning")
        self.assertEqual(ev["source"]["component"], "ota-controller")
        self.assertRegex(ev["message"], r"^pull image job ota-prepull-\S+ is retrying: ErrImagePull: ")
        self.assertIn("503 Service Unavailable", ev["message"])
        self.assertEqual(len(self.tracker.jobs_of(pod["metadata"]["uid"])), 1)
        self.assertNotIn("PrePullFailed", self.event_reasons(pod))

    def test_retry_after_failure(self):
        cred = base64.b64encode(b"ota:ota-secret").decode()
        pods, h = self.upgraded_ds(new=PRIVATE + "2.0", timeout=30, nodes=["node-6"], secrets=["regcred"])
        pod = pods[0]
        # the secret is missing at first: the pull fails
        self.request_pull(pod, h)
        self.wait_image_ready(pod, "PullImageFail", timeout=20)
        first = self.tracker.jobs_of(pod["metadata"]["uid"])
        self.assertEqual(len(first), 1)
        # the admin adds the secret; the node user asks again
        cfg = json.dumps({"auths": {REG: {"auth": cred}}}).encode()
        self.sim.call("POST", "/api/v1/namespaces/%s/secrets" % self.ns,
                      {"metadata": {"name": "regcred"}, "type": "kubernetes.io/dockerconfigjson",
                       "data": {".dockerconfigjson": base64.b64encode(cfg).decode()}})
        self.request_pull(pod, h)
        self.wait_image_ready(pod, "PullImageSuccess", timeout=20)
        jobs = self.tracker.jobs_of(pod["metadata"]["uid"])
        self.assertEqual(len(jobs), 2, [j["metadata"]["name"] for j in jobs])
        live = [j["metadata"]["name"] for j in self.live_jobs()]
        second = [j for j in jobs if j["metadata"]["uid"] != first[0]["metadata"]["uid"]][0]
        wait_until(lambda: [j["metadata"]["name"] for j in self.live_jobs()] == [second["metadata"]["name"]],
                   10, "only the second Job left (live: %s)" % live)
        self.assert_no_duplicate_jobs()

    def test_second_revision_while_pulling(self):
        pods, h2 = self.upgraded_ds(new=BIG + "1.0", nodes=["node-1"])
        pod = pods[0]
        self.request_pull(pod, h2)
        job = wait_until(lambda: self.tracker.live_jobs_of(pod["metadata"]["uid"]), 10, "the Job")[0]
        self.assertFalse(JobTracker.finished(job))
        h3 = self.set_image(AGENT + "v3")
        self.wait_need_upgrade(pods, "True", h3)
        wait_until(lambda: self.cond(self.pod(pod["metadata"]["name"]), "PodImageReady") is None, 10,
                   "PodImageReady dropped")
        wait_until(lambda: not self.tracker.live_jobs_of(pod["metadata"]["uid"]), 10, "the stale Job deleted")
        self.assertFalse(JobTracker.finished(self.tracker.jobs_of(pod["metadata"]["uid"])[0]),
                         "the Job finished before the new revision came: the test proves nothing")
        # and a request for the new revision works
        self.request_pull(pod, h3)
        self.wait_image_ready(pod, "PullImageSuccess", message="controllerrevision: " + h3)
        self.assert_no_duplicate_jobs()

    def test_pod_deleted_while_pulling(self):
        pods, h = self.upgraded_ds(new=BIG + "2.0", nodes=["node-2"])
        pod = pods[0]
        self.request_pull(pod, h)
        job = wait_until(lambda: self.tracker.live_jobs_of(pod["metadata"]["uid"]), 10, "the Job")[0]
        self.sim.call("DELETE", "/api/v1/namespaces/%s/pods/%s" % (self.ns, pod["metadata"]["name"]),
                      who="node-2")
        wait_until(lambda: not self.tracker.live_jobs_of(pod["metadata"]["uid"]), 20,
                   "Job %s garbage-collected" % job["metadata"]["name"])
        self.assertFalse(JobTracker.finished(self.tracker.jobs_of(pod["metadata"]["uid"])[0]),
                         "the Job finished before the pod went: the test proves nothing")
        self.assertEqual(len(self.tracker.jobs_of(pod["metadata"]["uid"])), 1)

    def test_image_already_on_node(self):
        node = self.sim.get("/api/v1/nodes/node-1")
        names = [n for i in node["status"].get("images", []) for n in i["names"]]
        self.assertIn("%s" % PRELOADED, names)
        pods, h = self.upgraded_ds(new=PRELOADED, nodes=["node-1"])
        self.request_pull(pods[0], h)
        self.wait_image_ready(pods[0], "PullImageSuccess", message="controllerrevision: " + h)
        time.sleep(0.5)
        self.assertEqual(self.tracker.jobs_of(pods[0]["metadata"]["uid"]), [])
        reasons = self.event_reasons(pods[0])
        self.assertIn("PrePullSucceeded", reasons)
        self.assertNotIn("PrePullStarted", reasons)
