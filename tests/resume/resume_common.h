/* resume_common.h - for the resume tests: a delivered batch copied out byte for byte (data, labels,
 * indices, boxes, position), a whole run recorded, and the comparison of two deliveries. Header only;
 * include after check.h. */
#ifndef H5PACK_TESTS_RESUME_COMMON_H
#define H5PACK_TESTS_RESUME_COMMON_H

#include <stdlib.h>
#include <string.h>

#include "h5pack.h"

typedef struct delivery {
    uint64_t epoch, index;
    uint32_t echo, height, width;
    size_t count, bytes;
    uint8_t *data;
    int64_t *labels;
    uint64_t *indices;
    h5pack_crop_box *boxes;
} delivery;

typedef struct run_log {
    delivery *d;
    size_t n, cap;
    h5pack_stats stats;
    h5pack_info info;
} run_log;

static inline void *dup_bytes(const void *src, size_t n)
{
    if (!src || n == 0)
        return NULL;
    void *p = malloc(n);
    CHECK(p != NULL);
    return memcpy(p, src, n);
}

static inline delivery delivery_copy(const h5pack_batch *b)
{
    delivery d = {.epoch = b->epoch, .index = b->index, .echo = b->echo, .height = b->height, .width = b->width,
                  .count = b->count, .bytes = b->bytes};
    CHECK(!b->on_device);
    d.data = dup_bytes(b->data, b->bytes);
    d.labels = dup_bytes(b->labels, b->count * sizeof *b->labels);
    d.indices = dup_bytes(b->indices, b->count * sizeof *b->indices);
    d.boxes = dup_bytes(b->boxes, b->count * sizeof *b->boxes);
    return d;
}

static inline void delivery_free(delivery *d)
{
    free(d->data), free(d->labels), free(d->indices), free(d->boxes);
}

static inline int same_bytes(const void *a, const void *b, size_t n)
{
    if (!a || !b)
        return a == b;
    return memcmp(a, b, n) == 0;
}

/* A and B are the same delivery, byte for byte; WHAT names the comparison in a failure. */
static inline void check_same_delivery(const delivery *a, const delivery *b, const char *what)
{
    CHECK_MSG(a->epoch == b->epoch && a->index == b->index && a->echo == b->echo,
              "%s: position (%llu, %llu, %u) vs (%llu, %llu, %u)", what, (unsigned long long)a->epoch,
              (unsigned long long)a->index, a->echo, (unsigned long long)b->epoch, (unsigned long long)b->index, b->echo);
    CHECK_MSG(a->count == b->count && a->bytes == b->bytes && a->height == b->height && a->width == b->width,
              "%s (epoch %llu batch %llu echo %u): count/size differ", what, (unsigned long long)a->epoch,
              (unsigned long long)a->index, a->echo);
    CHECK_MSG(same_bytes(a->indices, b->indices, a->count * sizeof *a->indices), "%s (epoch %llu batch %llu echo %u): "
              "indices differ", what, (unsigned long long)a->epoch, (unsigned long long)a->index, a->echo);
    CHECK_MSG(same_bytes(a->labels, b->labels, a->count * sizeof *a->labels), "%s (epoch %llu batch %llu echo %u): "
              "labels differ", what, (unsigned long long)a->epoch, (unsigned long long)a->index, a->echo);
    CHECK_MSG(same_bytes(a->boxes, b->boxes, a->count * sizeof *a->boxes), "%s (epoch %llu batch %llu echo %u): "
              "boxes differ", what, (unsigned long long)a->epoch, (unsigned long long)a->index, a->echo);
    CHECK_MSG(same_bytes(a->data, b->data, a->bytes), "%s (epoch %llu batch %llu echo %u): data differ", what,
              (unsigned long long)a->epoch, (unsigned long long)a->index, a->echo);
}

/* Opens PATH with CFG, records every delivery until H5PACK_END (each released at once). */
static inline run_log record_run(const char *path, const h5pack_config *cfg)
{
    run_log log = {0};
    h5pack_reader *r = NULL;
    int rc = h5pack_open(path, cfg, &r);
    CHECK_MSG(rc == 0, "h5pack_open(%s): %s", path, h5pack_last_error(r));
    log.info = (h5pack_info)H5PACK_INFO_INIT;
    CHECK_OK(h5pack_info_get(r, &log.info));
    h5pack_batch b = H5PACK_BATCH_INIT;
    while ((rc = h5pack_next(r, &b)) == H5PACK_OK) {
        if (log.n == log.cap) {
            log.cap = log.cap ? 2 * log.cap : 64;
            log.d = realloc(log.d, log.cap * sizeof *log.d);
            CHECK(log.d != NULL);
        }
        log.d[log.n++] = delivery_copy(&b);
        CHECK_OK(h5pack_release(r, &b));
    }
    CHECK_MSG(rc == H5PACK_END, "h5pack_next: %d %s", rc, h5pack_last_error(r));
    log.stats = (h5pack_stats)H5PACK_STATS_INIT;
    CHECK_OK(h5pack_stats_get(r, &log.stats));
    h5pack_close(r);
    return log;
}

static inline void run_log_free(run_log *log)
{
    for (size_t i = 0; i < log->n; i++)
        delivery_free(&log->d[i]);
    free(log->d);
    memset(log, 0, sizeof *log);
}

#endif
