/* make_files.h - writes small HDF5 test files with the HDF5 C API (h5pack-like and foreign layouts, and
 * deliberately wrong ones), and compares chunk source reads against H5Dread. Test helper only. */
#ifndef H5PACK_TEST_MAKE_FILES_H
#define H5PACK_TEST_MAKE_FILES_H

#include <hdf5.h>
#include <stdint.h>

#include "chunksrc.h"

typedef enum test_storage {
    STORE_IMPLICIT = 0,   /* chunked, fixed dims, early allocation, latest format (what h5pack writes) */
    STORE_CHUNKED = 1,    /* chunked, default format and allocation, maxshape (None,...) */
    STORE_CONTIGUOUS = 2, /* no chunks */
    STORE_EMPTY_CONTIGUOUS = 3 /* contiguous, never written (all fill value) */
} test_storage;

typedef struct test_file {
    uint64_t n;               /* images */
    uint32_t c, h, w;
    uint64_t k;               /* images per chunk (chunked storage) */
    int nhwc;
    test_storage storage;
    int gzip;                 /* deflate level, 0 = none */
    int shuffle;
    int fletcher32;
    const char *layout_attr;  /* "layout" attribute on images, NULL = none */
    hid_t image_type;         /* 0 = H5T_NATIVE_UINT8 */
    int rank;                 /* 0 = 4; 3: (N,H,W) gray images (set c = 1); 2: (N,H), a bad file */
    hsize_t chunk_override[4]; /* nonzero: this chunk shape (the first RANK entries) instead of (k, image dims) */
    int skip_chunks_from;     /* >0: chunked storage, rows from this chunk on are never written; <0: none are */
    hsize_t userblock;        /* >0: a user block of this size before the HDF5 data (a power of 2 >= 512) */
    /* labels */
    int labels;               /* 1: write "labels" */
    hid_t label_type;         /* 0 = H5T_STD_U8LE */
    int64_t label_len_delta;  /* labels length = n + delta */
    int negative_label;       /* 1: one label is -1 (with a signed type) */
    uint32_t n_classes;       /* labels are i % n_classes; "classes" of this length when write_classes */
    int write_classes;
    int mean_std;             /* 1: root attributes mean/std */
} test_file;

/* Defaults: n 23, 3x8x10, k 4, implicit, labels uint8 with 5 classes and a classes dataset. */
test_file test_file_defaults(void);

/* The byte stored at image I, offset J (deterministic, not constant, compressible a little). */
uint8_t test_pixel(uint64_t i, uint64_t j);

/* Writes PATH. Returns 0 or -1 (and prints why). */
int test_file_write(const char *path, const test_file *tf);

/* Reads every chunk through the chunk source and compares it with H5Dread of the same rows and (PATTERN)
 * with test_pixel(). Returns 0 when all match, else prints the first difference and returns -1. */
int test_compare_all_chunks(chunk_source *s, const char *path, const char *images, int pattern);

/* A temporary directory for this test's files (created once, under $TMPDIR or /tmp). */
const char *test_tmpdir(const char *test_name);

#endif
