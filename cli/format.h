/*
 * format.h - what kubectl-ota prints and sends as text: kubectl's ages
 * ("45s", "5m12s", "3h", "2d"), tables in kubectl's layout, text from the
 * server made safe for a terminal, the message of an API error (Status) and
 * whether it is an admission webhook's denial, --help, and
 * the sentences that say what happens next.  Pure.
 */
#ifndef OTA_CLI_FORMAT_H
#define OTA_CLI_FORMAT_H

#include <stddef.h>

#include "pullerr.h"
#include "strbuf.h"

/* Widest cell of a table (names are at most 253 bytes), and of the IMAGES
 * column; longer text from the server is cut with "...". */
#define CLI_CELL_MAX 253
#define CLI_CELL_MAX_WIDE 1024
/* Longest message from the server kubectl-ota prints (a webhook's denial,
 * a kubelet's reason). */
#define CLI_MESSAGE_MAX 4096

/* kubectl's age of a duration in seconds, as `kubectl get` shows it:
 * "<invalid>" under -1 s (clock skew), then "0s", "59s", "119s", "2m",
 * "5m12s", "10m", "179m", "3h", "7h59m", "8h", "47h", "2d", "7d23h", "8d",
 * "729d", "2y", "7y364d", "8y". */
void cli_age(char *buf, size_t size, long long seconds);

/* Copies at most n bytes of s into out (size bytes, >= 4), replacing
 * control characters (a terminal would obey them) with '?' and cutting what
 * does not fit with "..." (never inside a UTF-8 sequence).  Returns out. */
char *cli_sanitize(char *out, size_t size, const char *s, size_t n);

/* A table in kubectl's layout: a header, columns left-aligned and three
 * spaces apart, the last one unpadded.  Cells are copied as given. */
void cli_table_render(strbuf *out, const char *const *header, size_t ncols,
                      char *const *const *rows, size_t nrows);

/* The message of an API error body (a metav1 Status: "message"), cut to
 * CLI_MESSAGE_MAX and sanitised, into out; when the body is not a Status,
 * "HTTP <status>" and the first bytes of the body.  Returns out. */
char *cli_status_message(char *out, size_t size, long status, const char *body, size_t len);

/* True when an API error message is an admission webhook's denial
 * ("admission webhook \"<name>\" denied the request: ...", as the apiserver
 * words it). */
int cli_is_webhook_denial(const char *message);

/* What a 403 from the apiserver means for the pod the user named, read from
 * the Status message the apiserver words (cli_status_message's). */
typedef enum cli_refusal {
    CLI_REFUSED_OTHER,        /* none of those below: print the message as is */
    CLI_REFUSED_NODE_READ,    /* the Node authorizer: a node reads only pods bound to it
                               * ("no relationship found between node 'N' and this object") */
    CLI_REFUSED_NODE_DELETE,  /* NodeRestriction: "node \"N\" can only delete pods with
                               * spec.nodeName set to itself" */
    CLI_REFUSED_NODE_STATUS,  /* NodeRestriction: "node \"N\" can only update pod status for
                               * pods with spec.nodeName set to itself" */
    CLI_REFUSED_RBAC,         /* RBAC: 'User "U" cannot VERB resource "R" ...' */
} cli_refusal;

/* Which refusal message is, and the identity it names (the node's name
 * for the CLI_REFUSED_NODE_*, the user for CLI_REFUSED_RBAC; made safe,
 * cut to fit) into who. */
cli_refusal cli_refusal_of(const char *message, char *who, size_t size);

/* The refusal of what the user asked about pod ns/name said in words a
 * node user understands (one sentence, with what to do), then the
 * apiserver's own message on its own line; nothing for CLI_REFUSED_OTHER.
 * Returns the kind. */
cli_refusal cli_say_refusal(strbuf *b, const char *ns, const char *pod, const char *message);

/* What `status` could not read with these credentials (a node's may read
 * its pods, not Jobs or Events), as the rest of a "Not shown:" line; NULL
 * when it read everything. */
const char *cli_status_hidden(int jobs_hidden, int events_hidden);

/* What `list`'s IMAGES cell says when no image of the target is known: the
 * revisions could not be read (a node's credentials), or none matched. */
#define CLI_IMAGES_HIDDEN "<not visible to a node>"
#define CLI_IMAGES_UNKNOWN "<unknown>"

/* Said under `list`'s table when an IMAGES cell is CLI_IMAGES_HIDDEN. */
const char *cli_list_hidden_note(void);

/* `kubectl ota --help`: commands, flags, exit codes. */
const char *cli_usage(void);

/* ---- what happens next ---- */

/* After a pull request was written. */
void cli_say_pulled(strbuf *b, const char *ns, const char *pod, const char *node,
                    const char *hash);
/* Why `upgrade` refused without --force (state is the pod's state name),
 * and what a forced upgrade costs. */
void cli_say_not_ready(strbuf *b, const char *ns, const char *pod, const char *node,
                       const char *hash, const char *state);

/* After a failed pull: how to retry, or, when a retry cannot help (refusal:
 * cli_failure_refusal's), whom to ask about what. */
void cli_say_failed_next(strbuf *b, const char *ns, const char *pod, const char *ds,
                         pullerr_refusal refusal);

#endif
