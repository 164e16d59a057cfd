"""The controller never fails silently (class Unserved, issue 19 §1): a
pre-pull request on a pod whose DaemonSet was deleted with
--cascade=orphan is answered PullImageFail with why, a Warning Event and a
log line, and the stale PodNeedUpgrade=True of every orphaned pod is
removed, also when the request was written while the controller was down;
a timeout annotation that got in while the webhook was down is said (a
Warning Event on the DaemonSet, a warning line) and the "job created" line
names the deadline and where it came from.

No webhook here: the requests are written as plain kubectl or YurtHub
write them when the webhook is not in the way (the webhook's own refusals
are the integration suite's and Transitions').  On the main of before, the
orphan's request sat in WaitPullImage with no log, Event or metric.
"""
import base64
import json
import os
import re
import signal
import subprocess
import time

from harness import AGENT, CHILDREN, CONTROLLER, TIMEOUT_ANN, WEBHOOK, Base, free_port, wait_until
from test_observe import JsonLogged, json_lines


class Unserved(JsonLogged, Base):
    NODES = 2

    def orphan(self, name="agent"):
        """kubectl delete ds --cascade=orphan: the GC drops the pods'
        ownerReferences and leaves them running."""
        out = self.sim.kubectl("admin", "delete", "daemonset", name, "-n", self.ns, "--cascade=orphan")
        self.assertEqual(out.returncode, 0, out.stderr)
        wait_until(lambda: all(not p["metadata"].get("ownerReferences") for p in self.pods(name)),
                   30, "the orphaned pods without ownerReferences")

    def test_orphan_request_answered_and_need_upgrade_removed(self):
        pods, h = self.upgraded_ds()
        failed_before = self.ctl.metrics().get('ota_controller_pulls_total{outcome="failed"}', 0)
        self.orphan()
        asked, other = pods
        ref = "%s/%s" % (self.ns, asked["metadata"]["name"])
        self.request_pull(asked, h)
        want = ("pull image request not served: pod %s has no owner: its DaemonSet was deleted "
                "with --cascade=orphan, or it never had one" % ref)
        c = self.wait_image_ready(asked, "PullImageFail", message=want)
        self.assertTrue(c.get("lastTransitionTime"), c)
        # the stale PodNeedUpgrade is gone from both pods, asked or not
        for p in pods:
            wait_until(lambda: self.cond(self.pod(p["metadata"]["name"]), "PodNeedUpgrade") is None,
                       20, "PodNeedUpgrade removed from %s" % p["metadata"]["name"])
        # said: a Warning Event on the pod, a log line, the failed pulls metric
        evs = wait_until(lambda: [e for e in self.events(asked) if e["reason"] == "PrePullFailed"],
                         20, "the PrePullFailed Event")
        self.assertEqual((evs[0]["type"], evs[0]["message"]), ("Warning", want))
        done = self.wait_line("pre-pull finished", pod=ref)
        self.assertEqual(done["outcome"], "failed")
        self.assertIn("has no owner", done["reason"])
        self.wait_line("PodNeedUpgrade removed", pod="%s/%s" % (self.ns, other["metadata"]["name"]))
        m = self.ctl.metrics()
        self.assertEqual(m['ota_controller_pulls_total{outcome="failed"}'], failed_before + 1)
        # no Job, and the answer is final: nothing is written again
        self.assertEqual(self.tracker.jobs_of(asked["metadata"]["uid"]), [])
        rv = self.pod(asked["metadata"]["name"])["metadata"]["resourceVersion"]
        time.sleep(1.5)
        self.assertEqual(self.pod(asked["metadata"]["name"])["metadata"]["resourceVersion"], rv)
        self.assertEqual(len([e for e in self.events(asked) if e["reason"] == "PrePullFailed"]), 1)

    def test_request_written_while_the_controller_was_down(self):
        pods, h = self.upgraded_ds()
        self.ctl.stop()
        try:
            self.orphan()
            self.request_pull(pods[0], h)
        finally:
            self.ctl.start()
            self.ctl.wait_ready()
            wait_until(self.ctl.leading, 30, "leading again")
        self.wait_image_ready(pods[0], "PullImageFail", timeout=30)
        for p in pods:
            wait_until(lambda: self.cond(self.pod(p["metadata"]["name"]), "PodNeedUpgrade") is None,
                       20, "PodNeedUpgrade removed from %s" % p["metadata"]["name"])

    def test_annotation_removed_request_answered(self):
        pods, h = self.upgraded_ds()
        # the admin turns OTA off; a request written after is not ours to serve
        out = self.sim.kubectl("admin", "annotate", "daemonset", "agent", "-n", self.ns,
                               "apps.openyurt.io/update-strategy-")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.request_pull(pods[0], h)
        c = self.wait_image_ready(pods[0], "PullImageFail")
        self.assertIn("is not an OTA DaemonSet", c["message"])
        self.assertIn("DaemonSet %s/agent" % self.ns, c["message"])

    def test_bad_timeout_annotation_said(self):
        pods = self.make_ds(AGENT + "v1", timeout="10m")  # no webhook to refuse it
        h = self.set_image(AGENT + "v2")
        self.wait_need_upgrade(pods, "True", h)
        def ds_events():
            evs = [e for e in self.sim.get("/api/v1/namespaces/%s/events" % self.ns)["items"]
                   if e["involvedObject"].get("kind") == "DaemonSet" and e["reason"] == "BadPrePullTimeout"]
            return evs or None
        evs = wait_until(ds_events, 20, "the BadPrePullTimeout Event")
        self.assertEqual(evs[0]["type"], "Warning")
        self.assertEqual(evs[0]["message"],
                         "annotation %s is 10m, not a whole number of seconds from 30 to 86400: "
                         "pre-pull Jobs get the default deadline of 600 s (--pull-timeout)" % TIMEOUT_ANN)
        warn = self.wait_line("DaemonSet needs attention", daemonset="%s/agent" % self.ns)
        self.assertEqual(warn["level"], "warn")
        self.assertIn("10m", warn["problem"])
        ref = "%s/%s" % (self.ns, pods[0]["metadata"]["name"])
        self.request_pull(pods[0], h)
        self.wait_image_ready(pods[0], "PullImageSuccess", timeout=60)
        created = self.wait_line("pre-pull job created", pod=ref)
        self.assertEqual(created["deadline"], "600s")
        self.assertEqual(created["deadline_from"],
                         "--pull-timeout (annotation %s is not valid)" % TIMEOUT_ANN)
        # said once, not once per pass
        time.sleep(1)
        self.assertEqual(len(ds_events()), 1)
        self.assertEqual(len(self.lines("DaemonSet needs attention")), 1)

    def test_good_timeout_annotation_named_in_the_job_line(self):
        pods = self.make_ds(AGENT + "v1", timeout=900)
        h = self.set_image(AGENT + "v3")
        self.wait_need_upgrade(pods, "True", h)
        ref = "%s/%s" % (self.ns, pods[1]["metadata"]["name"])
        self.request_pull(pods[1], h)
        created = self.wait_line("pre-pull job created", pod=ref)
        self.assertEqual((created["deadline"], created["deadline_from"]),
                         ("900s", "annotation " + TIMEOUT_ANN))

    def test_failed_write_logged_readably(self):
        """"API call failed" says the Status's code, reason and message and
        names the pod ns/name, not ~900 characters of escaped JSON."""
        pods = self.make_ds(AGENT + "v1")
        self.sim.faults({"error": {"code": 500, "methods": ["PATCH"], "pathContains": "/status",
                                   "count": 40}})
        try:
            h = self.set_image(AGENT + "v4")
            names = {"%s/%s" % (self.ns, p["metadata"]["name"]) for p in pods}
            line = wait_until(lambda: [l for l in self.lines("API call failed") if l.get("pod") in names],
                              30, "a failed status write's line")[0]
        finally:
            self.sim.clear_faults()
        self.assertEqual(line["level"], "warn")
        self.assertEqual(line["action"], "patch-pod-status")
        self.assertEqual((line["code"], line["reason"]), ("500", "InternalError"))
        self.assertIn("injected by kubesim", line["message"])
        self.assertNotIn("{", line["message"])
        self.assertNotIn("name", line)
        # and the writes go through once the apiserver heals
        self.wait_need_upgrade(pods, "True", h, timeout=60)


class ConfigTrouble(Base):
    """A configuration error says what to fix, once (issue 19 §1): a token
    the apiserver refuses (401) or a CA that does not verify its
    certificate is one error line with a hint, not a "watch interrupted"
    warning per informer per retry; and a program that cannot start says so
    in JSON under --log-format json."""
    NODES = 1

    def broken_controller(self, name, edit, seconds=4.0):
        """A second controller on a kubeconfig edit() made of the good one,
        run for a while: its json lines."""
        with open(self.ctl.kubeconfig) as f:
            text = f.read()
        path = os.path.join(self.sim.dir, name + ".kubeconfig")
        with open(path, "w") as f:
            f.write(edit(text))
        err_path = os.path.join(self.sim.dir, name + ".err")
        args = list(self.ctl.args)
        args[args.index("--kubeconfig") + 1] = path
        args[args.index("--health-probe-bind-address") + 1] = "127.0.0.1:%d" % free_port()
        args[args.index("--metrics-bind-address") + 1] = "127.0.0.1:%d" % free_port()
        args[args.index("--leader-elect-identity") + 1] = name
        args += ["--log-format", "json", "--log-level", "info"]
        with open(err_path, "w") as err:
            proc = subprocess.Popen(args, stdout=err, stderr=subprocess.STDOUT)
            CHILDREN.append(proc)
            time.sleep(seconds)
            proc.send_signal(signal.SIGTERM)
            proc.wait(20)
        return json_lines(err_path)

    def assert_said_once(self, lines, hint):
        said = [l for l in lines if l["msg"] == "cannot use the apiserver"]
        self.assertEqual(len(said), 1, said)
        self.assertEqual(said[0]["level"], "error")
        self.assertIn(hint, said[0]["hint"])
        # the informers' own lines are debug now: not one warning per retry
        self.assertEqual([l for l in lines if l["msg"] == "watch interrupted"], [])
        return said[0]

    def test_refused_token_said_once(self):
        lines = self.broken_controller("bad-token", lambda t: re.sub(r"token: .*", "token: not-a-token", t))
        said = self.assert_said_once(lines, "check the token")
        self.assertEqual((said["code"], said["reason"]), ("401", "Unauthorized"))

    def test_unknown_ca_said_once(self):
        key = os.path.join(self.sim.dir, "other-ca.key")
        crt = os.path.join(self.sim.dir, "other-ca.crt")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                        "-nodes", "-keyout", key, "-out", crt, "-days", "1", "-subj", "/CN=other-ca"],
                       check=True, capture_output=True)
        with open(crt, "rb") as f:
            other = base64.b64encode(f.read()).decode()
        lines = self.broken_controller(
            "bad-ca", lambda t: re.sub(r"certificate-authority-data: .*", "certificate-authority-data: " + other, t))
        said = self.assert_said_once(lines, "check the CA")
        self.assertEqual(said["code"], "0")
        self.assertIn("certificate", said["message"])

    def test_startup_errors_are_json(self):
        for argv in ([CONTROLLER, "--log-format", "json", "--kubeconfig", "/nonexistent/kubeconfig"],
                     [WEBHOOK, "--log-format", "json", "--tls-cert-file", "/nonexistent/tls.crt",
                      "--tls-private-key-file", "/nonexistent/tls.key"]):
            out = subprocess.run(argv, capture_output=True, text=True, timeout=20)
            self.assertEqual(out.returncode, 1, out)
            lines = [json.loads(l) for l in out.stderr.splitlines()]
            self.assertEqual(len(lines), 1, out.stderr)
            self.assertEqual((lines[0]["level"], lines[0]["msg"]), ("error", "cannot start"))
            self.assertIn("/nonexistent/", lines[0]["error"])
            self.assertEqual(lines[0]["program"], os.path.basename(argv[0]))
        # a refused flag value, once --log-format json was read: the same line, exit 2
        for argv, flag in (([CONTROLLER, "--log-format", "json", "--helper-image", ""], "--helper-image"),
                           ([WEBHOOK, "--log-format", "json", "--controller-username", ""],
                            "--controller-username")):
            out = subprocess.run(argv, capture_output=True, text=True, timeout=20)
            self.assertEqual(out.returncode, 2, out)
            lines = [json.loads(l) for l in out.stderr.splitlines()]
            self.assertEqual(len(lines), 1, out.stderr)
            self.assertEqual((lines[0]["level"], lines[0]["msg"]), ("error", "cannot start"))
            self.assertTrue(lines[0]["error"].startswith(flag + " wants "), lines[0])
            self.assertEqual(lines[0]["program"], os.path.basename(argv[0]))
