// convert_kernel.cu - the fused uint8 -> float32 / float16 / bfloat16 / uint8 kernels: normalisation
// by table, random flip and crop with padding, and the layout change, in one pass over the batch; a
// streaming fast path when the layout stays and there is no padding.
// The per-block work lives in convert_kernel.cuh (shared with the host emulation the tests run).
#include "convert_kernel.cuh"

template <typename T> __global__ void __launch_bounds__(CONVK_THREADS) convk_kernel(convk_args a)
{
    __shared__ uint8_t tile[CONVK_SMEM];
    for (uint64_t blk = blockIdx.x; blk < a.blocks; blk += gridDim.x) {
        convk_tile t = convk_tile_of(a, blk);
        convk_load(a, t, threadIdx.x, blockDim.x, tile);
        __syncthreads();
        convk_store<T>(a, t, threadIdx.x, blockDim.x, tile);
        __syncthreads(); // the next tile's loads must not overwrite values still being read
    }
}

// The fast path (convert_kernel.cuh): work item = convk_fast_block_groups<T>() groups of one image. The table is
// copied into shared memory once per block; the image's flip is drawn once per work item.
template <typename T>
__global__ void __launch_bounds__(CONVK_THREADS, convk_fast_min_blocks<T>()) convk_fast_kernel(convk_args a)
{
    constexpr uint32_t n = convk_group<T>();
    __shared__ T table[H5PACK_MAX_CHANNELS * 256];
    __shared__ int flip_of_item;
    if (sizeof(T) > 1)
        for (uint32_t k = threadIdx.x; k < a.C * 256; k += blockDim.x)
            table[k] = ((const T *)a.table)[k];
    const uint32_t groups = convk_fast_groups<T>(a), per_image = convk_fast_blocks_per_image<T>(a);
    const uint64_t items = a.count * per_image;
    for (uint64_t item = blockIdx.x; item < items; item += gridDim.x) {
        const uint64_t image = item / per_image;
        const uint32_t first = (uint32_t)(item - image * per_image) * convk_fast_block_groups<T>() + threadIdx.x;
        if (threadIdx.x == 0)
            flip_of_item = aug_draw_for(a.key, image, a.flip, 0).flip;
        __syncthreads(); // publishes the flip (and, the first time, the table)
        const int flip = flip_of_item;
        const uint8_t *in = convk_image_in(a, image);
        T *out = (T *)a.out + image * groups * n;
        constexpr uint32_t unroll = convk_fast_unroll<T>();
        convk_q q[unroll];
#pragma unroll
        for (uint32_t u = 0; u < unroll; u++) { // every load before the first store: loads in flight
            uint32_t g = first + u * CONVK_THREADS;
            if (g < groups)
                q[u] = convk_load<n>(in + convk_fast_src(a, g, n, flip));
        }
#pragma unroll
        for (uint32_t u = 0; u < unroll; u++) {
            uint32_t g = first + u * CONVK_THREADS;
            if (g < groups)
                convk_fast_convert<T>(a, q[u], g, flip, table, out);
        }
        __syncthreads(); // flip_of_item is rewritten by the next item
    }
}

template <typename T> static void convk_launch_as(const convk_args &a, unsigned max_grid, cudaStream_t stream)
{
    if (convk_fast_ok(a)) {
        uint64_t items = a.count * convk_fast_blocks_per_image<T>(a);
        convk_fast_kernel<T><<<(unsigned)(items < max_grid ? items : max_grid), CONVK_THREADS, 0, stream>>>(a);
    } else {
        convk_kernel<T><<<(unsigned)(a.blocks < max_grid ? a.blocks : max_grid), CONVK_THREADS, 0, stream>>>(a);
    }
}

extern "C" cudaError_t h5pack_convk_launch(const convk_args &a, h5pack_dtype dtype, cudaStream_t stream)
{
    if (a.blocks == 0)
        return cudaSuccess;
    // Enough blocks to fill any GPU many times over; larger batches loop inside the kernel.
    const unsigned max_grid = 1u << 20;
    switch (dtype) {
    case H5PACK_DTYPE_FLOAT32: convk_launch_as<uint32_t>(a, max_grid, stream); break;
    case H5PACK_DTYPE_FLOAT16:
    case H5PACK_DTYPE_BFLOAT16: convk_launch_as<uint16_t>(a, max_grid, stream); break;
    default: convk_launch_as<uint8_t>(a, max_grid, stream); break;
    }
    return cudaGetLastError();
}
