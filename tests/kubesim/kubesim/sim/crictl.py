"""What a simulated `crictl rmi` does: the CRI client an ImageCache purge Job runs.

A container whose command (then args) is `crictl [global flags] rmi IMAGE...` (argv[0]'s
basename `crictl`, no shell) is not a program the kubelet knows how to fake by its name
(runtime.py): it talks to the node's container runtime over the runtime's unix socket,
which the pod must mount from the host. parse() recognises the invocation; run() decides
its outcome against the node: which images it deletes, its exit code and its output.

- Endpoint: `--image-endpoint` (`-i`), else `--runtime-endpoint` (`-r`), as `unix://P` or
  a bare absolute P; with neither, crictl's default list (a warning, then the first that
  connects). The endpoint connects when a volumeMount of the container covers P (the
  longest mountPath that is P or a parent of it, without subPath) and its volume is a
  hostPath (type Socket or unset for P itself; Directory, DirectoryOrCreate or unset for
  a parent) whose host path is the node's runtime socket (`criSocket` in the registry
  configuration, default /run/containerd/containerd.sock; /var/run is /run, as on every
  distribution). Anything else fails as crictl does when nothing listens at P.
- Each image, in argv order (crictl's own order is a Go map's), repeats counted once:
  not on the node → `no such image X`; used by a running container on the node →
  refused, with CRI-O's wording (containerd would remove the name and leave the running
  container alone; CRI-O refuses even for exited containers: kubesim refuses for running
  ones, where deleting is plainly wrong); else the whole image goes (every name of it, as
  containerd's RemoveImage deletes all references of the image) and crictl prints
  `Deleted: <name>` per tag it had.
- Exit code 0 when every image was deleted, else 1 with logrus's last line
  `unable to remove the image(s)`. Log lines are logrus's text format without a
  terminal (`time="..." level=error msg="..."`), time in simulated seconds.

The kubelet puts the output into the terminated state's message only when the container
failed and its terminationMessagePolicy is FallbackToLogsOnError (the kubelet's rule:
logs are the fallback for a failed container with an empty /dev/termination-log), at most
the last 2048 bytes / 80 lines.
"""

import json
import posixpath

from .registry import ImageRef, InvalidReference

DEFAULT_ENDPOINTS = ("unix:///run/containerd/containerd.sock", "unix:///run/crio/crio.sock",
                     "unix:///var/run/cri-dockerd.sock")
MAX_MESSAGE_BYTES = 2048        # kubelet's MaxContainerTerminationMessageLogLength
MAX_MESSAGE_LINES = 80          # kubelet's MaxContainerTerminationMessageLogLines
MAX_IMAGES = 256                # a bound on what one invocation looks at

_VALUE_FLAGS = {"--runtime-endpoint": "runtime", "-r": "runtime",
                "--image-endpoint": "image", "-i": "image",
                "--timeout": None, "-t": None, "--config": None, "-c": None}
_BOOL_FLAGS = {"--debug", "-D"}


class Invocation:
    def __init__(self, runtime_endpoint, image_endpoint, images):
        self.runtime_endpoint = runtime_endpoint
        self.image_endpoint = image_endpoint
        self.images = images


def parse(container):
    """The Invocation of a `crictl ... rmi IMAGE...` container, or None for any other
    command (including rmi's --all / --prune, which kubesim does not simulate)."""
    argv = [str(w) for w in (container.get("command") or []) + (container.get("args") or [])]
    if not argv or argv[0].rsplit("/", 1)[-1] != "crictl":
        return None
    endpoints = {"runtime": None, "image": None}
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        name, eq, value = argv[i].partition("=")
        if name in _BOOL_FLAGS and not eq:
            i += 1
            continue
        if name not in _VALUE_FLAGS:
            return None
        if not eq:
            if i + 1 >= len(argv):
                return None
            value = argv[i + 1]
            i += 1
        if _VALUE_FLAGS[name]:
            endpoints[_VALUE_FLAGS[name]] = value
        i += 1
    if i >= len(argv) or argv[i] != "rmi":
        return None
    images = argv[i + 1:]
    if not images or len(images) > MAX_IMAGES or any(w.startswith("-") for w in images):
        return None
    return Invocation(endpoints["runtime"], endpoints["image"], images)


def host_path(p):
    """A host path in one spelling: normalised, /var/run read as /run."""
    p = posixpath.normpath(p)
    if p == "/var/run" or p.startswith("/var/run/"):
        p = p[len("/var"):]
    return p


def reaches_socket(path, container, pod_spec, node_socket):
    """True when `path` inside the container is the node's runtime socket, by the
    container's hostPath mounts."""
    path = posixpath.normpath(path)
    best = None
    for m in container.get("volumeMounts") or []:
        if m.get("subPath") or m.get("subPathExpr") or not m.get("mountPath"):
            continue
        mp = posixpath.normpath(m["mountPath"])
        if path == mp or path.startswith(mp.rstrip("/") + "/"):
            if best is None or len(mp) > len(best[0]):
                best = (mp, m.get("name"))
    if best is None:
        return False
    mp, vname = best
    vol = next((v for v in pod_spec.get("volumes") or [] if v.get("name") == vname), None)
    hp = (vol or {}).get("hostPath")
    if not isinstance(hp, dict) or not hp.get("path"):
        return False
    kind = hp.get("type") or ""
    if path == mp:
        if kind not in ("", "Socket"):
            return False
        host = hp["path"]
    else:
        if kind not in ("", "Directory", "DirectoryOrCreate"):
            return False
        host = hp["path"].rstrip("/") + path[len(mp):]
    return host_path(host) == host_path(node_socket)


def _log(now, level, msg):
    # logrus's TextFormatter without a terminal quotes a value with Go's %q
    return 'time="%s" level=%s msg=%s\n' % (now, level, json.dumps(msg))


def _connect_error(endpoint, path):
    return ('validate service connection: validate CRI v1 image API for endpoint "%s": '
            'rpc error: code = Unavailable desc = connection error: desc = "transport: Error '
            'while dialing: dial unix %s: connect: no such file or directory"' % (endpoint,
                                                                                  path))


def _endpoint_path(endpoint):
    if endpoint.startswith("unix://"):
        return endpoint[len("unix://"):]
    return endpoint if endpoint.startswith("/") else None


def run(inv, container, pod_spec, node_socket, store, running_users, now):
    """Runs the invocation against the node: (exit code, output). store is the node's
    ImageStore (images found with lookup, deleted with remove); running_users maps an
    image digest to the id of a running container using it; now is an RFC 3339 time."""
    out = []
    endpoint = inv.image_endpoint or inv.runtime_endpoint
    candidates = [endpoint] if endpoint else list(DEFAULT_ENDPOINTS)
    if not endpoint:
        out.append(_log(now, "warning", "image connect using default endpoints: [%s]. As the "
                        "default settings are now deprecated, you should set the endpoint "
                        "instead." % " ".join(DEFAULT_ENDPOINTS)))
    connected = None
    for ep in candidates:
        path = _endpoint_path(ep)
        if path is not None and reaches_socket(path, container, pod_spec, node_socket):
            connected = ep
            break
        err = _connect_error(ep, path or ep)
        if not endpoint:
            out.append(_log(now, "error", err))
    if connected is None:
        out.append(_log(now, "fatal", err))
        return 1, "".join(out)
    errored = False
    seen = set()
    for image in inv.images:
        if image in seen:
            continue
        seen.add(image)
        try:
            ref = ImageRef(image)
        except InvalidReference:
            out.append(_log(now, "error", 'image status request for "%s" failed: rpc error: '
                            'code = Unknown desc = can not resolve "%s" locally: invalid image '
                            'reference "%s": invalid reference format' % (image, image, image)))
            errored = True
            continue
        local = store.lookup(ref)
        if local is None:
            out.append(_log(now, "error", "no such image %s" % image))
            errored = True
            continue
        digest, entry = local
        user = running_users.get(digest)
        if user:
            out.append(_log(now, "error", 'error of removing image "%s": rpc error: code = '
                            'Unknown desc = image used by %s: image is in use by a container'
                            % (image, user)))
            errored = True
            continue
        store.remove(digest)
        names = entry["names"]
        tags = [n for n in names if "@" not in n] or names
        out += ["Deleted: %s\n" % n for n in tags]
    if errored:
        out.append(_log(now, "fatal", "unable to remove the image(s)"))
        return 1, "".join(out)
    return 0, "".join(out)


def termination_message(output):
    """The kubelet's fallback message from a failed container's logs: the last
    MAX_MESSAGE_LINES lines, at most MAX_MESSAGE_BYTES bytes of them."""
    lines = output.splitlines(keepends=True)[-MAX_MESSAGE_LINES:]
    data = "".join(lines).encode()[-MAX_MESSAGE_BYTES:]
    return data.decode("utf-8", "ignore")
