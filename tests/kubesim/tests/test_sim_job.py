"""The simulated Job controller: pods from the template, Complete, Failed by backoffLimit
and by activeDeadlineSeconds, status counters, labels and owners, ttlSecondsAfterFinished."""

import unittest

from kubesim.sim.testing import SimCluster, condition, wait_for

JOBS = "/apis/batch/v1/namespaces/default/jobs"
PODS = "/api/v1/namespaces/default/pods"
CONFIG = {"images": [{"image": "busybox:1.36", "size": 1_000_000},
                     {"image": "example.com/big:1", "size": 2_000_000_000}]}


def job(name, command, node="node-1", image="busybox:1.36", **spec):
    pod_spec = {"restartPolicy": "Never",
                "containers": [{"name": "main", "image": image, "command": command}]}
    if node:
        pod_spec["nodeName"] = node
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": "default"},
            "spec": dict({"template": {"metadata": {"labels": {"app": name}},
                                       "spec": pod_spec}}, **spec)}


class JobTest(unittest.TestCase):
    LIGHT = False      # test_sim_light.py runs these with the light kubelets
    def setUp(self):
        self.sim = SimCluster(nodes=["node-1"], scale=100, config=CONFIG, light=self.LIGHT)
        self.addCleanup(self.sim.close)

    def finished(self, name, ctype, timeout=10):
        return wait_for(lambda: (lambda j: j and (condition(j, ctype) or {}).get("status") == "True"
                                 and j)(self.sim.get(JOBS + "/" + name)),
                        timeout, "job %s %s" % (name, ctype))

    def job_pods(self, name):
        return self.sim.items(PODS, labelSelector="job-name=" + name)

    def test_complete(self):
        created = self.sim.create(JOBS, job("ok", ["/ota-bin/true"]))
        j = self.finished("ok", "Complete")
        self.assertEqual(j["status"]["succeeded"], 1)
        self.assertNotIn("failed", j["status"])
        self.assertEqual(j["status"].get("active", 0), 0)
        self.assertTrue(j["status"]["completionTime"])
        self.assertTrue(j["status"]["startTime"])
        self.assertEqual(condition(j, "SuccessCriteriaMet")["status"], "True")
        self.assertIsNone(condition(j, "Failed"))
        pods = self.job_pods("ok")
        self.assertEqual(len(pods), 1)
        p = pods[0]
        uid = created["metadata"]["uid"]
        self.assertRegex(p["metadata"]["name"], r"^ok-[a-z0-9]{5}$")
        self.assertEqual(p["metadata"]["labels"]["batch.kubernetes.io/job-name"], "ok")
        self.assertEqual(p["metadata"]["labels"]["batch.kubernetes.io/controller-uid"], uid)
        self.assertEqual(p["metadata"]["labels"]["controller-uid"], uid)
        self.assertEqual(p["metadata"]["labels"]["app"], "ok")
        ref = p["metadata"]["ownerReferences"][0]
        self.assertEqual((ref["kind"], ref["uid"], ref["controller"]), ("Job", uid, True))
        self.assertEqual(p["spec"]["nodeName"], "node-1")
        self.assertEqual(p["status"]["phase"], "Succeeded")

    def test_completions_and_parallelism(self):
        self.sim.create(JOBS, job("many", ["sh", "-c", "sleep 2"], completions=3, parallelism=2))
        active = wait_for(lambda: (self.sim.get(JOBS + "/many").get("status") or {})
                          .get("active") == 2, what="2 active")
        self.assertTrue(active)
        j = self.finished("many", "Complete")
        self.assertEqual(j["status"]["succeeded"], 3)
        self.assertEqual(len(self.job_pods("many")), 3)

    def test_backoff_limit(self):
        self.sim.create(JOBS, job("bad", ["false"], backoffLimit=1))
        j = self.finished("bad", "Failed", timeout=15)
        failed = condition(j, "Failed")
        self.assertEqual(failed["reason"], "BackoffLimitExceeded")
        self.assertEqual(failed["message"], "Job has reached the specified backoff limit")
        self.assertEqual(condition(j, "FailureTarget")["reason"], "BackoffLimitExceeded")
        self.assertEqual(j["status"]["failed"], 2)          # backoffLimit + 1 failed pods
        self.assertEqual(len(self.job_pods("bad")), 2)
        self.assertNotIn("completionTime", j["status"])

    def test_backoff_limit_zero_fails_after_first_pod(self):
        self.sim.create(JOBS, job("once", ["sh", "-c", "exit 3"], backoffLimit=0))
        j = self.finished("once", "Failed")
        self.assertEqual(j["status"]["failed"], 1)
        pod = self.job_pods("once")[0]
        self.assertEqual(pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"], 3)

    def test_on_failure_restarts_count_against_backoff_limit(self):
        body = job("retry", ["false"], backoffLimit=2)
        body["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
        self.sim.create(JOBS, body)
        j = self.finished("retry", "Failed")
        self.assertEqual(condition(j, "Failed")["reason"], "BackoffLimitExceeded")
        self.assertNotIn("failed", j["status"])         # no pod failed: its container restarted

    def test_active_deadline(self):
        clock = self.sim.clock
        t0 = clock.now()
        self.sim.create(JOBS, job("slow", ["sleep", "3600"], activeDeadlineSeconds=30))
        j = self.finished("slow", "Failed")
        # startTime has whole seconds, as in Kubernetes, so the deadline may come <1 s early.
        self.assertGreaterEqual(clock.now() - t0, 29)
        self.assertEqual(condition(j, "Failed")["reason"], "DeadlineExceeded")
        self.assertEqual(condition(j, "Failed")["message"],
                         "Job was active longer than specified deadline")
        wait_for(lambda: not self.job_pods("slow"), what="active pod deleted")

    def test_deadline_while_pulling_waits_for_the_pod(self):
        # A pod whose image is still pulling cannot be deleted before the pull ends, and a
        # 1.31+ Job only turns Failed once its pods are gone: FailureTarget comes first.
        self.sim.create(JOBS, job("pull", ["/ota-bin/true"], image="example.com/big:1",
                                  activeDeadlineSeconds=20))
        j = wait_for(lambda: (lambda j: condition(j, "FailureTarget") and j)(
            self.sim.get(JOBS + "/pull")), what="FailureTarget")
        self.assertIsNone(condition(j, "Failed"))
        pod = self.job_pods("pull")[0]
        self.assertTrue(pod["metadata"].get("deletionTimestamp"))
        j = self.finished("pull", "Failed", timeout=15)     # the 200 s pull must end first
        self.assertEqual(condition(j, "Failed")["reason"], "DeadlineExceeded")

    def test_ttl_after_finished(self):
        self.sim.create(JOBS, job("ttl", ["true"], ttlSecondsAfterFinished=10))
        self.finished("ttl", "Complete")
        wait_for(lambda: self.sim.get(JOBS + "/ttl") is None, what="job deleted by ttl")
        wait_for(lambda: not self.job_pods("ttl"), what="its pod collected")


if __name__ == "__main__":
    unittest.main()
