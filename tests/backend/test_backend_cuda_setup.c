/* test_backend_cuda_setup.c - what the CUDA backend does before it touches a GPU, checked on every
 * machine: a missing or out-of-range device gives H5PACK_ENODEV with the reason, a ring larger than
 * device_memory_limit gives H5PACK_ENOMEM with the sizes, bad parameters EINVAL; and, where a GPU
 * exists, creation succeeds and reports the device and its memory. */
#include "check.h"
#include "naive.h"

static int create(backend_params p, backend **b, char *err, size_t len)
{
    *b = NULL;
    err[0] = '\0';
    return h5pack_backend_cuda_create(&p, b, err, len);
}

int main(void)
{
    backend_params p = naive_params(3, 32, 32, H5PACK_DTYPE_FLOAT32, H5PACK_LAYOUT_NCHW, H5PACK_LAYOUT_NCHW, 1, 4);
    backend *b = NULL;
    char err[512];
    CHECK_EQ_INT(h5pack_backend_cuda_available(-1), 0);
    CHECK_EQ_INT(h5pack_backend_cuda_available(1 << 20), 0);

    backend_params q = p;
    q.device_memory_limit = 1000;
    CHECK_EQ_INT(create(q, &b, err, sizeof err), H5PACK_ENOMEM);
    CHECK(b == NULL);
    CHECK_STR_CONTAINS(err, "device_memory_limit is 1000");

    q = p, q.std[0] = 0.0f;
    CHECK_EQ_INT(create(q, &b, err, sizeof err), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(err, "std");

    q = p, q.gpu_id = 4096;
    CHECK_EQ_INT(create(q, &b, err, sizeof err), H5PACK_ENODEV);
    CHECK_STR_CONTAINS(err, "no usable GPU");

    int rc = create(p, &b, err, sizeof err);
    if (!h5pack_backend_cuda_available(0)) {
        CHECK_EQ_INT(rc, H5PACK_ENODEV);
        CHECK(b == NULL);
        CHECK_STR_CONTAINS(err, "no usable GPU");
        printf("backend_cuda_setup: no GPU here: creation refused with \"%s\" as it should\n", err);
        return 0;
    }
    CHECK_MSG(rc == H5PACK_OK, "h5pack_backend_cuda_create: %s", err);
    CHECK(b->device == H5PACK_DEVICE_CUDA && b->name[0] != '\0');
    uint64_t dev_bytes = 0;
    b->ops->times(b, NULL, NULL, &dev_bytes);
    size_t ring = (size_t)p.slots * p.batch_size * (3 * 32 * 32 * 5 + 8);
    CHECK_MSG(dev_bytes >= ring, "device bytes %llu < ring %zu", (unsigned long long)dev_bytes, ring);
    CHECK(b->pinned_bytes >= (size_t)p.slots * p.batch_size * 3 * 32 * 32);
    q = p, q.device_memory_limit = (size_t)dev_bytes; /* exactly enough is enough */
    b->ops->destroy(b);
    CHECK_OK(create(q, &b, err, sizeof err));
    b->ops->destroy(b);
    printf("backend_cuda_setup: GPU \"%s\" ring of %llu device bytes\n", err[0] ? err : "ok",
           (unsigned long long)dev_bytes);
    return 0;
}
