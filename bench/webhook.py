#!/usr/bin/env python3
"""bench/webhook.py - ota-webhook against its two ceilings, in one run.

Starts on 127.0.0.1, each pinned to one core (SERVER_CPU):
  transport  bench/webhook_ref.c built with REF_PARSE=0: TLS + HTTP/1.1,
             body read, a fixed AdmissionReview answered
  parse      the same plus one yajl callback parse with empty callbacks
  webhook    ota-webhook --threads 1
and loads them in turns with wrk (HTTP/1.1 keep-alive over TLS, 1 thread,
8 connections, pinned to LOADER_CPU) with each fixture of bench/fixtures/,
ROUNDS rounds of DURATION seconds.  Prints the medians: requests/s, p50,
p99, p99.9, peak RSS (VmHWM) of each server, and ota-webhook's ratios to the
parse ceiling.  Run it as `make bench-webhook` (builds what it needs).

CALLGRIND=1 instead runs every server under valgrind's callgrind and
prints user-space instructions per request (the counters are zeroed after a
warm-up, dumped after DURATION seconds of load, and divided by wrk's
request count): exact and independent of other load on the machine, where
requests/s and latency are not.

Environment: BUILD (build), ROUNDS (3), DURATION (5), CONNECTIONS (8),
SERVER_CPU (0), LOADER_CPU (1), FIXTURES (comma-separated names),
SERVERS (comma-separated, of transport,parse,webhook), BASELINE (the path
of another ota-webhook build, e.g. of the commit before an optimisation:
loaded in the same turns as server "baseline", so before and after share
one run).
Installs wrk (and valgrind for CALLGRIND=1) with apt-get when missing (not
part of make deps).
Everything is bounded in time; only the processes it started are stopped.
"""
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("BUILD", "build")
ROUNDS = int(os.environ.get("ROUNDS", "3"))
DURATION = int(os.environ.get("DURATION", "5"))
CONNECTIONS = int(os.environ.get("CONNECTIONS", "8"))
CALLGRIND = os.environ.get("CALLGRIND") == "1"
SERVER_CPU = os.environ.get("SERVER_CPU", "0")
LOADER_CPU = os.environ.get("LOADER_CPU", "1")

# fixture, path it is posted to (the apiserver sends a pods/status UPDATE to
# both webhooks; the kubelet writes are measured on /validate, the requests
# that get a patch on /mutate)
FIXTURES = [
    ("pod-status-10k", "/validate"),
    ("pod-status-23k", "/validate"),
    ("prepull", "/mutate"),
    ("ds-update", "/mutate"),
]
SERVERS = ["transport", "parse", "webhook"]


def ensure_tools():
    tools = ("wrk", "taskset", "curl") + (("valgrind", "callgrind_control") if CALLGRIND else ())
    missing = [t for t in tools if shutil.which(t) is None]
    if not missing:
        return
    pkgs = {"wrk": "wrk", "taskset": "util-linux", "curl": "curl", "valgrind": "valgrind",
            "callgrind_control": "valgrind"}
    packages = list(dict.fromkeys(pkgs[t] for t in missing))  # valgrind once for two tools
    print("installing:", " ".join(packages), flush=True)
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    subprocess.run(sudo + ["apt-get", "update", "-qq"], check=True, timeout=600)
    subprocess.run(sudo + ["apt-get", "install", "-y", "-qq"] + packages,
                   check=True, timeout=600, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, deadline):
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("server exited with %d" % proc.returncode)
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("port %d never opened" % port)


def start_servers(certs, logdir, names):
    crt, key = os.path.join(certs, "tls.crt"), os.path.join(certs, "tls.key")
    procs, ports = {}, {}
    pin = ["taskset", "-c", SERVER_CPU]
    start_s = 10
    if CALLGRIND:
        start_s = 120
        pin = pin + ["valgrind", "--tool=callgrind", "--callgrind-out-file=" +
                     os.path.join(logdir, "callgrind.%p")]
    for name in names:
        if name in ("webhook", "baseline"):
            binary = os.environ["BASELINE"] if name == "baseline" else os.path.join(BUILD, "ota-webhook")
            port = free_port()
            cmd = pin + [binary, "--threads", "1",
                         "--tls-cert-file", crt, "--tls-private-key-file", key,
                         "--bind-address", "127.0.0.1:%d" % port,
                         "--health-probe-bind-address", "127.0.0.1:%d" % free_port(),
                         "--metrics-bind-address", "127.0.0.1:%d" % free_port()]
            # its log (one line per patched or denied request) goes where a
            # container's stderr would: a pipe someone reads; /dev/null here
            p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=open(os.path.join(logdir, name + ".log"), "wb")
                                 if os.environ.get("BENCH_KEEP_LOG") else subprocess.DEVNULL)
            procs[name] = p
            wait_port(port, p, time.monotonic() + start_s)
        else:
            cmd = pin + [os.path.join(BUILD, "bench", "webhook_ref_" + name), crt, key]
            p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL if CALLGRIND else None)
            procs[name] = p
            line = p.stdout.readline().decode()
            if not line.startswith("port "):
                raise RuntimeError("%s did not start: %r" % (name, line))
            port = int(line.split()[1])
        ports[name] = port
    return procs, ports


def check_answers(ports, certs, fixtures):
    """One request per fixture and server before the load: a 200 and an
    AdmissionReview, so a run never measures error answers."""
    for fx, path in fixtures:
        body = os.path.join(ROOT, "bench", "fixtures", fx + ".json")
        for name, port in ports.items():
            r = subprocess.run(["curl", "-sS", "--cacert", os.path.join(certs, "ca.crt"),
                                "-o", "/dev/null", "-w", "%{http_code}", "-H",
                                "Content-Type: application/json", "--data-binary", "@" + body,
                                "https://localhost:%d%s" % (port, path)],
                               capture_output=True, text=True, timeout=10)
            if r.stdout != "200":
                raise RuntimeError("%s answered %s %s to %s" % (name, r.stdout, r.stderr, fx))


def run_wrk(port, path, body, seconds, procs=None):
    cmd = ["taskset", "-c", LOADER_CPU, "wrk", "-t1", "-c%d" % CONNECTIONS, "-d%ds" % seconds,
           "-s", os.path.join(ROOT, "bench", "webhook.lua"), "https://127.0.0.1:%d%s" % (port, path)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 30,
                       env=dict(os.environ, BENCH_BODY=body))
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            req, dur, non2xx, sockerr, p50, p99, p999 = (int(x) for x in line.split()[1:])
            return {"rps": req * 1e6 / dur, "requests": req, "p50": p50, "p99": p99, "p999": p999,
                    "errors": non2xx + sockerr}
    raise RuntimeError("wrk on port %d printed no result: %s %s" % (port, r.stdout, r.stderr))


def cpu_ns(pid):
    """CPU time of every thread of pid so far (schedstat: ns on a CPU).
    Per request it is the number that holds when other work shares the
    machine: requests/s and latency also count the time a server waits for
    a core."""
    total = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total


def vm_hwm_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def callgrind_total(pid, logdir):
    """Dumps pid's counters and returns the instructions since they were
    last zeroed (the dump's `totals:` line)."""
    subprocess.run(["callgrind_control", "-d", str(pid)], check=True, timeout=120,
                   capture_output=True)
    dumps = [f for f in os.listdir(logdir) if f.startswith("callgrind.%d." % pid)]
    newest = max(dumps, key=lambda f: int(f.rsplit(".", 1)[1]))
    with open(os.path.join(logdir, newest)) as f:
        for line in f:
            if line.startswith("totals:") or line.startswith("summary:"):
                return int(line.split()[1])
    raise RuntimeError("no totals in " + newest)


def measure_instructions(procs, ports, names, fixtures, logdir):
    """CALLGRIND=1: instructions per request of each server and fixture."""
    print("| fixture | server | requests | instructions/request | ÷ parse |")
    print("| --- | --- | ---: | ---: | ---: |")
    for fx, path in fixtures:
        body = os.path.join(ROOT, "bench", "fixtures", fx + ".json")
        per = {}
        for name in names:
            pid = procs[name].pid
            run_wrk(ports[name], path, body, 3)  # warm-up
            subprocess.run(["callgrind_control", "-z", str(pid)], check=True, timeout=120,
                           capture_output=True)
            r = run_wrk(ports[name], path, body, DURATION)
            per[name] = (callgrind_total(pid, logdir) / max(r["requests"], 1), r["requests"])
        for name in names:
            ratio = "%.2f" % (per[name][0] / per["parse"][0]) if "parse" in per else ""
            print("| %s | %s | %d | %.0f | %s |" % (fx, name, per[name][1], per[name][0], ratio),
                  flush=True)


def main():
    ensure_tools()
    names = [s for s in os.environ.get("SERVERS", ",".join(SERVERS)).split(",") if s]
    if os.environ.get("BASELINE"):
        names.insert(names.index("webhook") if "webhook" in names else len(names), "baseline")
    only = os.environ.get("FIXTURES")
    fixtures = [f for f in FIXTURES if not only or f[0] in only.split(",")]
    tmp = tempfile.mkdtemp(prefix="bench-webhook.")
    procs = {}
    try:
        subprocess.run([os.path.join(ROOT, "certs", "gen-certs.sh"), tmp], check=True, timeout=60)
        procs, ports = start_servers(tmp, tmp, names)
        check_answers(ports, tmp, fixtures)
        if CALLGRIND:
            measure_instructions(procs, ports, names, fixtures, tmp)
            return 0
        print("servers on cpu %s, wrk on cpu %s: -t1 -c%d, %d rounds of %d s, fixtures: %s"
              % (SERVER_CPU, LOADER_CPU, CONNECTIONS, ROUNDS, DURATION,
                 ", ".join("%s (%d B, %s)" % (f, os.path.getsize(
                     os.path.join(ROOT, "bench", "fixtures", f + ".json")), p)
                     for f, p in fixtures)), flush=True)
        results = {}
        for fx, path in fixtures:  # warm-up: TLS sessions, caches, h2o's pools
            for name in names:
                run_wrk(ports[name], path, os.path.join(ROOT, "bench", "fixtures", fx + ".json"), 1)
        for rnd in range(ROUNDS):
            for fx, path in fixtures:
                for name in names:
                    before = cpu_ns(procs[name].pid)
                    r = run_wrk(ports[name], path,
                                os.path.join(ROOT, "bench", "fixtures", fx + ".json"), DURATION)
                    r["cpu"] = (cpu_ns(procs[name].pid) - before) / 1000.0 / max(r["requests"], 1)
                    results.setdefault((fx, name), []).append(r)
                    print("round %d %-15s %-9s %8.0f req/s  %5.1f us CPU/req  p50 %5d  p99 %5d  "
                          "p99.9 %5d us%s"
                          % (rnd + 1, fx, name, r["rps"], r["cpu"], r["p50"], r["p99"], r["p999"],
                             "  ERRORS %d" % r["errors"] if r["errors"] else ""), flush=True)
        hwm = {name: vm_hwm_kib(procs[name].pid) for name in names}
        print()
        print("| fixture | server | requests/s | CPU µs/req | p50 µs | p99 µs | p99.9 µs | "
              "peak RSS | req/s ÷ parse | CPU/req ÷ parse | p99 ÷ parse |")
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for fx, _ in fixtures:
            med = {}
            for name in names:
                rs = results[(fx, name)]
                med[name] = {k: statistics.median(r[k] for r in rs)
                             for k in ("rps", "cpu", "p50", "p99", "p999")}
            for name in names:
                m = med[name]
                ratio = ("%.2f" % (m["rps"] / med["parse"]["rps"]),
                         "%.2f" % (m["cpu"] / med["parse"]["cpu"]),
                         "%.2f" % (m["p99"] / med["parse"]["p99"])) if "parse" in med else ("",) * 3
                print("| %s | %s | %.0f | %.1f | %.0f | %.0f | %.0f | %.1f MiB | %s | %s | %s |"
                      % (fx, name, m["rps"], m["cpu"], m["p50"], m["p99"], m["p999"],
                         hwm[name] / 1024.0, *ratio))
        errors = sum(r["errors"] for rs in results.values() for r in rs)
        if errors:
            print("WARNING: %d non-2xx answers or socket errors during the load" % errors)
        return 0
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.terminate()
        for p in procs.values():
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
