// backend_cuda.cu - the conversion stage on a GPU: a pinned host ring, asynchronous H2D copies on a
// copy stream, the conversion kernels on a compute stream, events ordering copy -> convert ->
// consumer, and no host synchronisation on the consumer's hot path.
//
// Per slot (see backend.h for the call order):
//   host_input  waits (host) for the slot's previous H2D copy, so the worker may overwrite the pinned
//               buffer: normally long done, and only the worker thread waits.
//   submit      copy stream: wait ready[slot] (the slot's last kernel read dev_in) and out_free[slot]
//               (the consumer's last use of labels_device), H2D input + labels between two timing
//               events, record copied[slot]; then the conversion (backend_cuda_convert.cu) unless the
//               job says to only take the batch in (sample echo).
//   resubmit    compute stream only (the uint8 batch is already on the device): the conversion with
//               the echo's key, or a composed delivery reading several slots and the pool.
//   pool_store  compute stream: D2D copy of the slot's input into a pool entry, after copied[slot].
//   output      device pointers; the user's stream (if any) waits ready[slot].
//   release     records out_free[slot][k] on the user's stream (if any), k the buffer it delivered.
// With batch echo each slot has two output buffers and each conversion takes the other one: echo e's
// kernel waits only for the consumer's use of echo e-2, so it runs while the consumer's step on echo
// e-1 does (no bubble between the echoes of a batch on the GPU).
// Waiting on an event that was never recorded is a no-op, so the first use of a slot needs no case.
//   detach      (h5pack_detach) the delivered output buffer becomes the caller's; a new one (cudaMalloc)
//               takes its place in the slot.
// All memory (pinned ring, device ring, geometry buffers, pool, tables) is allocated once at creation
// (backend_cuda_create.cu) and never grows; only a detach replaces an output buffer.
#include <stdio.h>
#include <string.h>

#include "backend_cuda_impl.cuh"

namespace {

static cuda_backend *cuda_of(backend *b)
{
    return reinterpret_cast<cuda_backend *>(b);
}

// The first failure's text (kept under fail_lock) into ERR; H5PACK_ECUDA.
static int report_failure(cuda_backend *cb, char *err, size_t err_len)
{
    pthread_mutex_lock(&cb->fail_lock);
    h5pack_errf(0, err, err_len, "%s", cb->first_error);
    pthread_mutex_unlock(&cb->fail_lock);
    return H5PACK_ECUDA;
}

// `failed` is set only after the text is complete (release/acquire), so the unlocked fast-path check
// never sees a failure without its text.
static int failed_code(cuda_backend *cb, char *err, size_t err_len)
{
    return cb->failed.load(std::memory_order_acquire) ? report_failure(cb, err, err_len) : H5PACK_OK;
}

static int check_call(const cuda_backend *cb, int slot, size_t count, char *err, size_t err_len)
{
    if (slot >= 0 && slot < cb->p.slots && count <= cb->p.batch_size)
        return H5PACK_OK;
    return h5pack_errf(H5PACK_EINVAL, err, err_len,
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
        h5pack_cuda_fail(cb, "cudaEventSynchronize(copied)", e, NULL, 0); // submit reports it
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

// H2D copy of SLOT's COUNT images and labels on the copy stream, timed, then copied[slot].
static int copy_in(cuda_backend *cb, cuda_slot *s, size_t count, char *err, size_t err_len)
{
    HOT_CHECK(cb, cudaStreamWaitEvent(cb->copy_stream, s->ready, 0));
    if (cb->user_stream) // both buffers' last uses: the user's stream is in order, the later one covers all
        for (int k = 0; k < cb->out_buffers; k++)
            HOT_CHECK(cb, cudaStreamWaitEvent(cb->copy_stream, s->out_free[k], 0));
    // Normally instant (host_input waited already); the copy's timing events are then reused.
    HOT_CHECK(cb, cudaEventSynchronize(s->copied));
    harvest_copy_time(cb, s);
    pthread_mutex_lock(&cb->timing_lock);
    cudaError_t e = cudaEventRecord(s->copy_t0, cb->copy_stream);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(s->dev_in, s->host_in, count * cb->in_image_bytes, cudaMemcpyHostToDevice,
                            cb->copy_stream);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(s->dev_labels, s->host_labels, count * h5pack_backend_label_bytes(&cb->p),
                            cudaMemcpyHostToDevice, cb->copy_stream);
    if (e == cudaSuccess)
        e = cudaEventRecord(s->copy_t1, cb->copy_stream);
    s->copy_pending = e == cudaSuccess;
    pthread_mutex_unlock(&cb->timing_lock);
    if (e != cudaSuccess)
        return h5pack_cuda_fail(cb, "H2D copy of the batch", e, err, err_len);
    HOT_CHECK(cb, cudaEventRecord(s->copied, cb->copy_stream));
    return H5PACK_OK;
}

static int cuda_submit(backend *b, int slot, backend_job job, char *err, size_t err_len)
{
    cuda_backend *cb = cuda_of(b);
    int rc = check_call(cb, slot, job.count, err, err_len);
    if (rc || (rc = failed_code(cb, err, err_len)))
        return rc;
    cuda_device_restore keep(cb->p.gpu_id);
    HOT_CHECK(cb, cudaSetDevice(cb->p.gpu_id));
    if ((rc = copy_in(cb, &cb->slots[slot], job.count, err, err_len)) || !job.convert)
        return rc;
    return h5pack_cuda_convert(cb, slot, job, err, err_len);
}

static int cuda_resubmit(backend *b, int slot, backend_job job, char *err, size_t err_len)
{
    cuda_backend *cb = cuda_of(b);
    int rc = check_call(cb, slot, job.count, err, err_len);
    if (rc || (rc = failed_code(cb, err, err_len)))
        return rc;
    cuda_device_restore keep(cb->p.gpu_id);
    HOT_CHECK(cb, cudaSetDevice(cb->p.gpu_id));
    return h5pack_cuda_convert(cb, slot, job, err, err_len);
}

static int cuda_pool_store(backend *b, int slot, size_t count, int entry, char *err, size_t err_len)
{
    cuda_backend *cb = cuda_of(b);
    int rc = check_call(cb, slot, count, err, err_len);
    if (rc || (rc = failed_code(cb, err, err_len)))
        return rc;
    if (entry < 0 || entry >= cb->p.pool_batches)
        return h5pack_errf(H5PACK_EINVAL, err, err_len, "cuda backend: pool entry %d of %d", entry,
                                    cb->p.pool_batches);
    cuda_slot *s = &cb->slots[slot];
    uint8_t *dst = cb->dev_pool + (size_t)entry * cb->p.batch_size * cb->in_image_bytes;
    cuda_device_restore keep(cb->p.gpu_id);
    HOT_CHECK(cb, cudaSetDevice(cb->p.gpu_id));
    HOT_CHECK(cb, cudaStreamWaitEvent(cb->compute_stream, s->copied, 0));
    HOT_CHECK(cb, cudaMemcpyAsync(dst, s->dev_in, count * cb->in_image_bytes, cudaMemcpyDeviceToDevice,
                                  cb->compute_stream));
    return H5PACK_OK;
}

static int cuda_output(backend *b, int slot, size_t count, h5pack_batch *batch, char *err, size_t err_len)
{
    cuda_backend *cb = cuda_of(b);
    int rc = check_call(cb, slot, count, err, err_len);
    if (rc || (rc = failed_code(cb, err, err_len)))
        return rc;
    cuda_slot *s = &cb->slots[slot];
    cuda_device_restore keep(cb->p.gpu_id);
    HOT_CHECK(cb, cudaSetDevice(cb->p.gpu_id));
    if (cb->p.crop != H5PACK_CROP_NONE) { // converted before the output size changed: redo it
        uint32_t h, w;
        h5pack_backend_size_for(b, s->job.epoch, &h, &w);
        if ((h != s->out_h || w != s->out_w) && (rc = h5pack_cuda_convert(cb, slot, s->job, err, err_len)))
            return rc;
    }
    batch->data = s->dev_out[s->out_k];
    batch->bytes = count * h5pack_backend_image_bytes_at(&cb->p, s->out_h, s->out_w);
    batch->on_device = 1;
    batch->cuda_event = (void *)s->ready;
    // the core sets NULL when the file has no labels; a composed delivery's are in its geometry buffer
    batch->labels = s->composed ? (const int64_t *)(s->geo_host + cb->geo_labels_off) : s->host_labels;
    batch->labels_device = s->composed ? (const int64_t *)(s->geo_dev + cb->geo_labels_off) : s->dev_labels;
    if (cb->user_stream)
        HOT_CHECK(cb, cudaStreamWaitEvent(cb->user_stream, s->ready, 0));
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
    cuda_device_restore keep(cb->p.gpu_id);
    HOT_CHECK(cb, cudaSetDevice(cb->p.gpu_id));
    cuda_slot *s = &cb->slots[slot];
    HOT_CHECK(cb, cudaEventRecord(s->out_free[s->out_k], cb->user_stream));
    return H5PACK_OK;
}

static void cuda_geometry(backend *b, int slot, const backend_box **boxes, uint32_t *out_h, uint32_t *out_w)
{
    cuda_slot *s = &cuda_of(b)->slots[slot];
    *boxes = s->boxes, *out_h = s->out_h, *out_w = s->out_w;
}

static void cuda_times(backend *b, double *convert_s, double *copy_s, uint64_t *device_bytes)
{
    cuda_backend *cb = cuda_of(b);
    cuda_device_restore keep(cb->p.gpu_id);
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

// free_fn of an output buffer handed over: cudaFree on its GPU, from any thread, the caller's current
// device kept. A failure (the runtime already unloaded at exit: nothing left to free) leaves no error
// behind for the caller's next CUDA call.
static void cuda_detached_free(const backend_detached *d)
{
    cuda_device_restore keep(d->device);
    if (cudaSetDevice(d->device) != cudaSuccess || cudaFree(d->mem) != cudaSuccess)
        cudaGetLastError();
}

// The delivered output buffer goes to the caller as it is: its kernel stays ordered before the consumer
// (batch->cuda_event, the user's stream), and the slot's later conversions write the new buffer. The
// kernels read only the inputs (also uint8 output is converted into the output buffer), so the echoes
// still to come need no copy.
static int cuda_detach(backend *b, int slot, int more_echoes, backend_detached *out, int *copied, char *err,
                       size_t err_len)
{
    (void)more_echoes;
    cuda_backend *cb = cuda_of(b);
    int rc = check_call(cb, slot, 0, err, err_len);
    if (rc || (rc = failed_code(cb, err, err_len)))
        return rc;
    cuda_device_restore keep(cb->p.gpu_id);
    HOT_CHECK(cb, cudaSetDevice(cb->p.gpu_id));
    void *fresh = NULL;
    cudaError_t e = cudaMalloc(&fresh, cb->out_slot_bytes);
    if (e == cudaErrorMemoryAllocation) { // not sticky: the reader goes on with the buffer it has
        cudaGetLastError();
        return h5pack_errf(H5PACK_ENOMEM, err, err_len, "cuda backend (GPU %d): no device memory for a new batch "
                           "buffer of %zu bytes", cb->p.gpu_id, cb->out_slot_bytes);
    }
    if (e != cudaSuccess)
        return h5pack_cuda_fail(cb, "cudaMalloc of a new batch buffer", e, err, err_len);
    cuda_slot *s = &cb->slots[slot];
    out->mem = s->dev_out[s->out_k];
    out->bytes = cb->out_slot_bytes;
    out->owner = NULL;
    out->device = cb->p.gpu_id;
    out->free_fn = cuda_detached_free;
    s->dev_out[s->out_k] = fresh;
    if (cb->out_buffers == 1)
        s->dev_out[1 - s->out_k] = fresh; // one buffer named twice (backend_cuda_impl.cuh)
    *copied = 0;
    return H5PACK_OK;
}

} // namespace

extern "C" int h5pack_cuda_fail(cuda_backend *cb, const char *what, cudaError_t e, char *err, size_t err_len)
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

extern "C" const backend_ops h5pack_cuda_ops = {
    cuda_host_input, cuda_host_labels, cuda_submit,   cuda_resubmit, cuda_pool_store,
    cuda_output,     cuda_release,     cuda_geometry, cuda_times,    h5pack_cuda_destroy,
    cuda_detach};
