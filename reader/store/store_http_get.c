/* store_http_get.c - the remote stores' requests as the store API wants them (store_http.h): each answer
 * judged (success, worth another try, or final with its cause), tries repeated after a growing wait, the
 * object's size and ETag learnt at open and compared with every later answer. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "errtext.h"
#include "h5pack.h"
#include "store_http.h"

typedef struct attempt {
    const char *method;
    uint64_t offset;
    size_t len; /* 0: no Range */
    void *dst;
} attempt;

/* What an answer means: 0 (use it), else an h5pack code with the cause in WHY and *AGAIN set when another
 * try may succeed. */
typedef int (*judge_fn)(http_remote *r, const attempt *t, const http_answer *a, char *why, size_t why_len,
                        int *again);

static int changed_error(http_remote *r, char *why, size_t why_len)
{
    pthread_mutex_lock(&r->lock);
    int rc = h5pack_errf(H5PACK_ECORRUPT, why, why_len, "%s", r->changed_why);
    pthread_mutex_unlock(&r->lock);
    return rc;
}

/* The object is not the one opened: this read fails, and so does every check from now on. */
static int mark_changed(http_remote *r, char *why, size_t why_len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int mark_changed(http_remote *r, char *why, size_t why_len, const char *fmt, ...)
{
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&r->lock);
    if (!atomic_load(&r->changed)) /* the first to see it tells why */
        snprintf(r->changed_why, sizeof r->changed_why, "the object changed while being read (%s); its batches "
                 "since are refused: reopen it once it is written whole", what);
    atomic_store(&r->changed, 1);
    pthread_mutex_unlock(&r->lock);
    return changed_error(r, why, why_len);
}

/* S3-style error bodies name the cause: "<Code>NoSuchKey</Code>...<Message>...</Message>" (the text maybe
 * in <![CDATA[...]]>). */
static void xml_field(const char *body, const char *tag, char *out, size_t out_len)
{
    char open[32], close[32];
    snprintf(open, sizeof open, "<%s>", tag);
    snprintf(close, sizeof close, "</%s>", tag);
    const char *a = strstr(body, open), *b = a ? strstr(a, close) : NULL;
    out[0] = 0;
    if (!a || !b)
        return;
    a += strlen(open);
    if (!strncmp(a, "<![CDATA[", 9) && b - a >= 12 && !strncmp(b - 3, "]]>", 3))
        a += 9, b -= 3;
    snprintf(out, out_len, "%.*s", (int)(b - a), a);
}

/* " NoSuchKey: The specified key does not exist." from an S3 error body, "" for other bodies. */
static void server_detail(const http_answer *a, char *out, size_t out_len)
{
    char code[64], msg[160];
    xml_field(a->body, "Code", code, sizeof code);
    xml_field(a->body, "Message", msg, sizeof msg);
    out[0] = 0;
    if (code[0])
        snprintf(out, out_len, " %s%s%s", code, msg[0] ? ": " : "", msg);
}

/* The cause of a final HTTP status, and whether another try may help. */
static int judge_status(http_remote *r, const http_answer *a, char *why, size_t why_len, int *again)
{
    char detail[240], where[224] = "";
    long st = a->status;
    server_detail(a, detail, sizeof detail);
    if (r->region && a->bucket_region[0] && strcmp(r->region, a->bucket_region) != 0)
        snprintf(where, sizeof where, "; the bucket is in region %s, not %s: set AWS_REGION=%s", a->bucket_region,
                 r->region, a->bucket_region);
    *again = st == 408 || st == 429 || st >= 500;
    if (st == 404)
        return h5pack_errf(H5PACK_ENOTFOUND, why, why_len, "not found (HTTP 404%s)", detail);
    if (st == 403 || st == 401)
        return h5pack_errf(H5PACK_EIO, why, why_len, "access denied (HTTP %ld%s)%s%s%s", st, detail, where,
                           r->who ? "; credentials: " : "", r->who ? r->who : "");
    if (st == 416)
        return h5pack_errf(H5PACK_ECORRUPT, why, why_len, "the range is past the object's end (HTTP 416%s)", detail);
    if (st >= 300 && st < 400)
        return h5pack_errf(H5PACK_EIO, why, why_len, "redirected (HTTP %ld%s)%s", st, detail, where);
    if (*again)
        return h5pack_errf(H5PACK_EIO, why, why_len, "%s (HTTP %ld%s)", st == 429 ? "too many requests"
                           : st == 408 ? "request timeout" : "server error", st, detail);
    return h5pack_errf(H5PACK_EIO, why, why_len, "HTTP %ld%s%s", st, detail, where);
}

/* Failures below HTTP: a dropped or refused connection, a timeout, a body cut short may pass. */
static int transient(CURLcode rc)
{
    switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST: case CURLE_COULDNT_CONNECT: case CURLE_PARTIAL_FILE:
    case CURLE_OPERATION_TIMEDOUT: case CURLE_GOT_NOTHING: case CURLE_SEND_ERROR: case CURLE_RECV_ERROR:
    case CURLE_SSL_CONNECT_ERROR: case CURLE_HTTP2: case CURLE_HTTP2_STREAM:
        return 1;
    default:
        return 0;
    }
}

static int ignores_ranges(char *why, size_t why_len)
{
    return h5pack_errf(H5PACK_EIO, why, why_len, "the server ignores Range requests (HTTP 200 with the whole "
                       "object): h5pack reads objects by byte ranges");
}

static int judge_transfer(const http_answer *a, long timeout_s, char *why, size_t why_len, int *again)
{
    *again = transient(a->rc);
    if (a->overflow && a->status == 200)
        return ignores_ranges(why, why_len);
    if (a->overflow)
        return h5pack_errf(H5PACK_EIO, why, why_len, "the server sent more bytes than asked for");
    if (a->rc == CURLE_OPERATION_TIMEDOUT)
        return h5pack_errf(H5PACK_EIO, why, why_len, "timed out: %s (H5PACK_HTTP_TIMEOUT=%ld s)",
                           a->curl_err[0] ? a->curl_err : curl_easy_strerror(a->rc), timeout_s);
    return h5pack_errf(H5PACK_EIO, why, why_len, "%s", a->curl_err[0] ? a->curl_err : curl_easy_strerror(a->rc));
}

/* HEAD: the object's size and ETag. */
static int judge_head(http_remote *r, const attempt *t, const http_answer *a, char *why, size_t why_len, int *again)
{
    (void)t;
    if (a->rc != CURLE_OK)
        return judge_transfer(a, r->cfg.timeout_s, why, why_len, again);
    return a->status >= 200 && a->status < 300 ? 0 : judge_status(r, a, why, why_len, again);
}

/* A ranged GET: the bytes asked for, of the object opened. */
static int judge_get(http_remote *r, const attempt *t, const http_answer *a, char *why, size_t why_len, int *again)
{
    *again = 0;
    if (a->rc != CURLE_OK)
        return judge_transfer(a, r->cfg.timeout_s, why, why_len, again);
    if (a->status == 416 && r->base.size > 0)
        return mark_changed(r, why, why_len, "bytes %" PRIu64 "-%" PRIu64 " are past its end now", t->offset,
                            t->offset + t->len - 1);
    int whole = a->status == 200 && t->offset == 0 && t->len == r->base.size; /* a server may answer so */
    if (a->status != 206 && !whole)
        return a->status == 200 ? ignores_ranges(why, why_len) : judge_status(r, a, why, why_len, again);
    if (r->validator[0] && a->etag[0] && strcmp(r->validator, a->etag) != 0)
        return mark_changed(r, why, why_len, "ETag %s at open, %s now", r->validator, a->etag);
    if (a->has_range && a->range_total != UINT64_MAX && a->range_total != r->base.size)
        return mark_changed(r, why, why_len, "%" PRIu64 " bytes at open, %" PRIu64 " now", r->base.size,
                            a->range_total);
    if (!whole && (!a->has_range || a->range_first != t->offset || a->range_last != t->offset + t->len - 1))
        return h5pack_errf(H5PACK_EIO, why, why_len, "the server answered with another range than asked for");
    if (a->got != t->len) {
        *again = 1;
        return h5pack_errf(H5PACK_EIO, why, why_len, "short body: %zu of %zu bytes", a->got, t->len);
    }
    return 0;
}

int h5pack_http_judge_get(http_remote *r, uint64_t offset, size_t len, const http_answer *a, char *why,
                          size_t why_len, int *again)
{
    attempt t = {"GET", offset, len, NULL};
    return judge_get(r, &t, a, why, why_len, again);
}

/* Before try N + 1 (N >= 1): backoff * 2^(N-1), at most 32 times it, times a random 0.5-1 so that the
 * workers hit by one failure do not all come back at once. */
double h5pack_http_backoff_s(const http_remote *r, int n)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double jitter = 0.5 + 0.5 * (double)(now.tv_nsec % 1000) / 1000.0;
    return r->cfg.backoff_s * (double)(1u << (n - 1 < 5 ? n - 1 : 5)) * jitter;
}

static void wait_before(const http_remote *r, int n)
{
    double s = h5pack_http_backoff_s(r, n);
    struct timespec d = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&d, &d) != 0)
        ;
}

/* "METHOD [bytes A-B]: CAUSE[, after N tries]" in WHY; returns RC. */
static int failed(int rc, const attempt *t, const char *cause, int tries, char *why, size_t why_len)
{
    char range[64] = "";
    if (t->len)
        snprintf(range, sizeof range, " bytes %" PRIu64 "-%" PRIu64, t->offset, t->offset + t->len - 1);
    char after[48] = "";
    if (tries > 1)
        snprintf(after, sizeof after, ", after %d tries", tries);
    return h5pack_errf(rc, why, why_len, "%s%s: %s%s", t->method, range, cause, after);
}

int h5pack_http_get_failed(int rc, uint64_t offset, size_t len, const char *cause, int tries, char *err,
                           size_t err_len)
{
    attempt t = {"GET", offset, len, NULL};
    return failed(rc, &t, cause, tries, err, err_len);
}

/* T tried until JUDGE accepts an answer, it calls a failure final, or the tries run out. 0, or the code
 * of the last failure with "METHOD [bytes A-B]: cause[, after N tries]" in WHY; *A holds the last answer. */
static int with_retries(http_remote *r, const attempt *t, judge_fn judge, http_answer *a, char *why, size_t why_len)
{
    char cause[512];
    int rc = 0, tries = 0, again = 0;
    do {
        if (tries > 0)
            wait_before(r, tries);
        h5pack_http_exchange(r, t->method, t->offset, t->len, t->dst, a);
        tries++;
        rc = judge(r, t, a, cause, sizeof cause, &again);
    } while (rc && again && tries <= r->cfg.retries);
    return rc ? failed(rc, t, cause, tries, why, why_len) : 0;
}

int h5pack_http_remote_fetch(http_remote *r, uint64_t offset, void *dst, size_t len, char *err, size_t err_len)
{
    if (len == 0)
        return 0;
    if (atomic_load(&r->changed))
        return changed_error(r, err, err_len);
    attempt t = {"GET", offset, len, dst};
    http_answer a;
    return with_retries(r, &t, judge_get, &a, err, err_len);
}

/* A GET of the first byte at open: its Content-Range gives the size. */
static int judge_probe(http_remote *r, const attempt *t, const http_answer *a, char *why, size_t why_len,
                       int *again)
{
    (void)t;
    *again = 0;
    if (a->rc != CURLE_OK)
        return judge_transfer(a, r->cfg.timeout_s, why, why_len, again);
    if (a->status == 206 && a->has_range && a->range_total != UINT64_MAX)
        return 0;
    if (a->status == 206)
        return h5pack_errf(H5PACK_EIO, why, why_len, "the server does not say the object's size");
    if (a->status == 200 && a->got == 1) /* the whole object: one byte */
        return 0;
    return judge_status(r, a, why, why_len, again);
}

/* GET of the first byte: where HEAD is refused (a URL signed for GET only) or says too little, and for
 * the cause of a refusal (S3 names it in the body, which a HEAD has not). */
static int stat_by_get(http_remote *r, char *err, size_t err_len)
{
    uint8_t byte;
    attempt t = {"GET", 0, 1, &byte};
    http_answer a;
    int rc = with_retries(r, &t, judge_probe, &a, err, err_len);
    if (rc && a.rc == CURLE_OK && a.status == 416) { /* an empty object has no first byte */
        r->base.size = 0;
        return 0;
    }
    if (rc)
        return rc;
    r->base.size = a.status == 206 ? a.range_total : 1;
    snprintf(r->validator, sizeof r->validator, "%s", a.etag);
    return 0;
}

int h5pack_http_remote_stat(http_remote *r, char *err, size_t err_len)
{
    attempt t = {"HEAD", 0, 0, NULL};
    http_answer a;
    int rc = with_retries(r, &t, judge_head, &a, err, err_len);
    if (!rc && a.has_length) {
        r->base.size = a.length;
        snprintf(r->validator, sizeof r->validator, "%s", a.etag);
        return 0;
    }
    /* HEAD answers no body: a GET tells why it was refused, and serves URLs signed for GET only */
    int refused = a.rc == CURLE_OK && a.status >= 400 && a.status < 500 && (a.status != 404 || r->region);
    if (rc && !refused)
        return rc;
    return stat_by_get(r, err, err_len);
}

int h5pack_http_store_read(store *s, uint64_t offset, void *dst, size_t len, char *err, size_t err_len)
{
    if (offset > s->size || len > s->size - offset)
        return h5pack_errf(H5PACK_ECORRUPT, err, err_len, "%zu bytes at offset %" PRIu64 " are past its end (%" PRIu64
                           " bytes)", len, offset, s->size);
    int rc;
    if (h5pack_http_ahead_take((http_remote *)s, offset, dst, len, &rc, err, err_len))
        return rc; /* fetched ahead (or failed there, after as many tries as here) */
    return h5pack_http_remote_fetch((http_remote *)s, offset, dst, len, err, err_len);
}

int h5pack_http_store_read_meta(store *s, uint64_t offset, void *dst, size_t len, char *err, size_t err_len)
{
    if (offset > s->size || len > s->size - offset || len >= HTTP_SMALL_READ)
        return h5pack_http_store_read(s, offset, dst, len, err, err_len);
    return h5pack_http_blocks_read((http_remote *)s, offset, dst, len, err, err_len);
}

int h5pack_http_store_check(store *s, char *err, size_t err_len)
{
    http_remote *r = (http_remote *)s;
    return atomic_load(&r->changed) ? changed_error(r, err, err_len) : 0;
}
