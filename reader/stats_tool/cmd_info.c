/* cmd_info.c - `h5pack-stats info FILE [--json] [--images NAME]`: what is in the file and how it is
 * laid out for reading. */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "h5inspect.h"
#include "json.h"

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

static void print_dataset(const ds_report *d)
{
    char shape[160], chunk[160], sz[32], store[32];
    dims_text(d->dims, d->rank, shape, sizeof shape);
    h5pack_format_bytes(d->storage_bytes, store, sizeof store);
    printf("  %-20s %-18s %-22s %s, stored %s\n", d->name, d->dtype, shape, d->layout, store);
    if (strcmp(d->layout, "chunked") != 0)
        return;
    dims_text(d->chunk, d->rank, chunk, sizeof chunk);
    h5pack_format_bytes(d->chunk_bytes, sz, sizeof sz);
    printf("  %-20s chunks %s: %llu of %s each (%llu written), filters: %s, compression ratio %.2f\n", "", chunk,
           (unsigned long long)d->n_chunks, sz, (unsigned long long)d->n_allocated,
           d->filters[0] ? d->filters : "none", ratio_of(d));
    printf("  %-20s chunk addresses computable: %s\n", "", d->computable_why);
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

static void print_text(const file_report *r, const char *images)
{
    char sz[32];
    h5pack_format_bytes(r->file_bytes, sz, sizeof sz);
    printf("file: %s (%s)\n", r->path, sz);
    if (r->format_version >= 0)
        printf("h5pack file, format version %d\n", r->format_version);
    else
        printf("foreign HDF5 file (no h5pack_format_version attribute)\n");
    printf("datasets (%d):\n", r->n_datasets);
    for (int i = 0; i < r->n_datasets; i++)
        print_dataset(&r->datasets[i]);
    if (!report_dataset(r, images))
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

static void json_dataset(json_out *j, const ds_report *d)
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
    json_bool(j, "addresses_computable", d->computable);
    json_string(j, "addresses_note", d->computable_why);
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

static void print_json(const file_report *r, const char *images)
{
    json_out j;
    json_init(&j, stdout);
    json_object_begin(&j, NULL);
    json_string(&j, "file", r->path);
    json_u64(&j, "file_bytes", r->file_bytes);
    json_bool(&j, "h5pack_file", r->format_version >= 0);
    if (r->format_version >= 0)
        json_i64(&j, "format_version", r->format_version);
    else
        json_string(&j, "format_version", NULL);
    const ds_report *img = report_dataset(r, images);
    json_string(&j, "images", img ? img->name : NULL);
    if (img && strcmp(img->layout, "chunked") == 0)
        json_dims(&j, "chunk_shape", img->chunk, img->rank);
    else
        json_string(&j, "chunk_shape", NULL);
    json_array_begin(&j, "datasets");
    for (int i = 0; i < r->n_datasets; i++)
        json_dataset(&j, &r->datasets[i]);
    json_array_end(&j);
    json_object_begin(&j, "attributes");
    json_attrs(&j, r, "/", "/");
    if (img)
        json_attrs(&j, r, images, img->name);
    json_object_end(&j);
    json_u64(&j, "n_classes", r->n_classes);
    json_array_begin(&j, "classes");
    for (int i = 0; i < r->n_classes_listed; i++)
        json_string(&j, NULL, r->classes[i]);
    json_array_end(&j);
    json_object_end(&j);
    json_finish(&j);
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
    file_report r;
    char err[1200];
    if (inspect_file(file, images, &r, err, sizeof err) != 0) {
        fprintf(stderr, "h5pack-stats: %s\n", err);
        return 2;
    }
    if (json)
        print_json(&r, images);
    else
        print_text(&r, images);
    report_free(&r);
    return 0;
}
