"""Events written by the simulated controllers and kubelets.

Kubernetes components report what they did as core/v1 Events attached to an object
(`kubectl describe` shows them). An EventRecorder writes them the way client-go's recorder
does: name "<object>.<hex time>", source component and host, and repeats of the same
reason and message on the same object folded into one Event whose count goes up.
"""

import threading


class EventRecorder:
    def __init__(self, worker, component, host=None):
        self.worker = worker
        self.component = component
        self.host = host
        self._lock = threading.Lock()
        self._seen = {}  # (uid, type, reason, message) -> (namespace, name, count)

    def record(self, obj, etype, reason, message, field_path=None):
        clock = self.worker.clock
        m = obj.get("metadata") or {}
        namespace = m.get("namespace") or "default"
        key = (m.get("uid"), etype, reason, message, field_path)
        now = clock.rfc3339()
        with self._lock:
            seen = self._seen.get(key)
        if seen:
            ns, name, count = seen
            code, _ = self.worker.call(
                "PATCH", "/api/v1/namespaces/%s/events/%s" % (ns, name),
                body={"count": count + 1, "lastTimestamp": now},
                content_type="application/merge-patch+json")
            if code == 200:
                with self._lock:
                    self._seen[key] = (ns, name, count + 1)
                return
        involved = {"kind": obj.get("kind"), "namespace": m.get("namespace"),
                    "name": m.get("name"), "uid": m.get("uid"),
                    "apiVersion": obj.get("apiVersion"),
                    "resourceVersion": m.get("resourceVersion")}
        if not m.get("namespace"):
            del involved["namespace"]
        if field_path:
            involved["fieldPath"] = field_path
        name = "%s.%x" % (m.get("name"), int(clock.now() * 1e9))
        source = {"component": self.component}
        if self.host:
            source["host"] = self.host
        body = {"apiVersion": "v1", "kind": "Event",
                "metadata": {"name": name, "namespace": namespace},
                "involvedObject": involved, "reason": reason, "message": message,
                "source": source, "firstTimestamp": now, "lastTimestamp": now,
                "count": 1, "type": etype, "eventTime": None,
                "reportingComponent": self.component,
                "reportingInstance": self.host or ""}
        code, _ = self.worker.call("POST", "/api/v1/namespaces/%s/events" % namespace,
                                   body=body)
        if code == 409:  # two events within the same nanosecond: make the name unique
            body["metadata"]["name"] += "%x" % id(body)
            code, _ = self.worker.call("POST", "/api/v1/namespaces/%s/events" % namespace,
                                       body=body)
        if code == 201 or code == 200:
            with self._lock:
                if len(self._seen) > 4096:
                    self._seen.clear()
                self._seen[key] = (namespace, body["metadata"]["name"], 1)
        else:
            self.worker.log.debug("event %s on %s not written: %s", reason, name, code)
