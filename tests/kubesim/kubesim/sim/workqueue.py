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


class DueQueue:
    """One thread handling queued items one at a time: items queued now (an item queued
    twice before its turn is handled once) and items due at a simulated time. A failed
    handle() is retried with back-off: 1 s doubling to 60 s simulated, never faster than
    0.2 real seconds (a high time scale must not turn this into a busy loop). Worker and
    the light mode's Scheduler (light.py) are the two kinds."""

    def __init__(self, clock, thread_name, log, what):
        self.clock = clock
        self._thread_name = thread_name
        self._log = log
        self._what = what           # names a failed item in the log
        self._cv = threading.Condition()
        self._pending = {}          # insertion-ordered set of items
        self._timers = []           # heap of (due simulated time, seq, item)
        self._seq = itertools.count()
        self._stopped = False
        self._thread = None
        self._failures = {}         # item -> consecutive failed handles

    def handle(self, item):
        raise NotImplementedError

    def start_thread(self):
        self._thread = threading.Thread(target=self._loop, name=self._thread_name, daemon=True)
        self._thread.start()

    def stop(self):
        with self._cv:
            self._stopped = True
            self._cv.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def enqueue(self, item):
        with self._cv:
            self._pending[item] = None
            self._cv.notify()

    def enqueue_at(self, due, item):
        with self._cv:
            heapq.heappush(self._timers, (due, next(self._seq), item))
            self._cv.notify()

    def _next(self):
        with self._cv:
            while not self._stopped:
                now = self.clock.now()
                while self._timers and self._timers[0][0] <= now:
                    self._pending[heapq.heappop(self._timers)[2]] = None
                if self._pending:
                    item = next(iter(self._pending))
                    del self._pending[item]
                    return item
                timeout = None
                if self._timers:
                    timeout = max(0.001, self.clock.real_seconds(self._timers[0][0] - now))
                self._cv.wait(timeout)
            return None

    def _loop(self):
        while True:
            item = self._next()
            if item is None:
                return
            try:
                self.handle(item)
                self._failures.pop(item, None)
            except Exception:
                n = self._failures[item] = self._failures.get(item, 0) + 1
                self._log.error("%s %s failed (%d): %s", self._what, item, n,
                                traceback.format_exc())
                delay = max(min(2.0 ** (n - 1), 60.0), 0.2 * self.clock.scale)
                self.enqueue_at(self.clock.now() + delay, item)


class Worker(DueQueue):
    name = "worker"
    # light mode (light.py): list only what a selector picks, react only to what matters
    light = False

    def __init__(self, api, user):
        super().__init__(api.clock, "kubesim-" + self.name,
                         logging.getLogger("kubesim.sim." + self.name), "sync")
        self.api = api
        self.user = user
        self.log = self._log

    # -- lifecycle ------------------------------------------------------------------------
    def start(self):
        self.api.subscribe(self._on_event)
        self.start_thread()
        self.enqueue(RESYNC)

    # -- queueing ---------------------------------------------------------------------------
    def enqueue_after(self, key, sim_seconds):
        self.enqueue_at(self.clock.now() + max(0.0, sim_seconds), key)

    def _on_event(self, event_type, resource, obj):
        if self._stopped:
            return
        try:
            for key in self.keys_for(event_type, resource, obj):
                self.enqueue(key)
        except Exception:  # a bad object must not break the writer
            self.log.error("keys_for failed: %s", traceback.format_exc())

    def handle(self, key):
        self.sync(key)

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

    def list(self, path, query=None, read_only=False):
        """The items of a collection. read_only: the stored objects themselves, not copies
        (Api.list_read_only), for a caller that never changes them or what they hold."""
        if read_only:
            code, obj = self.api.list_read_only(self.user, path, query=query)
        else:
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
