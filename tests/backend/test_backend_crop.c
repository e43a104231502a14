/* test_backend_crop.c - the CPU backend with resizing crops and sample-echo deliveries, through the ops
 * the reader core calls: a submitted batch equals the resampling job planned from the same key; the
 * boxes on the host are the job's; the output size changes from a given epoch on (a batch already
 * converted for that epoch is redone at output, earlier epochs keep their size) and bad sizes are refused
 * with a reason; a composed delivery gathers images from other slots and the pool (which outlives a
 * refill of its slot) and carries the given labels, with and without a resizing crop. */
#include <stdlib.h>

#include "augment_crops.h"
#include "backend_resample.h"
#include "check.h"
#include "naive.h"

static backend_params crop_params(int crop, h5pack_dtype dtype)
{
    backend_params p = naive_params(3, 40, 48, dtype, H5PACK_LAYOUT_NHWC, H5PACK_LAYOUT_NCHW, 1, 0);
    p.slots = 3, p.batch_size = 6, p.threads = 2;
    p.crop = crop;
    p.out_height = 24, p.out_width = 20, p.max_out_height = 32, p.max_out_width = 32;
    p.scale_min = 0.08, p.scale_max = 1.0, p.ratio_min = 0.75, p.ratio_max = 4.0 / 3.0, p.center_ratio = 0.875;
    p.pool_batches = 1;
    return p;
}

static backend *create(const backend_params *p)
{
    backend *b = NULL;
    char err[256] = "";
    int rc = h5pack_backend_cpu_create(p, &b, err, sizeof err);
    CHECK_MSG(rc == H5PACK_OK, "create: %s", err);
    return b;
}

/* The output the resampling job planned for SRCS with KEY at OH x OW would write. */
static void *expected_crop(const backend_params *p, const uint8_t *const *srcs, size_t count, uint64_t key,
                           uint32_t oh, uint32_t ow, aug_job *job_out, void **blob_out)
{
    aug_crops_params pp;
    h5pack_backend_crop_params(p, &pp);
    uint64_t addrs[64];
    for (size_t i = 0; i < count; i++)
        addrs[i] = (uint64_t)(uintptr_t)srcs[i];
    void *blob = malloc(h5pack_aug_blob_bytes(&pp, count, oh, ow));
    void *out = malloc(count * h5pack_backend_image_bytes_at(p, oh, ow));
    float *scratch = NULL;
    CHECK(blob && out);
    h5pack_aug_crops(&pp, key, count, oh, ow, addrs, blob, job_out);
    job_out->out = out;
    scratch = malloc(sizeof(float) * h5pack_resample_scratch_floats(job_out));
    CHECK(scratch);
    h5pack_resample_images(job_out, 0, (uint32_t)count, scratch);
    free(scratch);
    *blob_out = blob;
    return out;
}

static void check_delivery(backend *b, const backend_params *p, int slot, const uint8_t *const *srcs, size_t count,
                           uint64_t key, uint32_t oh, uint32_t ow)
{
    h5pack_batch batch;
    memset(&batch, 0, sizeof batch);
    CHECK_OK(b->ops->output(b, slot, count, &batch, NULL, 0));
    CHECK_EQ_INT(batch.bytes, count * h5pack_backend_image_bytes_at(p, oh, ow));
    aug_job job;
    void *blob;
    void *want = expected_crop(p, srcs, count, key, oh, ow, &job, &blob);
    CHECK_MSG(memcmp(batch.data, want, batch.bytes) == 0, "slot %d: output differs from the planned job", slot);
    const backend_box *boxes = NULL;
    uint32_t h = 0, w = 0;
    b->ops->geometry(b, slot, &boxes, &h, &w);
    CHECK(h == oh && w == ow && boxes);
    for (size_t i = 0; i < count; i++)
        CHECK(boxes[i].y == job.images[i].y && boxes[i].x == job.images[i].x && boxes[i].height == job.images[i].h &&
              boxes[i].width == job.images[i].w && boxes[i].flip == job.images[i].flip);
    free(want), free(blob);
}

static const uint8_t *const *slot_srcs(backend *b, int slot, size_t count, size_t img, const uint8_t **buf)
{
    for (size_t i = 0; i < count; i++)
        buf[i] = b->ops->host_input(b, slot) + i * img;
    return buf;
}

static void test_crop_and_resize(void)
{
    backend_params p = crop_params(H5PACK_CROP_RANDOM_RESIZED, H5PACK_DTYPE_FLOAT32);
    backend *b = create(&p);
    size_t img = 3 * 40 * 48, count = 5;
    const uint8_t *srcs[8];
    naive_fill_random(b->ops->host_input(b, 0), count * img, 1);
    naive_fill_random(b->ops->host_input(b, 1), count * img, 2);
    backend_job j0 = h5pack_backend_job(count, 11), j1 = h5pack_backend_job(count, 12);
    j1.epoch = 1;
    CHECK_OK(b->ops->submit(b, 0, j0, NULL, 0));
    CHECK_OK(b->ops->submit(b, 1, j1, NULL, 0)); /* converted at 24 x 20 ... */
    char err[256] = "";
    CHECK_OK(h5pack_backend_set_output_size(b, 16, 28, 1, &p, err, sizeof err));
    check_delivery(b, &p, 0, slot_srcs(b, 0, count, img, srcs), count, 11, 24, 20); /* epoch 0 keeps its size */
    check_delivery(b, &p, 1, slot_srcs(b, 1, count, img, srcs), count, 12, 16, 28); /* ... redone at 16 x 28 */
    CHECK_OK(b->ops->release(b, 1, NULL, 0));
    backend_job j2 = h5pack_backend_job(count, 13);
    j2.epoch = 5;
    CHECK_OK(b->ops->resubmit(b, 1, j2, NULL, 0));
    check_delivery(b, &p, 1, slot_srcs(b, 1, count, img, srcs), count, 13, 16, 28);
    /* a later change keeps the sizes of the epochs before it */
    CHECK_OK(h5pack_backend_set_output_size(b, 32, 32, 3, &p, err, sizeof err));
    uint32_t h, w;
    h5pack_backend_size_for(b, 0, &h, &w);
    CHECK(h == 24 && w == 20);
    h5pack_backend_size_for(b, 2, &h, &w);
    CHECK(h == 16 && w == 28);
    h5pack_backend_size_for(b, 3, &h, &w);
    CHECK(h == 32 && w == 32);
    CHECK_EQ_INT(h5pack_backend_set_output_size(b, 33, 8, 4, &p, err, sizeof err), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(err, "at most the maximum output size");
    CHECK_EQ_INT(h5pack_backend_set_output_size(b, 0, 8, 4, &p, err, sizeof err), H5PACK_EINVAL);
    b->ops->destroy(b);
    backend_params none = naive_params(3, 8, 8, H5PACK_DTYPE_FLOAT32, H5PACK_LAYOUT_NCHW, H5PACK_LAYOUT_NCHW, 0, 0);
    b = create(&none);
    CHECK_EQ_INT(h5pack_backend_set_output_size(b, 4, 4, 1, &none, err, sizeof err), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(err, "crop is none");
    b->ops->destroy(b);
}

/* Slots 0 and 1 hold batches; slot 0's images go to the pool, slot 0 is refilled; a delivery in slot 2
 * composed of slot 1, the pool and slot 2 must read the pooled (old) images. */
static void test_composed(int crop)
{
    backend_params p = crop_params(crop, H5PACK_DTYPE_FLOAT32);
    backend *b = create(&p);
    size_t img = 3 * 40 * 48, bs = p.batch_size;
    uint8_t *old0 = malloc(bs * img);
    CHECK(old0);
    for (int s = 0; s < 3; s++) {
        naive_fill_random(b->ops->host_input(b, s), bs * img, 100 + (uint64_t)s);
        backend_job in = h5pack_backend_job(bs, 0);
        in.convert = 0;
        CHECK_OK(b->ops->submit(b, s, in, NULL, 0));
    }
    memcpy(old0, b->ops->host_input(b, 0), bs * img);
    CHECK_OK(b->ops->pool_store(b, 0, bs, 0, NULL, 0));
    naive_fill_random(b->ops->host_input(b, 0), bs * img, 999); /* the slot is reused */
    backend_source src[6] = {{1, 4}, {3, 0}, {2, 5}, {3, 5}, {1, 0}, {2, 2}}; /* 3 = slots + pool entry 0 */
    int64_t labels[6] = {10, 20, 30, 40, 50, 60};
    const uint8_t *srcs[6];
    for (int i = 0; i < 6; i++)
        srcs[i] = src[i].buf == 3 ? old0 + src[i].image * img : b->ops->host_input(b, src[i].buf) + src[i].image * img;
    backend_job job = h5pack_backend_job(6, 77);
    job.sources = src, job.labels = labels;
    CHECK_OK(b->ops->resubmit(b, 2, job, NULL, 0));
    h5pack_batch batch;
    memset(&batch, 0, sizeof batch);
    CHECK_OK(b->ops->output(b, 2, 6, &batch, NULL, 0));
    CHECK(memcmp(batch.labels, labels, sizeof labels) == 0);
    if (crop) {
        check_delivery(b, &p, 2, srcs, 6, 77, 24, 20);
    } else {
        size_t out_img = h5pack_backend_output_image_bytes(&p);
        uint8_t *want = malloc(6 * out_img);
        CHECK(want);
        h5pack_backend_convert_ref(&p, NULL, srcs, want, 0, 6, 77);
        CHECK_EQ_INT(batch.bytes, 6 * out_img);
        CHECK_MSG(memcmp(batch.data, want, batch.bytes) == 0, "composed batch differs from its sources' conversion");
        free(want);
    }
    backend_source bad[1] = {{4, 0}}; /* no pool entry 1 */
    job.sources = bad, job.count = 1;
    char err[128] = "";
    CHECK_EQ_INT(b->ops->resubmit(b, 2, job, err, sizeof err), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(err, "no source 4/0");
    CHECK_EQ_INT(b->ops->pool_store(b, 0, bs, 1, err, sizeof err), H5PACK_EINVAL);
    CHECK_EQ_U64(b->pool_bytes, bs * img);
    free(old0);
    b->ops->destroy(b);
}

static void test_bad_crop_params(void)
{
    const char *why[] = {"output size", "scale", "ratio", "center_ratio", "padding", "too small"};
    for (int k = 0; k < 6; k++) {
        backend_params p = crop_params(H5PACK_CROP_RANDOM_RESIZED, H5PACK_DTYPE_FLOAT32);
        switch (k) {
        case 0: p.out_height = 40; break; /* above max_out_height */
        case 1: p.scale_min = 0.0; break;
        case 2: p.ratio_max = 0.5; break;
        case 3: p.center_ratio = 1.5; break;
        case 4: p.crop_padding = 4; break;
        default: p.height = 1 << 16, p.out_height = 1; break; /* a 65536 -> 1 downscale */
        }
        backend *b = NULL;
        char err[256] = "";
        CHECK_EQ_INT(h5pack_backend_cpu_create(&p, &b, err, sizeof err), H5PACK_EINVAL);
        CHECK_STR_CONTAINS(err, why[k]);
    }
}

int main(void)
{
    test_crop_and_resize();
    test_composed(H5PACK_CROP_RANDOM_RESIZED);
    test_composed(H5PACK_CROP_NONE);
    test_bad_crop_params();
    printf("backend_crop: all checks passed\n");
    return 0;
}
