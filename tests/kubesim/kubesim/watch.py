"""Watch streams: `GET ...?watch=1`.

Opens a store watcher from the requested resourceVersion (absent or "0":
synthetic ADDED events for what exists, then live changes; a number: replay
from history, or an ERROR event with a 410 `Expired` Status when that
version is gone, as the watch cache answers), filters by namespace and
label/field selectors (an object that stops matching is sent as DELETED, one
that starts matching as ADDED), sends BOOKMARK events when asked
(`allowWatchBookmarks`), supports `sendInitialEvents=true` (the initial
events end with a bookmark annotated `k8s.io/initial-events-end`), and ends
after `timeoutSeconds` or when the faults endpoint drops watches. Events are
handed to a `send(dict)` callback; the HTTP server frames them.
"""
import copy
import time

from . import errors, selectors

DEFAULT_TIMEOUT = 1800.0


class WatchOptions:
    def __init__(self, query, req):
        self.lreqs = selectors.parse_label_selector(query.get("labelSelector"))
        self.freqs = selectors.parse_field_selector(query.get("fieldSelector"), req.key, req.res.kind)
        rv = query.get("resourceVersion")
        self.send_initial = query.get("sendInitialEvents") == "true"
        if rv in (None, "", "0") or self.send_initial:
            self.since = None
        else:
            try:
                self.since = int(rv)
            except ValueError:
                raise errors.bad_request('invalid resource version: "%s"' % rv)
        try:
            self.timeout = float(query["timeoutSeconds"]) if query.get("timeoutSeconds") else DEFAULT_TIMEOUT
        except ValueError:
            raise errors.bad_request("invalid timeoutSeconds")
        self.bookmarks = query.get("allowWatchBookmarks") in ("true", "1")


def _matches(opts, obj, ns):
    if obj is None:
        return False
    if ns is not None and (obj.get("metadata") or {}).get("namespace") != ns:
        return False
    return selectors.match_requirements(opts.lreqs, (obj.get("metadata") or {}).get("labels")) and \
        selectors.match_fields(opts.freqs, obj)


def translate(opts, ns, entry):
    """History entry -> (type, obj) as this watcher should see it, or None."""
    _rv, _res, etype, obj, old = entry
    now = _matches(opts, obj, ns)
    if etype == "MODIFIED":
        before = _matches(opts, old, ns)
        if now and before:
            return "MODIFIED", obj
        if now:
            return "ADDED", obj
        if before:
            return "DELETED", obj
        return None
    return (etype, obj) if now else None


def run(store, req, opts, send, bookmark_interval=5.0, stopping=lambda: False, event_delay=0.0):
    """Blocks until the watch ends. send(event_dict) raises on a dead client.
    event_delay: each event goes out no sooner than this many seconds after it was
    queued (the watchDelay fault)."""
    res = req.res
    try:
        w = store.watch(res.key, req.namespace, opts.since)
    except errors.ApiError as e:
        send({"type": "ERROR", "object": e.status()})
        return
    try:
        deadline = time.monotonic() + opts.timeout
        last_send = time.monotonic()
        pending_initial = w.initial_count if opts.send_initial else None
        last_rv = 0
        while not stopping():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            if pending_initial == 0:
                send(_bookmark(res, last_rv or store.current_rv(), initial_end=True))
                pending_initial = None
            try:
                entry = w.next(min(remaining, bookmark_interval, 1.0))
            except EOFError:
                return
            if entry is None:
                if opts.bookmarks and time.monotonic() - last_send >= bookmark_interval:
                    rv = store.rv_if_drained(w)
                    if rv is not None:
                        send(_bookmark(res, rv))
                        last_send = time.monotonic()
                continue
            if event_delay > 0 and not _hold(w.queued_at + event_delay, deadline, stopping):
                return
            if pending_initial:
                pending_initial -= 1
            last_rv = max(last_rv, entry[0])
            ev = translate(opts, req.namespace, entry)
            if ev is None:
                continue
            obj = res.present(copy.deepcopy(ev[1]))
            send({"type": ev[0], "object": obj})
            last_send = time.monotonic()
    finally:
        w.close()


def _hold(until, deadline, stopping):
    """Waits until `until` (time.monotonic()); False when the watch must end first."""
    while True:
        now = time.monotonic()
        if now >= until:
            return True
        if now >= deadline or stopping():
            return False
        time.sleep(min(until - now, deadline - now, 0.2))


def _bookmark(res, rv, initial_end=False):
    md = {"resourceVersion": str(rv)}
    if initial_end:
        md["annotations"] = {"k8s.io/initial-events-end": "true"}
    return {"type": "BOOKMARK", "object": {"kind": res.kind, "apiVersion": res.api_version, "metadata": md}}
