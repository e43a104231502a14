/* backend.h - the conversion stage (uint8 batch -> normalised output) behind one small interface, so
 * the reader core (file -> cache -> uint8 batch) never knows whether a GPU is there.
 *
 * Ring model: the core owns `slots` ring entries (config.prefetch). For each slot the backend owns
 *   - a host uint8 input buffer (pinned on CUDA) of batch_size images, and a host int64 label buffer,
 *   - the output buffer(s) the consumer sees (host floats on CPU; device buffers on CUDA).
 * Calls, per slot, always in this order:
 *   worker:   fill host_input(slot) / host_labels(slot), then submit(slot, count, key of echo 0)
 *   consumer: output(slot, &batch)   -> data pointer, event; makes config.cuda_stream wait
 *   consumer: release(slot)          -> records on the user's stream; slot's outputs may be reused
 *   consumer: resubmit(slot, count, key of echo e) for each further echo, then output/release again
 * host_input(), host_labels() and submit() may be called concurrently from several workers for
 * different slots (call host_input/host_labels for each fill: the CUDA backend waits there for the
 * slot's previous copy); all other calls come from the consumer thread. A slot is never submitted again
 * before its last release. Without a user stream, release means the consumer's work on the batch is done.
 */
#ifndef H5PACK_BACKEND_H
#define H5PACK_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "h5pack.h"

typedef struct backend_params {
    uint32_t channels, height, width;
    h5pack_layout in_layout;  /* NCHW or NHWC (never AUTO here) */
    h5pack_layout out_layout; /* NCHW or NHWC */
    h5pack_dtype dtype;
    size_t batch_size;
    int slots;
    int threads;              /* CPU backend: threads for a conversion done on the consumer thread */
    float mean[H5PACK_MAX_CHANNELS], std[H5PACK_MAX_CHANNELS]; /* output = (x/255 - mean) / std */
    int random_flip;
    int crop_padding;
    int gpu_id;
    size_t device_memory_limit; /* 0 = none */
    void *user_stream;          /* cudaStream_t or NULL */
} backend_params;

typedef struct backend backend;

/* Errors: every op that can fail returns a negative h5pack_error code and writes its detail into
 * (err, err_len) (err may be NULL when err_len is 0), as the rest of the reader does. A backend whose
 * device failed stays failed: every later op returns the same code with the FIRST failure's text, so the
 * message the consumer sees names the real cause whichever batch reports it. host_input/host_labels
 * cannot report: a failure while waiting there is returned by the slot's submit. */
typedef struct backend_ops {
    uint8_t *(*host_input)(backend *b, int slot);
    int64_t *(*host_labels)(backend *b, int slot);
    /* The uint8 batch of SLOT (COUNT images) is complete: convert it for echo 0 with augmentation key
     * KEY (see augment.h). CPU: converts now, on the calling worker thread. CUDA: enqueues H2D copy +
     * kernel on the backend's streams and returns. */
    int (*submit)(backend *b, int slot, size_t count, uint64_t key, char *err, size_t err_len);
    /* Convert SLOT again for an echo, from the uint8 data already in place (CUDA: already on the
     * device: no second copy). */
    int (*resubmit)(backend *b, int slot, size_t count, uint64_t key, char *err, size_t err_len);
    /* Fill batch->data, bytes, on_device, cuda_event, labels, labels_device for SLOT; waits for the
     * conversion (CPU: already done; CUDA: cudaStreamWaitEvent on user_stream, no host sync). */
    int (*output)(backend *b, int slot, size_t count, h5pack_batch *batch, char *err, size_t err_len);
    int (*release)(backend *b, int slot, char *err, size_t err_len);
    /* Busy seconds (convert, copy) and device bytes allocated, for the stats. */
    void (*times)(backend *b, double *convert_s, double *copy_s, uint64_t *device_bytes);
    void (*destroy)(backend *b);
} backend_ops;

struct backend {
    const backend_ops *ops;
    h5pack_device device;  /* CPU or CUDA */
    char name[64];         /* "cpu" or the GPU's name */
    uint64_t pinned_bytes; /* host bytes of the ring */
};

/* snprintf into ERR when it has room (ERR may be NULL with ERR_LEN 0); returns RC. */
int h5pack_backend_error(int rc, char *err, size_t err_len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* 0 when P is usable, else H5PACK_EINVAL with the reason in ERR (shared by both backends). */
int h5pack_backend_check_params(const backend_params *p, char *err, size_t err_len);

/* Output bytes of one image in DTYPE. */
size_t h5pack_backend_output_image_bytes(const backend_params *p);

/* Fills the per-channel value table used by both backends (out = table[c][x]); for FLOAT16/BFLOAT16 the
 * entries of TABLE_16 are the 16-bit patterns (round to nearest even) of the float32 values. */
void h5pack_backend_build_table(const backend_params *p, float table_f32[H5PACK_MAX_CHANNELS][256],
                         uint16_t table_16[H5PACK_MAX_CHANNELS][256]);

/* Reference conversion of images [first, first+n) of a batch, single-threaded; the CPU backend uses it
 * and the tests compare the CUDA kernel with it. OUT points at the whole batch output. */
void h5pack_backend_convert_ref(const backend_params *p, const uint8_t *in, void *out, size_t first, size_t n,
                         uint64_t key);

int h5pack_backend_cpu_create(const backend_params *p, backend **out, char *err, size_t err_len);

/* H5PACK_ENODEV when there is no CUDA support in this build or no usable GPU (with the reason in err). */
int h5pack_backend_cuda_create(const backend_params *p, backend **out, char *err, size_t err_len);

/* 1 when this build has CUDA and a device is usable (used by device = AUTO). */
int h5pack_backend_cuda_available(int gpu_id);

#endif
