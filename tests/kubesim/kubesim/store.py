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
import time

from . import errors


# kube-apiserver's words for a continue token older than the compaction point
CONTINUE_EXPIRED = ("The provided continue parameter is too old to display a consistent list result. "
                    "You can start a new list without the continue parameter, or use the continue "
                    "token in this response to retrieve the remainder of the results. Continuing with "
                    "the provided token results in an inconsistent list - objects that were created, "
                    "modified, or deleted between the time the first chunk was returned and now may "
                    "show up in the list.")


class Watcher:
    """One open watch: a queue of history entries fed by the store."""

    MAX_BACKLOG = 20000

    def __init__(self, store, resource, namespace):
        self.store = store
        self.resource = resource
        self.namespace = namespace
        self.cond = threading.Condition()
        self.queue = collections.deque()
        self.stamps = collections.deque()   # when each queued entry was queued
        self.queued_at = None
        self.closed = False

    def push(self, entry):
        with self.cond:
            if self.closed:
                return
            if len(self.queue) >= self.MAX_BACKLOG:
                self.closed = True    # a client that does not read gets cut off
            else:
                self.queue.append(entry)
                self.stamps.append(time.monotonic())
            self.cond.notify_all()

    def next(self, timeout):
        """The next entry, or None on timeout; raises EOFError once closed and drained.
        self.queued_at is then the time.monotonic() at which that entry was queued."""
        with self.cond:
            if not self.queue and not self.closed:
                self.cond.wait(timeout)
            if self.queue:
                self.queued_at = self.stamps.popleft() if self.stamps else time.monotonic()
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
    # Stored objects are never changed in place (a write stores a new copy), so readers
    # take references under the lock and copy them outside it: a long list does not
    # hold up every writer and reader while it copies.
    def get(self, resource, ns, name):
        with self.lock:
            o = self.by_resource[resource].get((ns or "", name))
        return copy.deepcopy(o) if o is not None else None

    def list(self, resource, ns=None):
        """(deep copies of the objects sorted by namespace/name, current resourceVersion)."""
        items, rv, _more, _remaining = self.list_page(resource, ns)
        return items, rv

    def list_page(self, resource, ns=None, pred=None, limit=0, after=None, at_rv=None, copy_items=True):
        """One page of a list, as etcd serves the apiserver's paged lists.

        Objects of `resource` (in namespace `ns` when given) sorted by (namespace, name),
        only those after the key `after` (a (namespace, name) tuple), and of those only the
        ones `pred(obj)` accepts (the predicate sees the stored object: nothing is copied
        before it matches). At most `limit` (0 = all) are returned, as deep copies
        (copy_items False: the stored objects themselves, for a caller that only reads them).
        at_rv None reads the current state; a resourceVersion reads the state as it was
        then (a continued list stays consistent with its first page), rebuilt from the
        history: 410 Expired when that version is older than the compaction point.

        Returns (items, resourceVersion read at, last key returned when more objects
        follow it (else None), how many objects follow the last one returned)."""
        with self.lock:
            if at_rv is None or at_rv >= self.rv:
                objs = self.by_resource[resource]
                read_rv = self.rv
            else:
                objs = self._snapshot(resource, at_rv)
                read_rv = at_rv
            keys = sorted(k for k in objs if (ns is None or k[0] == ns) and (after is None or k > after))
            picked = []
            last = -1
            for i, k in enumerate(keys):
                if limit and len(picked) >= limit:
                    break
                last = i
                o = objs[k]
                if pred is None or pred(o):
                    picked.append(o)
        remaining = len(keys) - (last + 1)
        more = keys[last] if remaining > 0 and last >= 0 else None
        if copy_items:
            picked = [copy.deepcopy(o) for o in picked]
        return picked, read_rv, more, remaining

    def _snapshot(self, resource, at_rv):
        """{key: obj} of resource as it was at resourceVersion at_rv (under the lock)."""
        if at_rv < self.compacted:
            raise errors.gone(CONTINUE_EXPIRED)
        objs = dict(self.by_resource[resource])
        for rv, res, etype, obj, old in reversed(self.history):
            if rv <= at_rv:
                break
            if res != resource:
                continue
            md = obj["metadata"]
            key = (md.get("namespace") or "", md["name"])
            if etype == "ADDED":
                objs.pop(key, None)
            else:               # MODIFIED or DELETED: what it was before
                objs[key] = old
        return objs

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
                raise errors.already_exists(_group_of(resource), _plural_of(resource), name)
            if not must_not_exist and cur is None:
                raise errors.not_found(_group_of(resource), _plural_of(resource), name)
            if expect_rv is not None and cur is not None and cur["metadata"].get("resourceVersion") != expect_rv:
                raise errors.conflict(_group_of(resource), _plural_of(resource), name,
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
        for cb, wants_copy in list(self.subscribers):
            try:
                cb(entry[2], entry[1], copy.deepcopy(entry[3]) if wants_copy else entry[3])
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
            w.stamps.extend([time.monotonic()] * len(w.queue))
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

    def subscribe(self, cb, copy=True):
        """cb(type, resource, obj) after each write, in commit order. copy=False hands
        over the stored object itself: for callbacks that only read it, at once."""
        with self.lock:
            self.subscribers.append((cb, copy))


def _plural_of(resource):
    return resource.split(".", 1)[0]


def _group_of(resource):
    """The API group of a store key: a custom resource's key is "<plural>.<group>"."""
    from . import discovery
    if "." in resource:
        return resource.split(".", 1)[1]
    r = discovery.BY_PLURAL.get(resource)
    return r.group if r else ""
