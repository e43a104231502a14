/* Built without CUDA: the sample then only steps on the CPU (the reader delivers host batches). */
#include <math.h>
#include <stdio.h>

#include "model.h"

int model_cuda_available(void)
{
    return 0;
}

void *model_cuda_create(const h5pack_info *info, int n_classes, void *stream, char *err, size_t err_len)
{
    (void)info;
    (void)n_classes;
    (void)stream;
    snprintf(err, err_len, "this sample was built without CUDA, but the reader delivers device batches");
    return NULL;
}

double model_cuda_step(void *m, const h5pack_batch *batch)
{
    (void)m;
    (void)batch;
    return NAN;
}

void model_cuda_free(void *m)
{
    (void)m;
}

void *model_cuda_stream_create(void)
{
    return NULL;
}

void model_cuda_stream_destroy(void *stream)
{
    (void)stream;
}
