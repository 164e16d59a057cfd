#!/usr/bin/env bash
# A scripted session with the real kubectl against kubesim:
# apply a DaemonSet from YAML, list pods -o wide, patch a pod's status with
# --subresource=status, delete a pod and watch it come back, describe a pod
# with its events; a CustomResourceDefinition and its custom resources; the
# upstream ImagePullJob and ImageCache CRDs with their samples (when
# ../shared/upstream is beside the repository);
# authorization (can-i --list as each identity, the Node authorizer's field
# selector rule, a Role for the controller). Prints "ok - ..." / "not ok - ..." per check and a final
# "session: N passed, N failed" line; exits non-zero on any failure.
# The parts that need the simulated cluster (kubesim.sim) are skipped, with a
# message, when that package is missing.
set -u
HERE=$(cd "$(dirname "$0")/.." && pwd)
PASS=0
FAIL=0
SKIP=0
WORK=$(mktemp -d /tmp/kubesim-session.XXXXXX)
KS_PID=
cleanup() {
    if [ -n "$KS_PID" ] && kill -0 "$KS_PID" 2>/dev/null; then
        kill -TERM "$KS_PID" 2>/dev/null
        for _ in $(seq 50); do kill -0 "$KS_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$KS_PID" 2>/dev/null
    fi
    [ -n "${WATCH_PID:-}" ] && kill "$WATCH_PID" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT

ok() { PASS=$((PASS + 1)); echo "ok - $*"; }
not_ok() { FAIL=$((FAIL + 1)); echo "not ok - $*"; }
skip() { SKIP=$((SKIP + 1)); echo "skip - $*"; }
check() {   # check "description" command...
    local what=$1; shift
    if "$@" >"$WORK/out" 2>&1; then ok "$what"; else not_ok "$what"; sed 's/^/    /' "$WORK/out" | tail -20; fi
}
contains() { grep -q -- "$2" <<<"$1"; }
# wait_until SECONDS command...: retries every 0.5 s
wait_until() {
    local secs=$1; shift
    local end=$((SECONDS + secs))
    while [ $SECONDS -lt $end ]; do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.5
    done
    return 1
}
k() { timeout 30 kubectl --kubeconfig "$WORK/state/admin.kubeconfig" "$@"; }

if ! command -v kubectl >/dev/null; then
    echo "skip - kubectl is not installed"; echo "session: 0 passed, 0 failed"; exit 0
fi
SIM=yes
if ! (cd "$HERE" && python3 -c "import kubesim.sim; kubesim.sim.start") 2>/dev/null; then
    SIM=no
fi

# ---- start kubesim, through the launcher every suite uses (tests/lib/kubesim_launch.py):
# it prints kubesim's ready line, passes SIGTERM on and exits with kubesim's status
python3 "$HERE/../lib/kubesim_launch.py" --state-dir "$WORK/state" --nodes 2 --time-scale 1 \
    >"$WORK/run.out" 2>"$WORK/run.err" &
KS_PID=$!
if wait_until 30 grep -q "kubesim ready" "$WORK/run.out"; then
    ok "kubesim started: $(head -1 "$WORK/run.out")"
else
    not_ok "kubesim did not start"; cat "$WORK/run.err"; echo "session: $PASS passed, $FAIL failed"; exit 1
fi

# ---- discovery and version
out=$(k version 2>&1)
check "kubectl version reaches the server over TLS with the generated CA" contains "$out" "Server Version: v1.32"
out=$(k api-resources 2>&1)
check "api-resources lists daemonsets, pods, jobs, leases" bash -c \
    'for r in daemonsets pods jobs leases mutatingwebhookconfigurations; do grep -q "^$r " <<<"$0" || exit 1; done' "$out"
out=$(timeout 30 kubectl --kubeconfig "$WORK/state/controller.kubeconfig" auth whoami 2>&1)
check "controller.kubeconfig authenticates as the controller's service account" contains "$out" \
    "Username *system:serviceaccount:ota-system:ota-controller"
out=$(timeout 30 kubectl --kubeconfig "$WORK/state/node-1.kubeconfig" auth whoami 2>&1)
check "node-1.kubeconfig authenticates as the node" contains "$out" "Username *system:node:node-1"

# ---- typed kubectl create commands (protobuf bodies)
out=$(k create namespace edge 2>&1)
check "kubectl create namespace (protobuf body)" contains "$out" "namespace/edge created"
out=$(k -n edge create secret docker-registry regcred --docker-server=registry.example:5000 \
    --docker-username=u --docker-password=p 2>&1)
check "kubectl create secret docker-registry" contains "$out" "secret/regcred created"
out=$(k -n edge get secret regcred -o jsonpath='{.type} {.data.\.dockerconfigjson}' 2>&1)
check "the pull secret is stored with its type and data" bash -c \
    'grep -q "^kubernetes.io/dockerconfigjson " <<<"$0" && grep -q "registry.example:5000" <<<"$(base64 -d <<<"${0#* }")"' "$out"
out=$(k delete namespace edge 2>&1)
check "kubectl delete namespace" contains "$out" 'namespace "edge" deleted'

# ---- apply a DaemonSet from YAML
cat >"$WORK/ds.yaml" <<'YAML'
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
  namespace: default
  annotations:
    apps.openyurt.io/update-strategy: OTA
spec:
  selector:
    matchLabels: {app: agent}
  updateStrategy: {type: OnDelete}
  template:
    metadata:
      labels: {app: agent}
    spec:
      tolerations: [{operator: Exists}]
      containers:
      - name: agent
        image: busybox:1.36
YAML
out=$(k apply -f "$WORK/ds.yaml" 2>&1)
check "kubectl apply -f ds.yaml creates the DaemonSet" contains "$out" "daemonset.apps/agent created"
out=$(k apply -f "$WORK/ds.yaml" 2>&1)
check "re-apply is unchanged" contains "$out" "daemonset.apps/agent unchanged"
sed 's/image: busybox/imagee: busybox/' "$WORK/ds.yaml" >"$WORK/ds-bad.yaml"
out=$(k apply -f "$WORK/ds-bad.yaml" 2>&1)
check "strict field validation rejects an unknown field" contains "$out" \
    'strict decoding error: unknown field "spec.template.spec.containers\[0\].imagee"'
out=$(k get ds agent 2>&1)
check "get ds prints the DaemonSet columns" contains "$out" "NAME *DESIRED *CURRENT *READY *UP-TO-DATE *AVAILABLE *NODE SELECTOR *AGE"

if [ "$SIM" = no ]; then
    skip "the simulated cluster (kubesim.sim) is not present: pods, status patch, delete/recreate and describe are skipped"
    k delete ds agent >/dev/null 2>&1
else
    # ---- pods appear, one per node
    two_running() { [ "$(k get pods -l app=agent --no-headers 2>/dev/null | grep -c ' Running ')" = 2 ]; }
    if wait_until 60 two_running; then ok "one Running pod per node"; else not_ok "pods did not become Running"; k get pods -o wide; fi
    out=$(k get pods -o wide 2>&1)
    echo "$out" | sed 's/^/    /'
    check "get pods -o wide has the wide columns" contains "$out" "NAME *READY *STATUS *RESTARTS *AGE *IP *NODE *NOMINATED NODE *READINESS GATES"
    check "pods are spread over node-1 and node-2" bash -c 'grep -q " node-1 " <<<"$0" && grep -q " node-2 " <<<"$0"' "$out"
    POD=$(k get pods -l app=agent --field-selector spec.nodeName=node-1 -o jsonpath='{.items[0].metadata.name}')
    check "field selector spec.nodeName finds the node-1 pod" test -n "$POD"

    # ---- status patch through the subresource
    out=$(k patch pod "$POD" --subresource=status --type=strategic \
        -p '{"status":{"conditions":[{"type":"PodImageReady","status":"False","message":"controllerrevision: abc"}]}}' 2>&1)
    check "kubectl patch --subresource=status" contains "$out" "pod/$POD patched"
    conds=$(k get pod "$POD" -o jsonpath='{range .status.conditions[*]}{.type}={.status};{end}')
    check "the condition was merged by type (kubelet's Ready kept)" bash -c \
        'grep -q "PodImageReady=False;" <<<"$0" && grep -q "Ready=True;" <<<"$0"' "$conds"
    k patch pod "$POD" --type=merge -p '{"status":{"phase":"Failed"}}' >/dev/null 2>&1
    phase=$(k get pod "$POD" -o jsonpath='{.status.phase}')
    check "a patch of the main resource does not change status" test "$phase" = Running

    # ---- delete a pod and watch it come back
    timeout 60 kubectl --kubeconfig "$WORK/state/admin.kubeconfig" get pods -w -o wide >"$WORK/watch.out" 2>&1 &
    WATCH_PID=$!
    sleep 1
    out=$(k delete pod "$POD" 2>&1)
    check "kubectl delete pod waits for the kubelet and reports deletion" contains "$out" "pod \"$POD\" deleted"
    new_pod() {
        k get pods -l app=agent --field-selector spec.nodeName=node-1 --no-headers 2>/dev/null |
            grep -v "^$POD " | grep -q " Running "
    }
    if wait_until 60 new_pod; then ok "a new pod comes back Running on node-1"; else not_ok "no replacement pod"; fi
    NEW=$(k get pods -l app=agent --field-selector spec.nodeName=node-1 -o jsonpath='{.items[0].metadata.name}')
    sleep 1
    kill "$WATCH_PID" 2>/dev/null; wait "$WATCH_PID" 2>/dev/null; WATCH_PID=
    sed 's/^/    /' "$WORK/watch.out"
    check "the watch showed the old pod Terminating" grep -q "^$POD .*Terminating" "$WORK/watch.out"
    check "the watch showed the new pod Running" grep -q "^$NEW .*Running" "$WORK/watch.out"
    rev=$(k get pod "$NEW" -o jsonpath='{.metadata.labels.controller-revision-hash}')
    check "the new pod carries the controller-revision-hash label" test -n "$rev"

    # ---- describe a pod with its events
    out=$(k describe pod "$NEW" 2>&1)
    echo "$out" | tail -8 | sed 's/^/    /'
    check "describe shows the node and the owner" bash -c \
        'grep -q "^Node: *node-1/" <<<"$0" && grep -q "^Controlled By: *DaemonSet/agent" <<<"$0"' "$out"
    check "describe lists the kubelet's events" bash -c \
        'grep -q "^Events:" <<<"$0" && grep -q "Started .*container agent" <<<"$0"' "$out"
    out=$(k get events --field-selector "involvedObject.name=$NEW" 2>&1)
    check "get events with an involvedObject field selector" contains "$out" "pod/$NEW"
    out=$(k describe ds agent 2>&1)
    check "describe ds counts the pods" contains "$out" "Pods Status: *2 Running"

    # ---- set image makes a new revision
    k set image ds/agent agent=busybox:1.37 >/dev/null 2>&1
    revs() { [ "$(k get controllerrevisions --no-headers 2>/dev/null | wc -l)" -ge 2 ]; }
    check "kubectl set image creates a second ControllerRevision" wait_until 30 revs
    out=$(k delete ds agent 2>&1)
    check "delete ds" contains "$out" 'daemonset.apps "agent" deleted'
    gone() { [ -z "$(k get pods -l app=agent --no-headers 2>/dev/null)" ]; }
    check "the garbage collector removes the DaemonSet's pods" wait_until 60 gone
fi

# ---- a CustomResourceDefinition: two versions (v1beta1 stored), status subresource, printer columns
crd_version() {   # crd_version NAME STORAGE
    cat <<YAML
  - name: $1
    served: true
    storage: $2
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Image, type: string, jsonPath: .spec.image}
    - {name: Mode, type: string, jsonPath: .spec.mode}
    - {name: Phase, type: string, jsonPath: .status.phase}
    - {name: Replicas, type: integer, jsonPath: .spec.replicas, priority: 1}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [image]
            properties:
              image: {type: string, description: The image the widget pulls.}
              mode: {type: string, enum: [Once, Always], default: Once, description: How often the widget pulls.}
              replicas: {type: integer, default: 1}
          status:
            type: object
            properties:
              phase: {type: string}
YAML
}
{
    cat <<'YAML'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, kind: Widget, shortNames: [wd]}
  versions:
YAML
    crd_version v1alpha1 false
    crd_version v1beta1 true
} >"$WORK/crd.yaml"
widget_yaml() {   # widget_yaml NAME SPEC
    printf 'apiVersion: example.com/v1alpha1\nkind: Widget\nmetadata: {name: %s}\nspec: %s\n' "$1" "$2"
}
out=$(k apply -f "$WORK/crd.yaml" 2>&1)
check "kubectl apply creates the CRD" contains "$out" "customresourcedefinition.apiextensions.k8s.io/widgets.example.com created"
out=$(k wait --for condition=established --timeout=20s crd/widgets.example.com 2>&1)
check "kubectl wait --for condition=established" contains "$out" "condition met"
out=$(widget_yaml one '{image: busybox:1.36}' | k apply -f - 2>&1)
check "a valid Widget is created (v1alpha1)" contains "$out" "widget.example.com/one created"
out=$(widget_yaml bad '{image: busybox:1.36, mode: Sometimes}' | k apply -f - 2>&1)
check "an enum violation is refused" contains "$out" \
    'The Widget "bad" is invalid: spec.mode: Unsupported value: "Sometimes": supported values: "Once", "Always"'
out=$(widget_yaml bad '{mode: Once}' | k apply -f - 2>&1)
check "a missing required field is refused" contains "$out" 'spec.image: Required value'
out=$(widget_yaml bad '{image: busybox:1.36, colour: red}' | k apply -f - 2>&1)
check "apply sends fieldValidation=Strict for the custom resource" contains "$out" \
    'Widget in version "v1alpha1" cannot be handled as a Widget: strict decoding error: unknown field "spec.colour"'
out=$(k get widgets.v1alpha1.example.com one -o jsonpath='{.apiVersion} {.spec.mode} {.spec.replicas}' 2>&1)
check "read as v1alpha1, with the schema's defaults" test "$out" = "example.com/v1alpha1 Once 1"
out=$(k get widgets.v1beta1.example.com one -o jsonpath='{.apiVersion} {.spec.image}' 2>&1)
check "the same object read as v1beta1" test "$out" = "example.com/v1beta1 busybox:1.36"
out=$(k patch wd one -p '{"spec":{"replicas":2}}' 2>&1)
check "a strategic merge patch of a custom resource is refused (415)" contains "$out" \
    'application/strategic-merge-patch+json is not supported by example.com/v1beta1, Kind=Widget'
k patch wd one --subresource=status --type=merge -p '{"status":{"phase":"Pulled"}}' >/dev/null 2>&1
k patch wd one --type=merge -p '{"spec":{"mode":"Always"},"status":{"phase":"Ignored"}}' >/dev/null 2>&1
out=$(k get wd one -o jsonpath='{.status.phase} {.spec.mode} {.metadata.generation}' 2>&1)
check "status only through /status; spec changes bump generation" test "$out" = "Pulled Always 2"
out=$(k get widgets 2>&1)
check "get shows the printer columns" bash -c 'grep -q "^NAME *IMAGE *MODE *PHASE *AGE$" <<<"$0" &&
    grep -q "^one *busybox:1.36 *Always *Pulled " <<<"$0"' "$out"
out=$(k get widgets -o wide 2>&1)
check "get -o wide adds the priority-1 column" contains "$out" "^NAME *IMAGE *MODE *PHASE *REPLICAS *AGE$"
timeout 20 kubectl --kubeconfig "$WORK/state/admin.kubeconfig" get widgets -w >"$WORK/wwatch.out" 2>&1 &
WATCH_PID=$!
sleep 1
k patch wd one --type=merge -p '{"spec":{"image":"nginx:1.27"}}' >/dev/null 2>&1
wait_until 10 grep -q "^one *nginx:1.27" "$WORK/wwatch.out"
kill "$WATCH_PID" 2>/dev/null; wait "$WATCH_PID" 2>/dev/null; WATCH_PID=
check "get -w prints the change in the printer columns" grep -q "^one *nginx:1.27 *Always *Pulled" "$WORK/wwatch.out"
out=$(k explain widgets.spec.mode 2>&1)
check "kubectl explain reads the CRD schema" bash -c 'grep -q "FIELD: mode <string>" <<<"$0" &&
    grep -q "How often the widget pulls." <<<"$0"' "$out"
out=$(k delete crd widgets.example.com 2>&1)
check "kubectl delete crd" contains "$out" 'customresourcedefinition.apiextensions.k8s.io "widgets.example.com" deleted'
out=$(k api-resources 2>&1)
check "the custom resource is gone from discovery" bash -c '! grep -q "^widgets " <<<"$0" && grep -q "^pods " <<<"$0"' "$out"
out=$(k get --raw /apis/example.com/v1beta1/namespaces/default/widgets 2>&1)
check "and from the API" contains "$out" "NotFound"
# ---- the upstream CRDs the next resources serve, applied unchanged (from
# ../shared/upstream beside the repository, where CI has it; skipped without)
UP=$(cd "$HERE/../.." && pwd)/../shared/upstream
if [ -d "$UP/kruise" ] && [ -d "$UP/kube-fledged" ]; then
    out=$(k apply -f "$UP/kruise/v1.9.0/apps.kruise.io_imagepulljobs.yaml" \
        -f "$UP/kube-fledged/kubefledged-crd.yaml" 2>&1)
    check "the upstream ImagePullJob (v1.9.0) and ImageCache CRDs apply" bash -c \
        'grep -q "imagepulljobs.apps.kruise.io created" <<<"$0" && grep -q "imagecaches.kubefledged.io created" <<<"$0"' "$out"
    check "both are established" k wait --for condition=established --timeout=20s \
        crd/imagepulljobs.apps.kruise.io crd/imagecaches.kubefledged.io
    out=$(k apply -f "$UP/kruise/docs-samples/imagepulljob.md-v1.9-job-with-always.v1beta1.yaml" 2>&1)
    check "Kruise's documentation sample (v1beta1) is accepted" contains "$out" \
        "imagepulljob.apps.kruise.io/job-with-always created"
    out=$(k get imagepulljobs 2>&1)
    check "kubectl get imagepulljobs prints the upstream columns" grep -Eq \
        '^NAME +TOTAL +ACTIVE +SUCCEED +FAILED +AGE' <<<"$out"
    out=$(k get imagepulljobs.v1alpha1.apps.kruise.io job-with-always -o jsonpath='{.apiVersion} {.spec.image}' 2>&1)
    check "the sample reads as v1alpha1 too" test "$out" = "apps.kruise.io/v1alpha1 nginx:1.9.1"
    k create namespace kube-fledged >/dev/null 2>&1
    out=$(k apply -f "$UP/kube-fledged/kubefledged-imagecache.yaml" 2>&1)
    check "kube-fledged's sample ImageCache is accepted" contains "$out" \
        "imagecache.kubefledged.io/imagecache1 created"
    k delete crd imagepulljobs.apps.kruise.io imagecaches.kubefledged.io >/dev/null 2>&1
else
    skip "the upstream CRDs: $UP not found"
fi
# ---- authorization: RBAC, the Node authorizer, kubectl auth can-i
as() { local who=$1; shift; timeout 30 kubectl --kubeconfig "$WORK/state/$who.kubeconfig" "$@"; }
out=$(as admin auth can-i --list 2>&1)
check "can-i --list as admin: everything (cluster-admin to system:masters)" grep -Eq '^\*\.\* +\[\] +\[\] +\[\*\]' <<<"$out"
out=$(as user auth can-i --list 2>&1)
check "can-i --list as jane: system:basic-user and system:discovery only" bash -c \
    'grep -q "^selfsubjectaccessreviews.authorization.k8s.io .*\[create\]" <<<"$0" &&
     grep -q "\[/apis/\*\] .*\[get\]" <<<"$0" && ! grep -q "^\*\.\*" <<<"$0" && ! grep -q "^pods" <<<"$0"' "$out"
out=$(as node-1 auth can-i --list 2>&1)
check "can-i --list as node-1: RBAC's rules, marked incomplete (the Node authorizer lists none)" bash -c \
    'grep -q "^Warning: the list may be incomplete: node authorizer does not support user rule resolution" <<<"$0" &&
     grep -q "^selfsubjectreviews.authentication.k8s.io" <<<"$0"' "$out"
out=$(as controller auth can-i --list -n ota-system 2>&1)
check "can-i --list as the controller before any Role: no pods" bash -c '! grep -q "^pods " <<<"$0"' "$out"
k create namespace ota-system >/dev/null 2>&1
k -n ota-system create role pod-reader --verb=get,list,watch --resource=pods >/dev/null 2>&1
k -n ota-system create rolebinding ctl-pods --role=pod-reader \
    --serviceaccount=ota-system:ota-controller >/dev/null 2>&1
out=$(as controller auth can-i --list -n ota-system 2>&1)
check "can-i --list as the controller after a Role and RoleBinding: pods get/list/watch" \
    grep -Eq '^pods +\[\] +\[\] +\[get list watch\]' <<<"$out"
out=$(as controller get pods -n ota-system 2>&1)
check "the controller lists pods in ota-system" contains "$out" "No resources found"
out=$(as controller get pods -n default 2>&1)
check "... but not in default" contains "$out" \
    'pods is forbidden: User "system:serviceaccount:ota-system:ota-controller" cannot list resource "pods" in API group "" in the namespace "default"'
out=$(as node-1 get pods -A 2>&1)
check "node-1: get pods -A is forbidden (the Node authorizer's reason)" contains "$out" \
    'Error from server (Forbidden): pods is forbidden: User "system:node:node-1" cannot list resource "pods" in API group "" at the cluster scope: can only list/watch pods with spec.nodeName field selector'
check "node-1: get pods -A --field-selector spec.nodeName=node-1 is allowed" \
    as node-1 get pods -A --field-selector spec.nodeName=node-1
out=$(as node-1 get nodes 2>&1)
check "node-1: get nodes is forbidden" contains "$out" "node 'node-1' cannot read all nodes, only its own Node object"
out=$(as user auth can-i patch pods --subresource=status -n edge 2>&1)
check "can-i patch pods/status as jane: no" test "$out" = "no"
out=$(as admin auth can-i patch pods --subresource=status -n edge 2>&1)
check "can-i patch pods/status as admin: yes" test "$out" = "yes"
out=$(as node-1 auth can-i patch pods --subresource=status -n edge 2>&1)
check "can-i patch pods/status as node-1: yes (NodeRestriction then limits it to its own pods)" test "$out" = "yes"
out=$(as node-1 auth can-i list pods 2>&1)
check "can-i list pods as node-1: no, with the reason" test "$out" = "no - can only list/watch pods with spec.nodeName field selector"
out=$(as user patch pod nope -n edge --subresource=status -p '{"status":{}}' 2>&1)
check "jane's kubectl patch --subresource=status: the GET it starts with gets the apiserver's 403" contains "$out" \
    'pods "nope" is forbidden: User "jane" cannot get resource "pods/status" in API group "" in the namespace "edge"'

# ---- stop cleanly
kill -TERM "$KS_PID"
rc=
for _ in $(seq 100); do
    if ! kill -0 "$KS_PID" 2>/dev/null; then wait "$KS_PID"; rc=$?; break; fi
    sleep 0.1
done
check "SIGTERM stops kubesim with exit 0" test "$rc" = 0
KS_PID=

echo "session: $PASS passed, $FAIL failed, $SKIP skipped"
[ "$FAIL" = 0 ]
