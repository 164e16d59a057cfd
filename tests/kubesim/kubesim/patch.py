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

def _unescape(tok):
    return tok.replace("~1", "/").replace("~0", "~")


def _split_pointer(ptr):
    if ptr == "":
        return []
    if not ptr.startswith("/"):
        raise errors.ApiError(422, "Invalid", "the server rejected our request due to an error in our request: "
                              "JSON pointer %r does not start with /" % ptr)
    return [_unescape(t) for t in ptr[1:].split("/")]


def _perr(msg):
    return errors.ApiError(422, "Invalid", msg)


def _walk(doc, toks, path):
    cur = doc
    for t in toks:
        if isinstance(cur, dict):
            if t not in cur:
                raise _perr("the server rejected our request due to an error in our request")
            cur = cur[t]
        elif isinstance(cur, list):
            try:
                cur = cur[int(t)]
            except (ValueError, IndexError):
                raise _perr("the server rejected our request due to an error in our request")
        else:
            raise _perr("the server rejected our request due to an error in our request")
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
            try:
                i = int(last)
            except ValueError:
                raise _perr("the server rejected our request due to an error in our request")
            if i < 0 or i > len(parent):
                raise _perr("add operation does not apply: doc is missing path: \"%s\": missing value" % path)
            parent.insert(i, value)
    else:
        raise _perr("add operation does not apply: doc is missing path: \"%s\": missing value" % path)
    return doc


def _remove(doc, path, op="remove"):
    toks = _split_pointer(path)
    if not toks:
        raise _perr("the server rejected our request due to an error in our request")
    parent = _walk(doc, toks[:-1], path)
    last = toks[-1]
    try:
        if isinstance(parent, dict):
            return parent.pop(last)
        if isinstance(parent, list):
            return parent.pop(int(last))
    except (KeyError, ValueError, IndexError):
        pass
    raise _perr("the server rejected our request due to an error in our request: "
                "%s operation does not apply: doc is missing path: \"%s\": missing value" % (op, path))


def json_patch(doc, ops):
    if not isinstance(ops, list):
        raise errors.bad_request("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    doc = copy.deepcopy(doc)
    for op in ops:
        kind = op.get("op")
        path = op.get("path")
        if path is None:
            raise _perr("the server rejected our request due to an error in our request: missing path")
        if kind == "add":
            doc = _add(doc, path, copy.deepcopy(op.get("value")))
        elif kind == "remove":
            _remove(doc, path)
        elif kind == "replace":
            if _split_pointer(path):
                _remove(doc, path, "replace")
            doc = _add(doc, path, copy.deepcopy(op.get("value")))
        elif kind == "move":
            v = _remove(doc, op.get("from"), "move")
            doc = _add(doc, path, v)
        elif kind == "copy":
            doc = _add(doc, path, copy.deepcopy(_get(doc, op.get("from"))))
        elif kind == "test":
            if _get(doc, path) != op.get("value"):
                raise _perr("the server rejected our request due to an error in our request: "
                            "testing value %s failed: test failed" % path)
        else:
            raise _perr("the server rejected our request due to an error in our request: "
                        "Unexpected kind: %s" % kind)
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
