/* backend_cpu.c - the conversion stage on the host: uint8 batch -> normalised output in plain memory.
 *
 * submit() runs on a worker thread and converts single-threaded: several workers convert different
 * batches at once, which already uses the cores. resubmit() (an echo, or a composed sample-echo
 * delivery) runs on the consumer thread, the only one waiting for it, so it spreads the batch's images
 * over config.threads OpenMP threads. uint8 output in the input's layout, without a resizing crop or
 * sample echo, needs no conversion at all: the consumer gets the input buffer itself. On the one-pass
 * path (backend_convert.h) the workers convert straight from the chunks into a slot's output and
 * submit only records the job and its boxes. The slots' buffers and h5pack_detach's hand-over of one of
 * them are ring_memory.h's. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef H5PACK_HAVE_OPENMP
#include <omp.h>
#endif

#include "augment_crops.h"
#include "backend.h"
#include "backend_convert.h"
#include "backend_resample.h"
#include "clock.h"
#include "ring_memory.h"

#define CPU_ALIGN 64

/* What a slot's last conversion was (to redo it when the output size changed) and what it produced. */
typedef struct cpu_slot {
    backend_job job;
    backend_source *sources; /* batch_size: the job's sources, copied */
    uint32_t *dims;          /* 2 x batch_size: the job's image sizes, copied (images of several sizes) */
    const uint8_t **srcs;    /* batch_size: address of each delivered image's source */
    uint64_t *addrs;         /* batch_size: the same as numbers (the resizing plan's form) */
    backend_box *boxes;      /* batch_size */
    uint32_t out_h, out_w;
    void *blob;              /* resizing crops: the job's geometry */
    aug_job aj;              /* one-pass crops: the job planned at bind (sources and taps filled in per image) */
    uint64_t plan_generation; /* one-pass crops: counts the jobs planned here (a worker's memo is of one) */
} cpu_slot;

struct cpu_crop_memo {
    const cpu_slot *slot; /* the job the taps remembered belong to: this slot's plan of this generation */
    uint64_t generation;
    aug_tap_memo taps;
};

typedef struct cpu_backend {
    backend base;
    backend_params p;
    aug_crops_params pp;
    size_t in_image_bytes;
    size_t in_slot_bytes, out_slot_bytes; /* rounded up to CPU_ALIGN */
    ring_memory inputs;                   /* per slot in_slot_bytes (none on the one-pass path) */
    int64_t *labels;                      /* slots x batch_size */
    ring_memory outputs;                  /* per slot out_slot_bytes (none with pass-through) */
    uint8_t *pool;                        /* pool_batches x batch_size images */
    size_t pool_bytes;
    cpu_slot *slot_state;
    size_t blob_bytes;
    _Atomic uint64_t convert_ns;          /* summed over all threads that converted */
    int passthrough;                      /* uint8 out, same layout: outputs alias inputs */
    int one_pass;                         /* the workers write the outputs: no uint8 inputs at all */
    backend_conv conv;                    /* the conversion without a resizing crop, prepared once */
} cpu_backend;

static cpu_backend *cpu_of(backend *b)
{
    return (cpu_backend *)b;
}

static size_t round_up(size_t n, size_t a)
{
    return (n + a - 1) / a * a;
}

static uint8_t *cpu_host_input(backend *b, int slot)
{
    cpu_backend *cb = cpu_of(b);
    return cb->inputs.block ? cb->inputs.at[slot] : NULL; /* none on the one-pass path */
}

/* A slot's label rows, rounded up so that every slot's buffer stays 64-byte aligned. */
static size_t label_slot_bytes(const backend_params *p)
{
    return (p->batch_size * h5pack_backend_label_bytes(p) + 63) & ~(size_t)63;
}

static int64_t *cpu_host_labels(backend *b, int slot)
{
    cpu_backend *cb = cpu_of(b);
    return (int64_t *)(void *)((uint8_t *)cb->labels + (size_t)slot * label_slot_bytes(&cb->p));
}

static void *cpu_output_of(cpu_backend *cb, int slot)
{
    return cb->passthrough ? cb->inputs.at[slot] : cb->outputs.at[slot];
}

static int check_call(cpu_backend *cb, int slot, size_t count, char *err, size_t err_len)
{
    if (slot >= 0 && slot < cb->p.slots && count <= cb->p.batch_size)
        return H5PACK_OK;
    return h5pack_errf(H5PACK_EINVAL, err, err_len,
                                "cpu backend: slot %d of %d, %zu images of at most %zu: out of range", slot,
                                cb->p.slots, count, cb->p.batch_size);
}

/* The source address of every image of JOB into S->srcs (checking composed sources). */
static int resolve_sources(cpu_backend *cb, int slot, const backend_job *job, char *err, size_t err_len)
{
    cpu_slot *s = &cb->slot_state[slot];
    for (size_t i = 0; i < job->count; i++) {
        backend_source src = job->sources ? job->sources[i] : (backend_source){.buf = slot, .image = (uint32_t)i};
        int pooled = src.buf >= cb->p.slots;
        if (src.buf < 0 || src.buf >= cb->p.slots + cb->p.pool_batches || src.image >= cb->p.batch_size)
            return h5pack_errf(H5PACK_EINVAL, err, err_len, "cpu backend: image %zu: no source %d/%u", i,
                                        src.buf, src.image);
        const uint8_t *base = pooled ? cb->pool + (size_t)(src.buf - cb->p.slots) * cb->p.batch_size * cb->in_image_bytes
                                     : cb->inputs.block ? cb->inputs.at[src.buf] : NULL; /* one-pass: none */
        s->srcs[i] = base + (size_t)src.image * cb->in_image_bytes;
        s->addrs[i] = (uint64_t)(uintptr_t)s->srcs[i];
    }
    return H5PACK_OK;
}

/* Images [first, first + n) of the slot's conversion (plan already made for resizing crops). */
static void convert_part(cpu_backend *cb, int slot, const aug_job *aj, size_t first, size_t n)
{
    cpu_slot *s = &cb->slot_state[slot];
    if (!aj) {
        for (size_t i = first; i < first + n; i++)
            h5pack_backend_conv_image(&cb->conv, s->srcs[i], cpu_output_of(cb, slot), i, s->job.key);
        return;
    }
    float *scratch = malloc(sizeof(float) * h5pack_resample_scratch_floats(aj));
    if (scratch) /* (cannot fail for sane sizes; on failure the images stay unconverted) */
        h5pack_resample_images(aj, (uint32_t)first, (uint32_t)n, scratch);
    free(scratch);
}

/* Images [first, first + n) of part PART when COUNT images are split into PARTS contiguous runs. */
static void split_range(size_t count, int parts, int part, size_t *first, size_t *n)
{
    size_t base = count / (size_t)parts, extra = count % (size_t)parts, k = (size_t)part;
    *first = k * base + (k < extra ? k : extra);
    *n = base + (k < extra ? 1 : 0);
}

/* Output bytes per OpenMP thread below which the consumer converts a delivery alone: a team's other
 * threads wait for cores that the reader's workers keep busy, up to a scheduler time slice (8-13 ms per
 * echoed delivery of a small batch were measured on 2 busy cores, 0.03 ms alone), far more than such a
 * batch's conversion takes. 4 MiB is about 1-2 ms of conversion on one thread. */
#define MIN_PART_BYTES ((size_t)4 << 20)

/* How many threads convert COUNT images of IMAGE_BYTES output each with THREADS allowed. */
static int parts_for(size_t count, size_t image_bytes, int threads)
{
    size_t parts = threads > 1 ? (size_t)threads : 1, by_bytes = count * image_bytes / MIN_PART_BYTES;
    parts = parts < by_bytes ? parts : by_bytes;
    parts = parts < count ? parts : count;
    return parts > 0 ? (int)parts : 1;
}

/* Converts JOB into SLOT with THREADS OpenMP threads: sources, geometry, boxes, the pixels. */
static int convert(cpu_backend *cb, int slot, backend_job job, int threads, char *err, size_t err_len)
{
    cpu_slot *s = &cb->slot_state[slot];
    if (job.pixels_done && cb->one_pass && cb->p.crop != H5PACK_CROP_NONE) {
        s->job = job; /* planned at bind, resampled by the workers: sizes and boxes are in place */
        return H5PACK_OK;
    }
    if (job.sources && job.sources != s->sources)
        memcpy(s->sources, job.sources, job.count * sizeof *job.sources);
    if (job.sources)
        job.sources = s->sources;
    if (job.dims && job.dims != s->dims) /* kept for a redo after an output size change */
        memcpy(s->dims, job.dims, 2 * job.count * sizeof *job.dims);
    if (job.dims)
        job.dims = s->dims;
    s->job = job;
    int rc = resolve_sources(cb, slot, &job, err, err_len);
    if (rc)
        return rc;
    if (job.sources && job.labels)
        memcpy(cpu_host_labels(&cb->base, slot), job.labels, job.count * h5pack_backend_label_bytes(&cb->p));
    s->job.labels = NULL; /* copied: a redo (output size changed) must not read the caller's buffer */
    h5pack_backend_size_for(&cb->base, job.epoch, &s->out_h, &s->out_w);
    aug_job aj, *ajp = NULL;
    if (cb->p.crop != H5PACK_CROP_NONE) {
        h5pack_aug_crops_sized(&cb->pp, job.key, job.count, s->out_h, s->out_w, s->addrs, job.dims, s->blob, &aj);
        aj.out = cpu_output_of(cb, slot);
        h5pack_backend_job_boxes(&aj, s->boxes);
        ajp = &aj;
    } else {
        h5pack_backend_plain_boxes(&cb->p, job.key, job.count, s->boxes);
    }
    if (cb->passthrough || job.pixels_done)
        return H5PACK_OK;
    int parts = parts_for(job.count, h5pack_backend_output_image_bytes(&cb->p), threads);
    uint64_t t0 = h5pack_clock_ns();
    /* One contiguous run of images per thread: each builds its table (or scratch) once. */
#ifdef H5PACK_HAVE_OPENMP
#pragma omp parallel for num_threads(parts) schedule(static, 1) if (parts > 1)
#endif
    for (int part = 0; part < parts; part++) {
        size_t first, n;
        split_range(job.count, parts, part, &first, &n);
        convert_part(cb, slot, ajp, first, n);
    }
    atomic_fetch_add(&cb->convert_ns, h5pack_clock_ns() - t0);
    return H5PACK_OK;
}

static int cpu_submit(backend *b, int slot, backend_job job, char *err, size_t err_len)
{
    cpu_backend *cb = cpu_of(b);
    int rc = check_call(cb, slot, job.count, err, err_len);
    if (rc || !job.convert)
        return rc;
    return convert(cb, slot, job, 1, err, err_len);
}

static int cpu_resubmit(backend *b, int slot, backend_job job, char *err, size_t err_len)
{
    cpu_backend *cb = cpu_of(b);
    int rc = check_call(cb, slot, job.count, err, err_len);
    return rc ? rc : convert(cb, slot, job, cb->p.threads, err, err_len);
}

static int cpu_pool_store(backend *b, int slot, size_t count, int entry, char *err, size_t err_len)
{
    cpu_backend *cb = cpu_of(b);
    int rc = check_call(cb, slot, count, err, err_len);
    if (rc)
        return rc;
    if (entry < 0 || entry >= cb->p.pool_batches)
        return h5pack_errf(H5PACK_EINVAL, err, err_len, "cpu backend: pool entry %d of %d", entry,
                                    cb->p.pool_batches);
    size_t batch_bytes = cb->p.batch_size * cb->in_image_bytes;
    memcpy(cb->pool + (size_t)entry * batch_bytes, cpu_host_input(b, slot), count * cb->in_image_bytes);
    return H5PACK_OK;
}

static int cpu_output(backend *b, int slot, size_t count, h5pack_batch *batch, char *err, size_t err_len)
{
    cpu_backend *cb = cpu_of(b);
    int rc = check_call(cb, slot, count, err, err_len);
    if (rc)
        return rc;
    cpu_slot *s = &cb->slot_state[slot];
    if (cb->p.crop != H5PACK_CROP_NONE) { /* converted before the output size changed: redo it */
        uint32_t h, w;
        h5pack_backend_size_for(b, s->job.epoch, &h, &w);
        if ((h != s->out_h || w != s->out_w) && cb->one_pass) /* the pipeline redoes these from the chunks */
            return h5pack_errf(H5PACK_EINTERNAL, err, err_len, "cpu backend: slot %d is stale", slot);
        if ((h != s->out_h || w != s->out_w) && (rc = convert(cb, slot, s->job, cb->p.threads, err, err_len)))
            return rc;
    }
    batch->data = cpu_output_of(cb, slot);
    batch->bytes = count * h5pack_backend_image_bytes_at(&cb->p, s->out_h, s->out_w);
    batch->on_device = 0;
    batch->cuda_event = NULL;
    batch->labels = cpu_host_labels(b, slot); /* the core sets NULL when the file has no labels */
    batch->labels_device = NULL;
    return H5PACK_OK;
}

static int cpu_release(backend *b, int slot, char *err, size_t err_len)
{
    return check_call(cpu_of(b), slot, 0, err, err_len);
}

static void cpu_geometry(backend *b, int slot, const backend_box **boxes, uint32_t *out_h, uint32_t *out_w)
{
    cpu_slot *s = &cpu_of(b)->slot_state[slot];
    *boxes = s->boxes, *out_h = s->out_h, *out_w = s->out_w;
}

static void cpu_times(backend *b, double *convert_s, double *copy_s, uint64_t *device_bytes)
{
    cpu_backend *cb = cpu_of(b);
    if (convert_s)
        *convert_s = (double)atomic_load(&cb->convert_ns) * 1e-9;
    if (copy_s)
        *copy_s = 0.0;
    if (device_bytes)
        *device_bytes = 0;
}

static void cpu_destroy(backend *b)
{
    cpu_backend *cb = cpu_of(b);
    if (!cb)
        return;
    for (int i = 0; cb->slot_state && i < cb->p.slots; i++) {
        cpu_slot *s = &cb->slot_state[i];
        free(s->sources), free(s->srcs), free(s->addrs), free(s->boxes), free(s->dims), free(s->blob);
    }
    free(cb->slot_state);
    /* the large ones kept for the next reader of the same sizes (ring_memory.h) */
    h5pack_ring_memory_free(&cb->inputs);
    h5pack_ring_memory_free(&cb->outputs);
    h5pack_kept_give(cb->pool, cb->pool_bytes);
    free(cb->labels);
    h5pack_backend_sizes_destroy(b);
    free(cb);
}

static int cpu_detach(backend *b, int slot, int more_echoes, backend_detached *out, int *copied, char *err,
                      size_t err_len);

static const backend_ops cpu_ops = {cpu_host_input, cpu_host_labels, cpu_submit,   cpu_resubmit, cpu_pool_store,
                                    cpu_output,     cpu_release,     cpu_geometry, cpu_times,    cpu_destroy,
                                    cpu_detach};

const backend_conv *h5pack_backend_cpu_one_pass(backend *b)
{
    if (!b || b->ops != &cpu_ops)
        return NULL;
    cpu_backend *cb = cpu_of(b);
    return cb->one_pass && cb->p.crop == H5PACK_CROP_NONE ? &cb->conv : NULL;
}

int h5pack_backend_cpu_one_pass_crops(backend *b)
{
    return b && b->ops == &cpu_ops && cpu_of(b)->one_pass && cpu_of(b)->p.crop != H5PACK_CROP_NONE;
}

void h5pack_backend_cpu_bind_crops(backend *b, int slot, uint64_t key, size_t count, uint64_t epoch,
                                   const uint32_t *dims)
{
    cpu_backend *cb = cpu_of(b);
    cpu_slot *s = &cb->slot_state[slot];
    h5pack_backend_size_for(b, epoch, &s->out_h, &s->out_w);
    memset(s->addrs, 0, count * sizeof *s->addrs); /* each worker sets its images' sources and taps */
    h5pack_aug_crop_boxes(&cb->pp, key, count, s->out_h, s->out_w, s->addrs, dims, s->blob, &s->aj);
    s->plan_generation++;
    s->aj.out = cpu_output_of(cb, slot);
    h5pack_backend_job_boxes(&s->aj, s->boxes);
    s->job = h5pack_backend_job(count, key);
    s->job.epoch = epoch;
}

size_t h5pack_backend_cpu_crop_scratch_floats(backend *b, int slot)
{
    return h5pack_resample_scratch_floats(&cpu_of(b)->slot_state[slot].aj);
}

cpu_crop_memo *h5pack_backend_cpu_crop_memo_new(void)
{
    cpu_crop_memo *memo = calloc(1, sizeof *memo);
    if (memo)
        h5pack_aug_tap_memo_init(&memo->taps, 1); /* a worker keeps each box length's taps across batches */
    return memo;
}

void h5pack_backend_cpu_crop_memo_free(cpu_crop_memo *memo)
{
    if (memo)
        h5pack_aug_tap_memo_free(&memo->taps);
    free(memo);
}

/* NEXT's crop region, for the resampling before it to prefetch. */
static void plan_next_prefetch(const cpu_backend *cb, const cpu_crop_next *next, src_prefetch *pf)
{
    if (!next || !next->src) {
        h5pack_src_prefetch_none(pf);
        return;
    }
    h5pack_src_prefetch_region(pf, &cb->slot_state[next->slot].aj, next->pos, next->src);
}

void h5pack_backend_cpu_crop_image(backend *b, int slot, uint32_t pos, const uint8_t *src, float *scratch,
                                   cpu_crop_memo *memo, const cpu_crop_next *next)
{
    cpu_backend *cb = cpu_of(b);
    cpu_slot *s = &cb->slot_state[slot];
    if (memo->slot != s || memo->generation != s->plan_generation) { /* a new job: forget the last one's images */
        h5pack_aug_tap_memo_new_job(&memo->taps);
        memo->slot = s, memo->generation = s->plan_generation;
    }
    ((aug_image *)(uintptr_t)s->aj.images)[pos].src = (uint64_t)(uintptr_t)src; /* the blob is the slot's */
    h5pack_aug_crop_taps(&cb->pp, &s->aj, pos, &memo->taps);
    src_prefetch pf;
    plan_next_prefetch(cb, next, &pf);
    h5pack_resample_image_then(&s->aj, pos, scratch, &pf);
}

int h5pack_backend_cpu_crops_stale(backend *b, int slot)
{
    const cpu_slot *s = &cpu_of(b)->slot_state[slot];
    uint32_t h, w;
    h5pack_backend_size_for(b, s->job.epoch, &h, &w);
    return h != s->out_h || w != s->out_w;
}

void *h5pack_backend_cpu_output(backend *b, int slot)
{
    return cpu_output_of(cpu_of(b), slot);
}

void h5pack_backend_cpu_add_convert_ns(backend *b, uint64_t ns)
{
    atomic_fetch_add(&cpu_of(b)->convert_ns, ns);
}

/* The slot's delivered output memory goes to the caller (pass-through: its input, which a later echo
 * delivers again, so that one keeps a copy); converting paths write a later delivery whole, so its new
 * memory needs no values. */
static int cpu_detach(backend *b, int slot, int more_echoes, backend_detached *out, int *copied, char *err,
                      size_t err_len)
{
    cpu_backend *cb = cpu_of(b);
    int rc = check_call(cb, slot, 0, err, err_len);
    if (rc)
        return rc;
    ring_memory *m = cb->passthrough ? &cb->inputs : &cb->outputs;
    int keep_values = cb->passthrough && more_echoes;
    if (h5pack_ring_memory_detach(m, slot, keep_values, out) != 0)
        return h5pack_errf(H5PACK_ENOMEM, err, err_len, "cpu backend: no memory for a new batch buffer of %zu "
                           "bytes", m->slot_bytes);
    *copied = keep_values;
    return H5PACK_OK;
}

/* The per-slot bookkeeping; 0 or -1 without memory. */
static int alloc_slots(cpu_backend *cb)
{
    size_t bs = cb->p.batch_size;
    cb->slot_state = calloc((size_t)cb->p.slots, sizeof *cb->slot_state);
    if (!cb->slot_state)
        return -1;
    for (int i = 0; i < cb->p.slots; i++) {
        cpu_slot *s = &cb->slot_state[i];
        s->sources = malloc(bs * sizeof *s->sources);
        s->srcs = malloc(bs * sizeof *s->srcs);
        s->addrs = malloc(bs * sizeof *s->addrs);
        s->boxes = calloc(bs, sizeof *s->boxes);
        s->dims = malloc(2 * bs * sizeof *s->dims);
        s->blob = cb->blob_bytes ? malloc(cb->blob_bytes) : NULL;
        h5pack_backend_size_for(&cb->base, 0, &s->out_h, &s->out_w);
        if (!s->sources || !s->srcs || !s->addrs || !s->boxes || !s->dims || (cb->blob_bytes && !s->blob))
            return -1;
    }
    return 0;
}

int h5pack_backend_cpu_create(const backend_params *p, backend **out, char *err, size_t err_len)
{
    *out = NULL;
    int rc = h5pack_backend_check_params(p, err, err_len);
    if (rc != H5PACK_OK)
        return rc;
    cpu_backend *cb = calloc(1, sizeof *cb);
    if (!cb)
        return h5pack_errf(H5PACK_ENOMEM, err, err_len, "cpu backend: out of memory");
    cb->p = *p;
    h5pack_backend_sizes_init(&cb->base, p);
    h5pack_backend_crop_params(p, &cb->pp);
    h5pack_backend_conv_init(&cb->conv, p);
    cb->in_image_bytes = p->in_image_bytes ? (size_t)p->in_image_bytes : (size_t)p->channels * p->height * p->width;
    cb->in_slot_bytes = round_up(cb->in_image_bytes * p->batch_size, CPU_ALIGN);
    cb->out_slot_bytes = round_up(h5pack_backend_output_image_bytes(p) * p->batch_size, CPU_ALIGN);
    cb->passthrough = p->dtype == H5PACK_DTYPE_UINT8 && p->in_layout == p->out_layout && p->crop == H5PACK_CROP_NONE &&
                      p->pool_batches == 0;
    if (cb->passthrough)
        cb->out_slot_bytes = 0;
    cb->one_pass = p->one_pass && !cb->passthrough && p->pool_batches == 0;
    if (cb->one_pass)
        cb->in_slot_bytes = 0; /* the workers read the chunks themselves */
    if (p->crop != H5PACK_CROP_NONE)
        cb->blob_bytes = h5pack_aug_blob_capacity(&cb->pp, p->batch_size, p->max_out_height, p->max_out_width);
    size_t slots = (size_t)p->slots, pool_bytes = (size_t)p->pool_batches * p->batch_size * cb->in_image_bytes;
    int inputs_ok = cb->one_pass || h5pack_ring_memory_alloc(&cb->inputs, p->slots, cb->in_slot_bytes) == 0;
    int outputs_ok = cb->passthrough || h5pack_ring_memory_alloc(&cb->outputs, p->slots, cb->out_slot_bytes) == 0;
    cb->labels = h5pack_ring_alloc_aligned(slots * label_slot_bytes(p));
    cb->pool = pool_bytes ? h5pack_ring_alloc(pool_bytes) : NULL;
    cb->pool_bytes = pool_bytes;
    if (!inputs_ok || !outputs_ok || !cb->labels || (pool_bytes && !cb->pool) || alloc_slots(cb) != 0)
        goto nomem;
    atomic_init(&cb->convert_ns, 0);
    cb->base.ops = &cpu_ops;
    cb->base.device = H5PACK_DEVICE_CPU;
    snprintf(cb->base.name, sizeof cb->base.name, "cpu");
    cb->base.pinned_bytes = slots * (cb->in_slot_bytes + cb->out_slot_bytes + p->batch_size * sizeof(int64_t));
    cb->base.pool_bytes = pool_bytes;
    *out = &cb->base;
    return H5PACK_OK;
nomem:
    snprintf(err, err_len, "backend: cannot allocate the batch ring (%d slots of %zu images): %s", p->slots,
             p->batch_size, strerror(ENOMEM));
    cpu_destroy(&cb->base);
    return H5PACK_ENOMEM;
}
