/* timeline.c - the sampler thread and the rows of the reader's timeline (see timeline.h). */
#include "timeline.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

const char h5pack_timeline_header[] =
    "t_s,dt_s,epoch,batches,samples,samples_per_s,read_mb_per_s,delivered_mb_per_s,stall_fraction,chunk_hits,"
    "chunk_misses,hit_rate,bytes_read,cache_bytes,device_copy_fraction,device_idle_fraction";

#define MIN_INTERVAL_S 0.001
#define MAX_INTERVAL_S 86400.0 /* a row a day; far beyond, the sampler's deadline would leave time_t */

/* Running totals since open, as of one moment. */
typedef struct tl_counts {
    double t;              /* h5pack_clock_s of the moment */
    double blocked_s;      /* consumer time inside h5pack_next() */
    uint64_t batches, samples, hits, misses, bytes_read, delivered_bytes, cache_bytes, epoch;
    double device_copy_s;  /* the backend's H2D copy time (CUDA events); 0 on the CPU */
} tl_counts;

struct h5pack_timeline {
    stream *s; /* its stats and its backend's device times */
    int fd, write_failed;
    char *name;
    double t_open, interval_s;
    double t_base; /* added to t_s: the last row's time of the file this reader continues (else 0) */
    int on_device;
    pthread_t thread;
    pthread_mutex_t lock; /* guards everything below */
    pthread_cond_t wake;  /* stop */
    int stop;
    int inside;           /* the consumer is in h5pack_next() since t_enter */
    double t_enter;
    tl_counts now;        /* the consumer's totals after its last h5pack_next() */
    /* sampler only (and close, after the sampler ended) */
    tl_counts last;       /* as of the last row */
};

/* ---- the consumer's side --------------------------------------------------------------------------- */

void h5pack_timeline_enter(h5pack_timeline *t)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->lock);
    t->inside = 1;
    t->t_enter = h5pack_clock_s(); /* read under the lock: the sampler's times are ordered with it */
    pthread_mutex_unlock(&t->lock);
}

void h5pack_timeline_leave(h5pack_timeline *t, const h5pack_batch *b)
{
    if (!t)
        return;
    /* the stream's counters, read on the consumer thread: the ones h5pack_stats_get gives */
    h5pack_stats st;
    memset(&st, 0, sizeof st);
    t->s->ops->stats(t->s, &st);
    pthread_mutex_lock(&t->lock);
    tl_counts *c = &t->now;
    c->blocked_s += h5pack_clock_s() - t->t_enter;
    t->inside = 0;
    c->batches = st.batches, c->samples = st.samples;
    c->hits = st.chunk_hits, c->misses = st.chunk_misses, c->bytes_read = st.bytes_read;
    c->cache_bytes = st.cache_bytes_used;
    if (b) {
        c->delivered_bytes += b->bytes;
        c->epoch = b->epoch;
    }
    pthread_mutex_unlock(&t->lock);
}

/* ---- rows ------------------------------------------------------------------------------------------- */

/* The totals as of now: the consumer's copy, plus the time of a call still blocked, plus the device. */
static tl_counts sample_now(h5pack_timeline *t)
{
    pthread_mutex_lock(&t->lock);
    tl_counts c = t->now;
    c.t = h5pack_clock_s();
    if (t->inside)
        c.blocked_s += c.t - t->t_enter;
    pthread_mutex_unlock(&t->lock);
    if (t->on_device) /* the backend's times() takes its own lock: callable from this thread */
        t->s->be->ops->times(t->s->be, NULL, &c.device_copy_s, NULL);
    return c;
}

static int write_all(int fd, const char *s, size_t n)
{
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        s += w, n -= (size_t)w;
    }
    return 0;
}

static double clamp01(double x)
{
    return x < 0 ? 0 : x > 1 ? 1 : x;
}

/* One row for the span from t->last to C, written with one write() (appends are whole lines). */
static void write_row(h5pack_timeline *t, const tl_counts *c)
{
    const tl_counts *a = &t->last;
    double dt = c->t - a->t;
    if (dt <= 0 || t->write_failed)
        return;
    uint64_t hits = c->hits - a->hits, misses = c->misses - a->misses, samples = c->samples - a->samples;
    uint64_t bytes_read = c->bytes_read - a->bytes_read;
    double stall_s = c->blocked_s - a->blocked_s;
    char hit[32] = "nan", copy[32] = "nan", idle[32] = "nan";
    if (hits + misses)
        snprintf(hit, sizeof hit, "%.4f", (double)hits / (double)(hits + misses));
    if (t->on_device) {
        double copy_s = c->device_copy_s - a->device_copy_s;
        snprintf(copy, sizeof copy, "%.4f", clamp01(copy_s / dt));
        snprintf(idle, sizeof idle, "%.4f", clamp01((stall_s - copy_s) / dt));
    }
    char row[512];
    int n = snprintf(row, sizeof row, "%.6f,%.6f,%llu,%llu,%llu,%.1f,%.3f,%.3f,%.4f,%llu,%llu,%s,%llu,%llu,%s,%s\n",
                     t->t_base + (c->t - t->t_open), dt, (unsigned long long)c->epoch,
                     (unsigned long long)(c->batches - a->batches), (unsigned long long)samples,
                     (double)samples / dt, (double)bytes_read / 1e6 / dt,
                     (double)(c->delivered_bytes - a->delivered_bytes) / 1e6 / dt, clamp01(stall_s / dt),
                     (unsigned long long)hits, (unsigned long long)misses, hit, (unsigned long long)bytes_read,
                     (unsigned long long)c->cache_bytes, copy, idle);
    if (n > 0 && (size_t)n < sizeof row && write_all(t->fd, row, (size_t)n) != 0)
        t->write_failed = 1; /* disk full, say: the reader goes on without its timeline */
    t->last = *c;
}

/* ---- the sampler thread ----------------------------------------------------------------------------- */

static struct timespec abs_time(double s)
{
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L)
        ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    return ts;
}

/* Rows at open + k * interval. A late wake-up (a loaded machine) makes one longer row, never a burst. */
static void *sampler_main(void *arg)
{
    h5pack_timeline *t = arg;
    double due = t->t_open + t->interval_s;
    pthread_mutex_lock(&t->lock);
    while (!t->stop) {
        struct timespec ts = abs_time(due);
        int rc = pthread_cond_timedwait(&t->wake, &t->lock, &ts);
        if (t->stop)
            break;
        if (rc != ETIMEDOUT && h5pack_clock_s() < due)
            continue;
        pthread_mutex_unlock(&t->lock);
        tl_counts c = sample_now(t);
        write_row(t, &c);
        while (due <= c.t)
            due += t->interval_s;
        pthread_mutex_lock(&t->lock);
    }
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

static int init_sync(h5pack_timeline *t)
{
    pthread_condattr_t ca;
    if (pthread_condattr_init(&ca))
        return -1;
    int rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* h5pack_clock_s's clock */
    if (!rc)
        rc = pthread_cond_init(&t->wake, &ca);
    pthread_condattr_destroy(&ca);
    if (rc)
        return -1;
    if (pthread_mutex_init(&t->lock, NULL)) {
        pthread_cond_destroy(&t->wake);
        return -1;
    }
    return 0;
}

/* ---- life cycle ------------------------------------------------------------------------------------- */

static void free_timeline(h5pack_timeline *t)
{
    if (t->fd >= 0)
        close(t->fd);
    free(t->name);
    free(t);
}

int h5pack_timeline_open(const h5pack_config *cfg, stream *s, double t_open, h5pack_timeline **out, char *err,
                         size_t err_len)
{
    *out = NULL;
    const char *path = cfg->timeline_path ? cfg->timeline_path : getenv("H5PACK_TIMELINE");
    if (!path || !path[0])
        return 0;
    double interval = cfg->timeline_interval_s == 0 ? 1.0 : cfg->timeline_interval_s;
    if (!(interval >= MIN_INTERVAL_S && interval <= MAX_INTERVAL_S)) {
        snprintf(err, err_len, "timeline_interval_s = %g: give 0 (1 s) or %g .. %g seconds",
                 cfg->timeline_interval_s, MIN_INTERVAL_S, MAX_INTERVAL_S);
        return H5PACK_EINVAL;
    }
    h5pack_timeline *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, err_len, "timeline %s: out of memory", path);
        return H5PACK_ENOMEM;
    }
    t->fd = -1;
    t->s = s, t->t_open = t_open, t->interval_s = interval;
    t->on_device = s->be->device == H5PACK_DEVICE_CUDA;
    t->now.epoch = cfg->start_epoch;
    t->now.t = t->last.t = t_open;
    int continued = 0;
    int rc = h5pack_timeline_create_file(path, cfg->rank, cfg->world, cfg->timeline_append != 0, &t->fd, &t->name,
                                         &continued, &t->t_base, err, err_len);
    if (rc) {
        free_timeline(t);
        return rc;
    }
    char head[sizeof h5pack_timeline_header + 1];
    snprintf(head, sizeof head, "%s\n", h5pack_timeline_header);
    if (!continued && write_all(t->fd, head, strlen(head)) != 0) {
        snprintf(err, err_len, "cannot write the timeline file %s: %s", t->name, strerror(errno));
        free_timeline(t);
        return H5PACK_EIO;
    }
    if (init_sync(t)) {
        snprintf(err, err_len, "timeline %s: cannot set up its lock", t->name);
        free_timeline(t);
        return H5PACK_ENOMEM;
    }
    if (pthread_create(&t->thread, NULL, sampler_main, t)) {
        snprintf(err, err_len, "timeline %s: cannot start its thread", t->name);
        pthread_mutex_destroy(&t->lock), pthread_cond_destroy(&t->wake);
        free_timeline(t);
        return H5PACK_ENOMEM;
    }
    *out = t;
    return 0;
}

const char *h5pack_timeline_file(const h5pack_timeline *t)
{
    return t ? t->name : NULL;
}

void h5pack_timeline_close(h5pack_timeline *t)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->lock);
    t->stop = 1;
    pthread_cond_signal(&t->wake);
    pthread_mutex_unlock(&t->lock);
    pthread_join(t->thread, NULL);
    tl_counts c = sample_now(t); /* the last, partial interval: the count columns add up to the totals */
    write_row(t, &c);
    pthread_mutex_destroy(&t->lock), pthread_cond_destroy(&t->wake);
    free_timeline(t);
}
