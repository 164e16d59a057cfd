"""The Prometheus text exposition format (version 0.0.4), as the webhook's and
the controller's /metrics write it: the one parser of every suite
(tests/integration, tests/e2e, bench/).

    parse(text)              [(name, {label: value}, float)], in order
    sum_of(samples, name, **match)
                             the sum of name's samples whose labels match
                             (a value, or a predicate on the label's value)
    keyed(text)              {'name{labels as written}': float}
    scrape(port)             keyed() of http://127.0.0.1:port/metrics, or
                             None when it does not answer 200

A malformed sample line raises ValueError: the tests hold the exporters to
the format.  Comments (# HELP, # TYPE) and blank lines are skipped.
Python 3 standard library only.
"""
import http.client
import re

SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$")
LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?')


def _samples(text):
    """(name, label text or None, labels, value) per sample line."""
    for ln in text.splitlines():
        if not ln.strip() or ln.startswith("#"):
            continue
        m = SAMPLE.match(ln)
        if not m:
            raise ValueError("bad metrics line %r" % ln)
        labels = {}
        rest = m.group(2) or ""
        pos = 0
        while pos < len(rest):
            lm = LABEL.match(rest, pos)
            if not lm:
                raise ValueError("bad labels in %r" % ln)
            labels[lm.group(1)] = lm.group(2)
            pos = lm.end()
        yield m.group(1), m.group(2), labels, float(m.group(3))


def parse(text):
    """Prometheus text format -> [(name, {label: value}, float)]; raises
    ValueError on a malformed line."""
    return [(name, labels, v) for name, _, labels, v in _samples(text)]


def sum_of(samples, name, **match):
    """The sum of parse()'s samples called name whose labels match: each
    keyword is a label's value, or a predicate on it."""
    return sum(v for n, lab, v in samples if n == name and all(
        f(lab.get(k, "")) if callable(f) else lab.get(k) == f
        for k, f in match.items()))


def keyed(text):
    """{'name{labels}': float}, the labels as the exporter wrote them, e.g.
    'ota_controller_relists_total{resource="pods"}'."""
    return {name if raw is None else "%s{%s}" % (name, raw): v for name, raw, _, v in _samples(text)}


def scrape(port, path="/metrics", timeout=10):
    """keyed() of GET http://127.0.0.1:port/path, or None when it cannot be
    reached or does not answer 200."""
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        conn.request("GET", path)
        r = conn.getresponse()
        status, text = r.status, r.read().decode()
        conn.close()
    except (OSError, http.client.HTTPException):
        return None
    return keyed(text) if status == 200 else None
