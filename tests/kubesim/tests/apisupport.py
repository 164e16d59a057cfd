"""Shared fixtures for kubesim's API tests: an in-process Api, a tiny TLS
admission webhook (standard library ssl + http.server) and a running
`run` process (started by tests/lib/kubesim_launch.py) with an HTTPS client
for it. Everything binds 127.0.0.1 and port 0, and every wait has a timeout."""
import base64
import json
import os
import shutil
import ssl
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LIB = os.path.join(os.path.dirname(ROOT), "lib")  # tests/lib: kubesim_launch
for _p in (ROOT, LIB):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import kubesim_launch  # noqa: E402
from kubesim import admission, api, certs  # noqa: E402
from kubesim.clock import Clock  # noqa: E402

ADMIN = api.SYSTEM_ADMIN


def new_api(webhook_hosts=None, scale=1.0):
    adm = admission.Admission(webhook_hosts or {})
    a = api.Api(Clock(scale), admission=adm)
    adm.attach(a)
    return a, adm


def pod(name, ns="default", node=None, labels=None, image="busybox:1.36"):
    p = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
         "spec": {"containers": [{"name": "c", "image": image}]}}
    if labels:
        p["metadata"]["labels"] = labels
    if node:
        p["spec"]["nodeName"] = node
    return p


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        pass    # clients that time out on purpose close the connection under us


class TestWebhook:
    """An HTTPS admission webhook for `<service>.<namespace>.svc`.

    handler(review_request_dict, path) -> AdmissionReview response dict (without uid;
    the fixture echoes it). Records every call: (path, headers, body, http_version).
    """

    def __init__(self, handler, service="hook", namespace="hooks", delay=0.0, sign_for=None):
        self.dir = tempfile.mkdtemp(prefix="kubesim-hook-")
        ca_crt, ca_key = certs.make_ca(self.dir, "hook-ca")
        self.dns = "%s.%s.svc" % (service, namespace)
        crt, key = certs.make_leaf(self.dir, ca_crt, ca_key, self.dns, "DNS:" + (sign_for or self.dns), "hook")
        with open(ca_crt, "rb") as f:
            self.ca_bundle = base64.b64encode(f.read()).decode()
        self.service, self.namespace = service, namespace
        self.handler = handler
        self.delay = delay
        self.calls = []
        self.connections = 0
        fixture = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def setup(self):
                fixture.connections += 1
                super().setup()

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n))
                fixture.calls.append((self.path, dict(self.headers), body, self.request_version,
                                      self.connection.server_hostname if hasattr(self.connection, "server_hostname") else None))
                if fixture.delay:
                    time.sleep(fixture.delay)
                resp = fixture.handler(body["request"], self.path)
                resp = dict(resp)
                resp["uid"] = body["request"]["uid"]
                out = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                                  "response": resp}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(crt, key)
        self.snis = []
        ctx.sni_callback = lambda sock, name, c: self.snis.append(name)
        self.server = _QuietServer(("127.0.0.1", 0), H)
        self.server.daemon_threads = True
        self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
        self.thread.start()

    def host_map(self):
        return {self.dns: ("127.0.0.1", self.port)}

    def client_config(self, path="/validate"):
        return {"service": {"name": self.service, "namespace": self.namespace, "path": path, "port": 443},
                "caBundle": self.ca_bundle}

    def close(self):
        self.server.shutdown()
        self.server.server_close()
        shutil.rmtree(self.dir, ignore_errors=True)


def webhook_config(kind, name, webhooks):
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": {"name": name},
            "webhooks": webhooks}


class Kubesim(kubesim_launch.Kubesim):
    """`tests/kubesim/run` as a subprocess (tests/lib/kubesim_launch.py), its
    state in a temporary directory that stop() removes, with an HTTPS client."""

    def __init__(self, *args, timeout=30):
        super().__init__(None, args, wait=timeout)

    def request(self, method, path, body=None, ident="admin", headers=None, ctype="application/json",
                timeout=10, token=None):
        c = self.connect(timeout)
        h = {"Accept": "application/json"}
        tok = token if token is not None else self.tokens[ident]
        if tok:
            h["Authorization"] = "Bearer " + tok
        if body is not None:
            h["Content-Type"] = ctype
        h.update(headers or {})
        c.request(method, path, body=json.dumps(body) if body is not None else None, headers=h)
        r = c.getresponse()
        data = r.read()
        c.close()
        try:
            parsed = json.loads(data)
        except ValueError:
            parsed = data.decode("utf-8", "replace")
        return r.status, parsed, r
