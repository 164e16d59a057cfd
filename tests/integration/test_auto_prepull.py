"""Issue 22: automatic pre-pull's rules through the real webhook over TLS.

The pod condition ota-prepull.openyurt.io/AutoPrePull is the controller's
word that a pod's DaemonSet opted in to automatic pre-pull for revision H
(docs/DECISIONS.md "How the webhook knows a DaemonSet opted in"). Checked
here, on /validate and /mutate as the apiserver calls them:
  - the controller moving a pod into Pulling without that evidence is
    denied (no AutoPrePull: pull-requested-by-node-users; one that does not
    allow H: auto-prepull-needs-opt-in), with it allowed;
  - a node user forging AutoPrePull is denied
    (auto-prepull-owned-by-controller);
  - YurtHub's merge patch, which rewrites the whole conditions array and
    drops AutoPrePull, gets it restored by /mutate;
  - a node user's request on an auto-marked pod turns AutoPrePull False,
    reason NodeUserRequest, for the revision asked, in the same write;
  - the denials and mutations are counted on /metrics under their names.
The unit tables (tests/unit/test_ota_state.c, test_admit_podstatus.c) hold
every row; these check the server wires them.
"""

import copy
import hashlib
import json

from harness import (POD_REF, STAMPED, ServerTestCase, compact, diff_objects,
                     http_get, json_patch, metric_sum, parse_metrics)
import test_transitions as tt

AP = "ota-prepull.openyurt.io/AutoPrePull"
H, OLD_H = tt.H, tt.OLD_H
REV = "controllerrevision: " + H
AP_T = tt.ota_cond(AP, "True", "DaemonSetOptedIn", REV,
                   ltt="2026-11-21T19:40:05Z")
AP_OUT = tt.ota_cond(AP, "False", "OptedOut", REV)
AP_OLD = tt.ota_cond(AP, "True", "DaemonSetOptedIn",
                     "controllerrevision: " + OLD_H)
AP_TAKEN = tt.ota_cond(AP, "False", "NodeUserRequest", REV, ltt=STAMPED)
# YurtHub's request: status and message only
IR_ASK = {"type": "PodImageReady", "status": "False", "message": REV}
IR_ASK_STAMPED = dict(IR_ASK, reason="WaitPullImage",
                      lastTransitionTime=STAMPED)


def review(name, who, old, new):
    uid = "22000000-0000-4000-8000-" + hashlib.sha256(
        name.encode()).hexdigest()[:12]
    return tt.transition_review(uid, who, old, new)


def ota_of(obj):
    """The OTA conditions of a pod object, in order."""
    return [c for c in (obj.get("status") or {}).get("conditions") or []
            if c["type"] in tt.OTA_TYPES + (AP,)]


class TestAutoPrePull(ServerTestCase):
    SERVER_ARGS = ("--threads", "2")

    def call(self, path, rv):
        c = self.conn()
        st, h, b = c.call("POST", path + "?timeout=10s", compact(rv))
        return self.assert_review(st, h, b, rv["request"]["uid"])

    def denied(self, rv, message):
        resp, patch = self.call("/validate", rv)
        self.assertIsNone(patch)
        self.assertFalse(resp["allowed"], json.dumps(resp))
        self.assertEqual(resp["status"]["code"], 403)
        self.assertEqual(resp["status"]["message"], message)

    def allowed(self, rv):
        resp, patch = self.call("/validate", rv)
        self.assertIsNone(patch)
        self.assertTrue(resp["allowed"], json.dumps(resp))

    def mutated(self, rv, want_ota):
        """/mutate's patch applied to the object: its OTA conditions are
        want_ota (STAMPED: a fresh time), the rest untouched, and /validate
        allows the result (the apiserver validates after mutating).
        Returns the response's warnings."""
        resp, patch = self.call("/mutate", rv)
        self.assertTrue(resp["allowed"], json.dumps(resp))
        self.assertTrue(patch, "no patch")
        obj = json_patch(rv["request"]["object"], patch)
        diffs = diff_objects(want_ota, ota_of(obj), "/status/conditions[ota]")
        self.assertEqual(diffs, [], "after %s:\n  %s"
                         % (json.dumps(patch), "\n  ".join(diffs)))
        others = [c for c in obj["status"]["conditions"]
                  if c["type"] not in tt.OTA_TYPES + (AP,)]
        sent = [c for c in rv["request"]["object"]["status"]["conditions"]
                if c["type"] not in tt.OTA_TYPES + (AP,)]
        self.assertEqual(others, sent, "the patch touched other conditions")
        rv2 = copy.deepcopy(rv)
        rv2["request"]["object"] = obj
        self.allowed(rv2)
        return resp.get("warnings") or []

    def test_controller_pull_without_evidence_denied(self):
        self.denied(review("ctl-no-ap", "controller", [tt.NU_T],
                           [tt.NU_T, tt.IR_PULL]),
                    "the controller may not request a pre-pull of pod %s; node "
                    "users do; rule: pull-requested-by-node-users, state: "
                    "PendingUpgrade" % POD_REF)
        self.denied(review("ctl-ap-out", "controller", [tt.NU_T, AP_OUT],
                           [tt.NU_T, AP_OUT, tt.IR_PULL]),
                    "the controller may start an automatic pre-pull of pod %s "
                    "only for the revision its %s True names; %s is status "
                    "\"False\", reason \"OptedOut\", message \"%s\", the pull "
                    "names \"%s\"; rule: auto-prepull-needs-opt-in, state: "
                    "PendingUpgrade" % (POD_REF, AP, AP, REV, REV))
        self.denied(review("ctl-ap-old", "controller", [tt.NU_T, AP_OLD],
                           [tt.NU_T, AP_OLD, tt.IR_PULL]),
                    "the controller may start an automatic pre-pull of pod %s "
                    "only for the revision its %s True names; %s is status "
                    "\"True\", reason \"DaemonSetOptedIn\", message "
                    "\"controllerrevision: %s\", the pull names \"%s\"; rule: "
                    "auto-prepull-needs-opt-in, state: PendingUpgrade"
                    % (POD_REF, AP, AP, OLD_H, REV))
        # the mark and the pull in one write: the evidence must be stored
        self.denied(review("ctl-mark-and-pull", "controller", [tt.NU_T],
                           [tt.NU_T, AP_T, tt.IR_PULL]),
                    "the controller may not request a pre-pull of pod %s; node "
                    "users do; rule: pull-requested-by-node-users, state: "
                    "PendingUpgrade" % POD_REF)

    def test_controller_pull_with_evidence_allowed(self):
        # the mark, written with PodNeedUpgrade ...
        rv = review("ctl-mark", "controller", [], [tt.NU_T, AP_T])
        self.allowed(rv)
        resp, patch = self.call("/mutate", rv)
        self.assertTrue(resp["allowed"])
        self.assertIsNone(patch, "the controller's write was patched")
        # ... then the pull, and its outcome
        for name, old, new in (
                ("ctl-pull", [tt.NU_T, AP_T], [tt.NU_T, AP_T, tt.IR_PULL]),
                ("ctl-pull-after-fail", [tt.NU_T, AP_T, tt.IR_FAIL],
                 [tt.NU_T, AP_T, tt.IR_PULL]),
                ("ctl-ready", [tt.NU_T, AP_T, tt.IR_PULL],
                 [tt.NU_T, AP_T, tt.IR_READY]),
                ("ctl-opt-out", [tt.NU_T, AP_T], [tt.NU_T, AP_OUT])):
            with self.subTest(name=name):
                rv = review(name, "controller", old, new)
                self.allowed(rv)
                resp, patch = self.call("/mutate", rv)
                self.assertIsNone(patch)

    def test_node_user_forging_denied(self):
        for name, who, old, new, was, now in (
                ("node-adds-ap", "node", [tt.NU_T], [tt.NU_T, AP_T], "none",
                 "status \"True\", reason \"DaemonSetOptedIn\", message "
                 "\"%s\"" % REV),
                ("user-adds-ap-with-pull", "user", [tt.NU_T],
                 [tt.NU_T, AP_T, tt.IR_PULL], "none",
                 "status \"True\", reason \"DaemonSetOptedIn\", message "
                 "\"%s\"" % REV),
                ("node-opts-out", "node", [tt.NU_T, AP_T], [tt.NU_T, AP_OUT],
                 "status \"True\", reason \"DaemonSetOptedIn\", message "
                 "\"%s\"" % REV,
                 "status \"False\", reason \"OptedOut\", message \"%s\""
                 % REV)):
            with self.subTest(name=name):
                self.denied(review(name, who, old, new),
                            "%s may not change %s of pod %s (%s, not %s): only "
                            "the controller writes it, for a DaemonSet that "
                            "opted in to automatic pre-pull; a node user's "
                            "pull request is served as asked; rule: "
                            "auto-prepull-owned-by-controller, state: "
                            "PendingUpgrade"
                            % (tt.WHO[who]["username"], AP, POD_REF, was,
                               now))
        # added where none is stored: nothing to restore, /mutate leaves it
        # to /validate
        resp, patch = self.call("/mutate", review(
            "node-adds-ap-mutate", "node", [tt.NU_T], [tt.NU_T, AP_T]))
        self.assertIsNone(patch)

    def test_yurthub_merge_dropping_ap_restored(self):
        # YurtHub's merge patch: the whole array from its cache, which has
        # no AutoPrePull yet (a routine write, no request)
        rv = review("yurthub-drops-ap", "node", [tt.NU_T, AP_T], [tt.NU_T])
        self.denied(rv, "%s may not change %s of pod %s (status \"True\", "
                    "reason \"DaemonSetOptedIn\", message \"%s\", not none): "
                    "only the controller writes it, for a DaemonSet that "
                    "opted in to automatic pre-pull; a node user's pull "
                    "request is served as asked; rule: "
                    "auto-prepull-owned-by-controller, state: PendingUpgrade"
                    % (tt.WHO["node"]["username"], AP, POD_REF, REV))
        warnings = self.mutated(rv, [tt.NU_T, AP_T])
        self.assertEqual(warnings, [
            "ota-prepull: kept %s of pod %s as stored: this write dropped "
            "it, and only the controller may change it" % (AP, POD_REF)])
        # and altered by a stale cache: replaced where it is
        rv = review("yurthub-stale-ap", "node", [tt.NU_T, AP_T],
                    [AP_OLD, tt.NU_T])
        self.mutated(rv, [AP_T, tt.NU_T])

    def test_node_user_request_takes_over(self):
        # YurtHub's request: no reason, the array from a cache without
        # AutoPrePull
        rv = review("yurthub-request-on-auto", "node", [tt.NU_T, AP_T],
                    [IR_ASK, tt.NU_T])
        warnings = self.mutated(rv, [IR_ASK_STAMPED, tt.NU_T, AP_TAKEN])
        self.assertEqual(warnings, [
            "ota-prepull: %s of pod %s set False, reason NodeUserRequest: "
            "this pre-pull is the node user's request now, served before "
            "automatic ones" % (AP, POD_REF)])
        # kubectl ota pull's complete request, AutoPrePull carried as stored
        rv = review("kubectl-request-on-auto", "user", [tt.NU_T, AP_T],
                    [tt.NU_T, AP_T, tt.IR_PULL])
        self.allowed(rv)  # rule (4): as today, before /mutate too
        self.mutated(rv, [tt.NU_T, AP_TAKEN, tt.IR_PULL])
        # while the controller's automatic pull of H runs: the same Job
        # goes on (the stored request time), now the node user's
        rv = review("request-during-auto", "node",
                    [tt.NU_T, AP_T, tt.IR_PULL], [tt.NU_T, IR_ASK])
        self.mutated(rv, [tt.NU_T, dict(IR_ASK, reason="WaitPullImage",
                                        lastTransitionTime=tt.IR_PULL[
                                            "lastTransitionTime"]),
                          AP_TAKEN])
        # an opted-out pod's AutoPrePull stays as it is
        rv = review("request-on-opted-out", "node", [tt.NU_T, AP_OUT],
                    [tt.NU_T, AP_OUT, IR_ASK])
        self.mutated(rv, [tt.NU_T, AP_OUT, IR_ASK_STAMPED])
        # taking it over without a request is forging
        self.denied(review("take-without-request", "node", [tt.NU_T, AP_T],
                           [tt.NU_T, dict(AP_TAKEN, lastTransitionTime=
                                          "2026-11-21T21:30:00Z")]),
                    "%s may not change %s of pod %s (status \"True\", reason "
                    "\"DaemonSetOptedIn\", message \"%s\", not status "
                    "\"False\", reason \"NodeUserRequest\", message \"%s\"): "
                    "only the controller writes it, for a DaemonSet that "
                    "opted in to automatic pre-pull; a node user's pull "
                    "request is served as asked; rule: "
                    "auto-prepull-owned-by-controller, state: PendingUpgrade"
                    % (tt.WHO["node"]["username"], AP, POD_REF, REV, REV))

    def test_counted_on_metrics(self):
        self.denied(review("metrics-forge", "user", [tt.NU_T],
                           [tt.NU_T, AP_T]),
                    "%s may not change %s of pod %s (none, not status "
                    "\"True\", reason \"DaemonSetOptedIn\", message \"%s\"): "
                    "only the controller writes it, for a DaemonSet that "
                    "opted in to automatic pre-pull; a node user's pull "
                    "request is served as asked; rule: "
                    "auto-prepull-owned-by-controller, state: PendingUpgrade"
                    % (tt.WHO["user"]["username"], AP, POD_REF, REV))
        resp, _ = self.call("/validate", review(
            "metrics-opt-in", "controller", [tt.NU_T, AP_OUT],
            [tt.NU_T, AP_OUT, tt.IR_PULL]))
        self.assertFalse(resp["allowed"])
        self.mutated(review("metrics-restore", "node", [tt.NU_T, AP_T],
                            [tt.NU_T]), [tt.NU_T, AP_T])
        self.mutated(review("metrics-taken", "node", [tt.NU_T, AP_T],
                            [tt.NU_T, AP_T, IR_ASK]),
                     [tt.NU_T, AP_TAKEN, IR_ASK_STAMPED])
        st, _, body = http_get(type(self).server.metrics, "/metrics")
        self.assertEqual(st, 200)
        samples = parse_metrics(body.decode())
        for rule in ("auto-prepull-owned-by-controller",
                     "auto-prepull-needs-opt-in"):
            self.assertGreaterEqual(metric_sum(
                samples, "ota_webhook_denials_total", rule=rule), 1, rule)
        for kind in ("restore-auto-prepull", "auto-prepull-taken"):
            self.assertGreaterEqual(metric_sum(
                samples, "ota_webhook_mutations_total", kind=kind), 1, kind)
