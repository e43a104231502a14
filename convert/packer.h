/* packer.h - one conversion, start to end: scan, order, size probe, chunk choice, parallel packing into a
 * temporary file, metadata, atomic rename. The CLI (main.c) parses options and prints the report.
 *
 * Skipped images: the images dataset is created for every scanned candidate. When some fail to decode,
 * the first file holds fewer images than rows; its chunks (identical, since images are placed without
 * holes) are then copied byte for byte into a second temporary file created with the exact count, and
 * the first is removed. The copy costs one sequential pass over the stored bytes, only in runs with
 * skipped images. */
#ifndef H5PACK_PACKER_H
#define H5PACK_PACKER_H

#include <stddef.h>
#include <stdint.h>

#include "options.h"
#include "skips.h"

typedef enum pack_status {
    PACK_OK = 0,      /* the file is in place */
    PACK_ERROR = 1,   /* nothing written: see the message */
    PACK_STRICT = 2   /* --strict and a file would be skipped: nothing written */
} pack_status;

#define PACK_REPORT_MASK_VALUES 16 /* mask values the summary names */

typedef struct pack_report {
    uint64_t candidates;          /* image files found */
    uint64_t converted;
    skip_list skipped;            /* scan skips then decode skips */
    char **warnings;
    size_t n_warnings;
    int has_classes;
    uint32_t n_classes;
    uint32_t label_columns;       /* --labels: K (0 without a table) */
    char label_type[16];          /* --labels: "int8" ... "float32" */
    size_t orphan_rows;           /* --labels: CSV rows that name no image */
    uint32_t height, width, channels; /* images of several sizes: the largest height and width */
    int nhwc;
    int ragged;                   /* images of several sizes (docs/format.md, format version 2) */
    uint32_t tile;                /* --tiles: the tile side (0: not tiled) */
    uint64_t chunk_bytes;         /* ragged: bytes per chunk */
    uint64_t chunk_images, chunks;
    char chunk_reason[320];
    uint64_t bytes_stored;        /* image bytes as stored (after compression) */
    uint64_t bytes_raw;           /* converted * image bytes */
    double mean[3], std[3];
    int threads;                  /* per rank */
    int ranks;                    /* processes of the MPI job (1: this one alone) */
    int kept_aside;               /* failed only because OUT appeared: the finished file kept under its temp name */
    int copied;                   /* skips made the exact-size copy necessary */
    double seconds;
    uint32_t mask_bytes;          /* --masks: bytes per stored mask value (1: uint8, 2: uint16); 0 without */
    uint64_t mask_values;         /* --masks: distinct values in the stored masks */
    int64_t mask_listed[PACK_REPORT_MASK_VALUES]; /* the smallest of them */
    uint64_t mask_bytes_stored;   /* the masks dataset's bytes in the file */
} pack_report;

/* Runs the conversion described by O. Progress and the chunk decision go to stderr according to
 * o->verbosity; the report is filled for the summary in every case (free it with pack_report_free). */
pack_status pack_run(const pack_options *o, pack_report *rep, char *err, size_t err_len);

/* The same as one rank of WORLD (mpi_world.h; NULL or a world of one: the serial conversion). Every
 * rank returns the same status; rank 0 prints, writes the metadata and commits the file, and the report
 * is filled there. ERR is set where the failure happened (rank 0 for the common steps). */
struct mpi_world;
pack_status pack_run_ranks(const pack_options *o, const struct mpi_world *world, pack_report *rep, char *err,
                           size_t err_len);

void pack_report_free(pack_report *rep);

/* Mean and standard deviation in [0,1] units from exact integer sums over COUNT values. */
void pixel_mean_std(uint64_t sum, uint64_t sum_sq, uint64_t count, double *mean, double *std);

#endif
