"""The controller's paged lists end to end (class Paging): kubesim pages lists
as the apiserver does, so a relist over 1 234 DaemonSet-labelled pods reads
three pages of 500 with continue tokens; a continue answered 410 Expired (the
token outlived the compaction point) makes the informer start the list over
from the first page, and the cache ends whole.

The relists are forced the way a real cluster forces them: kubesim compacts
its history and the controller's watches end (kubesim drops them, or the
apiserver goes away for a moment), so the re-opened watch's resourceVersion is
too old (410) and the informer lists.
"""
import time
from urllib.parse import unquote

from harness import Base, log, wait_until

N_PODS = 1234
PAGE = 500          # the informer's page size (kube/informer.c INFORMER_PAGE)
POD_LABELS = {"controller-revision-hash": "paging", "pod-template-generation": "1"}


class Paging(Base):
    NODES = 1

    def cached_pods(self):
        m = self.ctl.metrics() or {}
        return m.get('ota_controller_cached_objects{resource="pods"}')

    def relists(self):
        return (self.ctl.metrics() or {}).get('ota_controller_relists_total{resource="pods"}', 0)

    def pod_lists(self, since):
        """The pods informer's list requests since `since`: [(continue token or None, status)]."""
        out = []
        for e in self.ctl.proxy.entries(since):
            path = e["path"]
            if e["method"] != "GET" or not path.startswith("/api/v1/pods?") or "watch=" in path \
                    or "controller-revision-hash" not in unquote(path):
                continue
            q = dict(p.partition("=")[::2] for p in path.split("?", 1)[1].split("&"))
            self.assertEqual(q.get("limit"), str(PAGE), path)
            out.append((unquote(q["continue"]) if "continue" in q else None, e["status"]))
        return out

    def force_relist(self):
        """Compaction, then every watch ends: the re-opened pods watch gets 410."""
        before = self.relists()
        self.sim.call("POST", "/kubesim/faults/compact")
        self.sim.call("POST", "/kubesim/faults/drop-watches")
        return before

    def make_pods(self):
        for i in range(N_PODS):
            self.sim.call("POST", "/api/v1/namespaces/%s/pods" % self.ns, {
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "p%04d" % i, "labels": POD_LABELS},
                "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}})
        # pods without the DaemonSet labels are not listed by that informer
        for i in range(3):
            self.sim.call("POST", "/api/v1/namespaces/%s/pods" % self.ns, {
                "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "other%d" % i},
                "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}})

    def test_relist_pages_and_410_on_continue_starts_over(self):
        self.make_pods()
        # 1. a relist reads every page
        t0 = time.monotonic()
        before = self.force_relist()
        wait_until(lambda: self.relists() > before and self.cached_pods() == N_PODS, 60,
                   "a relist with %d pods cached" % N_PODS)
        lists = self.pod_lists(t0)
        log("pod lists after the first relist:", [(c is not None, s) for c, s in lists])
        # one list from scratch then ceil(1234/500) - 1 = 2 continued pages, all 200
        self.assertEqual([(c is None, s) for c, s in lists][-3:], [(True, 200), (False, 200), (False, 200)])
        self.assertEqual(len({c for c, _ in lists[-2:]}), 2, "each page its own token")

        # 2. the second page of the next relist answers 410 Expired: start over.
        # The apiserver goes away; meanwhile a pod is written and the history
        # compacted, so the watch the controller re-opens when it is back is
        # too old (410) and it relists.
        t1 = time.monotonic()
        before = self.relists()
        self.ctl.proxy.stop()
        self.sim.call("POST", "/api/v1/namespaces/%s/configmaps" % self.ns,
                      {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "rv-bump"}})
        self.sim.call("POST", "/kubesim/faults/compact")
        self.sim.faults({"error": {"code": 410, "count": 1, "pathContains": "/api/v1/pods",
                                   "queryContains": "continue=", "watch": False}})
        self.ctl.proxy.start()
        wait_until(lambda: self.sim.fault_state()["injected"]["errors"] >= 1, 30, "the 410 on a continue")
        wait_until(lambda: self.relists() > before and self.cached_pods() == N_PODS, 60,
                   "a relist after the 410 with %d pods cached" % N_PODS)
        self.sim.clear_faults()
        lists = self.pod_lists(t1)
        log("pod lists around the 410:", [(c is not None, s) for c, s in lists])
        shape = [(c is None, s) for c, s in lists]
        # the first page, its continue refused, then the whole list again from page one
        self.assertEqual(shape[:5], [(True, 200), (False, 410), (True, 200), (False, 200), (False, 200)])
        # exactly one complete list came of it (the broken one was not committed)
        self.assertEqual(self.relists(), before + 1)
        self.assertEqual(self.cached_pods(), N_PODS)
