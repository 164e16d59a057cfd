"""The three PATCH flavours the apiserver accepts.

- JSON Patch (RFC 6902, application/json-patch+json)
- JSON Merge Patch (RFC 7386, application/merge-patch+json)
- Strategic Merge Patch (application/strategic-merge-patch+json): a merge
  patch where some lists merge element-wise by a key instead of being
  replaced (status.conditions by `type`, containers by `name`, ...), plus the
  `$patch`, `$retainKeys`, `$setElementOrder/` and `$deleteFromPrimitiveList/`
  directives kubectl apply sends. The merge keys come from the Go struct tags
  of the built-in types (patchMergeKey / patchStrategy); MERGE_KEYS lists the
  ones for the resources kubesim serves.

All functions take and return plain JSON values and never modify their input.
"""
import copy
import re

from . import errors

# list field name -> merge key, with an optional parent field name to tell
# apart fields that share a name ("ports" of a container vs of a Service).
# A key of None means "merge primitive list as a set" (finalizers).
MERGE_KEYS = {
    "containers": "name", "initContainers": "name", "ephemeralContainers": "name",
    "conditions": "type", "env": "name", "volumes": "name", "volumeMounts": "mountPath",
    "volumeDevices": "devicePath", "imagePullSecrets": "name", "ownerReferences": "uid",
    "hostAliases": "ip", "topologySpreadConstraints": "topologyKey", "addresses": "type",
    "finalizers": None, "resourceClaims": "name", "schedulingGates": "name",
    "readinessGates": None, "podIPs": "ip", "hostIPs": "ip", "secrets": "name",
    "webhooks": "name", "matchConditions": "name",
}
NO_MERGE = {"readinessGates"}   # listed for clarity: replaced as a whole


def _merge_key(field, parent):
    if field in NO_MERGE:
        return False, None
    if field == "ports":
        return True, "port" if parent == "spec" else "containerPort"
    if field in MERGE_KEYS:
        return True, MERGE_KEYS[field]
    return False, None


# ---------------------------------------------------------------- JSON Patch
# RFC 6902 over RFC 6901 pointers. Stricter than evanphx/json-patch where the
# RFCs are: an array index is digits with no sign or leading zero, "~" in a
# pointer is "~0" or "~1", add/replace/test need "value", move/copy need
# "from", move may not go into its own child, and `test` compares as JSON
# (true is not 1).

_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]*")
_REJECTED = "the server rejected our request due to an error in our request"


def _unescape(tok):
    return tok.replace("~1", "/").replace("~0", "~")


def _split_pointer(ptr):
    if ptr == "":
        return []
    if not isinstance(ptr, str) or not ptr.startswith("/"):
        raise errors.ApiError(422, "Invalid", _REJECTED + ": "
                              "JSON pointer %r does not start with /" % (ptr,))
    toks = ptr[1:].split("/")
    if any(re.search(r"~(?![01])", t) for t in toks):
        raise _perr(_REJECTED + ": JSON pointer %r: \"~\" not followed by 0 or 1" % ptr)
    return [_unescape(t) for t in toks]


def _perr(msg):
    return errors.ApiError(422, "Invalid", msg)


def _index(tok):
    """tok as an RFC 6901 array index, or None when it is not one."""
    return int(tok) if _ARRAY_INDEX.fullmatch(tok) else None


def json_equal(a, b):
    """JSON equality: unlike Python's ==, true is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    return a == b


def _walk(doc, toks, path):
    cur = doc
    for t in toks:
        if isinstance(cur, dict):
            if t not in cur:
                raise _perr(_REJECTED)
            cur = cur[t]
        elif isinstance(cur, list):
            i = _index(t)
            if i is None or i >= len(cur):
                raise _perr(_REJECTED)
            cur = cur[i]
        else:
            raise _perr(_REJECTED)
    return cur


def _get(doc, path):
    return _walk(doc, _split_pointer(path), path)


def _add(doc, path, value):
    toks = _split_pointer(path)
    if not toks:
        return value
    parent = _walk(doc, toks[:-1], path)
    last = toks[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        if last == "-":
            parent.append(value)
        else:
            i = _index(last)
            if i is None:
                raise _perr(_REJECTED)
            if i > len(parent):
                raise _perr("add operation does not apply: doc is missing path: \"%s\": missing value" % path)
            parent.insert(i, value)
    else:
        raise _perr("add operation does not apply: doc is missing path: \"%s\": missing value" % path)
    return doc


def _remove(doc, path, op="remove"):
    toks = _split_pointer(path)
    if not toks:
        raise _perr(_REJECTED)
    parent = _walk(doc, toks[:-1], path)
    last = toks[-1]
    if isinstance(parent, dict) and last in parent:
        return parent.pop(last)
    if isinstance(parent, list):
        i = _index(last)
        if i is not None and i < len(parent):
            return parent.pop(i)
    raise _perr(_REJECTED + ": "
                "%s operation does not apply: doc is missing path: \"%s\": missing value" % (op, path))


def json_patch(doc, ops):
    if not isinstance(ops, list):
        raise errors.bad_request("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    doc = copy.deepcopy(doc)
    for op in ops:
        if not isinstance(op, dict):
            raise _perr(_REJECTED + ": an operation is not a JSON object: %r" % (op,))
        kind = op.get("op")
        path = op.get("path")
        if path is None:
            raise _perr(_REJECTED + ": missing path")
        if kind in ("add", "replace", "test") and "value" not in op:
            raise _perr(_REJECTED + ": %s operation without value" % kind)
        if kind in ("move", "copy") and not isinstance(op.get("from"), str):
            raise _perr(_REJECTED + ": %s operation without from" % kind)
        if kind == "add":
            doc = _add(doc, path, copy.deepcopy(op["value"]))
        elif kind == "remove":
            _remove(doc, path)
        elif kind == "replace":
            if _split_pointer(path):
                _remove(doc, path, "replace")
            doc = _add(doc, path, copy.deepcopy(op["value"]))
        elif kind == "move":
            if isinstance(path, str) and path.startswith(op["from"] + "/"):
                raise _perr(_REJECTED + ": move operation does not apply: "
                            "\"%s\" is inside \"%s\"" % (path, op["from"]))
            v = _remove(doc, op["from"], "move")
            doc = _add(doc, path, v)
        elif kind == "copy":
            doc = _add(doc, path, copy.deepcopy(_get(doc, op["from"])))
        elif kind == "test":
            if not json_equal(_get(doc, path), op["value"]):
                raise _perr(_REJECTED + ": testing value %s failed: test failed" % path)
        else:
            raise _perr(_REJECTED + ": Unexpected kind: %s" % kind)
    return doc


# --------------------------------------------------------------- Merge Patch

def merge_patch(doc, patch):
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(doc) if isinstance(doc, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


# ---------------------------------------------------- Strategic Merge Patch

def strategic_merge_patch(doc, patch):
    if not isinstance(patch, dict):
        raise errors.bad_request("strategic merge patch must be a JSON object")
    return _smp_map(copy.deepcopy(doc) if isinstance(doc, dict) else {}, patch, None)


def _smp_map(orig, patch, parent):
    if patch.get("$patch") == "replace":
        p = {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
        return p
    if patch.get("$patch") == "delete":
        return None
    retain = patch.get("$retainKeys")
    out = orig
    for k, v in patch.items():
        if k in ("$patch", "$retainKeys") or k.startswith("$setElementOrder/") \
                or k.startswith("$deleteFromPrimitiveList/"):
            continue
        if v is None:
            out.pop(k, None)
            continue
        cur = out.get(k)
        if isinstance(v, dict):
            res = _smp_map(copy.deepcopy(cur) if isinstance(cur, dict) else {}, v, k)
            if res is None:
                out.pop(k, None)
            else:
                out[k] = res
        elif isinstance(v, list):
            out[k] = _smp_list(cur if isinstance(cur, list) else [], v, k, parent)
        else:
            out[k] = copy.deepcopy(v)
    for k, v in patch.items():
        if k.startswith("$deleteFromPrimitiveList/"):
            f = k.split("/", 1)[1]
            if isinstance(out.get(f), list):
                out[f] = [x for x in out[f] if x not in v]
    for k, v in patch.items():
        if k.startswith("$setElementOrder/"):
            f = k.split("/", 1)[1]
            if isinstance(out.get(f), list):
                out[f] = _reorder(out[f], v, f, parent)
    if isinstance(retain, list):
        for k in list(out.keys()):
            if k not in retain:
                del out[k]
    return out


def _key_of(item, key):
    return item.get(key) if isinstance(item, dict) else item


def _smp_list(orig, patch, field, parent):
    merge, key = _merge_key(field, parent)
    if not merge:
        return copy.deepcopy(patch)
    if key is None:   # primitive set
        out = list(orig)
        for x in patch:
            if x not in out:
                out.append(copy.deepcopy(x))
        return out
    if any(isinstance(x, dict) and x.get("$patch") == "replace" for x in patch):
        return [x for x in copy.deepcopy(patch) if not (isinstance(x, dict) and "$patch" in x)]
    out = copy.deepcopy(orig)
    for item in patch:
        if not isinstance(item, dict):
            out.append(copy.deepcopy(item))
            continue
        kv = item.get(key)
        idx = next((i for i, o in enumerate(out) if isinstance(o, dict) and o.get(key) == kv), None)
        if item.get("$patch") == "delete":
            if idx is not None:
                out.pop(idx)
            continue
        if idx is None:
            out.append(_smp_map({}, item, field))
        else:
            out[idx] = _smp_map(out[idx], item, field)
    return out


def _reorder(items, order, field, parent):
    _m, key = _merge_key(field, parent)
    keys = [_key_of(o, key) for o in order]
    listed = [x for x in items if _key_of(x, key) in keys]
    listed.sort(key=lambda x: keys.index(_key_of(x, key)))
    rest = [x for x in items if _key_of(x, key) not in keys]
    return listed + rest
