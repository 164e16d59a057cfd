"""Every AdmissionReview fixture of tests/fixtures through the real server,
over HTTP/1.1 keep-alive.

For each fixture (FIXTURE_CASES in harness.py says what it must produce):
the patch /mutate returns, applied with kubesim's JSON Patch applier, gives
<name>.expected.json; /validate's verdict on the review as received and on
the mutated object (the apiserver runs validating webhooks after mutating
ones); mutate, validate and mutate again share one connection. Also: a
client that offers HTTP/2 gets HTTP/1.1 (docs/DECISIONS.md "No HTTP/2").

Part of the integration suite: run_all.py runs it with the others (`make
integration`; one file: run_all.py -k 'test_fixtures.*').
"""

import copy
import json

from harness import (FIXTURE_CASES, ApiError, ServerTestCase, compact,
                     curl_batch, diff_objects, json_patch, load_fixture)


class FixtureMixin:
    def check_transfer(self, w, what):
        want = "1.1"
        self.assertEqual(w["http_version"], want,
                         "%s: HTTP version %s, expected %s"
                         % (what, w["http_version"], want))
        self.assertIn("content-length", w["headers"],
                      "%s: no content-length" % what)
        self.assertEqual(int(w["headers"]["content-length"]), len(w["body"]),
                         what)

    def run_fixture(self, name):
        case = FIXTURE_CASES[name]
        review, expected = load_fixture(name)
        req = review["request"]
        uid = req["uid"]
        body = compact(review)
        tr = curl_batch(self.port, [("/mutate?timeout=10s", body),
                                    ("/validate?timeout=10s", body),
                                    ("/mutate?timeout=10s", body)])
        self.assertEqual(sum(w["num_connects"] for w in tr), 1,
                         "3 requests in one curl run used %s connections "
                         "(keep-alive broken)"
                         % [w["num_connects"] for w in tr])
        for w, what in zip(tr, ("mutate", "validate", "mutate again")):
            self.check_transfer(w, what)
        mresp, patch = self.assert_review(200, tr[0]["headers"], tr[0]["body"],
                                          uid)
        mresp2, patch2 = self.assert_review(200, tr[2]["headers"],
                                            tr[2]["body"], uid)
        self.assertEqual(patch is None, patch2 is None,
                         "same request, different answers")

        # The mutating webhook.
        if not mresp["allowed"]:
            # Allowed to deny here too (the validating webhook must).
            self.assertFalse(case["validate"],
                             "/mutate denied an allowed request: %s" % mresp)
            patched = req["object"]
        else:
            if case["patched"]:
                self.assertTrue(patch, "/mutate returned no patch: %s" % mresp)
            else:
                self.assertFalse(patch, "/mutate returned an unexpected "
                                 "patch: %s" % json.dumps(patch))
            try:
                patched = json_patch(req["object"], patch or [])
            except ApiError as e:
                self.fail("the patch does not apply to request.object: %s\n"
                          "patch: %s" % (e, json.dumps(patch)))
            diffs = diff_objects(expected, patched)
            self.assertEqual(diffs, [], "patched object differs from %s."
                             "expected.json:\n  %s\npatch: %s"
                             % (name, "\n  ".join(diffs), json.dumps(patch)))
            warns = mresp.get("warnings") or []
            if case.get("warn"):
                self.assertTrue(any(case["warn"] in w for w in warns),
                                "no warning mentioning %s: %s"
                                % (case["warn"], warns))
            else:
                self.assertEqual(warns, [], "unexpected warnings")

        # The validating webhook on the review as received.
        vresp, vpatch = self.assert_review(200, tr[1]["headers"],
                                           tr[1]["body"], uid)
        self.assertIsNone(vpatch, "/validate returned a patch")
        raw_verdict = case.get("validate_raw", case["validate"])
        self.assertEqual(vresp["allowed"], raw_verdict,
                         "/validate on the request as received: %s" % vresp)
        if not vresp["allowed"]:
            msg = vresp["status"]["message"]
            for m in case.get("deny", []):
                self.assertIn(m, msg, "denial message lacks %r" % m)

        # The validating webhook on the mutated object, as the apiserver
        # chains them.
        if patch:
            review2 = copy.deepcopy(review)
            review2["request"]["object"] = patched
            tr2 = curl_batch(self.port, [("/validate?timeout=10s",
                                          compact(review2))])
            self.check_transfer(tr2[0], "validate after mutation")
            vresp, vpatch = self.assert_review(200, tr2[0]["headers"],
                                               tr2[0]["body"], uid)
            self.assertIsNone(vpatch, "/validate returned a patch")
            self.assertEqual(vresp["allowed"], case["validate"],
                             "/validate after mutation: %s" % vresp)
        else:
            self.assertEqual(vresp["allowed"], case["validate"],
                             "/validate (nothing to mutate): %s" % vresp)
        if not vresp["allowed"]:
            msg = vresp["status"]["message"]
            for m in case.get("deny", []):
                self.assertIn(m, msg, "denial message lacks %r" % m)

    def test_all_fixtures_on_one_connection(self):
        transfers = []
        for name in sorted(FIXTURE_CASES):
            body = compact(load_fixture(name)[0])
            transfers += [("/mutate?timeout=10s", body),
                          ("/validate?timeout=10s", body)]
        tr = curl_batch(self.port, transfers)
        self.assertEqual(sum(w["num_connects"] for w in tr), 1,
                         [w["num_connects"] for w in tr])
        for w in tr:
            self.check_transfer(w, w.get("url_effective"))
            self.assertEqual(w["http_code"], 200, w["body"][:300])


def _add_fixture_tests(cls):
    for name in FIXTURE_CASES:
        def t(self, name=name):
            self.run_fixture(name)
        t.__name__ = "test_fixture_" + name.replace("-", "_")
        t.__doc__ = "fixture %s" % name
        setattr(cls, t.__name__, t)
    return cls


@_add_fixture_tests
class TestFixturesHTTP1(FixtureMixin, ServerTestCase):
    SERVER_ARGS = ("--threads", "2")

    def test_http2_is_never_negotiated(self):
        # docs/DECISIONS.md "No HTTP/2": no ALPN is offered, so a client
        # that asks for h2 speaks HTTP/1.1.
        tr = curl_batch(self.port, [("/mutate", compact(self.valid_review()))],
                        http2=True)
        self.assertEqual(tr[0]["http_version"], "1.1", "HTTP/2 negotiated")
        self.assertEqual(tr[0]["http_code"], 200)
