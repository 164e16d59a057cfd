"""Authorization: may this user make this request? Decided as kube-apiserver 1.32
decides it with `--authorization-mode=Node,RBAC`.

A request becomes attributes (`attributes`: user, verb, API group, resource,
subresource, namespace, name, or a non-resource path; the field selector of a
list/watch/deletecollection) the way the apiserver's RequestInfoFactory makes them.
`Authorizer.authorize` then asks, in order: the `system:masters` group (always
allowed), each configured mode (the Node authorizer, RBAC), and the first that
allows wins; otherwise the request is denied with the reasons the modes gave,
joined by newlines as the apiserver's union authorizer joins them. `forbidden`
words the 403 exactly like the apiserver's.

RBAC reads Roles, ClusterRoles, RoleBindings and ClusterRoleBindings from the store.
The bindings are indexed by subject and the rules resolved once; any write to an
rbac.authorization.k8s.io object drops the index (a store subscription) and the next
check rebuilds it. Rule matching is RBAC's: `*` in verbs, apiGroups, resources;
`pods/status` names a subresource, `*/status` a subresource of any resource (there is
no `pods/*`); resourceNames match the request's name, so they never match a create or
deletecollection, nor a list or watch unless its field selector names one object
(`metadata.name=x`); nonResourceURLs match exactly or by a trailing `*` prefix.

The Node authorizer (`node_authorize`) is 1.32's with AuthorizeNodeWithSelectors on:
its own rules for nodes, pods, secrets, configmaps, serviceaccounts and leases (a
pod is "on" a node when `spec.nodeName` names it; a secret or configmap is the
node's when a pod on the node references it), the static NodeRules for the rest.
The table is in README.md.

The simulated controllers and kubelets call Api in-process and are not authorized:
they act as their real identities, whose rights the tests do not change. Only the
HTTPS/HTTP front end (server.py) asks `Authorizer.check`; SelfSubjectAccessReview
and SelfSubjectRulesReview (api.py) answer from the same evaluator.
"""
import collections
import threading

from . import errors

MODES = ("Node", "RBAC", "AlwaysAllow")
DEFAULT_MODE = "Node,RBAC"
RBAC_RESOURCES = frozenset(("roles", "rolebindings", "clusterroles", "clusterrolebindings"))
NODE_LEASE_NAMESPACE = "kube-node-lease"
READ = ("get", "list", "watch")


def parse_modes(text):
    """`--authorization-mode` -> tuple of modes; ValueError on an unknown one."""
    modes = tuple(m.strip() for m in (text or DEFAULT_MODE).split(",") if m.strip())
    for m in modes:
        if m not in MODES:
            raise ValueError("authorization mode %r is not one of %s" % (m, ", ".join(MODES)))
    if "AlwaysAllow" in modes and len(modes) > 1:
        raise ValueError("AlwaysAllow cannot be combined with other modes in kubesim")
    return modes or tuple(DEFAULT_MODE.split(","))


# ------------------------------------------------------------------ attributes
class Attributes:
    """What the apiserver's authorizers see of a request (authorizer.Attributes)."""
    __slots__ = ("user", "verb", "group", "resource", "subresource", "namespace", "name", "path",
                 "resource_request", "field_selector")

    def __init__(self, user, verb, group="", resource="", subresource="", namespace="", name="",
                 path="", resource_request=True, field_selector=""):
        self.user = user
        self.verb = verb
        self.group = group
        self.resource = resource
        self.subresource = subresource
        self.namespace = namespace
        self.name = name
        self.path = path
        self.resource_request = resource_request
        self.field_selector = field_selector

    def __repr__(self):
        if not self.resource_request:
            return "<%s %s %s>" % (self.user.name, self.verb, self.path)
        return "<%s %s %s/%s/%s ns=%r name=%r>" % (self.user.name, self.verb, self.group, self.resource,
                                                   self.subresource, self.namespace, self.name)


_METHOD_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch", "GET": "get", "HEAD": "get",
                 "DELETE": "delete"}
NAMESPACE_SUBRESOURCES = ("status", "finalize")


def attributes(user, method, path, query):
    """The apiserver's RequestInfo for METHOD PATH?QUERY: a resource request for
    /api/v1/... and /apis/<group>/<version>/... with a resource, a non-resource
    request (verb = the lower-case method) for everything else (/api, /apis/<g>/<v>,
    /version, /openapi/v3, ...). GET of a collection is list, or watch with
    watch=1|true; DELETE of a collection is deletecollection; a list or watch whose
    field selector requires `metadata.name=x` names x. /namespaces/<ns> is the
    namespace <ns> itself (its namespace attribute is <ns> too, as in the apiserver)."""
    parts = [p for p in path.split("/") if p]
    method = method.upper()
    if len(parts) < 3 or parts[0] not in ("api", "apis"):
        return Attributes(user, method.lower(), path=path or "/", resource_request=False)
    if parts[0] == "api":
        group, rest = "", parts[2:]
    else:
        if len(parts) < 4:
            return Attributes(user, method.lower(), path=path, resource_request=False)
        group, rest = parts[1], parts[3:]
    verb = _METHOD_VERBS.get(method, method.lower())
    ns = ""
    if rest[0] == "namespaces" and len(rest) > 1:
        ns = rest[1]
        if len(rest) > 2 and rest[2] not in NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    sub = rest[2] if len(rest) > 2 else ""
    fsel = ""
    if not name:
        if verb == "delete":
            verb = "deletecollection"
        elif verb == "get":
            verb = "watch" if (query or {}).get("watch") in ("1", "true") else "list"
    if verb in ("list", "watch", "deletecollection"):
        fsel = (query or {}).get("fieldSelector") or ""
        if verb != "deletecollection":
            name = exact_name(fsel) or ""
    return Attributes(user, verb, group, resource, sub, ns, name, path, True, fsel)


def field_requirements(text):
    """[(field, op, value)] of a field selector, op '=' (for = and ==) or '!='. Terms
    that do not parse are left out: they cannot grant anything."""
    out = []
    for term in (text or "").split(","):
        for op, norm in (("!=", "!="), ("==", "="), ("=", "=")):
            if op in term:
                k, v = term.split(op, 1)
                out.append((k.strip(), norm, v.strip()))
                break
    return out


def review_field_selector(attrs):
    """A SubjectAccessReview's fieldSelector attributes as a field selector string: its
    rawSelector, or its requirements (In or NotIn with one value each: = and !=; others
    cannot limit a request the Node authorizer looks at, and are left out)."""
    attrs = attrs or {}
    if attrs.get("rawSelector"):
        return attrs["rawSelector"]
    terms = []
    for r in attrs.get("requirements") or []:
        values = r.get("values") or []
        if len(values) == 1 and r.get("operator") in ("In", "NotIn"):
            terms.append("%s%s%s" % (r.get("key", ""), "=" if r["operator"] == "In" else "!=", values[0]))
    return ",".join(terms)


def exact_name(fsel):
    """The x of `metadata.name=x` in a field selector (fields.RequiresExactMatch)."""
    for k, op, v in field_requirements(fsel):
        if k == "metadata.name" and op == "=":
            return v
    return None


def forbidden_message(a):
    """The apiserver's forbiddenMessage: who could not do what, where."""
    if not a.resource_request:
        return 'User "%s" cannot %s path "%s"' % (a.user.name, a.verb, a.path)
    res = a.resource + ("/" + a.subresource if a.subresource else "")
    if a.namespace:
        return 'User "%s" cannot %s resource "%s" in API group "%s" in the namespace "%s"' % (
            a.user.name, a.verb, res, a.group, a.namespace)
    return 'User "%s" cannot %s resource "%s" in API group "%s" at the cluster scope' % (
        a.user.name, a.verb, res, a.group)


def forbidden(a, reason):
    """The 403 the apiserver answers a denied request with."""
    msg = forbidden_message(a)
    if reason:
        msg += ": " + reason
    if not a.resource_request:
        return errors.forbidden("", "", "", msg)
    return errors.forbidden(a.group, a.resource, a.name, msg)


# ------------------------------------------------------------------ RBAC rules
class Rule:
    """A PolicyRule, with sets for the cheap checks."""
    __slots__ = ("verbs", "groups", "resources", "names", "urls", "raw")

    def __init__(self, raw):
        self.raw = raw
        self.verbs = frozenset(raw.get("verbs") or ())
        self.groups = frozenset(raw.get("apiGroups") or ())
        self.resources = tuple(raw.get("resources") or ())
        self.names = frozenset(raw.get("resourceNames") or ())
        self.urls = tuple(raw.get("nonResourceURLs") or ())

    def allows(self, a):
        """rbac.RuleAllows."""
        if "*" not in self.verbs and a.verb not in self.verbs:
            return False
        if not a.resource_request:
            return any(u == "*" or u == a.path or (u.endswith("*") and a.path.startswith(u[:-1]))
                       for u in self.urls)
        if "*" not in self.groups and a.group not in self.groups:
            return False
        if not resource_matches(self.resources, a.resource, a.subresource):
            return False
        return not self.names or a.name in self.names


def resource_matches(rule_resources, resource, sub):
    """rbac's ResourceMatches: `*`, the exact `resource[/sub]`, or `*/sub`."""
    combined = resource + "/" + sub if sub else resource
    for r in rule_resources:
        if r == "*" or r == combined:
            return True
        if sub and r == "*/" + sub:
            return True
    return False


def _subject_key(s, binding_ns):
    """A binding subject as the key a user matches it by, or None when it can match no one.
    A ServiceAccount subject without a namespace is in the RoleBinding's namespace (and
    matches no one in a ClusterRoleBinding)."""
    kind, name = s.get("kind"), s.get("name", "")
    if kind == "User":
        return ("User", name)
    if kind == "Group":
        return ("Group", name)
    if kind == "ServiceAccount":
        ns = s.get("namespace") or binding_ns
        return ("User", "system:serviceaccount:%s:%s" % (ns, name)) if ns else None
    return None


def _describe_subject(s, binding_ns):
    if s.get("kind") == "ServiceAccount":
        return '%s "%s/%s"' % (s["kind"], s.get("name", ""), s.get("namespace") or binding_ns)
    return '%s "%s"' % (s.get("kind", ""), s.get("name", ""))


class _Grant:
    """One binding, as it applies to one of its subjects: its rules, or why it has none.
    order sorts ClusterRoleBindings first, then by namespace and name; index is the
    subject's place in the binding (the first subject that matches names the grant)."""
    __slots__ = ("order", "index", "source", "rules", "error")

    def __init__(self, order, index, source, rules, error):
        self.order = order
        self.index = index
        self.source = source
        self.rules = rules
        self.error = error


def user_keys(user):
    return [("User", user.name)] + [("Group", g) for g in user.groups]


class RbacIndex:
    """Every binding's grant, by subject key: cluster-wide, and per namespace."""

    def __init__(self, store):
        items = {}
        for r in RBAC_RESOURCES:
            items[r], _rv = store.list(r)
        cluster_roles = {o["metadata"]["name"]: [Rule(x) for x in o.get("rules") or []]
                         for o in items["clusterroles"]}
        roles = {(o["metadata"]["namespace"], o["metadata"]["name"]): [Rule(x) for x in o.get("rules") or []]
                 for o in items["roles"]}
        self.cluster = collections.defaultdict(list)
        self.namespaced = collections.defaultdict(list)
        for b in items["clusterrolebindings"]:
            ref = b.get("roleRef") or {}
            rules = cluster_roles.get(ref.get("name")) if ref.get("kind") == "ClusterRole" else None
            err = None if rules is not None else \
                'clusterrole.rbac.authorization.k8s.io "%s" not found' % ref.get("name", "")
            for i, s in enumerate(b.get("subjects") or []):
                key = _subject_key(s, "")
                if key is not None:
                    src = 'ClusterRoleBinding "%s" of %s "%s" to %s' % (
                        b["metadata"]["name"], ref.get("kind", ""), ref.get("name", ""), _describe_subject(s, ""))
                    self.cluster[key].append(_Grant((0, "", b["metadata"]["name"]), i, src, rules or [], err))
        for b in items["rolebindings"]:
            ns = b["metadata"]["namespace"]
            ref = b.get("roleRef") or {}
            if ref.get("kind") == "ClusterRole":
                rules = cluster_roles.get(ref.get("name"))
                err = 'clusterrole.rbac.authorization.k8s.io "%s" not found' % ref.get("name", "")
            else:
                rules = roles.get((ns, ref.get("name")))
                err = 'role.rbac.authorization.k8s.io "%s" not found' % ref.get("name", "")
            if rules is not None:
                err = None
            for i, s in enumerate(b.get("subjects") or []):
                key = _subject_key(s, ns)
                if key is not None:
                    src = 'RoleBinding "%s/%s" of %s "%s" to %s' % (
                        b["metadata"]["name"], ns, ref.get("kind", ""), ref.get("name", ""),
                        _describe_subject(s, ns))
                    self.namespaced[(ns, key)].append(_Grant((1, ns, b["metadata"]["name"]), i, src,
                                                             rules or [], err))

    def grants(self, user, namespace):
        """The bindings that apply to user in namespace ('' = cluster-wide only), each once:
        ClusterRoleBindings first, then the namespace's RoleBindings, each by name."""
        keys = user_keys(user)
        found = {}
        for table, prefix in ((self.cluster, None), (self.namespaced, namespace)):
            if table is self.namespaced and not namespace:
                break
            for k in keys:
                for g in table.get(k if prefix is None else (prefix, k), ()):
                    cur = found.get(g.order)
                    if cur is None or g.index < cur.index:
                        found[g.order] = g
        return [found[o] for o in sorted(found)]


def _aggregate(errs):
    """utilerrors.NewAggregate(errs).Error()."""
    return errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"


# ------------------------------------------------------------ the Node authorizer
def _rule(verbs, groups, resources=(), urls=()):
    r = {"verbs": list(verbs)}
    if urls:
        r["nonResourceURLs"] = list(urls)
    else:
        r["apiGroups"] = list(groups)
        r["resources"] = list(resources)
    return r


# bootstrappolicy.NodeRules() of 1.32 with the default feature gates (no DRA, no
# ClusterTrustBundle projection): the static rules the Node authorizer applies to
# what it does not subdivide, and the rules of the system:node ClusterRole.
NODE_RULES = [
    _rule(["create"], ["authentication.k8s.io"], ["tokenreviews"]),
    _rule(["create"], ["authorization.k8s.io"], ["subjectaccessreviews", "localsubjectaccessreviews"]),
    _rule(READ, [""], ["services"]),
    _rule(["create", "get", "list", "watch"], [""], ["nodes"]),
    _rule(["update", "patch"], [""], ["nodes/status"]),
    _rule(["update", "patch"], [""], ["nodes"]),
    _rule(["create", "update", "patch"], [""], ["events"]),
    _rule(READ, [""], ["pods"]),
    _rule(["create", "delete"], [""], ["pods"]),
    _rule(["update", "patch"], [""], ["pods/status"]),
    _rule(["create"], [""], ["pods/eviction"]),
    _rule(READ, [""], ["secrets", "configmaps"]),
    _rule(["get"], [""], ["persistentvolumeclaims", "persistentvolumes"]),
    _rule(["get"], [""], ["endpoints"]),
    _rule(["create", "get", "list", "watch"], ["certificates.k8s.io"], ["certificatesigningrequests"]),
    _rule(["get", "create", "update", "patch", "delete"], ["coordination.k8s.io"], ["leases"]),
    _rule(["get"], ["storage.k8s.io"], ["volumeattachments"]),
    _rule(["create"], [""], ["serviceaccounts/token"]),
    _rule(["get", "update", "patch"], [""], ["persistentvolumeclaims/status"]),
    _rule(["get", "watch", "list"], ["storage.k8s.io"], ["csidrivers"]),
    _rule(["get", "create", "update", "patch", "delete"], ["storage.k8s.io"], ["csinodes"]),
    _rule(READ, ["node.k8s.io"], ["runtimeclasses"]),
]
_NODE_STATIC = [Rule(r) for r in NODE_RULES]


def node_identity(user):
    """(node name, is a node): `system:node:<name>` in group system:nodes."""
    if not user.name.startswith("system:node:") or "system:nodes" not in user.groups:
        return "", False
    return user.name[len("system:node:"):], True


def pod_secret_names(pod):
    """Every secret a pod references, as the Node authorizer's graph records them."""
    spec = pod.get("spec") or {}
    names = [s.get("name") for s in spec.get("imagePullSecrets") or []]
    for c in _containers(spec):
        for e in c.get("envFrom") or []:
            names.append((e.get("secretRef") or {}).get("name"))
        for e in c.get("env") or []:
            names.append(((e.get("valueFrom") or {}).get("secretKeyRef") or {}).get("name"))
    for v in spec.get("volumes") or []:
        names.append((v.get("secret") or {}).get("secretName"))
        for src in (v.get("projected") or {}).get("sources") or []:
            names.append((src.get("secret") or {}).get("name"))
        names.append((v.get("azureFile") or {}).get("secretName"))
        for kind in ("cephfs", "cinder", "flexVolume", "iscsi", "rbd", "scaleIO", "storageos"):
            names.append(((v.get(kind) or {}).get("secretRef") or {}).get("name"))
        names.append(((v.get("csi") or {}).get("nodePublishSecretRef") or {}).get("name"))
    return {n for n in names if n}


def pod_configmap_names(pod):
    """Every configmap a pod references (env, envFrom, volumes, projected volumes)."""
    spec = pod.get("spec") or {}
    names = []
    for c in _containers(spec):
        for e in c.get("envFrom") or []:
            names.append((e.get("configMapRef") or {}).get("name"))
        for e in c.get("env") or []:
            names.append(((e.get("valueFrom") or {}).get("configMapKeyRef") or {}).get("name"))
    for v in spec.get("volumes") or []:
        names.append((v.get("configMap") or {}).get("name"))
        for src in (v.get("projected") or {}).get("sources") or []:
            names.append((src.get("configMap") or {}).get("name"))
    return {n for n in names if n}


def _containers(spec):
    return (spec.get("initContainers") or []) + (spec.get("containers") or []) + \
        (spec.get("ephemeralContainers") or [])


class NodeGraph:
    """What the Node authorizer's graph answers, read from the store when asked: is this
    pod, secret, configmap or service account related to this node through a pod bound
    to it?"""

    def __init__(self, store):
        self.store = store

    def _pods_on(self, node, ns):
        with self.store.lock:
            return [o for (n, _), o in self.store.by_resource["pods"].items()
                    if n == ns and (o.get("spec") or {}).get("nodeName") == node]

    def related(self, node, kind, ns, name):
        if kind == "pod":
            with self.store.lock:
                o = self.store.by_resource["pods"].get((ns, name))
            return o is not None and (o.get("spec") or {}).get("nodeName") == node
        pods = self._pods_on(node, ns)
        if kind == "secret":
            return any(name in pod_secret_names(p) for p in pods)
        if kind == "configmap":
            return any(name in pod_configmap_names(p) for p in pods)
        if kind == "serviceaccount":
            return any(((p.get("spec") or {}).get("serviceAccountName") or "default") == name for p in pods)
        return False


def _no_relationship(node):
    return "no relationship found between node '%s' and this object" % node


def node_authorize(graph, a):
    """(allowed, reason) of the 1.32 Node authorizer (AuthorizeNodeWithSelectors on)."""
    node, is_node = node_identity(a.user)
    if not is_node:
        return False, ""
    if not node:
        return False, 'unknown node for user "%s"' % a.user.name
    if a.resource_request:
        gr = (a.group, a.resource)
        if gr == ("", "secrets"):
            return _read_namespaced(graph, node, "secret", a)
        if gr == ("", "configmaps"):
            return _read_namespaced(graph, node, "configmap", a)
        if gr == ("", "serviceaccounts"):
            return _create_token(graph, node, a)
        if gr == ("coordination.k8s.io", "leases"):
            return _lease(node, a)
        if gr == ("", "nodes"):
            return _node(node, a)
        if gr == ("", "pods"):
            return _pod(graph, node, a)
    return any(r.allows(a) for r in _NODE_STATIC), ""


def _related(graph, node, kind, a):
    if not a.name:
        return False, "No Object name found"
    if graph.related(node, kind, a.namespace, a.name):
        return True, ""
    return False, _no_relationship(node)


def _read_namespaced(graph, node, kind, a):
    if a.verb not in READ:
        return False, "can only read resources of this type"
    if a.subresource:
        return False, "cannot read subresource"
    if not a.namespace:
        return False, "can only read namespaced object of this type"
    return _related(graph, node, kind, a)


def _create_token(graph, node, a):
    if a.verb != "create" or not a.name:
        return False, "can only create tokens for individual service accounts"
    if a.subresource != "token":
        return False, "can only create token subresource of serviceaccount"
    if graph.related(node, "serviceaccount", a.namespace, a.name):
        return True, ""
    return False, _no_relationship(node)


def _lease(node, a):
    if a.verb not in ("get", "create", "update", "patch", "delete"):
        return False, "can only get, create, update, patch, or delete a node lease"
    if a.namespace != NODE_LEASE_NAMESPACE:
        return False, 'can only access leases in the "%s" system namespace' % NODE_LEASE_NAMESPACE
    if a.verb != "create" and a.name != node:
        return False, "can only access node lease with the same name as the requesting node"
    return True, ""


def _node(node, a):
    if not a.subresource:
        if a.verb in ("create", "update", "patch"):
            return True, ""       # NodeRestriction limits these to the node's own object
        if a.verb in READ:
            if a.name == node:
                return True, ""
            if not a.name:
                return False, "node '%s' cannot read all nodes, only its own Node object" % node
            return False, "node '%s' cannot read '%s', only its own Node object" % (node, a.name)
    elif a.subresource == "status" and a.verb in ("update", "patch"):
        return True, ""
    return False, ""


def _pod(graph, node, a):
    if not a.subresource:
        if a.verb == "get":
            return _related(graph, node, "pod", a)
        if a.verb in ("list", "watch"):
            for k, op, v in field_requirements(a.field_selector):
                if k == "spec.nodeName" and op == "=" and v == node:
                    return True, ""
            if a.name:
                return _related(graph, node, "pod", a)
            return False, "can only list/watch pods with spec.nodeName field selector"
        if a.verb in ("create", "delete"):
            return True, ""       # NodeRestriction: mirror pods, pods bound to the node
    elif a.subresource == "status" and a.verb in ("update", "patch"):
        return True, ""
    elif a.subresource == "eviction" and a.verb == "create":
        return True, ""
    return False, ""


# ------------------------------------------------------------------ the chain
class Authorizer:
    """The authorization chain of one kubesim: system:masters, then the modes in order."""

    def __init__(self, store, mode=DEFAULT_MODE):
        self.store = store
        self.modes = parse_modes(mode)
        self.graph = NodeGraph(store)
        self._index = None
        self._generation = 0
        self._lock = threading.Lock()
        if not self.always_allow:
            store.subscribe(self._on_write, copy=False)

    @property
    def always_allow(self):
        return self.modes == ("AlwaysAllow",)

    def _on_write(self, _type, resource, _obj):
        if resource in RBAC_RESOURCES:
            with self._lock:
                self._generation += 1
                self._index = None

    def rbac_index(self):
        idx = self._index
        if idx is not None:
            return idx
        with self._lock:
            gen = self._generation
        idx = RbacIndex(self.store)
        with self._lock:
            if gen == self._generation:
                self._index = idx
        return idx

    def rbac_authorize(self, a):
        """(allowed, reason) of the RBAC authorizer."""
        errs = []
        for g in self.rbac_index().grants(a.user, a.namespace):
            if g.error:
                errs.append(g.error)
                continue
            for r in g.rules:
                if r.allows(a):
                    return True, "RBAC: allowed by %s" % g.source
        return False, ("RBAC: %s" % _aggregate(errs)) if errs else ""

    def authorize(self, a):
        """(allowed, reason) for request attributes a."""
        if self.always_allow or "system:masters" in a.user.groups:
            return True, ""
        reasons = []
        for mode in self.modes:
            ok, reason = node_authorize(self.graph, a) if mode == "Node" else self.rbac_authorize(a)
            if ok:
                return True, reason
            if reason:
                reasons.append(reason)
        return False, "\n".join(reasons)

    def check(self, user, method, path, query):
        """Raises the apiserver's 403 when user may not make this request."""
        if self.always_allow or "system:masters" in user.groups:
            return
        a = attributes(user, method, path, query)
        ok, reason = self.authorize(a)
        if not ok:
            raise forbidden(a, reason)

    def rules_for(self, user, namespace):
        """SelfSubjectRulesReview's status: the RBAC rules that apply in namespace, and
        whether the list is incomplete (a node: the Node authorizer cannot list its rules)."""
        resource_rules, non_resource_rules, errs = [], [], []
        incomplete = False
        if self.always_allow:
            return ([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                    [{"verbs": ["*"], "nonResourceURLs": ["*"]}], False, "")
        if "Node" in self.modes and node_identity(user)[1]:
            incomplete = True
            errs.append("node authorizer does not support user rule resolution")
        if "RBAC" in self.modes:
            for g in self.rbac_index().grants(user, namespace):
                if g.error:
                    errs.append(g.error)
                for r in g.rules:
                    raw = r.raw
                    if raw.get("nonResourceURLs"):
                        non_resource_rules.append({"verbs": list(raw.get("verbs") or []),
                                                   "nonResourceURLs": list(raw["nonResourceURLs"])})
                    else:
                        rr = {"verbs": list(raw.get("verbs") or []), "apiGroups": list(raw.get("apiGroups") or []),
                              "resources": list(raw.get("resources") or [])}
                        if raw.get("resourceNames"):
                            rr["resourceNames"] = list(raw["resourceNames"])
                        resource_rules.append(rr)
        return resource_rules, non_resource_rules, incomplete, _aggregate(errs) if errs else ""
