/* store_http_conn.c - the curl side of the remote stores (store_http.h): the settings, a pool of easy
 * handles per object (a handle keeps its connection open between reads, so a worker's next read skips
 * the TCP and TLS handshakes), and one request with its answer parsed. No retries here. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errtext.h"
#include "h5pack.h"
#include "store_http.h"

static pthread_once_t g_curl_once = PTHREAD_ONCE_INIT;
static CURLcode g_curl_init = CURLE_FAILED_INIT;

/* curl_global_init is not safe to race with itself; never cleaned up (other users may share it). */
static void curl_once(void)
{
    g_curl_init = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* An integer setting NAME in [LO, HI], DEF when unset. 0, or EINVAL naming it. */
static int env_long(const char *name, long def, long lo, long hi, long *out, char *err, size_t err_len)
{
    const char *v = getenv(name);
    *out = def;
    if (!v || !*v)
        return 0;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end || x < lo || x > hi)
        return h5pack_errf(H5PACK_EINVAL, err, err_len, "%s=%s: expected a whole number in [%ld, %ld]", name, v,
                           lo, hi);
    *out = x;
    return 0;
}

int h5pack_http_remote_init(http_remote *r, char *err, size_t err_len)
{
    pthread_once(&g_curl_once, curl_once);
    if (g_curl_init != CURLE_OK)
        return h5pack_errf(H5PACK_EIO, err, err_len, "libcurl does not start: %s", curl_easy_strerror(g_curl_init));
    long retries, timeout, backoff_ms, in_flight;
    int rc = env_long("H5PACK_HTTP_RETRIES", 5, 0, 100, &retries, err, err_len);
    if (!rc)
        rc = env_long("H5PACK_HTTP_TIMEOUT", 30, 1, 86400, &timeout, err, err_len);
    if (!rc)
        rc = env_long("H5PACK_HTTP_BACKOFF_MS", 200, 0, 60000, &backoff_ms, err, err_len);
    if (!rc)
        rc = env_long("H5PACK_HTTP_INFLIGHT", HTTP_AHEAD_MAX, 0, HTTP_AHEAD_MAX, &in_flight, err, err_len);
    if (rc)
        return rc;
    r->cfg = (http_settings){(int)retries, timeout, (double)backoff_ms / 1000.0, (int)in_flight};
    if (pthread_mutex_init(&r->lock, NULL) != 0)
        return h5pack_errf(H5PACK_ENOMEM, err, err_len, "cannot make a lock");
    atomic_init(&r->changed, 0);
    return 0;
}

void h5pack_http_remote_free(http_remote *r)
{
    h5pack_http_ahead_free(r); /* first: its requests hold handles of the pool */
    for (int i = 0; i < r->pooled; i++)
        curl_easy_cleanup(r->pool[i]);
    for (int i = 0; i < HTTP_BLOCKS; i++)
        free(r->blocks[i].bytes);
    pthread_mutex_destroy(&r->lock);
}

/* An idle handle of R's (its connection kept), or a new one; NULL when out of memory. */
static CURL *take_handle(http_remote *r)
{
    pthread_mutex_lock(&r->lock);
    CURL *h = r->pooled > 0 ? r->pool[--r->pooled] : NULL;
    pthread_mutex_unlock(&r->lock);
    return h ? h : curl_easy_init();
}

static void give_handle(http_remote *r, CURL *h)
{
    pthread_mutex_lock(&r->lock);
    if (r->pooled < HTTP_POOL_MAX) {
        r->pool[r->pooled++] = h;
        h = NULL;
    }
    pthread_mutex_unlock(&r->lock);
    if (h)
        curl_easy_cleanup(h);
}

/* The value of header LINE (LEN bytes) when it is NAME ("etag"), trimmed into OUT; 0 when another. */
static int header_value(const char *line, size_t len, const char *name, char *out, size_t out_len)
{
    size_t n = strlen(name);
    if (len <= n || strncasecmp(line, name, n) != 0 || line[n] != ':')
        return 0;
    const char *v = line + n + 1, *end = line + len;
    while (v < end && isspace((unsigned char)*v))
        v++;
    while (end > v && isspace((unsigned char)end[-1]))
        end--;
    size_t k = (size_t)(end - v) < out_len - 1 ? (size_t)(end - v) : out_len - 1;
    memcpy(out, v, k);
    out[k] = 0;
    return 1;
}

/* "bytes FIRST-LAST/TOTAL" or "bytes STAR/TOTAL" (STAR: '*'; an unknown total is '*' too). */
static void parse_content_range(const char *v, http_answer *a)
{
    uint64_t first = 0, last = 0, total = UINT64_MAX;
    char tail[32] = "";
    if (sscanf(v, "bytes %" SCNu64 "-%" SCNu64 "/%31s", &first, &last, tail) == 3 ||
        sscanf(v, "bytes */%31s", tail) == 1) {
        if (strcmp(tail, "*") != 0)
            total = strtoull(tail, NULL, 10);
        a->range_first = first, a->range_last = last, a->range_total = total;
        a->has_range = 1;
    }
}

/* Each response starts with its status line: a redirect's headers must not mix with the final one's. */
static size_t on_header(char *line, size_t size, size_t n, void *ctx)
{
    http_answer *a = ctx;
    size_t len = size * n;
    char v[192];
    if (len >= 5 && !strncmp(line, "HTTP/", 5)) {
        a->has_length = a->has_range = 0;
        a->etag[0] = a->bucket_region[0] = 0;
    } else if (header_value(line, len, "content-length", v, sizeof v)) {
        a->length = strtoull(v, NULL, 10);
        a->has_length = 1;
    } else if (header_value(line, len, "content-range", v, sizeof v)) {
        parse_content_range(v, a);
    } else if (!header_value(line, len, "etag", a->etag, sizeof a->etag)) {
        header_value(line, len, "x-amz-bucket-region", a->bucket_region, sizeof a->bucket_region);
    }
    return len;
}

/* A success's body goes to the caller's buffer, never past it; an error's first KiB is kept for its
 * message (S3 names the cause there). */
static size_t on_body(char *data, size_t size, size_t n, void *ctx)
{
    http_request *s = ctx;
    http_answer *a = &s->a;
    size_t len = size * n;
    long status = 0;
    curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &status);
    if (status < 200 || status > 299) {
        size_t room = sizeof a->body - 1 - a->body_len, k = len < room ? len : room;
        memcpy(a->body + a->body_len, data, k);
        a->body_len += k;
        a->body[a->body_len] = 0;
        return len;
    }
    if (len > s->cap - a->got) {
        a->overflow = 1;
        return 0; /* stops the transfer: CURLE_WRITE_ERROR */
    }
    memcpy(s->dst + a->got, data, len);
    a->got += len;
    return len;
}

/* The options every request of R sets (a pooled handle keeps the previous request's otherwise). */
static void set_options(http_remote *r, CURL *h, const char *method, const char *range, struct curl_slist *headers,
                        http_request *s)
{
    curl_easy_setopt(h, CURLOPT_URL, r->url);
    if (!strcmp(method, "HEAD"))
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    else
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L); /* also undoes a previous HEAD's NOBODY */
    curl_easy_setopt(h, CURLOPT_RANGE, range ? range + strlen("bytes=") : NULL);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L); /* many threads: no SIGALRM for DNS timeouts */
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, (long)r->follow);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, 8L);
    curl_easy_setopt(h, CURLOPT_PATH_AS_IS, 1L); /* a signed path is sent as signed */
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, r->cfg.timeout_s);
    /* a timeout on silence, not on the whole transfer: a large chunk over a slow link is not a failure */
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, r->cfg.timeout_s);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_BUFFERSIZE, 256L << 10);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "h5pack/" H5PACK_VERSION_STRING);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, s->a.curl_err);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &s->a);
    curl_easy_setopt(h, CURLOPT_PRIVATE, s);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, s);
}

/* The Host header (S3 signs it, so what is sent must be what was signed) and the signature's headers. */
static struct curl_slist *request_headers(http_remote *r, const char *method, const char *range, http_answer *a)
{
    struct curl_slist *headers = NULL, *more;
    if (r->host_header && !(headers = curl_slist_append(NULL, r->host_header)))
        return NULL;
    if (!(more = curl_slist_append(headers, "Accept-Encoding: identity"))) {
        curl_slist_free_all(headers);
        return NULL;
    }
    headers = more;
    if (r->sign && r->sign(r->sign_ctx, method, range, &headers, a->curl_err, sizeof a->curl_err) != 0) {
        curl_slist_free_all(headers);
        return NULL;
    }
    return headers;
}

int h5pack_http_request_start(http_remote *r, http_request *q, const char *method, uint64_t offset, size_t len,
                              void *dst)
{
    memset(q, 0, sizeof *q);
    q->r = r, q->dst = dst, q->cap = len;
    char range[64] = "";
    if (len > 0)
        snprintf(range, sizeof range, "bytes=%" PRIu64 "-%" PRIu64, offset, offset + len - 1);
    q->h = take_handle(r);
    q->headers = q->h ? request_headers(r, method, len ? range : NULL, &q->a) : NULL;
    if (!q->h || !q->headers) { /* a signer's reason is in curl_err */
        q->a.rc = q->h && q->a.curl_err[0] ? CURLE_AUTH_ERROR : CURLE_OUT_OF_MEMORY;
        if (q->h)
            give_handle(r, q->h);
        q->h = NULL;
        return -1;
    }
    set_options(r, q->h, method, len ? range : NULL, q->headers, q);
    return 0;
}

void h5pack_http_request_end(http_request *q, CURLcode rc)
{
    q->a.rc = rc;
    curl_easy_getinfo(q->h, CURLINFO_RESPONSE_CODE, &q->a.status);
    curl_off_t first = 0, total = 0;
    if (curl_easy_getinfo(q->h, CURLINFO_STARTTRANSFER_TIME_T, &first) == CURLE_OK &&
        curl_easy_getinfo(q->h, CURLINFO_TOTAL_TIME_T, &total) == CURLE_OK)
        q->first_byte_s = (double)first * 1e-6, q->total_s = (double)total * 1e-6;
    curl_easy_setopt(q->h, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(q->h, CURLOPT_ERRORBUFFER, NULL); /* Q's buffer may go before the handle */
    curl_easy_setopt(q->h, CURLOPT_PRIVATE, NULL);
    curl_slist_free_all(q->headers);
    q->headers = NULL;
    give_handle(q->r, q->h);
    q->h = NULL;
}

void h5pack_http_exchange(http_remote *r, const char *method, uint64_t offset, size_t len, void *dst,
                          http_answer *a)
{
    http_request q;
    if (h5pack_http_request_start(r, &q, method, offset, len, dst) == 0)
        h5pack_http_request_end(&q, curl_easy_perform(q.h));
    *a = q.a;
}
