"""The simulated container registry: which images exist, how big they are, who may pull.

Kubelets ask the Registry to resolve an image reference with the credentials found in the
pod's imagePullSecrets; the answer is the image (digest, size) or the error message the real
containerd would give. Pull time is size / bandwidth of the pulling node, in simulated
seconds. The configuration is JSON (format in README.md next to this file); without one, a
built-in set of images is used (busybox, nginx, pause, edge agents, a 2 GB image and a
private image).
"""

import base64
import hashlib
import json
import re
import threading

DEFAULT_BANDWIDTH = 10_000_000  # bytes per simulated second (a 2 GB image takes ~3.5 min)
DEFAULT_IMAGE_FS = 100_000_000_000  # bytes of image filesystem per node
PRIVATE_REGISTRY = "registry.example.com"
DEFAULT_CRI_SOCKET = "/run/containerd/containerd.sock"  # containerd's; CRI-O's is /var/run/crio/crio.sock

DEFAULT_RUNTIME = "containerd://2.1.4"   # mounts image volumes (containerd >= 2.1.0)
OLD_CONTAINERD = "containerd://1.7.24"    # does not


def runtime_mounts_images(version):
    """Whether a containerRuntimeVersion ("containerd://2.1.4", "cri-o://1.31.0",
    "docker://27.3.1") mounts image volumes: containerd >= 2.1, CRI-O >= 1.31."""
    name, _, ver = str(version).partition("://")
    nums = [int(x) for x in re.findall(r"\d+", ver)[:2]] + [0, 0]
    least = {"containerd": (2, 1), "cri-o": (1, 31)}.get(name)
    return least is not None and tuple(nums[:2]) >= least


DEFAULT_CONFIG = {
    "defaultBandwidth": DEFAULT_BANDWIDTH,
    "images": [
        {"image": "busybox:1.36", "size": 4_270_000},
        {"image": "busybox:1.36-musl", "size": 1_460_000},
        {"image": "busybox:1.37", "size": 4_280_000},
        {"image": "busybox:1.37-musl", "size": 1_470_000},
        {"image": "busybox:stable-musl", "size": 1_470_000},
        {"image": "busybox:latest", "size": 4_280_000},
        {"image": "nginx:1.25", "size": 70_500_000},
        {"image": "nginx:1.27", "size": 72_100_000},
        {"image": "nginx:latest", "size": 72_100_000},
        {"image": "registry.k8s.io/pause:3.10", "size": 320_000},
        {"image": PRIVATE_REGISTRY + "/edge/agent:v1", "size": 150_000_000},
        {"image": PRIVATE_REGISTRY + "/edge/agent:v2", "size": 160_000_000},
        {"image": PRIVATE_REGISTRY + "/edge/agent:v3", "size": 170_000_000},
        {"image": PRIVATE_REGISTRY + "/edge/big-model:1.0", "size": 2_147_483_648},
        {"image": PRIVATE_REGISTRY + "/edge/big-model:2.0", "size": 2_147_483_648},
        {"image": PRIVATE_REGISTRY + "/private/app:1.0", "size": 50_000_000,
         "pullSecret": "regcred", "username": "ota", "password": "ota-secret"},
        {"image": PRIVATE_REGISTRY + "/private/app:2.0", "size": 52_000_000,
         "pullSecret": "regcred", "username": "ota", "password": "ota-secret"},
    ],
    "nodes": {},
}

_COMPONENT = r"[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*"
_DOMAIN = r"(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?"
_REFERENCE = re.compile(
    r"^(?:(?P<domain>%s)/)?(?P<path>%s(?:/%s)*)(?::(?P<tag>[\w][\w.-]{0,127}))?"
    r"(?:@(?P<digest>sha256:[0-9a-f]{64}))?$" % (_DOMAIN, _COMPONENT, _COMPONENT))


class InvalidReference(ValueError):
    pass


class ImageRef:
    """A parsed, normalised image reference (docker.io/library/ added as the runtime does)."""

    def __init__(self, text):
        m = _REFERENCE.match(text or "")
        if not m:
            raise InvalidReference(text)
        domain, path = m.group("domain"), m.group("path")
        if domain and "." not in domain and ":" not in domain and domain != "localhost":
            path, domain = domain + "/" + path, None   # "library/busybox" style, no domain
        if not domain:
            domain = "docker.io"
            if "/" not in path:
                path = "library/" + path
        if re.search(r"[A-Z]", path):
            raise InvalidReference(text)
        self.text = text
        self.repo = domain + "/" + path
        self.domain = domain
        self.digest = m.group("digest")
        self.tag = m.group("tag") or (None if self.digest else "latest")
        self.untagged = m.group("tag") is None and self.digest is None

    @property
    def name(self):
        """Normalised reference, e.g. docker.io/library/busybox:1.36."""
        if self.tag:
            return "%s:%s%s" % (self.repo, self.tag, "@" + self.digest if self.digest else "")
        return "%s@%s" % (self.repo, self.digest)

    def default_pull_policy(self):
        return "Always" if self.tag == "latest" and not self.digest else "IfNotPresent"


class Image:
    """One image in the registry."""

    def __init__(self, entry):
        ref = ImageRef(entry["image"])
        self.repo, self.tag = ref.repo, ref.tag
        self.size = int(entry.get("size", 10_000_000))
        self.digest = entry.get("digest") or "sha256:" + hashlib.sha256(
            ref.name.encode()).hexdigest()
        self.pull_secret = entry.get("pullSecret")
        self.username = entry.get("username")
        self.password = entry.get("password")
        # the registry is busy for the first N pulls of this image (any node): 503
        self.fail_pulls = int(entry.get("failPulls", 0))
        self._lock = threading.Lock()

    def take_failure(self):
        """True while this image still answers a pull with 503 (one answer used up)."""
        with self._lock:
            if self.fail_pulls <= 0:
                return False
            self.fail_pulls -= 1
            return True

    @property
    def tag_name(self):
        return "%s:%s" % (self.repo, self.tag)

    @property
    def digest_name(self):
        return "%s@%s" % (self.repo, self.digest)


class PullError(Exception):
    pass


def _host(key):
    host = re.sub(r"^[a-z]+://", "", key).split("/")[0]
    if host in ("index.docker.io", "registry-1.docker.io", "registry.hub.docker.com"):
        return "docker.io"
    return host


def credentials_from_secret(secret):
    """[(registry host, username, password)] from a dockerconfigjson/dockercfg Secret."""
    data = secret.get("data") or {}
    try:
        if secret.get("type") == "kubernetes.io/dockerconfigjson":
            auths = json.loads(base64.b64decode(data[".dockerconfigjson"])).get("auths", {})
        elif secret.get("type") == "kubernetes.io/dockercfg":
            auths = json.loads(base64.b64decode(data[".dockercfg"]))
        else:
            return []
    except (KeyError, ValueError, TypeError):
        return []
    creds = []
    for key, entry in (auths or {}).items():
        if not isinstance(entry, dict):
            continue
        user, password = entry.get("username"), entry.get("password")
        if entry.get("auth"):
            try:
                user, _, password = base64.b64decode(entry["auth"]).decode().partition(":")
            except (ValueError, UnicodeDecodeError):
                continue
        creds.append((_host(key), user, password))
    return creds


def dockerconfigjson_secret(name, namespace, registry, username, password):
    """A kubernetes.io/dockerconfigjson Secret body (for tests and demos)."""
    auth = base64.b64encode(("%s:%s" % (username, password)).encode()).decode()
    cfg = {"auths": {registry: {"username": username, "password": password, "auth": auth}}}
    return {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/dockerconfigjson",
            "metadata": {"name": name, "namespace": namespace},
            "data": {".dockerconfigjson": base64.b64encode(json.dumps(cfg).encode()).decode()}}


class Registry:
    def __init__(self, config=None):
        config = DEFAULT_CONFIG if config is None else config
        self.config = config
        self.default_bandwidth = float(config.get("defaultBandwidth", DEFAULT_BANDWIDTH))
        self.nodes = config.get("nodes") or {}
        self.preloaded = config.get("preloadedImages", ["registry.k8s.io/pause:3.10"])
        self._by_name = {}
        for entry in config.get("images", []):
            img = Image(entry)
            self._by_name[img.tag_name] = img
            self._by_name[img.digest_name] = img

    def bandwidth(self, node):
        return float((self.nodes.get(node) or {}).get("bandwidth", self.default_bandwidth))

    def node_config(self, node):
        return self.nodes.get(node) or {}

    def cri_socket(self, node):
        """The host path of the node's container runtime socket (what a CRI client such as
        crictl must reach through a hostPath mount)."""
        return str(self.node_config(node).get("criSocket",
                                              self.config.get("criSocket", DEFAULT_CRI_SOCKET)))

    def _setting(self, node, key):
        """A node's own value of key, else the top-level one, else None."""
        value = self.node_config(node).get(key)
        return self.config.get(key) if value is None else value

    def runtime_version(self, node):
        """Node.status.nodeInfo.containerRuntimeVersion: `containerRuntimeVersion`, else
        what `imageVolumes` implies (containerd 2.1, which mounts image volumes, or 1.7)."""
        version = self._setting(node, "containerRuntimeVersion")
        if version:
            return str(version)
        return DEFAULT_RUNTIME if self._setting(node, "imageVolumes") is not False \
            else OLD_CONTAINERD

    def image_volumes(self, node):
        """Whether the node's runtime mounts image volumes (CRI Mount.image, KEP-4639):
        `imageVolumes` when set, else by containerRuntimeVersion: containerd >= 2.1 and
        CRI-O >= 1.31 do, older ones and docker (cri-dockerd) do not."""
        value = self._setting(node, "imageVolumes")
        if value is not None:
            return bool(value)
        return runtime_mounts_images(self.runtime_version(node))

    def image_gc_policy(self, node):
        """(image filesystem bytes, high %, low %, minimum age s) for the node's image GC."""
        def setting(key, default):
            return float(self.node_config(node).get(key, self.config.get(key, default)))
        return (setting("imageFsBytes", DEFAULT_IMAGE_FS), setting("imageGCHighThresholdPercent", 85),
                setting("imageGCLowThresholdPercent", 80), setting("imageMinimumGCAge", 120))

    def lookup(self, ref):
        """The Image a reference names, ignoring credentials, or None."""
        if ref.digest:  # a digest wins over a tag, as in containerd
            return self._by_name.get("%s@%s" % (ref.repo, ref.digest))
        return self._by_name.get("%s:%s" % (ref.repo, ref.tag))

    def resolve(self, ref, credentials):
        """The Image for ref if these credentials may pull it; else PullError with the
        message containerd gives (the kubelet shows it as the ErrImagePull message)."""
        img = self.lookup(ref)
        prefix = 'failed to pull and unpack image "%s": failed to resolve reference "%s": ' % (
            ref.name, ref.name)
        if img is None:
            raise PullError("rpc error: code = NotFound desc = " + prefix +
                            "%s: not found" % ref.name)
        if img.username is not None:
            ok = any(host == ref.domain and user == img.username and pw == img.password
                     for host, user, pw in credentials)
            if not ok:
                if ref.domain == "docker.io":
                    why = ("pull access denied, repository does not exist or may require "
                           "authorization: server message: insufficient_scope: "
                           "authorization failed")
                else:
                    tag = ref.digest or ref.tag
                    why = ("unexpected status from HEAD request to https://%s/v2/%s/manifests/"
                           "%s: 401 Unauthorized" % (ref.domain, ref.repo.split("/", 1)[1],
                                                     tag))
                raise PullError("rpc error: code = Unknown desc = " + prefix + why)
        if img.take_failure():
            tag = ref.digest or ref.tag
            raise PullError("rpc error: code = Unknown desc = " + prefix +
                            "unexpected status from HEAD request to https://%s/v2/%s/manifests/"
                            "%s: 503 Service Unavailable" % (ref.domain, ref.repo.split("/", 1)[1], tag))
        return img


def load_config(path):
    """The registry configuration from a JSON file, or the built-in default when path is
    None. A file with "includeDefaults": true adds its images to the default ones."""
    if not path:
        return json.loads(json.dumps(DEFAULT_CONFIG))
    with open(path) as f:
        config = json.load(f)
    if config.get("includeDefaults"):
        merged = json.loads(json.dumps(DEFAULT_CONFIG))
        merged["images"] += config.get("images", [])
        for k, v in config.items():
            if k != "images":
                merged[k] = v
        config = merged
    for entry in config.get("images", []):
        ImageRef(entry["image"])  # fail early on a bad reference
    return config
