"""Structural schemas of custom resources: pruning, defaulting, validation.

kube-apiserver (its apiextensions part) treats a custom resource body with
one version's `schema.openAPIV3Schema`. This module does the same, without
I/O, on plain JSON values (dicts, lists, str, int, float, bool, None as
json.loads gives them), for the CRD serving code to call:

  prune(schema, obj)            unknown fields out (the paths, for
                                fieldValidation Warn/Strict), then non-nullable
                                nulls that have no default;
  apply_defaults(schema, obj)   `default` values, on write and on read;
  validate(schema, obj, old, cel)
                                kube-openapi's schema checks, embedded resources,
                                list-type set/map uniqueness, then the
                                x-kubernetes-validations CEL rules;
  check_schema(schema, path, cel)
                                the few CRD-side checks made when a CRD is written.

Errors are (field path, field.ErrorType reason, message) tuples, as
errors.invalid() takes them, worded as a 1.32 apiserver words them: the
kube-openapi message ("spec.replicas in body should be greater than or equal
to 1") inside the field.Error body ("Invalid value: 0: ..."), maxLength and
maxItems as "Too long" / "Too many", enum as "Unsupported value", duplicates
in list-type set/map as "Duplicate value: <Go %#v of the value or key>", a
failed CEL rule as `Invalid value: "<schema type>": <message>` (the value
is the schema type, not the value, until 1.35). The apiserver walks Go maps,
in random order; here properties are visited in the schema's order and data
keys in the body's order, so the tuples come out in a stable order.
"""
import base64
import copy
import decimal
import ipaddress
import json
import math
import re

META_FIELDS = ("apiVersion", "kind", "metadata")

# ------------------------------------------------------------------ Go-style text


def go_float(f):
    """fmt's %v of a float64: shortest digits, exponent form below 1e-4 and from 1e6."""
    if f != f:
        return "NaN"
    if f in (math.inf, -math.inf):
        return "+Inf" if f > 0 else "-Inf"
    if f == 0:
        return "-0" if math.copysign(1.0, f) < 0 else "0"
    sign, digits, exp = decimal.Decimal(repr(f)).as_tuple()
    digits = list(digits)
    while len(digits) > 1 and digits[-1] == 0:
        digits.pop()
        exp += 1
    x = exp + len(digits) - 1
    s = "".join(map(str, digits))
    if x < -4 or x >= 6:
        mant = s[0] + ("." + s[1:] if len(s) > 1 else "")
        out = "%se%s%02d" % (mant, "-" if x < 0 else "+", abs(x))
    elif x >= len(s) - 1:
        out = s + "0" * (x - len(s) + 1)
    elif x >= 0:
        out = s[:x + 1] + "." + s[x + 1:]
    else:
        out = "0." + "0" * (-x - 1) + s
    return ("-" if sign else "") + out


_GO_ESC = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
           '"': '\\"', "\\": "\\\\"}


def go_quote(s):
    """strconv.Quote (%q) of a string."""
    out = []
    for ch in s:
        if ch in _GO_ESC:
            out.append(_GO_ESC[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7f:
            out.append("\\x%02x" % ord(ch))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def go_gosyntax(v):
    """%#v of an unstructured value (what field.Error prints for maps and lists)."""
    if v is None:
        return "interface {}(nil)"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return go_float(v)
    if isinstance(v, str):
        return go_quote(v)
    if isinstance(v, list):
        return "[]interface {}{" + ", ".join(go_gosyntax(x) for x in v) + "}"
    return "map[string]interface {}{" + ", ".join(
        "%s:%s" % (go_quote(k), go_gosyntax(v[k])) for k in sorted(v)) + "}"


def go_json(v):
    """encoding/json's Marshal: sorted keys, no spaces, integral floats without '.0', <>& escaped."""
    def norm(x):
        if isinstance(x, float) and x.is_integer() and abs(x) < 1e21:
            return int(x)
        if isinstance(x, dict):
            return {k: norm(y) for k, y in x.items()}
        if isinstance(x, list):
            return [norm(y) for y in x]
        return x
    s = json.dumps(norm(v), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return s.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _body_value(v):
    """How field.Error.ErrorBody prints a bad value: nil as "null", strings quoted,
    numbers and booleans plain, maps and lists as Go syntax."""
    return '"null"' if v is None else go_gosyntax(v)


# ------------------------------------------------------------------ field.Error

def _invalid(path, value, detail):
    return (path, "FieldValueInvalid", "Invalid value: %s: %s" % (_body_value(value), detail))


def _type_invalid(path, value, detail):
    return (path, "FieldValueTypeInvalid", "Invalid value: %s: %s" % (_body_value(value), detail))


def _required(path, detail=""):
    return (path, "FieldValueRequired", "Required value" + (": " + detail if detail else ""))


def _forbidden(path, detail):
    return (path, "FieldValueForbidden", "Forbidden" + (": " + detail if detail else ""))


def _duplicate(path, value):
    return (path, "FieldValueDuplicate", "Duplicate value: %s" % _body_value(value))


def _not_supported(path, value, supported):
    msg = "Unsupported value: %s" % _body_value(value)
    if supported:
        msg += ": supported values: " + ", ".join(go_quote(s) for s in supported)
    return (path, "FieldValueNotSupported", msg)


def _too_long(path, limit):
    return (path, "FieldValueTooLong", "Too long: may not be more than %d bytes" % limit)


def _too_many(path, actual, limit):
    return (path, "FieldValueTooMany", "Too many: %d: must have at most %d items" % (actual, limit))


# field.Path as a string: None is the nil path (the resource root), printed "<nil>".
def _child(p, name):
    return name if p is None else p + "." + name


def _key(p, k):
    return (p or "") + "[%s]" % k


def _index(p, i):
    return (p or "") + "[%d]" % i


def _shown(p):
    return "<nil>" if p is None else p


# ------------------------------------------------------------------ schema nodes

def _props(s):
    return s.get("properties") or {}


def _addl(s):
    """additionalProperties as the structural schema has it: None (absent), or the value schema
    (None also for `true`, which has no schema, as in the apiserver)."""
    ap = s.get("additionalProperties")
    return ap if isinstance(ap, dict) else None


def _has_addl(s):
    return s.get("additionalProperties") not in (None, False)


def _types(s):
    if s.get("x-kubernetes-int-or-string"):
        return ["integer", "string"]
    return [s["type"]] if s.get("type") else []


def _kind(v):
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return ""


# ------------------------------------------------------------------ pruning

def prune(schema, obj):
    """Drop, in place, the fields `schema` does not know; return their paths, sorted
    (pruning.PruneWithOptions), e.g. ["spec.containers[0].bar", "spec.foo"].

    The root is an embedded resource: its apiVersion, kind and metadata are kept
    and metadata's content is left to ObjectMeta handling, as are those of every
    x-kubernetes-embedded-resource object. x-kubernetes-preserve-unknown-fields
    keeps unknown fields at that node while known properties below it are still
    pruned; additionalProperties schemas apply to map values.

    Then, as the apiserver's decoder does next, fields whose value is null, whose
    schema is not nullable and has no default are dropped (not reported)."""
    out = []
    _prune(obj, schema, "", out, True)
    _prune_nulls(obj, schema)
    return sorted(out)


def _pjoin(p, k):
    return p + "." + k if p else k


def _prune(x, s, p, out, root=False):
    if s is not None and s.get("x-kubernetes-preserve-unknown-fields") is True:
        _skip_prune(x, s, p, out, root)
        return
    if isinstance(x, dict):
        if s is None:
            for k in list(x):
                out.append(_pjoin(p, k))
                del x[k]
            return
        emb = root or s.get("x-kubernetes-embedded-resource")
        props = _props(s)
        for k in list(x):
            if emb and k in META_FIELDS:
                continue
            if k in props:
                _prune(x[k], props[k], _pjoin(p, k), out)
            elif _has_addl(s):
                _prune(x[k], _addl(s), _pjoin(p, k), out)
            else:
                out.append(_pjoin(p, k))
                del x[k]
    elif isinstance(x, list):
        items = s.get("items") if s is not None else None
        for i, v in enumerate(x):
            _prune(v, items, "%s[%d]" % (p, i), out)


def _skip_prune(x, s, p, out, root):
    if s is None:
        return
    if isinstance(x, dict):
        emb = root or s.get("x-kubernetes-embedded-resource")
        props = _props(s)
        for k, v in x.items():
            if emb and k in META_FIELDS:
                continue
            if k in props:
                _prune(v, props[k], _pjoin(p, k), out)
            elif _has_addl(s):
                _prune(v, _addl(s), _pjoin(p, k), out)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            _skip_prune(v, s.get("items"), "%s[%d]" % (p, i), out, False)


def _prune_nulls(x, s):
    """defaulting.PruneNonNullableNullsWithoutDefaults."""
    if s is None:
        return
    if isinstance(x, dict):
        props = _props(s)
        for k in list(x):
            v = x[k]
            if k in props:
                ps = props[k]
                if v is None and ps.get("default") is None and not ps.get("nullable"):
                    del x[k]
                else:
                    _prune_nulls(v, ps)
            elif _has_addl(s):
                _prune_nulls(v, _addl(s))
    elif isinstance(x, list):
        for v in x:
            _prune_nulls(v, s.get("items"))


# ------------------------------------------------------------------ defaulting

def apply_defaults(schema, obj):
    """Fill in `default` values, in place (defaulting.Default): an absent property, or a
    null one whose schema is not nullable, gets a deep copy of its default, then is
    walked itself, so defaults inside a defaulted object apply too; map values
    (additionalProperties) and list items that are null and not nullable get their
    schema's default; present values are never overridden; nullable nulls stay."""
    _default(obj, schema)


def _non_nullable_null(x, s):
    return x is None and s is not None and not s.get("nullable")


def _default(x, s):
    if s is None:
        return
    if isinstance(x, dict):
        props = _props(s)
        for k, ps in props.items():
            if "default" not in ps or ps["default"] is None:
                continue
            if k not in x or _non_nullable_null(x[k], ps):
                x[k] = copy.deepcopy(ps["default"])
        for k in list(x):
            if k in props:
                _default(x[k], props[k])
            elif _has_addl(s):
                ap = _addl(s)
                if _non_nullable_null(x[k], ap):
                    x[k] = copy.deepcopy(ap.get("default"))
                _default(x[k], ap)
    elif isinstance(x, list):
        items = s.get("items")
        for i in range(len(x)):
            if _non_nullable_null(x[i], items):
                x[i] = copy.deepcopy(items.get("default"))
            _default(x[i], items)


# ------------------------------------------------------------------ formats

# What apiextensions keeps of `format` (validation.StripUnsupportedFormatsPostProcess):
# for strings only these names (compared without dashes), int32/int64 for integers,
# float/double for numbers; anything else is ignored. Numeric formats are never range
# checked for custom resources (kube-openapi's number check gets no type/format there).
STRING_FORMATS = ("bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac", "uuid",
                  "uuid3", "uuid4", "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn", "hexcolor",
                  "rgbcolor", "byte", "password", "date", "duration", "datetime", "quantity")


def _effective_format(s):
    f = s.get("format") or ""
    if not f:
        return ""
    types = _types(s)
    t = types[0] if len(types) == 1 else ""
    if t in ("", "string"):
        return f if f.replace("-", "") in STRING_FORMATS else ""
    if t == "integer":
        return f if f in ("int32", "int64") else ""
    if t == "number":
        return f if f in ("float", "double") else ""
    return ""


def _is_date(v):
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", v)
    if not m:
        return False
    y, mo, d = map(int, m.groups())
    if not 1 <= mo <= 12:
        return False
    days = [31, 29 if (y % 4 == 0 and y % 100 != 0) or y % 400 == 0 else 28, 31, 30, 31, 30, 31, 31, 30, 31,
            30, 31][mo - 1]
    return 1 <= d <= days


def _is_datetime(v):
    parts = v.lower().split("t")
    if len(parts) < 2 or not _is_date(parts[0]):
        return False
    m = re.fullmatch(r"([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))", parts[1])
    return bool(m) and int(m.group(1)) < 24 and int(m.group(2)) < 60 and int(m.group(3)) < 60


def _is_ip(v, sep):
    """strfmt's IsIPv4/IsIPv6: any IP address net.ParseIP takes, with a '.' or a ':' in it."""
    try:
        ipaddress.ip_address(v)
    except ValueError:
        return False
    return sep in v


def _is_cidr(v):
    try:
        ipaddress.ip_network(v, strict=False)
        return "/" in v
    except ValueError:
        return False


def _is_byte(v):
    try:
        base64.b64decode(v, validate=True)
        return True
    except ValueError:
        return False


# strfmt's hostname expression, ASCII only (it also takes Unicode letters and symbols)
_HOSTNAME = re.compile(r"[a-zA-Z0-9]((-?[a-zA-Z0-9]{0,62})?)|"
                       r"([a-zA-Z0-9](([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)(\.)){1,}([a-zA-Z]){2,63}")

_FORMAT_CHECKS = {
    "date": _is_date,
    "datetime": _is_datetime,
    "uuid": lambda v: re.fullmatch(r"(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}", v),
    "uuid3": lambda v: re.fullmatch(r"(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}", v),
    "uuid4": lambda v: re.fullmatch(r"(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?"
                                    r"[0-9a-f]{12}", v),
    "uuid5": lambda v: re.fullmatch(r"(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?"
                                    r"[0-9a-f]{12}", v),
    "byte": _is_byte,
    "hostname": lambda v: (_HOSTNAME.fullmatch(v) and len(v) <= 255
                           and all(len(x) <= 63 for x in v.split("."))),
    "ipv4": lambda v: _is_ip(v, "."),
    "ipv6": lambda v: _is_ip(v, ":"),
    "cidr": _is_cidr,
    "mac": lambda v: re.fullmatch(r"[0-9A-Fa-f]{2}([:-])[0-9A-Fa-f]{2}(\1[0-9A-Fa-f]{2}){4}", v),
    "bsonobjectid": lambda v: re.fullmatch(r"[0-9a-fA-F]{24}", v),
    "hexcolor": lambda v: re.fullmatch(r"#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})", v),
    "ssn": lambda v: re.fullmatch(r"\d{3}[- ]?\d{2}[- ]?\d{4}", v),
    "email": lambda v: re.fullmatch(r"[^@\s<>]+@[^@\s<>]+", v),
    "uri": lambda v: v.startswith("/") or bool(re.match(r"[A-Za-z][A-Za-z0-9+.-]*:\S", v)),
    "duration": lambda v: re.fullmatch(r"[-+]?((\d+(\.\d*)?|\.\d+)\s*(ns|us|µs|ms|s|m|h|d|w)[a-z]*\s*)+", v),
    "quantity": lambda v: re.fullmatch(r"[+-]?(\d+(\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|"
                                       r"[eE][+-]?\d+)?", v),
}


# ------------------------------------------------------------------ kube-openapi validation

def _in(name):
    return "%s in body" % name


def _err_path(name):
    """kubeOpenAPIResultToFieldErrors: the error's name, less one leading dot, under the nil path."""
    if name in ("", "."):
        return "<nil>"
    return name[1:] if name.startswith(".") else name


def _enum_eq(v, e):
    if isinstance(v, bool) or isinstance(e, bool):
        return isinstance(v, bool) and isinstance(e, bool) and v == e
    if isinstance(e, int) and isinstance(v, float):
        return math.isfinite(v) and int(v) == e          # Go converts the value to the enum's type
    if isinstance(v, (int, float)) and isinstance(e, (int, float)):
        return v == e
    return _deep_equal(v, e)


def _deep_equal(a, b):
    """reflect.DeepEqual on unstructured values: int and float differ, bool is not a number."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_deep_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_deep_equal(x, y) for x, y in zip(a, b))
    return a == b


def _is_json_integer(f):
    """swag.IsFloat64AJSONInteger."""
    if not math.isfinite(f):
        return False
    g = float(math.trunc(f))
    if f == g:
        return True
    if abs(f) < 1e-9:
        return True
    diff = abs(f - g)
    return diff < 1e-9 or diff < 1e-9 * abs(f)


NO_OLD = object()   # no correlated old value (create, or a node new in this update)


def _correlated(old, k):
    return old[k] if isinstance(old, dict) and k in old else NO_OLD


def _openapi(s, v, name, out, old=NO_OLD):
    """One node of kube-openapi's SchemaValidator: type, string, format, number, slice, enum,
    object, in that order, each only for the data kinds it applies to.

    Ratcheting (CRDValidationRatcheting, on by default since 1.30): a node equal to its
    correlated old value passes, whatever its subtree holds; children correlate by
    property, map key and list-type map key."""
    if s is None or (old is not NO_OLD and _deep_equal(v, old)):
        return
    types = _types(s)
    if v is None:
        if types and not s.get("nullable"):
            out.append(_type_invalid(_err_path(name), "null",
                                     '%s must be of type %s: "null"' % (_in(name), ",".join(types))))
        _check_enum(s, v, name, out)
        return
    kind = _kind(v)
    fmt = _effective_format(s)
    if types or fmt:
        _check_type(types, fmt, v, kind, name, out)
    _check_alternatives(s, v, name, out)
    if kind == "string":
        _check_string(s, v, name, out)
        check = _FORMAT_CHECKS.get(fmt.replace("-", "")) if fmt else None
        if check is not None and not check(v):
            out.append(_type_invalid(_err_path(name), v, "%s must be of type %s: %s" % (_in(name), fmt, go_quote(v))))
    elif kind in ("integer", "number"):
        _check_number(s, v, kind, name, out)
    elif kind == "array":
        _check_array(s, v, name, out, old)
    _check_enum(s, v, name, out)
    if kind == "object":
        _check_object(s, v, name, out, old)


def _check_type(types, fmt, v, kind, name, out):
    data_fmt = {"integer": "int64", "number": "float64"}.get(kind, "")
    float_int = kind == "number" and "integer" in types and _is_json_integer(v)
    int_float = kind == "integer" and "number" in types
    if kind not in ("string", "array") and fmt and not (kind in types or data_fmt == fmt or float_int or int_float):
        want, got = fmt, data_fmt
    elif not ("number" in types or "integer" in types) and fmt and kind in ("string", "array"):
        return
    elif not (kind in types or float_int or int_float):
        want, got = ",".join(types), kind
    else:
        return
    out.append(_type_invalid(_err_path(name), got, "%s must be of type %s: %s" % (_in(name), want, go_quote(got))))


def _composite(name, text):
    """A kube-openapi composite error: not a field error, so reported on the nil path."""
    return ("<nil>", "FieldValueInvalid", 'Invalid value: "": %s %s' % (go_quote(name), text))


def _check_alternatives(s, v, name, out):
    """anyOf, oneOf, allOf, not (schemaPropsValidator). Of failing alternatives kube-openapi
    keeps those of the one with most passing checks; here the first failing one."""
    def run(alt):
        errs = []
        _openapi(alt, v, name, errs)
        return errs
    if s.get("anyOf"):
        results = [run(a) for a in s["anyOf"]]
        if all(results):
            out.append(_composite(name, "must validate at least one schema (anyOf)"))
            out.extend(results[0])
    if s.get("oneOf"):
        results = [run(a) for a in s["oneOf"]]
        valid = sum(1 for r in results if not r)
        if valid != 1:
            out.append(_composite(name, "must validate one and only one schema (oneOf). %s"
                                  % ("Found none valid" if valid == 0 else "Found %d valid alternatives" % valid)))
            if valid == 0:
                out.extend(results[0])
    if s.get("allOf"):
        results = [run(a) for a in s["allOf"]]
        for r in results:
            out.extend(r)
        valid = sum(1 for r in results if not r)
        if valid != len(results):
            out.append(_composite(name, "must validate all the schemas (allOf)%s"
                                  % (". None validated" if valid == 0 else "")))
    if isinstance(s.get("not"), dict) and not run(s["not"]):
        out.append(_composite(name, "must not validate the schema (not)"))


def _check_string(s, v, name, out):
    n = len(v)
    if "maxLength" in s and n > s["maxLength"]:
        out.append(_too_long(_err_path(name), s["maxLength"]))
    elif "minLength" in s and n < s["minLength"]:
        out.append(_invalid(_err_path(name), v, "%s should be at least %d chars long" % (_in(name), s["minLength"])))
    elif s.get("pattern"):
        try:
            ok = re.search(s["pattern"], v) is not None
            shown = s["pattern"]
        except re.error as e:
            ok, shown = False, "%s, but pattern is invalid: %s" % (s["pattern"], e)
        if not ok:
            out.append(_invalid(_err_path(name), v, "%s should match '%s'" % (_in(name), shown)))


def _bound(limit, kind):
    """The bound as kube-openapi prints it: truncated to an int for int data, else a float64."""
    return str(int(limit)) if kind == "integer" else go_float(float(limit))


def _check_number(s, v, kind, name, out):
    """multipleOf, minimum, maximum: all reported, in that order."""
    mult = s.get("multipleOf")
    if mult is not None and mult > 0:
        if kind == "integer" and int(mult) != 0:
            if v % int(mult) != 0:
                out.append(_invalid(_err_path(name), v, "%s should be a multiple of %d" % (_in(name), int(mult))))
        elif kind == "number" or int(mult) == 0:
            q = (1 / mult * v) if mult < 1 else (v / mult)
            if not _is_json_integer(q):
                out.append(_invalid(_err_path(name), v, "%s should be a multiple of %s"
                                    % (_in(name), go_float(float(mult)))))
    for key, excl_key, below in (("minimum", "exclusiveMinimum", True), ("maximum", "exclusiveMaximum", False)):
        if s.get(key) is None:
            continue
        limit = int(s[key]) if kind == "integer" else float(s[key])
        excl = bool(s.get(excl_key))
        if below:
            bad = v <= limit if excl else v < limit
            words = "greater than" if excl else "greater than or equal to"
        else:
            bad = v >= limit if excl else v > limit
            words = "less than" if excl else "less than or equal to"
        if bad:
            out.append(_invalid(_err_path(name), v, "%s should be %s %s"
                                % (_in(name), words, _bound(s[key], kind))))


def _check_array(s, v, name, out, old):
    items = s.get("items")
    if isinstance(items, dict):
        by_key = _map_list_old(s, old)
        for i, x in enumerate(v):
            _openapi(items, x, "%s[%d]" % (name, i), out, _old_item(s, by_key, x))
    if "minItems" in s and len(v) < s["minItems"]:
        out.append(_invalid(_err_path(name), len(v), "%s should have at least %d items" % (_in(name), s["minItems"])))
    if "maxItems" in s and len(v) > s["maxItems"]:
        out.append(_too_many(_err_path(name), len(v), s["maxItems"]))
    if s.get("uniqueItems"):
        seen = []
        for x in v:
            if any(_deep_equal(x, y) for y in seen):
                out.append(_invalid(_err_path(name), "", "%s shouldn't contain duplicates" % _in(name)))
                break
            seen.append(x)


def _check_enum(s, v, name, out):
    enum = s.get("enum")
    if not enum:
        return
    if v is not None and any(_enum_eq(v, e) for e in enum):
        return
    out.append(_not_supported(_err_path(name), v, [e if isinstance(e, str) else go_json(e) for e in enum]))


def _check_object(s, v, name, out, old):
    n = len(v)
    if "minProperties" in s and n < s["minProperties"]:
        out.append(_invalid(_err_path(name), n, "%s should have at least %d properties"
                            % (_in(name), s["minProperties"])))
        return
    if "maxProperties" in s and n > s["maxProperties"]:
        out.append(_too_many(_err_path(name), n, s["maxProperties"]))
        return
    props = _props(s)
    ap = _addl(s)
    if ap is not None:
        for k, x in v.items():
            if k not in props:
                _openapi(ap, x, name + "." + k, out, _correlated(old, k))
    for k, ps in props.items():
        if k in v:
            _openapi(ps, v[k], _pjoin(name, k), out, _correlated(old, k))
    for k in s.get("required") or []:
        if k not in v:
            out.append(_required(_err_path(name + "." + k)))


# ------------------------------------------------------------------ embedded resources, list types

def _embedded(s, x, p, out):
    """objectmeta.Validate: an x-kubernetes-embedded-resource object needs apiVersion and kind."""
    if s is None:
        return
    if isinstance(x, dict):
        if s.get("x-kubernetes-embedded-resource"):
            for f in ("apiVersion", "kind"):
                if f not in x:
                    out.append(_required(_child(p, f), "must not be empty"))
            for f in ("apiVersion", "kind"):
                if f in x:
                    val = x[f]
                    if not isinstance(val, str):
                        out.append(_invalid(_child(p, f), val, "must be a string"))
                    elif val == "":
                        out.append(_invalid(_child(p, f), val, "must not be empty"))
                    elif f == "apiVersion" and val.count("/") > 1:
                        out.append(_invalid(_child(p, f), val, "unexpected GroupVersion string: " + val))
        props = _props(s)
        for k, v in x.items():
            if k in props:
                _embedded(props[k], v, _child(p, k), out)
            elif _has_addl(s):
                _embedded(_addl(s), v, _key(p, k), out)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            _embedded(s.get("items"), v, _index(p, i), out)


def _list_types(s, x, p, out):
    """listtype.ValidateListSetsAndMaps: set items and map keys must be unique."""
    if s is None:
        return
    if isinstance(x, dict):
        props = _props(s)
        if _addl(s) is not None:
            for k, v in x.items():
                _list_types(_addl(s), v, _key(p, k), out)
        for k, v in x.items():
            if k in props:
                _list_types(props[k], v, _child(p, k), out)
    elif isinstance(x, list):
        lt = s.get("x-kubernetes-list-type")
        if lt == "set":
            for i in _non_unique(x):
                out.append(_duplicate(_index(p, i), x[i]))
        elif lt == "map":
            _list_map(s, x, p, out)
        for i, v in enumerate(x):
            _list_types(s.get("items"), v, _index(p, i), out)


def _identity(v):
    """Equality as Go's map keys / JSON text see it: 1 and 1.0 differ as scalars, not as JSON."""
    if isinstance(v, (dict, list)):
        return ("json", go_json(v))
    return (type(v).__name__, v)


def _non_unique(values):
    """Indexes of the second occurrence of each repeated value (validateListSet)."""
    seen, out = {}, []
    for i, v in enumerate(values):
        k = _identity(v)
        seen[k] = seen.get(k, 0) + 1
        if seen[k] == 2:
            out.append(i)
    return out


_UNSPECIFIED = object()


def _list_map(s, x, p, out):
    for i, v in enumerate(x):
        if v is not None and not isinstance(v, dict):
            out.append(_invalid(_index(p, i), v, "must be an object for an array of list-type map"))
            return
    if len(x) <= 1:
        return
    keys = s.get("x-kubernetes-list-map-keys") or []
    if len(keys) == 1:
        k0 = keys[0]
        vals = [v[k0] if isinstance(v, dict) and k0 in v else _UNSPECIFIED for v in x]
        ident = [("unspecified",) if v is _UNSPECIFIED else _identity(v) for v in vals]
        shown = [{} if v is _UNSPECIFIED else {k0: v} for v in vals]
    else:
        shown = [{k: v[k] for k in keys if k in v} if isinstance(v, dict) else {} for v in x]
        ident = [_identity(v) for v in shown]
    seen = {}
    for i, k in enumerate(ident):
        seen[k] = seen.get(k, 0) + 1
        if seen[k] == 2:
            out.append(_duplicate(_index(p, i), shown[i]))


# ------------------------------------------------------------------ CEL rules

_BLOCKING = ("FieldValueNotSupported", "FieldValueRequired", "FieldValueTooLong", "FieldValueTooMany",
             "FieldValueTypeInvalid")
SKIPPED_RULES = ("<nil>", "FieldValueInvalid", 'Invalid value: "null": some validation rules were not checked '
                 "because the object was invalid; correct the existing errors to complete validation")


def _has_rules(s):
    if not isinstance(s, dict):
        return False
    if s.get("x-kubernetes-validations"):
        return True
    return (any(_has_rules(x) for x in _props(s).values()) or _has_rules(s.get("items"))
            or _has_rules(s.get("additionalProperties")))


def _uses_old_self(rule):
    return re.search(r"\boldSelf\b", rule) is not None


def _rule_error_string(r):
    return (r.get("message") or "").strip() or (r.get("rule") or "").strip()


def _rule_message(r):
    m = (r.get("message") or "").strip()
    return m if m else "failed rule: %s" % _rule_error_string(r)


def _rule_field_path(s, fp):
    """ValidFieldPath: `.a.b`, `['a.b']` -> the field.Path text, or None if it does not fit the schema."""
    toks = re.findall(r"\.([^.\[\]]+)|\['((?:[^'\\]|\\.)*)'\]", fp)
    if not toks or "".join("." + a if a else "['%s']" % b for a, b in toks) != fp:
        return None
    p, node = None, s
    for a, b in toks:
        name = a or re.sub(r"\\(.)", r"\1", b)
        if node is None:
            return None
        if node.get("properties") is not None:
            if name not in node["properties"]:
                return None
            p, node = _child(p, name), node["properties"][name]
        elif _addl(node) is not None:
            p, node = _key(p, name), _addl(node)
        else:
            return None
    return p


def _rule_error(path, stype, detail, reason):
    if reason == "FieldValueForbidden":
        return _forbidden(path, detail)
    if reason == "FieldValueRequired":
        return _required(path, detail)
    if reason == "FieldValueDuplicate":
        return _duplicate(path, stype)
    return _invalid(path, stype, detail)


def _cel_node(s, v, old, p, cel, out):
    rules = [r for r in s.get("x-kubernetes-validations") or [] if r.get("rule")]
    run = [r for r in rules if not (_uses_old_self(r["rule"]) and old is None)]
    if not run:
        return
    variables = {"self": v}
    if old is not None:
        variables["oldSelf"] = old
    results = cel.evaluate([r["rule"] for r in run], variables)
    stype = s.get("type") or ""
    unchanged = old is not None and _deep_equal(v, old)      # ratcheting: a warning upstream, dropped here

    def reported(r, k, val):
        return k == "value" and val is not True and not (unchanged and not _uses_old_self(r["rule"]))
    failed = [r for r, (k, val) in zip(run, results) if reported(r, k, val)]
    msg_exprs = [r["messageExpression"] for r in failed if r.get("messageExpression")]
    msg_values = iter(cel.evaluate(msg_exprs, variables) if msg_exprs else [])
    for r, (k, val) in zip(run, results):
        if k == "error":
            if val.startswith("no such overload"):
                detail = ("'%s': call arguments did not match a supported operator, function or macro signature "
                          "for rule: %s" % (val, _rule_error_string(r)))
            else:
                detail = "%s evaluating rule: %s" % (val, _rule_error_string(r))
            out.append(_invalid(_shown(p), stype, detail))
            continue
        if not reported(r, k, val):
            continue
        detail = _rule_message(r)
        if r.get("messageExpression"):
            mk, mv = next(msg_values)
            if mk == "value" and isinstance(mv, str) and mv.strip() and "\n" not in mv.strip():
                detail = mv.strip()
        where = p
        if r.get("fieldPath"):
            rel = _rule_field_path(s, r["fieldPath"])
            if rel is not None:
                where = _child(p, rel)
        out.append(_rule_error(_shown(where), stype, detail, r.get("reason")))


def _map_list_old(s, old):
    """Old items of a list-type map by key (the only list items that correlate), or None."""
    if s.get("x-kubernetes-list-type") != "map" or not isinstance(old, list):
        return None
    keys = s.get("x-kubernetes-list-map-keys") or []
    return {go_json([o.get(k) for k in keys]): o for o in old if isinstance(o, dict)}


def _old_item(s, by_key, x):
    if by_key is None or not isinstance(x, dict):
        return NO_OLD
    keys = s.get("x-kubernetes-list-map-keys") or []
    return by_key.get(go_json([x.get(k) for k in keys]), NO_OLD)


def _cel_walk(s, v, old, p, cel, out):
    """cel.Validator.validate: a node's rules, then its children (with their old values
    where they correlate: same property, same map key, same list-type map key)."""
    if s is None or v is None:
        return
    _cel_node(s, v, old, p, cel, out)
    if isinstance(v, dict):
        oldm = old if isinstance(old, dict) else {}
        ap = _addl(s)
        if ap is not None:
            for k, x in v.items():
                _cel_walk(ap, x, oldm.get(k), _key(p, k), cel, out)
        props = _props(s)
        for k, x in v.items():
            if k in props:
                _cel_walk(props[k], x, oldm.get(k), _child(p, k), cel, out)
    elif isinstance(v, list):
        by_key = _map_list_old(s, old)
        for i, x in enumerate(v):
            o = _old_item(s, by_key, x)
            _cel_walk(s.get("items"), x, None if o is NO_OLD else o, _index(p, i), cel, out)


# ------------------------------------------------------------------ validate

def validate(schema, obj, old=None, cel=None):
    """The apiserver's validation of a custom resource against one version's schema
    (customResourceStrategy.Validate / ValidateUpdate), as (path, reason, message) tuples:

    1. kube-openapi: type (x-kubernetes-int-or-string = integer or string; nullable),
       anyOf/oneOf/allOf/not, maxLength, minLength, pattern, format (the string formats apiextensions keeps),
       multipleOf, minimum, maximum (+exclusive), items, minItems, maxItems, enum,
       minProperties, maxProperties, additionalProperties values, properties, required;
    2. x-kubernetes-embedded-resource objects need apiVersion and kind;
    3. x-kubernetes-list-type set (unique items) and map (unique x-kubernetes-list-map-keys);
       on update only if `old` had no such duplicates (the apiserver's ratcheting there);
    4. x-kubernetes-validations, when `cel` (a kubesim.cel.CelEvaluator) is given and the
       schema has rules: skipped with one "some validation rules were not checked" error
       if 1-3 found a type, required, enum, too long or too many error; else evaluated
       with `self` (and `oldSelf` when `old` has the value: transition rules, those that
       mention oldSelf, run only then), using message, messageExpression, reason and
       fieldPath as the apiserver does.

    On update (`old` given) errors are ratcheted as 1.30-1.32 do by default
    (CRDValidationRatcheting): a schema error or a failed non-transition rule is dropped
    when its value equals the correlated old value (the apiserver turns a ratcheted rule
    failure into a warning; this interface has none).

    Not done: metadata checks inside embedded resources, CEL cost limits and
    optionalOldSelf."""
    out = []
    _openapi(schema, obj, "", out, NO_OLD if old is None else old)
    _embedded(schema, obj, None, out)
    if old is None or not _list_errors(schema, old):
        out.extend(_list_errors(schema, obj))
    if cel is not None and _has_rules(schema):
        if any(e[1] in _BLOCKING for e in out):
            out.append(SKIPPED_RULES)
        else:
            _cel_walk(schema, obj, old, None, cel, out)
    return out


def _list_errors(schema, obj):
    out = []
    _list_types(schema, obj, None, out)
    return out


# ------------------------------------------------------------------ CRD-side checks

def check_schema(schema, path="spec.versions[0].schema.openAPIV3Schema", cel=None):
    """A small part of what the apiserver checks in a CRD version's schema when the CRD
    is written, as (path, reason, message) tuples under `path` (pass the version's own,
    e.g. "spec.versions[1].schema.openAPIV3Schema"):

    - a node without `type` (unless x-kubernetes-int-or-string or
      x-kubernetes-preserve-unknown-fields): "Required value: must not be empty at the
      root" / "... for specified object fields" / "... for specified array items";
    - the root's type must be object; an x-kubernetes-embedded-resource node's too;
    - with `cel`, x-kubernetes-validations rules that do not parse, with the helper's
      "compilation failed: ..." (@bufbuild/cel's wording, not cel-go's).

    Not checked: the rest of structural-schema validity (metadata restrictions,
    forbidden keywords, additionalProperties with properties, list-type/map-keys
    consistency, defaults against the schema), CEL type checking and cost estimates,
    messageExpression and fieldPath validity, the other CRD fields."""
    out = []
    _check_node(schema, path, "root", out, cel)
    return out


_LEVEL_DETAIL = {"root": "must not be empty at the root", "field": "must not be empty for specified object fields",
                 "item": "must not be empty for specified array items"}


def _check_node(s, p, level, out, cel):
    if not isinstance(s, dict):
        return
    t = s.get("type") or ""
    if s.get("x-kubernetes-embedded-resource") and t != "object":
        msg = "must be object if x-kubernetes-embedded-resource is true"
        out.append(_required(p + ".type", msg) if not t else _invalid(p + ".type", t, msg))
    elif not t and not s.get("x-kubernetes-int-or-string") and not s.get("x-kubernetes-preserve-unknown-fields"):
        out.append(_required(p + ".type", _LEVEL_DETAIL[level]))
    if level == "root" and t and t != "object":
        out.append(_invalid(p + ".type", t, "must be object at the root"))
    rules = s.get("x-kubernetes-validations") or []
    if cel is not None and rules:
        results = cel.compile([r.get("rule") or "" for r in rules])
        for i, (r, (k, val)) in enumerate(zip(rules, results)):
            if k == "error":
                out.append(("%s.x-kubernetes-validations[%d].rule" % (p, i), "FieldValueInvalid",
                            "Invalid value: %s: %s" % (_rule_struct(r), val)))
    for name, ps in _props(s).items():
        _check_node(ps, "%s.properties[%s]" % (p, name), "field", out, cel)
    if isinstance(s.get("items"), dict):
        _check_node(s["items"], p + ".items", "item", out, cel)
    if _addl(s) is not None:
        _check_node(_addl(s), p + ".additionalProperties", "field", out, cel)


def _rule_struct(r):
    """The rule as field.Error prints the Go struct apiextensions.ValidationRule (%#v); a set
    reason or optionalOldSelf is a pointer there, printed as an address: a fixed one here."""
    reason = r.get("reason")
    opt = r.get("optionalOldSelf")
    return ('apiextensions.ValidationRule{Rule:%s, Message:%s, MessageExpression:%s, Reason:%s, FieldPath:%s, '
            "OptionalOldSelf:%s}" % (go_quote(r.get("rule") or ""), go_quote(r.get("message") or ""),
                                     go_quote(r.get("messageExpression") or ""),
                                     "(*apiextensions.FieldValueErrorReason)(%s)" % ("nil" if reason is None
                                                                                     else _ADDRESS),
                                     go_quote(r.get("fieldPath") or ""),
                                     "(*bool)(%s)" % ("nil" if opt is None else _ADDRESS)))


_ADDRESS = "0xc000000000"
