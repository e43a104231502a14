/* store_s3.c - "s3://BUCKET/KEY": an object of Amazon S3 or of an S3-compatible store (MinIO, Ceph, moto),
 * read as store_http.h reads any remote object, every request signed with AWS Signature Version 4
 * (store_s3_sign.c) unless no credentials are found (store_s3_creds.c: then anonymous, for public buckets).
 *
 * Where: AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL (e.g. http://127.0.0.1:9000) names an S3-compatible
 * server, addressed path-style (ENDPOINT/BUCKET/KEY: what such servers all take); otherwise AWS itself,
 * https://BUCKET.s3.REGION.amazonaws.com/KEY (path-style for bucket names with dots, which a TLS
 * certificate's wildcard does not cover). REGION: AWS_REGION, AWS_DEFAULT_REGION, else us-east-1; a
 * bucket elsewhere is an error naming its region (S3 says it in x-amz-bucket-region). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "errtext.h"
#include "h5pack.h"
#include "store_http.h"
#include "store_list.h"
#include "store_s3.h"

typedef struct s3_store {
    http_remote http; /* first: the store API and the HTTP code see this */
    s3_creds creds;
    char region[64];
    char host[256]; /* the Host header: sent, and signed */
    char *path;     /* the URL's path, URI-encoded: what the signature signs */
} s3_store;

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* Signs one request (http_sign_fn): the headers S3 requires, then Authorization over them. */
static int sign_request(void *ctx, const char *method, const char *range, struct curl_slist **headers, char *err,
                        size_t err_len)
{
    s3_store *s = ctx;
    char date[17], auth[512];
    struct tm tm;
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y%m%dT%H%M%SZ", gmtime_r(&now, &tm));
    s3_header h[5]; /* sorted by name, as the signature wants them */
    int n = 0;
    h[n++] = (s3_header){"host", s->host};
    if (range)
        h[n++] = (s3_header){"range", range};
    h[n++] = (s3_header){"x-amz-content-sha256", S3_EMPTY_SHA256};
    h[n++] = (s3_header){"x-amz-date", date};
    if (s->creds.token[0])
        h[n++] = (s3_header){"x-amz-security-token", s->creds.token};
    if (h5pack_s3_sign(&s->creds, s->region, method, s->path, "", h, n, S3_EMPTY_SHA256, date, auth, sizeof auth))
        return h5pack_errf(H5PACK_EIO, err, err_len, "cannot sign the request (libcrypto failed)");
    char line[sizeof s->creds.token + 64];
    for (int i = 0; i <= n; i++) { /* the x-amz-* headers (curl sends host and range), then the signature */
        if (i < n && strncmp(h[i].name, "x-amz-", 6) != 0)
            continue;
        if (i < n)
            snprintf(line, sizeof line, "%s: %s", h[i].name, h[i].value);
        else
            snprintf(line, sizeof line, "Authorization: %s", auth);
        struct curl_slist *more = curl_slist_append(*headers, line);
        if (!more)
            return h5pack_errf(H5PACK_ENOMEM, err, err_len, "out of memory");
        *headers = more;
    }
    return 0;
}

/* BUCKET and KEY of "s3://BUCKET/KEY" (KEY URI-encoded into ENC_KEY). 0, or EINVAL. */
static int split_location(const char *location, char *bucket, size_t bucket_len, char *enc_key, size_t key_len,
                          char *err, size_t err_len)
{
    const char *b = location + strlen("s3://"), *slash = strchr(b, '/');
    if (!slash || slash == b || !slash[1])
        return h5pack_errf(H5PACK_EINVAL, err, err_len, "expected s3://BUCKET/KEY");
    if ((size_t)(slash - b) >= bucket_len)
        return h5pack_errf(H5PACK_EINVAL, err, err_len, "a bucket name has at most %zu characters", bucket_len - 1);
    snprintf(bucket, bucket_len, "%.*s", (int)(slash - b), b);
    if (h5pack_s3_uri_encode(slash + 1, 1, enc_key, key_len) != 0)
        return h5pack_errf(H5PACK_EINVAL, err, err_len, "the key is too long");
    return 0;
}

/* The object's URL, Host and signed path: path-style under an endpoint of the user's, else AWS's. */
static int place(s3_store *s, const char *location, char *err, size_t err_len)
{
    char bucket[64], key[4096], base[1024], path[5200]; /* S3 bucket names have at most 63 bytes */
    int rc = split_location(location, bucket, sizeof bucket, key, sizeof key, err, err_len);
    if (rc)
        return rc;
    const char *endpoint = env("AWS_ENDPOINT_URL_S3") ? env("AWS_ENDPOINT_URL_S3") : env("AWS_ENDPOINT_URL");
    if (endpoint) {
        const char *auth = strstr(endpoint, "://");
        if (!auth || strlen(endpoint) >= sizeof base)
            return h5pack_errf(H5PACK_EINVAL, err, err_len, "AWS_ENDPOINT_URL=%s: expected http(s)://HOST[:PORT]",
                               endpoint);
        auth += 3;
        size_t host_len = strcspn(auth, "/");
        snprintf(s->host, sizeof s->host, "%.*s", (int)host_len, auth);
        snprintf(base, sizeof base, "%.*s", (int)(auth + host_len - endpoint), endpoint);
        const char *prefix = auth + host_len; /* a path the endpoint may have, without its last '/' */
        size_t prefix_len = strlen(prefix) - (strlen(prefix) && prefix[strlen(prefix) - 1] == '/');
        snprintf(path, sizeof path, "%.*s/%s/%s", (int)prefix_len, prefix, bucket, key);
    } else if (strchr(bucket, '.')) {
        snprintf(s->host, sizeof s->host, "s3.%s.amazonaws.com", s->region);
        snprintf(path, sizeof path, "/%s/%s", bucket, key);
    } else {
        snprintf(s->host, sizeof s->host, "%s.s3.%s.amazonaws.com", bucket, s->region);
        snprintf(path, sizeof path, "/%s", key);
    }
    if (!endpoint)
        snprintf(base, sizeof base, "https://%s", s->host);
    size_t url_len = strlen(base) + strlen(path) + 1;
    s->path = strdup(path);
    s->http.url = malloc(url_len);
    s->http.host_header = malloc(strlen(s->host) + 8);
    if (!s->path || !s->http.url || !s->http.host_header)
        return h5pack_errf(H5PACK_ENOMEM, err, err_len, "out of memory");
    snprintf(s->http.url, url_len, "%s%s", base, path);
    sprintf(s->http.host_header, "Host: %s", s->host);
    return 0;
}

static void s3_close(store *st)
{
    s3_store *s = (s3_store *)st;
    if (s->http.base.ops) /* set once the HTTP part was made */
        h5pack_http_remote_free(&s->http);
    free(s->http.url), free(s->http.host_header), free(s->path), free(st->location);
    memset(&s->creds, 0, sizeof s->creds); /* no secret left in freed memory */
    free(s);
}

static int s3_open(const char *location, store **out, char *err, size_t err_len)
{
    s3_store *s = calloc(1, sizeof *s);
    if (!s || !(s->http.base.location = strdup(location))) {
        free(s);
        return h5pack_errf(H5PACK_ENOMEM, err, err_len, "out of memory");
    }
    const char *region = env("AWS_REGION") ? env("AWS_REGION") : env("AWS_DEFAULT_REGION");
    snprintf(s->region, sizeof s->region, "%s", region ? region : "us-east-1");
    int rc = h5pack_s3_creds_find(&s->creds, err, err_len);
    if (!rc)
        rc = place(s, location, err, err_len);
    if (!rc && !(rc = h5pack_http_remote_init(&s->http, err, err_len)))
        s->http.base.ops = &h5pack_store_s3_ops;
    if (rc) {
        s3_close(&s->http.base);
        return rc;
    }
    s->http.region = s->region;
    s->http.who = s->creds.source;
    s->http.sign = s->creds.anonymous ? NULL : sign_request;
    s->http.sign_ctx = s;
    if ((rc = h5pack_http_remote_stat(&s->http, err, err_len)) != 0) {
        size_t n = strlen(err); /* which server was asked: the location does not say */
        snprintf(err + n, err_len - n, " [%s]", s->http.url);
        s3_close(&s->http.base);
        return rc;
    }
    *out = &s->http.base;
    return 0;
}

const store_ops h5pack_store_s3_ops = {
    .name = "s3",
    .open = s3_open,
    .read = h5pack_http_store_read,
    .read_meta = h5pack_http_store_read_meta,
    .check = h5pack_http_store_check,
    .limit_views = h5pack_http_store_limit,
    .reads_ahead = h5pack_http_store_reads_ahead,
    .will_read = h5pack_http_store_will_read,
    .close = s3_close,
};
