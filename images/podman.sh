#!/usr/bin/env bash
# podman with the project's own configuration (images/podman/) and storage
# (build/podman/, or $OTA_PODMAN_DIR): rootful, overlay, runc, no network
# unless asked.  `make clean` removes the storage with the rest of build/.
#
#   images/podman.sh images
#   images/podman.sh run --rm localhost/ota-prepull/ota-webhook:0.1.0 --version
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
state=${OTA_PODMAN_DIR:-$(dirname "$here")/build/podman}
mkdir -p "$state/tmp"
# storage.conf wants absolute paths, so it is written here, under build/.
conf="driver = \"overlay\"
graphroot = \"$state/storage\"
runroot = \"$state/run\""
printf '[storage]\n%s\n' "$conf" | cmp -s - "$state/storage.conf" ||
    printf '[storage]\n%s\n' "$conf" >"$state/storage.conf"
# containers.conf as written, with build/podman/'s path filled in and its
# ulimits never above the hard limits podman itself runs under: runc
# refuses to raise them ("error setting rlimits ... operation not
# permitted").
nofile=$(ulimit -Hn) nproc=$(ulimit -Hu)
[ "$nofile" = unlimited ] || [ "$nofile" -gt 20000 ] && nofile=20000
[ "$nproc" = unlimited ] || [ "$nproc" -gt 4096 ] && nproc=4096
sed -e "s/^default_ulimits = .*/default_ulimits = [\"nofile=$nofile:$nofile\", \"nproc=$nproc:$nproc\"]/" \
    -e "s|@STATE@|$state|g" "$here/podman/containers.conf" >"$state/containers.conf.$$"
mv "$state/containers.conf.$$" "$state/containers.conf"
export CONTAINERS_CONF=$state/containers.conf
export CONTAINERS_STORAGE_CONF=$state/storage.conf
export CONTAINERS_REGISTRIES_CONF=$here/podman/registries.conf
exec podman --root "$state/storage" --runroot "$state/run" --tmpdir "$state/tmp" \
    --storage-driver overlay --runtime runc --cgroup-manager cgroupfs \
    --events-backend file "$@"
