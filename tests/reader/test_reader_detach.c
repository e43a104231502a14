/* test_reader_detach.c - h5pack_detach (include/h5pack.h): a delivered batch's memory handed over to the
 * caller keeps the delivered values through many later batches, its release, the reader's close and
 * h5pack_trim, and the reader goes on delivering exactly what a reader without detaches delivers (its ring
 * entry got new memory). For float32, a uint8 pass-through, a resizing crop, batch echo (the later echoes
 * of a detached delivery stay right: copied = 1) and sample echo; refused cleanly for a released batch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "h5fixture.h"
#include "h5pack.h"

enum { N = 96, C = 3, SIDE = 24, BATCH = 16, MAX_KEPT = 64 };

static char path[256];

typedef struct kept {
    h5pack_detached *d;
    uint8_t *copy; /* the values at delivery */
    size_t bytes;
} kept;

static h5pack_config config(int variant)
{
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    c.device = H5PACK_DEVICE_CPU, c.batch_size = BATCH, c.threads = 2, c.prefetch = 3, c.epochs = 2, c.seed = 11;
    c.dtype = H5PACK_DTYPE_FLOAT32;
    if (variant == 1)
        c.dtype = H5PACK_DTYPE_UINT8, c.norm = H5PACK_NORM_NONE; /* pass-through: the input is delivered */
    if (variant == 2)
        c.crop = H5PACK_CROP_RANDOM_RESIZED, c.output_height = c.output_width = 16, c.random_flip = 1;
    if (variant == 3)
        c.echo = 3; /* batch echo: every delivery of a batch shares its slot */
    if (variant == 4)
        c.echo = 2, c.echo_mode = H5PACK_ECHO_SAMPLE;
    if (variant == 5)
        c.dtype = H5PACK_DTYPE_UINT8, c.norm = H5PACK_NORM_NONE, c.echo = 2; /* pass-through echoes */
    return c;
}

/* FNV-1a of one delivery (indices and data), chained into H. */
static uint64_t digest(uint64_t h, const h5pack_batch *b)
{
    const uint8_t *parts[2] = {(const uint8_t *)b->indices, b->data};
    size_t lens[2] = {b->count * sizeof *b->indices, b->bytes};
    for (int p = 0; p < 2; p++)
        for (size_t i = 0; i < lens[p]; i++)
            h = (h ^ parts[p][i]) * 1099511628211ull;
    return h;
}

/* Every delivery of the run chained; with DETACH every third delivery is detached and kept in KEEP. */
static uint64_t run(int variant, int detach, kept *keep, size_t *n_kept, int *copies)
{
    h5pack_config c = config(variant);
    h5pack_reader *r = NULL;
    int rc = h5pack_open(path, &c, &r);
    CHECK_MSG(rc == 0, "variant %d: open: %s", variant, h5pack_last_error(r));
    uint64_t h = 1469598103934665603ull;
    h5pack_batch b = H5PACK_BATCH_INIT;
    size_t k = 0;
    for (int i = 0; (rc = h5pack_next(r, &b)) == H5PACK_OK; i++) {
        h = digest(h, &b);
        if (detach && i % 3 == 1 && k < MAX_KEPT) {
            int copied = -1;
            h5pack_detached *d = NULL;
            CHECK_MSG(h5pack_detach(r, &b, &d, &copied) == H5PACK_OK, "variant %d: detach: %s", variant,
                      h5pack_last_error(r));
            CHECK(d && h5pack_detached_data(d) == b.data && h5pack_detached_bytes(d) >= b.bytes);
            CHECK(copied == 0 || copied == 1);
            *copies += copied;
            keep[k].d = d, keep[k].bytes = b.bytes, keep[k].copy = malloc(b.bytes);
            memcpy(keep[k].copy, b.data, b.bytes);
            k++;
        }
        CHECK_OK(h5pack_release(r, &b));
        if (detach && i == 0) { /* a released batch: refused, nothing handed over */
            h5pack_batch stale = b;
            h5pack_detached *d = (h5pack_detached *)&stale;
            CHECK_EQ_INT(h5pack_detach(r, &stale, &d, NULL), H5PACK_ESTATE);
            CHECK(d == NULL);
        }
        for (size_t j = 0; j < k; j++) /* still as delivered, however many batches later */
            CHECK_MSG(!memcmp(h5pack_detached_data(keep[j].d), keep[j].copy, keep[j].bytes),
                      "variant %d: detached delivery %zu changed at delivery %d", variant, j, i);
    }
    CHECK_EQ_INT(rc, H5PACK_END);
    h5pack_close(r);
    *n_kept = k;
    return h;
}

static void test_variant(int variant)
{
    kept keep[MAX_KEPT];
    size_t n = 0, none = 0;
    int copies = 0, unused = 0;
    uint64_t plain = run(variant, 0, NULL, &none, &unused);
    uint64_t with = run(variant, 1, keep, &n, &copies);
    CHECK_MSG(with == plain, "variant %d: a reader that detached delivers other batches", variant);
    CHECK_MSG(n > 3, "variant %d: %zu detaches", variant, n);
    h5pack_trim(); /* the kept rings go: the detached memory stays */
    for (size_t j = 0; j < n; j++) {
        CHECK_MSG(!memcmp(h5pack_detached_data(keep[j].d), keep[j].copy, keep[j].bytes),
                  "variant %d: detached delivery %zu changed after close and trim", variant, j);
        h5pack_detached_free(keep[j].d);
        free(keep[j].copy);
    }
    if (variant == 3 || variant == 5) /* some detaches were of deliveries whose echoes were still to come */
        CHECK_MSG(copies > 0, "variant %d: no detach said it copied for later echoes", variant);
    else if (variant != 4) /* (sample echo may copy: the reader keeps what a later delivery might read) */
        CHECK_MSG(copies == 0, "variant %d: %d detaches copied without echoes to come", variant, copies);
    printf("variant %d: %zu detaches (%d with a copy for later echoes), batches equal to a plain run's\n", variant, n,
           copies);
}

int main(void)
{
    h5fix_local_name(path, sizeof path, "detach");
    h5fix_file f = {.n = N, .c = C, .h = SIDE, .w = SIDE, .k = 8, .layout_attr = "NCHW", .pixel = h5fix_pixel_chw};
    CHECK(h5fix_write(path, &f) == 0);
    for (int v = 0; v <= 5; v++)
        test_variant(v);
    h5pack_detached_free(NULL);
    CHECK(h5pack_detached_data(NULL) == NULL && h5pack_detached_bytes(NULL) == 0);
    CHECK_EQ_INT(h5pack_detach(NULL, NULL, NULL, NULL), H5PACK_EINVAL);
    remove(path);
    printf("h5pack_detach: all checks passed\n");
    return 0;
}
