"""The fault-injecting TLS proxy between each controller and kubesim.

Every controller talks to kubesim through one of these (kubesim's own serving
certificate, so the controller's kubeconfig only changes its server URL).  The
proxy logs each request the controller makes (time, method, path, body, answer
code).  That log is how the tests see who wrote what (two controllers), whether
Retry-After is honoured, and it lets a test take the apiserver away and bring
it back on the same address: kubesim keeps its objects in memory and makes a
fresh CA and fresh tokens on every start, so stopping and starting kubesim
itself would be a new, empty cluster, not a restart.

Proxy: accept, relay, stop()/start()/cut(), reset_writes, hold_lease_answers, and the log
(entries(), writes()); _RequestParser and _ResponseParser split the two byte
streams into HTTP/1.1 requests and answers and pair them.
"""
import select
import socket
import ssl
import threading
import time


class Proxy:
    """TLS in, TLS out, HTTP/1.1 requests logged.  stop() is the apiserver going
    away (every connection cut, the port refuses), start() it coming back.
    sim is the Kubesim it forwards to (its certificate, key, client context
    and port); port is the loopback port it listens on, the same after a
    stop() and start()."""

    def __init__(self, sim, name, port):
        self.sim, self.name = sim, name
        self.port = port
        self.log = []  # dicts: t, method, path, body, status, t_done
        self.lock = threading.Lock()
        self.server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.server_ctx.load_cert_chain(sim.cert, sim.key)
        self.conns = set()
        self.listener = None
        self.reset_writes = False  # cut the connection of every write but the Lease's
        self.resets = []           # the writes cut so: (time, method, path)
        # seconds the answer to a Lease PUT is held back once kubesim has
        # written it: a renewal that landed but whose answer is on its way
        self.hold_lease_answers = 0.0
        self.start()

    @property
    def url(self):
        return "https://127.0.0.1:%d" % self.port

    def start(self):
        self.up = True
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", self.port))
        s.listen(64)
        self.listener = s
        threading.Thread(target=self._accept, args=(s,), daemon=True).start()

    def stop(self):
        self.up = False  # connections still in their handshake die too
        s, self.listener = self.listener, None
        if s is not None:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()
        self.cut()

    def cut(self):
        """Every open connection dies at once, mid-stream (the listener stays)."""
        with self.lock:
            conns = list(self.conns)
        for c in conns:
            for sock in c:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def _accept(self, listener):
        while self.listener is listener:
            try:
                raw, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(raw, time.monotonic()), daemon=True).start()

    def _serve(self, raw, t_accept):
        pair = None
        try:
            raw.settimeout(10)
            down = self.server_ctx.wrap_socket(raw, server_side=True)
            up = self.sim.ctx.wrap_socket(socket.create_connection(("127.0.0.1", self.sim.port), 10),
                                          server_hostname="127.0.0.1")
            down.settimeout(None)
            up.settimeout(None)
            pair = (down, up)
            with self.lock:
                self.conns.add(pair)
            self._relay(down, up, t_accept)
        except (OSError, ssl.SSLError):
            pass
        finally:
            if pair is not None:
                with self.lock:
                    self.conns.discard(pair)
                for s in pair:
                    s.close()
            else:
                raw.close()

    def _relay(self, down, up, t_accept):
        req = _RequestParser(self, t_accept)
        resp = _ResponseParser(req)
        while self.up:
            ready = [s for s in (down, up) if s.pending()]
            if not ready:
                ready = select.select([down, up], [], [], 1.0)[0]
            for s in ready:
                # Readable may mean a TLS record without data (a TLS 1.3
                # session ticket): a blocking recv would wait for data that
                # only comes once the other direction has moved on.
                s.setblocking(False)
                try:
                    data = s.recv(65536)
                except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
                    continue
                finally:
                    s.setblocking(True)
                if not data or not self.up:
                    return
                if s is down:
                    try:
                        req.feed(data)
                    except _Reset:
                        return
                    up.sendall(data)
                else:
                    held = req.pending[0] if req.pending else None
                    if self.hold_lease_answers and held is not None and \
                            held["method"] == "PUT" and "/leases/" in held["path"]:
                        held["held"] = True
                        time.sleep(self.hold_lease_answers)
                    resp.feed(data)
                    down.sendall(data)

    # --- what the log says
    def entries(self, since=0.0):
        with self.lock:
            return [e for e in self.log if e["t"] >= since]

    def writes(self, since=0.0):
        """Requests that change something, Lease updates aside."""
        return [e for e in self.entries(since)
                if e["method"] in ("POST", "PUT", "PATCH", "DELETE") and "/leases" not in e["path"]]


class _Reset(Exception):
    pass


class _RequestParser:
    """t is when the request reached the proxy; t_sent when the controller sent
    it, as near as the proxy can tell: for the first request on a connection,
    when the connection was accepted (the TLS handshakes come between)."""

    def __init__(self, proxy, t_accept):
        self.proxy, self.buf, self.pending = proxy, b"", []
        self.entry, self.need = None, 0
        self.t_accept = t_accept

    def feed(self, data):
        self.buf += data
        while True:
            if self.entry is None:
                end = self.buf.find(b"\r\n\r\n")
                if end < 0:
                    return
                head = self.buf[:end].decode("latin-1").split("\r\n")
                self.buf = self.buf[end + 4:]
                method, path = head[0].split(" ")[:2]
                if self.proxy.reset_writes and method != "GET" and "/leases" not in path:
                    with self.proxy.lock:
                        self.proxy.resets.append((time.monotonic(), method, path))
                    raise _Reset()  # the request never reaches kubesim
                length, agent = 0, None
                for h in head[1:]:
                    k, _, v = h.partition(":")
                    if k.strip().lower() == "content-length":
                        length = int(v.strip())
                    elif k.strip().lower() == "user-agent":
                        agent = v.strip()
                now = time.monotonic()
                self.entry = {"t": now, "t_sent": min(now, self.t_accept), "method": method, "path": path,
                              "body": b"", "status": None, "t_done": None, "user_agent": agent}
                self.t_accept = float("inf")  # later requests reuse the connection
                self.need = length
            take = min(self.need, len(self.buf))
            self.entry["body"] += self.buf[:take]
            self.buf = self.buf[take:]
            self.need -= take
            if self.need > 0:
                return
            with self.proxy.lock:
                self.proxy.log.append(self.entry)
            self.pending.append(self.entry)
            self.entry = None


class _ResponseParser:
    """Pairs each answer with its request (HTTP/1.1 answers in order)."""

    def __init__(self, req):
        self.req, self.buf, self.state, self.need = req, b"", "head", 0

    def feed(self, data):
        self.buf += data
        while True:
            if self.state == "head":
                end = self.buf.find(b"\r\n\r\n")
                if end < 0:
                    return
                head = self.buf[:end].decode("latin-1").split("\r\n")
                self.buf = self.buf[end + 4:]
                status = int(head[0].split(" ")[1])
                if 100 <= status < 200:
                    continue  # 100 Continue: the answer comes after the body
                hdrs = {}
                for h in head[1:]:
                    k, _, v = h.partition(":")
                    hdrs[k.strip().lower()] = v.strip()
                e = self.req.pending.pop(0) if self.req.pending else None
                if e is not None:
                    e["status"], e["t_done"] = status, time.monotonic()
                    e["retry_after"] = hdrs.get("retry-after")
                if "chunked" in hdrs.get("transfer-encoding", ""):
                    self.state = "size"
                else:
                    self.state, self.need = "body", int(hdrs.get("content-length", "0"))
            elif self.state == "body":
                take = min(self.need, len(self.buf))
                self.buf = self.buf[take:]
                self.need -= take
                if self.need > 0:
                    return
                self.state = "head"
            elif self.state == "size":
                end = self.buf.find(b"\r\n")
                if end < 0:
                    return
                size = int(self.buf[:end].split(b";")[0], 16)
                self.buf = self.buf[end + 2:]
                self.state, self.need = ("trailer", 0) if size == 0 else ("chunk", size + 2)
            elif self.state == "chunk":
                take = min(self.need, len(self.buf))
                self.buf = self.buf[take:]
                self.need -= take
                if self.need > 0:
                    return
                self.state = "size"
            elif self.state == "trailer":
                end = self.buf.find(b"\r\n")
                if end < 0:
                    return
                line = self.buf[:end]
                self.buf = self.buf[end + 2:]
                if line == b"":
                    self.state = "head"
