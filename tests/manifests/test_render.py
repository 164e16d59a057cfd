"""The rendered manifests (kubectl kustomize), read as objects: what
docs/operations.md promises about them.

  Render        every kustomization under manifests/ renders; an `images:`
                override reaches both Deployments
  Base          namespace, service accounts, Pod Security "restricted",
                probes, resources, args (real flags), the webhook's
                replicas, spread, PDB, Secret, Service and metrics, the
                controller's leader election, webhook configurations
  CertsRender   certs/render-manifests.sh: caBundle in every webhook of
                both configurations, the Secret, idempotence
  ImagePullJob  components/imagepulljob through overlays/imagepulljob: the
                base plus our CRD (both versions, columns, status) and two
                webhook entries; with certificates, a caBundle in each
  ImageCache    components/imagecache through overlays/imagecache: the base
                plus our CRD (v1alpha2, ic, /status, columns) and one
                validating entry, nothing for the controller; with
                certificates, a caBundle in it
  Overlays      pre-1.28 (no matchConditions, selectors, sized up),
                cert-manager (issuers, certificates, inject-ca-from) and
                network-policy (only the control plane's range reaches 9443),
                openyurt (yurt-manager's accounts as co-writers)
  Images        the Dockerfiles: uid as in the manifests, runtime packages
                cover every library the built programs link
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from manifests import (CONTROLLER_BIN, MANIFESTS, NS, ROOT, WEBHOOK_BIN, b64, find, flag_value,
                       kustomizations, kustomize, one, port_of, render, render_with_certs, run)

UID = 65532
WEBHOOKS = {  # name -> (configuration kind, path, failurePolicy, resource)
    "daemonsets.mutate.ota-prepull.openyurt.io": ("MutatingWebhookConfiguration", "/mutate", "Ignore", "daemonsets"),
    "podstatus.mutate.ota-prepull.openyurt.io": ("MutatingWebhookConfiguration", "/mutate", "Ignore", "pods/status"),
    "daemonsets.validate.ota-prepull.openyurt.io": ("ValidatingWebhookConfiguration", "/validate", "Ignore",
                                                    "daemonsets"),
    "podstatus.validate.ota-prepull.openyurt.io": ("ValidatingWebhookConfiguration", "/validate", "Fail",
                                                   "pods/status"),
}
CONFIG_KINDS = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
# Pod Security "restricted" (Kubernetes docs, Pod Security Standards)
ALLOWED_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
                   "projected", "secret"}


def webhooks(objs):
    """name -> (configuration kind, webhook) of both configurations."""
    out = {}
    for kind in CONFIG_KINDS:
        cfg = one(objs, kind, "ota-prepull")
        for w in cfg["webhooks"]:
            out[w["name"]] = (kind, w)
    return out


def pod_spec(dep):
    return dep["spec"]["template"]["spec"]


def help_flags(binary):
    p = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=10)
    return set(re.findall(r"(--[a-z0-9-]+)", p.stdout + p.stderr))


def check_restricted(tc, dep):
    """Pod Security "restricted", pod and containers, as the admission plugin checks it."""
    spec = pod_spec(dep)
    name = dep["metadata"]["name"]
    psc = spec.get("securityContext") or {}
    for k in ("hostNetwork", "hostPID", "hostIPC"):
        tc.assertNotEqual(spec.get(k), True, (name, k))
    for v in spec.get("volumes") or []:
        kinds = set(v) - {"name"}
        tc.assertTrue(kinds <= ALLOWED_VOLUMES, (name, v))
    for c in (spec.get("initContainers") or []) + spec["containers"]:
        sc = c.get("securityContext") or {}
        where = (name, c["name"])

        def eff(key):
            return sc.get(key, psc.get(key))
        tc.assertIs(eff("runAsNonRoot"), True, where)
        tc.assertEqual(eff("runAsUser"), UID, where)
        tc.assertEqual(eff("runAsGroup"), UID, where)
        tc.assertIs(sc.get("readOnlyRootFilesystem"), True, where)
        tc.assertIs(sc.get("allowPrivilegeEscalation"), False, where)
        tc.assertNotEqual(sc.get("privileged"), True, where)
        tc.assertEqual((sc.get("capabilities") or {}).get("drop"), ["ALL"], where)
        tc.assertEqual((sc.get("capabilities") or {}).get("add") or [], [], where)
        seccomp = (sc.get("seccompProfile") or psc.get("seccompProfile") or {}).get("type")
        tc.assertEqual(seccomp, "RuntimeDefault", where)
        for p in c.get("ports") or []:
            tc.assertNotIn("hostPort", p, where)


class Render(unittest.TestCase):
    def test_every_kustomization_renders(self):
        dirs = kustomizations()
        rel = [os.path.relpath(d, MANIFESTS) for d in dirs]
        self.assertEqual(rel, [".", "base", "overlays/cert-manager", "overlays/imagecache", "overlays/imagepulljob",
                               "overlays/network-policy", "overlays/openyurt", "overlays/pre-1.28"])
        for d in dirs:
            objs = render(d)
            self.assertGreaterEqual(len(objs), 15, d)
            for o in objs:  # a namespaced object is in ota-system (RBAC and the Service name depend on it)
                if o["kind"] in ("Deployment", "Service", "ServiceAccount", "Role", "RoleBinding",
                                 "PodDisruptionBudget", "Certificate", "Issuer", "Secret",
                                 "NetworkPolicy"):
                    self.assertEqual(o["metadata"].get("namespace"), NS, (d, o["kind"], o["metadata"]["name"]))

    def test_manifests_is_the_base(self):
        self.assertEqual(kustomize(MANIFESTS), kustomize(os.path.join(MANIFESTS, "base")))

    def test_images_are_overridable(self):
        d = tempfile.mkdtemp(prefix="ota-images-", dir=os.path.join(ROOT, "build"))
        try:
            with open(os.path.join(d, "kustomization.yaml"), "w") as f:
                f.write("resources:\n  - %s\nimages:\n"
                        "  - {name: ota-prepull/ota-webhook, newName: reg.example.com/w, newTag: '1.2'}\n"
                        "  - {name: ota-prepull/ota-controller, newName: reg.example.com/c, digest: 'sha256:%s'}\n"
                        % (os.path.relpath(os.path.join(MANIFESTS, "base"), d), "a" * 64))
            objs = render(d)
        finally:
            shutil.rmtree(d)
        self.assertEqual(pod_spec(one(objs, "Deployment", "ota-webhook"))["containers"][0]["image"],
                         "reg.example.com/w:1.2")
        self.assertEqual(pod_spec(one(objs, "Deployment", "ota-controller"))["containers"][0]["image"],
                         "reg.example.com/c@sha256:" + "a" * 64)


class Base(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.objs = render(os.path.join(MANIFESTS, "base"))
        cls.webhook = one(cls.objs, "Deployment", "ota-webhook", NS)
        cls.controller = one(cls.objs, "Deployment", "ota-controller", NS)

    def test_namespace_enforces_restricted(self):
        labels = one(self.objs, "Namespace", NS)["metadata"]["labels"]
        self.assertEqual(labels["pod-security.kubernetes.io/enforce"], "restricted")

    def test_service_accounts(self):
        sa = one(self.objs, "ServiceAccount", "ota-webhook", NS)
        self.assertIs(sa.get("automountServiceAccountToken"), False)
        self.assertEqual(pod_spec(self.webhook)["serviceAccountName"], "ota-webhook")
        self.assertIs(pod_spec(self.webhook).get("automountServiceAccountToken"), False)
        one(self.objs, "ServiceAccount", "ota-controller", NS)
        self.assertEqual(pod_spec(self.controller)["serviceAccountName"], "ota-controller")
        self.assertNotEqual(pod_spec(self.controller).get("automountServiceAccountToken"), False)
        # the webhook recognises the controller by the service account's name
        args = pod_spec(self.webhook)["containers"][0]["args"]
        self.assertEqual(flag_value(args, "--controller-username"),
                         "system:serviceaccount:%s:ota-controller" % NS)

    def test_pod_security_restricted(self):
        for dep in (self.webhook, self.controller):
            check_restricted(self, dep)

    def test_probes_resources_and_flags(self):
        for dep, binary in ((self.webhook, WEBHOOK_BIN), (self.controller, CONTROLLER_BIN)):
            c = pod_spec(dep)["containers"][0]
            where = dep["metadata"]["name"]
            # every flag is one the program has
            known = help_flags(binary)
            self.assertIn("--health-probe-bind-address", known, "%s --help" % binary)
            for a in c["args"]:
                self.assertTrue(a.startswith("--"), (where, a))
                self.assertIn(a.split("=", 1)[0], known, (where, a))
            ports = {p["name"]: p["containerPort"] for p in c["ports"]}
            self.assertEqual(ports["health"], port_of(flag_value(c["args"], "--health-probe-bind-address")))
            self.assertEqual(ports["metrics"], port_of(flag_value(c["args"], "--metrics-bind-address")))
            self.assertEqual(c["livenessProbe"]["httpGet"], {"path": "/livez", "port": "health"})
            self.assertEqual(c["readinessProbe"]["httpGet"], {"path": "/readyz", "port": "health"})
            for kind in ("requests", "limits"):
                self.assertEqual(set(c["resources"][kind]), {"cpu", "memory"}, (where, kind))
            # the metrics port has a Service
            svc = [s for s in find(self.objs, "Service", namespace=NS)
                   if s["spec"]["selector"].items() <= dep["spec"]["template"]["metadata"]["labels"].items()
                   and any(p.get("targetPort") == "metrics" for p in s["spec"]["ports"])]
            self.assertEqual(len(svc), 1, where)

    def test_webhook_deployment(self):
        spec = pod_spec(self.webhook)
        labels = self.webhook["spec"]["template"]["metadata"]["labels"]
        self.assertEqual(self.webhook["spec"]["replicas"], 2)
        self.assertEqual(self.webhook["spec"]["selector"]["matchLabels"].items() <= labels.items(), True)
        # spread over nodes
        spread = [t for t in spec.get("topologySpreadConstraints") or []
                  if t["topologyKey"] == "kubernetes.io/hostname"
                  and t["labelSelector"]["matchLabels"].items() <= labels.items()]
        self.assertEqual(len(spread), 1)
        # a disruption budget that keeps one replica
        pdb = one(self.objs, "PodDisruptionBudget", "ota-webhook", NS)
        self.assertEqual(pdb["apiVersion"], "policy/v1")
        self.assertEqual(pdb["spec"]["minAvailable"], 1)
        self.assertTrue(pdb["spec"]["selector"]["matchLabels"].items() <= labels.items())
        # the Secret is mounted where --tls-cert-file and --tls-private-key-file point
        c = spec["containers"][0]
        vol = [v for v in spec["volumes"] if v.get("secret", {}).get("secretName") == "ota-webhook-tls"]
        self.assertEqual(len(vol), 1)
        mount = [m for m in c["volumeMounts"] if m["name"] == vol[0]["name"]][0]
        self.assertNotIn("subPath", mount)  # a subPath mount never sees a rotated Secret
        self.assertEqual(flag_value(c["args"], "--tls-cert-file"), mount["mountPath"] + "/tls.crt")
        self.assertEqual(flag_value(c["args"], "--tls-private-key-file"), mount["mountPath"] + "/tls.key")
        # the Service: 443 -> the admission port
        svc = one(self.objs, "Service", "ota-webhook", NS)
        self.assertTrue(svc["spec"]["selector"].items() <= labels.items())
        port = [p for p in svc["spec"]["ports"] if p["port"] == 443]
        self.assertEqual(len(port), 1)
        target = {p["name"]: p["containerPort"] for p in c["ports"]}[port[0]["targetPort"]]
        self.assertEqual(target, 9443)
        self.assertEqual(port_of(flag_value(c["args"], "--bind-address")), 9443)
        # the drain fits in the grace period
        self.assertGreater(spec["terminationGracePeriodSeconds"],
                           int(flag_value(c["args"], "--shutdown-grace-seconds")))

    def test_controller_deployment(self):
        c = pod_spec(self.controller)["containers"][0]
        self.assertEqual(flag_value(c["args"], "--leader-elect"), "true")
        self.assertIsNone(flag_value(c["args"], "--kubeconfig"))  # in-cluster
        # docs/operations.md's example patch replaces args/7
        self.assertTrue(c["args"][7].startswith("--helper-image="), c["args"])
        self.assertGreaterEqual(self.controller["spec"]["replicas"], 1)
        # the Lease it elects on is the one the Role lets it update
        role = one(self.objs, "Role", "ota-controller-leader-election", NS)
        names = [n for r in role["rules"] for n in r.get("resourceNames") or []]
        self.assertEqual(names, [flag_value(c["args"], "--leader-elect-resource-name") or "ota-controller"])

    def test_webhook_configurations(self):
        hooks = webhooks(self.objs)
        self.assertEqual(set(hooks), set(WEBHOOKS))
        for name, (kind, w) in hooks.items():
            want_kind, path, policy, resource = WEBHOOKS[name]
            self.assertEqual(kind, want_kind, name)
            self.assertEqual(w["admissionReviewVersions"], ["v1"], name)
            self.assertEqual(w["sideEffects"], "None", name)
            self.assertEqual(w["timeoutSeconds"], 5, name)
            self.assertEqual(w["failurePolicy"], policy, name)
            self.assertEqual(w["clientConfig"]["service"],
                             {"name": "ota-webhook", "namespace": NS, "path": path, "port": 443}, name)
            self.assertEqual(w["clientConfig"].get("caBundle", ""), "", name)
            self.assertEqual([r["resources"] for r in w["rules"]], [[resource]], name)
            self.assertTrue(w.get("matchConditions"), name)


class CertsRender(unittest.TestCase):
    def setUp(self):
        os.makedirs(os.path.join(ROOT, "build"), exist_ok=True)
        self.dir = tempfile.mkdtemp(prefix="ota-certs-", dir=os.path.join(ROOT, "build"))
        self.certs = os.path.join(self.dir, "certs")

    def tearDown(self):
        shutil.rmtree(self.dir)

    def check(self, objs):
        ca = b64(os.path.join(self.certs, "ca.crt"))
        hooks = webhooks(objs)
        self.assertEqual(set(hooks), set(WEBHOOKS))
        for name, (_, w) in hooks.items():
            self.assertEqual(w["clientConfig"].get("caBundle"), ca, name)
        sec = one(objs, "Secret", "ota-webhook-tls", NS)
        self.assertEqual(sec["type"], "kubernetes.io/tls")
        self.assertEqual(sec["data"], {"tls.crt": b64(os.path.join(self.certs, "tls.crt")),
                                       "tls.key": b64(os.path.join(self.certs, "tls.key"))})

    def test_ca_bundle_and_secret(self):
        text, objs = render_with_certs(self.certs)
        self.check(objs)
        # everything else is the plain render, unchanged
        base = render(MANIFESTS)
        strip = [o for o in objs if o["kind"] != "Secret"]
        for o in strip:
            if o["kind"] in CONFIG_KINDS:
                for w in o["webhooks"]:
                    del w["clientConfig"]["caBundle"]
        self.assertEqual(strip, base)
        # the pair in the Secret is one the apiserver accepts for the Service's name
        ca = os.path.join(self.certs, "ca.crt")
        run(["openssl", "verify", "-CAfile", ca, "-purpose", "sslserver", "-verify_hostname",
             "ota-webhook.ota-system.svc", os.path.join(self.certs, "tls.crt")])

    def test_idempotent(self):
        first, _ = render_with_certs(self.certs)
        second, _ = render_with_certs(self.certs)
        self.assertEqual(first, second)

    def test_overlay_dir(self):
        _, objs = render_with_certs(self.certs, os.path.join(MANIFESTS, "overlays", "pre-1.28"))
        self.check(objs)
        for _, w in webhooks(objs).values():
            self.assertNotIn("matchConditions", w)


def check_component_entries(test, base, objs, entries, group, versions, resource):
    """An overlay's webhook configurations are the base's plus `entries`
    (name -> (configuration kind, path)), each Fail, Equivalent, on our
    Service at its path, CREATE and UPDATE of group/versions/resource."""
    base_hooks, hooks = webhooks(base), webhooks(objs)
    test.assertEqual(set(hooks) - set(base_hooks), set(entries))
    for name in base_hooks:
        test.assertEqual(hooks[name], base_hooks[name], name)
    for name, (kind, path) in entries.items():
        k, w = hooks[name]
        test.assertEqual(k, kind, name)
        test.assertEqual(w["failurePolicy"], "Fail", name)
        test.assertEqual(w["matchPolicy"], "Equivalent", name)
        test.assertEqual(w["sideEffects"], "None", name)
        test.assertEqual(w["clientConfig"]["service"],
                         {"name": "ota-webhook", "namespace": NS, "path": path, "port": 443}, name)
        test.assertEqual(w["rules"], [{"apiGroups": [group], "apiVersions": versions, "resources": [resource],
                                       "operations": ["CREATE", "UPDATE"], "scope": "Namespaced"}], name)


def check_ca_bundles(test, overlay, entries):
    """overlays/<overlay> through certs/render-manifests.sh: the CA in each
    of `entries`."""
    d = tempfile.mkdtemp(prefix="ota-certs-", dir=os.path.join(ROOT, "build"))
    try:
        _, objs = render_with_certs(os.path.join(d, "certs"), os.path.join(MANIFESTS, "overlays", overlay))
        ca = b64(os.path.join(d, "certs", "ca.crt"))
    finally:
        shutil.rmtree(d)
    hooks = webhooks(objs)
    for name in entries:
        test.assertEqual(hooks[name][1]["clientConfig"].get("caBundle"), ca, name)


IPJ_WEBHOOKS = {  # name -> (configuration kind, path)
    "imagepulljobs.mutate.ota-prepull.openyurt.io": ("MutatingWebhookConfiguration", "/mutate-imagepulljob"),
    "imagepulljobs.validate.ota-prepull.openyurt.io": ("ValidatingWebhookConfiguration",
                                                       "/validate-imagepulljob"),
}


class ComponentOverlay(unittest.TestCase):
    """The base and overlays/OVERLAY rendered, as self.base and self.objs.
    The overlay is the base, components/OVERLAY and components/OVERLAY-crd
    (our CRD); the component alone brings no CRD, so that a cluster with
    the upstream project's CRD keeps it."""
    OVERLAY = None

    @classmethod
    def setUpClass(cls):
        cls.base = render(os.path.join(MANIFESTS, "base"))
        cls.objs = render(os.path.join(MANIFESTS, "overlays", cls.OVERLAY))

    def test_component_alone_brings_no_crd(self):
        d = tempfile.mkdtemp(prefix="ota-kz-", dir=os.path.join(ROOT, "build"))
        try:
            with open(os.path.join(d, "kustomization.yaml"), "w") as f:
                f.write("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
                        "resources:\n  - %s\ncomponents:\n  - %s\n" % (
                            os.path.relpath(os.path.join(MANIFESTS, "base"), d),
                            os.path.relpath(os.path.join(MANIFESTS, "components", self.OVERLAY), d)))
            objs = render(d)
        finally:
            shutil.rmtree(d)
        self.assertEqual(find(objs, "CustomResourceDefinition"), [])
        self.assertEqual(sorted(o["kind"] for o in self.objs if o not in objs), ["CustomResourceDefinition"])


class ImagePullJob(ComponentOverlay):
    OVERLAY = "imagepulljob"

    def test_base_unchanged_plus_crd_and_webhooks(self):
        self.assertEqual(find(self.base, "CustomResourceDefinition"), [])
        added = [o for o in self.objs if o not in self.base]
        self.assertEqual(sorted(o["kind"] for o in added),
                         ["ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "Deployment",
                          "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"])
        # the controller is told to serve them, and is given the rights to
        ctl = one(self.objs, "Deployment", "ota-controller")["spec"]["template"]["spec"]["containers"][0]
        base_ctl = one(self.base, "Deployment", "ota-controller")["spec"]["template"]["spec"]["containers"][0]
        self.assertEqual(ctl["args"], base_ctl["args"] + ["--imagepulljobs=true"])
        self.assertNotIn("--imagepulljobs=true", base_ctl["args"])
        role = one(self.objs, "ClusterRole", "ota-prepull-controller-imagepulljobs")
        self.assertEqual([(r["apiGroups"], r["resources"], r["verbs"]) for r in role["rules"]],
                         [(["apps.kruise.io"], ["imagepulljobs"], ["list", "watch", "patch", "delete"]),
                          (["apps.kruise.io"], ["imagepulljobs/status"], ["patch"]),
                          (["batch"], ["jobs"], ["patch"])])
        binding = one(self.objs, "ClusterRoleBinding", "ota-prepull-controller-imagepulljobs")
        self.assertEqual(binding["subjects"], [{"kind": "ServiceAccount", "name": "ota-controller",
                                                "namespace": NS}])
        check_component_entries(self, self.base, self.objs, IPJ_WEBHOOKS, "apps.kruise.io",
                                ["v1alpha1", "v1beta1"], "imagepulljobs")

    def test_crd(self):
        crd = one(self.objs, "CustomResourceDefinition", "imagepulljobs.apps.kruise.io")["spec"]
        self.assertEqual((crd["group"], crd["scope"], crd["names"]["plural"], crd["names"]["kind"]),
                         ("apps.kruise.io", "Namespaced", "imagepulljobs", "ImagePullJob"))
        self.assertNotIn("shortNames", crd["names"])
        self.assertEqual(crd["conversion"], {"strategy": "None"})
        self.assertEqual([(v["name"], v["served"], v["storage"]) for v in crd["versions"]],
                         [("v1alpha1", True, False), ("v1beta1", True, True)])
        for v in crd["versions"]:
            self.assertEqual(v["subresources"], {"status": {}})
            self.assertEqual([(c["name"], c["jsonPath"]) for c in v["additionalPrinterColumns"]],
                             [("TOTAL", ".status.desired"), ("ACTIVE", ".status.active"),
                              ("SUCCEED", ".status.succeeded"), ("FAILED", ".status.failed"),
                              ("AGE", ".metadata.creationTimestamp"), ("MESSAGE", ".status.message")])
            props = v["schema"]["openAPIV3Schema"]["properties"]
            spec = props["spec"]
            self.assertEqual(spec["required"], ["completionPolicy", "image"])
            self.assertEqual(set(spec["properties"]),
                             {"image", "pullSecrets", "selector", "podSelector", "parallelism", "pullPolicy",
                              "completionPolicy", "sandboxConfig", "imagePullPolicy"})
            self.assertTrue(spec["properties"]["parallelism"]["x-kubernetes-int-or-string"])
            for sel in ("selector", "podSelector"):
                self.assertEqual(spec["properties"][sel]["x-kubernetes-map-type"], "atomic")
            self.assertEqual(set(props["status"]["properties"]),
                             {"startTime", "completionTime", "desired", "active", "succeeded", "failed",
                              "failedNodes", "message"})
            self.assertEqual(props["status"]["required"], ["desired"])
            # no defaults in the schema: the mutating webhook sets them, as Kruise's does
            self.assertNotIn("default", json.dumps(v["schema"]))
        self.assertEqual(crd["versions"][0]["schema"], crd["versions"][1]["schema"])

    def test_with_certs(self):
        check_ca_bundles(self, "imagepulljob", IPJ_WEBHOOKS)


IC_WEBHOOKS = {"imagecaches.validate.ota-prepull.openyurt.io": ("ValidatingWebhookConfiguration",
                                                              "/validate-imagecache")}


class ImageCache(ComponentOverlay):
    OVERLAY = "imagecache"

    def test_base_unchanged_plus_crd_and_webhook(self):
        added = [o for o in self.objs if o not in self.base]
        self.assertEqual(sorted(o["kind"] for o in added),
                         ["ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "Deployment",
                          "ValidatingWebhookConfiguration"])
        # the controller is told to serve them, and is given the rights to
        ctl = one(self.objs, "Deployment", "ota-controller")["spec"]["template"]["spec"]["containers"][0]
        base_ctl = one(self.base, "Deployment", "ota-controller")["spec"]["template"]["spec"]["containers"][0]
        self.assertEqual(ctl["args"], base_ctl["args"] + ["--imagecaches=true"])
        self.assertNotIn("--imagecaches=true", base_ctl["args"])
        role = one(self.objs, "ClusterRole", "ota-prepull-controller-imagecaches")
        self.assertEqual([(r["apiGroups"], r["resources"], r["verbs"]) for r in role["rules"]],
                         [(["kubefledged.io"], ["imagecaches"], ["list", "watch", "update", "patch"]),
                          (["kubefledged.io"], ["imagecaches/status"], ["patch"]),
                          (["batch"], ["jobs"], ["patch"])])
        binding = one(self.objs, "ClusterRoleBinding", "ota-prepull-controller-imagecaches")
        self.assertEqual(binding["roleRef"]["name"], "ota-prepull-controller-imagecaches")
        self.assertEqual(binding["subjects"], [{"kind": "ServiceAccount", "name": "ota-controller",
                                                "namespace": NS}])
        check_component_entries(self, self.base, self.objs, IC_WEBHOOKS, "kubefledged.io", ["v1alpha2"],
                                "imagecaches")

    def test_crd(self):
        crd = one(self.objs, "CustomResourceDefinition", "imagecaches.kubefledged.io")["spec"]
        self.assertEqual((crd["group"], crd["scope"], crd["names"]),
                         ("kubefledged.io", "Namespaced",
                          {"kind": "ImageCache", "listKind": "ImageCacheList", "plural": "imagecaches",
                           "singular": "imagecache", "shortNames": ["ic"]}))
        self.assertEqual([(v["name"], v["served"], v["storage"]) for v in crd["versions"]],
                         [("v1alpha2", True, True)])
        v = crd["versions"][0]
        self.assertEqual(v["subresources"], {"status": {}})
        self.assertEqual([(c["name"], c["type"], c["jsonPath"]) for c in v["additionalPrinterColumns"]],
                         [("Status", "string", ".status.status"), ("Message", "string", ".status.message"),
                          ("Age", "date", ".metadata.creationTimestamp")])
        root = v["schema"]["openAPIV3Schema"]
        self.assertEqual(root["required"], ["spec"])
        spec = root["properties"]["spec"]
        self.assertEqual(spec["required"], ["cacheSpec"])
        self.assertEqual(set(spec["properties"]), {"cacheSpec", "imagePullSecrets"})
        item = spec["properties"]["cacheSpec"]["items"]
        self.assertEqual(item["required"], ["images"])
        self.assertEqual(item["properties"]["images"]["items"], {"type": "string"})
        self.assertEqual(item["properties"]["nodeSelector"]["additionalProperties"], {"type": "string"})
        self.assertEqual(spec["properties"]["imagePullSecrets"]["items"]["properties"], {"name": {"type": "string"}})
        status = root["properties"]["status"]
        self.assertEqual(set(status["properties"]),
                         {"status", "reason", "message", "failures", "startTime", "completionTime"})
        self.assertNotIn("required", status)
        self.assertEqual(status["properties"]["failures"]["additionalProperties"]["items"]["required"],
                         ["node", "reason", "message"])
        self.assertNotIn("default", json.dumps(v["schema"]))

    def test_with_certs(self):
        check_ca_bundles(self, "imagecache", IC_WEBHOOKS)


class Overlays(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.base = render(os.path.join(MANIFESTS, "base"))

    def test_pre_1_28(self):
        objs = render(os.path.join(MANIFESTS, "overlays", "pre-1.28"))
        hooks = webhooks(objs)
        base_hooks = webhooks(self.base)
        self.assertEqual(set(hooks), set(WEBHOOKS))
        for name, (_, w) in hooks.items():
            self.assertNotIn("matchConditions", w, name)
            want = dict(base_hooks[name][1])
            del want["matchConditions"]
            if WEBHOOKS[name][3] == "pods/status":
                # what selectors can still keep away; ota-system's own pods above all
                self.assertEqual(w.pop("objectSelector"), {"matchExpressions": [
                    {"key": "controller-revision-hash", "operator": "Exists"}]}, name)
                self.assertEqual(w.pop("namespaceSelector"), {"matchExpressions": [
                    {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": [NS]}]}, name)
            self.assertEqual(w, want, name)  # failure policies and the rest as in the base
        dep = one(objs, "Deployment", "ota-webhook", NS)
        self.assertGreater(dep["spec"]["replicas"], 2)
        check_restricted(self, dep)
        # everything else is the base
        rest = [o for o in objs if o["kind"] not in CONFIG_KINDS and o["metadata"]["name"] != "ota-webhook"]
        self.assertEqual(rest, [o for o in self.base if o["kind"] not in CONFIG_KINDS
                                and o["metadata"]["name"] != "ota-webhook"])

    def test_cert_manager(self):
        objs = render(os.path.join(MANIFESTS, "overlays", "cert-manager"))
        # the chain: self-signed Issuer -> CA Certificate -> CA Issuer -> serving Certificate
        serving = [c for c in find(objs, "Certificate", namespace=NS)
                   if c["spec"]["secretName"] == "ota-webhook-tls"]
        self.assertEqual(len(serving), 1)
        serving = serving[0]
        self.assertIn("ota-webhook.ota-system.svc", serving["spec"]["dnsNames"])
        self.assertNotEqual(serving["spec"].get("isCA"), True)
        ca_issuer = one(objs, "Issuer", serving["spec"]["issuerRef"]["name"], NS)
        ca_cert = [c for c in find(objs, "Certificate", namespace=NS)
                   if c["spec"]["secretName"] == ca_issuer["spec"]["ca"]["secretName"]]
        self.assertEqual(len(ca_cert), 1)
        self.assertIs(ca_cert[0]["spec"]["isCA"], True)
        root = one(objs, "Issuer", ca_cert[0]["spec"]["issuerRef"]["name"], NS)
        self.assertIn("selfSigned", root["spec"])
        # both configurations take their caBundle from the serving Certificate
        want = "%s/%s" % (NS, serving["metadata"]["name"])
        for kind in CONFIG_KINDS:
            cfg = one(objs, kind, "ota-prepull")
            self.assertEqual(cfg["metadata"]["annotations"].get("cert-manager.io/inject-ca-from"), want, kind)
        # and the webhooks themselves are the base's
        self.assertEqual({n: w for n, (_, w) in webhooks(objs).items()},
                         {n: w for n, (_, w) in webhooks(self.base).items()})
        # no Secret of ours: cert-manager writes it
        self.assertEqual(find(objs, "Secret"), [])


    def test_openyurt(self):
        """yurt-manager's two per-controller accounts (kube-system) as
        co-writers: one more flag of the webhook, the flag it has, and the
        names docs/operations.md gives; nothing else changes."""
        objs = render(os.path.join(MANIFESTS, "overlays", "openyurt"))
        webhook = one(objs, "Deployment", "ota-webhook", NS)
        args = pod_spec(webhook)["containers"][0]["args"]
        base_args = pod_spec(one(self.base, "Deployment", "ota-webhook", NS))["containers"][0]["args"]
        self.assertEqual(args[:-1], base_args)
        names = ["system:serviceaccount:kube-system:yurt-manager-daemon-pod-updater-controller",
                 "system:serviceaccount:kube-system:yurt-manager-image-preheat-controller"]
        self.assertEqual(args[-1], "--co-writer-usernames=" + ",".join(names))
        self.assertIn("--co-writer-usernames", help_flags(WEBHOOK_BIN))
        with open(os.path.join(ROOT, "docs", "operations.md")) as f:
            ops = f.read()
        self.assertIn("manifests/overlays/openyurt", ops)
        for n in names:
            self.assertIn(n, ops)
        self.assertEqual([o for o in objs if o is not None and o["kind"] != "Deployment"],
                         [o for o in self.base if o["kind"] != "Deployment"])
        self.assertEqual(one(objs, "Deployment", "ota-controller", NS),
                         one(self.base, "Deployment", "ota-controller", NS))

    def test_network_policy(self):
        objs = render(os.path.join(MANIFESTS, "overlays", "network-policy"))
        pols = find(objs, "NetworkPolicy")
        self.assertEqual(len(pols), 1)
        pol = pols[0]
        self.assertEqual(pol["apiVersion"], "networking.k8s.io/v1")
        self.assertEqual(pol["metadata"].get("namespace"), NS)
        spec = pol["spec"]
        self.assertEqual(spec["policyTypes"], ["Ingress"])
        # it selects the webhook's pods, and only them
        sel = spec["podSelector"]["matchLabels"]
        self.assertNotIn("matchExpressions", spec["podSelector"])
        webhook = one(objs, "Deployment", "ota-webhook", NS)
        controller = one(objs, "Deployment", "ota-controller", NS)
        self.assertTrue(sel.items() <= webhook["spec"]["template"]["metadata"]["labels"].items())
        self.assertFalse(sel.items() <= controller["spec"]["template"]["metadata"]["labels"].items())
        # the admission port: the one --bind-address listens on, from one CIDR only
        c = pod_spec(webhook)["containers"][0]
        admission = port_of(flag_value(c["args"], "--bind-address"))
        self.assertEqual(admission, 9443)
        rules = [r for r in spec["ingress"]
                 if any(p.get("port") in (admission, "https") for p in r.get("ports") or [])]
        self.assertEqual(len(rules), 1, spec["ingress"])
        rule = rules[0]
        self.assertEqual(rule["ports"], [{"port": admission, "protocol": "TCP"}])
        self.assertEqual(rule["from"], [{"ipBlock": {"cidr": "192.0.2.0/24"}}],
                         "the placeholder (TEST-NET-1) the operator replaces")
        # every other rule names its ports (none opens all ports, 9443 with them)
        for r in spec["ingress"]:
            self.assertTrue(r.get("ports"), r)
        # the placeholder is documented where an operator looks for it
        with open(os.path.join(ROOT, "docs", "operations.md")) as f:
            ops = f.read()
        self.assertIn("manifests/overlays/network-policy", ops)
        self.assertIn("192.0.2.0/24", ops)
        # everything else is the base
        self.assertEqual([o for o in objs if o["kind"] != "NetworkPolicy"], self.base)


class Images(unittest.TestCase):
    def stages(self, program):
        with open(os.path.join(ROOT, "images", program, "Dockerfile")) as f:
            text = re.sub(r"\\\n", " ", f.read())
        # ARGs with their defaults (the bases and package lists are build
        # arguments: images/build.sh replaces the bases), substituted as
        # docker would when none is passed: the global ones in FROM, a
        # stage's own in its lines.
        stages, cur, glob = [], None, {}

        def subst(line, args):
            return re.sub(r"\$\{(\w+)\}|\$(\w+)",
                          lambda m: args.get(m.group(1) or m.group(2), m.group(0)), line)
        for line in text.splitlines():
            line = line.strip()
            m = re.match(r"ARG (\w+)=(.*)$", line)
            if m:
                (cur["args"] if cur is not None else glob)[m.group(1)] = m.group(2).strip('"')
            elif line.upper().startswith("FROM "):
                cur = {"from": subst(line.split()[1], glob), "lines": [], "args": {}}
                stages.append(cur)
            elif cur is not None and line and not line.startswith("#"):
                cur["lines"].append(subst(line, cur["args"]))
        return stages

    @staticmethod
    def packages(stage):
        pkgs = []
        for line in stage["lines"]:
            m = re.search(r"apt-get install (.*?)(&&|$)", line)
            if m:
                pkgs += [w for w in m.group(1).split() if not w.startswith("-")]
        return pkgs

    @staticmethod
    def owner(path):
        """The Debian package that installed a library (merged /usr or not)."""
        real = os.path.realpath(path)
        for cand in (real, path, re.sub(r"^/usr/", "/", real)):
            p = subprocess.run(["dpkg", "-S", cand], capture_output=True, text=True)
            if p.returncode == 0:
                return p.stdout.split(":")[0]
        raise AssertionError("no Debian package owns %s" % path)

    def test_dockerfiles(self):
        # the libraries of the build the Dockerfiles make: the plain one in
        # build/, also when the tests run against the sanitizer build
        for program in ("ota-webhook", "ota-controller"):
            binary = os.path.join(ROOT, "build", program)
            self.assertTrue(os.access(binary, os.X_OK), "no %s: make all" % binary)
            build, runtime = self.stages(program)
            self.assertEqual(build["from"].split()[0], "debian:bookworm")
            self.assertTrue(any(l.startswith("RUN make ") for l in build["lines"]), program)
            self.assertEqual(runtime["from"], "debian:bookworm-slim")
            self.assertIn("USER %d:%d" % (UID, UID), runtime["lines"], program)
            pkgs = self.packages(runtime)
            self.assertEqual([p for p in pkgs if p.endswith("-dev")], [], program)
            # every library the program links comes from a runtime package
            # (libc6 is in the base image)
            needed = re.findall(r"NEEDED\s+(\S+)", run(["objdump", "-p", binary]))
            self.assertTrue(needed, binary)
            cache = run(["ldconfig", "-p"])
            for so in needed:
                m = re.search(r"^\s*%s \(.*x86-64.*\) => (\S+)$" % re.escape(so), cache, re.M)
                self.assertIsNotNone(m, so)
                owner = self.owner(m.group(1))
                self.assertTrue(owner == "libc6" or owner in pkgs, "%s: %s (package %s) not in %s"
                                % (program, so, owner, pkgs))
