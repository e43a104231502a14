/* test_resume_world.c - the global batch, not its split, decides the stream (order.h), and a checkpoint
 * resumes in any world (config.start_sample, docs/reader.md "Exact resume"). A job is every rank's run
 * recorded; its global deliveries are the ranks' deliveries at the same place, concatenated in rank
 * order. For each configuration (orders, batch and sample echo, crops, flips, padding, drop_last):
 *   - jobs of 1 x 24, 2 x 12, 3 x 8 and 4 x 6 deliver the same global batches, byte for byte (data,
 *     labels, indices, crop boxes), but for the padding of each epoch's last batch, which follows the
 *     real samples;
 *   - resumed at the first batch, mid-chunk, mid-echo and the last batch of an epoch with the same global
 *     batch split otherwise: the uninterrupted job's suffix;
 *   - with another global batch (5 x 4, 6 x 3, 2 x 7): every sample of that epoch delivered once
 *     (fresh) across the change, padding aside; the next epoch is the new job's own;
 *   - a job resumed that way, resumed again mid-way with its global batch (in any split): its suffix.
 * And start_sample's errors: past the epoch, together with start_batch; nothing left: the next epoch. */
#include <unistd.h>

#include "check.h"
#include "h5fixture.h"
#include "resume_common.h"

typedef struct world_case {
    const char *name;
    h5pack_order order;
    size_t window;
    uint32_t echo;
    h5pack_echo_mode echo_mode;
    h5pack_crop crop;
    int flip, padding, drop_last;
} world_case;

/* 997 images of 1 x 6 x 6 in chunks of 8 (125 chunks, the last short): 41 global batches of 24 and 13 */
static const h5fix_file spec = {.n = 997, .c = 1, .h = 6, .w = 6, .k = 8, .labels = 1, .label_type = H5FIX_UINT16,
                                .n_classes = 10, .layout_attr = "NCHW", .pixel = h5fix_pixel_chw};
#define EPOCHS 2

typedef struct split {
    uint32_t world;
    size_t batch;
} split;

typedef struct start_at {
    uint64_t epoch, sample;
    uint32_t echo;
} start_at;

static h5pack_config config_of(const world_case *wc, split s, uint32_t rank, start_at at)
{
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    c.device = H5PACK_DEVICE_CPU, c.threads = 2, c.prefetch = 3, c.seed = 4321, c.epochs = EPOCHS;
    c.order = wc->order, c.window = wc->window, c.cache_bytes = (size_t)64 << 20;
    c.world = s.world, c.rank = rank, c.batch_size = s.batch;
    c.echo = wc->echo, c.echo_mode = wc->echo_mode, c.crop = wc->crop;
    if (wc->crop == H5PACK_CROP_RANDOM_RESIZED)
        c.output_height = 5, c.output_width = 4;
    c.random_flip = wc->flip, c.random_crop_padding = wc->padding, c.drop_last = wc->drop_last;
    c.start_epoch = at.epoch, c.start_sample = at.sample, c.start_echo = at.echo;
    return c;
}

/* Appends N bytes of SRC to *DST (of *LEN bytes). */
static void append(void *dst_ptr, size_t *len, const void *src, size_t n)
{
    uint8_t **dst = dst_ptr;
    *dst = realloc(*dst, *len + n + 1);
    CHECK(*dst != NULL);
    memcpy(*dst + *len, src, n);
    *len += n;
}

/* The job of split S from AT: the global deliveries. */
static run_log job(const char *path, const world_case *wc, split s, start_at at)
{
    run_log ranks[8] = {{0}}, out = {0};
    for (uint32_t r = 0; r < s.world; r++) {
        h5pack_config c = config_of(wc, s, r, at);
        ranks[r] = record_run(path, &c);
        CHECK_MSG(ranks[r].n == ranks[0].n, "%s %ux%zu: rank %u delivers %zu, rank 0 %zu", wc->name, s.world, s.batch,
                  r, ranks[r].n, ranks[0].n);
    }
    out.info = ranks[0].info;
    out.n = out.cap = ranks[0].n;
    out.d = calloc(out.n ? out.n : 1, sizeof *out.d);
    for (size_t i = 0; i < out.n; i++) {
        delivery *g = &out.d[i];
        *g = (delivery){.epoch = ranks[0].d[i].epoch, .index = ranks[0].d[i].index, .echo = ranks[0].d[i].echo,
                        .height = ranks[0].d[i].height, .width = ranks[0].d[i].width};
        size_t nb = 0, nl = 0, ni = 0, nx = 0;
        for (uint32_t r = 0; r < s.world; r++) {
            const delivery *d = &ranks[r].d[i];
            CHECK_MSG(d->epoch == g->epoch && d->index == g->index && d->echo == g->echo,
                      "%s: rank %u out of step at delivery %zu", wc->name, r, i);
            append(&g->data, &nb, d->data, d->bytes);
            append(&g->labels, &nl, d->labels, d->count * sizeof *d->labels);
            append(&g->indices, &ni, d->indices, d->count * sizeof *d->indices);
            append(&g->boxes, &nx, d->boxes, d->count * sizeof *d->boxes);
            g->count += d->count, g->bytes += d->bytes;
        }
    }
    for (uint32_t r = 0; r < s.world; r++)
        run_log_free(&ranks[r]);
    return out;
}

/* Real samples of global delivery D (the padding of an epoch's last batch excluded). */
static size_t real_count(const world_case *wc, const delivery *d, uint64_t bpe)
{
    if (wc->drop_last || d->index + 1 < bpe)
        return d->count;
    return spec.n - (size_t)(bpe - 1) * 24 > d->count ? d->count : spec.n - (size_t)(bpe - 1) * 24;
}

/* A and B deliver the same real samples (the first N of each) the same way. */
static void check_same_real(const delivery *a, const delivery *b, size_t n, const char *what)
{
    CHECK_MSG(a->epoch == b->epoch && a->index == b->index && a->echo == b->echo, "%s: (%llu, %llu, %u) vs "
              "(%llu, %llu, %u)", what, (unsigned long long)a->epoch, (unsigned long long)a->index, a->echo,
              (unsigned long long)b->epoch, (unsigned long long)b->index, b->echo);
    size_t per = a->count ? a->bytes / a->count : 0;
    CHECK_MSG(n <= a->count && n <= b->count && (!b->count || b->bytes / b->count == per),
              "%s (epoch %llu batch %llu): %zu real samples, counts %zu and %zu", what, (unsigned long long)a->epoch,
              (unsigned long long)a->index, n, a->count, b->count);
    CHECK_MSG(same_bytes(a->indices, b->indices, n * sizeof *a->indices) &&
                  same_bytes(a->labels, b->labels, n * sizeof *a->labels) &&
                  same_bytes(a->boxes, b->boxes, n * sizeof *a->boxes) && same_bytes(a->data, b->data, n * per),
              "%s (epoch %llu batch %llu echo %u): the global batches differ", what, (unsigned long long)a->epoch,
              (unsigned long long)a->index, a->echo);
}

/* JOB delivers FULL's deliveries from FROM on (their real samples). */
static void check_suffix(const world_case *wc, const run_log *full, size_t from, const run_log *job_log,
                         const char *what)
{
    CHECK_MSG(job_log->n == full->n - from, "%s: %zu deliveries, the uninterrupted job has %zu from there", what,
              job_log->n, full->n - from);
    uint64_t bpe = full->info.batches_per_epoch;
    for (size_t i = 0; i < job_log->n && i + from < full->n; i++)
        check_same_real(&full->d[from + i], &job_log->d[i], real_count(wc, &full->d[from + i], bpe), what);
}

static const split base = {4, 6};

/* The position a checkpoint saved before delivery P of FULL names, and where a job with another global
 * batch starts (a batch echoed part-way: its remaining echoes are not delivered). */
static start_at position_of(const run_log *full, size_t p, int same_global_batch)
{
    const delivery *d = &full->d[p];
    start_at at = {d->epoch, d->index * 24, d->echo};
    if (!same_global_batch && d->echo > 0)
        at.sample += 24, at.echo = 0;
    if (at.sample > spec.n)
        at.sample = spec.n;
    return at;
}

/* Each sample once in epoch E across the change: FULL's fresh deliveries before P, then RESUMED's of
 * epoch E, padding aside (and with drop_last, fewer than the new global batch G dropped). Under sample
 * echo a delivery mixes fresh batches: there, each sample at least once. */
static void check_each_once(const world_case *wc, const run_log *full, size_t p, const run_log *resumed, uint64_t e,
                            uint64_t g, const char *what)
{
    int sample_echo = wc->echo_mode == H5PACK_ECHO_SAMPLE;
    unsigned *seen = calloc(spec.n, sizeof *seen);
    for (int part = 0; part < 2; part++) {
        const run_log *log = part ? resumed : full;
        for (size_t i = 0; i < (part ? log->n : p); i++) {
            const delivery *d = &log->d[i];
            if (d->epoch == e && (d->echo == 0 || sample_echo))
                for (size_t k = 0; k < d->count; k++)
                    seen[d->indices[k]]++;
        }
    }
    size_t missing = 0, repeats = 0;
    for (size_t s = 0; s < spec.n; s++)
        missing += seen[s] == 0, repeats += seen[s] > 1 ? seen[s] - 1 : 0;
    if (sample_echo)
        CHECK_MSG(missing < (wc->drop_last ? g : 1), "%s: %zu samples never delivered", what, missing);
    else if (wc->drop_last)
        CHECK_MSG(repeats == 0 && missing < g, "%s: %zu samples twice, %zu never", what, repeats, missing);
    else /* the padding of the last batch: fewer than the world */
        CHECK_MSG(missing == 0 && repeats < 6, "%s: %zu samples never delivered, %zu repeats", what, missing, repeats);
    free(seen);
}

/* Resumes FULL (the 4 x 6 job) before delivery P with S; checks what it must deliver. */
static void check_resume(const char *path, const world_case *wc, const run_log *full, size_t p, split s)
{
    int same = s.world * s.batch == 24;
    start_at at = position_of(full, p, same);
    run_log part = job(path, wc, s, at);
    char what[192];
    snprintf(what, sizeof what, "%s: %ux%zu resumed before delivery %zu (epoch %llu, sample %llu, echo %u)", wc->name,
             s.world, s.batch, p, (unsigned long long)at.epoch, (unsigned long long)at.sample, at.echo);
    if (same) {
        check_suffix(wc, full, p, &part, what);
    } else {
        check_each_once(wc, full, p, &part, at.epoch, (uint64_t)s.world * s.batch, what);
        run_log own = job(path, wc, s, (start_at){at.epoch + 1, 0, 0}); /* the next epoch: the new job's */
        size_t first_next = 0;
        while (first_next < part.n && part.d[first_next].epoch == at.epoch)
            first_next++;
        CHECK_MSG(part.n - first_next == own.n, "%s: %zu deliveries after the epoch, the new job's own has %zu", what,
                  part.n - first_next, own.n);
        for (size_t i = 0; i < own.n && first_next + i < part.n; i++)
            check_same_delivery(&own.d[i], &part.d[first_next + i], what);
        if (first_next > 2) { /* resumed again mid-way, with its global batch split otherwise */
            const delivery *d = &part.d[2];
            uint64_t s0 = part.d[0].index;
            start_at again = {d->epoch, at.sample + (d->index - s0) * s.world * s.batch, d->echo};
            split other = s.world % 2 == 0 ? (split){s.world / 2, s.batch * 2} : s;
            run_log rest = job(path, wc, other, again);
            snprintf(what + strlen(what), sizeof what - strlen(what), ", then %ux%zu", other.world, other.batch);
            CHECK_MSG(rest.n == part.n - 2, "%s: %zu deliveries, %zu expected", what, rest.n, part.n - 2);
            for (size_t i = 0; i < rest.n && i + 2 < part.n; i++) { /* the last batch's padding may differ */
                const delivery *a = &part.d[i + 2];
                check_same_real(a, &rest.d[i], a->count < rest.d[i].count ? a->count : rest.d[i].count, what);
            }
            run_log_free(&rest);
        }
        run_log_free(&own);
    }
    run_log_free(&part);
}

static void check_case(const char *path, const world_case *wc)
{
    run_log full = job(path, wc, base, (start_at){0, 0, 0});
    uint64_t bpe = full.info.batches_per_epoch;
    CHECK_EQ_U64(full.n, EPOCHS * bpe * wc->echo);
    const split same[] = {{1, 24}, {2, 12}, {3, 8}};
    for (size_t k = 0; k < 3; k++) { /* the split does not change the stream */
        run_log other = job(path, wc, same[k], (start_at){0, 0, 0});
        char what[128];
        snprintf(what, sizeof what, "%s: %ux%zu vs 4x6", wc->name, same[k].world, same[k].batch);
        check_suffix(wc, &full, 0, &other, what);
        run_log_free(&other);
    }
    /* first batch, mid-chunk (batch 3 of 3-chunk batches), mid-echo, last batch; in epoch 1 too */
    const uint64_t E = wc->echo;
    const size_t at[] = {0, 3 * E, 5 * E + (E > 1), (bpe - 1) * E, (bpe + 7) * E + E - 1, (2 * bpe - 1) * E};
    const split splits[] = {{2, 12}, {1, 24}, {5, 4}, {6, 3}, {2, 7}};
    for (size_t i = 0; i < sizeof at / sizeof *at; i++)
        for (size_t k = 0; k < sizeof splits / sizeof *splits; k++)
            check_resume(path, wc, &full, at[i], splits[k]);
    printf("%s: %zu global deliveries, 4 splits of 24 alike, resumed at %zu positions in 5 splits\n", wc->name, full.n,
           sizeof at / sizeof *at);
    run_log_free(&full);
}

static void check_errors(const char *path)
{
    world_case wc = {.name = "errors", .order = H5PACK_ORDER_CHUNK, .window = 4, .echo = 1};
    h5pack_config c = config_of(&wc, base, 1, (start_at){0, spec.n + 1, 0});
    h5pack_reader *r = NULL;
    CHECK_EQ_INT(h5pack_open(path, &c, &r), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(h5pack_last_error(r), "start_sample = 998");
    h5pack_close(r);
    c.start_sample = 24, c.start_batch = 1;
    CHECK_EQ_INT(h5pack_open(path, &c, &r), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(h5pack_last_error(r), "start_batch and start_sample");
    h5pack_close(r);
    /* nothing left of epoch 0 (all of it, or with drop_last less than a global batch): epoch 1 from its start */
    for (int drop = 0; drop <= 1; drop++) {
        c = config_of(&wc, base, 1, (start_at){0, drop ? spec.n - 20 : spec.n, 0});
        c.drop_last = drop;
        CHECK_OK(h5pack_open(path, &c, &r));
        h5pack_batch b = H5PACK_BATCH_INIT;
        CHECK_OK(h5pack_next(r, &b));
        CHECK_EQ_U64(b.epoch, 1);
        CHECK_EQ_U64(b.index, 0);
        CHECK_OK(h5pack_release(r, &b));
        h5pack_close(r);
    }
}

int main(void)
{
    char path[256];
    h5fix_local_name(path, sizeof path, "resume_world");
    CHECK_OK(h5fix_write(path, &spec));
    const world_case cases[] = {
        {.name = "chunk-flip-padding", .order = H5PACK_ORDER_CHUNK, .window = 6, .echo = 1, .flip = 1, .padding = 1},
        {.name = "chunk-batch-echo2-rrc", .order = H5PACK_ORDER_CHUNK, .window = 9, .echo = 2,
         .crop = H5PACK_CROP_RANDOM_RESIZED, .flip = 1},
        {.name = "chunk-sample-echo3-flip", .order = H5PACK_ORDER_CHUNK, .window = 5, .echo = 3,
         .echo_mode = H5PACK_ECHO_SAMPLE, .flip = 1},
        {.name = "random-drop-last", .order = H5PACK_ORDER_RANDOM, .echo = 1, .drop_last = 1, .padding = 2},
        {.name = "sequential-sample-echo2-drop-last", .order = H5PACK_ORDER_SEQUENTIAL, .echo = 2,
         .echo_mode = H5PACK_ECHO_SAMPLE, .drop_last = 1, .flip = 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_case(path, &cases[i]);
    check_errors(path);
    unlink(path);
    return 0;
}
