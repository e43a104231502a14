// backend_cuda_create.cu - creation and teardown of the CUDA backend: device selection, the sizes of
// the ring (checked against device_memory_limit before anything is allocated), one pinned and one
// device block carved into per-slot buffers (input, labels, geometry), the sample-echo pool, the value
// table, each slot's output buffers (sized for the largest output size; allocations of their own, since
// h5pack_detach hands one over to the caller), streams and events.
#include <new>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_cuda_impl.cuh"

namespace {

const size_t ALIGN = 256;

static size_t round_up(size_t n, size_t a)
{
    return (n + a - 1) / a * a;
}

static int setup_error(char *err, size_t err_len, int gpu_id, const char *what, cudaError_t e)
{
    snprintf(err, err_len, "cuda backend (GPU %d): %s: %s", gpu_id, what, cudaGetErrorString(e));
    return e == cudaErrorMemoryAllocation ? H5PACK_ENOMEM : H5PACK_ECUDA;
}

#define SETUP_CHECK(call)                                                        \
    do {                                                                         \
        cudaError_t e_ = (call);                                                 \
        if (e_ != cudaSuccess) {                                                 \
            rc = setup_error(err, err_len, p->gpu_id, #call, e_);                \
            goto fail;                                                           \
        }                                                                        \
    } while (0)

static int select_device(const backend_params *p, char *name, size_t name_len, char *err, size_t err_len)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        snprintf(err, err_len, "no usable GPU: cudaGetDeviceCount: %s", cudaGetErrorString(e));
        return H5PACK_ENODEV;
    }
    if (p->gpu_id < 0 || p->gpu_id >= count) {
        snprintf(err, err_len, "no usable GPU: gpu_id %d requested, %d device(s) visible", p->gpu_id, count);
        return H5PACK_ENODEV;
    }
    cudaDeviceProp prop;
    if ((e = cudaSetDevice(p->gpu_id)) != cudaSuccess || (e = cudaGetDeviceProperties(&prop, p->gpu_id)) != cudaSuccess)
        return setup_error(err, err_len, p->gpu_id, "cudaSetDevice / cudaGetDeviceProperties", e);
    snprintf(name, name_len, "%s", prop.name);
    return H5PACK_OK;
}

// Bytes of one slot's geometry buffer: [resizing blob][source addresses][labels] (offsets into cb).
static size_t plan_geometry(cuda_backend *cb)
{
    const backend_params *p = &cb->p;
    if (p->crop == H5PACK_CROP_NONE && p->pool_batches == 0)
        return 0; // nothing per delivery: the plain kernel reads its slot
    size_t blob = p->crop != H5PACK_CROP_NONE
                      ? h5pack_aug_blob_capacity(&cb->pp, p->batch_size, p->max_out_height, p->max_out_width)
                      : 0;
    cb->geo_srcs_off = round_up(blob, ALIGN);
    cb->geo_labels_off = cb->geo_srcs_off + round_up(p->batch_size * sizeof(uint64_t), ALIGN);
    return cb->geo_labels_off + round_up(p->batch_size * h5pack_backend_label_bytes(p), ALIGN);
}

// Sizes of the ring; the device total is checked against the cap before anything is allocated.
static int plan_sizes(cuda_backend *cb, char *err, size_t err_len)
{
    const backend_params *p = &cb->p;
    if ((uint64_t)p->height * p->width >= (1ull << 31) ||
        (uint64_t)p->max_out_height * p->max_out_width >= (1ull << 31)) {
        snprintf(err, err_len, "cuda backend: images of %u x %u pixels are too large for the kernel", p->height,
                 p->width);
        return H5PACK_EINVAL;
    }
    cb->in_image_bytes = p->in_image_bytes ? (size_t)p->in_image_bytes : (size_t)p->channels * p->height * p->width;
    cb->in_slot_bytes = round_up(cb->in_image_bytes * p->batch_size, ALIGN);
    cb->labels_slot_bytes = round_up(p->batch_size * h5pack_backend_label_bytes(p), ALIGN);
    cb->out_slot_bytes = round_up(h5pack_backend_output_image_bytes(p) * p->batch_size, ALIGN);
    cb->geo_slot_bytes = plan_geometry(cb);
    size_t slots = (size_t)p->slots;
    cb->base.pool_bytes = (uint64_t)p->pool_batches * p->batch_size * cb->in_image_bytes;
    cb->out_buffers = p->output_buffers == 2 ? 2 : 1;
    cb->device_bytes = slots * (cb->in_slot_bytes + cb->labels_slot_bytes + cb->out_buffers * cb->out_slot_bytes +
                                cb->geo_slot_bytes) +
                       round_up(sizeof(uint32_t) * H5PACK_MAX_CHANNELS * 256, ALIGN) + cb->base.pool_bytes;
    cb->device_block_bytes = cb->device_bytes - slots * cb->out_buffers * cb->out_slot_bytes;
    cb->base.pinned_bytes = slots * (cb->in_slot_bytes + cb->labels_slot_bytes + cb->geo_slot_bytes);
    if (p->device_memory_limit && cb->device_bytes > p->device_memory_limit) {
        snprintf(err, err_len,
                 "cuda backend: the device ring needs %llu bytes (%d slots of %zu images, a sample-echo pool of "
                 "%llu bytes) but device_memory_limit is %zu: lower prefetch or batch_size, or raise the limit",
                 (unsigned long long)cb->device_bytes, p->slots, p->batch_size,
                 (unsigned long long)cb->base.pool_bytes, p->device_memory_limit);
        return H5PACK_ENOMEM;
    }
    return H5PACK_OK;
}

// Carves the pinned and device blocks into per-slot buffers, then the table and the pool.
static void place_slots(cuda_backend *cb)
{
    uint8_t *host = (uint8_t *)cb->pinned, *dev = (uint8_t *)cb->device_mem;
    for (int i = 0; i < cb->p.slots; i++) {
        cuda_slot *s = &cb->slots[i];
        s->host_in = host, host += cb->in_slot_bytes;
        s->host_labels = (int64_t *)host, host += cb->labels_slot_bytes;
        s->geo_host = host, host += cb->geo_slot_bytes;
        s->dev_in = dev, dev += cb->in_slot_bytes;
        s->dev_labels = (int64_t *)dev, dev += cb->labels_slot_bytes;
        s->geo_dev = dev, dev += cb->geo_slot_bytes;
    }
    cb->dev_table = dev;
    cb->dev_pool = dev + round_up(sizeof(uint32_t) * H5PACK_MAX_CHANNELS * 256, ALIGN);
}

// Every slot's output buffers, one cudaMalloc each (cudaMalloc aligns to at least 256 bytes).
static cudaError_t alloc_outputs(cuda_backend *cb)
{
    for (int i = 0; i < cb->p.slots; i++) {
        cuda_slot *s = &cb->slots[i];
        for (int k = 0; k < cb->out_buffers; k++) {
            cudaError_t e = cudaMalloc(&s->dev_out[k], cb->out_slot_bytes);
            if (e != cudaSuccess)
                return e;
        }
        if (cb->out_buffers == 1)
            s->dev_out[1] = s->dev_out[0];
    }
    return cudaSuccess;
}

// (dev_out[1] is dev_out[0] again with one buffer; a failed creation may have allocated only some.)
static void free_outputs(cuda_backend *cb, cuda_slot *s)
{
    for (int k = 0; k < cb->out_buffers; k++)
        if (s->dev_out[k])
            cudaFree(s->dev_out[k]);
    s->dev_out[0] = s->dev_out[1] = NULL;
}

// The value table of the output dtype, uploaded once (float32 as bit patterns, 16-bit as patterns).
static cudaError_t upload_table(cuda_backend *cb)
{
    static_assert(sizeof(float) == sizeof(uint32_t), "float32 table as 32-bit patterns");
    float f32[H5PACK_MAX_CHANNELS][256];
    uint16_t t16[H5PACK_MAX_CHANNELS][256];
    h5pack_backend_build_table(&cb->p, f32, t16);
    if (cb->p.dtype == H5PACK_DTYPE_FLOAT32)
        return cudaMemcpy(cb->dev_table, f32, sizeof f32, cudaMemcpyHostToDevice);
    if (cb->p.dtype == H5PACK_DTYPE_UINT8)
        return cudaSuccess; // raw output: no table
    return cudaMemcpy(cb->dev_table, t16, sizeof t16, cudaMemcpyHostToDevice);
}

static void destroy_slot(cuda_slot *s)
{
    cudaEvent_t *ev[] = {&s->copied,     &s->ready,   &s->out_free[0], &s->out_free[1],
                         &s->geo_copied, &s->copy_t0, &s->copy_t1};
    for (cudaEvent_t *e : ev)
        if (*e)
            cudaEventDestroy(*e);
    free(s->sources);
    free(s->boxes);
    free(s->dims);
    if (s->taps)
        h5pack_aug_tap_memo_free(s->taps);
    free(s->taps);
}

// Host bookkeeping and events of every slot; cudaSuccess or the first error (ENOMEM as allocation).
static cudaError_t create_slots(cuda_backend *cb)
{
    for (int i = 0; i < cb->p.slots; i++) {
        cuda_slot *s = &cb->slots[i];
        s->sources = (backend_source *)malloc(cb->p.batch_size * sizeof *s->sources);
        s->boxes = (backend_box *)calloc(cb->p.batch_size, sizeof *s->boxes);
        s->dims = (uint32_t *)malloc(2 * cb->p.batch_size * sizeof *s->dims);
        s->taps = (aug_tap_memo *)malloc(sizeof *s->taps);
        if (s->taps) // before any failure below: destroy_slot frees what the memo keeps
            h5pack_aug_tap_memo_init(s->taps, 1);
        if (!s->sources || !s->boxes || !s->dims || !s->taps)
            return cudaErrorMemoryAllocation;
        h5pack_backend_size_for(&cb->base, 0, &s->out_h, &s->out_w);
        cudaError_t e;
        // Workers wait on copied / geo_copied with cudaEventSynchronize: BlockingSync makes them sleep
        // instead of spinning a core that the reads and conversions need.
        const unsigned host_waited = cudaEventDisableTiming | cudaEventBlockingSync;
        if ((e = cudaEventCreateWithFlags(&s->copied, host_waited)) ||
            (e = cudaEventCreateWithFlags(&s->ready, cudaEventDisableTiming)) ||
            (e = cudaEventCreateWithFlags(&s->out_free[0], cudaEventDisableTiming)) ||
            (e = cudaEventCreateWithFlags(&s->out_free[1], cudaEventDisableTiming)) ||
            (e = cudaEventCreateWithFlags(&s->geo_copied, host_waited)) ||
            (e = cudaEventCreate(&s->copy_t0)) || (e = cudaEventCreate(&s->copy_t1)))
            return e;
    }
    return cudaSuccess;
}

} // namespace

extern "C" void h5pack_cuda_destroy(backend *b)
{
    cuda_backend *cb = reinterpret_cast<cuda_backend *>(b);
    if (!cb)
        return;
    cuda_device_restore keep(cb->p.gpu_id);
    if (cb->pinned || cb->device_mem || cb->copy_stream || cb->compute_stream)
        cudaSetDevice(cb->p.gpu_id); // (never touch CUDA when creation failed before using it)
    // Work still queued may read or write the ring: let it finish before freeing.
    if (cb->copy_stream)
        cudaStreamSynchronize(cb->copy_stream);
    if (cb->compute_stream)
        cudaStreamSynchronize(cb->compute_stream);
    if (cb->slots)
        for (int i = 0; i < cb->p.slots; i++) {
            free_outputs(cb, &cb->slots[i]); // (the ones handed over are the callers': not here any more)
            destroy_slot(&cb->slots[i]);
        }
    if (cb->copy_stream)
        cudaStreamDestroy(cb->copy_stream);
    if (cb->compute_stream)
        cudaStreamDestroy(cb->compute_stream);
    if (cb->device_mem)
        cudaFree(cb->device_mem);
    if (cb->pinned)
        cudaFreeHost(cb->pinned);
    free(cb->slots);
    pthread_mutex_destroy(&cb->timing_lock);
    pthread_mutex_destroy(&cb->fail_lock);
    h5pack_backend_sizes_destroy(&cb->base);
    cb->~cuda_backend();
    free(cb);
}

extern "C" int h5pack_backend_cuda_available(int gpu_id)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError(); // clear the error so later calls start clean
        return 0;
    }
    return gpu_id >= 0 && gpu_id < count;
}

extern "C" int h5pack_backend_cuda_create(const backend_params *p, backend **out, char *err, size_t err_len)
{
    *out = NULL;
    cuda_device_restore keep(p->gpu_id);
    int rc = h5pack_backend_check_params(p, err, err_len);
    if (rc != H5PACK_OK)
        return rc;
    char name[64];
    cuda_backend *cb = (cuda_backend *)calloc(1, sizeof *cb);
    if (!cb) {
        snprintf(err, err_len, "cuda backend: out of host memory");
        return H5PACK_ENOMEM;
    }
    new (cb) cuda_backend();
    cb->p = *p;
    cb->user_stream = (cudaStream_t)p->user_stream;
    pthread_mutex_init(&cb->timing_lock, NULL);
    pthread_mutex_init(&cb->fail_lock, NULL);
    h5pack_backend_sizes_init(&cb->base, p);
    h5pack_backend_crop_params(p, &cb->pp);
    // Sizes and the memory cap first: a wrong configuration is reported the same with or without a GPU.
    if ((rc = plan_sizes(cb, err, err_len)) != H5PACK_OK || (rc = select_device(p, name, sizeof name, err, err_len)) != H5PACK_OK)
        goto fail;
    cb->slots = (cuda_slot *)calloc((size_t)p->slots, sizeof *cb->slots);
    if (!cb->slots) {
        snprintf(err, err_len, "cuda backend: out of host memory");
        rc = H5PACK_ENOMEM;
        goto fail;
    }
    SETUP_CHECK(cudaHostAlloc(&cb->pinned, cb->base.pinned_bytes, cudaHostAllocPortable));
    SETUP_CHECK(cudaMalloc(&cb->device_mem, cb->device_block_bytes));
    place_slots(cb);
    SETUP_CHECK(alloc_outputs(cb));
    SETUP_CHECK(upload_table(cb));
    SETUP_CHECK(cudaStreamCreateWithFlags(&cb->copy_stream, cudaStreamNonBlocking));
    SETUP_CHECK(cudaStreamCreateWithFlags(&cb->compute_stream, cudaStreamNonBlocking));
    SETUP_CHECK(create_slots(cb));
    cb->base.ops = &h5pack_cuda_ops;
    cb->base.device = H5PACK_DEVICE_CUDA;
    snprintf(cb->base.name, sizeof cb->base.name, "%s", name);
    *out = &cb->base;
    return H5PACK_OK;
fail:
    h5pack_cuda_destroy(&cb->base);
    return rc;
}
