"""What the kubelet knows about a pod's containers, and the pod status it makes of it.

Ctr is one container's runtime state (waiting / running / terminated, restarts, ids);
PodRuntime groups a pod's containers with its pull and back-off bookkeeping. render() turns
them into the status fields the kubelet owns (phase by the kubelet's getPhase rules, the
PodReadyToStartContainers, Initialized, Ready and ContainersReady conditions, container
statuses, IPs, start time, QoS class) and merge() lays those over the pod's current status
without touching anyone else's conditions.
"""


class Ctr:
    """Runtime state of one container of a pod."""

    def __init__(self, spec, init, waiting_reason):
        self.name = spec["name"]
        self.init = init
        self.image = spec.get("image", "")
        self.state = {"waiting": {"reason": waiting_reason}}
        self.last_state = {}
        self.restart_count = 0
        self.ready = False
        self.image_id = ""
        self.digest = None          # the local image it runs (keeps image GC away)
        self.volume_digests = []    # images of the image volumes it mounts
        self.container_id = ""
        self.exit_at = None
        self.exit_code = 0
        self.exit_message = None    # the terminated state's message when it exits
        self.finished_at = None

    @property
    def field_path(self):
        return "spec.%s{%s}" % ("initContainers" if self.init else "containers", self.name)

    @property
    def running(self):
        return "running" in self.state

    @property
    def terminated(self):
        return "terminated" in self.state

    @property
    def ever_ran(self):
        return self.terminated or bool(self.last_state)

    def wait(self, reason, message=None):
        self.state = {"waiting": {"reason": reason}}
        if message:
            self.state["waiting"]["message"] = message
        self.ready = False

    def exit(self, clock, code, reason=None, message=None):
        running = self.state.get("running", {})
        self.state = {"terminated": {
            "exitCode": code, "reason": reason or ("Completed" if code == 0 else "Error"),
            "startedAt": running.get("startedAt"), "finishedAt": clock.rfc3339(),
            "containerID": self.container_id}}
        if message:
            self.state["terminated"]["message"] = message
        self.finished_at = clock.now()
        self.exit_at = None
        self.exit_message = None
        self.ready = False

    def status(self, spec):
        s = {"name": self.name, "state": self.state, "lastState": self.last_state,
             "ready": self.ready, "restartCount": self.restart_count,
             "image": spec.get("image", ""), "imageID": self.image_id,
             "started": self.running}
        if self.container_id:
            s["containerID"] = self.container_id
        return s


class PodRuntime:
    """What the kubelet remembers about one pod (by uid)."""

    def __init__(self, uid, ip, start_time):
        self.uid = uid
        self.ip = ip
        self.start_time = start_time
        self.ctrs = {}
        self.blocking = None        # (ctr key, Pull) the pod worker is waiting for
        self.pulled = {}            # ctr key (or ("volume", name)) -> finished Pull not yet looked at
        self.volumes = {}           # image volume -> (digest, None) or (None, (reason, message))
        self.image_backoff = {}     # image -> [until, delay]
        self.crash_backoff = {}     # ctr key -> delay of the next back-off

    def ctr(self, spec, init, waiting_reason):
        key = ("init" if init else "main", spec["name"])
        if key not in self.ctrs:
            self.ctrs[key] = Ctr(spec, init, waiting_reason)
        return key, self.ctrs[key]


def qos_class(spec):
    requests, limits, guaranteed = False, False, True
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        r = (c.get("resources") or {}).get("requests") or {}
        lim = (c.get("resources") or {}).get("limits") or {}
        requests = requests or bool(r)
        limits = limits or bool(lim)
        for res in ("cpu", "memory"):
            if res not in lim or (res in r and r[res] != lim[res]):
                guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def render(pod, rt, node_ip, now):
    """The status fields the kubelet owns, from the runtime state (now: RFC 3339)."""
    spec = pod.get("spec") or {}
    policy = spec.get("restartPolicy") or "Always"
    init_specs = spec.get("initContainers") or []
    main_specs = spec.get("containers") or []
    inits = [(c, rt.ctr(c, True, "PodInitializing")[1]) for c in init_specs]
    mains = [(c, rt.ctr(c, False, "PodInitializing" if init_specs else
                        "ContainerCreating")[1]) for c in main_specs]
    pending_init = [x.name for _, x in inits
                    if not (x.terminated and x.state["terminated"]["exitCode"] == 0)]
    init_failed = policy == "Never" and any(
        x.terminated and x.state["terminated"]["exitCode"] != 0 for _, x in inits)
    if init_failed:
        phase = "Failed"
    elif pending_init:
        phase = "Pending"
    else:
        phase = pod_phase(policy, [x for _, x in mains])
    unready = [x.name for _, x in mains if not x.ready]

    def cond(ctype, ok, reason=None, message=None):
        c = {"type": ctype, "status": "True" if ok else "False", "lastProbeTime": None,
             "lastTransitionTime": now}
        if reason:
            c["reason"] = reason
        if message:
            c["message"] = message
        return c
    done = phase in ("Succeeded", "Failed")
    if phase == "Succeeded":
        ready = [cond(t, False, "PodCompleted") for t in ("Ready", "ContainersReady")]
    elif unready:
        msg = "containers with unready status: [%s]" % " ".join(unready)
        ready = [cond(t, False, "ContainersNotReady", msg)
                 for t in ("Ready", "ContainersReady")]
    else:
        ready = [cond("Ready", True), cond("ContainersReady", True)]
    if pending_init:
        initialized = cond("Initialized", False, "ContainersNotInitialized",
                           "containers with incomplete status: [%s]" % " ".join(pending_init))
    else:
        initialized = cond("Initialized", True, "PodCompleted" if phase == "Succeeded"
                           else None)
    status = {
        "phase": phase,
        "conditions": [cond("PodReadyToStartContainers", not done), initialized] + ready,
        "hostIP": node_ip, "hostIPs": [{"ip": node_ip}],
        "podIP": rt.ip, "podIPs": [{"ip": rt.ip}],
        "startTime": rt.start_time,
        "containerStatuses": [x.status(c) for c, x in mains],
        "qosClass": (pod.get("status") or {}).get("qosClass") or qos_class(spec),
    }
    if inits:
        status["initContainerStatuses"] = [x.status(c) for c, x in inits]
    return status

def pod_phase(policy, ctrs):
    """The pod phase from its containers, by the kubelet's getPhase rules."""
    waiting = running = stopped = succeeded = 0
    for x in ctrs:
        if x.running:
            running += 1
        elif x.terminated:
            stopped += 1
            succeeded += x.state["terminated"]["exitCode"] == 0
        elif x.last_state.get("terminated"):
            stopped += 1
        else:
            waiting += 1
    if waiting:
        return "Pending"
    if running:
        return "Running"
    if stopped:
        if policy == "Always":
            return "Running"
        if stopped == succeeded:
            return "Succeeded"
        return "Failed" if policy == "Never" else "Running"
    return "Pending"



def merge(pod, fields, start_time):
    """The pod's new status: its current one with the kubelet's fields and conditions
    replaced, every other condition (PodNeedUpgrade, PodImageReady, ...) kept as is, and
    lastTransitionTime kept where a condition's status did not change."""
    old = pod.get("status") or {}
    new = dict(old)
    new.update(fields)
    if "initContainerStatuses" not in fields:
        new.pop("initContainerStatuses", None)
    mine = {c["type"]: c for c in fields["conditions"]}
    conds = []
    for c in old.get("conditions") or []:
        t = c.get("type")
        if t not in mine:
            conds.append(c)
            continue
        m = mine.pop(t)
        if c.get("status") == m["status"]:
            m["lastTransitionTime"] = c.get("lastTransitionTime")
        conds.append(m)
    conds += list(mine.values())
    if not any(c.get("type") == "PodScheduled" for c in conds):
        conds.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                      "lastTransitionTime": (pod.get("metadata") or {}).get("creationTimestamp")
                      or start_time})
    new["conditions"] = conds
    return new
