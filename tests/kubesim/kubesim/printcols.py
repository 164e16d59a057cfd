"""Tables of custom resources: a CRD version's additionalPrinterColumns.

kubectl prints the Table the server builds. For custom resources the
apiextensions tableconvertor builds it from the version's
`additionalPrinterColumns` (or, when it gives none, one `Age` column of
`.metadata.creationTimestamp`): a `Name` column first, then one column per
entry, each cell the first value its `jsonPath` finds (a kubectl JSONPath
without the braces), converted by the column's type. Nothing found, a null
or a value of the wrong type is a null cell (kubectl prints `<none>`).
"""
import re

from .clock import parse_rfc3339
from .structural import go_float, go_json
from .tables import AGE, NAME, human_duration

DEFAULT_COLUMNS = [{"name": "Age", "type": "date", "description": AGE["description"],
                    "jsonPath": ".metadata.creationTimestamp"}]


def _columns(printer_columns):
    """serveDefaultColumnsIfEmpty."""
    return printer_columns or DEFAULT_COLUMNS


def column_definitions(printer_columns):
    """Table.columnDefinitions: Name, then one per printer column (name, type, format,
    description: the column's own or "Custom resource definition column (in JSONPath
    format): <jsonPath>", priority)."""
    out = [dict(NAME)]
    for c in _columns(printer_columns):
        out.append({"name": c["name"], "type": c.get("type", "string"), "format": c.get("format", ""),
                    "description": c.get("description") or
                    "Custom resource definition column (in JSONPath format): %s" % c.get("jsonPath", ""),
                    "priority": c.get("priority", 0)})
    return out


def row_cells(printer_columns, obj, now):
    """One row's cells: metadata.name, then each column's value (`now`: epoch seconds, for ages)."""
    cells = [(obj.get("metadata") or {}).get("name", "")]
    for c in _columns(printer_columns):
        try:
            found = find(c.get("jsonPath", ""), obj)
        except ValueError:
            found = []
        cells.append(cell(c.get("type", "string"), found[0], now) if found else None)
    return cells


def cell(col_type, value, now):
    """tableconvertor's cellForJSONValue; strings as JSONPath prints them (maps and lists as
    compact JSON, numbers as Go prints them)."""
    if value is None:
        return None
    if col_type == "string":
        return _text(value)
    if col_type == "integer":
        if isinstance(value, bool):
            return None
        if isinstance(value, int):
            return value
        return int(value) if isinstance(value, float) else None
    if col_type == "number":
        if isinstance(value, bool):
            return None
        return float(value) if isinstance(value, (int, float)) else None
    if col_type == "boolean":
        return value if isinstance(value, bool) else None
    if col_type == "date":
        if not isinstance(value, str):
            return None
        if value in ("", "null"):
            return "<unknown>"
        if not _RFC3339.fullmatch(value):
            return "<invalid>"
        try:
            return human_duration(now - parse_rfc3339(value))
        except ValueError:
            return "<invalid>"
    return None


_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})")


def _text(v):
    if isinstance(v, (dict, list)):
        return go_json(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return go_float(v)
    return str(v)


# ------------------------------------------------------------------ JSONPath

_TOKEN = re.compile(r"""
    \.\.(?P<rname>(?:\\.|[^.\[\]\\])+)   # ..name: recursive descent
  | \.(?P<name>(?:\\.|[^.\[\]\\])+)      # .name (or .*), "\." a dot inside a name
  | \[\s*(?P<q>'[^']*'|"[^"]*")\s*\]    # ['name']
  | \[\?\((?P<filter>.*?)\)\]           # [?(@.type=="Ready")]
  | \[(?P<sub>[^\]]*)\]                 # [0], [-1], [*], [1:3]
""", re.X)

_FILTER = re.compile(r"""\s*@(?P<path>(?:\.[^.\s=!<>\[\]]+|\[[^\]]*\])*)\s*
    (?:(?P<op>==|!=|<=|>=|<|>)\s*(?P<lit>"[^"]*"|'[^']*'|-?\d+(?:\.\d+)?|true|false|null))?\s*$""", re.X)


def parse(path):
    """A column's jsonPath (".status.conditions[?(@.type==\\"Ready\\")].status") -> steps."""
    path = path.strip()
    if path.startswith("{") and path.endswith("}"):
        path = path[1:-1]
    if path and path[0] not in ".[":
        path = "." + path
    steps, pos = [], 0
    while pos < len(path):
        m = _TOKEN.match(path, pos)
        if not m:
            raise ValueError("unrecognized JSONPath at %r" % path[pos:])
        pos = m.end()
        if m.group("rname"):
            steps.append(("recurse", _unescape(m.group("rname"))))
        elif m.group("name"):
            steps.append(("all",) if m.group("name") == "*" else ("key", _unescape(m.group("name"))))
        elif m.group("q"):
            steps.append(("key", m.group("q")[1:-1]))
        elif m.group("filter") is not None:
            f = _FILTER.match(m.group("filter"))
            if not f:
                raise ValueError("unsupported filter %r" % m.group("filter"))
            steps.append(("filter", parse(f.group("path")) if f.group("path") else [], f.group("op"),
                          _literal(f.group("lit"))))
        else:
            steps.append(_subscript(m.group("sub").strip()))
    return steps


def _unescape(name):
    return re.sub(r"\\(.)", r"\1", name)


def _literal(s):
    if s is None:
        return None
    if s[0] in "'\"":
        return s[1:-1]
    if s in ("true", "false"):
        return s == "true"
    if s == "null":
        return None
    return float(s) if "." in s else int(s)


def _subscript(s):
    if s == "*":
        return ("all",)
    if ":" in s:
        a, _, b = s.partition(":")
        return ("slice", int(a) if a.strip() else None, int(b) if b.strip() else None)
    return ("index", int(s))


def find(path, obj):
    """Every value `path` finds in obj, in order (missing keys find nothing)."""
    nodes = [obj]
    for step in parse(path) if isinstance(path, str) else path:
        nodes = [x for n in nodes for x in _step(step, n)]
    return nodes


def _step(step, n):
    kind = step[0]
    if kind == "key":
        return [n[step[1]]] if isinstance(n, dict) and step[1] in n else []
    if kind == "all":
        return list(n.values()) if isinstance(n, dict) else list(n) if isinstance(n, list) else []
    if kind == "index":
        if isinstance(n, list) and -len(n) <= step[1] < len(n):
            return [n[step[1]]]
        return []
    if kind == "slice":
        return n[step[1]:step[2]] if isinstance(n, list) else []
    if kind == "recurse":
        out = []
        _recurse(n, step[1], out)
        return out
    _, sub, op, lit = step
    items = n if isinstance(n, list) else list(n.values()) if isinstance(n, dict) else []
    return [x for x in items if _matches(x, sub, op, lit)]


def _recurse(n, name, out):
    if isinstance(n, dict):
        if name in n:
            out.append(n[name])
        for v in n.values():
            _recurse(v, name, out)
    elif isinstance(n, list):
        for v in n:
            _recurse(v, name, out)


def _matches(x, sub, op, lit):
    found = find(sub, x)
    if op is None:
        return bool(found)
    if not found:
        return False
    v = found[0]
    if op == "==":
        return v == lit and isinstance(v, bool) == isinstance(lit, bool)
    if op == "!=":
        return not (v == lit and isinstance(v, bool) == isinstance(lit, bool))
    num = (int, float)
    if not (isinstance(v, num) and isinstance(lit, num)) or isinstance(v, bool) or isinstance(lit, bool):
        return False
    return {"<": v < lit, ">": v > lit, "<=": v <= lit, ">=": v >= lit}[op]
