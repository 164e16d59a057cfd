"""What the tests through the registered webhook share (no tests here).

WebhookBase: a Base with the webhook registered from the rendered manifests
(harness.Base.WEBHOOK), whose writes go through the real kubectl as the
identities kubesim writes kubeconfigs for (admin, controller, node-<i>, user).

kubesim enforces RBAC and the Node authorizer, and `kubectl patch
--subresource=status` reads the subresource before it patches (kubectl's
resource builder loads the object), a read the Node authorizer does not
grant a node (it grants update and patch of pods/status, not get): a node's
credentials write status with kubectl ota, YurtHub or any client that
patches without that read, not with kubectl.  So status writes made with
kubectl are made as user (jane), whom a class with USER_ROLE grants a human
node user's Role in each test's namespace (NODE_USER_RULES, what
docs/node-users.md says such a person needs); the webhook treats both alike
(DESIGN §3: a node user is anyone but the controller whom RBAC lets write
pods/status), and what only a node identity meets, NodeRestriction, is
tested with the node's credentials (test_kubectl_ota.py, test_yurthub.py).
state_of(): the pod states of DESIGN §3, classified as docs/DECISIONS.md
("Classifying a pod") says, to check where each move ends.
"""
import json

from harness import OTA, TIMEOUT_ANN, Base, wait_until

NEED = "PodNeedUpgrade"
READY = "PodImageReady"
VALIDATE_POD = "podstatus.validate.ota-prepull.openyurt.io"
MUTATE_POD = "podstatus.mutate.ota-prepull.openyurt.io"


def cond(pod, ctype):
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return c
    return None


def state_of(pod):
    """Current, PendingUpgrade, Pulling, Ready or Failed (DESIGN §3)."""
    need, ready = cond(pod, NEED), cond(pod, READY)
    if not need or need.get("status") != "True":
        return "Current"
    about_h = ready is not None and ready.get("message") == need.get("message")
    if ready and ready.get("status") == "False" and ready.get("reason") == "PullImageFail":
        return "Failed"
    if about_h and ready.get("status") == "False" and ready.get("reason", "") in ("WaitPullImage", ""):
        return "Pulling"
    if about_h and ready.get("status") == "True" and ready.get("reason") == "PullImageSuccess":
        return "Ready"
    return "PendingUpgrade"


def denial(message, webhook=VALIDATE_POD):
    """What kubectl prints on stderr when the webhook denies a write (403)."""
    return 'Error from server (Forbidden): admission webhook "%s" denied the request: %s\n' % (webhook, message)


# What a human node user is granted (docs/node-users.md): read and delete
# pods, read and patch their status.
NODE_USER_RULES = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "delete"]},
                   {"apiGroups": [""], "resources": ["pods/status"], "verbs": ["get", "patch"]}]


class WebhookBase(Base):
    WEBHOOK = True
    USER_ROLE = False  # grant user NODE_USER_RULES in each test's namespace

    def setUp(self):
        super().setUp()
        if self.USER_ROLE:
            self.grant_node_user()

    def grant_node_user(self):
        """A Role of NODE_USER_RULES bound to user (jane), in this test's namespace only."""
        role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                "metadata": {"name": "ota-node-user", "namespace": self.ns}, "rules": NODE_USER_RULES}
        binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                   "metadata": {"name": "ota-node-user", "namespace": self.ns},
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "ota-node-user"},
                   "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                                 "name": self.sim.identities["user"]["user"]}]}
        for obj in (role, binding):
            self.sim.call("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/%ss"
                          % (self.ns, obj["kind"].lower()), obj)

    def kubectl(self, who, *args, stdin=None):
        return self.sim.kubectl(who, "-n", self.ns, *args, stdin=stdin)

    def kubectl_ok(self, who, *args, stdin=None):
        out = self.kubectl(who, *args, stdin=stdin)
        self.assertEqual(out.returncode, 0, "kubectl %s as %s: %s%s" % (" ".join(args), who, out.stdout,
                                                                        out.stderr))
        return out.stdout

    def apply_ds(self, name, image, nodes=None, timeout=None, command=None):
        """`kubectl apply` of an OTA DaemonSet as admin (OnDelete, as the webhook wants);
        returns its running pods sorted by node."""
        tmpl = {"containers": [{"name": "main", "image": image}]}
        if command is not None:
            tmpl["containers"][0]["command"] = list(command)
        if nodes is not None:
            tmpl["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "kubernetes.io/hostname", "operator": "In", "values": list(nodes)}]}]}}}
        ann = {OTA: "OTA"}
        if timeout is not None:
            ann[TIMEOUT_ANN] = str(timeout)
        ds = {"apiVersion": "apps/v1", "kind": "DaemonSet",
              "metadata": {"name": name, "annotations": ann},
              "spec": {"selector": {"matchLabels": {"app": name}}, "updateStrategy": {"type": "OnDelete"},
                       "template": {"metadata": {"labels": {"app": name}}, "spec": tmpl}}}
        self.assertEqual(self.kubectl_ok("admin", "apply", "-f", "-", stdin=json.dumps(ds)),
                         "daemonset.apps/%s created\n" % name)
        want = len(nodes) if nodes is not None else self.NODES
        return wait_until(lambda: self.running_pods(name, want), 60, "%d running pods of %s" % (want, name))

    def kubectl_set_image(self, name, image):
        """The admin publishes a new template; returns the new revision's hash."""
        old = self.newest_hash(name)
        self.assertEqual(self.kubectl_ok("admin", "set", "image", "daemonset/" + name, "main=" + image),
                         "daemonset.apps/%s image updated\n" % name)
        return wait_until(lambda: (lambda h: h != old and h)(self.newest_hash(name)), 30,
                          "a new revision of %s" % name)

    def status_patch(self, who, pod, conditions, ptype="strategic"):
        """`kubectl patch pod --subresource=status` of status.conditions as who."""
        body = json.dumps({"status": {"conditions": conditions}})
        return self.kubectl(who, "patch", "pod", pod["metadata"]["name"], "--subresource=status",
                            "--type=" + ptype, "-p", body)

    @staticmethod
    def pull_request(h, reason="WaitPullImage"):
        c = {"type": READY, "status": "False", "message": "controllerrevision: " + h}
        if reason is not None:
            c["reason"] = reason
        return c

    def state(self, pod):
        return state_of(self.pod(pod["metadata"]["name"]))

    def wait_state(self, pod, want, timeout=30):
        name = pod["metadata"]["name"]
        return wait_until(lambda: (lambda p: p if state_of(p) == want else None)(self.pod(name)), timeout,
                          "%s in state %s" % (name, want))

    def ref(self, pod):
        return "%s/%s" % (self.ns, pod["metadata"]["name"])

    def on_node(self, pods, node):
        return [p for p in pods if p["spec"]["nodeName"] == node][0]
