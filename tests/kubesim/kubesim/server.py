"""The HTTP(S) front end kubectl and our programs talk to.

A threaded HTTP/1.1 server (keep-alive, TLS via the ssl module with ALPN
"http/1.1" so Go clients do not try HTTP/2) that authenticates the bearer
token (auth.py), authorizes every request (authz.py: 403 as the apiserver words it), answers discovery (discovery.py), /openapi/v3 (openapi.py),
health, the fault-injection admin endpoint (faults.py), and hands resource
requests to api.py, turning answers into Tables (tables.py) when the client
asks, and streaming watches (watch.py) with chunked encoding.

The optional plain-HTTP port is for debugging with curl: like the old
apiserver insecure port, a request without a token there acts as admin.
"""
import json
import select
import socket
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

from . import api as apimod
from . import discovery, errors, openapi, protobuf, tables, watch

MAX_BODY = 16 << 20


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, addr, handler, kube, tls_ctx=None, insecure=False):
        self.kube = kube
        self.tls_ctx = tls_ctx
        self.insecure = insecure
        super().__init__(addr, handler)

    def finish_request(self, request, client_address):
        # The TLS handshake runs here, on the connection's own thread, so a
        # slow client cannot stall accept().
        try:
            request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass
        if self.tls_ctx is not None:
            try:
                request.settimeout(10)
                request = self.tls_ctx.wrap_socket(request, server_side=True)
                request.settimeout(None)
            except (ssl.SSLError, OSError):
                try:
                    request.close()
                except OSError:
                    pass
                return
        super().finish_request(request, client_address)

    def handle_error(self, request, client_address):
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, ssl.SSLError, socket.timeout, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "kubesim"

    def log_message(self, fmt, *args):
        if self.server.kube.verbose:
            sys.stderr.write("kubesim: %s %s\n" % (self.address_string(), fmt % args))

    # ---------------------------------------------------------------- output
    def _send(self, code, body, ctype="application/json", headers=None):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-cache, private")
        for k, v in headers or []:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _send_error(self, e, headers=None):
        headers = list(headers or [])
        if e.retry_after is not None:
            headers.append(("Retry-After", str(e.retry_after)))
        self._send(e.code, e.status(), headers=headers)

    # ----------------------------------------------------------------- input
    def _read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n > MAX_BODY:
            raise errors.ApiError(413, "RequestEntityTooLarge", "request entity too large")
        if n == 0 and self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            total = 0
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                total += size
                if total > MAX_BODY:
                    raise errors.ApiError(413, "RequestEntityTooLarge", "request entity too large")
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        return self.rfile.read(n) if n else b""

    def do_GET(self):
        self._handle("GET")

    def do_POST(self):
        self._handle("POST")

    def do_PUT(self):
        self._handle("PUT")

    def do_PATCH(self):
        self._handle("PATCH")

    def do_DELETE(self):
        self._handle("DELETE")

    def _handle(self, method):
        kube = self.server.kube
        try:
            url = urlsplit(self.path)
            path = url.path
            query = dict(parse_qsl(url.query, keep_blank_values=True))
            raw = self._read_body()
            user = kube.auth.authenticate(self.headers.get("Authorization"))
            if user is None and self.server.insecure and not self.headers.get("Authorization"):
                user = kube.auth.users["admin"]
            if user is None:
                if path.rstrip("/") in kube.auth.ANONYMOUS_PATHS:
                    user = apimod.User("system:anonymous", ["system:unauthenticated"])
                else:
                    raise errors.unauthorized()
            kube.api.authz.check(user, method, path, query)
            self._route(method, path, query, raw, user)
        except errors.ApiError as e:
            self._send_error(e)
        except (ConnectionError, BrokenPipeError, socket.timeout, ssl.SSLError):
            self.close_connection = True
        except Exception as e:   # a simulator bug should look like a 500, not a hang
            import traceback
            traceback.print_exc()
            try:
                self._send_error(errors.internal("%s: %s" % (type(e).__name__, e)))
            except OSError:
                self.close_connection = True

    # ---------------------------------------------------------------- routes
    def _route(self, method, path, query, raw, user):
        kube = self.server.kube
        p = path.rstrip("/") or "/"
        if p in ("/healthz", "/readyz", "/livez"):
            return self._send(200, b"ok", "text/plain; charset=utf-8")
        if p == "/version":
            return self._send(200, discovery.SERVER_VERSION)
        if p in ("/api", "/apis") and discovery.wants_aggregated(self.headers.get("Accept")):
            return self._send(200, discovery.aggregated(kube.api.registry, p == "/api"),
                              discovery.AGGREGATED_TYPE)
        if p == "/api":
            return self._send(200, discovery.api_versions("127.0.0.1:%d" % kube.port))
        if p == "/apis":
            return self._send(200, discovery.api_group_list(kube.api.registry))
        if p.startswith("/openapi/"):
            return self._openapi(p)
        if p.startswith("/kubesim/"):
            return self._admin(method, p, raw, user)
        parts = [x for x in p.split("/") if x]
        if parts == ["api", "v1"] or (len(parts) == 3 and parts[0] == "apis"):
            g, v = ("", "v1") if parts[0] == "api" else (parts[1], parts[2])
            doc = discovery.api_resource_list(kube.api.registry, g, v)
            if doc is None:
                raise errors.ApiError(404, "NotFound", "the server could not find the requested resource")
            return self._send(200, doc)
        if len(parts) == 2 and parts[0] == "apis":
            doc = discovery.api_group(kube.api.registry, parts[1])
            if doc is None:
                raise errors.ApiError(404, "NotFound", "the server could not find the requested resource")
            return self._send(200, doc)
        return self._resource(method, path, query, raw, user)

    def _openapi(self, p):
        reg = self.server.kube.api.registry
        if p == "/openapi/v3":
            return self._send(200, openapi.index(reg))
        if p.startswith("/openapi/v3/"):
            doc = openapi.document(reg, p[len("/openapi/v3/"):])
            if doc is not None:
                return self._send(200, doc)
        raise errors.ApiError(404, "NotFound", "the server could not find the requested resource")

    def _admin(self, method, p, raw, user):
        kube = self.server.kube
        if "system:masters" not in user.groups:
            raise errors.ApiError(403, "Forbidden", 'User "%s" cannot use the kubesim admin endpoint' % user.name)
        if p == "/kubesim/faults":
            if method == "GET":
                return self._send(200, kube.faults.state())
            if method == "DELETE":
                kube.faults.clear()
                return self._send(200, kube.faults.state())
            if method == "POST":
                kube.faults.configure(json.loads(raw or b"{}"))
                return self._send(200, kube.faults.state())
        if p == "/kubesim/faults/drop-watches" and method == "POST":
            n = kube.api.store.drop_watches()
            kube.faults.injected["dropped_watches"] += n
            return self._send(200, {"dropped": n})
        if p == "/kubesim/faults/compact" and method == "POST":
            kube.api.store.compact()
            return self._send(200, {"compactedTo": kube.api.store.current_rv()})
        raise errors.ApiError(404, "NotFound", "the server could not find the requested resource")

    def _resource(self, method, path, query, raw, user):
        kube = self.server.kube
        is_watch = method == "GET" and query.get("watch") in ("1", "true")
        qs = urlsplit(self.path).query
        delay, err = kube.faults.decide(method, path, is_watch, qs)
        if delay:
            time.sleep(delay)
        if err is not None:
            if is_watch and err.code == 410:
                return self._stream_events([{"type": "ERROR", "object": err.status()}])
            raise err
        body = None
        ctype = self.headers.get("Content-Type", "")
        if raw and "protobuf" in ctype:
            # kubectl's typed clients (create namespace/secret/configmap/job, auth whoami/can-i)
            # send protobuf.
            body = protobuf.decode(raw)
            raw = b""
            ctype = "application/json"
        if raw:
            try:
                body = json.loads(raw)
            except ValueError as e:
                ctype = self.headers.get("Content-Type", "")
                if "yaml" in ctype:
                    raise errors.ApiError(415, "UnsupportedMediaType",
                                          "kubesim accepts JSON bodies only (got %s)" % ctype)
                raise errors.bad_request("couldn't get version/kind; json parse error: %s" % e)
        accept = self.headers.get("Accept", "")
        table_v = tables.wants_table(accept) if method == "GET" else None
        if is_watch:
            _k, req = apimod.parse_path(path, kube.api.registry)
            if req is None or req.name is not None:
                raise errors.method_not_allowed()
            return self._watch(req, query, table_v, kube.faults.decide_watch_delay(method, path, qs))
        status, out, warnings = kube.api.call_ex(user, method, path, body, query, ctype or "application/json")
        headers = [("Warning", '299 - "%s"' % w.replace('"', '\\"')) for w in warnings]
        if status >= 400:
            return self._send(status, out, headers=headers)
        if table_v and out.get("kind") != "Status":
            _k, req = apimod.parse_path(path, kube.api.registry)
            out = tables.to_table(req.res, out, kube.api.clock.now(), query.get("includeObject", "Metadata"))
            out["apiVersion"] = "meta.k8s.io/" + table_v
        return self._send(status, out, headers=headers)

    # ----------------------------------------------------------------- watch
    def _start_stream(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache, private")
        self.end_headers()
        self.wfile.flush()

    def _chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _stream_events(self, events):
        self._start_stream()
        for ev in events:
            self._chunk(json.dumps(ev).encode() + b"\n")
        self._chunk(b"")

    def _peer_gone(self):
        """True once a watching client has closed its connection. A watch client
        sends nothing after its request, so a readable socket means EOF (or, for
        TLS, the close_notify before it); without this the thread would linger
        until the next event or the watch timeout."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            if not readable:
                return False
            if isinstance(self.connection, ssl.SSLSocket):
                return True
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def _watch(self, req, query, table_v, event_delay=0.0):
        kube = self.server.kube
        opts = watch.WatchOptions(query, req)
        include = query.get("includeObject", "Metadata")
        self._start_stream()
        first = [True]

        def send(ev):
            if table_v and ev["type"] in ("ADDED", "MODIFIED", "DELETED"):
                t = tables.to_table(req.res, ev["object"], kube.api.clock.now(), include, headers=first[0])
                t["apiVersion"] = "meta.k8s.io/" + table_v
                t["metadata"]["resourceVersion"] = ev["object"]["metadata"].get("resourceVersion", "")
                first[0] = False
                ev = {"type": ev["type"], "object": t}
            self._chunk(json.dumps(ev).encode() + b"\n")

        try:
            watch.run(kube.api.store, req, opts, send, kube.bookmark_interval,
                      lambda: kube.stopping or self._peer_gone(), event_delay)
            self._chunk(b"")
        except (ConnectionError, BrokenPipeError, ssl.SSLError, OSError):
            self.close_connection = True


class KubeServer:
    """The listening sockets and what the handlers share."""

    def __init__(self, api, auth, faults, port=0, host="127.0.0.1", certfile=None, keyfile=None,
                 http_port=None, verbose=False, bookmark_interval=5.0):
        self.api = api
        self.auth = auth
        self.faults = faults
        self.verbose = verbose
        self.bookmark_interval = bookmark_interval
        self.stopping = False
        ctx = None
        if certfile:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.minimum_version = ssl.TLSVersion.TLSv1_2
            ctx.load_cert_chain(certfile, keyfile)
            ctx.set_alpn_protocols(["http/1.1"])
        self.https = _Server((host, port), _Handler, self, tls_ctx=ctx)
        self.port = self.https.server_address[1]
        self.http = None
        if http_port is not None:
            self.http = _Server((host, http_port), _Handler, self, insecure=True)
        self.threads = []

    @property
    def http_port(self):
        return self.http.server_address[1] if self.http else None

    def start(self):
        for srv in (self.https, self.http):
            if srv is not None:
                t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
                t.start()
                self.threads.append(t)
        return self

    def stop(self):
        self.stopping = True
        self.api.store.drop_watches()
        for srv in (self.https, self.http):
            if srv is not None:
                srv.shutdown()
                srv.server_close()
