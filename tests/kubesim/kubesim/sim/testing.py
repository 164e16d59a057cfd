"""Helpers for tests of the simulated cluster: an in-process API with the cluster running
on a scaled clock, polling with a deadline, and short-hands for admin requests."""

import json
import os
import tempfile
import time

from kubesim.api import Api, SYSTEM_ADMIN
from kubesim.clock import Clock

from . import start


class SimCluster:
    """An Api plus a running simulated cluster; use as a context manager."""

    def __init__(self, nodes=("node-1",), scale=100.0, config=None, light=False,
                 feature_gates=None):
        self.clock = Clock(scale)
        self.api = Api(self.clock, feature_gates=feature_gates)
        self._tmp = None
        path = None
        if config is not None:
            self._tmp = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
            json.dump(config, self._tmp)
            self._tmp.close()
            path = self._tmp.name
        self.cluster = start(self.api, {"nodes": list(nodes), "time_scale": scale,
                                        "registry_config": path, "state_dir": None,
                                        "light": light})

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self.cluster.stop()
        if self._tmp:
            os.unlink(self._tmp.name)

    def call(self, method, path, body=None, query=None, content_type="application/json",
             user=SYSTEM_ADMIN):
        return self.api.call(user, method, path, body=body, query=query,
                             content_type=content_type)

    def get(self, path):
        code, obj = self.call("GET", path)
        return obj if code == 200 else None

    def items(self, path, **query):
        code, obj = self.call("GET", path, query=query or None)
        assert code == 200, (code, obj)
        return obj["items"]

    def create(self, path, body):
        code, obj = self.call("POST", path, body)
        assert code == 201, (code, obj)
        return obj

    def pod(self, name, ns="default"):
        return self.get("/api/v1/namespaces/%s/pods/%s" % (ns, name))

    def record_states(self, name, cname=None, init=False):
        """A list that fills with every distinct container state of pod `name` as written
        (so short-lived states are not missed by polling)."""
        seen = []

        def on_event(event_type, resource, obj):
            if resource == "pods" and obj["metadata"]["name"] == name:
                state = container_state(obj, cname, init)
                if state != (None, None) and (not seen or seen[-1] != state):
                    seen.append(state)
        self.api.subscribe(on_event)
        return seen

    def events(self, name, ns="default"):
        return [(e["reason"], e["message"]) for e in self.items(
            "/api/v1/namespaces/%s/events" % ns)
            if e["involvedObject"].get("name") == name]


def wait_for(fn, timeout=10.0, what="condition", interval=0.01):
    """Poll fn() until it returns something truthy; fail after timeout real seconds."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError("timed out after %.1fs waiting for %s (last: %r)" % (timeout, what, last))


def container_state(pod, name=None, init=False):
    """(state kind, reason) of a container in a pod's status, e.g. ("waiting", "ErrImagePull")."""
    key = "initContainerStatuses" if init else "containerStatuses"
    for cs in ((pod or {}).get("status") or {}).get(key) or []:
        if name is None or cs["name"] == name:
            kind, detail = next(iter(cs["state"].items()))
            return kind, detail.get("reason")
    return None, None


def condition(obj, ctype):
    for c in ((obj or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return c
    return None
