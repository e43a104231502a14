// convert_kernel.cuh - the fused conversion kernel's per-block work, written as __host__ __device__
// functions so that the same code runs on the GPU (convert_kernel.cu) and, block by block, on the host
// (convk_run_on_host, used by the tests on machines without a GPU to check the index arithmetic
// against h5pack_backend_convert_ref).
//
// One block converts a tile of one output image: R consecutive output rows x n consecutive columns,
// all channels. Phase 1 (load) reads the source pixels the tile needs, in the input's memory order
// (consecutive threads read consecutive bytes: coalesced for NCHW and NHWC), into a uint8 tile in
// shared memory. Phase 2 (store) writes the output in the output's memory order (coalesced again),
// looking each value up in the per-channel table; pixels in the crop padding get table[c][0]. The
// transposing cases (NHWC <-> NCHW) thus read and write global memory coalesced.
#ifndef H5PACK_CONVERT_KERNEL_CUH
#define H5PACK_CONVERT_KERNEL_CUH

#include <stdint.h>

extern "C" {
#include "augment.h"
#include "backend.h"
}

#define CONVK_THREADS 256
#define CONVK_SMEM 4096   // bytes of the uint8 tile: R * C * tile_w <= CONVK_SMEM
#define CONVK_TARGET 2048 // elements per block to aim for (8 per thread)

struct convk_args {
    const uint8_t *in; // COUNT uint8 images in the input layout
    const uint64_t *srcs; // or, when not NULL, the address of each image (a composed sample-echo batch)
    void *out;         // COUNT output images
    const void *table; // [C][256] elements of the output type (unused for uint8)
    uint32_t C, H, W;
    int in_nhwc, out_nhwc;
    uint32_t tile_w, rows;            // columns and rows of a tile
    uint32_t tiles_x, tiles_y;        // tiles per image across and down
    uint64_t count;                   // images
    uint64_t blocks;                  // count * tiles_y * tiles_x
    uint64_t key;                     // augmentation key of this batch and echo (augment.h)
    int flip, pad;                    // random_flip, crop padding (both 0 for uint8 output)
};

// Tile shape and grid for COUNT images of P (all but in/out/table/key).
static inline convk_args convk_plan(const backend_params *p, size_t count)
{
    convk_args a;
    a.in = 0, a.srcs = 0, a.out = 0, a.table = 0, a.key = 0;
    a.C = p->channels, a.H = p->height, a.W = p->width;
    a.in_nhwc = p->in_layout == H5PACK_LAYOUT_NHWC;
    a.out_nhwc = p->out_layout == H5PACK_LAYOUT_NHWC;
    int raw = p->dtype == H5PACK_DTYPE_UINT8; // raw output: no augmentation (h5pack.h)
    a.flip = raw ? 0 : p->random_flip;
    a.pad = raw || p->crop_padding < 0 ? 0 : p->crop_padding;
    uint32_t max_w = CONVK_SMEM / a.C;
    a.tile_w = a.W < max_w ? a.W : max_w;
    uint32_t per_row = a.C * a.tile_w, rows = CONVK_TARGET / per_row;
    rows = rows < 1 ? 1 : rows;
    a.rows = rows < a.H ? rows : a.H;
    a.tiles_x = (a.W + a.tile_w - 1) / a.tile_w;
    a.tiles_y = (a.H + a.rows - 1) / a.rows;
    a.count = count;
    a.blocks = (uint64_t)count * a.tiles_y * a.tiles_x;
    return a;
}

// What one block works on.
struct convk_tile {
    uint64_t image;
    uint32_t y0, x0, nr, nx; // first output row and column, rows and columns in this tile
    aug_draw d;
    int sx_lo;               // source column of tile column 0 in shared memory (may be in the padding)
};

__host__ __device__ inline convk_tile convk_tile_of(const convk_args &a, uint64_t blk)
{
    convk_tile t;
    uint64_t per_image = (uint64_t)a.tiles_y * a.tiles_x;
    t.image = blk / per_image;
    uint32_t rest = (uint32_t)(blk % per_image);
    t.y0 = rest / a.tiles_x * a.rows;
    t.x0 = rest % a.tiles_x * a.tile_w;
    t.nr = a.H - t.y0 < a.rows ? a.H - t.y0 : a.rows;
    t.nx = a.W - t.x0 < a.tile_w ? a.W - t.x0 : a.tile_w;
    t.d = aug_draw_for(a.key, t.image, a.flip, a.pad);
    // Output columns [x0, x0+nx) read source columns [sx_lo, sx_lo+nx) (reversed when flipped).
    int shift = t.d.ox - a.pad;
    t.sx_lo = t.d.flip ? (int)a.W - (int)t.x0 - (int)t.nx + shift : (int)t.x0 + shift;
    return t;
}

// A mixed-radix counter (hi, mid, lo) with radices (-, MID, LO), advanced by a fixed step without
// dividing in the loop: the threads of a block walk the tile's elements K = tid, tid + nt, ...
struct convk_iter {
    uint32_t hi, mid, lo;
};

__host__ __device__ inline convk_iter convk_iter_of(uint32_t k, uint32_t mid_n, uint32_t lo_n)
{
    convk_iter it;
    it.lo = k % lo_n;
    k /= lo_n;
    it.mid = k % mid_n;
    it.hi = k / mid_n;
    return it;
}

__host__ __device__ inline void convk_iter_add(convk_iter &it, const convk_iter &step, uint32_t mid_n,
                                               uint32_t lo_n)
{
    it.lo += step.lo;
    uint32_t carry = it.lo >= lo_n;
    it.lo -= carry ? lo_n : 0;
    it.mid += step.mid + carry;
    carry = it.mid >= mid_n;
    it.mid -= carry ? mid_n : 0;
    it.hi += step.hi + carry;
}

// Input image I (its own address in a composed batch).
__host__ __device__ inline const uint8_t *convk_image_in(const convk_args &a, uint64_t i)
{
    return a.srcs ? (const uint8_t *)(uintptr_t)a.srcs[i] : a.in + i * a.C * a.H * a.W;
}

// Source row of tile row R, or -1 in the padding.
__host__ __device__ inline int convk_src_row(const convk_args &a, const convk_tile &t, uint32_t r)
{
    int sy = aug_src_y(t.d, (int)(t.y0 + r), a.pad);
    return sy >= 0 && sy < (int)a.H ? sy : -1;
}

// Phase 1: thread TID of NT copies its share of the tile's source bytes into TILE
// (tile[(r * C + c) * tile_w + j] = source pixel (row of r, column sx_lo + j, channel c)).
__host__ __device__ inline void convk_load(const convk_args &a, const convk_tile &t, uint32_t tid, uint32_t nt,
                                           uint8_t *tile)
{
    const uint8_t *img = convk_image_in(a, t.image);
    uint32_t total = t.nr * a.C * t.nx;
    // Digits in the input's memory order: NCHW (r, c, j), NHWC (r, j, c).
    uint32_t mid_n = a.in_nhwc ? t.nx : a.C, lo_n = a.in_nhwc ? a.C : t.nx;
    convk_iter it = convk_iter_of(tid, mid_n, lo_n), step = convk_iter_of(nt, mid_n, lo_n);
    for (uint32_t k = tid; k < total; k += nt, convk_iter_add(it, step, mid_n, lo_n)) {
        uint32_t r = it.hi, c = a.in_nhwc ? it.lo : it.mid, j = a.in_nhwc ? it.mid : it.lo;
        int sy = convk_src_row(a, t, r), sx = t.sx_lo + (int)j;
        if (sy < 0 || sx < 0 || sx >= (int)a.W)
            continue; // padding: the store phase does not read it
        size_t src = a.in_nhwc ? ((size_t)sy * a.W + (size_t)sx) * a.C + c : ((size_t)c * a.H + (size_t)sy) * a.W + (size_t)sx;
        tile[(r * a.C + c) * a.tile_w + j] = img[src];
    }
}

template <typename T> __host__ __device__ inline T convk_lookup(const T *table, uint32_t c, uint32_t v)
{
#ifdef __CUDA_ARCH__
    return __ldg(table + c * 256 + v);
#else
    return table[c * 256 + v];
#endif
}

template <> __host__ __device__ inline uint8_t convk_lookup<uint8_t>(const uint8_t *, uint32_t, uint32_t v)
{
    return (uint8_t)v; // raw output
}

// Phase 2: thread TID of NT writes its share of the tile's output elements.
template <typename T>
__host__ __device__ inline void convk_store(const convk_args &a, const convk_tile &t, uint32_t tid, uint32_t nt,
                                            const uint8_t *tile)
{
    const T *table = (const T *)a.table;
    T *img = (T *)a.out + t.image * a.C * a.H * a.W;
    uint32_t total = t.nr * a.C * t.nx;
    // Digits in the output's memory order: NCHW (c, r, j), NHWC (r, j, c).
    uint32_t mid_n = a.out_nhwc ? t.nx : t.nr, lo_n = a.out_nhwc ? a.C : t.nx;
    convk_iter it = convk_iter_of(tid, mid_n, lo_n), step = convk_iter_of(nt, mid_n, lo_n);
    for (uint32_t k = tid; k < total; k += nt, convk_iter_add(it, step, mid_n, lo_n)) {
        uint32_t c = a.out_nhwc ? it.lo : it.hi, r = a.out_nhwc ? it.hi : it.mid, j = a.out_nhwc ? it.mid : it.lo;
        uint32_t y = t.y0 + r, x = t.x0 + j;
        int sy = convk_src_row(a, t, r), sx = aug_src_x(t.d, (int)x, (int)a.W, a.pad);
        uint32_t v = 0;
        if (sy >= 0 && sx >= 0 && sx < (int)a.W)
            v = tile[(r * a.C + c) * a.tile_w + (uint32_t)(sx - t.sx_lo)];
        size_t dst = a.out_nhwc ? ((size_t)y * a.W + x) * a.C + c : ((size_t)c * a.H + y) * a.W + x;
        img[dst] = convk_lookup<T>(table, c, v);
    }
}

// ---- The fast path: same layout in and out, no padding ------------------------------------------------
// Then output element e of an image is table[channel of e][input byte e] (or, flipped NCHW, the byte at
// the mirrored column of the same row): no tile, no transposition. Each thread converts groups of
// G = 16 / sizeof(T) elements: G input bytes in one load (4, 8 or 16 bytes), G lookups in a shared-memory
// table, and one 16-byte store, so a warp's store covers 512 contiguous bytes (whole sectors: no partial
// writes). A block works on convk_fast_block_groups<T>() groups of one image and draws the image's flip
// once; all indices are 32-bit (images under 4 GiB).

// 1 when A can take the fast path: same layout, no padding, images a whole number of 16-byte groups that
// never straddle a channel (NCHW) or a flipped row (NCHW rows a multiple of 16 when flipping). Flipped NHWC
// reverses 3-byte pixels, and layout changes transpose: the tiled kernel does those.
__host__ __device__ inline int convk_fast_ok(const convk_args &a)
{
    uint64_t plane = (uint64_t)a.H * a.W, image = plane * a.C;
    if (a.pad || a.in_nhwc != a.out_nhwc || image % 16 || image >= (1ull << 32))
        return 0;
    if (a.in_nhwc)
        return !a.flip;
    return plane % 16 == 0 && (!a.flip || a.W % 16 == 0);
}

// Elements per group for output type T: one 16-byte store.
template <typename T> __host__ __device__ constexpr uint32_t convk_group()
{
    return 16 / sizeof(T);
}

// Groups per thread and work item: independent loads in flight before the first store (fewer 16-byte
// ones for uint8, whose data would not fit the registers).
template <typename T> __host__ __device__ constexpr uint32_t convk_fast_unroll()
{
    return sizeof(T) == 1 ? 4 : 8;
}

// Blocks of the fast path resident per SM that its registers must allow (more warps, more loads in flight).
// On SMs of 2048 threads (sm_80, sm_90 and later): float32 fits 32 registers a thread without spilling,
// so the whole SM (8 x 256 threads); the 16-bit types 40 (6 blocks); uint8 holds 16 input bytes per group
// and would spill below its 54. Smaller SMs (1024 or 1536 threads) keep 4, which fits them all.
template <typename T> __host__ __device__ constexpr int convk_fast_min_blocks()
{
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 800 || __CUDA_ARCH__ >= 900)
    return sizeof(T) == 4 ? 8 : sizeof(T) == 2 ? 6 : 4;
#else
    return 4;
#endif
}

template <typename T> __host__ __device__ constexpr uint32_t convk_fast_block_groups()
{
    return CONVK_THREADS * convk_fast_unroll<T>();
}

// Groups per image, and fast-path work items (blocks) per image.
template <typename T> __host__ __device__ inline uint32_t convk_fast_groups(const convk_args &a)
{
    return (uint32_t)((uint64_t)a.C * a.H * a.W / convk_group<T>());
}

template <typename T> __host__ __device__ inline uint32_t convk_fast_blocks_per_image(const convk_args &a)
{
    return (convk_fast_groups<T>(a) + convk_fast_block_groups<T>() - 1) / convk_fast_block_groups<T>();
}

// First input byte of group G of N bytes (read backwards when FLIP: the mirrored columns of the row).
__host__ __device__ inline uint32_t convk_fast_src(const convk_args &a, uint32_t g, uint32_t n, int flip)
{
    uint32_t e = g * n;
    if (!flip)
        return e;
    uint32_t row = e / a.W, col = e - row * a.W; // a row of one channel plane (NCHW)
    return row * a.W + (a.W - n - col);
}

// Up to 16 bytes, packed little-endian in words (registers, not an array of bytes).
struct convk_q {
    uint32_t w[4];
};

// The N (4, 8 or 16) bytes at P: one load on the GPU when P is aligned to N.
template <uint32_t N> __host__ __device__ inline convk_q convk_load(const uint8_t *p)
{
    convk_q q = {{0, 0, 0, 0}};
#ifdef __CUDA_ARCH__
    if (((uintptr_t)p & (N - 1)) == 0) { // read-only path: the kernel never writes its input
        if (N == 16) {
            uint4 v = __ldg((const uint4 *)p);
            q.w[0] = v.x, q.w[1] = v.y, q.w[2] = v.z, q.w[3] = v.w;
        } else if (N == 8) {
            uint2 v = __ldg((const uint2 *)p);
            q.w[0] = v.x, q.w[1] = v.y;
        } else {
            q.w[0] = __ldg((const uint32_t *)p);
        }
        return q;
    }
#endif
    for (uint32_t k = 0; k < N; k++)
        q.w[k / 4] |= (uint32_t)p[k] << (8 * (k % 4));
    return q;
}

// 16 bytes of output elements O to DST (16-byte aligned on the GPU: the buffers and every group are).
template <typename T> __host__ __device__ inline void convk_store16(T *dst, const T *o)
{
    constexpr uint32_t n = convk_group<T>();
#ifdef __CUDA_ARCH__
    uint32_t w[4] = {0, 0, 0, 0};
#pragma unroll
    for (uint32_t k = 0; k < n; k++)
        w[k * sizeof(T) / 4] |= (uint32_t)o[k] << (8 * ((k * sizeof(T)) % 4));
    *(uint4 *)dst = make_uint4(w[0], w[1], w[2], w[3]);
#else
    for (uint32_t k = 0; k < n; k++)
        dst[k] = o[k];
#endif
}

// Converts the bytes Q of group G (loaded in input order) into OUT with TABLE ([C][256]).
template <typename T>
__host__ __device__ inline void convk_fast_convert(const convk_args &a, const convk_q &q, uint32_t g, int flip,
                                                   const T *table, T *out)
{
    constexpr uint32_t n = convk_group<T>();
    uint32_t e = g * n;
    uint32_t c = a.in_nhwc ? e % a.C : e / (a.H * a.W);
    T o[n];
#pragma unroll
    for (uint32_t k = 0; k < n; k++) {
        uint32_t b = flip ? n - 1 - k : k;
        uint32_t byte = q.w[b / 4] >> (8 * (b % 4)) & 255u;
        o[k] = sizeof(T) == 1 ? (T)byte : table[c * 256 + byte];
        if (a.in_nhwc)
            c = c + 1 == a.C ? 0 : c + 1;
    }
    convk_store16<T>(out + e, o);
}

// The fast path on the host, group by group. For the tests.
template <typename T> inline void convk_fast_run_on_host(const convk_args &a)
{
    constexpr uint32_t n = convk_group<T>();
    uint32_t groups = convk_fast_groups<T>(a);
    for (uint64_t i = 0; i < a.count; i++) {
        int flip = aug_draw_for(a.key, i, a.flip, 0).flip;
        const uint8_t *img = convk_image_in(a, i);
        for (uint32_t g = 0; g < groups; g++) {
            convk_q q = convk_load<n>(img + convk_fast_src(a, g, n, flip));
            convk_fast_convert<T>(a, q, g, flip, (const T *)a.table, (T *)a.out + i * groups * n);
        }
    }
}

// The kernel's work done serially on the host, block by block, phase by phase (as __syncthreads
// orders them on the GPU). For the tests.
template <typename T> inline void convk_run_on_host(const convk_args &a, uint32_t nt, uint8_t *tile)
{
    for (uint64_t blk = 0; blk < a.blocks; blk++) {
        convk_tile t = convk_tile_of(a, blk);
        for (uint32_t tid = 0; tid < nt; tid++)
            convk_load(a, t, tid, nt, tile);
        for (uint32_t tid = 0; tid < nt; tid++)
            convk_store<T>(a, t, tid, nt, tile);
    }
}

#ifdef __CUDACC__
#include <cuda_runtime.h>
// Enqueues the fused kernel on STREAM for A (dtype picks the output element type): the fast path when
// convk_fast_ok(A), else the tiled kernel.
extern "C" cudaError_t h5pack_convk_launch(const convk_args &a, h5pack_dtype dtype, cudaStream_t stream);
#endif

#endif
