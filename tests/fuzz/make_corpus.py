#!/usr/bin/env python3
"""Writes the seed corpus of each libFuzzer harness (tests/fuzz/corpus/NAME/)
from tests/fixtures and a few hand-made shapes; run it again after changing
the fixtures.  Seeds are named by what they are; inputs the fuzzers found
that crashed (regressions) live beside them as crash-*, and this script
leaves those alone.  Python 3 standard library only.
"""

import glob
import json
import os
import re
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")


def compact(doc):
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()


def slim(review):
    """The review without managedFields: the fuzzer's inputs stay small."""
    for side in ("object", "oldObject"):
        obj = review.get("request", {}).get(side)
        if isinstance(obj, dict):
            obj.get("metadata", {}).pop("managedFields", None)
    return review


def write(name, seeds):
    d = os.path.join(HERE, "corpus", name)
    os.makedirs(d, exist_ok=True)
    for f in glob.glob(os.path.join(d, "seed-*")):
        os.remove(f)
    for seed_name, data in seeds:
        with open(os.path.join(d, "seed-" + seed_name), "wb") as f:
            f.write(data)


def reviews():
    out = []
    for path in sorted(glob.glob(os.path.join(FIXTURES, "*.json"))):
        if path.endswith(".expected.json"):
            continue
        with open(path) as f:
            out.append((os.path.basename(path)[:-5], slim(json.load(f))))
    return out


def crd_reviews(folder, group, resource, kind, prefix):
    """CREATEs and an UPDATE (the object as its own old object) of the
    custom resources in tests/fixtures/FOLDER."""
    out = []
    for path in sorted(glob.glob(os.path.join(FIXTURES, folder, "*.json"))):
        with open(path) as f:
            obj = json.load(f)
        version = obj["apiVersion"].split("/")[1]
        res = {"group": group, "version": version, "resource": resource}
        for op in ("CREATE", "UPDATE"):
            req = {"uid": "u-1", "kind": {"group": group, "version": version, "kind": kind},
                   "resource": res, "name": obj["metadata"]["name"], "namespace": obj["metadata"]["namespace"],
                   "operation": op, "userInfo": {"username": "admin"}, "object": obj}
            if op == "UPDATE":
                req["oldObject"] = obj
            out.append(("%s-%s-%s" % (prefix, os.path.basename(path)[:-5], op.lower()),
                        slim({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": req})))
    return out


def imagepulljob_reviews():
    """ImagePullJob CREATEs and an UPDATE from tests/fixtures/imagepulljob."""
    return crd_reviews("imagepulljob", "apps.kruise.io", "imagepulljobs", "ImagePullJob", "ipj")


def imagecache_reviews():
    """ImageCache CREATEs and an UPDATE from tests/fixtures/imagecache."""
    return crd_reviews("imagecache", "kubefledged.io", "imagecaches", "ImageCache", "ic")


def review_seeds():
    seeds = [(n, compact(r)) for n, r in reviews() + imagepulljob_reviews() + imagecache_reviews()]
    by_name = dict(reviews())
    # the shapes issue 9 was about, from the YurtHub fixture
    base = compact(by_name["pod-status-prepull-yurthub"])
    seeds.append(("vtab-in-condition", base.replace(b'{"type":"PodNeedUpgrade"',
                                                    b'{\v"type":"PodNeedUpgrade"', 1)))
    seeds.append(("trailing-string", base + b'"abc'))
    seeds.append(("lone-high-surrogate", base.replace(b'"uid":"', b'"uid":"\\ud800zz', 1)))
    seeds.append(("nul-in-message", base.replace(b'controllerrevision: ',
                                                 b'controllerrevision: \\u0000', 1)))
    claims = by_name["pod-status-node-claims-ready"]
    conds = claims["request"]["object"]["status"]["conditions"]
    conds.append({"type": "PodImageReady", "status": "True",
                  "reason": "PullImageSuccess", "message": "x"})
    seeds.append(("duplicate-image-ready", compact(claims)))
    # issue 19: a key twice in one object, read (a forged groups before the
    # real one) and skipped (escaped, in spec)
    node = compact(by_name["pod-status-node-claims-ready"])
    real = b'"groups":["system:nodes","system:authenticated"]'
    seeds.append(("duplicate-groups", node.replace(real, b'"groups":["system:masters"],' + real, 1)))
    seeds.append(("duplicate-escaped-key", node.replace(b'"nodeName":', b'"n\\u006fdeName":"x","nodeName":', 1)))
    return seeds


def jcheck_seeds():
    seeds = [(n, compact(r)[:3000]) for n, r in reviews()[:3]]
    for i, s in enumerate([b'{"a":[1,-0.5e+3,true,false,null,"x"]}', b'["\\ud83d\\ude80\\u0000"]',
                           b' \t\r\n{"\\"}]":"[{"}\r\n', b'"caf\xc3\xa9"', b'{}"abc',
                           b'["\\ud800\\u0041"]', b'[\v1]', b'{"a":"\xed\xa0\x80"}']):
        seeds.append(("shape-%d" % i, s))
    return seeds


def jscan_seeds():
    """The reviews and the byte shapes, and a review whose read fields carry
    escapes (keys, the masters group, an annotation, a condition message)."""
    seeds = review_seeds() + [(n, b) for n, b in jcheck_seeds() if n.startswith("shape")]
    seeds.append(("escaped-fields", b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",'
                  b'"request":{"uid":"u\\u002d1","userInfo":{"us\\u0065rname":"a","groups":'
                  b'["system\\u003amasters"]},"object":{"metadata":{"name":"p\\/1",'
                  b'"annotations":{"apps.openyurt.io/update-strategy":"O\\u0054A"}},'
                  b'"spec":{"nodeName":"n\\t1"},"status":{"conditions":[null,{"type":'
                  b'"PodNeedUpgrade","status":"True","message":"say \\"hi\\"\\u0000"}]}}}}'))
    return seeds


def watch_events():
    events = []
    for path in sorted(glob.glob(os.path.join(FIXTURES, "objects", "*.json"))):
        with open(path) as f:
            obj = json.load(f)
        events.append(compact({"type": "ADDED", "object": obj}))
    return events


def linesplit_seeds():
    ev = watch_events()
    return [("watch-lf", bytes([255, 3]) + b"\n".join(ev[:2]) + b"\n"),
            ("watch-crlf", bytes([255, 7]) + b"\r\n".join(ev[:2]) + b"\r\n\r\n"),
            ("short-lines", bytes([8, 1]) + b"a\nbb\r\n\n\r\nccccccccc\nd\r"),
            ("partial-tail", bytes([40, 9]) + b'{"type":"BOOKMARK"}\n{"type":"MOD')]


def listsplit_seeds():
    items = []
    for path in sorted(glob.glob(os.path.join(FIXTURES, "objects", "*.json")))[:3]:
        with open(path) as f:
            items.append(json.load(f))
    page = {"kind": "List", "apiVersion": "v1",
            "metadata": {"resourceVersion": "48213", "continue": "eyJydiI6NDgyMTN9"},
            "items": items}
    return [("page", bytes([5]) + compact(page)),
            ("pretty", bytes([2]) + json.dumps(page, indent=2).encode()),
            ("empty", bytes([1]) + b'{"metadata":{"resourceVersion":"1"},"items":[]}'),
            ("tricky-strings", bytes([3]) + b'{"items":[{"a":"}]\\"{","b":[{}]},{}],'
                                            b'"metadata":{"continue":"c"}}')]


def kube_config_seeds():
    with open(os.path.join(ROOT, "tests", "unit", "test_kube_config.c")) as f:
        text = f.read()
    # the C string literals of the two_contexts sample, joined
    m = re.search(r"two_contexts\[\] =\n(.*?);\n", text, re.S)
    sample = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(1)))
    sample = sample.encode().decode("unicode_escape").encode()
    flow = (b"apiVersion: v1\nkind: Config\ncurrent-context: c\n"
            b"clusters: [{name: k, cluster: {server: 'https://127.0.0.1:6443', "
            b"insecure-skip-tls-verify: true}}]\n"
            b"contexts: [{name: c, context: {cluster: k, user: u}}]\n"
            b"users: [{name: u, user: {client-certificate-data: QUJD, client-key-data: REVG}}]\n")
    anchors = (b"clusters:\n- &c {name: k, cluster: {server: 'https://h:1'}}\n"
               b"contexts:\n- {name: x, context: {cluster: k, user: u}}\n"
               b"current-context: x\nusers:\n- {name: u, user: {token: t}}\n")
    return [("two-contexts", sample), ("flow", flow), ("anchors", anchors)]


def imageref_seeds():
    with open(os.path.join(ROOT, "tests", "unit", "test_imageref.c")) as f:
        text = f.read()
    refs = sorted(set(re.findall(r'\{"([^"\\]{1,120})",', text)))
    return [("ref-%02d" % i, r.encode()) for i, r in enumerate(refs[:40])]


if __name__ == "__main__":
    write("review", review_seeds())
    write("jcheck", jcheck_seeds())
    write("jscan", jscan_seeds())
    write("linesplit", linesplit_seeds())
    write("listsplit", listsplit_seeds())
    write("kube_config", kube_config_seeds())
    write("imageref", imageref_seeds())
    for d in sorted(glob.glob(os.path.join(HERE, "corpus", "*"))):
        files = os.listdir(d)
        print("%-12s %3d files, %6d bytes" % (os.path.basename(d), len(files),
              sum(os.path.getsize(os.path.join(d, f)) for f in files)))
