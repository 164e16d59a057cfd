"""Writes are not repeated when they may have landed (class WriteRetries,
issue 10 §3). The controller's proxy cuts the connection of every write
(not the Lease's) once it has read the request, so from the controller's
side each write was sent and no answer came: it may have been applied. A
status PATCH (not idempotent: a repeat could overwrite a newer state) is
then not retried by the client; only a later pass sends it again, after
the executor's hold of a failed action (5 s). Before the fix the client
resent it at once, up to 8 times, 0.2 s, 0.4 s, ... apart.

Immediate resends are libcurl's, not ours: a request on a reused HTTP/1.1
connection that dies before any byte of an answer is sent again at once
(its dead keep-alive connection rule, which no option turns off;
docs/DECISIONS.md "Client and lease"), on another pooled connection if
one is idle, so a few copies can go out within milliseconds. What is ours
is a resend after a backoff delay (0.2 s, 0.4 s, ...): between two holds
there must be none. What is checked is the shape of the gaps between
sends (a burst, then nothing until the hold ends), not a speed.
"""
import time

from harness import FRESH, Base, log, wait_until

HOLD = 5.0  # controller.h RECENT_FAILED_NS
BURST = 0.1  # libcurl's own resends follow each other closer than this;
             # the client's first backoff delay is 0.2 s


class WriteRetries(Base):
    NODES = 2

    def test_status_patch_cut_after_sending_is_not_resent(self):
        # pods running and marked first: a status patch carries the pod's
        # resourceVersion in its key, so a pod that changes (scheduled,
        # started) is rightly a new write; under OnDelete a new revision
        # leaves the pods as they are
        pods = self.make_ds(FRESH.pop())
        self.wait_need_upgrade(pods, "False", self.newest_hash())
        self.ctl.proxy.reset_writes = True
        try:
            self.set_image(FRESH.pop())

            # each pod's PodNeedUpgrade patch is cut at least twice: once by
            # the first pass, once by a pass after the hold
            def twice():
                per = {}
                for t, method, path in list(self.ctl.proxy.resets):
                    if method == "PATCH" and path.endswith("/status"):
                        per.setdefault(path, []).append(t)
                return per if len(per) >= self.NODES and all(len(v) >= 2 for v in per.values()) else None
            per = wait_until(twice, 30, "every pod's status patch cut twice")
        finally:
            self.ctl.proxy.reset_writes = False
        for path, times in per.items():
            gaps = [b - a for a, b in zip(times, times[1:])]
            log("%s cut at gaps %s" % (path, ["%.2f" % g for g in gaps]))
            # a gap is a burst's (libcurl) or a hold's (a later pass); one in
            # between is a retry after a backoff delay: the write was resent
            retried = [g for g in gaps if BURST <= g < HOLD - 0.5]
            self.assertEqual(retried, [],
                             "%s resent after %s s within a hold (gaps %s): a write that may have "
                             "landed was retried" % (path, retried, gaps))
        # once writes go through, every pod is marked
        for p in self.pods():
            wait_until(lambda: self.cond(self.pod(p["metadata"]["name"]), "PodNeedUpgrade"), 20,
                       "PodNeedUpgrade on %s" % p["metadata"]["name"])
