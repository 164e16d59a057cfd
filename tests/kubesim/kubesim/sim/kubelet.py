"""A simulated kubelet: one per node, running that node's pods without running anything.

It registers its Node (capacity, Ready condition, addresses, images), then for every pod
bound to the node (spec.nodeName) walks the real kubelet's steps: init containers one at a
time in order, then the containers; before starting a container it makes sure the image is
present (imagePullPolicy Always / IfNotPresent / Never, default Always for :latest and
untagged images), pulling it through the node's ImageStore with the pod's imagePullSecrets.
Failed pulls show ErrImagePull, then ImagePullBackOff while the back-off (10 s doubling to
300 s) lasts. Containers then run until killed or exit as runtime.py decides (a `crictl
rmi` that reaches the node's runtime socket deletes images: crictl.py); the pod's
phase, conditions and container statuses follow, written with PUT on pods/<name>/status as
system:node:<node>, leaving conditions the kubelet does not own untouched.

Image volumes (KEP-4639, `volumes[].image`): before any init container, once per pod and
in order, every image volume's image is made present through the same path as a
container's (policy, pull secrets, back-off, Events on the Pod itself); a volume's error
then shows on each container that mounts it (the last failing one it mounts), and a
container mounting only good volumes starts. On a node whose runtime cannot mount images
(registry `imageVolumes: false`) creating such a container fails (CreateContainerError).

Like the real kubelet (kubernetes#125050), the pod worker is blocked while it waits for a
pull: a pod deleted during a pull stays Terminating until the pull ends; then the kubelet
finishes the deletion with DELETE ?gracePeriodSeconds=0.
"""

import hashlib

from . import crictl, podstatus
from .events import EventRecorder
from .identities import node_user
from .imagestore import ImageStore
from .podstatus import PodRuntime
from .registry import ImageRef, InvalidReference, credentials_from_secret
from .runtime import SHORT_RUN, behaviour
from .workqueue import RESYNC, Worker, meta

NODE_KEY = ("*node*",)
IMAGE_GC_KEY = ("*image-gc*",)
IMAGE_GC_PERIOD = 300.0      # the kubelet's ImageGCPeriod (5 min)
IMAGE_BACKOFF = (10.0, 300.0)
CRASH_BACKOFF = (10.0, 300.0)
BACKOFF_STATUS_DELAY = 2.0   # ErrImagePull shows this long before ImagePullBackOff
RESYNC_SECONDS = 60.0
POD_WORKER_BACKOFF = 10.0    # a failed pod sync (CreateContainerError) is retried after this
KUBELET_VERSION = "v1.32.0"


def go_duration(seconds):
    """Seconds as Go's time.Duration prints them after Truncate(time.Millisecond)."""
    ms = int(seconds * 1000 + 1e-6)
    if ms < 1000:
        return "%dms" % ms if ms else "0s"
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    sec = ("%d.%03d" % divmod(rest, 1000)).rstrip("0").rstrip(".")
    return ("%dh" % h if h else "") + ("%dm" % m if h or m else "") + sec + "s"


class Kubelet(Worker):
    def __init__(self, api, node, index, registry):
        self.name = "kubelet-" + node
        super().__init__(api, node_user(node))
        self.node = node
        self.index = index
        self.registry = registry
        self.node_ip = "172.18.0.%d" % (index + 2)
        self.store = ImageStore(node, registry, self.clock,
                                on_change=lambda: self.enqueue(NODE_KEY))
        self.events = EventRecorder(self, "kubelet", node)
        self._pods = {}             # (namespace, name) -> PodRuntime
        self._next_ip = 2
        for ref in registry.node_config(node).get("images", registry.preloaded):
            img = registry.lookup(ImageRef(ref))
            if img:
                self.store.add(img)

    # -- lifecycle ------------------------------------------------------------------------
    def start(self):
        self.register()
        self.store.start()
        super().start()
        self.enqueue_after(IMAGE_GC_KEY, IMAGE_GC_PERIOD)

    def stop(self):
        super().stop()
        self.store.stop()

    def keys_for(self, event_type, resource, obj):
        if resource == "pods" and (obj.get("spec") or {}).get("nodeName") == self.node:
            return [(meta(obj).get("namespace"), meta(obj).get("name"))]
        return []

    def sync(self, key):
        if key == RESYNC:
            for pod in self.list("/api/v1/pods", {"fieldSelector": "spec.nodeName=" + self.node}):
                self.enqueue((meta(pod)["namespace"], meta(pod)["name"]))
            # a safety net only: at least RESYNC_SECONDS simulated and 30 real seconds apart
            self.enqueue_after(RESYNC, max(RESYNC_SECONDS, 30 * self.clock.scale))
        elif key == NODE_KEY:
            self._update_node_images()
        elif key == IMAGE_GC_KEY:
            self.collect_images()
            self.enqueue_after(IMAGE_GC_KEY, IMAGE_GC_PERIOD)
        else:
            self._sync_pod(key)

    # -- the Node --------------------------------------------------------------------------------
    def _node_status(self):
        now = self.clock.rfc3339()

        def cond(ctype, status, reason, message):
            return {"type": ctype, "status": status, "lastHeartbeatTime": now,
                    "lastTransitionTime": now, "reason": reason, "message": message}
        capacity = {"cpu": "4", "ephemeral-storage": "102350Mi", "hugepages-2Mi": "0",
                    "memory": "8131592Ki", "pods": "110"}
        digest = hashlib.sha256(self.node.encode()).hexdigest()
        return {
            "capacity": capacity,
            "allocatable": dict(capacity, memory="8029192Ki", **{"ephemeral-storage":
                                                                 "96589Mi"}),
            "conditions": [
                cond("MemoryPressure", "False", "KubeletHasSufficientMemory",
                     "kubelet has sufficient memory available"),
                cond("DiskPressure", "False", "KubeletHasNoDiskPressure",
                     "kubelet has no disk pressure"),
                cond("PIDPressure", "False", "KubeletHasSufficientPID",
                     "kubelet has sufficient PID available"),
                cond("Ready", "True", "KubeletReady", "kubelet is posting ready status")],
            "addresses": [{"type": "InternalIP", "address": self.node_ip},
                          {"type": "Hostname", "address": self.node}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {"machineID": digest[:32], "systemUUID": digest[32:64],
                         "bootID": digest[:8] + "-boot", "kernelVersion": "6.1.0-kubesim",
                         "osImage": "kubesim simulated node", "operatingSystem": "linux",
                         "architecture": "amd64",
                         "containerRuntimeVersion": self.registry.runtime_version(self.node),
                         "kubeletVersion": KUBELET_VERSION, "kubeProxyVersion": KUBELET_VERSION},
            "images": self.store.node_status_images(),
        }

    def register(self):
        """Create the Node object, or refresh its status when it already exists."""
        cfg = self.registry.node_config(self.node)
        labels = {"kubernetes.io/hostname": self.node, "kubernetes.io/os": "linux",
                  "kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
                  "beta.kubernetes.io/arch": "amd64"}
        labels.update(cfg.get("labels") or {})
        spec = {"podCIDR": "10.244.%d.0/24" % self.index,
                "podCIDRs": ["10.244.%d.0/24" % self.index]}
        if cfg.get("taints"):
            spec["taints"] = cfg["taints"]
        body = {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": self.node, "labels": labels, "annotations": {
                    "node.alpha.kubernetes.io/ttl": "0",
                    "volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
                "spec": spec, "status": self._node_status()}
        code, obj = self.call("POST", "/api/v1/nodes", body=body)
        if code == 409:
            self._patch_node_status(self._node_status())
        elif code not in (200, 201):
            raise RuntimeError("registering node %s: %s %s" % (self.node, code, obj))

    def _patch_node_status(self, status):
        for path in ("/api/v1/nodes/%s/status" % self.node, "/api/v1/nodes/" + self.node):
            code, obj = self.call("PATCH", path, body={"status": status},
                                  content_type="application/merge-patch+json")
            if code == 200:
                return code
            if code not in (404, 405):
                break
        return code

    def _update_node_images(self):
        # A deleted Node stays deleted: like the real kubelet, this one registers only at
        # start (it keeps running the pods it has, so their deletions still finish).
        self._patch_node_status({"images": self.store.node_status_images()})

    def collect_images(self):
        """One image GC round: images of any container of a pod still on the node stay."""
        in_use = {c.digest for rt in self._pods.values() for c in rt.ctrs.values() if c.digest}
        # an image volume is held while a container that mounts it runs (whether an exited
        # container's mount still protects it is not known: kubesim says no)
        in_use |= {d for rt in self._pods.values() for c in rt.ctrs.values() if c.running
                   for d in c.volume_digests}
        removed = self.store.collect_garbage(in_use)
        if removed:
            self.log.info("image GC on %s removed %s", self.node, ", ".join(removed))

    # -- pods ----------------------------------------------------------------------------------
    def _pod_path(self, key):
        return "/api/v1/namespaces/%s/pods/%s" % key

    def _sync_pod(self, key):
        pod = self.get(self._pod_path(key))
        if pod is None or (pod.get("spec") or {}).get("nodeName") != self.node:
            self._pods.pop(key, None)
            return
        rt = self._pods.get(key)
        if rt is None or rt.uid != meta(pod)["uid"]:
            rt = self._pods[key] = PodRuntime(meta(pod)["uid"], self._pod_ip(pod),
                                              self.clock.rfc3339())
        if meta(pod).get("deletionTimestamp"):
            self._terminate(key, pod, rt)
            return
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            return
        self._advance(key, pod, rt)
        self._write_status(key, pod, rt)

    def _pod_ip(self, pod):
        if (pod.get("spec") or {}).get("hostNetwork"):
            return self.node_ip
        ip = "10.244.%d.%d" % (self.index, self._next_ip)
        self._next_ip = self._next_ip + 1 if self._next_ip < 254 else 2
        return ip

    def _terminate(self, key, pod, rt):
        if rt.blocking and not rt.blocking[1].done:
            return      # the pod worker is stuck in the pull; we come back when it ends
        for ctr in rt.ctrs.values():
            if ctr.running:
                self.events.record(pod, "Normal", "Killing",
                                   "Stopping container " + ctr.name, ctr.field_path)
        code, obj = self.call("DELETE", self._pod_path(key), query={"gracePeriodSeconds": "0"},
                              body={"kind": "DeleteOptions", "apiVersion": "v1",
                                    "gracePeriodSeconds": 0,
                                    "preconditions": {"uid": rt.uid}})
        if code not in (200, 202, 404, 409):
            raise RuntimeError("deleting pod %s/%s: %s %s" % (key + (code, obj)))
        self._pods.pop(key, None)

    def _advance(self, key, pod, rt):
        """Move the pod's containers as far as they can go now."""
        spec = pod.get("spec") or {}
        policy = spec.get("restartPolicy") or "Always"
        now = self.clock.now()
        if rt.blocking:
            ck, pull = rt.blocking
            if not pull.done:
                return
            rt.pulled[ck] = pull
            rt.blocking = None
        for ctr in rt.ctrs.values():
            if ctr.running and ctr.exit_at is not None and now >= ctr.exit_at - 1e-6:
                ctr.exit(self.clock, ctr.exit_code, message=ctr.exit_message)
        if not self._ensure_image_volumes(key, pod, rt):
            return      # the pod worker waits for a volume's pull
        init_specs = spec.get("initContainers") or []
        for c in init_specs:
            ck, ctr = rt.ctr(c, True, "PodInitializing")
            if ctr.terminated:
                if ctr.state["terminated"]["exitCode"] == 0:
                    continue
                if policy == "Never" or not self._may_restart(key, pod, rt, ck, ctr):
                    return
            if ctr.running:
                return
            self._run(key, pod, rt, ck, ctr, c)
            return
        for c in spec.get("containers") or []:
            ck, ctr = rt.ctr(c, False, "ContainerCreating")
            if ctr.running and ctr.image != c.get("image", ""):
                self.events.record(pod, "Normal", "Killing", "Container %s definition "
                                   "changed, will be restarted" % ctr.name, ctr.field_path)
                ctr.exit(self.clock, 137, "Error")
                rt.crash_backoff.pop(ck, None)
            if ctr.running:
                continue
            if ctr.ever_ran:
                changed = ctr.image != c.get("image", "")
                code = (ctr.state.get("terminated") or
                        (ctr.last_state.get("terminated") or {})).get("exitCode", 0)
                if not changed and not (policy == "Always" or
                                        (policy == "OnFailure" and code != 0)):
                    continue
                if not changed and not self._may_restart(key, pod, rt, ck, ctr):
                    continue
            if rt.blocking:
                break
            self._run(key, pod, rt, ck, ctr, c)
            if rt.blocking:
                break

    def _may_restart(self, key, pod, rt, ck, ctr):
        """Crash-loop back-off: the first restart is immediate, then 10 s doubling to 5 min."""
        delay = rt.crash_backoff.get(ck)
        if delay is None:
            rt.crash_backoff[ck] = CRASH_BACKOFF[0]
            return True
        until = (ctr.finished_at or 0) + delay
        now = self.clock.now()
        if now < until:
            if ctr.terminated:
                ctr.last_state = {"terminated": ctr.state["terminated"]}
            ctr.wait("CrashLoopBackOff", "back-off %s restarting failed container=%s pod=%s_%s(%s)"
                     % (go_duration(delay), ctr.name, meta(pod)["name"],
                        meta(pod)["namespace"], rt.uid))
            self.events.record(pod, "Warning", "BackOff", "Back-off restarting failed container "
                               "%s in pod %s_%s(%s)" % (ctr.name, meta(pod)["name"],
                                                        meta(pod)["namespace"], rt.uid),
                               ctr.field_path)
            self.enqueue_after(key, until - now)
            return False
        rt.crash_backoff[ck] = min(delay * 2, CRASH_BACKOFF[1])
        return True

    def _run(self, key, pod, rt, ck, ctr, c):
        """Make sure the image volumes it mounts and its image are there, then start the
        container."""
        mounts = image_volume_mounts(pod, c)
        failed = [r for r in (rt.volumes.get(n) for n in mounts) if r and r[0] is None]
        if failed:
            # toKubeContainerImageVolumes: the last failing volume's error, before the
            # container's own image is looked at
            reason, msg = failed[-1][1]
            ctr.wait(reason, msg)
            self.events.record(pod, "Warning", "Failed", "Error: " + reason, ctr.field_path)
            return
        digest = self._ensure_image(key, pod, rt, ck, ctr, c)
        if digest is None:
            return
        if mounts and not self.registry.image_volumes(self.node):
            msg = self._no_image_mounts_message(rt, ctr)
            ctr.wait("CreateContainerError", msg)
            self.events.record(pod, "Warning", "Failed", "Error: " + msg, ctr.field_path)
            self.enqueue_after(key, POD_WORKER_BACKOFF)
            return
        if ctr.terminated:
            ctr.last_state = {"terminated": ctr.state["terminated"]}
        if ctr.ever_ran:
            ctr.restart_count += 1
        local = self.store.lookup(ImageRef(c.get("image", "")))
        ctr.image = c.get("image", "")
        ctr.image_id = next((n for n in local[1]["names"] if "@" in n), "") if local else ""
        ctr.container_id = self._runtime_scheme() + "://" + hashlib.sha256(
            ("%s/%s/%d" % (rt.uid, ctr.name, ctr.restart_count)).encode()).hexdigest()
        self.store.touch(digest)
        ctr.digest = digest
        ctr.volume_digests = [rt.volumes[n][0] for n in mounts]
        for d in ctr.volume_digests:
            self.store.touch(d)
        self.events.record(pod, "Normal", "Created", "Created container " + ctr.name,
                           ctr.field_path)
        ctr.state = {"running": {"startedAt": self.clock.rfc3339()}}
        ctr.ready = not ctr.init
        self.events.record(pod, "Normal", "Started", "Started container " + ctr.name,
                           ctr.field_path)
        inv = crictl.parse(c)
        if inv is not None:
            seconds, code = SHORT_RUN, self._crictl(pod, c, ctr, inv)
        else:
            seconds, code = behaviour(c)
        if seconds is not None:
            ctr.exit_at = self.clock.now() + seconds
            ctr.exit_code = code
            self.enqueue_after(key, seconds)

    def _crictl(self, pod, c, ctr, inv):
        """A CRI client's `crictl rmi` against this node's runtime (crictl.py): deletes
        what it may, returns the exit code, and keeps the output as the kubelet would
        show it (the terminated message of a failed FallbackToLogsOnError container)."""
        running = {x.digest: x.container_id.split("://", 1)[-1]
                   for rt in self._pods.values() for x in rt.ctrs.values()
                   if x.running and x.digest}   # this one too: it runs crictl's image
        code, output = crictl.run(inv, c, pod.get("spec") or {},
                                  self.registry.cri_socket(self.node), self.store, running,
                                  self.clock.rfc3339())
        if code != 0 and c.get("terminationMessagePolicy") == "FallbackToLogsOnError":
            ctr.exit_message = crictl.termination_message(output)
        if output:
            self.log.debug("crictl on %s in %s/%s: %s", self.node, meta(pod)["namespace"],
                           meta(pod)["name"], output.strip())
        return code

    def _runtime_scheme(self):
        return self.registry.runtime_version(self.node).partition("://")[0] or "containerd"

    def _no_image_mounts_message(self, rt, ctr):
        """CreateContainer's error on a runtime that ignores CRI Mount.image: the kubelet
        sends the mount with an empty host_path (KEP-4639), which containerd < 2.1 tries to
        create and docker refuses. The wording is inferred from those runtimes' code paths,
        not seen on a cluster."""
        cid = hashlib.sha256(("%s/%s/%d/create" % (rt.uid, ctr.name, ctr.restart_count))
                             .encode()).hexdigest()
        if self._runtime_scheme() == "docker":
            return ("failed to create a container: Error response from daemon: invalid mount "
                    "config for type \"bind\": field Source must not be empty")
        return ('failed to generate container "%s" spec: failed to generate spec: failed to '
                'mkdir "": mkdir : no such file or directory' % cid)

    def _ensure_image_volumes(self, key, pod, rt):
        """getImageVolumes: each image volume not yet pulled for this pod, in order, made
        present as a container image is (Events on the Pod). Results go to rt.volumes
        (name -> (digest, None) or (None, (reason, message))). False while the pod worker
        waits for a volume's pull."""
        for name, iv in image_volumes(pod):
            if rt.volumes.get(name, (None,))[0] is not None:
                continue                # pulled once per pod
            image = iv.get("reference") or ""
            res = self._ensure(key, pod, rt, ("volume", name), image,
                               iv.get("pullPolicy"), None)
            if res is None:
                return False
            rt.volumes[name] = res
        return True

    def _ensure_image(self, key, pod, rt, ck, ctr, c):
        """The digest of the container's image when it may start now; else None, with the
        container's waiting state saying why (and a pull queued when one is needed)."""
        res = self._ensure(key, pod, rt, ck, c.get("image", ""), c.get("imagePullPolicy"),
                           ctr.field_path)
        if res is None:
            if ctr.state.get("waiting", {}).get("reason") not in ("ErrImagePull",
                                                                  "ImagePullBackOff"):
                ctr.wait("PodInitializing" if ctr.init else "ContainerCreating")
            return None
        digest, err = res
        if err:
            ctr.wait(*err)
            self.events.record(pod, "Warning", "Failed", "Error: " + err[0], ctr.field_path)
            return None
        return digest

    def _ensure(self, key, pod, rt, ck, image, policy, fp):
        """EnsureImageExists for a container's image or an image volume's (Events on fp, or
        on the Pod when None): (digest, None) when present, (None, (reason, message)) when
        it cannot be, None when a pull was queued (rt.blocking)."""
        try:
            ref = ImageRef(image)
        except InvalidReference:
            msg = ('Failed to apply default image tag "%s": couldn\'t parse image reference '
                   '"%s": invalid reference format' % (image, image))
            self.events.record(pod, "Warning", "InspectFailed", msg, fp)
            return None, ("InvalidImageName", msg)
        policy = policy or ref.default_pull_policy()
        now = self.clock.now()
        done = rt.pulled.pop(ck, None)
        if done is not None and done.ref.name == ref.name:
            if done.error:
                _, delay = rt.image_backoff.get(image, (0, None))
                delay = IMAGE_BACKOFF[0] if delay is None else min(delay * 2, IMAGE_BACKOFF[1])
                rt.image_backoff[image] = (now + delay, delay)
                self.events.record(pod, "Warning", "Failed", 'Failed to pull image "%s": %s'
                                   % (image, done.error), fp)
                self.enqueue_after(key, BACKOFF_STATUS_DELAY)
                return None, ("ErrImagePull", done.error)
            took = done.finished_at - done.started_at
            waited = done.finished_at - done.queued_at
            self.events.record(pod, "Normal", "Pulled", 'Successfully pulled image "%s" in %s '
                               '(%s including waiting). Image size: %d bytes.'
                               % (image, go_duration(took), go_duration(waited),
                                  done.image.size), fp)
            return done.image.digest, None
        local = self.store.lookup(ref)
        if policy == "Never" or (policy == "IfNotPresent" and local):
            if local:
                self.events.record(pod, "Normal", "Pulled", 'Container image "%s" already '
                                   'present on machine' % image, fp)
                return local[0], None
            msg = 'Container image "%s" is not present with pull policy of Never' % image
            self.events.record(pod, "Warning", "ErrImageNeverPull", msg, fp)
            return None, ("ErrImageNeverPull", msg)
        until, _ = rt.image_backoff.get(image, (0, None))
        if now < until:
            msg = 'Back-off pulling image "%s"' % image
            self.events.record(pod, "Normal", "BackOff", msg, fp)
            self.enqueue_after(key, until - now)
            return None, ("ImagePullBackOff", msg)
        self.events.record(pod, "Normal", "Pulling", 'Pulling image "%s"' % image, fp)
        pull = self.store.pull(ref, self._pull_credentials(pod), lambda p: self.enqueue(key))
        rt.blocking = (ck, pull)
        return None

    def _pull_credentials(self, pod):
        creds, missing = [], []
        ns = meta(pod)["namespace"]
        for ref in (pod.get("spec") or {}).get("imagePullSecrets") or []:
            secret = self.get("/api/v1/namespaces/%s/secrets/%s" % (ns, ref.get("name")))
            if secret is None:
                missing.append(ref.get("name"))
            else:
                creds += credentials_from_secret(secret)
        if missing:
            self.events.record(pod, "Warning", "FailedToRetrieveImagePullSecret",
                               "Unable to retrieve some image pull secrets (%s); attempting "
                               "to pull the image may not succeed." % ", ".join(missing))
        return creds

    # -- pod status --------------------------------------------------------------------------
    def _write_status(self, key, pod, rt):
        fields = podstatus.render(pod, rt, self.node_ip, self.clock.rfc3339())
        new = podstatus.merge(pod, fields, rt.start_time)
        if new == (pod.get("status") or {}):
            return
        body = dict(pod)
        body["status"] = new
        code, obj = self.call("PUT", self._pod_path(key) + "/status", body=body)
        if code == 409:
            self.enqueue(key)          # someone else wrote first: look again
        elif code == 404:
            self._pods.pop(key, None)
        elif code != 200:
            raise RuntimeError("writing status of %s/%s: %s %s" % (key + (code, obj)))


def image_volumes(pod):
    """[(volume name, its `image` source)] of a pod's image volumes, in spec order."""
    return [(v.get("name"), v["image"]) for v in (pod.get("spec") or {}).get("volumes") or []
            if isinstance(v, dict) and isinstance(v.get("image"), dict)]


def image_volume_mounts(pod, c):
    """Names of the image volumes container c mounts, in its volumeMounts order."""
    names = {n for n, _ in image_volumes(pod)}
    return [m.get("name") for m in c.get("volumeMounts") or []
            if isinstance(m, dict) and m.get("name") in names]
