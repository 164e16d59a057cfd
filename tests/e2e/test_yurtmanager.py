"""OpenYurt's yurt-manager beside ota-prepull (class YurtManagerCoexistence).

yurt-manager (openyurtio/openyurt v1.7, pkg/yurtmanager/controller/
daemonsetupgradestrategy/) writes to pods/status with one service account per
controller (cmd/yurt-manager/app/client: `yurt-manager-<controller name>` in
its working namespace, kube-system):

- daemonpodupdater (`daemon-pod-updater-controller`), for every pod of an OTA
  DaemonSet: PodNeedUpgrade {status True, or False when the pod's
  controller-revision-hash label is the DaemonSet's hash; no reason; message
  "controllerrevision: " + the hash}, set with the apimachinery
  UpdatePodCondition (lastTransitionTime now when the status changes, else
  kept; nothing written when nothing differs) and sent as an Update of
  pods/status: the whole pod it read, its resourceVersion included.
- imagepreheat (`image-preheat-controller`), for a pod with PodNeedUpgrade
  True and PodImageReady False about that hash (any reason): a Job
  `image-pre-pull-<pod>-<hash>` (owner the Pod, activeDeadlineSeconds 600,
  backoffLimit 1, ttlSecondsAfterFinished 30, restartPolicy OnFailure,
  nodeName, containers prepull-<c> with `command: [true]`, imagePullPolicy
  Always), and once it ends PodImageReady {True, PullImageSuccess,
  "controllerrevision: <hash>"} or {False, PullImageFail, "pull image job
  <job> failed"}, by the same UpdatePodCondition and Update.

YurtManager below makes exactly those requests, in our own code, as the two
kubesim identities of those accounts, with the RBAC yurt-manager's chart
gives them (plus the reads its shared cache makes with the manager's own
account in a real cluster).  The webhook runs with the flag the OpenYurt
overlay sets (manifests/overlays/openyurt): both accounts as co-writers.
"""
import time

from harness import REG, ApiError, wait_until
from webhook_flow import NEED, READY, VALIDATE_POD, WebhookBase, cond, state_of

DPU, PREHEAT = "yurt-manager-daemonpodupdater", "yurt-manager-imagepreheat"  # kubesim identities
DPU_USER = "system:serviceaccount:kube-system:yurt-manager-daemon-pod-updater-controller"
PREHEAT_USER = "system:serviceaccount:kube-system:yurt-manager-image-preheat-controller"
PREFIX = "controllerrevision: "
BASE = REG + "/e2e/yurtmgr-base:1.0"
IMAGES = [REG + "/e2e/yurtmgr-%d:1.0" % i for i in range(1, 5)]  # 100 MB: 10 simulated seconds

# yurt-manager's chart, for the two controllers (their kubebuilder markers),
# and the reads of its shared cache.
RULES = {
    DPU_USER: [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch", "update", "patch", "delete"]},
        {"apiGroups": [""], "resources": ["pods/status"], "verbs": ["update", "patch"]},
        {"apiGroups": ["apps"], "resources": ["daemonsets"], "verbs": ["get", "list", "watch", "update"]},
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "update", "patch"]},
    ],
    PREHEAT_USER: [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch", "update", "patch"]},
        {"apiGroups": [""], "resources": ["pods/status"], "verbs": ["update"]},
        {"apiGroups": ["apps"], "resources": ["daemonsets"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["get", "list", "watch", "create"]},
    ],
}


def go_now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def update_pod_condition(pod, new):
    """k8s.io/kubernetes/pkg/api/v1/pod UpdatePodCondition, which both
    controllers call: True when pod's status changed (and is to be written)."""
    new = dict(new, lastProbeTime=None, lastTransitionTime=go_now())
    conds = pod["status"].setdefault("conditions", [])
    for i, old in enumerate(conds):
        if old["type"] != new["type"]:
            continue
        if old.get("status") == new["status"]:
            new["lastTransitionTime"] = old.get("lastTransitionTime")
        same = all((old.get(k) or None) == (new.get(k) or None)
                   for k in ("status", "reason", "message", "lastProbeTime", "lastTransitionTime"))
        conds[i] = new
        return not same
    conds.append(new)
    return True


class YurtManager:
    """The pods/status writes and Jobs of yurt-manager v1.7's daemonpodupdater
    and imagepreheat."""

    def __init__(self, sim, ns):
        self.sim, self.ns = sim, ns

    def path(self, name):
        return "/api/v1/namespaces/%s/pods/%s" % (self.ns, name)

    def update_status(self, pod, who):
        """client.Status().Update: PUT of the whole pod; raises ApiError
        (whose body's message is the error yurt-manager logs)."""
        return self.sim.call("PUT", self.path(pod["metadata"]["name"]) + "/status", pod, who=who, retry=False)

    def set_pod_upgrade_condition(self, name, new_hash, pod=None):
        """daemonpodupdater's SetPodUpgradeCondition: None when it writes
        nothing, else the stored pod."""
        pod = pod or self.sim.get(self.path(name), who=DPU)
        latest = pod["metadata"].get("labels", {}).get("controller-revision-hash") == new_hash
        c = {"type": NEED, "status": "False" if latest else "True", "message": PREFIX + new_hash}
        if not update_pod_condition(pod, c):
            return None
        return self.update_status(pod, DPU)

    @staticmethod
    def next_hash(pod):
        m = (cond(pod, NEED) or {}).get("message", "")
        return m[len(PREFIX):] if m.startswith(PREFIX) else m

    def job_name(self, pod):
        return "image-pre-pull-%s-%s" % (pod["metadata"]["name"], self.next_hash(pod))

    def preheat_until_refused(self, name, timeout=60):
        """preheat's Reconcile again and again (a Job event requeues it)
        while its Job runs, until its report is refused: that ApiError."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                state = self.preheat(name)
            except ApiError as e:
                return e
            if state != "running":
                raise AssertionError("imagepreheat: %s, not running" % state)
            if time.monotonic() > deadline:
                raise AssertionError("imagepreheat's Job did not end")
            time.sleep(0.2)

    def preheat(self, name):
        """One Reconcile of imagepreheat: "skip" (nothing to do), "created"
        (its Job), "running", or "reported" (PodImageReady written); raises
        ApiError when a write is refused."""
        pod = self.sim.get(self.path(name), who=PREHEAT)
        need, ready = cond(pod, NEED), cond(pod, READY)
        if pod["metadata"].get("deletionTimestamp") or not need or need.get("status") != "True":
            return "skip"
        m = (ready or {}).get("message", "")
        if not ready or ready.get("status") != "False" or \
                (m[len(PREFIX):] if m.startswith(PREFIX) else m) != self.next_hash(pod):
            return "skip"
        ds_name = [o["name"] for o in pod["metadata"]["ownerReferences"] if o["kind"] == "DaemonSet"][0]
        ds = self.sim.get("/apis/apps/v1/namespaces/%s/daemonsets/%s" % (self.ns, ds_name), who=PREHEAT)
        jobs = "/apis/batch/v1/namespaces/%s/jobs" % self.ns
        try:
            job = self.sim.get(jobs + "/" + self.job_name(pod), who=PREHEAT)
        except ApiError as e:
            if e.status != 404:
                raise
            tmpl = ds["spec"]["template"]["spec"]
            containers = [{"name": "prepull-" + c["name"], "image": c["image"], "command": ["true"],
                           "imagePullPolicy": "Always"} for c in tmpl["containers"]]
            containers += [{"name": "prepull-init-" + c["name"], "image": c["image"], "command": ["true"],
                            "imagePullPolicy": "Always"} for c in tmpl.get("initContainers", [])]
            spec = {"containers": containers, "restartPolicy": "OnFailure", "nodeName": pod["spec"]["nodeName"]}
            if tmpl.get("imagePullSecrets"):
                spec["imagePullSecrets"] = tmpl["imagePullSecrets"]
            self.sim.call("POST", jobs, {
                "apiVersion": "batch/v1", "kind": "Job",
                "metadata": {"name": self.job_name(pod), "namespace": self.ns, "ownerReferences": [{
                    "apiVersion": "v1", "kind": "Pod", "name": name, "uid": pod["metadata"]["uid"],
                    "blockOwnerDeletion": True}]},
                "spec": {"activeDeadlineSeconds": 600, "backoffLimit": 1, "ttlSecondsAfterFinished": 30,
                         "template": {"spec": spec}}}, who=PREHEAT, retry=False)
            return "created"
        st = job.get("status") or {}
        if st.get("succeeded", 0) > 0:
            c = {"type": READY, "status": "True", "reason": "PullImageSuccess", "message": PREFIX + self.next_hash(pod)}
        elif st.get("failed", 0) > 0:
            c = {"type": READY, "status": "False", "reason": "PullImageFail",
                 "message": "pull image job %s failed" % job["metadata"]["name"]}
        else:
            return "running"
        if update_pod_condition(pod, c):
            self.update_status(pod, PREHEAT)
        return "reported"


def refusal(message):
    """The error of yurt-manager's Update, as it logs it."""
    return 'admission webhook "%s" denied the request: %s' % (VALIDATE_POD, message)


class YurtManagerBase(WebhookBase):
    """A cluster with the webhook, where yurt-manager's two accounts have
    their RBAC (no tests of its own)."""
    REGISTRY = {"includeDefaults": True,
                "images": [{"image": BASE, "size": 30_000_000}] + [{"image": i, "size": 100_000_000} for i in IMAGES],
                "preloadedImages": ["registry.k8s.io/pause:3.10", BASE]}

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        try:
            for user, rules in RULES.items():
                name = user.rsplit(":", 1)[1]
                cls.sim.call("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
                             {"metadata": {"name": name}, "rules": rules})
                cls.sim.call("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
                    "metadata": {"name": name},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
                    "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": "kube-system"}]})
        except BaseException:
            cls.tearDownClass()
            raise

    def setUp(self):
        super().setUp()
        self.ym = YurtManager(self.sim, self.ns)

    def controller_paused(self):
        """Stops our controller; the caller starts it again with resume()."""
        self.assertEqual(self.ctl.stop(), 0)

    def resume(self):
        self.ctl.start()
        self.ctl.wait_ready()
        wait_until(lambda: self.ctl.leading(), 60, "the controller leading again")


class YurtManagerCoexistence(YurtManagerBase):
    """The webhook as manifests/overlays/openyurt runs it: both accounts co-writers."""
    NODES = 3
    WEBHOOK_ARGS = ("--co-writer-usernames", DPU_USER + "," + PREHEAT_USER)

    def test_same_revision_is_accepted(self):
        """daemonpodupdater after ours: nothing differs, so it writes nothing;
        its write of the same revision with its own times (a status change
        it saw in its cache before ours) is taken as it is.  Through the
        rendered configurations it does not even reach the webhook: times
        are no change to the matchConditions (the rulebook's own part,
        for the pre-1.28 overlay, is in tests/unit/test_ota_state.c)."""
        pods = self.apply_ds("agent", BASE, nodes=["node-1"])
        h = self.kubectl_set_image("agent", IMAGES[0])
        self.wait_need_upgrade(pods, "True", h)
        name = pods[0]["metadata"]["name"]
        self.assertIsNone(self.ym.set_pod_upgrade_condition(name, h))
        pod = self.pod(name)
        mine = cond(pod, NEED)
        mine.update(lastTransitionTime="2026-01-02T03:04:05Z", lastProbeTime=None)
        before = self.webhook.requests()
        stored = self.ym.update_status(pod, DPU)
        self.assertEqual(self.webhook.requests(), before)
        self.assertEqual(cond(stored, NEED), {"type": NEED, "status": "True", "message": PREFIX + h,
                                              "lastProbeTime": None, "lastTransitionTime": "2026-01-02T03:04:05Z"})
        self.assertEqual(state_of(stored), "PendingUpgrade")
        # and ours, which reads status and message only, has nothing to redo
        time.sleep(2)
        self.assertEqual(cond(self.pod(name), NEED)["lastTransitionTime"], "2026-01-02T03:04:05Z")

    def test_other_revision_is_refused(self):
        """A PodNeedUpgrade that is not the stored one (a stale cache, a
        revision ours has not written): refused, with the rule, and the pod
        keeps ours."""
        pods = self.apply_ds("agent", BASE, nodes=["node-2"])
        h0 = self.newest_hash("agent")
        h = self.kubectl_set_image("agent", IMAGES[1])
        self.wait_need_upgrade(pods, "True", h)
        pod = pods[0]
        for status, stale in (("True", "0123456789"), ("False", h0)):
            p = self.pod(pod["metadata"]["name"])
            cond(p, NEED).update(status=status, message=PREFIX + stale)
            with self.assertRaises(ApiError) as e:
                self.ym.update_status(p, DPU)
            self.assertEqual(e.exception.status, 403)
            self.assertEqual(e.exception.body["message"], refusal(
                '%s may write PodNeedUpgrade of pod %s only as ota-controller has it (status "True", '
                'message "controllerrevision: %s"), not status "%s", message "controllerrevision: %s": '
                'ota-controller writes each new revision, and a retry from the stored pod then has '
                'nothing to change; rule: co-writer-same-revision, state: PendingUpgrade'
                % (DPU_USER, self.ref(pod), h, status, stale)))
        c = cond(self.pod(pod["metadata"]["name"]), NEED)
        self.assertEqual((c["status"], c["message"]), ("True", PREFIX + h))

    def test_race_for_a_new_revision_converges(self):
        """daemonpodupdater sees the new revision first: its write is refused
        (the webhook cannot tell it from a stale one); ours writes it, and
        daemonpodupdater's retry then finds nothing to write.  Had ours been
        first, its Update of the pod it read before would conflict (409)."""
        pods = self.apply_ds("agent", BASE, nodes=["node-3"])
        h0 = self.newest_hash("agent")
        self.wait_need_upgrade(pods, "False", h0)
        name = pods[0]["metadata"]["name"]
        self.controller_paused()
        try:
            h = self.kubectl_set_image("agent", IMAGES[2])
            with self.assertRaises(ApiError) as e:
                self.ym.set_pod_upgrade_condition(name, h)
            self.assertEqual(e.exception.status, 403)
            self.assertIn("rule: co-writer-same-revision, state: Current", e.exception.body["message"])
            c = cond(self.pod(name), NEED)
            self.assertEqual((c["status"], c["message"]), ("False", PREFIX + h0))
            read_before_ours = self.pod(name)
        finally:
            self.resume()
        self.wait_need_upgrade(pods, "True", h, timeout=60)
        with self.assertRaises(ApiError) as e:
            self.ym.set_pod_upgrade_condition(name, h, pod=read_before_ours)
        self.assertEqual(e.exception.status, 409)
        self.assertIsNone(self.ym.set_pod_upgrade_condition(name, h))
        c = cond(self.pod(name), NEED)
        self.assertEqual((c["status"], c["message"]), ("True", PREFIX + h))

    def test_imagepreheat_left_on(self):
        """yurt-manager run without -imagepreheat: its Job is made (nothing
        of ours can stop a Job), its report refused with the message that
        says to turn it off, and our pre-pull's outcome is ours."""
        pods = self.apply_ds("agent", BASE, nodes=["node-1"])
        h = self.kubectl_set_image("agent", IMAGES[3])
        self.wait_need_upgrade(pods, "True", h)
        pod = pods[0]
        name = pod["metadata"]["name"]
        self.controller_paused()
        try:
            self.request_pull(pod, h)
            self.assertEqual(self.state(pod), "Pulling")
            self.assertEqual(self.ym.preheat(name), "created")
            job = self.sim.get("/apis/batch/v1/namespaces/%s/jobs/image-pre-pull-%s-%s" % (self.ns, name, h))
            self.assertEqual(job["metadata"]["ownerReferences"][0]["uid"], pod["metadata"]["uid"])
            refused = self.ym.preheat_until_refused(name)
        finally:
            self.resume()
        self.assertEqual(refused.status, 403)
        self.assertEqual(refused.body["message"], refusal(
            '%s may write only PodNeedUpgrade of pod %s (a co-writer, --co-writer-usernames); PodImageReady '
            "is ota-prepull's: a yurt-manager that writes it runs its imagepreheat controller, which must be "
            'off (--controllers=-imagepreheat,..., docs/operations.md "Installing into an OpenYurt cluster"); '
            'rule: co-writer-need-upgrade-only, state: Pulling' % (PREHEAT_USER, self.ref(pod))))
        self.assertEqual(self.state(pod), "Pulling")
        # what docs/operations.md tells the operator to watch
        self.assertGreaterEqual(
            self.webhook.metrics()['ota_webhook_denials_total{rule="co-writer-need-upgrade-only"}'], 1)
        # ours serves the request and reports; imagepreheat then has nothing to do
        c = self.wait_image_ready(pod, "PullImageSuccess", timeout=60, message=PREFIX + h)
        self.assertEqual(c["status"], "True")
        self.assertEqual(self.ym.preheat(name), "skip")
        self.assertEqual(self.state(pod), "Ready")


class YurtManagerUnlisted(YurtManagerBase):
    """The base manifests (no --co-writer-usernames) in the same cluster:
    yurt-manager's accounts are node users to the webhook.  Its new revision
    first is restored, not refused (its Update succeeds and changes nothing
    of PodNeedUpgrade); imagepreheat's report is refused as any node user's
    result would be, without a word on what to do.  The operator's view of
    both is in docs/operations.md ("Installing into an OpenYurt cluster")."""
    NODES = 1

    def test_new_revision_first_is_restored_and_imagepreheat_refused(self):
        pods = self.apply_ds("agent", BASE)
        h0 = self.newest_hash("agent")
        self.wait_need_upgrade(pods, "False", h0)
        pod = pods[0]
        name = pod["metadata"]["name"]
        self.controller_paused()
        try:
            h = self.kubectl_set_image("agent", IMAGES[0])
            stored = self.ym.set_pod_upgrade_condition(name, h)
            c = cond(stored, NEED)
            self.assertEqual((c["status"], c["message"]), ("False", PREFIX + h0))
        finally:
            self.resume()
        self.wait_need_upgrade(pods, "True", h, timeout=60)
        self.assertIsNone(self.ym.set_pod_upgrade_condition(name, h))
        self.controller_paused()
        try:
            self.request_pull(pod, h)
            self.assertEqual(self.ym.preheat(name), "created")
            refused = self.ym.preheat_until_refused(name)
        finally:
            self.resume()
        self.assertEqual(refused.status, 403)
        self.assertEqual(refused.body["message"], refusal(
            'only the controller may report a pre-pull result for pod %s (PodImageReady status "True", '
            'reason "PullImageSuccess"); rule: result-owned-by-controller, state: Pulling' % self.ref(pod)))
        self.wait_image_ready(pod, "PullImageSuccess", timeout=60, message=PREFIX + h)
