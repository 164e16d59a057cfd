"""kubectl-ota against kubesim, through the webhook registered from the
rendered manifests (class KubectlOta).

The binary is build/kubectl-ota, or $KUBECTL_OTA (the ASan build in
test-asan); it runs as kubectl runs a plugin, with the words after `kubectl
ota`, and finds the cluster as kubectl does: KUBECONFIG (here a list whose
first file does not exist, to go through the merge), or --kubeconfig.  Each
run's stderr is scanned for sanitizer reports.

kubesim enforces RBAC and the Node authorizer with NodeRestriction: node
users run the plugin with their node's credentials (node-<i>), which may
read and write their own node's pods and nothing of DaemonSets,
ControllerRevisions, Jobs or Events.

Covered: list as admin (-n, -A, --node) and as a node identity (its own
pods by default, images once a pre-pull Job's pod is there); pull, then
status --watch to Ready, then upgrade --wait with the downtime printed, all
as the node; upgrade refused before the pull and forced without it; a
failing pull followed to Failed with the kubelet's reason; --timeout; each
error with its exit code (not found, not OTA, no upgrade, usage); another
node's pod (the Node authorizer's and NodeRestriction's 403s, said in a
sentence); and a plain user (jane), whom RBAC refuses every OTA write.
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import time

from harness import AGENT, BIG, FRESH, MISSING, OTA, PRELOADED, ROOT, SANITIZER, ApiError, wait_until
from webhook_flow import WebhookBase, cond, state_of

KUBECTL_OTA = os.environ.get("KUBECTL_OTA", os.path.join(ROOT, "build", "kubectl-ota"))


def json_without_reason(patch):
    """A pre-pull request's patch with its "reason" left out."""
    body = json.loads(patch)
    for c in body["status"]["conditions"]:
        c.pop("reason", None)
    return json.dumps(body)


def doc_patch_command(doc):
    """The `kubectl patch` of a pre-pull request as a document writes it: the
    first sh block that has one, from `kubectl patch` to the end of the
    command (backslash-newlines joined, a newline inside quotes kept), as
    argv words."""
    with open(os.path.join(ROOT, doc), encoding="utf-8") as f:
        text = f.read()
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        start = block.find("kubectl patch pod")
        if start < 0:
            continue
        cmd = ""
        for line in block[start:].split("\n"):
            cmd += line.strip() + "\n"
            try:
                words = shlex.split(cmd.replace("\\\n", " "))
            except ValueError:  # a quote still open: the next line continues it
                continue
            if not line.rstrip().endswith("\\"):
                return words
    raise AssertionError("no kubectl patch pod command in %s" % doc)


# exit codes (kubectl ota --help)
OK, USAGE, NOT_FOUND, NOT_OTA, NO_UPGRADE, DENIED, NOT_READY, TIMEOUT, PULL_FAILED = 0, 2, 3, 4, 5, 6, 7, 8, 9


class KubectlOta(WebhookBase):
    """Four nodes: node-1 and node-2 for the pull/upgrade flows, node-3 for
    failures, node-4 for the 2 GiB image that keeps pulling."""
    NODES = 4

    # --- running the plugin
    def ota(self, who, *args, timeout=120, flag=False):
        """kubectl-ota as who: KUBECONFIG=<missing>:<who's kubeconfig>, or
        --kubeconfig when flag.  Returns the CompletedProcess."""
        env = dict(os.environ)
        env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
        kc = os.path.join(self.sim.state, who + ".kubeconfig")
        cmd = [KUBECTL_OTA] + list(args)
        if flag:
            cmd += ["--kubeconfig", kc]
            env.pop("KUBECONFIG", None)
        else:
            env["KUBECONFIG"] = os.path.join(self.sim.dir, "no-such.kubeconfig") + ":" + kc
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        bad = [l for l in out.stderr.splitlines() if SANITIZER.search(l)]
        self.assertEqual(bad, [], "sanitizer report from %s:\n%s" % (" ".join(args), out.stderr))
        return out

    def ota_rc(self, who, want_rc, *args, **kw):
        out = self.ota(who, *args, **kw)
        self.assertEqual(out.returncode, want_rc, "kubectl ota %s as %s: rc %d\nstdout:\n%s\nstderr:\n%s"
                         % (" ".join(args), who, out.returncode, out.stdout, out.stderr))
        return out

    @staticmethod
    def table(text):
        """kubectl-style table -> list of dicts by header."""
        lines = [l for l in text.splitlines() if l.strip()]
        head = re.split(r"\s{3,}", lines[0].strip())
        return [dict(zip(head, re.split(r"\s{3,}", l.strip()))) for l in lines[1:]]

    def plain_ds(self, name, image, nodes, annotations=None, strategy=None):
        """A DaemonSet that is not OTA (no OpenYurt annotation; RollingUpdate
        unless strategy); its running pods."""
        tmpl = {"containers": [{"name": "main", "image": image}],
                "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [
                        {"key": "kubernetes.io/hostname", "operator": "In", "values": nodes}]}]}}}}
        ds = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name, "namespace": self.ns},
              "spec": {"selector": {"matchLabels": {"app": name}},
                       "template": {"metadata": {"labels": {"app": name}}, "spec": tmpl}}}
        if annotations:
            ds["metadata"]["annotations"] = annotations
        if strategy:
            ds["spec"]["updateStrategy"] = strategy
        self.sim.call("POST", "/apis/apps/v1/namespaces/%s/daemonsets" % self.ns, ds)
        return wait_until(lambda: self.running_pods(name, len(nodes)), 60, "pods of %s" % name)

    def on(self, pods, node):
        return [p for p in pods if p["spec"]["nodeName"] == node][0]

    # --- tests
    def test_list_as_admin_and_as_a_node(self):
        pods = self.make_ds(AGENT + "v1", nodes=["node-1", "node-2", "node-3"])
        self.plain_ds("plain", PRELOADED, ["node-1"])
        self.wait_need_upgrade(pods, "False", self.newest_hash())
        out = self.ota_rc("admin", OK, "list", "-n", self.ns, flag=True)
        rows = self.table(out.stdout)
        self.assertEqual(list(rows[0].keys()),
                         ["POD", "NODE", "DAEMONSET", "STATE", "TARGET REVISION", "IMAGES", "AGE"])
        self.assertEqual(sorted(r["POD"] for r in rows), sorted(p["metadata"]["name"] for p in pods))
        for r in rows:
            self.assertEqual((r["DAEMONSET"], r["STATE"], r["IMAGES"]), ("agent", "Current", AGENT + "v1"))

        h = self.set_image(AGENT + "v2")
        self.wait_need_upgrade(pods, "True", h)
        rows = self.table(self.ota_rc("admin", OK, "list", "-n", self.ns).stdout)
        self.assertEqual(len(rows), 3)
        for r in rows:
            self.assertEqual((r["STATE"], r["TARGET REVISION"], r["IMAGES"]), ("PendingUpgrade", h, AGENT + "v2"))
            self.assertRegex(r["AGE"], r"^\d+(s|m)")

        # -A adds NAMESPACE; --node filters
        rows = [r for r in self.table(self.ota_rc("admin", OK, "list", "-A").stdout) if r["NAMESPACE"] == self.ns]
        self.assertEqual(len(rows), 3)
        rows = self.table(self.ota_rc("admin", OK, "list", "-n", self.ns, "--node", "node-3").stdout)
        self.assertEqual([(r["POD"], r["NODE"]) for r in rows],
                         [(self.on(pods, "node-3")["metadata"]["name"], "node-3")])

        # a node identity sees its own pods by default (SelfSubjectReview),
        # reading only pods: the images of a revision are not visible to it
        out = self.ota_rc("node-2", OK, "list", "-n", self.ns)
        rows = self.table(out.stdout)
        self.assertEqual([(r["POD"], r["NODE"], r["DAEMONSET"], r["STATE"], r["TARGET REVISION"], r["IMAGES"])
                          for r in rows],
                         [(self.on(pods, "node-2")["metadata"]["name"], "node-2", "agent", "PendingUpgrade", h,
                           "<not visible to a node>")])
        self.assertIn("IMAGES <not visible to a node>: these credentials may not read DaemonSets or "
                      "ControllerRevisions", out.stderr)
        # ... until a pre-pull Job's pod (on the node) names them
        n2 = self.on(pods, "node-2")["metadata"]["name"]
        self.ota_rc("node-2", OK, "pull", n2, "-n", self.ns)
        rows = wait_until(lambda: [r for r in self.table(self.ota_rc("node-2", OK, "list", "-n", self.ns).stdout)
                                   if r["IMAGES"] == AGENT + "v2"], 30, "the images from the Job's pod")
        self.assertEqual(len(rows), 1)
        # ... and says so when it has none
        out = self.ota_rc("node-4", OK, "list", "-n", self.ns)
        self.assertEqual(out.stdout, "")
        self.assertEqual(out.stderr, "No OTA pods found in namespace %s on node node-4.\n" % self.ns)

    def test_list_opted_in_not_ota(self):
        """A DaemonSet that is not OTA but opted in to automatic pre-pull
        (OnDelete without the OTA annotation, so that its pods stay to be
        listed): its pods are listed as an OTA DaemonSet's, STATE ending
        (auto); a DaemonSet that never opted in stays out."""
        pods = self.plain_ds("auto", AGENT + "v1", ["node-1", "node-2"],
                             annotations={"apps.kruise.io/image-predownload-parallelism": "2"},
                             strategy={"type": "OnDelete"})
        self.plain_ds("plain", PRELOADED, ["node-1"])
        h = self.set_image(AGENT + "v2", name="auto")
        want = sorted((p["metadata"]["name"], "auto", "Ready (auto)", h, AGENT + "v2") for p in pods)

        def listed():
            rows = self.table(self.ota_rc("admin", OK, "list", "-n", self.ns).stdout)
            got = sorted((r["POD"], r["DAEMONSET"], r["STATE"], r["TARGET REVISION"], r["IMAGES"]) for r in rows)
            return got if got == want else None
        wait_until(listed, 60, "the opted-in DaemonSet's pods listed Ready (auto)")
        # a node identity (no DaemonSet to read) tells them by PodNeedUpgrade
        rows = self.table(self.ota_rc("node-2", OK, "list", "-n", self.ns).stdout)
        self.assertEqual([(r["POD"], r["STATE"]) for r in rows],
                         [(self.on(pods, "node-2")["metadata"]["name"], "Ready (auto)")])

    def test_pull_watch_upgrade_wait(self):
        pods, h = self.upgraded_ds(old=FRESH[0], new=FRESH[1], nodes=["node-1"])
        pod = pods[0]
        name = pod["metadata"]["name"]
        # before the pull, upgrade is refused and says what it would cost
        out = self.ota_rc("node-1", NOT_READY, "upgrade", name, "-n", self.ns, "--wait")
        self.assertIn("not pre-pulled on node-1", out.stderr)
        self.assertIn("down for the whole pull", out.stderr)
        self.assertIn("kubectl ota pull %s -n %s" % (name, self.ns), out.stderr)
        self.assertIsNotNone(self.pod(name))  # not deleted

        out = self.ota_rc("node-1", OK, "pull", name, "-n", self.ns)
        self.assertIn("pre-pull of revision %s requested" % h, out.stdout)
        self.assertIn("kubectl ota status %s -n %s --watch" % (name, self.ns), out.stdout)
        ir = cond(self.pod(name), "PodImageReady")
        # the write YurtHub makes, stamped by the webhook
        self.assertEqual((ir["status"], ir["reason"], ir["message"]),
                         ("False", "WaitPullImage", "controllerrevision: " + h))
        # a second pull while it runs (or once it is done) writes nothing
        again = self.ota_rc("node-1", OK, "pull", name, "-n", self.ns)
        self.assertRegex(again.stdout, "already (running|pre-pulled)")

        out = self.ota_rc("node-1", OK, "status", name, "-n", self.ns, "--watch", "--timeout", "60s")
        self.assertIn("Ready: the images are on node-1", out.stdout)
        self.assertEqual(state_of(self.pod(name)), "Ready")
        out = self.ota_rc("node-1", OK, "status", name, "-n", self.ns)
        self.assertIn("State:      Ready", out.stdout)
        # the Job as its pod (on node-1) shows it; the Job and the kubelet's
        # Events are not for a node to read, and status says so
        self.assertRegex(out.stdout, r"Job:        ota-prepull-%s-[0-9a-f]{8} \(complete\)" % name)
        self.assertIn("Not shown:  the Job itself and the kubelet's Events: these credentials may not read "
                      "them", out.stdout)
        self.assertRegex(out.stdout, r"Elapsed:    took \d+s")
        # the admin reads them
        out = self.ota_rc("admin", OK, "status", name, "-n", self.ns)
        self.assertRegex(out.stdout, r"Job:        ota-prepull-%s-[0-9a-f]{8} \(complete\)" % name)
        self.assertIn("Kubelet:    ", out.stdout)
        self.assertNotIn("Not shown", out.stdout)

        out = self.ota_rc("node-1", OK, "upgrade", name, "-n", self.ns, "--wait", "--timeout", "60s")
        m = re.search(r"Downtime: (\d+\.\d)s", out.stdout)
        self.assertIsNotNone(m, out.stdout)
        fresh = [p for p in self.pods() if p["metadata"]["uid"] != pod["metadata"]["uid"]]
        self.assertEqual(len(fresh), 1)
        self.assertIn("pod %s/%s is Ready on node-1" % (self.ns, fresh[0]["metadata"]["name"]), out.stdout)
        self.assertEqual(fresh[0]["metadata"]["labels"]["controller-revision-hash"], h)
        # the upgraded pod needs nothing more
        self.wait_need_upgrade(fresh, "False", h)
        out = self.ota_rc("node-1", NO_UPGRADE, "upgrade", fresh[0]["metadata"]["name"], "-n", self.ns)
        self.assertIn("needs no upgrade", out.stderr)

    def test_forced_upgrade_without_prepull(self):
        pods, h = self.upgraded_ds(old=FRESH[2], new=FRESH[3], nodes=["node-2"])
        name = pods[0]["metadata"]["name"]
        out = self.ota_rc("node-2", OK, "upgrade", name, "-n", self.ns, "--force", "--wait", "--timeout", "60s")
        self.assertIn("warning: --force: the images of revision %s are not pre-pulled on node-2" % h, out.stderr)
        self.assertRegex(out.stdout, r"Downtime: \d+\.\ds")
        fresh = self.running_pods("agent", 1)
        self.assertEqual(fresh[0]["metadata"]["labels"]["controller-revision-hash"], h)
        # no pre-pull Job was involved: the replacement's kubelet pulled it
        self.assertEqual(self.tracker.jobs_of(pods[0]["metadata"]["uid"]), [])

    def test_failing_pull_followed_to_failed(self):
        pods, h = self.upgraded_ds(old=FRESH[4], new=MISSING, nodes=["node-3"], timeout=30)
        name = pods[0]["metadata"]["name"]
        self.ota_rc("node-3", OK, "pull", name, "-n", self.ns)
        out = self.ota_rc("node-3", PULL_FAILED, "status", name, "-w", "-n", self.ns, "--timeout", "60s")
        # the controller's message, which carries the kubelet's reason
        self.assertRegex(out.stdout, r"\nFailed: pull image job ota-prepull-%s-[0-9a-f]{8} failed: "
                                     r"(ErrImagePull|ImagePullBackOff): .*not found" % name)
        # "not found": a retry cannot help (issue 19), the DaemonSet's admin can
        self.assertNotIn("Retry with", out.stdout)
        self.assertIn("A retry cannot help: the registry has no such image, or its name is not valid.\n"
                      "Ask the admin of DaemonSet %s/agent about the image and its tag.\n" % self.ns,
                      out.stdout)
        self.assertEqual(state_of(self.pod(name)), "Failed")
        # Failed may be retried (a new request), and upgrade still refuses
        out = self.ota_rc("node-3", NOT_READY, "upgrade", name, "-n", self.ns)
        self.assertIn("is Failed", out.stderr)

    def test_readme_plain_kubectl_after_failed_pull(self):
        """Issue 19: the README's plain-kubectl request, run as written there
        with the real kubectl, is admitted after a failed pull; the same
        request without "reason":"" is denied with a denial that says why.
        kubectl reads pods/status before it patches, which a node's
        credentials may not (issue 18): it runs as user, granted what the
        README says a person needs (webhook_flow.NODE_USER_RULES), and as the
        node it is refused at that read."""
        readme = doc_patch_command("README.md")
        self.assertEqual(readme[:3], ["kubectl", "patch", "pod"])
        # one form: docs/node-users.md gives the same request
        guide = doc_patch_command(os.path.join("docs", "node-users.md"))
        self.assertEqual(readme[readme.index("-p") + 1], guide[guide.index("-p") + 1])
        pods, h = self.upgraded_ds(old=FRESH[7], new=MISSING, nodes=["node-3"], timeout=30)
        pod = pods[0]
        name = pod["metadata"]["name"]
        self.ota_rc("node-3", OK, "pull", name, "-n", self.ns)
        self.wait_state(pod, "Failed", timeout=60)

        def run(words, who="user"):
            argv = [{"<pod>": name}.get(w, w) for w in words]
            argv[argv.index("-n") + 1] = self.ns
            p = argv.index("-p") + 1
            self.assertIn("bpwch9f77j", argv[p])
            argv[p] = argv[p].replace("bpwch9f77j", h)
            return self.sim.kubectl(who, *argv[1:])

        out = run(readme, who="node-3")
        self.assertEqual(out.returncode, 1, out.stdout + out.stderr)
        self.assertIn('User "system:node:node-3" cannot get resource "pods/status"', out.stderr)
        self.grant_node_user()

        # without "reason":"" (the README's old form): the stored reason stays
        old = list(readme)
        p = old.index("-p") + 1
        old[p] = json_without_reason(old[p])
        out = run(old)
        self.assertEqual(out.returncode, 1, out.stdout + out.stderr)
        self.assertIn("rule: result-owned-by-controller", out.stderr)
        self.assertIn('the reason is the stored one, kept by a merge patch that does not name it: '
                      'to ask for a pre-pull, write "reason":""', out.stderr)
        self.assertEqual(state_of(self.pod(name)), "Failed")
        # as the README writes it: admitted, a new request
        out = run(readme)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        ir = cond(self.pod(name), "PodImageReady")
        self.assertEqual((ir["status"], ir["reason"], ir["message"]),
                         ("False", "WaitPullImage", "controllerrevision: " + h))

    def test_plugin_list_with_build_on_path(self):
        """Issue 19: with build/ on PATH, as the README says, `kubectl plugin
        list` finds kubectl-ota and nothing it cannot run (a linker map named
        kubectl-ota.map made it exit 1)."""
        if shutil.which("kubectl") is None:
            self.skipTest("no kubectl")
        build = os.path.dirname(os.path.abspath(KUBECTL_OTA))
        env = dict(os.environ, PATH=build + os.pathsep + os.environ.get("PATH", ""))
        out = subprocess.run(["kubectl", "plugin", "list"], capture_output=True, text=True, env=env,
                             timeout=60)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertIn(os.path.join(build, "kubectl-ota"), out.stdout)

    def test_watch_timeout(self):
        pods, h = self.upgraded_ds(old=PRELOADED, new=BIG + "2.0", nodes=["node-4"])
        name = pods[0]["metadata"]["name"]
        self.ota_rc("node-4", OK, "pull", name, "-n", self.ns)
        # 2 GiB: minutes of simulated time, several real seconds
        t0 = time.monotonic()
        out = self.ota_rc("node-4", TIMEOUT, "status", name, "-n", self.ns, "--watch", "--timeout", "1s")
        self.assertIn("timed out", out.stderr)
        self.assertIn("State:      Pulling", out.stdout)
        self.assertLess(time.monotonic() - t0, 30)  # a bound on the test, not a measure

    def test_errors(self):
        pods, h = self.upgraded_ds(old=FRESH[5], new=FRESH[6], nodes=["node-1", "node-2"])
        n1 = self.on(pods, "node-1")
        # not found (a node may not read a pod it has no pod by that name: the
        # Node authorizer refuses, and the plugin says both)
        out = self.ota_rc("admin", NOT_FOUND, "pull", "agent-nope", "-n", self.ns)
        self.assertEqual(out.stderr, 'error: pod "agent-nope" not found in namespace "%s"\n' % self.ns)
        out = self.ota_rc("node-1", DENIED, "pull", "agent-nope", "-n", self.ns)
        self.assertIn("error: pod %s/agent-nope is not on node node-1, or does not exist" % self.ns, out.stderr)
        self.ota_rc("admin", NOT_FOUND, "status", n1["metadata"]["name"], "-n", "default")
        # not OTA: a plain DaemonSet's pod (the admin reads its DaemonSet; a
        # node may not, and its pod has no PodNeedUpgrade), and a pod without
        # a controller
        plain = self.plain_ds("plain", PRELOADED, ["node-1"])[0]
        out = self.ota_rc("admin", NOT_OTA, "pull", plain["metadata"]["name"], "-n", self.ns)
        self.assertIn("is not in an OTA DaemonSet: DaemonSet plain is not annotated %s: OTA (nor" % OTA, out.stderr)
        out = self.ota_rc("node-1", NOT_OTA, "pull", plain["metadata"]["name"], "-n", self.ns)
        self.assertIn("is not known to be in an OTA DaemonSet: it has no PodNeedUpgrade condition", out.stderr)
        bare = {"metadata": {"name": "bare", "namespace": self.ns},
                "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": PRELOADED}]}}
        self.sim.call("POST", "/api/v1/namespaces/%s/pods" % self.ns, bare)
        out = self.ota_rc("node-1", NOT_OTA, "upgrade", "bare", "-n", self.ns)
        self.assertIn("it has no controller", out.stderr)
        # no upgrade needed: a pod of a DaemonSet at its newest revision
        cur = self.apply_ds("steady", PRELOADED, nodes=["node-1"])[0]
        self.wait_need_upgrade([cur], "False", self.newest_hash("steady"))
        for cmd in ("pull", "upgrade"):
            out = self.ota_rc("node-1", NO_UPGRADE, cmd, cur["metadata"]["name"], "-n", self.ns)
            self.assertIn("needs no upgrade: PodNeedUpgrade is not True", out.stderr)
        # usage errors, and --help
        for args, word in ((["pull"], "needs a pod name"), (["list", "--watch"], "--watch applies to"),
                           (["frobnicate"], "unknown command"), (["status", "../x"], "is not a pod name")):
            out = self.ota_rc("node-1", USAGE, *args)
            self.assertIn(word, out.stderr)
        out = self.ota_rc("node-1", OK, "--help")
        self.assertIn("Exit codes:", out.stdout)
        # a configuration that names no cluster
        env = dict(os.environ, KUBECONFIG=os.path.join(self.sim.dir, "missing"))
        out = subprocess.run([KUBECTL_OTA, "list"], capture_output=True, text=True, env=env, timeout=30)
        self.assertEqual(out.returncode, 1)
        self.assertIn("none of the files in KUBECONFIG", out.stderr)
        out = self.ota_rc("node-1", 1, "list", "--context", "nope")
        self.assertIn('context "nope" not found', out.stderr)

    def test_another_nodes_pod(self):
        """Issue 18: node-1's credentials on node-2's pod.  The Node
        authorizer refuses the read, NodeRestriction the delete and the
        status write; kubectl-ota says each in a sentence (exit 6)."""
        pods, h = self.upgraded_ds(old=FRESH[8], new=FRESH[9], nodes=["node-1", "node-2"])
        n2 = self.on(pods, "node-2")["metadata"]["name"]
        # upgrade --force: the apiserver's NodeRestriction denial, in words
        out = self.ota_rc("node-1", DENIED, "upgrade", n2, "-n", self.ns, "--force")
        self.assertIn("error: node node-1 may not upgrade pod %s/%s: the pod runs on another node, and the "
                      "apiserver lets a node delete only the pods that run on it; ask the user of the pod's "
                      "node to upgrade it.\n" % (self.ns, n2), out.stderr)
        self.assertIn('The apiserver said: pods "%s" is forbidden: node "node-1" can only delete pods with '
                      'spec.nodeName set to itself' % n2, out.stderr)
        self.assertIsNone(self.pod(n2)["metadata"].get("deletionTimestamp"))  # not deleted
        # pull, status, and upgrade without --force: the read is refused
        for cmd in (["pull"], ["status"], ["upgrade"]):
            out = self.ota_rc("node-1", DENIED, *cmd, n2, "-n", self.ns)
            self.assertIn("error: pod %s/%s is not on node node-1, or does not exist: a node's credentials may "
                          "read only the pods that run on that node" % (self.ns, n2), out.stderr)
            self.assertIn("no relationship found between node 'node-1' and this object", out.stderr)
        # the same writes with plain kubectl: NodeRestriction's words
        out = self.sim.kubectl("node-1", "delete", "pod", n2, "-n", self.ns, "--wait=false")
        self.assertNotEqual(out.returncode, 0)
        self.assertIn('can only delete pods with spec.nodeName set to itself', out.stderr)
        patch = json.dumps({"status": {"conditions": [{"type": "PodImageReady", "status": "False", "reason": "",
                                                       "message": "controllerrevision: " + h}]}})
        out = self.sim.kubectl("node-1", "patch", "pod", n2, "-n", self.ns, "--subresource=status",
                               "--type=strategic", "-p", patch)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("Error from server (Forbidden)", out.stderr)
        self.assertIsNone(cond(self.pod(n2), "PodImageReady"))
        self.assertEqual(state_of(self.pod(n2)), "PendingUpgrade")

    def test_plain_user_may_not_write(self):
        """Issue 18: jane (user.kubeconfig, system:basic-user only) gets a 403
        for every OTA write: the pre-pull request (kubectl ota pull, kubectl
        patch --subresource=status), the upgrade (kubectl ota upgrade, kubectl
        delete), and DaemonSet writes."""
        pods, h = self.upgraded_ds(old=FRESH[10], new=FRESH[11], nodes=["node-1"])
        name = pods[0]["metadata"]["name"]
        rbac = "error: jane may not read or change pod %s/%s: no RBAC rule grants it" % (self.ns, name)
        # (--force asks the apiserver about the delete itself, a dry run)
        for cmd, verb in ((["pull"], "get"), (["upgrade", "--force"], "delete"), (["upgrade"], "get"),
                          (["status"], "get")):
            out = self.ota_rc("user", DENIED, cmd[0], name, "-n", self.ns, *cmd[1:])
            self.assertIn(rbac, out.stderr)
            self.assertIn('The apiserver said: pods "%s" is forbidden: User "jane" cannot %s resource "pods"'
                          % (name, verb), out.stderr)
        # plain kubectl: refused at its first call (kubectl patch and set
        # image read the object before they write it)
        patch = json.dumps({"status": {"conditions": [{"type": "PodImageReady", "status": "False", "reason": "",
                                                       "message": "controllerrevision: " + h}]}})
        for args, res in (
                (["patch", "pod", name, "--subresource=status", "--type=strategic", "-p", patch], "pods/status"),
                (["delete", "pod", name, "--wait=false"], "pods"),
                (["patch", "ds", "agent", "--type=merge", "-p", '{"metadata":{"labels":{"x":"y"}}}'],
                 "daemonsets"),
                (["set", "image", "ds/agent", "main=" + FRESH[12]], "daemonsets"),
                (["delete", "ds", "agent", "--wait=false"], "daemonsets")):
            out = self.sim.kubectl("user", *args, "-n", self.ns)
            self.assertNotEqual(out.returncode, 0, args)
            self.assertRegex(out.stderr, r'^Error from server \(Forbidden\): .* is forbidden: User "jane" cannot '
                                         r'(get|patch|delete) resource "%s"' % res, args)
        ds = {"apiVersion": "apps/v1", "kind": "DaemonSet",
              "metadata": {"name": "mine", "annotations": {OTA: "OTA"}},
              "spec": {"selector": {"matchLabels": {"app": "mine"}},
                       "template": {"metadata": {"labels": {"app": "mine"}},
                                    "spec": {"containers": [{"name": "c", "image": PRELOADED}]}}}}
        out = self.sim.kubectl("user", "create", "-n", self.ns, "-f", "-", stdin=json.dumps(ds))
        self.assertIn('User "jane" cannot create resource "daemonsets"', out.stderr)
        # the writes themselves, as any client sends them: each a 403 for its verb
        pod_path = "/api/v1/namespaces/%s/pods/%s" % (self.ns, name)
        ds_path = "/apis/apps/v1/namespaces/%s/daemonsets" % self.ns
        for method, path, body, ctype, verb, res in (
                ("PATCH", pod_path + "/status", json.loads(patch), "application/strategic-merge-patch+json",
                 "patch", "pods/status"),
                ("DELETE", pod_path, None, "application/json", "delete", "pods"),
                ("PATCH", ds_path + "/agent", {"metadata": {"labels": {"x": "y"}}}, "application/merge-patch+json",
                 "patch", "daemonsets"),
                ("POST", ds_path, ds, "application/json", "create", "daemonsets"),
                ("DELETE", ds_path + "/agent", None, "application/json", "delete", "daemonsets")):
            with self.assertRaises(ApiError) as e:
                self.sim.call(method, path, body, who="user", ctype=ctype, retry=False)
            self.assertEqual(e.exception.status, 403, (method, path))
            self.assertIn('User "jane" cannot %s resource "%s"' % (verb, res), e.exception.body["message"])
        # nothing changed
        self.assertEqual(state_of(self.pod(name)), "PendingUpgrade")
        self.assertEqual(len(self.pods()), 1)
