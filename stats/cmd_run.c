/* cmd_run.c - `h5pack-stats run FILE ...`: streams the file through the real reader (public API only)
 * and reports per epoch and in total what it did, plus advice. --timeline is the library's own timeline
 * (h5pack_config.timeline_path, docs/stats.md "Timeline"): one CSV format for this tool and any training run.
 * Every option that sets a reader parameter goes through the option map (option_map.c); the
 * augmentation and echo-mode options are named as the Python Loader's arguments. A failed library call
 * ends the run with its message and no figures. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "advice.h"
#include "args.h"
#include "clock.h"
#include "commands.h"
#include "cpus.h"
#include "json.h"
#include "param_table.h"

typedef struct run_opts {
    const char *file;
    h5pack_config cfg;
    int json;
    double step_ms;
    option_given given; /* which options of the map were given (rules between them ask) */
} run_opts;

/* Prints the library's message for call CALL that failed with RC on R (its last error, else the code's
 * text), naming the file once; returns 2, the exit status of a failed run. */
static int run_failed(const run_opts *o, const h5pack_reader *r, const char *call, int rc)
{
    const char *detail = h5pack_last_error(r);
    if (!detail || !*detail)
        detail = h5pack_strerror(rc);
    int named = strstr(detail, o->file) != NULL; /* the reader's detail usually names the file already */
    fprintf(stderr, "h5pack-stats run: %s%s%s%s%s\n", named ? "" : o->file, named ? "" : ": ", call ? call : "",
            call ? ": " : "", detail);
    return 2;
}

/* Counters over a span of the run (an epoch, the whole run). */
typedef struct span {
    uint64_t epoch;
    double seconds;
    h5pack_stats d; /* differences of the counters over the span */
} span;

static void sleep_ms(double ms)
{
    struct timespec ts = {(time_t)(ms / 1000.0), (long)((ms - 1000.0 * (double)(time_t)(ms / 1000.0)) * 1e6)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static h5pack_stats stats_diff(const h5pack_stats *b, const h5pack_stats *a)
{
    h5pack_stats d = *b;
    d.samples -= a->samples, d.batches -= a->batches, d.batches_fresh -= a->batches_fresh;
    d.batches_echoed -= a->batches_echoed, d.chunk_hits -= a->chunk_hits, d.chunk_misses -= a->chunk_misses;
    d.bytes_read -= a->bytes_read, d.bytes_inflated -= a->bytes_inflated, d.bytes_needed -= a->bytes_needed;
    d.stall_s -= a->stall_s, d.elapsed_s -= a->elapsed_s;
    uint64_t uses = d.chunk_hits + d.chunk_misses;
    d.hit_rate = uses ? (double)d.chunk_hits / (double)uses : 0.0;
    d.read_amplification = d.bytes_needed ? (double)d.bytes_read / (double)d.bytes_needed : 0.0;
    return d;
}

static int parse_run(int argc, char **argv, run_opts *o)
{
    memset(o, 0, sizeof *o);
    h5pack_config defaults = H5PACK_CONFIG_DEFAULTS;
    o->cfg = defaults;
    o->cfg.epochs = 1;
    o->cfg.timeline_interval_s = 0.1; /* a short run: finer than the library's 1 s */
    /* timeline_path stays NULL without --timeline: $H5PACK_TIMELINE applies as for any reader */
    for (int i = 0; i < argc; i++) {
        int rc = parse_reader_option("run", OPTION_RUN, argc, argv, &i, &o->cfg, &o->given);
        if (rc < 0)
            return 1;
        if (rc > 0)
            continue;
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage_run(stdout);
            return -1;
        } else if (strcmp(a, "--json") == 0) {
            o->json = 1;
        } else if (strcmp(a, "--step-ms") == 0 && i + 1 < argc) {
            if (parse_double(argv[++i], 0, 3.6e6, &o->step_ms))
                return report_bad_value("run", "--step-ms", argv[i], "milliseconds, 0 .. 3600000"), 1;
        } else if (a[0] == '-' || o->file) {
            return usage_error("run", a);
        } else {
            o->file = a;
        }
    }
    if (!o->file)
        return usage_error("run", NULL);
    return check_reader_options("run", &o->cfg) || check_augment_options("run", &o->cfg, &o->given) ? 1 : 0;
}

typedef struct run_state {
    h5pack_reader *r;
    span *epochs;
    size_t n_epochs, cap;
    h5pack_stats epoch_start;
    double epoch_t0, t0;
    uint64_t cur_epoch;
} run_state;

static int close_epoch(run_state *s, const h5pack_stats *now_st, double now)
{
    if (s->n_epochs == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        span *e = realloc(s->epochs, cap * sizeof *e);
        if (!e)
            return -1;
        s->epochs = e, s->cap = cap;
    }
    span *e = &s->epochs[s->n_epochs++];
    e->epoch = s->cur_epoch;
    e->seconds = now - s->epoch_t0;
    e->d = stats_diff(now_st, &s->epoch_start);
    s->epoch_start = *now_st;
    s->epoch_t0 = now;
    return 0;
}

/* The consumer loop: next, (pretend to) train, release; epoch boundaries on the way. Counters are sampled
 * after each release, so a boundary splits them between two batches. */
static int consume(run_state *s, const run_opts *o)
{
    h5pack_batch b = H5PACK_BATCH_INIT;
    h5pack_stats st = H5PACK_STATS_INIT;
    int rc;
    s->t0 = s->epoch_t0 = h5pack_clock_s();
    if ((rc = h5pack_stats_get(s->r, &st)) < 0)
        return run_failed(o, s->r, "h5pack_stats_get", rc);
    s->epoch_start = st;
    double last_release = s->t0;
    while ((rc = h5pack_next(s->r, &b)) == H5PACK_OK) {
        if (b.epoch != s->cur_epoch) {
            if (close_epoch(s, &st, last_release)) {
                fprintf(stderr, "h5pack-stats run: %s: out of memory for the per-epoch figures\n", o->file);
                return 2;
            }
            s->cur_epoch = b.epoch;
        }
        if (o->step_ms > 0)
            sleep_ms(o->step_ms);
        if ((rc = h5pack_release(s->r, &b)) < 0)
            return run_failed(o, s->r, "h5pack_release", rc);
        if ((rc = h5pack_stats_get(s->r, &st)) < 0)
            return run_failed(o, s->r, "h5pack_stats_get", rc);
        last_release = h5pack_clock_s();
    }
    return rc == H5PACK_END ? 0 : run_failed(o, s->r, NULL, rc);
}

static void print_span_text(const char *label, const span *e)
{
    char rd[32];
    h5pack_format_bytes(e->d.bytes_read, rd, sizeof rd);
    double s = e->seconds > 0 ? e->seconds : 1e-9;
    printf("%-6s %9llu %7llu/%-7llu %9llu %9llu %8.4f %11s %7.3f %11.1f %9.1f %7.1f%%\n", label,
           (unsigned long long)e->d.samples, (unsigned long long)e->d.batches_fresh,
           (unsigned long long)e->d.batches_echoed, (unsigned long long)e->d.chunk_hits,
           (unsigned long long)e->d.chunk_misses, e->d.hit_rate, rd, e->d.read_amplification,
           (double)e->d.samples / s, (double)e->d.bytes_read / 1e6 / s, 100.0 * e->d.stall_s / s);
}

/* The augmentation and echo mode, one line (nothing when none of them is in use). */
static void print_augment_text(const run_opts *o, const h5pack_info *in)
{
    const h5pack_config *c = &o->cfg;
    if (in->crop == H5PACK_CROP_NONE && !c->random_flip && !c->random_crop_padding && c->echo_mode == H5PACK_ECHO_BATCH)
        return;
    printf("        crop %s", param_enum_name("crop", (int)in->crop));
    if (in->crop != H5PACK_CROP_NONE)
        printf(" to %ux%u", in->output_height, in->output_width);
    if (in->crop == H5PACK_CROP_RANDOM_RESIZED)
        printf(" (scale %g..%g, ratio %g..%g)", c->scale_min, c->scale_max, c->ratio_min, c->ratio_max);
    if (in->crop == H5PACK_CROP_CENTER)
        printf(" (center ratio %g)", c->center_ratio);
    printf(", flip %s, crop padding %d, echo mode %s", c->random_flip ? "on" : "off", c->random_crop_padding,
           param_enum_name("echo_mode", (int)in->echo_mode));
    if (in->echo_pool_bytes) {
        char pool[32];
        h5pack_format_bytes(in->echo_pool_bytes, pool, sizeof pool);
        printf(" (pool %s)", pool);
    }
    printf("\n");
}

/* The reader lines for patches of a tiled file (docs/patches.md). */
static void print_patch_reader(const run_opts *o, const h5pack_info *in, const char *tile, const char *cache)
{
    printf("reader: %llu images in tiles of %u (%s each, %llu tiles, %s, %s path), %s patches of %ux%ux%u, "
           "%llu per epoch\n", (unsigned long long)in->n_samples, in->tile, tile, (unsigned long long)in->n_chunks,
           in->compressed ? "gzip" : "uncompressed", in->fast_path ? "fast (mapped, no HDF5)" : "HDF5",
           param_enum_name("patch_mode", (int)o->cfg.patch_mode), in->channels, in->height, in->width,
           (unsigned long long)in->samples_per_epoch);
    printf("        batch %zu, cache %s = %zu tiles, %d threads, device %s, rank %u of %u\n", o->cfg.batch_size,
           cache, in->cache_chunks, in->threads, in->device_name, o->cfg.rank, o->cfg.world);
}

static void print_text(const run_opts *o, const h5pack_info *in, const run_state *s, const span *total)
{
    char cb[32], cache[32];
    h5pack_format_bytes(in->chunk_bytes, cb, sizeof cb);
    h5pack_format_bytes(o->cfg.cache_bytes, cache, sizeof cache);
    printf("file: %s\n", o->file);
    const char *timeline = h5pack_timeline_path(s->r);
    if (timeline) /* with --world > 1 the rank is in its name: say which file plot should read */
        printf("timeline: %s\n", timeline);
    if (in->patch_size) {
        print_patch_reader(o, in, cb, cache);
    } else {
        printf("reader: %llu samples of %ux%ux%u %s, %llu chunks of %llu images (%s), %s, %s path\n",
               (unsigned long long)in->n_samples, in->channels, in->height, in->width,
               in->input_layout == H5PACK_LAYOUT_NHWC ? "NHWC" : "NCHW", (unsigned long long)in->n_chunks,
               (unsigned long long)in->samples_per_chunk, cb, in->compressed ? "gzip" : "uncompressed",
               in->fast_path ? "fast (outside HDF5's lock)" : "HDF5");
        char window[48] = ""; /* only the chunk order has one */
        if (o->cfg.order == H5PACK_ORDER_CHUNK)
            snprintf(window, sizeof window, ", window %zu", in->window);
        printf("        order %s, batch %zu, cache %s = %zu chunks%s, echo %u, %d threads, device %s, rank %u of %u\n",
               order_name(o->cfg.order), o->cfg.batch_size, cache, in->cache_chunks, window, o->cfg.echo, in->threads,
               in->device_name, o->cfg.rank, o->cfg.world);
    }
    print_augment_text(o, in);
    printf("        order fingerprint %016llx\n", (unsigned long long)in->order_fingerprint);
    printf("\n%-6s %9s %15s %9s %9s %8s %11s %7s %11s %9s %8s\n", "epoch", "samples", "batches f/e", "hits",
           "misses", "hit_rate", "read", "amplif", "samples/s", "MB/s", "waited");
    for (size_t i = 0; i < s->n_epochs; i++) {
        char label[24];
        snprintf(label, sizeof label, "%llu", (unsigned long long)s->epochs[i].epoch);
        print_span_text(label, &s->epochs[i]);
    }
    print_span_text("total", total);
}

static void json_span(json_out *j, const span *e)
{
    double s = e->seconds > 0 ? e->seconds : 1e-9;
    json_u64(j, "samples", e->d.samples);
    json_u64(j, "batches", e->d.batches);
    json_u64(j, "batches_fresh", e->d.batches_fresh);
    json_u64(j, "batches_echoed", e->d.batches_echoed);
    json_u64(j, "chunk_hits", e->d.chunk_hits);
    json_u64(j, "chunk_misses", e->d.chunk_misses);
    json_double(j, "hit_rate", e->d.hit_rate);
    json_u64(j, "bytes_read", e->d.bytes_read);
    json_u64(j, "bytes_needed", e->d.bytes_needed);
    json_u64(j, "bytes_inflated", e->d.bytes_inflated);
    json_double(j, "read_amplification", e->d.read_amplification);
    json_double(j, "seconds", e->seconds);
    json_double(j, "samples_per_s", (double)e->d.samples / s);
    json_double(j, "mb_per_s", (double)e->d.bytes_read / 1e6 / s);
    json_double(j, "stall_s", e->d.stall_s);
    json_double(j, "stall_fraction", e->d.stall_s / s);
}

static void print_json(const run_opts *o, const h5pack_info *in, const run_state *s, const span *total,
                       const advice *adv)
{
    json_out j;
    json_init(&j, stdout);
    json_object_begin(&j, NULL);
    json_string(&j, "file", o->file);
    const char *timeline = h5pack_timeline_path(s->r);
    if (timeline) /* the file written (with --world > 1 the rank is in its name), as the text says */
        json_string(&j, "timeline", timeline);
    json_span(&j, total);
    json_object_begin(&j, "config");
    json_string(&j, "order", order_name(o->cfg.order));
    json_u64(&j, "batch_size", o->cfg.batch_size);
    json_u64(&j, "cache_bytes", o->cfg.cache_bytes);
    json_u64(&j, "cache_chunks", in->cache_chunks);
    json_u64(&j, "window", in->window);
    json_u64(&j, "echo", o->cfg.echo);
    json_string(&j, "echo_mode", param_enum_name("echo_mode", (int)in->echo_mode));
    json_i64(&j, "ring_slots", in->ring_slots);
    json_u64(&j, "echo_pool_bytes", in->echo_pool_bytes);
    json_string(&j, "crop", param_enum_name("crop", (int)in->crop));
    json_u64(&j, "output_height", in->output_height);
    json_u64(&j, "output_width", in->output_width);
    json_double(&j, "scale_min", o->cfg.scale_min);
    json_double(&j, "scale_max", o->cfg.scale_max);
    json_double(&j, "ratio_min", o->cfg.ratio_min);
    json_double(&j, "ratio_max", o->cfg.ratio_max);
    json_double(&j, "center_ratio", o->cfg.center_ratio);
    json_bool(&j, "flip", o->cfg.random_flip);
    json_i64(&j, "crop_padding", o->cfg.random_crop_padding);
    json_u64(&j, "epochs", o->cfg.epochs);
    json_i64(&j, "threads", in->threads);
    json_u64(&j, "seed", o->cfg.seed);
    json_u64(&j, "rank", o->cfg.rank);
    json_u64(&j, "world", o->cfg.world);
    char fp[17];
    snprintf(fp, sizeof fp, "%016llx", (unsigned long long)in->order_fingerprint);
    json_string(&j, "order_fingerprint", fp);
    json_string(&j, "device", in->device_name);
    json_double(&j, "step_ms", o->step_ms);
    json_u64(&j, "chunk_bytes", in->chunk_bytes);
    json_u64(&j, "samples_per_chunk", in->samples_per_chunk);
    json_u64(&j, "n_chunks", in->n_chunks);
    json_bool(&j, "fast_path", in->fast_path);
    json_bool(&j, "compressed", in->compressed);
    json_object_end(&j);
    json_array_begin(&j, "epochs");
    for (size_t i = 0; i < s->n_epochs; i++) {
        json_object_begin(&j, NULL);
        json_u64(&j, "epoch", s->epochs[i].epoch);
        json_span(&j, &s->epochs[i]);
        json_object_end(&j);
    }
    json_array_end(&j);
    json_array_begin(&j, "advice");
    for (int i = 0; i < adv->n; i++)
        json_string(&j, NULL, adv->line[i]);
    json_array_end(&j);
    json_object_end(&j);
    json_finish(&j);
}

static int open_reader(const run_opts *o, h5pack_reader **r, h5pack_info *in)
{
    int rc = h5pack_open(o->file, &o->cfg, r);
    if (rc >= 0 && (rc = h5pack_info_get(*r, in)) < 0)
        rc = run_failed(o, *r, "h5pack_info_get", rc);
    else if (rc < 0)
        rc = run_failed(o, *r, NULL, rc);
    if (rc != 0) {
        h5pack_close(*r);
        *r = NULL;
    }
    return rc;
}

static void report(const run_opts *o, const h5pack_info *in, run_state *s, const h5pack_stats *end, double loop_s)
{
    span total = {.epoch = 0, .seconds = loop_s, .d = *end};
    run_facts f = {.info = *in, .cfg = o->cfg, .st = *end, .loop_s = loop_s,
                   .stall_fraction = loop_s > 0 ? end->stall_s / loop_s : 0.0, .steady = 0, .cores = 1,
                   .step_ms = o->step_ms};
    if (s->n_epochs > 1) { /* the epochs after the first: no cache or thread warm-up in them */
        double stall = 0, secs = 0;
        for (size_t i = 1; i < s->n_epochs; i++)
            stall += s->epochs[i].d.stall_s, secs += s->epochs[i].seconds;
        if (secs > 0)
            f.stall_fraction = stall / secs, f.steady = 1;
    }
    f.cores = h5pack_default_threads(); /* the CPUs this process may use (affinity, cgroup quota), as the reader counts them */
    advice adv = {.n = 0};
    advise_run(&f, &adv);
    if (o->json) {
        print_json(o, in, s, &total, &adv);
    } else {
        print_text(o, in, s, &total);
        advice_print(&adv, stdout);
    }
}

int cmd_run(int argc, char **argv)
{
    run_opts o;
    int rc = parse_run(argc, argv, &o);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    run_state s = {0};
    h5pack_info in = H5PACK_INFO_INIT;
    h5pack_stats end = H5PACK_STATS_INIT;
    if ((rc = open_reader(&o, &s.r, &in)) != 0)
        return rc;
    rc = consume(&s, &o);
    double t_end = h5pack_clock_s();
    if (rc == 0 && (rc = h5pack_stats_get(s.r, &end)) < 0)
        rc = run_failed(&o, s.r, "h5pack_stats_get", rc);
    if (rc == 0 && close_epoch(&s, &end, t_end) != 0) {
        fprintf(stderr, "h5pack-stats run: %s: out of memory for the per-epoch figures\n", o.file);
        rc = 2;
    }
    if (rc == 0) {
        h5pack_stats zero = {0}, totals = stats_diff(&end, &zero);
        report(&o, &in, &s, &totals, t_end - s.t0);
    }
    h5pack_close(s.r);
    free(s.epochs);
    return rc;
}
