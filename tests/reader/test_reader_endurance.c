/* test_reader_endurance.c - 1,000 open/close cycles and 20 epochs of reading: no thread left behind,
 * resident memory flat (all buffers are allocated at open). Labelled slow: the plain build runs it. */
#include <string.h>
#include <stdio.h>

#include "check.h"
#include "h5fixture.h"
#include "h5pack.h"

static long status_field(const char *key)
{
    char line[256];
    long v = -1;
    size_t n = strlen(key);
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, n))
            v = strtol(line + n, NULL, 10);
    if (f)
        fclose(f);
    return v;
}

int main(void)
{
    char path[256];
    const h5fix_file sp = {.n = 300, .c = 3, .h = 16, .w = 16, .k = 10, .layout_attr = "NCHW", .labels = 1, .label_type = H5FIX_UINT16, .n_classes = 7, .pixel = h5fix_pixel_chw};
    h5fix_local_name(path, sizeof path, "endurance");
    CHECK_OK(h5fix_write(path, &sp));
    if (status_field("Threads:") < 0)
        SKIP_TEST("no /proc/self/status");
    long threads0 = status_field("Threads:");
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    c.device = H5PACK_DEVICE_CPU, c.batch_size = 32, c.threads = 3, c.cache_bytes = 8 * 10 * 768;
    c.window = 4; /* explicit: the default window is the whole file, more than the cache */
    for (int i = 0; i < 1000; i++) {
        h5pack_reader *r = NULL;
        CHECK_OK(h5pack_open(path, &c, &r));
        h5pack_batch b = H5PACK_BATCH_INIT;
        if (i % 2)
            CHECK_OK(h5pack_next(r, &b));
        h5pack_close(r);
    }
    CHECK_EQ_INT(status_field("Threads:"), threads0);
    c.epochs = 20, c.order = H5PACK_ORDER_RANDOM; /* random: evictions and reloads all along */
    h5pack_reader *r = NULL;
    CHECK_OK(h5pack_open(path, &c, &r));
    long rss[20] = {0};
    h5pack_batch b = H5PACK_BATCH_INIT;
    int rc;
    while ((rc = h5pack_next(r, &b)) == H5PACK_OK) {
        uint64_t epoch = b.epoch, last = b.index + 1 == (sp.n + 31) / 32;
        CHECK_OK(h5pack_release(r, &b));
        if (last)
            rss[epoch] = status_field("VmRSS:");
    }
    CHECK_EQ_INT(rc, H5PACK_END);
    h5pack_close(r);
    CHECK_EQ_INT(status_field("Threads:"), threads0);
    printf("RSS after epochs 2 and 20: %ld kB, %ld kB\n", rss[1], rss[19]);
    CHECK_MSG(rss[19] - rss[1] <= 256, "resident memory grew by %ld kB over 18 epochs", rss[19] - rss[1]);
    remove(path);
    printf("reader endurance: all checks passed\n");
    return 0;
}
