"""Errors in the apiserver's shape.

Every failure that reaches a client is an ApiError. It carries the HTTP code
and turns into a meta/v1 `Status` body worded like kube-apiserver's (see
k8s.io/apimachinery/pkg/api/errors), so kubectl prints the familiar
`Error from server (NotFound): pods "x" not found` lines and client code can
switch on `reason`.
"""


class ApiError(Exception):
    def __init__(self, code, reason, message, details=None, retry_after=None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.retry_after = retry_after

    def status(self):
        body = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details is not None:
            body["details"] = self.details
        return body


def _qualified(group, resource):
    return resource if not group else "%s.%s" % (resource, group)


def _details(name, group, resource, causes=None):
    d = {}
    if name:
        d["name"] = name
    if group:
        d["group"] = group
    d["kind"] = resource
    if causes:
        d["causes"] = causes
    return d


def not_found(group, resource, name):
    return ApiError(404, "NotFound", '%s "%s" not found' % (_qualified(group, resource), name),
                    _details(name, group, resource))


def already_exists(group, resource, name):
    return ApiError(409, "AlreadyExists", '%s "%s" already exists' % (_qualified(group, resource), name),
                    _details(name, group, resource))


def conflict(group, resource, name, why):
    return ApiError(409, "Conflict",
                    'Operation cannot be fulfilled on %s "%s": %s' % (_qualified(group, resource), name, why),
                    _details(name, group, resource))


def invalid(kind, group, name, causes):
    """causes: list of (field, reason_type, message) like field.ErrorList."""
    msgs = ["%s: %s" % (f, m) for f, _t, m in causes]
    msg = '%s "%s" is invalid: ' % (kind if not group else "%s.%s" % (kind, group), name)
    msg += msgs[0] if len(msgs) == 1 else "[" + ", ".join(msgs) + "]"
    return ApiError(422, "Invalid", msg,
                    _details(name, group, kind,
                             [{"reason": t, "message": m, "field": f} for f, t, m in causes]))


def bad_request(message):
    return ApiError(400, "BadRequest", message)


def gone(message):
    return ApiError(410, "Expired", message)


def method_not_allowed(message="the server does not allow this method on the requested resource"):
    return ApiError(405, "MethodNotAllowed", message)


def unsupported_media_type(ct, strategic=True):
    """A PATCH of a content type the resource does not take (custom resources take no
    strategic merge patch)."""
    types = "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    if strategic:
        types += ", application/strategic-merge-patch+json"
    return ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - "
                    "accepted media types include: " + types if ct else "missing content type")


def internal(message):
    return ApiError(500, "InternalError", "Internal error occurred: %s" % message,
                    {"causes": [{"message": message}]})


def too_many_requests(retry_after):
    return ApiError(429, "TooManyRequests", "Too many requests, please try again later.",
                    {"retryAfterSeconds": retry_after}, retry_after=retry_after)


def unauthorized():
    return ApiError(401, "Unauthorized", "Unauthorized")


def forbidden(group, resource, name, message):
    """apierrors.NewForbidden: `<resource>[.<group>] "<name>" is forbidden: <message>`, without
    the name when the request names no object, and `forbidden: <message>` when it names no
    resource either (a non-resource path)."""
    if not resource:
        text = "forbidden: %s" % message
    elif not name:
        text = "%s is forbidden: %s" % (_qualified(group, resource), message)
    else:
        text = '%s "%s" is forbidden: %s' % (_qualified(group, resource), name, message)
    return ApiError(403, "Forbidden", text, _details(name, group, resource) if resource else {})
