"""Queueing (class Concurrency): 50 requests at once with
--max-concurrent-pulls 5 never run more than 5 Jobs together, do run 5, make
one Job each, start in request order (bounded overtaking), and the waiting
ones get PrePullQueued events.
"""
import threading
import time

from harness import Base, JobTracker, log


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
