"""Fault injection, driven through the admin endpoint /kubesim/faults.

Tests use it to prove that clients survive a misbehaving apiserver:

  POST /kubesim/faults   {"error": {"code": 429|410|409|500, "rate": 0.3, "count": 5,
                                     "retryAfter": 2, "methods": ["GET"],
                                     "pathContains": "/pods", "queryContains": "continue=",
                                     "watch": true|false},
                          "delay": {"seconds": 1.5, "rate": 1.0, "pathContains": "..."},
                          "watchDelay": {"seconds": 5, "pathContains": "/pods"}}
  GET    /kubesim/faults  current settings and counters
  DELETE /kubesim/faults  back to normal
  POST   /kubesim/faults/drop-watches   close every open watch now
  POST   /kubesim/faults/compact        forget watch history (resuming watches get 410)

`rate` is the share of matching requests hit (default 1); `count` caps how
many are hit (default unlimited); `queryContains` matches the raw (URL-encoded)
query string, e.g. "continue=" hits only the continued pages of paged lists,
which then get the apiserver's own 410 Expired ("The provided continue parameter
is too old ...").

`delay` slows the answer to a request (for a watch: only its start). `watchDelay`
instead holds back every event of the watches it hits: each event (ADDED, MODIFIED,
DELETED, and the initial events of a watch without a resourceVersion) reaches the client
`seconds` after kubesim committed the write, in order, while the requests themselves,
lists and writes run at full speed. That is a watch cache lagging behind etcd: a client's
informer serves a stale cache while other clients write. A watch is hit when it opens
(same filters: `rate`, `count`, `pathContains`, `methods`; `watch` is implied) and stays
delayed until it ends; BOOKMARKs never overtake a held event. Clearing the faults does
not speed up watches already open (drop them with /kubesim/faults/drop-watches). Only resource requests (/api/v1/..., /apis/
<g>/<v>/...) are affected, never discovery, /openapi or this endpoint.
"""
import random
import threading

from . import errors
from .store import CONTINUE_EXPIRED


class Faults:
    def __init__(self, seed=None):
        self.lock = threading.Lock()
        self.rand = random.Random(seed)
        self.error = None
        self.delay = None
        self.watch_delay = None
        self.injected = {"errors": 0, "delays": 0, "dropped_watches": 0, "watch_delays": 0}

    def configure(self, cfg):
        with self.lock:
            if "error" in cfg:
                e = cfg["error"]
                if e is not None:
                    if int(e.get("code", 500)) not in (409, 410, 429, 500, 503):
                        raise errors.bad_request("error.code must be one of 409, 410, 429, 500, 503")
                    e = dict(e)
                    e.setdefault("rate", 1.0)
                self.error = e
            if "delay" in cfg:
                d = cfg["delay"]
                if d is not None:
                    d = dict(d)
                    d.setdefault("rate", 1.0)
                self.delay = d
            if "watchDelay" in cfg:
                d = cfg["watchDelay"]
                if d is not None:
                    if not isinstance(d, dict):
                        raise errors.bad_request("watchDelay must be an object")
                    d = dict(d)
                    try:
                        secs = float(d.get("seconds", 1.0))
                    except (TypeError, ValueError):
                        secs = -1.0
                    if not 0 <= secs <= 3600:
                        raise errors.bad_request("watchDelay.seconds must be a number from 0 to 3600")
                    d["seconds"] = secs
                    d.setdefault("rate", 1.0)
                self.watch_delay = d
            if "seed" in cfg:
                self.rand.seed(cfg["seed"])

    def clear(self):
        with self.lock:
            self.error = None
            self.delay = None
            self.watch_delay = None

    def state(self):
        with self.lock:
            return {"error": self.error, "delay": self.delay, "watchDelay": self.watch_delay,
                    "injected": dict(self.injected)}

    def decide_watch_delay(self, method, path, query=""):
        """Seconds by which every event of a watch opening now is held back (0: none)."""
        with self.lock:
            if not self._hit(self.watch_delay, method, path, True, query):
                return 0.0
            self.injected["watch_delays"] += 1
            return float(self.watch_delay["seconds"])

    @staticmethod
    def _matches(rule, method, path, watch, query=""):
        if rule.get("methods") and method not in rule["methods"]:
            return False
        if rule.get("pathContains") and rule["pathContains"] not in path:
            return False
        if rule.get("queryContains") and rule["queryContains"] not in query:
            return False
        if "watch" in rule and bool(rule["watch"]) != watch:
            return False
        return True

    def _hit(self, rule, method, path, watch, query=""):
        if rule is None or not self._matches(rule, method, path, watch, query):
            return False
        if rule.get("count") is not None and rule["count"] <= 0:
            return False
        if self.rand.random() >= float(rule.get("rate", 1.0)):
            return False
        if rule.get("count") is not None:
            rule["count"] -= 1
        return True

    def decide(self, method, path, watch, query=""):
        """-> (delay_seconds, ApiError or None) for one resource request; query is the
        raw query string."""
        with self.lock:
            delay = 0.0
            if self._hit(self.delay, method, path, watch, query):
                delay = float(self.delay.get("seconds", 1.0))
                self.injected["delays"] += 1
            err = None
            if self._hit(self.error, method, path, watch, query):
                self.injected["errors"] += 1
                code = int(self.error.get("code", 500))
                if code == 429:
                    err = errors.too_many_requests(int(self.error.get("retryAfter", 1)))
                elif code == 410 and not watch and "continue=" in query:
                    err = errors.gone(CONTINUE_EXPIRED)
                elif code == 410:
                    err = errors.gone("too old resource version: injected by kubesim")
                elif code == 409:
                    err = errors.ApiError(409, "Conflict", "Operation cannot be fulfilled: the object has "
                                          "been modified; please apply your changes to the latest version "
                                          "and try again (injected by kubesim)")
                elif code == 503:
                    err = errors.ApiError(503, "ServiceUnavailable", "the server is currently unable to "
                                          "handle the request (injected by kubesim)",
                                          retry_after=int(self.error.get("retryAfter", 1)))
                else:
                    err = errors.internal("injected by kubesim")
            return delay, err
