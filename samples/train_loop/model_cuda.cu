/*
 * model_cuda.cu - the sample's model on the GPU, for batches the reader delivers in device memory:
 * one block per image pools it to C x 8 x 8 means, computes the softmax of a linear layer, adds its
 * cross-entropy to the batch loss and applies its SGD update with atomics (Hogwild style: images of a
 * batch update the shared weights concurrently). All on the stream the reader orders its batches on.
 */
#include <cuda_runtime.h>

#include <math.h>
#include <new>
#include <stdio.h>

extern "C" {
#include "model.h"
}

namespace {

struct cuda_model {
    cudaStream_t stream;
    unsigned channels, height, width;
    int features, classes;
    float *weights; /* device: classes x features */
    float *bias;    /* device: classes */
    float *loss;    /* device: 1 float, summed over the batch */
    float learning_rate;
};

__device__ void pool_image(const float *img, unsigned c_n, unsigned h, unsigned w, float *feat)
{
    int features = (int)c_n * MODEL_GRID * MODEL_GRID;
    for (int f = threadIdx.x; f < features; f += blockDim.x) {
        unsigned c = f / (MODEL_GRID * MODEL_GRID), gy = (f / MODEL_GRID) % MODEL_GRID, gx = f % MODEL_GRID;
        unsigned y0 = gy * h / MODEL_GRID, y1 = (gy + 1) * h / MODEL_GRID;
        unsigned x0 = gx * w / MODEL_GRID, x1 = (gx + 1) * w / MODEL_GRID;
        const float *plane = img + (size_t)c * h * w;
        float sum = 0.0f;
        for (unsigned y = y0; y < y1; y++)
            for (unsigned x = x0; x < x1; x++)
                sum += plane[(size_t)y * w + x];
        unsigned n = (y1 - y0) * (x1 - x0);
        feat[f] = n ? sum / (float)n : 0.0f;
    }
}

/* Dynamic shared memory: features floats, then classes floats (logits, then probabilities). */
__global__ void step_kernel(const float *images, const int64_t *labels, cuda_model m)
{
    extern __shared__ float shared[];
    float *feat = shared, *prob = shared + m.features;
    const float *img = images + (size_t)blockIdx.x * m.channels * m.height * m.width;
    pool_image(img, m.channels, m.height, m.width, feat);
    __syncthreads();
    for (int k = threadIdx.x; k < m.classes; k += blockDim.x) {
        float z = m.bias[k];
        for (int f = 0; f < m.features; f++)
            z += m.weights[(size_t)k * m.features + f] * feat[f];
        prob[k] = z;
    }
    __syncthreads();
    if (threadIdx.x == 0) { /* softmax over a few classes: one thread is enough for a sample */
        float top = -INFINITY, sum = 0.0f;
        for (int k = 0; k < m.classes; k++)
            top = fmaxf(top, prob[k]);
        for (int k = 0; k < m.classes; k++)
            sum += prob[k] = __expf(prob[k] - top);
        for (int k = 0; k < m.classes; k++)
            prob[k] /= sum;
        if (labels) {
            int64_t y = labels[blockIdx.x] >= 0 && labels[blockIdx.x] < m.classes ? labels[blockIdx.x] : 0;
            atomicAdd(m.loss, -logf(fmaxf(prob[y], 1e-30f)));
        }
    }
    __syncthreads();
    if (!labels)
        return;
    int64_t y = labels[blockIdx.x] >= 0 && labels[blockIdx.x] < m.classes ? labels[blockIdx.x] : 0;
    for (int i = threadIdx.x; i < m.classes * m.features; i += blockDim.x) {
        int k = i / m.features, f = i % m.features;
        float g = m.learning_rate * (prob[k] - (k == y ? 1.0f : 0.0f));
        atomicAdd(&m.weights[i], -g * feat[f]);
        if (f == 0)
            atomicAdd(&m.bias[k], -g);
    }
}

bool failed(cudaError_t e, const char *what, char *err, size_t err_len)
{
    if (e == cudaSuccess)
        return false;
    snprintf(err, err_len, "%s: %s", what, cudaGetErrorString(e));
    return true;
}

} // namespace

extern "C" int model_cuda_available(void)
{
    return 1;
}

extern "C" void *model_cuda_stream_create(void)
{
    int n = 0;
    cudaStream_t s = nullptr;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        cudaGetLastError(); /* clear the sticky "no device" error */
        return nullptr;
    }
    return cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess ? (void *)s : nullptr;
}

extern "C" void model_cuda_stream_destroy(void *stream)
{
    if (stream)
        cudaStreamDestroy((cudaStream_t)stream);
}

extern "C" void *model_cuda_create(const h5pack_info *info, int n_classes, void *stream, char *err,
                                   size_t err_len)
{
    cuda_model *m = new (std::nothrow) cuda_model();
    if (!m) {
        snprintf(err, err_len, "out of memory");
        return nullptr;
    }
    m->stream = (cudaStream_t)stream;
    m->channels = info->channels;
    m->height = info->height;
    m->width = info->width;
    m->features = (int)info->channels * MODEL_GRID * MODEL_GRID;
    m->classes = n_classes;
    m->learning_rate = 0.01f;
    size_t wbytes = sizeof(float) * (size_t)m->classes * m->features;
    if (failed(cudaMalloc(&m->weights, wbytes), "cudaMalloc(weights)", err, err_len) ||
        failed(cudaMalloc(&m->bias, sizeof(float) * m->classes), "cudaMalloc(bias)", err, err_len) ||
        failed(cudaMalloc(&m->loss, sizeof(float)), "cudaMalloc(loss)", err, err_len) ||
        failed(cudaMemset(m->weights, 0, wbytes), "cudaMemset", err, err_len) ||
        failed(cudaMemset(m->bias, 0, sizeof(float) * m->classes), "cudaMemset", err, err_len)) {
        model_cuda_free(m);
        return nullptr;
    }
    return m;
}

extern "C" double model_cuda_step(void *handle, const h5pack_batch *batch)
{
    cuda_model *m = (cuda_model *)handle;
    float loss = 0.0f;
    size_t shared = sizeof(float) * (size_t)(m->features + m->classes);
    cudaMemsetAsync(m->loss, 0, sizeof(float), m->stream);
    step_kernel<<<(unsigned)batch->count, 256, shared, m->stream>>>((const float *)batch->data,
                                                                  batch->labels_device, *m);
    cudaMemcpyAsync(&loss, m->loss, sizeof(float), cudaMemcpyDeviceToHost, m->stream);
    if (cudaStreamSynchronize(m->stream) != cudaSuccess || cudaGetLastError() != cudaSuccess) {
        fprintf(stderr, "train_loop: CUDA step failed: %s\n", cudaGetErrorString(cudaGetLastError()));
        return NAN;
    }
    return batch->labels_device && batch->count ? loss / (double)batch->count : NAN;
}

extern "C" void model_cuda_free(void *handle)
{
    cuda_model *m = (cuda_model *)handle;
    if (!m)
        return;
    cudaFree(m->weights);
    cudaFree(m->bias);
    cudaFree(m->loss);
    delete m;
}
