/* store.c - opening a location with the store its scheme names (store_list.h), and the calls every
 * store shares: reads that name what they read, views where a store has them, the HDF5 signature. */
#include "store.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errtext.h"
#include "h5pack.h"
#include "store_list.h"

#define LIST_STORE(name) &h5pack_store_##name##_ops,
static const store_ops *const g_stores[] = {H5PACK_STORES(LIST_STORE)};
#undef LIST_STORE

#define N_STORES (sizeof g_stores / sizeof g_stores[0])

/* The length of LOCATION's scheme ("s3" in "s3://b/k"), 0 when it has none (a plain path). */
static size_t scheme_length(const char *location)
{
    size_t n = 0;
    while (isalnum((unsigned char)location[n]) || location[n] == '+' || location[n] == '-' || location[n] == '.')
        n++;
    return n > 0 && isalpha((unsigned char)location[0]) && !strncmp(location + n, "://", 3) ? n : 0;
}

static const store_ops *store_for(const char *location, char *err, size_t err_len)
{
    size_t n = scheme_length(location);
    if (n == 0)
        return &h5pack_store_file_ops;
    for (size_t i = 0; i < N_STORES; i++)
        if (strlen(g_stores[i]->name) == n && !strncmp(g_stores[i]->name, location, n))
            return g_stores[i];
    char known[128] = "";
    for (size_t i = 0; i < N_STORES; i++)
        snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s://", i ? ", " : "", g_stores[i]->name);
    h5pack_errf(H5PACK_EINVAL, err, err_len, "%s: no store reads \"%.*s://\" locations (this build reads %s and "
                "plain paths)", location, (int)n, location, known);
    return NULL;
}

int h5pack_store_open(const char *location, store **out, char *err, size_t err_len)
{
    *out = NULL;
    const store_ops *ops = store_for(location, err, err_len);
    if (!ops)
        return H5PACK_EINVAL;
    char why[384] = "";
    int rc = ops->open(location, out, why, sizeof why);
    if (rc)
        return h5pack_errf(rc, err, err_len, "%s: %s", location, why[0] ? why : h5pack_strerror(rc));
    return 0;
}

void h5pack_store_close(store *s)
{
    if (s)
        s->ops->close(s);
}

int h5pack_store_read(store *s, uint64_t offset, void *dst, size_t len, const char *what, char *err, size_t err_len)
{
    char why[256] = "";
    int rc = s->ops->read(s, offset, dst, len, why, sizeof why);
    if (rc)
        h5pack_errf(rc, err, err_len, "%s: %s: %s", s->location, what, why);
    return rc;
}

int h5pack_store_check(store *s, char *err, size_t err_len)
{
    char why[256] = "";
    int rc = s && s->ops->check ? s->ops->check(s, why, sizeof why) : 0;
    if (rc)
        h5pack_errf(rc, err, err_len, "%s: %s", s->location, why);
    return rc;
}

const uint8_t *h5pack_store_view(store *s, uint64_t offset, uint64_t len)
{
    return s->ops->view && offset <= s->size && len <= s->size - offset ? s->ops->view(s, offset, len) : NULL;
}

void h5pack_store_unview(store *s, uint64_t offset, uint64_t len)
{
    if (s->ops->unview)
        s->ops->unview(s, offset, len);
}

void h5pack_store_limit_views(store *s, uint64_t bytes)
{
    if (s->ops->limit_views)
        s->ops->limit_views(s, bytes);
}

unsigned h5pack_store_reads_ahead(const store *s)
{
    return s && s->ops->reads_ahead ? s->ops->reads_ahead(s) : 0;
}

void h5pack_store_will_read(store *s, uint64_t offset, uint64_t len)
{
    if (s->ops->will_read && len > 0 && offset <= s->size && len <= s->size - offset)
        s->ops->will_read(s, offset, len);
}

void h5pack_store_advise_large(store *s)
{
    if (s->ops->advise_large)
        s->ops->advise_large(s);
}

int h5pack_store_has_views(const store *s)
{
    return s->ops->view != NULL && h5pack_store_view((store *)s, 0, 0) != NULL;
}

int h5pack_store_superblock_version(store *s)
{
    static const uint8_t signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    uint8_t got[9];
    char why[128];
    /* HDF5 looks at 0, then at every power of two from 512 (a user block before the superblock); the
     * superblock's version is the byte after the signature */
    for (uint64_t at = 0; at + sizeof got <= s->size; at = at ? 2 * at : 512) {
        if ((s->ops->read_meta ? s->ops->read_meta : s->ops->read)(s, at, got, sizeof got, why, sizeof why) != 0)
            return -2;
        if (!memcmp(got, signature, sizeof signature))
            return got[8];
    }
    return -1;
}

int h5pack_store_is_hdf5(store *s)
{
    int v = h5pack_store_superblock_version(s);
    return v >= 0 ? 1 : v == -1 ? 0 : -1;
}
