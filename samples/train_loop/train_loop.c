/*
 * train_loop.c - a training loop fed by libh5pack, and the number that tells whether the input pipeline
 * is the bottleneck: the share of each epoch spent waiting for data.
 *
 *   h5pack-train-loop FILE.h5 [--epochs N] [--batch N] [--cache SIZE] [--order sequential|random|chunk]
 *                     [--echo E] [--threads T] [--prefetch P] [--device auto|cpu|cuda] [--seed S]
 *
 * Each batch goes through a small model (model.h): a CUDA kernel when the reader delivers batches on the
 * GPU, a CPU loop otherwise. Uses only the public API (include/h5pack.h).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>

#include "h5pack.h"
#include "model.h"

typedef struct options {
    const char *path;
    h5pack_config cfg;
} options;

typedef struct epoch_totals {
    uint64_t batches, samples;
    double wait_s, step_s, loss_sum;
    uint64_t loss_batches;
} epoch_totals;

static void usage(FILE *out)
{
    fprintf(out, "usage: h5pack-train-loop FILE.h5 [--epochs N] [--batch N] [--cache SIZE] "
                 "[--order sequential|random|chunk]\n"
                 "                         [--echo E] [--threads T] [--prefetch P] [--device auto|cpu|cuda] "
                 "[--seed S]\n"
                 "Trains a tiny model on the file's batches and prints, per epoch, the share of the time spent\n"
                 "waiting for data. SIZE takes K/M/G/T suffixes (K = 1024). Defaults: 2 epochs, batch 64, cache 1G,\n"
                 "chunk order, echo 1, all cores, device auto.\n");
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int parse_enum(const char *value, const char *const *names, int n, int *out)
{
    for (int i = 0; i < n; i++)
        if (strcmp(value, names[i]) == 0)
            return *out = i, 0;
    return -1;
}

static int parse_option(options *o, const char *name, const char *value)
{
    static const char *const orders[] = {"sequential", "random", "chunk"};
    static const char *const devices[] = {"auto", "cpu", "cuda"};
    uint64_t n = 0;
    /* Sizes and counts follow h5pack's one rule (64M, 1GiB, 1.5G; K = 1024). */
    int numeric = h5pack_size_parse(value, &n, NULL, 0) == H5PACK_OK, e = 0;
    if (!strcmp(name, "--epochs") && numeric) o->cfg.epochs = n;
    else if (!strcmp(name, "--batch") && numeric && n > 0 && n <= UINT32_MAX) o->cfg.batch_size = (size_t)n;
    else if (!strcmp(name, "--echo") && numeric && n > 0 && n <= UINT32_MAX) o->cfg.echo = (uint32_t)n;
    else if (!strcmp(name, "--threads") && numeric && n <= 1024) o->cfg.threads = (int)n;
    else if (!strcmp(name, "--prefetch") && numeric && n > 1 && n <= 1024) o->cfg.prefetch = (int)n;
    else if (!strcmp(name, "--seed") && numeric) o->cfg.seed = n;
    else if (!strcmp(name, "--cache") && numeric && n > 0 && n <= SIZE_MAX) o->cfg.cache_bytes = (size_t)n;
    else if (!strcmp(name, "--order") && !parse_enum(value, orders, 3, &e)) o->cfg.order = (h5pack_order)e;
    else if (!strcmp(name, "--device") && !parse_enum(value, devices, 3, &e)) o->cfg.device = (h5pack_device)e;
    else return -1;
    return 0;
}

static int parse_args(int argc, char **argv, options *o)
{
    const h5pack_config defaults = H5PACK_CONFIG_DEFAULTS;
    o->cfg = defaults;
    o->cfg.batch_size = 64;
    o->cfg.epochs = 2;
    o->path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            exit(0);
        }
        if (argv[i][0] != '-' && !o->path) {
            o->path = argv[i];
        } else if (i + 1 >= argc || parse_option(o, argv[i], argv[i + 1]) < 0) {
            fprintf(stderr, "h5pack-train-loop: bad option '%s%s%s'\n", argv[i], i + 1 < argc ? " " : "",
                    i + 1 < argc ? argv[i + 1] : "");
            return -1;
        } else {
            i++;
        }
    }
    if (!o->path || o->cfg.epochs == 0) {
        fprintf(stderr, "h5pack-train-loop: %s\n", o->path ? "--epochs must be at least 1" : "no FILE given");
        return -1;
    }
    o->cfg.dtype = H5PACK_DTYPE_FLOAT32; /* what the model reads */
    o->cfg.output_layout = H5PACK_LAYOUT_NCHW;
    return 0;
}

/* The detail message usually starts with the generic text already; add it only when it does not. */
static void print_error(int rc, const char *detail)
{
    const char *generic = h5pack_strerror(rc);
    if (!detail || !*detail)
        fprintf(stderr, "h5pack-train-loop: %s\n", generic);
    else if (strncmp(detail, generic, strlen(generic)) == 0)
        fprintf(stderr, "h5pack-train-loop: %s\n", detail);
    else
        fprintf(stderr, "h5pack-train-loop: %s: %s\n", generic, detail);
}

static void print_setup(const char *path, const h5pack_info *in, const h5pack_config *cfg)
{
    printf("%s: %llu images %ux%ux%u, %u classes, %llu per chunk%s\n", path, (unsigned long long)in->n_samples,
           in->channels, in->height, in->width, in->n_classes, (unsigned long long)in->samples_per_chunk,
           in->compressed ? ", compressed" : "");
    printf("reader: device %s, %d threads, batch %zu, cache %zu chunks, echo %u, %llu batches per epoch\n",
           in->device_name, in->threads, cfg->batch_size, in->cache_chunks, cfg->echo,
           (unsigned long long)in->batches_per_epoch);
    printf("model: mean-pool to %ux%dx%d, linear softmax, SGD (%s)\n", in->channels, MODEL_GRID, MODEL_GRID,
           in->device == H5PACK_DEVICE_CUDA ? "CUDA kernel" : "CPU loop");
}

/* One epoch line: our own timers around next() and the step, and the reader's stall counter. */
static void print_epoch(uint64_t epoch, uint64_t epochs, const epoch_totals *t, const h5pack_stats *before,
                        const h5pack_stats *after)
{
    double loop_s = t->wait_s + t->step_s;
    double reader_stall = after->stall_s - before->stall_s;
    uint64_t hits = after->chunk_hits - before->chunk_hits, misses = after->chunk_misses - before->chunk_misses;
    printf("epoch %llu/%llu: %llu batches, %llu samples in %.3f s (%.0f samples/s) | waiting for data %.3f s "
           "= %.1f%% of the loop (reader's stall counter %.3f s) | model %.3f s | loss %.4f | chunk hit rate "
           "%.1f%%\n",
           (unsigned long long)epoch + 1, (unsigned long long)epochs, (unsigned long long)t->batches,
           (unsigned long long)t->samples, loop_s, loop_s > 0 ? (double)t->samples / loop_s : 0.0, t->wait_s,
           loop_s > 0 ? 100.0 * t->wait_s / loop_s : 0.0, reader_stall, t->step_s,
           t->loss_batches ? t->loss_sum / (double)t->loss_batches : NAN,
           hits + misses ? 100.0 * (double)hits / (double)(hits + misses) : 0.0);
    fflush(stdout);
}

static int run_epoch(h5pack_reader *r, model *m, uint64_t batches, epoch_totals *t)
{
    memset(t, 0, sizeof *t);
    for (uint64_t i = 0; i < batches; i++) {
        h5pack_batch b = H5PACK_BATCH_INIT;
        double t0 = now_s();
        int rc = h5pack_next(r, &b);
        double t1 = now_s();
        if (rc != H5PACK_OK)
            return rc;
        double loss = model_step(m, &b);
        double t2 = now_s();
        h5pack_release(r, &b);
        t->wait_s += t1 - t0;
        t->step_s += t2 - t1;
        t->batches++;
        t->samples += b.count;
        if (!isnan(loss)) {
            t->loss_sum += loss;
            t->loss_batches++;
        }
    }
    return H5PACK_OK;
}

static void print_verdict(double wait_s, double loop_s)
{
    double f = loop_s > 0 ? wait_s / loop_s : 0;
    printf("total: waited for data %.1f%% of the time: %s\n", 100.0 * f,
           f > 0.10 ? "the input pipeline is the bottleneck (see docs/tuning.md: more threads, a larger cache, "
                      "the chunk order, batch echoing)"
                    : "the input pipeline keeps up; the model step is what takes the time");
}

static int train(const options *o, h5pack_reader *r, model *m, const h5pack_info *in)
{
    uint64_t per_epoch = in->batches_per_epoch * (o->cfg.echo ? o->cfg.echo : 1);
    double wait = 0, loop = 0;
    h5pack_stats before = H5PACK_STATS_INIT, after = H5PACK_STATS_INIT;
    h5pack_stats_get(r, &before);
    for (uint64_t e = 0; e < o->cfg.epochs; e++) {
        epoch_totals t;
        int rc = run_epoch(r, m, per_epoch, &t);
        if (rc < 0) {
            fprintf(stderr, "h5pack-train-loop: %s: epoch %llu:\n", o->path, (unsigned long long)e + 1);
            print_error(rc, h5pack_last_error(r));
            return rc;
        }
        h5pack_stats_get(r, &after);
        print_epoch(e, o->cfg.epochs, &t, &before, &after);
        before = after;
        wait += t.wait_s;
        loop += t.wait_s + t.step_s;
        if (rc == H5PACK_END)
            break;
    }
    print_verdict(wait, loop);
    return 0;
}

int main(int argc, char **argv)
{
    options o;
    h5pack_reader *r = NULL;
    model *m = NULL;
    h5pack_info info = H5PACK_INFO_INIT;
    char err[256] = "";
    int status = 1;
    if (parse_args(argc, argv, &o) < 0) {
        usage(stderr);
        return 1;
    }
    void *stream = o.cfg.device != H5PACK_DEVICE_CPU ? model_cuda_stream_create() : NULL;
    o.cfg.cuda_stream = stream;
    int rc = h5pack_open(o.path, &o.cfg, &r);
    if (rc < 0) {
        print_error(rc, h5pack_last_error(r));
        goto done;
    }
    h5pack_info_get(r, &info);
    if (!info.has_labels || info.n_classes == 0 || info.label_columns > 1 || info.labels_are_float) {
        /* the model is a classifier: one class index per image (attribute tables, 1/-1 values, ids,
         * float targets are another task; the loader delivers them, this sample does not train on them) */
        fprintf(stderr, "h5pack-train-loop: %s: the sample model needs one class label per image (a labels "
                "dataset of class indices); this file has %s\n", o.path,
                !info.has_labels ? "no labels" : info.labels_are_float ? "float labels"
                : info.label_columns > 1 ? "several label columns per image" : "labels that are not class indices");
        goto done;
    }
    print_setup(o.path, &info, &o.cfg);
    m = model_create(&info, (int)info.n_classes, info.device == H5PACK_DEVICE_CUDA, stream, err, sizeof err);
    if (!m) {
        fprintf(stderr, "h5pack-train-loop: model: %s\n", err);
        goto done;
    }
    status = train(&o, r, m, &info) < 0 ? 1 : 0;
done:
    model_free(m);
    h5pack_close(r);
    model_cuda_stream_destroy(stream);
    return status;
}
