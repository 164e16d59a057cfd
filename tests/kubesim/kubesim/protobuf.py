"""Decoding the Kubernetes protobuf wire format for the objects kubectl's
typed clients send.

`kubectl create namespace|secret|configmap|serviceaccount|job|role|clusterrole|
rolebinding|clusterrolebinding` and `kubectl auth whoami|can-i [--list]` POST their
object as `application/vnd.kubernetes.protobuf`: the magic bytes "k8s\\0",
then a runtime.Unknown {typeMeta, raw} whose `raw` is the object's message
from k8s.io/api's generated.proto. This module decodes those kinds into the
JSON shape api.py works with. The field numbers below are the ones
generated.proto assigns; a field not listed here that carries a non-empty
value is refused (415) rather than silently dropped. Everything else kubectl
sends as JSON.
"""
import base64
import datetime

from . import errors

MAGIC = b"k8s\x00"

# field number -> (json name, type). Types: "s" string, "i" int (omitted when 0),
# "i?" pointer int (kept when 0), "b" bool (omitted when false), "b?" pointer bool,
# "bytes" (base64 in JSON), "time", "map" (string->string), "mapb" (string->bytes),
# "[s]" repeated string, "[Msg]" repeated message, "Msg" message, "-" ignored.
MESSAGES = {
    "TypeMeta": {1: ("apiVersion", "s"), 2: ("kind", "s")},
    "Unknown": {1: ("typeMeta", "TypeMeta"), 2: ("raw", "bytes"), 3: ("contentEncoding", "s"),
                4: ("contentType", "s")},
    "ObjectMeta": {1: ("name", "s"), 2: ("generateName", "s"), 3: ("namespace", "s"), 4: ("selfLink", "s"),
                   5: ("uid", "s"), 6: ("resourceVersion", "s"), 7: ("generation", "i"),
                   8: ("creationTimestamp", "time"), 9: ("deletionTimestamp", "time"),
                   10: ("deletionGracePeriodSeconds", "i?"), 11: ("labels", "map"), 12: ("annotations", "map"),
                   13: ("ownerReferences", "[OwnerReference]"), 14: ("finalizers", "[s]"),
                   17: ("managedFields", "-")},
    "OwnerReference": {1: ("kind", "s"), 3: ("name", "s"), 4: ("uid", "s"), 5: ("apiVersion", "s"),
                       6: ("controller", "b?"), 7: ("blockOwnerDeletion", "b?")},
    "Namespace": {1: ("metadata", "ObjectMeta"), 2: ("spec", "NamespaceSpec"), 3: ("status", "-")},
    "NamespaceSpec": {1: ("finalizers", "[s]")},
    "Secret": {1: ("metadata", "ObjectMeta"), 2: ("data", "mapb"), 3: ("type", "s"), 4: ("stringData", "map"),
               5: ("immutable", "b?")},
    "ConfigMap": {1: ("metadata", "ObjectMeta"), 2: ("data", "map"), 3: ("binaryData", "mapb"),
                  4: ("immutable", "b?")},
    "ServiceAccount": {1: ("metadata", "ObjectMeta"), 2: ("secrets", "[ObjectReference]"),
                       3: ("imagePullSecrets", "[LocalObjectReference]"),
                       4: ("automountServiceAccountToken", "b?")},
    "ObjectReference": {1: ("kind", "s"), 2: ("namespace", "s"), 3: ("name", "s"), 4: ("uid", "s"),
                        5: ("apiVersion", "s"), 6: ("resourceVersion", "s"), 7: ("fieldPath", "s")},
    "LocalObjectReference": {1: ("name", "s")},
    "Job": {1: ("metadata", "ObjectMeta"), 2: ("spec", "JobSpec"), 3: ("status", "-")},
    "JobSpec": {1: ("parallelism", "i?"), 2: ("completions", "i?"), 3: ("activeDeadlineSeconds", "i?"),
                4: ("selector", "LabelSelector"), 5: ("manualSelector", "b?"), 6: ("template", "PodTemplateSpec"),
                7: ("backoffLimit", "i?"), 8: ("ttlSecondsAfterFinished", "i?"), 9: ("completionMode", "s"),
                10: ("suspend", "b?")},
    "LabelSelector": {1: ("matchLabels", "map"), 2: ("matchExpressions", "[LabelSelectorRequirement]")},
    "LabelSelectorRequirement": {1: ("key", "s"), 2: ("operator", "s"), 3: ("values", "[s]")},
    "PodTemplateSpec": {1: ("metadata", "ObjectMeta"), 2: ("spec", "PodSpec")},
    "PodSpec": {2: ("containers", "[Container]"), 3: ("restartPolicy", "s"),
                4: ("terminationGracePeriodSeconds", "i?"), 5: ("activeDeadlineSeconds", "i?"),
                6: ("dnsPolicy", "s"), 7: ("nodeSelector", "map"), 8: ("serviceAccountName", "s"),
                9: ("serviceAccount", "s"), 10: ("nodeName", "s"), 11: ("hostNetwork", "b"), 12: ("hostPID", "b"),
                13: ("hostIPC", "b"), 15: ("imagePullSecrets", "[LocalObjectReference]"), 16: ("hostname", "s"),
                17: ("subdomain", "s"), 19: ("schedulerName", "s"), 20: ("initContainers", "[Container]"),
                21: ("automountServiceAccountToken", "b?"), 22: ("tolerations", "[Toleration]"),
                24: ("priorityClassName", "s")},
    "Toleration": {1: ("key", "s"), 2: ("operator", "s"), 3: ("value", "s"), 4: ("effect", "s"),
                   5: ("tolerationSeconds", "i?")},
    "Container": {1: ("name", "s"), 2: ("image", "s"), 3: ("command", "[s]"), 4: ("args", "[s]"),
                  5: ("workingDir", "s"), 7: ("env", "[EnvVar]"), 8: ("resources", "-"),
                  13: ("terminationMessagePath", "s"), 14: ("imagePullPolicy", "s"), 16: ("stdin", "b"),
                  17: ("stdinOnce", "b"), 18: ("tty", "b"), 20: ("terminationMessagePolicy", "s")},
    "EnvVar": {1: ("name", "s"), 2: ("value", "s")},
    "SelfSubjectReview": {1: ("metadata", "ObjectMeta"), 2: ("status", "-")},
    "SelfSubjectAccessReview": {1: ("metadata", "ObjectMeta"), 2: ("spec", "SelfSubjectAccessReviewSpec"),
                                3: ("status", "-")},
    "SelfSubjectAccessReviewSpec": {1: ("resourceAttributes", "ResourceAttributes"),
                                    2: ("nonResourceAttributes", "NonResourceAttributes")},
    "ResourceAttributes": {1: ("namespace", "s"), 2: ("verb", "s"), 3: ("group", "s"), 4: ("version", "s"),
                           5: ("resource", "s"), 6: ("subresource", "s"), 7: ("name", "s"),
                           8: ("fieldSelector", "SelectorAttributes"), 9: ("labelSelector", "SelectorAttributes")},
    "SelectorAttributes": {1: ("rawSelector", "s"), 2: ("requirements", "[SelectorRequirement]")},
    "SelectorRequirement": {1: ("key", "s"), 2: ("operator", "s"), 3: ("values", "[s]")},
    "NonResourceAttributes": {1: ("path", "s"), 2: ("verb", "s")},
    "SelfSubjectRulesReview": {1: ("metadata", "ObjectMeta"), 2: ("spec", "SelfSubjectRulesReviewSpec"),
                               3: ("status", "-")},
    "SelfSubjectRulesReviewSpec": {1: ("namespace", "s")},
    "PolicyRule": {1: ("verbs", "[s]"), 2: ("apiGroups", "[s]"), 3: ("resources", "[s]"),
                   4: ("resourceNames", "[s]"), 5: ("nonResourceURLs", "[s]")},
    "Role": {1: ("metadata", "ObjectMeta"), 2: ("rules", "[PolicyRule]")},
    "ClusterRole": {1: ("metadata", "ObjectMeta"), 2: ("rules", "[PolicyRule]"),
                    3: ("aggregationRule", "AggregationRule")},
    "AggregationRule": {1: ("clusterRoleSelectors", "[LabelSelector]")},
    "Subject": {1: ("kind", "s"), 2: ("apiGroup", "s"), 3: ("name", "s"), 4: ("namespace", "s")},
    "RoleRef": {1: ("apiGroup", "s"), 2: ("kind", "s"), 3: ("name", "s")},
    "RoleBinding": {1: ("metadata", "ObjectMeta"), 2: ("subjects", "[Subject]"), 3: ("roleRef", "RoleRef")},
    "ClusterRoleBinding": {1: ("metadata", "ObjectMeta"), 2: ("subjects", "[Subject]"), 3: ("roleRef", "RoleRef")},
}
KINDS = {("v1", "Namespace"), ("v1", "Secret"), ("v1", "ConfigMap"), ("v1", "ServiceAccount"), ("batch/v1", "Job"),
         ("authentication.k8s.io/v1", "SelfSubjectReview"),
         ("authorization.k8s.io/v1", "SelfSubjectAccessReview"),
         ("authorization.k8s.io/v1", "SelfSubjectRulesReview"),
         ("rbac.authorization.k8s.io/v1", "Role"), ("rbac.authorization.k8s.io/v1", "ClusterRole"),
         ("rbac.authorization.k8s.io/v1", "RoleBinding"), ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding")}


class Unsupported(Exception):
    pass


def _varint(b, i):
    r = s = 0
    while True:
        if i >= len(b):
            raise Unsupported("truncated varint")
        c = b[i]
        i += 1
        r |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return r, i
        if s > 70:
            raise Unsupported("varint too long")


def _fields(b):
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 2:
            n, i = _varint(b, i)
            if i + n > len(b):
                raise Unsupported("truncated field")
            v, i = b[i:i + n], i + n
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise Unsupported("wire type %d" % wt)
        yield num, wt, v


def _int(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def _str(v):
    return v.decode("utf-8") if isinstance(v, bytes) else str(v)


def _time(v):
    secs = 0
    for num, _wt, x in _fields(v):
        if num == 1:
            secs = _int(x)
    if secs == 0:
        return None
    return datetime.datetime.fromtimestamp(secs, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _map_entry(v, as_bytes):
    k, val = "", b""
    for num, _wt, x in _fields(v):
        if num == 1:
            k = _str(x)
        elif num == 2:
            val = x
    return k, (base64.b64encode(val).decode() if as_bytes else _str(val))


def decode_message(name, data, depth=0):
    if depth > 32:
        raise Unsupported("nesting too deep")
    spec = MESSAGES[name]
    out = {}
    for num, wt, v in _fields(data):
        f = spec.get(num)
        if f is None:
            if (wt == 0 and v == 0) or (wt == 2 and len(v) == 0):
                continue
            raise Unsupported("field %d of %s" % (num, name))
        key, typ = f
        if typ == "-":
            continue
        if typ in ("s",):
            if v:
                out[key] = _str(v)
        elif typ in ("i", "i?"):
            if v or typ == "i?":
                out[key] = _int(v)
        elif typ in ("b", "b?"):
            if v or typ == "b?":
                out[key] = bool(v)
        elif typ == "bytes":
            out[key] = v
        elif typ == "time":
            t = _time(v)
            if t is not None:
                out[key] = t
        elif typ in ("map", "mapb"):
            k, val = _map_entry(v, typ == "mapb")
            out.setdefault(key, {})[k] = val
        elif typ == "[s]":
            out.setdefault(key, []).append(_str(v))
        elif typ.startswith("["):
            out.setdefault(key, []).append(decode_message(typ[1:-1], v, depth + 1))
        else:
            sub = decode_message(typ, v, depth + 1)
            if sub or typ not in ("ObjectMeta",):
                out[key] = sub
    return out


def decode(body):
    """Protobuf request body -> JSON-shaped object dict; ApiError 415 when it cannot."""
    if not body.startswith(MAGIC):
        raise errors.ApiError(415, "UnsupportedMediaType", "protobuf body without the k8s magic prefix")
    try:
        env = decode_message("Unknown", body[len(MAGIC):])
        tm = env.get("typeMeta") or {}
        av, kind = tm.get("apiVersion", ""), tm.get("kind", "")
        if (av, kind) not in KINDS:
            raise Unsupported("kind %s %s" % (av, kind))
        obj = decode_message(kind, env.get("raw") or b"")
    except Unsupported as e:
        raise errors.ApiError(415, "UnsupportedMediaType",
                              "kubesim cannot decode this protobuf body (%s); send JSON instead "
                              "(for example kubectl apply -f)" % e)
    obj["apiVersion"] = av
    obj["kind"] = kind
    obj.setdefault("metadata", {})
    return obj
