// test_backend_gpu.cu - the CUDA backend on a real GPU against the CPU backend: bit-identical output
// for every dtype / layout pair / augmentation (resizing crops, composed sample-echo deliveries and
// output size changes included), poisoned device buffers fully overwritten, echoes on
// the device with fresh draws and no second copy, ring reuse under a slow consumer on its own stream,
// and no device memory growth over many epochs. Prints "skipped: no GPU" and exits 77 without one.
#include <cuda_runtime.h>
#include <vector>

#include "check.h"
extern "C" {
#include "naive.h"
}

#define CUDA_OK(call)                                                                        \
    do {                                                                                     \
        cudaError_t e_ = (call);                                                             \
        CHECK_MSG(e_ == cudaSuccess, "%s: %s", #call, cudaGetErrorString(e_));               \
    } while (0)

struct pair {
    backend *gpu, *cpu;
    backend_params p;
    size_t in_img, out_img;
};

static pair make_pair(const backend_params &p)
{
    pair x;
    char err[512];
    x.p = p;
    x.in_img = (size_t)p.channels * p.height * p.width;
    x.out_img = h5pack_backend_output_image_bytes(&p);
    CHECK_MSG(h5pack_backend_cuda_create(&p, &x.gpu, err, sizeof err) == H5PACK_OK, "cuda: %s", err);
    backend_params q = p;
    q.user_stream = NULL;
    CHECK_MSG(h5pack_backend_cpu_create(&q, &x.cpu, err, sizeof err) == H5PACK_OK, "cpu: %s", err);
    return x;
}

static void free_pair(pair &x)
{
    x.gpu->ops->destroy(x.gpu);
    x.cpu->ops->destroy(x.cpu);
}

static void fill_both(pair &x, int slot, size_t count, uint64_t seed)
{
    uint8_t *g = x.gpu->ops->host_input(x.gpu, slot), *c = x.cpu->ops->host_input(x.cpu, slot);
    naive_fill_random(c, count * x.in_img, seed);
    memcpy(g, c, count * x.in_img);
    int64_t *gl = x.gpu->ops->host_labels(x.gpu, slot), *cl = x.cpu->ops->host_labels(x.cpu, slot);
    for (size_t i = 0; i < count; i++)
        gl[i] = cl[i] = (int64_t)(seed * 31 + i);
}

// Waits for SLOT's batch on the host and compares it (and the device labels) with the CPU backend's.
static void compare_slot(pair &x, int slot, size_t count, const char *what)
{
    h5pack_batch g, c;
    CHECK_OK(x.gpu->ops->output(x.gpu, slot, count, &g, NULL, 0));
    CHECK_OK(x.cpu->ops->output(x.cpu, slot, count, &c, NULL, 0));
    CHECK(g.on_device == 1 && g.cuda_event != NULL && g.labels_device != NULL);
    CHECK_EQ_INT(g.bytes, c.bytes);
    CUDA_OK(cudaEventSynchronize((cudaEvent_t)g.cuda_event));
    std::vector<uint8_t> host(g.bytes);
    CUDA_OK(cudaMemcpy(host.data(), g.data, g.bytes, cudaMemcpyDeviceToHost));
    for (size_t k = 0; k < g.bytes; k++)
        CHECK_MSG(host[k] == ((const uint8_t *)c.data)[k],
                  "%s: byte %zu differs (gpu %02x cpu %02x) C=%u H=%u W=%u dtype=%d in=%d out=%d flip=%d pad=%d",
                  what, k, host[k], ((const uint8_t *)c.data)[k], x.p.channels, x.p.height, x.p.width, x.p.dtype,
                  x.p.in_layout, x.p.out_layout, x.p.random_flip, x.p.crop_padding);
    std::vector<int64_t> labels(count);
    CUDA_OK(cudaMemcpy(labels.data(), g.labels_device, count * 8, cudaMemcpyDeviceToHost));
    CHECK(memcmp(labels.data(), c.labels, count * 8) == 0);
    const backend_box *gb = NULL, *cbx = NULL;
    uint32_t gh, gw, ch, cw;
    x.gpu->ops->geometry(x.gpu, slot, &gb, &gh, &gw);
    x.cpu->ops->geometry(x.cpu, slot, &cbx, &ch, &cw);
    CHECK(gh == ch && gw == cw && memcmp(gb, cbx, count * sizeof *gb) == 0);
    CHECK_OK(x.gpu->ops->release(x.gpu, slot, NULL, 0));
    CHECK_OK(x.cpu->ops->release(x.cpu, slot, NULL, 0));
}

static void poison_output(pair &x, int slot)
{
    h5pack_batch g;
    CHECK_OK(x.gpu->ops->output(x.gpu, slot, x.p.batch_size, &g, NULL, 0));
    CUDA_OK(cudaMemset((void *)g.data, 0xA5, g.bytes));
    CUDA_OK(cudaDeviceSynchronize());
}

// Images past COUNT were not part of the batch: their poison must still be there.
static void check_tail_poisoned(pair &x, int slot, size_t count)
{
    h5pack_batch g;
    CHECK_OK(x.gpu->ops->output(x.gpu, slot, x.p.batch_size, &g, NULL, 0));
    CUDA_OK(cudaDeviceSynchronize());
    std::vector<uint8_t> tail(g.bytes - count * x.out_img);
    CUDA_OK(cudaMemcpy(tail.data(), (const uint8_t *)g.data + count * x.out_img, tail.size(), cudaMemcpyDeviceToHost));
    for (size_t k = 0; k < tail.size(); k++)
        CHECK_MSG(tail[k] == 0xA5, "byte %zu after the batch was written", k);
    CHECK_OK(x.gpu->ops->release(x.gpu, slot, NULL, 0));
}

static void test_equal_to_cpu(void)
{
    // {1,8,8}, {3,32,32} and {3,16,48} also take the fast path (16-byte groups), with flips where W % 16 == 0
    const uint32_t shapes[][3] = {{3, 17, 13}, {1, 8, 8}, {3, 32, 32}, {4, 5, 300}, {3, 2, 2000}, {3, 16, 48}};
    const int augs[][2] = {{0, 0}, {1, 0}, {0, 4}, {1, 4}, {1, 40}};
    int cases = 0;
    for (auto &s : shapes)
        for (int dt = 0; dt <= H5PACK_DTYPE_UINT8; dt++)
            for (int li = 0; li < 2; li++)
                for (int lo = 0; lo < 2; lo++)
                    for (auto &a : augs) {
                        backend_params p = naive_params(s[0], s[1], s[2], (h5pack_dtype)dt, (h5pack_layout)li,
                                                        (h5pack_layout)lo, a[0], a[1]);
                        pair x = make_pair(p);
                        size_t count = p.batch_size - 1; // a short batch: the tail stays untouched
                        poison_output(x, 1);
                        fill_both(x, 1, count, 1000 + (uint64_t)cases);
                        uint64_t k0 = aug_batch_key(9, 0, (uint64_t)cases, 0), k1 = aug_batch_key(9, 0, (uint64_t)cases, 1);
                        CHECK_OK(x.gpu->ops->submit(x.gpu, 1, h5pack_backend_job(count, k0), NULL, 0));
                        CHECK_OK(x.cpu->ops->submit(x.cpu, 1, h5pack_backend_job(count, k0), NULL, 0));
                        compare_slot(x, 1, count, "fresh");
                        check_tail_poisoned(x, 1, count);
                        CHECK_OK(x.gpu->ops->resubmit(x.gpu, 1, h5pack_backend_job(count, k1), NULL, 0));
                        CHECK_OK(x.cpu->ops->resubmit(x.cpu, 1, h5pack_backend_job(count, k1), NULL, 0));
                        compare_slot(x, 1, count, "echo");
                        free_pair(x);
                        cases++;
                    }
    printf("gpu == cpu for %d parameter sets (fresh and echo)\n", cases);
}

// An echo runs only the kernel: the copy time does not move.
static void test_echo_does_not_copy(void)
{
    backend_params p = naive_params(3, 64, 64, H5PACK_DTYPE_FLOAT16, H5PACK_LAYOUT_NHWC, H5PACK_LAYOUT_NCHW, 1, 4);
    pair x = make_pair(p);
    fill_both(x, 0, p.batch_size, 5);
    CHECK_OK(x.gpu->ops->submit(x.gpu, 0, h5pack_backend_job(p.batch_size, 1), NULL, 0));
    CUDA_OK(cudaDeviceSynchronize());
    double copy0 = 0, copy1 = 0;
    x.gpu->ops->times(x.gpu, NULL, &copy0, NULL);
    CHECK(copy0 > 0);
    CHECK_OK(x.gpu->ops->release(x.gpu, 0, NULL, 0));
    for (uint32_t e = 1; e < 4; e++)
        CHECK_OK(x.gpu->ops->resubmit(x.gpu, 0, h5pack_backend_job(p.batch_size, e), NULL, 0));
    CUDA_OK(cudaDeviceSynchronize());
    x.gpu->ops->times(x.gpu, NULL, &copy1, NULL);
    CHECK_MSG(copy1 == copy0, "copy time moved on echoes: %g -> %g", copy0, copy1);
    free_pair(x);
}

__global__ void spin_then_copy(const uint8_t *src, uint8_t *dst, size_t n, long long cycles)
{
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
    for (size_t k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += (size_t)gridDim.x * blockDim.x)
        dst[k] = src[k];
}

// The consumer's stream is slow (a kernel that spins before reading each batch) while the host loop
// runs far ahead through a 2-slot ring: every batch the consumer read must still be the right one.
static void test_slow_consumer(void)
{
    cudaStream_t user;
    CUDA_OK(cudaStreamCreateWithFlags(&user, cudaStreamNonBlocking));
    backend_params p = naive_params(3, 16, 16, H5PACK_DTYPE_FLOAT32, H5PACK_LAYOUT_NHWC, H5PACK_LAYOUT_NCHW, 1, 2);
    p.slots = 2;
    p.user_stream = user;
    pair x = make_pair(p);
    const int rounds = 12;
    size_t bytes = p.batch_size * x.out_img;
    uint8_t *seen = NULL;
    CUDA_OK(cudaMalloc(&seen, bytes * rounds));
    for (int r = 0; r < rounds; r++) {
        int slot = r % 2;
        fill_both(x, slot, p.batch_size, 200 + (uint64_t)r);
        CHECK_OK(x.gpu->ops->submit(x.gpu, slot, h5pack_backend_job(p.batch_size, (uint64_t)r), NULL, 0));
        h5pack_batch g;
        CHECK_OK(x.gpu->ops->output(x.gpu, slot, p.batch_size, &g, NULL, 0));
        spin_then_copy<<<64, 256, 0, user>>>((const uint8_t *)g.data, seen + bytes * r, bytes, 2000000);
        CUDA_OK(cudaGetLastError());
        CHECK_OK(x.gpu->ops->release(x.gpu, slot, NULL, 0));
    }
    CUDA_OK(cudaStreamSynchronize(user));
    std::vector<uint8_t> got(bytes), want(bytes), in(p.batch_size * x.in_img);
    for (int r = 0; r < rounds; r++) {
        naive_fill_random(in.data(), in.size(), 200 + (uint64_t)r);
        naive_convert(&p, in.data(), want.data(), p.batch_size, (uint64_t)r);
        CUDA_OK(cudaMemcpy(got.data(), seen + bytes * r, bytes, cudaMemcpyDeviceToHost));
        CHECK_MSG(got == want, "round %d: the consumer saw a batch overwritten too early", r);
    }
    CUDA_OK(cudaFree(seen));
    free_pair(x);
    CUDA_OK(cudaStreamDestroy(user));
    printf("slow consumer: %d rounds through 2 slots intact\n", rounds);
}

// Batch echo with two output buffers per slot: each echo goes to the other buffer, a slow consumer still
// reads every echo intact (echo e must not overwrite what the consumer's step e-2 has not read yet), and
// echo e's kernel does not wait for the consumer's step on echo e-1: while a long step on echo 0 runs,
// echo 1 is already converted (its ready event completes before the step's end).
static void test_echo_two_buffers(void)
{
    cudaStream_t user;
    CUDA_OK(cudaStreamCreateWithFlags(&user, cudaStreamNonBlocking));
    backend_params p = naive_params(3, 16, 16, H5PACK_DTYPE_FLOAT32, H5PACK_LAYOUT_NCHW, H5PACK_LAYOUT_NCHW, 1, 0);
    p.slots = 2, p.user_stream = user, p.output_buffers = 2;
    pair x = make_pair(p);
    const int echoes = 6;
    size_t bytes = p.batch_size * x.out_img;
    uint8_t *seen = NULL;
    CUDA_OK(cudaMalloc(&seen, bytes * echoes));
    cudaEvent_t step_done;
    CUDA_OK(cudaEventCreateWithFlags(&step_done, cudaEventDisableTiming));
    fill_both(x, 0, p.batch_size, 77);
    const void *prev = NULL;
    for (int e = 0; e < echoes; e++) {
        uint64_t key = aug_batch_key(3, 0, 0, (uint32_t)e);
        backend_job job = h5pack_backend_job(p.batch_size, key);
        CHECK_OK(e == 0 ? x.gpu->ops->submit(x.gpu, 0, job, NULL, 0) : x.gpu->ops->resubmit(x.gpu, 0, job, NULL, 0));
        h5pack_batch g;
        CHECK_OK(x.gpu->ops->output(x.gpu, 0, p.batch_size, &g, NULL, 0));
        CHECK_MSG(g.data != prev, "echo %d delivered in the same buffer as echo %d", e, e - 1);
        if (e == 1) { // the step on echo 0 is still spinning (0.2 s): echo 1's conversion must finish first
            CHECK_MSG(cudaEventQuery(step_done) == cudaErrorNotReady, "the step on echo 0 ended too soon to tell");
            CUDA_OK(cudaEventSynchronize((cudaEvent_t)g.cuda_event));
            CHECK_MSG(cudaEventQuery(step_done) == cudaErrorNotReady,
                      "echo 1's conversion waited for the consumer's step on echo 0 (the echo bubble)");
        }
        prev = g.data;
        spin_then_copy<<<64, 256, 0, user>>>((const uint8_t *)g.data, seen + bytes * e, bytes, e == 0 ? 400000000 : 2000000);
        CUDA_OK(cudaGetLastError());
        if (e == 0)
            CUDA_OK(cudaEventRecord(step_done, user));
        CHECK_OK(x.gpu->ops->release(x.gpu, 0, NULL, 0));
    }
    CUDA_OK(cudaStreamSynchronize(user));
    std::vector<uint8_t> got(bytes), want(bytes), in(p.batch_size * x.in_img);
    naive_fill_random(in.data(), in.size(), 77);
    for (int e = 0; e < echoes; e++) {
        naive_convert(&p, in.data(), want.data(), p.batch_size, aug_batch_key(3, 0, 0, (uint32_t)e));
        CUDA_OK(cudaMemcpy(got.data(), seen + bytes * e, bytes, cudaMemcpyDeviceToHost));
        CHECK_MSG(got == want, "echo %d: the consumer saw a buffer overwritten too early", e);
    }
    CUDA_OK(cudaEventDestroy(step_done));
    CUDA_OK(cudaFree(seen));
    free_pair(x);
    CUDA_OK(cudaStreamDestroy(user));
    printf("echo with two buffers: %d echoes intact, echo 1 converted during the step on echo 0\n", echoes);
}

// Many epochs of submit / echo / release, and many open/close cycles: device memory stays flat.
static void test_no_growth(void)
{
    backend_params p = naive_params(3, 32, 32, H5PACK_DTYPE_BFLOAT16, H5PACK_LAYOUT_NCHW, H5PACK_LAYOUT_NHWC, 1, 4);
    pair warm = make_pair(p);
    free_pair(warm);
    size_t free0, total, free1;
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemGetInfo(&free0, &total));
    for (int cycle = 0; cycle < 20; cycle++) {
        pair x = make_pair(p);
        uint64_t dev0 = 0, dev1 = 0;
        x.gpu->ops->times(x.gpu, NULL, NULL, &dev0);
        for (int epoch = 0; epoch < 10; epoch++)
            for (int slot = 0; slot < p.slots; slot++) {
                fill_both(x, slot, p.batch_size, (uint64_t)epoch);
                CHECK_OK(x.gpu->ops->submit(x.gpu, slot, h5pack_backend_job(p.batch_size, (uint64_t)epoch), NULL, 0));
                h5pack_batch g;
                CHECK_OK(x.gpu->ops->output(x.gpu, slot, p.batch_size, &g, NULL, 0));
                CHECK_OK(x.gpu->ops->release(x.gpu, slot, NULL, 0));
                CHECK_OK(x.gpu->ops->resubmit(x.gpu, slot, h5pack_backend_job(p.batch_size, (uint64_t)epoch + 100), NULL, 0));
                CHECK_OK(x.gpu->ops->output(x.gpu, slot, p.batch_size, &g, NULL, 0));
                CHECK_OK(x.gpu->ops->release(x.gpu, slot, NULL, 0));
            }
        x.gpu->ops->times(x.gpu, NULL, NULL, &dev1);
        CHECK_EQ_U64(dev0, dev1);
        free_pair(x);
    }
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemGetInfo(&free1, &total));
    CHECK_MSG(free1 + (2u << 20) >= free0, "device memory shrank by %zu bytes over 20 cycles", free0 - free1);
    printf("no growth: 20 open/close cycles x 10 epochs, free memory %zu -> %zu\n", free0, free1);
}

// Resizing crops (random resized and centre, every dtype and layout pair), a size change that redoes a
// converted batch, and a composed delivery reading two slots and the pool: the GPU writes the CPU's
// bytes, boxes and labels.
static void test_crop_equal_to_cpu(void)
{
    int cases = 0;
    for (int crop = 1; crop <= 2; crop++)
        for (int dt = 0; dt <= H5PACK_DTYPE_UINT8; dt++)
            for (int li = 0; li < 2; li++)
                for (int lo = 0; lo < 2; lo++) {
                    backend_params p = naive_params(3, 64, 80, (h5pack_dtype)dt, (h5pack_layout)li, (h5pack_layout)lo, 1, 0);
                    p.slots = 3, p.crop = crop, p.pool_batches = 1;
                    p.out_height = 56, p.out_width = 48, p.max_out_height = p.max_out_width = 64;
                    p.scale_min = 0.08, p.scale_max = 1, p.ratio_min = 0.75, p.ratio_max = 4.0 / 3.0;
                    p.center_ratio = 0.875;
                    pair x = make_pair(p);
                    for (int slot = 0; slot < 3; slot++) {
                        fill_both(x, slot, p.batch_size, 50 + (uint64_t)slot);
                        backend_job j = h5pack_backend_job(p.batch_size, 7 + (uint64_t)slot);
                        j.epoch = (uint64_t)slot;
                        CHECK_OK(x.gpu->ops->submit(x.gpu, slot, j, NULL, 0));
                        CHECK_OK(x.cpu->ops->submit(x.cpu, slot, j, NULL, 0));
                    }
                    compare_slot(x, 0, p.batch_size, "crop");
                    for (backend *b : {x.gpu, x.cpu}) {
                        CHECK_OK(h5pack_backend_set_output_size(b, 24, 40, 1, &p, NULL, 0));
                        CHECK_OK(b->ops->pool_store(b, 0, p.batch_size, 0, NULL, 0));
                    }
                    compare_slot(x, 1, p.batch_size, "crop after a size change");
                    backend_source src[4] = {{1, 2}, {3, 0}, {2, 7}, {3, 5}};
                    int64_t labels[4] = {4, 3, 2, 1};
                    backend_job j = h5pack_backend_job(4, 99);
                    j.sources = src, j.labels = labels, j.epoch = 2;
                    CHECK_OK(x.gpu->ops->resubmit(x.gpu, 2, j, NULL, 0));
                    CHECK_OK(x.cpu->ops->resubmit(x.cpu, 2, j, NULL, 0));
                    compare_slot(x, 2, 4, "composed crop");
                    free_pair(x);
                    cases++;
                }
    printf("gpu == cpu for %d resizing-crop parameter sets\n", cases);
}

int main(void)
{
    if (!h5pack_backend_cuda_available(0))
        SKIP_TEST("no GPU");
    test_equal_to_cpu();
    test_crop_equal_to_cpu();
    test_echo_does_not_copy();
    test_slow_consumer();
    test_echo_two_buffers();
    test_no_growth();
    printf("backend_gpu: all checks passed\n");
    return 0;
}
