"""kubesim: a Kubernetes API simulator for tests (see ../README.md).

api.py is the in-process API (routing, storage, admission), server.py the
HTTPS front end kubectl talks to, sim/ the simulated cluster (controllers and
kubelets) that acts through api.py.
"""
