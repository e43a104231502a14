// backend_cuda.cu - the conversion stage on a GPU: a pinned host ring, asynchronous H2D copies on a
// copy stream, the fused conversion kernel on a compute stream, events ordering copy -> convert ->
// consumer, and no host synchronisation on the consumer's hot path.
//
// Per slot (see backend.h for the call order):
//   host_input  waits (host) for the slot's previous H2D copy, so the worker may overwrite the pinned
//               buffer: normally long done, and only the worker thread waits.
//   submit      copy stream: wait ready[slot] (the slot's last kernel read dev_in) and consumed[slot]
//               (the consumer's last use of labels_device), H2D input + labels between two timing
//               events, record copied[slot]. Compute stream: wait copied[slot] and consumed[slot]
//               (the consumer's last use of the output), kernel, record ready[slot].
//   resubmit    compute stream only (the uint8 batch is already on the device): kernel with the echo's
//               key, record ready[slot].
//   output      device pointers; the user's stream (if any) waits ready[slot].
//   release     records consumed[slot] on the user's stream (if any).
// Waiting on an event that was never recorded is a no-op, so the first use of a slot needs no case.
// All memory (pinned ring, device ring, tables) is allocated once here and never grows.
#include <atomic>
#include <cuda_runtime.h>
#include <new>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "convert_kernel.cuh"

namespace {

const size_t ALIGN = 256;

struct cuda_slot {
    uint8_t *host_in;
    int64_t *host_labels;
    uint8_t *dev_in;
    int64_t *dev_labels;
    void *dev_out;
    cudaEvent_t copied, ready, consumed; // no timing
    cudaEvent_t copy_t0, copy_t1;        // timing of the H2D copies
    int copy_pending;                    // copy_t0/t1 recorded, not yet summed (under timing_lock)
};

struct cuda_backend {
    backend base;
    backend_params p;
    size_t in_image_bytes, out_image_bytes;
    size_t in_slot_bytes, labels_slot_bytes, out_slot_bytes;
    cudaStream_t copy_stream, compute_stream, user_stream;
    void *pinned, *device_mem;
    void *dev_table;
    cuda_slot *slots;
    uint64_t device_bytes;
    std::atomic<uint64_t> launch_ns;
    std::atomic<int> failed;     // 1 after the first CUDA failure: the device is not used again
    pthread_mutex_t fail_lock;   // first_error
    char first_error[256];
    pthread_mutex_t timing_lock; // copy_pending flags and copy_s
    double copy_s;
};

static cuda_backend *cuda_of(backend *b)
{
    return reinterpret_cast<cuda_backend *>(b);
}

static uint64_t now_ns()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static size_t round_up(size_t n, size_t a)
{
    return (n + a - 1) / a * a;
}

// A failure on the hot path: the first one's CUDA text is kept (under fail_lock) and every failing or
// later op copies it into its caller's error buffer, so whichever batch the consumer sees fail first
// names the real cause. `failed` is set only after the text is complete (release/acquire), so the
// unlocked fast-path check never sees a failure without its text.
static int report_failure(cuda_backend *cb, char *err, size_t err_len)
{
    pthread_mutex_lock(&cb->fail_lock);
    h5pack_backend_error(0, err, err_len, "%s", cb->first_error);
    pthread_mutex_unlock(&cb->fail_lock);
    return H5PACK_ECUDA;
}

static int failed_code(cuda_backend *cb, char *err, size_t err_len)
{
    return cb->failed.load(std::memory_order_acquire) ? report_failure(cb, err, err_len) : H5PACK_OK;
}

static int hot_path_error(cuda_backend *cb, const char *what, cudaError_t e, char *err, size_t err_len)
{
    pthread_mutex_lock(&cb->fail_lock);
    if (!cb->failed.load(std::memory_order_relaxed)) {
        snprintf(cb->first_error, sizeof cb->first_error, "cuda backend (GPU %d): %s: %s", cb->p.gpu_id, what,
                 cudaGetErrorString(e));
        cb->failed.store(1, std::memory_order_release);
    }
    pthread_mutex_unlock(&cb->fail_lock);
    return report_failure(cb, err, err_len);
}

#define HOT_CHECK(cb, call)                                           \
    do {                                                              \
        cudaError_t e_ = (call);                                      \
        if (e_ != cudaSuccess)                                        \
            return hot_path_error((cb), #call, e_, err, err_len);     \
    } while (0)

static int check_call(const cuda_backend *cb, int slot, size_t count, char *err, size_t err_len)
{
    if (slot >= 0 && slot < cb->p.slots && count <= cb->p.batch_size)
        return H5PACK_OK;
    return h5pack_backend_error(H5PACK_EINVAL, err, err_len,
                                "cuda backend: slot %d of %d, %zu images of at most %zu: out of range", slot,
                                cb->p.slots, count, cb->p.batch_size);
}

// Adds the elapsed time of SLOT's last H2D copy if it has completed.
static void harvest_copy_time(cuda_backend *cb, cuda_slot *s)
{
    pthread_mutex_lock(&cb->timing_lock);
    if (s->copy_pending && cudaEventQuery(s->copy_t1) == cudaSuccess) {
        float ms = 0;
        if (cudaEventElapsedTime(&ms, s->copy_t0, s->copy_t1) == cudaSuccess)
            cb->copy_s += ms * 1e-3;
        s->copy_pending = 0;
    }
    pthread_mutex_unlock(&cb->timing_lock);
}

// The slot's previous H2D copy out of its pinned buffers (input and labels, copied together) must be
// over before a worker refills them; instant when it already waited for this fill.
static void wait_previous_copy(cuda_backend *cb, cuda_slot *s)
{
    cudaSetDevice(cb->p.gpu_id);
    cudaError_t e = cudaEventSynchronize(s->copied);
    if (e != cudaSuccess)
        hot_path_error(cb, "cudaEventSynchronize(copied)", e, NULL, 0); // submit reports it
}

static uint8_t *cuda_host_input(backend *b, int slot)
{
    cuda_backend *cb = cuda_of(b);
    cuda_slot *s = &cb->slots[slot];
    wait_previous_copy(cb, s);
    harvest_copy_time(cb, s);
    return s->host_in;
}

static int64_t *cuda_host_labels(backend *b, int slot)
{
    cuda_backend *cb = cuda_of(b);
    cuda_slot *s = &cb->slots[slot];
    wait_previous_copy(cb, s);
    return s->host_labels;
}

// Enqueues the conversion of SLOT on the compute stream, after its input copy and after the consumer's
// last use of its output.
static int enqueue_convert(cuda_backend *cb, cuda_slot *s, size_t count, uint64_t key, char *err, size_t err_len)
{
    uint64_t t0 = now_ns();
    HOT_CHECK(cb, cudaStreamWaitEvent(cb->compute_stream, s->copied, 0));
    if (cb->user_stream)
        HOT_CHECK(cb, cudaStreamWaitEvent(cb->compute_stream, s->consumed, 0));
    convk_args a = convk_plan(&cb->p, count);
    a.in = s->dev_in, a.out = s->dev_out, a.table = cb->dev_table, a.key = key;
    HOT_CHECK(cb, h5pack_convk_launch(a, cb->p.dtype, cb->compute_stream));
    HOT_CHECK(cb, cudaEventRecord(s->ready, cb->compute_stream));
    cb->launch_ns.fetch_add(now_ns() - t0);
    return H5PACK_OK;
}

static int cuda_submit(backend *b, int slot, size_t count, uint64_t key, char *err, size_t err_len)
{
    cuda_backend *cb = cuda_of(b);
    int rc = check_call(cb, slot, count, err, err_len);
    if (rc || (rc = failed_code(cb, err, err_len)))
        return rc;
    cuda_slot *s = &cb->slots[slot];
    HOT_CHECK(cb, cudaSetDevice(cb->p.gpu_id));
    HOT_CHECK(cb, cudaStreamWaitEvent(cb->copy_stream, s->ready, 0));
    if (cb->user_stream)
        HOT_CHECK(cb, cudaStreamWaitEvent(cb->copy_stream, s->consumed, 0));
    // Normally instant (host_input waited already); the copy's timing events are then reused.
    HOT_CHECK(cb, cudaEventSynchronize(s->copied));
    harvest_copy_time(cb, s);
    pthread_mutex_lock(&cb->timing_lock);
    cudaError_t e = cudaEventRecord(s->copy_t0, cb->copy_stream);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(s->dev_in, s->host_in, count * cb->in_image_bytes, cudaMemcpyHostToDevice,
                            cb->copy_stream);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(s->dev_labels, s->host_labels, count * sizeof(int64_t), cudaMemcpyHostToDevice,
                            cb->copy_stream);
    if (e == cudaSuccess)
        e = cudaEventRecord(s->copy_t1, cb->copy_stream);
    s->copy_pending = e == cudaSuccess;
    pthread_mutex_unlock(&cb->timing_lock);
    if (e != cudaSuccess)
        return hot_path_error(cb, "H2D copy of the batch", e, err, err_len);
    HOT_CHECK(cb, cudaEventRecord(s->copied, cb->copy_stream));
    return enqueue_convert(cb, s, count, key, err, err_len);
}

static int cuda_resubmit(backend *b, int slot, size_t count, uint64_t key, char *err, size_t err_len)
{
    cuda_backend *cb = cuda_of(b);
    int rc = check_call(cb, slot, count, err, err_len);
    if (rc || (rc = failed_code(cb, err, err_len)))
        return rc;
    HOT_CHECK(cb, cudaSetDevice(cb->p.gpu_id));
    return enqueue_convert(cb, &cb->slots[slot], count, key, err, err_len);
}

static int cuda_output(backend *b, int slot, size_t count, h5pack_batch *batch, char *err, size_t err_len)
{
    cuda_backend *cb = cuda_of(b);
    int rc = check_call(cb, slot, count, err, err_len);
    if (rc || (rc = failed_code(cb, err, err_len)))
        return rc;
    cuda_slot *s = &cb->slots[slot];
    batch->data = s->dev_out;
    batch->bytes = count * cb->out_image_bytes;
    batch->on_device = 1;
    batch->cuda_event = (void *)s->ready;
    batch->labels = s->host_labels; // the core sets NULL when the file has no labels
    batch->labels_device = s->dev_labels;
    if (cb->user_stream) {
        HOT_CHECK(cb, cudaSetDevice(cb->p.gpu_id));
        HOT_CHECK(cb, cudaStreamWaitEvent(cb->user_stream, s->ready, 0));
    }
    return H5PACK_OK;
}

static int cuda_release(backend *b, int slot, char *err, size_t err_len)
{
    cuda_backend *cb = cuda_of(b);
    int rc = check_call(cb, slot, 0, err, err_len);
    if (rc)
        return rc;
    if (!cb->user_stream)
        return H5PACK_OK; // without a stream, releasing means the caller is done with the data
    HOT_CHECK(cb, cudaSetDevice(cb->p.gpu_id));
    HOT_CHECK(cb, cudaEventRecord(cb->slots[slot].consumed, cb->user_stream));
    return H5PACK_OK;
}

static void cuda_times(backend *b, double *convert_s, double *copy_s, uint64_t *device_bytes)
{
    cuda_backend *cb = cuda_of(b);
    cudaSetDevice(cb->p.gpu_id);
    for (int i = 0; i < cb->p.slots; i++)
        harvest_copy_time(cb, &cb->slots[i]);
    if (convert_s)
        *convert_s = (double)cb->launch_ns.load() * 1e-9;
    if (copy_s) {
        pthread_mutex_lock(&cb->timing_lock);
        *copy_s = cb->copy_s;
        pthread_mutex_unlock(&cb->timing_lock);
    }
    if (device_bytes)
        *device_bytes = cb->device_bytes;
}

static void destroy_slot_events(cuda_slot *s)
{
    cudaEvent_t *ev[] = {&s->copied, &s->ready, &s->consumed, &s->copy_t0, &s->copy_t1};
    for (cudaEvent_t *e : ev)
        if (*e)
            cudaEventDestroy(*e);
}

static void cuda_destroy(backend *b)
{
    cuda_backend *cb = cuda_of(b);
    if (!cb)
        return;
    if (cb->pinned || cb->device_mem || cb->copy_stream || cb->compute_stream)
        cudaSetDevice(cb->p.gpu_id); // (never touch CUDA when creation failed before using it)
    // Work still queued may read or write the ring: let it finish before freeing.
    if (cb->copy_stream)
        cudaStreamSynchronize(cb->copy_stream);
    if (cb->compute_stream)
        cudaStreamSynchronize(cb->compute_stream);
    if (cb->slots)
        for (int i = 0; i < cb->p.slots; i++)
            destroy_slot_events(&cb->slots[i]);
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
    cb->~cuda_backend();
    free(cb);
}

const backend_ops cuda_ops = {cuda_host_input, cuda_host_labels, cuda_submit, cuda_resubmit,
                              cuda_output,     cuda_release,     cuda_times,  cuda_destroy};

// ---- creation ----------------------------------------------------------------------------------------

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

// Sizes of the ring; the device total is checked against the cap before anything is allocated.
static int plan_sizes(cuda_backend *cb, char *err, size_t err_len)
{
    const backend_params *p = &cb->p;
    if ((uint64_t)p->height * p->width >= (1ull << 31)) {
        snprintf(err, err_len, "cuda backend: images of %u x %u pixels are too large for the kernel", p->height,
                 p->width);
        return H5PACK_EINVAL;
    }
    cb->in_image_bytes = (size_t)p->channels * p->height * p->width;
    cb->out_image_bytes = h5pack_backend_output_image_bytes(p);
    cb->in_slot_bytes = round_up(cb->in_image_bytes * p->batch_size, ALIGN);
    cb->labels_slot_bytes = round_up(p->batch_size * sizeof(int64_t), ALIGN);
    cb->out_slot_bytes = round_up(cb->out_image_bytes * p->batch_size, ALIGN);
    size_t slots = (size_t)p->slots;
    cb->device_bytes = slots * (cb->in_slot_bytes + cb->labels_slot_bytes + cb->out_slot_bytes) +
                       round_up(sizeof(uint32_t) * H5PACK_MAX_CHANNELS * 256, ALIGN);
    cb->base.pinned_bytes = slots * (cb->in_slot_bytes + cb->labels_slot_bytes);
    if (p->device_memory_limit && cb->device_bytes > p->device_memory_limit) {
        snprintf(err, err_len,
                 "cuda backend: the device ring needs %llu bytes (%d slots of %zu images) but "
                 "device_memory_limit is %zu: lower prefetch or batch_size, or raise the limit",
                 (unsigned long long)cb->device_bytes, p->slots, p->batch_size, p->device_memory_limit);
        return H5PACK_ENOMEM;
    }
    return H5PACK_OK;
}

// Carves the pinned and device blocks into per-slot buffers.
static void place_slots(cuda_backend *cb)
{
    uint8_t *host = (uint8_t *)cb->pinned, *dev = (uint8_t *)cb->device_mem;
    for (int i = 0; i < cb->p.slots; i++) {
        cuda_slot *s = &cb->slots[i];
        s->host_in = host, host += cb->in_slot_bytes;
        s->host_labels = (int64_t *)host, host += cb->labels_slot_bytes;
        s->dev_in = dev, dev += cb->in_slot_bytes;
        s->dev_labels = (int64_t *)dev, dev += cb->labels_slot_bytes;
        s->dev_out = dev, dev += cb->out_slot_bytes;
    }
    cb->dev_table = dev;
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

} // namespace

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
    SETUP_CHECK(cudaMalloc(&cb->device_mem, cb->device_bytes));
    place_slots(cb);
    SETUP_CHECK(upload_table(cb));
    SETUP_CHECK(cudaStreamCreateWithFlags(&cb->copy_stream, cudaStreamNonBlocking));
    SETUP_CHECK(cudaStreamCreateWithFlags(&cb->compute_stream, cudaStreamNonBlocking));
    for (int i = 0; i < p->slots; i++) {
        cuda_slot *s = &cb->slots[i];
        SETUP_CHECK(cudaEventCreateWithFlags(&s->copied, cudaEventDisableTiming));
        SETUP_CHECK(cudaEventCreateWithFlags(&s->ready, cudaEventDisableTiming));
        SETUP_CHECK(cudaEventCreateWithFlags(&s->consumed, cudaEventDisableTiming));
        SETUP_CHECK(cudaEventCreate(&s->copy_t0));
        SETUP_CHECK(cudaEventCreate(&s->copy_t1));
    }
    cb->base.ops = &cuda_ops;
    cb->base.device = H5PACK_DEVICE_CUDA;
    snprintf(cb->base.name, sizeof cb->base.name, "%s", name);
    *out = &cb->base;
    return H5PACK_OK;
fail:
    cuda_destroy(&cb->base);
    return rc;
}
