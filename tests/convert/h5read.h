/* h5read.h - reading an h5pack file back with the HDF5 C API in the converter tests (CHECK on failure). */
#ifndef H5PACK_TEST_H5READ_H
#define H5PACK_TEST_H5READ_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

typedef struct packed_file {
    hid_t file;
    uint64_t n;
    int rank_dims[4];
    hsize_t dims[4];
    uint8_t *images;      /* all images, as stored (N x ...) */
    size_t image_bytes;
    char **filenames;     /* n */
    uint32_t *labels;     /* n, NULL without labels */
    char **classes;       /* n_classes */
    size_t n_classes;
    char **skipped_files, **skipped_reasons;
    size_t n_skipped;
} packed_file;

void packed_open(const char *path, packed_file *pf);
void packed_close(packed_file *pf);

int64_t attr_int(hid_t loc, const char *name);
/* Fixed-length string attribute, malloc'ed, NUL-terminated. */
char *attr_string(hid_t loc, const char *name);
void attr_doubles(hid_t loc, const char *name, double *out, size_t count);
int dataset_exists(hid_t file, const char *name);

/* Row of filename NAME, or -1. */
long packed_find(const packed_file *pf, const char *name);

/* Whole file bytes (malloc'ed) and their count. */
uint8_t *read_whole_file(const char *path, size_t *len);
int files_identical(const char *a, const char *b);

/* rm -r PATH (tests' temp folders). */
void remove_tree(const char *path);

#endif
