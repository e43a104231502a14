// backend_cuda_convert.cu - one conversion of the CUDA backend on its compute stream: the plain fused
// kernel (convert_kernel.cuh) for the stored size, or the resizing-crop kernel (resample_kernel.cuh)
// with the geometry planned here on the host; composed sample-echo deliveries gather their images from
// several slots and the pool by address.
//
// A delivery's geometry buffer (per slot, pinned + device): [resizing blob][source addresses][labels].
// The host rewrites the pinned half only after its previous H2D copy is over (geo_copied: normally long
// done); the copy runs on the compute stream, so it follows the slot's previous kernel, which read the
// device half.
#include <string.h>

#include "backend_cuda_impl.cuh"
#include "clock.h"
#include "convert_kernel.cuh"
#include "resample_kernel.cuh"

namespace {

// The compute stream waits for the H2D copy of every slot the job reads, and for the consumer's last
// use of output buffer K of SLOT (with a user stream); a composed delivery also for its use of the other
// buffer, since the new delivery's labels overwrite the geometry buffer that the last one's are in.
static int wait_inputs(cuda_backend *cb, int slot, int k, const backend_job &job, char *err, size_t err_len)
{
    cudaStream_t cs = cb->compute_stream;
    if (!job.sources) {
        HOT_CHECK(cb, cudaStreamWaitEvent(cs, cb->slots[slot].copied, 0));
    } else {
        uint64_t seen = 0; // slots already waited for (the first 64; more are rare and merely waited twice)
        for (size_t i = 0; i < job.count; i++) {
            int buf = job.sources[i].buf;
            if (buf >= cb->p.slots || (buf < 64 && (seen >> buf & 1)))
                continue; // pool entries are ordered by the stream itself
            seen |= buf < 64 ? 1ull << buf : 0;
            HOT_CHECK(cb, cudaStreamWaitEvent(cs, cb->slots[buf].copied, 0));
        }
    }
    if (cb->user_stream)
        for (int b = 0; b < cb->out_buffers; b++)
            if (b == k || job.sources)
                HOT_CHECK(cb, cudaStreamWaitEvent(cs, cb->slots[slot].out_free[b], 0));
    return H5PACK_OK;
}

// Device address of every image of the job into ADDRS.
static int source_addresses(cuda_backend *cb, int slot, const backend_job &job, uint64_t *addrs, char *err,
                            size_t err_len)
{
    for (size_t i = 0; i < job.count; i++) {
        backend_source src = job.sources ? job.sources[i] : backend_source{slot, (uint32_t)i};
        if (src.buf < 0 || src.buf >= cb->p.slots + cb->p.pool_batches || src.image >= cb->p.batch_size)
            return h5pack_errf(H5PACK_EINVAL, err, err_len, "cuda backend: image %zu: no source %d/%u", i,
                                        src.buf, src.image);
        const uint8_t *base = src.buf < cb->p.slots
                                  ? cb->slots[src.buf].dev_in
                                  : cb->dev_pool + (size_t)(src.buf - cb->p.slots) * cb->p.batch_size * cb->in_image_bytes;
        addrs[i] = (uint64_t)(uintptr_t)(base + (size_t)src.image * cb->in_image_bytes);
    }
    return H5PACK_OK;
}

// H2D copy of BYTES at OFFSET of SLOT's geometry buffer, on the compute stream.
static cudaError_t copy_geometry(cuda_backend *cb, cuda_slot *s, size_t offset, size_t bytes)
{
    return cudaMemcpyAsync(s->geo_dev + offset, s->geo_host + offset, bytes, cudaMemcpyHostToDevice,
                           cb->compute_stream);
}

// Plans, copies and launches the resizing crop of JOB (its source addresses in ADDRS).
static int launch_resample(cuda_backend *cb, cuda_slot *s, const backend_job &job, const uint64_t *addrs,
                           char *err, size_t err_len)
{
    aug_job host; // the boxes, then each image's taps (copies of the slot's kept ones where it has them)
    h5pack_aug_crop_boxes(&cb->pp, job.key, job.count, s->out_h, s->out_w, addrs, job.dims, s->geo_host, &host);
    h5pack_aug_tap_memo_new_job(s->taps);
    for (size_t i = 0; i < job.count; i++)
        h5pack_aug_crop_taps(&cb->pp, &host, i, s->taps);
    h5pack_backend_job_boxes(&host, s->boxes);
    rsk_args a;
    if (rsk_plan(host, &a) != 0)
        return h5pack_errf(H5PACK_EINVAL, err, err_len, "cuda backend: no kernel tile fits %u x %u -> %u x %u",
                                    cb->p.height, cb->p.width, s->out_h, s->out_w);
    HOT_CHECK(cb, copy_geometry(cb, s, 0, h5pack_aug_blob_bytes(&cb->pp, job.count, s->out_h, s->out_w)));
    a.job = h5pack_aug_job_moved(&host, s->geo_host, (uint64_t)(uintptr_t)s->geo_dev);
    a.job.out = s->dev_out[s->out_k];
    HOT_CHECK(cb, h5pack_rsk_launch(a, cb->compute_stream));
    return H5PACK_OK;
}

// Launches the stored-size kernel for JOB; a composed job gathers through its addresses (copied here).
static int launch_plain(cuda_backend *cb, cuda_slot *s, const backend_job &job, char *err, size_t err_len)
{
    h5pack_backend_plain_boxes(&cb->p, job.key, job.count, s->boxes);
    convk_args a = convk_plan(&cb->p, job.count);
    a.in = s->dev_in, a.out = s->dev_out[s->out_k], a.table = cb->dev_table, a.key = job.key;
    if (job.sources) {
        HOT_CHECK(cb, copy_geometry(cb, s, cb->geo_srcs_off, job.count * sizeof(uint64_t)));
        a.srcs = (const uint64_t *)(s->geo_dev + cb->geo_srcs_off);
    }
    HOT_CHECK(cb, h5pack_convk_launch(a, cb->p.dtype, cb->compute_stream));
    return H5PACK_OK;
}

} // namespace

extern "C" int h5pack_cuda_convert(cuda_backend *cb, int slot, backend_job job, char *err, size_t err_len)
{
    uint64_t t0 = h5pack_clock_ns();
    cuda_slot *s = &cb->slots[slot];
    if (job.sources && job.sources != s->sources) // kept for a redo after an output size change
        memcpy(s->sources, job.sources, job.count * sizeof *job.sources);
    if (job.sources)
        job.sources = s->sources;
    if (job.dims && job.dims != s->dims) // images of several sizes: kept for a redo too
        memcpy(s->dims, job.dims, 2 * job.count * sizeof *job.dims);
    if (job.dims)
        job.dims = s->dims;
    const int64_t *labels = job.labels;
    job.labels = NULL;
    s->job = job;
    s->composed = job.sources != NULL;
    h5pack_backend_size_for(&cb->base, job.epoch, &s->out_h, &s->out_w);
    s->out_k = cb->out_buffers == 2 ? 1 - s->out_k : 0; // the other buffer: see backend_cuda.cu
    int rc = wait_inputs(cb, slot, s->out_k, job, err, err_len);
    if (rc)
        return rc;
    int geometry = job.sources || cb->p.crop != H5PACK_CROP_NONE;
    if (geometry) {
        HOT_CHECK(cb, cudaEventSynchronize(s->geo_copied)); // the pinned half is free to rewrite
        uint64_t *addrs = (uint64_t *)(s->geo_host + cb->geo_srcs_off);
        if ((rc = source_addresses(cb, slot, job, addrs, err, err_len)))
            return rc;
        if (s->composed && labels) {
            size_t bytes = job.count * h5pack_backend_label_bytes(&cb->p); // K int64 or float32 per image
            memcpy(s->geo_host + cb->geo_labels_off, labels, bytes);
            HOT_CHECK(cb, copy_geometry(cb, s, cb->geo_labels_off, bytes));
        }
        rc = cb->p.crop != H5PACK_CROP_NONE ? launch_resample(cb, s, job, addrs, err, err_len)
                                         : launch_plain(cb, s, job, err, err_len);
        HOT_CHECK(cb, cudaEventRecord(s->geo_copied, cb->compute_stream));
    } else {
        rc = launch_plain(cb, s, job, err, err_len);
    }
    if (rc)
        return rc;
    HOT_CHECK(cb, cudaEventRecord(s->ready, cb->compute_stream));
    cb->launch_ns.fetch_add(h5pack_clock_ns() - t0);
    return H5PACK_OK;
}
