"""Fault injection through /kubesim/faults: 429 with Retry-After, 500, 410,
slow answers, counts and rates, admin only."""
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
        c = self.ks.conn(10)
        c.request("GET", PODS + "?watch=1&resourceVersion=1",
                  headers={"Authorization": "Bearer " + self.ks.tokens["admin"]["token"]})
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

    def test_admin_only(self):
        st, body, _ = self.ks.request("POST", "/kubesim/faults", {"error": {"code": 500}}, ident="user")
        self.assertEqual(st, 403)
        self.assertEqual(self.ks.request("GET", PODS)[0], 200)
        st, body, _ = self.ks.request("POST", "/kubesim/faults", {"error": {"code": 418}})
        self.assertEqual(st, 400)


if __name__ == "__main__":
    unittest.main()
