// resample_kernel.cu - the resizing-crop kernel: random resized / centre crop with PIL's antialiased
// bilinear filter, flip, normalisation and layout in one pass. The per-block work and its host
// emulation live in resample_kernel.cuh.
#include "resample_kernel.cuh"

// GENERIC: the loops that dispatch the tap count per element (rsk_args.generic, for the benchmark's
// comparison); else once per column / row.
template <bool GENERIC> static __global__ void __launch_bounds__(RSK_THREADS, 5) rsk_kernel(rsk_args a)
{
    __shared__ float h[RSK_SMEM_FLOATS];
    for (uint64_t blk = blockIdx.x; blk < a.blocks; blk += gridDim.x) {
        rsk_tile t = rsk_tile_of(a, blk);
        if (GENERIC)
            rsk_horizontal_generic(a, t, threadIdx.x, blockDim.x, h);
        else
            rsk_horizontal(a, t, threadIdx.x, blockDim.x, h);
        __syncthreads();
        if (GENERIC)
            rsk_vertical_generic(a, t, threadIdx.x, blockDim.x, h);
        else
            rsk_vertical(a, t, threadIdx.x, blockDim.x, h);
        __syncthreads(); // the next tile's phase 1 must not overwrite sums still being read
    }
}

extern "C" cudaError_t h5pack_rsk_launch(const rsk_args &a, cudaStream_t stream)
{
    if (a.blocks == 0)
        return cudaSuccess;
    const uint64_t max_grid = 1u << 20;
    unsigned grid = (unsigned)(a.blocks < max_grid ? a.blocks : max_grid);
    if (a.generic)
        rsk_kernel<true><<<grid, RSK_THREADS, 0, stream>>>(a);
    else
        rsk_kernel<false><<<grid, RSK_THREADS, 0, stream>>>(a);
    return cudaGetLastError();
}
