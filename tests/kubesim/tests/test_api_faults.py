"""Fault injection through /kubesim/faults: 429 with Retry-After, 500, 410,
slow answers, delayed watch events, counts and rates, admin only."""
import json
import threading
import time
import unittest

from .apisupport import Kubesim

PODS = "/api/v1/namespaces/default/pods"


class FaultsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ks = Kubesim("--no-sim")

    @classmethod
    def tearDownClass(cls):
        cls.ks.stop()

    def tearDown(self):
        self.ks.request("DELETE", "/kubesim/faults")

    def configure(self, cfg):
        st, body, _ = self.ks.request("POST", "/kubesim/faults", cfg)
        self.assertEqual(st, 200, body)
        return body

    def test_429_with_retry_after_for_count_requests(self):
        self.configure({"error": {"code": 429, "retryAfter": 3, "count": 2, "pathContains": "/pods"}})
        st, body, resp = self.ks.request("GET", PODS)
        self.assertEqual(st, 429)
        self.assertEqual(resp.getheader("Retry-After"), "3")
        self.assertEqual(body["reason"], "TooManyRequests")
        self.assertEqual(body["details"]["retryAfterSeconds"], 3)
        self.assertEqual(self.ks.request("GET", "/api/v1/namespaces")[0], 200)   # path filter
        self.assertEqual(self.ks.request("GET", PODS)[0], 429)
        self.assertEqual(self.ks.request("GET", PODS)[0], 200)                   # count used up
        self.assertEqual(self.ks.request("GET", "/api/v1")[0], 200)              # discovery never hit
        st, body, _ = self.ks.request("GET", "/kubesim/faults")
        self.assertEqual(body["injected"]["errors"], 2)

    def test_500_and_410(self):
        self.configure({"error": {"code": 500, "methods": ["POST"]}})
        st, body, _ = self.ks.request("POST", "/api/v1/namespaces/default/configmaps",
                                      {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
        self.assertEqual((st, body["reason"]), (500, "InternalError"))
        self.assertEqual(self.ks.request("GET", PODS)[0], 200)
        self.configure({"error": {"code": 410, "count": 1}})
        st, body, _ = self.ks.request("GET", PODS)
        self.assertEqual((st, body["reason"]), (410, "Expired"))
        # a watch hit by 410 gets it as an ERROR event, as from the watch cache
        self.configure({"error": {"code": 410, "count": 1}})
        c = self.ks.connect(10)
        c.request("GET", PODS + "?watch=1&resourceVersion=1",
                  headers={"Authorization": "Bearer " + self.ks.tokens["admin"]})
        r = c.getresponse()
        self.assertEqual(r.status, 200)
        self.assertIn(b'"code": 410', r.read())
        c.close()

    def test_rate(self):
        self.configure({"seed": 7, "error": {"code": 500, "rate": 0.5}})
        codes = [self.ks.request("GET", PODS)[0] for _ in range(40)]
        hits = codes.count(500)
        self.assertTrue(5 < hits < 35, codes)
        self.assertEqual(hits + codes.count(200), 40)

    def test_slow_answers(self):
        self.configure({"delay": {"seconds": 0.6, "count": 1}})
        t0 = time.monotonic()
        self.assertEqual(self.ks.request("GET", PODS)[0], 200)
        self.assertGreaterEqual(time.monotonic() - t0, 0.6)
        t0 = time.monotonic()
        self.ks.request("GET", PODS)
        self.assertLess(time.monotonic() - t0, 0.5)

    def open_watch(self, path):
        """Starts reading a watch; returns (list of (time.monotonic(), event), connection)."""
        st, lst, _ = self.ks.request("GET", path)
        self.assertEqual(st, 200)
        c = self.ks.connect(30)
        c.request("GET", path + "?watch=1&resourceVersion=" + lst["metadata"]["resourceVersion"],
                  headers={"Authorization": "Bearer " + self.ks.tokens["admin"]})
        r = c.getresponse()
        self.assertEqual(r.status, 200)
        got = []

        def reader():
            try:
                for line in r:
                    ev = json.loads(line)
                    if ev["type"] != "BOOKMARK":
                        got.append((time.monotonic(), ev))
            except (OSError, ValueError):
                pass
        threading.Thread(target=reader, daemon=True).start()
        self.addCleanup(c.close)
        return got, c

    def wait_events(self, got, n, timeout=20):
        deadline = time.monotonic() + timeout
        while len(got) < n and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertGreaterEqual(len(got), n, got)

    def test_watch_delay_holds_events_not_requests(self):
        delay = 2.5
        st, body = self.configure({"watchDelay": {"seconds": delay, "pathContains": "/pods"}}), None
        self.assertEqual(st["watchDelay"]["seconds"], delay)
        pods, _ = self.open_watch(PODS)
        cms, _ = self.open_watch("/api/v1/namespaces/default/configmaps")
        t0 = time.monotonic()
        st, p, _ = self.ks.request("POST", PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "wd"},
                                                  "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
        self.assertEqual(st, 201, p)
        # the write and reads answer at once; the object is there
        self.assertEqual(self.ks.request("GET", PODS + "/wd")[0], 200)
        st, _b, _ = self.ks.request("POST", "/api/v1/namespaces/default/configmaps",
                                    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "wd"}})
        self.assertEqual(st, 201)
        st, _b, _ = self.ks.request("PATCH", PODS + "/wd", {"metadata": {"labels": {"x": "1"}}},
                                    ctype="application/merge-patch+json")
        self.assertEqual(st, 200)
        self.wait_events(pods, 2)
        self.wait_events(cms, 1)
        # configmaps (not matched) are not held: their event, written after the pod,
        # arrives before the pod's
        self.assertLess(cms[0][0], pods[0][0])
        self.assertGreaterEqual(pods[0][0] - t0, delay)
        self.assertEqual([(e["type"], e["object"]["metadata"]["resourceVersion"]) for _t, e in pods][:1],
                         [("ADDED", p["metadata"]["resourceVersion"])])
        self.assertEqual(pods[1][1]["type"], "MODIFIED")        # in order
        self.assertEqual(self.ks.request("GET", "/kubesim/faults")[1]["injected"]["watch_delays"], 1)
        # cleared: a new pods watch is not held back (its event comes before one
        # written before it on the still-delayed watch)
        self.ks.request("DELETE", "/kubesim/faults")
        old, _ = self.open_watch(PODS)
        self.configure({"watchDelay": {"seconds": delay, "pathContains": "/pods", "count": 1}})
        slow, _ = self.open_watch(PODS)
        fresh, _ = self.open_watch(PODS)          # count used up: not delayed
        self.assertEqual(self.ks.request("DELETE", PODS + "/wd", {"gracePeriodSeconds": 0})[0], 200)
        self.wait_events(slow, 1)
        self.wait_events(fresh, 1)
        self.wait_events(old, 1)
        self.assertLess(fresh[0][0], slow[0][0])
        self.assertEqual(slow[0][1]["type"], "DELETED")

    def test_watch_delay_rejects_bad_settings(self):
        for bad in ({"seconds": -1}, {"seconds": "x"}, {"seconds": 99999}, [1]):
            st, body, _ = self.ks.request("POST", "/kubesim/faults", {"watchDelay": bad})
            self.assertEqual(st, 400, (bad, body))
            self.assertIn("watchDelay", body["message"])

    def test_admin_only(self):
        st, body, _ = self.ks.request("POST", "/kubesim/faults", {"error": {"code": 500}}, ident="user")
        self.assertEqual(st, 403)
        self.assertEqual(self.ks.request("GET", PODS)[0], 200)
        st, body, _ = self.ks.request("POST", "/kubesim/faults", {"error": {"code": 418}})
        self.assertEqual(st, 400)


if __name__ == "__main__":
    unittest.main()
