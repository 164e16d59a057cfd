"""The API: one request in, one response out, without HTTP.

`Api.call(user, method, path, body, query, content_type)` routes a normal API
path to the resource catalogue (discovery.py), then runs the request the way
kube-apiserver's handlers do: decode (with fieldValidation), default, mutating
admission, validate, validating admission, write with optimistic concurrency
(store.py), answer with the object or a `Status`. The HTTPS server
(server.py) adds authentication, content negotiation (Tables), watches and
fault injection around it; the simulated controllers (kubesim.sim) call it
in-process with their own identities. Authorization (authz.py) is asked by the
front end only, so in-process callers act unchecked, as the cluster's own components
would; NodeRestriction (noderestriction.py) runs first in admission for everyone.
"""
import base64
import copy
import json
import random
import threading
import uuid

from . import authz
from . import crd as crdmod
from . import defaults, discovery, errors, noderestriction, patch, policy, schemas, selectors, structural
from .store import Store


class User:
    def __init__(self, name, groups=None, uid="", extra=None):
        self.name = name
        self.groups = list(groups or [])
        self.uid = uid
        self.extra = extra or {}

    def info(self):
        d = {"username": self.name, "groups": list(self.groups)}
        if self.uid:
            d["uid"] = self.uid
        if self.extra:
            d["extra"] = self.extra
        return d

    def __repr__(self):
        return "User(%r, %r)" % (self.name, self.groups)


SA_GROUPS = ["system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"]
SYSTEM_DS_CONTROLLER = User("system:serviceaccount:kube-system:daemon-set-controller", SA_GROUPS)
SYSTEM_JOB_CONTROLLER = User("system:serviceaccount:kube-system:job-controller", SA_GROUPS)
SYSTEM_GC = User("system:serviceaccount:kube-system:generic-garbage-collector", SA_GROUPS)
SYSTEM_ADMIN = User("kubernetes-admin", ["system:masters", "system:authenticated"])


def node_user(node):
    return User("system:node:%s" % node, ["system:nodes", "system:authenticated"])


class Request:
    """A parsed API path: resource, namespace, name, subresource."""

    def __init__(self, res, namespace, name, subresource):
        self.res = res
        self.namespace = namespace
        self.name = name
        self.subresource = subresource

    @property
    def resource(self):
        return self.res.plural

    @property
    def key(self):
        """Where the objects are in the store (a custom resource's plural is not unique)."""
        return self.res.key


def parse_path(path, registry=None):
    """Returns ('resource', Request) for resource paths, or (None, None). registry: the
    Api's (built-ins and custom resources); without one, built-ins only."""
    path = path.split("?", 1)[0].rstrip("/")
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 2 and parts[0] == "api" and parts[1] == "v1":
        group, version, rest = "", "v1", parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None, None
    if not rest:
        return None, None
    ns = None
    if rest[0] == "namespaces" and len(rest) >= 3 and group == "" or \
            rest[0] == "namespaces" and len(rest) >= 3 and group != "":
        # /namespaces/{ns}/{resource}... unless it is the namespace's own status
        if not (group == "" and len(rest) == 3 and rest[2] in ("status", "finalize")):
            ns, rest = rest[1], rest[2:]
    res = (registry or discovery.Registry()).lookup(group, version, rest[0])
    if res is None:
        raise errors.ApiError(404, "NotFound", "the server could not find the requested resource")
    if ns is not None and not res.namespaced:
        raise errors.ApiError(404, "NotFound", "the server could not find the requested resource")
    name = rest[1] if len(rest) > 1 else None
    sub = rest[2] if len(rest) > 2 else None
    if len(rest) > 3 or (sub is not None and sub not in res.subresources):
        raise errors.ApiError(404, "NotFound", "the server could not find the requested resource")
    return "resource", Request(res, ns, name, sub)


REVIEWS = ("selfsubjectreviews", "selfsubjectaccessreviews", "selfsubjectrulesreviews")
_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"


def write_precondition(expect, new_rv, cur_rv):
    """The resourceVersion an update must still find, or None when it has none
    (then a write that raced it is retried from a fresh read, as the
    apiserver's GuaranteedUpdate does).

    expect is the request's own precondition (a PUT body's, or the
    metadata.resourceVersion at the top of a patch body). Otherwise the
    resourceVersion of the object the write produced is one only when the
    write changed it (a JSON patch of /metadata/resourceVersion): a patch
    that did not touch it just carries the current one along, and must not
    turn a concurrent writer into a 409 for its client."""
    if expect:
        return expect
    if new_rv and new_rv != cur_rv:
        return new_rv
    return None


def _options(kind, query):
    """The request options as admission sees them (PATCH arrives as UpdateOptions)."""
    o = {"kind": kind, "apiVersion": "meta.k8s.io/v1"}
    if query.get("fieldManager"):
        o["fieldManager"] = query["fieldManager"]
    if query.get("dryRun"):
        o["dryRun"] = [query["dryRun"]]
    if query.get("fieldValidation"):
        o["fieldValidation"] = query["fieldValidation"]
    return o


MAX_CONTINUE = 8192      # bytes of a continue token kubesim decodes
FOREGROUND_FINALIZER = "foregroundDeletion"


def parse_limit(text):
    """The `limit` query parameter: 0 (no limit) when absent, empty, zero or negative, as
    the apiserver reads it; 400 when it is not a number."""
    if text in (None, ""):
        return 0
    try:
        n = int(text)
    except ValueError:
        raise errors.bad_request('invalid limit: "%s"' % text)
    return max(n, 0)


def encode_continue(rv, key):
    """The apiserver's continue token: base64url (unpadded) of
    {"v":"meta.k8s.io/v1","rv":<rv>,"start":"<namespace>/<name>\\u0000"} (start is the
    first key after the last one returned)."""
    start = ("%s/%s" % key if key[0] else key[1]) + "\x00"
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": start}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_continue(token):
    """(resourceVersion, key after which to go on) of a continue token; 400 with the
    apiserver's "continue key is not valid" when it is not one kubesim made."""
    def bad(why):
        return errors.bad_request("continue key is not valid: %s" % why)
    if len(token) > MAX_CONTINUE:
        raise bad("longer than %d bytes" % MAX_CONTINUE)
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        doc = json.loads(raw)
    except (ValueError, TypeError):
        raise bad("not base64-encoded JSON")
    if not isinstance(doc, dict) or doc.get("v") != "meta.k8s.io/v1":
        raise bad("unknown version")
    rv, start = doc.get("rv"), doc.get("start")
    if not isinstance(rv, int) or isinstance(rv, bool) or rv <= 0:
        raise bad("incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
    if not isinstance(start, str) or not start.endswith("\x00"):
        raise bad("unknown start key")
    ns, sep, name = start[:-1].partition("/")
    return rv, (ns, name) if sep else ("", ns)


class Api:
    def __init__(self, clock, admission=None, store=None, authorization=authz.DEFAULT_MODE,
                 feature_gates=None):
        self.clock = clock
        # run --feature-gates: {"ImageVolume": bool, ...} (defaults.FEATURE_GATES)
        self.feature_gates = dict(defaults.FEATURE_GATES, **(feature_gates or {}))
        self.store = store or Store()
        self.admission = admission      # object with .admit(...) or None
        self.registry = discovery.Registry()
        self.foreground_gc = False      # a garbage collector finishes foreground deletions (sim/gc.py)
        self.crd_lock = threading.Lock()
        self.authz = authz.Authorizer(self.store, authorization)
        self.local = threading.local()
        self._bootstrap()

    def _bootstrap(self):
        for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
            self.call(SYSTEM_ADMIN, "POST", "/api/v1/namespaces",
                      {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        for role in policy.cluster_roles():
            self.call(SYSTEM_ADMIN, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", role)
        for binding in policy.cluster_role_bindings():
            self.call(SYSTEM_ADMIN, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", binding)

    # ------------------------------------------------------------ interface
    def subscribe(self, callback, copy=True):
        self.store.subscribe(callback, copy)

    def call(self, user, method, path, body=None, query=None, content_type="application/json"):
        status, out, _warnings = self.call_ex(user, method, path, body, query, content_type)
        return status, out

    def list_read_only(self, user, path, query=None):
        """A GET of a collection, as call() makes it, whose items are the stored objects
        themselves (built-in resources; a custom resource's are still copies): for an
        in-process caller that never changes them, a list of a thousand objects without
        a thousand deep copies. (status, list)."""
        self.local.read_only = True
        try:
            return self.call(user, "GET", path, query=query)
        finally:
            self.local.read_only = False

    def call_ex(self, user, method, path, body=None, query=None, content_type="application/json"):
        """Like call, plus the list of warnings (Warning headers) the request produced."""
        outer = getattr(self.local, "warnings", None)
        self.local.warnings = []
        try:
            return self._call_ex(user, method, path, body, query, content_type)
        finally:
            if outer is not None:
                self.local.warnings = outer

    def _call_ex(self, user, method, path, body, query, content_type):
        query = dict(query or {})
        if "?" in path:
            from urllib.parse import parse_qsl
            path, qs = path.split("?", 1)
            for k, v in parse_qsl(qs, keep_blank_values=True):
                query.setdefault(k, v)
        try:
            kind, req = parse_path(path, self.registry)
            if kind is None:
                raise errors.ApiError(404, "NotFound", "the server could not find the requested resource")
            status, out = self._dispatch(user, method.upper(), req, body, query, content_type)
            return status, out, self.local.warnings
        except errors.ApiError as e:
            return e.code, e.status(), self.local.warnings
        except Exception as e:   # a kubesim bug answers 500, as the apiserver's panic recovery does
            import traceback
            traceback.print_exc()
            err = errors.internal("%s: %s" % (type(e).__name__, e))
            return err.code, err.status(), self.local.warnings

    def warn(self, text):
        getattr(self.local, "warnings", []).append(text)

    # ------------------------------------------------------------- dispatch
    def _dispatch(self, user, method, req, body, query, ctype):
        if query.get("watch") in ("1", "true"):
            raise errors.bad_request("watch is only served over HTTP; use subscribe() in-process")
        if method == "GET":
            if req.name is None:
                return 200, self.list(req, query)
            return 200, self.get(req)
        if method == "POST":
            if req.name is not None:
                raise errors.method_not_allowed()
            return self.create(user, req, body, query)
        if method == "PUT":
            if req.name is None:
                raise errors.method_not_allowed()
            return self.update(user, req, body, query)
        if method == "PATCH":
            if req.name is None:
                raise errors.method_not_allowed()
            return self.patch(user, req, body, query, ctype)
        if method == "DELETE":
            if req.name is None:
                return self.delete_collection(user, req, body, query)
            return self.delete(user, req, body, query)
        raise errors.method_not_allowed()

    # ------------------------------------------------------------------ reads
    def get(self, req):
        obj = self.store.get(req.key, req.namespace, req.name)
        if obj is None:
            raise errors.not_found(req.res.group, req.resource, req.name)
        return req.res.present(obj)

    def list(self, req, query):
        """A list, paged as the apiserver pages lists served from etcd: `limit` items at
        most, `metadata.continue` when more follow (`remainingItemCount` too when there is
        no selector), a continued page read at the first page's resourceVersion, and 410
        Expired for a continue token older than the compaction point. Selectors are matched
        before anything is copied."""
        lreqs = selectors.parse_label_selector(query.get("labelSelector"))
        freqs = selectors.parse_field_selector(query.get("fieldSelector"), req.key, req.res.kind)
        limit = parse_limit(query.get("limit"))
        after = at_rv = None
        if query.get("continue"):
            if query.get("resourceVersion") not in (None, ""):
                raise errors.bad_request("specifying resource version is not allowed when using continue")
            at_rv, after = decode_continue(query["continue"])
        elif query.get("resourceVersion") == "0":
            limit = 0       # served from the watch cache, which ignores limit
        pred = None
        if lreqs or freqs:
            def pred(o):
                return selectors.match_requirements(lreqs, o["metadata"].get("labels")) and \
                    selectors.match_fields(freqs, o)
        shared = getattr(self.local, "read_only", False) and req.res.crd is None
        items, rv, more, remaining = self.store.list_page(req.key, req.namespace, pred, limit,
                                                          after, at_rv, copy_items=not shared)
        if not shared:      # present() writes into the object: never into a stored one
            for o in items:
                req.res.present(o)
        md = {"resourceVersion": str(rv)}
        if more is not None:
            md["continue"] = encode_continue(rv, more)
            if pred is None:
                md["remainingItemCount"] = remaining
        return {"kind": req.res.crd.list_kind if req.res.crd else req.res.kind + "List",
                "apiVersion": req.res.api_version,
                "metadata": md, "items": items}

    # ---------------------------------------------------------------- decode
    def _decode(self, req, body, query, patched=False):
        if not isinstance(body, dict):
            raise errors.bad_request("the body of the request was in an unknown format")
        res = req.res
        kind = body.get("kind")
        av = body.get("apiVersion")
        if not patched and req.subresource is None:
            if kind and kind != res.kind or av and av != res.api_version:
                raise errors.bad_request("the API version in the data (%s) does not match the expected API "
                                         "version (%s)" % (av, res.api_version) if av != res.api_version else
                                         "%s in version \"%s\" cannot be handled as a %s: no kind \"%s\" is "
                                         "registered for version \"%s\"" % (kind, res.version, res.kind, kind,
                                                                            res.api_version))
        obj = copy.deepcopy(body)
        obj["apiVersion"] = res.api_version
        obj["kind"] = res.kind
        if not isinstance(obj.get("metadata"), dict):
            obj["metadata"] = {}
        mode = query.get("fieldValidation", "Warn")
        if mode not in ("Strict", "Warn", "Ignore", ""):
            raise errors.bad_request('fieldValidation parameter unsupported: %s' % mode)
        if res.crd is not None:
            unknown = schemas.prune_metadata(obj) + structural.prune(res.crd.schema, obj)
        else:
            unknown = schemas.unknown_fields(res.kind, obj)
        if unknown:
            if mode == "Strict":
                raise errors.bad_request('%s in version "%s" cannot be handled as a %s: strict decoding error: %s'
                                         % (res.kind, res.version, res.kind,
                                            ", ".join('unknown field "%s"' % u for u in unknown)))
            if mode in ("Warn", ""):
                for u in unknown:
                    self.warn('unknown field "%s"' % u)
            if res.crd is None:
                schemas.prune(res.kind, obj)
        return obj

    # ----------------------------------------------------------------- create
    def create(self, user, req, body, query):
        res = req.res
        if req.subresource:
            raise errors.method_not_allowed()
        obj = self._decode(req, body, query)
        if res.plural in REVIEWS:
            return self._review(user, res, obj)
        md = obj["metadata"]
        if res.namespaced:
            ns = req.namespace or md.get("namespace")
            if not ns:
                raise errors.bad_request("an empty namespace may not be set during creation")
            if md.get("namespace") and md["namespace"] != ns:
                raise errors.bad_request("the namespace of the provided object does not match the namespace "
                                         "sent on the request")
            md["namespace"] = ns
            nsobj = self.store.get("namespaces", "", ns)
            if nsobj is None:
                raise errors.not_found("", "namespaces", ns)
            if nsobj["metadata"].get("deletionTimestamp"):
                raise errors.ApiError(403, "Forbidden", '%s "%s" is forbidden: unable to create new content in '
                                      'namespace %s because it is being terminated' % (res.plural, md.get("name") or "", ns),
                                      {"name": md.get("name", ""), "kind": res.plural,
                                       "causes": [{"reason": "NamespaceTerminating",
                                                   "message": "namespace %s is being terminated" % ns,
                                                   "field": "metadata.namespace"}]})
        else:
            md.pop("namespace", None)
        if res.crd is not None:
            self._check_crd_not_terminating(res)
        for k in ("resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields",
                  "uid", "creationTimestamp", "generation"):
            md.pop(k, None)
        self._defaults(res, obj)     # scheme defaulting happens at decode time
        dry = query.get("dryRun") == "All"

        def before_create(o):
            # rest.BeforeCreate runs in the storage layer, after mutating and
            # before validating admission: it names the object (generateName),
            # fills uid/creationTimestamp/generation and PrepareForCreate
            # (a Job's generated selector).
            m = o["metadata"]
            if not m.get("name") and m.get("generateName"):
                m["name"] = m["generateName"] + "".join(random.choice(_NAME_CHARS) for _ in range(5))
            m["uid"] = str(uuid.uuid4())
            m["creationTimestamp"] = self.clock.rfc3339()
            if res.key in ("daemonsets", "jobs", "deployments", crdmod.RESOURCE) or res.crd is not None:
                m["generation"] = 1
            if m.get("name"):
                self._defaults(res, o)
                if res.key == "jobs":
                    defaults.default_job_selector(o)
            if crdmod.is_crd(res):
                o["status"] = crdmod.crd_status(o, None, self._other_crds(m.get("name")), self.clock.rfc3339())

        obj = self._admit("CREATE", user, req, obj, None, dry, _options("CreateOptions", query), before_create)
        md = obj["metadata"]
        if dry:
            return 201, obj
        return 201, self._commit(req, md.get("namespace"), md["name"], obj, must_not_exist=True)

    def _review(self, user, res, obj):
        """Virtual reviews: who am I (authentication), may I, what may I (authorization, from
        the same evaluator as every request)."""
        obj["metadata"] = {"creationTimestamp": None}
        spec = obj.get("spec") or {}
        if res.plural == "selfsubjectreviews":
            obj["status"] = {"userInfo": user.info()}
        elif res.plural == "selfsubjectrulesreviews":
            rr, nr, incomplete, err = self.authz.rules_for(user, spec.get("namespace") or "")
            obj["status"] = {"resourceRules": rr, "nonResourceRules": nr, "incomplete": incomplete}
            if err:
                obj["status"]["evaluationError"] = err
        else:
            ra, nra = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
            if ra is None and nra is None:
                raise errors.invalid("SelfSubjectAccessReview", "authorization.k8s.io", "", [(
                    "spec.resourceAttributes", "FieldValueInvalid",
                    "Invalid value: \"null\": exactly one of nonResourceAttributes or resourceAttributes "
                    "must be specified")])
            if ra is not None and nra is not None:
                raise errors.invalid("SelfSubjectAccessReview", "authorization.k8s.io", "", [(
                    "spec.nonResourceAttributes", "FieldValueInvalid",
                    "Invalid value: %s: cannot be specified in combination with resourceAttributes"
                    % json.dumps(nra))])
            if ra is not None:
                a = authz.Attributes(user, ra.get("verb", ""), ra.get("group", ""), ra.get("resource", ""),
                                     ra.get("subresource", ""), ra.get("namespace", ""), ra.get("name", ""),
                                     field_selector=authz.review_field_selector(ra.get("fieldSelector")))
            else:
                a = authz.Attributes(user, nra.get("verb", ""), path=nra.get("path", ""), resource_request=False)
            allowed, reason = self.authz.authorize(a)
            obj["status"] = {"allowed": allowed}
            if reason:
                obj["status"]["reason"] = reason
        return 201, obj

    def _admit(self, op, user, req, obj, old, dry, options, after_mutate=None):
        """NodeRestriction, mutating admission, validation, validating admission; returns the
        object to store."""
        noderestriction.admit(op, user, req, obj, old)
        if self.admission is not None:
            obj = self.admission.admit("mutating", op, user, req, obj, old, dry, options)
            if obj is not None:
                obj["apiVersion"] = req.res.api_version
                obj["kind"] = req.res.kind
                if req.res.crd is not None:     # what webhooks added is pruned and defaulted too
                    schemas.prune_metadata(obj)
                    structural.prune(req.res.crd.schema, obj)
                    req.res.crd.present(obj)
        if after_mutate is not None:
            after_mutate(obj)
        if op in ("CREATE", "UPDATE") and req.subresource is None:
            # PrepareForCreate/PrepareForUpdate: fields of disabled feature gates go
            defaults.drop_disabled_fields(req.res.key, obj, old, self.feature_gates)
        if op in ("CREATE", "UPDATE"):
            self._validate(req, obj, old if op == "UPDATE" else None)
            if self.admission is not None and req.resource.endswith("webhookconfigurations"):
                causes = self.admission.validate_config(req.resource, obj)
                if causes:
                    raise errors.invalid(req.res.kind, req.res.group, obj["metadata"].get("name", ""), causes)
        if self.admission is not None:
            self.admission.admit("validating", op, user, req, obj, old, dry, options)
        return obj

    # ------------------------------------------------ defaults, validation, storage
    def _defaults(self, res, obj):
        """Scheme defaults of a built-in, the CRD's v1 defaults, a custom resource's schema defaults."""
        defaults.apply_defaults(res.key, obj)
        if res.crd is not None:
            res.crd.present(obj)
        elif crdmod.is_crd(res):
            crdmod.default_crd(obj)

    def _validate(self, req, obj, old):
        res = req.res
        defaults.validate(res.key, obj, old, res.group)
        causes = []
        if res.crd is not None:
            causes = structural.validate(res.crd.schema, obj, old,
                                         self.admission.cel if self.admission is not None else None)
        elif crdmod.is_crd(res):
            causes = crdmod.validate_crd(obj, old, self.admission.cel if self.admission is not None else None) \
                if req.subresource is None else []
            causes += crdmod.validate_stored_versions(obj)
        if causes:
            raise errors.invalid(res.kind, res.group, obj["metadata"].get("name", ""), causes)

    def _commit(self, req, ns, name, obj, **kw):
        """store.commit of obj (None: removal) as stored (a custom resource in its storage
        version); returns the result as req's version serves it. A CRD write changes what
        the registry serves; the last custom resource of a deleted CRD finalizes it."""
        res = req.res
        stored = self.store.commit(res.key, ns, name, res.crd.to_storage(obj) if res.crd and obj else obj, **kw)
        if crdmod.is_crd(res):
            self._serve_crd(name)
            self._recheck_names(name)
        elif res.crd is not None and obj is None:
            now = self.registry.lookup(res.group, res.version, res.plural)     # as the CRD is now
            if now is not None and now.crd.terminating and not self._any_left(res.key):
                self._finish_crd(res.crd.crd_name)
        return res.present(stored)

    def _serve_crd(self, name):
        """Serves what is stored for the CRD `name` now (whichever of racing writers comes last)."""
        with self.crd_lock:
            cur = self.store.get(crdmod.RESOURCE, None, name)
            self.registry.set_crd(name, crdmod.served_resources(cur) if cur is not None else [])

    def _recheck_names(self, name):
        """The naming controller's second look after a write of CRD `name`: another CRD
        refused for a name conflict is accepted (and served) once its names are free."""
        for o in self._other_crds(name):
            if crdmod.names_accepted(o):
                continue
            oname = o["metadata"]["name"]
            status = crdmod.crd_status(o, o.get("status"), self._other_crds(oname), self.clock.rfc3339())
            if crdmod.names_accepted({"status": status}):
                o["status"] = status
                try:
                    self.store.commit(crdmod.RESOURCE, None, oname, o, expect_rv=o["metadata"]["resourceVersion"])
                except errors.ApiError:
                    continue        # written meanwhile: that write computed its status itself
                self._serve_crd(oname)

    def _other_crds(self, name):
        return [o for o in self.store.list(crdmod.RESOURCE)[0] if o["metadata"]["name"] != name]

    def _check_crd_not_terminating(self, res):
        now = self.registry.lookup(res.group, res.version, res.plural)         # as the CRD is now
        if now is not None and now.crd.terminating:
            raise errors.method_not_allowed("create not allowed while custom resource definition is terminating")

    def _any_left(self, key):
        return bool(self.store.list_page(key, None, None, 1)[0])

    def _cleanup_crd(self, crd):
        """The CRD finalizer's work: delete every object of a deleted CRD (their own
        finalizers are honoured), then let the CRD go. Returns the DELETE's answer: the
        terminating CRD while objects remain, else a Success Status."""
        served = crdmod.served_resources(crd)
        if served:
            for o in self.store.list(served[0].key)[0]:
                if o["metadata"].get("deletionTimestamp"):
                    continue
                sub = Request(served[0], o["metadata"].get("namespace"), o["metadata"]["name"], None)
                try:
                    self.delete(SYSTEM_ADMIN, sub, None, {})
                except errors.ApiError:
                    pass        # gone already, or refused: the CRD stays Terminating while it is there
            if self._any_left(served[0].key):
                return 200, self.store.get(crdmod.RESOURCE, None, crd["metadata"]["name"])
        return self._finish_crd(crd["metadata"]["name"])

    def _finish_crd(self, name):
        """Removes the cleanup finalizer of a deleted CRD whose objects are gone (and so the
        CRD, unless other finalizers hold it) and stops serving its resources."""
        self.registry.set_crd(name, [])
        cur = self.store.get(crdmod.RESOURCE, None, name)
        if cur is None:
            return 200, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                         "details": {"name": name, "group": crdmod.GROUP, "kind": crdmod.RESOURCE}}
        md = cur["metadata"]
        md["finalizers"] = [f for f in md.get("finalizers") or [] if f != crdmod.CLEANUP_FINALIZER]
        if md["finalizers"]:
            return 200, self.store.commit(crdmod.RESOURCE, None, name, cur, expect_rv=md["resourceVersion"])
        self.store.commit(crdmod.RESOURCE, None, name, None, expect_rv=md["resourceVersion"])
        self._recheck_names(name)
        return 200, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                     "details": {"name": name, "group": crdmod.GROUP, "kind": crdmod.RESOURCE, "uid": md["uid"]}}

    # ----------------------------------------------------------------- update
    def update(self, user, req, body, query):
        obj = self._decode(req, body, query, patched=req.subresource is not None)
        md = obj["metadata"]
        if md.get("name") and md["name"] != req.name:
            raise errors.bad_request("the name of the object (%s) does not match the name on the URL (%s)"
                                     % (md["name"], req.name))
        if req.res.namespaced and md.get("namespace") and md["namespace"] != req.namespace:
            raise errors.bad_request("the namespace of the provided object does not match the namespace "
                                     "sent on the request")
        expect = md.get("resourceVersion") or None
        return self._update_loop(user, req, lambda cur: obj, expect, query)

    def _update_loop(self, user, req, make, expect, query):
        """Read-modify-write with retries while no precondition was given."""
        for _attempt in range(20):
            cur = self.store.get(req.key, req.namespace, req.name)
            if cur is None:
                raise errors.not_found(req.res.group, req.resource, req.name)
            cur = req.res.present(cur)
            new = make(copy.deepcopy(cur))
            want = write_precondition(expect, (new.get("metadata") or {}).get("resourceVersion"),
                                      cur["metadata"]["resourceVersion"])
            if want and want != cur["metadata"]["resourceVersion"]:
                raise errors.conflict(req.res.group, req.resource, req.name,
                                      "the object has been modified; please apply your changes to the "
                                      "latest version and try again")
            new = self._prepare_update(req, new, cur)
            dry = query.get("dryRun") == "All"
            # Admission runs even for a write that changes nothing (as in
            # GuaranteedUpdate); only the storage write is skipped then.
            new = self._admit("UPDATE", user, req, new, cur, dry, _options("UpdateOptions", query))
            new = self._prepare_update(req, new, cur)
            if dry:
                return 200, new
            if new == cur:
                return 200, cur      # no-op writes do not bump resourceVersion
            final = self._maybe_finalize(req, new)
            try:
                return 200, self._commit(req, req.namespace, req.name, None if final else new,
                                         expect_rv=cur["metadata"]["resourceVersion"])
            except errors.ApiError as e:
                if e.code == 409 and not want:
                    continue
                raise
        raise errors.conflict(req.res.group, req.resource, req.name, "too many concurrent writers")

    def _prepare_update(self, req, new, cur):
        """Keeps what a client may not change; applies subresource semantics."""
        new = copy.deepcopy(new)
        res = req.res
        new["apiVersion"] = res.api_version
        new["kind"] = res.kind
        if req.subresource == "status":
            st = new.get("status")
            new = copy.deepcopy(cur)
            if st is None:
                new.pop("status", None)
            else:
                new["status"] = st
            return new
        md = new.setdefault("metadata", {})
        cmd = cur["metadata"]
        for k in ("uid", "creationTimestamp", "namespace", "name", "deletionTimestamp",
                  "deletionGracePeriodSeconds", "generation"):
            if k in cmd:
                md[k] = cmd[k]
            else:
                md.pop(k, None)
        md["resourceVersion"] = cmd["resourceVersion"]
        md.pop("managedFields", None)
        if "status" in res.subresources and res.plural != "namespaces":
            if "status" in cur:
                new["status"] = copy.deepcopy(cur["status"])
            else:
                new.pop("status", None)
        self._defaults(res, new)
        if res.key in ("daemonsets", "jobs", "deployments", crdmod.RESOURCE) and new.get("spec") != cur.get("spec") \
                or res.crd is not None and crdmod.generation_changed(new, cur):
            md["generation"] = int(cmd.get("generation", 1)) + 1
        if crdmod.is_crd(res):
            new["status"] = crdmod.crd_status(new, cur.get("status"), self._other_crds(req.name),
                                              self.clock.rfc3339())
        return new

    def _maybe_finalize(self, req, new):
        """An object being deleted goes away once its finalizers are gone."""
        md = new["metadata"]
        if not md.get("deletionTimestamp") or md.get("finalizers"):
            return False
        if req.resource == "pods" and (new.get("spec") or {}).get("nodeName") \
                and md.get("deletionGracePeriodSeconds") != 0:
            return False
        return True

    # ------------------------------------------------------------------ patch
    def patch(self, user, req, body, query, ctype):
        ctype = (ctype or "").split(";")[0].strip()
        if ctype == "application/json-patch+json":
            fn = patch.json_patch
        elif ctype == "application/merge-patch+json":
            fn = patch.merge_patch
        elif ctype == "application/strategic-merge-patch+json" and req.res.crd is None:
            fn = patch.strategic_merge_patch     # custom resources have no patch strategies: 415
        elif ctype == "application/apply-patch+yaml":
            return self._server_side_apply(user, req, body, query)
        else:
            raise errors.unsupported_media_type(ctype, strategic=req.res.crd is None)
        if body is None:
            raise errors.bad_request("the body of the request was in an unknown format")
        precondition = None
        if isinstance(body, dict):
            precondition = (body.get("metadata") or {}).get("resourceVersion") if isinstance(
                body.get("metadata"), dict) else None

        def make(cur):
            patched = fn(cur, body)
            if not isinstance(patched, dict):
                raise errors.bad_request("patch did not produce an object")
            return self._decode(req, patched, query, patched=True)

        return self._update_loop(user, req, make, precondition, query)

    def _server_side_apply(self, user, req, body, query):
        """A simplified server-side apply: create when absent, otherwise merge the
        applied configuration like a strategic merge patch. No managedFields and
        no conflict detection between field managers; fields left out of the
        applied configuration are kept."""
        if not isinstance(body, dict):
            raise errors.bad_request("server-side apply needs a JSON object body")
        if self.store.get(req.key, req.namespace, req.name) is None and not req.subresource:
            obj = dict(body)
            obj.setdefault("metadata", {})
            obj["metadata"] = dict(obj["metadata"], name=req.name)
            return self.create(user, req, obj, query)

        def make(cur):
            return self._decode(req, patch.strategic_merge_patch(cur, body), query, patched=True)
        return self._update_loop(user, req, make, None, query)

    # ----------------------------------------------------------------- delete
    def _delete_options(self, body, query):
        opts = dict(body) if isinstance(body, dict) else {}
        if "gracePeriodSeconds" in query:
            try:
                opts["gracePeriodSeconds"] = int(query["gracePeriodSeconds"])
            except ValueError:
                raise errors.bad_request("invalid gracePeriodSeconds")
        if "propagationPolicy" in query:
            opts["propagationPolicy"] = query["propagationPolicy"]
        if query.get("dryRun") == "All":
            opts["dryRun"] = ["All"]
        return opts

    def delete(self, user, req, body, query):
        if req.subresource:
            raise errors.method_not_allowed()
        opts = self._delete_options(body, query)
        dry = "All" in (opts.get("dryRun") or [])
        for _attempt in range(20):
            cur = self.get(req)
            pre = opts.get("preconditions") or {}
            if pre.get("uid") and pre["uid"] != cur["metadata"]["uid"]:
                raise errors.conflict(req.res.group, req.resource, req.name,
                                      "Precondition failed: UID in precondition: %s, UID in object meta: %s"
                                      % (pre["uid"], cur["metadata"]["uid"]))
            if pre.get("resourceVersion") and pre["resourceVersion"] != cur["metadata"]["resourceVersion"]:
                raise errors.conflict(req.res.group, req.resource, req.name,
                                      "Precondition failed: ResourceVersion in precondition: %s, "
                                      "ResourceVersion in object meta: %s"
                                      % (pre["resourceVersion"], cur["metadata"]["resourceVersion"]))
            options = {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1"}
            options.update({k: v for k, v in opts.items() if k not in ("kind", "apiVersion")})
            self._admit("DELETE", user, req, None, cur, dry, options)
            grace = opts.get("gracePeriodSeconds")
            md = cur["metadata"]
            graceful = None
            if req.resource == "pods" and (cur.get("spec") or {}).get("nodeName"):
                if grace is None:
                    grace = (cur.get("spec") or {}).get("terminationGracePeriodSeconds", 30)
                if grace != 0:
                    graceful = grace
                    if md.get("deletionTimestamp"):     # already terminating: only shorten
                        old = md.get("deletionGracePeriodSeconds")
                        graceful = min(grace, old) if old is not None else grace
            finalizers = md.get("finalizers") or []
            if crdmod.is_crd(req.res) and crdmod.CLEANUP_FINALIZER not in finalizers:
                # the apiserver's CRD deletion: finalized once its custom resources are gone
                finalizers = finalizers + [crdmod.CLEANUP_FINALIZER]
            if opts.get("propagationPolicy") == "Foreground" and self.foreground_gc \
                    and FOREGROUND_FINALIZER not in finalizers:
                # the garbage collector deletes the dependents, then removes the finalizer
                finalizers = finalizers + [FOREGROUND_FINALIZER]
            try:
                if graceful is not None or finalizers:
                    new = copy.deepcopy(cur)
                    nmd = new["metadata"]
                    nmd["finalizers"] = finalizers
                    if not nmd.get("deletionTimestamp"):
                        nmd["deletionTimestamp"] = self.clock.rfc3339(self.clock.now() + (graceful or 0))
                    nmd["deletionGracePeriodSeconds"] = graceful if graceful is not None else 0
                    if req.resource != "pods":
                        nmd["deletionGracePeriodSeconds"] = 0
                    if crdmod.is_crd(req.res):
                        new["status"] = crdmod.crd_status(new, cur.get("status"), self._other_crds(req.name),
                                                          self.clock.rfc3339())
                    if dry:
                        return 200, new
                    if new == cur:
                        return 200, cur
                    out = self._commit(req, req.namespace, req.name, new, expect_rv=md["resourceVersion"])
                    if crdmod.is_crd(req.res):
                        return self._cleanup_crd(out)
                    return 200, out
                if dry:
                    return 200, cur
                if opts.get("propagationPolicy") == "Orphan":
                    self._orphan(req, cur)
                out = self._commit(req, req.namespace, req.name, None, expect_rv=md["resourceVersion"])
            except errors.ApiError as e:
                if e.code == 409:
                    continue
                raise
            if req.resource == "namespaces":
                self._purge_namespace(req.name)
            if req.resource == "pods":
                return 200, out
            return 200, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                         "details": {"name": req.name, "group": req.res.group, "kind": req.resource,
                                     "uid": md["uid"]}}
        raise errors.conflict(req.res.group, req.resource, req.name, "too many concurrent writers")

    def _orphan(self, req, owner):
        uid = owner["metadata"]["uid"]
        for r in self.registry.stored():
            if not r.namespaced or r.plural == "events":
                continue
            items, _ = self.store.list(r.key, owner["metadata"].get("namespace"))
            for o in items:
                refs = o["metadata"].get("ownerReferences") or []
                if any(ref.get("uid") == uid for ref in refs):
                    keep = [ref for ref in refs if ref.get("uid") != uid]
                    p = {"metadata": {"ownerReferences": keep or None}}
                    self.call(SYSTEM_GC, "PATCH", "%s/namespaces/%s/%s/%s" % (
                        r.gv_path, o["metadata"]["namespace"], r.plural, o["metadata"]["name"]),
                        p, content_type="application/merge-patch+json")

    def _purge_namespace(self, ns):
        for r in self.registry.stored():
            if not r.namespaced:
                continue
            items, _ = self.store.list(r.key, ns)
            for o in items:
                try:
                    self.store.commit(r.key, ns, o["metadata"]["name"], None)
                except errors.ApiError:
                    pass

    def delete_collection(self, user, req, body, query):
        query = {k: v for k, v in query.items() if k not in ("limit", "continue")}
        lst = self.list(req, query)
        for o in lst["items"]:
            sub = Request(req.res, o["metadata"].get("namespace"), o["metadata"]["name"], None)
            try:
                self.delete(user, sub, body, query)
            except errors.ApiError as e:
                if e.code != 404:
                    raise
        return 200, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}
