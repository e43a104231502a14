/* test_timeline.c - the reader's own timeline (H5PACK_TIMELINE, h5pack_config.timeline_path): rows keep
 * coming while the consumer sleeps outside h5pack_next() (the sampler is a thread, not a side effect of
 * next), the count columns add up to h5pack_stats, the environment variable and "" work, an unwritable
 * path fails the open naming it, several readers on one name get numbered files, the rank goes into the
 * name with world > 1, timeline_append continues a file. No timing assertion is tight: bounds are counts with wide margins. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "clock.h"
#include "h5fixture.h"
#include "h5pack.h"
#include "timeline.h"

#define MAX_ROWS 4096
#define N_COLS 16

typedef struct row {
    double v[N_COLS];
} row;

typedef struct csv {
    char header[512];
    int n;
    row r[MAX_ROWS];
} csv;

enum { T_S, DT_S, EPOCH, BATCHES, SAMPLES, SPS, READ_MB, DELIV_MB, STALL, HITS, MISSES, HIT_RATE, BYTES_READ,
       CACHE_BYTES, DEV_COPY, DEV_IDLE };

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Reads PATH: a header and rows of N_COLS numbers ("nan" allowed), every line complete. */
static void read_csv(const char *path, csv *c)
{
    FILE *f = fopen(path, "r");
    CHECK_MSG(f, "open %s: %s", path, strerror(errno));
    CHECK_MSG(fgets(c->header, sizeof c->header, f), "%s: no header", path);
    c->n = 0;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        CHECK_MSG(strchr(line, '\n'), "%s: row %d is not a whole line", path, c->n + 1);
        CHECK(c->n < MAX_ROWS);
        char *s = line;
        for (int k = 0; k < N_COLS; k++) {
            char *end;
            c->r[c->n].v[k] = strtod(s, &end);
            CHECK_MSG(end != s && *end == (k + 1 < N_COLS ? ',' : '\n'), "%s: row %d column %d: %s", path, c->n + 1,
                      k, line);
            s = end + 1;
        }
        c->n++;
    }
    fclose(f);
}

static h5pack_reader *open_ok(const char *path, const h5pack_config *cfg)
{
    h5pack_reader *r = NULL;
    int rc = h5pack_open(path, cfg, &r);
    CHECK_MSG(rc == 0, "h5pack_open(%s): %s", path, h5pack_last_error(r));
    return r;
}

static h5pack_config base_config(void)
{
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    c.device = H5PACK_DEVICE_CPU, c.batch_size = 16, c.threads = 2, c.prefetch = 2, c.epochs = 2;
    c.cache_bytes = 4 * 16 * 3 * 32 * 32; /* 4 chunks of 16 images: misses and hits both */
    c.order = H5PACK_ORDER_RANDOM, c.norm = H5PACK_NORM_NONE;
    return c;
}

/* A consumer that trains 0.3 s per batch with rows every 0.05 s: rows come while it sleeps, with no
 * stall; the columns add up to the stats. */
static void test_sleeping_consumer(const char *h5, csv *c)
{
    const char *tl = "tl_sleep.csv";
    h5pack_config cfg = base_config();
    cfg.timeline_path = tl, cfg.timeline_interval_s = 0.05;
    cfg.epochs = 1, cfg.batch_size = 32; /* 96 samples: 3 batches */
    h5pack_reader *r = open_ok(h5, &cfg);
    h5pack_batch b = H5PACK_BATCH_INIT;
    int rc, n_batches = 0;
    double t0 = 0;
    while ((rc = h5pack_next(r, &b)) == H5PACK_OK) {
        if (n_batches++ == 0) {
            sleep_s(0.5); /* the workers fill the ring meanwhile */
            t0 = h5pack_clock_s();
        }
        sleep_s(0.3);
        CHECK_OK(h5pack_release(r, &b));
    }
    CHECK_EQ_INT(rc, H5PACK_END);
    double t1 = h5pack_clock_s();
    h5pack_stats st = H5PACK_STATS_INIT;
    CHECK_OK(h5pack_stats_get(r, &st));
    h5pack_close(r);

    read_csv(tl, c);
    CHECK_MSG(strncmp(c->header, h5pack_timeline_header, strlen(h5pack_timeline_header)) == 0, "header %s",
              c->header);
    /* about 30 rows in the ~1.5 s: a loaded machine may merge some, never all */
    CHECK_MSG(c->n >= 8, "%d rows in %.2f s at 0.05 s", c->n, t1 - t0);
    uint64_t samples = 0, hits = 0, misses = 0, bytes = 0, batches = 0, idle_rows = 0;
    double stalled = 0, span = 0;
    for (int i = 0; i < c->n; i++) {
        const double *v = c->r[i].v;
        samples += (uint64_t)v[SAMPLES], hits += (uint64_t)v[HITS], misses += (uint64_t)v[MISSES];
        bytes += (uint64_t)v[BYTES_READ], batches += (uint64_t)v[BATCHES];
        idle_rows += v[SAMPLES] == 0; /* rows written while the consumer slept */
        CHECK(v[DT_S] > 0 && v[STALL] >= 0 && v[STALL] <= 1);
        CHECK(i == 0 || v[T_S] > c->r[i - 1].v[T_S]);
        CHECK_MSG(isnan(v[DEV_COPY]) && isnan(v[DEV_IDLE]), "row %d: GPU columns on the CPU backend", i + 1);
        CHECK_MSG(isnan(v[HIT_RATE]) == (v[HITS] + v[MISSES] == 0), "row %d: hit rate nan iff no uses", i + 1);
        if (v[HITS] + v[MISSES] > 0)
            CHECK_NEAR(v[HIT_RATE], v[HITS] / (v[HITS] + v[MISSES]), 1e-3);
        CHECK_NEAR(v[SPS], v[SAMPLES] / v[DT_S], 0.05 + 1e-3 * v[SPS]);
        CHECK(v[CACHE_BYTES] > 0 || i == 0);
    }
    CHECK_MSG(idle_rows >= 4, "only %llu rows without a delivery: rows must not wait for h5pack_next",
              (unsigned long long)idle_rows);
    CHECK_EQ_U64(samples, st.samples);
    CHECK_EQ_U64(batches, st.batches);
    CHECK_EQ_U64(hits, st.chunk_hits);
    CHECK_EQ_U64(misses, st.chunk_misses);
    CHECK_EQ_U64(bytes, st.bytes_read);
    /* the stall over the rows after the first batch: the ring is full, the consumer never waits long */
    double first_t = c->r[0].v[T_S];
    for (int i = 0; i < c->n; i++)
        if (c->r[i].v[T_S] - c->r[i].v[DT_S] >= first_t + 0.6) /* after the 0.5 s warm-up sleep */
            stalled += c->r[i].v[STALL] * c->r[i].v[DT_S], span += c->r[i].v[DT_S];
    CHECK_MSG(span > 0.3 && stalled < 0.3 * span, "stalled %.3f s of %.3f s with a full ring", stalled, span);
}

/* The environment variable names the file; "" in the config turns it off even then. */
static void test_env(const char *h5, csv *c)
{
    const char *tl = "tl_env.csv";
    unlink(tl);
    CHECK(setenv("H5PACK_TIMELINE", tl, 1) == 0);
    h5pack_config cfg = base_config();
    cfg.epochs = 1;
    cfg.timeline_path = ""; /* off, even with the variable set */
    h5pack_close(open_ok(h5, &cfg));
    CHECK_MSG(access(tl, F_OK) != 0, "timeline_path \"\" still wrote %s", tl);
    cfg.timeline_path = NULL; /* the variable's file */
    h5pack_reader *r = open_ok(h5, &cfg);
    h5pack_batch b = H5PACK_BATCH_INIT;
    int rc;
    while ((rc = h5pack_next(r, &b)) == H5PACK_OK)
        CHECK_OK(h5pack_release(r, &b));
    h5pack_close(r); /* default interval 1 s: the closing row alone carries the run */
    read_csv(tl, c);
    uint64_t samples = 0;
    for (int i = 0; i < c->n; i++)
        samples += (uint64_t)c->r[i].v[SAMPLES];
    CHECK_EQ_U64(samples, 96);
    CHECK(unsetenv("H5PACK_TIMELINE") == 0);
}

static void test_unwritable(const char *h5)
{
    const char *tl = "no_such_dir_for_timeline/run.csv";
    h5pack_config cfg = base_config();
    cfg.timeline_path = tl;
    h5pack_reader *r = NULL;
    int rc = h5pack_open(h5, &cfg, &r);
    CHECK_EQ_INT(rc, H5PACK_EIO);
    CHECK_STR_CONTAINS(h5pack_last_error(r), tl);
    CHECK_STR_CONTAINS(h5pack_last_error(r), "No such file");
    h5pack_close(r);
    cfg.timeline_path = "tl_bad_interval.csv", cfg.timeline_interval_s = -1;
    rc = h5pack_open(h5, &cfg, &r);
    CHECK_EQ_INT(rc, H5PACK_EINVAL);
    CHECK_STR_CONTAINS(h5pack_last_error(r), "timeline_interval_s");
    h5pack_close(r);
    cfg.timeline_interval_s = 1e19; /* the sampler's deadline overflowed time_t: it spun and close hung */
    rc = h5pack_open(h5, &cfg, &r);
    CHECK_EQ_INT(rc, H5PACK_EINVAL);
    CHECK_STR_CONTAINS(h5pack_last_error(r), "86400");
    h5pack_close(r);
}

/* Two live readers on one name (train + val): the second gets run.1.csv; the name is free after close.
 * With world > 1 the rank is in the name. */
static void test_names(const char *h5)
{
    unlink("tl_two.csv"), unlink("tl_two.1.csv"), unlink("tl_two.rank1.csv");
    h5pack_config cfg = base_config();
    cfg.timeline_path = "tl_two.csv";
    h5pack_reader *a = open_ok(h5, &cfg), *b = open_ok(h5, &cfg);
    CHECK(access("tl_two.csv", F_OK) == 0 && access("tl_two.1.csv", F_OK) == 0);
    h5pack_close(a), h5pack_close(b);
    unlink("tl_two.1.csv");
    h5pack_close(open_ok(h5, &cfg));
    CHECK_MSG(access("tl_two.1.csv", F_OK) != 0, "a closed reader's name was not reused");
    cfg.rank = 1, cfg.world = 2;
    h5pack_close(open_ok(h5, &cfg));
    CHECK(access("tl_two.rank1.csv", F_OK) == 0);
}

/* timeline_append: a second reader continues the first one's file (one header, t_s going on, counts
 * adding up to both readers' samples); a torn last line is cut off first; a file that is not a timeline
 * is started afresh; without the flag the file is overwritten. */
static void drain_slowly(const char *h5, const h5pack_config *cfg)
{
    h5pack_reader *r = open_ok(h5, cfg);
    h5pack_batch b = H5PACK_BATCH_INIT;
    while (h5pack_next(r, &b) == H5PACK_OK) {
        sleep_s(0.01);
        CHECK_OK(h5pack_release(r, &b));
    }
    h5pack_close(r);
}

static uint64_t samples_in(const csv *c)
{
    uint64_t n = 0;
    for (int i = 0; i < c->n; i++)
        n += (uint64_t)c->r[i].v[SAMPLES];
    return n;
}

static void test_append(const char *h5, csv *c)
{
    const char *tl = "tl_append.csv";
    unlink(tl);
    h5pack_config cfg = base_config();
    cfg.epochs = 1, cfg.timeline_path = tl, cfg.timeline_interval_s = 0.02, cfg.timeline_append = 1;
    drain_slowly(h5, &cfg); /* no file yet: a new one */
    read_csv(tl, c);
    int first = c->n;
    /* at least the closing row (how many interval rows come before it depends on the scheduler: a CI
     * run under load once had only one), and every sample counted once */
    CHECK_MSG(first >= 1 && samples_in(c) == 96, "%d rows, %llu samples", first, (unsigned long long)samples_in(c));
    double t_last = c->r[first - 1].v[T_S];
    FILE *f = fopen(tl, "a"); /* a row torn by a crash */
    CHECK(f && fputs("99.5,0.02,0,1", f) >= 0 && fclose(f) == 0);
    drain_slowly(h5, &cfg);
    read_csv(tl, c); /* one header: a second one, or the torn row, would not parse as numbers */
    CHECK_MSG(c->n > first && samples_in(c) == 2 * 96, "%d rows after %d, %llu samples", c->n, first,
              (unsigned long long)samples_in(c));
    CHECK_MSG(c->r[first].v[T_S] >= t_last, "continued at t %g before the earlier last row's %g",
              c->r[first].v[T_S], t_last);
    for (int i = 1; i < c->n; i++)
        CHECK_MSG(c->r[i].v[T_S] >= c->r[i - 1].v[T_S], "t_s goes back at row %d", i + 1);
    for (int junk = 0; junk < 2; junk++) { /* tails longer than a read window: 5000 bytes torn, 8 KiB of zeros */
        first = c->n;
        f = fopen(tl, "a");
        for (int k = 0; f && k < (junk ? 8192 : 5000); k++)
            fputc(junk ? 0 : 'x', f);
        CHECK(f && fclose(f) == 0);
        drain_slowly(h5, &cfg);
        read_csv(tl, c);
        CHECK_MSG(c->n > first && samples_in(c) == (uint64_t)(3 + junk) * 96, "after a %s tail: %d rows, %llu samples",
                  junk ? "zero-filled" : "torn", c->n, (unsigned long long)samples_in(c));
    }
    cfg.timeline_append = 0; /* overwritten */
    drain_slowly(h5, &cfg);
    read_csv(tl, c);
    CHECK_EQ_U64(samples_in(c), 96);
    f = fopen(tl, "w"); /* not a timeline: started afresh even with the flag */
    CHECK(f && fputs("hello\n", f) >= 0 && fclose(f) == 0);
    cfg.timeline_append = 1;
    drain_slowly(h5, &cfg);
    read_csv(tl, c);
    CHECK_STR_CONTAINS(c->header, "t_s,dt_s");
    CHECK_EQ_U64(samples_in(c), 96);
    unlink(tl);
}

/* A reader continues ITS file, named by h5pack_timeline_path(), even when the rules would now pick another:
 * readers A (tl_pin.csv) and B (tl_pin.1.csv); A closes; B's successor continues tl_pin.1.csv. */
static void test_append_pinned(const char *h5, csv *c)
{
    unlink("tl_pin.csv"), unlink("tl_pin.1.csv");
    h5pack_config cfg = base_config();
    cfg.epochs = 1, cfg.timeline_path = "tl_pin.csv", cfg.timeline_interval_s = 0.02;
    h5pack_reader *a = open_ok(h5, &cfg), *b = open_ok(h5, &cfg);
    CHECK(strcmp(h5pack_timeline_path(a), "tl_pin.csv") == 0);
    CHECK(strcmp(h5pack_timeline_path(b), "tl_pin.1.csv") == 0);
    char b_name[64];
    snprintf(b_name, sizeof b_name, "%s", h5pack_timeline_path(b));
    h5pack_batch batch = H5PACK_BATCH_INIT;
    while (h5pack_next(b, &batch) == H5PACK_OK)
        CHECK_OK(h5pack_release(b, &batch));
    h5pack_close(a), h5pack_close(b);
    cfg.timeline_path = b_name, cfg.timeline_append = 1;
    drain_slowly(h5, &cfg);
    read_csv("tl_pin.1.csv", c);
    CHECK_EQ_U64(samples_in(c), 2 * 96);
    read_csv("tl_pin.csv", c);
    CHECK_EQ_U64(samples_in(c), 0);
    h5pack_config none = base_config();
    h5pack_reader *r = open_ok(h5, &none);
    CHECK(h5pack_timeline_path(r) == NULL && h5pack_timeline_path(NULL) == NULL);
    h5pack_close(r);
    unlink("tl_pin.csv"), unlink("tl_pin.1.csv");
}

int main(void)
{
    char h5[256];
    h5fix_local_name(h5, sizeof h5, "timeline");
    const h5fix_file spec = {.n = 96, .c = 3, .h = 32, .w = 32, .k = 16, .labels = 1, .label_type = H5FIX_UINT16, .n_classes = 7, .layout_attr = "NCHW", .pixel = h5fix_pixel_chw};
    CHECK_OK(h5fix_write(h5, &spec));
    static csv c;
    test_sleeping_consumer(h5, &c);
    test_env(h5, &c);
    test_unwritable(h5);
    test_names(h5);
    test_append(h5, &c);
    test_append_pinned(h5, &c);
    unlink(h5);
    printf("timeline: all checks passed\n");
    return 0;
}
