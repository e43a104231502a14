/* test_files.h - HDF5 files of every shape the reader meets, made with the HDF5 C API for the describe
 * and simulation tests: what h5pack writes (implicit index, gzip), a contiguous dataset, and what h5py
 * scripts write (old file format, resizable, gzip with shuffle, fletcher32, NHWC). Header only. */
#ifndef H5PACK_TEST_FILES_H
#define H5PACK_TEST_FILES_H

#include <hdf5.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"

typedef enum test_file_kind {
    TF_IMPLICIT,   /* latest format, chunked, unfiltered, fixed dims, early allocation */
    TF_GZIP,       /* latest format, chunked, deflate(6) */
    TF_CONTIGUOUS, /* latest format, unchunked */
    TF_H5PY_GZIP,  /* h5py's defaults: superblock 0 (probed), maxshape (None,...), shuffle + deflate(4), NHWC */
    TF_FLETCHER,   /* superblock 0, fletcher32 + deflate(4): the hdf5 read path */
    TF_KINDS
} test_file_kind;

typedef struct test_file {
    test_file_kind kind;
    hsize_t n, c, h, w, k; /* images (n, c, h, w) in chunks of k; NHWC files store (n, h, w, c) */
    int format_version;    /* root attribute h5pack_format_version, -1: none */
    int classes;           /* > 0: a "classes" dataset of this many names (labels are i % 5) */
} test_file;

static inline int test_file_nhwc(const test_file *t)
{
    return t->kind == TF_H5PY_GZIP;
}

static inline void test_file_attrs(hid_t f, const test_file *t)
{
    if (t->format_version >= 0) {
        hid_t sp = H5Screate(H5S_SCALAR);
        hid_t a = H5Acreate2(f, "h5pack_format_version", H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT);
        CHECK(a >= 0 && H5Awrite(a, H5T_NATIVE_INT, &t->format_version) >= 0);
        H5Aclose(a), H5Sclose(sp);
    }
    if (t->classes > 0) {
        hsize_t n = (hsize_t)t->classes;
        const char *names[16] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p"};
        hid_t type = H5Tcopy(H5T_C_S1);
        H5Tset_size(type, H5T_VARIABLE);
        hid_t sp = H5Screate_simple(1, &n, NULL);
        hid_t d = H5Dcreate2(f, "classes", type, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        CHECK(d >= 0 && t->classes <= 16 && H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, names) >= 0);
        H5Dclose(d), H5Sclose(sp), H5Tclose(type);
    }
}

static inline hid_t test_file_dcpl(const test_file *t, hsize_t *maxdims)
{
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    int nhwc = test_file_nhwc(t);
    hsize_t ch[4] = {t->k, nhwc ? t->h : t->c, nhwc ? t->w : t->h, nhwc ? t->c : t->w};
    if (t->kind != TF_CONTIGUOUS)
        H5Pset_chunk(dcpl, 4, ch);
    if (t->kind == TF_IMPLICIT)
        H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY);
    if (t->kind == TF_GZIP)
        H5Pset_deflate(dcpl, 6);
    if (t->kind == TF_H5PY_GZIP)
        H5Pset_shuffle(dcpl), H5Pset_deflate(dcpl, 4), maxdims[0] = H5S_UNLIMITED;
    if (t->kind == TF_FLETCHER)
        H5Pset_fletcher32(dcpl), H5Pset_deflate(dcpl, 4);
    return dcpl;
}

/* Writes T at PATH: images with a compressible pattern, labels i % 5, the attributes T asks for. */
static inline void test_file_make(const char *path, const test_file *t)
{
    int nhwc = test_file_nhwc(t), latest = t->kind <= TF_CONTIGUOUS;
    hsize_t dims[4] = {t->n, nhwc ? t->h : t->c, nhwc ? t->w : t->h, nhwc ? t->c : t->w};
    hsize_t maxdims[4] = {dims[0], dims[1], dims[2], dims[3]}, img = t->c * t->h * t->w;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (latest)
        H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    CHECK(f >= 0);
    hid_t dcpl = test_file_dcpl(t, maxdims);
    hid_t sp = H5Screate_simple(4, dims, maxdims);
    hid_t d = H5Dcreate2(f, "images", H5T_NATIVE_UINT8, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    CHECK(d >= 0);
    uint8_t *buf = malloc(t->n * img);
    CHECK(buf != NULL);
    for (hsize_t i = 0; i < t->n * img; i++)
        buf[i] = (uint8_t)(i / img + (i % 7 == 0 ? i * 13 : 0));
    CHECK(H5Dwrite(d, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
    free(buf);
    if (nhwc) {
        hid_t asp = H5Screate(H5S_SCALAR), type = H5Tcopy(H5T_C_S1);
        H5Tset_size(type, 4);
        hid_t a = H5Acreate2(d, "layout", type, asp, H5P_DEFAULT, H5P_DEFAULT);
        CHECK(a >= 0 && H5Awrite(a, type, "NHWC") >= 0);
        H5Aclose(a), H5Tclose(type), H5Sclose(asp);
    }
    uint8_t *labels = malloc(t->n);
    CHECK(labels != NULL);
    for (hsize_t i = 0; i < t->n; i++)
        labels[i] = (uint8_t)(i % 5);
    hsize_t nl = t->n;
    hid_t lsp = H5Screate_simple(1, &nl, NULL);
    hid_t l = H5Dcreate2(f, "labels", H5T_NATIVE_UINT8, lsp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(l >= 0 && H5Dwrite(l, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, labels) >= 0);
    free(labels);
    test_file_attrs(f, t);
    H5Dclose(l), H5Sclose(lsp), H5Dclose(d), H5Sclose(sp), H5Pclose(dcpl), H5Fclose(f), H5Pclose(fapl);
}

/* Bytes HDF5 stores for the images (all chunks as written, or the contiguous range). */
static inline uint64_t test_file_storage(const char *path)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, "images", H5P_DEFAULT);
    uint64_t size = H5Dget_storage_size(d);
    H5Dclose(d), H5Fclose(f);
    return size;
}

#endif
