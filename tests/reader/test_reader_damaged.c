/* test_reader_damaged.c - damaged metadata through the public API: an error with a message, or a clean
 * read; never a crash or a hang. */
#include <hdf5.h>
#include <string.h>
#include <stdio.h>

#include "check.h"
#include "h5fixture.h"
#include "h5pack.h"

/* HDF5 1.10.8 leaks internal structures (strdup'ed names, cache entries) when it meets damaged metadata;
 * those stacks lie inside libhdf5. LeakSanitizer reads this hook: only this program ignores them, the
 * other reader tests run without it and still catch leaks of ours. */
const char *__lsan_default_suppressions(void);
__attribute__((visibility("default"))) const char *__lsan_default_suppressions(void)
{
    return "leak:libhdf5\n";
}

static const h5fix_file spec_gzip = {.n = 64, .c = 1, .h = 8, .w = 8, .k = 8, .gzip = 6, .layout_attr = "NCHW", .pixel = h5fix_pixel_chw};

static h5pack_config small_config(void)
{
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    c.device = H5PACK_DEVICE_CPU, c.batch_size = 16, c.threads = 2, c.prefetch = 2, c.cache_bytes = 4 * 64;
    return c;
}

/* One flipped byte at several places of the metadata (superblock, object headers, chunk index): an
 * error with a message, or a clean read; never a crash or a hang. */
static void test_flipped_metadata(void)
{
    char path[256];
    h5fix_local_name(path, sizeof path, "flip");
    h5pack_config c = small_config();
    c.epochs = 1;
    for (long off = 0; off < 3000; off += 97) {
        CHECK_OK(h5fix_write(path, &spec_gzip));
        FILE *f = fopen(path, "r+b");
        CHECK(f && fseek(f, off, SEEK_SET) == 0);
        int ch = fgetc(f);
        CHECK(ch != EOF && fseek(f, off, SEEK_SET) == 0);
        fputc(ch ^ 0x5A, f);
        fclose(f);
        h5pack_reader *r = NULL;
        int rc = h5pack_open(path, &c, &r);
        if (rc == 0) {
            h5pack_batch b = H5PACK_BATCH_INIT;
            while ((rc = h5pack_next(r, &b)) == H5PACK_OK)
                CHECK_OK(h5pack_release(r, &b));
        }
        if (rc != H5PACK_END)
            CHECK_MSG(rc < 0 && strlen(h5pack_last_error(r)) > 0, "offset %ld: rc %d without a message", off, rc);
        h5pack_close(r);
    }
    remove(path);
}

int main(void)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    test_flipped_metadata();
    printf("reader damaged: all checks passed\n");
    return 0;
}
