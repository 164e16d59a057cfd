/*
 * ota_names.h - the exact strings of the ota-prepull contract (docs/design.md §2).
 *
 * Every condition type, reason, annotation and label that crosses the wire is
 * spelled here once; the webhook, the controller and their tests use these
 * macros and never repeat the literals.
 */
#ifndef OTA_NAMES_H
#define OTA_NAMES_H

/* DaemonSet opt-in; values compared case-insensitively. */
#define OTA_ANN_UPDATE_STRATEGY "apps.openyurt.io/update-strategy"
#define OTA_STRATEGY_OTA "OTA"
#define OTA_STRATEGY_ADVANCED "AdvancedRollingUpdate"

/* Per-DaemonSet pull deadline, an integer within the bounds below. */
#define OTA_ANN_PREPULL_TIMEOUT "apps.openyurt.io/image-prepull-timeout-seconds"
#define OTA_PREPULL_TIMEOUT_MIN 30
#define OTA_PREPULL_TIMEOUT_MAX 86400

/* Pod conditions. */
#define OTA_COND_NEED_UPGRADE "PodNeedUpgrade"
#define OTA_COND_IMAGE_READY "PodImageReady"

/* Automatic pre-pull (issue 22 §1, docs/design.md "Automatic pre-pull"):
 * the opt-in and its knobs on a DaemonSet (Kruise's names and values), our
 * pull window, and the pod condition that tells the webhook a pod's
 * DaemonSet opted in for revision H (written by the controller alone). */
#define OTA_ANN_PREDOWNLOAD_PARALLELISM "apps.kruise.io/image-predownload-parallelism"
#define OTA_ANN_PREDOWNLOAD_TIMEOUT "apps.kruise.io/image-predownload-timeout-seconds"
#define OTA_ANN_PREDOWNLOAD_MIN_READY "apps.kruise.io/image-predownload-min-updated-ready-pods"
#define OTA_ANN_PREPULL_WINDOW "ota-prepull.openyurt.io/prepull-window"
#define OTA_COND_AUTO_PREPULL "ota-prepull.openyurt.io/AutoPrePull"
#define OTA_REASON_AUTO_OPTED_IN "DaemonSetOptedIn"
#define OTA_REASON_AUTO_OPTED_OUT "OptedOut"
#define OTA_REASON_AUTO_NODE_USER "NodeUserRequest"
/* On the DaemonSet, once per revision */
#define OTA_EVENT_AUTO_STARTED "AutoPrePullStarted"
#define OTA_EVENT_AUTO_FINISHED "AutoPrePullFinished"
/* On the DaemonSet, once per value: an automatic pre-pull annotation that
 * is not valid (no automatic pulls for it) */
#define OTA_EVENT_AUTO_BAD "BadAutoPrePull"

/* PodImageReady reasons. */
#define OTA_REASON_WAIT_PULL "WaitPullImage"
#define OTA_REASON_PULL_SUCCESS "PullImageSuccess"
#define OTA_REASON_PULL_FAIL "PullImageFail"

/* Message of PodNeedUpgrade and of a pull about a revision: prefix + hash. */
#define OTA_MSG_REVISION_PREFIX "controllerrevision: "
/* PodImageReady False PullImageFail for a request no OTA DaemonSet serves
 * (no owner, owner not OTA, no revision): the prefix, then why. */
#define OTA_MSG_UNSERVED_PREFIX "pull image request not served: "

/* Labels. */
#define OTA_LABEL_REVISION_HASH "controller-revision-hash"
#define OTA_LABEL_POD_TEMPLATE_GENERATION "pod-template-generation" /* DaemonSet pods' */
#define OTA_LABEL_MANAGED_BY "app.kubernetes.io/managed-by"
#define OTA_MANAGED_BY_VALUE "ota-prepull"
#define OTA_LABEL_POD_UID "ota-prepull/pod-uid"

/* Annotations on our Jobs: what they pull and for which request. */
#define OTA_ANN_JOB_REVISION "ota-prepull/revision"
#define OTA_ANN_JOB_REQUEST_TIME "ota-prepull/request-time"
/* An ImagePullJob's Job: which version of the pull (image, secrets,
 * policies) it runs, and, when the controller ended it early, the
 * kubelet's reason and message it ended on. */
#define OTA_ANN_JOB_SPEC_HASH "ota-prepull/spec-hash"
#define OTA_ANN_JOB_GIVEN_UP_REASON "ota-prepull/given-up-reason"
#define OTA_ANN_JOB_GIVEN_UP_MESSAGE "ota-prepull/given-up-message"
/* A Job with one outcome per target (an ImageCache's: targets are regular
 * containers): the words of target i, the prefix followed by i. */
#define OTA_ANN_JOB_GIVEN_UP_REASON_PREFIX "ota-prepull/given-up-reason-"
#define OTA_ANN_JOB_GIVEN_UP_MESSAGE_PREFIX "ota-prepull/given-up-message-"
/* In a Job's pod, the init container that pulls target image i is named
 * this prefix and i: what a node's user reads the target images from (the
 * Job's pod is bound to the node; its Job and ControllerRevision are not
 * readable with the node's credentials). */
#define OTA_JOB_PULL_CONTAINER_PREFIX "pull-"

/* Identities. */
#define OTA_DEFAULT_CONTROLLER_USERNAME "system:serviceaccount:ota-system:ota-controller"
#define OTA_GROUP_MASTERS "system:masters"
#define OTA_NODE_USER_PREFIX "system:node:"

/* Pre-pull Events on the pod (DESIGN §5). */
#define OTA_EVENT_QUEUED "PrePullQueued"
#define OTA_EVENT_STARTED "PrePullStarted"
#define OTA_EVENT_SUCCEEDED "PrePullSucceeded"
#define OTA_EVENT_FAILED "PrePullFailed"
#define OTA_EVENT_BACKOFF "PrePullBackOff" /* the kubelet retries a pull that may heal */

/* On the DaemonSet, once per revision: "marked N pods PendingUpgrade for revision H" */
#define OTA_EVENT_REVISION_MARKED "NewRevision"
/* On the DaemonSet, once per value: its timeout annotation is not valid and
 * --pull-timeout applies */
#define OTA_EVENT_BAD_TIMEOUT "BadPrePullTimeout"

/* OpenKruise's ImagePullJob (docs/design.md "ImagePullJob admission"). */
#define OTA_KRUISE_GROUP "apps.kruise.io"
#define OTA_KRUISE_IMAGEPULLJOBS "imagepulljobs"
#define OTA_KRUISE_V1ALPHA1 "v1alpha1" /* Kruise <= 1.8; served by 1.9 */
#define OTA_KRUISE_V1BETA1 "v1beta1"   /* Kruise 1.9, stored */
/* Kruise's finalizer; we never add it (DECISIONS "No deletion-protection finalizer") */
#define OTA_KRUISE_DELETION_PROTECTION "apps.kruise.io/deletion-protection"
#define OTA_KRUISE_KIND_IMAGEPULLJOB "ImagePullJob"
/* On an ImagePullJob: the metadata.generation it last completed at, so
 * that a later spec edit (a higher generation) runs it again. */
#define OTA_ANN_IPJ_COMPLETED_GENERATION "ota-prepull/completed-generation"

/* kube-fledged's ImageCache (kubefledged.io/v1alpha2): the annotations a
 * user sets to ask for a refresh or a purge (presence counts), and ours,
 * the hash of the spec the controller last acted on (what a restart
 * reads to tell an edit from an action in progress). */
#define OTA_KUBEFLEDGED_GROUP_VERSION "kubefledged.io/v1alpha2"
#define OTA_ANN_IC_REFRESH "kubefledged.io/refresh-imagecache"
#define OTA_ANN_IC_PURGE "kubefledged.io/purge-imagecache"
#define OTA_ANN_IC_SPEC "ota-prepull.openyurt.io/imagecache-spec"
/* "<reason>|<startTime>" of the action whose start the record was written
 * for (our CRD: the record lands before the Processing status) */
#define OTA_ANN_IC_START "ota-prepull.openyurt.io/imagecache-start"
/* Kruise's Event reasons on an ImagePullJob */
#define OTA_EVENT_IPJ_FAILED "PullImageFailed"
/* Ours: an ImagePullJob the controller does not run (a spec it cannot
 * read) */
#define OTA_EVENT_IPJ_NOT_SERVED "ImagePullJobNotServed"

/* kube-fledged's ImageCache (docs/design.md "ImageCache admission"). */
#define OTA_FLEDGED_GROUP "kubefledged.io"
#define OTA_FLEDGED_IMAGECACHES "imagecaches"
#define OTA_FLEDGED_V1ALPHA2 "v1alpha2" /* its one version */

#endif
