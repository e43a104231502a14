/* pipeline_masks.c - the masks of each batch (pipeline_params.masks). A cache slot holds an image chunk
 * and, right after it, the mask chunk of the same samples: one plan, one load, one generation for both.
 * A worker using a chunk copies each sample's stored mask into the mask input of the batch's backend
 * ring slot (as the two-pass path copies the images), so echoes, redrawn boxes and progressive resizing
 * need no second read. The consumer resamples the delivered masks when it hands a batch out, with the
 * boxes the backend reports for that very delivery (mask_nearest.h): the masks follow the images
 * whatever path, echo or size made them. Sample echo keeps the pooled batches' masks beside the
 * backend's pool, and takes each composed image's mask from where its image came from. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mask_nearest.h"
#include "pipeline_impl.h"

struct pipeline_masks {
    uint64_t mask_bytes;    /* one stored mask: H x W */
    uint8_t *in;            /* per backend ring slot: batch_size stored masks */
    uint8_t *pool;          /* per sample-echo pool entry: batch_size stored masks */
    uint8_t *out;           /* per backend ring slot: the delivered masks */
    size_t out_slot_bytes;  /* batch_size x largest output x element */
    int32_t *cols;          /* consumer: one output row's source columns */
};

uint64_t h5pack_pipeline_slot_bytes(const pipeline *p)
{
    return p->geo->chunk_bytes + (p->pp.masks ? h5pack_masksrc_chunk_bytes(p->pp.masks) : 0);
}

static uint8_t *alloc_bytes(size_t a, size_t b)
{
    return a && b <= SIZE_MAX / a ? malloc(a * b) : NULL;
}

int h5pack_pipeline_masks_start(pipeline *p)
{
    const pipeline_params *pp = &p->pp;
    if (!pp->masks)
        return 0;
    pipeline_masks *m = calloc(1, sizeof *m);
    if (!m)
        return H5PACK_ENOMEM;
    p->masks = m;
    size_t B = pp->setup.op.batch_size, slots = (size_t)pp->prefetch;
    m->mask_bytes = h5pack_masksrc_mask_bytes(pp->masks);
    m->out_slot_bytes = B * pp->mask_max_h * (size_t)pp->mask_max_w * h5pack_mask_dtype_bytes(pp->mask_dtype);
    m->in = alloc_bytes(slots * B, (size_t)m->mask_bytes);
    m->pool = pp->pool_batches ? alloc_bytes((size_t)pp->pool_batches * B, (size_t)m->mask_bytes) : NULL;
    m->out = alloc_bytes(slots, m->out_slot_bytes);
    m->cols = malloc((pp->mask_max_w ? pp->mask_max_w : 1) * sizeof *m->cols);
    if (!m->in || (pp->pool_batches && !m->pool) || !m->out || !m->cols)
        return H5PACK_ENOMEM;
    return 0;
}

void h5pack_pipeline_masks_free(pipeline *p)
{
    pipeline_masks *m = p->masks;
    if (!m)
        return;
    free(m->in), free(m->pool), free(m->out), free(m->cols);
    free(m);
    p->masks = NULL;
}

int h5pack_pipeline_masks_load(pipeline *p, worker *w, uint64_t chunk, uint8_t *slot, char *err, size_t err_len)
{
    if (!w->mask_scratch && !(w->mask_scratch = h5pack_masksrc_scratch_new(p->pp.masks)))
        return h5pack_errf(H5PACK_ENOMEM, err, err_len, "out of memory for reading masks");
    return h5pack_masksrc_read(p->pp.masks, chunk, slot + p->geo->chunk_bytes, w->mask_scratch, &w->cost, err,
                               err_len);
}

static uint8_t *stored_mask(const pipeline *p, uint8_t *block, size_t image)
{
    return block + image * p->masks->mask_bytes;
}

void h5pack_pipeline_masks_copy_group(const pipeline *p, const ring_entry *e, size_t j, const uint8_t *chunk)
{
    const pipeline_masks *m = p->masks;
    size_t B = p->pp.setup.op.batch_size;
    const uint8_t *masks = chunk + p->geo->chunk_bytes; /* the slot's mask chunk */
    uint8_t *in = m->in + (size_t)h5pack_pipeline_ring_slot(p, e) * B * m->mask_bytes;
    uint64_t k = p->geo->samples_per_chunk;
    for (uint32_t g = e->group_start[j]; g < e->group_start[j + 1]; g++) {
        uint32_t pos = e->order[g];
        memcpy(stored_mask(p, in, pos), masks + (e->indices[pos] % k) * m->mask_bytes, (size_t)m->mask_bytes);
    }
}

void h5pack_pipeline_masks_pool_keep(const pipeline *p, int slot, size_t count, int entry)
{
    const pipeline_masks *m = p->masks;
    if (!m)
        return;
    size_t B = p->pp.setup.op.batch_size;
    memcpy(m->pool + (size_t)entry * B * m->mask_bytes, m->in + (size_t)slot * B * m->mask_bytes,
           count * (size_t)m->mask_bytes);
}

/* The stored mask of delivered image I: from SOURCES (a composed sample-echo delivery) or the slot's own. */
static const uint8_t *delivered_source(const pipeline *p, int slot, const backend_source *sources, size_t i)
{
    const pipeline_masks *m = p->masks;
    size_t B = p->pp.setup.op.batch_size;
    if (!sources)
        return m->in + ((size_t)slot * B + i) * m->mask_bytes;
    int32_t buf = sources[i].buf;
    const uint8_t *block = buf < p->pp.prefetch ? m->in + (size_t)buf * B * m->mask_bytes
                                                : m->pool + (size_t)(buf - p->pp.prefetch) * B * m->mask_bytes;
    return block + (size_t)sources[i].image * m->mask_bytes;
}

void h5pack_pipeline_masks_deliver(pipeline *p, int slot, const backend_source *sources, h5pack_batch *batch)
{
    pipeline_masks *m = p->masks;
    if (!m)
        return;
    h5pack_mask_dtype dtype = p->pp.mask_dtype;
    size_t one = (size_t)batch->height * batch->width * h5pack_mask_dtype_bytes(dtype);
    uint8_t *out = m->out + (size_t)slot * m->out_slot_bytes;
    /* without boxes (the raw uint8 batch) every image is its whole stored self */
    h5pack_crop_box whole = {0, 0, (int32_t)p->geo->height, (int32_t)p->geo->width, 0};
    for (size_t i = 0; i < batch->count; i++)
        h5pack_mask_nearest(delivered_source(p, slot, sources, i), p->geo->height, p->geo->width,
                            batch->boxes ? &batch->boxes[i] : &whole, batch->height, batch->width, dtype,
                            out + i * one, m->cols);
    batch->masks = out;
    batch->masks_device = NULL;
    batch->mask_dtype = dtype;
    batch->mask_bytes = batch->count * one;
}
