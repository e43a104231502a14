/* test_backend_ref.c - h5pack_backend_convert_ref (used by the CPU backend, and the reference of the CUDA
 * kernel) against the per-pixel formulas of naive.h for every dtype, layout pair, flip, crop padding
 * (also larger than the image), gray / RGB / 4 channels and odd sizes; and the float16 / bfloat16
 * rounding of h5pack_backend_build_table against known values. */
#include <stdlib.h>

#include "check.h"
#include "naive.h"

enum { N_IMAGES = 6 };

/* Converts in two calls (first = 0 and first = 2) to check FIRST/N, into a poisoned buffer with a
 * guard image after the batch that must stay untouched; compares with naive_convert byte for byte. */
static void check_one(const backend_params *p, uint64_t key)
{
    size_t in_img = (size_t)p->channels * p->height * p->width, out_img = h5pack_backend_output_image_bytes(p);
    uint8_t *in = malloc(in_img * N_IMAGES);
    uint8_t *got = malloc(out_img * (N_IMAGES + 1)), *want = malloc(out_img * N_IMAGES);
    CHECK(in && got && want);
    naive_fill_random(in, in_img * N_IMAGES, key ^ 0x1234);
    memset(got, 0xA5, out_img * (N_IMAGES + 1));
    h5pack_backend_convert_ref(p, in, NULL, got, 0, 2, key);
    h5pack_backend_convert_ref(p, in, NULL, got, 2, N_IMAGES - 2, key);
    naive_convert(p, in, want, N_IMAGES, key);
    for (size_t k = 0; k < out_img * N_IMAGES; k++)
        CHECK_MSG(got[k] == want[k],
                  "byte %zu differs (%02x vs %02x): C=%u H=%u W=%u dtype=%d in=%d out=%d flip=%d pad=%d", k,
                  got[k], want[k], p->channels, p->height, p->width, p->dtype, p->in_layout, p->out_layout,
                  p->random_flip, p->crop_padding);
    for (size_t k = out_img * N_IMAGES; k < out_img * (N_IMAGES + 1); k++)
        CHECK_MSG(got[k] == 0xA5, "byte %zu after the batch was written", k);
    free(in);
    free(got);
    free(want);
}

static void test_all_combinations(void)
{
    static const uint32_t shapes[][3] = {{3, 5, 7}, {1, 3, 5}, {4, 2, 1}, {3, 17, 13}, {1, 1, 1}, {3, 4, 64}};
    static const int augs[][2] = {{0, 0}, {1, 0}, {0, 2}, {1, 3}, {0, 9}, {1, 40}}; /* flip, padding */
    int cases = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int dt = 0; dt <= H5PACK_DTYPE_UINT8; dt++)
            for (int li = 0; li < 2; li++)
                for (int lo = 0; lo < 2; lo++)
                    for (size_t a = 0; a < sizeof augs / sizeof augs[0]; a++) {
                        backend_params p = naive_params(shapes[s][0], shapes[s][1], shapes[s][2],
                                                        (h5pack_dtype)dt, (h5pack_layout)li,
                                                        (h5pack_layout)lo, augs[a][0], augs[a][1]);
                        check_one(&p, 0x5EED0000u + (uint64_t)cases);
                        cases++;
                    }
    printf("conversion: %d parameter sets equal the per-pixel formula\n", cases);
}

/* The draws must actually vary: about half the images flipped, offsets spread over [0, 2P]. */
static void test_draws_vary(void)
{
    int flips = 0, seen_oy[7] = {0};
    for (uint64_t i = 0; i < 1000; i++) {
        aug_draw d = aug_draw_for(aug_batch_key(1, 2, 3, 0), i, 1, 3);
        flips += d.flip;
        CHECK(d.oy >= 0 && d.oy <= 6 && d.ox >= 0 && d.ox <= 6);
        seen_oy[d.oy]++;
    }
    CHECK_MSG(flips > 400 && flips < 600, "%d of 1000 flipped", flips);
    for (int k = 0; k <= 6; k++)
        CHECK_MSG(seen_oy[k] > 80, "offset %d drawn %d times in 1000", k, seen_oy[k]);
}

/* table[c][0] = (0/255 - mean) / 1 = -mean exactly: a way to feed chosen floats to the conversion. */
static void table_of(h5pack_dtype dtype, const float values[4], uint16_t out[4])
{
    backend_params p = naive_params(4, 1, 1, dtype, H5PACK_LAYOUT_NCHW, H5PACK_LAYOUT_NCHW, 0, 0);
    float f32[H5PACK_MAX_CHANNELS][256];
    uint16_t t16[H5PACK_MAX_CHANNELS][256];
    for (int c = 0; c < 4; c++)
        p.mean[c] = -values[c], p.std[c] = 1.0f;
    h5pack_backend_build_table(&p, f32, t16);
    for (int c = 0; c < 4; c++) {
        CHECK(naive_float_bits(f32[c][0]) == naive_float_bits(values[c]));
        out[c] = t16[c][0];
    }
}

typedef struct known {
    uint32_t f32_bits;
    uint16_t want;
} known;

static void check_known(h5pack_dtype dtype, const known *k, size_t n)
{
    for (size_t i = 0; i < n; i += 4) {
        float v[4];
        uint16_t got[4];
        for (size_t j = 0; j < 4; j++)
            v[j] = naive_bits_float(k[i + j < n ? i + j : i].f32_bits);
        table_of(dtype, v, got);
        for (size_t j = 0; j < 4 && i + j < n; j++)
            CHECK_MSG(got[j] == k[i + j].want, "%s of %08x (%.9g): got %04x, want %04x",
                      dtype == H5PACK_DTYPE_FLOAT16 ? "float16" : "bfloat16", k[i + j].f32_bits, v[j], got[j],
                      k[i + j].want);
    }
}

static void test_known_roundings(void)
{
    static const known half[] = {
        {0x3F800000, 0x3C00}, /* 1 */
        {0xC0000000, 0xC000}, /* -2 */
        {0x477FE000, 0x7BFF}, /* 65504, the largest half */
        {0x477FEFFF, 0x7BFF}, /* just below the overflow threshold */
        {0x477FF000, 0x7C00}, /* 65520: tie between 65504 and 2^16 rounds to even = infinity */
        {0x3DCCCCCD, 0x2E66}, /* 0.1 */
        {0x3EAAAAAB, 0x3555}, /* 1/3 */
        {0x33800000, 0x0001}, /* 2^-24, the smallest subnormal */
        {0x33000000, 0x0000}, /* 2^-25: tie, to even zero */
        {0x33C00000, 0x0002}, /* 1.5 * 2^-24: tie, to even 2 */
        {0x38800000, 0x0400}, /* 2^-14, the smallest normal */
        {0x387FE000, 0x0400}, /* 1023.5 * 2^-24: tie, rounds up into the normals */
        {0x3F801000, 0x3C00}, /* 1 + 2^-11: tie, to even 1 */
        {0x3F803000, 0x3C02}, /* 1 + 3 * 2^-11: tie, to even */
        {0x3F801001, 0x3C01}, /* just above the tie */
        {0x7F800000, 0x7C00}, /* infinity */
        {0xFF800000, 0xFC00}, /* -infinity */
        {0x3A83126F, 0x1419}, /* 0.001 */
        {0xC2F6E979, 0xD7B7}, /* -123.456 */
        {0x00000001, 0x0000}, /* float subnormal */
    };
    static const known bf16[] = {
        {0x3F800000, 0x3F80}, /* 1 */
        {0x3EAAAAAB, 0x3EAB}, /* 1/3 */
        {0x40490FDB, 0x4049}, /* pi */
        {0x3F808000, 0x3F80}, /* tie, lower is even */
        {0x3F818000, 0x3F82}, /* tie, upper is even */
        {0x3F818001, 0x3F82}, /* above the tie */
        {0xC0200000, 0xC020}, /* -2.5 */
        {0x7F7FFFFF, 0x7F80}, /* FLT_MAX rounds to infinity */
        {0x3DCCCCCD, 0x3DCD}, /* 0.1 */
        {0x00000001, 0x0000}, /* float subnormal */
        {0xFF800000, 0xFF80}, /* -infinity */
    };
    check_known(H5PACK_DTYPE_FLOAT16, half, sizeof half / sizeof half[0]);
    check_known(H5PACK_DTYPE_BFLOAT16, bf16, sizeof bf16 / sizeof bf16[0]);
}

/* Many random finite floats in the table's range against the search-based references of naive.h. */
static void test_random_roundings(void)
{
    rng_state r = {99};
    for (int i = 0; i < 20000; i++) {
        float v[4];
        uint16_t got[4];
        for (int c = 0; c < 4; c++) {
            uint32_t bits = (uint32_t)(rng_next(&r) >> 32);
            float f = naive_bits_float(bits);
            if (isnan(f) || isinf(f) || fabsf(f) >= 65504.0f)
                f = (float)((double)(bits % 2000001) / 1000.0 - 1000.0);
            v[c] = f;
        }
        table_of(H5PACK_DTYPE_FLOAT16, v, got);
        for (int c = 0; c < 4; c++)
            CHECK_MSG(got[c] == naive_half(v[c]), "float16 of %.9g: %04x vs %04x", v[c], got[c], naive_half(v[c]));
        table_of(H5PACK_DTYPE_BFLOAT16, v, got);
        for (int c = 0; c < 4; c++)
            CHECK_MSG(got[c] == naive_bfloat16(v[c]), "bfloat16 of %.9g: %04x vs %04x", v[c], got[c],
                      naive_bfloat16(v[c]));
    }
}

static void test_output_sizes(void)
{
    backend_params p = naive_params(3, 5, 7, H5PACK_DTYPE_FLOAT32, H5PACK_LAYOUT_NCHW, H5PACK_LAYOUT_NHWC, 0, 0);
    CHECK_EQ_INT(h5pack_backend_output_image_bytes(&p), 3 * 5 * 7 * 4);
    p.dtype = H5PACK_DTYPE_BFLOAT16;
    CHECK_EQ_INT(h5pack_backend_output_image_bytes(&p), 3 * 5 * 7 * 2);
    p.dtype = H5PACK_DTYPE_UINT8;
    CHECK_EQ_INT(h5pack_backend_output_image_bytes(&p), 3 * 5 * 7);
}

int main(void)
{
    test_output_sizes();
    test_known_roundings();
    test_random_roundings();
    test_draws_vary();
    test_all_combinations();
    printf("backend_ref: all checks passed\n");
    return 0;
}
