/* test_backend_cpu.c - the CPU backend's ring: submit / output / release / resubmit in the order the
 * reader core calls them, echoes with fresh draws, OpenMP and single-thread paths giving the same bytes,
 * slots independent, and bad parameters rejected with a message. */
#include <stdlib.h>

#include "check.h"
#include "naive.h"

typedef struct ring_case {
    backend *b;
    backend_params p;
    size_t in_img, out_img;
} ring_case;

static ring_case make_backend(backend_params p)
{
    ring_case rc;
    char err[256] = "";
    rc.p = p;
    rc.in_img = (size_t)p.channels * p.height * p.width;
    rc.out_img = h5pack_backend_output_image_bytes(&p);
    int code = h5pack_backend_cpu_create(&p, &rc.b, err, sizeof err);
    CHECK_MSG(code == H5PACK_OK, "h5pack_backend_cpu_create: %d %s", code, err);
    CHECK(rc.b->device == H5PACK_DEVICE_CPU);
    CHECK_STR_CONTAINS(rc.b->name, "cpu");
    return rc;
}

static void fill_slot(ring_case *rc, int slot, size_t count, uint64_t seed)
{
    naive_fill_random(rc->b->ops->host_input(rc->b, slot), count * rc->in_img, seed);
    int64_t *labels = rc->b->ops->host_labels(rc->b, slot);
    for (size_t i = 0; i < count; i++)
        labels[i] = (int64_t)(seed % 1000 + i);
}

/* output() of SLOT must equal the naive conversion of its input with KEY; returns a copy of it. */
static uint8_t *check_output(ring_case *rc, int slot, size_t count, uint64_t key)
{
    h5pack_batch batch;
    memset(&batch, 0, sizeof batch);
    CHECK_OK(rc->b->ops->output(rc->b, slot, count, &batch, NULL, 0));
    CHECK_EQ_INT(batch.bytes, count * rc->out_img);
    CHECK_EQ_INT(batch.on_device, 0);
    CHECK(batch.cuda_event == NULL && batch.labels_device == NULL);
    CHECK(batch.labels == rc->b->ops->host_labels(rc->b, slot));
    uint8_t *want = malloc(batch.bytes), *copy = malloc(batch.bytes);
    CHECK(want && copy);
    naive_convert(&rc->p, rc->b->ops->host_input(rc->b, slot), want, count, key);
    CHECK_MSG(memcmp(batch.data, want, batch.bytes) == 0, "slot %d output differs from the naive conversion", slot);
    memcpy(copy, batch.data, batch.bytes);
    free(want);
    return copy;
}

/* Fresh batch, then two echoes with new keys: each equals the naive conversion for its key, and with
 * augmentation on the echoes differ from the fresh batch (new flips and crops). */
static void test_echo_cycle(int augmented, int threads)
{
    backend_params p = naive_params(3, 6, 9, H5PACK_DTYPE_FLOAT32, H5PACK_LAYOUT_NHWC, H5PACK_LAYOUT_NCHW,
                                    augmented, augmented ? 2 : 0);
    p.threads = threads;
    ring_case rc = make_backend(p);
    size_t count = 7;
    fill_slot(&rc, 1, count, 42);
    uint64_t k0 = aug_batch_key(5, 0, 3, 0), k1 = aug_batch_key(5, 0, 3, 1), k2 = aug_batch_key(5, 0, 3, 2);
    CHECK_OK(rc.b->ops->submit(rc.b, 1, h5pack_backend_job(count, k0), NULL, 0));
    uint8_t *fresh = check_output(&rc, 1, count, k0);
    CHECK_OK(rc.b->ops->release(rc.b, 1, NULL, 0));
    CHECK_OK(rc.b->ops->resubmit(rc.b, 1, h5pack_backend_job(count, k1), NULL, 0));
    uint8_t *echo1 = check_output(&rc, 1, count, k1);
    CHECK_OK(rc.b->ops->release(rc.b, 1, NULL, 0));
    CHECK_OK(rc.b->ops->resubmit(rc.b, 1, h5pack_backend_job(count, k2), NULL, 0));
    uint8_t *echo2 = check_output(&rc, 1, count, k2);
    CHECK_OK(rc.b->ops->release(rc.b, 1, NULL, 0));
    size_t bytes = count * rc.out_img;
    if (augmented) {
        CHECK_MSG(memcmp(fresh, echo1, bytes) != 0 && memcmp(echo1, echo2, bytes) != 0,
                  "echoes must get fresh flip/crop draws");
    } else {
        CHECK_MSG(memcmp(fresh, echo1, bytes) == 0 && memcmp(fresh, echo2, bytes) == 0,
                  "without augmentation every echo is the same batch");
    }
    double convert_s = -1, copy_s = -1;
    uint64_t dev = 1;
    rc.b->ops->times(rc.b, &convert_s, &copy_s, &dev);
    CHECK(convert_s > 0 && copy_s == 0 && dev == 0);
    free(fresh), free(echo1), free(echo2);
    rc.b->ops->destroy(rc.b);
}

/* submit (single-threaded) and resubmit with 1, 2 and more threads than images give identical bytes,
 * for every dtype. */
static void test_thread_paths_equal(void)
{
    for (int dt = 0; dt <= H5PACK_DTYPE_UINT8; dt++) {
        backend_params p = naive_params(3, 7, 11, (h5pack_dtype)dt, H5PACK_LAYOUT_NCHW, H5PACK_LAYOUT_NHWC, 1, 3);
        uint8_t *ref = NULL;
        const int threads[] = {1, 2, 4, 16};
        for (int t = 0; t < 4; t++) {
            p.threads = threads[t];
            ring_case rc = make_backend(p);
            size_t count = 5;
            fill_slot(&rc, 0, count, 7);
            uint64_t key = aug_batch_key(1, 1, 1, 1);
            CHECK_OK(t == 0 ? rc.b->ops->submit(rc.b, 0, h5pack_backend_job(count, key), NULL, 0) : rc.b->ops->resubmit(rc.b, 0, h5pack_backend_job(count, key), NULL, 0));
            uint8_t *got = check_output(&rc, 0, count, key);
            if (!ref)
                ref = got;
            else {
                CHECK_MSG(memcmp(ref, got, count * rc.out_img) == 0, "%d threads differ", threads[t]);
                free(got);
            }
            rc.b->ops->destroy(rc.b);
        }
        free(ref);
    }
}

/* Converting one slot leaves the other slots' outputs alone; a short last batch works. */
static void test_slots_independent(void)
{
    backend_params p = naive_params(1, 4, 5, H5PACK_DTYPE_BFLOAT16, H5PACK_LAYOUT_NCHW, H5PACK_LAYOUT_NCHW, 1, 1);
    p.slots = 3;
    ring_case rc = make_backend(p);
    CHECK(rc.b->pinned_bytes >= 3 * p.batch_size * (rc.in_img + rc.out_img + 8));
    for (int s = 0; s < 3; s++) {
        fill_slot(&rc, s, p.batch_size, 100 + (uint64_t)s);
        CHECK_OK(rc.b->ops->submit(rc.b, s, h5pack_backend_job(p.batch_size, (uint64_t)s), NULL, 0));
    }
    fill_slot(&rc, 1, 3, 555); /* slot 1 again with a short batch */
    CHECK_OK(rc.b->ops->submit(rc.b, 1, h5pack_backend_job(3, 77), NULL, 0));
    free(check_output(&rc, 0, p.batch_size, 0));
    free(check_output(&rc, 1, 3, 77));
    free(check_output(&rc, 2, p.batch_size, 2));
    char err[128] = "";
    CHECK_EQ_INT(rc.b->ops->submit(rc.b, 3, h5pack_backend_job(1, 0), err, sizeof err), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(err, "slot 3 of 3"); /* the op's own message, in the caller's buffer */
    CHECK_EQ_INT(rc.b->ops->submit(rc.b, 0, h5pack_backend_job(p.batch_size + 1, 0), NULL, 0), H5PACK_EINVAL);
    CHECK_EQ_INT(rc.b->ops->release(rc.b, -1, NULL, 0), H5PACK_EINVAL);
    rc.b->ops->destroy(rc.b);
}

static void expect_rejected(backend_params p, const char *why)
{
    backend *b = (backend *)&p; /* any non-NULL value: must be reset to NULL */
    char err[256] = "";
    CHECK_EQ_INT(h5pack_backend_cpu_create(&p, &b, err, sizeof err), H5PACK_EINVAL);
    CHECK(b == NULL);
    CHECK_STR_CONTAINS(err, why);
}

static void test_bad_params(void)
{
    backend_params p = naive_params(3, 4, 4, H5PACK_DTYPE_FLOAT32, H5PACK_LAYOUT_NCHW, H5PACK_LAYOUT_NCHW, 0, 0);
    backend_params q = p;
    q.channels = 5;
    expect_rejected(q, "channels");
    q = p, q.width = 0;
    expect_rejected(q, "width");
    q = p, q.batch_size = 0;
    expect_rejected(q, "batch size");
    q = p, q.out_layout = H5PACK_LAYOUT_AUTO;
    expect_rejected(q, "layouts");
    q = p, q.std[1] = 0.0f;
    expect_rejected(q, "std");
    q = p, q.crop_padding = -1;
    expect_rejected(q, "padding");
    q = p, q.height = 1u << 31, q.width = 1u << 31, q.slots = 1 << 20;
    expect_rejected(q, "overflow");
    q = p, q.std[1] = 0.0f, q.dtype = H5PACK_DTYPE_UINT8; /* raw output ignores mean/std */
    backend *b = NULL;
    char err[64];
    CHECK_OK(h5pack_backend_cpu_create(&q, &b, err, sizeof err));
    b->ops->destroy(b);
}

int main(void)
{
    test_bad_params();
    test_echo_cycle(1, 1);
    test_echo_cycle(1, 3);
    test_echo_cycle(0, 2);
    test_thread_paths_equal();
    test_slots_independent();
    printf("backend_cpu: all checks passed\n");
    return 0;
}
