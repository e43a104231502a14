/*
 * model.h - the "model" of the training-loop sample: mean-pool each image to a C x 8 x 8 grid, then a
 * linear softmax classifier trained by SGD. A fixed, small amount of work per image that reads every
 * pixel of the float batch, like the first layer of a real network would.
 * Two implementations: model_cpu.c (host batches) and model_cuda.cu (device batches, a CUDA kernel).
 */
#ifndef TRAIN_LOOP_MODEL_H
#define TRAIN_LOOP_MODEL_H

#include "h5pack.h"

#define MODEL_GRID 8 /* pooled cells per side */

typedef struct model model;

/* A model for the reader's batches (float32 NCHW, info->channels x height x width) and n_classes outputs
 * (at least 1). on_device: batches are CUDA device pointers, the step runs as a kernel on STREAM.
 * Returns NULL and writes a reason to err on failure. */
model *model_create(const h5pack_info *info, int n_classes, int on_device, void *stream, char *err, size_t err_len);

/* One training step on the batch; returns the mean cross-entropy loss (NAN without labels). Blocks until
 * the step is done (a GPU step ends with the loss copied back, as loss.item() does in PyTorch). */
double model_step(model *m, const h5pack_batch *batch);

void model_free(model *m);

/* The CUDA implementation behind model_* when on_device (model_cuda.cu, or the stub in model_nocuda.c):
 * an opaque handle, n_classes as in model_create. */
void *model_cuda_create(const h5pack_info *info, int n_classes, void *stream, char *err, size_t err_len);
double model_cuda_step(void *m, const h5pack_batch *batch);
void model_cuda_free(void *m);
int model_cuda_available(void);
/* A CUDA stream for the reader (config.cuda_stream) and the model; NULL without a usable GPU. */
void *model_cuda_stream_create(void);
void model_cuda_stream_destroy(void *stream);

#endif
