#!/usr/bin/env bash
# render-manifests.sh: the manifests with our own CA, ready for kubectl apply.
#
# Usage: certs/render-manifests.sh CERT_DIR [KUSTOMIZE_DIR]
#   KUSTOMIZE_DIR defaults to manifests/ next to this script.
#
# Prints on stdout `kubectl kustomize KUSTOMIZE_DIR` with
#   - caBundle (CERT_DIR/ca.crt, base64) set in every webhook's clientConfig,
#   - a Secret ota-system/ota-webhook-tls (kubernetes.io/tls) holding
#     CERT_DIR/tls.crt and tls.key, which the webhook Deployment mounts.
# When CERT_DIR has no certificate yet, gen-certs.sh makes one first; an
# existing one is reused, so running it twice prints the same thing.
# For cert-manager (overlays/cert-manager) this script is not needed.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 CERT_DIR [KUSTOMIZE_DIR]" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
certs=$1
dir=${2:-$here/../manifests}

if [ ! -s "$certs/ca.crt" ] || [ ! -s "$certs/tls.crt" ] || [ ! -s "$certs/tls.key" ]; then
    "$here/gen-certs.sh" "$certs"
fi
rendered=$(kubectl kustomize "$dir")

# kustomize prints a clientConfig as "clientConfig:" followed by its keys
# one level deeper; caBundle goes first among them. A caBundle already
# there (a render fed back in) is replaced, not doubled.
inject=$(cat <<'PY'
import base64, re, sys
certs = sys.argv[1]
def b64(name):
    with open("%s/%s" % (certs, name), "rb") as f:
        return base64.b64encode(f.read()).decode()
ca = b64("ca.crt")
out, indent = [], None
for line in sys.stdin.read().splitlines():
    m = re.match(r"^(\s*)(- )?clientConfig:\s*$", line)
    if indent is not None and re.match(r"^%scaBundle:" % re.escape(indent), line):
        continue
    out.append(line)
    indent = None
    if m:
        indent = " " * (len(m.group(1)) + len(m.group(2) or "") + 2)
        out.append("%scaBundle: %s" % (indent, ca))
print("\n".join(out))
print("""---
apiVersion: v1
kind: Secret
metadata:
  name: ota-webhook-tls
  namespace: ota-system
  labels:
    app.kubernetes.io/name: ota-prepull
    app.kubernetes.io/component: webhook
type: kubernetes.io/tls
data:
  tls.crt: %s
  tls.key: %s""" % (b64("tls.crt"), b64("tls.key")))
PY
)
python3 -c "$inject" "$certs" <<<"$rendered"
