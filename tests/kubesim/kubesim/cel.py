"""CEL for webhook matchConditions, through a long-lived node helper.

kube-apiserver evaluates `matchConditions` with cel-go. Python has no CEL
evaluator in its standard library, so kubesim runs `cel/helper.js` (the npm
package @bufbuild/cel, pinned in cel/package.json, installed by
`make deps` / `npm ci`) as one child process and sends it JSON lines. The
variables are bound as the apiserver binds them: `object`, `oldObject` (null
when absent) and `request` (the AdmissionRequest without the objects);
integers stay CEL ints, floats are tagged so they stay doubles.

An evaluation that cannot happen (node or the package missing, helper
crashed, timeout) is reported as an error for every expression, so the
webhook's failurePolicy decides, as for any CEL error.
"""
import json
import os
import shutil
import subprocess
import threading

HELPER_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "cel")
HELPER = os.path.join(HELPER_DIR, "helper.js")


def _tag_floats(v):
    if isinstance(v, bool) or v is None or isinstance(v, (int, str)):
        return v
    if isinstance(v, float):
        return {"$f": v}
    if isinstance(v, dict):
        return {k: _tag_floats(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_tag_floats(x) for x in v]
    return v


class CelUnavailable(Exception):
    pass


class CelEvaluator:
    TIMEOUT = 5.0

    def __init__(self):
        self.lock = threading.Lock()
        self.proc = None
        self.next_id = 0

    def _start(self):
        node = shutil.which("node")
        if node is None:
            raise CelUnavailable("node is not installed")
        if not os.path.isdir(os.path.join(HELPER_DIR, "node_modules", "@bufbuild", "cel")):
            raise CelUnavailable("@bufbuild/cel is not installed (run `npm ci` in %s)" % HELPER_DIR)
        self.proc = subprocess.Popen([node, HELPER], cwd=HELPER_DIR, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def evaluate(self, exprs, variables):
        """-> list of ("value", v) or ("error", message), one per expression."""
        return self._ask({"exprs": list(exprs), "vars": _tag_floats(variables)}, len(exprs))

    def compile(self, exprs):
        """-> list of ("value", True) or ("error", "compilation failed: ...")."""
        return self._ask({"compile": list(exprs)}, len(exprs))

    def _ask(self, payload, n):
        with self.lock:
            try:
                if self.proc is None or self.proc.poll() is not None:
                    self._start()
                self.next_id += 1
                msg = json.dumps(dict(payload, id=self.next_id))
                self.proc.stdin.write(msg + "\n")
                self.proc.stdin.flush()
                line = self._readline()
                ans = json.loads(line)
                if ans.get("id") != self.next_id:
                    raise CelUnavailable("CEL helper answered out of order")
                return [("error", r["error"]) if "error" in r else ("value", r.get("value"))
                        for r in ans["results"]]
            except (CelUnavailable, OSError, ValueError, KeyError) as e:
                self._kill()
                return [("error", "CEL evaluation unavailable: %s" % e)] * n

    def _readline(self):
        out = []

        def reader():
            out.append(self.proc.stdout.readline())

        t = threading.Thread(target=reader, daemon=True)
        t.start()
        t.join(self.TIMEOUT)
        if not out or not out[0]:
            raise CelUnavailable("CEL helper did not answer")
        return out[0]

    def _kill(self):
        if self.proc is not None:
            try:
                self.proc.kill()
                self.proc.wait(2)
            except OSError:
                pass
            self.proc = None

    def close(self):
        with self.lock:
            if self.proc is not None:
                try:
                    self.proc.stdin.close()
                    self.proc.wait(2)
                except (OSError, subprocess.TimeoutExpired):
                    self._kill()
                self.proc = None
