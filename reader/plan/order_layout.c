/* order_layout.c - an epoch's stream cut into global batches, each arranged by window slot and split
 * into the ranks' batches (contract in order.h); the layout of a resumed epoch. */
#include "order.h"

#include <stdlib.h>
#include <string.h>

#include "order_arrange.h"

uint64_t h5pack_order_global_batch(const order_params *p)
{
    return p->batch_size * p->world;
}

uint64_t h5pack_order_batches_per_epoch(const order_params *p)
{
    uint64_t g = h5pack_order_global_batch(p);
    return p->drop_last ? p->n_samples / g : (p->n_samples + g - 1) / g;
}

uint64_t h5pack_order_last_real(const order_params *p, int64_t origin)
{
    uint64_t g = h5pack_order_global_batch(p), bpe = h5pack_order_batches_per_epoch(p);
    if (p->drop_last || bpe == 0)
        return g;
    return (uint64_t)((int64_t)p->n_samples - origin) - (bpe - 1) * g;
}

uint64_t h5pack_order_batch_count(const order_params *p, int64_t origin, uint64_t b)
{
    if (b + 1 < h5pack_order_batches_per_epoch(p))
        return p->batch_size;
    return (h5pack_order_last_real(p, origin) + p->world - 1) / p->world;
}

uint64_t h5pack_order_samples_per_epoch(const order_params *p)
{
    uint64_t bpe = h5pack_order_batches_per_epoch(p);
    return bpe ? (bpe - 1) * p->batch_size + h5pack_order_batch_count(p, 0, bpe - 1) : 0;
}

int h5pack_order_start(const order_params *p, uint64_t sample, uint64_t *batch, int64_t *origin)
{
    if (h5pack_order_check(p) || sample > p->n_samples)
        return H5PACK_EINVAL;
    uint64_t g = h5pack_order_global_batch(p), rest = p->n_samples - sample;
    uint64_t left = p->drop_last ? rest / g : (rest + g - 1) / g; /* batches the rest fills */
    if (left == 0)
        return 1;
    *batch = h5pack_order_batches_per_epoch(p) - left;
    *origin = (int64_t)sample - (int64_t)(*batch * g);
    return 0;
}

/* An origin some start gives: the last batch holds 1 .. G real samples, none before position 0 but in
 * batches before the first (which wrap). */
static int origin_valid(const order_params *p, int64_t origin)
{
    uint64_t g = h5pack_order_global_batch(p), bpe = h5pack_order_batches_per_epoch(p);
    if (bpe == 0) /* drop_last with fewer than G samples: an empty epoch */
        return origin == 0;
    if (origin <= -(int64_t)g || origin >= (int64_t)g)
        return 0;
    int64_t end = origin + (int64_t)(bpe * g); /* one past the last position the batches cover */
    return p->drop_last ? end <= (int64_t)p->n_samples : end >= (int64_t)p->n_samples &&
                                                               end - (int64_t)g < (int64_t)p->n_samples;
}

/* What an epoch's batches are built from. With world 1 and the epoch's own layout (and room for the whole
 * stream: not with drop_last cutting a short batch), batch b is stream positions b*G .. one for one: the
 * stream is written into the output itself and each batch arranged in place (no copy of the stream; none
 * at all without slots, where the arrangement keeps stream order). */
typedef struct epoch_build {
    const order_params *p;
    int64_t origin;
    uint64_t n, g, n_slots;
    uint64_t *stream; /* the output itself when in_place */
    uint32_t *slots;  /* NULL: stream order */
    int in_place;
} epoch_build;

/* Batch B of this rank into OUT (the batch's place in the epoch's samples). */
static void build_batch(const epoch_build *e, arrange_scratch *a, uint64_t b, uint64_t *out)
{
    const order_params *p = e->p;
    uint64_t count = h5pack_order_batch_count(p, e->origin, b);
    if (e->in_place) {
        if (!e->slots)
            return; /* already the stream's, in order */
        memcpy(a->copy, out, count * sizeof *out);
        arrange_batch ab = {a->copy, e->slots + b * e->g, count, 0, count, e->n_slots};
        h5pack_arrange_take(&ab, a, 0, count, out);
        return;
    }
    arrange_batch ab = {e->stream, e->slots, e->n, e->origin + (int64_t)(b * e->g), count * p->world, e->n_slots};
    h5pack_arrange_take(&ab, a, (uint64_t)p->rank * count, count, out);
}

int h5pack_order_epoch_part(const order_params *p, uint64_t epoch, int64_t origin, uint64_t keep, uint64_t from,
                            uint64_t *out, uint64_t *count)
{
    if (h5pack_order_check(p) || !origin_valid(p, origin))
        return H5PACK_EINVAL;
    uint64_t n_chunks = h5pack_order_n_chunks(p), bpe = h5pack_order_batches_per_epoch(p);
    epoch_build e = {p, origin, p->n_samples, h5pack_order_global_batch(p),
                     p->kind != H5PACK_ORDER_CHUNK ? 1 : (p->window < n_chunks ? p->window : n_chunks), NULL, NULL,
                     p->world == 1 && origin == 0 && h5pack_order_samples_per_epoch(p) >= p->n_samples};
    e.stream = e.in_place ? out : malloc(e.n * sizeof *e.stream);
    e.slots = p->kind == H5PACK_ORDER_CHUNK ? malloc(e.n * sizeof *e.slots) : NULL;
    arrange_scratch a;
    int rc = h5pack_arrange_init(&a, e.g);
    if (!e.stream || (p->kind == H5PACK_ORDER_CHUNK && !e.slots))
        rc = H5PACK_ENOMEM;
    if (rc == 0)
        rc = h5pack_order_stream(p, epoch, e.stream, e.slots);
    uint64_t done = 0;
    for (uint64_t b = 0; rc == 0 && b < bpe; b++) {
        uint64_t count_b = h5pack_order_batch_count(p, origin, b);
        if (b < keep || b >= from)
            build_batch(&e, &a, b, out + done);
        else if (!e.in_place) /* a batch nobody plans: any sample will do */
            for (uint64_t i = 0; i < count_b; i++)
                out[done + i] = e.stream[0];
        done += count_b;
    }
    if (rc == 0)
        *count = done;
    h5pack_arrange_free(&a);
    if (!e.in_place)
        free(e.stream);
    free(e.slots);
    return rc;
}

int h5pack_order_epoch_at(const order_params *p, uint64_t epoch, int64_t origin, uint64_t *out, uint64_t *count)
{
    return h5pack_order_epoch_part(p, epoch, origin, 0, 0, out, count);
}

int h5pack_order_epoch(const order_params *p, uint64_t epoch, uint64_t *out)
{
    uint64_t count;
    return h5pack_order_epoch_at(p, epoch, 0, out, &count);
}
