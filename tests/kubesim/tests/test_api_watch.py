"""Watches over HTTPS: resume from a resourceVersion, selector transitions,
bookmarks, timeoutSeconds, 410 Gone, sendInitialEvents, dropped watches."""
import json
import socket
import threading
import time
import unittest

from .apisupport import Kubesim, pod

PODS = "/api/v1/namespaces/default/pods"


class WatchStream:
    """Reads watch events on a thread; events() waits with a timeout."""

    def __init__(self, ks, path, timeout=15):
        self.conn = ks.connect(timeout)
        self.conn.request("GET", path, headers={"Authorization": "Bearer " + ks.tokens["admin"],
                                                "Accept": "application/json"})
        self.resp = self.conn.getresponse()
        self.items = []
        self.ended = threading.Event()
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()

    def _read(self):
        try:
            while True:
                line = self.resp.readline()
                if not line:
                    break
                self.items.append(json.loads(line))
        except (OSError, ValueError, AttributeError):
            pass
        finally:
            self.ended.set()

    def wait_for(self, n, timeout=10):
        deadline = time.monotonic() + timeout
        while len(self.items) < n and time.monotonic() < deadline and not self.ended.is_set():
            time.sleep(0.02)
        return self.items

    def close(self):
        # shutdown first: it wakes the reader thread, which holds the
        # response's buffer lock that close() would wait for.
        try:
            self.conn.sock.shutdown(socket.SHUT_RDWR)
        except (OSError, AttributeError):
            pass
        self.ended.wait(5)
        self.conn.close()


class WatchTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ks = Kubesim("--no-sim", "--bookmark-interval", "0.3")

    @classmethod
    def tearDownClass(cls):
        cls.ks.stop()

    def setUp(self):
        self.ks.request("DELETE", PODS)      # deletecollection

    def post(self, obj):
        st, body, _ = self.ks.request("POST", PODS, obj)
        self.assertEqual(st, 201, body)
        return body

    def list_rv(self):
        st, body, _ = self.ks.request("GET", PODS)
        return body["metadata"]["resourceVersion"]

    def test_resume_from_list_and_selector_transitions(self):
        self.post(pod("before", labels={"app": "w"}))
        rv = self.list_rv()
        w = WatchStream(self.ks, PODS + "?watch=1&labelSelector=app%3Dw&resourceVersion=" + rv)
        try:
            self.post(pod("other", labels={"app": "z"}))
            self.post(pod("w1", labels={"app": "w"}))
            self.ks.request("PATCH", PODS + "/w1", {"metadata": {"labels": {"app": "gone"}}},
                            ctype="application/merge-patch+json")
            self.ks.request("PATCH", PODS + "/other", {"metadata": {"labels": {"app": "w"}}},
                            ctype="application/merge-patch+json")
            self.ks.request("DELETE", PODS + "/other")
            evs = w.wait_for(4)
            got = [(e["type"], e["object"]["metadata"]["name"]) for e in evs]
            self.assertEqual(got, [("ADDED", "w1"), ("DELETED", "w1"), ("ADDED", "other"), ("DELETED", "other")])
            self.assertEqual(evs[0]["object"]["kind"], "Pod")
            self.assertEqual(evs[0]["object"]["apiVersion"], "v1")
            rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in evs]
            self.assertEqual(rvs, sorted(rvs))
            self.assertGreater(rvs[0], int(rv))
        finally:
            w.close()

    def test_no_resource_version_starts_with_current_state(self):
        self.post(pod("a"))
        self.post(pod("b"))
        w = WatchStream(self.ks, PODS + "?watch=true&fieldSelector=metadata.name%3Db")
        try:
            evs = w.wait_for(1)
            self.assertEqual([(e["type"], e["object"]["metadata"]["name"]) for e in evs], [("ADDED", "b")])
        finally:
            w.close()

    def test_bookmarks_and_timeout(self):
        rv = self.list_rv()
        t0 = time.monotonic()
        w = WatchStream(self.ks, PODS + "?watch=1&allowWatchBookmarks=true&timeoutSeconds=1&resourceVersion=" + rv)
        try:
            self.assertTrue(w.ended.wait(5), "timeoutSeconds did not end the watch")
            self.assertLess(time.monotonic() - t0, 4)
            marks = [e for e in w.items if e["type"] == "BOOKMARK"]
            self.assertTrue(marks)
            self.assertEqual(marks[0]["object"]["kind"], "Pod")
            self.assertGreaterEqual(int(marks[0]["object"]["metadata"]["resourceVersion"]), int(rv))
        finally:
            w.close()
        w = WatchStream(self.ks, PODS + "?watch=1&timeoutSeconds=1&resourceVersion=" + rv)
        try:
            self.assertTrue(w.ended.wait(5))
            self.assertEqual([e for e in w.items if e["type"] == "BOOKMARK"], [])
        finally:
            w.close()

    def test_too_old_resource_version_is_410(self):
        rv = self.list_rv()
        self.post(pod("x"))
        st, _, _ = self.ks.request("POST", "/kubesim/faults/compact", {})
        self.assertEqual(st, 200)
        w = WatchStream(self.ks, PODS + "?watch=1&resourceVersion=" + rv)
        try:
            evs = w.wait_for(1)
            self.assertEqual(evs[0]["type"], "ERROR")
            self.assertEqual(evs[0]["object"]["code"], 410)
            self.assertEqual(evs[0]["object"]["reason"], "Expired")
            self.assertIn("too old resource version", evs[0]["object"]["message"])
            self.assertTrue(w.ended.wait(5))
        finally:
            w.close()
        # a fresh list gives a resourceVersion that works again
        w = WatchStream(self.ks, PODS + "?watch=1&resourceVersion=" + self.list_rv())
        try:
            self.post(pod("y"))
            self.assertEqual(w.wait_for(1)[0]["type"], "ADDED")
        finally:
            w.close()

    def test_send_initial_events(self):
        self.post(pod("a"))
        w = WatchStream(self.ks, PODS + "?watch=1&sendInitialEvents=true&allowWatchBookmarks=true"
                                        "&resourceVersionMatch=NotOlderThan")
        try:
            evs = w.wait_for(2)
            self.assertEqual(evs[0]["type"], "ADDED")
            self.assertEqual(evs[1]["type"], "BOOKMARK")
            self.assertEqual(evs[1]["object"]["metadata"]["annotations"], {"k8s.io/initial-events-end": "true"})
        finally:
            w.close()

    def test_server_notices_a_client_that_went_away(self):
        def open_watches():
            st, body, _ = self.ks.request("POST", "/kubesim/faults/drop-watches", {})
            return body["dropped"]
        open_watches()
        w = WatchStream(self.ks, PODS + "?watch=1&resourceVersion=" + self.list_rv())
        time.sleep(0.3)
        w.close()
        time.sleep(1.5)         # the watch loop looks at its client at least once a second
        self.assertEqual(open_watches(), 0)

    def test_drop_watches(self):
        w = WatchStream(self.ks, PODS + "?watch=1&resourceVersion=" + self.list_rv())
        try:
            time.sleep(0.3)
            st, body, _ = self.ks.request("POST", "/kubesim/faults/drop-watches", {})
            self.assertEqual(st, 200)
            self.assertGreaterEqual(body["dropped"], 1)
            self.assertTrue(w.ended.wait(5), "dropped watch stayed open")
        finally:
            w.close()


if __name__ == "__main__":
    unittest.main()
