// test_reader_detach_gpu.cu - h5pack_detach on the CUDA backend (include/h5pack.h): a detached delivery's
// device memory keeps the delivered values through later batches, the release, h5pack_close and
// h5pack_trim; nothing is copied (copied = 0, the memory is batch.data itself, also with batch echo's two
// output buffers per slot); the reader delivers exactly the batches of a reader that never detached (same
// seed); its device_bytes stay the same; the memory is freed with the caller's current device kept, from
// another thread too, and the GPU's free memory comes back. Prints "skipped: no GPU" and exits 77
// without one.
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "check.h"
#include "h5pack.h"
extern "C" {
#include "h5fixture.h"
}

#define CUDA_OK(call)                                                                        \
    do {                                                                                     \
        cudaError_t e_ = (call);                                                             \
        CHECK_MSG(e_ == cudaSuccess, "%s: %s", #call, cudaGetErrorString(e_));               \
    } while (0)

enum { N = 96, C = 3, SIDE = 24, BATCH = 16, MAX_KEPT = 64 };

static char path[256];

struct kept {
    h5pack_detached *d;
    std::vector<uint8_t> copy; // the values at delivery
};

struct variant {
    const char *name;
    int own_stream; // config.cuda_stream set (release records on it)
    h5pack_config cfg;
};

static h5pack_config base_config(void)
{
    h5pack_config c;
    c.struct_size = sizeof c;
    CHECK_OK(h5pack_config_init(&c));
    c.device = H5PACK_DEVICE_CUDA, c.batch_size = BATCH, c.threads = 2, c.prefetch = 3, c.epochs = 3, c.seed = 5;
    return c;
}

// The batch's device bytes on the host, once its kernel is done.
static std::vector<uint8_t> to_host(const void *dev, size_t bytes)
{
    std::vector<uint8_t> h(bytes);
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(h.data(), dev, bytes, cudaMemcpyDeviceToHost));
    return h;
}

static uint64_t digest(uint64_t h, const std::vector<uint8_t> &bytes)
{
    for (uint8_t v : bytes)
        h = (h ^ v) * 1099511628211ull;
    return h;
}

static void check_kept(const variant &v, std::vector<kept> &keep, const char *when)
{
    for (size_t j = 0; j < keep.size(); j++)
        if (keep[j].d)
            CHECK_MSG(to_host(h5pack_detached_data(keep[j].d), keep[j].copy.size()) == keep[j].copy,
                      "%s: detached delivery %zu changed %s", v.name, j, when);
}

// Every delivery's bytes chained; with DETACH the deliveries i = 1, 3 (mod 5) are detached into KEEP.
static uint64_t run(const variant &v, int detach, std::vector<kept> &keep, uint64_t *device_bytes)
{
    h5pack_config c = v.cfg;
    cudaStream_t stream = NULL;
    if (v.own_stream)
        CUDA_OK(cudaStreamCreate(&stream));
    c.cuda_stream = stream;
    h5pack_reader *r = NULL;
    CHECK_MSG(h5pack_open(path, &c, &r) == H5PACK_OK, "%s: open: %s", v.name, h5pack_last_error(r));
    uint64_t h = 1469598103934665603ull;
    h5pack_batch b = H5PACK_BATCH_INIT;
    int rc;
    for (int i = 0; (rc = h5pack_next(r, &b)) == H5PACK_OK; i++) {
        CHECK(b.on_device);
        std::vector<uint8_t> bytes = to_host(b.data, b.bytes);
        h = digest(h, bytes);
        if (detach && (i % 5 == 1 || i % 5 == 3) && keep.size() < (size_t)MAX_KEPT) {
            h5pack_detached *d = NULL;
            int copied = -1;
            CHECK_MSG(h5pack_detach(r, &b, &d, &copied) == H5PACK_OK, "%s: detach: %s", v.name, h5pack_last_error(r));
            CHECK(d && h5pack_detached_data(d) == b.data && h5pack_detached_bytes(d) >= b.bytes && copied == 0);
            keep.push_back(kept{d, bytes});
        }
        CHECK_OK(h5pack_release(r, &b));
        char when[64];
        snprintf(when, sizeof when, "at delivery %d", i);
        check_kept(v, keep, when);
    }
    CHECK_MSG(rc == H5PACK_END, "%s: next: %d %s", v.name, rc, h5pack_last_error(r));
    h5pack_stats st = H5PACK_STATS_INIT;
    CHECK_OK(h5pack_stats_get(r, &st));
    *device_bytes = st.device_bytes;
    h5pack_close(r);
    if (stream)
        CUDA_OK(cudaStreamDestroy(stream));
    return h;
}

static void *free_in_thread(void *arg)
{
    std::vector<kept> &keep = *(std::vector<kept> *)arg;
    for (size_t j = 0; j < keep.size(); j += 2)
        h5pack_detached_free(keep[j].d), keep[j].d = NULL;
    return NULL;
}

static size_t gpu_free_bytes(void)
{
    size_t free_b = 0, total = 0;
    CUDA_OK(cudaMemGetInfo(&free_b, &total));
    return free_b;
}

static void test_variant(const variant &v)
{
    std::vector<kept> none, keep;
    uint64_t plain_bytes = 0, with_bytes = 0;
    size_t free_before = gpu_free_bytes();
    uint64_t plain = run(v, 0, none, &plain_bytes);
    uint64_t with = run(v, 1, keep, &with_bytes);
    CHECK_MSG(with == plain, "%s: a reader that detached delivers other batches than one that did not", v.name);
    CHECK_MSG(with_bytes == plain_bytes, "%s: device_bytes %llu with detaches, %llu without", v.name,
              (unsigned long long)with_bytes, (unsigned long long)plain_bytes);
    CHECK_MSG(keep.size() > 3, "%s: only %zu detaches", v.name, keep.size());
    h5pack_trim();
    check_kept(v, keep, "after close and trim");
    CUDA_OK(cudaSetDevice(0));
    pthread_t t; // half from another thread (whose current device is the runtime's default)
    CHECK(pthread_create(&t, NULL, free_in_thread, &keep) == 0);
    for (size_t j = 1; j < keep.size(); j += 2)
        h5pack_detached_free(keep[j].d), keep[j].d = NULL;
    pthread_join(t, NULL);
    int dev = -1;
    CUDA_OK(cudaGetDevice(&dev));
    CHECK_EQ_INT(dev, 0);
    CUDA_OK(cudaGetLastError()); // the frees left no error behind
    size_t free_after = gpu_free_bytes(), slack = (size_t)64 << 20;
    CHECK_MSG(free_after + slack >= free_before, "%s: %zu MiB of device memory not given back", v.name,
              (free_before - free_after) >> 20);
    printf("ok   %s: %zu detaches, no copy, batches equal to a plain run's\n", v.name, keep.size());
}

int main(void)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1)
        SKIP_TEST("no GPU");
    h5fix_local_name(path, sizeof path, "detach_gpu");
    h5fix_file f;
    memset(&f, 0, sizeof f);
    f.n = N, f.c = C, f.h = SIDE, f.w = SIDE, f.k = 8, f.layout_attr = "NCHW", f.pixel = h5fix_pixel_chw;
    CHECK(h5fix_write(path, &f) == 0);
    variant v[5];
    for (int i = 0; i < 5; i++)
        v[i].name = "", v[i].own_stream = 0, v[i].cfg = base_config();
    v[0].name = "float32";
    v[1].name = "float32 on the caller's stream", v[1].own_stream = 1;
    v[2].name = "batch echo 3 (two output buffers per slot)", v[2].cfg.echo = 3;
    v[3].name = "uint8 with random resized crop 16x16, flip", v[3].cfg.dtype = H5PACK_DTYPE_UINT8;
    v[3].cfg.norm = H5PACK_NORM_NONE, v[3].cfg.crop = H5PACK_CROP_RANDOM_RESIZED, v[3].cfg.random_flip = 1;
    v[3].cfg.output_height = v[3].cfg.output_width = 16;
    v[4].name = "sample echo 2", v[4].cfg.echo = 2, v[4].cfg.echo_mode = H5PACK_ECHO_SAMPLE;
    for (int i = 0; i < 5; i++)
        test_variant(v[i]);
    remove(path);
    printf("h5pack_detach on the GPU: all checks passed\n");
    return 0;
}
