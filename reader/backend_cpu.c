/* backend_cpu.c - the conversion stage on the host: uint8 batch -> normalised output in plain memory.
 *
 * submit() runs on a worker thread and converts single-threaded: several workers convert different
 * batches at once, which already uses the cores. resubmit() (an echo) runs on the consumer thread, the
 * only one waiting for it, so it spreads the batch's images over config.threads OpenMP threads.
 * uint8 output in the input's layout needs no conversion at all: the consumer gets the input buffer
 * itself (no output ring, one pass over the data fewer). */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef H5PACK_HAVE_OPENMP
#include <omp.h>
#endif

#include "backend.h"

#define CPU_ALIGN 64

typedef struct cpu_backend {
    backend base;
    backend_params p;
    size_t in_image_bytes, out_image_bytes;
    size_t in_slot_bytes, out_slot_bytes; /* rounded up to CPU_ALIGN */
    uint8_t *inputs;                      /* slots x in_slot_bytes */
    int64_t *labels;                      /* slots x batch_size */
    uint8_t *outputs;                     /* slots x out_slot_bytes */
    _Atomic uint64_t convert_ns;          /* summed over all threads that converted */
    int passthrough;                      /* uint8 out, same layout: outputs alias inputs */
} cpu_backend;

static cpu_backend *cpu_of(backend *b)
{
    return (cpu_backend *)b;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static size_t round_up(size_t n, size_t a)
{
    return (n + a - 1) / a * a;
}

static uint8_t *cpu_host_input(backend *b, int slot)
{
    cpu_backend *cb = cpu_of(b);
    return cb->inputs + (size_t)slot * cb->in_slot_bytes;
}

static int64_t *cpu_host_labels(backend *b, int slot)
{
    cpu_backend *cb = cpu_of(b);
    return cb->labels + (size_t)slot * cb->p.batch_size;
}

static void *cpu_output_of(cpu_backend *cb, int slot)
{
    if (cb->passthrough)
        return cb->inputs + (size_t)slot * cb->in_slot_bytes;
    return cb->outputs + (size_t)slot * cb->out_slot_bytes;
}

static int check_call(cpu_backend *cb, int slot, size_t count, char *err, size_t err_len)
{
    if (slot >= 0 && slot < cb->p.slots && count <= cb->p.batch_size)
        return H5PACK_OK;
    return h5pack_backend_error(H5PACK_EINVAL, err, err_len,
                                "cpu backend: slot %d of %d, %zu images of at most %zu: out of range", slot,
                                cb->p.slots, count, cb->p.batch_size);
}

static int cpu_submit(backend *b, int slot, size_t count, uint64_t key, char *err, size_t err_len)
{
    cpu_backend *cb = cpu_of(b);
    if (check_call(cb, slot, count, err, err_len) != H5PACK_OK)
        return H5PACK_EINVAL;
    if (cb->passthrough)
        return H5PACK_OK;
    uint64_t t0 = now_ns();
    h5pack_backend_convert_ref(&cb->p, cpu_host_input(b, slot), cpu_output_of(cb, slot), 0, count, key);
    atomic_fetch_add(&cb->convert_ns, now_ns() - t0);
    return H5PACK_OK;
}

/* Images [first, first + n) of part PART when COUNT images are split into PARTS contiguous runs. */
static void split_range(size_t count, int parts, int part, size_t *first, size_t *n)
{
    size_t base = count / (size_t)parts, extra = count % (size_t)parts, k = (size_t)part;
    *first = k * base + (k < extra ? k : extra);
    *n = base + (k < extra ? 1 : 0);
}

static int cpu_resubmit(backend *b, int slot, size_t count, uint64_t key, char *err, size_t err_len)
{
    cpu_backend *cb = cpu_of(b);
    if (check_call(cb, slot, count, err, err_len) != H5PACK_OK)
        return H5PACK_EINVAL;
    if (cb->passthrough)
        return H5PACK_OK;
    const uint8_t *in = cpu_host_input(b, slot);
    void *out = cpu_output_of(cb, slot);
    int parts = cb->p.threads > 1 ? cb->p.threads : 1;
    if ((size_t)parts > count)
        parts = count > 0 ? (int)count : 1;
    uint64_t t0 = now_ns();
    /* One contiguous run of images per thread: each builds its table once. */
#ifdef H5PACK_HAVE_OPENMP
#pragma omp parallel for num_threads(parts) schedule(static, 1) if (parts > 1)
#endif
    for (int part = 0; part < parts; part++) {
        size_t first, n;
        split_range(count, parts, part, &first, &n);
        h5pack_backend_convert_ref(&cb->p, in, out, first, n, key);
    }
    atomic_fetch_add(&cb->convert_ns, now_ns() - t0);
    return H5PACK_OK;
}

static int cpu_output(backend *b, int slot, size_t count, h5pack_batch *batch, char *err, size_t err_len)
{
    cpu_backend *cb = cpu_of(b);
    if (check_call(cb, slot, count, err, err_len) != H5PACK_OK)
        return H5PACK_EINVAL;
    batch->data = cpu_output_of(cb, slot);
    batch->bytes = count * cb->out_image_bytes;
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
    free(cb->inputs);
    free(cb->labels);
    free(cb->outputs);
    free(cb);
}

static const backend_ops cpu_ops = {cpu_host_input, cpu_host_labels, cpu_submit, cpu_resubmit,
                                    cpu_output,     cpu_release,     cpu_times,  cpu_destroy};

static void *alloc_aligned(size_t bytes)
{
    void *ptr = NULL;
    return posix_memalign(&ptr, CPU_ALIGN, bytes ? bytes : CPU_ALIGN) == 0 ? ptr : NULL;
}

int h5pack_backend_cpu_create(const backend_params *p, backend **out, char *err, size_t err_len)
{
    *out = NULL;
    int rc = h5pack_backend_check_params(p, err, err_len);
    if (rc != H5PACK_OK)
        return rc;
    cpu_backend *cb = calloc(1, sizeof *cb);
    if (!cb)
        goto nomem;
    cb->p = *p;
    cb->in_image_bytes = (size_t)p->channels * p->height * p->width;
    cb->out_image_bytes = h5pack_backend_output_image_bytes(p);
    cb->in_slot_bytes = round_up(cb->in_image_bytes * p->batch_size, CPU_ALIGN);
    cb->out_slot_bytes = round_up(cb->out_image_bytes * p->batch_size, CPU_ALIGN);
    cb->passthrough = p->dtype == H5PACK_DTYPE_UINT8 && p->in_layout == p->out_layout;
    if (cb->passthrough)
        cb->out_slot_bytes = 0;
    size_t slots = (size_t)p->slots;
    cb->inputs = alloc_aligned(slots * cb->in_slot_bytes);
    cb->labels = alloc_aligned(slots * p->batch_size * sizeof(int64_t));
    cb->outputs = cb->passthrough ? NULL : alloc_aligned(slots * cb->out_slot_bytes);
    if (!cb->inputs || !cb->labels || (!cb->passthrough && !cb->outputs))
        goto nomem;
    atomic_init(&cb->convert_ns, 0);
    cb->base.ops = &cpu_ops;
    cb->base.device = H5PACK_DEVICE_CPU;
    snprintf(cb->base.name, sizeof cb->base.name, "cpu");
    cb->base.pinned_bytes = slots * (cb->in_slot_bytes + cb->out_slot_bytes + p->batch_size * sizeof(int64_t));
    *out = &cb->base;
    return H5PACK_OK;
nomem:
    snprintf(err, err_len, "backend: cannot allocate the batch ring (%d slots of %zu images): %s", p->slots,
             p->batch_size, strerror(ENOMEM));
    cpu_destroy(cb ? &cb->base : NULL);
    return H5PACK_ENOMEM;
}
