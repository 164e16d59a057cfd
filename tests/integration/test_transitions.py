"""DESIGN §3 end to end: the pod-status condition transitions each requester
(controller, own node, other node, user, admin) may or may not make, through
/validate and /mutate, and the DaemonSet annotation values
(update-strategy, image-prepull-timeout-seconds). The unit tests hold the
full tables; these rows check the server wires the same decisions. Also the
--controller-username flag.

Part of the integration suite: run_all.py runs it with the others (`make
integration`; one file: run_all.py -k 'test_transitions.*').
"""

import copy
import hashlib
import json
import time

from harness import (POD_REF, STAMPED, ApiError, ServerTestCase, compact,
                     diff_objects, http_get, json_patch, load_fixture,
                     metric_sum, parse_metrics)


H = "5d8f6c9b7d"
H2 = "9a8b7c6d5e"
OLD_H = "7c9d5f8b64"
OTA_TYPES = ("PodNeedUpgrade", "PodImageReady")


def ota_cond(ctype, status, reason=None, message=None,
             ltt="2026-11-21T20:30:00Z"):
    c = {"type": ctype, "status": status, "lastProbeTime": None,
         "lastTransitionTime": ltt}
    if reason is not None:
        c["reason"] = reason
    if message is not None:
        c["message"] = message
    return c


NU_T = ota_cond("PodNeedUpgrade", "True", message="controllerrevision: " + H,
                ltt="2026-11-21T19:40:05Z")
NU_F = ota_cond("PodNeedUpgrade", "False", message="controllerrevision: " + H)
NU_T2 = ota_cond("PodNeedUpgrade", "True", message="controllerrevision: " + H2)
IR_PULL = ota_cond("PodImageReady", "False", "WaitPullImage",
                   "controllerrevision: " + H)
IR_PULL_LATER = ota_cond("PodImageReady", "False", "WaitPullImage",
                         "controllerrevision: " + H,
                         ltt="2026-11-21T21:00:00Z")
IR_PULL_OLD = ota_cond("PodImageReady", "False", "WaitPullImage",
                       "controllerrevision: " + OLD_H)
IR_PULL_BARE = ota_cond("PodImageReady", "False", "", ltt=None)
IR_PULL_STAMPED = ota_cond("PodImageReady", "False", "WaitPullImage",
                           "controllerrevision: " + H, ltt=STAMPED)
IR_READY = ota_cond("PodImageReady", "True", "PullImageSuccess",
                    "controllerrevision: " + H)
IR_FAIL = ota_cond("PodImageReady", "False", "PullImageFail",
                   "pull image job ota-prepull-edge-agent-x7k2p-1a2b3c4d "
                   "failed: ErrImagePull")

WHO = {
    "controller": {"username": "system:serviceaccount:ota-system:"
                   "ota-controller",
                   "groups": ["system:serviceaccounts",
                              "system:serviceaccounts:ota-system",
                              "system:authenticated"]},
    "node": {"username": "system:node:edge-node-1",
             "groups": ["system:nodes", "system:authenticated"]},
    "other-node": {"username": "system:node:edge-node-2",
                   "groups": ["system:nodes", "system:authenticated"]},
    "user": {"username": "edge-operator",
             "groups": ["edge-operators", "system:authenticated"]},
    "admin": {"username": "kubernetes-admin",
              "groups": ["system:masters", "system:authenticated"]},
}

# (name, requester, old OTA conditions, new OTA conditions,
#  /validate allows?, state the denial names,
#  mutation: None = not checked, [] = no patch, else the OTA conditions
#  expected after the patch)
TRANSITIONS = [
    ("controller_current_to_pending", "controller", [], [NU_T], True, None,
     []),
    ("node_sets_need_upgrade", "node", [], [NU_T], False, "Current", None),
    ("user_pending_to_pulling", "user", [NU_T], [NU_T, IR_PULL], True, None,
     []),
    ("node_pending_to_pulling", "node", [NU_T], [NU_T, IR_PULL], True, None,
     []),
    ("user_failed_to_pulling", "user", [NU_T, IR_FAIL], [NU_T, IR_PULL],
     True, None, None),
    ("user_ready_to_pulling", "user", [NU_T, IR_READY], [NU_T, IR_PULL],
     True, None, None),
    ("user_pull_without_upgrade", "user", [], [IR_PULL], False, "Current",
     None),
    ("user_pull_after_upgrade_cleared", "user", [NU_F], [NU_F, IR_PULL],
     False, "Current", None),
    ("user_pull_older_hash", "user", [NU_T], [NU_T, IR_PULL_OLD], False,
     "PendingUpgrade", None),
    ("user_reports_failure", "user", [NU_T, IR_PULL], [NU_T, IR_FAIL], False,
     "Pulling", None),
    ("controller_pulling_to_failed", "controller", [NU_T, IR_PULL],
     [NU_T, IR_FAIL], True, None, []),
    ("controller_pulling_to_ready", "controller", [NU_T, IR_PULL],
     [NU_T, IR_READY], True, None, []),
    ("controller_may_not_start_pull", "controller", [NU_T], [NU_T, IR_PULL],
     False, "PendingUpgrade", None),
    ("controller_new_revision", "controller", [NU_T, IR_READY], [NU_T2],
     True, None, []),
    # DECISIONS: a pull request is the node user's to make, whatever the
    # revision: not even Pulling about H -> Pulling about H2.
    ("controller_pulling_to_pulling_new_revision", "controller",
     [NU_T, IR_PULL], [NU_T2, dict(IR_PULL, message="controllerrevision: "
                                   + H2)], False, "Pulling", None),
    ("controller_failed_to_pending_drop", "controller", [NU_T, IR_FAIL],
     [NU_T], True, None, []),
    ("user_clears_need_upgrade", "user", [NU_T], [NU_F], False,
     "PendingUpgrade", None),
    ("admin_removes_everything", "admin", [NU_T, IR_PULL], [], True, None,
     []),
    ("other_node_routine_write", "other-node", [NU_T, IR_PULL],
     [NU_T, IR_PULL], True, None, []),
    # A repeat of the pending request with a new time keeps the stored one:
    # the time names the running Job (DECISIONS: Preconditions, repeated
    # requests, fail fast).
    ("user_new_time_only", "user", [NU_T, IR_PULL], [NU_T, IR_PULL_LATER],
     True, None, [NU_T, IR_PULL]),
    ("user_drops_image_ready", "user", [NU_T, IR_PULL], [NU_T], False,
     "Pulling", [NU_T, IR_PULL]),
    ("node_drops_need_upgrade", "node", [NU_T, IR_PULL], [IR_PULL], False,
     "Pulling", [IR_PULL, NU_T]),
    # Without a message the request is not "about H" until the mutating
    # webhook fills it in (DECISIONS): as received it is denied.
    ("node_pull_empty_reason", "node", [NU_T], [NU_T, IR_PULL_BARE], False,
     "PendingUpgrade", [NU_T, IR_PULL_STAMPED]),
    # Duplicate types (DECISIONS, "Duplicate condition types"): the rules
    # read the first, a jsonpath filter prints both; a node user may not
    # leave two, the controller and masters may (issue 9: allowed before).
    ("duplicate_types_denied", "user", [NU_T], [NU_T, IR_PULL, IR_READY],
     False, "PendingUpgrade", None),
    ("duplicate_ready_appended_denied", "node", [NU_T, IR_PULL],
     [NU_T, IR_PULL, IR_READY], False, "Pulling", None),
    ("duplicate_need_upgrade_appended_denied", "node", [NU_T, IR_PULL],
     [NU_T, IR_PULL, NU_T], False, "Pulling", None),
    ("duplicate_by_admin", "admin", [NU_T], [NU_T, IR_PULL, IR_READY], True,
     None, None),
    ("duplicate_by_controller", "controller", [NU_T, IR_PULL],
     [NU_T, IR_PULL, NU_T], True, None, None),
    # The first is the one read, so the first is stamped (and then the
    # duplicate is denied by /validate: mutated is not checked further).
    ("duplicate_bare_first_gets_stamped", "node", [NU_T],
     [NU_T, IR_PULL_BARE, IR_READY], False, "PendingUpgrade", None),
    # The whole conditions array gone (a merge patch that wrote none):
    # the patch has to add /status/conditions itself.
    ("node_write_without_conditions", "node", [NU_T, IR_PULL], "absent",
     False, "Pulling", [NU_T, IR_PULL]),
    ("node_write_null_conditions", "node", [NU_T, IR_PULL], "null",
     False, "Pulling", [NU_T, IR_PULL]),
    ("node_write_without_status", "node", [NU_T, IR_PULL], "no-status",
     False, "Pulling", [NU_T, IR_PULL]),
]


def transition_review(uid, who, old_ota, new_ota):
    review, _ = load_fixture("pod-status-kubelet-routine")
    req = review["request"]
    req["uid"] = uid
    req["userInfo"] = copy.deepcopy(WHO[who])
    for where, ota in (("oldObject", old_ota), ("object", new_ota)):
        if ota == "absent":
            del req[where]["status"]["conditions"]
        elif ota == "null":
            req[where]["status"]["conditions"] = None
        elif ota == "no-status":
            del req[where]["status"]
        else:
            conds = [c for c in req[where]["status"]["conditions"]
                     if c["type"] not in OTA_TYPES]
            req[where]["status"]["conditions"] = conds + copy.deepcopy(ota)
    # A template for what mutation yields: the kubelet's conditions as sent
    # plus the expected OTA ones.
    return review


class TestTransitions(ServerTestCase):
    SERVER_ARGS = ("--threads", "2")

    def run_transition(self, name, who, old, new, allowed, state, mutated):
        uid = "7a000000-0000-4000-8000-" + hashlib.sha256(
            name.encode()).hexdigest()[:12]
        review = transition_review(uid, who, old, new)
        c = self.conn()
        body = compact(review)
        st, h, b = c.call("POST", "/validate?timeout=10s", body)
        resp, patch = self.assert_review(st, h, b, uid)
        self.assertIsNone(patch)
        self.assertEqual(resp["allowed"], allowed,
                         "/validate: %s" % json.dumps(resp))
        if not allowed:
            msg = resp["status"]["message"]
            for m in (POD_REF, "rule", state):
                self.assertIn(m, msg, "denial message lacks %r" % m)
        if mutated is None:
            return
        st, h, b = c.call("POST", "/mutate?timeout=10s", body)
        resp, patch = self.assert_review(st, h, b, uid)
        self.assertTrue(resp["allowed"], "/mutate denied: %s" % resp)
        if mutated == []:
            self.assertFalse(patch, "unexpected patch %s" % json.dumps(patch))
            return
        self.assertTrue(patch, "/mutate returned no patch")
        try:
            obj = json_patch(review["request"]["object"], patch)
        except ApiError as e:
            self.fail("the patch does not apply to request.object: %s\n"
                      "patch: %s" % (e, json.dumps(patch)))
        sent = review["request"]["object"].get("status") or {}
        kubelet = [x for x in sent.get("conditions") or []
                   if x["type"] not in OTA_TYPES]
        want = kubelet + copy.deepcopy(mutated)
        got = (obj.get("status") or {}).get("conditions")
        diffs = diff_objects(want, got, "/status/conditions")
        self.assertEqual(diffs, [], "after the patch %s:\n  %s"
                         % (json.dumps(patch), "\n  ".join(diffs)))
        def without_conditions(o):
            o = copy.deepcopy(o)
            status = o.get("status")
            if isinstance(status, dict):
                status.pop("conditions", None)
                if not status:
                    del o["status"]
            return o

        orig = without_conditions(review["request"]["object"])
        rest = without_conditions(obj)
        self.assertEqual(diff_objects(orig, rest), [],
                         "the patch touched more than the conditions")
        # The apiserver then calls the validating webhook on the result.
        review2 = copy.deepcopy(review)
        review2["request"]["object"] = obj
        st, h, b = c.call("POST", "/validate?timeout=10s", compact(review2))
        resp, _ = self.assert_review(st, h, b, uid)
        self.assertTrue(resp["allowed"], "/validate after the mutation: %s"
                        % json.dumps(resp))

    def test_own_node_rule_uses_stored_pod(self):
        # DECISIONS: the own-node rule reads spec.nodeName of oldObject
        # (what is stored), not of the write.
        review = transition_review(
            "0d0d0d0d-0000-4000-8000-000000000001", "other-node",
            [NU_T], [NU_T, IR_PULL])
        review["request"]["object"]["spec"]["nodeName"] = "edge-node-2"
        resp, _ = self.verdict("/validate", review)
        self.assertFalse(resp["allowed"], "a node claimed another node's pod "
                         "by rewriting spec.nodeName in its write")
        review = transition_review(
            "0d0d0d0d-0000-4000-8000-000000000002", "node",
            [NU_T], [NU_T, IR_PULL])
        review["request"]["object"]["spec"]["nodeName"] = "edge-node-2"
        resp, _ = self.verdict("/validate", review)
        self.assertTrue(resp["allowed"], resp)

    def test_pull_on_orphaned_pod_refused(self):
        # Issue 19: a pod whose DaemonSet was deleted with --cascade=orphan
        # (the GC dropped its ownerReferences) can have no pre-pull served;
        # the request is refused at admission, from the stored pod's
        # ownerReferences, whatever the write claims.
        for i, owners in enumerate((None, [], [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                                 "name": "x", "uid": "r", "controller": True}])):
            review = transition_review(
                "0d0d0d0d-0000-4000-8000-0000000001%02d" % i, "node", [NU_T], [NU_T, IR_PULL])
            meta = review["request"]["oldObject"]["metadata"]
            if owners is None:
                del meta["ownerReferences"]
            else:
                meta["ownerReferences"] = owners
            resp, _ = self.verdict("/validate", review)
            self.assertFalse(resp["allowed"], resp)
            self.assertEqual(
                resp["status"]["message"],
                "pod %s has no DaemonSet owner (no controller ownerReference of kind "
                "DaemonSet: its DaemonSet was deleted with --cascade=orphan, or it never "
                "had one), so there is no revision to pre-pull; rule: pull-needs-daemonset, "
                "state: PendingUpgrade" % POD_REF)
        # the controller's answer to a request already stored is allowed
        review = transition_review("0d0d0d0d-0000-4000-8000-000000000199", "controller",
                                   [NU_T, IR_PULL], [IR_FAIL])
        del review["request"]["oldObject"]["metadata"]["ownerReferences"]
        resp, _ = self.verdict("/validate", review)
        self.assertTrue(resp["allowed"], resp)
        # and the DaemonSet's own pod is served as before
        review = transition_review("0d0d0d0d-0000-4000-8000-000000000198", "node",
                                   [NU_T], [NU_T, IR_PULL])
        self.assertIn("ownerReferences", review["request"]["oldObject"]["metadata"])
        resp, _ = self.verdict("/validate", review)
        self.assertTrue(resp["allowed"], resp)
        st, _, body = http_get(type(self).server.metrics, "/metrics")
        self.assertEqual(st, 200)
        samples = parse_metrics(body.decode())
        self.assertGreaterEqual(
            metric_sum(samples, "ota_webhook_denials_total", rule="pull-needs-daemonset"), 3)

    def ds_review(self, annotations, strategy=None):
        review, _ = load_fixture("ds-create-ota-rollingupdate")
        obj = review["request"]["object"]
        obj["metadata"]["annotations"] = annotations
        if strategy is None:
            obj["spec"]["updateStrategy"] = {"type": "OnDelete"}
        else:
            obj["spec"]["updateStrategy"] = strategy
        return review

    def verdict(self, path, review):
        c = self.conn()
        st, h, b = c.call("POST", path, compact(review))
        return self.assert_review(st, h, b, review["request"]["uid"])

    def test_update_strategy_values(self):
        ann = "apps.openyurt.io/update-strategy"
        for v, ok in (("OTA", True), ("ota", True), ("oTa", True),
                      ("AdvancedRollingUpdate", True),
                      ("advancedrollingupdate", True),
                      ("ADVANCEDROLLINGUPDATE", True),
                      ("", False), (" OTA", False), ("OTA ", False),
                      ("RollingUpdate", False), ("OnDelete", False),
                      ("OTA,AdvancedRollingUpdate", False),
                      ("OTA\u0000", False), ("OTAx", False),
                      ("AdvancedRollingUpdat", False)):
            with self.subTest(value=v):
                resp, _ = self.verdict("/validate", self.ds_review({ann: v}))
                self.assertEqual(resp["allowed"], ok, resp)
                if not ok:
                    msg = resp["status"]["message"]
                    self.assertIn("OTA", msg)
                    self.assertIn("AdvancedRollingUpdate", msg)

    def test_ota_value_case_insensitive_mutation(self):
        ann = "apps.openyurt.io/update-strategy"
        rolling = {"type": "RollingUpdate",
                   "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
        for v, patched in (("oTa", True), ("OTA", True),
                           ("AdvancedRollingUpdate", False),
                           ("OTA\u0000", False), ("", False)):
            with self.subTest(value=v):
                review = self.ds_review({ann: v}, copy.deepcopy(rolling))
                resp, patch = self.verdict("/mutate", review)
                if patched:
                    self.assertTrue(resp["allowed"], resp)
                    obj = json_patch(review["request"]["object"], patch or [])
                    self.assertEqual(obj["spec"]["updateStrategy"],
                                     {"type": "OnDelete"})
                else:
                    self.assertFalse(patch, "patched a non-OTA DaemonSet")

    def test_prepull_timeout_values(self):
        ota = "apps.openyurt.io/update-strategy"
        ann = "apps.openyurt.io/image-prepull-timeout-seconds"
        for v, ok in (("30", True), ("600", True), ("86400", True),
                      ("29", False), ("86401", False), ("0", False),
                      ("-60", False), ("+60", False), (" 60", False),
                      ("60 ", False), ("60s", False), ("10m", False),
                      ("", False), ("1e3", False), ("0x3c", False),
                      ("60.0", False), ("６０", False),
                      ("99999999999999999999999", False),
                      ("18446744073709551676", False),   # 2^64 + 60
                      ("4294967356", False),             # 2^32 + 60
                      ("60\u0000", False)):
            with self.subTest(value=v):
                resp, _ = self.verdict("/validate",
                                       self.ds_review({ota: "OTA", ann: v}))
                self.assertEqual(resp["allowed"], ok, resp)
                if not ok:
                    self.assertIn(ann, resp["status"]["message"])

    def test_one_log_line_per_denial_and_mutation(self):
        srv = type(self).server
        deny, _ = load_fixture("pod-status-node-claims-ready")
        deny["request"]["uid"] = "10610610-0000-4000-8000-000000000001"
        mut, _ = load_fixture("ds-create-ota-rollingupdate")
        mut["request"]["uid"] = "10610610-0000-4000-8000-000000000002"
        c = self.conn()
        st, _, _ = c.call("POST", "/validate", compact(deny))
        self.assertEqual(st, 200)
        st, _, _ = c.call("POST", "/mutate", compact(mut))
        self.assertEqual(st, 200)
        time.sleep(0.3)
        log = srv.log_text()
        for uid in (deny["request"]["uid"], mut["request"]["uid"]):
            lines = [ln for ln in log.splitlines() if uid in ln]
            self.assertEqual(len(lines), 1, "log lines for %s: %r"
                             % (uid, lines))


def _add_transition_tests(cls):
    for row in TRANSITIONS:
        def t(self, row=row):
            self.run_transition(*row)
        t.__name__ = "test_transition_" + row[0]
        setattr(cls, t.__name__, t)
    return cls


_add_transition_tests(TestTransitions)


class TestControllerUsername(ServerTestCase):
    SERVER_ARGS = ("--controller-username", "system:serviceaccount:edge:ctl")

    def test_controller_username_flag(self):
        review, _ = load_fixture("pod-status-controller-ready")
        c = self.conn()
        st, h, b = c.call("POST", "/validate", compact(review))
        resp, _ = self.assert_review(st, h, b, review["request"]["uid"])
        self.assertFalse(resp["allowed"], "the default controller identity "
                         "is still trusted with --controller-username set")
        review["request"]["userInfo"]["username"] = \
            "system:serviceaccount:edge:ctl"
        st, h, b = c.call("POST", "/validate", compact(review))
        resp, _ = self.assert_review(st, h, b, review["request"]["uid"])
        self.assertTrue(resp["allowed"], resp)
