/* reader_drain.h - for tests: open PATH with CFG, take and release every batch until H5PACK_END, and
 * return the reader's final stats (what the simulator's figures are compared with). With a callback, each
 * batch is handed to it (with the reader's info) before it is released. Fails the test on any error.
 * Include after check.h. */
#ifndef H5PACK_TESTS_READER_DRAIN_H
#define H5PACK_TESTS_READER_DRAIN_H

#include "h5pack.h"

typedef void (*test_batch_fn)(void *ctx, const h5pack_info *info, const h5pack_batch *b);

static inline h5pack_stats test_drain_reader_each(const char *path, const h5pack_config *cfg, test_batch_fn fn,
                                                  void *ctx)
{
    h5pack_reader *r = NULL;
    int rc = h5pack_open(path, cfg, &r);
    CHECK_MSG(rc == 0, "h5pack_open(%s): %s", path, h5pack_last_error(r));
    h5pack_info info = H5PACK_INFO_INIT;
    CHECK_OK(h5pack_info_get(r, &info));
    h5pack_batch b = H5PACK_BATCH_INIT;
    while ((rc = h5pack_next(r, &b)) == H5PACK_OK) {
        if (fn)
            fn(ctx, &info, &b);
        CHECK_OK(h5pack_release(r, &b));
    }
    CHECK_EQ_INT(rc, H5PACK_END);
    h5pack_stats st = H5PACK_STATS_INIT;
    CHECK_OK(h5pack_stats_get(r, &st));
    h5pack_close(r);
    return st;
}

static inline h5pack_stats test_drain_reader(const char *path, const h5pack_config *cfg)
{
    return test_drain_reader_each(path, cfg, NULL, NULL);
}

#endif
