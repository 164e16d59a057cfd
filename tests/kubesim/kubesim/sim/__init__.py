"""The simulated cluster behind the kubesim API: controllers and kubelets.

start(api, opts) builds the registry from opts["registry_config"] (README.md here describes
the format; None = built-in images), registers one Node per name in opts["nodes"] through
its kubelet, and starts the DaemonSet controller, the Job controller, the garbage collector
and the kubelets, each on its own thread acting only through api.call (with opts["light"], the
kubelets of light.py instead: one thread for all). The returned Cluster's stop() ends them. All timing uses api.clock, so its time scale applies.
"""

from .daemonset import DaemonSetController
from .gc import GarbageCollector
from .job import JobController
from .kubelet import Kubelet
from .light import LightKubelets
from .registry import Registry, load_config


class Cluster:
    def __init__(self, api, registry, nodes, light=False):
        self.api = api
        self.registry = registry
        self.light = LightKubelets(api, registry, nodes) if light else None
        self.kubelets = self.light.kubelets if light else \
            {n: Kubelet(api, n, i, registry) for i, n in enumerate(nodes)}
        self.gc = GarbageCollector(api)
        self.daemonsets = DaemonSetController(api)
        self.jobs = JobController(api)
        for w in (self.gc, self.daemonsets, self.jobs):
            w.light = light

    @property
    def workers(self):
        if self.light is not None:
            return [self.gc, self.daemonsets, self.jobs, self.light]
        return [self.gc, self.daemonsets, self.jobs] + list(self.kubelets.values())

    def start(self):
        for w in self.workers:
            w.start()
        return self

    def stop(self):
        for w in reversed(self.workers):
            w.stop()


def start(api, opts):
    """Start the simulated cluster; returns a Cluster (call .stop() to end it)."""
    registry = Registry(load_config(opts.get("registry_config")))
    nodes = opts.get("nodes") or ["node-1"]
    return Cluster(api, registry, nodes, light=bool(opts.get("light"))).start()
