"""Light mode (`run --light`): kubelets for a thousand nodes and more.

In the default mode every kubelet is a Worker with two threads (its sync loop and its
image puller) and its own API subscription, so each write is deep-copied and offered to
every kubelet: at 1 000 nodes that is 2 000 threads and 1 000 copies per write, and the
simulator, not the system under test, is the bottleneck.

Light mode keeps the kubelet's logic (kubelet.py: the pod lifecycle, pulls with their
policies, credentials and back-offs, container status, image GC) and changes how it runs:

- one Scheduler thread for all kubelets: a queue of (kubelet, key) and one timer heap in
  simulated time (container exits, back-offs, pull ends, resyncs);
- one API subscription that routes pod events to the kubelet of `spec.nodeName`;
- image pulls without a puller thread: a pull's end is a timer (LightImageStore keeps
  the node's one-pull-at-a-time order, joining and durations);
- no kubelet Events (Pulling, Pulled, Created, Started, ...): each would be another
  write per step; the kubelets only pull and report status.

The DaemonSet and Job controllers and the garbage collector are the default ones.
"""

import logging

from .imagestore import ImageStore
from .kubelet import IMAGE_GC_KEY, IMAGE_GC_PERIOD, NODE_KEY, Kubelet
from .registry import ImageRef
from .workqueue import RESYNC, DueQueue, meta

log = logging.getLogger("kubesim.sim.light")


class Scheduler(DueQueue):
    """One thread running every light kubelet: keys queued per (kubelet, key), handled once
    however often they were queued before their turn, and callbacks due at a simulated
    time. A failed sync is retried with the Worker's back-off."""

    def __init__(self, clock):
        super().__init__(clock, "kubesim-light-kubelets", log, "light kubelet")

    def start(self):
        self.start_thread()

    def handle(self, item):
        if callable(item):
            item()
        else:
            item[0].sync(item[1])


class _Call:
    """A hashable callable (one pending entry however often it is queued)."""

    def __init__(self, fn, *args):
        self.fn, self.args = fn, args

    def __call__(self):
        self.fn(*self.args)

    def __eq__(self, other):
        return isinstance(other, _Call) and self.fn == other.fn and self.args == other.args

    def __hash__(self):
        return hash((self.fn, self.args))


class LightImageStore(ImageStore):
    """The node's image store with pulls timed by the Scheduler instead of a thread."""

    def __init__(self, node, registry, clock, scheduler, on_change=None):
        super().__init__(node, registry, clock, on_change)
        self._thread = None
        self._scheduler = scheduler
        self._busy = None

    def start(self):
        pass

    def stop(self):
        pass

    def pull(self, ref, credentials, callback):
        p = super().pull(ref, credentials, callback)
        self._scheduler.enqueue(_Call(self._start_next))
        return p

    def _start_next(self):
        with self._lock:
            if self._busy is not None or not self._queue:
                return
            p = self._busy = self._queue.popleft()
            p.started_at = self.clock.now()
            end = p.started_at + self._duration(p)
        self._scheduler.enqueue_at(end, _Call(self._finish, p))

    def _finish(self, p):
        with self._lock:
            if p.image is not None:
                self.add(p.image)
                self._inflight.pop(p.ref.name, None)
            p.finished_at = self.clock.now()
            p.done = True
            callbacks = list(p.callbacks)
            self._busy = None
        for cb in callbacks:
            cb(p)
        if p.image is not None:
            self.on_change()
        self._start_next()


class _NoEvents:
    def record(self, *args, **kwargs):
        pass


class LightKubelet(Kubelet):
    def __init__(self, api, node, index, registry, scheduler):
        self.scheduler = scheduler
        super().__init__(api, node, index, registry)
        self.store = LightImageStore(node, registry, self.clock, scheduler,
                                     on_change=lambda: self.enqueue(NODE_KEY))
        for ref in registry.node_config(node).get("images", registry.preloaded):
            img = registry.lookup(ImageRef(ref))
            if img:
                self.store.add(img)
        self.events = _NoEvents()

    def start(self):
        self.register()
        self.enqueue(RESYNC)
        self.enqueue_after(IMAGE_GC_KEY, IMAGE_GC_PERIOD)

    def stop(self):
        pass

    def enqueue(self, key):
        self.scheduler.enqueue((self, key))

    def enqueue_after(self, key, sim_seconds):
        self.scheduler.enqueue_at(self.clock.now() + max(0.0, sim_seconds), (self, key))


class LightKubelets:
    """The light kubelets of a cluster, their Scheduler and their one subscription."""

    def __init__(self, api, registry, nodes):
        self.api = api
        self.scheduler = Scheduler(api.clock)
        self.kubelets = {n: LightKubelet(api, n, i, registry, self.scheduler)
                         for i, n in enumerate(nodes)}
        self._stopped = False

    def _route(self, event_type, resource, obj):
        if self._stopped or resource != "pods":
            return
        k = self.kubelets.get((obj.get("spec") or {}).get("nodeName"))
        if k is not None:
            k.enqueue((meta(obj).get("namespace"), meta(obj).get("name")))

    def start(self):
        for k in self.kubelets.values():
            k.register()
        self.api.subscribe(self._route, copy=False)     # _route only reads
        self.scheduler.start()
        for k in self.kubelets.values():
            k.enqueue(RESYNC)
            k.enqueue_after(IMAGE_GC_KEY, IMAGE_GC_PERIOD)
        return self

    def stop(self):
        self._stopped = True
        self.scheduler.stop()
