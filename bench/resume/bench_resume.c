/* bench_resume: how long a resume takes, from h5pack_open at a start position to the first batch in
 * hand, at positions across an epoch (docs/performance.md, "Resume"). Each position is opened REPEATS
 * times; the median and the largest are printed, with the open alone (the order, the plan) apart.
 * Usage: bench_resume FILE [--batch B] [--world W] [--rank R] [--window W] [--cache BYTES] [--threads T]
 *                          [--saved-world W0] [--repeats N] [--echo E] [--sample-echo] [--epoch E] [--at F]
 *                          [--order chunk|random|sequential]
 * --saved-world W0: the start is a position saved by a job of W0 ranks of the same batch (start_sample,
 * another global batch: the rest of the epoch in this job's layout); without it, this job's own batch
 * (start_batch). --epoch: the epoch resumed (default 1: a checkpoint of a run past its first epoch);
 * --at F: that position alone (a fraction of the epoch), else 0, 0.25, 0.5, 0.75 and 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "h5pack.h"

#define MAX_REPEATS 64

static double clock_s(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double now(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct options {
    const char *path;
    h5pack_config cfg;
    uint32_t saved_world;
    uint64_t n_samples; /* the file's */
    int repeats;
    double at; /* < 0: the five positions */
} options;

static int parse(int argc, char **argv, options *o)
{
    o->cfg = (h5pack_config)H5PACK_CONFIG_DEFAULTS;
    o->cfg.device = H5PACK_DEVICE_CPU, o->cfg.dtype = H5PACK_DTYPE_UINT8, o->cfg.threads = 2;
    o->saved_world = 0, o->repeats = 5, o->path = NULL, o->at = -1;
    o->cfg.start_epoch = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (a[0] != '-') {
            o->path = a;
            continue;
        }
        if (!strcmp(a, "--order") && v) { /* sequential: what a resume costs besides the order */
            o->cfg.order = !strcmp(v, "sequential") ? H5PACK_ORDER_SEQUENTIAL
                           : !strcmp(v, "random")   ? H5PACK_ORDER_RANDOM
                                                    : H5PACK_ORDER_CHUNK;
            i++;
            continue;
        }
        if (!strcmp(a, "--sample-echo")) {
            o->cfg.echo_mode = H5PACK_ECHO_SAMPLE;
            continue;
        }
        if (!v)
            return -1;
        unsigned long long x = strtoull(v, NULL, 10);
        i++;
        if (!strcmp(a, "--batch")) o->cfg.batch_size = (size_t)x;
        else if (!strcmp(a, "--world")) o->cfg.world = (uint32_t)x;
        else if (!strcmp(a, "--rank")) o->cfg.rank = (uint32_t)x;
        else if (!strcmp(a, "--window")) o->cfg.window = (size_t)x;
        else if (!strcmp(a, "--cache")) o->cfg.cache_bytes = (size_t)x;
        else if (!strcmp(a, "--threads")) o->cfg.threads = (int)x;
        else if (!strcmp(a, "--echo")) o->cfg.echo = (uint32_t)x;
        else if (!strcmp(a, "--saved-world")) o->saved_world = (uint32_t)x;
        else if (!strcmp(a, "--epoch")) o->cfg.start_epoch = x;
        else if (!strcmp(a, "--at")) o->at = atof(v);
        else if (!strcmp(a, "--repeats")) o->repeats = x < 1 ? 1 : (x > MAX_REPEATS ? MAX_REPEATS : (int)x);
        else return -1;
    }
    return o->path ? 0 : -1;
}

/* One resume at FRACTION of the epoch: seconds to the open and to the first batch, and the CPU seconds
 * of every thread of the process until then (on a busy machine, what the wall time would be on an idle
 * one, about: the work is one thread's, but for the two orders of a first open). */
static int resume_once(const options *o, double fraction, uint64_t bpe, double *open_s, double *first_s,
                       double *cpu_s)
{
    h5pack_config c = o->cfg;
    if (o->saved_world) { /* a position saved by W0 ranks of this batch: the start of one of their batches */
        uint64_t g0 = c.batch_size * o->saved_world, saved_bpe = (o->n_samples + g0 - 1) / g0;
        c.start_sample = (uint64_t)(fraction * (double)(saved_bpe - 1)) * g0;
    } else {
        c.start_batch = (uint64_t)(fraction * (double)(bpe - 1));
    }
    double t0 = now(), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    h5pack_reader *r = NULL;
    if (h5pack_open(o->path, &c, &r) != H5PACK_OK) {
        fprintf(stderr, "open: %s\n", h5pack_last_error(r));
        h5pack_close(r);
        return -1;
    }
    double t1 = now();
    h5pack_batch batch = H5PACK_BATCH_INIT;
    int rc = h5pack_next(r, &batch);
    double t2 = now(), c2 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    if (rc != H5PACK_OK) {
        fprintf(stderr, "next: %s\n", h5pack_last_error(r));
        h5pack_close(r);
        return -1;
    }
    h5pack_release(r, &batch);
    h5pack_close(r);
    *open_s = t1 - t0, *first_s = t2 - t0, *cpu_s = c2 - c0;
    return 0;
}

int main(int argc, char **argv)
{
    options o;
    if (parse(argc, argv, &o)) {
        fprintf(stderr, "usage: bench_resume FILE [--batch B] [--world W] [--rank R] [--window W] [--cache BYTES] "
                        "[--threads T] [--saved-world W0] [--repeats N] [--echo E] [--sample-echo] [--epoch E] [--at F] "
                        "[--order chunk|random|sequential]\n");
        return 2;
    }
    h5pack_reader *r = NULL;
    h5pack_config first = o.cfg;
    first.start_epoch = 0;
    if (h5pack_open(o.path, &first, &r) != H5PACK_OK) {
        fprintf(stderr, "%s\n", h5pack_last_error(r));
        return 1;
    }
    h5pack_info info = H5PACK_INFO_INIT;
    h5pack_info_get(r, &info);
    h5pack_close(r);
    o.n_samples = info.n_samples;
    printf("%s: %llu samples in %llu chunks of %llu, window %zu, batch %zu x world %u (rank %u), %llu batches per "
           "epoch, resumed in epoch %llu by %s\n", o.path, (unsigned long long)info.n_samples, (unsigned long long)info.n_chunks,
           (unsigned long long)info.samples_per_chunk, info.window, o.cfg.batch_size, o.cfg.world, o.cfg.rank,
           (unsigned long long)info.batches_per_epoch, (unsigned long long)o.cfg.start_epoch,
           o.saved_world ? "start_sample (another world)" : "start_batch");
    printf("%9s %14s %14s %14s %14s %14s\n", "position", "open ms (med)", "first ms (min)", "first ms (med)",
           "first ms (max)", "cpu ms (med)");
    const double fractions[] = {0.0, 0.25, 0.5, 0.75, 1.0};
    size_t n_positions = o.at >= 0 ? 1 : sizeof fractions / sizeof *fractions;
    for (size_t f = 0; f < n_positions; f++) {
        double at = o.at >= 0 ? o.at : fractions[f];
        double open_s[MAX_REPEATS], first_s[MAX_REPEATS], cpu_s[MAX_REPEATS];
        for (int k = 0; k < o.repeats; k++)
            if (resume_once(&o, at, info.batches_per_epoch, &open_s[k], &first_s[k], &cpu_s[k]))
                return 1;
        qsort(open_s, (size_t)o.repeats, sizeof *open_s, cmp_double);
        qsort(first_s, (size_t)o.repeats, sizeof *first_s, cmp_double);
        qsort(cpu_s, (size_t)o.repeats, sizeof *cpu_s, cmp_double);
        int m = o.repeats / 2;
        printf("%8.0f%% %14.1f %14.1f %14.1f %14.1f %14.1f\n", 100 * at, 1e3 * open_s[m], 1e3 * first_s[0],
               1e3 * first_s[m], 1e3 * first_s[o.repeats - 1], 1e3 * cpu_s[m]);
    }
    return 0;
}
