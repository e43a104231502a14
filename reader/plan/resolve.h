/* resolve.h - turns a user config and the file's geometry into the numbers the reader runs with:
 * threads, cache slots, the CHUNK order's window, the order parameters and the normalisation. One
 * place, so h5pack_open() and h5pack_simulate() derive the very same access sequence and plan.
 *
 * Rules (documented in docs/reader.md):
 *   threads        config.threads, or h5pack_default_threads() (cpus.h) when 0
 *   slots          max(1, cache_bytes / chunk_bytes): the plan's capacity. The cache allocates
 *                  min(slots, n_chunks) buffers (more could never be used; the plan is the same).
 *   window         config.window; when 0, h5pack_order_default_window() (order.h: the file's geometry)
 *                  shrunk to what the cache holds beside the chunks one batch may start:
 *                  min(default, slots - (ceil(batch / k) + 1)), at least 1, or the default when the cache
 *                  holds the whole file (h5pack_reader_derived_window).
 *                  Clamped to [1, n_chunks]. The order depends on the file, seed, the global batch and
 *                  the cache (or window) that every rank of a job sets alike, never on threads, CPUs or
 *                  timing, nor on how the global batch is split into ranks; ranks that set different
 *                  caches get different fingerprints. A cache that leaves a window under the default
 *                  derives another one for another batch_size: a resume with another split then needs
 *                  window set to the saved one (the fingerprint check names it).
 *   start          config.start_epoch/start_batch/start_echo, or the position start_sample names
 *                  (resume.h: h5pack_reader_check_start resolves it).
 * There is no cache check: every cache opens (at least one slot). The window taken from the cache keeps
 * the chunk order at read amplification 1; an explicit window larger than the cache re-reads chunks. */
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
    int window_derived;     /* 1: the window comes from the file and the cache (config window 0) */
    int threads;
    uint64_t epochs;        /* 0 = endless */
    /* the first delivery: echo start_echo of batch start_batch of epoch start_epoch, that epoch laid out
       from start_origin (order.h; 0 unless the start came from config.start_sample) */
    uint64_t start_epoch, start_batch;
    uint32_t start_echo;
    int64_t start_origin;
} reader_setup;

/* Checks the config fields that need no file (EINVAL with the field's name in ERR), struct_size included. */
int h5pack_reader_check_config(const h5pack_config *cfg, char *err, size_t err_len);

/* Fills *OUT from CFG (already checked) and the geometry. EINVAL when no batch results (drop_last with
 * fewer samples per rank than one batch). */
int h5pack_reader_resolve_setup(const h5pack_config *cfg, const source_geometry *g, reader_setup *out, char *err,
                         size_t err_len);

/* The chunk order's window for config window 0: the file's default window, shrunk so that SLOTS hold it
 * plus the chunks one batch of BATCH samples may start (ceil(BATCH / k) + 1). Then, at any batch, the
 * chunks the epoch still needs fit the cache and Belady's plan never evicts one: every chunk is read
 * once per epoch, whatever the cache size (with world > 1 a rank's share of each global batch comes from
 * its own band of the window's slots, order.h, and needs fewer). */
uint64_t h5pack_reader_derived_window(const source_geometry *g, size_t slots, uint64_t batch);

/* The per-channel mean/std in [0,1] units that the output uses. EINVAL for NORM_FILE on a file without
 * stored statistics, or a custom std of 0. */
int h5pack_reader_resolve_norm(const h5pack_config *cfg, const source_geometry *g, float mean[H5PACK_MAX_CHANNELS],
                        float std[H5PACK_MAX_CHANNELS], char *err, size_t err_len);

#endif
