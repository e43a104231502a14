// bench_gpu.cu - the CUDA backend against the hardware, side by side in one run:
//   1. H2D: the backend's uint8 batch copies (pinned ring, copy stream, timed with events) against a
//      plain cudaMemcpyAsync of the same size from pinned memory (goal: ratio >= 0.9);
//   2. the fused conversion kernel's bandwidth (bytes read + written per second) against a
//      device-to-device cudaMemcpy of the output size (2 x bytes per second) (goal: ratio >= 0.8),
//      for the common dtype / layout / augmentation cases;
//   3. the random resized crop kernel alone, stored --crop-from (256x256) -> --size (224x224), float32
//      with flip: jobs planned beforehand over 4 input batches (more than the L2 holds), launches timed
//      with events; its time against a D2D copy of the output bytes (goal: the copy's time / the
//      kernel's >= 0.5);
//   4. the random resized crop through the backend as an echo drives it: per batch the host plans the
//      geometry on the calling thread, copies it, launches; and the host planning alone per batch.
//
//   bench_gpu [--batch N] [--size HxW] [--iters N] [--gpu ID] [--crop-from HxW]
//
// Prints "skipped: no GPU" and exits 77 on a machine without a usable GPU. It drives the internal
// backend interface (reader/backend/backend.h) directly, to measure the device stage without the file side.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

extern "C" {
#include "augment.h"
#include "augment_crops.h"
#include "backend.h"
#include "clock.h"
#include "sizes.h"
}
#include "cuda/resample_kernel.cuh" /* reader/backend/cuda */

#define CUDA_OR_DIE(call)                                                                      \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "bench_gpu: %s: %s\n", #call, cudaGetErrorString(e_));             \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

struct bench_opts {
    size_t batch;
    uint32_t height, width;
    int iters, gpu;
    uint32_t from_h, from_w;
};

static backend_params params_of(const bench_opts &o, h5pack_dtype dtype, h5pack_layout in, h5pack_layout out,
                                int flip, int pad, int slots)
{
    backend_params p;
    memset(&p, 0, sizeof p);
    p.channels = 3, p.height = o.height, p.width = o.width;
    p.in_layout = in, p.out_layout = out, p.dtype = dtype;
    p.batch_size = o.batch, p.slots = slots, p.threads = 1, p.gpu_id = o.gpu;
    const float mean[3] = {0.485f, 0.456f, 0.406f}, std[3] = {0.229f, 0.224f, 0.225f};
    for (int c = 0; c < 3; c++)
        p.mean[c] = mean[c], p.std[c] = std[c];
    p.random_flip = flip, p.crop_padding = pad;
    return p;
}

static backend *create_or_die(const backend_params &p)
{
    backend *b = NULL;
    char err[512];
    if (h5pack_backend_cuda_create(&p, &b, err, sizeof err) != H5PACK_OK) {
        fprintf(stderr, "bench_gpu: %s\n", err);
        exit(1);
    }
    return b;
}

static void ok_or_die(int rc, const char *what)
{
    if (rc != H5PACK_OK) {
        fprintf(stderr, "bench_gpu: %s failed (%d)\n", what, rc);
        exit(1);
    }
}

// One ring cycle as the reader drives it: refill, submit, output, release.
static void cycle(backend *b, int slot, size_t count, uint64_t key)
{
    b->ops->host_input(b, slot);
    b->ops->host_labels(b, slot);
    ok_or_die(b->ops->submit(b, slot, h5pack_backend_job(count, key), NULL, 0), "submit");
    h5pack_batch batch;
    ok_or_die(b->ops->output(b, slot, count, &batch, NULL, 0), "output");
    ok_or_die(b->ops->release(b, slot, NULL, 0), "release");
}

// Plain pinned H2D copies of BYTES, ITERS times, timed with events: bytes per second.
static double plain_h2d(size_t bytes, int iters)
{
    void *host = NULL, *dev = NULL;
    cudaStream_t s;
    cudaEvent_t e0, e1;
    CUDA_OR_DIE(cudaHostAlloc(&host, bytes, cudaHostAllocPortable));
    CUDA_OR_DIE(cudaMalloc(&dev, bytes));
    memset(host, 3, bytes);
    CUDA_OR_DIE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CUDA_OR_DIE(cudaEventCreate(&e0));
    CUDA_OR_DIE(cudaEventCreate(&e1));
    for (int i = 0; i < iters; i++) // warm-up, as the backend's side gets
        CUDA_OR_DIE(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, s));
    CUDA_OR_DIE(cudaEventRecord(e0, s));
    for (int i = 0; i < iters; i++)
        CUDA_OR_DIE(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, s));
    CUDA_OR_DIE(cudaEventRecord(e1, s));
    CUDA_OR_DIE(cudaEventSynchronize(e1));
    float ms = 0;
    CUDA_OR_DIE(cudaEventElapsedTime(&ms, e0, e1));
    cudaEventDestroy(e0), cudaEventDestroy(e1), cudaStreamDestroy(s), cudaFree(dev), cudaFreeHost(host);
    return (double)bytes * iters / (ms * 1e-3);
}

static double bench_h2d(const bench_opts &o)
{
    backend_params p = params_of(o, H5PACK_DTYPE_FLOAT32, H5PACK_LAYOUT_NHWC, H5PACK_LAYOUT_NCHW, 1, 4, 4);
    backend *b = create_or_die(p);
    size_t in_bytes = o.batch * 3 * o.height * o.width;
    for (int s = 0; s < p.slots; s++)
        memset(b->ops->host_input(b, s), 100 + s, in_bytes);
    // warm-up: a whole untimed pass (run 5/6 on an H100: the first pass of a fresh process read 0.77-0.90
    // of a plain copy, the next ones 0.99-1.03)
    for (int i = 0; i < o.iters; i++)
        cycle(b, i % p.slots, o.batch, 0);
    CUDA_OR_DIE(cudaDeviceSynchronize());
    double copy0 = 0, copy1 = 0;
    b->ops->times(b, NULL, &copy0, NULL);
    double t0 = h5pack_clock_s();
    for (int i = 0; i < o.iters; i++)
        cycle(b, i % p.slots, o.batch, (uint64_t)i);
    CUDA_OR_DIE(cudaDeviceSynchronize());
    double wall = h5pack_clock_s() - t0;
    b->ops->times(b, NULL, &copy1, NULL);
    double ours = (double)in_bytes * o.iters / (copy1 - copy0), plain = plain_h2d(in_bytes, o.iters);
    printf("H2D  batch %zu x 3x%ux%u uint8 (%.1f MB): backend %.2f GB/s, plain pinned cudaMemcpyAsync %.2f GB/s, "
           "ratio %.3f (goal >= 0.9)\n",
           o.batch, o.height, o.width, in_bytes / 1e6, ours / 1e9, plain / 1e9, ours / plain);
    printf("     pipeline copy + convert (float32, nhwc->nchw, flip, pad 4): %.0f batches/s = %.0f images/s\n",
           o.iters / wall, o.iters * (double)o.batch / wall);
    b->ops->destroy(b);
    return ours / plain;
}

// Device-to-device copies of BYTES, ITERS times: bytes moved (read + written) per second.
static double d2d_bandwidth(size_t bytes, int iters)
{
    void *a = NULL, *c = NULL;
    cudaEvent_t e0, e1;
    CUDA_OR_DIE(cudaMalloc(&a, bytes));
    CUDA_OR_DIE(cudaMalloc(&c, bytes));
    CUDA_OR_DIE(cudaMemset(a, 1, bytes));
    CUDA_OR_DIE(cudaEventCreate(&e0));
    CUDA_OR_DIE(cudaEventCreate(&e1));
    CUDA_OR_DIE(cudaMemcpy(c, a, bytes, cudaMemcpyDeviceToDevice)); // warm-up
    CUDA_OR_DIE(cudaEventRecord(e0, 0));
    for (int i = 0; i < iters; i++)
        CUDA_OR_DIE(cudaMemcpyAsync(c, a, bytes, cudaMemcpyDeviceToDevice, 0));
    CUDA_OR_DIE(cudaEventRecord(e1, 0));
    CUDA_OR_DIE(cudaEventSynchronize(e1));
    float ms = 0;
    CUDA_OR_DIE(cudaEventElapsedTime(&ms, e0, e1));
    cudaEventDestroy(e0), cudaEventDestroy(e1), cudaFree(a), cudaFree(c);
    return 2.0 * (double)bytes * iters / (ms * 1e-3);
}

// The kernel alone: echoes of one batch already on the device (resubmit), ITERS launches queued
// back to back, timed from the host around a device synchronisation.
static double bench_kernel(const bench_opts &o, h5pack_dtype dtype, h5pack_layout in, h5pack_layout out, int flip,
                         int pad)
{
    static const char *names[] = {"float32", "float16", "bfloat16", "uint8"};
    backend_params p = params_of(o, dtype, in, out, flip, pad, 1);
    backend *b = create_or_die(p);
    size_t in_bytes = o.batch * 3 * o.height * o.width, out_bytes = o.batch * h5pack_backend_output_image_bytes(&p);
    memset(b->ops->host_input(b, 0), 77, in_bytes);
    cycle(b, 0, o.batch, 0);
    ok_or_die(b->ops->resubmit(b, 0, h5pack_backend_job(o.batch, 1), NULL, 0), "resubmit"); // warm-up
    CUDA_OR_DIE(cudaDeviceSynchronize());
    double t0 = h5pack_clock_s();
    for (int i = 0; i < o.iters; i++) {
        ok_or_die(b->ops->resubmit(b, 0, h5pack_backend_job(o.batch, (uint64_t)i + 2), NULL, 0), "resubmit");
        h5pack_batch batch;
        ok_or_die(b->ops->output(b, 0, o.batch, &batch, NULL, 0), "output");
        ok_or_die(b->ops->release(b, 0, NULL, 0), "release");
    }
    CUDA_OR_DIE(cudaDeviceSynchronize());
    double dt = h5pack_clock_s() - t0;
    double ours = (double)(in_bytes + out_bytes) * o.iters / dt, d2d = d2d_bandwidth(out_bytes, o.iters);
    printf("kernel %-8s %s->%s flip=%d pad=%d: %.0f GB/s (%.0f images/s), D2D copy %.0f GB/s, ratio %.3f "
           "(goal >= 0.8)\n",
           names[dtype], in == H5PACK_LAYOUT_NCHW ? "nchw" : "nhwc", out == H5PACK_LAYOUT_NCHW ? "nchw" : "nhwc", flip,
           pad, ours / 1e9, o.iters * (double)o.batch / dt, d2d / 1e9, ours / d2d);
    b->ops->destroy(b);
    return ours / d2d;
}

static backend_params rrc_params(const bench_opts &o, h5pack_layout in, h5pack_layout out)
{
    bench_opts s = o;
    s.height = o.from_h, s.width = o.from_w;
    backend_params p = params_of(s, H5PACK_DTYPE_FLOAT32, in, out, 1, 0, 1);
    p.crop = 1, p.out_height = p.max_out_height = o.height, p.out_width = p.max_out_width = o.width;
    p.scale_min = 0.08, p.scale_max = 1.0, p.ratio_min = 0.75, p.ratio_max = 4.0 / 3.0, p.center_ratio = 0.875;
    return p;
}

// The resizing kernel alone: SETS batches of random images on the device, each with its job planned and
// copied beforehand; ITERS launches rotating through them, timed with events. Returns the time of a D2D
// copy of the output bytes over the kernel's time.
// GENERIC: the kernel's generic loops (tap count dispatched per element), to compare with the default.
static double bench_rrc_kernel(const bench_opts &o, h5pack_layout in, h5pack_layout out, uint32_t generic = 0)
{
    const int sets = 4;
    backend_params p = rrc_params(o, in, out);
    aug_crops_params pp;
    h5pack_backend_crop_params(&p, &pp);
    size_t img = 3 * (size_t)o.from_h * o.from_w, out_bytes = o.batch * h5pack_backend_output_image_bytes(&p);
    size_t blob_bytes = h5pack_aug_blob_bytes(&pp, o.batch, o.height, o.width);
    uint8_t *dev_in = NULL, *dev_blob = NULL;
    void *dev_out = NULL;
    CUDA_OR_DIE(cudaMalloc(&dev_in, sets * o.batch * img));
    CUDA_OR_DIE(cudaMalloc(&dev_blob, sets * blob_bytes));
    CUDA_OR_DIE(cudaMalloc(&dev_out, out_bytes));
    std::vector<uint8_t> host(o.batch * img), blob(blob_bytes);
    std::vector<uint64_t> src(o.batch);
    std::vector<rsk_args> args(sets);
    uint64_t x = 88172645463325252ull;
    for (int k = 0; k < sets; k++) {
        for (auto &v : host)
            x ^= x << 13, x ^= x >> 7, x ^= x << 17, v = (uint8_t)x;
        uint8_t *batch = dev_in + k * o.batch * img;
        CUDA_OR_DIE(cudaMemcpy(batch, host.data(), host.size(), cudaMemcpyHostToDevice));
        for (size_t i = 0; i < o.batch; i++)
            src[i] = (uint64_t)(uintptr_t)(batch + i * img);
        aug_job job;
        h5pack_aug_crops(&pp, (uint64_t)k + 1, o.batch, o.height, o.width, src.data(), blob.data(), &job);
        if (rsk_plan(job, &args[k]) != 0) {
            fprintf(stderr, "bench_gpu: no resample tile fits\n");
            exit(1);
        }
        CUDA_OR_DIE(cudaMemcpy(dev_blob + k * blob_bytes, blob.data(), blob_bytes, cudaMemcpyHostToDevice));
        args[k].job = h5pack_aug_job_moved(&job, blob.data(), (uint64_t)(uintptr_t)(dev_blob + k * blob_bytes));
        args[k].job.out = dev_out;
        args[k].generic |= generic;
    }
    cudaEvent_t e0, e1;
    CUDA_OR_DIE(cudaEventCreate(&e0));
    CUDA_OR_DIE(cudaEventCreate(&e1));
    for (int k = 0; k < sets; k++) // warm-up
        CUDA_OR_DIE(h5pack_rsk_launch(args[k], 0));
    CUDA_OR_DIE(cudaEventRecord(e0, 0));
    for (int i = 0; i < o.iters; i++)
        CUDA_OR_DIE(h5pack_rsk_launch(args[i % sets], 0));
    CUDA_OR_DIE(cudaEventRecord(e1, 0));
    CUDA_OR_DIE(cudaEventSynchronize(e1));
    float ms = 0;
    CUDA_OR_DIE(cudaEventElapsedTime(&ms, e0, e1));
    double per = ms * 1e-3 / o.iters, d2d = d2d_bandwidth(out_bytes, o.iters), copy = 2.0 * out_bytes / d2d;
    printf("random resized crop kernel alone%s %ux%u -> %ux%u float32 %s->%s flip, batch %zu: %.3f ms per batch "
           "(%.0f images/s); a D2D copy of the output bytes %.3f ms: ratio %.3f (goal >= 0.5)\n",
           generic ? " (generic loops)" : "", o.from_h, o.from_w, o.height, o.width, in == H5PACK_LAYOUT_NCHW ? "nchw" : "nhwc",
           out == H5PACK_LAYOUT_NCHW ? "nchw" : "nhwc", o.batch, per * 1e3, o.batch / per, copy * 1e3, copy / per);
    cudaEventDestroy(e0), cudaEventDestroy(e1), cudaFree(dev_in), cudaFree(dev_blob), cudaFree(dev_out);
    return copy / per;
}

// The random resized crop: echoes of one batch on the device, each with new boxes planned on the host.
static double bench_rrc(const bench_opts &o)
{
    backend_params p = rrc_params(o, H5PACK_LAYOUT_NHWC, H5PACK_LAYOUT_NCHW);
    backend *b = create_or_die(p);
    size_t in_bytes = o.batch * 3 * o.from_h * o.from_w, out_bytes = o.batch * h5pack_backend_output_image_bytes(&p);
    memset(b->ops->host_input(b, 0), 77, in_bytes);
    cycle(b, 0, o.batch, 0);
    CUDA_OR_DIE(cudaDeviceSynchronize());
    double t0 = h5pack_clock_s();
    for (int i = 0; i < o.iters; i++) {
        ok_or_die(b->ops->resubmit(b, 0, h5pack_backend_job(o.batch, (uint64_t)i + 2), NULL, 0), "resubmit");
        h5pack_batch batch;
        ok_or_die(b->ops->output(b, 0, o.batch, &batch, NULL, 0), "output");
        ok_or_die(b->ops->release(b, 0, NULL, 0), "release");
    }
    CUDA_OR_DIE(cudaDeviceSynchronize());
    double dt = h5pack_clock_s() - t0, d2d = d2d_bandwidth(out_bytes, o.iters);
    // the host's share: planning one batch's geometry (boxes and taps), alone
    aug_crops_params pp;
    h5pack_backend_crop_params(&p, &pp);
    std::vector<uint64_t> src(o.batch, 0);
    std::vector<uint8_t> blob(h5pack_aug_blob_bytes(&pp, o.batch, o.height, o.width));
    aug_job job;
    double p0 = h5pack_clock_s();
    for (int i = 0; i < o.iters; i++)
        h5pack_aug_crops(&pp, (uint64_t)i, o.batch, o.height, o.width, src.data(), blob.data(), &job);
    double plan = (h5pack_clock_s() - p0) / o.iters;
    printf("random resized crop through the backend (host planning on this thread, copy, launch) %ux%u -> %ux%u "
           "float32 nhwc->nchw flip, batch %zu: %.0f images/s, the output at the pace of a %.0f GB/s copy; D2D "
           "copy of the output bytes %.0f GB/s (ratio %.3f); host planning alone %.2f ms per batch (%.1f MB of "
           "geometry)\n",
           o.from_h, o.from_w, o.height, o.width, o.batch, o.iters * (double)o.batch / dt,
           2.0 * out_bytes * o.iters / dt / 1e9, d2d / 1e9, 2.0 * out_bytes * o.iters / dt / d2d, plan * 1e3,
           blob.size() / 1e6);
    b->ops->destroy(b);
    return o.iters * (double)o.batch / dt;
}

static int parse_args(int argc, char **argv, bench_opts &o)
{
    uint64_t n = 0; /* --batch: a count in h5pack's size rule */
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--batch") && v)
            o.batch = h5pack_parse_size(v, &n, NULL, 0) == H5PACK_SIZE_OK ? (size_t)n : 0, i++;
        else if (!strcmp(argv[i], "--size") && v && sscanf(v, "%ux%u", &o.height, &o.width) == 2)
            i++;
        else if (!strcmp(argv[i], "--iters") && v)
            o.iters = atoi(v), i++;
        else if (!strcmp(argv[i], "--gpu") && v)
            o.gpu = atoi(v), i++;
        else if (!strcmp(argv[i], "--crop-from") && v && sscanf(v, "%ux%u", &o.from_h, &o.from_w) == 2)
            i++;
        else {
            fprintf(stderr, "usage: %s [--batch N] [--size HxW] [--iters N] [--gpu ID] [--crop-from HxW]\n", argv[0]);
            return 1;
        }
    }
    if (o.batch < 1 || o.height < 1 || o.width < 1 || o.iters < 1) {
        fprintf(stderr, "bench_gpu: batch, size and iters must be positive\n");
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    bench_opts o = {256, 224, 224, 100, 0, 256, 256};
    if (parse_args(argc, argv, o))
        return 1;
    if (!h5pack_backend_cuda_available(o.gpu)) {
        printf("skipped: no GPU\n");
        return 77;
    }
    cudaDeviceProp prop;
    int driver = 0, runtime = 0;
    CUDA_OR_DIE(cudaSetDevice(o.gpu));
    CUDA_OR_DIE(cudaGetDeviceProperties(&prop, o.gpu));
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    printf("device %d: %s, %.1f GiB, driver %d, runtime %d (static)\n", o.gpu, prop.name,
           prop.totalGlobalMem / 1073741824.0, driver, runtime);
    double h2d = bench_h2d(o);
    double kernel = bench_kernel(o, H5PACK_DTYPE_FLOAT32, H5PACK_LAYOUT_NCHW, H5PACK_LAYOUT_NCHW, 0, 0);
    bench_kernel(o, H5PACK_DTYPE_FLOAT32, H5PACK_LAYOUT_NHWC, H5PACK_LAYOUT_NCHW, 0, 0);
    double flip = bench_kernel(o, H5PACK_DTYPE_FLOAT32, H5PACK_LAYOUT_NCHW, H5PACK_LAYOUT_NCHW, 1, 0);
    bench_kernel(o, H5PACK_DTYPE_FLOAT32, H5PACK_LAYOUT_NHWC, H5PACK_LAYOUT_NCHW, 1, 4);
    double half = bench_kernel(o, H5PACK_DTYPE_FLOAT16, H5PACK_LAYOUT_NCHW, H5PACK_LAYOUT_NCHW, 0, 0);
    bench_kernel(o, H5PACK_DTYPE_FLOAT16, H5PACK_LAYOUT_NHWC, H5PACK_LAYOUT_NCHW, 1, 4);
    bench_kernel(o, H5PACK_DTYPE_BFLOAT16, H5PACK_LAYOUT_NCHW, H5PACK_LAYOUT_NHWC, 0, 0);
    bench_kernel(o, H5PACK_DTYPE_UINT8, H5PACK_LAYOUT_NHWC, H5PACK_LAYOUT_NCHW, 0, 0);
    double rrc = bench_rrc_kernel(o, H5PACK_LAYOUT_NCHW, H5PACK_LAYOUT_NCHW);
    double rrc_nhwc = bench_rrc_kernel(o, H5PACK_LAYOUT_NHWC, H5PACK_LAYOUT_NCHW);
    double rrc_generic = bench_rrc_kernel(o, H5PACK_LAYOUT_NCHW, H5PACK_LAYOUT_NCHW, 1);
    double rrc_nhwc_generic = bench_rrc_kernel(o, H5PACK_LAYOUT_NHWC, H5PACK_LAYOUT_NCHW, 1);
    double rrc_pipeline = bench_rrc(o);
    // the contract lines that bench/gpu/device_run.sh collects: key: value
    printf("h2d_vs_pinned: %.3f\n", h2d);
    printf("kernel_vs_d2d: %.3f\n", kernel);
    printf("kernel_flip_vs_d2d: %.3f\n", flip);
    printf("kernel_float16_vs_d2d: %.3f\n", half);
    printf("rrc_kernel_vs_d2d: %.3f\n", rrc);
    printf("rrc_kernel_nhwc_in_vs_d2d: %.3f\n", rrc_nhwc);
    printf("rrc_kernel_generic_vs_d2d: %.3f\n", rrc_generic);
    printf("rrc_kernel_nhwc_in_generic_vs_d2d: %.3f\n", rrc_nhwc_generic);
    printf("rrc_backend_echo_images_per_s: %.0f\n", rrc_pipeline);
    return 0;
}
