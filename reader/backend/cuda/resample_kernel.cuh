// resample_kernel.cuh - the resizing-crop kernel's per-block work (crop box + PIL bilinear taps made on
// the host, augment_resample.h), written as __host__ __device__ code so that the same functions run on
// the GPU (resample_kernel.cu) and, block by block, on the host (rsk_run_on_host, used by the tests on
// machines without a GPU to compare the kernel's arithmetic with the CPU backend's, bit for bit).
//
// One block makes a tile of one output image: `rows` output rows x `tile_w` output columns, all
// channels. Phase 1 computes the horizontal sums of the source rows the tile needs into shared memory
// (h of augment_resample.h, in float32); phase 2 sums them vertically, normalises and stores in the
// output's memory order. The sums are exact (integers below 2^24, so fused multiply-adds in any order
// give them) and the last step is augment_resample.h's, so the tiling does not change a single bit.
#ifndef H5PACK_RESAMPLE_KERNEL_CUH
#define H5PACK_RESAMPLE_KERNEL_CUH

#include <stdint.h>

extern "C" {
#include "augment_resample.h"
#include "backend.h"
}

#define RSK_THREADS 256
#define RSK_SMEM_FLOATS AUG_MAX_SPAN_FLOATS // 32 KiB of horizontal sums per block (the open checks fit)
#define RSK_MAX_TILE_W 128
#define RSK_REG_TAPS 8 // filter taps kept in registers; longer filters (strong downscales) read memory

struct rsk_args {
    aug_job job;               // device pointers on the GPU
    uint32_t tile_w, rows;     // output columns and rows per tile
    uint32_t tiles_x, tiles_y; // tiles per image across and down
    uint64_t blocks;           // count * tiles_y * tiles_x
    uint32_t generic;          // 1: the generic loops (rsk_*_generic): filters over RSK_REG_TAPS, images over
                               // 4 GiB (rsk_plan), and the benchmark's comparison; the same bits
};

// Source rows [first, end) that output rows [y0, y0 + n) of image I read.
__host__ __device__ inline void rsk_row_span(const aug_job &j, uint32_t i, uint32_t y0, uint32_t n, int32_t *first,
                                             int32_t *end)
{
    const int32_t *ry = j.ry + ((size_t)i * j.out_h + y0) * 2;
    *first = ry[0];
    *end = ry[2 * (n - 1)] + ry[2 * (n - 1) + 1];
}

// Largest number of source rows any tile of ROWS output rows needs, over the whole job (host data).
static inline uint32_t rsk_max_span(const aug_job &j, uint32_t rows)
{
    uint32_t most = 0;
    for (uint32_t i = 0; i < j.count; i++)
        for (uint32_t y0 = 0; y0 < j.out_h; y0 += rows) {
            uint32_t n = j.out_h - y0 < rows ? j.out_h - y0 : rows;
            int32_t a, b;
            rsk_row_span(j, i, y0, n, &a, &b);
            most = (uint32_t)(b - a) > most ? (uint32_t)(b - a) : most;
        }
    return most;
}

// Tile shape for host job J (its ry must be readable here): as many rows as fit the shared memory, up
// to 16. Returns 0, or -1 when not even one output row of one column fits (an extreme downscale).
static inline int rsk_plan(const aug_job &j, rsk_args *a)
{
    a->job = j;
    // the dispatched loops keep at most RSK_REG_TAPS weights in registers and use 32-bit offsets inside a
    // source image and an output image; anything else (strong downscales, images over 4 GiB) is generic
    a->generic = j.kx > RSK_REG_TAPS || j.ky > RSK_REG_TAPS || (uint64_t)j.C * j.H * j.W > 0xFFFFFFFFull ||
                 (uint64_t)j.C * j.out_h * j.out_w > 0xFFFFFFFFull;
    a->tile_w = j.out_w < RSK_MAX_TILE_W ? j.out_w : RSK_MAX_TILE_W;
    for (;;) {
        for (uint32_t rows = 16; rows >= 1; rows /= 2) {
            uint32_t r = rows < j.out_h ? rows : j.out_h;
            if ((uint64_t)rsk_max_span(j, r) * j.C * a->tile_w <= RSK_SMEM_FLOATS) {
                a->rows = r;
                a->tiles_x = (j.out_w + a->tile_w - 1) / a->tile_w;
                a->tiles_y = (j.out_h + r - 1) / r;
                a->blocks = (uint64_t)j.count * a->tiles_x * a->tiles_y;
                return 0;
            }
        }
        if (a->tile_w == 1)
            return -1;
        a->tile_w = (a->tile_w + 1) / 2;
    }
}

// What one block works on.
struct rsk_tile {
    uint32_t image, y0, x0, ny, nx;
    int32_t r0, r1; // source rows of the horizontal pass
};

__host__ __device__ inline rsk_tile rsk_tile_of(const rsk_args &a, uint64_t blk)
{
    rsk_tile t;
    uint64_t per_image = (uint64_t)a.tiles_x * a.tiles_y;
    t.image = (uint32_t)(blk / per_image);
    uint32_t rest = (uint32_t)(blk % per_image);
    t.y0 = rest / a.tiles_x * a.rows;
    t.x0 = rest % a.tiles_x * a.tile_w;
    t.ny = a.job.out_h - t.y0 < a.rows ? a.job.out_h - t.y0 : a.rows;
    t.nx = a.job.out_w - t.x0 < a.tile_w ? a.job.out_w - t.x0 : a.tile_w;
    rsk_row_span(a.job, t.image, t.y0, t.ny, &t.r0, &t.r1);
    return t;
}

// How the NT threads of a block share a tile: LANES threads across its columns (consecutive threads,
// consecutive columns), SUBS rows of threads down its rows. Threads past LANES * SUBS stay idle.
struct rsk_lanes {
    uint32_t lanes, subs, lane, sub;
};

__host__ __device__ inline rsk_lanes rsk_lanes_of(const rsk_args &a, uint32_t tid, uint32_t nt)
{
    rsk_lanes l;
    l.lanes = a.tile_w < nt ? a.tile_w : nt;
    l.subs = nt / l.lanes;
    l.lane = tid % l.lanes, l.sub = tid / l.lanes;
    return l;
}


// sum over t < N of w[t] * value(t) (exact: augment_resample.h); N fixed at compile time, so exactly N
// multiply-adds are issued.
template <int N, typename F> __host__ __device__ inline float rsk_dot_fixed(const float *w, F value)
{
    float acc = 0.0f;
#pragma unroll
    for (int t = 0; t < N; t++)
        acc = AUG_MAC(acc, w[t], value(t));
    return acc;
}

// The same for a run-time N: a case per tap count up to RSK_REG_TAPS (weights in registers, no
// predicated products past N), memory beyond.
template <typename F> __host__ __device__ inline float rsk_dot(int32_t n, const float *w_mem, const float *w_reg, F value)
{
    switch (n) {
    case 0: return 0.0f;
    case 1: return rsk_dot_fixed<1>(w_reg, value);
    case 2: return rsk_dot_fixed<2>(w_reg, value);
    case 3: return rsk_dot_fixed<3>(w_reg, value);
    case 4: return rsk_dot_fixed<4>(w_reg, value);
    case 5: return rsk_dot_fixed<5>(w_reg, value);
    case 6: return rsk_dot_fixed<6>(w_reg, value);
    case 7: return rsk_dot_fixed<7>(w_reg, value);
    case 8: return rsk_dot_fixed<8>(w_reg, value);
    default: break;
    }
    float acc = 0.0f;
    for (int32_t t = 0; t < n; t++)
        acc = AUG_MAC(acc, w_mem[t], value(t));
    return acc;
}

// The first RSK_REG_TAPS weights of W (N of them) into registers.
__host__ __device__ inline void rsk_load_taps(const float *w, int32_t n, float reg[RSK_REG_TAPS])
{
#pragma unroll
    for (int32_t t = 0; t < RSK_REG_TAPS; t++)
        reg[t] = t < n ? w[t] : 0.0f;
}

// Phase 1: thread TID of NT computes its share of h[(r * C + c) * tile_w + x] for source rows r0 + r:
// per column its taps are loaded once, then every source row and channel of the span is summed.
// (The generic loops: the tap count is dispatched per element. rsk_horizontal below dispatches it once
// per column.)
__host__ __device__ inline void rsk_horizontal_generic(const rsk_args &a, const rsk_tile &t, uint32_t tid, uint32_t nt,
                                               float *h)
{
    const aug_job &j = a.job;
    const aug_image *img = &j.images[t.image];
    const uint8_t *src = (const uint8_t *)(uintptr_t)img->src;
    const rsk_lanes l = rsk_lanes_of(a, tid, nt);
    if (l.sub >= l.subs)
        return;
    // images of several sizes address their source with its own stored size (aug_job_for_image)
    const uint32_t span = (uint32_t)(t.r1 - t.r0), C = j.C, W = img->src_h ? (uint32_t)img->src_w : j.W;
    const size_t plane = (size_t)(img->src_h ? (uint32_t)img->src_h : j.H) * W;
    for (uint32_t x = l.lane; x < t.nx; x += l.lanes) {
        uint32_t X = aug_tap_column(&j, img, t.x0 + x);
        const int32_t first = j.rx[((size_t)t.image * j.out_w + X) * 2], n = j.rx[((size_t)t.image * j.out_w + X) * 2 + 1];
        const float *wx = j.wx + ((size_t)t.image * j.out_w + X) * j.kx;
        float w[RSK_REG_TAPS];
        rsk_load_taps(wx, n, w);
        for (uint32_t r = l.sub; r < span; r += l.subs) {
            const size_t row = (size_t)(t.r0 + (int32_t)r);
            for (uint32_t c = 0; c < C; c++) {
                const uint8_t *p = j.in_nhwc ? src + (row * W + (uint32_t)first) * C + c : src + c * plane + row * W + (uint32_t)first;
                const uint32_t step = j.in_nhwc ? C : 1;
                h[(r * C + c) * a.tile_w + x] =
                    aug_round_h(rsk_dot(n, wx, w, [&](int32_t k) { return (float)p[(uint32_t)k * step]; }));
            }
        }
    }
}

// Element K of the job's output is E (a float32 bit pattern, a 16-bit pattern or a uint8: aug_write's
// stores with the index computed by the caller).
__host__ __device__ inline void rsk_put(const aug_job &j, size_t k, uint32_t e)
{
    if (j.out_type == H5PACK_DTYPE_FLOAT32)
        ((uint32_t *)j.out)[k] = e;
    else if (j.out_type == H5PACK_DTYPE_UINT8)
        ((uint8_t *)j.out)[k] = (uint8_t)e;
    else
        ((uint16_t *)j.out)[k] = (uint16_t)e;
}

// Phase 2: thread TID of NT sums, normalises and stores its share of the tile: per output row its taps
// are loaded once (every thread of the row reads the same ones), then each channel is summed.
// (The generic loops; rsk_vertical below dispatches the tap count once per row.)
__host__ __device__ inline void rsk_vertical_generic(const rsk_args &a, const rsk_tile &t, uint32_t tid, uint32_t nt,
                                             const float *h)
{
    const aug_job &j = a.job;
    const rsk_lanes l = rsk_lanes_of(a, tid, nt);
    if (l.sub >= l.subs)
        return;
    const uint32_t C = j.C, tw = a.tile_w;
    for (uint32_t r = l.sub; r < t.ny; r += l.subs) {
        const uint32_t y = t.y0 + r;
        const int32_t *ry = j.ry + ((size_t)t.image * j.out_h + y) * 2;
        const float *wy = j.wy + ((size_t)t.image * j.out_h + y) * j.ky;
        const int32_t n = ry[1];
        float w[RSK_REG_TAPS];
        rsk_load_taps(wy, n, w);
        const uint32_t base = (uint32_t)(ry[0] - t.r0) * C; // h row of tap 0, channel 0
        // output element of (x, c) in this row: row0 + x * x_step + c * c_step (aug_write's index)
        const size_t row0 = (size_t)t.image * C * j.out_h * j.out_w +
                            (j.out_nhwc ? (size_t)y * j.out_w * C : (size_t)y * j.out_w) +
                            (size_t)t.x0 * (j.out_nhwc ? C : 1);
        const size_t x_step = j.out_nhwc ? C : 1, c_step = j.out_nhwc ? 1 : (size_t)j.out_h * j.out_w;
        for (uint32_t x = l.lane; x < t.nx; x += l.lanes)
            for (uint32_t c = 0; c < C; c++) {
                const float *col = h + (base + c) * tw + x;
                float acc = rsk_dot(n, wy, w, [&](int32_t q) { return col[(uint32_t)q * C * tw]; });
                rsk_put(j, row0 + x * x_step + c * c_step, aug_store_value(&j, c, acc));
            }
    }
}

// ---- the dispatched loops: the same sums, with the tap count (and 3 channels) fixed at compile time
// for a whole column (phase 1) or row (phase 2), not per element, and 32-bit offsets inside a row.
// Forced inline: called through pointers and references, they would otherwise keep their weights and
// arguments on the stack (local memory).
#define RSK_HD __host__ __device__ __forceinline__

// Where phase 1 reads: source row R's first tap of channel 0 is BASE + R * ROW, channel c at + c * CH,
// tap t at + t * STEP: 32-bit offsets, as every source image of a job on this path is under 4 GiB
// (rsk_plan; larger ones take the generic loops).
struct rsk_hsrc {
    const uint8_t *base;
    uint32_t row, ch, step;
};

// One column X of phase 1 (local column x) with N taps W in registers, for every source row of the
// span this thread takes. CC: the channel count when fixed (3), else 0 and C at run time.
template <int N, int CC>
RSK_HD void rsk_hcolumn(const rsk_hsrc &in, const float *w_mem, uint32_t x, uint32_t C,
                                            uint32_t tile_w, uint32_t r_first, uint32_t r_step, uint32_t span,
                                            float *h)
{
    const uint32_t nc = CC ? (uint32_t)CC : C;
    float w[N > 0 ? N : 1]; // registers: loaded here, not through a caller's array (that one lives on the stack)
#pragma unroll
    for (int t = 0; t < N; t++)
        w[t] = w_mem[t];
    for (uint32_t r = r_first; r < span; r += r_step) {
        const uint8_t *p = in.base + r * in.row;
        for (uint32_t c = 0; c < nc; c++) {
            const uint8_t *q = p + c * in.ch;
            float acc = 0.0f;
#pragma unroll
            for (int t = 0; t < N; t++)
                acc = AUG_MAC(acc, w[t], (float)q[(uint32_t)t * in.step]);
            h[(r * nc + c) * tile_w + x] = aug_round_h(acc);
        }
    }
}

// Phase 1 for one column, its tap count N dispatched once (memory weights past RSK_REG_TAPS).
// Phase 1 for one column, its tap count N (at most RSK_REG_TAPS: rsk_plan) dispatched once.
template <int CC>
RSK_HD void rsk_hcolumn_any(const rsk_hsrc &in, int32_t n, const float *w, uint32_t x, uint32_t C, uint32_t tile_w,
                            uint32_t r_first, uint32_t r_step, uint32_t span, float *h)
{
    switch (n) {
    case 0: rsk_hcolumn<0, CC>(in, w, x, C, tile_w, r_first, r_step, span, h); return;
    case 1: rsk_hcolumn<1, CC>(in, w, x, C, tile_w, r_first, r_step, span, h); return;
    case 2: rsk_hcolumn<2, CC>(in, w, x, C, tile_w, r_first, r_step, span, h); return;
    case 3: rsk_hcolumn<3, CC>(in, w, x, C, tile_w, r_first, r_step, span, h); return;
    case 4: rsk_hcolumn<4, CC>(in, w, x, C, tile_w, r_first, r_step, span, h); return;
    case 5: rsk_hcolumn<5, CC>(in, w, x, C, tile_w, r_first, r_step, span, h); return;
    case 6: rsk_hcolumn<6, CC>(in, w, x, C, tile_w, r_first, r_step, span, h); return;
    case 7: rsk_hcolumn<7, CC>(in, w, x, C, tile_w, r_first, r_step, span, h); return;
    default: rsk_hcolumn<8, CC>(in, w, x, C, tile_w, r_first, r_step, span, h); return;
    }
}

// Phase 1 (as rsk_horizontal_generic computes it).
__host__ __device__ inline void rsk_horizontal(const rsk_args &a, const rsk_tile &t, uint32_t tid, uint32_t nt,
                                               float *h)
{
    const aug_job &j = a.job;
    const aug_image *img = &j.images[t.image];
    const rsk_lanes l = rsk_lanes_of(a, tid, nt);
    if (l.sub >= l.subs)
        return;
    const uint32_t span = (uint32_t)(t.r1 - t.r0), C = j.C, W = img->src_h ? (uint32_t)img->src_w : j.W;
    const size_t plane = (size_t)(img->src_h ? (uint32_t)img->src_h : j.H) * W;
    const uint8_t *src = (const uint8_t *)(uintptr_t)img->src;
    rsk_hsrc in;
    in.row = j.in_nhwc ? W * C : W;
    in.ch = j.in_nhwc ? 1u : (uint32_t)plane;
    in.step = j.in_nhwc ? C : 1u;
    const int32_t *rx = j.rx + (size_t)t.image * j.out_w * 2;
    const float *wx_img = j.wx + (size_t)t.image * j.out_w * j.kx;
    for (uint32_t x = l.lane; x < t.nx; x += l.lanes) {
        uint32_t X = aug_tap_column(&j, img, t.x0 + x);
        const int32_t first = rx[2 * X], n = rx[2 * X + 1];
        const float *wx = wx_img + (size_t)X * j.kx;
        in.base = src + (size_t)t.r0 * in.row + (size_t)(uint32_t)first * in.step;
        if (C == 3)
            rsk_hcolumn_any<3>(in, n, wx, x, C, a.tile_w, l.sub, l.subs, span, h);
        else
            rsk_hcolumn_any<0>(in, n, wx, x, C, a.tile_w, l.sub, l.subs, span, h);
    }
}

// One output row of phase 2 (tile row r) with N taps W in registers: every column this thread takes,
// every channel. COL0: the h value of tap 0, channel 0, column 0; tap t of channel c at + (t * C + c) * TW.
template <int N, int CC>
RSK_HD void rsk_vrow(const aug_job &j, const float *col0, const float *w_mem, uint32_t C,
                                         uint32_t tw, uint32_t x_first, uint32_t x_step_thr, uint32_t nx,
                                         size_t row0, uint32_t x_step, uint32_t c_step)
{
    const uint32_t nc = CC ? (uint32_t)CC : C;
    float w[N > 0 ? N : 1];
#pragma unroll
    for (int q = 0; q < N; q++)
        w[q] = w_mem[q];
    for (uint32_t x = x_first; x < nx; x += x_step_thr)
#pragma unroll
        for (uint32_t c = 0; c < nc; c++) {
            const float *col = col0 + c * tw + x;
            float acc = 0.0f;
#pragma unroll
            for (int q = 0; q < N; q++)
                acc = AUG_MAC(acc, w[q], col[(uint32_t)q * nc * tw]);
            rsk_put(j, row0 + (x * x_step + c * c_step), aug_store_value(&j, c, acc));
        }
}

// One output row of phase 2, its tap count N (at most RSK_REG_TAPS: rsk_plan) dispatched once.
template <int CC>
RSK_HD void rsk_vrow_any(const aug_job &j, int32_t n, const float *w, const float *col0, uint32_t C, uint32_t tw,
                         uint32_t x_first, uint32_t x_step_thr, uint32_t nx, size_t row0, uint32_t x_step,
                         uint32_t c_step)
{
    switch (n) {
    case 0: rsk_vrow<0, CC>(j, col0, w, C, tw, x_first, x_step_thr, nx, row0, x_step, c_step); return;
    case 1: rsk_vrow<1, CC>(j, col0, w, C, tw, x_first, x_step_thr, nx, row0, x_step, c_step); return;
    case 2: rsk_vrow<2, CC>(j, col0, w, C, tw, x_first, x_step_thr, nx, row0, x_step, c_step); return;
    case 3: rsk_vrow<3, CC>(j, col0, w, C, tw, x_first, x_step_thr, nx, row0, x_step, c_step); return;
    case 4: rsk_vrow<4, CC>(j, col0, w, C, tw, x_first, x_step_thr, nx, row0, x_step, c_step); return;
    case 5: rsk_vrow<5, CC>(j, col0, w, C, tw, x_first, x_step_thr, nx, row0, x_step, c_step); return;
    case 6: rsk_vrow<6, CC>(j, col0, w, C, tw, x_first, x_step_thr, nx, row0, x_step, c_step); return;
    case 7: rsk_vrow<7, CC>(j, col0, w, C, tw, x_first, x_step_thr, nx, row0, x_step, c_step); return;
    default: rsk_vrow<8, CC>(j, col0, w, C, tw, x_first, x_step_thr, nx, row0, x_step, c_step); return;
    }
}

// Phase 2 (as rsk_vertical_generic computes it).
__host__ __device__ inline void rsk_vertical(const rsk_args &a, const rsk_tile &t, uint32_t tid, uint32_t nt,
                                             const float *h)
{
    const aug_job &j = a.job;
    const rsk_lanes l = rsk_lanes_of(a, tid, nt);
    if (l.sub >= l.subs)
        return;
    const uint32_t C = j.C, tw = a.tile_w;
    const uint32_t x_step = j.out_nhwc ? C : 1, c_step = j.out_nhwc ? 1 : j.out_h * j.out_w; // < 4 Gi: rsk_plan
    for (uint32_t r = l.sub; r < t.ny; r += l.subs) {
        const uint32_t y = t.y0 + r;
        const int32_t *ry = j.ry + ((size_t)t.image * j.out_h + y) * 2;
        const float *wy = j.wy + ((size_t)t.image * j.out_h + y) * j.ky;
        const int32_t n = ry[1];
        const float *col0 = h + (size_t)(uint32_t)(ry[0] - t.r0) * C * tw;
        const size_t row0 = (size_t)t.image * C * j.out_h * j.out_w +
                            (j.out_nhwc ? (size_t)y * j.out_w * C : (size_t)y * j.out_w) +
                            (size_t)t.x0 * (j.out_nhwc ? C : 1);
        if (C == 3)
            rsk_vrow_any<3>(j, n, wy, col0, C, tw, l.lane, l.lanes, t.nx, row0, x_step, c_step);
        else
            rsk_vrow_any<0>(j, n, wy, col0, C, tw, l.lane, l.lanes, t.nx, row0, x_step, c_step);
    }
}

// The kernel's work done serially on the host, block by block, phase by phase. For the tests.
inline void rsk_run_on_host(const rsk_args &a, uint32_t nt, float *smem)
{
    for (uint64_t blk = 0; blk < a.blocks; blk++) {
        rsk_tile t = rsk_tile_of(a, blk);
        for (uint32_t tid = 0; tid < nt; tid++)
            a.generic ? rsk_horizontal_generic(a, t, tid, nt, smem) : rsk_horizontal(a, t, tid, nt, smem);
        for (uint32_t tid = 0; tid < nt; tid++)
            a.generic ? rsk_vertical_generic(a, t, tid, nt, smem) : rsk_vertical(a, t, tid, nt, smem);
    }
}

#ifdef __CUDACC__
#include <cuda_runtime.h>
// Enqueues the resampling kernel on STREAM (A's job pointers are device pointers).
extern "C" cudaError_t h5pack_rsk_launch(const rsk_args &a, cudaStream_t stream);
#endif

#endif
