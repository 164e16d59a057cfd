#!/usr/bin/env python3
"""kubesim as a child process: the one launcher of tests/kubesim/run for
every suite (tests/e2e, tests/manifests, tests/kubesim/tests, bench/) and,
from the command line, for shell scripts.

    sim = Kubesim(state_dir, ["--nodes", "3"], registry={...})
    sim.url, sim.port          https://127.0.0.1:<free port>
    sim.ca, sim.ctx            the simulator's CA, an SSLContext trusting it
    sim.tokens["node-1"]       a bearer token per identity (admin, controller,
                               node-<i>, user, ...); sim.identities: the whole
                               tokens.json (token, user, groups)
    sim.kubeconfig("node-1")   that identity's kubeconfig in the state dir;
                               with server and path, a copy pointed elsewhere
    sim.connect(timeout)       an http.client.HTTPSConnection to it
    sim.stop()                 SIGTERM, SIGKILL after a grace: the exit status

kubesim enforces authorization as kube-apiserver does (`--authorization-mode
Node,RBAC`, the default: RBAC with the bootstrap roles, the Node authorizer,
NodeRestriction): admin (system:masters) may do everything, the controller
nothing until RBAC grants it, node-<i> what the Node authorizer allows, user
(jane) only discovery and self-reviews. Every suite runs with that default;
`--authorization-mode AlwaysAllow` in args turns it off, for kubesim's own unit
tests only. tests/kubesim/README.md has the tables.

kubesim binds a free loopback port (--port 0) and says so on its first line
of stdout ("kubesim ready: https://127.0.0.1:PORT ..."), which the
constructor waits for.  Only the process this module started is signalled,
by its PID; one still running when the interpreter exits is killed then.

From a shell (tests/kubesim/tests/test_kubectl_session.sh):

    python3 tests/lib/kubesim_launch.py --state-dir DIR [kubesim flags] &

starts kubesim, prints its ready line once it is ready, and stays in the
foreground until SIGTERM or SIGINT, which it passes on (SIGKILL after 4 s);
it exits with kubesim's status (2 when kubesim did not start).

Python 3 standard library only.
"""
import atexit
import http.client
import json
import os
import select
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUN = os.path.join(ROOT, "tests", "kubesim", "run")

_STARTED = []  # every kubesim this process started, killed at exit if still running


@atexit.register
def _kill_left_over():
    for p in _STARTED:
        if p.poll() is None:
            p.kill()


class KubesimError(RuntimeError):
    """kubesim did not start."""


class Kubesim:
    """tests/kubesim/run --port 0 --state-dir STATE_DIR ARGS.

    state_dir  where kubesim writes its CA, kubeconfigs and tokens.json; None
               for a temporary directory, removed by stop()
    args       more kubesim flags (--nodes, --no-sim, --time-scale, ...)
    registry   a registry config (a dict, kubesim/sim/README.md), written to
               STATE_DIR/registry.json and passed as --registry-config
    log        kubesim's stderr (default STATE_DIR/kubesim.err)
    wait       seconds to wait for the ready line
    """

    def __init__(self, state_dir=None, args=(), registry=None, log=None, wait=60):
        self.own_state = state_dir is None
        self.state = tempfile.mkdtemp(prefix="kubesim-state-") if self.own_state else state_dir
        os.makedirs(self.state, exist_ok=True)
        cmd = [sys.executable, RUN, "--port", "0", "--state-dir", self.state]
        if registry is not None:
            path = os.path.join(self.state, "registry.json")
            with open(path, "w") as f:
                json.dump(registry, f)
            cmd += ["--registry-config", path]
        self.log = log or os.path.join(self.state, "kubesim.err")
        self.err = open(self.log, "w")
        self.proc = subprocess.Popen(cmd + list(args), stdout=subprocess.PIPE, stderr=self.err, text=True)
        _STARTED.append(self.proc)
        self.ready_line = self._wait_ready(wait)
        self.url = self.ready_line.split()[2]
        self.port = int(self.url.rsplit(":", 1)[1])
        self.http_url = None  # with --http-port: the plain-HTTP address
        for word in self.ready_line.split():
            if word.startswith("http="):
                self.http_url = word[len("http="):]
        with open(os.path.join(self.state, "tokens.json")) as f:
            self.identities = json.load(f)
        self.tokens = {who: v["token"] for who, v in self.identities.items()}
        self.ca = os.path.join(self.state, "ca.crt")
        self.cert = os.path.join(self.state, "apiserver.crt")  # its serving certificate and key
        self.key = os.path.join(self.state, "apiserver.key")
        self.ctx = ssl.create_default_context(cafile=self.ca)

    def _wait_ready(self, wait):
        deadline = time.monotonic() + wait
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or self.proc.poll() is not None:
                break
            if select.select([self.proc.stdout], [], [], min(left, 0.5))[0]:
                line = self.proc.stdout.readline()
                if line.startswith("kubesim ready: https://"):
                    return line.strip()
                if not line:  # stdout closed: it is exiting
                    self.proc.wait(5)
                    break
        why = "exited with %s" % self.proc.returncode if self.proc.poll() is not None \
            else "not ready within %gs" % wait
        tail = self.log_tail()  # before stop() removes a temporary state dir
        self.stop(grace=5)
        raise KubesimError("kubesim did not start (%s; its stderr: %s): %s" % (why, self.log, tail))

    def log_tail(self, n=2000):
        """The end of kubesim's stderr."""
        try:
            with open(self.log, errors="replace") as f:
                return f.read()[-n:]
        except OSError:
            return "(no log at %s)" % self.log

    def kubeconfig(self, who="admin", server=None, path=None):
        """who's kubeconfig in the state dir; with server and path, a copy of it
        pointed at server (a proxy in front of kubesim), written to path."""
        own = os.path.join(self.state, who + ".kubeconfig")
        if server is None:
            return own
        with open(own) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text.replace(self.url, server))
        return path

    def connect(self, timeout=10):
        return http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx, timeout=timeout)

    def stop(self, grace=15):
        """SIGTERM, SIGKILL after grace seconds; kubesim's exit status (a
        negative signal number when killed).  Safe to call twice."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc.stdout.close()
        self.err.close()
        if self.own_state:
            shutil.rmtree(self.state, ignore_errors=True)
        return self.proc.returncode


def main(argv):
    """--state-dir DIR [kubesim flags]: serve until SIGTERM or SIGINT."""
    if len(argv) < 2 or argv[0] != "--state-dir":
        sys.stderr.write("usage: kubesim_launch.py --state-dir DIR [kubesim flags]\n")
        return 2
    stopping, started = [], []

    def on_signal(signum, _frame):
        stopping.append(signum)
        if not started:  # still waiting for it: exit now (atexit kills it)
            raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        sim = Kubesim(argv[1], argv[2:], log=os.path.join(argv[1], "kubesim.err"))
    except KubesimError as e:
        sys.stderr.write("%s\n" % e)
        return 2
    started.append(sim)
    print(sim.ready_line, flush=True)
    while not stopping and sim.proc.poll() is None:
        time.sleep(0.1)
    rc = sim.stop(grace=4)
    return rc if rc >= 0 else 128 - rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
