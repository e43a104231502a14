// backend_cuda_impl.cuh - the CUDA backend's state, shared by its three parts: the ring's hot path
// (backend_cuda.cu), a delivery's conversion (backend_cuda_convert.cu) and creation / teardown
// (backend_cuda_create.cu). Internal to reader/cuda.
#ifndef H5PACK_BACKEND_CUDA_IMPL_CUH
#define H5PACK_BACKEND_CUDA_IMPL_CUH

#include <atomic>
#include <cuda_runtime.h>
#include <pthread.h>

extern "C" {
#include "augment_crops.h"
#include "backend.h"
}

struct cuda_slot {
    uint8_t *host_in;
    int64_t *host_labels;
    uint8_t *dev_in;
    int64_t *dev_labels;
    void *dev_out[2];                    // the output buffers (the same one twice without batch echo), each
                                         // an allocation of its own: h5pack_detach hands one over
    int out_k;                           // the buffer of the last conversion
    uint8_t *geo_host, *geo_dev;         // a delivery's geometry, source addresses and composed labels
    cudaEvent_t copied, ready;           // no timing
    cudaEvent_t out_free[2];             // on the user's stream: its last use of dev_out[k] is over
    cudaEvent_t geo_copied;              // the last H2D copy out of geo_host (host waits before rewriting)
    cudaEvent_t copy_t0, copy_t1;        // timing of the H2D copies
    int copy_pending;                    // copy_t0/t1 recorded, not yet summed (under timing_lock)
    // the slot's last conversion (consumer or the submitting worker; see backend.h for who owns a slot)
    backend_job job;
    backend_source *sources;             // batch_size: the job's sources, copied
    uint32_t *dims;                      // 2 x batch_size: the job's image sizes, copied (several sizes)
    backend_box *boxes;                  // batch_size
    uint32_t out_h, out_w;
    int composed;                        // the last delivery's labels are in the geometry buffer
    aug_tap_memo *taps;                  // resizing crops: each box length's taps, kept across deliveries
                                         // (one thread plans a slot at a time, so the slot owns it)
};

struct cuda_backend {
    backend base;
    backend_params p;
    aug_crops_params pp;
    size_t in_image_bytes;
    size_t in_slot_bytes, labels_slot_bytes, out_slot_bytes, geo_slot_bytes;
    int out_buffers;                     // 1 or 2 (backend_params.output_buffers)
    size_t geo_srcs_off, geo_labels_off; // offsets in a geometry buffer (the resizing blob is at 0)
    cudaStream_t copy_stream, compute_stream, user_stream;
    void *pinned, *device_mem;           // device_mem: every device buffer but the outputs
    size_t device_block_bytes;
    void *dev_table;
    uint8_t *dev_pool;                   // pool_batches x batch_size images (sample echo)
    cuda_slot *slots;
    uint64_t device_bytes;
    std::atomic<uint64_t> launch_ns;
    std::atomic<int> failed;             // 1 after the first CUDA failure: the device is not used again
    pthread_mutex_t fail_lock;           // first_error
    char first_error[256];
    pthread_mutex_t timing_lock;         // copy_pending flags and copy_s
    double copy_s;
};

// A CUDA failure on the hot path: keeps the first one's text (every later op reports it) and returns
// H5PACK_ECUDA with that text in ERR.
extern "C" int h5pack_cuda_fail(cuda_backend *cb, const char *what, cudaError_t e, char *err, size_t err_len);

// Converts JOB into SLOT on the compute stream (geometry planned and copied when needed), after its
// sources' copies and the consumer's last use of the output. Called with the device set.
extern "C" int h5pack_cuda_convert(cuda_backend *cb, int slot, backend_job job, char *err, size_t err_len);

extern "C" void h5pack_cuda_destroy(backend *b);

extern "C" const backend_ops h5pack_cuda_ops;

// Puts the calling thread's current device back on return. The backend's calls run on the caller's
// thread (open, next, release, stats, close) or on its workers, and each sets the backend's GPU; without
// this a training loop's current device would silently become gpu_id (PyTorch's "cuda" without an
// index, new tensors and kernels would then go to the reader's GPU).
struct cuda_device_restore {
    int prev, gpu;
    explicit cuda_device_restore(int gpu_id) : prev(-1), gpu(gpu_id)
    {
        if (cudaGetDevice(&prev) != cudaSuccess) {
            cudaGetLastError(); // no usable device: nothing to restore, and no sticky error left behind
            prev = -1;
        }
    }
    ~cuda_device_restore()
    {
        if (prev >= 0 && prev != gpu)
            cudaSetDevice(prev);
    }
    cuda_device_restore(const cuda_device_restore &) = delete;
    cuda_device_restore &operator=(const cuda_device_restore &) = delete;
};

#define HOT_CHECK(cb, call)                                              \
    do {                                                                 \
        cudaError_t e_ = (call);                                         \
        if (e_ != cudaSuccess)                                           \
            return h5pack_cuda_fail((cb), #call, e_, err, err_len);      \
    } while (0)

#endif
