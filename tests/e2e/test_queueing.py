"""Queueing (class Concurrency): 50 requests at once with
--max-concurrent-pulls 5 never run more than 5 Jobs together, do run 5, make
one Job each, start in request order (bounded overtaking), and the waiting
ones get PrePullQueued events.  Class PerNode: one pull per node, and a
NotReady node's request waits for it.
"""
import threading
import time

from harness import AGENT, FRESH, Base, JobTracker, log, wait_until


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
    node; a NotReady node gets no Job, its request waits (not failed) and
    starts once the node is Ready again (issue 20 §1)."""
    NODES = 2

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
        self.assertTrue(any("node node-1 is pulling for another request" in m for m in msgs), msgs)

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
