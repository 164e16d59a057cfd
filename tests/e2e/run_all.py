#!/usr/bin/env python3
"""End-to-end tests of ota-controller against kubesim (docs/design.md §5, issue 4).

This runs them all, in one process; the tests are in
  test_prepull_flow.py     ControllerBehaviour: one request at a time, from
                           the marked pods to the Job and its outcome
  test_auto_prepull.py     AutoPrePull: 50 pods, parallelism 5, all Ready, no download at
                           the upgrade; AutoPrePullQueue: node user first, newer revision,
                           annotation dropped; AutoPrePullWindow: the window closes and
                           reopens on a simulated clock (a zone's offset rewritten);
                           AutoPrePullNotReady: a NotReady node waited for, pulled when
                           back, a second AutoPrePullFinished;
  test_auto_prepull_rolling.py  AutoPrePullRolling: a RollingUpdate DaemonSet opted in:
                           the rollout not held, nodes reached later pulled ahead;
  test_queueing.py         Concurrency: 50 requests, 5 pulls at a time, FIFO;
                           PerNode: one pull per node (a terminating pull pod
                           holds it), a NotReady node waits;
  test_faults.py           Faults: dropped watches, 410, 429, 500, 409, a slow
                           apiserver, apiserver restart, controller SIGKILL
  test_leader_election.py  LeaderElection: two replicas; LeaseTrouble: a
                           Lease that cannot be written is said, once
  test_transitions.py      Transitions: every move of DESIGN §3 through the
                           webhook registered from the rendered manifests,
                           with kubectl as admin, controller, node and user
  test_yurthub.py          YurtHubCompat: the writes OpenYurt YurtHub v1.7's
                           imagepull and upgrade make, and its readiness check
  test_yurtmanager.py      YurtManagerCoexistence: OpenYurt yurt-manager's
                           daemonpodupdater and imagepreheat writes beside
                           ours (--co-writer-usernames), and their races;
                           YurtManagerUnlisted: the same without the flag
  test_webhook_outage.py   WebhookOutage: the kubelet's status writes never
                           reach the webhook and survive its outage; what the
                           failure policies block while it is down
  test_untrusted_webhook.py  UntrustedWebhook: a caBundle that does not
                           match; the apiserver's x509 error, and the
                           webhook's count and log line that say it
  test_downtime.py         UpgradeDowntime: a 2 GiB image's upgrade with and
                           without pre-pull (the mechanism; the numbers are
                           bench/upgrade_downtime.py's); AutoPrePullDowntime: after
                           an automatic and an asked-for pre-pull, no download either
  test_kubectl_ota.py      KubectlOta: the node users' plugin, every command
                           and error, through the registered webhook
  test_observe.py          Observability: log lines per decision (json), the
                           DaemonSet's Event, histograms, probes, SIGTERM story
  test_busy_leader.py      BusyLeader: a leader busy with a rollout keeps
                           its lease (bench/rollout.py at 150 pods)
  test_write_retries.py    WriteRetries: a write cut after sending is not
                           resent by the client
  test_correctness.py      Correctness: a stale cache never overwrites a newer
                           request, a repeated request keeps its Job, a
                           pull that cannot succeed fails fast
  test_paging.py           Paging: relists over 1 234 pods in pages of 500,
                           a 410 on a continue starts the list over
  test_unserved.py         Unserved: a request on an orphaned pod (or one whose
                           DaemonSet is no longer OTA) is answered with why,
                           a stale PodNeedUpgrade removed; a bad timeout
                           annotation is said; ConfigTrouble: a refused
                           token or an unknown CA said once, with a hint;
                           startup errors in JSON
  test_imagepulljob.py     ImagePullJobOwnCrd: our CRD component applied with
                           kubectl, docs/examples defaulted, Kruise's
                           messages and columns; ImagePullJobUpstreamCrds:
                           Kruise's CRDs unchanged (skipped without
                           ../shared/upstream)
  test_imagecache_run.py   ImageCacheRun: ImageCaches run by the controller
                           (issue 21): kube-fledged's sample, a missing
                           image, no node matched, refresh, update,
                           restart, edits during a refresh;
                           ImageCacheRunUpstreamCrd: the status by PUT
                           under kube-fledged's CRD, concurrent edits
                           kept, caches kube-fledged served adopted;
                           ImageCacheRunRequeue: the periodic refresh on
                           time under a long resync
  test_imagepulljob_run.py ImagePullJobRun: ImagePullJobs run by the
                           controller (issue 20): Kruise's sample, a missing
                           image, parallelism, NotReady, Never, TTL, restart,
                           kubectl get/describe, edits, Kruise's finalizer;
                           ImagePullJobRunExamples: docs/examples run to
                           their end state;
                           ImagePullJobRunKruise19/18: on Kruise's CRDs;
                           ImagePullJobRunLeaders: two replicas
  test_imagecache.py       ImageCacheOwnCrd: our CRD component applied with
                           kubectl, docs/examples accepted, kube-fledged's
                           messages as kubectl prints them, our columns;
                           ImageCacheUpstreamCrd: kube-fledged's CRD
                           unchanged; both: its sample CR accepted, the
                           seed's refused by the schema (skipped without
                           ../shared/upstream)
  test_image_volume.py     ImageVolumePull: an artifact image volume added
                           by a revision pre-pulled on request and
                           automatically; a node
                           without image volumes (helper, artifact failed),
                           one answering CreateContainerError (remembered);
                           ImageVolumeGateOff: the gate off (422), helper
and what they run on in
  harness.py               kubesim, the controllers, the Job tracker, the
                           test classes' base (cluster set-up, helpers)
  proxy.py                 the logging, fault-injecting TLS proxy between
                           each controller and kubesim
  webhook_flow.py          the base of the classes with the webhook, the
                           pod states, kubectl helpers

Run: python3 tests/e2e/run_all.py [-v] [Class[.test] ...]
  -v               progress and timings on stderr
  OTA_CONTROLLER   the binary (default build/ota-controller)
  OTA_WEBHOOK      the webhook binary, for the classes that register it
                   (default build/ota-webhook)
  KUBECTL_OTA      the plugin, for KubectlOta (default build/kubectl-ota)
  OTA_E2E_KEEP=1   keep the state dirs (kubesim and controller logs), which are
                   otherwise removed after a run where everything passed
The last line is "N passed, N failed"; the exit status is non-zero on failure.
"""
import os
import shutil
import sys
import unittest

import harness
from harness import CONTROLLER, SCALE, STATE_DIRS, WEBHOOK
# the test classes, which main() finds by name (also Class[.test] arguments)
from test_faults import Faults
from test_leader_election import LeaderElection, LeaseTrouble
from test_prepull_flow import ControllerBehaviour
from test_queueing import Concurrency, PerNode
from test_auto_prepull import AutoPrePull, AutoPrePullNotReady, AutoPrePullQueue, AutoPrePullWindow
from test_auto_prepull_rolling import AutoPrePullRolling
from test_transitions import Transitions
from test_downtime import AutoPrePullDowntime, UpgradeDowntime
from test_webhook_outage import WebhookOutage
from test_untrusted_webhook import UntrustedWebhook
from test_yurthub import YurtHubCompat
from test_yurtmanager import YurtManagerCoexistence, YurtManagerUnlisted
from test_kubectl_ota import KUBECTL_OTA, KubectlOta
from test_busy_leader import BusyLeader
from test_write_retries import WriteRetries
from test_correctness import Correctness
from test_observe import Observability
from test_paging import Paging
from test_unserved import ConfigTrouble, Unserved
from test_imagepulljob import ImagePullJobOwnCrd, ImagePullJobUpstreamCrds
from test_imagepulljob_run import (ImagePullJobRun, ImagePullJobRunExamples, ImagePullJobRunKruise18,
                                   ImagePullJobRunKruise19, ImagePullJobRunLeaders)
from test_imagecache import ImageCacheOwnCrd, ImageCacheUpstreamCrd
from test_imagecache_run import ImageCacheRun, ImageCacheRunPurge, ImageCacheRunRequeue, ImageCacheRunUpstreamCrd
from test_image_volume import ImageVolumeGateOff, ImageVolumePull


def main(argv):
    args = [a for a in argv if a != "-v"]
    harness.VERBOSE = len(args) != len(argv)
    for binary, what in ((CONTROLLER, "controller"), (WEBHOOK, "webhook"), (KUBECTL_OTA, "kubectl-ota")):
        if not os.access(binary, os.X_OK):
            print("no %s binary at %s (make all)" % (what, binary))
            print("0 passed, 1 failed")
            return 1
    names = args or ["ControllerBehaviour", "Concurrency", "PerNode", "Faults", "LeaderElection", "LeaseTrouble",
                     "Transitions", "YurtHubCompat", "YurtManagerCoexistence", "YurtManagerUnlisted",
                     "WebhookOutage", "UntrustedWebhook", "UpgradeDowntime", "KubectlOta", "BusyLeader",
                     "WriteRetries", "Correctness", "Observability", "Paging", "Unserved", "ConfigTrouble",
                     "ImagePullJobOwnCrd", "ImagePullJobUpstreamCrds", "ImagePullJobRun", "ImagePullJobRunExamples",
                     "ImagePullJobRunKruise19", "ImagePullJobRunKruise18", "ImagePullJobRunLeaders",
                     "ImageCacheOwnCrd", "ImageCacheUpstreamCrd", "ImageCacheRun", "ImageCacheRunPurge",
                     "ImageCacheRunUpstreamCrd", "ImageCacheRunRequeue", "ImageVolumePull", "ImageVolumeGateOff", "AutoPrePull", "AutoPrePullQueue",
                     "AutoPrePullWindow", "AutoPrePullNotReady", "AutoPrePullDowntime", "AutoPrePullRolling"]
    suite = unittest.TestLoader().loadTestsFromNames(names, sys.modules[__name__])
    sys.stderr.write("controller: %s, webhook: %s, time scale %g\n" % (CONTROLLER, WEBHOOK, SCALE))
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    # a class's setUp/tearDown failure (sanitizer reports among them) counts too
    bad = result.failures + result.errors
    failed_tests = {t.id() for t, _ in bad if isinstance(t, unittest.TestCase)}
    passed = result.testsRun - len(failed_tests)
    failed = len(failed_tests) + len([t for t, _ in bad if not isinstance(t, unittest.TestCase)])
    if failed == 0 and not os.environ.get("OTA_E2E_KEEP"):
        for d in STATE_DIRS:
            shutil.rmtree(d, ignore_errors=True)
    else:
        print("logs (kubesim, controllers): %s" % " ".join(STATE_DIRS))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 and result.testsRun > 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
