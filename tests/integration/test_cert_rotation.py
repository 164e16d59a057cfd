"""Certificate rotation under traffic (--cert-poll-interval-ms): the
serving certificate and key replaced by renames, key lagging behind the
certificate, and the kubelet's Secret-volume symlink swap, while clients on
new connections, a keep-alive connection and curl keep posting; none may
fail, new connections see the new certificate within 2 s, the keep-alive one
stays up, and ota_webhook_cert_reloads_total counts it. Broken files keep the
old certificate. Each test starts its own server.

Part of the integration suite: run_all.py runs it with the others (`make
integration`; one file: run_all.py -k 'test_cert_rotation.*').
"""

import os
import shutil
import subprocess
import tempfile
import threading
import time
import unittest

import harness
from harness import (SNI, Conn, Server, cert_fingerprint, client_context,
                     compact, gen_certs, http_get, load_fixture, metric_sum,
                     parse_metrics)


def replace_atomically(src, dst):
    tmp = dst + ".tmp-rotate"
    shutil.copyfile(src, tmp)
    os.chmod(tmp, 0o600)
    os.rename(tmp, dst)


class TestCertRotation(unittest.TestCase):
    DURATION_AFTER_SWAP = 3.5

    def setUp(self):
        self.dir = tempfile.mkdtemp(dir=harness.WORK, prefix="rot.")
        self.old = gen_certs(os.path.join(self.dir, "old"))
        self.new = gen_certs(os.path.join(self.dir, "new"))
        self.old_fp = cert_fingerprint(self.old["tls.crt"])
        self.new_fp = cert_fingerprint(self.new["tls.crt"])
        self.ctx = client_context([self.old["ca.crt"], self.new["ca.crt"]])
        self.srv = None

    def tearDown(self):
        if self.srv:
            problems = self.srv.stop()
            if problems:
                self.fail("\n".join(problems))

    def start(self, cert, key):
        self.srv = Server(self.id().split(".")[-1],
                          ["--cert-poll-interval-ms", "200", "--threads", "2"],
                          cert=cert, key=key)
        self.srv.start()

    def reloads(self, failed=False):
        """ota_webhook_cert_reloads_total: the successful reloads, or the
        failed ones (a result label naming a failure)."""
        st, _, body = http_get(self.srv.metrics, "/metrics")
        self.assertEqual(st, 200)
        return metric_sum(parse_metrics(body.decode()),
                          "ota_webhook_cert_reloads_total",
                          result=lambda r: ("fail" in r) == failed)

    def traffic(self, swap):
        """Runs clients for ~1.5 s, calls swap(), runs on; returns the
        results."""
        stop = threading.Event()
        errors = []
        seen = []  # (t, fingerprint) of new connections
        ka = {"n": 0, "fps": set(), "connects": 0}
        review = compact(self.valid_review())

        def new_conns():
            while not stop.is_set():
                t = time.monotonic()
                c = Conn(self.srv.port, context=self.ctx, timeout=10)
                try:
                    st, _, b = c.call("POST", "/mutate", review)
                    seen.append((t, c.peer_fingerprint()))
                    if st != 200:
                        errors.append(("new", st, b[:200]))
                except Exception as e:  # noqa: BLE001
                    errors.append(("new", repr(e)))
                finally:
                    c.close()

        def keepalive():
            c = Conn(self.srv.port, context=self.ctx, timeout=10)
            try:
                while not stop.is_set():
                    st, _, b = c.call("POST", "/validate", review)
                    ka["n"] += 1
                    ka["fps"].add(c.peer_fingerprint())
                    if st != 200:
                        errors.append(("keepalive", st, b[:200]))
                    time.sleep(0.02)
                ka["connects"] = c.connects
            except Exception as e:  # noqa: BLE001
                errors.append(("keepalive", repr(e)))
            finally:
                c.close()

        def curl_loop():
            # curl, trusting both CAs, new connection each time.
            bundle = os.path.join(self.dir, "both-cas.crt")
            with open(bundle, "w") as f:
                f.write(open(self.old["ca.crt"]).read())
                f.write(open(self.new["ca.crt"]).read())
            path = os.path.join(self.dir, "review.json")
            with open(path, "wb") as f:
                f.write(review)
            while not stop.is_set():
                p = subprocess.run(
                    ["curl", "-sS", "--http1.1", "--cacert", bundle,
                     "--resolve", "%s:%d:127.0.0.1" % (SNI, self.srv.port),
                     "--max-time", "10", "-o", "/dev/null",
                     "-w", "%{http_code}", "-H",
                     "Content-Type: application/json",
                     "--data-binary", "@" + path,
                     "https://%s:%d/mutate" % (SNI, self.srv.port)],
                    capture_output=True, timeout=20)
                if p.returncode != 0 or p.stdout != b"200":
                    errors.append(("curl", p.returncode, p.stdout,
                                   p.stderr[-300:]))

        threads = [threading.Thread(target=f) for f in
                   (new_conns, new_conns, keepalive, curl_loop)]
        for t in threads:
            t.start()
        time.sleep(1.5)
        t_swap = time.monotonic()
        swap()
        time.sleep(self.DURATION_AFTER_SWAP)
        stop.set()
        for t in threads:
            t.join(30)
        self.assertFalse(any(t.is_alive() for t in threads), "clients hung")
        return errors, seen, ka, t_swap

    def valid_review(self):
        review, _ = load_fixture("ds-create-ota-rollingupdate")
        return review

    def check_rotation(self, errors, seen, ka, t_swap, reloads_before):
        self.assertEqual(errors[:10], [], "%d requests failed during "
                         "rotation" % len(errors))
        before = [fp for t, fp in seen if t < t_swap]
        self.assertTrue(before and set(before) == {self.old_fp},
                        "before the swap connections must see the old cert")
        # Poll interval 200 ms: from 2 s after the swap every new
        # connection must see the new certificate.
        late = [fp for t, fp in seen if t > t_swap + 2.0]
        self.assertTrue(late, "no connections late after the swap")
        self.assertEqual(set(late), {self.new_fp},
                         "new connections 2 s after the swap still see the "
                         "old certificate (%d of %d)"
                         % (late.count(self.old_fp), len(late)))
        self.assertGreater(ka["n"], 20, "keep-alive client made few requests")
        self.assertEqual(ka["connects"], 1,
                         "the keep-alive connection was dropped by the "
                         "rotation (%d connects)" % ka["connects"])
        self.assertEqual(ka["fps"], {self.old_fp})
        self.assertGreater(self.reloads(), reloads_before,
                           "ota_webhook_cert_reloads_total did not move")

    def test_rotation_rename_files(self):
        live = os.path.join(self.dir, "live")
        os.mkdir(live)
        for f in ("tls.crt", "tls.key"):
            shutil.copyfile(self.old[f], os.path.join(live, f))
        self.start(os.path.join(live, "tls.crt"), os.path.join(live, "tls.key"))
        r0 = self.reloads()

        def swap():
            # Key first: a reader that sees the new key with the old cert
            # must keep the old pair until both match.
            replace_atomically(self.new["tls.key"],
                               os.path.join(live, "tls.key"))
            replace_atomically(self.new["tls.crt"],
                               os.path.join(live, "tls.crt"))

        self.check_rotation(*self.traffic(swap), reloads_before=r0)

    def test_rotation_cert_first_key_lags(self):
        # The two renames 300 ms apart: more than a poll interval with a
        # certificate that does not match the key. Handshakes must keep
        # using the old, consistent pair meanwhile.
        live = os.path.join(self.dir, "live")
        os.mkdir(live)
        for f in ("tls.crt", "tls.key"):
            shutil.copyfile(self.old[f], os.path.join(live, f))
        self.start(os.path.join(live, "tls.crt"), os.path.join(live, "tls.key"))
        r0 = self.reloads()

        def swap():
            replace_atomically(self.new["tls.crt"],
                               os.path.join(live, "tls.crt"))
            time.sleep(0.3)
            replace_atomically(self.new["tls.key"],
                               os.path.join(live, "tls.key"))

        self.check_rotation(*self.traffic(swap), reloads_before=r0)

    def test_rotation_secret_volume_symlinks(self):
        # How the kubelet updates a Secret volume (cert-manager's path):
        # tls.crt -> ..data/tls.crt, ..data -> ..<timestamp>/, and the
        # update is one rename of a new ..data symlink.
        vol = os.path.join(self.dir, "vol")
        os.mkdir(vol)
        v1 = os.path.join(vol, "..2026_11_21_21_00_00.000000001")
        os.mkdir(v1)
        for f in ("tls.crt", "tls.key"):
            shutil.copyfile(self.old[f], os.path.join(v1, f))
        os.symlink(os.path.basename(v1), os.path.join(vol, "..data"))
        for f in ("tls.crt", "tls.key"):
            os.symlink(os.path.join("..data", f), os.path.join(vol, f))
        self.start(os.path.join(vol, "tls.crt"), os.path.join(vol, "tls.key"))
        r0 = self.reloads()

        def swap():
            v2 = os.path.join(vol, "..2026_11_21_21_05_00.000000002")
            os.mkdir(v2)
            for f in ("tls.crt", "tls.key"):
                shutil.copyfile(self.new[f], os.path.join(v2, f))
            os.symlink(os.path.basename(v2), os.path.join(vol, "..data_tmp"))
            os.rename(os.path.join(vol, "..data_tmp"),
                      os.path.join(vol, "..data"))
            shutil.rmtree(v1)

        self.check_rotation(*self.traffic(swap), reloads_before=r0)

    def test_broken_files_keep_old_certificate(self):
        # A cert file replaced with garbage must not take the server down
        # nor break handshakes; a good one afterwards is picked up.
        live = os.path.join(self.dir, "live")
        os.mkdir(live)
        for f in ("tls.crt", "tls.key"):
            shutil.copyfile(self.old[f], os.path.join(live, f))
        self.start(os.path.join(live, "tls.crt"), os.path.join(live, "tls.key"))
        failures0 = self.reloads(failed=True)
        junk = os.path.join(self.dir, "junk.pem")
        with open(junk, "w") as f:
            f.write("-----BEGIN CERTIFICATE-----\nnot base64\n")
        replace_atomically(junk, os.path.join(live, "tls.crt"))
        time.sleep(1.0)
        self.assertTrue(self.srv.alive(), self.srv.log_tail())
        c = Conn(self.srv.port, context=self.ctx)
        self.addCleanup(c.close)
        st, _, _ = c.call("POST", "/mutate", compact(self.valid_review()))
        self.assertEqual(st, 200)
        self.assertEqual(c.peer_fingerprint(), self.old_fp)
        self.assertGreater(self.reloads(failed=True), failures0,
                           "a certificate that does not load was not "
                           "counted as a failed reload")
        replace_atomically(self.new["tls.key"], os.path.join(live, "tls.key"))
        replace_atomically(self.new["tls.crt"], os.path.join(live, "tls.crt"))
        deadline = time.monotonic() + 3
        fp = None
        while time.monotonic() < deadline:
            c2 = Conn(self.srv.port, context=self.ctx)
            c2.call("POST", "/mutate", compact(self.valid_review()))
            fp = c2.peer_fingerprint()
            c2.close()
            if fp == self.new_fp:
                break
            time.sleep(0.1)
        self.assertEqual(fp, self.new_fp, "good files after bad ones were "
                         "not picked up within 3 s")
