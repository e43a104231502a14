/* store_http.h - what the http:// and https:// stores (store_http.c) and the s3:// store (store_s3.c)
 * share: one object on an HTTP server, its size and validator (ETag) learnt at open, its bytes read by
 * range requests with libcurl.
 *
 * Parallelism: the reader names the chunk reads it will make, in plan order, before it makes them
 * (store.h, will_read); a read-ahead thread per object (store_http_ahead.c) keeps many of them in flight
 * with libcurl's multi interface, as many as the measured latency x bandwidth asks for, within a byte
 * budget, and a worker's read takes the bytes fetched for it (docs/reader.md, "Object storage and
 * HTTPS"). A read nobody announced is one request of the worker's own. Each read takes an idle curl handle
 * from the object's pool and gives it back, so a worker's connection is kept open for its next read.
 *
 * Failures: 5xx, 429, 408, timeouts, dropped connections and short bodies are tried again after an
 * exponential backoff, up to H5PACK_HTTP_RETRIES more tries (default 5); a request that receives nothing
 * for H5PACK_HTTP_TIMEOUT seconds (default 30) has failed. Other answers are final: 404 is ENOTFOUND,
 * 403 "access denied". An answer whose ETag or size is not the one at open marks the object changed: that
 * read fails, and every check after it (before each batch) reports it, without a request of its own.
 *
 * HDF5's metadata comes as many small reads, one after another under HDF5's lock; each would cost a round
 * trip. Small reads (< HTTP_SMALL_READ) are therefore served from a few aligned blocks of HTTP_BLOCK
 * bytes read whole (store_http_blocks.c), so opening a file costs a few requests, not hundreds. */
#ifndef H5PACK_STORE_STORE_HTTP_H
#define H5PACK_STORE_STORE_HTTP_H

#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

#define HTTP_SMALL_READ ((size_t)64 << 10)
#define HTTP_BLOCK ((size_t)256 << 10)
#define HTTP_BLOCKS 8
#define HTTP_POOL_MAX 64 /* idle handles kept; more are closed when given back */
/* Bounds of the requests the read-ahead keeps in flight; H5PACK_HTTP_INFLIGHT=N caps them (0: no
 * read-ahead, every read is the worker's own request). */
#define HTTP_AHEAD_MIN 4
#define HTTP_AHEAD_MAX 64

/* Adds what a request needs to be authorised (an Authorization header and what it signs) to *HEADERS.
 * METHOD "GET" or "HEAD", RANGE "bytes=A-B" or NULL. 0, or -1 with the reason in ERR. */
typedef int (*http_sign_fn)(void *ctx, const char *method, const char *range, struct curl_slist **headers,
                            char *err, size_t err_len);

/* The settings every request follows, read from the environment at open. */
typedef struct http_settings {
    int retries;        /* H5PACK_HTTP_RETRIES: tries after the first (default 5) */
    long timeout_s;     /* H5PACK_HTTP_TIMEOUT: no byte for this long fails a try (default 30) */
    double backoff_s;   /* the first wait; doubled for each try, at most 32 times it */
    int in_flight;      /* H5PACK_HTTP_INFLIGHT: the read-ahead's requests at most (default HTTP_AHEAD_MAX; 0: none) */
} http_settings;

/* One block of small reads (HTTP_BLOCK bytes at a multiple of it). */
typedef struct http_block {
    uint64_t offset;
    size_t len;    /* 0: empty */
    uint64_t used; /* the clock of its last use: the least recent is replaced */
    uint8_t *bytes;
} http_block;

typedef struct http_ahead http_ahead; /* store_http_ahead.c */

typedef struct http_remote {
    store base;          /* first: the store API sees this */
    char *url;           /* what is requested (for s3://, the endpoint's URL of the object) */
    char *host_header;   /* "Host: ..." sent with every request, NULL: curl's own */
    int follow;          /* follow redirects (http(s)://; never for S3, whose 301 means another region) */
    http_sign_fn sign;   /* NULL: no authorisation */
    void *sign_ctx;
    const char *who;     /* which credentials were used, named when access is denied (NULL: none) */
    const char *region;  /* the region asked for (S3), named when the server says the bucket is elsewhere */
    char validator[192]; /* the ETag at open ("" when the server sends none) */
    http_settings cfg;
    pthread_mutex_t lock; /* the pool, the blocks, changed_why */
    CURL *pool[HTTP_POOL_MAX];
    int pooled;
    http_block blocks[HTTP_BLOCKS];
    uint64_t clock;
    atomic_int changed;  /* an answer showed the object is not the one opened */
    char changed_why[384];
    http_ahead *ahead;   /* the read-ahead, made by the first will_read within a budget; NULL: none */
    uint64_t ahead_budget; /* limit_views: the bytes it may hold (0: no read-ahead) */
} http_remote;

/* What one exchange with the server gave (store_http_conn.c). */
typedef struct http_answer {
    CURLcode rc;
    long status;           /* HTTP status of the last response, 0 without one */
    char curl_err[CURL_ERROR_SIZE];
    int has_length, has_range;
    uint64_t length;       /* Content-Length */
    uint64_t range_first, range_last, range_total; /* Content-Range (total UINT64_MAX: "*") */
    char etag[192];
    char bucket_region[64]; /* x-amz-bucket-region */
    char body[1024];        /* the start of an error response's body */
    size_t body_len;
    size_t got;             /* body bytes written to the caller's buffer */
    int overflow;           /* the body was longer than asked for */
} http_answer;

/* One request on its way: the handle (from R's pool), its headers, where the body goes, the answer. */
typedef struct http_request {
    http_remote *r;
    CURL *h;
    struct curl_slist *headers;
    uint8_t *dst;
    size_t cap;
    http_answer a;
    double first_byte_s, total_s; /* from the request's start: its first byte, its end */
} http_request;

/* ---- store_http_conn.c: handles and one exchange ---------------------------------------------------- */

/* Fills R's settings from the environment and its lock; R->base, url and the rest are the caller's. 0,
 * or EINVAL (a bad setting) / ENOMEM with the reason in ERR. */
int h5pack_http_remote_init(http_remote *r, char *err, size_t err_len);

/* Frees what init and reads made (not R itself, nor what the caller set). */
void h5pack_http_remote_free(http_remote *r);

/* Q ready to run: a handle of R's with METHOD of R's url for [OFFSET, OFFSET + LEN) (LEN 0: no Range), the
 * body into DST. 0, or -1 with Q->a.rc saying why (nothing to end then). Q must not move until ended. */
int h5pack_http_request_start(http_remote *r, http_request *q, const char *method, uint64_t offset, size_t len,
                              void *dst);

/* Q ran with the result RC: its answer completed in Q->a, the handle back in the pool. */
void h5pack_http_request_end(http_request *q, CURLcode rc);

/* One request, no retry: METHOD ("HEAD" / "GET") of R's url, the bytes [OFFSET, OFFSET + LEN) when LEN > 0
 * (a Range header), the body into DST (at most LEN bytes). */
void h5pack_http_exchange(http_remote *r, const char *method, uint64_t offset, size_t len, void *dst,
                          http_answer *a);

/* ---- store_http_get.c: retries, answers checked, the store's read and check ------------------------- */

/* Learns R's size and validator (HEAD; a GET of its first byte where HEAD is refused or says too little).
 * 0, or ENOTFOUND / EIO / EFORMAT with the reason in ERR. */
int h5pack_http_remote_stat(http_remote *r, char *err, size_t err_len);

/* Whether A answers a ranged GET of [OFFSET, OFFSET + LEN): 0, else an h5pack code with the cause in WHY
 * and *AGAIN set when another try may succeed (an ETag or size that differs marks R changed). */
int h5pack_http_judge_get(http_remote *r, uint64_t offset, size_t len, const http_answer *a, char *why,
                          size_t why_len, int *again);

/* The wait before try N + 1 (N >= 1), in seconds: the backoff doubled per try, jittered. */
double h5pack_http_backoff_s(const http_remote *r, int n);

/* The final message of a GET of [OFFSET, OFFSET + LEN) that failed with CAUSE after TRIES tries, as every
 * read reports it ("GET bytes A-B: cause, after N tries"); returns RC. */
int h5pack_http_get_failed(int rc, uint64_t offset, size_t len, const char *cause, int tries, char *err,
                           size_t err_len);

/* [OFFSET, OFFSET + LEN) of R into DST, tried again as the settings say. 0, or EIO / ECORRUPT / ENOTFOUND. */
int h5pack_http_remote_fetch(http_remote *r, uint64_t offset, void *dst, size_t len, char *err, size_t err_len);

/* The store ops every remote store uses (S is an http_remote). */
int h5pack_http_store_read(store *s, uint64_t offset, void *dst, size_t len, char *err, size_t err_len);
int h5pack_http_store_check(store *s, char *err, size_t err_len);
/* HDF5's metadata: small reads from R's blocks (store_http_blocks.c), larger ones as any read. */
int h5pack_http_store_read_meta(store *s, uint64_t offset, void *dst, size_t len, char *err, size_t err_len);

/* The read-ahead's side of the store API (store_http_ahead.c). */
void h5pack_http_store_limit(store *s, uint64_t bytes);
unsigned h5pack_http_store_reads_ahead(const store *s);
void h5pack_http_store_will_read(store *s, uint64_t offset, uint64_t len);

/* ---- store_http_ahead.c: fetching announced reads ahead ------------------------------------------------ */

/* Serves [OFFSET, OFFSET + LEN) into DST from what R's read-ahead fetched for it, waiting while it is on
 * its way: 1 with *RC the read's result (its failure's cause in ERR), or 0 when it holds nothing for that
 * range (the caller requests it itself). */
int h5pack_http_ahead_take(http_remote *r, uint64_t offset, void *dst, size_t len, int *rc, char *err,
                           size_t err_len);

/* Stops R's read-ahead thread and frees what it holds (R's close). */
void h5pack_http_ahead_free(http_remote *r);

/* ---- store_http_blocks.c: small reads from aligned blocks --------------------------------------------- */

/* [OFFSET, OFFSET + LEN) (LEN < HTTP_SMALL_READ) from R's blocks, fetching the one or two it touches. */
int h5pack_http_blocks_read(http_remote *r, uint64_t offset, void *dst, size_t len, char *err, size_t err_len);

#endif
