/* labelset.h - the labels of a file, read and checked once at open: (N,) or (N,K), any integer type (read
 * as int64) or floating point (read as float32), and the class count. The chunk source (images) and the
 * tile source (huge images in tiles) both read them through this. */
#ifndef H5PACK_LABELSET_H
#define H5PACK_LABELSET_H

#include <hdf5.h>
#include <stdint.h>

typedef struct label_set {
    int has_labels;
    int label_rank;       /* 1: (N,), 2: (N,K); 0 without labels */
    int labels_are_float; /* floats holds them, else ints */
    uint32_t label_columns; /* K; 0 without labels */
    uint32_t n_classes;   /* see labelset.c; 0 without labels */
    int64_t *ints;        /* N x K, or NULL */
    float *floats;        /* N x K, or NULL */
} label_set;

/* Reads labels NAME (NULL/"": none; a missing dataset called "labels" is none) of FILE, which holds N
 * images; PATH names the file in messages. Returns 0, or ENOTFOUND / EFORMAT / ECORRUPT / ENOMEM with
 * "PATH: reason" in ERR. On failure OUT holds what was allocated: free it with h5pack_labelset_free. */
int h5pack_labelset_load(hid_t file, const char *path, uint64_t n, const char *name, label_set *out, char *err,
                         size_t err_len);

void h5pack_labelset_free(label_set *ls);

#endif
