/* test_resample.c - the host side of the resizing crops: PIL's bilinear taps on known values, the
 * centre box, torchvision's sampling properties (bounds, ranges, the central fallback), the same key
 * giving the same job and another key other boxes, both CPU passes against the fixed-point contract of
 * augment_resample.h computed in integers (exactly) and against the unrounded double sum (layouts,
 * flip); an identity job returns the input exactly.
 * The exact comparisons with torchvision's code and with PIL's pixels are in check_rrc_torchvision.py
 * and tests/python/test_augment.py. */
#include <math.h>

#include "backend_resample.h"
#include "backend_resample_avx2.h"
#include "backend_resample_avx512.h"
#include "backend_resample_fixed.h"
#include "resample_cases.h"

static void test_taps_known(void)
{
    int32_t pairs[8];
    float w[4 * 5];
    /* 4 -> 2: scale 2, support 2; output 0 centred at 1.0 reads 0..2 with weights 0.75, 0.75, 0.25 / 1.75 */
    CHECK_EQ_INT(h5pack_aug_max_taps(4, 2), 5);
    h5pack_aug_axis_coeffs(4, 10, 2, 5, pairs, w);
    CHECK_EQ_INT(pairs[0], 10);
    CHECK_EQ_INT(pairs[1], 3);
    /* in 14-bit fixed point, from the rounded running sums 7022, 14043 and 16384 */
    CHECK(w[0] == 7022.0f && w[1] == 7021.0f && w[2] == 2341.0f);
    CHECK(w[3] == 0.0f && w[4] == 0.0f);
    CHECK_EQ_INT(pairs[2], 11); /* output 1 centred at 3.0: 1..3 (clamped at 4) */
    CHECK_EQ_INT(pairs[3], 3);
    /* same size: one tap of weight 1 (and a zero-weight neighbour, as PIL has) */
    h5pack_aug_axis_coeffs(4, 0, 4, 3, pairs, w);
    for (int i = 0; i < 4; i++) {
        CHECK_EQ_INT(pairs[2 * i], i);
        CHECK(w[3 * i] == (float)AUG_WEIGHT_ONE);
    }
    /* upscaling 2 -> 4: support 1, plain bilinear; weights sum to 1 everywhere */
    h5pack_aug_axis_coeffs(2, 0, 4, h5pack_aug_max_taps(2, 4), pairs, w);
    CHECK(w[0] == (float)AUG_WEIGHT_ONE); /* output 0 centred at 0.25: pixel 0 only (pixel -1 is outside) */
    for (uint32_t in = 1; in < 60; in += 7)
        for (uint32_t out = 1; out < 50; out += 5) {
            uint32_t k = h5pack_aug_max_taps(in, out);
            int32_t *pr = malloc(sizeof(int32_t) * 2 * out);
            float *wt = malloc(sizeof(float) * k * out);
            CHECK(pr && wt);
            h5pack_aug_axis_coeffs(in, 3, out, k, pr, wt);
            for (uint32_t i = 0; i < out; i++) {
                double sum = 0;
                for (uint32_t t = 0; t < k; t++) {
                    CHECK(wt[i * k + t] >= 0.0f && wt[i * k + t] == floorf(wt[i * k + t])); /* integers */
                    sum += wt[i * k + t];
                }
                CHECK(sum == AUG_WEIGHT_ONE); /* exactly: a flat image stays flat */
                CHECK(pr[2 * i] >= 3 && pr[2 * i + 1] >= 1 && (uint32_t)pr[2 * i + 1] <= k);
                CHECK(pr[2 * i] + pr[2 * i + 1] <= 3 + (int)in);
            }
            free(pr), free(wt);
        }
    /* strong downscales: hundreds to thousands of taps, still >= 0 and summing to exactly 2^14 (rounding
     * each weight alone and fixing the total on the largest made it negative from about 1280 -> 1) */
    static const uint32_t strong[][2] = {{1280, 1}, {2870, 2}, {4305, 3}, {5740, 4}, {7281, 1}, {100000, 7}};
    for (size_t s = 0; s < sizeof strong / sizeof strong[0]; s++) {
        uint32_t in = strong[s][0], out = strong[s][1], k = h5pack_aug_max_taps(in, out);
        int32_t *pr = malloc(sizeof(int32_t) * 2 * out);
        float *wt = malloc(sizeof(float) * (size_t)k * out);
        CHECK(pr && wt);
        h5pack_aug_axis_coeffs(in, 0, out, k, pr, wt);
        for (uint32_t i = 0; i < out; i++) {
            double sum = 0;
            for (uint32_t t = 0; t < k; t++) {
                CHECK_MSG(wt[(size_t)i * k + t] >= 0.0f, "%u -> %u: output %u tap %u weight %g", in, out, i, t,
                          (double)wt[(size_t)i * k + t]);
                sum += wt[(size_t)i * k + t];
            }
            CHECK(sum == AUG_WEIGHT_ONE);
        }
        free(pr), free(wt);
    }
}

static void check_box(aug_box b, int y, int x, int h, int w)
{
    CHECK_MSG(b.y == y && b.x == x && b.h == h && b.w == w, "box (%d,%d,%d,%d), expected (%d,%d,%d,%d)", b.y, b.x, b.h,
              b.w, y, x, h, w);
}

/* torchvision's Resize(S) + CenterCrop, reported as the crop's region of the source in whole pixels. */
static void test_center_box(void)
{
    check_box(h5pack_aug_center_box(256, 256, 224, 224, 0.875), 16, 16, 224, 224); /* Resize(256): the box */
    check_box(h5pack_aug_center_box(256, 320, 224, 224, 0.875), 16, 48, 224, 224);
    check_box(h5pack_aug_center_box(256, 256, 160, 160, 0.875), 17, 17, 224, 224); /* Resize(183), offset 12 */
    check_box(h5pack_aug_center_box(96, 128, 64, 64, 0.875), 5, 21, 84, 85);       /* Resize(73): 73 x 97 */
    check_box(h5pack_aug_center_box(256, 256, 112, 224, 0.5), 64, 0, 128, 256);    /* wide: S = 224 */
    check_box(h5pack_aug_center_box(256, 256, 100, 300, 0.5), 85, 0, 86, 256);     /* wider: S raised to 300 */
    check_box(h5pack_aug_center_box(300, 200, 200, 100, 1.0), 0, 25, 299, 150);    /* tall: S raised to 134 */
    check_box(h5pack_aug_center_box(5, 5, 1, 1, 0.01), 2, 2, 1, 1);                 /* at least one pixel */
    aug_center c = h5pack_aug_center(375, 500, 224, 224, 0.875);                   /* ImageNet-like */
    CHECK(c.rh == 256 && c.rw == 341 && c.oy == 16 && c.ox == 58);
    c = h5pack_aug_center(1, 65535, 224, 224, 0.002); /* a tiny ratio, an extreme aspect: capped, no wrap */
    CHECK(c.rw >= 224 && c.rh >= 224 && c.ox <= c.rw - 224 && c.oy <= c.rh - 224);
}

static void test_rrc_properties(void)
{
    aug_crop_params cp = {H5PACK_CROP_RANDOM_RESIZED, 0.08, 1.0, 3.0 / 4.0, 4.0 / 3.0, 0.875};
    double area_sum = 0;
    int n = 20000, fallback = 0;
    for (int i = 0; i < n; i++) {
        rng_state r = {rng_mix64((uint64_t)i)};
        aug_box b = h5pack_aug_rrc_box(256, 320, &cp, &r);
        CHECK(b.h >= 1 && b.w >= 1 && b.y >= 0 && b.x >= 0 && b.y + b.h <= 256 && b.x + b.w <= 320);
        double frac = (double)b.h * b.w / (256.0 * 320.0), ratio = (double)b.w / b.h;
        area_sum += frac;
        if (b.h == 256 && b.w == 320)
            fallback++;
        else
            CHECK_MSG(frac > 0.07 && ratio > 0.70 && ratio < 1.42, "box %dx%d: area %.3f ratio %.3f", b.h, b.w, frac,
                      ratio);
    }
    /* uniform area fraction in (0.08, 1), minus the rejected large ones: mean a little under 0.54 */
    CHECK_MSG(area_sum / n > 0.40 && area_sum / n < 0.56, "mean area fraction %.3f", area_sum / n);
    CHECK(fallback < n / 100);
    /* a range that never fits: 10 attempts, then the central crop with the ratio clamped (200 / 100 > 4/3) */
    aug_crop_params never = cp;
    never.scale_min = 2.0, never.scale_max = 3.0;
    rng_state r = {7};
    check_box(h5pack_aug_rrc_box(100, 200, &never, &r), 0, 33, 100, 133);
    check_box(h5pack_aug_rrc_box(300, 100, &never, &r), 83, 0, 133, 100);
    check_box(h5pack_aug_rrc_box(50, 50, &never, &r), 0, 0, 50, 50);
}

static void test_same_key_same_job(void)
{
    aug_crops_params pp = rs_params(3, 40, 50, H5PACK_DTYPE_FLOAT32, 1, 0, H5PACK_CROP_RANDOM_RESIZED, 1);
    rs_case a = rs_make(pp, 16, 20, 20, 99), b = rs_make(pp, 16, 20, 20, 99), c = rs_make(pp, 16, 20, 20, 100);
    size_t bytes = h5pack_aug_blob_bytes(&pp, 16, 20, 20);
    int boxes_differ = 0, flips = 0;
    for (size_t i = 0; i < 16; i++) {
        const aug_image *x = &a.job.images[i], *y = &b.job.images[i], *z = &c.job.images[i];
        CHECK(x->y == y->y && x->x == y->x && x->h == y->h && x->w == y->w && x->flip == y->flip);
        boxes_differ += x->y != z->y || x->x != z->x || x->h != z->h || x->w != z->w;
        flips += x->flip;
    }
    CHECK(memcmp((const uint8_t *)a.blob + 16 * sizeof(aug_image), (const uint8_t *)b.blob + 16 * sizeof(aug_image),
                 bytes - 16 * sizeof(aug_image)) == 0);
    CHECK_MSG(boxes_differ >= 14, "another key must give other boxes (%d of 16 differ)", boxes_differ);
    CHECK(flips > 0 && flips < 16);
    /* the output size changes the taps, never the draws */
    rs_case d = rs_make(pp, 16, 7, 33, 99);
    for (size_t i = 0; i < 16; i++)
        CHECK(a.job.images[i].y == d.job.images[i].y && a.job.images[i].w == d.job.images[i].w);
    rs_free(&a), rs_free(&b), rs_free(&c), rs_free(&d);
}

/* Image I's taps on one axis of job J (Y_AXIS: rows) equal PAIRS/W, computed for it alone. */
static int axis_equals(const aug_job *j, uint32_t i, int y_axis, const int32_t *pairs, const float *w)
{
    uint32_t out = y_axis ? j->out_h : j->out_w, k = y_axis ? j->ky : j->kx;
    const int32_t *got_pairs = (y_axis ? j->ry : j->rx) + (size_t)i * out * 2;
    const float *got_w = (y_axis ? j->wy : j->wx) + (size_t)i * out * k;
    return memcmp(got_pairs, pairs, out * 2 * sizeof(int32_t)) == 0 && memcmp(got_w, w, out * k * sizeof(float)) == 0;
}

/* A delivery shares the taps of images whose boxes have the same length on an axis (random resized
 * crops) or the same stored size (centre crops): every image's taps still equal those computed for it
 * alone, byte for byte. 300 boxes from a 256-pixel side must repeat lengths, so copies happen. */
static void test_plan_shares_taps_exactly(void)
{
    int images = 0;
    for (int mode = H5PACK_CROP_RANDOM_RESIZED; mode <= H5PACK_CROP_CENTER; mode++) {
        aug_crops_params pp = rs_params(3, 256, 200, H5PACK_DTYPE_FLOAT32, 1, 0, mode, 1);
        rs_case k = rs_make(pp, 300, 224, 96, 4242);
        const aug_job *j = &k.job;
        int32_t *pairs = malloc(sizeof(int32_t) * 2 * 224);
        float *w = malloc(sizeof(float) * 224 * (j->ky > j->kx ? j->ky : j->kx));
        CHECK(pairs && w);
        for (uint32_t i = 0; i < 300; i++, images++) {
            const aug_image *im = &j->images[i];
            if (mode == H5PACK_CROP_CENTER) {
                aug_center c = h5pack_aug_center(256, 200, 224, 96, pp.crop.center_ratio);
                h5pack_aug_axis_coeffs_resized(256, c.rh, c.oy, 224, j->ky, pairs, w);
                CHECK_MSG(axis_equals(j, i, 1, pairs, w), "centre crop image %u: rows differ", i);
                h5pack_aug_axis_coeffs_resized(200, c.rw, c.ox, 96, j->kx, pairs, w);
                CHECK_MSG(axis_equals(j, i, 0, pairs, w), "centre crop image %u: columns differ", i);
                continue;
            }
            h5pack_aug_axis_coeffs((uint32_t)im->h, (uint32_t)im->y, 224, j->ky, pairs, w);
            CHECK_MSG(axis_equals(j, i, 1, pairs, w), "image %u (box %dx%d at %d,%d): rows differ", i, im->h, im->w,
                      im->y, im->x);
            h5pack_aug_axis_coeffs((uint32_t)im->w, (uint32_t)im->x, 96, j->kx, pairs, w);
            CHECK_MSG(axis_equals(j, i, 0, pairs, w), "image %u (box %dx%d at %d,%d): columns differ", i, im->h,
                      im->w, im->y, im->x);
        }
        free(pairs), free(w);
        rs_free(&k);
    }
    printf("backend_resample: %d planned images' taps equal their own, shared or not\n", images);
}

/* Byte sizes of a job's tap arrays: rows' pairs and weights, columns' pairs and weights. */
static void tap_bytes(const aug_job *j, size_t bytes[4])
{
    bytes[0] = (size_t)j->count * j->out_h * 2 * sizeof(int32_t), bytes[1] = (size_t)j->count * j->out_h * j->ky * 4;
    bytes[2] = (size_t)j->count * j->out_w * 2 * sizeof(int32_t), bytes[3] = (size_t)j->count * j->out_w * j->kx * 4;
}

/* Overwrites J's taps with a pattern no plan writes, so that what a planner leaves out shows. */
static void scribble_taps(const aug_job *j)
{
    size_t b[4];
    tap_bytes(j, b);
    memset((void *)(uintptr_t)j->ry, 0x77, b[0]), memset((void *)(uintptr_t)j->wy, 0x77, b[1]);
    memset((void *)(uintptr_t)j->rx, 0x77, b[2]), memset((void *)(uintptr_t)j->wx, 0x77, b[3]);
}

/* 1 when jobs A and B have the same images and taps, byte for byte. */
static int same_plan(const aug_job *a, const aug_job *b)
{
    size_t n[4];
    tap_bytes(a, n);
    return memcmp(a->images, b->images, a->count * sizeof(aug_image)) == 0 && memcmp(a->ry, b->ry, n[0]) == 0 &&
           memcmp(a->wy, b->wy, n[1]) == 0 && memcmp(a->rx, b->rx, n[2]) == 0 && memcmp(a->wx, b->wx, n[3]) == 0;
}

/* Planning each image's taps on its own (h5pack_aug_crop_boxes, then h5pack_aug_crop_taps in any order
 * with a memo per planner, one of which keeps taps across jobs: what the CPU backend's workers do) gives
 * the blob that h5pack_aug_crops_sized gives, byte for byte: boxes, computed taps, copied and kept ones. Images of one size and of several (which
 * come in runs, so that centre crops copy too), random resized and centre crops. */
static void test_plan_taps_in_any_order(void)
{
    enum { COUNT = 300, PLANNERS = 3 };
    const uint32_t oh = 224, ow = 96;
    uint64_t x = 0x9E3779B97F4A7C15ull, src[COUNT];
    uint32_t dims[2 * COUNT], order[COUNT];
    for (uint32_t i = 0; i < COUNT; i++)
        src[i] = 4096 * ((uint64_t)i + 1), dims[2 * i] = i / 7 % 2 ? 256 : 131, dims[2 * i + 1] = i / 7 % 3 ? 200 : 77;
    int jobs = 0;
    for (int mode = H5PACK_CROP_RANDOM_RESIZED; mode <= H5PACK_CROP_CENTER; mode++)
        for (int sized = 0; sized < 2; sized++, jobs++) {
            aug_crops_params pp = rs_params(3, 256, 200, H5PACK_DTYPE_FLOAT32, 1, 0, mode, 1);
            size_t bytes = h5pack_aug_blob_bytes(&pp, COUNT, oh, ow);
            uint8_t *whole = calloc(1, bytes), *parts = calloc(1, bytes);
            aug_tap_memo *memos = malloc(PLANNERS * sizeof *memos);
            CHECK(whole && parts && memos);
            aug_job a, b;
            h5pack_aug_crops_sized(&pp, 77 + (uint64_t)jobs, COUNT, oh, ow, src, sized ? dims : NULL, whole, &a);
            h5pack_aug_crop_boxes(&pp, 77 + (uint64_t)jobs, COUNT, oh, ow, src, sized ? dims : NULL, parts, &b);
            for (uint32_t i = 0; i < COUNT; i++)
                order[i] = i;
            for (uint32_t i = COUNT - 1; i > 0; i--) { /* a shuffled order, as chunks arrive */
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                uint32_t k = (uint32_t)(x % (i + 1)), t = order[i];
                order[i] = order[k], order[k] = t;
            }
            for (int m = 0; m < PLANNERS; m++) /* one planner keeps taps across jobs, as workers do */
                h5pack_aug_tap_memo_init(&memos[m], m == 0);
            for (int pass = 0; pass < 2; pass++) { /* the second time, planner 0 has taps kept */
                scribble_taps(&b);
                for (int m = 0; m < PLANNERS; m++)
                    h5pack_aug_tap_memo_new_job(&memos[m]);
                for (uint32_t g = 0; g < COUNT; g++)
                    h5pack_aug_crop_taps(&pp, &b, order[g], &memos[(g + (uint32_t)pass) % PLANNERS]);
                CHECK_MSG(same_plan(&a, &b), "mode %d, sized %d, pass %d: the plans differ", mode, sized, pass);
            }
            CHECK(memcmp(whole, parts, bytes) == 0); /* the padding between the arrays too */
            CHECK(mode != H5PACK_CROP_RANDOM_RESIZED || memos[0].kept[0].used > 0);
            for (int m = 0; m < PLANNERS; m++)
                h5pack_aug_tap_memo_free(&memos[m]);
            free(whole), free(parts), free(memos);
        }
    printf("backend_resample: %d jobs planned image by image, in shuffled order by %d planners, equal whole plans\n",
           jobs, PLANNERS);
}

/* The taps of output (y, x) of image I: rows RY/WY, columns RX/WX (flip applied). */
static void taps_of(const aug_job *j, uint32_t i, uint32_t y, uint32_t x, const int32_t **ry, const float **wy,
                    const int32_t **rx, const float **wx)
{
    uint32_t X = j->images[i].flip ? j->out_w - 1 - x : x;
    *ry = j->ry + ((size_t)i * j->out_h + y) * 2, *rx = j->rx + ((size_t)i * j->out_w + X) * 2;
    *wy = j->wy + ((size_t)i * j->out_h + y) * j->ky, *wx = j->wx + ((size_t)i * j->out_w + X) * j->kx;
}

static uint8_t source_pixel(const aug_job *j, uint32_t i, int32_t r, int32_t col, uint32_t c)
{
    const uint8_t *src = (const uint8_t *)(uintptr_t)j->images[i].src;
    return src[aug_pixel_index(j->in_nhwc, j->C, j->H, j->W, (uint32_t)r, (uint32_t)col, c)];
}

/* Output element of the job in pixel units, as double: the same taps summed in double precision, with
 * no rounding in between (what the fixed point approximates). */
static double reference_value(const rs_case *k, uint32_t i, uint32_t y, uint32_t x, uint32_t c)
{
    const int32_t *ry, *rx;
    const float *wy, *wx;
    taps_of(&k->job, i, y, x, &ry, &wy, &rx, &wx);
    double v = 0;
    for (int a = 0; a < ry[1]; a++)
        for (int b = 0; b < rx[1]; b++)
            v += (double)wy[a] * wx[b] * source_pixel(&k->job, i, ry[0] + a, rx[0] + b, c);
    return v / ((double)AUG_WEIGHT_ONE * AUG_WEIGHT_ONE);
}

/* v of augment_resample.h for output (y, x, c) of image I, in 64-bit integers, written from its
 * definition: the CPU passes must give exactly this. */
static int64_t exact_v(const rs_case *k, uint32_t i, uint32_t y, uint32_t x, uint32_t c)
{
    const int32_t *ry, *rx;
    const float *wy, *wx;
    taps_of(&k->job, i, y, x, &ry, &wy, &rx, &wx);
    int64_t v = 0;
    for (int a = 0; a < ry[1]; a++) {
        int64_t s = 0;
        for (int b = 0; b < rx[1]; b++)
            s += (int64_t)wx[b] * source_pixel(&k->job, i, ry[0] + a, rx[0] + b, c);
        v += (int64_t)wy[a] * ((s + 2048) >> 12);
    }
    return v;
}

static double stored_value(const rs_case *k, const void *out, uint32_t i, uint32_t y, uint32_t x, uint32_t c)
{
    const aug_job *j = &k->job;
    size_t e = (size_t)i * j->C * j->out_h * j->out_w + aug_pixel_index(j->out_nhwc, j->C, j->out_h, j->out_w, y, x, c);
    if (j->out_type == H5PACK_DTYPE_UINT8)
        return ((const uint8_t *)out)[e];
    float f;
    memcpy(&f, (const uint32_t *)out + e, 4);
    return ((double)f - j->nbias[c]) / j->nscale[c]; /* back to pixel units */
}

/* The float32 element the contract gives for V (one product, one sum, each rounded: volatile keeps the
 * compiler from fusing them). */
static float exact_f32(const aug_job *j, uint32_t c, int64_t v)
{
    volatile float scale = j->nscale[c] * (1.0f / 65536.0f), product = (float)v * scale;
    return product + j->nbias[c];
}

/* Both CPU passes against the contract's integers, exactly (uint8 and float32, both layouts, flip), and
 * the fixed point against the unrounded double sum: within 0.2 levels (h's quarter-level rounding and
 * the 14-bit weights). */
static void test_cpu_exact(void)
{
    int cases = 0;
    double worst = 0;
    for (int simd = 0; simd <= h5pack_resample_best_pass(); simd++)
        for (int type = H5PACK_DTYPE_FLOAT32; type <= H5PACK_DTYPE_UINT8; type += 3)
            for (int layouts = 0; layouts < 4; layouts++)
                for (int flip = 0; flip < 2; flip++) {
                    aug_crops_params pp =
                        rs_params(3, 37, 45, type, layouts & 1, layouts >> 1, H5PACK_CROP_RANDOM_RESIZED, flip);
                    rs_case k = rs_make(pp, 6, 19, 23, 1000 + (uint64_t)cases++);
                    void *out = malloc(k.out_bytes);
                    float *scratch = malloc(sizeof(float) * h5pack_resample_scratch_floats(&k.job));
                    CHECK(out && scratch);
                    k.job.out = out;
                    h5pack_resample_images_with(&k.job, 0, 6, scratch, simd);
                    for (uint32_t i = 0; i < 6; i++)
                        for (uint32_t y = 0; y < 19; y++)
                            for (uint32_t x = 0; x < 23; x++)
                                for (uint32_t c = 0; c < 3; c++) {
                                    int64_t v = exact_v(&k, i, y, x, c);
                                    double got = stored_value(&k, out, i, y, x, c), want = reference_value(&k, i, y, x, c);
                                    if (type == H5PACK_DTYPE_UINT8) {
                                        CHECK_EQ_INT((int64_t)got, (v + 32768) >> 16);
                                        continue;
                                    }
                                    size_t e = (size_t)i * 3 * 19 * 23 + aug_pixel_index(k.job.out_nhwc, 3, 19, 23, y, x, c);
                                    float f = exact_f32(&k.job, c, v);
                                    CHECK_MSG(memcmp((const float *)out + e, &f, 4) == 0, "simd %d case %d: (%u,%u,%u,%u) "
                                              "%.9g, contract %.9g", simd, cases, i, y, x, c, got, (double)f);
                                    CHECK_NEAR(got, want, 0.2);
                                    worst = fabs(got - want) > worst ? fabs(got - want) : worst;
                                }
                    free(out), free(scratch);
                    rs_free(&k);
                }
    printf("backend_resample: %d jobs equal the fixed-point contract; float32 within %.3f levels of the "
           "unrounded sum\n", cases, worst);
}

/* Both AVX2 passes (float, and integer where the taps fit) give the scalar pass's bytes: channels 1-4,
 * every dtype and layout pair, both crops, flip, up- and downscaling (past what the integer pass takes),
 * widths that are and are not multiples of 8 and 16 (the tails), and normalisations that make float16
 * subnormals and overflow to infinity. */
/* K's job (N images) resampled by the scalar pass and by pass SIMD: 1 when the bytes are equal. */
static int pass_equals_scalar(rs_case *k, size_t n, int simd)
{
    uint8_t *a = malloc(k->out_bytes), *b = malloc(k->out_bytes);
    float *scratch = malloc(sizeof(float) * h5pack_resample_scratch_floats(&k->job));
    CHECK(a && b && scratch);
    k->job.out = a;
    h5pack_resample_images_with(&k->job, 0, (uint32_t)n, scratch, H5PACK_RESAMPLE_SCALAR);
    k->job.out = b;
    h5pack_resample_images_with(&k->job, 0, (uint32_t)n, scratch, simd);
    int same = memcmp(a, b, k->out_bytes) == 0;
    free(a), free(b), free(scratch);
    return same;
}

/* Every SIMD pass this CPU runs gives the scalar pass's bytes for K's job. */
static int simd_equals_scalar(rs_case *k, size_t n)
{
    for (int simd = H5PACK_RESAMPLE_FLOAT; simd <= h5pack_resample_best_pass(); simd++)
        if (!pass_equals_scalar(k, n, simd))
            return 0;
    return 1;
}

static void test_simd_equals_scalar(void)
{
    if (!h5pack_resample_avx2_supported()) {
        printf("backend_resample: skipped the AVX2 comparison: this CPU has no AVX2\n");
        return;
    }
    static const uint32_t shapes[][4] = {{37, 45, 19, 23}, {256, 256, 224, 224}, {30, 17, 61, 40}, {9, 300, 8, 9},
                                         {64, 48, 64, 48}};
    int cases = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (uint32_t C = 1; C <= 4; C += (s == 1 ? 2 : 1))
            for (int type = H5PACK_DTYPE_FLOAT32; type <= H5PACK_DTYPE_UINT8; type++)
                for (int layouts = 0; layouts < 4; layouts++)
                    for (int mode = H5PACK_CROP_RANDOM_RESIZED; mode <= H5PACK_CROP_CENTER; mode++) {
                        int flip = (cases & 1) != 0;
                        aug_crops_params pp = rs_params(C, shapes[s][0], shapes[s][1], type, layouts & 1, layouts >> 1,
                                                       mode, flip);
                        for (int c = 0; c < 4 && cases % 5 >= 3; c++) { /* float16 subnormals; overflow */
                            pp.nscale[c] *= cases % 5 == 3 ? 1e-6f : 1e3f;
                            pp.nbias[c] *= cases % 5 == 3 ? 1e-6f : 1e3f;
                        }
                        size_t n = s == 1 ? 2 : 4;
                        rs_case k = rs_make(pp, n, shapes[s][2], shapes[s][3], 7000 + (uint64_t)cases++);
                        CHECK_MSG(simd_equals_scalar(&k, n), "case %d: %ux%ux%u -> %ux%u type %d layouts %d mode %d "
                                  "flip %d: a SIMD pass differs from scalar", cases, C, shapes[s][0], shapes[s][1],
                                  shapes[s][2], shapes[s][3], type, layouts, mode, flip);
                        rs_free(&k);
                    }
    printf("backend_resample: AVX2%s == scalar, byte for byte, in %d cases\n",
           h5pack_resample_avx512_supported() ? " and AVX-512"
                                              : " (AVX-512 not run: no AVX-512 VBMI and VNNI here, or H5PACK_NO_AVX512)",
           cases);
}

/* Centre crop of the whole image at its own size: every tap is 1, the output is the input. */
static void test_identity(void)
{
    aug_crops_params pp = rs_params(3, 12, 9, H5PACK_DTYPE_UINT8, 1, 0, H5PACK_CROP_CENTER, 0);
    pp.crop.center_ratio = 1.0;
    rs_case k = rs_make(pp, 2, 12, 9, 5); /* 12 x 9 output: box is the whole 12 x 9 image */
    uint8_t *out = malloc(k.out_bytes);
    float *scratch = malloc(sizeof(float) * h5pack_resample_scratch_floats(&k.job));
    CHECK(out && scratch);
    k.job.out = out;
    h5pack_resample_images(&k.job, 0, 2, scratch);
    for (uint32_t i = 0; i < 2; i++)
        for (uint32_t c = 0; c < 3; c++)
            for (uint32_t y = 0; y < 12; y++)
                for (uint32_t x = 0; x < 9; x++)
                    CHECK_EQ_INT(out[i * 324 + (c * 12 + y) * 9 + x], k.in[i * 324 + (y * 9 + x) * 3 + c]);
    free(out), free(scratch);
    rs_free(&k);
}

/* Images of several sizes: in one job each image is resampled from its own size. A centre crop (no draws)
 * of image i of a mixed job equals the same crop of that image alone in a job of its size, for both
 * passes, every dtype and both input layouts; and the AVX2 pass gives the scalar pass's bytes for random
 * resized crops of the mixed job. */
static void test_several_sizes(void)
{
    const uint32_t dims[] = {37, 45, 12, 80, 64, 9, 5, 5, 64, 80, 40, 33}; /* each within 64 x 80 */
    const size_t n = sizeof dims / sizeof dims[0] / 2;
    int cases = 0;
    for (int type = H5PACK_DTYPE_FLOAT32; type <= H5PACK_DTYPE_UINT8; type++)
        for (int in_nhwc = 0; in_nhwc < 2; in_nhwc++)
            for (int simd = 0; simd <= h5pack_resample_best_pass(); simd++) {
                aug_crops_params pp = rs_params(3, 64, 80, type, in_nhwc, 0, H5PACK_CROP_CENTER, 0);
                rs_case k = rs_make_sized(pp, n, 24, 20, 99, dims);
                uint8_t *mixed = malloc(k.out_bytes);
                float *scratch = malloc(sizeof(float) * h5pack_resample_scratch_floats(&k.job));
                CHECK(mixed && scratch);
                k.job.out = mixed;
                h5pack_resample_images_with(&k.job, 0, (uint32_t)n, scratch, simd);
                size_t one = k.out_bytes / n;
                for (size_t i = 0; i < n; i++) {
                    aug_crops_params own =
                        rs_params(3, dims[2 * i], dims[2 * i + 1], type, in_nhwc, 0, H5PACK_CROP_CENTER, 0);
                    rs_case a = rs_make(own, 1, 24, 20, 99);
                    memcpy(a.in, (const uint8_t *)(uintptr_t)k.src[i], (size_t)3 * dims[2 * i] * dims[2 * i + 1]);
                    uint8_t *alone = malloc(one);
                    float *sa = malloc(sizeof(float) * h5pack_resample_scratch_floats(&a.job));
                    CHECK(alone && sa);
                    a.job.out = alone;
                    h5pack_resample_images_with(&a.job, 0, 1, sa, simd);
                    CHECK_MSG(memcmp(alone, mixed + i * one, one) == 0, "image %zu (%ux%u) of a mixed job, type %d "
                              "in_nhwc %d simd %d: differs from the image alone", i, dims[2 * i], dims[2 * i + 1],
                              type, in_nhwc, simd);
                    free(alone), free(sa);
                    rs_free(&a);
                    cases++;
                }
                free(mixed), free(scratch);
                rs_free(&k);
            }
    for (int layouts = 0; layouts < 4 && h5pack_resample_avx2_supported(); layouts++) {
        aug_crops_params pp =
            rs_params(3, 64, 80, H5PACK_DTYPE_FLOAT32, layouts & 1, layouts >> 1, H5PACK_CROP_RANDOM_RESIZED, 1);
        rs_case k = rs_make_sized(pp, n, 31, 29, 1234 + (uint64_t)layouts, dims);
        CHECK_MSG(simd_equals_scalar(&k, n), "several sizes, layouts %d: a SIMD pass differs from scalar", layouts);
        rs_free(&k);
        cases++;
    }
    printf("backend_resample: images of several sizes resampled from their own sizes in %d cases\n", cases);
}

/* A pass's entry for one image of J: 0 when it takes it, -1 when it leaves it to another pass. */
typedef int (*pass_takes)(const aug_job *j, uint32_t i, void *work);

static int fixed_takes(const aug_job *j, uint32_t i, void *work)
{
    fixed_image f;
    return h5pack_resample_fixed_begin(j, i, work, &f);
}

static int avx512_takes(const aug_job *j, uint32_t i, void *work)
{
    return h5pack_resample_avx512_image(j, i, work, 0, NULL); /* resamples the image too, into j->out */
}

/* Images of the common crops (every random resized crop 256 -> 224 and the centre crop, both input
 * layouts, flipped or not, NCHW output) that TAKES refuses, each reported; returns how many it took.
 * WORK_BYTES / ALIGN: the pass's work memory. */
static int common_crops_taken(pass_takes takes, size_t (*work_bytes)(const aug_job *), size_t align, const char *name)
{
    int taken = 0;
    for (int mode = H5PACK_CROP_RANDOM_RESIZED; mode <= H5PACK_CROP_CENTER; mode++)
        for (int in_nhwc = 0; in_nhwc < 2; in_nhwc++) {
            aug_crops_params pp = rs_params(3, 256, 256, H5PACK_DTYPE_FLOAT32, in_nhwc, 0, mode, 1);
            rs_case k = rs_make(pp, 32, 224, 224, 31 + (uint64_t)in_nhwc);
            void *work = aligned_alloc(align, (work_bytes(&k.job) + align - 1) / align * align);
            void *out = malloc(k.out_bytes);
            CHECK(work && out);
            k.job.out = out;
            for (uint32_t i = 0; i < 32; i++, taken++)
                CHECK_MSG(takes(&k.job, i, work) == 0, "image %u (box %dx%d) mode %d: the %s pass refused it", i,
                          k.job.images[i].h, k.job.images[i].w, mode, name);
            free(work), free(out);
            rs_free(&k);
        }
    return taken;
}

/* The integer pass takes what it is for and hands strong downscales to the float pass (-1), so the
 * comparisons above exercise both. */
static void test_fixed_takes_common_crops(void)
{
    if (!h5pack_resample_avx2_supported()) {
        printf("backend_resample: skipped the integer pass's reach: this CPU has no AVX2\n");
        return;
    }
    int taken = common_crops_taken(fixed_takes, h5pack_resample_fixed_work_bytes, 32, "integer");
    aug_crops_params pp = rs_params(3, 64, 300, H5PACK_DTYPE_FLOAT32, 1, 0, H5PACK_CROP_CENTER, 0);
    rs_case k = rs_make(pp, 1, 8, 9, 5); /* the 64 rows resized to about 9: 7 source pixels per output */
    void *work = aligned_alloc(32, (h5pack_resample_fixed_work_bytes(&k.job) + 31) / 32 * 32);
    CHECK(work && fixed_takes(&k.job, 0, work) == -1);
    free(work);
    rs_free(&k);
    printf("backend_resample: the integer pass took all %d common crops and refused a 7x downscale\n", taken);
}

/* The AVX-512 pass takes the common crops and leaves NHWC output and strong downscales to the AVX2
 * passes (-1, nothing written), so the comparisons above exercise it where it runs. */
static void test_avx512_takes_common_crops(void)
{
    if (!h5pack_resample_avx512_supported()) {
        printf("backend_resample: skipped the AVX-512 pass's reach: no AVX-512 VBMI and VNNI here, or H5PACK_NO_AVX512\n");
        return;
    }
    int taken = common_crops_taken(avx512_takes, h5pack_resample_avx512_work_bytes, 64, "AVX-512");
    /* stored h, w, output h, w, NHWC output: a 7x downscale; what it takes, but NHWC */
    static const uint32_t refused[][5] = {{64, 300, 8, 9, 0}, {256, 256, 224, 224, 1}};
    for (size_t r = 0; r < 2; r++) {
        aug_crops_params pp = rs_params(3, refused[r][0], refused[r][1], H5PACK_DTYPE_FLOAT32, 1, (int)refused[r][4],
                                       H5PACK_CROP_CENTER, 0);
        rs_case k = rs_make(pp, 1, refused[r][2], refused[r][3], 5);
        void *work = aligned_alloc(64, (h5pack_resample_avx512_work_bytes(&k.job) + 63) / 64 * 64);
        uint8_t *out = calloc(1, k.out_bytes);
        CHECK(work && out);
        k.job.out = out;
        CHECK(h5pack_resample_avx512_image(&k.job, 0, work, 0, NULL) == -1);
        for (size_t b = 0; b < k.out_bytes; b++)
            CHECK_EQ_INT(out[b], 0); /* refused: nothing written */
        free(work), free(out);
        rs_free(&k);
    }
    printf("backend_resample: the AVX-512 pass took all %d common crops and refused a 7x downscale and NHWC "
           "output\n", taken);
}

int main(void)
{
    test_taps_known();
    test_center_box();
    test_rrc_properties();
    test_same_key_same_job();
    test_plan_shares_taps_exactly();
    test_plan_taps_in_any_order();
    test_cpu_exact();
    test_identity();
    test_simd_equals_scalar();
    test_fixed_takes_common_crops();
    test_avx512_takes_common_crops();
    test_several_sizes();
    printf("backend_resample: all checks passed\n");
    return 0;
}
