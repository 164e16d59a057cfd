"""Which nodes a DaemonSet's pod fits, as the DaemonSet controller decides it.

A node fits when the pod's nodeSelector and required node affinity match the node, and the
pod tolerates the node's NoSchedule and NoExecute taints. A pod already on a node may stay
while it tolerates the NoExecute taints and the selectors still match. The DaemonSet
controller adds the tolerations in DAEMON_TOLERATIONS to every pod it creates, so those
node conditions never keep daemons away.
"""

DAEMON_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
]


def tolerates(toleration, taint):
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    op = toleration.get("operator") or "Equal"
    if not toleration.get("key"):
        return op == "Exists"
    if toleration["key"] != taint.get("key"):
        return False
    return op == "Exists" or (toleration.get("value") or "") == (taint.get("value") or "")


def _expression_matches(expr, values_of):
    op, key, values = expr.get("operator"), expr.get("key"), expr.get("values") or []
    have = values_of(key)
    if op == "In":
        return have is not None and have in values
    if op == "NotIn":
        return have is None or have not in values
    if op == "Exists":
        return have is not None
    if op == "DoesNotExist":
        return have is None
    if op in ("Gt", "Lt") and have is not None and values:
        try:
            a, b = int(have), int(values[0])
        except ValueError:
            return False
        return a > b if op == "Gt" else a < b
    return False


def _selectors_match(pod_spec, node):
    labels = (node.get("metadata") or {}).get("labels") or {}
    for k, v in (pod_spec.get("nodeSelector") or {}).items():
        if labels.get(k) != v:
            return False
    required = (((pod_spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = required.get("nodeSelectorTerms")
    if not terms:
        return True
    fields = {"metadata.name": (node.get("metadata") or {}).get("name")}
    for term in terms:
        if not term.get("matchExpressions") and not term.get("matchFields"):
            continue
        if all(_expression_matches(e, labels.get) for e in term.get("matchExpressions") or []) \
                and all(_expression_matches(e, fields.get) for e in term.get("matchFields") or []):
            return True
    return False


def _untolerated(pod_spec, node, effects):
    tolerations = (pod_spec.get("tolerations") or []) + DAEMON_TOLERATIONS
    return [t for t in (node.get("spec") or {}).get("taints") or []
            if t.get("effect") in effects and not any(tolerates(x, t) for x in tolerations)]


def should_run(pod_spec, node):
    """A new daemon pod may be placed on node."""
    return _selectors_match(pod_spec, node) and not _untolerated(
        pod_spec, node, ("NoSchedule", "NoExecute"))


def should_continue_running(pod_spec, node):
    """A daemon pod already on node may stay."""
    return _selectors_match(pod_spec, node) and not _untolerated(pod_spec, node, ("NoExecute",))
