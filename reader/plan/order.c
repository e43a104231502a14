/* order.c - the stream of each epoch (contract in order.h); its split into global batches and ranks is
 * order_layout.c's. */
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
    if (p->batch_size > (UINT32_MAX - 1) / p->world) /* positions inside a global batch are 32-bit */
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

static void shuffle(uint64_t *a, uint64_t n, rng_state *r)
{
    for (uint64_t i = n; i > 1; i--) {
        uint64_t j = rng_below(r, i);
        uint64_t t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

/* The CHUNK order's window: W entries, each a slot holding one open chunk. */
typedef struct window_slot {
    uint64_t chunk, n, left; /* the chunk, its samples, those not drawn yet */
    uint32_t id;             /* the slot's number, kept by the chunks that take it (order.h) */
} window_slot;

typedef struct chunk_walk {
    const order_params *p;
    uint64_t epoch, n_chunks, k;
    uint64_t *perm;   /* the chunks in the order they open */
    uint64_t *inner;  /* W rows of k: the samples of the chunk open in slot id, shuffled */
    window_slot *win; /* the first `active` entries are open */
} chunk_walk;

/* Opens chunk C in slot S: its samples, shuffled inside the chunk by their own stream. */
static void open_chunk(chunk_walk *cw, window_slot *s, uint64_t c)
{
    const order_params *p = cw->p;
    uint64_t first = c * cw->k, *row = cw->inner + (uint64_t)s->id * cw->k;
    s->chunk = c;
    s->n = s->left = c + 1 == cw->n_chunks ? p->n_samples - first : cw->k;
    for (uint64_t i = 0; i < s->n; i++)
        row[i] = first + i;
    rng_state ri = {rng_key(p->seed, cw->epoch, STREAM_IN_CHUNK, c)};
    shuffle(row, s->n, &ri);
}

/* CHUNK order (see order.h). Only the open chunks' samples are held (W * k words), each chunk's shuffled
 * when it opens; the draws are those of one chunk-permutation stream and one window stream. */
static int chunk_order(const order_params *p, uint64_t epoch, uint64_t *out, uint32_t *slots)
{
    chunk_walk cw = {p, epoch, h5pack_order_n_chunks(p), p->samples_per_chunk, NULL, NULL, NULL};
    uint64_t w = p->window < 1 ? 1 : (p->window > cw.n_chunks ? cw.n_chunks : p->window);
    cw.perm = malloc(cw.n_chunks * sizeof *cw.perm);
    cw.inner = malloc(w * cw.k * sizeof *cw.inner);
    cw.win = malloc(w * sizeof *cw.win);
    if (!cw.perm || !cw.inner || !cw.win) {
        free(cw.perm), free(cw.inner), free(cw.win);
        return H5PACK_ENOMEM;
    }
    rng_state rp = {rng_key(p->seed, epoch, STREAM_CHUNK_PERM, 0)};
    for (uint64_t c = 0; c < cw.n_chunks; c++)
        cw.perm[c] = c;
    shuffle(cw.perm, cw.n_chunks, &rp);
    uint64_t next_perm = 0, active = 0, emitted = 0;
    for (; active < w; active++) {
        cw.win[active].id = (uint32_t)active;
        open_chunk(&cw, &cw.win[active], cw.perm[next_perm++]);
    }
    rng_state rw = {rng_key(p->seed, epoch, STREAM_WINDOW, 0)};
    while (active > 0) {
        window_slot *s = &cw.win[rng_below(&rw, active)];
        if (slots)
            slots[emitted] = s->id;
        out[emitted++] = cw.inner[(uint64_t)s->id * cw.k + (s->n - s->left)];
        if (--s->left == 0) {
            if (next_perm < cw.n_chunks)
                open_chunk(&cw, s, cw.perm[next_perm++]);
            else /* the window shrinks at the end of the epoch: keep the open entries dense */
                *s = cw.win[--active];
        }
    }
    free(cw.perm), free(cw.inner), free(cw.win);
    return 0;
}

int h5pack_order_stream(const order_params *p, uint64_t epoch, uint64_t *out, uint32_t *slots)
{
    if (h5pack_order_check(p))
        return H5PACK_EINVAL;
    if (p->kind == H5PACK_ORDER_CHUNK)
        return chunk_order(p, epoch, out, slots);
    if (slots)
        memset(slots, 0, p->n_samples * sizeof *slots);
    for (uint64_t i = 0; i < p->n_samples; i++)
        out[i] = i;
    if (p->kind == H5PACK_ORDER_RANDOM) {
        rng_state r = {rng_key(p->seed, epoch, STREAM_RANDOM, 0)};
        shuffle(out, p->n_samples, &r);
    }
    return 0;
}

int h5pack_order_global(const order_params *p, uint64_t epoch, uint64_t *out)
{
    return h5pack_order_stream(p, epoch, out, NULL);
}

uint64_t h5pack_order_accesses(const order_params *p, const uint64_t *samples, uint64_t n, uint64_t *acc,
                        uint64_t *batch_start)
{
    return h5pack_order_accesses_part(p, samples, n, 0, 0, acc, batch_start);
}

uint64_t h5pack_order_accesses_part(const order_params *p, const uint64_t *samples, uint64_t n, uint64_t keep,
                                    uint64_t from, uint64_t *acc, uint64_t *batch_start)
{
    /* last_batch_seen[c] = 1 + the batch that last touched chunk c: no clearing between batches */
    uint64_t n_chunks = h5pack_order_n_chunks(p);
    uint64_t *last_batch_seen = calloc(n_chunks ? n_chunks : 1, sizeof *last_batch_seen);
    if (!last_batch_seen)
        return 0;
    uint64_t n_acc = 0, b = 0, k = p->samples_per_chunk;
    /* sample / k by a multiplication (exact for 32-bit samples and k: Lemire, Kaser and Kurz 2019) */
    int fast = k > 1 && p->n_samples <= UINT32_MAX && k <= UINT32_MAX;
    uint64_t magic = fast ? UINT64_MAX / k + 1 : 0;
    for (uint64_t first = 0; first < n; first += p->batch_size, b++) {
        batch_start[b] = n_acc;
        uint64_t end = first + p->batch_size < n ? first + p->batch_size : n;
        if (b >= keep && b < from)
            continue; /* a batch nobody plans: no accesses */
        for (uint64_t i = first; i < end; i++) {
            uint64_t c = fast ? (uint64_t)(((unsigned __int128)samples[i] * magic) >> 64) : samples[i] / k;
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
