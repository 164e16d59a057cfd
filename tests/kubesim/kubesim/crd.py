"""CustomResourceDefinitions (apiextensions.k8s.io/v1): the CRD object and the
custom resources it serves.

A CRD is stored like any cluster-scoped object (api.py does the verbs); this
module makes the decisions that are particular to it, as small functions:

- `default_crd`: the v1 defaults (names.singular = lowercase kind,
  names.listKind = kind + "List", conversion.strategy None);
- `validate_crd`: the apiserver's messages for the usual mistakes (name not
  `<plural>.<group>`, not exactly one storage version, missing names, bad
  scope, missing schema, immutable group/plural) plus structural.check_schema;
- `crd_status`: what the naming and establishing controllers write
  (acceptedNames, NamesAccepted/Established conditions, storedVersions),
  computed at once instead of by controllers a moment later;
- `served_resources`: the discovery.Resource of every served version, each
  carrying a CrdVersion (schema, printer columns, status subresource, how to
  read stored objects through that version).

Conversion is the `None` strategy only: objects are stored in the storage
version and a read through another served version rewrites apiVersion (and
applies that version's defaults). A `Webhook` strategy is accepted but
converts the same way (no conversion webhook is called).
"""
import copy
import re

from . import discovery, structural

GROUP = "apiextensions.k8s.io"
RESOURCE = "customresourcedefinitions"
CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"

DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
DNS1035_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
               "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
               "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")
DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS1123_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
               "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
               "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
VERSIONS_VALUE = "[]apiextensions.CustomResourceDefinitionVersion{...}"


def is_crd(res):
    return res.group == GROUP and res.plural == RESOURCE


def _spec(crd):
    spec = crd.get("spec")
    return spec if isinstance(spec, dict) else {}


def _names(crd):
    names = _spec(crd).get("names")
    return names if isinstance(names, dict) else {}


def _versions(crd):
    vs = _spec(crd).get("versions")
    return [v for v in vs if isinstance(v, dict)] if isinstance(vs, list) else []


def storage_version(crd):
    return next((v.get("name") for v in _versions(crd) if v.get("storage")), None)


# ------------------------------------------------------------------ defaults
def default_crd(crd):
    """The apiextensions v1 defaults, in place."""
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return
    names = spec.get("names")
    if isinstance(names, dict) and isinstance(names.get("kind"), str) and names["kind"]:
        names.setdefault("singular", names["kind"].lower())
        names.setdefault("listKind", names["kind"] + "List")
    conv = spec.setdefault("conversion", {"strategy": "None"})
    if isinstance(conv, dict):
        svc = ((conv.get("webhook") or {}).get("clientConfig") or {}).get("service")
        if isinstance(svc, dict):
            svc.setdefault("port", 443)


# ---------------------------------------------------------------- validation
def validate_crd(crd, old=None, cel=None):
    """[(field, reason, message)] as ValidateCustomResourceDefinition(Update) words them
    (cel: the CEL evaluator, for the schemas' x-kubernetes-validations rules)."""
    causes = []
    spec = _spec(crd)
    names = _names(crd)
    group = spec.get("group") or ""
    name = (crd.get("metadata") or {}).get("name") or ""
    if name and name != "%s.%s" % (names.get("plural") or "", group):
        causes.append(("metadata.name", "FieldValueInvalid",
                       'Invalid value: "%s": must be spec.names.plural+"."+spec.group' % name))
    if not group:
        causes.append(("spec.group", "FieldValueRequired", "Required value"))
    elif not DNS1123.match(group):
        causes.append(("spec.group", "FieldValueInvalid", 'Invalid value: "%s": %s' % (group, DNS1123_MSG)))
    elif "." not in group:
        causes.append(("spec.group", "FieldValueInvalid",
                       'Invalid value: "%s": should be a domain with at least one dot' % group))
    scope = spec.get("scope") or ""
    if not scope:
        causes.append(("spec.scope", "FieldValueRequired", "Required value"))
    elif scope not in ("Cluster", "Namespaced"):
        causes.append(("spec.scope", "FieldValueNotSupported",
                       'Unsupported value: "%s": supported values: "Cluster", "Namespaced"' % scope))
    causes += _validate_versions(spec, cel)
    for field in ("plural", "singular", "kind", "listKind"):
        value = names.get(field)
        p = "spec.names." + field
        if not value:
            causes.append((p, "FieldValueRequired", "Required value"))
        elif not isinstance(value, str) or not DNS1035.match(value.lower() if field in ("kind", "listKind")
                                                               else value):
            causes.append((p, "FieldValueInvalid", 'Invalid value: "%s": %s' % (value, DNS1035_MSG)))
    for i, short in enumerate(names.get("shortNames") or []):
        if not isinstance(short, str) or not DNS1035.match(short):
            causes.append(("spec.names.shortNames[%d]" % i, "FieldValueInvalid",
                           'Invalid value: "%s": %s' % (short, DNS1035_MSG)))
    conv = spec.get("conversion") or {}
    if isinstance(conv, dict) and conv.get("strategy") not in ("None", "Webhook"):
        causes.append(("spec.conversion.strategy", "FieldValueNotSupported",
                       'Unsupported value: "%s": supported values: "None", "Webhook"' % conv.get("strategy")))
    if old is not None:
        ospec = _spec(old)
        for field, new_v, old_v in (("spec.group", group, ospec.get("group")),
                                    ("spec.names.plural", names.get("plural"), _names(old).get("plural"))):
            if new_v != old_v:
                causes.append((field, "FieldValueInvalid", 'Invalid value: "%s": field is immutable' % new_v))
        if established(old):
            for field, new_v, old_v in (("spec.scope", scope, ospec.get("scope")),
                                        ("spec.names.kind", names.get("kind"), _names(old).get("kind"))):
                if new_v != old_v:
                    causes.append((field, "FieldValueInvalid",
                                   'Invalid value: "%s": field is immutable' % new_v))
    return causes


def _validate_versions(spec, cel):
    causes = []
    versions = spec.get("versions")
    versions = versions if isinstance(versions, list) else []
    seen = set()
    unique = True
    storage = 0
    for i, v in enumerate(versions):
        p = "spec.versions[%d]" % i
        if not isinstance(v, dict):
            continue
        vname = v.get("name") or ""
        if vname in seen:
            unique = False
        seen.add(vname)
        if v.get("storage"):
            storage += 1
        if not isinstance(vname, str) or not DNS1035.match(vname):
            causes.append((p + ".name", "FieldValueInvalid", 'Invalid value: "%s": %s' % (vname, DNS1035_MSG)))
        schema = (v.get("schema") or {}).get("openAPIV3Schema") if isinstance(v.get("schema"), dict) else None
        sp = p + ".schema.openAPIV3Schema"
        if not isinstance(schema, dict):
            causes.append((sp, "FieldValueRequired", "Required value: schemas are required"))
        else:
            causes += structural.check_schema(schema, sp, cel)
        for j, col in enumerate(v.get("additionalPrinterColumns") or []):
            cp = "%s.additionalPrinterColumns[%d]" % (p, j)
            for field in ("name", "type", "jsonPath"):
                if not isinstance(col, dict) or not col.get(field):
                    causes.append((cp + "." + field, "FieldValueRequired", "Required value"))
    if not unique:
        causes.append(("spec.versions", "FieldValueInvalid",
                       "Invalid value: %s: must contain unique version names" % VERSIONS_VALUE))
    if storage != 1:
        causes.append(("spec.versions", "FieldValueInvalid",
                       "Invalid value: %s: must have exactly one version marked as storage version"
                       % VERSIONS_VALUE))
    return causes


def validate_stored_versions(crd):
    """status.storedVersions must hold the storage version and only versions of spec.versions."""
    stored = ((crd.get("status") or {}).get("storedVersions")) or []
    if not stored:
        return [("status.storedVersions", "FieldValueInvalid",
                 "Invalid value: []string{}: must have at least one stored version")]
    names = {v.get("name") for v in _versions(crd)}
    return [("status.storedVersions[%d]" % i, "FieldValueInvalid",
             'Invalid value: "%s": must appear in spec.versions' % v)
            for i, v in enumerate(stored) if v not in names]


# -------------------------------------------------------------------- status
def _condition(conds, ctype, status, reason, message, now):
    """conds with ctype set; lastTransitionTime kept while status does not change."""
    old = next((c for c in conds if c.get("type") == ctype), None)
    when = old.get("lastTransitionTime") if old and old.get("status") == status else now
    new = {"type": ctype, "status": status, "lastTransitionTime": when, "reason": reason, "message": message}
    return [new if c.get("type") == ctype else c for c in conds] if old else conds + [new]


def name_conflict(crd, others):
    """The first requested name another CRD of the same group has accepted, or None."""
    names = _names(crd)
    group = _spec(crd).get("group")
    taken_resources, taken_kinds = set(), set()
    for o in others:
        if o["metadata"]["name"] == crd["metadata"].get("name") or _spec(o).get("group") != group:
            continue
        acc = (o.get("status") or {}).get("acceptedNames") or {}
        taken_resources.update([acc.get("plural"), acc.get("singular")] + list(acc.get("shortNames") or []))
        taken_kinds.update([acc.get("kind"), acc.get("listKind")])
    for n in [names.get("plural"), names.get("singular")] + list(names.get("shortNames") or []):
        if n and n in taken_resources:
            return n
    for n in (names.get("kind"), names.get("listKind")):
        if n and n in taken_kinds:
            return n
    return None


def crd_status(crd, old_status, others, now):
    """The status the apiextensions controllers settle on for this spec: names accepted
    unless another CRD of the group holds one of them, then Established; the storage
    version added to storedVersions; Terminating while a deleted CRD's objects go."""
    st = copy.deepcopy(old_status) if isinstance(old_status, dict) else {}
    conds = [c for c in st.get("conditions") or [] if isinstance(c, dict)]
    conflict = name_conflict(crd, others)
    if conflict is None:
        st["acceptedNames"] = {k: v for k, v in _names(crd).items()
                               if k in ("plural", "singular", "shortNames", "kind", "listKind", "categories")}
        conds = _condition(conds, "NamesAccepted", "True", "NoConflicts", "no conflicts found", now)
        conds = _condition(conds, "Established", "True", "InitialNamesAccepted",
                           "the initial names have been accepted", now)
    else:
        st.setdefault("acceptedNames", {"plural": "", "kind": ""})
        conds = _condition(conds, "NamesAccepted", "False", "NameConflict", '"%s" is already in use' % conflict,
                           now)
        if not any(c.get("type") == "Established" and c.get("status") == "True" for c in conds):
            conds = _condition(conds, "Established", "False", "NotAccepted", "not all names are accepted", now)
    if (crd.get("metadata") or {}).get("deletionTimestamp"):
        conds = _condition(conds, "Terminating", "True", "InstanceDeletionInProgress",
                           "CustomResource deletion is in progress", now)
    st["conditions"] = conds
    stored = list(st.get("storedVersions") or [])
    sv = storage_version(crd)
    if sv and sv not in stored:
        stored.append(sv)
    st["storedVersions"] = stored
    return st


def names_accepted(crd):
    return any(c.get("type") == "NamesAccepted" and c.get("status") == "True"
               for c in (crd.get("status") or {}).get("conditions") or [])


def established(crd):
    return any(c.get("type") == "Established" and c.get("status") == "True"
               for c in (crd.get("status") or {}).get("conditions") or [])


def terminating(crd):
    return bool((crd.get("metadata") or {}).get("deletionTimestamp"))


# ----------------------------------------------------------------- resources
class CrdVersion:
    """One served version of a custom resource: what api.py, tables and openapi need."""

    def __init__(self, crd, version):
        spec = _spec(crd)
        acc = (crd.get("status") or {}).get("acceptedNames") or _names(crd)
        self.crd_name = crd["metadata"]["name"]
        self.group = spec["group"]
        self.version = version["name"]
        self.kind = acc.get("kind") or _names(crd).get("kind")
        self.list_kind = acc.get("listKind") or self.kind + "List"
        self.schema = ((version.get("schema") or {}).get("openAPIV3Schema")) or {}
        self.columns = version.get("additionalPrinterColumns") or []    # printcols adds Age when empty
        self.status_subresource = "status" in (version.get("subresources") or {})
        self.storage_api_version = "%s/%s" % (self.group, storage_version(crd))
        self.api_version = "%s/%s" % (self.group, self.version)
        self.terminating = terminating(crd)

    def present(self, obj):
        """A stored object as this version serves it: apiVersion rewritten (conversion
        strategy None), this version's defaults applied, in place."""
        obj["apiVersion"] = self.api_version
        structural.apply_defaults(self.schema, obj)
        return obj

    def to_storage(self, obj):
        """A copy of obj as it is stored (in the storage version)."""
        out = copy.deepcopy(obj)
        out["apiVersion"] = self.storage_api_version
        return out


def served_resources(crd):
    """discovery.Resource for every served version of an established CRD, in the
    apiserver's version priority order (the first is the preferred version)."""
    if not established(crd):
        return []
    spec = _spec(crd)
    acc = (crd.get("status") or {}).get("acceptedNames") or _names(crd)
    out = []
    for v in _versions(crd):
        if not v.get("served"):
            continue
        cv = CrdVersion(crd, v)
        r = discovery.Resource(cv.group, cv.version, cv.kind, acc.get("plural"), spec.get("scope") == "Namespaced",
                               acc.get("shortNames") or (), ["status"] if cv.status_subresource else (),
                               acc.get("categories") or ())
        r.singular = acc.get("singular") or cv.kind.lower()
        r.key = "%s.%s" % (r.plural, r.group)
        r.crd = cv
        out.append(r)
    return sorted(out, key=lambda r: discovery.version_priority(r.version))


def generation_changed(new, old):
    """A custom resource's generation moves when anything but metadata changed (status
    included when it has no status subresource: then status is an ordinary field)."""
    strip = lambda o: {k: v for k, v in o.items() if k not in ("metadata", "apiVersion", "kind")}  # noqa: E731
    return strip(new) != strip(old)
