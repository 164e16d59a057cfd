"""meta.k8s.io/v1 Table answers for `kubectl get`.

kubectl asks for `application/json;as=Table;v=v1;g=meta.k8s.io` and prints
whatever columns the server returns; without a Table it can only show NAME
and AGE. The column sets and cell values follow kubernetes
pkg/printers/internalversion/printers.go for the resources kubesim serves
(priority-1 columns are the extra ones `-o wide` shows); a custom resource's
come from its CRD (printcols.py). Ages are measured
on the simulated clock.
"""
from .clock import parse_rfc3339


def human_duration(seconds):
    """k8s.io/apimachinery/pkg/util/duration.HumanDuration."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return "%ds" % s
    minutes = s // 60
    if minutes < 10:
        return "%dm" % minutes if s % 60 == 0 else "%dm%ds" % (minutes, s % 60)
    if minutes < 180:
        return "%dm" % minutes
    hours = s // 3600
    if hours < 8:
        return "%dh" % hours if minutes % 60 == 0 else "%dh%dm" % (hours, minutes % 60)
    if hours < 48:
        return "%dh" % hours
    if hours < 24 * 8:
        return "%dd" % (hours // 24) if hours % 24 == 0 else "%dd%dh" % (hours // 24, hours % 24)
    if hours < 24 * 365 * 2:
        return "%dd" % (hours // 24)
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return "%dy" % (hours // 24 // 365) if dy == 0 else "%dy%dd" % (hours // 24 // 365, dy)
    return "%dy" % (hours // 24 // 365)


def _since(now, ts):
    if not ts:
        return "<unknown>"
    try:
        return human_duration(now - parse_rfc3339(ts))
    except (ValueError, TypeError):
        return "<unknown>"


def _col(name, typ="string", fmt="", prio=0, desc=""):
    return {"name": name, "type": typ, "format": fmt, "description": desc or name, "priority": prio}


NAME = _col("Name", fmt="name", desc="Name must be unique within a namespace.")
AGE = _col("Age", desc="CreationTimestamp is a timestamp representing the server time when this object was "
           "created.")


def _pod_status(pod):
    """The STATUS column: kubectl's printPod logic, simplified to the cases kubesim produces."""
    st = pod.get("status") or {}
    spec = pod.get("spec") or {}
    reason = st.get("reason") or st.get("phase") or ""
    initializing = False
    inits = spec.get("initContainers") or []
    for i, cs in enumerate(st.get("initContainerStatuses") or []):
        state = cs.get("state") or {}
        term = state.get("terminated")
        wait = state.get("waiting")
        if term and term.get("exitCode") == 0:
            continue
        if term:
            reason = "Init:" + (term.get("reason") or ("Signal:%d" % term["signal"] if term.get("signal")
                                                       else "ExitCode:%d" % term.get("exitCode", 0)))
        elif wait and wait.get("reason") and wait["reason"] != "PodInitializing":
            reason = "Init:" + wait["reason"]
        else:
            reason = "Init:%d/%d" % (i, len(inits))
        initializing = True
        break
    if not initializing:
        has_running = False
        for cs in reversed(st.get("containerStatuses") or []):
            state = cs.get("state") or {}
            if (state.get("waiting") or {}).get("reason"):
                reason = state["waiting"]["reason"]
            elif (state.get("terminated") or {}).get("reason"):
                reason = state["terminated"]["reason"]
            elif state.get("terminated"):
                t = state["terminated"]
                reason = "Signal:%d" % t["signal"] if t.get("signal") else "ExitCode:%d" % t.get("exitCode", 0)
            elif state.get("running") and cs.get("ready"):
                has_running = True
        if reason == "Completed" and has_running:
            reason = "Running"
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        reason = "Unknown" if st.get("reason") == "NodeLost" else "Terminating"
    return reason


def _pod_row(o, now):
    st = o.get("status") or {}
    spec = o.get("spec") or {}
    css = st.get("containerStatuses") or []
    ready = sum(1 for c in css if c.get("ready"))
    total = len(spec.get("containers") or [])
    restarts = sum(int(c.get("restartCount") or 0) for c in css)
    gates = spec.get("readinessGates") or []
    gate_cell = "<none>"
    if gates:
        conds = {c.get("type"): c.get("status") for c in st.get("conditions") or []}
        gate_cell = "%d/%d" % (sum(1 for g in gates if conds.get(g.get("conditionType")) == "True"), len(gates))
    return [o["metadata"]["name"], "%d/%d" % (ready, total), _pod_status(o), restarts,
            _since(now, o["metadata"].get("creationTimestamp")),
            st.get("podIP") or "<none>", spec.get("nodeName") or "<none>",
            st.get("nominatedNodeName") or "<none>", gate_cell]


def _node_row(o, now):
    st = o.get("status") or {}
    conds = {c.get("type"): c.get("status") for c in st.get("conditions") or []}
    status = "Ready" if conds.get("Ready") == "True" else ("NotReady" if "Ready" in conds else "Unknown")
    if (o.get("spec") or {}).get("unschedulable"):
        status += ",SchedulingDisabled"
    roles = sorted(k.split("/", 1)[1] for k in (o["metadata"].get("labels") or {})
                   if k.startswith("node-role.kubernetes.io/") and "/" in k)
    info = st.get("nodeInfo") or {}
    addr = {a.get("type"): a.get("address") for a in st.get("addresses") or []}
    return [o["metadata"]["name"], status, ",".join(roles) or "<none>",
            _since(now, o["metadata"].get("creationTimestamp")), info.get("kubeletVersion", ""),
            addr.get("InternalIP") or "<none>", addr.get("ExternalIP") or "<none>", info.get("osImage", ""),
            info.get("kernelVersion", ""), info.get("containerRuntimeVersion", "")]


def _selector_str(sel):
    if not sel:
        return "<none>"
    parts = ["%s=%s" % kv for kv in sorted((sel.get("matchLabels") or {}).items())]
    for e in sel.get("matchExpressions") or []:
        op = e.get("operator")
        if op == "In":
            parts.append("%s in (%s)" % (e["key"], ",".join(e.get("values") or [])))
        elif op == "NotIn":
            parts.append("%s notin (%s)" % (e["key"], ",".join(e.get("values") or [])))
        elif op == "Exists":
            parts.append(e["key"])
        else:
            parts.append("!" + e["key"])
    return ",".join(parts) or "<none>"


def _containers(tpl):
    cs = ((tpl or {}).get("spec") or {}).get("containers") or []
    return ",".join(c.get("name", "") for c in cs), ",".join(c.get("image", "") for c in cs)


def _ds_row(o, now):
    st = o.get("status") or {}
    spec = o.get("spec") or {}
    ns = (spec.get("template") or {}).get("spec", {}).get("nodeSelector") or {}
    names, images = _containers(spec.get("template"))
    return [o["metadata"]["name"], st.get("desiredNumberScheduled", 0), st.get("currentNumberScheduled", 0),
            st.get("numberReady", 0), st.get("updatedNumberScheduled", 0), st.get("numberAvailable", 0),
            ",".join("%s=%s" % kv for kv in sorted(ns.items())) or "<none>",
            _since(now, o["metadata"].get("creationTimestamp")), names, images, _selector_str(spec.get("selector"))]


def _job_row(o, now):
    st = o.get("status") or {}
    spec = o.get("spec") or {}
    conds = {c.get("type"): c.get("status") for c in st.get("conditions") or []}
    if conds.get("Complete") == "True":
        status = "Complete"
    elif conds.get("Failed") == "True":
        status = "Failed"
    elif conds.get("FailureTarget") == "True":
        status = "FailureTarget"
    elif conds.get("SuccessCriteriaMet") == "True":
        status = "SuccessCriteriaMet"
    elif spec.get("suspend"):
        status = "Suspended"
    else:
        status = "Running"
    comp = spec.get("completions")
    completions = "%d/%d" % (st.get("succeeded", 0), comp) if comp is not None else \
        "%d/1 of %d" % (st.get("succeeded", 0), spec.get("parallelism", 1))
    start, end = st.get("startTime"), st.get("completionTime")
    if not start:
        duration = ""
    else:
        try:
            duration = human_duration((parse_rfc3339(end) if end else now) - parse_rfc3339(start))
        except (TypeError, ValueError):
            duration = ""
    names, images = _containers(spec.get("template"))
    return [o["metadata"]["name"], status, completions, duration,
            _since(now, o["metadata"].get("creationTimestamp")), names, images,
            _selector_str(spec.get("selector"))]


def _event_row(o, now):
    io = o.get("involvedObject") or {}
    last = o.get("lastTimestamp") or o.get("eventTime") or (o.get("series") or {}).get("lastObservedTime")
    first = o.get("firstTimestamp") or o.get("eventTime")
    src = o.get("source") or {}
    source = src.get("component", "") + (", " + src["host"] if src.get("host") else "")
    if not source:
        source = o.get("reportingComponent", "")
    return [_since(now, last), o.get("type", ""), o.get("reason", ""),
            "%s/%s" % ((io.get("kind") or "").lower(), io.get("name", "")), io.get("fieldPath", ""),
            source, (o.get("message") or "").strip(), _since(now, first), o.get("count") or 1,
            o["metadata"]["name"]]


def _cr_row(o, now):
    owner = next((r for r in o["metadata"].get("ownerReferences") or [] if r.get("controller")), None)
    ctl = "<none>" if owner is None else "%s.%s/%s" % (
        owner.get("kind", "").lower(), owner.get("apiVersion", "").split("/")[0] if "/" in
        owner.get("apiVersion", "") else "", owner.get("name", ""))
    if owner is not None and "/" not in owner.get("apiVersion", ""):
        ctl = "%s/%s" % (owner.get("kind", "").lower(), owner.get("name", ""))
    return [o["metadata"]["name"], ctl, o.get("revision", 0), _since(now, o["metadata"].get("creationTimestamp"))]


def _simple(extra):
    def row(o, now):
        return [o["metadata"]["name"]] + [f(o) for f in extra] + \
            [_since(now, o["metadata"].get("creationTimestamp"))]
    return row


COLUMNS = {
    "pods": ([NAME, _col("Ready"), _col("Status"), _col("Restarts", "string"), AGE,
              _col("IP", prio=1), _col("Node", prio=1), _col("Nominated Node", prio=1),
              _col("Readiness Gates", prio=1)], _pod_row),
    "nodes": ([NAME, _col("Status"), _col("Roles"), AGE, _col("Version"), _col("Internal-IP", prio=1),
               _col("External-IP", prio=1), _col("OS-Image", prio=1), _col("Kernel-Version", prio=1),
               _col("Container-Runtime", prio=1)], _node_row),
    "daemonsets": ([NAME, _col("Desired", "integer"), _col("Current", "integer"), _col("Ready", "integer"),
                    _col("Up-to-date", "integer"), _col("Available", "integer"), _col("Node Selector"), AGE,
                    _col("Containers", prio=1), _col("Images", prio=1), _col("Selector", prio=1)], _ds_row),
    "jobs": ([NAME, _col("Status"), _col("Completions"), _col("Duration"), AGE, _col("Containers", prio=1),
              _col("Images", prio=1), _col("Selector", prio=1)], _job_row),
    "events": ([_col("Last Seen"), _col("Type"), _col("Reason"), _col("Object"), _col("Subobject", prio=1),
                _col("Source", prio=1), _col("Message"), _col("First Seen", prio=1),
                _col("Count", "integer", prio=1), _col("Name", prio=1)], _event_row),
    "controllerrevisions": ([NAME, _col("Controller"), _col("Revision", "integer"), AGE], _cr_row),
    "namespaces": ([NAME, _col("Status"), AGE],
                   _simple([lambda o: (o.get("status") or {}).get("phase", "")])),
    "secrets": ([NAME, _col("Type"), _col("Data", "integer"), AGE],
                _simple([lambda o: o.get("type", ""), lambda o: len(o.get("data") or {})])),
    "configmaps": ([NAME, _col("Data", "integer"), AGE],
                   _simple([lambda o: len(o.get("data") or {}) + len(o.get("binaryData") or {})])),
    "serviceaccounts": ([NAME, _col("Secrets", "integer"), AGE], _simple([lambda o: len(o.get("secrets") or [])])),
    "leases": ([NAME, _col("Holder"), AGE],
               _simple([lambda o: (o.get("spec") or {}).get("holderIdentity", "")])),
    "mutatingwebhookconfigurations": ([NAME, _col("Webhooks", "integer"), AGE],
                                      _simple([lambda o: len(o.get("webhooks") or [])])),
    "validatingwebhookconfigurations": ([NAME, _col("Webhooks", "integer"), AGE],
                                        _simple([lambda o: len(o.get("webhooks") or [])])),
    "customresourcedefinitions": ([NAME, _col("Created At", "date")],
                                  lambda o, now: [o["metadata"]["name"], o["metadata"].get("creationTimestamp")]),
}


def _row_object(o, include):
    if include == "None":
        return None
    if include == "Object":
        return o
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": o.get("metadata")}


def to_table(res, body, now, include="Metadata", headers=True):
    """An object or a list of resource `res` (a discovery.Resource) -> Table.
    include: None | Metadata | Object. A custom resource's columns are its version's
    additionalPrinterColumns (printcols.py)."""
    if res.crd is not None:
        from . import printcols
        pcs = res.crd.columns
        cols, rowfn = printcols.column_definitions(pcs), lambda o, t: printcols.row_cells(pcs, o, t)
    else:
        cols, rowfn = COLUMNS.get(res.key, ([NAME, AGE], _simple([])))
    items = body.get("items") if isinstance(body.get("items"), list) else [body]
    rows = []
    for o in items:
        row = {"cells": rowfn(o, now)}
        obj = _row_object(o, include)
        if obj is not None:
            row["object"] = obj
        rows.append(row)
    bmd = body.get("metadata") or {}
    md = {"resourceVersion": bmd.get("resourceVersion", "")}
    for k in ("continue", "remainingItemCount"):     # a paged list's Table pages too
        if isinstance(body.get("items"), list) and k in bmd:
            md[k] = bmd[k]
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": md,
            "columnDefinitions": cols if headers else [], "rows": rows}


def wants_table(accept):
    """True when the Accept header asks for a meta.k8s.io Table first."""
    for part in (accept or "").split(","):
        params = {}
        fields = [p.strip() for p in part.split(";")]
        for p in fields[1:]:
            if "=" in p:
                k, v = p.split("=", 1)
                params[k.strip()] = v.strip()
        if params.get("as") == "Table" and params.get("g") == "meta.k8s.io" and params.get("v") in ("v1", "v1beta1"):
            return params.get("v")
        if fields[0] in ("application/json", "*/*", "application/yaml", "application/vnd.kubernetes.protobuf"):
            if not params.get("as"):
                return None
    return None
