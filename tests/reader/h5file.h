/* h5file.h - small HDF5 image files for the reader tests, written with the HDF5 C API, whose pixels are
 * a known function of (sample, channel, y, x) so every delivered byte can be checked. */
#ifndef H5PACK_TESTS_H5FILE_H
#define H5PACK_TESTS_H5FILE_H

#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

typedef struct h5spec {
    uint64_t n;          /* samples */
    uint32_t c, h, w;
    uint64_t k;          /* samples per chunk */
    int nhwc;            /* 1: (N,H,W,C) with layout attribute "NHWC" */
    int gzip;            /* deflate level, 0 = none (then the implicit chunk index: fixed dims, early alloc) */
    int labels;          /* 1: a uint16 "labels" dataset with label = sample % 7 */
    int stats;           /* 1: root "mean"/"std" float64[C] attributes */
    hid_t dtype;         /* 0: uint8 (else e.g. H5T_NATIVE_INT16 for a bad file) */
    int rank3;           /* 1: a 3-D (N,H,W) dataset, nothing written (gray images, all the fill value 0) */
    int foreign;         /* as h5py writes: 1 = maxshape (None, ...) in the default file format (B-tree
                            chunk index), 2 = contiguous (no chunks) */
} h5spec;

static inline uint8_t pixel_of(uint64_t s, uint32_t c, uint32_t y, uint32_t x)
{
    return (uint8_t)((s * 37 + (s >> 8) * 11 + c * 101 + y * 13 + x * 7) % 251);
}

/* Image S in the file's layout. */
static inline void image_of(const h5spec *sp, uint64_t s, uint8_t *out)
{
    for (uint32_t c = 0; c < sp->c; c++)
        for (uint32_t y = 0; y < sp->h; y++)
            for (uint32_t x = 0; x < sp->w; x++) {
                size_t i = sp->nhwc ? ((size_t)y * sp->w + x) * sp->c + c : ((size_t)c * sp->h + y) * sp->w + x;
                out[i] = pixel_of(s, c, y, x);
            }
}

static inline void write_string_attr(hid_t obj, const char *name, const char *value)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, strlen(value));
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, t, value);
    H5Aclose(a), H5Sclose(sp), H5Tclose(t);
}

static inline void write_stats_attrs(hid_t f, const h5spec *sp)
{
    double mean[4], std[4];
    for (uint32_t c = 0; c < sp->c; c++)
        mean[c] = 0.3 + 0.1 * c, std[c] = 0.2 + 0.05 * c;
    hsize_t dim = sp->c;
    hid_t s = H5Screate_simple(1, &dim, NULL);
    hid_t a = H5Acreate2(f, "mean", H5T_NATIVE_DOUBLE, s, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_DOUBLE, mean);
    H5Aclose(a);
    a = H5Acreate2(f, "std", H5T_NATIVE_DOUBLE, s, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_DOUBLE, std);
    H5Aclose(a), H5Sclose(s);
}

static inline void write_labels(hid_t f, const h5spec *sp)
{
    hsize_t n = sp->n;
    uint16_t *l = malloc(n * sizeof *l);
    for (uint64_t i = 0; i < n; i++)
        l[i] = (uint16_t)(i % 7);
    hid_t s = H5Screate_simple(1, &n, NULL);
    hid_t d = H5Dcreate2(f, "labels", H5T_NATIVE_UINT16, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(d >= 0);
    CHECK(H5Dwrite(d, H5T_NATIVE_UINT16, H5S_ALL, H5S_ALL, H5P_DEFAULT, l) >= 0);
    H5Dclose(d), H5Sclose(s);
    free(l);
}

/* Writes PATH following SP. */
static inline void make_h5(const char *path, const h5spec *sp)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (!sp->foreign)
        H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    CHECK(f >= 0);
    int rank = sp->rank3 ? 3 : 4;
    hsize_t dims[4], chunk[4];
    if (sp->rank3) {
        hsize_t d3[3] = {sp->n, sp->h, sp->w}, c3[3] = {sp->k, sp->h, sp->w};
        memcpy(dims, d3, sizeof d3), memcpy(chunk, c3, sizeof c3);
    } else if (sp->nhwc) {
        hsize_t d4[4] = {sp->n, sp->h, sp->w, sp->c}, c4[4] = {sp->k, sp->h, sp->w, sp->c};
        memcpy(dims, d4, sizeof d4), memcpy(chunk, c4, sizeof c4);
    } else {
        hsize_t d4[4] = {sp->n, sp->c, sp->h, sp->w}, c4[4] = {sp->k, sp->c, sp->h, sp->w};
        memcpy(dims, d4, sizeof d4), memcpy(chunk, c4, sizeof c4);
    }
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (sp->foreign != 2)
        H5Pset_chunk(dcpl, rank, chunk);
    if (sp->gzip)
        H5Pset_deflate(dcpl, (unsigned)sp->gzip);
    else if (!sp->foreign)
        H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY);
    hsize_t maxdims[4];
    memcpy(maxdims, dims, sizeof maxdims);
    maxdims[0] = H5S_UNLIMITED;
    hid_t space = H5Screate_simple(rank, dims, sp->foreign == 1 ? maxdims : NULL);
    hid_t type = sp->dtype ? sp->dtype : H5T_NATIVE_UINT8;
    hid_t d = H5Dcreate2(f, "images", type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    CHECK(d >= 0);
    size_t img = (size_t)sp->c * sp->h * sp->w;
    uint8_t *all = malloc(sp->n * img);
    for (uint64_t s = 0; s < sp->n; s++)
        image_of(sp, s, all + s * img);
    if (!sp->dtype && !sp->rank3)
        CHECK(H5Dwrite(d, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, all) >= 0);
    if (!sp->foreign) /* foreign files carry no layout attribute: the reader infers it */
        write_string_attr(d, "layout", sp->nhwc ? "NHWC" : "NCHW");
    free(all);
    if (sp->labels)
        write_labels(f, sp);
    if (sp->stats)
        write_stats_attrs(f, sp);
    H5Dclose(d), H5Sclose(space), H5Pclose(dcpl), H5Pclose(fapl);
    CHECK(H5Fclose(f) >= 0);
}

/* A file name in the test's working directory, unique per process. */
static inline void temp_h5_name(char *buf, size_t len, const char *tag)
{
    snprintf(buf, len, "reader_%s_%ld.h5", tag, (long)getpid());
}

#endif
