"""Paged lists as the apiserver serves them from etcd: `limit`, `metadata.continue`,
`remainingItemCount`, continued pages consistent with the first one, 410 Expired for a
continue token older than the compaction point, 400 for bad tokens; plus the same over
HTTPS (Tables page too) and /kubesim/faults/compact."""
import base64
import json
import unittest
from urllib.parse import quote

from .apisupport import ADMIN, Kubesim, new_api, pod
from kubesim import api as apimod
from kubesim import discovery, tables
from kubesim.store import Store

PODS = "/api/v1/namespaces/default/pods"


class PagingTest(unittest.TestCase):
    def setUp(self):
        self.api, self.adm = new_api()
        self.addCleanup(self.adm.close)
        for i, name in enumerate("abcdefg"):
            self.create(name, labels={"even": str(i % 2 == 0).lower()})

    def create(self, name, ns="default", labels=None):
        st, body = self.api.call(ADMIN, "POST", "/api/v1/namespaces/%s/pods" % ns, pod(name, ns, labels=labels))
        self.assertEqual(st, 201, body)
        return body

    def get(self, query, path=PODS):
        st, body = self.api.call(ADMIN, "GET", path, query=query)
        self.assertEqual(st, 200, body)
        return body

    @staticmethod
    def names(body):
        return [o["metadata"]["name"] for o in body["items"]]

    def pages(self, query, path=PODS):
        """Every page of a paged list: [(names, metadata)]."""
        out = []
        q = dict(query)
        for _ in range(50):
            body = self.get(q, path)
            out.append((self.names(body), body["metadata"]))
            if not body["metadata"].get("continue"):
                return out
            q = dict(query, **{"continue": body["metadata"]["continue"]})
        self.fail("more than 50 pages")

    def test_pages_and_remaining_count(self):
        rows = [
            # (name, query, pages of names, remainingItemCount of each page but the last)
            ("limit 3", {"limit": "3"}, [["a", "b", "c"], ["d", "e", "f"], ["g"]], [4, 1]),
            ("limit 7: one page", {"limit": "7"}, [list("abcdefg")], []),
            ("limit 6", {"limit": "6"}, [list("abcdef"), ["g"]], [1]),
            ("limit 100", {"limit": "100"}, [list("abcdefg")], []),
            ("no limit", {}, [list("abcdefg")], []),
            ("limit 0 = none", {"limit": "0"}, [list("abcdefg")], []),
            ("limit -1 = none", {"limit": "-1"}, [list("abcdefg")], []),
            ("resourceVersion 0 ignores limit", {"limit": "2", "resourceVersion": "0"}, [list("abcdefg")], []),
            ("limit 1", {"limit": "1"}, [[n] for n in "abcdefg"], [6, 5, 4, 3, 2, 1]),
        ]
        for name, query, want, remaining in rows:
            with self.subTest(name):
                got = self.pages(query)
                self.assertEqual([p[0] for p in got], want)
                self.assertEqual([p[1].get("remainingItemCount") for p in got[:-1]], remaining)
                self.assertNotIn("remainingItemCount", got[-1][1])
                self.assertNotIn("continue", got[-1][1])
                # every page reads at the first page's resourceVersion
                self.assertEqual({p[1]["resourceVersion"] for p in got}, {got[0][1]["resourceVersion"]})

    def test_selector_pages_fill_limit_without_remaining_count(self):
        got = self.pages({"limit": "2", "labelSelector": "even=true"})
        # a c e g match; with a selector the apiserver gives no remainingItemCount
        self.assertEqual([p[0] for p in got], [["a", "c"], ["e", "g"]])
        self.assertNotIn("remainingItemCount", got[0][1])
        self.assertTrue(got[0][1]["continue"])
        # the last matching item filled the page while objects follow it: one more
        # (empty) page, as etcd answers
        got = self.pages({"limit": "3", "labelSelector": "even=false"})
        self.assertEqual([p[0] for p in got], [["b", "d", "f"], []])
        got = self.pages({"limit": "2", "fieldSelector": "metadata.name=zz"})
        self.assertEqual([p[0] for p in got], [[]])

    def test_read_only_list_is_the_same_list_uncopied(self):
        for query in (None, {"labelSelector": "even=true"}, {"limit": "3"}):
            st, shared = self.api.list_read_only(ADMIN, PODS, query=query)
            self.assertEqual(st, 200, shared)
            self.assertEqual(shared, self.get(query or {}))
        # the items are the stored objects: what the store hands the next reader
        st, first = self.api.list_read_only(ADMIN, PODS)
        st, again = self.api.list_read_only(ADMIN, PODS)
        self.assertIs(first["items"][0], again["items"][0])
        # and only that call: the next plain list copies again
        self.assertIsNot(self.get({})["items"][0], first["items"][0])

    def test_namespaces_and_cluster_scope(self):
        st, _ = self.api.call(ADMIN, "POST", "/api/v1/namespaces",
                              {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "aaa"}})
        self.assertEqual(st, 201)
        self.create("z", ns="aaa")
        got = self.pages({"limit": "3"}, "/api/v1/pods")
        self.assertEqual([p[0] for p in got], [["z", "a", "b"], ["c", "d", "e"], ["f", "g"]])
        got = self.pages({"limit": "2"}, "/api/v1/namespaces")
        self.assertEqual(sum((p[0] for p in got), []),
                         ["aaa", "default", "kube-node-lease", "kube-public", "kube-system"])

    def test_continued_pages_see_the_first_pages_state(self):
        first = self.get({"limit": "3"})
        rv = first["metadata"]["resourceVersion"]
        st, e_before = self.api.call(ADMIN, "GET", PODS + "/e")
        self.create("dd")                                                  # added after the first page
        self.assertEqual(self.api.call(ADMIN, "DELETE", PODS + "/d", query={"gracePeriodSeconds": "0"})[0], 200)
        st, _ = self.api.call(ADMIN, "PATCH", PODS + "/e", {"metadata": {"labels": {"new": "1"}}},
                              content_type="application/merge-patch+json")
        self.assertEqual(st, 200)
        second = self.get({"limit": "3", "continue": first["metadata"]["continue"]})
        self.assertEqual(self.names(second), ["d", "e", "f"])
        self.assertEqual(second["metadata"]["resourceVersion"], rv)
        self.assertEqual(second["items"][1], e_before)
        self.assertEqual(second["metadata"]["remainingItemCount"], 1)
        # a fresh list sees now
        self.assertEqual(self.names(self.get({})), ["a", "b", "c", "dd", "e", "f", "g"])

    def test_compacted_continue_is_410_expired(self):
        first = self.get({"limit": "3"})
        self.create("h")                     # a write after the first page, then compaction
        self.api.store.compact()
        st, body = self.api.call(ADMIN, "GET", PODS, query={"limit": "3", "continue": first["metadata"]["continue"]})
        self.assertEqual((st, body["reason"], body["code"]), (410, "Expired", 410), body)
        self.assertIn("The provided continue parameter is too old", body["message"])
        # a token taken at the compaction point is still good
        first = self.get({"limit": "3"})
        self.api.store.compact()
        self.assertEqual(self.names(self.get({"limit": "3", "continue": first["metadata"]["continue"]})),
                         ["d", "e", "f"])

    def test_history_rolling_over_expires_tokens(self):
        a = apimod.Api(self.api.clock, store=Store(history=10))
        for n in "abcd":
            self.assertEqual(a.call(ADMIN, "POST", PODS, pod(n))[0], 201)
        st, first = a.call(ADMIN, "GET", PODS, query={"limit": "2"})
        self.assertEqual(st, 200)
        for i in range(5):                    # still within the history: consistent
            self.assertEqual(a.call(ADMIN, "POST", "/api/v1/namespaces/default/configmaps",
                                    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c%d" % i}})[0], 201)
        st, body = a.call(ADMIN, "GET", PODS, query={"limit": "2", "continue": first["metadata"]["continue"]})
        self.assertEqual((st, self.names(body)), (200, ["c", "d"]))
        for i in range(10):                   # the first page's version leaves the history
            a.call(ADMIN, "POST", "/api/v1/namespaces/default/configmaps",
                   {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x%d" % i}})
        st, body = a.call(ADMIN, "GET", PODS, query={"limit": "2", "continue": first["metadata"]["continue"]})
        self.assertEqual((st, body["reason"]), (410, "Expired"))

    def test_bad_parameters_are_400(self):
        def tok(doc):
            return base64.urlsafe_b64encode(json.dumps(doc).encode()).decode().rstrip("=")
        good = self.get({"limit": "2"})["metadata"]["continue"]
        rows = [
            ("limit not a number", {"limit": "ten"}, 'invalid limit: "ten"'),
            ("continue with resourceVersion", {"continue": good, "resourceVersion": "5"},
             "specifying resource version is not allowed when using continue"),
            ("not base64", {"continue": "!!!"}, "continue key is not valid"),
            ("base64 of not JSON", {"continue": tok("x")[:-2] + "__"}, "continue key is not valid"),
            ("wrong version", {"continue": tok({"v": "v2", "rv": 3, "start": "a\u0000"})}, "unknown version"),
            ("rv not a number", {"continue": tok({"v": "meta.k8s.io/v1", "rv": "3", "start": "a\u0000"})},
             "incorrect encoded start resourceVersion"),
            ("rv zero", {"continue": tok({"v": "meta.k8s.io/v1", "rv": 0, "start": "a\u0000"})},
             "incorrect encoded start resourceVersion"),
            ("start without NUL", {"continue": tok({"v": "meta.k8s.io/v1", "rv": 3, "start": "a"})},
             "unknown start key"),
            ("JSON array", {"continue": tok([1])}, "unknown version"),
            ("too long", {"continue": "A" * (apimod.MAX_CONTINUE + 1)}, "longer than 8192 bytes"),
        ]
        for name, query, want in rows:
            with self.subTest(name):
                st, body = self.api.call(ADMIN, "GET", PODS, query=query)
                self.assertEqual((st, body["reason"]), (400, "BadRequest"), body)
                self.assertIn(want, body["message"])

    def test_token_shape_is_the_apiservers(self):
        body = self.get({"limit": "2"})
        tok = body["metadata"]["continue"]
        doc = json.loads(base64.urlsafe_b64decode(tok + "=" * (-len(tok) % 4)))
        self.assertEqual(doc, {"v": "meta.k8s.io/v1", "rv": int(body["metadata"]["resourceVersion"]),
                               "start": "default/b\u0000"})

    def test_table_carries_continue(self):
        body = self.get({"limit": "2"})
        t = tables.to_table(discovery.lookup("", "v1", "pods"), body, self.api.clock.now())
        self.assertEqual(t["metadata"]["continue"], body["metadata"]["continue"])
        self.assertEqual(t["metadata"]["remainingItemCount"], 5)
        self.assertEqual(len(t["rows"]), 2)

    def test_delete_collection_ignores_limit(self):
        st, _ = self.api.call(ADMIN, "DELETE", PODS, query={"limit": "2", "gracePeriodSeconds": "0"})
        self.assertEqual(st, 200)
        self.assertEqual(self.get({})["items"], [])


class PagingOverHttpsTest(unittest.TestCase):
    """The same through the server, and /kubesim/faults/compact expiring a token."""

    @classmethod
    def setUpClass(cls):
        cls.ks = Kubesim("--no-sim")

    @classmethod
    def tearDownClass(cls):
        cls.ks.stop()

    def test_pages_then_compact(self):
        for i in range(5):
            st, body, _ = self.ks.request("POST", "/api/v1/namespaces/default/configmaps",
                                          {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm%d" % i}})
            self.assertEqual(st, 201, body)
        path = "/api/v1/namespaces/default/configmaps?limit=2"
        st, first, _ = self.ks.request("GET", path)
        self.assertEqual((st, [o["metadata"]["name"] for o in first["items"]]), (200, ["cm0", "cm1"]))
        self.assertEqual(first["metadata"]["remainingItemCount"], 3)
        st, second, _ = self.ks.request("GET", path + "&continue=" + quote(first["metadata"]["continue"]))
        self.assertEqual((st, [o["metadata"]["name"] for o in second["items"]]), (200, ["cm2", "cm3"]))
        st, _b, _ = self.ks.request("POST", "/api/v1/namespaces/default/configmaps",
                                    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm9"}})
        self.assertEqual(st, 201)
        self.assertEqual(self.ks.request("POST", "/kubesim/faults/compact")[0], 200)
        st, body, _ = self.ks.request("GET", path + "&continue=" + quote(second["metadata"]["continue"]))
        self.assertEqual((st, body["reason"]), (410, "Expired"), body)
        self.assertIn("The provided continue parameter is too old", body["message"])

    def test_fault_on_continued_pages_only(self):
        for i in range(3):
            self.ks.request("POST", "/api/v1/namespaces/default/secrets",
                            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s%d" % i}})
        st, _b, _ = self.ks.request("POST", "/kubesim/faults",
                                    {"error": {"code": 410, "count": 1, "queryContains": "continue="}})
        self.assertEqual(st, 200)
        self.addCleanup(self.ks.request, "DELETE", "/kubesim/faults")
        path = "/api/v1/namespaces/default/secrets?limit=2"
        st, first, _ = self.ks.request("GET", path)          # no continue: not hit
        self.assertEqual(st, 200)
        cont = "&continue=" + quote(first["metadata"]["continue"])
        st, body, _ = self.ks.request("GET", path + cont)
        self.assertEqual((st, body["reason"]), (410, "Expired"))
        self.assertIn("The provided continue parameter is too old", body["message"])
        st, body, _ = self.ks.request("GET", path + cont)     # count used up
        self.assertEqual((st, [o["metadata"]["name"] for o in body["items"]]), (200, ["s2"]))


if __name__ == "__main__":
    unittest.main()
