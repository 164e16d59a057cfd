"""The simulator's own CA and serving certificate, made with the openssl CLI.

`run` calls `make_serving_cert(state_dir)` at start: a fresh ECDSA P-256 CA
(ca.crt/ca.key) and a serving certificate for localhost / 127.0.0.1 /
kubernetes.default.svc signed by it (apiserver.crt/apiserver.key). The CA
goes into every kubeconfig as certificate-authority-data, so kubectl verifies
the server the way it verifies a real one.
"""
import os
import subprocess

SANS = "DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:127.0.0.1,IP:::1"


def _openssl(*args, cwd=None):
    subprocess.run(["openssl"] + list(args), cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE)


def make_ca(directory, name="kubesim-ca", prefix="ca"):
    key = os.path.join(directory, prefix + ".key")
    crt = os.path.join(directory, prefix + ".crt")
    _openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key)
    _openssl("req", "-x509", "-new", "-key", key, "-sha256", "-days", "3650", "-subj", "/CN=" + name,
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
             "-out", crt)
    return crt, key


def make_leaf(directory, ca_crt, ca_key, cn, sans, prefix):
    key = os.path.join(directory, prefix + ".key")
    csr = os.path.join(directory, prefix + ".csr")
    crt = os.path.join(directory, prefix + ".crt")
    ext = os.path.join(directory, prefix + ".ext")
    _openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key)
    _openssl("req", "-new", "-key", key, "-subj", "/CN=" + cn, "-out", csr)
    with open(ext, "w") as f:
        f.write("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
                "extendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=%s\n" % sans)
    _openssl("x509", "-req", "-in", csr, "-CA", ca_crt, "-CAkey", ca_key, "-CAcreateserial", "-days", "3650",
             "-sha256", "-extfile", ext, "-out", crt)
    os.unlink(csr)
    os.unlink(ext)
    return crt, key


def make_serving_cert(directory):
    """Returns (ca_crt, server_crt, server_key) paths inside directory."""
    os.makedirs(directory, exist_ok=True)
    ca_crt, ca_key = make_ca(directory)
    crt, key = make_leaf(directory, ca_crt, ca_key, "kube-apiserver", SANS, "apiserver")
    return ca_crt, crt, key
