"""kubesim.printcols: the Table columns and cells of custom resources, as the apiextensions
tableconvertor builds them from additionalPrinterColumns."""
import unittest

from kubesim import printcols as pc
from kubesim.clock import parse_rfc3339

NOW = parse_rfc3339("2026-03-01T12:00:00Z")

WIDGET = {
    "apiVersion": "example.com/v1", "kind": "Widget",
    "metadata": {"name": "w1", "creationTimestamp": "2026-03-01T11:00:00Z",
                 "labels": {"app.kubernetes.io/name": "widget"}},
    "spec": {"replicas": 3, "ratio": 0.25, "image": "busybox:1.36", "paused": False, "big": 1e6,
             "ports": [{"name": "http", "port": 80}, {"name": "metrics", "port": 9090}],
             "selector": {"app": "w", "tier": "<web>"}},
    "status": {"conditions": [{"type": "Progressing", "status": "True"},
                              {"type": "Ready", "status": "False", "lastTransitionTime": "2026-03-01T11:58:30Z"}],
               "observed": 2.9},
}


def col(name, jsonpath, typ="string", **kw):
    return dict({"name": name, "type": typ, "jsonPath": jsonpath}, **kw)


class ColumnDefinitionsTest(unittest.TestCase):
    def test_default_is_name_and_age(self):
        for cols in (None, []):
            defs = pc.column_definitions(cols)
            self.assertEqual([(d["name"], d["type"], d["format"], d["priority"]) for d in defs],
                             [("Name", "string", "name", 0), ("Age", "date", "", 0)])
        self.assertEqual(pc.row_cells(None, WIDGET, NOW), ["w1", "60m"])

    def test_printer_columns(self):
        defs = pc.column_definitions([
            col("Replicas", ".spec.replicas", "integer", description="wanted pods"),
            col("Image", ".spec.image", priority=1, format="byte")])
        self.assertEqual(defs[0]["name"], "Name")
        self.assertEqual(defs[1:], [
            {"name": "Replicas", "type": "integer", "format": "", "description": "wanted pods", "priority": 0},
            {"name": "Image", "type": "string", "format": "byte", "priority": 1,
             "description": "Custom resource definition column (in JSONPath format): .spec.image"}])


class CellTest(unittest.TestCase):
    def cells(self, *cols):
        return pc.row_cells(list(cols), WIDGET, NOW)[1:]

    def test_each_type(self):
        self.assertEqual(self.cells(
            col("R", ".spec.replicas", "integer"), col("Obs", ".status.observed", "integer"),
            col("Ratio", ".spec.ratio", "number"), col("Whole", ".spec.replicas", "number"),
            col("Paused", ".spec.paused", "boolean"), col("Image", ".spec.image"),
            col("Changed", ".status.conditions[1].lastTransitionTime", "date"),
            col("Age", ".metadata.creationTimestamp", "date")),
            [3, 2, 0.25, 3.0, False, "busybox:1.36", "90s", "60m"])

    def test_wrong_types_are_null(self):
        self.assertEqual(self.cells(
            col("A", ".spec.image", "integer"), col("B", ".spec.replicas", "boolean"),
            col("C", ".spec.paused", "number"), col("D", ".spec.replicas", "date")),
            [None, None, None, None])

    def test_string_columns_print_what_jsonpath_prints(self):
        self.assertEqual(self.cells(
            col("N", ".spec.replicas"), col("F", ".spec.ratio"), col("Big", ".spec.big"), col("B", ".spec.paused"),
            col("Ports", ".spec.ports"), col("Sel", ".spec.selector")),
            ["3", "0.25", "1e+06", "false", '[{"name":"http","port":80},{"name":"metrics","port":9090}]',
             '{"app":"w","tier":"\\u003cweb\\u003e"}'])

    def test_missing_values_are_null(self):
        self.assertEqual(self.cells(col("X", ".spec.nothing"), col("Y", ".spec.ports[5].port", "integer"),
                                    col("Z", ".status.conditions[?(@.type==\"Gone\")].status")),
                         [None, None, None])

    def test_filters_indexes_and_first_match(self):
        self.assertEqual(self.cells(
            col("Ready", '.status.conditions[?(@.type=="Ready")].status'),
            col("NotReady", ".status.conditions[?(@.type!='Ready')].type"),
            col("Big", ".spec.ports[?(@.port > 100)].name"),
            col("Last", ".spec.ports[-1].name"),
            col("First", ".spec.ports[*].port", "integer"),
            col("Quoted", ".spec.selector['app']"),
            col("Deep", "..lastTransitionTime", "date"),
            col("Braces", "{.spec.image}"),
            col("Escaped", ".metadata.labels.app\\.kubernetes\\.io/name")),
            ["False", "Progressing", "metrics", "metrics", 80, "w", "90s", "busybox:1.36", "widget"])

    def test_dates(self):
        o = {"metadata": {"name": "x"}, "spec": {"a": "", "b": "yesterday", "c": "2026-03-01",
                                                 "d": "2026-02-27T12:00:00Z", "e": "2026-03-01T11:59:59.5+00:00"}}
        cols = [col(k, ".spec." + k, "date") for k in "abcde"]
        self.assertEqual(pc.row_cells(cols, o, NOW)[1:], ["<unknown>", "<invalid>", "<invalid>", "2d", "0s"])


if __name__ == "__main__":
    unittest.main()
