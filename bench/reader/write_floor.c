/* write_floor.c - the floor of a float batch pipeline on this machine: T threads doing nothing but
 * writing the output bytes (memset) into a ring of batch buffers, as many bytes as the reader delivers.
 * bench/reader/float_path.sh divides the reader's samples/s by this one's.
 *
 *   write_floor --image-bytes B --samples N [--batch 256] [--slots 4] [--threads 2] [--stream 0|1]
 *
 * Each batch of BATCH images of B bytes goes into ring slot (batch % SLOTS); each thread writes its
 * share of every batch's images (image i of a batch: thread i % T), no synchronisation per batch.
 * --stream 0: glibc memset per image (regular stores below glibc's non-temporal threshold, so every
 * line is read for ownership first); --stream 1: 16-byte non-temporal stores (SSE2), what the reader's
 * float32 path uses for large batches: the machine's write bandwidth.
 * Prints "write_floor MODE N samples in S s = R samples/s (G GB/s)". */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

typedef struct job {
    uint8_t *ring;
    size_t image_bytes, batch, slots, samples;
    int threads, index, stream;
} job;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* N bytes of value V at D with non-temporal stores for the 16-byte aligned body. */
static void stream_set(uint8_t *d, int v, size_t n)
{
    size_t k = 0;
#ifdef __SSE2__
    __m128i x = _mm_set1_epi8((char)v);
    for (; k < n && ((uintptr_t)(d + k) & 15); k++)
        d[k] = (uint8_t)v;
    for (; k + 16 <= n; k += 16)
        _mm_stream_si128((__m128i *)(void *)(d + k), x);
    _mm_sfence();
#endif
    memset(d + k, v, n - k);
}

static void *writer(void *arg)
{
    const job *j = arg;
    for (size_t s = (size_t)j->index; s < j->samples; s += (size_t)j->threads) {
        size_t b = s / j->batch, i = s % j->batch;
        uint8_t *d = j->ring + ((b % j->slots) * j->batch + i) * j->image_bytes;
        if (j->stream)
            stream_set(d, (int)(b & 0x7f), j->image_bytes);
        else
            memset(d, (int)(b & 0x7f), j->image_bytes);
    }
    return NULL;
}

static size_t arg_size(int argc, char **argv, const char *name, size_t def)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return (size_t)strtoull(argv[i + 1], NULL, 10);
    return def;
}

int main(int argc, char **argv)
{
    size_t image_bytes = arg_size(argc, argv, "--image-bytes", 0), samples = arg_size(argc, argv, "--samples", 0);
    size_t batch = arg_size(argc, argv, "--batch", 256), slots = arg_size(argc, argv, "--slots", 4);
    int threads = (int)arg_size(argc, argv, "--threads", 2), stream = (int)arg_size(argc, argv, "--stream", 0);
    if (!image_bytes || !samples || !batch || !slots || threads < 1 || threads > 256) {
        fprintf(stderr, "usage: write_floor --image-bytes B --samples N [--batch 256] [--slots 4] [--threads 2] [--stream 0|1]\n");
        return 2;
    }
    uint8_t *ring = NULL;
    if (posix_memalign((void **)&ring, 64, slots * batch * image_bytes) != 0) {
        fprintf(stderr, "write_floor: cannot allocate %zu bytes\n", slots * batch * image_bytes);
        return 1;
    }
    memset(ring, 1, slots * batch * image_bytes); /* fault the pages in first, as the reader's ring is */
    pthread_t tid[256];
    job jobs[256];
    double t0 = now_s();
    for (int t = 0; t < threads; t++) {
        jobs[t] = (job){.ring = ring, .image_bytes = image_bytes, .batch = batch, .slots = slots,
                        .samples = samples, .threads = threads, .index = t, .stream = stream};
        pthread_create(&tid[t], NULL, writer, &jobs[t]);
    }
    for (int t = 0; t < threads; t++)
        pthread_join(tid[t], NULL);
    double dt = now_s() - t0;
    printf("write_floor %s %zu samples in %.3f s = %.1f samples/s (%.2f GB/s)\n", stream ? "stream" : "memset",
           samples, dt, (double)samples / dt,
           (double)samples * (double)image_bytes / dt * 1e-9);
    free(ring);
    return 0;
}
