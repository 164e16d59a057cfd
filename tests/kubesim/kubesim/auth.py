"""Bearer-token authentication and the kubeconfig files for each identity.

Identities (DESIGN §8): admin (system:masters), the controller's service
account, one `system:node:<n>` per node (group system:nodes), an ordinary
user, and two of OpenYurt yurt-manager's per-controller service accounts
(`yurt-manager-<controller name>` in kube-system, as its controller clients
get their tokens), for the tests of a cluster that runs it beside us.
None of them has any RBAC grant beyond the bootstrap roles. Each gets a random token; `write_kubeconfigs` writes
`<state-dir>/<identity>.kubeconfig` pointing at the HTTPS port with the
simulator's CA. `tokens.json` in the state dir maps identity -> token for
scripts. Unknown or missing tokens are 401, except on the anonymous
endpoints (/version, /healthz, /readyz, /livez), as with the default RBAC.
"""
import base64
import json
import os
import secrets

from .api import User

CONTROLLER_USER = "system:serviceaccount:ota-system:ota-controller"
YURT_MANAGER_USERS = {
    "yurt-manager-daemonpodupdater":
        "system:serviceaccount:kube-system:yurt-manager-daemon-pod-updater-controller",
    "yurt-manager-imagepreheat": "system:serviceaccount:kube-system:yurt-manager-image-preheat-controller",
}


def identities(nodes):
    ids = {
        "admin": User("kubernetes-admin", ["system:masters", "system:authenticated"]),
        "controller": User(CONTROLLER_USER, ["system:serviceaccounts", "system:serviceaccounts:ota-system",
                                             "system:authenticated"]),
        "user": User("jane", ["developers", "system:authenticated"]),
    }
    for ident, name in YURT_MANAGER_USERS.items():
        ids[ident] = User(name, ["system:serviceaccounts", "system:serviceaccounts:kube-system",
                                 "system:authenticated"])
    for n in nodes:
        ids[n] = User("system:node:%s" % n, ["system:nodes", "system:authenticated"])
    return ids


class Authenticator:
    ANONYMOUS_PATHS = ("/version", "/healthz", "/readyz", "/livez")

    def __init__(self, nodes):
        self.users = identities(nodes)
        self.tokens = {name: secrets.token_hex(16) for name in self.users}
        self.by_token = {t: self.users[n] for n, t in self.tokens.items()}

    def add(self, ident, user, token=None):
        token = token or secrets.token_hex(16)
        self.users[ident] = user
        self.tokens[ident] = token
        self.by_token[token] = user
        return token

    def authenticate(self, header):
        """Authorization header -> User or None."""
        if not header or not header.startswith("Bearer "):
            return None
        return self.by_token.get(header[len("Bearer "):].strip())


def kubeconfig(server, ca_pem, ident, token, namespace="default"):
    ca = base64.b64encode(ca_pem).decode()
    return ("apiVersion: v1\nkind: Config\nclusters:\n- name: kubesim\n  cluster:\n"
            "    server: %s\n    certificate-authority-data: %s\n"
            "users:\n- name: %s\n  user:\n    token: %s\n"
            "contexts:\n- name: %s@kubesim\n  context:\n    cluster: kubesim\n    user: %s\n"
            "    namespace: %s\ncurrent-context: %s@kubesim\n" % (server, ca, ident, token, ident, ident,
                                                               namespace, ident))


def write_kubeconfigs(state_dir, server, ca_path, auth):
    with open(ca_path, "rb") as f:
        ca_pem = f.read()
    for ident, token in auth.tokens.items():
        path = os.path.join(state_dir, "%s.kubeconfig" % ident)
        with open(path, "w") as f:
            f.write(kubeconfig(server, ca_pem, ident, token))
        os.chmod(path, 0o600)
    with open(os.path.join(state_dir, "tokens.json"), "w") as f:
        json.dump({i: {"token": t, "user": auth.users[i].name, "groups": auth.users[i].groups}
                   for i, t in auth.tokens.items()}, f, indent=1)
