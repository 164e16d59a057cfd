#!/usr/bin/env python3
"""Integration tests of ota-webhook: the real server, on loopback, over TLS.

The entry point of the suite (`make integration` runs it): it runs every
test_*.py file of this directory in one process. Each starts
build/ota-webhook (or $OTA_WEBHOOK, e.g. the ASan build) with certificates
from certs/gen-certs.sh, and drives it the way the kube-apiserver does
(HTTP/1.1 keep-alive, POST application/json, `/mutate?timeout=10s`, SNI
ota-webhook.ota-system.svc), with curl and with Python's http.client/ssl.
Python 3 standard library only.

What is checked, against docs/design.md §3/§4 and
docs/DECISIONS.md, file by file:
  test_fixtures.py            the AdmissionReview fixtures of tests/fixtures:
                              the patch the mutating webhook returns, applied
                              with kubesim's RFC 6902 applier, gives
                              <name>.expected.json; the validating webhook's
                              verdict on the mutated object (the apiserver
                              runs validating webhooks after mutating ones);
                              over HTTP/1.1 keep-alive; HTTP/2 never
                              negotiated;
  test_transitions.py         DESIGN §3 condition transitions per requester,
                              the DaemonSet annotation values,
                              --controller-username;
  test_bad_input.py           malformed input of every kind answers
                              400/404/405 with a meta/v1 Status body and a
                              content-length, keeps the connection, and the
                              server keeps serving; a client stalled
                              mid-request is cut after
                              --request-read-timeout-seconds;
  test_strict_input.py        RFC 8259 strictness, lone surrogates, values
                              quoted whole in messages, restore warnings;
  test_imagepulljob.py        OpenKruise ImagePullJob on /mutate-imagepulljob
                              and /validate-imagepulljob: Kruise's defaults
                              and messages for both versions, wrong types,
                              a huge list, a spec over 1.5 MiB, metrics;
  test_imagecache.py          kube-fledged ImageCache on /validate-imagecache:
                              its messages on CREATE and UPDATE, an update
                              of metadata or status not looked at, edits
                              while Processing allowed, wrong types, a huge
                              list, a spec over 1.5 MiB, metrics;
  test_body_limit.py          --max-request-bytes (413);
  test_budgets.py             no one client holds the connection slots or
                              the buffer budget: silent and unfinished
                              handshakes give way and are cut
                              (--handshake-timeout-seconds), uploads under
                              the minimum rate get 408, a full budget cuts
                              the oldest upload and a review gets through;
  test_cert_rotation.py       certificate rotation under traffic;
  test_handshake_failures.py  failed TLS handshakes counted by reason and
                              said once a minute per reason (a client that
                              does not trust the certificate, plain HTTP,
                              ...), not for handshakes the server cut; the
                              certificate's expiry gauge across a rotation;
  test_shutdown.py            SIGTERM drain;
  test_health_metrics.py      /healthz, /readyz, /metrics;
  test_command_line_and_tls.py  bad command lines, both daemons' command
                              lines and --help pinned byte for byte, TLS
                              versions and suites, --client-ca-file;
  test_harness_checks.py      no server: the JSON Patch applier, diff_objects
                              and the fixture files the others rely on.
harness.py holds what they share (Server, Conn, curl_batch, ServerTestCase,
...); a new test_*.py file here is picked up without registering it.

Every server is stopped with SIGTERM at the end and must exit 0 with no
sanitizer report on its stderr (the same suite runs against the ASan+UBSan
build).

Usage: tests/integration/run_all.py [-k PATTERN] [-v] [--keep]
  -k matches test ids, FILE.CLASS.TEST (FILE without .py): -k fixture_pod,
  -k 'test_cert_rotation.*' (one file), -k '*TestFixturesHTTP1*'.
Prints "N passed, N failed" as its last line; exits 1 on any failure.
"""

import argparse
import glob
import importlib
import os
import shutil
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import harness  # noqa: E402


def load_suite(loader):
    """Every TestCase class defined in a test_*.py file of this directory,
    in class-name order (the order the suite had when it was one file)."""
    classes = []
    for path in sorted(glob.glob(os.path.join(HERE, "test_*.py"))):
        name = os.path.splitext(os.path.basename(path))[0]
        module = importlib.import_module(name)
        classes += [obj for obj in vars(module).values()
                    if isinstance(obj, type)
                    and issubclass(obj, unittest.TestCase)
                    and obj.__module__ == name]
    classes.sort(key=lambda cls: cls.__name__)
    return unittest.TestSuite(loader.loadTestsFromTestCase(cls)
                              for cls in classes)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-k", action="append", default=[],
                    help="only tests whose name contains PATTERN "
                    "(or matches it as a glob)")
    ap.add_argument("-v", action="store_true", help="list each test")
    ap.add_argument("--keep", action="store_true",
                    help="keep the temporary directory (logs, certs)")
    opts = ap.parse_args()

    harness.WORK = tempfile.mkdtemp(prefix="ota-webhook-it.")
    try:
        harness.CERTS = harness.gen_certs(os.path.join(harness.WORK, "certs"))
        loader = unittest.TestLoader()
        if opts.k:
            loader.testNamePatterns = [p if any(ch in p for ch in "*?[")
                                       else "*%s*" % p for p in opts.k]
        suite = load_suite(loader)
        t0 = time.monotonic()
        runner = unittest.TextTestRunner(stream=sys.stderr,
                                         verbosity=2 if opts.v else 1)
        result = runner.run(suite)
        # A test with failing subtests counts once; errors outside any test
        # (a class's server that did not exit cleanly) count as failures.
        failed_ids, outside = set(), 0
        for t, _ in result.failures + result.errors:
            if isinstance(t, unittest.TestCase):
                failed_ids.add(getattr(t, "test_case", t).id())
            else:
                outside += 1
        failed = len(failed_ids) + outside + \
            len(result.unexpectedSuccesses)
        passed = result.testsRun - len(failed_ids) - len(result.skipped)
        print("took %.1f s; binary %s"
              % (time.monotonic() - t0, harness.BINARY), file=sys.stderr)
        sys.stderr.flush()
        print("%d passed, %d failed" % (passed, failed), flush=True)
        return 1 if failed or result.testsRun == 0 else 0
    finally:
        if opts.keep:
            print("kept %s" % harness.WORK, file=sys.stderr)
        else:
            shutil.rmtree(harness.WORK, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
