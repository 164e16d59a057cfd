"""In-memory object storage with one global resourceVersion, like etcd under
the apiserver.

Objects live in a dict keyed by (resource plural, namespace, name). Every
committed write takes the next resourceVersion, is appended to a bounded
history (what watches replay from; a watch from a resourceVersion older than
the history gets 410 Gone) and is pushed to the open watchers and to the
in-process subscribers, in commit order. The store knows nothing about
validation or admission: api.py does that and calls `commit` with a
resourceVersion precondition (optimistic concurrency, as GuaranteedUpdate
does).
"""
import collections
import copy
import threading

from . import errors


class Watcher:
    """One open watch: a queue of history entries fed by the store."""

    MAX_BACKLOG = 20000

    def __init__(self, store, resource, namespace):
        self.store = store
        self.resource = resource
        self.namespace = namespace
        self.cond = threading.Condition()
        self.queue = collections.deque()
        self.closed = False

    def push(self, entry):
        with self.cond:
            if self.closed:
                return
            if len(self.queue) >= self.MAX_BACKLOG:
                self.closed = True    # a client that does not read gets cut off
            else:
                self.queue.append(entry)
            self.cond.notify_all()

    def next(self, timeout):
        """The next entry, or None on timeout; raises EOFError once closed and drained."""
        with self.cond:
            if not self.queue and not self.closed:
                self.cond.wait(timeout)
            if self.queue:
                return self.queue.popleft()
            if self.closed:
                raise EOFError()
            return None

    def close(self):
        with self.cond:
            self.closed = True
            self.cond.notify_all()
        self.store.unwatch(self)


class Store:
    def __init__(self, history=5000):
        self.lock = threading.RLock()
        self.rv = 1
        self.objects = {}
        self.by_resource = collections.defaultdict(dict)   # resource -> {(ns, name): obj}
        self.history = collections.deque(maxlen=history)
        self.compacted = 0          # highest resourceVersion no longer in history
        self.watchers = set()
        self.subscribers = []

    # ---- reads
    def get(self, resource, ns, name):
        with self.lock:
            o = self.by_resource[resource].get((ns or "", name))
            return copy.deepcopy(o) if o is not None else None

    def list(self, resource, ns=None):
        """(deep copies of the objects sorted by namespace/name, current resourceVersion)."""
        with self.lock:
            items = [copy.deepcopy(o) for (n, _), o in sorted(self.by_resource[resource].items())
                     if ns is None or n == ns]
            return items, self.rv

    def current_rv(self):
        with self.lock:
            return self.rv

    # ---- writes
    def commit(self, resource, ns, name, new, expect_rv=None, must_not_exist=False):
        """Writes `new` (None = delete). expect_rv: the stored object's resourceVersion
        must still be this (string) or the write fails with Conflict (409).
        Returns the stored copy (for a delete: the deleted object)."""
        key = (ns or "", name)
        with self.lock:
            cur = self.by_resource[resource].get(key)
            if must_not_exist and cur is not None:
                raise errors.already_exists(_group_of(resource), resource, name)
            if not must_not_exist and cur is None:
                raise errors.not_found(_group_of(resource), resource, name)
            if expect_rv is not None and cur is not None and cur["metadata"].get("resourceVersion") != expect_rv:
                raise errors.conflict(_group_of(resource), resource, name,
                                      "the object has been modified; please apply your changes "
                                      "to the latest version and try again")
            self.rv += 1
            rv = str(self.rv)
            if new is None:
                old = cur
                del self.by_resource[resource][key]
                gone = copy.deepcopy(old)
                gone["metadata"]["resourceVersion"] = rv
                entry = (self.rv, resource, "DELETED", gone, old)
                result = gone
            else:
                stored = copy.deepcopy(new)
                stored["metadata"]["resourceVersion"] = rv
                self.by_resource[resource][key] = stored
                entry = (self.rv, resource, "ADDED" if cur is None else "MODIFIED", stored, cur)
                result = stored
            self._publish(entry)
            return copy.deepcopy(result)

    def _publish(self, entry):
        if len(self.history) == self.history.maxlen:
            self.compacted = self.history[0][0]
        self.history.append(entry)
        for w in list(self.watchers):
            if w.resource == entry[1]:
                w.push(entry)
        for cb in list(self.subscribers):
            try:
                cb(entry[2], entry[1], copy.deepcopy(entry[3]))
            except Exception:   # a subscriber's bug must not break the writer
                import traceback
                traceback.print_exc()

    # ---- watch
    def watch(self, resource, ns, since_rv):
        """Opens a watcher. since_rv None: start with synthetic ADDED events for
        everything that exists now. Otherwise replay history after since_rv
        (410 Gone if it was compacted away)."""
        with self.lock:
            w = Watcher(self, resource, ns)
            if since_rv is None:
                for (n, _), o in sorted(self.by_resource[resource].items()):
                    if ns is None or n == ns:
                        w.queue.append((int(o["metadata"]["resourceVersion"]), resource, "ADDED", o, None))
            else:
                if since_rv < self.compacted:
                    raise errors.gone("too old resource version: %d (%d)" % (since_rv, self.compacted + 1))
                for e in self.history:
                    if e[0] > since_rv and e[1] == resource:
                        w.queue.append(e)
            w.initial_count = len(w.queue)
            self.watchers.add(w)
            return w

    def rv_if_drained(self, w):
        """The current resourceVersion if the watcher has nothing queued (safe for a BOOKMARK), else None."""
        with self.lock:
            with w.cond:
                return None if w.queue else self.rv

    def unwatch(self, w):
        with self.lock:
            self.watchers.discard(w)

    def drop_watches(self):
        with self.lock:
            ws = list(self.watchers)
        for w in ws:
            w.close()
        return len(ws)

    def compact(self):
        """Forget all history: any watch resuming from an older resourceVersion gets 410."""
        with self.lock:
            self.compacted = self.rv
            self.history.clear()

    def subscribe(self, cb):
        with self.lock:
            self.subscribers.append(cb)


def _group_of(resource):
    from . import discovery
    r = discovery.BY_PLURAL.get(resource)
    return r.group if r else ""
