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
_rendered = []


def rendered():
    """The RBAC objects of the render, as YAML documents."""
    if not _rendered:
        out = subprocess.run(["kubectl", "kustomize", os.path.join(ROOT, "manifests")], capture_output=True,
                             text=True, timeout=120)
        if out.returncode != 0:
            raise RuntimeError("kubectl kustomize manifests failed: %s" % out.stderr)
        docs = [d for d in re.split(r"^---\n", out.stdout, flags=re.M) if d.strip()]
        _rendered.extend(d for d in docs if re.search(r"^kind: (%s)$" % "|".join(KINDS), d, re.M))
        if len(_rendered) < 5:
            raise RuntimeError("no RBAC in the render of manifests/")
    return list(_rendered)


def apply(sim, docs):
    """kubectl apply -f - of docs as sim's admin (sim: a kubesim_launch.Kubesim);
    kubectl's stdout, or RuntimeError with its output."""
    out = subprocess.run(["kubectl", "--kubeconfig", sim.kubeconfig("admin"), "apply", "-f", "-"],
                         input="---\n".join(docs), capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise RuntimeError("kubectl apply of the rendered RBAC failed: %s%s" % (out.stdout, out.stderr))
    return out.stdout
