"""The RBAC ota-prepull's manifests grant, as every suite applies it to a
kubesim that enforces authorization (its default, Node,RBAC): the
ServiceAccounts, ClusterRoles, Roles and their bindings that
`kubectl kustomize manifests` renders, which is what `kubectl apply -k
manifests` creates for the controller's identity, without the webhook
configurations (only suites that run the webhook may register them).

    docs = ota_rbac.rendered()            # YAML documents, each a string
    ota_rbac.apply(sim, docs)             # kubectl apply as admin; its stdout

Python 3 standard library only; `kubectl kustomize` runs once per process.
"""
import os
import re
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KINDS = ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
NAMESPACE = "ota-system"  # where the Role (the Lease) and the ServiceAccounts live
_rendered = {}


def rendered(kustomization="manifests", kinds=KINDS):
    """The RBAC objects (or those of kinds) of the render of kustomization
    (a path under the repository: manifests, or an overlay such as
    manifests/overlays/imagepulljob), as YAML documents."""
    key = (kustomization, tuple(kinds))
    if key not in _rendered:
        out = subprocess.run(["kubectl", "kustomize", os.path.join(ROOT, kustomization)], capture_output=True,
                             text=True, timeout=120)
        if out.returncode != 0:
            raise RuntimeError("kubectl kustomize %s failed: %s" % (kustomization, out.stderr))
        docs = [d for d in re.split(r"^---\n", out.stdout, flags=re.M) if d.strip()]
        _rendered[key] = [d for d in docs if re.search(r"^kind: (%s)$" % "|".join(kinds), d, re.M)]
        if kinds == KINDS and len(_rendered[key]) < 5:
            raise RuntimeError("no RBAC in the render of %s" % kustomization)
    return list(_rendered[key])


def apply(sim, docs):
    """kubectl apply -f - of docs as sim's admin (sim: a kubesim_launch.Kubesim);
    kubectl's stdout, or RuntimeError with its output."""
    out = subprocess.run(["kubectl", "--kubeconfig", sim.kubeconfig("admin"), "apply", "-f", "-"],
                         input="---\n".join(docs), capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise RuntimeError("kubectl apply of the rendered RBAC failed: %s%s" % (out.stdout, out.stderr))
    return out.stdout
