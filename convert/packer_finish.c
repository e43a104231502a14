/* packer_finish.c - the conversion's last steps (packer.h): the report, the exact-size copy or the
 * closing of gaps after skips, the metadata, and the commit under the final name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunking.h"
#include "h5out.h"
#include "packer.h"
#include "packer_impl.h"
#include "safeout.h"

/* Images of several sizes: a skipped image leaves its place as zeros. Small gaps stay; when they pass 1% of
 * the pixels or half a chunk (a header that promised a huge image), the images are copied one after the
 * other into a second file, so the file stays within ~1% of its pixels and no run spans a large gap. */
static int close_ragged_gaps(pack_ctx *c, char *err, size_t len)
{
    uint64_t n = c->pres.converted, kept = 0, gap = 0, largest_gap = 0, end = 0, *to = malloc((n ? n : 1) * 8);
    size_plan *z = &c->sizes;
    z->max_height = z->max_width = 0; /* the largest converted image (the attributes say it) */
    for (uint64_t i = 0; to && i < n; i++) {
        uint32_t h = c->pres.shapes[2 * i], w = c->pres.shapes[2 * i + 1];
        uint64_t g = c->pres.offsets[i] - end;
        gap += g, largest_gap = g > largest_gap ? g : largest_gap;
        to[i] = kept, kept += (uint64_t)h * w * c->job.channels, end = c->pres.offsets[i] + (uint64_t)h * w * c->job.channels;
        z->max_height = h > z->max_height ? h : z->max_height, z->max_width = w > z->max_width ? w : z->max_width;
    }
    gap += z->total_bytes - end;
    c->rep->height = z->max_height, c->rep->width = z->max_width;
    if (!to || (gap * 100 <= kept && 2 * largest_gap <= c->chunk.bytes)) {
        free(to);
        h5out_set_largest(c->out, z->max_height, z->max_width);
        if (!to)
            snprintf(err, len, "out of memory for %llu image places", (unsigned long long)n);
        return to ? 0 : -1;
    }
    int rc = h5out_close(c->out, err, len);
    c->out = NULL, z->total_bytes = kept;
    if (rc == 0)
        rc = choose_chunk_bytes(kept, n, c->o->chunk_images, &c->chunk, err, len);
    if (rc == 0) {
        pack_info(c->o, "%zu image(s) skipped: copying the images together (%.1f MB of gaps)", c->pres.skipped.count,
             gap / 1e6);
        rc = pack_open_output(c, 1, n, err, len);
    }
    if (rc == 0)
        rc = h5out_copy_ragged(c->out, c->temp[0], c->pres.offsets, to, c->pres.shapes, n, err, len);
    if (rc == 0) {
        memcpy(c->pres.offsets, to, n * sizeof *to);
        safeout_discard(c->temp[0]);
        c->have_temp[0] = 0, c->rep->copied = 1;
        c->rep->chunk_bytes = c->chunk.bytes;
        snprintf(c->rep->chunk_reason, sizeof c->rep->chunk_reason, "%s", c->chunk.reason);
    }
    free(to);
    return rc;
}

/* Skips left the first file with more rows than images: copy them into an exact-size file. The chunk
 * choice is redone for the exact count; it only changes when one chunk held the whole first file. */
int pack_shrink_to_converted(pack_ctx *c, char *err, size_t len)
{
    uint64_t n = c->pres.converted, k = c->chunk.images;
    uint64_t image_bytes = (uint64_t)c->job.height * c->job.width * c->job.channels;
    if (c->sizes.places)
        return close_ragged_gaps(c, err, len);
    if (n == c->scan.n_entries || c->o->tiles) /* tiles: a skipped image never got a dataset */
        return 0;
    int rc = h5out_close(c->out, err, len);
    c->out = NULL;
    if (rc != 0 || choose_chunk(image_bytes, n, c->o->batch, c->o->chunk_images, &c->chunk, err, len) != 0)
        return -1;
    pack_info(c->o, "%zu image(s) skipped: copying the %llu images into an exact-size dataset", c->pres.skipped.count,
         (unsigned long long)n);
    if (pack_open_output(c, 1, n, err, len) != 0)
        return -1;
    int masks = c->job.mask_bytes > 0;
    if (c->chunk.images == k)
        rc = h5out_copy_chunks(c->out, c->temp[0], (n + k - 1) / k, err, len) ||
             (masks && h5out_copy_mask_chunks(c->out, c->temp[0], (n + k - 1) / k, err, len));
    else
        rc = h5out_copy_rows(c->out, c->temp[0], n, err, len) ||
             (masks && h5out_copy_mask_rows(c->out, c->temp[0], n, err, len));
    if (rc != 0)
        return -1;
    safeout_discard(c->temp[0]);
    c->have_temp[0] = 0;
    c->rep->copied = 1;
    c->rep->chunk_images = c->chunk.images;
    snprintf(c->rep->chunk_reason, sizeof c->rep->chunk_reason, "%s", c->chunk.reason);
    return 0;
}

/* --labels: the table's rows in the file's row order (int64 or double, as the table holds them). */
static label_value *table_rows(const pack_ctx *c, uint64_t n)
{
    size_t k = c->table.n_columns;
    label_value *v = malloc((n ? n : 1) * k * sizeof *v);
    for (uint64_t i = 0; v && i < n; i++)
        memcpy(v + i * k, c->table.values + c->scan.entries[c->pres.kept[i]].label_row * k, k * sizeof *v);
    return v;
}

/* The resize_mode attribute (docs/format.md): the --resize mode with --size, else the rule of images of
 * several sizes, else "none" (every image kept as decoded). */
static const char *resize_mode_text(const pack_options *o)
{
    if (o->height)
        return resize_mode_name(o->resize);
    return o->max_side ? "max_side" : o->short_side ? "short_side" : "none";
}

int pack_write_metadata(pack_ctx *c, char *err, size_t len)
{
    uint64_t n = c->pres.converted;
    h5out_label_table table = {c->table.n_columns, (const char *const *)c->table.names, c->table.is_float, 8, 1, NULL};
    label_value *rows = c->o->labels_csv ? table_rows(c, n) : NULL;
    uint32_t *labels = malloc(n * sizeof *labels);
    const char **names = malloc(n * sizeof *names);
    char compression[32];
    int rc = -1;
    if (!labels || !names || (c->o->labels_csv && !rows)) {
        snprintf(err, len, "out of memory for %llu labels", (unsigned long long)n);
        goto done;
    }
    for (uint64_t i = 0; i < n; i++) {
        labels[i] = c->scan.entries[c->pres.kept[i]].label;
        names[i] = c->scan.entries[c->pres.kept[i]].name;
    }
    compression_text(c->o, compression, sizeof compression);
    int resized = c->o->height || c->o->max_side || c->o->short_side;
    h5out_metadata m = {.n = n, .has_classes = c->rep->has_classes, .labels = labels,
                        .classes = (const char *const *)c->scan.classes, .n_classes = (uint32_t)c->scan.n_classes,
                        .filenames = names, .skipped = &c->rep->skipped,
                        .resize_mode = resize_mode_text(c->o),
                        .jpeg_scale = !resized ? "none" : c->o->jpeg_dct ? "dct" : "exact",
                        .alpha = alpha_mode_name(c->o->alpha),
                        .chunk_images = (int64_t)c->chunk.images,
                        .chunk_target_bytes = (int64_t)c->chunk.target_bytes,
                        .batch_size = (int64_t)c->o->batch, .seed = (int64_t)c->o->seed,
                        .chunk_reason = c->chunk.reason, .compression = compression, .checksum = c->o->checksum,
                        .shuffled = !c->o->keep_order, .offsets = c->pres.offsets, .shapes = c->pres.shapes,
                        .max_side = c->o->max_side, .short_side = c->o->short_side,
                        .mask_seen = c->pres.mask_seen};
    memcpy(m.mean, c->rep->mean, sizeof m.mean);
    memcpy(m.std, c->rep->std, sizeof m.std);
    if (rows) {
        label_table_type(&c->table, &table.bytes, &table.is_signed);
        table.values = rows;
        m.table = &table;
    }
    rc = h5out_write_metadata(c->out, &m, err, len);
done:
    free(rows);
    free(labels);
    free(names);
    return rc;
}

int pack_fill_report(pack_ctx *c)
{
    pack_report *r = c->rep;
    r->converted = c->pres.converted;
    r->height = c->job.height;
    r->width = c->job.width;
    r->channels = c->job.channels;
    r->nhwc = c->job.nhwc;
    r->chunk_images = c->chunk.images;
    r->chunks = c->pres.chunks_written;
    snprintf(r->chunk_reason, sizeof r->chunk_reason, "%s", c->chunk.reason);
    r->bytes_stored = c->pres.bytes_written;
    r->ragged = c->sizes.places != NULL;
    r->tile = c->o->tiles ? c->o->tile : 0;
    if (r->ragged)
        r->height = c->sizes.max_height, r->width = c->sizes.max_width, r->chunk_bytes = c->chunk.bytes;
    r->bytes_raw = c->pres.pixels * r->channels;
    r->mask_bytes = c->job.mask_bytes;
    if (c->pres.mask_seen)
        r->mask_values = mask_values_list(c->pres.mask_seen, r->mask_listed, PACK_REPORT_MASK_VALUES);
    for (uint32_t ch = 0; ch < r->channels; ch++)
        pixel_mean_std(c->pres.sum[ch], c->pres.sum_sq[ch], c->pres.pixels, &r->mean[ch], &r->std[ch]);
    if (skip_list_append(&r->skipped, &c->scan.skipped) != 0 ||
        skip_list_append(&r->skipped, &c->pres.skipped) != 0)
        return -1;
    r->warnings = c->scan.warnings; /* handed over */
    r->n_warnings = c->scan.n_warnings;
    c->scan.warnings = NULL;
    c->scan.n_warnings = 0;
    return 0;
}

int pack_finish_file(pack_ctx *c, char *err, size_t len)
{
    uint64_t n = c->pres.converted, k = c->chunk.images;
    c->rep->bytes_stored = h5out_images_storage(c->out); /* exact, also after an exact-size copy */
    c->rep->mask_bytes_stored = h5out_masks_storage(c->out);
    if (c->sizes.places)
        c->rep->chunks = (c->sizes.total_bytes + c->chunk.bytes - 1) / c->chunk.bytes;
    else if (k)
        c->rep->chunks = (n + k - 1) / k;
    else
        c->rep->chunks = 0; /* tiles: counted per image, not reported */
    int rc = h5out_close(c->out, err, len);
    c->out = NULL;
    int which = c->have_temp[1] ? 1 : 0;
    if (rc == 0)
        rc = safeout_commit(c->temp[which], c->o->out_path, c->o->force, err, len);
    if (rc == 0 || rc == -2) /* -2: an OUT appeared meanwhile; the finished file stays under its temp name */
        c->have_temp[which] = 0;
    c->rep->kept_aside = rc == -2;
    return rc == 0 ? 0 : -1;
}
