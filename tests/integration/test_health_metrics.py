"""The plain-HTTP ports: /healthz and /readyz on the health port, and the
Prometheus families on /metrics (requests, durations, denials, mutations,
certificate reloads and expiry, cuts and failed handshakes by reason),
whose counters must move exactly with the traffic, also under
concurrency.

Part of the integration suite: run_all.py runs it with the others (`make
integration`; one file: run_all.py -k 'test_health_metrics.*').
"""

import json
import re
import threading
import time

from harness import (Conn, ServerTestCase, compact, http_get, load_fixture,
                     metric_sum, parse_metrics)


class TestHealthAndMetrics(ServerTestCase):
    SERVER_ARGS = ("--threads", "2")

    def metrics(self):
        st, hdrs, body = http_get(type(self).server.metrics, "/metrics")
        self.assertEqual(st, 200)
        self.assertTrue(hdrs.get("content-type", "").startswith("text/plain"),
                        hdrs.get("content-type"))
        text = body.decode()
        return text, parse_metrics(text)

    def test_healthz_readyz(self):
        for path in ("/healthz", "/readyz"):
            with self.subTest(path=path):
                st, hdrs, body = http_get(type(self).server.health, path)
                self.assertEqual(st, 200)
                self.assertEqual(body.strip(), b"ok")
                self.assertIn("content-length", hdrs)

    def test_metrics_families(self):
        text, samples = self.metrics()
        for fam, typ in (("ota_webhook_requests_total", "counter"),
                         ("ota_webhook_request_duration_seconds", "histogram"),
                         ("ota_webhook_denials_total", "counter"),
                         ("ota_webhook_mutations_total", "counter"),
                         ("ota_webhook_cert_reloads_total", "counter")):
            with self.subTest(family=fam):
                self.assertRegex(text, r"(?m)^# TYPE %s %s$" % (fam, typ))
        names = {n for n, _, _ in samples}
        self.assertIn("ota_webhook_cert_reloads_total", names)
        # The limits' cuts: one family, one sample per reason from the
        # start (docs/operations.md "Connection and upload limits").
        self.assertEqual(len(re.findall(
            r"(?m)^# TYPE ota_webhook_connections_cut_total counter$", text)), 1)
        reasons = sorted(labels.get("reason") for n, labels, _ in samples
                         if n == "ota_webhook_connections_cut_total")
        self.assertEqual(reasons, sorted([
            "header_bytes", "write_timeout", "handshake_timeout",
            "handshake_evicted", "upload_too_slow", "buffer_budget"]))
        # Failed handshakes: one family, every reason from the start
        # (docs/DECISIONS.md "Handshake failures, by reason"); the
        # certificate's expiry, one sample.
        self.assertEqual(len(re.findall(
            r"(?m)^# TYPE ota_webhook_tls_handshake_failures_total counter$",
            text)), 1)
        reasons = sorted(labels.get("reason") for n, labels, _ in samples
                         if n == "ota_webhook_tls_handshake_failures_total")
        self.assertEqual(reasons, sorted([
            "certificate_untrusted", "client_certificate", "protocol_version",
            "no_shared_cipher", "plain_http", "not_tls", "client_alert",
            "client_closed", "other"]))
        self.assertRegex(text, r"(?m)^# TYPE ota_webhook_certificate_"
                         r"expiration_timestamp_seconds gauge$")
        expiry = [v for n, _, v in samples if n ==
                  "ota_webhook_certificate_expiration_timestamp_seconds"]
        self.assertEqual(len(expiry), 1)
        self.assertGreater(expiry[0], time.time())

    def test_counters_exact_under_concurrency(self):
        # Per-thread counters, summed when read: nothing lost or doubled.
        _, s0 = self.metrics()
        ds = compact(load_fixture("ds-create-ota-rollingupdate")[0])
        errors = []

        def worker():
            try:
                c = Conn(self.port)
                try:
                    for _ in range(25):
                        st, _, _ = c.call("POST", "/mutate", ds)
                        if st != 200:
                            errors.append(st)
                finally:
                    c.close()
            except Exception as e:  # noqa: BLE001
                errors.append(repr(e))

        threads = [threading.Thread(target=worker) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        self.assertEqual(errors, [])
        _, s1 = self.metrics()
        req = "ota_webhook_requests_total"
        self.assertEqual(metric_sum(s1, req, path=lambda p: "mutate" in p)
                         - metric_sum(s0, req, path=lambda p: "mutate" in p),
                         200)
        mut = "ota_webhook_mutations_total"
        self.assertEqual(metric_sum(s1, mut) - metric_sum(s0, mut), 200)

    def test_counters_move(self):
        _, s0 = self.metrics()
        c = self.conn()
        ds = compact(load_fixture("ds-create-ota-rollingupdate")[0])
        deny = compact(load_fixture("pod-status-node-claims-ready")[0])
        for _ in range(3):
            st, _, _ = c.call("POST", "/mutate?timeout=10s", ds)
            self.assertEqual(st, 200)
        st, _, _ = c.call("POST", "/mutate", b"[]")
        self.assertEqual(st, 400)
        for _ in range(2):
            st, _, b = c.call("POST", "/validate?timeout=10s", deny)
            self.assertEqual(st, 200)
            self.assertFalse(json.loads(b)["response"]["allowed"])
        _, s1 = self.metrics()

        def is_mutate(p):
            return "mutate" in p

        def is_validate(p):
            return "validate" in p

        req = "ota_webhook_requests_total"
        series = [(n, lab) for n, lab, _ in s1 if n == req]
        self.assertTrue(series, "no %s samples" % req)
        for _, lab in series:
            self.assertIn("path", lab)
            self.assertIn("result", lab)
        self.assertEqual(metric_sum(s1, req, path=is_mutate)
                         - metric_sum(s0, req, path=is_mutate), 4)
        self.assertEqual(metric_sum(s1, req, path=is_validate)
                         - metric_sum(s0, req, path=is_validate), 2)
        # The 400 is counted under another result than the 200s.
        moved = {(lab["path"], lab["result"]): v - metric_sum(s0, req, **lab)
                 for n, lab, v in s1 if n == req and is_mutate(lab["path"])}
        moved = {k: v for k, v in moved.items() if v}
        self.assertEqual(sorted(moved.values()), [1, 3], moved)

        dur = "ota_webhook_request_duration_seconds"
        self.assertGreaterEqual(metric_sum(s1, dur + "_count")
                                - metric_sum(s0, dur + "_count"), 5)
        self.assertGreater(metric_sum(s1, dur + "_sum"),
                           metric_sum(s0, dur + "_sum"))
        buckets = [(lab, v) for n, lab, v in s1 if n == dur + "_bucket"]
        self.assertTrue(buckets)
        self.assertTrue(all("le" in lab for lab, _ in buckets))
        inf = [(lab, v) for lab, v in buckets if lab["le"] == "+Inf"]
        self.assertTrue(inf, "no +Inf bucket")
        for lab, v in inf:
            rest = {k: x for k, x in lab.items() if k != "le"}
            self.assertEqual(v, metric_sum(s1, dur + "_count", **rest), lab)

        den = "ota_webhook_denials_total"
        self.assertEqual(metric_sum(s1, den) - metric_sum(s0, den), 2)
        self.assertTrue(all("rule" in lab for n, lab, _ in s1 if n == den))
        mut = "ota_webhook_mutations_total"
        self.assertEqual(metric_sum(s1, mut) - metric_sum(s0, mut), 3)
