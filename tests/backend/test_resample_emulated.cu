// test_resample_emulated.cu - the resizing-crop kernel's per-block code (reader/backend/cuda/resample_kernel.cuh)
// run on the host, block by block and phase by phase, must write exactly the bytes the CPU backend's
// resampling (h5pack_resample_images) writes: every dtype, both layouts in and out, random resized and
// centre crops, with and without flip, up- and downscaling, several thread counts and tile shapes
// (tiles narrower than a row, single-row tiles). This is the GPU == CPU bit-identity check on machines
// without a GPU; backend_gpu repeats it on the device.
#include <stdlib.h>
#include <vector>

#include "cuda/resample_kernel.cuh" /* reader/backend/cuda */
extern "C" {
#include "backend_resample.h"
}
#include "resample_cases.h"

static int check_case(aug_crops_params pp, size_t count, uint32_t oh, uint32_t ow, uint64_t key, uint32_t nt,
                      uint32_t force_tile_w, const uint32_t *dims = nullptr, uint32_t generic = 0)
{
    rs_case k = dims ? rs_make_sized(pp, count, oh, ow, key, dims) : rs_make(pp, count, oh, ow, key);
    std::vector<uint8_t> want(k.out_bytes, 0x5A), got(k.out_bytes, 0xA5);
    aug_job j = k.job;
    j.out = want.data();
    std::vector<float> scratch(h5pack_resample_scratch_floats(&j));
    h5pack_resample_images(&j, 0, (uint32_t)count, scratch.data());
    j.out = got.data();
    rsk_args a;
    CHECK(rsk_plan(j, &a) == 0);
    a.generic |= generic; // the plan's own choice (filters over RSK_REG_TAPS) stands
    if (force_tile_w && force_tile_w < a.tile_w) { // narrower tiles than the plan picks
        a.tile_w = force_tile_w;
        a.tiles_x = (ow + a.tile_w - 1) / a.tile_w;
        a.blocks = (uint64_t)count * a.tiles_x * a.tiles_y;
    }
    std::vector<float> smem(RSK_SMEM_FLOATS, -7.0f);
    rsk_run_on_host(a, nt, smem.data());
    for (size_t b = 0; b < k.out_bytes; b++)
        CHECK_MSG(got[b] == want[b],
                  "byte %zu: %02x vs %02x (C=%u %ux%u -> %ux%u type=%d in_nhwc=%d out_nhwc=%d mode=%d flip=%d nt=%u "
                  "tile %ux%u)",
                  b, got[b], want[b], pp.C, pp.H, pp.W, oh, ow, pp.out_type, pp.in_nhwc, pp.out_nhwc, pp.crop.mode,
                  pp.flip, nt, a.rows, a.tile_w);
    rs_free(&k);
    return 1;
}

int main(void)
{
    // stored C x H x W -> output, with a tile width to force (0: the plan's)
    const uint32_t shapes[][6] = {{3, 32, 40, 24, 24, 0}, {3, 40, 32, 20, 28, 7}, {1, 17, 23, 9, 31, 0},
                                  {4, 12, 10, 30, 25, 0}, {3, 64, 48, 16, 16, 5}, {3, 300, 20, 3, 150, 0},
                                  {3, 20, 300, 150, 3, 0}}; // the last two: filters longer than RSK_REG_TAPS
    int cases = 0;
    for (auto &s : shapes)
        for (int type = H5PACK_DTYPE_FLOAT32; type <= H5PACK_DTYPE_UINT8; type++)
            for (int li = 0; li < 2; li++)
                for (int lo = 0; lo < 2; lo++)
                    for (int mode : {H5PACK_CROP_RANDOM_RESIZED, H5PACK_CROP_CENTER})
                        for (uint32_t nt : {256u, 37u}) {
                            aug_crops_params pp = rs_params(s[0], s[1], s[2], type, li, lo, mode, ((cases / 2) & 1));
                            for (uint32_t generic : {0u, 1u}) // the same draws through both loop forms
                                cases += check_case(pp, 5, s[3], s[4], 0xBEEF00ull + (uint64_t)cases / 2 * 2, nt,
                                                    s[5], nullptr, generic);
                        }
    // images of several sizes in one job (each within 64 x 80): the kernel addresses each with its own size
    const uint32_t dims[] = {37, 45, 12, 80, 64, 9, 5, 5, 64, 80};
    for (int type = H5PACK_DTYPE_FLOAT32; type <= H5PACK_DTYPE_UINT8; type++)
        for (int li = 0; li < 2; li++)
            for (int mode : {H5PACK_CROP_RANDOM_RESIZED, H5PACK_CROP_CENTER}) {
                aug_crops_params pp = rs_params(3, 64, 80, type, li, 1 - li, mode, ((cases / 2) & 1));
                for (uint32_t generic : {0u, 1u})
                    cases += check_case(pp, 5, 24, 20, 0xCAFE00ull + (uint64_t)cases / 2 * 2, 64u, 0, dims, generic);
            }
    printf("resample_emulated: %d cases (half through the generic loops), the kernel's block code writes the CPU "
           "resampling's bytes\n", cases);
    return 0;
}
