/* test_reader_epochs.c - config.epochs: exactly that many epochs, then H5PACK_END; a huge count (the
 * batch total past 2^64) means "no end in practice", not a wrapped total that ends the run early;
 * H5PACK_EPOCHS_ENDLESS has no end and 0 is refused (issue 41.6: it used to mean endless). */
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "h5fixture.h"
#include "h5pack.h"

/* Batches delivered before H5PACK_END, reading at most LIMIT; *LAST_EPOCH the epoch of the last one. */
static uint64_t count_batches(const char *path, uint64_t epochs, uint64_t limit, uint64_t *last_epoch)
{
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    c.device = H5PACK_DEVICE_CPU, c.batch_size = 16, c.threads = 2, c.prefetch = 2, c.epochs = epochs;
    h5pack_reader *r = NULL;
    int rc = h5pack_open(path, &c, &r);
    CHECK_MSG(rc == 0, "open %s: %s", path, h5pack_last_error(r));
    h5pack_info info = H5PACK_INFO_INIT;
    CHECK_OK(h5pack_info_get(r, &info));
    CHECK_EQ_U64(info.batches_per_epoch, 4);
    uint64_t n = 0;
    h5pack_batch b = H5PACK_BATCH_INIT;
    while (n < limit && (rc = h5pack_next(r, &b)) == H5PACK_OK) {
        CHECK_EQ_U64(b.epoch, n / 4);
        CHECK_EQ_U64(b.index, n % 4);
        *last_epoch = b.epoch;
        CHECK_OK(h5pack_release(r, &b));
        n++;
    }
    CHECK_MSG(n == limit || rc == H5PACK_END, "next: %d %s", rc, h5pack_last_error(r));
    h5pack_close(r);
    return n;
}

int main(void)
{
    char path[256];
    h5fix_local_name(path, sizeof path, "epochs");
    const h5fix_file spec = {.n = 64, .c = 1, .h = 4, .w = 4, .k = 8, .layout_attr = "NCHW", .labels = 1, .label_type = H5FIX_UINT16, .n_classes = 7, .pixel = h5fix_pixel_chw}; /* 64 samples: 4 batches of 16 */
    CHECK_OK(h5fix_write(path, &spec));
    uint64_t last = 0;
    CHECK_EQ_U64(count_batches(path, 2, 100, &last), 8);
    CHECK_EQ_U64(last, 1);
    /* 4 * (2^62 + 1) wraps to 4 in 64 bits: the run must not end after one epoch */
    CHECK_EQ_U64(count_batches(path, ((uint64_t)1 << 62) + 1, 12, &last), 12);
    CHECK_EQ_U64(last, 2);
    /* H5PACK_EPOCHS_ENDLESS (the default) has no end; 0 is refused, naming the field */
    CHECK_EQ_U64(count_batches(path, H5PACK_EPOCHS_ENDLESS, 40, &last), 40);
    CHECK_EQ_U64(last, 9);
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    CHECK_EQ_U64(c.epochs, H5PACK_EPOCHS_ENDLESS);
    c.device = H5PACK_DEVICE_CPU, c.epochs = 0;
    h5pack_reader *r = NULL;
    CHECK_EQ_INT(h5pack_open(path, &c, &r), H5PACK_EINVAL);
    CHECK_MSG(strstr(h5pack_last_error(r), "epochs") != NULL, "error: %s", h5pack_last_error(r));
    h5pack_close(r);
    unlink(path);
    return 0;
}
