/* store_mem.c - "mem://PATH": the file at PATH read once, whole, into memory at open, then served from
 * there (as h5py's driver="core" does): every chunk a view, no I/O after open, nothing a truncation of
 * the file can reach. For files that fit in memory and are read many times, and the example of a store
 * in docs/design.md ("A storage kind"). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errtext.h"
#include "h5pack.h"
#include "store_list.h"

typedef struct mem_store {
    store base; /* first: the store API sees this */
    uint8_t *bytes;
} mem_store;

static int load(mem_store *m, const char *path, char *err, size_t err_len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return h5pack_errf(errno == ENOENT ? H5PACK_ENOTFOUND : H5PACK_EIO, err, err_len, "cannot open: %s",
                           strerror(errno));
    int rc = 0;
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (size < 0 || fseek(f, 0, SEEK_SET) != 0)
        rc = h5pack_errf(H5PACK_EIO, err, err_len, "cannot size it (not a regular file?)");
    else if (!(m->bytes = malloc(size ? (size_t)size : 1)))
        rc = h5pack_errf(H5PACK_ENOMEM, err, err_len, "out of memory for its %ld bytes", size);
    else if (fread(m->bytes, 1, (size_t)size, f) != (size_t)size)
        rc = h5pack_errf(H5PACK_EIO, err, err_len, "read failed: %s", ferror(f) ? strerror(errno) : "it shrank");
    m->base.size = size > 0 ? (uint64_t)size : 0;
    fclose(f);
    return rc;
}

static int mem_open(const char *location, store **out, char *err, size_t err_len)
{
    mem_store *m = calloc(1, sizeof *m);
    if (!m || !(m->base.location = strdup(location))) {
        free(m);
        return h5pack_errf(H5PACK_ENOMEM, err, err_len, "out of memory");
    }
    m->base.ops = &h5pack_store_mem_ops;
    int rc = load(m, location + strlen("mem://"), err, err_len);
    if (rc) {
        h5pack_store_mem_ops.close(&m->base);
        return rc;
    }
    *out = &m->base;
    return 0;
}

static int mem_read(store *s, uint64_t offset, void *dst, size_t len, char *err, size_t err_len)
{
    if (offset > s->size || len > s->size - offset)
        return h5pack_errf(H5PACK_ECORRUPT, err, err_len, "%zu bytes at offset %llu are past its end (%llu bytes)", len,
                           (unsigned long long)offset, (unsigned long long)s->size);
    memcpy(dst, ((mem_store *)s)->bytes + offset, len);
    return 0;
}

static const uint8_t *mem_view(store *s, uint64_t offset, uint64_t len)
{
    (void)len; /* the caller checked the range */
    return ((mem_store *)s)->bytes + offset;
}

static void mem_close(store *s)
{
    free(((mem_store *)s)->bytes);
    free(s->location);
    free(s);
}

const store_ops h5pack_store_mem_ops = {
    .name = "mem",
    .open = mem_open,
    .read = mem_read,
    .view = mem_view,
    .close = mem_close,
};
