"""The in-process users the simulated cluster acts as.

They come from kubesim.api (the API server's module) so that the server sees exactly the
identities it defines; the fallback only lets this package be used before that module
exists (and by the fake API in testing.py).
"""

import collections

try:
    from kubesim.api import User, SYSTEM_DS_CONTROLLER, SYSTEM_JOB_CONTROLLER, SYSTEM_GC
except ImportError:
    User = collections.namedtuple("User", "name groups")
    _SA = ["system:serviceaccounts", "system:serviceaccounts:kube-system",
           "system:authenticated"]
    SYSTEM_DS_CONTROLLER = User("system:serviceaccount:kube-system:daemon-set-controller", _SA)
    SYSTEM_JOB_CONTROLLER = User("system:serviceaccount:kube-system:job-controller", _SA)
    SYSTEM_GC = User("system:serviceaccount:kube-system:generic-garbage-collector", _SA)


def node_user(node):
    return User("system:node:" + node, ["system:nodes", "system:authenticated"])
