#!/usr/bin/env bash
# gen-certs.sh: make a CA and a serving certificate for ota-webhook.
#
# Usage: certs/gen-certs.sh OUT_DIR [SERVICE [NAMESPACE]]
#   SERVICE defaults to ota-webhook, NAMESPACE to ota-system.
#
# Writes OUT_DIR/ca.crt, ca.key, tls.crt, tls.key (existing files are
# overwritten). Keys are ECDSA P-256, mode 0600. The CA is valid 10 years,
# the serving certificate 1 year, with the names the kube-apiserver uses to
# reach a webhook Service (<svc>.<ns>.svc is the SNI it sends) plus
# localhost/127.0.0.1/::1 for local runs and tests. The CA goes into the
# webhook configurations' caBundle; cert-manager is the production path.
#
# Prints nothing unless something fails.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 3 ]; then
    echo "usage: $0 OUT_DIR [SERVICE [NAMESPACE]]" >&2
    exit 2
fi

out=$1
svc=${2:-ota-webhook}
ns=${3:-ota-system}

mkdir -p "$out"
work=$(mktemp -d "$out/.gen-certs.XXXXXX")
trap 'rm -rf "$work"' EXIT
# Keys are created under this umask, so they are never world-readable,
# not even for the moment before a chmod.
umask 077

# openssl prints progress and "Certificate request self-signature ok" on
# stderr; keep it and show it only when a command fails.
run() {
    if ! "$@" 2>"$work/err" >/dev/null; then
        echo "$0: failed: $*" >&2
        cat "$work/err" >&2
        exit 1
    fi
}

cat >"$work/ca.cnf" <<EOF
[req]
distinguished_name = dn
prompt = no
[dn]
CN = ${svc}-ca
[v3_ca]
basicConstraints = critical, CA:TRUE, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
EOF

cat >"$work/tls.cnf" <<EOF
[req]
distinguished_name = dn
prompt = no
[dn]
CN = ${svc}.${ns}.svc
[v3_server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
subjectAltName = @alt
[alt]
DNS.1 = ${svc}
DNS.2 = ${svc}.${ns}
DNS.3 = ${svc}.${ns}.svc
DNS.4 = ${svc}.${ns}.svc.cluster.local
DNS.5 = localhost
IP.1 = 127.0.0.1
IP.2 = ::1
EOF

run openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 \
    -out "$work/ca.key"
run openssl req -x509 -new -sha256 -days 3650 -key "$work/ca.key" \
    -config "$work/ca.cnf" -extensions v3_ca -out "$work/ca.crt"

run openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 \
    -out "$work/tls.key"
run openssl req -new -sha256 -key "$work/tls.key" -config "$work/tls.cnf" \
    -out "$work/tls.csr"
# A random serial: two runs must never issue the same serial from a CA
# that a client might already trust under the same name.
run openssl x509 -req -sha256 -days 365 -in "$work/tls.csr" \
    -CA "$work/ca.crt" -CAkey "$work/ca.key" -set_serial "0x$(openssl rand -hex 16)" \
    -extfile "$work/tls.cnf" -extensions v3_server -out "$work/tls.crt"

run openssl verify -CAfile "$work/ca.crt" "$work/tls.crt"

chmod 0644 "$work/ca.crt" "$work/tls.crt"
chmod 0600 "$work/ca.key" "$work/tls.key"
# rename(2) within one directory: a reader never sees a half-written file.
for f in ca.crt ca.key tls.crt tls.key; do
    mv -f "$work/$f" "$out/$f"
done
