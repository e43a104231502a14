/* mpi_pack_impl.h - what the files of the ranks' shared stage (mpi_pack.c, mpi_root.c, mpi_comm.c) share. */
#ifndef H5PACK_MPI_PACK_IMPL_H
#define H5PACK_MPI_PACK_IMPL_H

#include <mpi.h>
#include <stdint.h>

#include "mpi_pack.h"

/* A rank's decoded images of one window stay in memory until written (two windows: one is written while
 * the next is decoded): at most this many bytes of them per window. */
#define MPI_WINDOW_BYTES ((uint64_t)128 << 20)
/* Rank 0 receives every filtered chunk of a window: the whole window's raw bytes stay below this. */
#define MPI_FILTERED_WINDOW_BYTES ((uint64_t)1 << 30)

typedef struct skip_rec {
    int64_t pos;
    char reason[sizeof(((decoded_image *)0)->reason)];
} skip_rec;

/* Exchange 1: what each rank has to say after decoding its share. */
typedef struct rank_status {
    int64_t kept, skipped, failed;
} rank_status;

/* A chunk rank 0 completes from rows of several ranks. */
typedef struct pending_chunk {
    uint64_t index, filled;
    uint8_t *buf;
} pending_chunk;

typedef struct mpi_pack {
    const mpi_pack_cfg *cfg;
    const mpi_world *w;
    pipeline_result *res;
    uint64_t image_bytes, chunk_bytes, per_rank; /* per_rank: a window holds per_rank * ranks positions */
    uint64_t slots;                              /* the most positions of one share: per_rank + 2 chunks */
    int fd;                                      /* unfiltered: this rank's descriptor of the file */
    decoded_image *imgs;                         /* 2 banks of SLOTS decoded images: window w uses bank w % 2 */
    int bank;                                    /* the current window's */
    size_t *kept_slot;                           /* the current window's kept images: slots in its bank */
    struct chunk_writer *writer;                 /* unfiltered: writes whole chunks while the next window decodes */
    uint64_t *whole;                             /* the current window's whole chunks: their indices */
    const uint8_t **whole_images;                /* and their images (K per chunk) */
    size_t n_whole;
    uint8_t *filter_out;                         /* rank 0: a chunk it completes, filtered */
    struct libdeflate_compressor *comp;
    uint64_t rows_done;                          /* rows of all ranks in earlier windows */
    uint64_t my_chunks, my_bytes;                /* written by this rank */
    uint64_t sum[6];                             /* sum[3] and sum_sq[3] of this rank's kept images */
    pending_chunk *pending;                      /* rank 0 */
    size_t n_pending;
    mpi_rank_report me;
    char *err;
    size_t err_len;
    int failed;
} mpi_pack;

/* A growable byte message for rank 0. */
typedef struct message {
    uint8_t *data;
    size_t len, cap;
} message;

/* Record kinds in the message to rank 0: a row of a shared chunk, or a filtered chunk. */
enum { REC_ROW = 1, REC_CHUNK = 2 };


/* Waits for RQ without spinning a core (short sleeps between tests); the time goes to M's report when M. */
void mpi_wait_quietly(mpi_pack *m, MPI_Request *rq);

/* Records this rank's first failure ("FMT" with A and B) for its message. Returns -1. */
int mpi_fail(mpi_pack *m, const char *fmt, const char *a, const char *b);

/* Rank 0: appends the window [WS, WE)'s skipped files (ALL: every rank's records, in position order) and
 * kept positions to the result. */
int mpi_root_record_window(mpi_pack *m, size_t ws, size_t we, const skip_rec *all, size_t n_all);

/* Rank 0: applies the gathered records (rows of shared chunks, filtered chunks) of ALL (LEN bytes). */
int mpi_root_take_records(mpi_pack *m, const uint8_t *all, size_t len);

/* Rank 0, at the end: writes the last chunk (short: zero-padded); any other chunk still open is a hole. */
int mpi_root_finish(mpi_pack *m);

#endif
