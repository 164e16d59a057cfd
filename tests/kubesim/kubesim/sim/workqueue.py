"""The loop every simulated controller and kubelet runs on.

A Worker owns one thread and a queue of keys (such as ("default", "web")). API write events,
delivered by Api.subscribe on the writer's thread, are turned into keys by the subclass's
keys_for() and queued; the worker thread pops keys one at a time and calls sync(key), which
reads the current objects through Api.call and makes the writes needed. Timers re-queue a key
after some simulated seconds (deadlines, back-offs, containers that exit). A key queued twice
before it is handled is handled once. The special key RESYNC asks sync() to list everything.
"""

import heapq
import itertools
import logging
import threading
import traceback

RESYNC = ("*resync*",)


class Worker:
    name = "worker"
    # light mode (light.py): list only what a selector picks, react only to what matters
    light = False

    def __init__(self, api, user):
        self.api = api
        self.clock = api.clock
        self.user = user
        self.log = logging.getLogger("kubesim.sim." + self.name)
        self._cv = threading.Condition()
        self._pending = {}          # insertion-ordered set of keys
        self._timers = []           # heap of (due simulated time, seq, key)
        self._seq = itertools.count()
        self._stopped = False
        self._thread = None
        self._failures = {}         # key -> consecutive failed syncs

    # -- lifecycle ------------------------------------------------------------------------
    def start(self):
        self.api.subscribe(self._on_event)
        self._thread = threading.Thread(target=self._loop, name="kubesim-" + self.name,
                                        daemon=True)
        self._thread.start()
        self.enqueue(RESYNC)

    def stop(self):
        with self._cv:
            self._stopped = True
            self._cv.notify_all()
        if self._thread and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    # -- queueing ---------------------------------------------------------------------------
    def enqueue(self, key):
        with self._cv:
            self._pending[key] = None
            self._cv.notify()

    def enqueue_after(self, key, sim_seconds):
        with self._cv:
            heapq.heappush(self._timers, (self.clock.now() + max(0.0, sim_seconds),
                                          next(self._seq), key))
            self._cv.notify()

    def _on_event(self, event_type, resource, obj):
        if self._stopped:
            return
        try:
            for key in self.keys_for(event_type, resource, obj):
                self.enqueue(key)
        except Exception:  # a bad object must not break the writer
            self.log.error("keys_for failed: %s", traceback.format_exc())

    def _next_key(self):
        with self._cv:
            while not self._stopped:
                now = self.clock.now()
                while self._timers and self._timers[0][0] <= now:
                    self._pending[heapq.heappop(self._timers)[2]] = None
                if self._pending:
                    key = next(iter(self._pending))
                    del self._pending[key]
                    return key
                timeout = None
                if self._timers:
                    timeout = max(0.001, self.clock.real_seconds(self._timers[0][0] - now))
                self._cv.wait(timeout)
            return None

    def _loop(self):
        while True:
            key = self._next_key()
            if key is None:
                return
            try:
                self.sync(key)
                self._failures.pop(key, None)
            except Exception:
                # retry with back-off: 1 s doubling to 60 s simulated, never faster than
                # 0.2 real seconds (a high time scale must not turn this into a busy loop)
                n = self._failures[key] = self._failures.get(key, 0) + 1
                self.log.error("sync %s failed (%d): %s", key, n, traceback.format_exc())
                delay = max(min(2.0 ** (n - 1), 60.0), 0.2 * self.clock.scale)
                self.enqueue_after(key, delay)

    # -- for subclasses -----------------------------------------------------------------------
    def keys_for(self, event_type, resource, obj):
        return []

    def sync(self, key):
        raise NotImplementedError

    def call(self, method, path, body=None, query=None, content_type="application/json"):
        return self.api.call(self.user, method, path, body=body, query=query,
                             content_type=content_type)

    def get(self, path, query=None):
        """The object at path, or None when it does not exist (other errors raise)."""
        code, obj = self.call("GET", path, query=query)
        if code == 404:
            return None
        if code != 200:
            raise RuntimeError("GET %s: %s %s" % (path, code, obj))
        return obj

    def list(self, path, query=None):
        code, obj = self.call("GET", path, query=query)
        if code != 200:
            raise RuntimeError("LIST %s: %s %s" % (path, code, obj))
        return obj.get("items") or []


def selector_query(sel):
    """A LabelSelector object as the labelSelector query string it means, or None when
    it has a form this does not write (then the caller lists everything and filters)."""
    if not isinstance(sel, dict):
        return None
    parts = []
    for k, v in sorted((sel.get("matchLabels") or {}).items()):
        parts.append("%s=%s" % (k, v))
    for e in sel.get("matchExpressions") or []:
        op, k, vals = e.get("operator"), e.get("key"), e.get("values") or []
        if op == "In":
            parts.append("%s in (%s)" % (k, ",".join(vals)))
        elif op == "NotIn":
            parts.append("%s notin (%s)" % (k, ",".join(vals)))
        elif op == "Exists":
            parts.append(k)
        elif op == "DoesNotExist":
            parts.append("!" + k)
        else:
            return None
    return ",".join(parts) or None


def meta(obj):
    return obj.get("metadata") or {}


def controller_of(obj):
    """The ownerReference with controller: true, or None."""
    for ref in meta(obj).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def owner_ref(api_version, kind, obj):
    m = meta(obj)
    return {"apiVersion": api_version, "kind": kind, "name": m["name"], "uid": m["uid"],
            "controller": True, "blockOwnerDeletion": True}


def object_path(obj, resource):
    """API path of an object from its apiVersion, namespace and the resource plural."""
    api_version = obj.get("apiVersion", "v1")
    base = "/api/v1" if api_version == "v1" else "/apis/" + api_version
    m = meta(obj)
    if m.get("namespace"):
        base += "/namespaces/" + m["namespace"]
    return "%s/%s/%s" % (base, resource, m["name"])
