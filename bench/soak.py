#!/usr/bin/env python3
"""Soak of ota-webhook (issue 9): certificate rotations every few seconds
(the kubelet's Secret-volume symlink swap), under keep-alive clients,
new-connection clients, connections shaken hands after a rotation, slow
clients (a request dribbled over a second or two) and 1 % malformed
requests, for a fixed time. Counts every request; samples the server's RSS.

    python3 bench/soak.py [--binary build/ota-webhook] [--seconds 600]
                          [--rotate-every 3]

Prints the figures (requests by kind, failures, rotations, RSS first /
median / last / max, sanitizer lines) and exits 1 when a valid request
failed, a malformed one was not answered 400, the server died or did not
exit 0 on SIGTERM, or a sanitizer line appeared. Loopback only; Python 3
standard library only; reuses tests/integration/harness.py.
"""

import argparse
import json
import os
import random
import shutil
import signal
import socket
import statistics
import sys
import tempfile
import threading
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import harness  # noqa: E402


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for ln in f:
            if ln.startswith("VmRSS:"):
                return int(ln.split()[1])
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", default="build/ota-webhook")
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--rotate-every", type=float, default=3.0)
    opts = ap.parse_args()
    harness.BINARY = os.path.abspath(opts.binary)
    harness.WORK = tempfile.mkdtemp(prefix="ota-soak.")
    try:
        return soak(opts)
    finally:
        shutil.rmtree(harness.WORK, ignore_errors=True)


def soak(opts):
    pairs = [harness.gen_certs(os.path.join(harness.WORK, "p%d" % i))
             for i in range(3)]
    harness.CERTS = pairs[0]
    ctx = harness.client_context([p["ca.crt"] for p in pairs])
    vol = os.path.join(harness.WORK, "vol")
    os.mkdir(vol)
    state = {"n": 0, "cur": None}

    def publish(i):
        d = "..v%06d" % state["n"]
        state["n"] += 1
        os.mkdir(os.path.join(vol, d))
        for f in ("tls.crt", "tls.key"):
            shutil.copyfile(pairs[i][f], os.path.join(vol, d, f))
        tmp = os.path.join(vol, "..data_tmp")
        os.symlink(d, tmp)
        os.rename(tmp, os.path.join(vol, "..data"))
        if state["cur"]:
            shutil.rmtree(os.path.join(vol, state["cur"]))
        state["cur"] = d

    publish(0)
    for f in ("tls.crt", "tls.key"):
        os.symlink(os.path.join("..data", f), os.path.join(vol, f))
    srv = harness.Server("soak", ["--threads", "2",
                                  "--cert-poll-interval-ms", "200"],
                         cert=os.path.join(vol, "tls.crt"),
                         key=os.path.join(vol, "tls.key"))
    srv.start()
    pid = srv.proc.pid
    review, _ = harness.load_fixture("ds-create-ota-rollingupdate")
    body = harness.compact(review)
    lock = threading.Lock()
    counts = {"keepalive": 0, "new": 0, "late": 0, "slow": 0,
              "malformed": 0}
    failures = []
    stop = threading.Event()

    def ok(kind):
        with lock:
            counts[kind] += 1

    def fail(kind, what):
        with lock:
            failures.append((kind, what))

    def request_bytes(b, close=False):
        return (b"POST /mutate?timeout=10s HTTP/1.1\r\nHost: " +
                harness.SNI.encode() + b"\r\nContent-Type: application/json"
                b"\r\nContent-Length: %d\r\n%s\r\n"
                % (len(b), b"Connection: close\r\n" if close else b"") + b)

    def status_of(raw):
        parts = raw.split(b"\r\n", 1)[0].split(b" ")
        return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() \
            else None

    def keepalive(seed):
        rnd = random.Random(seed)
        c = harness.Conn(srv.port, context=ctx, timeout=15)
        while not stop.is_set():
            bad = rnd.random() < 0.01
            try:
                b = body[:len(body) // 2] if bad else body
                st, _, _ = c.call("POST", "/validate", b)
                if bad:
                    ok("malformed") if st == 400 else \
                        fail("malformed", st)
                else:
                    ok("keepalive") if st == 200 else fail("keepalive", st)
            except Exception as e:  # noqa: BLE001
                fail("keepalive", repr(e))
                c.close()
                c = harness.Conn(srv.port, context=ctx, timeout=15)
        c.close()

    def new_conns():
        while not stop.is_set():
            c = harness.Conn(srv.port, context=ctx, timeout=15)
            try:
                st, _, _ = c.call("POST", "/mutate", body)
                ok("new") if st == 200 else fail("new", st)
            except Exception as e:  # noqa: BLE001
                fail("new", repr(e))
            finally:
                c.close()

    def late():
        while not stop.is_set():
            try:
                s = socket.create_connection(("127.0.0.1", srv.port), 15)
            except OSError as e:
                fail("late", repr(e))
                continue
            try:
                time.sleep(random.uniform(0.1, opts.rotate_every * 1.5))
                t = ctx.wrap_socket(s, server_hostname=harness.SNI)
                s = t
                t.sendall(request_bytes(body, close=True))
                raw, _, _ = harness.read_until_closed(t, 15)
                ok("late") if status_of(raw) == 200 else \
                    fail("late", raw[:80])
            except Exception as e:  # noqa: BLE001
                fail("late", repr(e))
            finally:
                s.close()

    def slow():
        while not stop.is_set():
            try:
                t = harness.tls_socket(srv.port, context=ctx, timeout=15)
            except Exception as e:  # noqa: BLE001
                fail("slow", repr(e))
                continue
            try:
                data = request_bytes(body, close=True)
                step = max(1, len(data) // 10)
                for i in range(0, len(data), step):
                    t.sendall(data[i:i + step])
                    time.sleep(0.15)
                raw, _, _ = harness.read_until_closed(t, 15)
                ok("slow") if status_of(raw) == 200 else \
                    fail("slow", raw[:80])
            except Exception as e:  # noqa: BLE001
                fail("slow", repr(e))
            finally:
                t.close()

    workers = [threading.Thread(target=keepalive, args=(i,)) for i in range(2)]
    workers += [threading.Thread(target=new_conns),
                threading.Thread(target=late), threading.Thread(target=late),
                threading.Thread(target=slow)]
    for w in workers:
        w.start()
    t0 = time.monotonic()
    rss = []
    rotations = 0
    next_rot = t0 + opts.rotate_every
    next_rss = t0
    died = False
    while time.monotonic() - t0 < opts.seconds:
        now = time.monotonic()
        if not srv.alive():
            died = True
            break
        if now >= next_rot:
            rotations += 1
            publish(rotations % len(pairs))
            next_rot += opts.rotate_every
        if now >= next_rss:
            rss.append((round(now - t0), rss_kib(pid)))
            next_rss += 10
        time.sleep(0.05)
    stop.set()
    for w in workers:
        w.join(60)
    st, _, m = harness.http_get(srv.metrics, "/metrics") if not died \
        else (0, {}, b"")
    reloads = harness.metric_sum(harness.parse_metrics(m.decode()),
                                 "ota_webhook_cert_reloads_total",
                                 result="success") if st == 200 else 0
    problems = srv.stop()
    sanitizer = harness.sanitizer_lines(srv.log_text())
    values = [v for _, v in rss]
    report = {
        "binary": harness.BINARY,
        "seconds": round(time.monotonic() - t0),
        "rotations": rotations,
        "reloads": reloads,
        "requests": counts,
        "failed_valid": len([f for f in failures if f[0] != "malformed"]),
        "malformed_not_400": len([f for f in failures
                                  if f[0] == "malformed"]),
        "first_failures": failures[:5],
        "rss_kib": {"first": values[0] if values else 0,
                    "median": int(statistics.median(values)) if values
                    else 0,
                    "last": values[-1] if values else 0,
                    "max": max(values) if values else 0},
        "rss_samples": rss,
        "sanitizer_lines": len(sanitizer),
        "server_problems": problems,
    }
    print(json.dumps(report, indent=1, default=str))
    bad = died or failures or sanitizer or problems
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
