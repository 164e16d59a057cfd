"""Light mode (kubesim/sim/light.py): the simulated cluster's suites again with the light
kubelets (one Scheduler thread for every node, pulls as timers, no kubelet Events), minus
the tests that read kubelet Events, plus what is particular to it: one thread for any
number of nodes, and a DaemonSet on 200 nodes."""

import threading
import unittest

from kubesim import selectors
from kubesim.sim.testing import SimCluster, condition, wait_for
from kubesim.sim.workqueue import selector_query

from . import test_sim_daemonset, test_sim_job, test_sim_kubelet

# tests that read the Events the default kubelets write (light kubelets write none)
READ_KUBELET_EVENTS = {
    "test_pull_time_follows_size_and_bandwidth", "test_private_image_needs_the_right_secret",
    "test_unknown_image_err_image_pull_then_backoff", "test_pull_policies",
    "test_latest_and_untagged_default_to_always", "test_init_containers_run_first_in_order",
}


class LightDaemonSetTest(test_sim_daemonset.DaemonSetTest):
    LIGHT = True


class LightJobTest(test_sim_job.JobTest):
    LIGHT = True


class LightKubeletTest(test_sim_kubelet.KubeletTest):
    LIGHT = True

    def setUp(self):
        if self._testMethodName in READ_KUBELET_EVENTS:
            self.skipTest("reads kubelet Events, which light kubelets do not write")
        super().setUp()


class SelectorQueryTest(unittest.TestCase):
    """Light controllers list pods by their selector: the query must mean the selector."""

    def test_rows(self):
        rows = [
            ("matchLabels", {"matchLabels": {"b": "2", "a": "1"}}, "a=1,b=2"),
            ("In", {"matchExpressions": [{"key": "k", "operator": "In", "values": ["x", "y"]}]}, "k in (x,y)"),
            ("NotIn", {"matchExpressions": [{"key": "k", "operator": "NotIn", "values": ["x"]}]}, "k notin (x)"),
            ("Exists", {"matchExpressions": [{"key": "k", "operator": "Exists"}]}, "k"),
            ("DoesNotExist", {"matchExpressions": [{"key": "k", "operator": "DoesNotExist"}]}, "!k"),
            ("both", {"matchLabels": {"app": "a"}, "matchExpressions": [{"key": "t", "operator": "Exists"}]},
             "app=a,t"),
            ("empty selects all: no query", {}, None),
            ("unknown operator: no query", {"matchExpressions": [{"key": "k", "operator": "Gt"}]}, None),
            ("not an object", "app=a", None),
        ]
        for name, sel, want in rows:
            with self.subTest(name):
                self.assertEqual(selector_query(sel), want)
                if want is None or not isinstance(sel, dict):
                    continue
                # the query and the selector object pick the same label sets
                for labels in ({"a": "1", "b": "2"}, {"k": "x"}, {"k": "z"}, {}, {"app": "a", "t": "1"},
                               {"app": "a"}):
                    self.assertEqual(
                        selectors.match_requirements(selectors.parse_label_selector(want), labels),
                        selectors.match_requirements(selectors.label_selector_object_to_reqs(sel), labels),
                        (want, labels))


def kubesim_threads():
    return sorted(t.name for t in threading.enumerate() if t.name.startswith("kubesim-"))


class LightScaleTest(unittest.TestCase):
    def test_one_thread_for_200_nodes_and_a_daemonset_on_all(self):
        before = kubesim_threads()
        nodes = ["node-%d" % i for i in range(1, 201)]
        sim = SimCluster(nodes=nodes, scale=100, light=True)
        self.addCleanup(sim.close)
        added = [n for n in kubesim_threads() if n not in before]
        # the three controllers and one thread for every kubelet and its pulls
        self.assertEqual(sorted(added), ["kubesim-daemonset-controller", "kubesim-garbage-collector",
                                         "kubesim-job-controller", "kubesim-light-kubelets"])
        self.assertEqual(len(sim.items("/api/v1/nodes")), 200)
        sim.create("/apis/apps/v1/namespaces/default/daemonsets", {
            "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "agent"}},
                     "template": {"metadata": {"labels": {"app": "agent"}},
                                  "spec": {"containers": [{"name": "a", "image": "nginx:1.25"}]}}}})

        def all_ready():
            pods = sim.items("/api/v1/namespaces/default/pods", labelSelector="app=agent")
            ready = [p for p in pods if (condition(p, "Ready") or {}).get("status") == "True"]
            return len(ready) == 200 and pods
        pods = wait_for(all_ready, 120, "200 ready agent pods")
        self.assertEqual(sorted(p["spec"]["nodeName"] for p in pods), sorted(nodes))
        # each node pulled the image (70.5 MB at 10 MB/s: 7.55 simulated seconds)
        node = sim.get("/api/v1/nodes/node-137")
        self.assertTrue(any("docker.io/library/nginx:1.25" in i["names"] for i in node["status"]["images"]))
        st = pods[0]["status"]["containerStatuses"][0]
        self.assertEqual(st["imageID"].split("@")[0], "docker.io/library/nginx")
        # no kubelet Events
        self.assertEqual([e for e in sim.items("/api/v1/namespaces/default/events")
                          if e.get("source", {}).get("component") == "kubelet"], [])
        sim.close()
        self.assertEqual([n for n in kubesim_threads() if n not in before], [])

    def test_pulls_on_one_node_run_one_at_a_time(self):
        sim = SimCluster(nodes=["node-1"], scale=100, light=True, config={
            "images": [{"image": "example.com/a:1", "size": 100_000_000},
                       {"image": "example.com/b:1", "size": 100_000_000}],
            "nodes": {"node-1": {"bandwidth": 10_000_000}}})
        self.addCleanup(sim.close)
        for name, image in (("a", "example.com/a:1"), ("b", "example.com/b:1")):
            sim.create("/api/v1/namespaces/default/pods", {
                "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": image}]}})

        def started(name):
            p = sim.pod(name)
            s = ((p.get("status") or {}).get("containerStatuses") or [{}])[0].get("state", {})
            return s.get("running", {}).get("startedAt")
        wait_for(lambda: started("a") and started("b"), 30, "both running")
        # serialised, in simulated time: the second 10 s pull ends 10 s after the first
        import datetime

        def t(s):
            return datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ")
        gap = abs((t(started("b")) - t(started("a"))).total_seconds())
        self.assertGreaterEqual(gap, 9)


if __name__ == "__main__":
    unittest.main()
