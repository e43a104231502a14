// test_kernel_emulated.cu - runs the CUDA kernel's per-block code (reader/backend/cuda/convert_kernel.cuh) on
// the host, block by block and phase by phase, and checks that it writes exactly what
// h5pack_backend_convert_ref writes, for every dtype, layout pair and augmentation, several thread counts and
// tile shapes (multi-row tiles, rows split into several tiles); and the same for the streaming fast path
// (same layout, no padding: 16-byte groups) wherever the launch would take it. No GPU needed: this is how
// the index arithmetic of the GPU path is verified on machines without one.
#include <algorithm>
#include <stdlib.h>
#include <vector>

#include "check.h"
#include "cuda/convert_kernel.cuh" /* reader/backend/cuda */

static int fast_cases = 0;

// The tiled kernel's code (FAST 0) or the fast path's (FAST 1) run on the host.
static void run_emulated(const backend_params &p, const uint8_t *in, void *out, size_t count, uint64_t key,
                         uint32_t nt, const uint64_t *srcs, int fast)
{
    float f32[H5PACK_MAX_CHANNELS][256];
    uint16_t t16[H5PACK_MAX_CHANNELS][256];
    h5pack_backend_build_table(&p, f32, t16);
    convk_args a = convk_plan(&p, count);
    a.in = in, a.out = out, a.key = key, a.srcs = srcs;
    std::vector<uint8_t> tile(CONVK_SMEM, 0xEE);
    if (fast) {
        CHECK(convk_fast_ok(a));
        a.table = p.dtype == H5PACK_DTYPE_FLOAT32 ? (const void *)f32 : (const void *)t16;
        if (p.dtype == H5PACK_DTYPE_FLOAT32)
            convk_fast_run_on_host<uint32_t>(a);
        else if (p.dtype == H5PACK_DTYPE_UINT8)
            convk_fast_run_on_host<uint8_t>(a);
        else
            convk_fast_run_on_host<uint16_t>(a);
        return;
    }
    if (p.dtype == H5PACK_DTYPE_FLOAT32) {
        a.table = f32;
        convk_run_on_host<uint32_t>(a, nt, tile.data());
    } else if (p.dtype == H5PACK_DTYPE_UINT8) {
        convk_run_on_host<uint8_t>(a, nt, tile.data());
    } else {
        a.table = t16;
        convk_run_on_host<uint16_t>(a, nt, tile.data());
    }
}

static int check_case(uint32_t C, uint32_t H, uint32_t W, int dt, int li, int lo, int flip, int pad, uint32_t nt,
                      uint64_t key)
{
    backend_params p;
    memset(&p, 0, sizeof p);
    p.channels = C, p.height = H, p.width = W;
    p.in_layout = (h5pack_layout)li, p.out_layout = (h5pack_layout)lo, p.dtype = (h5pack_dtype)dt;
    p.batch_size = 4, p.slots = 1, p.random_flip = flip, p.crop_padding = pad;
    for (int c = 0; c < 4; c++)
        p.mean[c] = 0.1f * (float)(c + 3), p.std[c] = 0.2f + 0.01f * (float)c;
    const size_t count = 3, in_bytes = count * C * H * W, out_bytes = count * h5pack_backend_output_image_bytes(&p);
    std::vector<uint8_t> in(in_bytes), want(out_bytes, 0x5A), got(out_bytes, 0xA5);
    rng_state r = {key};
    for (auto &v : in)
        v = (uint8_t)(rng_next(&r) >> 56);
    convk_args plan = convk_plan(&p, count);
    int fast = convk_fast_ok(plan);
    for (int path = 0; path <= fast; path++) { // the tiled kernel, then the fast path where it applies
        std::fill(got.begin(), got.end(), 0xA5);
        h5pack_backend_convert_ref(&p, in.data(), NULL, want.data(), 0, count, key);
        run_emulated(p, in.data(), got.data(), count, key, nt, NULL, path);
        for (size_t k = 0; k < out_bytes; k++)
            CHECK_MSG(got[k] == want[k],
                      "byte %zu: %02x vs %02x (C=%u H=%u W=%u dtype=%d in=%d out=%d flip=%d pad=%d threads=%u %s)",
                      k, got[k], want[k], C, H, W, dt, li, lo, flip, pad, nt, path ? "fast path" : "tiled");
        // A composed (sample-echo) batch: images gathered by address, here in reverse order.
        std::vector<const uint8_t *> ptrs(count);
        std::vector<uint64_t> addrs(count);
        for (size_t i = 0; i < count; i++)
            ptrs[i] = in.data() + (count - 1 - i) * C * H * W, addrs[i] = (uint64_t)(uintptr_t)ptrs[i];
        h5pack_backend_convert_ref(&p, NULL, ptrs.data(), want.data(), 0, count, key);
        run_emulated(p, NULL, got.data(), count, key, nt, addrs.data(), path);
        CHECK_MSG(got == want, "gathered batch differs (C=%u H=%u W=%u dtype=%d in=%d out=%d %s)", C, H, W, dt, li,
                  lo, path ? "fast path" : "tiled");
    }
    fast_cases += fast;
    return 1;
}

// The mixed-radix counter against plain division.
static void test_iterator(void)
{
    const uint32_t radices[][2] = {{1, 1}, {3, 7}, {224, 3}, {5, 1}, {1, 13}, {4, 1365}};
    for (auto &rd : radices)
        for (uint32_t step : {1u, 7u, 96u, 256u, 1000u}) {
            convk_iter it = convk_iter_of(step % 5, rd[0], rd[1]), st = convk_iter_of(step, rd[0], rd[1]);
            for (uint32_t k = step % 5; k < 5000; k += step, convk_iter_add(it, st, rd[0], rd[1])) {
                CHECK_EQ_INT(it.lo, k % rd[1]);
                CHECK_EQ_INT(it.mid, k / rd[1] % rd[0]);
                CHECK_EQ_INT(it.hi, k / rd[1] / rd[0]);
            }
        }
}

int main(void)
{
    test_iterator();
    // the last four also take the fast path: planes of whole 16-byte groups, rows of 16 or 32 bytes
    const uint32_t shapes[][3] = {{3, 5, 7}, {1, 3, 5},  {4, 2, 1},  {3, 17, 13}, {3, 3, 1500}, {1, 2, 5000},
                                  {3, 40, 9}, {3, 4, 16}, {1, 3, 32}, {3, 16, 16}, {4, 4, 4}};
    const int augs[][2] = {{0, 0}, {1, 0}, {0, 2}, {1, 3}, {1, 40}};
    const uint32_t threads[] = {256, 37};
    int cases = 0;
    for (auto &s : shapes)
        for (int dt = 0; dt <= H5PACK_DTYPE_UINT8; dt++)
            for (int li = 0; li < 2; li++)
                for (int lo = 0; lo < 2; lo++)
                    for (auto &a : augs)
                        for (uint32_t nt : threads)
                            cases += check_case(s[0], s[1], s[2], dt, li, lo, a[0], a[1], nt,
                                                0xC0FFEEull + (uint64_t)cases);
    CHECK(fast_cases > 0);
    printf("kernel_emulated: %d cases equal h5pack_backend_convert_ref (%d of them also through the fast path)\n",
           cases, fast_cases);
    return 0;
}
