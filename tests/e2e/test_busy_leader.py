"""A busy leader keeps its lease (class BusyLeader, issue 10 §1): a new
revision over 150 pods at --kube-api-qps 5 queues 150 status patches (30 s
of work at that rate) while the Lease, with short timings (3 s lease, 2 s
renew deadline, 0.5 s retry period), must be renewed every half second.
The renewals go in the client's Lease lane, ahead of the queued writes and
with a rate limit of their own: the leader never loses its lease, every pod
is marked once, and nothing is logged as a warning.  Not timed: the only
bound is a generous deadline for the rollout to end at all.

It runs bench/rollout.py's rollout (kubesim --no-sim, pods created through
the API, leader election on), which the rollout benchmark uses at 5 000
pods.
"""
import os
import sys
import unittest

from harness import CONTROLLER, ROOT

sys.path.insert(0, os.path.join(ROOT, "bench"))
import rollout  # noqa: E402


class BusyLeader(unittest.TestCase):
    PODS, QPS = 150, 5

    def test_busy_leader_keeps_its_lease(self):
        r = rollout.rollout(CONTROLLER, self.PODS, self.QPS, 5, max_seconds=240, lease=(3, 2, 0.5))
        self.assertIsNotNone(r, "the rollout could not be set up")
        why = "\n%s\ncontroller log tail:\n%s" % (
            {k: v for k, v in r.items() if k != "log_tail"}, r["log_tail"])
        self.assertEqual(r["marked"], self.PODS, "not every pod marked" + why)
        self.assertEqual(r["became"], 1, "leadership changed" + why)
        self.assertEqual(r["lost"], 0, "the busy leader lost its lease" + why)
        self.assertEqual(r["patches"], self.PODS, "a pod patched twice" + why)
        self.assertEqual(r["warnings"], 0, "warnings logged" + why)


if __name__ == "__main__":
    unittest.main()
