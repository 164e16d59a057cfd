#!/usr/bin/env bash
# The two images (images/*/Dockerfile), as `make images` builds them:
#
#   images/build.sh [docker|podman]
#
# with IMAGE_PREFIX, IMAGE_TAG, OTA_VERSION and OTA_COMMIT from the
# environment (the Makefile passes its own).  Without an argument: docker
# where its daemon answers, else podman, else nothing (said, exit 0).
#
# docker builds the Dockerfiles as they are (debian:bookworm and
# debian:bookworm-slim from its registry).  podman runs as images/podman.sh
# sets it up (the project's storage under build/podman/, runc, no bridge
# network) and builds from bases made here from Debian's packages
# (images/base.sh, cached by package list): a "build" base with every
# Dockerfile's BUILD_PACKAGES, and a bare minbase "runtime" base, the
# counterpart of -slim, to which each runtime stage adds its libraries.
# Builds use the host's network (for apt in the runtime stage) and never
# pull (--pull=never): no container registry is reachable from here.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
prefix=${IMAGE_PREFIX-ota-prepull/}
tag=${IMAGE_TAG:-$(cat "$root/VERSION")}
programs="ota-webhook ota-controller"

engine=${1:-}
if [ -z "$engine" ]; then
    if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
        engine=docker
    elif command -v podman >/dev/null 2>&1; then
        engine=podman
    else
        echo "images: docker does not answer here and podman is not installed" \
            "(make deps installs it); nothing built"
        exit 0
    fi
fi

args=()
[ -n "${OTA_VERSION:-}" ] && args+=(--build-arg "OTA_VERSION=$OTA_VERSION")
[ -n "${OTA_COMMIT:-}" ] && args+=(--build-arg "OTA_COMMIT=$OTA_COMMIT")

case $engine in
docker)
    build=(docker build)
    ;;
podman)
    # The union of the Dockerfiles' BUILD_PACKAGES lines: one build base.
    pkgs=$(sed -n 's/^ARG BUILD_PACKAGES="\(.*\)"$/\1/p' "$here"/*/Dockerfile | tr ' ' '\n' | sort -u)
    # Both bases at once; either failing fails the build.
    SECONDS=0
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/ota-images.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    # shellcheck disable=SC2086 # one argument per package
    "$here/base.sh" build $pkgs >"$tmp/build" &
    b=$!
    "$here/base.sh" runtime >"$tmp/runtime" &
    r=$!
    wait $b || { wait $r; exit 1; }
    wait $r
    build_base=$(cat "$tmp/build") runtime_base=$(cat "$tmp/runtime")
    echo "images: bases $build_base $runtime_base (${SECONDS}s)"
    build=("$here/podman.sh" build --network host --pull=never)
    args+=(--build-arg "BUILD_BASE=$build_base" --build-arg "RUNTIME_BASE=$runtime_base")
    ;;
*)
    echo "usage: images/build.sh [docker|podman]" >&2
    exit 2
    ;;
esac

cd "$root"
for p in $programs; do
    echo "images: $engine build $prefix$p:$tag"
    SECONDS=0
    "${build[@]}" "${args[@]}" -f "images/$p/Dockerfile" -t "$prefix$p:$tag" .
    echo "images: $prefix$p:$tag built (${SECONDS}s)"
done
