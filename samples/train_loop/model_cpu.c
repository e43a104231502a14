/*
 * model_cpu.c - the sample's model on the host: pool every image to C x 8 x 8 means, then a linear
 * softmax classifier updated by plain SGD, one sample at a time. Device batches go to model_cuda.cu.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

struct model {
    void *cuda;                     /* the CUDA model when batches are on the device, else NULL */
    uint32_t channels, height, width;
    size_t features;                /* channels * MODEL_GRID * MODEL_GRID */
    int classes;
    float *weights;                 /* classes x features */
    float *bias;                    /* classes */
    float *feat;                    /* features of the current sample */
    float *prob;                    /* classes */
    float learning_rate;
};

static int alloc_buffers(model *m)
{
    m->weights = calloc((size_t)m->classes * m->features, sizeof(float));
    m->bias = calloc((size_t)m->classes, sizeof(float));
    m->feat = calloc(m->features, sizeof(float));
    m->prob = calloc((size_t)m->classes, sizeof(float));
    return m->weights && m->bias && m->feat && m->prob ? 0 : -1;
}

model *model_create(const h5pack_info *info, int n_classes, int on_device, void *stream, char *err, size_t err_len)
{
    model *m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    m->channels = info->channels;
    m->height = info->height;
    m->width = info->width;
    m->features = (size_t)info->channels * MODEL_GRID * MODEL_GRID;
    m->classes = n_classes > 0 ? n_classes : 1;
    m->learning_rate = 0.01f;
    if (on_device) {
        m->cuda = model_cuda_create(info, m->classes, stream, err, err_len);
        if (!m->cuda)
            goto fail;
        return m;
    }
    if (alloc_buffers(m) < 0) {
        snprintf(err, err_len, "out of memory for a %d x %zu model", m->classes, m->features);
        goto fail;
    }
    return m;
fail:
    model_free(m);
    return NULL;
}

/* Mean of each cell of a MODEL_GRID x MODEL_GRID grid over every channel plane (NCHW float32). */
static void pool_image(const model *m, const float *img, float *feat)
{
    for (uint32_t c = 0; c < m->channels; c++) {
        const float *plane = img + (size_t)c * m->height * m->width;
        for (int gy = 0; gy < MODEL_GRID; gy++) {
            uint32_t y0 = gy * m->height / MODEL_GRID, y1 = (gy + 1) * m->height / MODEL_GRID;
            for (int gx = 0; gx < MODEL_GRID; gx++) {
                uint32_t x0 = gx * m->width / MODEL_GRID, x1 = (gx + 1) * m->width / MODEL_GRID;
                double sum = 0;
                for (uint32_t y = y0; y < y1; y++)
                    for (uint32_t x = x0; x < x1; x++)
                        sum += plane[(size_t)y * m->width + x];
                size_t n = (size_t)(y1 - y0) * (x1 - x0);
                *feat++ = n ? (float)(sum / (double)n) : 0.0f;
            }
        }
    }
}

/* prob = softmax(weights * feat + bias) */
static void forward(model *m)
{
    float top = -INFINITY;
    for (int k = 0; k < m->classes; k++) {
        const float *w = m->weights + (size_t)k * m->features;
        float z = m->bias[k];
        for (size_t f = 0; f < m->features; f++)
            z += w[f] * m->feat[f];
        m->prob[k] = z;
        top = z > top ? z : top;
    }
    double sum = 0;
    for (int k = 0; k < m->classes; k++)
        sum += m->prob[k] = expf(m->prob[k] - top);
    for (int k = 0; k < m->classes; k++)
        m->prob[k] = (float)(m->prob[k] / sum);
}

/* SGD on the cross-entropy: gradient of the logits is prob - onehot(label). */
static void backward(model *m, int64_t label)
{
    for (int k = 0; k < m->classes; k++) {
        float g = m->learning_rate * (m->prob[k] - (k == label ? 1.0f : 0.0f));
        float *w = m->weights + (size_t)k * m->features;
        for (size_t f = 0; f < m->features; f++)
            w[f] -= g * m->feat[f];
        m->bias[k] -= g;
    }
}

double model_step(model *m, const h5pack_batch *batch)
{
    if (m->cuda)
        return model_cuda_step(m->cuda, batch);
    const float *images = batch->data;
    size_t per_image = (size_t)m->channels * m->height * m->width;
    double loss = 0;
    for (size_t i = 0; i < batch->count; i++) {
        pool_image(m, images + i * per_image, m->feat);
        forward(m);
        if (!batch->labels)
            continue;
        int64_t label = batch->labels[i] >= 0 && batch->labels[i] < m->classes ? batch->labels[i] : 0; /* in range */
        loss -= log(fmax(m->prob[label], 1e-30));
        backward(m, label);
    }
    return batch->labels && batch->count ? loss / (double)batch->count : NAN;
}

void model_free(model *m)
{
    if (!m)
        return;
    model_cuda_free(m->cuda);
    free(m->weights);
    free(m->bias);
    free(m->feat);
    free(m->prob);
    free(m);
}
