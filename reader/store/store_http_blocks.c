/* store_http_blocks.c - HDF5's metadata reads of a remote object served from a few blocks (store_http.h):
 * HDF5 asks for an object header, then the B-tree node it names, then the heap..., tens to hundreds of
 * reads of a few hundred bytes each, one after another. Read one by one, each costs a round trip (20 ms
 * to a far region: seconds to open a file). Metadata lies close together, so a read of the aligned block
 * around it brings its neighbours along. Chunk reads never come here: a block around a small chunk would
 * be bytes nobody asked for. */
#include <stdlib.h>
#include <string.h>

#include "errtext.h"
#include "h5pack.h"
#include "store_http.h"

/* Copies [IN, IN + K) of the block at START into OUT when R holds it: 1, else 0. */
static int copy_held(http_remote *r, uint64_t start, size_t in, uint8_t *out, size_t k)
{
    int found = 0;
    pthread_mutex_lock(&r->lock);
    for (int i = 0; i < HTTP_BLOCKS && !found; i++) {
        http_block *b = &r->blocks[i];
        if (b->len > 0 && b->offset == start && in + k <= b->len) {
            memcpy(out, b->bytes + in, k);
            b->used = ++r->clock;
            found = 1;
        }
    }
    pthread_mutex_unlock(&r->lock);
    return found;
}

/* Keeps BYTES (the block at START) in place of the least recently used one. */
static void hold(http_remote *r, uint64_t start, uint8_t *bytes, size_t len)
{
    pthread_mutex_lock(&r->lock);
    http_block *victim = &r->blocks[0];
    for (int i = 1; i < HTTP_BLOCKS; i++)
        if (r->blocks[i].used < victim->used)
            victim = &r->blocks[i];
    uint8_t *old = victim->bytes;
    *victim = (http_block){start, len, ++r->clock, bytes};
    pthread_mutex_unlock(&r->lock);
    free(old);
}

static int from_block(http_remote *r, uint64_t start, size_t in, uint8_t *out, size_t k, char *err, size_t err_len)
{
    if (copy_held(r, start, in, out, k))
        return 0;
    /* fetched without the lock: another thread's small read need not wait for this one */
    size_t len = r->base.size - start < HTTP_BLOCK ? (size_t)(r->base.size - start) : HTTP_BLOCK;
    uint8_t *bytes = malloc(len);
    if (!bytes)
        return h5pack_errf(H5PACK_ENOMEM, err, err_len, "out of memory for a block of %zu bytes", len);
    int rc = h5pack_http_remote_fetch(r, start, bytes, len, err, err_len);
    if (rc) {
        free(bytes);
        return rc;
    }
    memcpy(out, bytes + in, k);
    hold(r, start, bytes, len);
    return 0;
}

int h5pack_http_blocks_read(http_remote *r, uint64_t offset, void *dst, size_t len, char *err, size_t err_len)
{
    uint8_t *out = dst;
    while (len > 0) { /* one block, or the ends of two */
        uint64_t start = offset / HTTP_BLOCK * HTTP_BLOCK;
        size_t in = (size_t)(offset - start), k = len < HTTP_BLOCK - in ? len : HTTP_BLOCK - in;
        int rc = from_block(r, start, in, out, k, err, err_len);
        if (rc)
            return rc;
        offset += k, out += k, len -= k;
    }
    return 0;
}
