"""The NodeRestriction admission plugin: what a kubelet (`system:node:<name>` in
system:nodes) may write, beyond what the Node authorizer lets through.

The Node authorizer allows any node to create, update and patch Nodes, update pod
status and delete pods, because it cannot see the objects; this plugin, run before
the webhooks on every write as in kube-apiserver, looks at them: a node may modify
only its own Node object (not its taints, nor labels outside the kubelet's set), only
the status of pods bound to it (not their labels), delete only pods bound to it,
create only mirror pods bound to itself, and touch only its own Lease in
kube-node-lease. Denials are 403s worded as the apiserver's plugin words them
(`pods "x" is forbidden: node "node-1" can only ...`).
"""
from . import errors
from .authz import NODE_LEASE_NAMESPACE, node_identity, pod_configmap_names, pod_secret_names

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
# kubeletapis.IsKubeletLabel: the kubernetes.io / k8s.io labels a kubelet may set on its Node.
KUBELET_LABELS = frozenset((
    "kubernetes.io/hostname", "kubernetes.io/arch", "kubernetes.io/os",
    "beta.kubernetes.io/arch", "beta.kubernetes.io/os", "beta.kubernetes.io/instance-type",
    "node.kubernetes.io/instance-type", "failure-domain.beta.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone", "topology.kubernetes.io/region", "topology.kubernetes.io/zone"))
KUBELET_LABEL_NAMESPACES = ("kubelet.kubernetes.io", "node.kubernetes.io")


def admit(op, user, req, obj, old):
    """Raises the plugin's 403 when node user may not make this write; nothing for other users.
    op: CREATE, UPDATE or DELETE; req: the api.Request; obj/old: new and current object."""
    if not user.name.startswith("system:node:"):
        return
    node, is_node = node_identity(user)
    if not is_node:
        return
    group, resource = req.res.group, req.res.plural
    name = req.name or ((obj or {}).get("metadata") or {}).get("name", "")

    def deny(message):
        raise errors.forbidden(group, resource, name, message)

    if not node:
        deny('could not determine node from user "%s"' % user.name)
    if (group, resource) == ("", "pods"):
        _pod(node, op, req.subresource, obj, old, deny)
    elif (group, resource) == ("", "nodes"):
        _node(node, op, name, obj, old, deny)
    elif (group, resource) == ("coordination.k8s.io", "leases"):
        if req.namespace != NODE_LEASE_NAMESPACE:
            deny('can only access leases in the "%s" system namespace' % NODE_LEASE_NAMESPACE)
        if name != node:
            deny("can only access node lease with the same name as the requesting node")


def _node_name(pod):
    return ((pod or {}).get("spec") or {}).get("nodeName") or ""


def _pod(node, op, sub, obj, old, deny):
    if sub == "status":
        if op != "UPDATE":
            deny('unexpected operation "%s"' % op)
        if _node_name(old) != node:
            deny('node "%s" can only update pod status for pods with spec.nodeName set to itself' % node)
        if (((obj or {}).get("metadata") or {}).get("labels") or {}) != (old["metadata"].get("labels") or {}):
            deny('node "%s" cannot update labels through pod status' % node)
        return
    if sub:
        deny("unexpected pod subresource \"%s\", only 'status' and 'eviction' are allowed" % sub)
    if op == "DELETE":
        if _node_name(old) != node:
            deny('node "%s" can only delete pods with spec.nodeName set to itself' % node)
        return
    if op != "CREATE":
        deny('unexpected operation "%s", node "%s" can only create and delete mirror pods' % (op, node))
    md = obj.get("metadata") or {}
    if MIRROR_ANNOTATION not in (md.get("annotations") or {}):
        deny('pod does not have "%s" annotation, node "%s" can only create mirror pods' % (MIRROR_ANNOTATION, node))
    if _node_name(obj) != node:
        deny('node "%s" can only create pods with spec.nodeName set to itself' % node)
    refs = md.get("ownerReferences") or []
    if len(refs) > 1:
        deny('node "%s" can only create pods with a single owner reference set to itself' % node)
    if not refs or refs[0].get("apiVersion") != "v1" or refs[0].get("kind") != "Node" or \
            refs[0].get("name") != node:
        deny('node "%s" can only create pods with an owner reference set to itself' % node)
    if not refs[0].get("controller"):
        deny('node "%s" can only create pods with a controller owner reference set to itself' % node)
    if refs[0].get("blockOwnerDeletion"):
        deny('node "%s" must not set blockOwnerDeletion on an owner reference' % node)
    spec = obj.get("spec") or {}
    if spec.get("serviceAccountName"):
        deny('node "%s" can not create pods that reference a service account' % node)
    if pod_secret_names(obj):
        deny('node "%s" can not create pods that reference secrets' % node)
    if pod_configmap_names(obj):
        deny('node "%s" can not create pods that reference configmaps' % node)
    if any(v.get("persistentVolumeClaim") for v in spec.get("volumes") or []):
        deny('node "%s" can not create pods that reference persistentvolumeclaims' % node)


def _label_namespace(key):
    return key.split("/", 1)[0] if "/" in key else ""


def forbidden_labels(modified):
    """The labels of `modified` a kubelet may not add, change or remove (sorted)."""
    out = []
    for key in modified:
        ns = _label_namespace(key)
        if ns == "node-restriction.kubernetes.io" or ns.endswith(".node-restriction.kubernetes.io"):
            out.append(key)
            continue
        k8s = ns in ("kubernetes.io", "k8s.io") or ns.endswith((".kubernetes.io", ".k8s.io"))
        kubelet = key in KUBELET_LABELS or any(ns == n or ns.endswith("." + n) for n in KUBELET_LABEL_NAMESPACES)
        if k8s and not kubelet:
            out.append(key)
    return sorted(out)


def _modified_labels(a, b):
    a, b = a or {}, b or {}
    return {k for k in set(a) | set(b) if a.get(k) != b.get(k) or (k in a) != (k in b)}


def _node(node, op, name, obj, old, deny):
    if name != node:
        deny('node "%s" is not allowed to modify node "%s"' % (node, name))
    if op == "CREATE":
        if (obj.get("spec") or {}).get("configSource") is not None:
            deny('node "%s" is not allowed to create pods with a non-nil configSource' % node)
        bad = forbidden_labels(_modified_labels((obj.get("metadata") or {}).get("labels"), None))
        if bad:
            deny('node "%s" is not allowed to set the following labels: %s' % (node, ", ".join(bad)))
    elif op == "UPDATE":
        spec, old_spec = obj.get("spec") or {}, old.get("spec") or {}
        if spec.get("configSource") is not None and spec.get("configSource") != old_spec.get("configSource"):
            deny('node "%s" is not allowed to update configSource to a new non-nil configSource' % node)
        if (spec.get("taints") or None) != (old_spec.get("taints") or None):
            deny('node "%s" is not allowed to modify taints' % node)
        bad = forbidden_labels(_modified_labels((obj.get("metadata") or {}).get("labels"),
                                                old["metadata"].get("labels")))
        if bad:
            deny("is not allowed to modify labels: %s" % ", ".join(bad))
