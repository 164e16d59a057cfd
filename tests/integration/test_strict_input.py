"""Issue 9, input and admission: what the webhook used to let through or say
badly, checked on the wire.

- RFC 8259: only space, tab, LF and CR separate tokens (yajl also took
  vertical tab and form feed), and nothing follows the value (`{...}"abc`
  was answered 200); a `\\v` inside a stored condition must never be copied
  into a restore patch.
- Lone UTF-16 surrogate escapes are refused, high ones too (yajl rewrote
  `"\\ud800zz"` to `"?zz"` and `\\ud800\\u0041` to U+10041).
- Messages quote the request's values whole: an escaped NUL no longer cuts
  them, and the OnDelete warning says the annotation as written.
- A restored condition comes with an admission warning naming it and why.
- Issue 19: a key twice in one object, anywhere in the body, is a 400 that
  names the key and where (a forged `groups` before the real one was read
  as system:masters: the decoder merged, Kubernetes keeps the last).
(Duplicate OTA conditions: test_transitions.py.)

Part of the integration suite: run_all.py runs it with the others (`make
integration`; one file: run_all.py -k 'test_strict_input.*').
"""

import copy
import json

from harness import ServerTestCase, compact, load_fixture


class TestStrictInput(ServerTestCase):
    SERVER_ARGS = ("--threads", "2")

    def post(self, path, body):
        c = self.conn()
        return c.call("POST", path + "?timeout=10s", body)

    def expect_400(self, body, mentions, path="/mutate"):
        st, h, b = self.post(path, body)
        doc = self.assert_status_body(st, h, b, 400, mentions)
        self.assert_still_serving()
        return doc["message"]

    def ds_review(self, uid="5a000000-0000-4000-8000-000000000001"):
        review, _ = load_fixture("ds-create-ota-rollingupdate")
        review["request"]["uid"] = uid
        return review

    # -- RFC 8259 ---------------------------------------------------------

    def test_vertical_tab_and_form_feed_are_not_whitespace(self):
        body = compact(self.ds_review())
        for ch, name in ((b"\v", "0x0b"), (b"\f", "0x0c")):
            with self.subTest(ch=name):
                bad = body.replace(b'"kind":', ch + b'"kind":', 1)
                self.assertNotEqual(bad, body)
                msg = self.expect_400(bad, ["control character " + name])
                self.assertIn("RFC 8259", msg)
        # the four whitespace bytes RFC 8259 has are fine, anywhere
        ok = body.replace(b'"kind":', b' \t\r\n"kind" \t\r\n: ', 1) + b"\r\n"
        uid = self.ds_review()["request"]["uid"]
        self.assert_review(*self.post("/mutate", ok), uid)

    def test_nothing_after_the_value(self):
        body = compact(self.ds_review())
        for tail in (b'"abc', b" tr", b"\n1", b"[", b"}", b'{"a":1}', b"x"):
            with self.subTest(tail=tail):
                msg = self.expect_400(body + tail, ["after the top-level value"])
                self.assertIn("at byte %d" % (len(body) + len(tail)
                                              - len(tail.lstrip())), msg)

    def test_vertical_tab_in_a_stored_condition_never_reaches_a_patch(self):
        # YurtHub dropped PodNeedUpgrade: the webhook copies the stored one
        # into its patch verbatim.  With a \v between its tokens, Go's and
        # Python's decoders would refuse that patch; the webhook refuses the
        # review instead.
        review, _ = load_fixture("pod-status-prepull-yurthub")
        body = compact(review)
        marker = b'{"type":"PodNeedUpgrade"'
        self.assertEqual(body.count(marker), 1)
        bad = body.replace(marker, b'{"type":\v"PodNeedUpgrade"')
        self.expect_400(bad, ["control character 0x0b"])
        # and as sent, the patch it makes is JSON every decoder reads
        st, h, b = self.post("/mutate", body)
        _, patch = self.assert_review(st, h, b, review["request"]["uid"])
        self.assertTrue(patch)

    # -- surrogates -------------------------------------------------------

    def test_lone_surrogate_escapes_are_refused(self):
        review = self.ds_review()
        for esc, kind in ((b"\\ud800zz", "high"), (b"\\ud800\\u0041", "high"),
                          (b"\\uDBFF\\uDBFF", "high"), (b"x\\ud83d", "high"),
                          (b"\\udc00", "low"), (b"\\udfff\\ud800", "low")):
            for where in ("uid", "skipped"):
                with self.subTest(esc=esc, where=where):
                    body = compact(review)
                    if where == "uid":
                        body = body.replace(b'"uid":"', b'"uid":"' + esc, 1)
                    else:
                        body = body.replace(b'"dryRun":', b'"x":"' + esc +
                                            b'","dryRun":', 1)
                    self.assertIn(esc, body)
                    self.expect_400(body, ["lone UTF-16 %s surrogate" % kind])
        # a proper pair is a character like any other
        uid = "\U0001F680-pair"
        review["request"]["uid"] = uid
        st, h, b = self.post("/mutate", json.dumps(review).encode())
        self.assert_review(st, h, b, uid)

    # -- messages ---------------------------------------------------------

    def test_escaped_nul_does_not_cut_messages(self):
        review = self.ds_review()
        ann = review["request"]["object"]["metadata"]["annotations"]
        ann["apps.openyurt.io/update-strategy"] = "OTA\u0000RollingUpdate"
        st, h, b = self.post("/validate", compact(review))
        resp, _ = self.assert_review(st, h, b, review["request"]["uid"])
        self.assertFalse(resp["allowed"])
        # the value whole, the NUL spelled as an escape
        self.assertIn('has unknown value "OTA\\u0000RollingUpdate"; valid values',
                      resp["status"]["message"])
        # the same in a pods/status denial
        review, _ = load_fixture("pod-status-prepull-kubectl")
        for c in review["request"]["object"]["status"]["conditions"]:
            if c["type"] == "PodImageReady":
                c["reason"] = "Down\u0000loading"
        st, h, b = self.post("/validate", compact(review))
        resp, _ = self.assert_review(st, h, b, review["request"]["uid"])
        self.assertFalse(resp["allowed"], resp)
        self.assertIn('got reason "Down\\u0000loading"; rule: bad-pull-request',
                      resp["status"]["message"])

    def test_ondelete_warning_quotes_the_annotation_as_written(self):
        for value in ("ota", "Ota", "OTA"):
            with self.subTest(value=value):
                review = self.ds_review()
                ann = review["request"]["object"]["metadata"]["annotations"]
                ann["apps.openyurt.io/update-strategy"] = value
                st, h, b = self.post("/mutate", compact(review))
                resp, patch = self.assert_review(st, h, b,
                                                 review["request"]["uid"])
                self.assertTrue(patch)
                self.assertEqual(len(resp["warnings"]), 1, resp)
                self.assertIn('apps.openyurt.io/update-strategy="%s", which '
                              'needs spec.updateStrategy OnDelete' % value,
                              resp["warnings"][0])

    # -- restore warnings -------------------------------------------------

    def test_restored_condition_comes_with_a_warning(self):
        review, _ = load_fixture("pod-status-prepull-yurthub")
        ref = "%s/%s" % (review["request"]["namespace"],
                         review["request"]["name"])
        st, h, b = self.post("/mutate", compact(review))
        resp, patch = self.assert_review(st, h, b, review["request"]["uid"])
        self.assertTrue(patch)
        self.assertIn("ota-prepull: kept PodNeedUpgrade of pod %s as stored: "
                      "this write dropped it, and only the controller may "
                      "change it" % ref, resp.get("warnings", []))
        # changed rather than dropped
        changed = copy.deepcopy(review)
        old = [c for c in changed["request"]["oldObject"]["status"]["conditions"]
               if c["type"] == "PodNeedUpgrade"][0]
        stale = dict(old, message="controllerrevision: 0123456789")
        changed["request"]["object"]["status"]["conditions"].append(stale)
        st, h, b = self.post("/mutate", compact(changed))
        resp, patch = self.assert_review(st, h, b, review["request"]["uid"])
        self.assertTrue(patch)
        self.assertIn("ota-prepull: kept PodNeedUpgrade of pod %s as stored: "
                      "this write changed it, and only the controller may "
                      "change it" % ref, resp.get("warnings", []))
        # a write that restores nothing says nothing
        routine, _ = load_fixture("pod-status-kubelet-routine")
        st, h, b = self.post("/mutate", compact(routine))
        resp, _ = self.assert_review(st, h, b, routine["request"]["uid"])
        self.assertNotIn("warnings", resp)

    # -- duplicate keys (issue 19) ------------------------------------------

    def node_write(self):
        review, _ = load_fixture("pod-status-node-claims-ready")
        body = compact(review)
        real = b'"groups":["system:nodes","system:authenticated"]'
        self.assertIn(real, body)
        return review, body, real

    def test_forged_groups_before_the_real_ones_are_refused(self):
        review, body, real = self.node_write()
        uid = review["request"]["uid"]
        # the node's own write: a node may not report a pull result
        st, h, b = self.post("/validate", body)
        self.assert_review(st, h, b, uid)
        self.assertFalse(json.loads(b)["response"]["allowed"])
        masters = b'"groups":["system:masters"]'
        for forged in (body.replace(real, masters + b"," + real, 1),
                       body.replace(real, real + b"," + masters, 1),
                       body.replace(real, b'"gr\\u006fups":["system:masters"],' + real, 1)):
            for path in ("/mutate", "/validate"):
                with self.subTest(path=path):
                    msg = self.expect_400(forged, ['duplicate key "groups"'], path)
                    self.assertEqual(msg, 'duplicate key "groups" in request.userInfo')
        # what the merge made of it (old main answered 200 allowed): the
        # masters' verdict, here as a body that says so once
        st, h, b = self.post("/validate", body.replace(real, masters, 1))
        self.assert_review(st, h, b, uid)
        self.assertTrue(json.loads(b)["response"]["allowed"])

    def test_duplicate_keys_anywhere_are_refused(self):
        review, body, _ = self.node_write()
        rows = (
            # a value no node reads
            (b'"image":"registry.example.com/edge/agent:v2.3.1",',
             b'"image":"registry.example.com/edge/agent:v2.3.1","image":"x",',
             'duplicate key "image" in request.object.spec.containers[0]'),
            # the envelope
            (b'"kind":"AdmissionReview",', b'"kind":"AdmissionReview","kind":"AdmissionReview",',
             'duplicate key "kind" in the AdmissionReview'),
            # a label, with a key that is not a plain name
            (b'"app":"edge-agent",', b'"app":"edge-agent","app":"other",',
             'duplicate key "app" in request.object.metadata.labels'),
            (b'"f:hostIP":{},', b'"f:hostIP":{},"f:hostIP":{},',
             'duplicate key "f:hostIP" in '
             'request.object.metadata.managedFields[0].fieldsV1.f:status'),
        )
        for old, new, want in rows:
            with self.subTest(want=want):
                self.assertIn(old, body)
                msg = self.expect_400(body.replace(old, new, 1), [want])
                self.assertEqual(msg, want)
        # the same key in two objects is no repeat
        uid = review["request"]["uid"]
        self.assert_review(*self.post("/validate", body), uid)
