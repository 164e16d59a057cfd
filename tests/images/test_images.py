#!/usr/bin/env python3
"""The two container images, run as the manifests run them (`make
images-test`, after images/build.sh podman has built them).

Every container runs through images/podman.sh (the project's podman
configuration and storage under build/podman/) as uid/gid 65532, with a
read-only root filesystem and no tmpfs added to it (--read-only-tmpfs=false:
Kubernetes' readOnlyRootFilesystem adds none), all capabilities dropped and
no-new-privileges, as manifests/base's securityContext asks.  Network:
none, except the two servers, which share the host's network namespace so
that they and their peers talk over loopback only.

What is checked, per image:
  config     USER 65532:65532 and the program as the entrypoint;
  --version  prints "PROGRAM VERSION (commit COMMIT)" with VERSION's
             version and this tree's commit (git, or $OTA_COMMIT as the
             Makefile passes it);
  --help     exits 0 and prints tests/fixtures/command_line/PROGRAM.help,
             byte for byte;
  libraries  ldd resolves every library the binary links, the expected
             ones among them;
  contents   no compiler, binutils, make, header or -dev package: the
             runtime stage holds the binary and its libraries only;
and the servers:
  ota-webhook     with a throw-away certificate (certs/gen-certs.sh),
                  mounted read-only, serves TLS on 127.0.0.1, /readyz
                  turns 200, a review of a DaemonSet with an unknown
                  strategy is denied and an OTA one with OnDelete admitted,
                  /metrics' build_info names the version and commit;
                  SIGTERM: exit 0;
  ota-controller  reaches kubesim (tests/lib/kubesim_launch.py) on
                  127.0.0.1 and /readyz turns 200; SIGTERM: exit 0.

Each container is started by this script, known by the ID podman gave it,
stopped and removed by that ID; every wait is bounded.  Prints "N passed,
N failed" as its last line; exits 1 on any failure.

Python 3 standard library only.
"""
import http.client
import json
import re
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
import kubesim_launch  # noqa: E402
import ota_rbac  # noqa: E402

PODMAN = os.path.join(ROOT, "images", "podman.sh")
PREFIX = os.environ.get("IMAGE_PREFIX", "ota-prepull/")
with open(os.path.join(ROOT, "VERSION")) as _f:
    VERSION = _f.read().strip()
TAG = os.environ.get("IMAGE_TAG") or VERSION
UID = "65532"
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
# SNI the kube-apiserver sends for the webhook's Service (certs/gen-certs.sh).
SNI = "ota-webhook.ota-system.svc"


def commit():
    """The commit the images should report: the Makefile's, else git's."""
    c = os.environ.get("OTA_COMMIT")
    if c:
        return c
    return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"],
                          capture_output=True, text=True, check=True, timeout=30).stdout.strip()


def image(program):
    return "%s%s:%s" % (PREFIX, program, TAG)


# As the manifests' securityContext runs the containers.
LOCKED_DOWN = ["--user", "%s:%s" % (UID, UID), "--read-only", "--read-only-tmpfs=false",
               "--cap-drop", "all", "--security-opt", "no-new-privileges"]


def podman(*args, timeout=60, check=False):
    return subprocess.run([PODMAN] + list(args), capture_output=True, text=True,
                          timeout=timeout, check=check)


def run_once(program, *args, entrypoint=None, timeout=60):
    """podman run --rm, locked down, no network: (exit status, stdout, stderr)."""
    cmd = ["run", "--rm", "--network", "none"] + LOCKED_DOWN
    if entrypoint:
        cmd += ["--entrypoint", entrypoint]
    p = podman(*(cmd + [image(program)] + list(args)), timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(port, path, timeout=2):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("GET", path)
        r = c.getresponse()
        return r.status, r.read().decode(errors="replace")
    finally:
        c.close()


def wait_until(what, fn, timeout):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            if fn():
                return
        except OSError as e:
            last = e
        time.sleep(0.2)
    raise AssertionError("%s: not within %gs (last error: %s)" % (what, timeout, last))


class Container:
    """podman run -d on the host's network, locked down; stop() sends
    SIGTERM and returns the exit status; remove() removes it by its ID."""

    def __init__(self, program, volumes, args):
        cmd = ["run", "-d", "--network", "host"] + LOCKED_DOWN
        for host, inside in volumes:
            cmd += ["-v", "%s:%s:ro" % (host, inside)]
        p = podman(*(cmd + [image(program)] + list(args)), check=True)
        self.id = p.stdout.strip().splitlines()[-1]

    def running(self):
        p = podman("inspect", "--format", "{{.State.Running}}", self.id)
        return p.stdout.strip() == "true"

    def logs(self):
        p = podman("logs", self.id)
        return (p.stdout + p.stderr)[-4000:]

    def stop(self, grace=20):
        podman("kill", "--signal", "TERM", self.id, check=True)
        p = podman("wait", self.id, timeout=grace + 10)
        return int(p.stdout.strip())

    def remove(self):
        podman("rm", "--force", "--time", "2", self.id, timeout=30)


class TestImage:
    """The checks every image passes; PROGRAM and LIBRARIES per subclass."""
    PROGRAM = None
    LIBRARIES = ()

    def test_image_config(self):
        # the image's own user, not only the one these runs ask for: a pod
        # without runAsUser gets this one
        p = podman("image", "inspect", "--format", "{{.Config.User}} {{json .Config.Entrypoint}}",
                   image(self.PROGRAM), check=True)
        self.assertEqual(p.stdout.strip(), '%s:%s ["/usr/local/bin/%s"]' % (UID, UID, self.PROGRAM))

    def test_version(self):
        rc, out, err = run_once(self.PROGRAM, "--version")
        self.assertEqual(rc, 0, err)
        self.assertEqual(out, "%s %s (commit %s)\n" % (self.PROGRAM, VERSION, commit()))

    def test_help(self):
        rc, out, err = run_once(self.PROGRAM, "--help")
        self.assertEqual(rc, 0, err)
        with open(os.path.join(FIXTURES, "command_line", self.PROGRAM + ".help")) as f:
            self.assertEqual(out, f.read())

    def test_libraries_resolve(self):
        rc, out, err = run_once(self.PROGRAM, "/usr/local/bin/" + self.PROGRAM, entrypoint="ldd")
        self.assertEqual(rc, 0, err)
        self.assertNotIn("not found", out)
        for lib in self.LIBRARIES:
            self.assertRegex(out, r"\n\s*%s\S* => /\S+ \(0x" % lib)

    def test_no_build_tools(self):
        rc, out, err = run_once(self.PROGRAM, "-W", "-f", "${Package}\n", entrypoint="dpkg-query")
        self.assertEqual(rc, 0, err)
        pkgs = out.split()
        self.assertIn("libc6", pkgs)  # what was read is the package list
        # (gcc-12-base is not a compiler: libgcc-s1, which every C program
        # links, depends on it)
        bad = [p for p in pkgs if p.endswith("-dev") or p.startswith("binutils")
               or re.fullmatch(r"(gcc|g\+\+|cpp|clang|llvm|tcc)(-[0-9.]+)?|make|libc-dev-bin", p)]
        self.assertEqual(bad, [])
        rc, out, err = run_once(self.PROGRAM, "/usr/include", "/usr/local/include", "-name", "*.h",
                                entrypoint="find")
        self.assertEqual(out, "", "headers in the runtime image")
        rc, out, err = run_once(self.PROGRAM, "-c",
                                "for t in cc gcc cpp as ld make; do command -v $t; done; true",
                                entrypoint="sh")
        self.assertEqual((rc, out), (0, ""), "build tools on PATH")
        print("\n  %s: %d packages" % (image(self.PROGRAM), len(pkgs)), end=" ", file=sys.stderr)


class TestWebhookImage(TestImage, unittest.TestCase):
    PROGRAM = "ota-webhook"
    LIBRARIES = ("libh2o-evloop", "libssl", "libcrypto", "libyajl")

    def review(self, port, ctx, name):
        with open(os.path.join(FIXTURES, name)) as f:
            body = f.read()
        c = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=10)
        c.sock = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10),
                                 server_hostname=SNI)
        try:
            c.request("POST", "/validate?timeout=10s", body, {"Content-Type": "application/json"})
            r = c.getresponse()
            self.assertEqual(r.status, 200)
            out = json.loads(r.read())
        finally:
            c.close()
        self.assertEqual(out["response"]["uid"], json.loads(body)["request"]["uid"])
        return out["response"]

    def test_serves_tls_and_exits_0_on_sigterm(self):
        tmp = tempfile.mkdtemp(prefix="ota-images-")
        ctr = None
        try:
            certs = os.path.join(tmp, "certs")
            subprocess.run([os.path.join(ROOT, "certs", "gen-certs.sh"), certs], check=True,
                           timeout=60)
            # The key is 0600, as a Secret mounted with defaultMode 0400 and
            # fsGroup would make it readable to the pod's uid only.
            for f in ("tls.crt", "tls.key"):
                os.chown(os.path.join(certs, f), int(UID), int(UID))
            port, health, metrics = free_port(), free_port(), free_port()
            ctr = Container(self.PROGRAM, [(certs, "/certs")], [
                "--tls-cert-file", "/certs/tls.crt", "--tls-private-key-file", "/certs/tls.key",
                "--bind-address", "127.0.0.1:%d" % port,
                "--health-probe-bind-address", "127.0.0.1:%d" % health,
                "--metrics-bind-address", "127.0.0.1:%d" % metrics, "--threads", "1"])
            try:
                wait_until("webhook /readyz", lambda: http_get(health, "/readyz")[0] == 200, 30)
            except AssertionError as e:
                raise AssertionError("%s; its log: %s" % (e, ctr.logs()))
            ctx = ssl.create_default_context(cafile=os.path.join(certs, "ca.crt"))
            denied = self.review(port, ctx, "ds-create-invalid-strategy.json")
            self.assertFalse(denied["allowed"])
            self.assertIn("AdvancedRollingUpdate", denied["status"]["message"])
            self.assertTrue(self.review(port, ctx, "ds-update-ota-ondelete.json")["allowed"])
            status, text = http_get(metrics, "/metrics")
            self.assertEqual(status, 200)
            self.assertEqual([l for l in text.splitlines() if l.startswith("ota_prepull_build_info")],
                             ['ota_prepull_build_info{version="%s",commit="%s"} 1'
                              % (VERSION, commit())])
            self.assertEqual(ctr.stop(), 0, ctr.logs())
        finally:
            if ctr is not None:
                ctr.remove()
            shutil.rmtree(tmp, ignore_errors=True)


class TestControllerImage(TestImage, unittest.TestCase):
    PROGRAM = "ota-controller"
    LIBRARIES = ("libcurl", "libyajl", "libyaml")

    def test_reaches_kubesim_ready_and_exits_0_on_sigterm(self):
        sim = kubesim_launch.Kubesim(args=["--nodes", "1"])
        tmp = tempfile.mkdtemp(prefix="ota-images-")
        ctr = None
        try:
            # The controller's own identity with the RBAC manifests/ grants
            # it (kubesim enforces Node,RBAC), as every suite runs it.
            out = subprocess.run(["kubectl", "--kubeconfig", sim.kubeconfig("admin"), "create", "namespace",
                                  ota_rbac.NAMESPACE], capture_output=True, text=True, timeout=60)
            self.assertEqual(out.returncode, 0, out.stderr)
            ota_rbac.apply(sim, ota_rbac.rendered())
            conf = os.path.join(tmp, "conf")
            os.mkdir(conf)
            shutil.copy(sim.kubeconfig("controller"), os.path.join(conf, "kubeconfig"))
            os.chown(os.path.join(conf, "kubeconfig"), int(UID), int(UID))
            health, metrics = free_port(), free_port()
            ctr = Container(self.PROGRAM, [(conf, "/conf")], [
                "--kubeconfig", "/conf/kubeconfig",
                "--health-probe-bind-address", "127.0.0.1:%d" % health,
                "--metrics-bind-address", "127.0.0.1:%d" % metrics,
                "--leader-elect-resource-namespace", "ota-system",
                "--leader-elect-identity", "images-test"])
            try:
                wait_until("controller /readyz", lambda: http_get(health, "/readyz")[0] == 200, 60)
            except AssertionError as e:
                raise AssertionError("%s; its log: %s" % (e, ctr.logs()))
            self.assertTrue(ctr.running())
            self.assertEqual(ctr.stop(), 0, ctr.logs())
        finally:
            if ctr is not None:
                ctr.remove()
            sim.stop()
            shutil.rmtree(tmp, ignore_errors=True)


def main():
    for program in ("ota-webhook", "ota-controller"):
        if podman("image", "exists", image(program)).returncode != 0:
            print("%s is not built: run images/build.sh podman (make images-test does)"
                  % image(program), file=sys.stderr)
            print("0 passed, 1 failed")
            return 1
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    failed = len(result.failures) + len(result.errors)
    print("%d passed, %d failed" % (result.testsRun - failed, failed))
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
