"""Storage semantics through the in-process Api: resourceVersion, conflicts,
generateName, selectors, status subresource, deletion, validation."""
import threading
import unittest

from .apisupport import ADMIN, new_api, pod
from kubesim import api as apimod

PODS = "/api/v1/namespaces/default/pods"


class StoreTest(unittest.TestCase):
    def setUp(self):
        self.api, self.adm = new_api()
        self.events = []
        self.api.subscribe(lambda t, r, o: self.events.append((t, r, o["metadata"]["name"],
                                                               o["metadata"]["resourceVersion"])))

    def tearDown(self):
        self.adm.close()

    def create(self, obj, path=PODS, **kw):
        st, body = self.api.call(ADMIN, "POST", path, obj, **kw)
        self.assertEqual(st, 201, body)
        return body

    def test_resource_version_and_conflicts(self):
        p = self.create(pod("a"))
        rv1 = int(p["metadata"]["resourceVersion"])
        self.assertTrue(p["metadata"]["uid"])
        self.assertTrue(p["metadata"]["creationTimestamp"].endswith("Z"))
        st, body = self.api.call(ADMIN, "POST", PODS, pod("a"))
        self.assertEqual((st, body["reason"]), (409, "AlreadyExists"))
        self.assertEqual(body["message"], 'pods "a" already exists')
        p["metadata"]["labels"] = {"x": "1"}
        st, p2 = self.api.call(ADMIN, "PUT", PODS + "/a", p)
        self.assertEqual(st, 200)
        self.assertGreater(int(p2["metadata"]["resourceVersion"]), rv1)
        st, body = self.api.call(ADMIN, "PUT", PODS + "/a", p)        # stale resourceVersion
        self.assertEqual((st, body["reason"]), (409, "Conflict"))
        self.assertIn("the object has been modified", body["message"])
        self.assertEqual(body["kind"], "Status")
        self.assertEqual(body["details"], {"name": "a", "kind": "pods"})
        # a no-op write does not bump the resourceVersion
        st, p3 = self.api.call(ADMIN, "PUT", PODS + "/a", p2)
        self.assertEqual(p3["metadata"]["resourceVersion"], p2["metadata"]["resourceVersion"])
        self.assertEqual([e[0] for e in self.events if e[1] == "pods"], ["ADDED", "MODIFIED"])

    def test_generate_name(self):
        p = pod("")
        del p["metadata"]["name"]
        p["metadata"]["generateName"] = "agent-"
        names = {self.create(p)["metadata"]["name"] for _ in range(5)}
        self.assertEqual(len(names), 5)
        for n in names:
            self.assertRegex(n, r"^agent-[bcdfghjklmnpqrstvwxz2456789]{5}$")
        del p["metadata"]["generateName"]
        st, body = self.api.call(ADMIN, "POST", PODS, p)
        self.assertEqual(st, 422)
        self.assertIn("metadata.name: Required value", body["message"])

    def test_selectors(self):
        self.create(pod("a", node="node-1", labels={"app": "x", "tier": "1"}))
        self.create(pod("b", node="node-2", labels={"app": "x"}))
        self.create(pod("c", labels={"app": "y"}))

        def names(q):
            st, body = self.api.call(ADMIN, "GET", PODS, query=q)
            self.assertEqual(st, 200, body)
            self.assertEqual(body["kind"], "PodList")
            return [o["metadata"]["name"] for o in body["items"]]
        self.assertEqual(names({"labelSelector": "app=x"}), ["a", "b"])
        self.assertEqual(names({"labelSelector": "app=x,!tier"}), ["b"])
        self.assertEqual(names({"labelSelector": "app in (x,y),tier"}), ["a"])
        self.assertEqual(names({"labelSelector": "app!=x"}), ["c"])
        self.assertEqual(names({"fieldSelector": "spec.nodeName=node-2"}), ["b"])
        self.assertEqual(names({"fieldSelector": "spec.nodeName="}), ["c"])
        self.assertEqual(names({"fieldSelector": "metadata.name=a"}), ["a"])
        st, body = self.api.call(ADMIN, "GET", PODS, query={"fieldSelector": "spec.bogus=1"})
        self.assertEqual(st, 400)
        self.assertIn("field label not supported: spec.bogus", body["message"])
        st, body = self.api.call(ADMIN, "GET", "/api/v1/pods", query={"labelSelector": "app=y"})
        self.assertEqual([o["metadata"]["name"] for o in body["items"]], ["c"])

    def test_events_field_selectors_for_describe(self):
        p = self.create(pod("a"))
        ev = {"apiVersion": "v1", "kind": "Event", "metadata": {"generateName": "a."},
              "involvedObject": {"kind": "Pod", "namespace": "default", "name": "a", "uid": p["metadata"]["uid"]},
              "reason": "Pulled", "message": "ok", "type": "Normal"}
        self.create(ev, "/api/v1/namespaces/default/events")
        ev2 = dict(ev, involvedObject={"kind": "Pod", "namespace": "default", "name": "b"})
        self.create(ev2, "/api/v1/namespaces/default/events")
        st, body = self.api.call(ADMIN, "GET", "/api/v1/namespaces/default/events", query={
            "fieldSelector": "involvedObject.name=a,involvedObject.namespace=default,involvedObject.kind=Pod,"
                             "involvedObject.uid=%s" % p["metadata"]["uid"]})
        self.assertEqual(st, 200)
        self.assertEqual([e["reason"] for e in body["items"]], ["Pulled"])

    def test_status_subresource_only_changes_status(self):
        p = self.create(pod("a"))
        p["status"] = {"phase": "Running"}
        p["metadata"]["labels"] = {"l": "1"}
        st, body = self.api.call(ADMIN, "PUT", PODS + "/a", p)
        self.assertEqual(body["status"]["phase"], "Pending")            # main resource ignores status
        self.assertEqual(body["metadata"]["labels"], {"l": "1"})
        body["status"]["phase"] = "Running"
        body["metadata"]["labels"] = {"l": "2"}
        body["spec"]["containers"][0]["image"] = "nginx"
        st, body = self.api.call(ADMIN, "PUT", PODS + "/a/status", body)
        self.assertEqual(st, 200, body)
        self.assertEqual(body["status"]["phase"], "Running")
        self.assertEqual(body["metadata"]["labels"], {"l": "1"})        # status ignores the rest
        self.assertEqual(body["spec"]["containers"][0]["image"], "busybox:1.36")

    def test_pod_graceful_deletion(self):
        self.create(pod("bound", node="node-1"))
        self.create(pod("unbound"))
        st, body = self.api.call(ADMIN, "DELETE", PODS + "/unbound")
        self.assertEqual(st, 200)
        self.assertEqual(self.api.call(ADMIN, "GET", PODS + "/unbound")[0], 404)
        st, body = self.api.call(ADMIN, "DELETE", PODS + "/bound")
        self.assertEqual(st, 200)
        self.assertTrue(body["metadata"]["deletionTimestamp"])
        self.assertEqual(body["metadata"]["deletionGracePeriodSeconds"], 30)
        st, cur = self.api.call(ADMIN, "GET", PODS + "/bound")
        self.assertEqual(st, 200)                                         # still Terminating
        kubelet = apimod.node_user("node-1")
        st, _ = self.api.call(kubelet, "DELETE", PODS + "/bound", query={"gracePeriodSeconds": "0"})
        self.assertEqual(st, 200)
        self.assertEqual(self.api.call(ADMIN, "GET", PODS + "/bound")[0], 404)
        types = [e[0] for e in self.events if e[2] == "bound"]
        self.assertEqual(types, ["ADDED", "MODIFIED", "DELETED"])
        st, body = self.api.call(ADMIN, "DELETE", PODS + "/bound")
        self.assertEqual((st, body["reason"]), (404, "NotFound"))

    def test_finalizers_hold_deletion(self):
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "finalizers": ["x/y"]}}
        self.create(cm, "/api/v1/namespaces/default/configmaps")
        self.api.call(ADMIN, "DELETE", "/api/v1/namespaces/default/configmaps/c")
        st, cur = self.api.call(ADMIN, "GET", "/api/v1/namespaces/default/configmaps/c")
        self.assertEqual(st, 200)
        self.assertTrue(cur["metadata"]["deletionTimestamp"])
        st, _ = self.api.call(ADMIN, "PATCH", "/api/v1/namespaces/default/configmaps/c",
                              {"metadata": {"finalizers": None}}, content_type="application/merge-patch+json")
        self.assertEqual(st, 200)
        self.assertEqual(self.api.call(ADMIN, "GET", "/api/v1/namespaces/default/configmaps/c")[0], 404)

    def test_orphan_removes_owner_references(self):
        owner = self.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owner"}},
                            "/api/v1/namespaces/default/configmaps")
        p = pod("child")
        p["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
                                             "uid": owner["metadata"]["uid"]}]
        self.create(p)
        self.api.call(ADMIN, "DELETE", "/api/v1/namespaces/default/configmaps/owner",
                      query={"propagationPolicy": "Orphan"})
        st, child = self.api.call(ADMIN, "GET", PODS + "/child")
        self.assertEqual(st, 200)
        self.assertNotIn("ownerReferences", child["metadata"])

    def test_validation_and_namespaces(self):
        st, body = self.api.call(ADMIN, "POST", "/api/v1/namespaces/missing/pods", pod("a", ns="missing"))
        self.assertEqual((st, body["message"]), (404, 'namespaces "missing" not found'))
        bad = pod("Bad_Name")
        st, body = self.api.call(ADMIN, "POST", PODS, bad)
        self.assertEqual(st, 422)
        self.assertIn('Pod "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name"', body["message"])
        noimg = pod("a")
        del noimg["spec"]["containers"][0]["image"]
        st, body = self.api.call(ADMIN, "POST", PODS, noimg)
        self.assertEqual(st, 422)
        self.assertIn("spec.containers[0].image: Required value", body["message"])
        st, body = self.api.call(ADMIN, "POST", PODS, pod("a", ns="other"))
        self.assertEqual(st, 400)
        ds = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "d"},
              "spec": {"selector": {"matchLabels": {"app": "d"}},
                       "template": {"metadata": {"labels": {"app": "other"}},
                                    "spec": {"containers": [{"name": "c", "image": "x"}]}}}}
        st, body = self.api.call(ADMIN, "POST", "/apis/apps/v1/namespaces/default/daemonsets", ds)
        self.assertEqual(st, 422)
        self.assertIn("`selector` does not match template `labels`", body["message"])

    def test_defaults_and_generation(self):
        ds = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "d"},
              "spec": {"selector": {"matchLabels": {"app": "d"}},
                       "template": {"metadata": {"labels": {"app": "d"}},
                                    "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}
        body = self.create(ds, "/apis/apps/v1/namespaces/default/daemonsets")
        self.assertEqual(body["metadata"]["generation"], 1)
        self.assertEqual(body["spec"]["updateStrategy"]["type"], "RollingUpdate")
        self.assertEqual(body["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"], "Always")
        st, body = self.api.call(ADMIN, "PATCH", "/apis/apps/v1/namespaces/default/daemonsets/d",
                                 {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "b:1"}]}}}},
                                 content_type="application/strategic-merge-patch+json")
        self.assertEqual(body["metadata"]["generation"], 2)
        st, body = self.api.call(ADMIN, "PATCH", "/apis/apps/v1/namespaces/default/daemonsets/d",
                                 {"metadata": {"labels": {"a": "b"}}}, content_type="application/merge-patch+json")
        self.assertEqual(body["metadata"]["generation"], 2)
        job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
               "spec": {"template": {"spec": {"restartPolicy": "Never",
                                              "containers": [{"name": "c", "image": "x:1"}]}}}}
        body = self.create(job, "/apis/batch/v1/namespaces/default/jobs")
        uid = body["metadata"]["uid"]
        self.assertEqual(body["spec"]["selector"], {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}})
        self.assertEqual(body["spec"]["template"]["metadata"]["labels"]["job-name"], "j")
        self.assertEqual(body["spec"]["backoffLimit"], 6)
        ns = self.api.call(ADMIN, "GET", "/api/v1/namespaces/default")[1]
        self.assertEqual(ns["metadata"]["labels"]["kubernetes.io/metadata.name"], "default")

    def test_field_validation(self):
        p = pod("a")
        p["spec"]["containers"][0]["imagee"] = "x"
        st, body = self.api.call(ADMIN, "POST", PODS, p, query={"fieldValidation": "Strict"})
        self.assertEqual(st, 400)
        self.assertEqual(body["message"], 'Pod in version "v1" cannot be handled as a Pod: strict decoding '
                                          'error: unknown field "spec.containers[0].imagee"')
        st, body, warnings = self.api.call_ex(ADMIN, "POST", PODS, p, query={"fieldValidation": "Warn"})
        self.assertEqual(st, 201)
        self.assertEqual(warnings, ['unknown field "spec.containers[0].imagee"'])
        self.assertNotIn("imagee", body["spec"]["containers"][0])

    def test_concurrent_read_modify_write_loses_nothing(self):
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "counter"}, "data": {"n": "0"}}
        self.create(cm, "/api/v1/namespaces/default/configmaps")
        path = "/api/v1/namespaces/default/configmaps/counter"
        conflicts = []

        def worker():
            for _ in range(25):
                for _attempt in range(200):
                    _, cur = self.api.call(ADMIN, "GET", path)
                    cur["data"]["n"] = str(int(cur["data"]["n"]) + 1)
                    st, body = self.api.call(ADMIN, "PUT", path, cur)
                    if st == 200:
                        break
                    self.assertEqual(st, 409, body)
                    conflicts.append(1)
        threads = [threading.Thread(target=worker) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        _, cur = self.api.call(ADMIN, "GET", path)
        self.assertEqual(cur["data"]["n"], "200")
        modified = [e for e in self.events if e[2] == "counter" and e[0] == "MODIFIED"]
        self.assertEqual(len(modified), 200)
        rvs = [int(e[3]) for e in self.events]
        self.assertEqual(rvs, sorted(rvs))                 # subscribers see commit order

    def test_unknown_paths(self):
        st, body = self.api.call(ADMIN, "GET", "/api/v1/namespaces/default/widgets")
        self.assertEqual(st, 404)
        st, body = self.api.call(ADMIN, "GET", "/apis/apps/v1/namespaces/default/daemonsets/x/scale")
        self.assertEqual(st, 404)

    def test_stored_only_kinds_of_the_manifests(self):
        # what `kubectl apply -k manifests` writes besides the kinds kubesim runs
        objs = [
            ("/apis/apps/v1/namespaces/default/deployments",
             {"kind": "Deployment", "metadata": {"name": "d"}, "spec": {"replicas": 2}}),
            ("/apis/policy/v1/namespaces/default/poddisruptionbudgets",
             {"kind": "PodDisruptionBudget", "metadata": {"name": "b"}, "spec": {"minAvailable": 1}}),
            ("/apis/rbac.authorization.k8s.io/v1/clusterroles",
             {"kind": "ClusterRole", "metadata": {"name": "c"},
              "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}]}),
            ("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
             {"kind": "ClusterRoleBinding", "metadata": {"name": "c"},
              "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "c"}}),
            ("/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
             {"kind": "Role", "metadata": {"name": "r"}, "rules": []}),
            ("/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
             {"kind": "RoleBinding", "metadata": {"name": "r"},
              "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"}}),
        ]
        for path, obj in objs:
            self.create(obj, path=path)
            name = obj["metadata"]["name"]
            st, got = self.api.call(ADMIN, "GET", path + "/" + name)
            self.assertEqual(st, 200, (path, got))
            for k, v in obj.items():
                if k != "metadata":
                    self.assertEqual(got[k], v, path)
            st, lst = self.api.call(ADMIN, "GET", path)
            self.assertIn(name, [i["metadata"]["name"] for i in lst["items"]], path)   # with the bootstrap roles


if __name__ == "__main__":
    unittest.main()
