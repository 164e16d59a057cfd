"""Defaulting and validation of objects, the parts clients notice.

The apiserver fills defaults when it decodes an object (pod restartPolicy,
container imagePullPolicy, DaemonSet updateStrategy, Job backoffLimit and
selector, the namespace name label) and validates it afterwards. kubesim
does the same for the fields its clients read, and rejects the mistakes a
real cluster rejects (missing name, bad name, pod without containers or image,
DaemonSet selector not matching its template, Job restartPolicy Always,
changes to immutable fields), with the apiserver's `Invalid` wording.

Feature gates (`run --feature-gates`): with a gate off, the apiserver drops the fields it
guards when a Pod or a pod template is written (dropDisabledFields, in PrepareForCreate /
PrepareForUpdate, after mutating admission and before validation), unless the old object
already used them; drop_disabled_fields() does that here (ImageVolume: `volumes[].image`).
"""
import re

from . import errors, selectors

NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
LABEL_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
NAME_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
            "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
            "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
             "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
             "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")


# Feature gates kubesim knows, with their default (Kubernetes 1.33's: ImageVolume is beta
# and off by default in 1.33 and 1.34; 1.35 turns it on).
FEATURE_GATES = {"ImageVolume": False}


_PARSE_BOOL = dict([(v, True) for v in ("1", "t", "T", "TRUE", "true", "True")] +
                   [(v, False) for v in ("0", "f", "F", "FALSE", "false", "False")])


def parse_feature_gates(text):
    """`--feature-gates` as kube-apiserver takes it: "Name=true,Other=false" -> the full
    gate map (defaults for the rest); ValueError on an unknown gate or a bad value."""
    gates = dict(FEATURE_GATES)
    for item in (text or "").split(","):
        item = item.strip()
        if not item:
            continue
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not sep:
            raise ValueError("missing bool value for %s" % name)
        if name not in FEATURE_GATES:
            raise ValueError("unrecognized feature gate: %s" % name)
        if value not in _PARSE_BOOL:      # Go's strconv.ParseBool
            raise ValueError('invalid value of %s=%s, err: strconv.ParseBool: parsing "%s": '
                             'invalid syntax' % (name, value, value))
        gates[name] = _PARSE_BOOL[value]
    return gates


def _pod_specs(resource, obj):
    """The pod spec(s) of a Pod or of a workload's pod template."""
    spec = (obj or {}).get("spec")
    if not isinstance(spec, dict):
        return []
    if resource == "pods":
        return [spec]
    if resource in ("daemonsets", "jobs", "deployments", "replicasets", "statefulsets",
                    "podtemplates"):
        tpl = (obj.get("template") if resource == "podtemplates" else spec.get("template"))
        tspec = (tpl or {}).get("spec") if isinstance(tpl, dict) else None
        return [tspec] if isinstance(tspec, dict) else []
    return []


def _uses_image_volumes(spec):
    return any(isinstance(v, dict) and v.get("image") is not None
               for v in spec.get("volumes") or [])


def drop_disabled_fields(resource, obj, old, gates):
    """dropDisabledPodFields: with ImageVolume off, `volumes[].image` is removed from a
    Pod or pod template (unless the old object already had an image volume), which leaves
    such a volume without a source for validation to refuse."""
    if (gates or {}).get("ImageVolume"):
        return
    old_specs = _pod_specs(resource, old) if old is not None else []
    if any(_uses_image_volumes(s) for s in old_specs):
        return
    for spec in _pod_specs(resource, obj):
        for v in spec.get("volumes") or []:
            if isinstance(v, dict):
                v.pop("image", None)


def image_pull_policy_default(image):
    """Always for :latest or untagged images, IfNotPresent otherwise (digests count as tags)."""
    if "@" in image:
        return "IfNotPresent"
    last = image.rsplit("/", 1)[-1]
    if ":" not in last:
        return "Always"
    return "Always" if last.rsplit(":", 1)[1] == "latest" else "IfNotPresent"


def default_container(c):
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    if isinstance(c.get("image"), str) and c["image"]:
        c.setdefault("imagePullPolicy", image_pull_policy_default(c["image"]))
    c.setdefault("resources", {})
    for p in c.get("ports") or []:
        if isinstance(p, dict):
            p.setdefault("protocol", "TCP")


def default_pod_spec(spec):
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("enableServiceLinks", True)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    spec.setdefault("priority", 0)
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        if isinstance(c, dict):
            default_container(c)
    for v in spec.get("volumes") or []:
        if isinstance(v, dict) and not any(k != "name" and x is not None for k, x in v.items()):
            v["emptyDir"] = {}      # SetDefaults_Volume: no source at all is an emptyDir
        if isinstance(v, dict) and isinstance(v.get("image"), dict):
            # SetDefaults_ImageVolumeSource: as a container's imagePullPolicy (an empty or
            # unparsable reference has no tag "latest": IfNotPresent)
            iv = v["image"]
            if not iv.get("pullPolicy"):
                ref = iv.get("reference")
                iv["pullPolicy"] = image_pull_policy_default(ref) \
                    if isinstance(ref, str) and ref else "IfNotPresent"


def apply_defaults(resource, obj):
    """Fills defaults in place for a freshly created or updated object."""
    spec = obj.get("spec")
    if resource == "pods":
        spec = obj.setdefault("spec", {})
        default_pod_spec(spec)
        if not spec.get("serviceAccountName") and not spec.get("serviceAccount"):
            spec["serviceAccountName"] = "default"
            spec["serviceAccount"] = "default"
        tol = spec.setdefault("tolerations", [])
        for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"):
            if not any(isinstance(t, dict) and t.get("key") == key for t in tol):
                tol.append({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300})
        st = obj.setdefault("status", {})
        st.setdefault("phase", "Pending")
        st.setdefault("qosClass", "BestEffort")
    elif resource == "daemonsets" and isinstance(spec, dict):
        us = spec.setdefault("updateStrategy", {"type": "RollingUpdate"})
        if us.get("type") == "RollingUpdate":
            ru = us.setdefault("rollingUpdate", {})
            ru.setdefault("maxUnavailable", 1)
            ru.setdefault("maxSurge", 0)
        spec.setdefault("revisionHistoryLimit", 10)
        tpl = spec.setdefault("template", {})
        default_pod_spec(tpl.setdefault("spec", {}))
        tpl.setdefault("metadata", {}).setdefault("creationTimestamp", None)
        obj.setdefault("status", {"currentNumberScheduled": 0, "numberMisscheduled": 0,
                                  "desiredNumberScheduled": 0, "numberReady": 0})
    elif resource == "jobs" and isinstance(spec, dict):
        spec.setdefault("parallelism", 1)
        spec.setdefault("completions", 1)
        spec.setdefault("backoffLimit", 6)
        spec.setdefault("completionMode", "NonIndexed")
        spec.setdefault("suspend", False)
        spec.setdefault("manualSelector", False)
        spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
        tpl = spec.setdefault("template", {})
        default_pod_spec(tpl.setdefault("spec", {}))
        obj.setdefault("status", {})
    elif resource == "namespaces":
        if obj["metadata"].get("name"):
            obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = obj["metadata"]["name"]
        obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
        obj.setdefault("status", {}).setdefault("phase", "Active")
    elif resource == "secrets":
        obj.setdefault("type", "Opaque")
    elif resource in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
        for wh in obj.get("webhooks") or []:
            if not isinstance(wh, dict):
                continue
            wh.setdefault("failurePolicy", "Fail")
            wh.setdefault("matchPolicy", "Equivalent")
            wh.setdefault("namespaceSelector", {})
            wh.setdefault("objectSelector", {})
            wh.setdefault("timeoutSeconds", 10)
            if resource == "mutatingwebhookconfigurations":
                wh.setdefault("reinvocationPolicy", "Never")
            for r in wh.get("rules") or []:
                if isinstance(r, dict):
                    r.setdefault("scope", "*")
            svc = (wh.get("clientConfig") or {}).get("service")
            if isinstance(svc, dict):
                svc.setdefault("port", 443)


def default_job_selector(obj):
    """Job: generated selector on the controller uid, labels on the template (as the apiserver does)."""
    spec = obj.get("spec") or {}
    if spec.get("manualSelector"):
        return
    uid = obj["metadata"]["uid"]
    name = obj["metadata"]["name"]
    spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    labels = spec.setdefault("template", {}).setdefault("metadata", {}).setdefault("labels", {})
    labels.update({"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name,
                   "controller-uid": uid, "job-name": name})


def _invalid(obj, causes, group):
    return errors.invalid(obj.get("kind", ""), group, obj.get("metadata", {}).get("name", ""), causes)


RBAC_RESOURCES = ("roles", "rolebindings", "clusterroles", "clusterrolebindings")


def path_segment_problem(name):
    """path.IsValidPathSegmentName: what is wrong with name as one URL path segment, or None."""
    if name in (".", ".."):
        return "may not be '%s'" % name
    for c in ("/", "%"):
        if c in name:
            return "may not contain '%s'" % c
    return None


def validate(resource, obj, old=None, group=""):
    causes = []
    md = obj.get("metadata") or {}
    name = md.get("name")
    if not name:
        causes.append(("metadata.name", "FieldValueRequired", "Required value: name or generateName is required"))
    elif resource in ("namespaces",) and not LABEL_RE.match(name):
        causes.append(("metadata.name", "FieldValueInvalid", 'Invalid value: "%s": %s' % (name, LABEL_MSG)))
    elif resource in RBAC_RESOURCES:
        why = path_segment_problem(name)     # RBAC names are path segments ("system:node")
        if why:
            causes.append(("metadata.name", "FieldValueInvalid", 'Invalid value: "%s": %s' % (name, why)))
    elif len(name) > 253 or not NAME_RE.match(name):
        causes.append(("metadata.name", "FieldValueInvalid", 'Invalid value: "%s": %s' % (name, NAME_MSG)))
    for k, v in (md.get("labels") or {}).items():
        if not isinstance(v, str) or len(v) > 63:
            causes.append(("metadata.labels", "FieldValueInvalid", 'Invalid value: "%s": must be no more than '
                           "63 characters" % v))
    spec = obj.get("spec")
    if resource == "pods":
        causes += _validate_pod_spec(spec, "spec", is_pod=True)
        if old is not None:
            causes += _validate_pod_update(obj, old)
    elif resource == "daemonsets":
        causes += _validate_template_owner(spec, obj, old, "daemonsets")
    elif resource == "jobs":
        causes += _validate_template_owner(spec, obj, old, "jobs")
        rp = ((spec or {}).get("template") or {}).get("spec", {}).get("restartPolicy")
        if rp not in ("Never", "OnFailure"):
            causes.append(("spec.template.spec.restartPolicy", "FieldValueNotSupported",
                           'Unsupported value: "%s": supported values: "OnFailure", "Never"' % rp))
        if old is not None and (old.get("spec") or {}).get("template") != (spec or {}).get("template") \
                and not (old.get("spec") or {}).get("suspend"):
            causes.append(("spec.template", "FieldValueInvalid",
                           "Invalid value: %s: field is immutable" % "core.PodTemplateSpec{...}"))
    elif resource == "leases":
        pass
    if causes:
        raise _invalid(obj, causes, group)


PULL_POLICIES_MSG = 'supported values: "Always", "IfNotPresent", "Never"'


def _validate_volumes(spec, path, is_pod):
    """The volume checks clients meet: a volume needs a source (`must specify a volume
    type`, what a volume whose `image` the apiserver dropped gets), an image volume's
    reference (required in a Pod only: a template may leave it to a controller, as
    ResourceIsPod says upstream) and pull policy."""
    causes = []
    for i, v in enumerate(spec.get("volumes") or []):
        if not isinstance(v, dict):
            continue
        p = "%s.volumes[%d]" % (path, i)
        if not v.get("name"):
            causes.append((p + ".name", "FieldValueRequired", "Required value"))
        if not any(k != "name" and val is not None for k, val in v.items()):
            causes.append((p, "FieldValueRequired", "Required value: must specify a volume type"))
        iv = v.get("image")
        if isinstance(iv, dict):
            if is_pod and not iv.get("reference"):
                causes.append((p + ".image.reference", "FieldValueRequired", "Required value"))
            pol = iv.get("pullPolicy")
            if not pol:
                causes.append((p + ".image.pullPolicy", "FieldValueRequired", "Required value"))
            elif pol not in ("Always", "IfNotPresent", "Never"):
                causes.append((p + ".image.pullPolicy", "FieldValueNotSupported",
                               'Unsupported value: "%s": %s' % (pol, PULL_POLICIES_MSG)))
    return causes


def _validate_pod_spec(spec, path, is_pod=False):
    causes = []
    if not isinstance(spec, dict):
        return [(path, "FieldValueRequired", "Required value")]
    causes += _validate_volumes(spec, path, is_pod)
    cs = spec.get("containers")
    if not cs:
        causes.append(("%s.containers" % path, "FieldValueRequired", "Required value"))
    for kind in ("containers", "initContainers"):
        names = set()
        for i, c in enumerate(spec.get(kind) or []):
            p = "%s.%s[%d]" % (path, kind, i)
            if not isinstance(c, dict):
                continue
            if not c.get("name"):
                causes.append((p + ".name", "FieldValueRequired", "Required value"))
            elif c["name"] in names:
                causes.append((p + ".name", "FieldValueDuplicate", 'Duplicate value: "%s"' % c["name"]))
            names.add(c.get("name"))
            if not c.get("image"):
                causes.append((p + ".image", "FieldValueRequired", "Required value"))
            pol = c.get("imagePullPolicy")
            if pol not in (None, "Always", "IfNotPresent", "Never"):
                causes.append((p + ".imagePullPolicy", "FieldValueNotSupported",
                               'Unsupported value: "%s": supported values: "Always", "IfNotPresent", "Never"' % pol))
    rp = spec.get("restartPolicy")
    if rp not in (None, "Always", "OnFailure", "Never"):
        causes.append((path + ".restartPolicy", "FieldValueNotSupported",
                       'Unsupported value: "%s": supported values: "Always", "OnFailure", "Never"' % rp))
    return causes


def _mutable_view(spec):
    s = dict(spec or {})
    for kind in ("containers", "initContainers"):
        s[kind] = [{k: v for k, v in c.items() if k != "image"} if isinstance(c, dict) else c
                   for c in s.get(kind) or []]
    s.pop("activeDeadlineSeconds", None)
    s.pop("tolerations", None)
    s.pop("terminationGracePeriodSeconds", None)
    return s


def _validate_pod_update(new, old):
    if _mutable_view(new.get("spec")) != _mutable_view(old.get("spec")):
        return [("spec", "FieldValueForbidden",
                 "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
                 "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` "
                 "(only additions to existing tolerations),`spec.terminationGracePeriodSeconds` "
                 "(allow it to be set to 1 if it was previously negative)")]
    if (old.get("spec") or {}).get("nodeName") and \
            (new.get("spec") or {}).get("nodeName") != old["spec"]["nodeName"]:
        return [("spec.nodeName", "FieldValueForbidden", "Forbidden: field is immutable")]
    return []


def _validate_template_owner(spec, obj, old, resource):
    causes = []
    if not isinstance(spec, dict):
        return [("spec", "FieldValueRequired", "Required value")]
    tpl = spec.get("template") or {}
    causes += _validate_pod_spec(tpl.get("spec"), "spec.template.spec")
    sel = spec.get("selector")
    if sel is None:
        causes.append(("spec.selector", "FieldValueRequired", "Required value"))
    else:
        labels = (tpl.get("metadata") or {}).get("labels") or {}
        if not (sel.get("matchLabels") or sel.get("matchExpressions")):
            causes.append(("spec.selector", "FieldValueInvalid",
                           "Invalid value: \"null\": empty selector is invalid for %s" %
                           ("daemonset" if resource == "daemonsets" else "job")))
        elif not selectors.match_label_selector_object(sel, labels):
            causes.append(("spec.template.metadata.labels", "FieldValueInvalid",
                           "Invalid value: %s: `selector` does not match template `labels`" % _gomap(labels)))
        if old is not None and (old.get("spec") or {}).get("selector") != sel:
            causes.append(("spec.selector", "FieldValueInvalid",
                           "Invalid value: %s: field is immutable" % "v1.LabelSelector{...}"))
    if resource == "daemonsets":
        rp = (tpl.get("spec") or {}).get("restartPolicy")
        if rp not in (None, "Always"):
            causes.append(("spec.template.spec.restartPolicy", "FieldValueNotSupported",
                           'Unsupported value: "%s": supported values: "Always"' % rp))
    return causes


def _gomap(d):
    return "map[string]string{%s}" % ", ".join('"%s":"%s"' % kv for kv in sorted(d.items()))
