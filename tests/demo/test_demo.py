"""Tests of `make demo` (demo/run.sh): it tells the whole story and says so,
fails when a step does not do what it says, and leaves nothing behind, also
when it is stopped half-way with SIGTERM or SIGINT (Ctrl-C).

Run: python3 tests/demo/test_demo.py [-v] [DemoTest.test_...]
Each run of the demo is bounded (DEMO_LIMIT seconds, default 240) and uses
--fast (kubesim's clock 120x); everything listens on loopback, on free ports.
"""
import os
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "demo", "run.sh")
BUILD = os.path.abspath(os.path.join(ROOT, os.environ.get("BUILD", "build")))
LIMIT = float(os.environ.get("DEMO_LIMIT", "240"))

# What the narration promises, in order: each must be in the output.
KEY_LINES = [
    r"kubesim ready: https://127\.0\.0\.1:\d+",
    r"caBundle filled in for 4 webhooks",
    r"Warning: ota-prepull: DaemonSet edge/edge-agent .* has been set to \{\"type\":\"OnDelete\"\}",
    r"^   \{\"type\":\"OnDelete\"\}$",
    r"PendingUpgrade",
    r"(?i)downtime",
    r"Successfully pulled image \"registry\.example\.com/edge/agent:2\.0\" in ",
    r"already present on machine",
    r"PullImageFail: pull image job ota-prepull-edge-agent-\S+ failed: ErrImagePull: .*not found",
    r"error: pod edge/edge-agent-\S+ is not on node node-1, or does not exist",
    r"error: node node-1 may not upgrade pod edge/edge-agent-\S+: the pod runs on another node",
    r"can only delete pods with spec\.nodeName set to itself",
    r"^demo: OK$",
]


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie is not running; /proc tells
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(") ")[1][0] != "Z"
    except OSError:
        return False


def default_sigint():
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Demo:
    """demo/run.sh in the background; its output as it comes."""

    def __init__(self, *args, env=None):
        e = dict(os.environ, BUILD=BUILD, DEMO_PAUSE="0")
        e.update(env or {})
        self.out = ""
        # its own process group, as a shell's job: Ctrl-C reaches the group;
        # and SIGINT as a terminal's shell leaves it (a test run started in
        # the background of a script inherits SIGINT ignored, and bash cannot
        # trap a signal ignored on entry)
        self.proc = subprocess.Popen(["bash", SCRIPT, "--fast"] + list(args), stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=e,
                                     start_new_session=True, preexec_fn=default_sigint)

    def read_until(self, pattern, timeout):
        """Reads output until pattern appears (True) or the end / timeout (False)."""
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while not re.search(pattern, self.out, re.M):
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if not select.select([fd], [], [], min(left, 1.0))[0]:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                return False
            self.out += chunk.decode(errors="replace")
        return True

    def finish(self, timeout):
        self.read_until(r"\Z.", timeout)  # reads to the end
        try:
            return self.proc.wait(max(1.0, timeout))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None
        finally:
            self.proc.stdout.close()

    def pids(self):
        return [int(p) for p in re.findall(r"\((?:kubesim|ota-webhook|ota-controller): pid (\d+)\)", self.out)]

    def workdir(self):
        m = re.search(r"work directory (/\S+?) \(", self.out)
        return m.group(1) if m else None


def kill_left(demo):
    """Whatever the test found, no process of the demo outlives it."""
    if demo.proc.poll() is None:
        demo.proc.kill()
        demo.proc.wait()
    for p in demo.pids():
        if alive(p):
            os.kill(p, signal.SIGKILL)


class DemoTest(unittest.TestCase):
    def start(self, *args, env=None):
        demo = Demo(*args, env=env)
        self.addCleanup(kill_left, demo)
        return demo

    def assert_clean(self, demo):
        """Every process the demo started is gone, and its work directory too."""
        pids = demo.pids()
        self.assertTrue(pids, "the demo printed no pid:\n" + demo.out[-3000:])
        left = [p for p in pids if alive(p)]
        self.assertEqual(left, [], "processes left running")
        wd = demo.workdir()
        self.assertIsNotNone(wd, "the demo did not say where it works")
        self.assertFalse(os.path.exists(wd), "work directory %s left behind" % wd)

    def test_the_whole_story(self):
        demo = self.start()
        rc = demo.finish(LIMIT)
        self.assertEqual(rc, 0, "demo exit code %r; output:\n%s" % (rc, demo.out[-6000:]))
        pos = 0
        for pat in KEY_LINES:
            m = re.compile(pat, re.M).search(demo.out, pos)
            self.assertIsNotNone(m, "missing (in order) %r; output:\n%s" % (pat, demo.out[-6000:]))
            pos = m.end()
        self.assertEqual(len(re.findall(r"(?i)downtime", demo.out)) >= 2, True, "two downtimes printed")
        self.assert_clean(demo)

    def stop_midway(self, sig, code, env=None):
        demo = self.start(env=env)
        # once the three processes run and the story has begun
        self.assertTrue(demo.read_until(r"^== 3\. ", 120), "the demo did not reach step 3:\n" + demo.out)
        if sig == signal.SIGINT:
            # Ctrl-C: the terminal signals the whole foreground group. Sent to
            # bash alone while a foreground command runs (a kubectl lookup,
            # fold in say), bash waits for it and, as the command did not die
            # of SIGINT, drops the signal (bash's wait-and-cooperative-exit).
            os.killpg(demo.proc.pid, sig)
        else:
            demo.proc.send_signal(sig)  # SIGTERM, as a supervisor sends it to one PID
        rc = demo.finish(30)
        self.assertEqual(rc, code, "exit code after %s; output:\n%s" % (sig, demo.out[-3000:]))
        self.assertEqual(len(demo.pids()), 3, demo.out)
        self.assert_clean(demo)
        return demo

    def test_sigterm_midway_stops_everything(self):
        # ... on the webhook port the environment names (make demo DEMO_WEBHOOK_PORT=...)
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        demo = self.stop_midway(signal.SIGTERM, 143, env={"DEMO_WEBHOOK_PORT": str(port)})
        self.assertIn("--bind-address 127.0.0.1:%d " % port, demo.out)

    def test_sigint_midway_stops_everything(self):
        self.stop_midway(signal.SIGINT, 130)

    def test_a_step_that_fails_fails_the_demo(self):
        """A controller that never becomes ready: the demo says where it stopped,
        exits 1, and still cleans up."""
        with tempfile.TemporaryDirectory(prefix="ota-demo-test-") as d:
            for name in ("ota-webhook", "kubectl-ota"):
                os.symlink(os.path.join(BUILD, name), os.path.join(d, name))
            with open(os.path.join(d, "ota-controller"), "w") as f:
                f.write("#!/bin/sh\necho 'not a controller' >&2\nexit 3\n")
            os.chmod(os.path.join(d, "ota-controller"), 0o755)
            demo = self.start(env={"BUILD": d})
            rc = demo.finish(120)
        self.assertEqual(rc, 1, demo.out[-3000:])
        self.assertIn("demo: FAILED at step 2: ota-controller not ready", demo.out)
        self.assertIn("not a controller", demo.out)  # its log is shown
        self.assertNotIn("demo: OK", demo.out)
        self.assert_clean(demo)


if __name__ == "__main__":
    unittest.main(verbosity=2 if "-v" in sys.argv else 1,
                  argv=[sys.argv[0]] + [a for a in sys.argv[1:] if a != "-v"])
