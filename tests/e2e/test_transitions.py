"""Every move of DESIGN §3's pod-state table through the registered webhook
(class Transitions).

The webhook configurations are the ones `kubectl kustomize manifests`
renders (harness.Base.WEBHOOK), and every write is the real kubectl as one
of kubesim's identities: admin (system:masters), controller (the
controller's service account, with the rendered RBAC), node-<i>
(system:node:node-<i>, under the Node authorizer and NodeRestriction: kubectl
cannot patch status with it, see webhook_flow) and user (an ordinary user,
whom each test's namespace grants what a human node user is given:
docs/node-users.md), the node user of the moves. Each allowed move is
checked to reach its state; each forbidden one to be denied with the
webhook's message as kubectl prints it, and to leave the pod where it was.
"""
import json

from harness import MISSING, PRELOADED, REG, ApiError, wait_until
from webhook_flow import NEED, READY, MUTATE_POD, WebhookBase, cond, denial, state_of

SLOW = [REG + "/e2e/slow:%d.0" % i for i in range(1, 7)]  # 300 MB: 30 simulated seconds at 10 MB/s


class Transitions(WebhookBase):
    NODES = 4

    USER_ROLE = True  # status writes with kubectl are user's (webhook_flow)
    # node-4 pulls at 1 MB/s, so that a pull there is still running when the
    # admin publishes yet another revision (Pulling -> PendingUpgrade)
    REGISTRY = {"includeDefaults": True,
                "images": [{"image": PRELOADED, "size": 30_000_000}] +
                          [{"image": i, "size": 300_000_000} for i in SLOW],
                "preloadedImages": ["registry.k8s.io/pause:3.10", PRELOADED],
                "nodes": {"node-4": {"bandwidth": 1_000_000,
                                     "images": ["registry.k8s.io/pause:3.10", PRELOADED]}}}

    def test_allowed_moves_reach_their_state(self):
        pods = self.apply_ds("agent", PRELOADED)
        h0 = self.newest_hash("agent")
        self.wait_need_upgrade(pods, "False", h0)
        for p in pods:
            self.assertEqual(self.state(p), "Current")
        n1, n2, n3, n4 = (self.on_node(pods, "node-%d" % i) for i in range(1, 5))

        # Current -> PendingUpgrade: the controller, on the admin's new template
        h1 = self.kubectl_set_image("agent", SLOW[0])
        self.wait_need_upgrade(pods, "True", h1)
        for p in pods:
            self.assertEqual(self.state(p), "PendingUpgrade")

        # PendingUpgrade -> Pulling: a node user on node-1's pod ...
        out = self.status_patch("user", n1, [self.pull_request(h1)])
        self.assertEqual((out.returncode, out.stdout, out.stderr),
                         (0, "pod/%s patched\n" % n1["metadata"]["name"], ""))
        self.assertEqual(self.state(n1), "Pulling")
        # ... and a user RBAC lets write pods/status on node-2's (no node
        # restriction), without a reason: the mutating webhook stamps
        # WaitPullImage and a time
        out = self.status_patch("user", n2, [self.pull_request(h1, reason=None)])
        self.assertEqual(out.returncode, 0, out.stderr)
        c = cond(self.pod(n2["metadata"]["name"]), READY)
        self.assertEqual((c["reason"], c["message"]), ("WaitPullImage", "controllerrevision: " + h1))
        self.assertTrue(c.get("lastTransitionTime"), c)
        self.assertEqual(self.state(n2), "Pulling")

        # Pulling -> Ready: the controller, on the Job's success
        self.wait_state(n1, "Ready")
        self.wait_state(n2, "Ready")

        # Ready -> Pulling: asked again (the image is there now: done at once)
        out = self.status_patch("user", n1, [self.pull_request(h1)])
        self.assertEqual(out.returncode, 0, out.stderr)
        wait_until(lambda: (lambda c: c["reason"] == "PullImageSuccess" and c)(
            cond(self.pod(n1["metadata"]["name"]), READY)), 30, "the second pull's success")
        self.assertEqual(len(self.tracker.jobs_of(n1["metadata"]["uid"])), 2)

        # Pulling -> PendingUpgrade: node-4's pull (1 MB/s) is running when the
        # admin publishes another revision; Ready -> PendingUpgrade for node-1
        out = self.status_patch("user", n4, [self.pull_request(h1)])
        self.assertEqual(out.returncode, 0, out.stderr)
        wait_until(lambda: self.tracker.live_jobs_of(n4["metadata"]["uid"]), 30, "node-4's Job")
        self.assertEqual(self.state(n4), "Pulling")
        h2 = self.kubectl_set_image("agent", SLOW[1])
        self.wait_need_upgrade(pods, "True", h2)
        for p in (n1, n2, n3, n4):
            self.assertEqual(self.state(p), "PendingUpgrade", p["spec"]["nodeName"])
        wait_until(lambda: not self.tracker.live_jobs_of(n4["metadata"]["uid"]), 30,
                   "node-4's old Job deleted")

        # Pulling -> Failed -> Pulling -> Failed: an image no registry has
        broken = self.apply_ds("broken", PRELOADED, nodes=["node-3"], timeout=30)[0]
        hb = self.kubectl_set_image("broken", MISSING)
        self.wait_need_upgrade([broken], "True", hb)
        out = self.status_patch("user", broken, [self.pull_request(hb)])
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(self.state(broken), "Pulling")
        failed = self.wait_state(broken, "Failed")
        self.assertTrue(cond(failed, READY)["message"].startswith("pull image job ota-prepull-"), failed)
        out = self.status_patch("user", broken, [self.pull_request(hb)])
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(self.state(broken), "Pulling")
        self.wait_state(broken, "Failed")

        # Failed -> PendingUpgrade: a revision that works
        hb2 = self.kubectl_set_image("broken", SLOW[2])
        self.wait_need_upgrade([broken], "True", hb2)
        self.assertEqual(self.state(broken), "PendingUpgrade")

        # any -> (pod deleted): node-1 upgrades its pod; the replacement runs
        # h2 and is Current. The pre-pull state never blocks it.
        self.assertEqual(self.kubectl_ok("node-1", "delete", "pod", n1["metadata"]["name"], "--wait=false"),
                         'pod "%s" deleted\n' % n1["metadata"]["name"])
        fresh = wait_until(lambda: [p for p in self.running_pods("agent", self.NODES) or []
                                    if p["spec"]["nodeName"] == "node-1"
                                    and p["metadata"]["uid"] != n1["metadata"]["uid"]], 60, "node-1's new pod")[0]
        self.assertEqual(fresh["metadata"]["labels"]["controller-revision-hash"], h2)
        self.wait_need_upgrade([fresh], "False", h2)
        self.assertEqual(self.state(fresh), "Current")

    def test_forbidden_moves_are_denied_with_the_rule(self):
        pods = self.apply_ds("agent", PRELOADED)
        h = self.kubectl_set_image("agent", SLOW[3])
        self.wait_need_upgrade(pods, "True", h)
        n1, n2 = self.on_node(pods, "node-1"), self.on_node(pods, "node-2")
        current = self.apply_ds("steady", PRELOADED, nodes=["node-2"])[0]
        self.wait_need_upgrade([current], "False", self.newest_hash("steady"))
        before = {p["metadata"]["name"]: self.pod(p["metadata"]["name"]) for p in (n1, n2, current)}

        def denied(who, pod, conditions, message):
            out = self.status_patch(who, pod, conditions)
            self.assertEqual((out.returncode, out.stdout, out.stderr), (1, "", denial(message)))

        # the two cases: node-1's kubeconfig on node-2's pod, which
        # the apiserver refuses before the webhook: kubectl's read of the
        # status, here (the write itself NodeRestriction refuses: test_yurthub;
        # own-node-only says the same where NodeRestriction is off, in the
        # webhook's own tests) ...
        out = self.status_patch("node-1", n2, [self.pull_request(h)])
        self.assertEqual((out.returncode, out.stdout, out.stderr),
                         (1, "", 'Error from server (Forbidden): pods "%s" is forbidden: User "system:node:node-1" '
                                 'cannot get resource "pods/status" in API group "" in the namespace "%s"\n'
                          % (n2["metadata"]["name"], self.ns)))
        # ... and the ControllerRevision's name where its hash belongs
        denied("user", n2, [self.pull_request("agent-" + h)],
               'the pre-pull request for pod %s names "controllerrevision: agent-%s" but PodNeedUpgrade '
               'names "controllerrevision: %s"; rule: pull-wrong-revision, state: PendingUpgrade'
               % (self.ref(n2), h, h))
        # a pod that needs no upgrade
        denied("user", current, [self.pull_request(h)],
               "pod %s does not need an upgrade (PodNeedUpgrade is not True); rule: pull-needs-upgrade, "
               "state: Current" % self.ref(current))
        # node users do not decide whether a pod needs an upgrade: the mutating
        # webhook puts PodNeedUpgrade back (DESIGN §4), so the write changes
        # nothing, and kubectl shows the webhook's warning (the validating rule
        # need-upgrade-owned-by-controller is for when that webhook,
        # failurePolicy Ignore, did not run)
        out = self.status_patch("user", n1, [{"type": NEED, "status": "False",
                                                "message": "controllerrevision: " + h}])
        self.assertEqual((out.returncode, out.stdout, out.stderr),
                         (0, "pod/%s patched (no change)\n" % n1["metadata"]["name"],
                          "Warning: ota-prepull: kept PodNeedUpgrade of pod %s as stored: this write changed it, "
                          "and only the controller may change it\n" % self.ref(n1)))
        # nor report a pull's result ...
        denied("user", n1, [{"type": READY, "status": "True", "reason": "PullImageSuccess",
                             "message": "controllerrevision: " + h}],
               'only the controller may report a pre-pull result for pod %s (PodImageReady status "True", '
               'reason "PullImageSuccess"); rule: result-owned-by-controller, state: PendingUpgrade' % self.ref(n1))
        denied("user", n1, [{"type": READY, "status": "False", "reason": "PullImageFail",
                               "message": "pull image job x failed: no"}],
               'only the controller may report a pre-pull result for pod %s (PodImageReady status "False", '
               'reason "PullImageFail"); rule: result-owned-by-controller, state: PendingUpgrade' % self.ref(n1))
        # ... and a request has the request's shape
        denied("user", n1, [self.pull_request(h, reason="PleasePull")],
               'a pre-pull request for pod %s sets PodImageReady status False with reason WaitPullImage or '
               'none, got reason "PleasePull"; rule: bad-pull-request, state: PendingUpgrade' % self.ref(n1))
        # the controller does not ask for pulls: node users do (sent as the
        # controller sends its writes, a patch without kubectl's read first,
        # which its RBAC does not grant)
        with self.assertRaises(ApiError) as e:
            self.sim.call("PATCH", "/api/v1/namespaces/%s/pods/%s/status" % (self.ns, n1["metadata"]["name"]),
                          {"status": {"conditions": [self.pull_request(h)]}}, who="controller",
                          ctype="application/strategic-merge-patch+json", retry=False)
        self.assertEqual((e.exception.status, "Error from server (Forbidden): %s\n" % e.exception.body["message"]),
                         (403, denial("the controller may not request a pre-pull of pod %s; node users do; "
                                      "rule: pull-requested-by-node-users, state: PendingUpgrade" % self.ref(n1))))

        # nothing moved, and no Job was made
        for name, old in before.items():
            now = self.pod(name)
            self.assertEqual(state_of(now), state_of(old), name)
            self.assertEqual([c for c in now["status"]["conditions"] if c["type"] in (NEED, READY)],
                             [c for c in old["status"]["conditions"] if c["type"] in (NEED, READY)], name)
        self.assertEqual(self.live_jobs(), [])
        denials = self.webhook.metrics()
        for rule, n in (("pull-wrong-revision", 1), ("pull-needs-upgrade", 1),
                        ("result-owned-by-controller", 2),
                        ("bad-pull-request", 1), ("pull-requested-by-node-users", 1)):
            self.assertGreaterEqual(denials['ota_webhook_denials_total{rule="%s"}' % rule], n, rule)

    def test_admin_may_make_any_change(self):
        """system:masters may make any change: here straight to Ready, no Job."""
        pods = self.apply_ds("agent", PRELOADED, nodes=["node-3"])
        h = self.kubectl_set_image("agent", SLOW[4])
        self.wait_need_upgrade(pods, "True", h)
        pod = pods[0]
        out = self.status_patch("admin", pod, [{"type": READY, "status": "True", "reason": "PullImageSuccess",
                                                "message": "controllerrevision: " + h}])
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(self.state(pod), "Ready")
        self.assertEqual(self.live_jobs(), [])

    def test_pull_on_an_orphaned_pod(self):
        """Issue 19: the DaemonSet is deleted with --cascade=orphan.  A request
        written before the controller tidies up is denied by the webhook with
        pull-needs-daemonset (the stored pod has no DaemonSet owner); the
        controller then removes the stale PodNeedUpgrade, and the pod is
        Current: a request is refused as for any pod that needs no upgrade."""
        pods = self.apply_ds("lonely", PRELOADED, nodes=["node-1", "node-2"])
        h = self.kubectl_set_image("lonely", SLOW[4])
        self.wait_need_upgrade(pods, "True", h)
        pod = self.on_node(pods, "node-1")
        # status writes with kubectl are user's, a node user granted pods/status
        # (under RBAC + Node: webhook_flow, USER_ROLE)
        self.ctl.stop()  # so that the stale PodNeedUpgrade is still there
        try:
            self.kubectl_ok("admin", "delete", "daemonset", "lonely", "--cascade=orphan")
            wait_until(lambda: all(not p["metadata"].get("ownerReferences") for p in self.pods("lonely")),
                       30, "the orphaned pods without ownerReferences")
            self.assertEqual(self.state(pod), "PendingUpgrade")
            out = self.status_patch("user", pod, [self.pull_request(h)])
            self.assertEqual((out.returncode, out.stderr), (1, denial(
                "pod %s has no DaemonSet owner (no controller ownerReference of kind DaemonSet: its "
                "DaemonSet was deleted with --cascade=orphan, or it never had one), so there is no "
                "revision to pre-pull; rule: pull-needs-daemonset, state: PendingUpgrade" % self.ref(pod))))
            self.assertEqual(self.state(pod), "PendingUpgrade")
        finally:
            self.ctl.start()
            self.ctl.wait_ready()
        for p in pods:
            wait_until(lambda: cond(self.pod(p["metadata"]["name"]), NEED) is None, 30,
                       "PodNeedUpgrade removed from %s" % p["metadata"]["name"])
        out = self.status_patch("user", pod, [self.pull_request(h)])
        self.assertEqual(out.returncode, 1, out.stderr)
        self.assertIn("rule: pull-needs-upgrade, state: Current", out.stderr)
        self.assertEqual(self.live_jobs(), [])

    def test_a_node_user_cannot_drop_the_conditions(self):
        """A whole-array merge patch without the OTA conditions (YurtHub's shape
        racing an older read): the mutating webhook puts them back, so the write
        goes through and the pod stays where it was."""
        pods = self.apply_ds("agent", PRELOADED, nodes=["node-2"])
        h = self.kubectl_set_image("agent", SLOW[5])
        pod = pods[0]
        self.wait_need_upgrade(pods, "True", h)
        self.assertEqual(self.status_patch("user", pod, [self.pull_request(h)]).returncode, 0)
        self.wait_state(pod, "Ready")
        kubelet_only = [c for c in self.pod(pod["metadata"]["name"])["status"]["conditions"]
                        if c["type"] not in (NEED, READY)]
        restored = self.webhook.metrics()
        out = self.status_patch("user", pod, kubelet_only, ptype="merge")
        self.assertEqual(out.returncode, 0, out.stderr)
        now = self.pod(pod["metadata"]["name"])
        self.assertEqual(state_of(now), "Ready")
        after = self.webhook.metrics()
        for kind in ("restore-need-upgrade", "restore-image-ready"):
            key = 'ota_webhook_mutations_total{kind="%s"}' % kind
            self.assertEqual(after[key] - restored[key], 1, kind)
        self.assertIn(MUTATE_POD, json.dumps(self.sim.get("/apis/admissionregistration.k8s.io/v1/"
                                                          "mutatingwebhookconfigurations/ota-prepull")))
