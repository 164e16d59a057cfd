#!/usr/bin/env bash
# A base image made from Debian's packages on this machine, for builds with
# podman where no container registry is reachable (images/build.sh):
#
#   images/base.sh NAME [PACKAGE...]
#
# mmdebstrap --variant=minbase bookworm with PACKAGEs included, imported
# into the project's podman storage (images/podman.sh) as
# localhost/ota-prepull-base/NAME:KEY, KEY a hash of the suite, the variant,
# the package list and this script.  An image with that tag is reused, so
# only the first build after a change of the list pays for mmdebstrap.
# Prints the tag on stdout; mmdebstrap's output only when it fails (stderr).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
name=$1
shift
suite=bookworm
pkgs=$(printf '%s\n' "$@" | sort -u | tr '\n' ' ')
key=$( { echo "$suite minbase $pkgs"; cat "$0"; } | sha256sum | cut -c1-16)
tag=localhost/ota-prepull-base/$name:$key
podman=$here/podman.sh
if "$podman" image exists "$tag"; then
    echo "$tag"
    exit 0
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/ota-base.XXXXXX")
trap 'rm -rf "$work"' EXIT
include=$(printf '%s\n' "$@" | sort -u | paste -sd,)
# The chroot's apt sources are mmdebstrap's defaults for a stable suite
# (the release, -updates, -security), which apt inside the image then uses;
# stdin is closed so that it never reads sources from there.
# Documentation and locales are left out as in Debian's -slim images, and
# /usr is merged by mmdebstrap's merged-usr hook (symlinks and the
# usr-is-merged package) as in Debian's own bookworm images: without it
# bookworm's init-system-helpers pulls in usrmerge, and with it perl (the
# runtime base was 127 MB with them, 78 MB without).
echo "images: making base $tag (mmdebstrap $suite minbase${include:+ + $include})" >&2
log=$work/mmdebstrap.log
if ! mmdebstrap --quiet --variant=minbase ${include:+--include="$include"} \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    "$suite" "$work/rootfs.tar" </dev/null >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "images: mmdebstrap failed (its last lines above)" >&2
    exit 1
fi
"$podman" import --quiet "$work/rootfs.tar" "$tag" >/dev/null
# The bases this one replaces (another package list) are not kept, but for
# one an image still uses (rmi refuses it).
"$podman" images --format '{{.Repository}}:{{.Tag}}' "localhost/ota-prepull-base/$name" |
    while read -r old; do
        [ "$old" = "$tag" ] || "$podman" rmi "$old" >/dev/null 2>&1 || true
    done
echo "$tag"
