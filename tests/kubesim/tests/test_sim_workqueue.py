"""The worker loop under the controllers: event keys, de-duplication, timers in simulated
time, retries after a failing sync."""

import logging
import threading
import unittest

from kubesim.clock import Clock
from kubesim.sim.testing import wait_for
from kubesim.sim.workqueue import RESYNC, Worker


class FakeApi:
    def __init__(self, scale):
        self.clock = Clock(scale)
        self.subscribers = []

    def subscribe(self, cb):
        self.subscribers.append(cb)

    def emit(self, *event):
        for cb in self.subscribers:
            cb(*event)


class Recorder(Worker):
    name = "recorder"

    def __init__(self, api, fail_times=0):
        super().__init__(api, None)
        self.synced = []
        self.fail_times = fail_times
        self.gate = threading.Event()
        self.gate.set()

    def keys_for(self, event_type, resource, obj):
        return [obj["name"]] if resource == "things" else []

    def sync(self, key):
        self.gate.wait(5)
        if key != RESYNC and self.fail_times > 0:
            self.fail_times -= 1
            raise RuntimeError("boom")
        self.synced.append((key, self.clock.now()))


class WorkerTest(unittest.TestCase):
    def start(self, **kw):
        api = FakeApi(100)
        w = Recorder(api, **kw)
        w.start()
        self.addCleanup(w.stop)
        return api, w

    def keys(self, w):
        return [k for k, _ in w.synced if k != RESYNC]

    def test_events_become_keys_once(self):
        api, w = self.start()
        wait_for(lambda: w.synced, what="resync")
        w.gate.clear()
        api.emit("ADDED", "things", {"name": "a"})
        wait_for(lambda: w._pending == {} , what="a taken")
        for _ in range(5):
            api.emit("MODIFIED", "things", {"name": "b"})
        api.emit("ADDED", "other", {"name": "c"})
        w.gate.set()
        wait_for(lambda: self.keys(w) == ["a", "b"], what="a then b once")

    def test_timer_in_simulated_time(self):
        api, w = self.start()
        t0 = api.clock.now()
        w.enqueue_after("late", 30)
        w.enqueue_after("early", 10)
        wait_for(lambda: len(self.keys(w)) == 2, what="both timers")
        (k1, t1), (k2, t2) = [x for x in w.synced if x[0] != RESYNC]
        self.assertEqual((k1, k2), ("early", "late"))
        self.assertGreaterEqual(t1 - t0, 10)
        self.assertGreaterEqual(t2 - t0, 30)

    def test_failing_sync_is_retried(self):
        logging.getLogger("kubesim.sim.recorder").setLevel(logging.CRITICAL)
        api, w = self.start(fail_times=2)
        w.enqueue("x")
        wait_for(lambda: self.keys(w) == ["x"], what="x after two failures")
        self.assertEqual(w._failures, {})


if __name__ == "__main__":
    unittest.main()
