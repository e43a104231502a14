/*
 * h5pack_sim.h - replaying the reader's chunk accesses without reading image data (libh5pack).
 *
 * The reader's order, cache size and window decide which chunks each batch needs and which of them are
 * already cached. A simulation derives that access sequence with the reader's own code and replays it
 * under a cache policy and size, reading nothing but the chunks' stored sizes. It answers, in
 * milliseconds: what hit rate and read amplification would this cache size, this order, h5py's own
 * cache, or chunks of K images give? (h5pack-stats simulate is built on it: docs/stats.md.)
 *
 *     h5pack_sim *sim = NULL;
 *     if (h5pack_sim_open("train.h5", &cfg, &sim) < 0) { puts(h5pack_sim_last_error(sim)); ... }
 *     h5pack_sim_params p = H5PACK_SIM_PARAMS_DEFAULTS;
 *     for (size_t mib = 64; mib <= 4096; mib *= 2) {
 *         h5pack_sim_result r = H5PACK_SIM_RESULT_INIT;
 *         p.cache_bytes = mib << 20;
 *         if (h5pack_sim_run(sim, &p, &r) == 0)
 *             printf("%zu MiB: hit rate %.3f\n", mib, r.hit_rate);
 *     }
 *     h5pack_sim_close(sim);
 *
 * Thread-safety: a handle is used by one thread at a time; different handles are independent.
 * h5pack_simulate() is thread-safe.
 */
#ifndef H5PACK_SIM_H
#define H5PACK_SIM_H

#include "h5pack.h"

#ifdef __cplusplus
extern "C" {
#endif

#define H5PACK_SIM_MAX_NSLOTS 16777216 /* 2^24 */

typedef enum h5pack_policy {
    H5PACK_POLICY_BELADY = 0, /* what the reader does: evict the chunk used furthest in the future */
    H5PACK_POLICY_LRU = 1,
    H5PACK_POLICY_HDF5 = 2    /* model of HDF5's chunk cache: hash slots, w0, too-large chunks bypass */
} h5pack_policy;

/* h5pack_sim_params.order: the order of the config given to h5pack_sim_open. */
#define H5PACK_SIM_ORDER_CONFIG (-1)

/* One replay. Start from H5PACK_SIM_PARAMS_DEFAULTS and change fields. */
typedef struct h5pack_sim_params {
    size_t struct_size;
    h5pack_policy policy;   /* H5PACK_POLICY_BELADY */
    size_t cache_bytes;     /* 1 GiB: the cache to simulate (as h5pack_config.cache_bytes; for the HDF5
                               policy, rdcc_nbytes) */
    size_t hdf5_nslots;     /* 521: HDF5 policy's hash slots (rdcc_nslots); 0 also means 521; at most
                               H5PACK_SIM_MAX_NSLOTS (the model keeps a table entry per slot) */
    double hdf5_w0;         /* 0.75: HDF5 policy's preemption weight (rdcc_w0) in [0,1], used as given */
    int order;              /* H5PACK_SIM_ORDER_CONFIG, or an h5pack_order to replay instead of the config's */
    uint64_t chunk_samples; /* 0: the file's own chunks. K >= 1: what-if chunks of K images (see below) */
} h5pack_sim_params;

#define H5PACK_SIM_PARAMS_DEFAULTS                                                                      \
    {                                                                                                   \
        .struct_size = sizeof(h5pack_sim_params), .policy = H5PACK_POLICY_BELADY,                       \
        .cache_bytes = ((size_t)1 << 30), .hdf5_nslots = 521, .hdf5_w0 = 0.75,                          \
        .order = H5PACK_SIM_ORDER_CONFIG, .chunk_samples = 0                                            \
    }

typedef struct h5pack_sim_result {
    size_t struct_size;          /* H5PACK_SIM_RESULT_INIT */
    uint64_t accesses;           /* chunk uses: per fresh batch, the distinct chunks its samples live in */
    uint64_t hits;
    uint64_t misses;             /* loads (HDF5 model: bypassing reads count as misses) */
    double hit_rate;             /* hits / accesses, 0 without accesses */
    uint64_t bytes_read;         /* stored bytes read from the file */
    double read_amplification;   /* bytes_read / bytes_needed */
    uint64_t bytes_needed;       /* stored bytes of the distinct chunks each epoch needed, summed */
    /* what was replayed */
    h5pack_order order;
    uint64_t chunk_samples;      /* images per chunk (the file's own, or K, at most the sample count) */
    uint64_t chunk_bytes;        /* decompressed bytes of one full chunk */
    uint64_t n_chunks;
    size_t cache_chunks;         /* chunks the cache holds (at most n_chunks), as h5pack_info */
    size_t window;               /* the chunk order's window */
    int hypothetical;            /* 1: what-if chunks of chunk_samples images, not the file's */
    int stored_estimated;        /* 1: stored sizes are estimates (what-if chunks of a filtered file) */
} h5pack_sim_result;

#define H5PACK_SIM_RESULT_INIT { .struct_size = sizeof(h5pack_sim_result) }

typedef struct h5pack_sim h5pack_sim;

/* Opens PATH as h5pack_open(path, cfg) would (cfg NULL = defaults), learns every chunk's stored size,
 * closes the file again, and keeps cfg (its order, batch, window, seed, rank/world, drop_last, threads
 * and epochs: 0 = 1 here) for the runs. On failure returns a negative code, and *out is NULL or a failed
 * handle whose only uses are h5pack_sim_last_error and h5pack_sim_close (as with h5pack_open). */
H5PACK_API int h5pack_sim_open(const char *path, const h5pack_config *cfg, h5pack_sim **out);

/* Replays the access sequence h5pack_open(path, cfg) would make, with params' cache size (the chunk
 * order's default window depends on the file's chunks only, not on the cache) and params' order, under
 * params' policy, and fills *result. With H5PACK_POLICY_BELADY, the file's own chunks and cache_bytes ==
 * cfg->cache_bytes, the hits, misses and bytes read equal those of the real reader.
 *
 * What-if chunks (params->chunk_samples = K): the same file, nothing repacked, replayed as if it had
 * been converted with chunks of K images (h5pack --chunk K): sample i lives in chunk i / K, a chunk holds
 * K x image bytes, the cache holds cache_bytes / that many chunks. The sample order is the one the
 * reader would draw for such a file: for SEQUENTIAL and RANDOM that is the file's own sequence (they do
 * not depend on chunks); for CHUNK it is the chunk-level shuffle over chunks of K images, with the
 * default window such chunks give, not the file's own chunk order. Stored sizes: a file
 * without filters stores K x image bytes per chunk; with filters, each what-if chunk is estimated as its
 * image bytes x the file's average stored/image ratio (result->stored_estimated). K equal to the file's
 * own chunk gives exactly the file's own numbers (on a contiguous dataset there are no own chunks: every
 * K is a what-if, and the HDF5 policy models HDF5's chunk cache instead of its contiguous data sieve).
 *
 * Returns 0 or a negative code (EINVAL: bad params, named in h5pack_sim_last_error; ENOMEM). */
H5PACK_API int h5pack_sim_run(h5pack_sim *sim, const h5pack_sim_params *params, h5pack_sim_result *result);

/* The file as h5pack_sim_open found it (h5pack_describe's answer for the same path and cfg). */
H5PACK_API int h5pack_sim_describe(const h5pack_sim *sim, h5pack_file_desc *desc);

/* Detail of the last failure on SIM ("" if none); for SIM == NULL, of the last failed h5pack_sim_open()
 * in this thread. Valid until the next call on SIM. */
H5PACK_API const char *h5pack_sim_last_error(const h5pack_sim *sim);

/* Frees SIM. NULL is a no-op. */
H5PACK_API void h5pack_sim_close(h5pack_sim *sim);

/* One replay without a handle: h5pack_sim_open + h5pack_sim_run + h5pack_sim_close, the message in
 * errbuf. Thread-safe. */
H5PACK_API int h5pack_simulate(const char *path, const h5pack_config *cfg, const h5pack_sim_params *sim,
                               h5pack_sim_result *result, char *errbuf, size_t errbuf_len);

#ifdef __cplusplus
}
#endif
#endif /* H5PACK_SIM_H */
