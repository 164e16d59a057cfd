"""Automatic pre-pull of an OTA DaemonSet's new revision (issue 22 §1).

Class AutoPrePull: an OTA DaemonSet of 50 pods opted in with Kruise's
apps.kruise.io/image-predownload-parallelism "5": every pod is marked
AutoPrePull True with its PodNeedUpgrade, never more than 5 automatic
pulls at once (the pods/status writes replayed in order from a watch),
every pod ends PodImageReady True/PullImageSuccess for the new revision,
the DaemonSet gets AutoPrePullStarted and AutoPrePullFinished, and a node
user's upgrade then downloads nothing.

Class AutoPrePullQueue (6 nodes, --max-concurrent-pulls 3, a slow image):
a node user asking while automatic pulls run is served before the queued
automatic ones; a newer revision mid-way starts over for it; the
annotation dropped stops new starts (OptedOut), the running ones finish.

Class AutoPrePullNotReady: a node NotReady before its pod starts is waited
for (no Job, no failure; AutoPrePullFinished "1 waiting"); back, it is
pulled and a second AutoPrePullFinished gives the new counts.

Class AutoPrePullWindow: the window "02:00-03:00 Sim/Edge" on a simulated
clock (SimClock: the test's own TZif zone under the controller's TZDIR,
its offset rewritten): pulls start inside, none starts once it closes,
and the controller wakes at the next opening (not at its 5 min resync).

All run with the webhook (its rules auto-prepull-needs-opt-in and the
NodeUserRequest takeover).
"""
import os
import struct
import tempfile
import threading
import time

from harness import AGENT, FRESH, REG, REGISTRY_CONFIG, STATE_DIRS, JobTracker, log, watch_once, wait_until
from test_queueing import PerNode
from webhook_flow import WebhookBase, cond

AUTO = "ota-prepull.openyurt.io/AutoPrePull"
PARALLELISM = "apps.kruise.io/image-predownload-parallelism"
# 3 GB at the default 10 MB/s: 300 simulated seconds, 10 real ones: long
# enough to see pulls queued
SLOW = [REG + "/e2e/auto-slow-%d:1.0" % i for i in range(3)]


def auto_running(pod, h=None):
    """An automatic pull in flight (of h, or of any revision): AutoPrePull
    True and PodImageReady False/WaitPullImage for the same revision."""
    a, r = cond(pod, AUTO), cond(pod, "PodImageReady")
    msg = "controllerrevision: " + h if h else (a or {}).get("message")
    return (msg is not None and a is not None and a.get("status") == "True" and a.get("message") == msg and r is not None
            and r.get("status") == "False" and r.get("reason") == "WaitPullImage" and r.get("message") == msg)


class PodReplay(threading.Thread):
    """Every write to the namespace's pods, in the order the apiserver made
    them (a watch), and after each the number of automatic pulls in flight:
    the most seen."""

    def __init__(self, sim, ns):
        super().__init__(daemon=True)
        self.sim, self.ns = sim, ns
        self.pods = {}
        self.starts = []
        self.max_running = 0
        self.stopping = False
        self.lock = threading.Lock()
        self.synced = threading.Event()

    def note(self, kind, obj):
        with self.lock:
            uid = obj["metadata"]["uid"]
            was = self.pods.get(uid)
            if kind == "DELETED":
                self.pods.pop(uid, None)
            else:
                self.pods[uid] = obj
                if auto_running(obj) and not (was is not None and auto_running(was)):
                    self.starts.append((time.time(), obj["metadata"]["name"]))
            self.max_running = max(self.max_running, sum(1 for p in self.pods.values() if auto_running(p)))

    def started(self):
        """(wall time seen, pod name) of each move into an automatic pull."""
        with self.lock:
            return list(self.starts)

    def run(self):
        path = "/api/v1/namespaces/%s/pods" % self.ns
        rv = None
        while not self.stopping:
            try:
                if rv is None:
                    lst = self.sim.get(path, timeout=10)
                    for item in lst["items"]:
                        self.note("ADDED", item)
                    rv = lst["metadata"]["resourceVersion"]
                    self.synced.set()
                rv = watch_once(self.sim, path, rv, lambda: self.stopping, self.note)
            except Exception:  # noqa: BLE001 - a watch that ends is started again
                time.sleep(0.1)


class AutoBase(WebhookBase):
    def annotate(self, name, annotations):
        """A merge patch of the DaemonSet's annotations as admin (None removes)."""
        self.sim.call("PATCH", "/apis/apps/v1/namespaces/%s/daemonsets/%s" % (self.ns, name),
                      {"metadata": {"annotations": annotations}}, ctype="application/merge-patch+json")

    def ds_events(self, name, reason):
        return [e for e in self.events({"metadata": {"name": name}})
                if e["reason"] == reason and e["involvedObject"].get("kind") == "DaemonSet"]

    def wait_all_ready(self, pods, h, timeout):
        msg = "controllerrevision: " + h

        def check():
            for p in pods:
                c = cond(self.pod(p["metadata"]["name"]), "PodImageReady")
                if not c or c.get("reason") != "PullImageSuccess" or c.get("message") != msg:
                    return None
            return True
        wait_until(check, timeout, "PodImageReady True for %s on %d pods" % (h, len(pods)), interval=0.5)

    def started(self, pods, h):
        return [p for p in pods if auto_running(self.pod(p["metadata"]["name"]), h)]

    def replay(self):
        r = PodReplay(self.sim, self.ns)
        r.start()
        self.assertTrue(r.synced.wait(30), "pod watch did not sync")
        self.addCleanup(setattr, r, "stopping", True)
        return r


class AutoPrePullNotReady(AutoBase):
    """A node NotReady before its pod is started: waited for (no Job, no
    failure) while the others are pulled; AutoPrePullFinished says "1
    waiting"; the node back, its pod is pulled and a second
    AutoPrePullFinished says the new counts."""
    NODES = 4
    set_ready = PerNode.set_ready

    def test_not_ready_node_waited_for(self):
        pods = self.apply_ds("agent", AGENT + "v1")
        self.annotate("agent", {PARALLELISM: "2"})
        down = pods[-1]
        node = down["spec"]["nodeName"]
        self.set_ready(node, "False")
        self.addCleanup(self.set_ready, node, "True")
        h = self.kubectl_set_image("agent", FRESH[2])
        self.wait_need_upgrade(pods, "True", h)
        others = [p for p in pods if p is not down]
        self.wait_all_ready(others, h, timeout=120)
        wait_until(lambda: self.ds_events("agent", "AutoPrePullFinished"), 30, "AutoPrePullFinished")
        finished = self.ds_events("agent", "AutoPrePullFinished")
        self.assertEqual(len(finished), 1, finished)
        self.assertIn("3 ready, 0 failed, 1 waiting", finished[0]["message"])
        # waited for: marked, not started, no Job, not failed
        p = self.pod(down["metadata"]["name"])
        self.assertEqual((cond(p, AUTO) or {}).get("status"), "True")
        self.assertIsNone(cond(p, "PodImageReady"))
        self.assertEqual(self.tracker.jobs_of(down["metadata"]["uid"]), [])
        # back: pulled, and said
        self.set_ready(node, "True")
        self.wait_all_ready([down], h, timeout=60)
        wait_until(lambda: len(self.ds_events("agent", "AutoPrePullFinished")) == 2, 30,
                   "a second AutoPrePullFinished")
        messages = [e["message"] for e in self.ds_events("agent", "AutoPrePullFinished")]
        self.assertTrue(any("4 ready, 0 failed, 0 waiting" in m for m in messages), messages)
        self.assertEqual(len(self.ds_events("agent", "AutoPrePullStarted")), 1)


class AutoPrePull(AutoBase):
    NODES = 50
    MAX_PULLS = 10

    def test_fifty_pods_five_at_a_time(self):
        pods = self.apply_ds("agent", AGENT + "v1")
        self.annotate("agent", {PARALLELISM: "5"})
        replay = self.replay()
        new = FRESH[0]
        h = self.kubectl_set_image("agent", new)
        self.wait_need_upgrade(pods, "True", h)
        self.wait_all_ready(pods, h, timeout=240)
        log("max automatic pulls at once", replay.max_running)
        self.assertLessEqual(replay.max_running, 5, "more than 5 automatic pulls at once")
        self.assertGreaterEqual(replay.max_running, 2, "the parallelism was never used")
        for p in pods:
            a = cond(self.pod(p["metadata"]["name"]), AUTO)
            self.assertEqual((a["status"], a["reason"], a["message"]),
                             ("True", "DaemonSetOptedIn", "controllerrevision: " + h))
        # the DaemonSet's owner reads it
        wait_until(lambda: self.ds_events("agent", "AutoPrePullFinished"), 30, "AutoPrePullFinished")
        started = self.ds_events("agent", "AutoPrePullStarted")
        self.assertEqual(len(started), 1, started)
        self.assertIn("50 pods to pull, at most 5 at once", started[0]["message"])
        finished = self.ds_events("agent", "AutoPrePullFinished")
        self.assertIn("50 ready, 0 failed, 0 waiting", finished[0]["message"])
        # a node user's upgrade: the image is on the node, nothing to download
        old = pods[0]
        self.kubectl_ok(old["spec"]["nodeName"], "delete", "pod", old["metadata"]["name"], "--wait=false")
        fresh = wait_until(lambda: [p for p in self.pods("agent") if p["spec"]["nodeName"] == old["spec"]["nodeName"]
                                    and p["metadata"]["uid"] != old["metadata"]["uid"]
                                    and (cond(p, "Ready") or {}).get("status") == "True"], 60,
                           "the replacement, Ready")[0]
        events = [(e["reason"], e["message"]) for e in self.events(fresh)
                  if e.get("source", {}).get("component") == "kubelet"]
        self.assertIn(("Pulled", 'Container image "%s" already present on machine' % new), events)
        self.assertNotIn("Pulling", [r for r, _ in events])


class AutoPrePullQueue(AutoBase):
    NODES = 6
    MAX_PULLS = 3  # bulk units fill 2, the third is a node user's
    REGISTRY = dict(REGISTRY_CONFIG, images=REGISTRY_CONFIG["images"]
                    + [{"image": i, "size": 3_000_000_000} for i in SLOW])

    def running_jobs(self):
        return [j for j in self.live_jobs() if not JobTracker.finished(j)
                and not j["metadata"].get("deletionTimestamp")]

    def test_node_user_served_before_queued_automatic_pulls(self):
        pods = self.apply_ds("agent", AGENT + "v1")
        self.annotate("agent", {PARALLELISM: "4"})
        h = self.kubectl_set_image("agent", SLOW[0])
        self.wait_need_upgrade(pods, "True", h)
        # 4 started, 2 of them with Jobs (the bulk share of the cap), 2 queued
        running = wait_until(lambda: (lambda s: s if len(s) == 4 else None)(self.started(pods, h)), 30,
                             "4 automatic pulls")
        wait_until(lambda: len(self.running_jobs()) == 2, 30, "2 Jobs")
        queued = [p for p in running if not self.tracker.jobs_of(p["metadata"]["uid"])]
        self.assertEqual(len(queued), 2)
        waiting = [p for p in pods if p not in running][0]
        self.request_pull(waiting, h)  # as its node, as YurtHub does
        a = cond(self.pod(waiting["metadata"]["name"]), AUTO)
        self.assertEqual((a["status"], a["reason"]), ("False", "NodeUserRequest"))
        wait_until(lambda: self.tracker.jobs_of(waiting["metadata"]["uid"]), 30, "the node user's Job")
        for p in queued:
            self.assertEqual(self.tracker.jobs_of(p["metadata"]["uid"]), [],
                             "a queued automatic pull started before the node user's")
        self.wait_all_ready(pods, h, timeout=240)

    def test_newer_revision_midway(self):
        pods = self.apply_ds("agent", AGENT + "v1")
        self.annotate("agent", {PARALLELISM: "2"})
        h1 = self.kubectl_set_image("agent", SLOW[1])
        wait_until(lambda: self.started(pods, h1), 30, "automatic pulls of the first revision")
        h2 = self.kubectl_set_image("agent", FRESH[1])
        self.wait_need_upgrade(pods, "True", h2)
        self.wait_all_ready(pods, h2, timeout=240)
        for p in pods:
            a = cond(self.pod(p["metadata"]["name"]), AUTO)
            self.assertEqual(a["message"], "controllerrevision: " + h2)
        # the first revision's Jobs are gone (stale units cancelled)
        wait_until(lambda: not [j for j in self.live_jobs()
                                if j["metadata"]["annotations"].get("ota-prepull/revision") == h1
                                and not JobTracker.finished(j)], 30, "no Job of %s running" % h1)

    def test_annotation_dropped(self):
        pods = self.apply_ds("agent", AGENT + "v1")
        self.annotate("agent", {PARALLELISM: "2"})
        h = self.kubectl_set_image("agent", SLOW[2])
        running = wait_until(lambda: (lambda s: s if len(s) == 2 else None)(self.started(pods, h)), 30,
                             "2 automatic pulls")
        self.annotate("agent", {PARALLELISM: None})
        rest = [p for p in pods if p not in running]

        def opted_out():
            for p in rest:
                a = cond(self.pod(p["metadata"]["name"]), AUTO)
                if not a or (a["status"], a["reason"]) != ("False", "OptedOut"):
                    return None
            return True
        wait_until(opted_out, 30, "AutoPrePull False/OptedOut on the pods not started")
        # the running ones finish and are reported; no other starts
        self.wait_all_ready(running, h, timeout=120)
        for p in rest:
            c = cond(self.pod(p["metadata"]["name"]), "PodImageReady")
            self.assertIsNone(c, "a pull after the opt-out on %s" % p["metadata"]["name"])


# ---- the pull window, on a simulated clock

WINDOW = "ota-prepull.openyurt.io/prepull-window"
ZONE = "Sim/Edge"


def tzif(offset):
    """A version-1 TZif file (tzfile(5)) of one fixed UTC offset in seconds,
    no transitions: header ("TZif", version 0, 15 reserved bytes, then
    isutcnt isstdcnt leapcnt timecnt typecnt charcnt), one ttinfo (utoff,
    isdst, abbrind) and its abbreviation."""
    abbr = b"SIM\0"
    return (b"TZif" + b"\0" * 16 + struct.pack(">6l", 0, 0, 0, 0, 1, len(abbr))
            + struct.pack(">lBB", offset, 0, 0) + abbr)


class SimClock:
    """The controller's local time in zone Sim/Edge under its own TZDIR.

    The controller reads the real clock; the window is read in the zone, so
    moving the zone's offset moves the local time it sees.  How that reaches
    the controller: autopull_minute_now sets TZ=UTC0, tzset(), then TZ to the
    zone, tzset(), localtime_r, and restores TZ.  glibc's tzset reads a zone
    file only when TZ differs from the last call's value (and then only when
    the file's inode, device or mtime changed); the UTC0 step makes every
    call read the file anew (tests/unit/test_autopull.c
    test_zone_file_read_again checks an in-place rewrite).  Here the file is
    replaced by a rename all the same: a reader never sees it half written
    (glibc would take a truncated file for UTC)."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="ota-e2e-tzdir-")
        STATE_DIRS.append(self.dir)
        os.makedirs(os.path.join(self.dir, "Sim"))
        self.path = os.path.join(self.dir, ZONE)

    def set_local(self, hh, mm, ss=0):
        """Local time hh:mm:ss now; returns the real second (time.time())
        at which local time is hh:mm:ss (the controller reads whole seconds)."""
        now = int(time.time())
        offset = (hh * 3600 + mm * 60 + ss - now % 86400) % 86400
        if offset > 43200:
            offset -= 86400
        tmp = self.path + ".new"
        with open(tmp, "wb") as f:
            f.write(tzif(offset))
        os.replace(tmp, self.path)
        return now


class AutoPrePullWindow(AutoBase):
    """The window 02:00-03:00 in a zone whose offset the test sets: open,
    pulls start; closed mid-way, none starts (the running ones finish);
    a few seconds before the next opening, the controller wakes at it
    (--resync-period 5m: only the wake can start them within the test's
    bounds) and the rest are pulled."""
    NODES = 6
    REGISTRY = AutoPrePullQueue.REGISTRY
    CONTROLLER_ARGS = ("--resync-period", "5m")

    @classmethod
    def setUpClass(cls):
        cls.clock = SimClock()
        cls.clock.set_local(2, 30)
        cls.CONTROLLER_ENV = {"TZDIR": cls.clock.dir}
        super().setUpClass()

    def passes(self):
        return (self.ctl.metrics() or {}).get("ota_controller_reconcile_duration_seconds_count", 0)

    def nudge(self, n):
        """A pass now (a DaemonSet write the controller watches): the clock
        moved by a rewrite, not by time, so nothing else would run one."""
        before = self.passes()
        self.annotate("agent", {"e2e.example.com/nudge": str(n)})
        wait_until(lambda: self.passes() > before, 30, "a pass after the nudge")

    def test_window_closes_and_reopens(self):
        pods = self.apply_ds("agent", AGENT + "v1")
        self.annotate("agent", {PARALLELISM: "2", WINDOW: "02:00-03:00 " + ZONE})
        replay = self.replay()
        h = self.kubectl_set_image("agent", SLOW[0])
        self.wait_need_upgrade(pods, "True", h)
        first = wait_until(lambda: (lambda s: s if len(s) == 2 else None)(self.started(pods, h)), 30,
                           "2 automatic pulls inside the window")
        # 03:05: closed.  A start decided by a pass before the rewrite may
        # still land: count from two passes after it.
        self.clock.set_local(3, 5)
        self.nudge(1)
        self.nudge(2)
        closed_at = time.time()
        self.wait_all_ready(first, h, timeout=120)  # started before: they finish
        self.nudge(3)
        time.sleep(3)  # bounded hold: passes ran on the pulls' outcomes and the nudges
        late = [(t, n) for t, n in replay.started() if t > closed_at]
        self.assertEqual(late, [], "automatic pulls started while the window was closed")
        rest = [p for p in pods if p not in first]
        for p in rest:
            self.assertIsNone(cond(self.pod(p["metadata"]["name"]), "PodImageReady"))
        # 01:59:52: the window opens in 8 s.  One pass computes the wake;
        # then nothing happens until the opening.
        t0 = self.clock.set_local(1, 59, 52)
        opening = t0 + 8
        self.nudge(4)
        wait_until(lambda: [s for s in replay.started() if s[0] > closed_at], 60,
                   "automatic pulls after the opening (the controller's wake)")
        resumed = min(t for t, _ in replay.started() if t > closed_at)
        log("resumed %.1fs after the opening" % (resumed - opening))
        self.assertGreaterEqual(resumed, opening - 0.2, "a pull started before the window opened")
        self.wait_all_ready(pods, h, timeout=240)
        self.assertLessEqual(replay.max_running, 2)
