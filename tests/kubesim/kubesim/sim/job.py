"""The simulated Job controller (batch/v1, NonIndexed jobs).

It runs up to `parallelism` pods from the template (kept as is, so a template with
spec.nodeName is bound to that node; without one the pod stays Pending, kubesim has no
scheduler) until `completions` pods succeeded. Pods are named <job>-<5 chars>, labelled
batch.kubernetes.io/job-name, batch.kubernetes.io/controller-uid, job-name and
controller-uid, and owned by the Job. Failed pods count against backoffLimit (default 6;
with restartPolicy OnFailure container restarts count too) and a replacement waits
10 s * 2^(failures-1), at most 6 min. activeDeadlineSeconds is measured from
status.startTime.

As in Kubernetes 1.31+, the outcome is first recorded as an interim condition
(SuccessCriteriaMet, or FailureTarget with reason BackoffLimitExceeded / DeadlineExceeded,
after which the active pods are deleted), and the terminal condition (Complete with
completionTime, or Failed) is added once no pod of the Job is still running or terminating.
ttlSecondsAfterFinished deletes a finished Job (propagation Background).
"""

from .events import EventRecorder
from .identities import SYSTEM_JOB_CONTROLLER
from .workqueue import RESYNC, Worker, controller_of, meta, owner_ref, selector_query
from kubesim.clock import parse_rfc3339

POD_BACKOFF = (10.0, 360.0)
CREATE_RETRY = 5.0      # simulated seconds before trying again after a refused pod create
DEADLINE = ("DeadlineExceeded", "Job was active longer than specified deadline")
BACKOFF_LIMIT = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
COMPLETED = ("CompletionsReached", "Reached expected number of succeeded pods")


def _condition(job, ctype):
    for c in (job.get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype and c.get("status") == "True":
            return c
    return None


class JobController(Worker):
    name = "job-controller"

    def __init__(self, api):
        super().__init__(api, SYSTEM_JOB_CONTROLLER)
        self.events = EventRecorder(self, "job-controller")
        self._failed_at = {}    # job uid -> {pod uid: time the failure was seen}

    def keys_for(self, event_type, resource, obj):
        if resource == "jobs":
            return [(meta(obj).get("namespace"), meta(obj).get("name"))]
        if resource == "pods":
            ref = controller_of(obj)
            if ref and ref.get("kind") == "Job":
                return [(meta(obj).get("namespace"), ref.get("name"))]
        return []

    def sync(self, key):
        if key == RESYNC:
            for job in self.list("/apis/batch/v1/jobs"):
                self.enqueue((meta(job)["namespace"], meta(job)["name"]))
            return
        job = self.get("/apis/batch/v1/namespaces/%s/jobs/%s" % key)
        if job is None or meta(job).get("deletionTimestamp"):
            return
        if _condition(job, "Complete") or _condition(job, "Failed"):
            self._expire(key, job)
            return
        self._sync(key, job)

    def _expire(self, key, job):
        ttl = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
        if ttl is None:
            return
        done = _condition(job, "Complete") or _condition(job, "Failed")
        left = parse_rfc3339(done["lastTransitionTime"]) + ttl - self.clock.now()
        if left > 0:
            self.enqueue_after(key, left)
            return
        self.call("DELETE", "/apis/batch/v1/namespaces/%s/jobs/%s" % key,
                  query={"propagationPolicy": "Background"})

    def _sync(self, key, job):
        ns, uid = meta(job)["namespace"], meta(job)["uid"]
        spec = job.get("spec") or {}
        status = dict(job.get("status") or {})
        now = self.clock.now()
        status.setdefault("startTime", self.clock.rfc3339())
        sel = selector_query(spec.get("selector")) if self.light else None
        pods = [p for p in self.list("/api/v1/namespaces/%s/pods" % ns,
                                     {"labelSelector": sel} if sel else None)
                if (controller_of(p) or {}).get("uid") == uid]

        def phase(p):
            return (p.get("status") or {}).get("phase")
        succeeded = [p for p in pods if phase(p) == "Succeeded"]
        failed = [p for p in pods if phase(p) == "Failed"]
        running = [p for p in pods if phase(p) not in ("Succeeded", "Failed")]
        active = [p for p in running if not meta(p).get("deletionTimestamp")]
        terminating = [p for p in running if meta(p).get("deletionTimestamp")]
        seen = self._failed_at.setdefault(uid, {})
        for p in failed:
            seen.setdefault(meta(p)["uid"], now)
        restarts = 0
        if ((spec.get("template") or {}).get("spec") or {}).get("restartPolicy") == "OnFailure":
            restarts = sum(c.get("restartCount", 0) for p in pods
                           for c in (p.get("status") or {}).get("containerStatuses") or [])
        failed_pods = max(len(failed), int(status.get("failed", 0)))
        n_failed = failed_pods + restarts
        n_succeeded = max(len(succeeded), int(status.get("succeeded", 0)))
        completions = spec.get("completions", 1) or 1
        parallelism = spec.get("parallelism", 1)
        conditions = list(status.get("conditions") or [])

        outcome = None
        target = _condition(job, "FailureTarget")
        deadline = spec.get("activeDeadlineSeconds")
        started = parse_rfc3339(status["startTime"])
        if target:
            outcome = ("Failed", (target.get("reason"), target.get("message")))
        elif deadline is not None and now >= started + deadline:
            outcome = ("Failed", DEADLINE)
        elif n_failed > spec.get("backoffLimit", 6):
            outcome = ("Failed", BACKOFF_LIMIT)
        elif n_succeeded >= completions:
            outcome = ("Complete", COMPLETED)

        if outcome:
            final, (reason, message) = outcome
            interim = "FailureTarget" if final == "Failed" else "SuccessCriteriaMet"
            if not any(c.get("type") == interim for c in conditions):
                conditions.append(self._new_condition(interim, reason, message))
                if final == "Failed":
                    self.events.record(job, "Warning", reason, message)
            for p in active:
                self.call("DELETE", "/api/v1/namespaces/%s/pods/%s" % (ns, meta(p)["name"]))
            terminating += active
            active = []
            if not terminating:
                conditions.append(self._new_condition(final, reason, message))
                if final == "Complete":
                    status["completionTime"] = self.clock.rfc3339()
                    self.events.record(job, "Normal", "Completed", "Job completed")
        else:
            want = min(parallelism, completions - n_succeeded) - len(active)
            if want > 0 and n_failed:
                delay = min(POD_BACKOFF[0] * 2 ** (n_failed - 1), POD_BACKOFF[1])
                wait = max(seen.values() or [0]) + delay - now
                if wait > 0:
                    self.enqueue_after(key, wait)
                    want = 0
            for _ in range(max(0, want)):
                pod = self._create_pod(job)
                if pod is None:
                    self.enqueue_after(key, CREATE_RETRY)
                    break
                active.append(pod)
            if deadline is not None:
                self.enqueue_after(key, started + deadline - now)

        status.update({"active": len(active), "succeeded": n_succeeded,
                       "failed": failed_pods,
                       "terminating": len(terminating),
                       "ready": sum(1 for p in active if any(
                           c.get("type") == "Ready" and c.get("status") == "True"
                           for c in (p.get("status") or {}).get("conditions") or [])),
                       "uncountedTerminatedPods": {}})
        for k in ("active", "succeeded", "failed"):
            if not status[k]:
                del status[k]                # omitempty in the Go type
        if conditions:
            status["conditions"] = conditions
        if status != (job.get("status") or {}):
            body = dict(job)
            body["status"] = status
            code, obj = self.call("PUT", "/apis/batch/v1/namespaces/%s/jobs/%s/status" % key,
                                  body=body)
            if code == 409:
                self.enqueue(key)
            elif code not in (200, 404):
                raise RuntimeError("job status: %s %s" % (code, obj))

    def _new_condition(self, ctype, reason, message):
        now = self.clock.rfc3339()
        return {"type": ctype, "status": "True", "lastProbeTime": now,
                "lastTransitionTime": now, "reason": reason, "message": message}

    def _create_pod(self, job):
        m = meta(job)
        template = (job.get("spec") or {}).get("template") or {}
        tmeta = template.get("metadata") or {}
        labels = dict(tmeta.get("labels") or {})
        labels.update({"batch.kubernetes.io/controller-uid": m["uid"],
                       "batch.kubernetes.io/job-name": m["name"],
                       "controller-uid": m["uid"], "job-name": m["name"]})
        pod_meta = {"generateName": m["name"] + "-", "namespace": m["namespace"],
                    "labels": labels, "ownerReferences": [owner_ref("batch/v1", "Job", job)]}
        if tmeta.get("annotations"):
            pod_meta["annotations"] = tmeta["annotations"]
        body = {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta,
                "spec": template.get("spec") or {}}
        code, obj = self.call("POST", "/api/v1/namespaces/%s/pods" % m["namespace"], body=body)
        if code in (200, 201):
            self.events.record(job, "Normal", "SuccessfulCreate",
                               "Created pod: " + meta(obj)["name"])
            return obj
        msg = obj.get("message", "") if isinstance(obj, dict) else str(obj)
        self.events.record(job, "Warning", "FailedCreate", "Error creating: " + msg)
        self.log.warning("creating pod for job %s: %s %s", m["name"], code, msg)
        return None
