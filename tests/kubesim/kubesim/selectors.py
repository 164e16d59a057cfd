"""Label and field selectors.

Parses the string forms clients put in `labelSelector` / `fieldSelector`
query parameters (`a=b,c!=d,e in (f,g),!h,i`) and matches metav1.LabelSelector
objects (matchLabels + matchExpressions) as webhook namespaceSelector /
objectSelector and DaemonSet selectors use them. Field selectors support the
fields the apiserver indexes for the resources we serve (metadata.name,
metadata.namespace, spec.nodeName, status.phase, involvedObject.*, ...) and
reject others with the apiserver's error.
"""
import re

from . import errors

_TOKEN = re.compile(r"\s*(!=|==|=|!|,|\(|\)|[^\s!=,()]+)\s*")


def _tokens(s):
    pos, out = 0, []
    while pos < len(s):
        m = _TOKEN.match(s, pos)
        if not m or m.end() == pos:
            raise errors.bad_request("unable to parse requirement: %r" % s)
        out.append(m.group(1))
        pos = m.end()
    return out


def parse_label_selector(s):
    """Returns a list of (key, op, values); op in =, !=, in, notin, exists, !exists."""
    if s is None or not s.strip():
        return []
    toks = _tokens(s)
    reqs, i = [], 0

    def need(cond, what):
        if not cond:
            raise errors.bad_request("unable to parse requirement: found '%s', expected: %s" % (s, what))

    while i < len(toks):
        if toks[i] == "!":
            need(i + 1 < len(toks), "identifier")
            reqs.append((toks[i + 1], "!exists", []))
            i += 2
        else:
            key = toks[i]
            i += 1
            if i >= len(toks) or toks[i] == ",":
                reqs.append((key, "exists", []))
            elif toks[i] in ("=", "=="):
                need(i + 1 < len(toks), "value")
                val = toks[i + 1]
                if val == ",":
                    val, i = "", i + 1
                else:
                    i += 2
                reqs.append((key, "=", [val]))
            elif toks[i] == "!=":
                need(i + 1 < len(toks), "value")
                reqs.append((key, "!=", [toks[i + 1]]))
                i += 2
            elif toks[i] in ("in", "notin"):
                op = toks[i]
                i += 1
                need(i < len(toks) and toks[i] == "(", "(")
                i += 1
                vals = []
                while i < len(toks) and toks[i] != ")":
                    if toks[i] != ",":
                        vals.append(toks[i])
                    i += 1
                need(i < len(toks), ")")
                i += 1
                reqs.append((key, op, vals))
            else:
                need(False, "'=', '!=', 'in', 'notin'")
        if i < len(toks):
            need(toks[i] == ",", "','")
            i += 1
    return reqs


def match_requirements(reqs, labels):
    labels = labels or {}
    for key, op, vals in reqs:
        present = key in labels
        v = labels.get(key)
        if op == "=" and not (present and v == vals[0]):
            return False
        if op == "!=" and present and v == vals[0]:
            return False
        if op == "in" and not (present and v in vals):
            return False
        if op == "notin" and present and v in vals:
            return False
        if op == "exists" and not present:
            return False
        if op == "!exists" and present:
            return False
    return True


def label_selector_object_to_reqs(sel):
    """metav1.LabelSelector dict -> requirements. None selects nothing, {} selects everything."""
    reqs = []
    for k, v in sorted((sel.get("matchLabels") or {}).items()):
        reqs.append((k, "=", [v]))
    for e in sel.get("matchExpressions") or []:
        op = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!exists"}.get(e.get("operator"))
        if op is None:
            raise errors.bad_request("%r is not a valid label selector operator" % e.get("operator"))
        reqs.append((e.get("key"), op, list(e.get("values") or [])))
    return reqs


def match_label_selector_object(sel, labels):
    if sel is None:
        return True
    return match_requirements(label_selector_object_to_reqs(sel), labels)


# Fields the apiserver accepts in fieldSelector, per resource (all resources
# take metadata.name and metadata.namespace).
FIELDS = {
    "pods": ["spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
             "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName"],
    "events": ["involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
               "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
               "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"],
    "nodes": ["spec.unschedulable"],
    "secrets": ["type"],
    "jobs": ["status.successful"],
    "namespaces": ["status.phase"],
}


def parse_field_selector(s, resource, kind):
    if s is None or not s.strip():
        return []
    reqs = []
    for part in s.split(","):
        part = part.strip()
        if not part:
            continue
        if "!=" in part:
            k, v = part.split("!=", 1)
            op = "!="
        elif "==" in part:
            k, v = part.split("==", 1)
            op = "="
        elif "=" in part:
            k, v = part.split("=", 1)
            op = "="
        else:
            raise errors.bad_request("invalid selector: '%s'; can't understand '%s'" % (s, part))
        k = k.strip()
        if k not in ("metadata.name", "metadata.namespace") and k not in FIELDS.get(resource, []):
            raise errors.bad_request('field label not supported: %s' % k)
        reqs.append((k, op, v.strip()))
    return reqs


def field_value(obj, path):
    if path == "source":
        return (obj.get("source") or {}).get("component", "")
    cur = obj
    for p in path.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(p)
    if cur is None:
        return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)


def match_fields(reqs, obj):
    for k, op, v in reqs:
        have = field_value(obj, k)
        if op == "=" and have != v:
            return False
        if op == "!=" and have == v:
            return False
    return True
