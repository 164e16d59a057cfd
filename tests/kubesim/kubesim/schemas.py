"""Which fields each kind has, for fieldValidation and pruning.

kube-apiserver decodes into typed Go structs: with `fieldValidation=Strict`
an unknown field is an error, otherwise it is dropped (with a warning for
`Warn`, the default). This module lists the fields of the kinds kubesim
serves in a compact notation, deep where clients write (metadata, pod
templates, DaemonSet/Job specs, webhook configurations) and open ("*")
where only our own simulated components write (status).

Notation: a dict maps field -> type; "s" string, "i" integer, "b" boolean,
"m" map of strings, "*" anything; [T] is a list of T; a capitalised string
names another entry of TYPES.
"""

TYPES = {
    "ObjectMeta": {
        "name": "s", "generateName": "s", "namespace": "s", "selfLink": "s", "uid": "s",
        "resourceVersion": "s", "generation": "i", "creationTimestamp": "*", "deletionTimestamp": "*",
        "deletionGracePeriodSeconds": "i", "labels": "m", "annotations": "m",
        "ownerReferences": ["OwnerReference"], "finalizers": ["s"], "managedFields": ["*"],
    },
    "OwnerReference": {"apiVersion": "s", "kind": "s", "name": "s", "uid": "s", "controller": "b",
                       "blockOwnerDeletion": "b"},
    "LabelSelector": {"matchLabels": "m",
                      "matchExpressions": [{"key": "s", "operator": "s", "values": ["s"]}]},
    "PodTemplateSpec": {"metadata": "ObjectMeta", "spec": "PodSpec"},
    "PodSpec": {
        "volumes": ["*"], "initContainers": ["Container"], "containers": ["Container"],
        "ephemeralContainers": ["*"], "restartPolicy": "s", "terminationGracePeriodSeconds": "i",
        "activeDeadlineSeconds": "i", "dnsPolicy": "s", "nodeSelector": "m", "serviceAccountName": "s",
        "serviceAccount": "s", "automountServiceAccountToken": "b", "nodeName": "s", "hostNetwork": "b",
        "hostPID": "b", "hostIPC": "b", "shareProcessNamespace": "b", "securityContext": "*",
        "imagePullSecrets": [{"name": "s"}], "hostname": "s", "subdomain": "s", "affinity": "*",
        "schedulerName": "s", "tolerations": [{"key": "s", "operator": "s", "value": "s", "effect": "s",
                                                "tolerationSeconds": "i"}],
        "hostAliases": ["*"], "priorityClassName": "s", "priority": "i", "dnsConfig": "*",
        "readinessGates": ["*"], "runtimeClassName": "s", "enableServiceLinks": "b", "preemptionPolicy": "s",
        "overhead": "*", "topologySpreadConstraints": ["*"], "setHostnameAsFQDN": "b", "os": "*",
        "hostUsers": "b", "schedulingGates": ["*"], "resourceClaims": ["*"], "resources": "*",
    },
    "Container": {
        "name": "s", "image": "s", "command": ["s"], "args": ["s"], "workingDir": "s",
        "ports": [{"name": "s", "hostPort": "i", "containerPort": "i", "protocol": "s", "hostIP": "s"}],
        "envFrom": ["*"], "env": [{"name": "s", "value": "s", "valueFrom": "*"}], "resources": "*",
        "resizePolicy": ["*"], "restartPolicy": "s",
        "volumeMounts": [{"name": "s", "readOnly": "b", "recursiveReadOnly": "s", "mountPath": "s",
                          "subPath": "s", "mountPropagation": "s", "subPathExpr": "s"}],
        "volumeDevices": ["*"], "livenessProbe": "*", "readinessProbe": "*", "startupProbe": "*",
        "lifecycle": "*", "terminationMessagePath": "s", "terminationMessagePolicy": "s",
        "imagePullPolicy": "s", "securityContext": "*", "stdin": "b", "stdinOnce": "b", "tty": "b",
    },
    "Webhook": {
        "name": "s", "clientConfig": {"url": "s", "caBundle": "s",
                                      "service": {"namespace": "s", "name": "s", "path": "s", "port": "i"}},
        "rules": [{"operations": ["s"], "apiGroups": ["s"], "apiVersions": ["s"], "resources": ["s"],
                   "scope": "s"}],
        "failurePolicy": "s", "matchPolicy": "s", "namespaceSelector": "LabelSelector",
        "objectSelector": "LabelSelector", "sideEffects": "s", "timeoutSeconds": "i",
        "admissionReviewVersions": ["s"], "reinvocationPolicy": "s",
        "matchConditions": [{"name": "s", "expression": "s"}],
    },
}

_TOP = {"apiVersion": "s", "kind": "s", "metadata": "ObjectMeta"}

KINDS = {
    "Pod": {"spec": "PodSpec", "status": "*"},
    "Node": {"spec": "*", "status": "*"},
    "Namespace": {"spec": "*", "status": "*"},
    "Service": {"spec": "*", "status": "*"},
    "Event": {"involvedObject": "*", "reason": "s", "message": "s", "source": "*", "firstTimestamp": "*",
              "lastTimestamp": "*", "count": "i", "type": "s", "eventTime": "*", "series": "*",
              "action": "s", "related": "*", "reportingComponent": "s", "reportingInstance": "s"},
    "Secret": {"immutable": "b", "data": "m", "stringData": "m", "type": "s"},
    "ConfigMap": {"immutable": "b", "data": "m", "binaryData": "m"},
    "ServiceAccount": {"secrets": ["*"], "imagePullSecrets": ["*"], "automountServiceAccountToken": "b"},
    "DaemonSet": {"spec": {"selector": "LabelSelector", "template": "PodTemplateSpec",
                           "updateStrategy": {"type": "s", "rollingUpdate": {"maxUnavailable": "*",
                                                                             "maxSurge": "*"}},
                           "minReadySeconds": "i", "revisionHistoryLimit": "i"},
                  "status": "*"},
    "ControllerRevision": {"data": "*", "revision": "i"},
    "Job": {"spec": {"parallelism": "i", "completions": "i", "activeDeadlineSeconds": "i",
                     "podFailurePolicy": "*", "successPolicy": "*", "backoffLimit": "i",
                     "backoffLimitPerIndex": "i", "maxFailedIndexes": "i", "selector": "LabelSelector",
                     "manualSelector": "b", "template": "PodTemplateSpec", "ttlSecondsAfterFinished": "i",
                     "completionMode": "s", "suspend": "b", "podReplacementPolicy": "s", "managedBy": "s"},
            "status": "*"},
    "Lease": {"spec": {"holderIdentity": "s", "leaseDurationSeconds": "i", "acquireTime": "*",
                       "renewTime": "*", "leaseTransitions": "i", "strategy": "s", "preferredHolder": "s"}},
    "MutatingWebhookConfiguration": {"webhooks": ["Webhook"]},
    "SelfSubjectReview": {"status": "*"},
    "SelfSubjectAccessReview": {"spec": "*", "status": "*"},
    "SelfSubjectRulesReview": {"spec": "*", "status": "*"},
    "ValidatingWebhookConfiguration": {"webhooks": ["Webhook"]},
    "CustomResourceDefinition": {
        "spec": {"group": "s", "scope": "s", "preserveUnknownFields": "b", "conversion": "*",
                 "names": {"plural": "s", "singular": "s", "shortNames": ["s"], "kind": "s", "listKind": "s",
                           "categories": ["s"]},
                 "versions": [{"name": "s", "served": "b", "storage": "b", "deprecated": "b",
                               "deprecationWarning": "s", "schema": {"openAPIV3Schema": "*"},
                               "subresources": {"status": "*", "scale": "*"}, "selectableFields": ["*"],
                               "additionalPrinterColumns": [{"name": "s", "type": "s", "format": "s",
                                                             "description": "s", "priority": "i",
                                                             "jsonPath": "s"}]}]},
        "status": "*"},
}


def _resolve(t):
    while isinstance(t, str) and t in TYPES:
        t = TYPES[t]
    return t


def kind_schema(kind):
    if kind not in KINDS:
        return None
    d = dict(_TOP)
    d.update(KINDS[kind])
    return d


def _walk(t, v, path, out, prune):
    t = _resolve(t)
    if t == "*" or v is None:
        return
    if isinstance(t, dict) and isinstance(v, dict):
        for k in list(v.keys()):
            sub = "%s.%s" % (path, k) if path else k
            if k not in t:
                out.append(sub)
                if prune:
                    del v[k]
            else:
                _walk(t[k], v[k], sub, out, prune)
    elif isinstance(t, list) and isinstance(v, list):
        for i, item in enumerate(v):
            _walk(t[0], item, "%s[%d]" % (path, i), out, prune)


def unknown_fields(kind, obj):
    """Paths of fields the kind does not have, in the apiserver's notation."""
    s = kind_schema(kind)
    out = []
    if s is not None:
        _walk(s, obj, "", out, False)
    return out


def prune(kind, obj):
    s = kind_schema(kind)
    if s is not None:
        _walk(s, obj, "", [], True)


def prune_metadata(obj):
    """Removes the fields ObjectMeta does not have from obj's metadata (a custom
    resource's schema says nothing about metadata); returns their paths."""
    out = []
    _walk({"metadata": "ObjectMeta"}, {"metadata": obj.get("metadata")}, "", out, True)
    return out
