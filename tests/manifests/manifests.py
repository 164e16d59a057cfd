"""What the manifest tests share: rendering, reading objects, RBAC.

render(dir) runs `kubectl kustomize` and reads the result as JSON objects
without a YAML library: `kubectl annotate --local -o json` re-prints any
YAML offline, whatever the kind (cert-manager's included), and adds an
empty annotations map, which nothing here minds.

The RBAC part is a pure function of its inputs: request_attributes() turns
a request the controller made (method and path, as the e2e proxy logs them)
into the attributes the apiserver's authorizer sees (verb, API group,
resource, subresource, namespace, name), and allowed() evaluates them
against RBAC rules as the apiserver's RBAC authorizer does for the subset
our manifests use (no aggregation, no non-resource URLs).
"""
import base64
import json
import os
import subprocess
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MANIFESTS = os.path.join(ROOT, "manifests")
RENDER_SH = os.path.join(ROOT, "certs", "render-manifests.sh")
WEBHOOK_BIN = os.environ.get("OTA_WEBHOOK", os.path.join(ROOT, "build", "ota-webhook"))
CONTROLLER_BIN = os.environ.get("OTA_CONTROLLER", os.path.join(ROOT, "build", "ota-controller"))
NS = "ota-system"


def run(args, stdin=None, env=None):
    """stdout of args; raises with stderr when it fails."""
    p = subprocess.run(args, input=stdin, capture_output=True, text=True, env=env, timeout=120)
    if p.returncode != 0:
        raise AssertionError("%s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr.strip()))
    return p.stdout


def yaml_to_objects(text):
    """Every object of a multi-document YAML stream, as dicts."""
    env = dict(os.environ, KUBECONFIG=os.devnull)
    out = run(["kubectl", "annotate", "--local", "-f", "-", "-o", "json", "ota-manifests-test-none-"],
              stdin=text, env=env)
    dec, i, objs = json.JSONDecoder(), 0, []
    while True:
        while i < len(out) and out[i].isspace():
            i += 1
        if i >= len(out):
            return objs
        obj, i = dec.raw_decode(out, i)
        objs.extend(obj["items"] if obj.get("kind") == "List" else [obj])


def kustomize(path):
    return run(["kubectl", "kustomize", path])


def render(path):
    return yaml_to_objects(kustomize(path))


def render_with_certs(cert_dir, path=None):
    """certs/render-manifests.sh CERT_DIR [path]: (text, objects)."""
    text = run(["bash", RENDER_SH, cert_dir] + ([path] if path else []))
    return text, yaml_to_objects(text)


def kustomizations():
    """Every directory under manifests/ with a kustomization.yaml, but the
    components (kind Component: they render only inside a kustomization)."""
    out = []
    for d, _, files in os.walk(MANIFESTS):
        if "kustomization.yaml" in files and os.sep + "components" + os.sep not in d + os.sep:
            out.append(d)
    return sorted(out)


def find(objs, kind, name=None, namespace=None):
    hits = [o for o in objs if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)
            and (namespace is None or o["metadata"].get("namespace") == namespace)]
    return hits


def one(objs, kind, name, namespace=None):
    hits = find(objs, kind, name, namespace)
    if len(hits) != 1:
        raise AssertionError("%d objects %s %s/%s" % (len(hits), kind, namespace, name))
    return hits[0]


def flag_value(args, flag):
    """The value of --flag=V or --flag V in a container's args, else None."""
    for i, a in enumerate(args):
        if a.startswith(flag + "="):
            return a[len(flag) + 1:]
        if a == flag and i + 1 < len(args):
            return args[i + 1]
    return None


def port_of(address):
    """":9443" or "0.0.0.0:9443" -> 9443."""
    return int(address.rsplit(":", 1)[1])


def b64(path):
    with open(path, "rb") as f:
        return base64.b64encode(f.read()).decode()


# ---------------------------------------------------------------- RBAC


def request_attributes(method, path):
    """(verb, group, resource, subresource, namespace, name) of an API request,
    as the apiserver's request-info resolver reads it; None for a path that is
    not a resource (/version, /healthz, discovery)."""
    u = urllib.parse.urlsplit(path)
    q = urllib.parse.parse_qs(u.query)
    parts = [p for p in u.path.split("/") if p]
    if parts[:2] == ["api", "v1"]:
        group, rest = "", parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        group, rest = parts[1], parts[3:]
    else:
        return None
    if not rest:
        return None
    namespace = ""
    if rest[0] == "namespaces" and len(rest) >= 3:
        namespace, rest = rest[1], rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    sub = rest[2] if len(rest) > 2 else ""
    watch = q.get("watch", ["0"])[0] in ("1", "true")
    if method == "GET":
        verb = ("watch" if watch else "get") if name else ("watch" if watch else "list")
    else:
        verb = {"POST": "create", "PUT": "update", "PATCH": "patch",
                "DELETE": "delete" if name else "deletecollection"}.get(method)
        if verb is None:
            return None
    return (verb, group, resource, sub, namespace, name)


def rule_allows(rule, attrs):
    verb, group, resource, sub, _, name = attrs
    full = resource + ("/" + sub if sub else "")
    if not any(g in ("*", group) for g in rule.get("apiGroups", [])):
        return False
    if not any(r in ("*", full) for r in rule.get("resources", [])):
        return False
    if not any(v in ("*", verb) for v in rule.get("verbs", [])):
        return False
    names = rule.get("resourceNames") or []
    return not names or name in names


def subject_rules(objs, sa_namespace, sa_name):
    """[(scope namespace or "" for cluster-wide, rule)] granted to a service
    account by the RoleBindings and ClusterRoleBindings among objs."""
    out = []

    def bound(b):
        return any(s.get("kind") == "ServiceAccount" and s.get("name") == sa_name
                   and s.get("namespace") == sa_namespace for s in b.get("subjects") or [])

    for b in find(objs, "ClusterRoleBinding"):
        if bound(b):
            role = one(objs, "ClusterRole", b["roleRef"]["name"])
            out += [("", r) for r in role.get("rules") or []]
    for b in find(objs, "RoleBinding"):
        if bound(b):
            ns = b["metadata"]["namespace"]
            kind = b["roleRef"]["kind"]
            role = one(objs, kind, b["roleRef"]["name"], ns if kind == "Role" else None)
            out += [(ns, r) for r in role.get("rules") or []]
    return out


def allowed(granted, attrs):
    """Whether any of granted [(scope, rule)] allows the request attrs."""
    namespace = attrs[4]
    return any(rule_allows(rule, attrs) for scope, rule in granted
               if scope == "" or scope == namespace)


def unused_grants(granted, used):
    """Each (scope, group, resource, verb, resourceNames) a rule grants that no
    request in used (attribute tuples) exercised."""
    out = []
    for scope, rule in granted:
        for g in rule.get("apiGroups", []):
            for res in rule.get("resources", []):
                resource, _, sub = res.partition("/")
                for v in rule.get("verbs", []):
                    single = dict(rule, apiGroups=[g], resources=[res], verbs=[v])
                    if not any(rule_allows(single, a) and a[1] == g and a[2] == resource and a[3] == sub
                               and (scope == "" or scope == a[4]) for a in used):
                        out.append((scope, g, res, v, tuple(rule.get("resourceNames") or ())))
    return out


CONFIG_KINDS_ALL = ("mutatingwebhookconfigurations", "validatingwebhookconfigurations")


def role_grants(objs):
    """Each single grant of each rule of each ClusterRole and Role in objs:
    ((kind, namespace, name), rule index, group, resource, verb), one per
    verb of each resource of each group of the rule."""
    out = []
    for role in [o for o in objs if o.get("kind") in ("ClusterRole", "Role")]:
        key = (role["kind"], role["metadata"].get("namespace", ""), role["metadata"]["name"])
        for i, rule in enumerate(role.get("rules") or []):
            for g in rule.get("apiGroups", []):
                for res in rule.get("resources", []):
                    for v in rule.get("verbs", []):
                        out.append((key, i, g, res, v))
    return out


def without_grant(objs, grant):
    """A copy of objs in which the rule of grant (role_grants') no longer
    grants its verb on its group's resource, and grants all else it did: the
    rule split into the part without that group, the part without that
    resource, and the part without that verb (empty parts dropped)."""
    key, index, g, res, v = grant
    out = json.loads(json.dumps(objs))
    for role in out:
        if (role.get("kind"), role.get("metadata", {}).get("namespace", ""),
                role.get("metadata", {}).get("name")) != key:
            continue
        rule = role["rules"][index]
        parts = [dict(rule, apiGroups=[x for x in rule["apiGroups"] if x != g]),
                 dict(rule, apiGroups=[g], resources=[x for x in rule["resources"] if x != res]),
                 dict(rule, apiGroups=[g], resources=[res], verbs=[x for x in rule["verbs"] if x != v])]
        parts = [p for p in parts if p["apiGroups"] and p["resources"] and p["verbs"]]
        role["rules"] = role["rules"][:index] + parts + role["rules"][index + 1:]
    return out
