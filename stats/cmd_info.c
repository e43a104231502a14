/* cmd_info.c - `h5pack-stats info FILE [--json] [--images NAME]`: how the reader reads the file
 * (h5pack_describe: the reader's own open, read path and chunk geometry) and what else is in it (the
 * dataset and attribute listing of h5inspect.c). */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "h5inspect.h"
#include "json.h"
#include "masks_info.h"

/* The reader's view of the image dataset, or why there is none. */
typedef struct reader_view {
    int ok;
    h5pack_file_desc d;
    char err[1200];
} reader_view;

static int is_images(const ds_report *ds, const char *images)
{
    return ds == NULL ? 0 : images && strcmp(ds->name, images[0] == '/' ? images + 1 : images) == 0;
}

/* One line on how chunks are read (docs/reader.md, "Read paths"). */
static void read_path_text(const h5pack_file_desc *d, char *buf, size_t len)
{
    switch (d->read_path) {
    case H5PACK_READ_IMPLICIT:
        snprintf(buf, len, "implicit index: chunk i at addr0 + i x chunk_bytes, %s, no HDF5 call after open",
                 d->mapped ? "memory-mapped (zero-copy)" : "pread");
        break;
    case H5PACK_READ_CONTIGUOUS:
        snprintf(buf, len, "contiguous: one byte range read in runs of %llu images, %s, no HDF5 call after open",
                 (unsigned long long)d->samples_per_chunk, d->mapped ? "memory-mapped (zero-copy)" : "pread");
        break;
    case H5PACK_READ_RAW_DEFLATE:
        snprintf(buf, len, "%s", d->fast_path ? "raw deflate: every chunk located at open, pread + libdeflate "
                                                "outside HDF5's lock"
                                              : "raw deflate: chunks not located, H5Dread_chunk under HDF5's lock");
        break;
    case H5PACK_READ_LOCATED:
        snprintf(buf, len, "%s", d->fast_path ? "located: every chunk located at open, pread outside HDF5's lock, "
                                                "nothing to inflate"
                                              : "located: chunks not located, H5Dread_chunk under HDF5's lock");
        break;
    default:
        snprintf(buf, len, "hdf5 fallback: H5Dread under HDF5's lock (HDF5 applies and checks every filter)");
    }
}

static void dims_text(const uint64_t *d, int rank, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "(");
    for (int i = 0; i < rank && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%llu", i ? "," : "", (unsigned long long)d[i]);
    if (used < len)
        snprintf(buf + used, len - used, ")");
}

static double ratio_of(const ds_report *d)
{
    return d->storage_bytes ? (double)d->logical_bytes / (double)d->storage_bytes : 0.0;
}

static void print_dataset(const ds_report *d, const reader_view *v, const char *images)
{
    char shape[160], chunk[160], sz[32], store[32];
    dims_text(d->dims, d->rank, shape, sizeof shape);
    h5pack_format_bytes(d->storage_bytes, store, sizeof store);
    printf("  %-20s %-18s %-22s %s, stored %s\n", d->name, d->dtype, shape, d->layout, store);
    int described = v->ok && is_images(d, images); /* compression and read path: the reader's lines */
    if (strcmp(d->layout, "chunked") == 0) {
        dims_text(d->chunk, d->rank, chunk, sizeof chunk);
        h5pack_format_bytes(d->chunk_bytes, sz, sizeof sz);
        printf("  %-20s chunks %s: %llu of %s each (%llu written)", "", chunk, (unsigned long long)d->n_chunks, sz,
               (unsigned long long)d->n_allocated);
        if (described)
            printf(" (see the reader's lines above)\n");
        else
            printf(", filters: %s, compression %.2f:1\n", d->filters[0] ? d->filters : "none", ratio_of(d));
    }
}

static void print_attr(const attr_report *a)
{
    printf("  %s%s%s = ", strcmp(a->owner, "/") == 0 ? "" : a->owner, strcmp(a->owner, "/") == 0 ? "" : ":", a->name);
    if (a->is_string) {
        printf("\"%s\"\n", a->text);
        return;
    }
    if (a->n_values != 1)
        printf("[");
    for (int i = 0; i < a->n_values; i++)
        printf(a->values[i] == (double)(long long)a->values[i] ? "%s%.0f" : "%s%.6g", i ? ", " : "", a->values[i]);
    printf("%s\n", a->n_values != 1 ? "]" : "");
}

static int format_version(const file_report *r, const reader_view *v)
{
    return v->ok ? v->d.format_version : r->format_version;
}

/* "chunk shape (K,C,H,W): K images = B per chunk, N chunks": the line docs/tuning.md, step 1, asks about
 * (for slabs, the HDF5 chunk shape and how many of them make one slab). */
static void print_chunk_line(const h5pack_file_desc *d, const ds_report *img)
{
    char cb[32], shape[160] = "";
    h5pack_format_bytes(d->chunk_bytes, cb, sizeof cb);
    if (img && strcmp(img->layout, "chunked") == 0)
        dims_text(img->chunk, img->rank, shape, sizeof shape);
    if (!d->chunked)
        printf("  no chunks (contiguous): read in units of %llu images = %s, %llu units\n",
               (unsigned long long)d->samples_per_chunk, cb, (unsigned long long)d->n_chunks);
    else if (d->chunks_per_slab > 1)
        printf("  chunk shape %s splits images: read as slabs of %llu images = %s (%llu HDF5 chunks each, "
               "assembled), %llu slabs\n", shape, (unsigned long long)d->samples_per_chunk, cb,
               (unsigned long long)d->chunks_per_slab, (unsigned long long)d->n_chunks);
    else
        printf("  chunk shape %s: %llu images = %s per chunk, %llu chunks\n", shape,
               (unsigned long long)d->samples_per_chunk, cb, (unsigned long long)d->n_chunks);
}

/* Images of several sizes (Z from image_shapes): the reader reads runs of K whole images of the store. */
static void print_several_sizes(const h5pack_file_desc *d, const char *images)
{
    char cb[32];
    h5pack_format_bytes(d->chunk_bytes, cb, sizeof cb);
    printf("reader (\"%s\" as h5pack_open reads it): %llu images of several sizes (up to %ux%ux%u) HWC uint8, "
           "one after the other\n", images, (unsigned long long)d->n_samples, d->height, d->width, d->channels);
    printf("  read in runs of %llu images (at most %s each), %llu run%s\n", (unsigned long long)d->samples_per_chunk,
           cb, (unsigned long long)d->n_chunks, d->n_chunks == 1 ? "" : "s");
}

/* A file of huge images in tiles (h5pack --tiles): the reader's chunks are its tiles. */
static void print_tiled(const h5pack_file_desc *d)
{
    char cb[32];
    h5pack_format_bytes(d->chunk_bytes, cb, sizeof cb);
    printf("reader (as h5pack_open reads it): a file of huge images in tiles: %llu images (up to %ux%ux%u) HWC "
           "uint8, streamed as patches\n", (unsigned long long)d->n_samples, d->height, d->width, d->channels);
    printf("  tiles of %ux%u (%s each), %llu tile%s\n", d->tile, d->tile, cb, (unsigned long long)d->n_chunks,
           d->n_chunks == 1 ? "" : "s");
}

static void print_reader(const reader_view *v, const ds_report *img, const size_spread *z, const char *images)
{
    const h5pack_file_desc *d = &v->d;
    if (!v->ok) {
        printf("reader: cannot read \"%s\": %s\n", images, v->err);
        return;
    }
    char st[32], how[256];
    h5pack_format_bytes(d->stored_bytes, st, sizeof st);
    if (d->tile) {
        print_tiled(d);
    } else if (z->n) {
        print_several_sizes(d, images);
    } else {
        printf("reader (\"%s\" as h5pack_open reads it): %llu images of %ux%ux%u %s uint8\n", images,
               (unsigned long long)d->n_samples, d->channels, d->height, d->width,
               d->layout == H5PACK_LAYOUT_NHWC ? "NHWC" : "NCHW");
        print_chunk_line(d, img);
    }
    uint64_t pixel_bytes = z->n ? z->pixels * d->channels : d->n_samples * d->image_bytes;
    if (d->tile && !z->n) /* images in tiles whose sizes were not listed: no pixel count to compare with */
        printf("  stored %s\n", st);
    else
        printf("  stored %s, compression %.2f:1, filters: %s\n", st,
               d->stored_bytes ? (double)pixel_bytes / (double)d->stored_bytes : 0.0,
               d->n_filters ? d->filters : "none");
    read_path_text(d, how, sizeof how);
    printf("  read path: %s; %s\n", how, d->fast_path ? "fast path" : "slow path");
    if (!d->tile) /* patches have none without a patch size */
        printf("  order fingerprint: %016llx (with the default reader settings; `run` prints yours)\n",
               (unsigned long long)d->order_fingerprint);
    if (d->has_labels && d->label_rank == 2)
        printf("  labels: (N,%u) %s per image%s\n", d->label_columns, d->labels_are_float ? "float32" : "int64",
               d->label_columns == 1 && d->n_classes ? "" : " (no class count)");
    else if (d->has_labels && d->labels_are_float)
        printf("  labels: (N,) float32 per image (no class count)\n");
    else if (d->has_labels && d->n_classes)
        printf("  labels: (N,) int64, %u classes\n", d->n_classes);
    else if (d->has_labels)
        printf("  labels: (N,) int64 (no class count: some are negative)\n");
    else
        printf("  labels: none\n");
}

/* Images of several sizes: their spread (docs/stats.md, "info"). */
static void print_sizes(const size_spread *z)
{
    if (!z->n)
        return;
    printf("image sizes (%llu images of several sizes, %.1f Mpixels in all):\n", (unsigned long long)z->n,
           (double)z->pixels / 1e6);
    printf("  height %llu .. %llu (median %llu), width %llu .. %llu (median %llu), aspect w/h %.2f .. %.2f "
           "(median %.2f)\n", (unsigned long long)z->height[0], (unsigned long long)z->height[2],
           (unsigned long long)z->height[1], (unsigned long long)z->width[0], (unsigned long long)z->width[2],
           (unsigned long long)z->width[1], z->aspect[0], z->aspect[2], z->aspect[1]);
}

/* A file of images in tiles (h5pack --tiles): its datasets are tiles/<i>. */
static int has_tiles(const file_report *r)
{
    for (int i = 0; i < r->n_datasets; i++)
        if (strncmp(r->datasets[i].name, "tiles/", 6) == 0)
            return 1;
    return 0;
}

/* The local file PATH's masks (h5pack --masks), read beside the listing; NULL when it has none. */
static const h5pack_masks_info *masks_of(const char *path, int listed, h5pack_masks_info *m)
{
    return listed && h5pack_masks_info_read(strncmp(path, "file://", 7) ? path : path + 7, m) == 0 && m->present
               ? m : NULL;
}

/* "masks: (N,H,W) uint8 beside the images, 4 values seen: 0, 1, 2, 255" */
static void print_masks(const h5pack_masks_info *m)
{
    char shape[96];
    dims_text(m->dims, m->rank, shape, sizeof shape);
    printf("masks: %s %s beside the images (same order and chunks)", shape, m->dtype);
    if (m->value_count < 0) {
        printf(", values seen: not recorded\n");
        return;
    }
    printf(", %lld value%s seen:", (long long)m->value_count, m->value_count == 1 ? "" : "s");
    for (int i = 0; i < m->n_listed; i++)
        printf("%s %lld", i ? "," : "", (long long)m->values[i]);
    printf("%s\n", m->value_count > m->n_listed ? ", ..." : "");
}

static void print_text(const file_report *r, const reader_view *v, const char *images)
{
    char sz[32];
    h5pack_format_bytes(r->file_bytes, sz, sizeof sz);
    printf("file: %s (%s)\n", r->path, sz);
    if (format_version(r, v) >= 0)
        printf("h5pack file, format version %d\n", format_version(r, v));
    else
        printf("foreign HDF5 file (no h5pack_format_version attribute)\n");
    print_reader(v, report_dataset(r, images), &r->sizes, images);
    print_sizes(&r->sizes);
    h5pack_masks_info mi;
    const h5pack_masks_info *m = masks_of(r->path, r->listed, &mi);
    if (m)
        print_masks(m);
    if (!r->listed) {
        printf("datasets and attributes: listed for local files only (this location is read through a store)\n");
        return;
    }
    printf("datasets (%d):\n", r->n_datasets);
    for (int i = 0; i < r->n_datasets; i++)
        print_dataset(&r->datasets[i], v, images);
    if (!report_dataset(r, images) && has_tiles(r))
        printf("note: images in tiles (h5pack --tiles): the reader streams them as patches, e.g. "
               "h5pack-stats run %s --patch 512 (docs/patches.md)\n", r->path);
    else if (!report_dataset(r, images))
        printf("note: no dataset \"%s\" (the reader's default image dataset); pick one with --images\n", images);
    printf("attributes (%d):\n", r->n_attrs);
    for (int i = 0; i < r->n_attrs; i++)
        print_attr(&r->attrs[i]);
    if (r->n_classes) {
        printf("classes (%llu):", (unsigned long long)r->n_classes);
        for (int i = 0; i < r->n_classes_listed; i++)
            printf("%s %s", i ? "," : "", r->classes[i]);
        printf("%s\n", (uint64_t)r->n_classes_listed < r->n_classes ? ", ..." : "");
    }
}

static void json_dims(json_out *j, const char *key, const uint64_t *d, int rank)
{
    json_inline_array_begin(j, key);
    for (int i = 0; i < rank; i++)
        json_u64(j, NULL, d[i]);
    json_array_end(j);
}

static void json_masks(json_out *j, const h5pack_masks_info *m)
{
    if (!m) {
        json_string(j, "masks", NULL);
        return;
    }
    json_object_begin(j, "masks");
    json_string(j, "dtype", m->dtype);
    json_dims(j, "shape", m->dims, m->rank);
    if (m->value_count >= 0)
        json_u64(j, "value_count", (uint64_t)m->value_count);
    else
        json_string(j, "value_count", NULL);
    json_inline_array_begin(j, "values");
    for (int i = 0; i < m->n_listed; i++)
        json_double(j, NULL, (double)m->values[i]);
    json_array_end(j);
    json_object_end(j);
}

static void json_sizes(json_out *j, const size_spread *z)
{
    if (!z->n) {
        json_string(j, "image_sizes", NULL);
        return;
    }
    json_object_begin(j, "image_sizes");
    json_u64(j, "n", z->n);
    json_u64(j, "pixels", z->pixels);
    json_dims(j, "height_min_median_max", z->height, 3);
    json_dims(j, "width_min_median_max", z->width, 3);
    json_inline_array_begin(j, "aspect_min_median_max");
    for (int i = 0; i < 3; i++)
        json_double(j, NULL, z->aspect[i]);
    json_array_end(j);
    json_object_end(j);
}

static void json_dataset(json_out *j, const ds_report *d, const reader_view *v, const char *images)
{
    int chunked = strcmp(d->layout, "chunked") == 0;
    json_object_begin(j, NULL);
    json_string(j, "name", d->name);
    json_string(j, "dtype", d->dtype);
    json_dims(j, "shape", d->dims, d->rank);
    json_string(j, "layout", d->layout);
    if (chunked) {
        json_dims(j, "chunk_shape", d->chunk, d->rank);
        json_u64(j, "n_chunks", d->n_chunks);
        json_u64(j, "chunks_written", d->n_allocated);
        json_u64(j, "chunk_bytes", d->chunk_bytes);
    } else {
        json_string(j, "chunk_shape", NULL);
    }
    json_string(j, "filters", d->filters);
    json_u64(j, "logical_bytes", d->logical_bytes);
    json_u64(j, "storage_bytes", d->storage_bytes);
    json_double(j, "compression_ratio", ratio_of(d));
    if (v->ok && is_images(d, images)) { /* the reader's answer, for the one dataset it reads */
        char how[256];
        read_path_text(&v->d, how, sizeof how);
        json_bool(j, "addresses_computable", v->d.read_path == H5PACK_READ_IMPLICIT ||
                                                 v->d.read_path == H5PACK_READ_CONTIGUOUS);
        json_string(j, "addresses_note", how);
    } else {
        json_string(j, "addresses_computable", NULL);
        json_string(j, "addresses_note", is_images(d, images) ? v->err : "not the image dataset");
    }
    json_object_end(j);
}

static void json_attr_value(json_out *j, const attr_report *a)
{
    if (a->is_string) {
        json_string(j, a->name, a->text);
    } else if (a->n_values == 1) {
        json_double(j, a->name, a->values[0]);
    } else {
        json_inline_array_begin(j, a->name);
        for (int i = 0; i < a->n_values; i++)
            json_double(j, NULL, a->values[i]);
        json_array_end(j);
    }
}

static void json_attrs(json_out *j, const file_report *r, const char *owner, const char *key)
{
    json_object_begin(j, key);
    for (int i = 0; i < r->n_attrs; i++)
        if (strcmp(r->attrs[i].owner, owner) == 0)
            json_attr_value(j, &r->attrs[i]);
    json_object_end(j);
}

static void json_reader(json_out *j, const reader_view *v)
{
    const h5pack_file_desc *d = &v->d;
    if (!v->ok) {
        json_string(j, "reader", NULL);
        json_string(j, "reader_error", v->err);
        return;
    }
    json_object_begin(j, "reader");
    json_u64(j, "n_samples", d->n_samples);
    json_u64(j, "channels", d->channels);
    json_u64(j, "height", d->height);
    json_u64(j, "width", d->width);
    json_string(j, "layout", d->layout == H5PACK_LAYOUT_NHWC ? "NHWC" : "NCHW");
    json_u64(j, "image_bytes", d->image_bytes);
    json_bool(j, "chunked", d->chunked);
    json_u64(j, "samples_per_chunk", d->samples_per_chunk);
    json_u64(j, "n_chunks", d->n_chunks);
    json_u64(j, "chunk_bytes", d->chunk_bytes);
    json_u64(j, "hdf5_chunks_per_slab", d->chunks_per_slab);
    json_u64(j, "stored_bytes", d->stored_bytes);
    json_bool(j, "compressed", d->compressed);
    json_string(j, "filters", d->filters);
    json_string(j, "read_path", h5pack_read_path_name(d->read_path));
    json_bool(j, "fast_path", d->fast_path);
    json_bool(j, "mapped", d->mapped);
    json_bool(j, "has_labels", d->has_labels);
    json_u64(j, "n_classes", d->n_classes);
    json_u64(j, "label_columns", d->label_columns);
    json_i64(j, "label_rank", d->label_rank);
    json_bool(j, "labels_are_float", d->labels_are_float);
    json_bool(j, "several_sizes", d->several_sizes);
    json_u64(j, "tile", d->tile); /* 0: not a file of images in tiles */
    json_bool(j, "has_pixel_stats", d->has_pixel_stats);
    char fp[17];
    snprintf(fp, sizeof fp, "%016llx", (unsigned long long)d->order_fingerprint);
    json_string(j, "order_fingerprint", fp); /* with the default reader settings */
    json_object_end(j);
    json_string(j, "reader_error", NULL);
}

static void print_json(const file_report *r, const reader_view *v, const char *images)
{
    json_out j;
    json_init(&j, stdout);
    json_object_begin(&j, NULL);
    json_string(&j, "file", r->path);
    json_u64(&j, "file_bytes", r->file_bytes);
    json_bool(&j, "h5pack_file", format_version(r, v) >= 0);
    if (format_version(r, v) >= 0)
        json_i64(&j, "format_version", format_version(r, v));
    else
        json_string(&j, "format_version", NULL);
    json_reader(&j, v);
    const ds_report *img = report_dataset(r, images);
    json_string(&j, "images", img ? img->name : NULL);
    if (img && strcmp(img->layout, "chunked") == 0)
        json_dims(&j, "chunk_shape", img->chunk, img->rank);
    else
        json_string(&j, "chunk_shape", NULL);
    json_bool(&j, "datasets_listed", r->listed); /* 0: a location read through a store, the reader's view only */
    json_array_begin(&j, "datasets");
    for (int i = 0; i < r->n_datasets; i++)
        json_dataset(&j, &r->datasets[i], v, images);
    json_array_end(&j);
    json_object_begin(&j, "attributes");
    json_attrs(&j, r, "/", "/");
    if (img)
        json_attrs(&j, r, images, img->name);
    json_object_end(&j);
    json_sizes(&j, &r->sizes);
    h5pack_masks_info mi;
    json_masks(&j, masks_of(r->path, r->listed, &mi));
    json_u64(&j, "n_classes", r->n_classes);
    json_array_begin(&j, "classes");
    for (int i = 0; i < r->n_classes_listed; i++)
        json_string(&j, NULL, r->classes[i]);
    json_array_end(&j);
    json_object_end(&j);
    json_finish(&j);
}

/* A plain path or file://PATH; not s3://, mem://, ... (the reader reads those through its stores). */
static int is_local(const char *file)
{
    return !strstr(file, "://") || !strncmp(file, "file://", 7);
}

int cmd_info(int argc, char **argv)
{
    const char *file = NULL, *images = "images";
    int json = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "--images") == 0 && i + 1 < argc)
            images = argv[++i];
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return usage_info(stdout), 0;
        else if (argv[i][0] == '-' || file)
            return usage_error("info", argv[i]);
        else
            file = argv[i];
    }
    if (!file)
        return usage_error("info", NULL);
    /* The reader's open first: it probes old-format files in a child, so damaged metadata stops here
     * (exit 2) before the listing walks the file with HDF5 in this process. A file the reader merely
     * cannot read as images (no such dataset, another type or shape) is still listed. */
    reader_view v = {.ok = 0};
    h5pack_config cfg = H5PACK_CONFIG_DEFAULTS;
    cfg.images_dataset = images;
    v.d = (h5pack_file_desc)H5PACK_FILE_DESC_INIT;
    int rc = h5pack_describe(file, &cfg, &v.d, v.err, sizeof v.err);
    v.ok = rc == 0;
    if (rc == H5PACK_ECORRUPT || rc == H5PACK_EIO || rc == H5PACK_EHDF5 || rc == H5PACK_ENOMEM) {
        fprintf(stderr, "h5pack-stats: %s\n", v.err);
        return 2;
    }
    file_report r;
    char err[1200];
    if (!is_local(file)) { /* HDF5 here opens local files only: the reader's view of the store is all */
        if (!v.ok) {
            fprintf(stderr, "h5pack-stats: %s\n", v.err);
            return 2;
        }
        memset(&r, 0, sizeof r);
        snprintf(r.path, sizeof r.path, "%s", file);
        r.file_bytes = v.d.file_bytes, r.format_version = v.d.format_version;
    } else if (inspect_file(strncmp(file, "file://", 7) ? file : file + 7, images, &r, err, sizeof err) != 0) {
        fprintf(stderr, "h5pack-stats: %s\n", err);
        return 2;
    }
    if (json)
        print_json(&r, &v, images);
    else
        print_text(&r, &v, images);
    report_free(&r);
    return 0;
}
