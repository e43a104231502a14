/* resolve.h - turns a user config and the file's geometry into the numbers the reader runs with:
 * threads, cache slots, the CHUNK order's window, the order parameters and the normalisation. One
 * place, so h5pack_open() and h5pack_simulate() derive the very same access sequence and plan.
 *
 * Rules (documented in docs/reader.md):
 *   threads        config.threads, or h5pack_default_threads() (cpus.h) when 0
 *   slots          max(1, cache_bytes / chunk_bytes): the plan's capacity. The cache allocates
 *                  min(slots, n_chunks) buffers (more could never be used; the plan is the same).
 *   window         config.window, or h5pack_order_default_window() (order.h: the file's geometry
 *                  only) when 0; clamped to [1, n_chunks]. Neither threads nor the cache size enter
 *                  the order, so every rank of a job derives the same one.
 * The cache check (h5pack_reader_check_cache) is separate: the simulator replays any cache size. */
#ifndef H5PACK_RESOLVE_H
#define H5PACK_RESOLVE_H

#include <stddef.h>
#include <stdint.h>

#include "chunksrc.h"
#include "h5pack.h"
#include "order.h"

typedef struct reader_setup {
    order_params op;
    size_t slots;           /* plan capacity */
    size_t slots_allocated; /* buffers the cache really needs: min(slots, n_chunks) */
    int window_derived;     /* 1: the window is the default (config window 0) */
    int threads;
    uint64_t epochs;        /* 0 = endless */
} reader_setup;

/* Checks the config fields that need no file (EINVAL with the field's name in ERR), struct_size included. */
int h5pack_reader_check_config(const h5pack_config *cfg, char *err, size_t err_len);

/* Fills *OUT from CFG (already checked) and the geometry. EINVAL when no batch results (drop_last with
 * fewer samples per rank than one batch). */
int h5pack_reader_resolve_setup(const h5pack_config *cfg, const source_geometry *g, reader_setup *out, char *err,
                         size_t err_len);

/* Slots the cache needs for S: with the CHUNK order and the derived window, the window plus one chunk
 * being read per worker thread, capped by the number of chunks (a cache holding the whole file always
 * works); 1 otherwise (an explicit window is taken as given: a cache smaller than it re-reads chunks). */
uint64_t h5pack_reader_cache_need(const reader_setup *s, const source_geometry *g);

/* EINVAL when the cache (S's slots) holds fewer than h5pack_reader_cache_need() chunks, with a message
 * giving the smallest cache_bytes that works (exact, and rounded up with a size suffix). */
int h5pack_reader_check_cache(const reader_setup *s, const source_geometry *g, char *err, size_t err_len);

/* The per-channel mean/std in [0,1] units that the output uses. EINVAL for NORM_FILE on a file without
 * stored statistics, or a custom std of 0. */
int h5pack_reader_resolve_norm(const h5pack_config *cfg, const source_geometry *g, float mean[H5PACK_MAX_CHANNELS],
                        float std[H5PACK_MAX_CHANNELS], char *err, size_t err_len);

#endif
