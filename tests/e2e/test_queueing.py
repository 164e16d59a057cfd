"""Queueing (class Concurrency): 50 requests at once with
--max-concurrent-pulls 5 never run more than 5 Jobs together, do run 5, make
one Job each, start in request order (bounded overtaking), and the waiting
ones get PrePullQueued events.  Class PerNode: one pull per node, and a
NotReady node's request waits for it.
"""
import threading
import time

from harness import AGENT, FRESH, REG, REGISTRY_CONFIG, Base, JobTracker, log, wait_until

# 2 GB: 200 simulated seconds of pulling, long enough to delete its Job midway
SLOW = REG + "/e2e/slow:1.0"


class Concurrency(Base):
    NODES = 50
    MAX_PULLS = 5

    def test_fifty_requests_five_at_a_time(self):
        pods, h = self.upgraded_ds()
        self.assertEqual(len(pods), 50)
        self.tracker.reset_max()
        samples = []
        stop = threading.Event()

        def sample():
            while not stop.is_set():
                jobs = self.sim.get("/apis/batch/v1/namespaces/%s/jobs" % self.ns)["items"]
                samples.append(sum(1 for j in jobs if not JobTracker.finished(j)
                                   and not j["metadata"].get("deletionTimestamp")))
                time.sleep(0.05)
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        try:
            for p in pods:
                self.request_pull(p, h)
            for p in pods:
                self.wait_image_ready(p, "PullImageSuccess", timeout=90, message="controllerrevision: " + h)
        finally:
            stop.set()
            sampler.join(5)
        log("samples", len(samples), "max sampled", max(samples), "max tracked", self.tracker.max_running)
        self.assertLessEqual(max(samples), 5)
        self.assertLessEqual(self.tracker.max_running, 5)
        self.assertEqual(max(samples), 5, "never 5 at once: the limit was not exercised")
        self.assert_one_job_per_request(pods)
        self.assert_no_duplicate_jobs()
        # FIFO (request order = lastTransitionTime order): a free slot goes to
        # the oldest waiting request.  One whose node is still being read (the
        # images shortcut) keeps its slot meanwhile, so a later request may
        # start first, but never past more than max-concurrent-pulls - 1
        # older ones still waiting
        uids = {p["metadata"]["uid"] for p in pods}
        with self.tracker.lock:
            made = [self.tracker.jobs[u] for u in self.tracker.order]
        times = [j["metadata"]["annotations"]["ota-prepull/request-time"] for j in made
                 if j["metadata"]["labels"]["ota-prepull/pod-uid"] in uids]
        waiting = sorted(times)
        for t in times:
            overtaken = waiting.index(t)
            self.assertLess(overtaken, 5, "the request of %s started before %d older ones: %s" % (
                t, overtaken, [x[-6:-1] for x in times]))
            waiting.remove(t)
        queued = sum(1 for p in pods if "PrePullQueued" in self.event_reasons(p))
        self.assertGreaterEqual(queued, 40, "PrePullQueued events on %d pods" % queued)


class PerNode(Base):
    """One pull per node (--max-pulls-per-node 1, the default): two requests
    on one node run one after the other, the second saying it waits for the
    node; a pull pod Terminating after its Job was deleted keeps the node
    until it is gone; a NotReady node gets no Job, its request waits (not failed) and
    starts once the node is Ready again (issue 20 §1)."""
    NODES = 2
    REGISTRY = dict(REGISTRY_CONFIG, images=REGISTRY_CONFIG["images"] +
                    [{"image": SLOW, "size": 2_000_000_000}])

    def upgraded(self, name, new, nodes):
        pods = self.make_ds(AGENT + "v1", name=name, nodes=nodes)
        h = self.set_image(new, name=name)
        self.wait_need_upgrade(pods, "True", h)
        return pods, h

    def jobs_on(self, node):
        """Live Jobs pinned to node, not finished nor being deleted."""
        out = []
        for j in self.live_jobs():
            if JobTracker.finished(j) or j["metadata"].get("deletionTimestamp"):
                continue
            if j["spec"]["template"]["spec"].get("nodeName") == node:
                out.append(j["metadata"]["name"])
        return out

    def set_ready(self, node, status):
        """The Node's Ready condition as the kubelet (True, False) would post
        it; the simulated kubelet writes only status.images after it starts,
        so this stands until the test says otherwise."""
        n = self.sim.get("/api/v1/nodes/" + node)
        conds = [dict(c, status=status, reason="KubeletReady" if status == "True" else "KubeletNotReady")
                 if c["type"] == "Ready" else c for c in n["status"]["conditions"]]
        self.sim.call("PATCH", "/api/v1/nodes/%s/status" % node, {"status": {"conditions": conds}},
                      ctype="application/merge-patch+json")

    def queued_messages(self, pod):
        return [e["message"] for e in self.events(pod) if e["reason"] == "PrePullQueued"]

    def test_two_requests_on_one_node_one_after_the_other(self):
        a, ha = self.upgraded("first", FRESH[0], ["node-1"])
        b, hb = self.upgraded("second", FRESH[1], ["node-1"])
        samples = []
        stop = threading.Event()

        def sample():
            while not stop.is_set():
                samples.append(len(self.jobs_on("node-1")))
                time.sleep(0.05)
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        try:
            self.request_pull(a[0], ha)
            self.request_pull(b[0], hb)
            self.wait_image_ready(a[0], "PullImageSuccess", timeout=60)
            self.wait_image_ready(b[0], "PullImageSuccess", timeout=60)
        finally:
            stop.set()
            sampler.join(5)
        log("samples", len(samples), "max on node-1", max(samples))
        self.assertEqual(max(samples), 1, "two pull Jobs on node-1 at once")
        self.assert_one_job_per_request(a + b)
        # the later request waited for the node, and said so
        msgs = self.queued_messages(b[0])
        self.assertTrue(any("node node-1 is pulling already (--max-pulls-per-node)" in m for m in msgs), msgs)

    def test_not_ready_node_waits_then_starts(self):
        pods, h = self.upgraded("edge", FRESH[2], ["node-2"])
        self.set_ready("node-2", "False")
        try:
            self.request_pull(pods[0], h)
            wait_until(lambda: any("waits for node node-2 to be Ready" in m
                                   for m in self.queued_messages(pods[0])), 20,
                       "PrePullQueued: waits for node-2")
            time.sleep(2)
            self.assertEqual(self.tracker.jobs_of(pods[0]["metadata"]["uid"]), [],
                             "a Job for a NotReady node")
            c = self.cond(self.pod(pods[0]["metadata"]["name"]), "PodImageReady")
            self.assertEqual((c["status"], c["reason"]), ("False", "WaitPullImage"), "waiting, not failed")
        finally:
            self.set_ready("node-2", "True")
        self.wait_image_ready(pods[0], "PullImageSuccess", timeout=60)
        self.assert_one_job_per_request(pods)

    def test_terminating_pull_pod_holds_the_node(self):
        """A pull Job deleted midway: its pod stays Terminating while the
        runtime goes on pulling (a deleted pod does not cancel an in-flight
        CRI pull), and the node gets no new Job until it is gone."""
        pods, h = self.upgraded("slow", SLOW, ["node-1"])
        uid = pods[0]["metadata"]["uid"]
        self.request_pull(pods[0], h)
        job = wait_until(lambda: (self.tracker.live_jobs_of(uid) or [None])[0], 20, "the Job")
        name = job["metadata"]["name"]
        sel = "batch.kubernetes.io/job-name=" + name
        wait_until(lambda: self.sim.get("/api/v1/namespaces/%s/pods?labelSelector=%s" % (self.ns, sel))["items"],
                   20, "the Job's pod")
        time.sleep(1)  # pulling
        self.sim.call("DELETE", "/apis/batch/v1/namespaces/%s/jobs/%s?propagationPolicy=Background" % (self.ns, name))

        def pull_pods():
            return self.sim.get("/api/v1/namespaces/%s/pods?labelSelector=%s" % (self.ns, sel))["items"]
        wait_until(lambda: any(p["metadata"].get("deletionTimestamp") for p in pull_pods()), 20,
                   "the pull pod Terminating")
        # the request stands and its Job is gone: the same Job is due again,
        # but the node is still pulling for the terminating pod
        seen_terminating = 0
        while any(p["metadata"].get("deletionTimestamp") for p in pull_pods()):
            seen_terminating += 1
            self.assertEqual(self.jobs_on("node-1"), [], "a Job on node-1 while its pull pod terminates")
            time.sleep(0.1)
        log("pull pod terminating for", seen_terminating, "samples")
        self.assertGreater(seen_terminating, 3, "the pull pod went at once: nothing was tested")
        self.wait_image_ready(pods[0], "PullImageSuccess", timeout=60)
        msgs = self.queued_messages(pods[0])
        self.assertTrue(any("node node-1 is pulling already" in m for m in msgs), msgs)
