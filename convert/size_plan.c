/* size_plan.c - see size_plan.h. */
#include "size_plan.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct probe_job {
    const char *src_dir;
    const scan_entry *entries;
    const size_t *order;
    size_t n;
    const decode_opts *opts;
    uint32_t *hw;        /* n x 2: the header's size, 0 x 0 when it gives none */
    pthread_mutex_t mu;
    size_t next;         /* next position to probe */
    int out_of_memory;
} probe_job;

#define PROBE_BATCH 64 /* positions a thread takes at a time */

static void probe_one(probe_job *j, size_t pos)
{
    const char *rel = j->entries[j->order[pos]].relpath;
    size_t len = strlen(j->src_dir) + strlen(rel) + 2;
    char *path = malloc(len);
    uint32_t h = 0, w = 0;
    if (!path) {
        pthread_mutex_lock(&j->mu);
        j->out_of_memory = 1;
        pthread_mutex_unlock(&j->mu);
        return;
    }
    snprintf(path, len, "%s/%s", j->src_dir, rel);
    if (image_probe_size(path, j->opts, &h, &w) == 0)
        j->hw[2 * pos] = h, j->hw[2 * pos + 1] = w;
    free(path);
}

static void *probe_thread(void *arg)
{
    probe_job *j = arg;
    for (;;) {
        pthread_mutex_lock(&j->mu);
        size_t first = j->next;
        j->next = first + PROBE_BATCH < j->n ? first + PROBE_BATCH : j->n;
        size_t end = j->next;
        pthread_mutex_unlock(&j->mu);
        if (first >= end)
            return NULL;
        for (size_t pos = first; pos < end; pos++)
            probe_one(j, pos);
    }
}

/* Runs the probes on THREADS threads (the calling one included). */
static int probe_all(probe_job *j, int threads, char *err, size_t len)
{
    pthread_t *tid = calloc(threads > 1 ? (size_t)threads - 1 : 1, sizeof *tid);
    int started = 0, rc = 0;
    if (!tid || pthread_mutex_init(&j->mu, NULL) != 0) {
        free(tid);
        snprintf(err, len, "cannot set up the threads that read the image headers");
        return -1;
    }
    for (int i = 0; i + 1 < threads && pthread_create(&tid[i], NULL, probe_thread, j) == 0; i++)
        started++;
    probe_thread(j);
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    pthread_mutex_destroy(&j->mu);
    free(tid);
    if (j->out_of_memory) {
        snprintf(err, len, "out of memory reading the image headers");
        rc = -1;
    }
    return rc;
}

/* The stored size of an H x W image under RULE. */
static void stored_size(const size_rule *rule, uint32_t h, uint32_t w, uint32_t *out_h, uint32_t *out_w)
{
    if (rule->short_side)
        image_short_side_size(h, w, rule->short_side, out_h, out_w);
    else
        image_max_side_size(h, w, rule->max_side, out_h, out_w);
}

/* A place that cannot be stored: a side the reader cannot index, or (--short-side growing a small image)
 * more pixels than --max-pixels allows, which would otherwise allocate the grown image. Marks it and returns
 * 1. The header's own size passed --max-pixels already (image_probe_size). */
static int refuse_place(ragged_place *r, uint64_t max_pixels)
{
    if (r->height > RAGGED_MAX_SIDE || r->width > RAGGED_MAX_SIDE)
        r->too_long = 1;
    else if ((uint64_t)r->height * r->width > max_pixels)
        r->too_many_pixels = 1;
    else
        return 0;
    r->resize = 0;
    return 1;
}

/* Places in packed order, one after the other, with RULE applied. */
static void lay_out(const uint32_t *hw, size_t n, uint32_t channels, const size_rule *rule, uint64_t max_pixels,
                    size_plan *p)
{
    uint64_t offset = 0;
    p->one_size = 1;
    for (size_t pos = 0; pos < n; pos++) {
        ragged_place *r = &p->places[pos];
        uint32_t h = hw[2 * pos], w = hw[2 * pos + 1];
        r->offset = offset;
        if (h == 0) /* no size from the header: no bytes (a decode that succeeds after all is skipped) */
            continue;
        stored_size(rule, h, w, &r->height, &r->width);
        r->resize = r->height != h || r->width != w;
        if (refuse_place(r, max_pixels)) { /* skipped when its turn comes */
            p->one_size = 0; /* the skip needs the places: no one-size file */
            continue;
        }
        offset += (uint64_t)r->height * r->width * channels;
        if (p->sized++ == 0)
            p->height = r->height, p->width = r->width;
        else if (r->height != p->height || r->width != p->width)
            p->one_size = 0;
        p->max_height = r->height > p->max_height ? r->height : p->max_height;
        p->max_width = r->width > p->max_width ? r->width : p->max_width;
    }
    p->total_bytes = offset;
    if (rule->max_side || rule->short_side) /* asked for: the images keep their aspect, whatever their sizes */
        p->one_size = 0;
}

int size_plan_make(const char *src_dir, const scan_entry *entries, const size_t *order, size_t n,
                   const decode_opts *opts, uint32_t channels, const size_rule *rule, int threads, size_plan *out,
                   char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    probe_job j = {.src_dir = src_dir, .entries = entries, .order = order, .n = n, .opts = opts};
    j.hw = calloc(n ? 2 * n : 1, sizeof *j.hw);
    out->places = calloc(n ? n : 1, sizeof *out->places);
    if (!j.hw || !out->places) {
        free(j.hw);
        size_plan_free(out);
        snprintf(err, err_len, "out of memory for the sizes of %zu images", n);
        return -1;
    }
    int rc = probe_all(&j, threads > 0 ? threads : 1, err, err_len);
    if (rc == 0)
        lay_out(j.hw, n, channels, rule, opts->max_pixels, out);
    free(j.hw);
    if (rc != 0)
        size_plan_free(out);
    return rc;
}

void size_plan_free(size_plan *p)
{
    free(p->places);
    memset(p, 0, sizeof *p);
}
