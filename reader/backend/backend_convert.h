/* backend_convert.h - the conversion of one stored uint8 image into its place in an output batch
 * (per-channel value table, layout change, flip, pad-and-crop; no resizing crop), prepared once per
 * backend. One implementation serves the two-pass path (the CPU backend converting the assembled uint8
 * batch), the one-pass path (a worker converting straight from the cached or mapped chunk into the
 * output batch: pipeline_work.c) and the reference the tests compare the CUDA kernel with, so every path
 * gives the same bytes by construction.
 *
 * The CPU one-pass path: with the CPU backend, no sample echo and no batch echo (an echo converts the
 * batch again with fresh draws, from its uint8 pixels, which one-pass never assembles), workers write
 * each image straight into the slot's output and submit the batch with backend_job.pixels_done; the
 * backend then only records the job and its boxes. Resizing crops too: the slot's resampling job is
 * planned when its batch is bound (h5pack_backend_cpu_bind_crops) with every source left open, and each
 * worker resamples its images from the chunk they live in (h5pack_backend_cpu_crop_image). No slot then
 * holds a uint8 batch, so host memory follows the delivered size, not the stored one. */
#ifndef H5PACK_READER_BACKEND_CONVERT_H
#define H5PACK_READER_BACKEND_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "backend_convert_avx2.h"

/* Element strides of one image in a layout: x step, channel step, row step. */
typedef struct backend_strides {
    ptrdiff_t x, c, y;
} backend_strides;

/* A prepared conversion: the tables of every element type (float32 as bit patterns) and the geometry. */
typedef struct backend_conv {
    uint32_t t32[H5PACK_MAX_CHANNELS][256];
    uint16_t t16[H5PACK_MAX_CHANNELS][256];
    uint8_t t8[H5PACK_MAX_CHANNELS][256];
    h5pack_dtype dtype;
    size_t C, H, W;
    backend_strides in, out;
    int same_layout;
    int raw;          /* uint8 output: the raw pixels, no normalisation or augmentation (h5pack.h) */
    int flip, pad;    /* random flip on, crop padding (0 for raw output) */
    int stream;       /* float32 runs are written with non-temporal stores (the batch outgrows caches) */
    conv_avx2_plan simd; /* float32: the AVX2 kernel's constants and mode (backend_convert_avx2.h) */
    float mean[H5PACK_MAX_CHANNELS], std[H5PACK_MAX_CHANNELS];
    size_t in_bytes, out_bytes; /* one stored image; one output image at the largest output size */
} backend_conv;

/* Prepares the conversion of P (P's crop must be H5PACK_CROP_NONE to use it). */
void h5pack_backend_conv_init(backend_conv *cv, const backend_params *p);

/* Converts image I of a batch (augmentation key KEY) from SRC (one stored image) into its place in
 * OUT, the whole batch's output. Concurrent calls for different images of one batch are safe. */
void h5pack_backend_conv_image(const backend_conv *cv, const uint8_t *src, void *out, size_t i, uint64_t key);

/* ---- the CPU backend's one-pass path (backend_cpu.c) ---------------------------------------------- */

/* The prepared conversion when B is the CPU backend on the one-pass path without a resizing crop; else
 * NULL. */
const backend_conv *h5pack_backend_cpu_one_pass(backend *b);

/* 1 when B is the CPU backend on the one-pass path with a resizing crop. */
int h5pack_backend_cpu_one_pass_crops(backend *b);

/* One-pass crops: plans SLOT's resampling job (COUNT images, key KEY, the output size of EPOCH) and its
 * boxes, sources and taps left open (each image's are planned by the worker that resamples it: on many
 * threads, one thread planning a whole batch's taps would be the ceiling). DIMS: images of several
 * sizes, each image's stored (height, width); NULL for images of one size. Called once per bound batch,
 * before any image of it is resampled. */
void h5pack_backend_cpu_bind_crops(backend *b, int slot, uint64_t key, size_t count, uint64_t epoch,
                                   const uint32_t *dims);

/* Floats of scratch h5pack_backend_cpu_crop_image needs for SLOT's planned job. */
size_t h5pack_backend_cpu_crop_scratch_floats(backend *b, int slot);

/* What one worker remembers of the taps it planned (h5pack_backend_cpu_crop_image): each box length's,
 * across batches, to copy them for the next image whose box has the same length (up to 2 MiB per axis,
 * one table when both axes have the same shape: about 1.5 MiB for 256 -> 224). NULL when out of memory. */
typedef struct cpu_crop_memo cpu_crop_memo;
cpu_crop_memo *h5pack_backend_cpu_crop_memo_new(void);
void h5pack_backend_cpu_crop_memo_free(cpu_crop_memo *memo);

/* The image a worker resamples after the current one: image POS of SLOT's planned job, stored at SRC.
 * Its crop region is brought into the cache while the current one is resampled (backend_prefetch.h). */
typedef struct cpu_crop_next {
    int slot;
    uint32_t pos;
    const uint8_t *src;
} cpu_crop_next;

/* Plans the taps of image POS of SLOT's planned job (with MEMO, the calling worker's own) and resamples
 * it from SRC (its stored image) into the slot's output, prefetching NEXT (NULL: none; its slot's job
 * must be planned) meanwhile. Concurrent calls for different images of one slot are safe, each with its
 * own memo. */
void h5pack_backend_cpu_crop_image(backend *b, int slot, uint32_t pos, const uint8_t *src, float *scratch,
                                   cpu_crop_memo *memo, const cpu_crop_next *next);

/* 1 when SLOT's planned output size is no longer its epoch's (h5pack_set_output_size after the plan):
 * the images must be planned and resampled again (the pipeline reads their chunks once more). */
int h5pack_backend_cpu_crops_stale(backend *b, int slot);

/* The output batch of SLOT (where the workers write). */
void *h5pack_backend_cpu_output(backend *b, int slot);

/* Adds NS nanoseconds of one-pass conversion to the backend's busy_convert_s. */
void h5pack_backend_cpu_add_convert_ns(backend *b, uint64_t ns);

#endif
