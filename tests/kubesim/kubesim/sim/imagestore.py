"""One node's container image store and its image puller.

The store holds the images a node has (by digest, with every name they were pulled under)
and when each was last used. Pulls are queued and run one at a time, as the kubelet does by
default (serializeImagePulls: true); a pull of an image that is already being pulled for
someone else joins it. A pull takes size / node bandwidth simulated seconds plus a short
resolve time; it fails at once (after the resolve time) when the registry refuses it. When a
pull ends, its callbacks run on the puller thread (they must only queue work).

Image garbage collection works as the kubelet's: when the images fill more than the high
threshold of the node's image filesystem, the least recently used images that no container
uses (exited containers of existing pods count as users) and that are older than the
minimum age are removed until usage is below the low threshold. The pause image is pinned.
"""

import collections
import threading

RESOLVE_SECONDS = 0.5
MAX_IMAGES_IN_NODE_STATUS = 50
MAX_NAMES_PER_IMAGE = 5
PINNED = "registry.k8s.io/pause"     # the sandbox image is never collected


class Pull:
    def __init__(self, ref):
        self.ref = ref
        self.image = None        # registry Image when it can be pulled
        self.error = None        # containerd's message when it cannot
        self.queued_at = None
        self.started_at = None
        self.finished_at = None
        self.done = False
        self.callbacks = []


class ImageStore:
    def __init__(self, node, registry, clock, on_change=None):
        self.node = node
        self.registry = registry
        self.clock = clock
        self.on_change = on_change or (lambda: None)
        self._lock = threading.Condition()
        self._images = {}          # digest -> {"names": [...], "size": n, "used": t}
        self._queue = collections.deque()
        self._inflight = {}        # normalised name -> Pull (successful-to-be pulls only)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kubesim-puller-" + node,
                                        daemon=True)

    def start(self):
        self._thread.start()

    def stop(self):
        self._stop.set()
        with self._lock:
            self._lock.notify_all()
        self._thread.join(timeout=5)

    # -- what the node has -----------------------------------------------------------------
    def lookup(self, ref):
        """(digest, entry) of a local image matching ref, or None."""
        with self._lock:
            for digest, entry in self._images.items():
                if ref.digest:
                    if digest == ref.digest and any(n.startswith(ref.repo + "@")
                                                    for n in entry["names"]):
                        return digest, dict(entry)
                elif ref.repo + ":" + ref.tag in entry["names"]:
                    return digest, dict(entry)
        return None

    def add(self, image):
        """Store a registry Image (a finished pull, or an image preloaded on the node)."""
        with self._lock:
            entry = self._images.setdefault(image.digest, {"names": [], "size": image.size,
                                                           "detected": self.clock.now()})
            for name in (image.digest_name, image.tag_name):
                if name not in entry["names"]:
                    entry["names"].append(name)
            for other_digest, other in self._images.items():   # a tag moves to the new image
                if other_digest != image.digest and image.tag_name in other["names"]:
                    other["names"].remove(image.tag_name)
            entry["used"] = self.clock.now()

    def remove(self, digest):
        """Delete a local image (every name of it), as the runtime's RemoveImage does;
        returns its names, or None when the node does not have it."""
        with self._lock:
            entry = self._images.pop(digest, None)
        if entry is None:
            return None
        self.on_change()
        return entry["names"]

    def touch(self, digest):
        with self._lock:
            if digest in self._images:
                self._images[digest]["used"] = self.clock.now()

    def collect_garbage(self, in_use):
        """Remove unused images as the kubelet's image GC does; returns their names."""
        capacity, high, low, min_age = self.registry.image_gc_policy(self.node)
        now = self.clock.now()
        removed = []
        with self._lock:
            usage = sum(e["size"] for e in self._images.values())
            if usage * 100 <= high * capacity:
                return removed
            to_free = usage - low * capacity / 100
            candidates = sorted(
                (e.get("used", 0), digest) for digest, e in self._images.items()
                if digest not in in_use and now - e["detected"] >= min_age
                and not any(n.startswith(PINNED) for n in e["names"]))
            for _, digest in candidates:
                if to_free <= 0:
                    break
                entry = self._images.pop(digest)
                to_free -= entry["size"]
                removed += entry["names"]
        if removed:
            self.on_change()
        return removed

    def node_status_images(self):
        """Node.status.images as the kubelet writes it: biggest first, at most 50."""
        with self._lock:
            entries = sorted(self._images.values(),
                             key=lambda e: (-e["size"], -e.get("used", 0)))
            return [{"names": e["names"][:MAX_NAMES_PER_IMAGE], "sizeBytes": e["size"]}
                    for e in entries[:MAX_IMAGES_IN_NODE_STATUS]]

    # -- pulling -----------------------------------------------------------------------------
    def pull(self, ref, credentials, callback):
        """Queue a pull of ref (an ImageRef) with the given credentials; callback(pull) runs
        when it ends. Returns the Pull."""
        from .registry import PullError
        with self._lock:
            try:
                image = self.registry.resolve(ref, credentials)
            except PullError as e:
                image, error = None, str(e)
            else:
                error = None
                joined = self._inflight.get(ref.name)
                if joined is not None:
                    joined.callbacks.append(callback)
                    return joined
            p = Pull(ref)
            p.image, p.error = image, error
            p.queued_at = self.clock.now()
            p.callbacks.append(callback)
            if image is not None:
                self._inflight[ref.name] = p
            self._queue.append(p)
            self._lock.notify_all()
            return p

    def _duration(self, p):
        if p.image is None or p.image.digest in self._images:
            return RESOLVE_SECONDS
        return RESOLVE_SECONDS + p.image.size / self.registry.bandwidth(self.node)

    def _run(self):
        while not self._stop.is_set():
            with self._lock:
                while not self._queue and not self._stop.is_set():
                    self._lock.wait(1.0)
                if self._stop.is_set():
                    return
                p = self._queue.popleft()
                p.started_at = self.clock.now()
                end = p.started_at + self._duration(p)
            while not self._stop.is_set():   # sleep in simulated time, interruptibly
                left = end - self.clock.now()
                if left <= 0:
                    break
                self._stop.wait(min(self.clock.real_seconds(left), 0.5))
            if self._stop.is_set():
                return
            with self._lock:
                if p.image is not None:
                    self.add(p.image)
                    self._inflight.pop(p.ref.name, None)
                p.finished_at = self.clock.now()
                p.done = True
                callbacks = list(p.callbacks)
            for cb in callbacks:
                cb(p)
            if p.image is not None:
                self.on_change()
