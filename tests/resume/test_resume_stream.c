/* test_resume_stream.c - exact resume (config.start_epoch / start_batch / start_echo): for each
 * configuration, an uninterrupted run is recorded, then runs started at many positions (every epoch
 * boundary, the last (short) batch, mid-echo, a stride of others) must deliver exactly its suffix, byte
 * for byte (data, labels, indices, boxes, position), through the end of the configured epochs. Also:
 * the stats count only what a resumed run delivered; a resume does not read the skipped chunks; invalid
 * positions are EINVAL with a message; a start at or past `epochs` delivers nothing. CPU backend. */
#include <unistd.h>

#include "check.h"
#include "h5fixture.h"
#include "resume_common.h"

typedef struct resume_case {
    const char *name;
    h5pack_order order;
    size_t batch_size, window, cache_chunks;
    uint32_t world, rank, echo;
    int drop_last, flip, padding, threads;
    h5pack_echo_mode echo_mode;
    h5pack_crop crop;
    uint64_t epochs;
} resume_case;

static const h5fix_file spec = {.n = 203, .c = 3, .h = 12, .w = 10, .k = 8, .labels = 1, .label_type = H5FIX_UINT16, .n_classes = 7, .layout_attr = "NCHW", .pixel = h5fix_pixel_chw}; /* 26 chunks, last short */

static h5pack_config config_of(const resume_case *rc)
{
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    c.device = H5PACK_DEVICE_CPU;
    c.order = rc->order, c.batch_size = rc->batch_size, c.window = rc->window;
    c.cache_bytes = rc->cache_chunks * spec.k * spec.c * spec.h * spec.w;
    c.world = rc->world, c.rank = rc->rank, c.echo = rc->echo, c.echo_mode = rc->echo_mode;
    c.drop_last = rc->drop_last, c.random_flip = rc->flip, c.random_crop_padding = rc->padding;
    c.crop = rc->crop;
    if (rc->crop == H5PACK_CROP_RANDOM_RESIZED)
        c.output_height = 8, c.output_width = 9;
    c.threads = rc->threads, c.prefetch = 3, c.epochs = rc->epochs, c.seed = 1234;
    return c;
}

/* Position p of the uninterrupted run is worth a resume test: epoch boundaries, the first and last
 * batches, mid-echo, and every STRIDE-th delivery. */
static int worth_testing(const run_log *full, size_t p, size_t stride)
{
    const delivery *d = &full->d[p];
    uint64_t bpe = full->info.batches_per_epoch;
    return d->index == 0 || d->index + 1 == bpe || d->index == 1 || (d->echo > 0 && d->index % 3 == 1) ||
           p % stride == 0;
}

/* Resumes at delivery P of FULL and checks the rest of the stream and the stats. */
static void check_resume_at(const char *path, const resume_case *rc, const run_log *full, size_t p)
{
    h5pack_config c = config_of(rc);
    c.start_epoch = full->d[p].epoch, c.start_batch = full->d[p].index, c.start_echo = full->d[p].echo;
    run_log part = record_run(path, &c);
    char what[160];
    snprintf(what, sizeof what, "%s resumed at (%llu, %llu, %u)", rc->name, (unsigned long long)c.start_epoch,
             (unsigned long long)c.start_batch, c.start_echo);
    CHECK_MSG(part.n == full->n - p, "%s: %zu deliveries, the uninterrupted run has %zu from there", what, part.n,
              full->n - p);
    uint64_t samples = 0;
    for (size_t i = 0; i < part.n; i++) {
        check_same_delivery(&full->d[p + i], &part.d[i], what);
        samples += part.d[i].count;
    }
    CHECK_EQ_U64(part.stats.batches, part.n);
    CHECK_EQ_U64(part.stats.samples, samples);
    CHECK_EQ_U64(part.stats.batches_fresh + part.stats.batches_echoed, part.n);
    CHECK_EQ_U64(part.info.order_fingerprint, full->info.order_fingerprint);
    run_log_free(&part);
}

static void check_case(const char *path, const resume_case *rc, size_t stride)
{
    h5pack_config c = config_of(rc);
    run_log full = record_run(path, &c);
    uint64_t bpe = full.info.batches_per_epoch;
    CHECK_EQ_U64(full.n, rc->epochs * bpe * rc->echo);
    size_t tested = 0;
    for (size_t p = 0; p < full.n; p++)
        if (worth_testing(&full, p, stride))
            check_resume_at(path, rc, &full, p), tested++;
    printf("%s: %zu deliveries (%llu batches per epoch), resumed at %zu positions\n", rc->name, full.n,
           (unsigned long long)bpe, tested);
    run_log_free(&full);
}

/* SEQUENTIAL order, batches of 2 chunks, a cache holding the whole file: a run resumed at batch G reads
 * exactly the chunks from G's on (the skipped ones are never read). */
static void check_no_skipped_reads(const char *path)
{
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    c.device = H5PACK_DEVICE_CPU, c.order = H5PACK_ORDER_SEQUENTIAL, c.batch_size = 16, c.epochs = 1, c.threads = 2;
    c.cache_bytes = 64 << 20;
    for (uint64_t g = 0; g < 13; g += 4) {
        c.start_batch = g;
        run_log log = record_run(path, &c);
        CHECK_EQ_U64(log.n, 13 - g);
        CHECK_EQ_U64(log.stats.chunk_misses, 26 - 2 * g); /* chunks 2g .. 25, each read once */
        CHECK_EQ_U64(log.stats.batches_fresh, 13 - g);
        run_log_free(&log);
    }
}

static void check_invalid_positions(const char *path)
{
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    c.device = H5PACK_DEVICE_CPU, c.batch_size = 16, c.echo = 2, c.epochs = 2, c.threads = 1;
    c.cache_bytes = 64 << 20;
    h5pack_reader *r = NULL;
    c.start_batch = 13; /* 203 samples: batches 0 .. 12 */
    CHECK_EQ_INT(h5pack_open(path, &c, &r), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(h5pack_last_error(r), "start_batch = 13");
    CHECK_STR_CONTAINS(h5pack_last_error(r), path);
    h5pack_close(r);
    c.start_batch = 0, c.start_echo = 2;
    CHECK_EQ_INT(h5pack_open(path, &c, &r), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(h5pack_last_error(r), "start_echo = 2");
    h5pack_close(r);
    /* epochs counts from epoch 0: a start at epoch 2 of 2 has nothing left */
    c.start_echo = 0, c.start_epoch = 2;
    CHECK_OK(h5pack_open(path, &c, &r));
    h5pack_batch b = H5PACK_BATCH_INIT;
    CHECK_EQ_INT(h5pack_next(r, &b), H5PACK_END);
    h5pack_stats st = H5PACK_STATS_INIT;
    CHECK_OK(h5pack_stats_get(r, &st));
    CHECK_EQ_U64(st.batches, 0);
    h5pack_close(r);
    /* endless: a resume far into the run starts there */
    c.epochs = H5PACK_EPOCHS_ENDLESS, c.start_epoch = 1000000, c.start_batch = 12, c.start_echo = 1;
    CHECK_OK(h5pack_open(path, &c, &r));
    CHECK_OK(h5pack_next(r, &b));
    CHECK_EQ_U64(b.epoch, 1000000);
    CHECK_EQ_U64(b.index, 12);
    CHECK_EQ_INT(b.echo, 1);
    CHECK_EQ_U64(b.count, 203 - 12 * 16);
    CHECK_OK(h5pack_release(r, &b));
    CHECK_OK(h5pack_next(r, &b));
    CHECK_EQ_U64(b.epoch, 1000001);
    CHECK_EQ_U64(b.index, 0);
    CHECK_EQ_INT(b.echo, 0);
    CHECK_OK(h5pack_release(r, &b));
    h5pack_close(r);
}

int main(int argc, char **argv)
{
    char path[256];
    h5fix_local_name(path, sizeof path, "resume");
    CHECK_OK(h5fix_write(path, &spec));
    size_t stride = argc > 1 ? (size_t)atoi(argv[1]) : 4;
    const resume_case cases[] = {
        {.name = "chunk", .order = H5PACK_ORDER_CHUNK, .batch_size = 16, .window = 4, .cache_chunks = 7, .world = 1,
         .echo = 1, .threads = 3, .epochs = 3},
        {.name = "random-world3-rank1-batch-echo-flip", .order = H5PACK_ORDER_RANDOM, .batch_size = 10,
         .cache_chunks = 5, .world = 3, .rank = 1, .echo = 2, .flip = 1, .threads = 2, .epochs = 3},
        {.name = "sequential-world2-drop-last", .order = H5PACK_ORDER_SEQUENTIAL, .batch_size = 16, .cache_chunks = 4,
         .world = 2, .rank = 1, .echo = 1, .drop_last = 1, .threads = 2, .epochs = 3},
        {.name = "chunk-sample-echo3-rrc-flip", .order = H5PACK_ORDER_CHUNK, .batch_size = 16, .window = 5,
         .cache_chunks = 8, .world = 1, .echo = 3, .echo_mode = H5PACK_ECHO_SAMPLE, .flip = 1,
         .crop = H5PACK_CROP_RANDOM_RESIZED, .threads = 3, .epochs = 2},
        {.name = "random-sample-echo2-padding-world2-drop-last", .order = H5PACK_ORDER_RANDOM, .batch_size = 12,
         .cache_chunks = 6, .world = 2, .rank = 1, .echo = 2, .echo_mode = H5PACK_ECHO_SAMPLE, .drop_last = 1,
         .flip = 1, .padding = 2, .threads = 2, .epochs = 2},
        {.name = "sequential-sample-echo4-short-last", .order = H5PACK_ORDER_SEQUENTIAL, .batch_size = 20,
         .cache_chunks = 5, .world = 1, .echo = 4, .echo_mode = H5PACK_ECHO_SAMPLE, .padding = 1, .threads = 2,
         .epochs = 2},
        {.name = "chunk-batch-echo3-rrc", .order = H5PACK_ORDER_CHUNK, .batch_size = 24, .window = 6,
         .cache_chunks = 9, .world = 2, .rank = 0, .echo = 3, .crop = H5PACK_CROP_RANDOM_RESIZED, .threads = 1,
         .epochs = 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_case(path, &cases[i], stride);
    check_no_skipped_reads(path);
    check_invalid_positions(path);
    unlink(path);
    return 0;
}
