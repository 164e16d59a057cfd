/*
 * imageref.h - container image references, read the way the kubelet and
 * containerd read them (github.com/distribution/reference,
 * ParseNormalizedNamed): Docker Hub is the default registry, a one-component
 * Docker Hub name gets "library/", a first component with '.' or ':' or
 * equal to "localhost" is a registry (with an optional port), then an
 * optional ":tag" and an optional "@algorithm:hex" digest.
 *
 * The controller needs three things from a reference: whether it is valid
 * at all (the kubelet answers InvalidImageName otherwise), the pull policy a
 * pre-pull container gets (docs/design.md §5), and whether an entry of
 * Node.status.images names the same image, which needs both sides in one
 * normal form.
 */
#ifndef OTA_IMAGEREF_H
#define OTA_IMAGEREF_H

#include <stddef.h>

#include "arena.h"

/* Longest reference we look at; a bound on input, far above real ones. */
#define IMAGEREF_MAX_LEN 4096
/* distribution/reference's NameTotalLengthMax: "domain/path" at most this. */
#define IMAGEREF_NAME_MAX 255
/* A tag is one word character then at most 127 of [A-Za-z0-9_.-]. */
#define IMAGEREF_TAG_MAX 128

#define IMAGEREF_DEFAULT_DOMAIN "docker.io"
#define IMAGEREF_DEFAULT_TAG "latest"

/* The parts of a parsed reference, NUL-terminated, in arena memory. */
typedef struct imageref {
    const char *domain; /* "docker.io" when none is written ("index.docker.io" becomes it) */
    const char *path;   /* "library/nginx": with Docker Hub's implied "library/" */
    const char *tag;    /* as written, or NULL (see imageref_pull_policy for the default) */
    const char *digest; /* "sha256:<64 lowercase hex>", or NULL */
} imageref;

/*
 * Parses s[0..len).  Returns 0 with the parts in *r (arena memory), or -1
 * with a one-line reason in err (at most errlen bytes, NUL-terminated):
 * empty, too long, whitespace or control characters, an uppercase
 * repository, a malformed registry, path, tag or digest.
 */
int imageref_parse(imageref *r, const char *s, size_t len, arena *a, char *err, size_t errlen);

/*
 * The normal form containerd stores and the kubelet reports in
 * Node.status.images: "domain/path@digest" when there is a digest (a tag
 * next to a digest is dropped, as containerd's ParseDockerRef does, because
 * the digest alone decides what is pulled), else "domain/path:tag" with the
 * tag defaulting to "latest".  Arena memory; NULL when out of memory.
 */
char *imageref_format(const imageref *r, arena *a);

/* imageref_parse + imageref_format: NULL with the reason in err when s is
 * invalid (or, with "out of memory", when a is exhausted). */
char *imageref_normalize(const char *s, size_t len, arena *a, char *err, size_t errlen);

/*
 * "Always" when the tag is "latest", written or implied, and no digest pins
 * the content; "IfNotPresent" otherwise.  This is the apiserver's default
 * (SetDefaults_Container) except for "name:latest@digest", which the
 * apiserver would pull Always although the digest already says exactly
 * what to pull; a pre-pull gains nothing from asking the registry again.
 * Static strings.
 */
const char *imageref_pull_policy(const imageref *r);

/*
 * 1 when both NUL-terminated references are valid and have the same normal
 * form ("nginx" and "docker.io/library/nginx:latest"), else 0.  For the
 * Node.status.images shortcut; note that a ":latest" image being present
 * does not mean it is the current one.
 */
int imageref_same(const char *a, const char *b);

#endif
