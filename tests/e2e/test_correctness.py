"""The controller never overwrites newer state, leaves a running pull alone,
and fails fast (class Correctness, issue 10 §2, §4, §5).

- A stale cache: the controller's pods watch is blind (its re-open delayed by
  kubesim) while a node user writes a newer request; the controller's
  status writes carry the cached resourceVersion, so its resend from the
  stale cache is refused (409) instead of overwriting the request.
- A YurtHub-style request (no reason) repeated while its pull runs keeps
  the running Job.
- An image that does not exist fails in seconds, not at the deadline, and
  the Job is deleted.
"""
import time

from harness import AGENT, BIG, MISSING, Base, JobTracker, wait_until


class Correctness(Base):
    NODES = 4

    def pull_fail_message(self, pod):
        c = self.cond(self.pod(pod["metadata"]["name"]), "PodImageReady")
        return c if c and c.get("reason") == "PullImageFail" else None

    def test_stale_cache_never_overwrites_a_newer_request(self):
        pods, h = self.upgraded_ds(new=MISSING, timeout=30, nodes=["node-1"])
        pod = pods[0]
        uid = pod["metadata"]["uid"]
        path = "/api/v1/namespaces/%s/pods/%s/status" % (self.ns, pod["metadata"]["name"])
        self.request_pull(pod, h)
        wait_until(lambda: self.tracker.jobs_of(uid), 20, "the first Job")
        first = self.tracker.jobs_of(uid)[0]["metadata"]["name"]
        # blind the controller: every pods watch it re-opens waits 12 s
        self.sim.faults({"delay": {"seconds": 12, "pathContains": "/api/v1/pods", "watch": True}})
        self.sim.call("POST", "/kubesim/faults/drop-watches")
        c = wait_until(lambda: self.pull_fail_message(pod), 20, "the first pull's failure")
        self.assertIn(first, c["message"])
        # the node user asks again; the controller's cache still shows the
        # first request, Pulling
        t0 = time.monotonic()
        t2 = self.request_pull(pod, h)
        # past the executor's 3 s hold, the stale decision is made again
        deadline = time.monotonic() + 6
        while time.monotonic() < deadline:
            c = self.cond(self.pod(pod["metadata"]["name"]), "PodImageReady")
            self.assertEqual((c["reason"], c["lastTransitionTime"]), ("WaitPullImage", t2),
                             "the node user's newer request was overwritten: %r" % c)
            time.sleep(0.1)
        refused = [e for e in self.ctl.proxy.entries(t0)
                   if e["method"] == "PATCH" and e["path"].startswith(path) and e["status"] == 409]
        self.assertGreater(len(refused), 0, "no stale write was tried: the test proves little")
        # the watch catches up: the newer request gets its own Job and outcome
        self.sim.clear_faults()
        self.sim.call("POST", "/kubesim/faults/drop-watches")
        c = wait_until(lambda: (lambda m: m if m and first not in m["message"] else None)(
            self.pull_fail_message(pod)), 30, "the second request's outcome")
        jobs = [j["metadata"]["name"] for j in self.tracker.jobs_of(uid)]
        self.assertEqual(len(jobs), 2, jobs)
        self.assertIn([j for j in jobs if j != first][0], c["message"])

    def test_missing_image_fails_fast(self):
        """A typo in the image: the registry answers not found on two
        attempts in a row, and the request fails then, with the kubelet's
        words, while the deadline (3600 simulated s, 2 minutes here) is far
        off; the Job is deleted."""
        pods, h = self.upgraded_ds(new=MISSING, timeout=3600, nodes=["node-2"])
        pod = pods[0]
        uid = pod["metadata"]["uid"]
        self.request_pull(pod, h)
        c = wait_until(lambda: self.pull_fail_message(pod), 60, "PullImageFail before the deadline")
        self.assertIn("ErrImagePull: rpc error: code = NotFound", c["message"])
        self.assertIn("not found", c["message"])
        self.assertIn("not waiting for the deadline", c["message"])
        self.assertNotIn("DeadlineExceeded", c["message"])
        job = self.tracker.jobs_of(uid)[0]
        self.assertIn(job["metadata"]["name"], c["message"])
        # the Job never reached its deadline: it was deleted while running
        wait_until(lambda: not self.tracker.live_jobs_of(uid), 20, "the Job deleted")
        self.assertFalse(JobTracker.finished(job), job.get("status"))
        self.assertIn("PrePullFailed", self.event_reasons(pod))

    def test_deadline_failure_names_the_annotation(self):
        """A pull that is merely slow fails by its deadline; the message
        says which annotation raises it."""
        pods, h = self.upgraded_ds(new=BIG + "1.0", timeout=30, nodes=["node-3"])
        pod = pods[0]
        self.request_pull(pod, h)
        c = wait_until(lambda: self.pull_fail_message(pod), 30, "PullImageFail by the deadline")
        self.assertIn("deadline of 30 s", c["message"])
        self.assertIn("apps.openyurt.io/image-prepull-timeout-seconds", c["message"])
