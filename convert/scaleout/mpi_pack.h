/* mpi_pack.h - the decode-and-write stage of a conversion shared by the ranks of an MPI job
 * (docs/scale-out.md): the same file as the serial pipeline (pack_pipeline.h) makes, images in the
 * same rows, the same skips, the same sums.
 *
 * The packed order is cut into windows. In each, rank r decodes its contiguous share of positions with
 * its own threads; the ranks then exchange how many images each kept, which gives every kept image its
 * final row (a skipped image shifts every later row, as in the serial run). Each rank writes the chunks
 * that lie wholly within its rows itself: with pwrite at the chunk's computed address when the file is
 * unfiltered, else (gzip, fletcher32) it filters them and rank 0 writes them through HDF5. The rows of
 * chunks shared with a neighbour go to rank 0, which completes those chunks and writes them: no two
 * ranks ever write the same chunk. Skip reasons and the per-channel integer sums are gathered to rank 0,
 * so the mean and std are the serial ones bit for bit. */
#ifndef H5PACK_MPI_PACK_H
#define H5PACK_MPI_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "decodejob.h"
#include "h5out.h"
#include "mpi_world.h"
#include "pack_pipeline.h"
#include "scan.h"

typedef struct mpi_pack_cfg {
    decode_job_cfg job;
    const scan_entry *entries;
    const size_t *order; /* the packed order (the same on every rank) */
    size_t n;
    uint64_t chunk_images;
    int gzip_level, checksum, threads, strict;
    h5out *out;          /* rank 0: the open file; NULL on the others */
    const char *path;    /* the file's (temporary) name, the same on every rank */
    int64_t base;        /* >= 0: chunk i lies at base + i * chunk bytes (unfiltered; h5out_chunk_base) */
    void (*progress)(void *ctx, uint64_t done, uint64_t total, uint64_t converted); /* rank 0, may be NULL */
    void *progress_ctx;
} mpi_pack_cfg;

/* What one rank did, for the run's report. */
typedef struct mpi_rank_report {
    uint64_t decoded, skipped;
    uint64_t shared_rows;    /* rows of chunks shared with another rank, sent to rank 0 */
    double decode_s, wait_s; /* decoding; waiting for the other ranks */
} mpi_rank_report;

/* Runs the stage on every rank of W. On rank 0, RES is filled as pipeline_run fills it and RANKS
 * (W->size entries) with each rank's report. Returns PIPELINE_OK on every rank, or the same failure on
 * every rank: PIPELINE_STRICT_STOP (rank 0's RES->skipped names the image), or PIPELINE_ERROR with ERR
 * set on the rank(s) that failed and empty on the others (they have nothing to add). */
pipeline_status mpi_pack_run(const mpi_pack_cfg *cfg, const mpi_world *w, pipeline_result *res,
                             mpi_rank_report *ranks, char *err, size_t err_len);

/* Broadcasts LEN bytes at BUF from rank 0 to every rank of W (a no-op in a world of one). Returns 0. */
int mpi_share(const mpi_world *w, void *buf, size_t len);

/* Rank 0's STATUS, handed to every rank of W (the others' argument is ignored). */
int mpi_share_status(const mpi_world *w, int status);

/* V[0..N) becomes the largest of every rank's V (element by element). */
void mpi_max(const mpi_world *w, int64_t *v, int n);

#endif
