/* stream.h - what a reader streams, behind one set of operations: batches of whole images from a chunk
 * source (stream_images.c) or patches of huge images in tiles (stream_patches.c). reader.c (h5pack_open,
 * h5pack_next, ...) and h5pack_describe call these operations and never ask which kind they have.
 *
 * Adding a kind: one stream_<name>.c defining `const stream_ops h5pack_stream_<name>_ops` and one X(name)
 * line in H5PACK_STREAMS, before the kinds it must take precedence over (the first that accepts a
 * config opens it).
 *
 * Thread rules: open, describe and close from any one thread; next, release, stats, image_shape and
 * set_output_size from the consumer (h5pack.h's rules). */
#ifndef H5PACK_STREAM_STREAM_H
#define H5PACK_STREAM_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "h5pack.h"

#define H5PACK_STREAMS(X) X(patches) X(images)

typedef struct stream stream;

typedef struct stream_ops {
    const char *name;
    /* This kind reads what CFG asks for (e.g. patches: patch_size > 0). */
    int (*accepts)(const h5pack_config *cfg);
    /* This kind reads the file at PATH as it is (describe: a file it can say something about). */
    int (*reads_file)(const char *path);
    /* Opens PATH with CFG (checked, its strings kept by the caller until close): the source, backend and
     * pipeline; *INFO filled. On failure *OUT is NULL and ERR says why. */
    int (*open)(const char *path, const h5pack_config *cfg, stream **out, h5pack_info *info, char *err,
                size_t err_len);
    /* h5pack_describe of PATH with CFG (checked): *OUT (the library's own struct) filled, nothing started. */
    int (*describe)(const char *path, const h5pack_config *cfg, h5pack_file_desc *out, char *err, size_t err_len);
    int (*next)(stream *s, h5pack_batch *batch, char *err, size_t err_len);
    int (*release)(stream *s, uint64_t *token, char *err, size_t err_len);
    /* h5pack_detach of the delivery TOKEN: its memory to *OUT (backend.h). NULL: this kind cannot. */
    int (*detach)(stream *s, uint64_t token, backend_detached *out, int *copied, char *err, size_t err_len);
    /* The counters of the delivered batches (h5pack_stats_get derives the ratios and elapsed time). */
    void (*stats)(stream *s, h5pack_stats *st);
    /* Image I's stored size (I < info.n_samples). */
    void (*image_shape)(const stream *s, uint64_t i, uint32_t *height, uint32_t *width);
    int (*set_output_size)(stream *s, uint32_t height, uint32_t width, char *err, size_t err_len);
    void (*close)(stream *s);
} stream_ops;

/* The part every stream shares; each kind's own struct starts with it. */
struct stream {
    const stream_ops *ops;
    backend *be; /* where its batches are converted (the timeline reads its device times) */
    struct store *st; /* the file it reads: h5pack_next checks it is unchanged before handing a batch out */
};

#define H5PACK_STREAM_DECLARE(name) extern const stream_ops h5pack_stream_##name##_ops;
H5PACK_STREAMS(H5PACK_STREAM_DECLARE)
#undef H5PACK_STREAM_DECLARE

/* The kind that opens CFG (the first of H5PACK_STREAMS that accepts it). */
const stream_ops *h5pack_stream_for(const h5pack_config *cfg);

/* The kind that describes PATH read with CFG: the one that opens CFG, or else one that reads the file
 * as it is (a file of images in tiles described without patch_size). */
const stream_ops *h5pack_stream_describing(const char *path, const h5pack_config *cfg);

/* stream_backend.c: the backend CFG asks for (device AUTO: CUDA when usable), created with BP. */
int h5pack_stream_make_backend(const h5pack_config *cfg, const backend_params *bp, backend **out, char *err,
                               size_t err_len);

/* stream_backend.c: the info fields every kind fills from its backend (device, its name and memory). */
void h5pack_stream_backend_info(const backend *be, h5pack_info *info);

#endif
