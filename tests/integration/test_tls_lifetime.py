"""How long a TLS context lives (issue 9, "use-after-free when the
certificate rotates"): h2o 2.2.5 keeps a raw SSL_CTX pointer for a
connection it has accepted and builds the connection's SSL only when its
ClientHello arrives, so the context must outlive every connection that may
still use it, whatever the rotations in between.

  - 20 TCP connections that send nothing, a rotation (the kubelet's symlink
    swap, or cert-manager's in-place write), a wait past the poll interval,
    then the 20 ClientHellos: every handshake and request succeeds;
  - a rotation soak: a few hundred rotations under keep-alive and
    new-connection traffic, with connections accepted before a rotation and
    shaken hands after it: zero failed requests.
The server must stay up and exit 0 with no sanitizer line (Server.stop()).
Bounded: each test runs a fixed number of rounds with a deadline.

Part of the integration suite (run_all.py -k 'test_tls_lifetime.*').
"""

import os
import shutil
import socket
import tempfile
import threading
import time
import unittest

import harness
from harness import (SNI, Conn, Server, cert_fingerprint, client_context,
                     compact, gen_certs, load_fixture)

POLL_MS = 50


def review_body(uid="0e0e0000-0000-4000-8000-000000000001"):
    review, _ = load_fixture("ds-create-ota-rollingupdate")
    review["request"]["uid"] = uid
    return compact(review)


def post_on(tls_sock, body):
    """One POST /mutate on an already shaken-hands TLS socket; the status."""
    req = (b"POST /mutate?timeout=10s HTTP/1.1\r\nHost: " + SNI.encode() +
           b"\r\nContent-Type: application/json\r\nContent-Length: " +
           str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)
    tls_sock.sendall(req)
    raw, _, _ = harness.read_until_closed(tls_sock, harness.IO_TIMEOUT)
    line = raw.split(b"\r\n", 1)[0]
    parts = line.split(b" ")
    if len(parts) < 2 or not parts[1].isdigit():
        raise AssertionError("no HTTP answer: %r" % raw[:200])
    return int(parts[1])


class Volume:
    """A certificate directory laid out as the kubelet lays out a Secret
    volume (tls.crt -> ..data/tls.crt, ..data -> ..<ts>/), or as plain
    files that cert-manager-style writers rewrite in place."""

    def __init__(self, root, pairs, symlinks):
        self.root, self.pairs, self.symlinks = root, pairs, symlinks
        self.n = 0
        os.mkdir(root)
        if symlinks:
            self._new_version(0)
            os.symlink(self.cur, os.path.join(root, "..data"))
            for f in ("tls.crt", "tls.key"):
                os.symlink(os.path.join("..data", f), os.path.join(root, f))
        else:
            for f in ("tls.crt", "tls.key"):
                shutil.copyfile(pairs[0][f], os.path.join(root, f))

    def _new_version(self, i):
        self.cur = "..v%06d" % self.n
        self.n += 1
        d = os.path.join(self.root, self.cur)
        os.mkdir(d)
        for f in ("tls.crt", "tls.key"):
            shutil.copyfile(self.pairs[i][f], os.path.join(d, f))

    def rotate(self, i):
        """Makes pair i the served one."""
        if self.symlinks:
            old = self.cur
            self._new_version(i)
            tmp = os.path.join(self.root, "..data_tmp")
            os.symlink(self.cur, tmp)
            os.rename(tmp, os.path.join(self.root, "..data"))
            shutil.rmtree(os.path.join(self.root, old))
        else:
            # In place: the same inodes truncated and rewritten, key last.
            for f in ("tls.crt", "tls.key"):
                with open(self.pairs[i][f], "rb") as src:
                    data = src.read()
                with open(os.path.join(self.root, f), "r+b") as dst:
                    dst.truncate(0)
                    dst.write(data)

    def files(self):
        return os.path.join(self.root, "tls.crt"), \
            os.path.join(self.root, "tls.key")


class TestContextOutlivesConnections(unittest.TestCase):
    PAIRS = 3

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(dir=harness.WORK, prefix="life.")
        cls.pairs = [gen_certs(os.path.join(cls.dir, "p%d" % i))
                     for i in range(cls.PAIRS)]
        cls.ctx = client_context([p["ca.crt"] for p in cls.pairs])
        cls.fps = [cert_fingerprint(p["tls.crt"]) for p in cls.pairs]

    def setUp(self):
        self.srv = None

    def tearDown(self):
        if self.srv:
            problems = self.srv.stop()
            if problems:
                self.fail("\n".join(problems))

    def start(self, vol):
        cert, key = vol.files()
        self.srv = Server(self.id().split(".")[-1],
                          ["--cert-poll-interval-ms", str(POLL_MS),
                           "--threads", "2"], cert=cert, key=key)
        self.srv.start()

    def reloads(self):
        st, _, body = harness.http_get(self.srv.metrics, "/metrics")
        self.assertEqual(st, 200)
        return harness.metric_sum(harness.parse_metrics(body.decode()),
                                  "ota_webhook_cert_reloads_total",
                                  result="success")

    def open_admission_connections(self):
        st, _, body = harness.http_get(self.srv.metrics, "/metrics")
        self.assertEqual(st, 200)
        return harness.metric_sum(harness.parse_metrics(body.decode()),
                                  "ota_webhook_open_connections", port="admission")

    def wait_reloads(self, n, timeout=5.0):
        deadline = time.monotonic() + timeout
        while self.reloads() < n:
            self.assertTrue(self.srv.alive(), self.srv.log_tail())
            self.assertLess(time.monotonic(), deadline,
                            "the rotation was not picked up")
            time.sleep(0.02)

    def silent_connections_across_rotation(self, symlinks):
        vol = Volume(os.path.join(self.dir, self.id().split(".")[-1]),
                     self.pairs, symlinks)
        self.start(vol)
        r0 = self.reloads()
        for round_ in range(3):
            socks = [socket.create_connection(("127.0.0.1", self.srv.port),
                                              harness.IO_TIMEOUT)
                     for _ in range(20)]
            try:
                # Every connection accepted by a worker before the rotation
                # (counted by the server, not guessed from a sleep).
                deadline = time.monotonic() + 30
                while self.open_admission_connections() < 20:
                    self.assertLess(time.monotonic(), deadline,
                                    "the 20 connections were never accepted")
                    time.sleep(0.05)
                vol.rotate((round_ + 1) % self.PAIRS)
                self.wait_reloads(r0 + round_ + 1)
                # Well past the poll interval: both workers moved on, and
                # traffic on new connections ends the old context's other
                # users.
                for _ in range(4):
                    c = Conn(self.srv.port, context=self.ctx)
                    st, _, _ = c.call("POST", "/mutate", review_body())
                    c.close()
                    self.assertEqual(st, 200)
                time.sleep(5 * POLL_MS / 1000.0)
                failures = []
                for i, s in enumerate(socks):
                    try:
                        t = self.ctx.wrap_socket(s, server_hostname=SNI)
                        socks[i] = t
                        fp = cert_fingerprint_of(t)
                        st = post_on(t, review_body())
                        if st != 200:
                            failures.append((i, st))
                        if fp not in self.fps:
                            failures.append((i, "unknown certificate"))
                    except Exception as e:  # noqa: BLE001
                        failures.append((i, repr(e)))
                self.assertTrue(self.srv.alive(),
                                "server died: %s" % self.srv.log_tail())
                self.assertEqual(failures, [], "round %d: handshakes or "
                                 "requests failed on connections accepted "
                                 "before the rotation" % round_)
            finally:
                for s in socks:
                    s.close()

    def test_silent_connections_kubelet_symlink_swap(self):
        self.silent_connections_across_rotation(symlinks=True)

    def test_silent_connections_in_place_write(self):
        self.silent_connections_across_rotation(symlinks=False)

    def test_rotation_soak(self):
        """ROTATIONS rotations (symlink swaps) under keep-alive clients,
        new-connection clients and connections accepted before a rotation
        and shaken hands after it; no request may fail."""
        ROTATIONS = 300
        vol = Volume(os.path.join(self.dir, "soak"), self.pairs, True)
        self.start(vol)
        stop = threading.Event()
        errors, counts = [], {"ka": 0, "new": 0, "late": 0}
        body = review_body()

        def keepalive():
            c = Conn(self.srv.port, context=self.ctx, timeout=10)
            try:
                while not stop.is_set():
                    st, _, b = c.call("POST", "/validate", body)
                    counts["ka"] += 1
                    if st != 200:
                        errors.append(("keepalive", st, b[:200]))
            except Exception as e:  # noqa: BLE001
                errors.append(("keepalive", repr(e)))
            finally:
                c.close()

        def new_conns():
            while not stop.is_set():
                c = Conn(self.srv.port, context=self.ctx, timeout=10)
                try:
                    st, _, b = c.call("POST", "/mutate", body)
                    counts["new"] += 1
                    if st != 200:
                        errors.append(("new", st, b[:200]))
                except Exception as e:  # noqa: BLE001
                    errors.append(("new", repr(e)))
                finally:
                    c.close()

        def late_handshakes():
            # Accept now, shake hands after a rotation or two.
            while not stop.is_set():
                s = socket.create_connection(("127.0.0.1", self.srv.port),
                                             10)
                try:
                    time.sleep(3 * POLL_MS / 1000.0)
                    t = self.ctx.wrap_socket(s, server_hostname=SNI)
                    s = t
                    st = post_on(t, body)
                    counts["late"] += 1
                    if st != 200:
                        errors.append(("late", st))
                except Exception as e:  # noqa: BLE001
                    errors.append(("late", repr(e)))
                finally:
                    s.close()

        threads = [threading.Thread(target=f) for f in
                   (keepalive, keepalive, new_conns, late_handshakes,
                    late_handshakes)]
        for t in threads:
            t.start()
        # bounded, but by far more than the rotations need even under ASan
        # on a loaded machine: the test counts rotations, not seconds
        deadline = time.monotonic() + 600
        done = 0
        try:
            for i in range(ROTATIONS):
                if time.monotonic() > deadline or not self.srv.alive():
                    break
                vol.rotate((i + 1) % self.PAIRS)
                done += 1
                time.sleep(1.5 * POLL_MS / 1000.0)
        finally:
            stop.set()
            for t in threads:
                t.join(30)
        self.assertTrue(self.srv.alive(), "server died after %d rotations:"
                        "\n%s" % (done, self.srv.log_tail()))
        self.assertEqual(done, ROTATIONS, "only %d rotations in time" % done)
        self.assertEqual(errors[:10], [], "%d of %d requests failed"
                         % (len(errors), sum(counts.values())))
        self.assertGreater(min(counts.values()), 10, counts)
        self.assertGreater(self.reloads(), ROTATIONS // 3)


def cert_fingerprint_of(tls_sock):
    import hashlib
    return hashlib.sha256(tls_sock.getpeercert(binary_form=True)).hexdigest()


if __name__ == "__main__":
    unittest.main()
