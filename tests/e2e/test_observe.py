"""What an operator sees (class Observability): one log line per decision
with the objects named as keys, in --log-format json; one Event on the
DaemonSet per new revision; the pre-pull histograms, build info and process
metrics; /livez and a Status for an unknown path; and on SIGTERM one clean
shutdown story (a released lease, no warnings).
"""
import json
import time

from harness import AGENT, Base, http_probe, wait_until


def json_lines(path):
    """Every line of a log as a dict; fails on a line that is not JSON."""
    out = []
    with open(path, errors="replace") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            try:
                v = json.loads(line)
            except ValueError:
                raise AssertionError("line %d of %s is not JSON: %r" % (n, path, line))
            if not isinstance(v, dict) or not {"ts", "level", "msg"} <= set(v):
                raise AssertionError("line %d of %s lacks ts, level or msg: %r" % (n, path, line))
            out.append(v)
    return out


class JsonLogged:
    """For a class (before Base) whose controller logs JSON at info: its
    lines, by msg, and waiting for one with given keys."""
    CONTROLLER_ARGS = ("--log-format", "json", "--log-level", "info")

    def lines(self, msg=None):
        return [l for l in json_lines(self.ctl.err_path) if msg is None or l["msg"] == msg]

    def wait_line(self, msg, **keys):
        def found():
            return [l for l in self.lines(msg) if all(l.get(k) == v for k, v in keys.items())]
        return wait_until(found, 20, "log line %r %s" % (msg, keys))[0]


class Observability(JsonLogged, Base):
    NODES = 2

    def test_decisions_logged_with_keys_events_and_metrics(self):
        pods, h = self.upgraded_ds()
        line = self.wait_line("new revision marked", daemonset="%s/agent" % self.ns, revision=h)
        self.assertEqual(line["level"], "info")
        self.assertEqual(line["pods"], 2)
        # one Event on the DaemonSet, not one per pod
        def ds_events():
            evs = [e for e in self.sim.get("/api/v1/namespaces/%s/events" % self.ns)["items"]
                   if e["involvedObject"].get("kind") == "DaemonSet" and e["reason"] == "NewRevision"]
            return evs or None
        evs = wait_until(ds_events, 20, "the DaemonSet's NewRevision Event")
        time.sleep(1)
        evs = ds_events()
        self.assertEqual(len(evs), 1, evs)
        self.assertEqual(evs[0]["message"], "marked 2 pods PendingUpgrade for revision %s" % h)
        self.assertEqual(evs[0]["involvedObject"]["name"], "agent")
        self.assertEqual(evs[0]["involvedObject"]["apiVersion"], "apps/v1")

        pod = pods[0]
        ref = "%s/%s" % (self.ns, pod["metadata"]["name"])
        self.request_pull(pod, h)
        self.wait_image_ready(pod, "PullImageSuccess", timeout=60)
        created = self.wait_line("pre-pull job created", pod=ref)
        self.assertEqual(created["node"], pod["spec"]["nodeName"])
        job = created["job"]
        self.assertTrue(job.startswith(self.ns + "/ota-prepull-"), job)
        done = self.wait_line("pre-pull finished", pod=ref)
        self.assertEqual(done["outcome"], "succeeded")
        self.assertEqual(done["reason"], "pulled by job")
        self.assertEqual(done["node"], pod["spec"]["nodeName"])
        # nothing at info but the decisions of this flow (and the start)
        for l in self.lines():
            self.assertNotIn(l["level"], ("warn", "error"), l)

        m = self.ctl.metrics()
        self.assertEqual(m['ota_controller_prepull_duration_seconds_count{outcome="succeeded"}'], 1)
        self.assertEqual(m['ota_controller_prepull_duration_seconds_count{outcome="failed"}'], 0)
        self.assertGreater(m['ota_controller_prepull_duration_seconds_bucket{outcome="succeeded",le="+Inf"}'], 0)
        self.assertEqual(m["ota_controller_prepull_queue_wait_seconds_count"], 1)
        info = [k for k in m if k.startswith("ota_prepull_build_info{")]
        self.assertEqual(len(info), 1, info)
        self.assertIn('version="', info[0])
        self.assertIn('commit="', info[0])
        for name in ("process_resident_memory_bytes", "process_cpu_seconds_total",
                     "process_open_fds", "process_start_time_seconds"):
            self.assertGreater(m[name], 0, name)
        # the calls gauge: an idle controller keeps its watches in flight;
        # nothing waits for a token but, for a moment, a Lease renewal
        self.assertLessEqual(m['ota_controller_api_calls{state="waiting"}'], 1)
        self.assertEqual(m['ota_controller_api_calls{state="retrying"}'], 0)
        self.assertGreaterEqual(m['ota_controller_api_calls{state="in_flight"}'], 1)

    def test_probes(self):
        self.assertEqual(http_probe("/livez", self.ctl.health), (200, "ok\n"))
        for port in (self.ctl.health, self.ctl.metrics_port):
            status, text = http_probe("/nope", port)
            self.assertEqual(status, 404)
            st = json.loads(text)
            self.assertEqual((st["kind"], st["apiVersion"], st["status"], st["reason"], st["code"]),
                             ("Status", "v1", "Failure", "NotFound", 404))
            self.assertIn("no such path", st["message"])

    def test_sigterm_tells_one_clean_story(self):
        self.ctl.wait_ready()
        wait_until(self.ctl.leading, 30, "leading")
        path = self.ctl.err_path
        try:
            self.assertEqual(self.ctl.stop(), 0)
            lines = json_lines(path)
            msgs = [l["msg"] for l in lines]
            start = msgs.index("shutting down")
            story = lines[start:]
            self.assertEqual([l for l in story if l["level"] != "info"], [], story)
            self.assertIn("released lease", [l["msg"] for l in story])
            self.assertNotIn("lost leadership", msgs)
            self.assertEqual(story[-1]["msg"], "stopped")
        finally:
            self.ctl.start()
            self.ctl.wait_ready()
            wait_until(self.ctl.leading, 30, "leading again")
