/* h5inspect.h - the listing part of `h5pack-stats info`, read with the HDF5 C API directly: every dataset
 * of a file (h5pack's or anyone's) with its shape, type, layout, chunking, filters and compression ratio,
 * the root and image attributes, and the class names. How the reader reads the image dataset (read path,
 * chunk geometry, labels, format version) is not decided here: that is h5pack_describe()'s answer. */
#ifndef H5PACK_STATS_H5INSPECT_H
#define H5PACK_STATS_H5INSPECT_H

#include <stddef.h>
#include <stdint.h>

#define INSPECT_MAX_RANK 8
#define INSPECT_MAX_VALUES 16

typedef struct ds_report {
    char name[256];
    char dtype[32];
    int rank;
    uint64_t dims[INSPECT_MAX_RANK], maxdims[INSPECT_MAX_RANK], chunk[INSPECT_MAX_RANK];
    const char *layout;      /* "contiguous", "chunked", "compact", "virtual" */
    uint64_t n_chunks;       /* chunks in the grid (chunked only) */
    uint64_t n_allocated;    /* chunks written to the file */
    uint64_t chunk_bytes;    /* decompressed bytes of one chunk */
    char filters[128];       /* "deflate(4), fletcher32", "" for none */
    uint64_t logical_bytes, storage_bytes;
} ds_report;

typedef struct attr_report {
    char owner[16];          /* "/" or the dataset name */
    char name[64];
    int is_string;
    char text[256];          /* string value */
    int n_values;            /* numbers (first INSPECT_MAX_VALUES) */
    double values[INSPECT_MAX_VALUES];
} attr_report;

/* Images of several sizes (image_shapes (N,2)): how their sizes spread. */
typedef struct size_spread {
    uint64_t n;                          /* images; 0: the file has no image_shapes */
    uint64_t height[3], width[3];        /* min, median, max */
    double aspect[3];                    /* width / height: min, median, max */
    uint64_t pixels;                     /* all images' pixels */
} size_spread;

typedef struct file_report {
    char path[1024];
    uint64_t file_bytes;
    ds_report *datasets;
    int n_datasets;
    attr_report *attrs;
    int n_attrs;
    char **classes;          /* first class names (up to 64) */
    int n_classes_listed;
    uint64_t n_classes;      /* length of the "classes" dataset, 0 when absent */
    int format_version;      /* root attribute h5pack_format_version, -1 when absent (used when the reader
                                cannot describe the file; otherwise h5pack_describe says it) */
    size_spread sizes;       /* images of several sizes */
    int listed;              /* 1: datasets and attributes listed (a local file); 0: the reader's view only */
} file_report;

/* Fills *R from PATH. IMAGES names the image dataset whose attributes are listed too. Returns 0, or -1
 * with "PATH: reason" in ERR (missing file, not HDF5, unreadable). Free with report_free(). */
int inspect_file(const char *path, const char *images, file_report *r, char *err, size_t err_len);
void report_free(file_report *r);

/* The dataset named NAME in R (leading '/' optional), or NULL. */
const ds_report *report_dataset(const file_report *r, const char *name);

#endif
