"""Admission webhooks, called the way kube-apiserver calls them.

For every write, api.py asks `admit("mutating", ...)` and later
`admit("validating", ...)`. Here the registered
Mutating/ValidatingWebhookConfigurations (sorted by name, webhooks in
order) are matched against the request exactly as the apiserver does:
`rules` (operations, apiGroups, apiVersions, resources incl. subresources
such as `pods/status`, `*/status`, `pods/*`, scope), `namespaceSelector`
(labels of the object's namespace; a Namespace matches on its own labels),
`objectSelector` (object or oldObject labels), then `matchConditions` in CEL
(cel.py; any false skips the webhook, errors otherwise apply failurePolicy).
With `matchPolicy: Equivalent` (the default) a webhook whose rules name
another served version of the same custom resource gets the request too,
converted to that version (kind and resource say the webhook's version,
requestKind and requestResource the request's).

A matching webhook is POSTed an admission.k8s.io/v1 AdmissionReview over
HTTP/1.1 keep-alive TLS to `<path>?timeout=<n>s`, the server certificate
verified against `caBundle` for the service DNS name
`<service>.<namespace>.svc` (also the SNI). `--webhook-host NAME=HOST:PORT`
says where that name lives. A mutating webhook's JSONPatch is applied; a
denial becomes `admission webhook "<name>" denied the request: <message>`;
call failures honour failurePolicy and timeoutSeconds with the apiserver's
`failed calling webhook` wording; warnings reach the client as Warning
headers.
"""
import base64
import http.client
import json
import socket
import ssl
import threading
import uuid
from urllib.parse import urlsplit

from . import errors, patch, selectors
from .cel import CelEvaluator


class WebhookCallError(Exception):
    pass


class _Pool:
    """Idle keep-alive connections per (host, port, sni, caBundle)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.idle = {}
        self.contexts = {}

    def context(self, ca_bundle):
        with self.lock:
            ctx = self.contexts.get(ca_bundle)
            if ctx is None:
                ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
                ctx.minimum_version = ssl.TLSVersion.TLSv1_2
                ctx.check_hostname = True
                ctx.verify_mode = ssl.CERT_REQUIRED
                if ca_bundle:
                    try:
                        ctx.load_verify_locations(cadata=base64.b64decode(ca_bundle).decode("ascii", "replace"))
                    except (ssl.SSLError, ValueError) as e:
                        raise WebhookCallError("x509: invalid caBundle: %s" % e)
                else:
                    ctx.load_default_certs()
                ctx.set_alpn_protocols(["http/1.1"])
                self.contexts[ca_bundle] = ctx
            return ctx

    def get(self, key):
        with self.lock:
            lst = self.idle.get(key)
            return lst.pop() if lst else None

    def put(self, key, conn):
        with self.lock:
            lst = self.idle.setdefault(key, [])
            if len(lst) < 8:
                lst.append(conn)
                return
        conn.close()

    def close(self):
        with self.lock:
            for lst in self.idle.values():
                for c in lst:
                    c.close()
            self.idle.clear()


class _Conn(http.client.HTTPSConnection):
    """HTTPS to a mapped address, verifying the certificate for the service DNS name."""

    def __init__(self, addr, sni, port, ctx, timeout):
        super().__init__(sni, port, context=ctx, timeout=timeout)
        self._addr = addr

    def connect(self):
        sock = socket.create_connection(self._addr, self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


def _rule_matches(rule, op, group, version, resource, sub, namespaced):
    ops = rule.get("operations") or []
    if "*" not in ops and op not in ops:
        return False
    groups = rule.get("apiGroups") or []
    if "*" not in groups and group not in groups:
        return False
    versions = rule.get("apiVersions") or []
    if "*" not in versions and version not in versions:
        return False
    scope = rule.get("scope") or "*"
    if scope == "Cluster" and namespaced or scope == "Namespaced" and not namespaced:
        return False
    for r in rule.get("resources") or []:
        rr, _, rs = r.partition("/")
        if r == "*/*":
            return True
        if rs == "":
            if sub is None and (rr == "*" or rr == resource):
                return True
        elif (rr == "*" or rr == resource) and (rs == "*" or rs == sub) and sub is not None:
            return True
    return False


class Admission:
    def __init__(self, webhook_hosts=None, cel=None):
        self.hosts = dict(webhook_hosts or {})
        self.cel = cel or CelEvaluator()
        self.pool = _Pool()
        self.api = None

    def attach(self, api):
        self.api = api

    def close(self):
        self.pool.close()
        self.cel.close()

    # ----------------------------------------------------------- validation
    def validate_config(self, resource, obj):
        """ValidatingAdmissionWebhook/MutatingAdmissionWebhook object validation (the parts
        that catch real manifest mistakes), as a list of (field, type, message) causes."""
        causes = []
        names = set()
        for i, wh in enumerate(obj.get("webhooks") or []):
            p = "webhooks[%d]" % i
            if not isinstance(wh, dict):
                continue
            name = wh.get("name") or ""
            if not name:
                causes.append((p + ".name", "FieldValueRequired", "Required value"))
            elif "." not in name:
                causes.append((p + ".name", "FieldValueInvalid",
                               'Invalid value: "%s": should be a domain with at least three segments separated '
                               "by dots" % name))
            elif name in names:
                causes.append((p + ".name", "FieldValueDuplicate", 'Duplicate value: "%s"' % name))
            names.add(name)
            if wh.get("sideEffects") not in ("None", "NoneOnDryRun"):
                if wh.get("sideEffects") is None:
                    causes.append((p + ".sideEffects", "FieldValueRequired",
                                   "Required value: must specify one of None, NoneOnDryRun"))
                else:
                    causes.append((p + ".sideEffects", "FieldValueNotSupported", 'Unsupported value: "%s": '
                                   'supported values: "None", "NoneOnDryRun"' % wh.get("sideEffects")))
            arv = wh.get("admissionReviewVersions")
            if not arv:
                causes.append((p + ".admissionReviewVersions", "FieldValueRequired",
                               "Required value: must specify one of v1, v1beta1"))
            elif "v1" not in arv and "v1beta1" not in arv:
                causes.append((p + ".admissionReviewVersions", "FieldValueInvalid",
                               "Invalid value: %s: must include at least one of v1, v1beta1" % arv))
            cc = wh.get("clientConfig") or {}
            if bool(cc.get("url")) == bool(cc.get("service")):
                causes.append((p + ".clientConfig", "FieldValueRequired",
                               "Required value: exactly one of url or service is required"))
            for fp, pol in (("failurePolicy", ("Ignore", "Fail")), ("matchPolicy", ("Exact", "Equivalent"))):
                if wh.get(fp) not in pol:
                    causes.append((p + "." + fp, "FieldValueNotSupported", 'Unsupported value: "%s": supported '
                                   'values: "%s"' % (wh.get(fp), '", "'.join(pol))))
            t = wh.get("timeoutSeconds")
            if t is not None and not (isinstance(t, int) and 1 <= t <= 30):
                causes.append((p + ".timeoutSeconds", "FieldValueInvalid",
                               "Invalid value: %s: the timeout value must be between 1 and 30 seconds" % t))
            conds = wh.get("matchConditions") or []
            if len(conds) > 64:
                causes.append((p + ".matchConditions", "FieldValueTooMany",
                               "Too many: %d: must have at most 64 items" % len(conds)))
            cnames = set()
            exprs = []
            for j, c in enumerate(conds):
                cp = "%s.matchConditions[%d]" % (p, j)
                if not c.get("name"):
                    causes.append((cp + ".name", "FieldValueRequired", "Required value"))
                elif c["name"] in cnames:
                    causes.append((cp + ".name", "FieldValueDuplicate", 'Duplicate value: "%s"' % c["name"]))
                cnames.add(c.get("name"))
                if not c.get("expression"):
                    causes.append((cp + ".expression", "FieldValueRequired", "Required value"))
                else:
                    exprs.append((cp + ".expression", c["expression"]))
            if exprs:
                for (fp, e), (kind, val) in zip(exprs, self.cel.compile([e for _, e in exprs])):
                    if kind == "error" and val.startswith("compilation failed"):
                        causes.append((fp, "FieldValueInvalid", 'Invalid value: "%s": %s' % (e, val)))
        return causes

    # ---------------------------------------------------------------- match
    def _configs(self, phase):
        kind = "mutatingwebhookconfigurations" if phase == "mutating" else "validatingwebhookconfigurations"
        items, _ = self.api.store.list(kind)
        out = []
        for cfg in sorted(items, key=lambda o: o["metadata"]["name"]):
            for wh in cfg.get("webhooks") or []:
                out.append(wh)
        return out

    def _namespace_matches(self, wh, req, obj, old):
        sel = wh.get("namespaceSelector")
        if not sel:
            return True
        if req.resource == "namespaces":
            labels = ((obj or old) or {}).get("metadata", {}).get("labels") or {}
        elif not req.res.namespaced:
            return True
        else:
            ns = req.namespace or ((obj or old) or {}).get("metadata", {}).get("namespace")
            nsobj = self.api.store.get("namespaces", "", ns)
            labels = (nsobj or {}).get("metadata", {}).get("labels") or {}
        return selectors.match_label_selector_object(sel, labels)

    @staticmethod
    def _object_matches(wh, obj, old):
        sel = wh.get("objectSelector")
        if not sel:
            return True
        for o in (obj, old):
            if o is not None and selectors.match_label_selector_object(sel, o.get("metadata", {}).get("labels") or {}):
                return True
        return False

    def _matching_resource(self, wh, op, req):
        """The resource version a webhook's rules match this request as: the request's own,
        or with matchPolicy Equivalent another served version of the same custom resource;
        None when the webhook does not apply."""
        candidates = [req.res]
        if (wh.get("matchPolicy") or "Equivalent") == "Equivalent":
            candidates += self.api.registry.equivalents(req.res)
        for res in candidates:
            if any(_rule_matches(r, op, res.group, res.version, res.plural, req.subresource, res.namespaced)
                   for r in wh.get("rules") or []):
                return res
        return None

    @staticmethod
    def _convert(obj, res):
        """obj as version res serves it (conversion strategy None: apiVersion only)."""
        if obj is None or obj.get("apiVersion") == res.api_version:
            return obj
        return dict(obj, apiVersion=res.api_version)

    def _request(self, op, user, req, obj, old, dry, options, target):
        res = req.res
        md = (obj or old or {}).get("metadata", {})
        r = {
            "uid": str(uuid.uuid4()),
            "kind": {"group": target.group, "version": target.version, "kind": target.kind},
            "resource": {"group": target.group, "version": target.version, "resource": target.plural},
            "requestKind": {"group": res.group, "version": res.version, "kind": res.kind},
            "requestResource": {"group": res.group, "version": res.version, "resource": res.plural},
            "name": req.name or md.get("name", ""),
            "operation": op,
            "userInfo": user.info(),
            "object": self._convert(obj, target),
            "oldObject": self._convert(old, target),
            "dryRun": bool(dry),
            "options": options,
        }
        if req.subresource:
            r["subResource"] = req.subresource
            r["requestSubResource"] = req.subresource
        if res.namespaced:
            r["namespace"] = req.namespace or md.get("namespace", "")
        return r

    def _match_conditions(self, wh, request):
        """-> (match: bool, error message or None)."""
        conds = wh.get("matchConditions") or []
        if not conds:
            return True, None
        variables = {"object": request["object"], "oldObject": request["oldObject"],
                     "request": {k: v for k, v in request.items() if k not in ("object", "oldObject")}}
        results = self.cel.evaluate([c.get("expression", "") for c in conds], variables)
        errs = []
        for c, (kind, val) in zip(conds, results):
            if kind == "error":
                errs.append("expression '%s' resulted in error: %s" % (c.get("expression", ""), val))
            elif val is False:
                return False, None
            elif val is not True:
                errs.append("expression '%s' resulted in error: no such overload: expected bool, got %s"
                            % (c.get("expression", ""), type(val).__name__))
        if errs:
            return True, errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"
        return True, None

    # ----------------------------------------------------------------- admit
    def admit(self, phase, op, user, req, obj, old, dry, options):
        if self.api is None:
            return obj
        for wh in self._configs(phase):
            target = self._matching_resource(wh, op, req)
            if target is None:
                continue
            if not self._namespace_matches(wh, req, obj, old) or not self._object_matches(wh, obj, old):
                continue
            request = self._request(op, user, req, obj, old, dry, options, target)
            fail_closed = (wh.get("failurePolicy") or "Fail") == "Fail"
            match, cerr = self._match_conditions(wh, request)
            if not match:
                continue
            if cerr is not None:
                if fail_closed:
                    name = req.name or (obj or {}).get("metadata", {}).get("name", "")
                    raise errors.ApiError(403, "Forbidden", '%s "%s" is forbidden: %s' % (
                        req.res.plural if not req.res.group else "%s.%s" % (req.res.plural, req.res.group),
                        name, cerr), {"name": name, "group": req.res.group, "kind": req.res.plural})
                continue
            if dry and wh.get("sideEffects") not in ("None", "NoneOnDryRun"):
                raise errors.bad_request('admission webhook "%s" does not support dry run' % wh.get("name"))
            try:
                response = self._call(wh, request)
            except WebhookCallError as e:
                if fail_closed:
                    raise errors.internal('failed calling webhook "%s": %s' % (wh.get("name"), e))
                continue
            for w in response.get("warnings") or []:
                self.api.warn(w)
            if not response.get("allowed"):
                raise self._denied(wh.get("name"), response.get("status"))
            if phase == "mutating" and response.get("patch") and obj is not None:
                if response.get("patchType") != "JSONPatch":
                    if fail_closed:
                        raise errors.internal('failed calling webhook "%s": unsupported patch type %r'
                                              % (wh.get("name"), response.get("patchType")))
                    continue
                try:
                    ops = json.loads(base64.b64decode(response["patch"]))
                    obj = self._convert(patch.json_patch(self._convert(obj, target), ops), req.res)
                except (ValueError, errors.ApiError) as e:
                    msg = e.message if isinstance(e, errors.ApiError) else str(e)
                    if fail_closed:
                        raise errors.internal('failed calling webhook "%s": %s' % (wh.get("name"), msg))
                    continue
        return obj

    @staticmethod
    def _denied(name, status):
        """webhookerrors.ToStatusErr."""
        status = dict(status or {})
        denied = 'admission webhook "%s" denied the request' % name
        code = int(status.get("code") or 0)
        if code < 400:
            code = 400
        if status.get("message"):
            msg = "%s: %s" % (denied, status["message"])
        elif status.get("reason"):
            msg = "%s: %s" % (denied, status["reason"])
        else:
            msg = "%s without explanation" % denied
        return errors.ApiError(code, status.get("reason", ""), msg, status.get("details"))

    # ------------------------------------------------------------------ call
    def _target(self, wh):
        cc = wh.get("clientConfig") or {}
        timeout = int(wh.get("timeoutSeconds") or 10)
        if cc.get("service"):
            svc = cc["service"]
            dns = "%s.%s.svc" % (svc.get("name"), svc.get("namespace"))
            port = int(svc.get("port") or 443)
            path = svc.get("path") or "/"
            url = "https://%s:%d%s" % (dns, port, path)
            addr = None
            for key in (dns, dns + ":%d" % port, dns + ".cluster.local", "%s.%s" % (svc.get("name"), svc.get("namespace"))):
                if key in self.hosts:
                    addr = self.hosts[key]
                    break
            if addr is None:
                raise WebhookCallError('failed to call webhook: Post "%s?timeout=%ds": service "%s" not found'
                                       % (url, timeout, svc.get("name")))
            return addr, dns, port, path, url, timeout
        if cc.get("url"):
            u = urlsplit(cc["url"])
            port = u.port or 443
            path = u.path or "/"
            if u.query:
                path += "?" + u.query
            addr = self.hosts.get(u.hostname) or (u.hostname, port)
            return addr, u.hostname, port, path, cc["url"], timeout
        raise WebhookCallError("webhook has no clientConfig")

    def _call(self, wh, request):
        addr, sni, port, path, url, timeout = self._target(wh)
        review = json.dumps({"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1",
                             "request": request}).encode()
        full_path = path + ("&" if "?" in path else "?") + "timeout=%ds" % timeout
        shown = '%s?timeout=%ds' % (url, timeout)
        ctx = self.pool.context((wh.get("clientConfig") or {}).get("caBundle", ""))
        key = (addr, sni, port, (wh.get("clientConfig") or {}).get("caBundle", ""))
        for attempt in (0, 1):
            conn = self.pool.get(key) if attempt == 0 else None
            reused = conn is not None
            if conn is None:
                conn = _Conn(addr, sni, port, ctx, timeout)
            conn.timeout = timeout
            if conn.sock is not None:
                conn.sock.settimeout(timeout)
            try:
                conn.request("POST", full_path, body=review, headers={
                    "Content-Type": "application/json", "Accept": "application/json, */*",
                    "User-Agent": "kube-apiserver-admission", "Host": "%s:%d" % (sni, port)})
                resp = conn.getresponse()
                data = resp.read()
            except (socket.timeout, TimeoutError):
                conn.close()
                raise WebhookCallError('failed to call webhook: Post "%s": context deadline exceeded' % shown)
            except ssl.SSLCertVerificationError as e:
                conn.close()
                raise WebhookCallError('failed to call webhook: Post "%s": tls: failed to verify certificate: %s'
                                       % (shown, e.verify_message or e))
            except (http.client.HTTPException, OSError) as e:
                conn.close()
                if reused:
                    continue      # the idle connection was closed by the server; retry on a fresh one
                raise WebhookCallError('failed to call webhook: Post "%s": %s' % (shown, e))
            if resp.will_close:
                conn.close()
            else:
                self.pool.put(key, conn)
            break
        if resp.status != 200:
            raise WebhookCallError("received invalid webhook response: expected status 200, got %d: %s"
                                   % (resp.status, data[:200].decode("utf-8", "replace")))
        try:
            out = json.loads(data)
        except ValueError as e:
            raise WebhookCallError("received invalid webhook response: %s" % e)
        if not isinstance(out, dict) or out.get("apiVersion") != "admission.k8s.io/v1" \
                or out.get("kind") != "AdmissionReview":
            raise WebhookCallError("received invalid webhook response: expected webhook response of "
                                   "admission.k8s.io/v1, Kind=AdmissionReview, got %s, Kind=%s"
                                   % ((out or {}).get("apiVersion", "/") if isinstance(out, dict) else "/",
                                      (out or {}).get("kind", "") if isinstance(out, dict) else ""))
        response = out.get("response")
        if not isinstance(response, dict):
            raise WebhookCallError("received invalid webhook response: response is nil")
        if response.get("uid") != request["uid"]:
            raise WebhookCallError('received invalid webhook response: expected response.uid="%s", got "%s"'
                                   % (request["uid"], response.get("uid", "")))
        return response
