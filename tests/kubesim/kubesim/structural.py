"""Placeholder for the structural-schema module (branch i18-schema writes the real one).

The least that keeps CustomResourceDefinitions usable: pruning of fields the
schema does not name (honouring x-kubernetes-preserve-unknown-fields), the
`default`s of properties, `required`, `type` and `enum`. No CEL, no formats,
no schema checks. Replaced at merge by i18-schema's module with these
signatures.
"""

_TYPES = {"string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
          "object": (dict,), "array": (list,)}


def prune(schema, obj):
    """Removes fields the schema does not know, in place; returns their paths ("spec.foo")."""
    out = []
    for k in list(obj):
        if k in ("apiVersion", "kind", "metadata"):
            continue
        _prune(((schema or {}).get("properties") or {}).get(k), k, obj, k, out,
               (schema or {}).get("x-kubernetes-preserve-unknown-fields"))
    return out


def _prune(s, key, parent, path, out, preserve):
    if s is None:
        if not preserve:
            out.append(path)
            del parent[key]
        return
    v = parent[key]
    if isinstance(v, dict) and s.get("type") == "object" and not s.get("x-kubernetes-preserve-unknown-fields"):
        props = s.get("properties")
        extra = s.get("additionalProperties")
        for k in list(v):
            if props is not None and k in props:
                _prune(props[k], k, v, path + "." + k, out, False)
            elif isinstance(extra, dict):
                _prune(extra, k, v, path + "." + k, out, False)
            elif props is not None or extra is None:
                _prune(None, k, v, path + "." + k, out, False)
    elif isinstance(v, list) and isinstance(s.get("items"), dict):
        for i in range(len(v)):
            _prune(s["items"], i, v, "%s[%d]" % (path, i), out, False)


def apply_defaults(schema, obj):
    """Fills `default`s of absent properties, in place."""
    _defaults(schema or {}, obj)


def _defaults(s, v):
    if isinstance(v, dict):
        for k, sub in (s.get("properties") or {}).items():
            if k not in v and "default" in sub:
                v[k] = sub["default"]
            if k in v:
                _defaults(sub, v[k])
    elif isinstance(v, list) and isinstance(s.get("items"), dict):
        for x in v:
            _defaults(s["items"], x)


def validate(schema, obj, old=None, cel=None):
    """[(field, reason, message)] for type, enum and required violations."""
    out = []
    for k, sub in ((schema or {}).get("properties") or {}).items():
        if k in ("metadata", "apiVersion", "kind") or k not in obj:
            continue
        _validate(sub, obj[k], k, out)
    for r in (schema or {}).get("required") or []:
        if r not in obj:
            out.append((r, "FieldValueRequired", "Required value"))
    return out


def _validate(s, v, path, out):
    t = s.get("type")
    if t and not (isinstance(v, _TYPES.get(t, object)) and not (t != "boolean" and isinstance(v, bool))):
        out.append((path, "FieldValueTypeInvalid", 'Invalid value: "%s": %s in body must be of type %s: "%s"'
                    % (v, path, t, type(v).__name__)))
        return
    if "enum" in s and v not in s["enum"]:
        out.append((path, "FieldValueNotSupported", 'Unsupported value: "%s": supported values: %s'
                    % (v, ", ".join('"%s"' % e for e in s["enum"]))))
    if isinstance(v, dict):
        for r in s.get("required") or []:
            if r not in v:
                out.append((path + "." + r, "FieldValueRequired", "Required value"))
        for k, sub in (s.get("properties") or {}).items():
            if k in v:
                _validate(sub, v[k], path + "." + k, out)
    elif isinstance(v, list) and isinstance(s.get("items"), dict):
        for i, x in enumerate(v):
            _validate(s["items"], x, "%s[%d]" % (path, i), out)


def check_schema(schema, path="spec.versions[0].schema.openAPIV3Schema", cel=None):
    """[(field under path, reason, message)] for schemas the apiserver refuses (placeholder: none)."""
    return []
