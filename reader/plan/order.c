/* order.c - sample orders per epoch and the chunk access sequence (contract in order.h). */
#include "order.h"

#include <stdlib.h>
#include <string.h>

#include "params.h" /* H5PACK_ENUM_COUNT */
#include "rng.h"

/* rng streams, so that the draws of different purposes never overlap */
enum { STREAM_RANDOM = 1, STREAM_CHUNK_PERM = 2, STREAM_IN_CHUNK = 3, STREAM_WINDOW = 4 };

int h5pack_order_check(const order_params *p)
{
    if (!p || p->n_samples == 0 || p->samples_per_chunk == 0 || p->batch_size == 0 || p->world == 0 ||
        p->rank >= p->world)
        return H5PACK_EINVAL;
    if ((unsigned)p->kind >= H5PACK_ENUM_COUNT(H5PACK_ORDER_MAP))
        return H5PACK_EINVAL;
    return 0;
}

uint64_t h5pack_order_default_window(uint64_t n_chunks, uint64_t chunk_bytes)
{
    uint64_t w = chunk_bytes ? H5PACK_WINDOW_BYTES / chunk_bytes : H5PACK_WINDOW_MIN_CHUNKS;
    if (w < H5PACK_WINDOW_MIN_CHUNKS)
        w = H5PACK_WINDOW_MIN_CHUNKS;
    if (w > n_chunks)
        w = n_chunks;
    return w < 1 ? 1 : w;
}

uint64_t h5pack_order_n_chunks(const order_params *p)
{
    return (p->n_samples + p->samples_per_chunk - 1) / p->samples_per_chunk;
}

static uint64_t per_rank_before_batching(const order_params *p)
{
    return p->drop_last ? p->n_samples / p->world : (p->n_samples + p->world - 1) / p->world;
}

uint64_t h5pack_order_batches_per_epoch(const order_params *p)
{
    uint64_t n = per_rank_before_batching(p);
    return p->drop_last ? n / p->batch_size : (n + p->batch_size - 1) / p->batch_size;
}

uint64_t h5pack_order_samples_per_epoch(const order_params *p)
{
    uint64_t n = per_rank_before_batching(p);
    return p->drop_last ? (n / p->batch_size) * p->batch_size : n;
}

static void shuffle(uint64_t *a, uint64_t n, rng_state *r)
{
    for (uint64_t i = n; i > 1; i--) {
        uint64_t j = rng_below(r, i);
        uint64_t t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

/* CHUNK order (see order.h). Each chunk's samples are shuffled once up front (k words per chunk, N in
 * all), then drawn from a window of W active chunks. */
static int chunk_order(const order_params *p, uint64_t epoch, uint64_t *out)
{
    uint64_t n_chunks = h5pack_order_n_chunks(p), k = p->samples_per_chunk;
    uint64_t w = p->window < 1 ? 1 : (p->window > n_chunks ? n_chunks : p->window);
    uint64_t *perm = malloc(n_chunks * sizeof *perm);
    uint64_t *slots = malloc(w * sizeof *slots);      /* chunk id held by each window slot */
    uint64_t *left = malloc(w * sizeof *left);        /* samples left in it */
    uint64_t *inner = malloc(n_chunks * k * sizeof *inner);
    if (!perm || !slots || !left || !inner) {
        free(perm), free(slots), free(left), free(inner);
        return H5PACK_ENOMEM;
    }
    rng_state rp = {rng_key(p->seed, epoch, STREAM_CHUNK_PERM, 0)};
    for (uint64_t c = 0; c < n_chunks; c++)
        perm[c] = c;
    shuffle(perm, n_chunks, &rp);
    /* samples of each chunk, shuffled inside the chunk (rows of INNER; the last chunk may be short) */
    for (uint64_t c = 0; c < n_chunks; c++) {
        uint64_t first = c * k, n = (c + 1) * k <= p->n_samples ? k : p->n_samples - first;
        rng_state ri = {rng_key(p->seed, epoch, STREAM_IN_CHUNK, c)};
        for (uint64_t i = 0; i < n; i++)
            inner[c * k + i] = first + i;
        shuffle(inner + c * k, n, &ri);
    }
    uint64_t next_perm = 0, active = 0, emitted = 0;
    for (; active < w; active++, next_perm++) {
        slots[active] = perm[next_perm];
        left[active] = slots[active] == n_chunks - 1 ? p->n_samples - slots[active] * k : k;
    }
    rng_state rw = {rng_key(p->seed, epoch, STREAM_WINDOW, 0)};
    while (active > 0) {
        uint64_t s = rng_below(&rw, active);
        uint64_t c = slots[s];
        uint64_t n = c == n_chunks - 1 ? p->n_samples - c * k : k;
        out[emitted++] = inner[c * k + (n - left[s])];
        if (--left[s] == 0) {
            if (next_perm < n_chunks) {
                slots[s] = perm[next_perm++];
                left[s] = slots[s] == n_chunks - 1 ? p->n_samples - slots[s] * k : k;
            } else { /* window shrinks at the end of the epoch: keep slots dense */
                active--;
                slots[s] = slots[active];
                left[s] = left[active];
            }
        }
    }
    free(perm), free(slots), free(left), free(inner);
    return 0;
}

int h5pack_order_global(const order_params *p, uint64_t epoch, uint64_t *out)
{
    if (h5pack_order_check(p))
        return H5PACK_EINVAL;
    if (p->kind == H5PACK_ORDER_CHUNK)
        return chunk_order(p, epoch, out);
    for (uint64_t i = 0; i < p->n_samples; i++)
        out[i] = i;
    if (p->kind == H5PACK_ORDER_RANDOM) {
        rng_state r = {rng_key(p->seed, epoch, STREAM_RANDOM, 0)};
        shuffle(out, p->n_samples, &r);
    }
    return 0;
}

int h5pack_order_epoch(const order_params *p, uint64_t epoch, uint64_t *out)
{
    if (h5pack_order_check(p))
        return H5PACK_EINVAL;
    uint64_t per_rank = per_rank_before_batching(p), n = h5pack_order_samples_per_epoch(p);
    if (p->world == 1 && n == p->n_samples)
        return h5pack_order_global(p, epoch, out);
    uint64_t *global = malloc(p->n_samples * sizeof *global);
    if (!global)
        return H5PACK_ENOMEM;
    int rc = h5pack_order_global(p, epoch, global);
    if (rc == 0) {
        uint64_t start = (uint64_t)p->rank * per_rank;
        for (uint64_t i = 0; i < n; i++)
            out[i] = global[(start + i) % p->n_samples]; /* padding wraps to the order's start */
    }
    free(global);
    return rc;
}

uint64_t h5pack_order_accesses(const order_params *p, const uint64_t *samples, uint64_t n, uint64_t *acc,
                        uint64_t *batch_start)
{
    /* last_batch_seen[c] = 1 + the batch that last touched chunk c: no clearing between batches */
    uint64_t n_chunks = h5pack_order_n_chunks(p);
    uint64_t *last_batch_seen = calloc(n_chunks ? n_chunks : 1, sizeof *last_batch_seen);
    if (!last_batch_seen)
        return 0;
    uint64_t n_acc = 0, b = 0;
    for (uint64_t first = 0; first < n; first += p->batch_size, b++) {
        batch_start[b] = n_acc;
        uint64_t end = first + p->batch_size < n ? first + p->batch_size : n;
        for (uint64_t i = first; i < end; i++) {
            uint64_t c = samples[i] / p->samples_per_chunk;
            if (last_batch_seen[c] != b + 1) {
                last_batch_seen[c] = b + 1;
                acc[n_acc++] = c;
            }
        }
    }
    batch_start[b] = n_acc;
    free(last_batch_seen);
    return n_acc;
}
