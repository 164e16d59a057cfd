"""Checks of the tools the other files trust, with no server: kubesim's RFC
6902 JSON Patch applier (the fixture and transition tests apply the webhook's
patches with it) on RFC 6902's examples and errors, diff_objects, the
fixture files of tests/fixtures themselves, and the Prometheus text parser
every suite reads /metrics with (tests/lib/promtext.py).

Part of the integration suite: run_all.py runs it with the others (`make
integration`; one file: run_all.py -k 'test_harness_checks.*').
"""

import copy
import datetime
import unittest

from harness import (FIXTURE_CASES, STAMPED, ApiError, compact, diff_objects,
                     json_equal, json_patch, load_fixture, metric_sum, parse_metrics)
import promtext  # on sys.path through harness


class TestJsonPatchApplier(unittest.TestCase):
    def test_rfc6902_examples(self):
        cases = [  # RFC 6902 appendix A
            ({"foo": "bar"}, [{"op": "add", "path": "/baz", "value": "qux"}],
             {"baz": "qux", "foo": "bar"}),
            ({"foo": ["bar", "baz"]},
             [{"op": "add", "path": "/foo/1", "value": "qux"}],
             {"foo": ["bar", "qux", "baz"]}),
            ({"baz": "qux", "foo": "bar"}, [{"op": "remove", "path": "/baz"}],
             {"foo": "bar"}),
            ({"foo": ["bar", "qux", "baz"]},
             [{"op": "remove", "path": "/foo/1"}], {"foo": ["bar", "baz"]}),
            ({"baz": "qux", "foo": "bar"},
             [{"op": "replace", "path": "/baz", "value": "boo"}],
             {"baz": "boo", "foo": "bar"}),
            ({"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "g"}},
             [{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}],
             {"foo": {"bar": "baz"}, "qux": {"corge": "g", "thud": "fred"}}),
            ({"foo": ["all", "grass", "cows", "eat"]},
             [{"op": "move", "from": "/foo/1", "path": "/foo/3"}],
             {"foo": ["all", "cows", "eat", "grass"]}),
            ({"foo": ["bar"]},
             [{"op": "add", "path": "/foo/-", "value": ["abc", "def"]}],
             {"foo": ["bar", ["abc", "def"]]}),
            ({"/": 9, "~1": 10}, [{"op": "test", "path": "/~01", "value": 10}],
             {"/": 9, "~1": 10}),
            ({"a": {}}, [{"op": "add", "path": "/a/b~1c~0d", "value": 1}],
             {"a": {"b/c~d": 1}}),
            ({"a": 1}, [{"op": "replace", "path": "", "value": [1]}], [1]),
            ({"a": None}, [{"op": "add", "path": "/a", "value": "t"}],
             {"a": "t"}),
            ({"a": [1]}, [{"op": "copy", "from": "/a", "path": "/b"}],
             {"a": [1], "b": [1]}),
        ]
        for doc, ops, want in cases:
            with self.subTest(ops=ops):
                before = copy.deepcopy(doc)
                self.assertTrue(json_equal(json_patch(doc, ops), want))
                self.assertEqual(doc, before, "input was modified")

    def test_rfc6902_errors(self):
        cases = [
            ({"foo": "bar"}, [{"op": "add", "path": "/baz/bat", "value": 1}]),
            ({"a": 1}, [{"op": "remove", "path": "/b"}]),
            ({"a": 1}, [{"op": "replace", "path": "/b", "value": 1}]),
            ({"a": [1]}, [{"op": "add", "path": "/a/2", "value": 1}]),
            ({"a": [1]}, [{"op": "add", "path": "/a/01", "value": 1}]),
            ({"a": [1]}, [{"op": "remove", "path": "/a/-"}]),
            ({"baz": "qux"}, [{"op": "test", "path": "/baz", "value": "bar"}]),
            ({"a": 1}, [{"op": "test", "path": "/a", "value": True}]),
            ({"a": 1}, [{"op": "add", "path": "a", "value": 1}]),
            ({"a": 1}, [{"op": "add", "path": "/a~2", "value": 1}]),
            ({"a": 1}, [{"op": "frobnicate", "path": "/a"}]),
            ({"a": 1}, [{"op": "add", "path": "/b"}]),
            ({"a": {"b": 1}}, [{"op": "move", "from": "/a", "path": "/a/c"}]),
            ({"a": 1}, {"op": "add", "path": "/b", "value": 1}),
        ]
        for doc, ops in cases:
            with self.subTest(ops=ops):
                with self.assertRaises(ApiError):
                    json_patch(doc, ops)

    def test_diff_objects(self):
        now = datetime.datetime.now(datetime.timezone.utc) \
            .strftime("%Y-%m-%dT%H:%M:%SZ")
        exp = {"status": {"conditions": [
            {"type": "B", "lastTransitionTime": STAMPED},
            {"type": "A", "x": True}]}}
        ok = {"status": {"conditions": [
            {"type": "A", "x": True},
            {"type": "B", "lastTransitionTime": now}]}}
        self.assertEqual(diff_objects(exp, ok), [])
        bad = copy.deepcopy(ok)
        bad["status"]["conditions"][1]["lastTransitionTime"] = \
            "2020-01-01T00:00:00Z"
        self.assertEqual(len(diff_objects(exp, bad)), 1)
        bad["status"]["conditions"][1]["lastTransitionTime"] = \
            now.replace("Z", "+00:00")
        self.assertEqual(len(diff_objects(exp, bad)), 1)
        bad = copy.deepcopy(ok)
        bad["status"]["conditions"][0]["x"] = 1
        self.assertEqual(len(diff_objects(exp, bad)), 1)
        bad = copy.deepcopy(ok)
        bad["extra"] = 1
        self.assertEqual(len(diff_objects(exp, bad)), 1)
        self.assertEqual(len(diff_objects({"a": STAMPED}, {"a": now})), 1)

    def test_fixtures_are_consistent(self):
        for name in FIXTURE_CASES:
            with self.subTest(fixture=name):
                review, expected = load_fixture(name)
                req = review["request"]
                self.assertEqual(review["apiVersion"], "admission.k8s.io/v1")
                self.assertEqual(review["kind"], "AdmissionReview")
                self.assertEqual(req["name"],
                                 req["object"]["metadata"]["name"])
                if not FIXTURE_CASES[name]["patched"]:
                    self.assertEqual(expected, req["object"])
                else:
                    self.assertNotEqual(expected, req["object"])
        routine, _ = load_fixture("pod-status-kubelet-routine")
        size = len(compact(routine))
        self.assertTrue(9000 < size < 14000, size)


class TestPromText(unittest.TestCase):
    TEXT = ('# HELP a_total A.\n# TYPE a_total counter\n'
            'a_total{path="/mutate",result="allowed"} 3\n'
            'a_total{path="/validate",result="denied"} 2\n'
            'b_seconds_bucket{le="+Inf"} 5\n'
            'c{msg="say \\"hi\\", then go"} 1.5\n'
            '\n'
            'd 7\n')

    def test_parse_and_sum(self):
        s = parse_metrics(self.TEXT)
        self.assertEqual(len(s), 5)
        self.assertEqual(s[0], ("a_total", {"path": "/mutate", "result": "allowed"}, 3.0))
        self.assertEqual(s[3], ("c", {"msg": 'say \\"hi\\", then go'}, 1.5))  # as written
        self.assertEqual(s[4], ("d", {}, 7.0))
        self.assertEqual(metric_sum(s, "a_total"), 5)
        self.assertEqual(metric_sum(s, "a_total", result="denied"), 2)
        self.assertEqual(metric_sum(s, "a_total", path=lambda p: "mutate" in p), 3)
        self.assertEqual(metric_sum(s, "nothing"), 0)

    def test_keyed(self):
        """The keys the e2e tests and the benchmarks look samples up by."""
        self.assertEqual(promtext.keyed(self.TEXT), {
            'a_total{path="/mutate",result="allowed"}': 3.0,
            'a_total{path="/validate",result="denied"}': 2.0,
            'b_seconds_bucket{le="+Inf"}': 5.0,
            'c{msg="say \\"hi\\", then go"}': 1.5,
            "d": 7.0})

    def test_malformed_lines_raise(self):
        for bad in ("a_total", "a_total{x=1} 2", "9a 1", 'a_total{path="x"} many',
                    'a_total{path="x" 1'):
            with self.assertRaises(ValueError, msg=bad):
                parse_metrics(bad)
            with self.assertRaises(ValueError, msg=bad):
                promtext.keyed(bad)
