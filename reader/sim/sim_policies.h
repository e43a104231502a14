/* sim_policies.h - the cache policies h5pack_simulate() replays besides Belady (which is plan.h itself):
 *
 *   LRU    a cache of SLOTS chunks; a use of a cached chunk makes it the most recent; a miss evicts the
 *          least recently used chunk. Works on the chunk uses of order.h.
 *
 *   HDF5   a model of HDF5 1.10's own raw-data chunk cache (H5Dchunk.c: H5D__chunk_lock,
 *          H5D__chunk_cache_prune, H5D__chunk_cache_evict, H5D__chunk_unlock, H5D__chunk_cacheable), fed
 *          one H5Dread at a time, as h5py's __getitem__ reads one sample per call:
 *          - hash slots: a chunk lives in slot (chunk index mod nslots) and a slot holds one chunk; a
 *            chunk loaded into an occupied slot evicts the occupant, whatever its age (a collision);
 *          - entries sit on a list; a hit moves its entry ONE place towards the tail; new entries are
 *            appended at the tail;
 *          - before a load, entries are preempted from the head until nbytes_max has room: a first
 *            pointer takes only fully read entries (rd_count == 0), a second pointer, started after
 *            nused * w0 steps of the first, takes any entry;
 *          - rd_count starts at the full chunk size and each read subtracts the bytes it read, so an
 *            entry counts as fully read once as many bytes as the chunk holds have been read from it;
 *          - a chunk larger than nbytes_max is never cached: unfiltered, HDF5 reads just the requested
 *            bytes straight from the file (one read per H5Dread); filtered, it reads and decodes the
 *            whole chunk for every H5Dread. Both count as file reads here (HDF5 itself counts the first
 *            as neither hit nor miss).
 *          Checked against real HDF5 by counting raw-data reads with the log VFD (tests/stats).
 */
#ifndef H5PACK_SIM_POLICIES_H
#define H5PACK_SIM_POLICIES_H

#include <stddef.h>
#include <stdint.h>

/* ---- LRU ----------------------------------------------------------------------------------------- */

typedef struct lru_sim lru_sim;

/* A cache of SLOTS (>= 1) chunks out of N_CHUNKS. Returns 0, H5PACK_EINVAL or H5PACK_ENOMEM. */
int h5pack_lru_sim_create(uint64_t slots, uint64_t n_chunks, lru_sim **out);

/* One use of CHUNK (< n_chunks): 1 when it was cached (hit), 0 when it had to be loaded (miss). */
int h5pack_lru_sim_access(lru_sim *s, uint64_t chunk);

void h5pack_lru_sim_free(lru_sim *s);

/* ---- HDF5 chunk cache model ----------------------------------------------------------------------- */

#define HDF5_SIM_DEFAULT_NSLOTS 521
#define HDF5_SIM_DEFAULT_NBYTES ((uint64_t)1 << 20)
#define HDF5_SIM_DEFAULT_W0 0.75

typedef struct hdf5_sim_params {
    uint64_t nbytes_max;  /* rdcc_nbytes */
    uint64_t nslots;      /* rdcc_nslots (0: nothing is cached) */
    double w0;            /* rdcc_w0 in [0,1] */
    uint64_t chunk_bytes; /* decompressed bytes of a full chunk (HDF5's layout chunk size) */
    int filtered;         /* 1 when the dataset has a filter pipeline (deflate, fletcher32...) */
} hdf5_sim_params;

typedef struct hdf5_sim hdf5_sim;

/* Returns 0, H5PACK_EINVAL (chunk_bytes 0, w0 outside [0,1]) or H5PACK_ENOMEM. */
int h5pack_hdf5_sim_create(const hdf5_sim_params *p, hdf5_sim **out);

/* One H5Dread of ACCESSED bytes of CHUNK whose stored (on-disk) size is STORED_BYTES. Returns the number
 * of file reads it made (0: served from the cache, 1: chunk loaded or bypassing read) and adds the bytes
 * they read to *BYTES_READ. */
int h5pack_hdf5_sim_read(hdf5_sim *s, uint64_t chunk, uint64_t accessed, uint64_t stored_bytes, uint64_t *bytes_read);

/* HDF5's data sieve for CONTIGUOUS datasets (H5D__contig_readvv_sieve_cb): no chunk cache, but one
 * buffer of sieve_bytes (fapl H5Pset_sieve_buf_size, default 64 KiB) holding the file bytes from the
 * last refill: a read inside it costs nothing; a read larger than the buffer goes straight to the file;
 * any other read refills the buffer from the read's offset, up to sieve_bytes or the dataset's end. */
#define HDF5_SIM_DEFAULT_SIEVE ((uint64_t)64 << 10)

typedef struct hdf5_sieve {
    uint64_t sieve_bytes, dataset_bytes;
    uint64_t start, size; /* buffered range of the dataset (size 0: empty) */
} hdf5_sieve;

void h5pack_hdf5_sieve_init(hdf5_sieve *s, uint64_t sieve_bytes, uint64_t dataset_bytes);

/* One H5Dread of LEN bytes at OFFSET in the dataset: returns the file reads (0 or 1), adds their bytes. */
int h5pack_hdf5_sieve_read(hdf5_sieve *s, uint64_t offset, uint64_t len, uint64_t *bytes_read);

/* Chunks currently cached (for tests). */
uint64_t h5pack_hdf5_sim_cached(const hdf5_sim *s);

void h5pack_hdf5_sim_free(hdf5_sim *s);

#endif
