/* store_http.c - "http://..." and "https://...": an object on any web server that answers Range requests
 * (a static file server, a CDN, a presigned S3 URL). Its size and ETag by HEAD at open, its bytes by
 * ranged GETs; redirects are followed. What every remote store shares is in store_http.h. */
#include <stdlib.h>
#include <string.h>

#include "errtext.h"
#include "h5pack.h"
#include "store_http.h"
#include "store_list.h"

static void http_close(store *s)
{
    http_remote *r = (http_remote *)s;
    h5pack_http_remote_free(r);
    free(r->url);
    free(s->location);
    free(r);
}

static int http_open(const char *location, store **out, char *err, size_t err_len)
{
    http_remote *r = calloc(1, sizeof *r);
    if (!r || !(r->base.location = strdup(location)) || !(r->url = strdup(location))) {
        if (r)
            free(r->base.location);
        free(r);
        return h5pack_errf(H5PACK_ENOMEM, err, err_len, "out of memory");
    }
    r->base.ops = strncmp(location, "https:", 6) ? &h5pack_store_http_ops : &h5pack_store_https_ops;
    r->follow = 1;
    int rc = h5pack_http_remote_init(r, err, err_len);
    if (rc) {
        free(r->url), free(r->base.location), free(r);
        return rc;
    }
    if ((rc = h5pack_http_remote_stat(r, err, err_len)) != 0) {
        http_close(&r->base);
        return rc;
    }
    *out = &r->base;
    return 0;
}

const store_ops h5pack_store_http_ops = {
    .name = "http",
    .open = http_open,
    .read = h5pack_http_store_read,
    .read_meta = h5pack_http_store_read_meta,
    .check = h5pack_http_store_check,
    .limit_views = h5pack_http_store_limit,
    .reads_ahead = h5pack_http_store_reads_ahead,
    .will_read = h5pack_http_store_will_read,
    .close = http_close,
};

const store_ops h5pack_store_https_ops = {
    .name = "https",
    .open = http_open,
    .read = h5pack_http_store_read,
    .read_meta = h5pack_http_store_read_meta,
    .check = h5pack_http_store_check,
    .limit_views = h5pack_http_store_limit,
    .reads_ahead = h5pack_http_store_reads_ahead,
    .will_read = h5pack_http_store_will_read,
    .close = http_close,
};
