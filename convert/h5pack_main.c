/* h5pack_main.c - the h5pack command: parse the options, run the packer, print the skipped files and the summary.
 * Exit status: 0 converted, 1 error or bad usage, 2 --strict stopped at a file that would be skipped. */
#include <hdf5.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "h5pack.h"
#include "options.h"
#include "mpi_world.h"
#include "packer.h"
#include "safeout.h"
#include "sizes.h"

#define SKIPS_SHOWN_BY_DEFAULT 20

/* WRITTEN: a file holds the skip list (the output, or the finished file kept aside). */
static void print_skipped(const pack_report *r, int verbosity, int written)
{
    size_t shown = verbosity >= 2 ? r->skipped.count : SKIPS_SHOWN_BY_DEFAULT;
    for (size_t i = 0; i < r->skipped.count && i < shown; i++)
        fprintf(stderr, "h5pack: skipped %s: %s\n", r->skipped.names[i], r->skipped.reasons[i]);
    if (r->skipped.count > shown)
        fprintf(stderr, "h5pack: ... and %zu more skipped files (%s-v prints them)\n", r->skipped.count - shown,
                written ? "all are listed in skipped/files and skipped/reasons of the output; " : "");
}

/* "3 unsupported format, 1 corrupt or truncated data" grouped by reason category, in order of first
 * appearance. */
static void print_skip_counts(const skip_list *s)
{
    int first = 1;
    for (size_t i = 0; i < s->count; i++) {
        size_t len = skip_reason_category_len(s->reasons[i]), count = 0, seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = skip_reason_category_len(s->reasons[j]) == len && strncmp(s->reasons[j], s->reasons[i], len) == 0;
        if (seen)
            continue;
        for (size_t j = i; j < s->count; j++)
            count += skip_reason_category_len(s->reasons[j]) == len && strncmp(s->reasons[j], s->reasons[i], len) == 0;
        fprintf(stderr, "%s%zu %.*s", first ? "" : ", ", count, (int)len, s->reasons[i]);
        first = 0;
    }
}

/* "masks (N,H,W) uint8, 3.2 MiB stored, 4 values: 0 1 2 255" (the first PACK_REPORT_MASK_VALUES values). */
static void print_masks(const pack_report *r)
{
    char stored[32];
    h5pack_format_bytes(r->mask_bytes_stored, stored, sizeof stored);
    fprintf(stderr, "h5pack:   masks (%llu,%u,%u) %s, %s stored, %llu value%s:", (unsigned long long)r->converted,
            r->height, r->width, r->mask_bytes == 2 ? "uint16" : "uint8", stored, (unsigned long long)r->mask_values,
            r->mask_values == 1 ? "" : "s");
    for (uint64_t i = 0; i < r->mask_values && i < PACK_REPORT_MASK_VALUES; i++)
        fprintf(stderr, " %lld", (long long)r->mask_listed[i]);
    fprintf(stderr, "%s\n", r->mask_values > PACK_REPORT_MASK_VALUES ? " ..." : "");
}

static void print_summary(const pack_options *o, const pack_report *r)
{
    char stored[32], raw[32], compression[32];
    h5pack_format_bytes(r->bytes_stored, stored, sizeof stored);
    h5pack_format_bytes(r->bytes_raw, raw, sizeof raw);
    compression_text(o, compression, sizeof compression);
    double rate = r->seconds > 0 ? r->converted / r->seconds : 0;
    char ranks[32] = "";
    if (r->ranks > 1)
        snprintf(ranks, sizeof ranks, "%d ranks x ", r->ranks);
    fprintf(stderr, "h5pack: converted %llu of %llu images into %s in %.2f s (%.0f images/s, %s%d thread%s)\n",
            (unsigned long long)r->converted, (unsigned long long)r->candidates, o->out_path, r->seconds, rate, ranks,
            r->threads, r->threads == 1 ? "" : "s");
    unsigned d1 = r->nhwc ? r->height : r->channels, d2 = r->nhwc ? r->width : r->height,
             d3 = r->nhwc ? r->channels : r->width;
    if (r->tile) {
        fprintf(stderr, "h5pack:   images: %llu of their own sizes (largest %ux%u), each a dataset tiles/<i> in %ux%u "
                "tiles, %s stored (%s raw, %s%s)\n", (unsigned long long)r->converted, r->height, r->width, r->tile,
                r->tile, stored, raw, compression, o->checksum ? " + fletcher32" : "");
    } else if (r->ragged) {
        char chunk[32];
        h5pack_format_bytes(r->chunk_bytes, chunk, sizeof chunk);
        fprintf(stderr, "h5pack:   images: %llu of several sizes (largest %ux%u), uint8 HWC one after the other, %s "
                "stored (%s raw, %s%s), %llu chunk%s of %s\n", (unsigned long long)r->converted, r->height, r->width,
                stored, raw, compression, o->checksum ? " + fletcher32" : "", (unsigned long long)r->chunks,
                r->chunks == 1 ? "" : "s", chunk);
    } else {
        fprintf(stderr, "h5pack:   images (%llu,%u,%u,%u) uint8 %s, %s stored (%s raw, %s%s), %llu chunks of %llu "
                "images\n", (unsigned long long)r->converted, d1, d2, d3, r->nhwc ? "NHWC" : "NCHW", stored, raw,
                compression, o->checksum ? " + fletcher32" : "", (unsigned long long)r->chunks,
                (unsigned long long)r->chunk_images);
    }
    if (o->labels_csv)
        fprintf(stderr, "h5pack:   labels (%llu,%u) %s from %s%s%zu CSV rows name no image\n",
                (unsigned long long)r->converted, r->label_columns, r->label_type, o->labels_csv,
                r->label_columns == 1 ? " (stored (N,)); " : "; ", r->orphan_rows);
    else if (r->has_classes)
        fprintf(stderr, "h5pack:   %u classes\n", r->n_classes);
    else
        fprintf(stderr, "h5pack:   flat folder: no labels\n");
    if (r->mask_bytes)
        print_masks(r);
    fprintf(stderr, "h5pack:   skipped %zu%s", r->skipped.count, r->skipped.count ? ": " : "");
    print_skip_counts(&r->skipped);
    fputc('\n', stderr);
}

int main(int argc, char **argv)
{
    pack_options o = PACK_OPTIONS_DEFAULTS;
    char err[1024] = "";
    /* No HDF5 clean-up at exit: every file is closed explicitly (and checked) before, and when a write
     * failed (disk full, file size limit) HDF5 1.10.8 keeps the failed file open and crashes closing it
     * again in its atexit handler, turning exit status 1 into a segmentation fault. */
    H5dont_atexit();
    switch (options_parse(argc, argv, &o, err, sizeof err)) {
    case OPTIONS_HELP:
        options_print_usage(stdout);
        return 0;
    case OPTIONS_VERSION:
        printf("h5pack %s (file format %d)%s\n", H5PACK_VERSION_STRING, H5PACK_FORMAT_VERSION,
               mpi_world_available() ? ", built with MPI (docs/scale-out.md)" : "");
        return 0;
    case OPTIONS_ERROR:
        fprintf(stderr, "h5pack: %s\n", err);
        return 1;
    case OPTIONS_RUN:
        break;
    }
    mpi_world world;
    if (mpi_world_start(&world, err, sizeof err) != 0) {
        fprintf(stderr, "h5pack: error: %s\n", err);
        mpi_world_end(&world);
        return 1;
    }
    if (world.rank > 0)
        o.verbosity = 0; /* rank 0 speaks for the job; the others only say what failed on them */
    safeout_install_signal_handlers();
    /* Every image allocates a file buffer and decode/resize buffers of a few hundred KiB: above glibc's
     * mmap threshold each would be mmap'ed, faulted in page by page and unmapped again (about 100 page
     * faults per image, measured). Keep them on the heap, and keep freed memory for the next image. */
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    pack_report rep;
    pack_status st = pack_run_ranks(&o, &world, &rep, err, sizeof err);
    if (world.rank == 0 && (o.verbosity >= 1 || st != PACK_OK))
        print_skipped(&rep, o.verbosity, st == PACK_OK || rep.kept_aside);
    if (st == PACK_OK && o.verbosity >= 1)
        print_summary(&o, &rep);
    if (st != PACK_OK && err[0] && world.size > 1)
        fprintf(stderr, "h5pack: rank %d of %d: error: %s%s\n", world.rank, world.size, err,
                rep.kept_aside ? "" : " (nothing was written)");
    else if (st != PACK_OK && err[0])
        fprintf(stderr, "h5pack: error: %s%s\n", err, rep.kept_aside ? "" : " (nothing was written)");
    pack_report_free(&rep);
    mpi_world_end(&world);
    return (int)st;
}
