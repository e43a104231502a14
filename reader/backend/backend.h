/* backend.h - the conversion stage (uint8 batch -> normalised output) behind one small interface, so
 * the reader core (file -> cache -> uint8 batch) never knows whether a GPU is there.
 *
 * Ring model: the core owns `slots` ring entries (config.prefetch). For each slot the backend owns
 *   - a host uint8 input buffer (pinned on CUDA) of batch_size images, and a host label buffer of
 *     batch_size rows of label_bytes (int64 or float32 values; host_labels gives it as int64_t *),
 *   - the output buffer(s) the consumer sees (host floats on CPU; device buffers on CUDA), sized for
 *     the largest output size allowed (max_out_height x max_out_width with a resizing crop),
 *   - per delivery, the host-made geometry (augment_crops.h: crop boxes, flips, filter taps), copied to
 *     the device with the batch on CUDA, and the boxes on the host for the consumer.
 * Calls, per slot, always in this order:
 *   worker:   fill host_input(slot) / host_labels(slot), then submit(slot, job of echo 0)
 *   consumer: output(slot, &batch)   -> data pointer, event; makes config.cuda_stream wait
 *   consumer: release(slot)          -> records on the user's stream; slot's outputs may be reused
 *   consumer: resubmit(slot, job of echo e) for each further echo, then output/release again
 *   consumer: detach(slot) between an output and its release (h5pack_detach): the delivered output
 *             memory is the caller's from then on, the slot has new memory
 * Sample echo (backend_job.sources): the worker's submit only takes the uint8 batch in (job.convert 0);
 * the consumer composes each delivery from several slots' inputs and the pool (pool_store keeps a
 * slot's images past its release) and converts it with resubmit.
 * host_input(), host_labels() and submit() may be called concurrently from several workers for
 * different slots (call host_input/host_labels for each fill: the CUDA backend waits there for the
 * slot's previous copy); all other calls come from the consumer thread. A slot is never submitted again
 * before its last release, nor while a composed delivery that reads it is unreleased. Without a user
 * stream, release means the consumer's work on the batch is done.
 */
#ifndef H5PACK_BACKEND_H
#define H5PACK_BACKEND_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "errtext.h" /* h5pack_errf: every backend error goes through it */
#include "h5pack.h"

typedef struct backend_params {
    uint32_t channels, height, width; /* images of several sizes: the largest height and width */
    uint64_t in_image_bytes;  /* one stored image's place in a uint8 batch or the echo pool; 0: channels x
                                 height x width (images of several sizes: the largest image's h x w x C,
                                 each addressed with its own width) */
    h5pack_layout in_layout;  /* NCHW or NHWC (never AUTO here) */
    h5pack_layout out_layout; /* NCHW or NHWC */
    h5pack_dtype dtype;
    size_t batch_size;
    size_t label_bytes;       /* one sample's labels: K int64 or K float32 values (0 = one int64) */
    int slots;
    int threads;              /* CPU backend: threads for a conversion done on the consumer thread */
    float mean[H5PACK_MAX_CHANNELS], std[H5PACK_MAX_CHANNELS]; /* output = (x/255 - mean) / std */
    int random_flip;
    int crop_padding;
    int gpu_id;
    size_t device_memory_limit; /* 0 = none */
    void *user_stream;          /* cudaStream_t or NULL */
    /* resizing crops (augment_geom.h); crop NONE keeps the stored size */
    int crop;                              /* h5pack_crop */
    uint32_t out_height, out_width;        /* output size of epoch 0 (crop modes) */
    uint32_t max_out_height, max_out_width; /* buffers are sized for this (>= out_*) */
    double scale_min, scale_max, ratio_min, ratio_max, center_ratio;
    /* sample echo: pool entries of batch_size images that outlive their slot (0 = no pool) */
    int pool_batches;
    /* output buffers per slot: 1, or 2 with batch echo (CUDA: echo e is converted into the other buffer,
     * so its kernel need not wait for the consumer's step on echo e-1; the CPU backend ignores it) */
    int output_buffers;
    /* CPU backend: the workers convert each image straight from its chunk into the output (one-pass,
     * backend_convert.h), so no slot keeps a uint8 input batch: none is allocated. Ignored when the
     * backend cannot (uint8 pass-through, a sample-echo pool) and by the CUDA backend. */
    int one_pass;
} backend_params;

/* Where image `image` of a composed delivery comes from: buf < slots: that ring slot's input;
 * buf >= slots: pool entry buf - slots. */
typedef struct backend_source {
    int32_t buf;
    uint32_t image;
} backend_source;

/* One conversion. */
typedef struct backend_job {
    size_t count;                  /* images delivered */
    uint64_t key;                  /* augmentation key of this delivery (augment.h) */
    uint64_t epoch;                /* picks the output size (h5pack_backend_set_output_size) */
    const backend_source *sources; /* NULL: images 0..count-1 of the slot itself */
    const int64_t *labels;         /* with sources: the delivery's label rows, label_bytes each (NULL: none) */
    int convert;                   /* submit: 0 = only take the uint8 batch in (sample echo) */
    int pixels_done;               /* submit, CPU only: the workers already wrote the output (one-pass
                                    * path, backend_convert.h): record the job and its boxes only */
    const uint32_t *dims;          /* images of several sizes: each delivered image's stored (height,
                                    * width), 2 per image (copied by the backend); NULL: one size */
} backend_job;

/* The crop box and flip of one delivered image (the public h5pack_crop_box's layout). */
typedef struct backend_box {
    int32_t y, x, height, width, flip;
} backend_box;

typedef struct backend backend;

/* Memory a backend handed over (h5pack_detach): BYTES at MEM (host memory, or device memory of GPU
 * DEVICE), freed with free_fn(the struct itself) on any thread, also after the backend is gone. OWNER:
 * what free_fn needs beside (e.g. the ring block the memory is a part of). */
typedef struct backend_detached {
    void *mem;
    size_t bytes;
    void *owner;
    int device;
    void (*free_fn)(const struct backend_detached *d);
} backend_detached;

/* Errors: every op that can fail returns a negative h5pack_error code and writes its detail into
 * (err, err_len) (err may be NULL when err_len is 0), as the rest of the reader does. A backend whose
 * device failed stays failed: every later op returns the same code with the FIRST failure's text, so the
 * message the consumer sees names the real cause whichever batch reports it. host_input/host_labels
 * cannot report: a failure while waiting there is returned by the slot's submit. */
typedef struct backend_ops {
    uint8_t *(*host_input)(backend *b, int slot);
    int64_t *(*host_labels)(backend *b, int slot);
    /* The uint8 batch of SLOT (JOB.count images) is complete: convert it for echo 0 with JOB.key (see
     * augment.h). CPU: converts now, on the calling worker thread. CUDA: enqueues H2D copy + kernel on
     * the backend's streams and returns. With JOB.convert 0 only the copy. */
    int (*submit)(backend *b, int slot, backend_job job, char *err, size_t err_len);
    /* Convert SLOT again for an echo, from the uint8 data already in place (CUDA: already on the
     * device: no second copy); with JOB.sources, a composed delivery. */
    int (*resubmit)(backend *b, int slot, backend_job job, char *err, size_t err_len);
    /* Sample echo: copy the COUNT images of SLOT's input into pool entry ENTRY (ordered before every
     * later conversion; the slot may be refilled after its release). */
    int (*pool_store)(backend *b, int slot, size_t count, int entry, char *err, size_t err_len);
    /* Fill batch->data, bytes, on_device, cuda_event, labels, labels_device for SLOT; waits for the
     * conversion (CPU: already done; CUDA: cudaStreamWaitEvent on user_stream, no host sync). */
    int (*output)(backend *b, int slot, size_t count, h5pack_batch *batch, char *err, size_t err_len);
    int (*release)(backend *b, int slot, char *err, size_t err_len);
    /* SLOT's last delivery: one box per image (NULL when the backend delivers the raw batch) and the
     * output size; on the host, valid until the slot's next conversion. */
    void (*geometry)(backend *b, int slot, const backend_box **boxes, uint32_t *out_h, uint32_t *out_w);
    /* Busy seconds (convert, copy) and device bytes allocated, for the stats. */
    void (*times)(backend *b, double *convert_s, double *copy_s, uint64_t *device_bytes);
    void (*destroy)(backend *b);
    /* h5pack_detach: hands the memory of SLOT's delivered output (the batch's data) to the caller in *OUT
     * and gives the slot new memory now, so a later fill never waits for or fails on an allocation. With
     * MORE_ECHOES (the slot is delivered again for this batch: resubmit follows) the backend copies the
     * values into the new memory only where that delivery reads them rather than converting anew (the
     * CPU's uint8 pass-through, whose output is its input), and then sets *COPIED (else 0). Consumer
     * thread, between output and release (no worker touches the slot: its next fill is bound after the
     * release, under the pipeline's lock, which orders it after the new pointer). H5PACK_ENOMEM (nothing
     * changed) or a device failure. NULL: the backend cannot (the caller says so). */
    int (*detach)(backend *b, int slot, int more_echoes, backend_detached *out, int *copied, char *err,
                  size_t err_len);
} backend_ops;

/* Output size per epoch (progressive resizing): h[0] x w[0] before from[1], then h[k] x w[k] from epoch
 * from[k] on (k < n, from[] increasing). Set by the consumer, read by workers: under LOCK. */
#define BACKEND_SIZE_CHANGES 16
typedef struct backend_sizes {
    pthread_mutex_t lock;
    int n;
    uint32_t h[BACKEND_SIZE_CHANGES], w[BACKEND_SIZE_CHANGES];
    uint64_t from[BACKEND_SIZE_CHANGES];
} backend_sizes;

struct backend {
    const backend_ops *ops;
    h5pack_device device;  /* CPU or CUDA */
    char name[64];         /* "cpu" or the GPU's name */
    uint64_t pinned_bytes; /* host bytes of the ring */
    uint64_t pool_bytes;   /* bytes of the sample-echo pool (device memory on CUDA) */
    backend_sizes sizes;
};

/* A job for COUNT images of the slot itself with KEY (epoch 0, converted). */
static inline backend_job h5pack_backend_job(size_t count, uint64_t key)
{
    backend_job j = {.count = count, .key = key, .convert = 1};
    return j;
}

/* Bytes of one sample's labels in the label buffers (backend_params.label_bytes, 0 meaning one int64). */
static inline size_t h5pack_backend_label_bytes(const backend_params *p)
{
    return p->label_bytes ? p->label_bytes : sizeof(int64_t);
}

/* Output size of EPOCH's batches. */
void h5pack_backend_size_for(backend *b, uint64_t epoch, uint32_t *h, uint32_t *w);

/* From epoch FROM on, resizing crops deliver H x W (1 <= H <= max_out_height, same for W; else
 * EINVAL with the reason). Batches of earlier epochs keep the size they had. Consumer thread. */
int h5pack_backend_set_output_size(backend *b, uint32_t h, uint32_t w, uint64_t from, const backend_params *p,
                                   char *err, size_t err_len);

/* Sets up / tears down B's size schedule with P's output size (both backends call these). */
void h5pack_backend_sizes_init(backend *b, const backend_params *p);
void h5pack_backend_sizes_destroy(backend *b);


/* 0 when P is usable, else H5PACK_EINVAL with the reason in ERR (shared by both backends). */
int h5pack_backend_check_params(const backend_params *p, char *err, size_t err_len);

/* Output bytes of one image in DTYPE at the largest output size. */
size_t h5pack_backend_output_image_bytes(const backend_params *p);

/* Output bytes of one H x W image in DTYPE. */
size_t h5pack_backend_image_bytes_at(const backend_params *p, uint32_t h, uint32_t w);

/* NULL when a resizing crop of P can deliver H x W, else the reason. */
const char *h5pack_backend_size_problem(const backend_params *p, uint32_t h, uint32_t w);

/* Most floats of source rows one output row of one column may need (the kernel's shared memory). */
#define AUG_MAX_SPAN_FLOATS 8192

/* Fills the per-channel value table used by both backends (out = table[c][x]); for FLOAT16/BFLOAT16 the
 * entries of TABLE_16 are the 16-bit patterns (round to nearest even) of the float32 values. */
void h5pack_backend_build_table(const backend_params *p, float table_f32[H5PACK_MAX_CHANNELS][256],
                         uint16_t table_16[H5PACK_MAX_CHANNELS][256]);

/* Reference conversion of images [first, first+n) of a batch, single-threaded, without a resizing crop;
 * the CPU backend uses it and the tests compare the CUDA kernel with it. OUT points at the whole batch
 * output. Image i comes from IN + i * image bytes, or from SRCS[i] when SRCS is not NULL. */
void h5pack_backend_convert_ref(const backend_params *p, const uint8_t *in, const uint8_t *const *srcs, void *out,
                                size_t first, size_t n, uint64_t key);

/* The boxes of a delivery without a resizing crop (the pad-and-crop offsets and flips of augment.h:
 * the box is the stored size, shifted by the crop offset minus the padding). */
void h5pack_backend_plain_boxes(const backend_params *p, uint64_t key, size_t count, backend_box *boxes);

/* After output(): the backend gave its label buffers as int64; without labels (HAS_LABELS 0) they are
 * NULL, float labels (IS_FLOAT) move to labels_float / labels_float_device. COLUMNS: values per sample. */
void h5pack_backend_batch_labels(h5pack_batch *batch, int has_labels, uint32_t columns, int is_float);

/* The boxes of a resizing job (augment_crops.h). */
struct aug_job;
void h5pack_backend_job_boxes(const struct aug_job *j, backend_box *boxes);

/* The plan parameters (augment_crops.h) of P's resizing crop, flip and normalisation. */
struct aug_crops_params;
void h5pack_backend_crop_params(const backend_params *p, struct aug_crops_params *pp);

int h5pack_backend_cpu_create(const backend_params *p, backend **out, char *err, size_t err_len);

/* H5PACK_ENODEV when there is no CUDA support in this build or no usable GPU (with the reason in err). */
int h5pack_backend_cuda_create(const backend_params *p, backend **out, char *err, size_t err_len);

/* 1 when this build has CUDA and a device is usable (used by device = AUTO). */
int h5pack_backend_cuda_available(int gpu_id);

#endif
