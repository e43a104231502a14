/* test_prefetch.c - the next image's prefetch (reader/backend/backend_prefetch.h): the region planned from
 * a crop box alone holds every source byte the image's taps read (random resized and centre crops, both
 * layouts, up- and downscaling, images of several sizes) and not much more, a large source's first
 * 512 KiB only; the steps ask for the whole
 * region by the last output row, never more; prefetching (a right, a wrong or no next image) leaves the
 * output bytes as they are; turned off, plans are empty. */
#include "backend_prefetch.h"
#include "backend_resample.h"
#include "resample_cases.h"

/* Checks that image I's region (planned from JOB and its box) covers the bytes of every tap in J (the
 * image's view of JOB), and that its rows are at most the taps' rows plus the margin on each side.
 * Returns the taps' bytes checked. */
static size_t check_covers(const aug_job *job, const aug_job *j, uint32_t i, const char *what)
{
    src_prefetch pf;
    h5pack_src_prefetch_region(&pf, job, i, (const uint8_t *)(uintptr_t)j->images[i].src);
    CHECK_MSG(pf.base != NULL, "%s, image %u: an empty plan", what, i);
    uint32_t planes = j->in_nhwc ? 1 : j->C, px = j->in_nhwc ? j->C : 1;
    int32_t row_lo = INT32_MAX, row_hi = 0;
    size_t bytes = 0;
    for (uint32_t y = 0; y < j->out_h; y++) {
        const int32_t *ry = j->ry + ((size_t)i * j->out_h + y) * 2;
        row_lo = ry[0] < row_lo ? ry[0] : row_lo, row_hi = ry[0] + ry[1] > row_hi ? ry[0] + ry[1] : row_hi;
        for (int32_t r = ry[0]; r < ry[0] + ry[1]; r++)
            for (uint32_t x = 0; x < j->out_w; x++) {
                const int32_t *rx = j->rx + ((size_t)i * j->out_w + x) * 2;
                for (uint32_t p = 0; p < planes; p++) {
                    uint32_t at = (uint32_t)rx[0] * px, n = (uint32_t)rx[1] * px;
                    CHECK_MSG(h5pack_src_prefetch_covers(&pf, p, (uint32_t)r, at, n),
                              "%s, image %u: row %d, bytes %u..%u of plane %u outside the region (rows %u+%u, bytes "
                              "%u..%u)", what, i, r, at, at + n, p, pf.row0, pf.rows, pf.byte0, pf.byte1);
                    bytes += n;
                }
            }
    }
    const aug_image *img = &j->images[i];
    uint32_t margin = (uint32_t)(img->h + j->out_h - 1) / j->out_h + 1;
    CHECK_MSG(pf.rows <= (uint32_t)(row_hi - row_lo) + 2 * margin, "%s, image %u: %u rows asked for, the taps read %d",
              what, i, pf.rows, row_hi - row_lo);
    return bytes;
}

static void test_region_covers_taps(void)
{
    static const uint32_t sizes[][4] = {{256, 256, 224, 224}, {64, 80, 24, 20}, {40, 48, 96, 80}, {300, 200, 32, 32},
                                        {17, 256, 16, 224}};
    size_t images = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int mode = H5PACK_CROP_RANDOM_RESIZED; mode <= H5PACK_CROP_CENTER; mode++)
            for (int in_nhwc = 0; in_nhwc < 2; in_nhwc++) {
                aug_crops_params pp = rs_params(3, sizes[s][0], sizes[s][1], H5PACK_DTYPE_FLOAT32, in_nhwc, 0, mode, 1);
                rs_case k = rs_make(pp, 12, sizes[s][2], sizes[s][3], 7 + s * 4 + (uint64_t)mode * 2 + (uint64_t)in_nhwc);
                char what[128];
                snprintf(what, sizeof what, "%ux%u -> %ux%u, crop %d, %s", sizes[s][0], sizes[s][1], sizes[s][2],
                         sizes[s][3], mode, in_nhwc ? "NHWC" : "NCHW");
                for (uint32_t i = 0; i < k.count; i++, images++)
                    CHECK(check_covers(&k.job, &k.job, i, what) > 0);
                rs_free(&k);
            }
    const uint32_t dims[] = {37, 45, 12, 80, 64, 9, 5, 5, 64, 80, 40, 33};
    for (int in_nhwc = 0; in_nhwc < 2; in_nhwc++) {
        aug_crops_params pp = rs_params(3, 64, 80, H5PACK_DTYPE_FLOAT32, in_nhwc, 0, H5PACK_CROP_RANDOM_RESIZED, 1);
        rs_case k = rs_make_sized(pp, 6, 31, 29, 55 + (uint64_t)in_nhwc, dims);
        for (uint32_t i = 0; i < k.count; i++, images++) {
            aug_job own; /* the taps' view of the image; the plan takes the whole job */
            check_covers(&k.job, aug_job_for_image(&k.job, i, &own), i,
                         in_nhwc ? "several sizes, NHWC" : "several sizes, NCHW");
        }
        rs_free(&k);
    }
    printf("backend_prefetch: the regions of %zu images hold every byte their taps read\n", images);
}

/* A crop of a large source asks for its first rows only, at most 512 KiB, still from the box's top. */
static void test_large_source_capped(void)
{
    aug_crops_params pp = rs_params(3, 1200, 1600, H5PACK_DTYPE_FLOAT32, 1, 0, H5PACK_CROP_CENTER, 0);
    rs_case k = rs_make(pp, 1, 224, 224, 17);
    src_prefetch pf;
    h5pack_src_prefetch_region(&pf, &k.job, 0, k.in);
    size_t bytes = (size_t)pf.rows * pf.planes * (pf.byte1 - pf.byte0);
    CHECK_MSG(pf.base && bytes <= ((size_t)512 << 10) && bytes > ((size_t)256 << 10),
              "a 1200x1600 centre crop asks for %zu bytes", bytes);
    CHECK((int32_t)pf.row0 <= k.job.images[0].y && pf.rows < (uint32_t)k.job.images[0].h);
    rs_free(&k);
}

static void test_steps_ask_for_all_once(void)
{
    aug_crops_params pp = rs_params(3, 256, 256, H5PACK_DTYPE_FLOAT32, 0, 0, H5PACK_CROP_RANDOM_RESIZED, 0);
    rs_case k = rs_make(pp, 4, 224, 224, 3);
    for (uint32_t i = 0; i < k.count; i++) {
        src_prefetch pf;
        h5pack_src_prefetch_region(&pf, &k.job, i, (const uint8_t *)(uintptr_t)k.job.images[i].src);
        CHECK(pf.rows > 0 && pf.planes == 3);
        uint32_t before = 0;
        for (uint32_t y = 0; y < k.oh; y++) {
            h5pack_src_prefetch_step(&pf, y, k.oh);
            CHECK(pf.issued >= before && pf.issued <= pf.rows); /* spread over the rows, never past the end */
            CHECK(pf.issued <= (uint64_t)pf.rows * (y + 1) / k.oh + 1);
            before = pf.issued;
        }
        CHECK_EQ_INT(pf.issued, pf.rows);
        h5pack_src_prefetch_step(&pf, k.oh - 1, k.oh); /* done: nothing more */
        CHECK_EQ_INT(pf.issued, pf.rows);
    }
    h5pack_src_prefetch_step(NULL, 0, 224);
    src_prefetch none;
    h5pack_src_prefetch_none(&none);
    h5pack_src_prefetch_step(&none, 0, 224);
    CHECK(none.issued == 0 && !h5pack_src_prefetch_covers(&none, 0, 0, 0, 1));
    rs_free(&k);
}

/* Image by image with NEXT planned from image NEXT_OF[i] of the job (or none), into OUT. */
static void resample_with_next(rs_case *k, void *out, const int *next_of, float *scratch)
{
    k->job.out = out;
    for (uint32_t i = 0; i < k->count; i++) {
        src_prefetch next;
        if (next_of[i] >= 0)
            h5pack_src_prefetch_region(&next, &k->job, (uint32_t)next_of[i],
                                     (const uint8_t *)(uintptr_t)k->job.images[next_of[i]].src);
        else
            h5pack_src_prefetch_none(&next);
        h5pack_resample_image_then(&k->job, i, scratch, next_of[i] >= 0 ? &next : NULL);
    }
}

static void test_output_unchanged(void)
{
    int cases = 0;
    for (int type = H5PACK_DTYPE_FLOAT32; type <= H5PACK_DTYPE_UINT8; type++)
        for (int in_nhwc = 0; in_nhwc < 2; in_nhwc++) {
            aug_crops_params pp = rs_params(3, 96, 128, type, in_nhwc, 0, H5PACK_CROP_RANDOM_RESIZED, 1);
            rs_case k = rs_make(pp, 8, 56, 64, 21 + (uint64_t)type * 2 + (uint64_t)in_nhwc);
            uint8_t *plain = malloc(k.out_bytes), *with = malloc(k.out_bytes);
            float *scratch = malloc(sizeof(float) * h5pack_resample_scratch_floats(&k.job));
            CHECK(plain && with && scratch);
            int none[8], next[8], wrong[8];
            for (int i = 0; i < 8; i++)
                none[i] = -1, next[i] = i + 1 < 8 ? i + 1 : -1, wrong[i] = (i * 5 + 3) % 8;
            resample_with_next(&k, plain, none, scratch);
            resample_with_next(&k, with, next, scratch);
            CHECK_MSG(memcmp(plain, with, k.out_bytes) == 0, "type %d, in_nhwc %d: the prefetch changed the output",
                      type, in_nhwc);
            resample_with_next(&k, with, wrong, scratch);
            CHECK_MSG(memcmp(plain, with, k.out_bytes) == 0, "type %d, in_nhwc %d: a wrong next image changed the "
                      "output", type, in_nhwc);
            k.job.out = with; /* the batch call, which prefetches image i + 1 itself */
            h5pack_resample_images(&k.job, 0, (uint32_t)k.count, scratch);
            CHECK_MSG(memcmp(plain, with, k.out_bytes) == 0, "type %d, in_nhwc %d: the batch call differs", type, in_nhwc);
            free(plain), free(with), free(scratch);
            rs_free(&k);
            cases++;
        }
    printf("backend_prefetch: %d jobs give the same bytes with the next image's prefetch, a wrong one and none\n", cases);
}

static void test_turned_off(void)
{
    aug_crops_params pp = rs_params(3, 64, 64, H5PACK_DTYPE_FLOAT32, 0, 0, H5PACK_CROP_RANDOM_RESIZED, 0);
    rs_case k = rs_make(pp, 2, 32, 32, 5);
    src_prefetch pf;
    const uint8_t *src = (const uint8_t *)(uintptr_t)k.job.images[1].src;
    h5pack_src_prefetch_set_enabled(0);
    h5pack_src_prefetch_region(&pf, &k.job, 1, src);
    CHECK(pf.base == NULL && pf.rows == 0);
    h5pack_src_prefetch_set_enabled(1);
    h5pack_src_prefetch_region(&pf, &k.job, 1, src);
    CHECK(pf.base == src && pf.rows > 0);
    h5pack_src_prefetch_region(&pf, &k.job, 1, NULL); /* no source: nothing */
    CHECK(pf.base == NULL);
    rs_free(&k);
}

int main(void)
{
    test_region_covers_taps();
    test_large_source_capped();
    test_steps_ask_for_all_once();
    test_output_unchanged();
    test_turned_off();
    return 0;
}
