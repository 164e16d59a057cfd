#!/usr/bin/env bash
# demo/run.sh: the OTA pre-pull story, narrated, against kubesim.
#
# Usage: demo/run.sh [--fast] [--keep]
#   --fast   a faster simulated clock and no pauses (what `make demo-test` runs)
#   --keep   keep the work directory (logs, kubeconfigs) after the end
# Environment: BUILD (default build), DEMO_TIME_SCALE (simulated seconds per
# real second; default 30, 120 with --fast), DEMO_PAUSE (seconds between
# steps; default 1 on a terminal, else 0), and the loopback ports, each a
# free one unless set: DEMO_KUBESIM_PORT, DEMO_WEBHOOK_PORT,
# DEMO_WEBHOOK_HEALTH_PORT, DEMO_WEBHOOK_METRICS_PORT,
# DEMO_CONTROLLER_HEALTH_PORT, DEMO_CONTROLLER_METRICS_PORT.
#
# It starts kubesim (a Kubernetes API simulator with 4 simulated nodes and a
# slow simulated registry), ota-webhook and ota-controller on free loopback
# ports, applies the manifests rendered by certs/render-manifests.sh, then
# tells the story with the real kubectl and `kubectl ota`, printing each
# command before running it. Every step checks that it did what the
# narration says; the first one that did not ends the demo with exit 1.
# Whatever happens (also Ctrl-C or SIGTERM), the processes it started are
# stopped by their PID and its work directory is removed.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac

FAST=0
KEEP=0
for a in "$@"; do
    case $a in
    --fast) FAST=1 ;;
    --keep) KEEP=1 ;;
    -h | --help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "demo: unknown argument $a (see --help)" >&2; exit 2 ;;
    esac
done
if [ $FAST = 1 ]; then
    SCALE=${DEMO_TIME_SCALE:-120}
    PAUSE=${DEMO_PAUSE:-0}
else
    SCALE=${DEMO_TIME_SCALE:-30}
    if [ -t 1 ]; then PAUSE=${DEMO_PAUSE:-1}; else PAUSE=${DEMO_PAUSE:-0}; fi
fi
NODES=4
NS=edge
DS=edge-agent
REG=registry.example.com/edge
IMG_V1=$REG/agent:1.0
IMG_V2=$REG/agent:2.0      # 2 GiB: the new agent ships an on-device model
IMG_BAD=$REG/agent:2.1     # a typo: the registry has no such tag
BANDWIDTH=4000000          # bytes per simulated second: 32 Mbit/s, an edge link
# Every wait is bounded, in real seconds: the longest (a 2 GiB pull, ~540
# simulated seconds; the failing pull's 900 s deadline) scaled, plus slack.
LONG_WAIT=$((900 / SCALE + 60))

# ------------------------------------------------------------- output

if [ -t 1 ]; then
    B=$'\e[1m' C=$'\e[36m' R=$'\e[31m' G=$'\e[32m' N=$'\e[0m'
else
    B= C= R= G= N=
fi
STEP=0
step() {
    STEP=$((STEP + 1))
    [ "$PAUSE" != 0 ] && sleep "$PAUSE"
    printf '\n%s== %d. %s%s\n' "$B" "$STEP" "$*" "$N"
}
say() { printf '%s\n' "$*" | fold -s -w 78 | sed 's/^/   /'; }
ok() { printf '   %s✔ %s%s\n' "$G" "$*" "$N"; }
fail() {
    printf '\n%sdemo: FAILED at step %d: %s%s\n' "$R" "$STEP" "$*" "$N" >&2
    exit 1
}

# ------------------------------------------------------------- processes

WORK=
PIDS=()        # what we started, stopped by PID at the end
FOLLOW=        # the narrated command running now: its output's last stage
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    # the narrated command running now, if any
    [ -n "$FOLLOW" ] && [ -s "$OUT.pid" ] && kill -TERM "$(cat "$OUT.pid")" 2>/dev/null
    # newest first: the controller and the webhook before the cluster
    local i
    for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
        kill -TERM "${PIDS[i]}" 2>/dev/null
    done
    for p in "${PIDS[@]}"; do
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    if [ -n "$WORK" ] && [ -d "$WORK" ]; then
        if [ $rc = 1 ] && [ -d "$WORK/logs" ]; then # a failed step: show why
            for f in "$WORK"/logs/*.log; do
                echo "--- last lines of $(basename "$f")" >&2
                tail -n 15 "$f" >&2
            done
        fi
        if [ $KEEP = 1 ]; then
            echo "demo: stopped ${#PIDS[@]} processes; work directory kept: $WORK" >&2
        else
            rm -rf "$WORK"
            echo "demo: stopped ${#PIDS[@]} processes, removed $WORK" >&2
        fi
    fi
    exit $rc
}
trap cleanup EXIT
trap 'echo; echo "demo: interrupted" >&2; exit 130' INT
trap 'echo "demo: terminated" >&2; exit 143' TERM

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_http URL SECONDS PID: until URL answers 200 (1: PID exited first or
# SECONDS passed).
wait_http() {
    local end=$((SECONDS + $2))
    until curl -sf -o /dev/null --max-time 2 "$1"; do
        kill -0 "$3" 2>/dev/null || return 1
        [ $SECONDS -ge $end ] && return 1
        sleep 0.2
    done
}

# run [--limit SECONDS] [--as WHO] [--to FILE] CMD...: prints the command
# (as WHO: with KUBECONFIG=WHO.kubeconfig), runs it in $WORK (so kubeconfigs
# are plain names), shows its output as it comes (or writes it to FILE) and
# keeps it in $OUT. Exit status: the command's (124: stopped after SECONDS,
# default 60).
OUT=
run() {
    local who= to= limit=60
    if [ "$1" = --limit ]; then limit=$2; shift 2; fi
    if [ "$1" = --as ]; then who=$2; shift 2; fi
    if [ "$1" = --to ]; then to=$2; shift 2; fi
    local shown
    shown=$(quote "$@")
    [ -n "$who" ] && shown="KUBECONFIG=$who.kubeconfig $shown"
    [ -n "$to" ] && shown="$shown > $to"
    printf '%s$ %s%s\n' "$C" "$shown" "$N"
    OUT=$WORK/out.$STEP.$RANDOM
    if [ -n "$to" ]; then
        local rc=0
        (cd "$WORK" && exec "$@") >"$WORK/$to" 2>"$OUT" </dev/null || rc=$?
        sed 's/^/   /' "$OUT"
        return $rc
    fi
    # In the background and waited for, so that Ctrl-C / SIGTERM reach the
    # trap at once instead of after the command; timeout only bounds the
    # demo, it is not part of the story.
    {
        if [ -n "$who" ]; then
            (cd "$WORK" && KUBECONFIG=$who.kubeconfig exec timeout "$limit" "$@") 2>&1 </dev/null &
        else
            (cd "$WORK" && exec timeout "$limit" "$@") 2>&1 </dev/null &
        fi
        echo $! >"$OUT.pid"
        wait $!
        echo $? >"$OUT.rc"
    } | tee "$OUT" | sed -u 's/^/   /' &
    FOLLOW=$!
    wait "$FOLLOW"
    FOLLOW=
    local rc
    rc=$(cat "$OUT.rc" 2>/dev/null) || rc=1
    [ $rc = 124 ] && echo "   (no answer after $limit s: stopped)"
    return $rc
}
# quote ARGS...: the command line as a shell would need it typed.
quote() {
    local a out=
    for a in "$@"; do
        if [[ $a =~ ^[A-Za-z0-9_./:=,@%+-]+$ ]]; then out+="$a "; else out+="'${a//\'/\'\\\'\'}' "; fi
    done
    printf '%s' "${out% }"
}

# start NAME CMD...: prints the command and starts it in the background (in
# $WORK, output in logs/NAME.log); its PID goes to PIDS. In its own session:
# Ctrl-C signals the terminal's foreground group, and a daemon that got it
# would stop under the step running now (which would then fail, not say
# "interrupted"); the trap stops them, by PID.
start() {
    local name=$1
    shift
    printf '%s$ %s > logs/%s.log 2>&1 &%s\n' "$C" "$(quote "$@")" "$name" "$N"
    (cd "$WORK" && exec setsid "$@") >"$WORK/logs/$name.log" 2>&1 </dev/null &
    PIDS+=($!)
    say "($name: pid $!)"
}
# has [GREP-OPTIONS] PATTERN: the last command's output matches it
# downtime LINE: "Downtime: 18.1s (...)" as "18.1 s here, about 9m3s on
# the cluster's clock".
downtime() {
    awk -v scale="$SCALE" '{
        if (!match($0, /Downtime: [0-9hms.]+/)) { print $0; exit }
        d = substr($0, RSTART + 10, RLENGTH - 10); t = 0
        while (match(d, /^[0-9.]+[hms]/)) {
            n = substr(d, 1, RLENGTH - 1) + 0; u = substr(d, RLENGTH, 1)
            t += (u == "h" ? 3600 : u == "m" ? 60 : 1) * n; d = substr(d, RLENGTH + 1)
        }
        c = int(t * scale + 0.5)
        printf "%.1f s here, about %s%ds on the cluster'"'"'s clock\n", t,
            (c >= 60 ? int(c / 60) "m" : ""), c % 60
    }' <<<"$1"
}
has() {
    local o=()
    while [[ $1 == -* ]]; do o+=("$1"); shift; done
    grep -q "${o[@]}" -e "$1" "$OUT"
}
want() { has "$@" || fail "expected \"${*: -1}\" in the output above"; }

# quiet lookups (not part of the story)
kc() { (cd "$WORK" && KUBECONFIG=admin.kubeconfig kubectl "$@"); }
pod_on() {
    kc get pods -n $NS -l app=$DS --field-selector spec.nodeName="$1" \
        -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.deletionTimestamp}{"\n"}{end}' |
        awk 'NF == 1 { print $1; exit }' # not being deleted
}

# ------------------------------------------------------------- preflight

for p in ota-webhook ota-controller kubectl-ota; do
    [ -x "$BUILD/$p" ] || { echo "demo: $BUILD/$p is missing: run make demo (or make all)" >&2; exit 1; }
done
for t in kubectl python3 openssl curl node; do
    command -v $t >/dev/null || { echo "demo: $t is missing: run make deps" >&2; exit 1; }
done
# `kubectl ota` is found on PATH, as kubectl finds every plugin.
export PATH=$BUILD:$PATH
unset KUBECONFIG
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ota-demo.XXXXXX")
mkdir -p "$WORK/logs"
# Commands run in $WORK, where kubesim writes its kubeconfigs; the
# repository is reachable there as ota-prepull/.
ln -s "$ROOT" "$WORK/ota-prepull"

# ------------------------------------------------------------- the cluster

step "A cluster: kubesim, $NODES edge nodes behind a slow registry"
say "kubesim is a Kubernetes API simulator (tests/kubesim): the real kubectl talks to it, it calls admission webhooks as the kube-apiserver does, and it simulates the DaemonSet and Job controllers and one kubelet per node, pulling from a simulated registry. Its clock runs ${SCALE}x faster than yours: what kubesim reports (ages, pull times in Events) is in simulated time; what kubectl ota measures (elapsed times, downtimes) is on your clock."
cat >"$WORK/registry.json" <<EOF
{
  "includeDefaults": true,
  "defaultBandwidth": $BANDWIDTH,
  "images": [
    {"image": "$IMG_V1", "size": 150000000},
    {"image": "$IMG_V2", "size": 2147483648}
  ],
  "preloadedImages": ["registry.k8s.io/pause:3.10", "busybox:1.36-musl", "$IMG_V1"]
}
EOF
say "Registry: $IMG_V1 (150 MB, already on every node), $IMG_V2 (2 GiB), no $IMG_BAD. Every node pulls at $((BANDWIDTH / 1000000)) MB/s: the 2 GiB image takes about 9 minutes."
# a port the environment names (make demo DEMO_WEBHOOK_PORT=...), else a free one
WH_PORT=${DEMO_WEBHOOK_PORT:-$(free_port)}
WH_HEALTH=${DEMO_WEBHOOK_HEALTH_PORT:-$(free_port)}
WH_METRICS=${DEMO_WEBHOOK_METRICS_PORT:-$(free_port)}
CT_HEALTH=${DEMO_CONTROLLER_HEALTH_PORT:-$(free_port)}
CT_METRICS=${DEMO_CONTROLLER_METRICS_PORT:-$(free_port)}
say "Commands run in the work directory $WORK (the repository is ota-prepull/ there)."
start kubesim ota-prepull/tests/kubesim/run --port "${DEMO_KUBESIM_PORT:-0}" --nodes $NODES --time-scale "$SCALE" \
    --state-dir . --registry-config registry.json \
    --webhook-host "ota-webhook.ota-system.svc=127.0.0.1:$WH_PORT"
KUBESIM_PID=${PIDS[-1]}
end=$((SECONDS + 60))
until grep -q "kubesim ready" "$WORK/logs/kubesim.log"; do
    kill -0 "$KUBESIM_PID" 2>/dev/null || fail "kubesim exited (logs/kubesim.log)"
    [ $SECONDS -ge $end ] && fail "kubesim not ready after 60 s"
    sleep 0.2
done
say "$(grep "kubesim ready" "$WORK/logs/kubesim.log")"
say "kubesim wrote one kubeconfig per identity: admin.kubeconfig (system:masters), controller.kubeconfig (the controller's service account, with only the RBAC the manifests grant it), node-1.kubeconfig .. node-$NODES.kubeconfig (system:node:node-<i>, what a node user or YurtHub holds: the Node authorizer lets it read and write its node's pods only)."
run --as admin kubectl get nodes || fail "kubectl get nodes"
[ "$(grep -c ' Ready ' "$OUT")" = $NODES ] || fail "expected $NODES Ready nodes"

step "ota-prepull: certificates, the webhook, the manifests, the controller"
say "On a real cluster both programs run as the Deployments in manifests/. kubesim stores Deployments but does not run them, so here the same programs run as local processes, and kubesim sends the webhook calls for the Service ota-webhook.ota-system.svc to 127.0.0.1:$WH_PORT (--webhook-host above)."
say "A CA and a serving certificate for ota-webhook.ota-system.svc, and the manifests with that CA in both webhook configurations' caBundle (plus the Secret the Deployment mounts):"
run --to ota-prepull.yaml ota-prepull/certs/render-manifests.sh certs || fail "render-manifests.sh"
run grep -E '^kind:' ota-prepull.yaml
n=$(grep -c 'caBundle: [A-Za-z0-9+/]\{40,\}' "$WORK/ota-prepull.yaml")
[ "$n" -ge 4 ] || fail "expected caBundle in the 4 webhooks of the render, found $n"
ok "caBundle filled in for $n webhooks"
start ota-webhook ota-webhook --tls-cert-file certs/tls.crt --tls-private-key-file certs/tls.key \
    --bind-address "127.0.0.1:$WH_PORT" --health-probe-bind-address "127.0.0.1:$WH_HEALTH" \
    --metrics-bind-address "127.0.0.1:$WH_METRICS"
wait_http "http://127.0.0.1:$WH_HEALTH/readyz" 30 "${PIDS[-1]}" || fail "ota-webhook not ready within 30 s (logs/ota-webhook.log)"
ok "ota-webhook ready"
if ! grep -q '^kind: Namespace' "$WORK/ota-prepull.yaml"; then
    run --as admin kubectl create namespace ota-system || fail "create namespace ota-system"
fi
say "The render holds the controller's ServiceAccount and RBAC too: applied before the controller starts, they are all it may do."
run --as admin kubectl apply -f ota-prepull.yaml || fail "kubectl apply"
want "clusterrole.rbac.authorization.k8s.io/ota-prepull-controller"
want "mutatingwebhookconfiguration.admissionregistration.k8s.io/ota-prepull"
want "validatingwebhookconfiguration.admissionregistration.k8s.io/ota-prepull"
start ota-controller ota-controller --kubeconfig controller.kubeconfig --leader-elect-namespace ota-system \
    --health-probe-bind-address "127.0.0.1:$CT_HEALTH" --metrics-bind-address "127.0.0.1:$CT_METRICS"
wait_http "http://127.0.0.1:$CT_HEALTH/readyz" 30 "${PIDS[-1]}" || fail "ota-controller not ready within 30 s (logs/ota-controller.log)"
ok "ota-controller ready"

# ------------------------------------------------------------- the story

step "The admin publishes an OTA DaemonSet (asking for RollingUpdate, by mistake)"
say "With the annotation apps.openyurt.io/update-strategy: OTA, OpenYurt leaves each pod's upgrade to its node's user, and only for an OnDelete DaemonSet. demo/edge-agent.yaml asks for RollingUpdate: the webhook fixes it and warns."
run --as admin kubectl create namespace $NS || fail "create namespace"
run --as admin kubectl apply -f ota-prepull/demo/edge-agent.yaml || fail "kubectl apply"
want "Warning: .*OnDelete"
run --as admin kubectl get ds $DS -n $NS -o 'jsonpath={.spec.updateStrategy}{"\n"}' || fail "get ds"
grep -qx '{"type":"OnDelete"}' "$OUT" || fail "expected the stored updateStrategy to be {\"type\":\"OnDelete\"}"
ok "the stored DaemonSet is OnDelete"
run --as admin kubectl wait ds/$DS -n $NS --for=jsonpath='{.status.numberReady}'=$NODES --timeout=60s ||
    fail "the DaemonSet's pods did not become ready"
run --as admin kubectl get pods -n $NS -o wide || fail "get pods"
[ "$(grep -c ' Running ' "$OUT")" = $NODES ] || fail "expected $NODES Running pods"

step "The admin publishes version 2.0: every pod is now PendingUpgrade"
say "An OTA DaemonSet's pods are not replaced: ota-controller marks each one PodNeedUpgrade=True with the new ControllerRevision's hash, and waits for the node users."
run --as admin kubectl set image ds/$DS -n $NS agent=$IMG_V2 || fail "set image"
run --as admin kubectl wait pods -n $NS -l app=$DS --for=condition=PodNeedUpgrade --timeout=60s ||
    fail "the pods did not get PodNeedUpgrade=True"
run --as admin kubectl ota list -n $NS || fail "kubectl ota list"
[ "$(grep -c PendingUpgrade "$OUT")" = $NODES ] || fail "expected $NODES pods PendingUpgrade"
P1=$(pod_on node-1) P2=$(pod_on node-2) P3=$(pod_on node-3) P4=$(pod_on node-4)
[ -n "$P1" ] && [ -n "$P2" ] && [ -n "$P3" ] && [ -n "$P4" ] || fail "a node has no edge-agent pod"
say "A node user sees only their node's pods:"
run --as node-1 kubectl ota list -n $NS || fail "kubectl ota list as node-1"
has "$P1" && ! has "$P2" || fail "expected node-1's list to hold $P1 and not $P2"

step "node-1 upgrades without a pre-pull: its agent is down for the whole download"
say "'kubectl ota upgrade' deletes the pod, and the DaemonSet controller recreates it at 2.0. It refuses while the new image is not on the node:"
run --as node-1 kubectl ota upgrade $P1 -n $NS
rc=$?
[ $rc = 7 ] || fail "expected kubectl ota upgrade to refuse (exit 7: not pre-pulled), got $rc"
want "force"
say "node-1's user goes ahead anyway:"
run --limit $LONG_WAIT --as node-1 kubectl ota upgrade $P1 -n $NS --force --wait ||
    fail "kubectl ota upgrade --force --wait"
want -i "downtime"
DOWN1=$(downtime "$(grep -i downtime "$OUT" | tail -n 1)")
N1=$(pod_on node-1)
run --as admin kubectl get events -n $NS --field-selector "involvedObject.name=$N1,reason=Pulled" ||
    fail "get events"
want "Successfully pulled image \"$IMG_V2\""
ok "the new pod waited for the whole pull"

step "node-2 pre-pulls first, then upgrades"
say "'kubectl ota pull' asks for the pre-pull: the status write PodImageReady=False (message controllerrevision: <hash>) that YurtHub's imagepull makes. ota-controller runs a Job pinned to node-2 that pulls the images while the old pod keeps serving."
run --as node-2 kubectl ota pull $P2 -n $NS || fail "kubectl ota pull"
run --limit $LONG_WAIT --as node-2 kubectl ota status $P2 -n $NS --watch || fail "kubectl ota status --watch"
want "Ready"
run --as node-2 kubectl get pod $P2 -n $NS || fail "get pod"
want " Running "
ok "the old pod served all along"
run --limit $LONG_WAIT --as node-2 kubectl ota upgrade $P2 -n $NS --wait || fail "kubectl ota upgrade --wait"
want -i "downtime"
DOWN2=$(downtime "$(grep -i downtime "$OUT" | tail -n 1)")
N2=$(pod_on node-2)
run --as admin kubectl get events -n $NS --field-selector "involvedObject.name=$N2,reason=Pulled" ||
    fail "get events"
want "already present on machine"
ok "the new pod started from the pre-pulled image"
say "Downtime without pre-pull (node-1): $DOWN1"
say "Downtime with pre-pull    (node-2): $DOWN2"

step "A bad image: the admin publishes 2.1, which the registry does not have"
H2=$(kc get pod "$P3" -n $NS -o jsonpath='{.status.conditions[?(@.type=="PodNeedUpgrade")].message}')
run --as admin kubectl set image ds/$DS -n $NS agent=$IMG_BAD || fail "set image"
end=$((SECONDS + 60))
while [ "$(kc get pod "$P3" -n $NS -o jsonpath='{.status.conditions[?(@.type=="PodNeedUpgrade")].message}')" = "$H2" ]; do
    [ $SECONDS -ge $end ] && fail "$P3 still names $H2 after 60 s"
    sleep 0.2
done
say "node-3's user asks for the pre-pull. The registry answers not found, and again on the kubelet's retry: waiting will not help, so the controller ends the Job without waiting for its deadline (900 s), and the pod gets PodImageReady=False, PullImageFail, with the kubelet's reason:"
run --as node-3 kubectl ota pull $P3 -n $NS || fail "kubectl ota pull"
run --limit $LONG_WAIT --as node-3 kubectl ota status $P3 -n $NS --watch
rc=$?
[ $rc = 9 ] || fail "expected kubectl ota status --watch to end with exit 9 (the pre-pull failed), got $rc"
want "Failed"
run --as admin kubectl get pod $P3 -n $NS \
    -o 'jsonpath={range .status.conditions[?(@.type=="PodImageReady")]}{.reason}: {.message}{"\n"}{end}' ||
    fail "get pod"
want "^PullImageFail: pull image job .* failed: ErrImagePull: .*not found"
run --as node-3 kubectl get pod $P3 -n $NS || fail "get pod"
want " Running "
ok "the old pod still serves: nothing was deleted"
say "The admin rolls back to 2.0: the pods already at 2.0 are current again, the others wait for 2.0."
run --as admin kubectl set image ds/$DS -n $NS agent=$IMG_V2 || fail "set image"
end=$((SECONDS + 60))
until [ "$(kc get pod "$P3" -n $NS -o jsonpath='{.status.conditions[?(@.type=="PodNeedUpgrade")].message}')" = "$H2" ]; do
    [ $SECONDS -ge $end ] && fail "$P3 does not name $H2 again after 60 s"
    sleep 0.2
done
run --as admin kubectl ota list -n $NS || fail "kubectl ota list"
[ "$(grep -c Current "$OUT")" = 2 ] && [ "$(grep -c PendingUpgrade "$OUT")" = 2 ] ||
    fail "expected 2 pods Current and 2 PendingUpgrade"

step "node-1's user reaches for node-4's pod: the apiserver refuses"
say "kubesim authorizes as a kube-apiserver with --authorization-mode=Node,RBAC and NodeRestriction: node-1's credentials may read and write node-1's pods only. kubectl ota says so in a sentence (exit 6):"
run --as node-1 kubectl ota pull $P4 -n $NS
rc=$?
[ $rc = 6 ] || fail "expected kubectl ota pull to be refused (exit 6), got $rc"
want "error: pod $NS/$P4 is not on node node-1, or does not exist"
run --as node-1 kubectl ota upgrade $P4 -n $NS --force
rc=$?
[ $rc = 6 ] || fail "expected kubectl ota upgrade --force to be refused (exit 6), got $rc"
want "error: node node-1 may not upgrade pod $NS/$P4: the pod runs on another node"
want "can only delete pods with spec.nodeName set to itself"
say "The same status write with plain kubectl is refused too: kubectl reads pods/status before it patches, and a node may not read another node's pods (its own pods' status it may patch, not read: node users write with kubectl ota or YurtHub). The write itself, NodeRestriction would refuse; the webhook's own-node-only rule says the same, for clusters without NodeRestriction."
run --as node-1 kubectl patch pod $P4 -n $NS --subresource=status --type=strategic \
    -p "{\"status\":{\"conditions\":[{\"type\":\"PodImageReady\",\"status\":\"False\",\"reason\":\"WaitPullImage\",\"message\":\"$H2\"}]}}" &&
    fail "expected the patch to be refused"
want "Forbidden"
run --as admin kubectl ota list -n $NS --node node-4 || fail "kubectl ota list"
want "PendingUpgrade"
ok "node-4's pod is untouched"

step "The end"
say "Downtime of the same upgrade (2 GiB over a 4 MB/s link), from the delete to the replacement Ready:"
say "  without pre-pull: $DOWN1"
say "  with pre-pull:    $DOWN2"
say "Demo complete: every step did what it said."
echo "demo: OK"
