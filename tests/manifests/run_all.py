#!/usr/bin/env python3
"""Tests of manifests/, certs/ and images/ (make manifests-test).

  test_render.py   the rendered objects: Pod Security, probes, flags, the
                   webhook configurations, certs/render-manifests.sh, the
                   overlays, the Dockerfiles
  test_apply.py    kubectl apply -k against kubesim, and read back
  test_rbac.py     the controller through a pre-pull flow against kubesim:
                   every call it made is granted by the rendered RBAC, and
                   every verb granted was used
  manifests.py     what they share (rendering as JSON, the RBAC evaluator)

Run: python3 tests/manifests/run_all.py [Class[.test] ...]
  OTA_CONTROLLER, OTA_WEBHOOK   the binaries (default build/ota-controller,
                                build/ota-webhook)
The last line is "N passed, N failed"; the exit status is non-zero on failure.
"""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.join(os.path.dirname(HERE), "e2e"))  # the e2e harness, for test_rbac
sys.path.insert(2, os.path.join(os.path.dirname(HERE), "lib"))  # kubesim_launch, for test_apply

import harness  # noqa: E402
from manifests import CONTROLLER_BIN, WEBHOOK_BIN  # noqa: E402
from test_apply import Apply  # noqa: E402,F401
from test_rbac import RbacEvaluator, ControllerRbac, ControllerRbacImageCache, ControllerRbacImagePullJob  # noqa: E402,F401,E501
from test_render import Base, CertsRender, ImageCache, ImagePullJob, Images, Overlays, Render  # noqa: E402,F401


def main(argv):
    for b in (CONTROLLER_BIN, WEBHOOK_BIN):
        if not os.access(b, os.X_OK):
            print("no binary at %s (make all)" % b)
            print("0 passed, 1 failed")
            return 1
    names = argv or ["Render", "Base", "CertsRender", "Overlays", "ImagePullJob", "ImageCache", "Images", "Apply",
                     "RbacEvaluator", "ControllerRbac", "ControllerRbacImagePullJob",
                     "ControllerRbacImageCache"]
    suite = unittest.TestLoader().loadTestsFromNames(names, sys.modules[__name__])
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    bad = result.failures + result.errors
    failed_tests = {t.id() for t, _ in bad if isinstance(t, unittest.TestCase)}
    passed = result.testsRun - len(failed_tests)
    failed = len(failed_tests) + len([t for t, _ in bad if not isinstance(t, unittest.TestCase)])
    if failed == 0:
        import shutil
        for d in harness.STATE_DIRS:
            shutil.rmtree(d, ignore_errors=True)
    elif harness.STATE_DIRS:
        print("logs (kubesim, controller): %s" % " ".join(harness.STATE_DIRS))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 and result.testsRun > 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
