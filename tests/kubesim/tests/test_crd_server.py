"""Custom resources over HTTPS (a `run --no-sim` process): aggregated and legacy
discovery, Tables from printer columns, a watch through the other version,
the OpenAPI index."""
import unittest

from .apisupport import Kubesim
from .crdsupport import CRDS, WIDGETS_A, WIDGETS_B, widget, widget_crd
from .test_api_watch import WatchStream

AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


class CrdServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ks = Kubesim("--no-sim")
        st, out, _ = cls.ks.request("POST", CRDS, widget_crd())
        assert st == 201, out

    @classmethod
    def tearDownClass(cls):
        cls.ks.stop()

    def test_discovery(self):
        st, doc, resp = self.ks.request("GET", "/apis", headers={"Accept": AGGREGATED})
        self.assertEqual(st, 200)
        self.assertEqual(resp.getheader("Content-Type"),
                         "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
        groups = {g["metadata"]["name"]: [v["version"] for v in g["versions"]] for g in doc["items"]}
        self.assertEqual(groups["example.com"], ["v1beta1", "v1alpha1"])
        st, doc, resp = self.ks.request("GET", "/apis")
        self.assertEqual((st, doc["kind"]), (200, "APIGroupList"))
        st, doc, _ = self.ks.request("GET", "/apis/example.com")
        self.assertEqual(doc["preferredVersion"], {"groupVersion": "example.com/v1beta1", "version": "v1beta1"})
        st, doc, _ = self.ks.request("GET", "/apis/example.com/v1alpha1")
        self.assertEqual([r["name"] for r in doc["resources"]], ["widgets", "widgets/status"])
        st, doc, _ = self.ks.request("GET", "/openapi/v3")
        self.assertIn("apis/example.com/v1alpha1", doc["paths"])
        st, doc, _ = self.ks.request("GET", "/openapi/v3/apis/example.com/v1alpha1")
        self.assertIn("com.example.v1alpha1.Widget", doc["components"]["schemas"])

    def test_table_and_watch(self):
        w = WatchStream(self.ks, WIDGETS_B + "?watch=1&resourceVersion=0&timeoutSeconds=5")
        try:
            st, out, _ = self.ks.request("POST", WIDGETS_A, widget("t", replicas=3))
            self.assertEqual(st, 201, out)
            events = w.wait_for(1)
        finally:
            w.close()
        self.assertEqual([(e["type"], e["object"]["apiVersion"], e["object"]["metadata"]["name"]) for e in events],
                         [("ADDED", "example.com/v1beta1", "t")])
        st, t, _ = self.ks.request("GET", WIDGETS_A, headers={"Accept": TABLE})
        self.assertEqual((st, t["kind"]), (200, "Table"))
        self.assertEqual([c["name"] for c in t["columnDefinitions"]],
                         ["Name", "Image", "Mode", "Phase", "Replicas", "Age"])
        self.assertEqual(t["rows"][0]["cells"][:5], ["t", "busybox:1.36", "Once", None, 3])


if __name__ == "__main__":
    unittest.main()
