/* packer.c - the conversion engine: scan -> order -> probe -> chunk choice -> pipeline -> metadata ->
 * rename. See packer.h for the handling of skipped images. */
#include "packer.h"
#include "packer_impl.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunking.h"
#include "clock.h"
#include "cpus.h"
#include "csv_labels.h"
#include "h5out.h"
#include "label_match.h"
#include "mpi_pack.h"
#include "packorder.h"
#include "pack_pipeline.h"
#include "progress.h"
#include "safeout.h"
#include "scan.h"
#include "size_plan.h"
#include "sizes.h"

static void say(const pack_options *o, int level, const char *fmt, va_list ap)
{
    if (o->verbosity < level)
        return;
    fputs("h5pack: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}


/* -v only. */
void pack_detail(const pack_options *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(o, 2, fmt, ap);
    va_end(ap);
}

void pack_info(const pack_options *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(o, 1, fmt, ap);
    va_end(ap);
}

void pixel_mean_std(uint64_t sum, uint64_t sum_sq, uint64_t count, double *mean, double *std)
{
    if (count == 0) {
        *mean = *std = 0;
        return;
    }
    /* count^2 * variance = count*sum_sq - sum^2, exact in 128 bits (sum_sq < 2^64, count < 2^40). */
    unsigned __int128 scaled = (unsigned __int128)count * sum_sq - (unsigned __int128)sum * sum;
    long double var = (long double)scaled / ((long double)count * (long double)count);
    *mean = (double)((long double)sum / (long double)count / 255.0L);
    *std = (double)(sqrtl(var) / 255.0L);
}

/* ---- steps --------------------------------------------------------------------------------------- */

#define ORPHANS_SHOWN_BY_DEFAULT 20

/* CSV rows that name no image: listed like skipped files (20, or all with -v). */
static void report_orphans(const pack_ctx *c)
{
    const label_orphans *o = &c->orphans;
    size_t shown = c->o->verbosity >= 2 ? o->count : ORPHANS_SHOWN_BY_DEFAULT;
    for (size_t i = 0; i < o->count && i < shown; i++)
        pack_info(c->o, "label row %s:%zu names no image: %s", c->table.path, c->table.lines[o->rows[i]],
             c->table.keys[o->rows[i]]);
    if (o->count > shown)
        pack_info(c->o, "... and %zu more label rows name no image (-v prints them)", o->count - shown);
}

/* --labels: reads the CSV and keeps the images it has a row for (the others become skipped files). */
static int attach_label_table(pack_ctx *c, char *err, size_t len)
{
    if (!c->o->labels_csv)
        return 0;
    label_csv_format fmt = {.sep = c->o->labels_sep, .skip_lines = (size_t)c->o->labels_skip};
    if (label_table_load(c->o->labels_csv, &fmt, &c->table, err, len) != 0 ||
        label_match(&c->table, &c->scan, &c->orphans, err, len) != 0)
        return -1;
    pack_report *r = c->rep;
    r->label_columns = (uint32_t)c->table.n_columns;
    snprintf(r->label_type, sizeof r->label_type, "%s", label_table_type(&c->table, NULL, NULL));
    r->orphan_rows = c->orphans.count;
    report_orphans(c);
    return 0;
}

static pack_status scan_step(pack_ctx *c, char *err, size_t len)
{
    if (scan_source(c->o->src_dir, &c->scan, err, len) != 0 || attach_label_table(c, err, len) != 0 ||
        pack_attach_masks(c, err, len) != 0)
        return PACK_ERROR;
    pack_report *r = c->rep;
    r->candidates = c->scan.n_entries;
    r->has_classes = c->scan.has_classes && !c->o->labels_csv; /* a table replaces the class folders */
    r->n_classes = (uint32_t)c->scan.n_classes;
    for (size_t i = 0; i < c->scan.n_warnings; i++)
        pack_info(c->o, "warning: %s", c->scan.warnings[i]);
    if (c->o->strict && c->scan.skipped.count > 0) {
        snprintf(err, len, "--strict: %zu file(s) would be skipped, the first: %s: %s", c->scan.skipped.count,
                 c->scan.skipped.names[0], c->scan.skipped.reasons[0]);
        return PACK_STRICT;
    }
    if (c->scan.n_entries == 0) {
        snprintf(err, len, "%s: no .jpg, .jpeg or .png files found%s%s", c->o->src_dir,
                 c->o->labels_csv ? " that have a row in " : "", c->o->labels_csv ? c->o->labels_csv : "");
        return PACK_ERROR;
    }
    if (c->scan.has_classes && c->scan.n_classes > UINT32_MAX - 1) {
        snprintf(err, len, "%s: too many classes", c->o->src_dir);
        return PACK_ERROR;
    }
    return PACK_OK;
}

/* Without --size: the size of the first image (in packed order) that decodes. Running out of memory
 * stops the probe with that reason (it says nothing about the images). */
static int probe_size(pack_ctx *c, char *err, size_t len)
{
    char why[256], first_failure[600] = "";
    size_t plen = strlen(c->o->src_dir) + 2;
    for (size_t p = 0; p < c->scan.n_entries; p++) {
        const scan_entry *e = &c->scan.entries[c->order[p]];
        char *path = malloc(plen + strlen(e->relpath));
        image_u8 img = {0};
        image_status st = IMAGE_NOMEM;
        if (path) {
            sprintf(path, "%s/%s", c->o->src_dir, e->relpath);
            st = image_load(path, &c->job.opts, &img, why, sizeof why);
            free(path);
        }
        if (st == IMAGE_NOMEM) {
            snprintf(err, len, "out of memory finding the image size (at %s)", e->name);
            return -1;
        }
        if (st == IMAGE_OK) {
            c->job.height = img.height;
            c->job.width = img.width;
            image_free(&img);
            return 0;
        }
        if (!first_failure[0])
            snprintf(first_failure, sizeof first_failure, " (first: %s: %s: %s)", e->name, image_status_text(st), why);
    }
    snprintf(err, len, "none of the %zu image files could be decoded%s", c->scan.n_entries, first_failure);
    return -1;
}

/* With --max-side or --short-side every image's place comes from its header, and an image without one is
 * skipped: when no header gave a size that can be stored, nothing can be converted. (Without a rule, the
 * first image that decodes gives the size instead: probe_size.) */
static int no_storable_size(pack_ctx *c, char *err, size_t len)
{
    size_plan_free(&c->sizes);
    snprintf(err, len, "no image could be converted: none of the %zu image headers gives a size that can be "
             "stored with --%s %u (sides up to %u, at most %llu pixels: --max-pixels)", c->scan.n_entries,
             c->o->short_side ? "short-side" : "max-side", c->o->short_side ? c->o->short_side : c->o->max_side,
             RAGGED_MAX_SIDE, (unsigned long long)c->o->max_pixels);
    return -1;
}

/* No --size: reads every header. One size for all (and no --max-side or --short-side): an ordinary file of
 * that size; else images of several sizes, each at its place (size_plan.h). No header gave a size: the
 * first image that decodes says (probe_size), or why none does. */
static int plan_own_sizes(pack_ctx *c, char *err, size_t len)
{
    const pack_options *o = c->o;
    double t0 = h5pack_clock_s();
    size_rule rule = {.max_side = o->max_side, .short_side = o->short_side};
    if (size_plan_make(o->src_dir, c->scan.entries, c->order, c->scan.n_entries, &c->job.opts, o->channels,
                       &rule, c->rep->threads, &c->sizes, err, len) != 0)
        return -1;
    pack_detail(o, "image headers read: %zu of %zu give a size, %.3f s", c->sizes.sized, c->scan.n_entries,
           h5pack_clock_s() - t0);
    if (c->sizes.sized == 0 && (o->max_side || o->short_side))
        return no_storable_size(c, err, len);
    if (c->sizes.sized == 0 || c->sizes.one_size) {
        uint32_t h = c->sizes.height, w = c->sizes.width;
        size_plan_free(&c->sizes);
        if (h == 0)
            return probe_size(c, err, len);
        c->job.height = h, c->job.width = w;
        return 0;
    }
    c->job.nhwc = 1; /* every image (h, w, C), one after the other */
    return choose_chunk_bytes(c->sizes.total_bytes, c->sizes.sized, o->chunk_images, &c->chunk, err, len);
}

static int setup_geometry(pack_ctx *c, char *err, size_t len)
{
    const pack_options *o = c->o;
    c->job.src_dir = o->src_dir;
    c->job.opts.channels = o->channels;
    c->job.opts.target_h = o->height;
    c->job.opts.target_w = o->width;
    c->job.opts.mode = o->resize;
    c->job.opts.max_pixels = o->max_pixels;
    c->job.opts.dct_scaling = o->jpeg_dct;
    c->job.opts.alpha = o->alpha;
    c->job.channels = o->channels;
    c->job.nhwc = o->layout_nhwc;
    c->job.height = o->height;
    c->job.width = o->width;
    if (o->height == 0) {
        int rc = plan_own_sizes(c, err, len);
        if (rc != 0 || c->sizes.places)
            return rc; /* images of several sizes: their chunks are chosen */
    }
    uint64_t image_bytes = (uint64_t)c->job.height * c->job.width * c->job.channels;
    return choose_chunk(image_bytes, c->scan.n_entries, o->batch, o->chunk_images, &c->chunk, err, len);
}

/* --tiles: the decode options (no resize) and the "chunk choice" the attributes record. */
static pack_status setup_tiles(pack_ctx *c, char *err, size_t len)
{
    if (ranks(c) > 1) {
        snprintf(err, len, "--tiles is converted by one process only for now: run h5pack without mpirun");
        return PACK_ERROR;
    }
    const pack_options *o = c->o;
    c->job.src_dir = o->src_dir;
    c->job.opts.channels = c->job.channels = o->channels;
    c->job.opts.max_pixels = o->max_pixels;
    c->job.opts.alpha = o->alpha;
    c->job.nhwc = 1;
    c->chunk.images = 0;
    c->chunk.target_bytes = (uint64_t)o->tile * o->tile * o->channels;
    snprintf(c->chunk.reason, sizeof c->chunk.reason, "--tiles: each image its own dataset, in tiles of %ux%u "
             "pixels (--tile)", o->tile, o->tile);
    return PACK_OK;
}

static void print_ragged_plan(const pack_ctx *c)
{
    char total[32], chunk[32];
    const size_plan *z = &c->sizes;
    h5pack_format_bytes(z->total_bytes, total, sizeof total);
    h5pack_format_bytes(c->chunk.bytes, chunk, sizeof chunk);
    if (c->o->max_side)
        pack_info(c->o, "images of several sizes, longer side at most %u (largest %ux%u): %s of pixels, stored HWC one "
             "after the other", c->o->max_side, z->max_height, z->max_width, total);
    else if (c->o->short_side)
        pack_info(c->o, "images of several sizes, shorter side %u as torchvision's Resize(%u), smaller ones enlarged "
             "(largest %ux%u): %s of pixels, stored HWC one after the other", c->o->short_side, c->o->short_side,
             z->max_height, z->max_width, total);
    else
        pack_info(c->o, "images of several sizes, each kept as it is (largest %ux%u): %s of pixels, stored HWC one "
             "after the other", z->max_height, z->max_width, total);
    pack_info(c->o, "chunks of %s: %s", chunk, c->chunk.reason);
    if (c->o->layout_given && !c->o->layout_nhwc)
        pack_info(c->o, "note: --layout nchw applies to images of one size; these are stored HWC, each as (h, w, C)");
}

static void print_plan(pack_ctx *c)
{
    char chunk_size[32], shape[96];
    const decode_job_cfg *j = &c->job;
    uint64_t k = c->chunk.images;
    h5pack_format_bytes(k * j->height * j->width * j->channels, chunk_size, sizeof chunk_size);
    if (j->nhwc)
        snprintf(shape, sizeof shape, "%u,%u,%u", j->height, j->width, j->channels);
    else
        snprintf(shape, sizeof shape, "%u,%u,%u", j->channels, j->height, j->width);
    const char *kind = c->scan.has_classes ? "ImageFolder" : "flat folder (no labels)";
    if (c->o->labels_csv)
        kind = c->scan.has_classes ? "class folders, labels from the CSV" : "flat folder, labels from the CSV";
    if (ranks(c) > 1)
        pack_info(c->o, "%zu image files, %s; %d ranks x %d thread%s", c->scan.n_entries, kind, ranks(c), c->rep->threads,
             c->rep->threads == 1 ? "" : "s");
    else
        pack_info(c->o, "%zu image files, %s; %d thread%s", c->scan.n_entries, kind, c->rep->threads,
             c->rep->threads == 1 ? "" : "s");
    if (c->o->labels_csv)
        pack_info(c->o, "labels (N,%zu) %s from %s", c->table.n_columns, c->rep->label_type, c->table.path);
    else if (c->scan.has_classes)
        pack_info(c->o, "%zu classes", c->scan.n_classes);
    if (c->o->tiles)
        pack_info(c->o, "every image whole at its own size, its own dataset tiles/<i> in tiles of %ux%u, decoded band "
                  "by band (%d image%s at once)", c->o->tile, c->o->tile, c->rep->threads, c->rep->threads == 1 ? "" : "s");
    else if (c->sizes.places)
        print_ragged_plan(c);
    else
        pack_info(c->o, "chunk shape (%llu,%s) = %s per chunk: %s", (unsigned long long)k, shape, chunk_size,
             c->chunk.reason);
}

static h5out_geometry geometry_for(const pack_ctx *c, uint64_t n)
{
    const size_plan *z = &c->sizes;
    h5out_geometry g = {.n = n, .channels = c->job.channels, .height = c->job.height, .width = c->job.width,
                        .nhwc = c->job.nhwc, .chunk_images = c->chunk.images, .mask_bytes = c->job.mask_bytes,
                        .gzip_level = c->o->compress == COMPRESS_GZIP ? c->o->gzip_level : 0,
                        .checksum = c->o->checksum};
    if (z->places) {
        g.ragged = 1;
        g.height = z->max_height, g.width = z->max_width;
        g.total_bytes = z->total_bytes, g.chunk_bytes = c->chunk.bytes;
    }
    return g;
}

static void report_leftover(void *ctx, const char *path, uint64_t bytes)
{
    pack_info(ctx, "removed %s (%.1f MB), left by a conversion that was killed before it finished", path, bytes / 1e6);
}

int pack_open_output(pack_ctx *c, int which, uint64_t n, char *err, size_t len)
{
    h5out_geometry g = geometry_for(c, n);
    if (safeout_create_temp(c->o->out_path, c->temp[which], TEMP_PATH_LEN, err, len) != 0)
        return -1;
    c->have_temp[which] = 1;
    return h5out_create(c->temp[which], &g, &c->out, err, len);
}

/* Rank 0's file, shared: the temporary name every rank writes to and where its chunks start. */
typedef struct shared_output {
    int status;       /* 0: created */
    int64_t base;     /* h5out_chunk_base: -1 when rank 0 writes every chunk (filtered) */
    char path[TEMP_PATH_LEN];
} shared_output;

/* Each rank's share of the decoding, as "rank R: decoded D images (S skipped) in T s, waited W s". */
static void print_ranks(const pack_ctx *c, const mpi_rank_report *r)
{
    for (int q = 0; q < ranks(c); q++)
        pack_info(c->o, "rank %d of %d: decoded %llu images (%llu skipped) in %.2f s, waited %.2f s for the other ranks; "
             "%llu rows of shared chunks to rank 0", q, ranks(c), (unsigned long long)r[q].decoded,
             (unsigned long long)r[q].skipped, r[q].decode_s, r[q].wait_s, (unsigned long long)r[q].shared_rows);
}

/* The decode-and-write stage shared by the ranks (mpi_pack.h); rank 0 creates the file first. */
static pack_status pack_images_mpi(pack_ctx *c, char *err, size_t len)
{
    shared_output so = {.status = -1, .base = -1};
    if (is_root(c) && pack_open_output(c, 0, c->scan.n_entries, err, len) == 0) {
        so.status = 0;
        so.base = h5out_chunk_base(c->out);
        snprintf(so.path, sizeof so.path, "%s", c->temp[0]);
    }
    mpi_share(c->world, &so, sizeof so);
    if (so.status != 0)
        return PACK_ERROR; /* rank 0 says why */
    mpi_rank_report *reports = is_root(c) ? calloc((size_t)ranks(c), sizeof *reports) : NULL;
    if (is_root(c) && !reports) {
        snprintf(err, len, "out of memory");
        return PACK_ERROR;
    }
    progress_init(&c->prog, is_root(c) && c->o->verbosity >= 1);
    mpi_pack_cfg mc = {.job = c->job, .entries = c->scan.entries, .order = c->order, .n = c->scan.n_entries,
                       .chunk_images = c->chunk.images,
                       .gzip_level = c->o->compress == COMPRESS_GZIP ? c->o->gzip_level : 0,
                       .checksum = c->o->checksum, .threads = c->rep->threads, .strict = c->o->strict,
                       .out = c->out, .path = so.path, .base = so.base, .progress = progress_update,
                       .progress_ctx = &c->prog};
    pipeline_status st = mpi_pack_run(&mc, c->world, &c->pres, reports, err, len);
    c->own_error = err[0] != '\0';
    progress_finish(&c->prog);
    if (st == PIPELINE_OK && is_root(c))
        print_ranks(c, reports);
    free(reports);
    if (st == PIPELINE_STRICT_STOP) {
        if (is_root(c))
            snprintf(err, len, "--strict: %s: %s", c->pres.skipped.names[0], c->pres.skipped.reasons[0]);
        return PACK_STRICT;
    }
    return st == PIPELINE_OK ? PACK_OK : PACK_ERROR;
}

static pack_status pack_images(pack_ctx *c, char *err, size_t len)
{
    if (c->o->tiles)
        return pack_tiles(c, err, len);
    if (ranks(c) > 1) {
        pack_status st = pack_images_mpi(c, err, len);
        if (st != PACK_OK)
            return st; /* the same on every rank */
        if (is_root(c) && c->pres.converted == 0) {
            snprintf(err, len, "no image could be converted (%zu skipped)", c->pres.skipped.count);
            st = PACK_ERROR;
        }
        return (pack_status)mpi_share_status(c->world, st); /* only rank 0 knows the count */
    }
    if (pack_open_output(c, 0, c->scan.n_entries, err, len) != 0)
        return PACK_ERROR;
    progress_init(&c->prog, c->o->verbosity >= 1);
    pipeline_config pc = {.job = c->job, .entries = c->scan.entries, .order = c->order, .n = c->scan.n_entries,
                          .chunk_images = c->chunk.images,
                          .gzip_level = c->o->compress == COMPRESS_GZIP ? c->o->gzip_level : 0,
                          .checksum = c->o->checksum, .threads = c->rep->threads, .strict = c->o->strict,
                          .out = c->out, .progress = progress_update, .progress_ctx = &c->prog,
                          .ragged = c->sizes.places, .chunk_bytes = c->chunk.bytes,
                          .total_bytes = c->sizes.total_bytes};
    pipeline_status st = pipeline_run(&pc, &c->pres, err, len);
    progress_finish(&c->prog);
    if (st == PIPELINE_STRICT_STOP) {
        snprintf(err, len, "--strict: %s: %s", c->pres.skipped.names[0], c->pres.skipped.reasons[0]);
        return PACK_STRICT;
    }
    if (st != PIPELINE_OK)
        return PACK_ERROR;
    if (c->pres.converted == 0) {
        snprintf(err, len, "no image could be converted (%zu skipped)", c->pres.skipped.count);
        return PACK_ERROR;
    }
    return PACK_OK;
}

static void cleanup(pack_ctx *c)
{
    h5out_close(c->out, NULL, 0);
    for (int i = 0; i < 2; i++)
        if (c->have_temp[i])
            safeout_discard(c->temp[i]);
    pipeline_result_free(&c->pres);
    size_plan_free(&c->sizes);
    scan_free(&c->scan);
    label_table_free(&c->table);
    label_orphans_free(&c->orphans);
    free(c->order);
}

/* -j 0: the CPUs this process may use (affinity mask, cgroup quota), divided among the ranks torchrun
 * starts on the machine: the same rule as the reader's default (common/cpus.h). */
static int default_threads(int requested)
{
    return requested > 0 ? requested : h5pack_default_threads();
}

pack_status pack_run(const pack_options *o, pack_report *rep, char *err, size_t err_len)
{
    return pack_run_ranks(o, NULL, rep, err, err_len);
}

/* Rank 0 checks the destination and removes leftovers; every rank learns whether to go on. */
static int check_destination(pack_ctx *c, char *err, size_t len)
{
    int rc = 0;
    if (is_root(c)) {
        rc = safeout_check_destination(c->o->out_path, c->o->force, err, len);
        if (rc == 0)
            safeout_remove_leftovers(c->o->out_path, report_leftover, (void *)c->o);
    }
    return ranks(c) > 1 ? mpi_share_status(c->world, rc) : rc;
}

/* Under MPI: images of several sizes are not shared out yet (their places come from the headers). */
static int refuse_ragged_mpi(const pack_ctx *c, char *err, size_t len)
{
    if (ranks(c) == 1 || !c->sizes.places)
        return 0;
    snprintf(err, len, "images of several sizes (no --size) are converted by one process only for now: run h5pack "
             "without mpirun, or give --size HxW (docs/scale-out.md)");
    return -1;
}

/* Scan, packed order and geometry: every rank does them for itself (the same inputs give the same plan). */
static pack_status prepare(pack_ctx *c, double start, char *err, size_t len)
{
    pack_status st = scan_step(c, err, len);
    if (st != PACK_OK)
        return st;
    pack_detail(c->o, "scan: %.3f s", h5pack_clock_s() - start);
    if (!(c->order = pack_order(c->scan.n_entries, c->o->seed, c->o->keep_order))) {
        snprintf(err, len, "out of memory");
        return PACK_ERROR;
    }
    if (c->o->tiles)
        return setup_tiles(c, err, len);
    if (setup_geometry(c, err, len) != 0 || refuse_ragged_mpi(c, err, len) != 0 || pack_refuse_masks_here(c, err, len) != 0)
        return PACK_ERROR;
    return PACK_OK;
}

/* Under MPI, every rank goes on only when all prepared: rank 0's failure is everyone's (it reports it);
 * a failure of other ranks only ends the run too (they report theirs). */
/* What every rank must agree on before sharing the work: its count, names (a hash), image size, chunk. */
static int same_plan_everywhere(const pack_ctx *c)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a over the names in packed order */
    for (size_t i = 0; i < c->scan.n_entries; i++)
        for (const char *p = c->scan.entries[c->order[i]].relpath; *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211ull;
    int64_t facts[5] = {(int64_t)c->scan.n_entries, (int64_t)c->chunk.images, (int64_t)c->job.height,
                        (int64_t)c->job.width, (int64_t)(h >> 1)};
    int64_t most[5], least[5];
    for (int i = 0; i < 5; i++)
        most[i] = facts[i], least[i] = -facts[i];
    mpi_max(c->world, most, 5);
    mpi_max(c->world, least, 5);
    for (int i = 0; i < 5; i++)
        if (most[i] != -least[i])
            return 0;
    return 1;
}

static pack_status agree_prepared(pack_ctx *c, pack_status st, char *err, size_t len)
{
    if (ranks(c) == 1)
        return st;
    int64_t failed[2] = {is_root(c) && st != PACK_OK, !is_root(c) && st != PACK_OK};
    mpi_max(c->world, failed, 2);
    if (failed[0])
        return (pack_status)mpi_share_status(c->world, st); /* rank 0's status, as the serial run's */
    if (failed[1] && st == PACK_OK)
        err[0] = '\0', st = PACK_ERROR; /* the ranks that failed say why */
    else if (failed[1])
        c->own_error = 1; /* this rank failed where rank 0 did not: its message is news */
    if (st == PACK_OK && !same_plan_everywhere(c)) {
        snprintf(err, len, "the ranks see different folders (image count, names, sizes or chunk choice differ): "
                 "the source changed while the job started, or the nodes' file system views disagree");
        st = PACK_ERROR; /* every rank learns it from the same reduction; rank 0 says so */
    }
    return st;
}

pack_status pack_run_ranks(const pack_options *o, const mpi_world *world, pack_report *rep, char *err,
                           size_t err_len)
{
    pack_ctx c;
    memset(&c, 0, sizeof c);
    memset(rep, 0, sizeof *rep);
    c.o = o;
    c.rep = rep;
    c.world = world && world->size > 1 ? world : NULL;
    err[0] = '\0';
    double start = h5pack_clock_s();
    rep->threads = default_threads(o->threads);
    rep->ranks = ranks(&c);
    pack_status st = PACK_ERROR;
    if (check_destination(&c, err, err_len) != 0)
        goto done;
    if ((st = agree_prepared(&c, prepare(&c, start, err, err_len), err, err_len)) != PACK_OK)
        goto done;
    st = PACK_ERROR;
    print_plan(&c);
    double t_pack = h5pack_clock_s();
    if ((st = pack_images(&c, err, err_len)) != PACK_OK)
        goto done;
    if (ranks(&c) > 1) /* each rank's decode time and wait are in the rank lines */
        pack_detail(o, "decode, resize, write: %.3f s; %llu chunks, %llu bytes stored (%s)", h5pack_clock_s() - t_pack,
                    (unsigned long long)c.pres.chunks_written, (unsigned long long)c.pres.bytes_written,
                    c.pres.pwrite_by_workers ? "whole chunks written by their ranks with pwrite"
                                             : "filtered by their ranks, written by rank 0 with H5Dwrite_chunk");
    else
        pack_detail(o, "decode, resize, write: %.3f s; %llu chunks, %llu bytes stored (%s); the placing thread "
                    "waited %.3f s for decoded images, the %d workers %.3f s in all for room", h5pack_clock_s() - t_pack,
                    (unsigned long long)c.pres.chunks_written, (unsigned long long)c.pres.bytes_written,
                    c.pres.pwrite_by_workers ? "written by the workers with pwrite" : "written with H5Dwrite_chunk",
                    c.pres.writer_wait_s, rep->threads, c.pres.workers_wait_s);
    st = PACK_ERROR;
    double t_meta = h5pack_clock_s();
    int finished = !is_root(&c) || (pack_fill_report(&c) == 0 && pack_shrink_to_converted(&c, err, err_len) == 0 &&
                                    pack_write_metadata(&c, err, err_len) == 0 && pack_finish_file(&c, err, err_len) == 0);
    if (ranks(&c) > 1) /* every rank ends with rank 0's outcome */
        finished = mpi_share_status(c.world, finished);
    if (!finished)
        goto done;
    pack_detail(o, "%smetadata, fsync, rename: %.3f s", rep->copied ? "exact-size copy, " : "",
           h5pack_clock_s() - t_meta);
    st = PACK_OK;
done:
    if (!is_root(&c) && !c.own_error)
        err[0] = '\0'; /* rank 0 reports what all ranks met alike */
    if (st != PACK_OK && !rep->skipped.count) {
        skip_list_append(&rep->skipped, &c.scan.skipped);
        skip_list_append(&rep->skipped, &c.pres.skipped);
    }
    cleanup(&c);
    rep->seconds = h5pack_clock_s() - start;
    return st;
}

void pack_report_free(pack_report *rep)
{
    skip_list_free(&rep->skipped);
    for (size_t i = 0; i < rep->n_warnings; i++)
        free(rep->warnings[i]);
    free(rep->warnings);
    memset(rep, 0, sizeof *rep);
}
