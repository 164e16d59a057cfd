"""What an operator of ota-webhook sees (class TestLogsVersionAndProcess):
--log-format json (every line one object with ts, level, msg and the
decision's keys), --version (the build the metrics name too),
ota_prepull_build_info and the process_* families, /livez, and a Status
for an unknown path on the health port.

Part of the integration suite: run_all.py runs it with the others (one
file: run_all.py -k 'TestLogsVersionAndProcess').
"""

import json
import re
import subprocess
import time

from harness import (BINARY, Conn, ServerTestCase, compact, http_get, load_fixture,
                     parse_metrics)


class TestLogsVersionAndProcess(ServerTestCase):
    SERVER_ARGS = ("--threads", "2", "--log-format", "json")

    def samples(self):
        st, _, body = http_get(type(self).server.metrics, "/metrics")
        self.assertEqual(st, 200)
        return body.decode(), parse_metrics(body.decode())

    def json_lines(self):
        out = []
        for ln in type(self).server.log_text().splitlines():
            try:
                v = json.loads(ln)
            except ValueError:
                self.fail("not a JSON log line: %r" % ln)
            self.assertIsInstance(v, dict)
            self.assertTrue({"ts", "level", "msg"} <= set(v), v)
            self.assertRegex(v["ts"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
            out.append(v)
        return out

    def test_json_lines_with_keys(self):
        review, _ = load_fixture("ds-create-ota-rollingupdate")
        c = Conn(type(self).server.port)
        try:
            st, _, _ = c.call("POST", "/mutate", compact(review))
            self.assertEqual(st, 200)
            # hostile text in a value: quotes, control characters, bad UTF-8
            st, _, _ = c.call("POST", "/mutate", b'{"kind":"AdmissionReview\\"\\n\x01\xff')
            self.assertEqual(st, 400)
        finally:
            c.close()
        time.sleep(0.2)
        lines = self.json_lines()
        serving = [l for l in lines if l["msg"] == "serving"]
        self.assertEqual(len(serving), 1, lines)
        self.assertIn("version", serving[0])
        self.assertIn("commit", serving[0])
        uid = review["request"]["uid"]
        decided = [l for l in lines if l.get("uid") == uid]
        self.assertEqual(len(decided), 1, lines)
        self.assertEqual(decided[0]["level"], "info")
        self.assertEqual(decided[0]["webhook"], "mutate")
        bad = [l for l in lines if l["msg"] == "bad request"]
        self.assertEqual(len(bad), 1, lines)
        self.assertEqual(bad[0]["level"], "warn")

    def test_version_matches_build_info(self):
        p = subprocess.run([BINARY, "--version"], capture_output=True, timeout=10)
        self.assertEqual(p.returncode, 0, p.stderr)
        m = re.fullmatch(r"ota-webhook (\S+) \(commit (\S+)\)\n", p.stdout.decode())
        self.assertIsNotNone(m, p.stdout)
        self.assertIn("--version", subprocess.run([BINARY, "--help"], capture_output=True,
                                                  timeout=10).stdout.decode())
        _, samples = self.samples()
        info = [(labels, v) for n, labels, v in samples if n == "ota_prepull_build_info"]
        self.assertEqual(info, [({"version": m.group(1), "commit": m.group(2)}, 1.0)])

    def test_process_metrics(self):
        text, samples = self.samples()
        values = {n: v for n, _, v in samples}
        for fam, typ in (("process_cpu_seconds_total", "counter"),
                         ("process_resident_memory_bytes", "gauge"),
                         ("process_open_fds", "gauge"),
                         ("process_start_time_seconds", "gauge")):
            self.assertRegex(text, r"(?m)^# TYPE %s %s$" % (fam, typ))
        self.assertGreater(values["process_resident_memory_bytes"], 1 << 20)
        start = values["process_start_time_seconds"]
        self.assertLess(abs(start - time.time()), 3600)
        # open connections are open descriptors
        before = values["process_open_fds"]
        conns = [Conn(type(self).server.port) for _ in range(4)]
        try:
            for c in conns:
                c.connect()
            deadline = time.monotonic() + 10
            while True:
                _, s = self.samples()
                now = {n: v for n, _, v in s}["process_open_fds"]
                if now >= before + 4 or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            self.assertGreaterEqual(now, before + 4)
        finally:
            for c in conns:
                c.close()

    def test_livez_and_status_404(self):
        st, _, body = http_get(type(self).server.health, "/livez")
        self.assertEqual((st, body), (200, b"ok\n"))
        st, hdrs, body = http_get(type(self).server.health, "/nope")
        self.assertEqual(st, 404)
        status = json.loads(body)
        self.assertEqual((status["kind"], status["reason"], status["code"]),
                         ("Status", "NotFound", 404))
        self.assertIn("/livez", status["message"])
