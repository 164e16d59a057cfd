/*
 * guard.c - see guard.h.
 */
#include "guard.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

int guard_accept(guard_port port, size_t open, const guard_limits *limits)
{
    size_t max = port == GUARD_ADMISSION ? limits->max_connections : GUARD_PROBE_CONNECTIONS;
    return open < max;
}

unsigned guard_accept_backoff_ms(unsigned failures)
{
    if (failures == 0)
        return 0;
    unsigned ms = 10;
    for (unsigned i = 1; i < failures && ms < 1000; i++)
        ms *= 2;
    return ms > 1000 ? 1000 : ms;
}

int guard_accept_error_is_exhaustion(int err)
{
    return err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM;
}

size_t guard_connection_cap(size_t requested, uint64_t nofile, unsigned threads)
{
    uint64_t reserve = GUARD_FD_RESERVE_BASE +
                       (uint64_t)(GUARD_FD_RESERVE_PER_THREAD + 2 * GUARD_EVICTING_MAX) * threads +
                       2u * GUARD_PROBE_CONNECTIONS;
    uint64_t room = nofile > reserve ? nofile - reserve : 1;
    if (room < requested)
        return (size_t)room;
    return requested > 0 ? requested : 1;
}

int guard_handshake_evictable(const guard_handshake *c, size_t evicting)
{
    return evicting < GUARD_EVICTING_MAX && !c->done && !c->cut;
}

int guard_handshake_before(const guard_handshake *a, const guard_handshake *b)
{
    if (a->hello_seen != b->hello_seen)
        return !a->hello_seen;
    return a->age_ns > b->age_ns;
}

size_t guard_handshake_victim(const guard_handshake *c, size_t n, size_t evicting)
{
    size_t best = n;
    for (size_t i = 0; i < n; i++)
        if (guard_handshake_evictable(&c[i], evicting) &&
            (best == n || guard_handshake_before(&c[i], &c[best])))
            best = i;
    return best;
}

size_t guard_evict_worker(const size_t *handshakes, const size_t *asked, size_t n, size_t self)
{
    size_t best = n, best_spare = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == self || asked[i] >= GUARD_EVICTING_MAX || handshakes[i] <= asked[i])
            continue;
        size_t spare = handshakes[i] - asked[i];
        if (spare > best_spare) {
            best = i;
            best_spare = spare;
        }
    }
    return best;
}

int guard_upload_too_slow(size_t received, uint64_t elapsed_ns, const guard_limits *limits)
{
    uint64_t rate = limits->upload_min_rate;
    if (rate == 0 || elapsed_ns <= limits->upload_grace_ns)
        return 0;
    /* received / rate seconds, split so the product cannot overflow */
    uint64_t r = received;
    if (r / rate >= UINT64_MAX / 2000000000ull)
        return 0; /* centuries */
    uint64_t earned = r / rate * 1000000000ull + r % rate * 1000000000ull / rate;
    return elapsed_ns - limits->upload_grace_ns > earned;
}

int guard_budget_cuttable(const guard_upload *u)
{
    return u->arriving && !u->cut && u->age_ns >= GUARD_BUDGET_CUT_AGE_NS;
}

int guard_budget_before(const guard_upload *a, const guard_upload *b)
{
    return a->age_ns > b->age_ns;
}

size_t guard_budget_victim(const guard_upload *u, size_t n)
{
    size_t best = n;
    for (size_t i = 0; i < n; i++)
        if (guard_budget_cuttable(&u[i]) && (best == n || guard_budget_before(&u[i], &u[best])))
            best = i;
    return best;
}

guard_action guard_conn_action(const guard_conn *c, const guard_limits *limits, int over_budget,
                               int largest)
{
    if (c->writing && c->writing_ns > limits->write_timeout_ns)
        return GUARD_CUT_WRITE_TIMEOUT;
    if (c->handshaking && c->age_ns > limits->handshake_timeout_ns)
        return GUARD_CUT_HANDSHAKE;
    /* A head still incomplete past the limit: h2o itself would buffer up to
     * ~400 KB of it.  While a request is being answered the buffer holds
     * that request and what is pipelined after it, which is read only
     * later. */
    if (!c->answering && !c->head_complete && c->buffered > limits->max_header_bytes)
        return GUARD_CUT_HEADERS;
    /* Arriving: not answered yet, bytes in.  Over the budget, all but the
     * largest wait; under it, all read. */
    int arriving = !c->answering && c->buffered > 0;
    if (arriving && c->arriving_ns > 0 &&
        guard_upload_too_slow(c->buffered, c->arriving_ns, limits))
        return GUARD_CUT_SLOW_UPLOAD;
    if (c->paused)
        return !over_budget || largest || !arriving ? GUARD_RESUME : GUARD_KEEP;
    if (over_budget && arriving && !largest)
        return GUARD_PAUSE;
    return GUARD_KEEP;
}

int guard_over_budget(size_t total, size_t budget, int was_over)
{
    if (total > budget)
        return 1;
    if (was_over && total > budget / 4 * 3)
        return 1;
    return 0;
}

int guard_arriving(const guard_arrival *a)
{
    if (a->answering || a->buffered > 0 || a->kernel_unread > 0 || a->tls_pending ||
        a->handshaking)
        return 1;
    return a->requests == 0 && a->age_ns < GUARD_FRESH_NS;
}

/* A Content-Length value: digits with optional whitespace around; -1 when
 * it is not one. */
static int parse_length(const char *s, size_t n, uint64_t *out)
{
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    size_t digits = 0;
    uint64_t v = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
        if (v > (UINT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (uint64_t)(s[i] - '0');
        i++;
        digits++;
    }
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    if (digits == 0 || i != n)
        return -1;
    *out = v;
    return 0;
}

guard_framing guard_request_framing(const char *const *cl, const size_t *cl_len, size_t n,
                                    int te)
{
    if (n > 0 && te)
        return GUARD_FRAMING_CL_AND_TE;
    uint64_t first = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t v;
        if (parse_length(cl[i], cl_len[i], &v) != 0)
            return GUARD_FRAMING_CL_CONFLICT;
        if (i == 0)
            first = v;
        else if (v != first)
            return GUARD_FRAMING_CL_CONFLICT;
    }
    return GUARD_FRAMING_OK;
}

guard_framing guard_head_framing(const char *head, size_t len)
{
    const char *cl[16];
    size_t cl_len[16];
    size_t n = 0;
    int te = 0;
    size_t i = 0;
    /* skip the request line */
    while (i < len && head[i] != '\n')
        i++;
    i++;
    while (i < len) {
        size_t start = i;
        while (i < len && head[i] != '\n')
            i++;
        size_t end = i > start && head[i - 1] == '\r' ? i - 1 : i;
        i++;
        if (end == start)
            break; /* the empty line: end of the head */
        const char *line = head + start;
        size_t llen = end - start;
        const char *colon = memchr(line, ':', llen);
        if (colon == NULL)
            continue;
        size_t nlen = (size_t)(colon - line);
        const char *value = colon + 1;
        size_t vlen = llen - nlen - 1;
        if (nlen == 14 && strncasecmp(line, "content-length", 14) == 0) {
            if (n == sizeof(cl) / sizeof(cl[0]))
                return GUARD_FRAMING_CL_CONFLICT;
            cl[n] = value;
            cl_len[n] = vlen;
            n++;
        } else if (nlen == 17 && strncasecmp(line, "transfer-encoding", 17) == 0) {
            te = 1;
        }
    }
    return guard_request_framing(cl, cl_len, n, te);
}

size_t guard_head_end(const char *buf, size_t len)
{
    /* at each LF, the next line is empty when it is "\n" or "\r\n" */
    for (const char *p = memchr(buf, '\n', len); p != NULL;
         p = memchr(p + 1, '\n', len - (size_t)(p + 1 - buf))) {
        size_t rest = len - (size_t)(p + 1 - buf);
        if (rest >= 1 && p[1] == '\n')
            return (size_t)(p + 2 - buf);
        if (rest >= 2 && p[1] == '\r' && p[2] == '\n')
            return (size_t)(p + 3 - buf);
        if (rest == 0)
            break;
    }
    return 0;
}
