/* packer_impl.h - the conversion's state, shared by its steps (packer.c) and its last steps
 * (packer_finish.c). */
#ifndef H5PACK_PACKER_IMPL_H
#define H5PACK_PACKER_IMPL_H

#include <stdint.h>

#include "chunking.h"
#include "csv_labels.h"
#include "decodejob.h"
#include "h5out.h"
#include "label_match.h"
#include "mpi_world.h"
#include "pack_pipeline.h"
#include "packer.h"
#include "progress.h"
#include "scan.h"
#include "size_plan.h"

#define TEMP_PATH_LEN 4096

typedef struct pack_ctx {
    const pack_options *o;
    pack_report *rep;
    scan_result scan;
    label_table table;     /* --labels (n_rows 0 without) */
    label_orphans orphans;
    size_t *order;
    decode_job_cfg job;
    chunk_choice chunk;
    size_plan sizes;       /* no --size: every image's place (sizes.places NULL for a one-size file) */
    char temp[2][TEMP_PATH_LEN];
    int have_temp[2];
    h5out *out;
    pipeline_result pres;
    progress prog;
    const mpi_world *world; /* several ranks under mpirun (docs/scale-out.md); NULL: this process alone */
    int own_error;          /* a rank other than 0 failed on its own (its message is news) */
} pack_ctx;

/* Rank 0 of an MPI job, or the only process: the one that prints, owns the file and commits it. */
static inline int is_root(const pack_ctx *c)
{
    return !c->world || c->world->rank == 0;
}

static inline int ranks(const pack_ctx *c)
{
    return c->world ? c->world->size : 1;
}

/* Messages by verbosity: pack_info at the default level, pack_detail with -v only. */
void pack_info(const pack_options *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pack_detail(const pack_options *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Creates temporary file WHICH (0: the first, 1: the exact-size copy) for N images and opens the writer. */
int pack_open_output(pack_ctx *c, int which, uint64_t n, char *err, size_t len);

/* --masks (packer_masks.c): pairs the images with their masks after the scan (the unpaired become skipped
 * files), and refuses what masks do not support yet. 0 or -1 with ERR. */
int pack_attach_masks(pack_ctx *c, char *err, size_t len);
int pack_refuse_masks_here(const pack_ctx *c, char *err, size_t len);

/* --tiles: every image into its own tiled dataset (packer_tiles.c). */
pack_status pack_tiles(pack_ctx *c, char *err, size_t len);

/* The last steps, in this order (packer_finish.c). */
int pack_fill_report(pack_ctx *c);
int pack_shrink_to_converted(pack_ctx *c, char *err, size_t len);
int pack_write_metadata(pack_ctx *c, char *err, size_t len);
int pack_finish_file(pack_ctx *c, char *err, size_t len);

#endif
