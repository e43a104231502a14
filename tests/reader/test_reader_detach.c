/* test_reader_detach.c - h5pack_detach (include/h5pack.h): a delivered batch's memory handed over to the
 * caller keeps the delivered values through many later batches, its release, the reader's close and
 * h5pack_trim, and the reader goes on delivering exactly what a reader without detaches delivers with the
 * same seed (its ring entry got new memory). Whole images: float32 on the one-pass and the two-pass path,
 * uint8 pass-through, a resizing crop, batch echo, sample echo, a resizing crop with echo, and pass-through
 * with echo (the one case that copies, since the next echo delivers the same bytes); patches of a tiled
 * file when one is given (detach_patches.sh packs it). Every detach but pass-through echo's is zero-copy
 * (copied = 0, the memory is batch.data itself). Refused cleanly: a released batch, the same delivery
 * twice, another reader's batch. The memory is freed while the reader runs, after its close, and from
 * another thread (ThreadSanitizer runs this test).
 *   test_reader_detach [TILED_FILE] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "h5fixture.h"
#include "h5pack.h"

enum { N = 96, C = 3, SIDE = 24, BATCH = 16, MAX_KEPT = 64 };

static char path[256];
static const char *tiled; /* a tiled file (argv[1]) or NULL */

typedef struct kept {
    h5pack_detached *d;
    uint8_t *copy; /* the values at delivery */
    size_t bytes;
} kept;

typedef struct variant {
    const char *name;
    int two_pass;  /* H5PACK_TWO_PASS=1 at open */
    int copies;    /* 1: the detaches of deliveries with echoes still to come copy; 0: none copies */
    h5pack_config cfg;
} variant;

static h5pack_config base_config(void)
{
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    c.device = H5PACK_DEVICE_CPU, c.batch_size = BATCH, c.threads = 2, c.prefetch = 3, c.epochs = 4, c.seed = 11;
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

static h5pack_reader *open_variant(const variant *v)
{
    if (v->two_pass)
        setenv("H5PACK_TWO_PASS", "1", 1); /* (no reader thread runs while the environment changes) */
    h5pack_reader *r = NULL;
    int rc = h5pack_open(tiled && v->cfg.patch_size ? tiled : path, &v->cfg, &r);
    unsetenv("H5PACK_TWO_PASS");
    CHECK_MSG(rc == 0, "%s: open: %s", v->name, h5pack_last_error(r));
    return r;
}

/* Detaches B into K: the memory is the batch's own, zero-copy unless the variant copies. */
static void detach_one(const variant *v, h5pack_reader *r, const h5pack_batch *b, kept *k, int *copies)
{
    int copied = -1;
    h5pack_detached *d = NULL;
    CHECK_MSG(h5pack_detach(r, b, &d, &copied) == H5PACK_OK, "%s: detach: %s", v->name, h5pack_last_error(r));
    CHECK(d && h5pack_detached_data(d) == b->data && h5pack_detached_bytes(d) >= b->bytes);
    CHECK(copied == 0 || copied == 1);
    *copies += copied;
    k->d = d, k->bytes = b->bytes, k->copy = malloc(b->bytes);
    CHECK(k->copy != NULL);
    memcpy(k->copy, b->data, b->bytes);
    h5pack_detached *again = (h5pack_detached *)k; /* the same delivery twice: refused, nothing handed over */
    CHECK_EQ_INT(h5pack_detach(r, b, &again, NULL), H5PACK_ESTATE);
    CHECK(again == NULL);
}

static void check_kept(const variant *v, const kept *keep, size_t n, const char *when)
{
    for (size_t j = 0; j < n; j++)
        if (keep[j].d)
            CHECK_MSG(!memcmp(h5pack_detached_data(keep[j].d), keep[j].copy, keep[j].bytes),
                      "%s: detached delivery %zu changed %s", v->name, j, when);
}

static void free_kept(kept *k)
{
    h5pack_detached_free(k->d);
    free(k->copy);
    k->d = NULL, k->copy = NULL;
}

/* Every delivery of the run chained. With DETACH the deliveries i = 1, 3 (mod 5) are detached into KEEP
 * (every ring slot in turn), and every fourth of those (0, 4, 8, ...) freed again while the reader runs.
 * Without echoes each batch is released only after the next one came (as a binding holding the batch it
 * handed out does), so a detach meets a ring where the consumer holds two slots. */
static uint64_t run(const variant *v, int detach, kept *keep, size_t *n_kept, int *copies)
{
    h5pack_reader *r = open_variant(v);
    uint64_t h = 1469598103934665603ull;
    h5pack_batch b = H5PACK_BATCH_INIT, held = H5PACK_BATCH_INIT;
    int hold = v->cfg.echo <= 1, rc;
    size_t k = 0;
    for (int i = 0; (rc = h5pack_next(r, &b)) == H5PACK_OK; i++) {
        h = digest(h, &b);
        h5pack_batch copy = b;
        if (detach && (i % 5 == 1 || i % 5 == 3) && k < MAX_KEPT)
            detach_one(v, r, &b, &keep[k++], copies);
        if (held.token)
            CHECK_OK(h5pack_release(r, &held));
        if (hold)
            held = b;
        else
            CHECK_OK(h5pack_release(r, &b));
        if (detach && i == 1) { /* released (after its detach): refused, nothing handed over */
            if (hold)
                CHECK_OK(h5pack_release(r, &held));
            h5pack_detached *d = (h5pack_detached *)&copy;
            CHECK_EQ_INT(h5pack_detach(r, hold ? &held : &b, &d, NULL), H5PACK_ESTATE); /* token 0 */
            CHECK(d == NULL);
            d = (h5pack_detached *)&copy;
            CHECK_EQ_INT(h5pack_detach(r, &copy, &d, NULL), H5PACK_ESTATE); /* a stale copy of it */
            CHECK(d == NULL);
            CHECK_STR_CONTAINS(h5pack_last_error(r), "released already");
        }
        char when[64];
        snprintf(when, sizeof when, "at delivery %d", i);
        check_kept(v, keep, k, when); /* still as delivered, however many batches later */
        if (detach && k >= 2 && (k - 2) % 4 == 0 && keep[k - 2].d) /* freed while the reader goes on */
            free_kept(&keep[k - 2]);
    }
    CHECK_MSG(rc == H5PACK_END, "%s: next: %d %s", v->name, rc, h5pack_last_error(r));
    if (held.token)
        CHECK_OK(h5pack_release(r, &held));
    h5pack_close(r);
    *n_kept = k;
    return h;
}

static void *free_in_thread(void *arg)
{
    kept *keep = arg;
    for (size_t j = 0; j < MAX_KEPT; j += 2)
        if (keep[j].d)
            free_kept(&keep[j]);
    return NULL;
}

static void test_variant(const variant *v)
{
    kept keep[MAX_KEPT];
    memset(keep, 0, sizeof keep);
    size_t n = 0, none = 0;
    int copies = 0, unused = 0;
    uint64_t plain = run(v, 0, NULL, &none, &unused);
    uint64_t with = run(v, 1, keep, &n, &copies);
    CHECK_MSG(with == plain, "%s: a reader that detached delivers other batches than one that did not", v->name);
    CHECK_MSG(n > 3, "%s: only %zu detaches", v->name, n);
    h5pack_trim(); /* the kept rings go: the detached memory stays */
    check_kept(v, keep, n, "after close and trim");
    pthread_t t; /* "any thread": half of them from another thread, while this one frees the rest */
    CHECK(pthread_create(&t, NULL, free_in_thread, keep) == 0);
    for (size_t j = 1; j < n; j += 2)
        if (keep[j].d)
            free_kept(&keep[j]);
    pthread_join(t, NULL);
    if (v->copies)
        CHECK_MSG(copies > 0, "%s: no detach said it copied for the echoes to come", v->name);
    else
        CHECK_MSG(copies == 0, "%s: %d detaches copied", v->name, copies);
    printf("ok   %s: %zu detaches (%d with a copy), batches equal to a plain run's\n", v->name, n, copies);
}

/* NULL arguments, a batch of no delivery, another reader's batch. */
static void test_refusals(void)
{
    variant v = {.name = "refusals", .cfg = base_config()};
    h5pack_reader *a = open_variant(&v), *b = open_variant(&v);
    h5pack_batch batch = H5PACK_BATCH_INIT;
    h5pack_detached *d = NULL;
    CHECK_EQ_INT(h5pack_detach(NULL, &batch, &d, NULL), H5PACK_EINVAL);
    CHECK_EQ_INT(h5pack_detach(a, NULL, &d, NULL), H5PACK_EINVAL);
    CHECK_EQ_INT(h5pack_detach(a, &batch, &d, NULL), H5PACK_ESTATE); /* token 0: nothing delivered */
    CHECK(d == NULL);
    CHECK_OK(h5pack_next(a, &batch));
    CHECK_EQ_INT(h5pack_detach(a, &batch, NULL, NULL), H5PACK_EINVAL);
    CHECK_EQ_INT(h5pack_detach(b, &batch, &d, NULL), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(h5pack_last_error(b), "not from this reader");
    CHECK_OK(h5pack_release(a, &batch));
    h5pack_close(a), h5pack_close(b);
    h5pack_detached_free(NULL);
    CHECK(h5pack_detached_data(NULL) == NULL && h5pack_detached_bytes(NULL) == 0);
    printf("ok   refusals: NULL arguments, no delivery, another reader's batch\n");
}

static void image_variants(void)
{
    variant v[8];
    for (int i = 0; i < 8; i++)
        v[i] = (variant){.cfg = base_config()};
    v[0].name = "float32 one-pass";
    v[1].name = "float32 two-pass", v[1].two_pass = 1;
    v[2].name = "uint8 pass-through", v[2].cfg.dtype = H5PACK_DTYPE_UINT8, v[2].cfg.norm = H5PACK_NORM_NONE;
    v[3].name = "random resized crop 16x16 with flip";
    v[3].cfg.crop = H5PACK_CROP_RANDOM_RESIZED, v[3].cfg.output_height = v[3].cfg.output_width = 16;
    v[3].cfg.random_flip = 1;
    v[4].name = "batch echo 3", v[4].cfg.echo = 3;
    v[5].name = "sample echo 2", v[5].cfg.echo = 2, v[5].cfg.echo_mode = H5PACK_ECHO_SAMPLE;
    v[6].name = "random resized crop with batch echo 2";
    v[6].cfg.crop = H5PACK_CROP_RANDOM_RESIZED, v[6].cfg.output_height = v[6].cfg.output_width = 16;
    v[6].cfg.echo = 2;
    v[7].name = "uint8 pass-through with batch echo 2", v[7].copies = 1;
    v[7].cfg.dtype = H5PACK_DTYPE_UINT8, v[7].cfg.norm = H5PACK_NORM_NONE, v[7].cfg.echo = 2;
    for (int i = 0; i < 8; i++)
        test_variant(&v[i]);
}

static void patch_variants(void)
{
    variant v[3];
    for (int i = 0; i < 3; i++) {
        v[i] = (variant){.cfg = base_config()};
        v[i].cfg.patch_size = 20, v[i].cfg.batch_size = 8;
    }
    v[0].name = "patches uint8 NHWC (pass-through)";
    v[0].cfg.dtype = H5PACK_DTYPE_UINT8, v[0].cfg.norm = H5PACK_NORM_NONE, v[0].cfg.output_layout = H5PACK_LAYOUT_NHWC;
    v[1].name = "patches float32 NCHW, flip", v[1].cfg.random_flip = 1;
    v[2].name = "random patches float32";
    v[2].cfg.patch_mode = H5PACK_PATCH_RANDOM, v[2].cfg.patches_per_epoch = 61;
    for (int i = 0; i < 3; i++)
        test_variant(&v[i]);
}

int main(int argc, char **argv)
{
    if (argc > 1) { /* patches of a tiled file */
        tiled = argv[1];
        patch_variants();
        printf("h5pack_detach on patches: all checks passed\n");
        return 0;
    }
    h5fix_local_name(path, sizeof path, "detach");
    h5fix_file f = {.n = N, .c = C, .h = SIDE, .w = SIDE, .k = 8, .layout_attr = "NCHW", .pixel = h5fix_pixel_chw};
    CHECK(h5fix_write(path, &f) == 0);
    test_refusals();
    image_variants();
    remove(path);
    printf("h5pack_detach: all checks passed\n");
    return 0;
}
