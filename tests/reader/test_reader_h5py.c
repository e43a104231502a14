/* test_reader_h5py.c - files written by h5py itself (make_h5py_file.py): a gzip dataset with
 * maxshape=(None, ...) and a contiguous one, read in every order; every byte and label checked. */
#include <string.h>
#include <stdio.h>

#include <sys/wait.h>

#include "check.h"
#include "h5fixture.h"
#include "h5pack.h"

static void read_all(const char *path, const char *dataset, h5pack_order order)
{
    const h5fix_file sp = {.n = 53, .c = 3, .h = 6, .w = 5, .k = 4, .layout_attr = "NCHW", .labels = 1, .label_type = H5FIX_UINT16, .n_classes = 7, .pixel = h5fix_pixel_chw};
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    c.images_dataset = dataset, c.order = order, c.batch_size = 10, c.epochs = 1, c.threads = 2;
    c.device = H5PACK_DEVICE_CPU, c.dtype = H5PACK_DTYPE_UINT8, c.cache_bytes = 3 * 4 * 90;
    c.window = 2; /* explicit: the default window is the whole (small) file, more than the cache */
    h5pack_reader *r = NULL;
    int rc = h5pack_open(path, &c, &r);
    CHECK_MSG(rc == 0, "%s/%s: %s", path, dataset, h5pack_last_error(r));
    size_t img = 3 * 6 * 5;
    uint8_t want[90];
    int seen[53] = {0};
    h5pack_batch b = H5PACK_BATCH_INIT;
    while ((rc = h5pack_next(r, &b)) == H5PACK_OK) {
        for (size_t i = 0; i < b.count; i++) {
            uint64_t s = b.indices[i];
            CHECK(s < 53 && !seen[s]);
            seen[s] = 1;
            h5fix_image(&sp, s, want);
            CHECK_MSG(memcmp((const uint8_t *)b.data + i * img, want, img) == 0, "%s sample %llu differs", dataset,
                      (unsigned long long)s);
            CHECK_EQ_INT(b.labels[i], (int64_t)(s % 7));
        }
        CHECK_OK(h5pack_release(r, &b));
    }
    CHECK_EQ_INT(rc, H5PACK_END);
    for (int s = 0; s < 53; s++)
        CHECK(seen[s]);
    h5pack_close(r);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_reader_h5py PYTHON make_h5py_file.py\n");
        return 1;
    }
    const char *path = "reader_h5py.h5";
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' '%s' '%s'", argv[1], argv[2], path);
    int status = system(cmd);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
        SKIP_TEST("h5py not available");
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s failed", cmd);
    for (int o = H5PACK_ORDER_SEQUENTIAL; o <= H5PACK_ORDER_CHUNK; o++) {
        read_all(path, "images", (h5pack_order)o);
        read_all(path, "contiguous", (h5pack_order)o);
    }
    printf("reader h5py: all checks passed\n");
    return 0;
}
