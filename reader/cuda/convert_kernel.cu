// convert_kernel.cu - the fused uint8 -> float32 / float16 / bfloat16 / uint8 kernel: normalisation
// by table, random flip and crop with padding, and the layout change, in one pass over the batch.
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

extern "C" cudaError_t h5pack_convk_launch(const convk_args &a, h5pack_dtype dtype, cudaStream_t stream)
{
    if (a.blocks == 0)
        return cudaSuccess;
    // Enough blocks to fill any GPU many times over; larger batches loop inside the kernel.
    const uint64_t max_grid = 1u << 20;
    unsigned grid = (unsigned)(a.blocks < max_grid ? a.blocks : max_grid);
    switch (dtype) {
    case H5PACK_DTYPE_FLOAT32: convk_kernel<uint32_t><<<grid, CONVK_THREADS, 0, stream>>>(a); break;
    case H5PACK_DTYPE_FLOAT16:
    case H5PACK_DTYPE_BFLOAT16: convk_kernel<uint16_t><<<grid, CONVK_THREADS, 0, stream>>>(a); break;
    default: convk_kernel<uint8_t><<<grid, CONVK_THREADS, 0, stream>>>(a); break;
    }
    return cudaGetLastError();
}
