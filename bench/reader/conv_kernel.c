/* conv_kernel.c - the float32 one-pass kernel alone (h5pack_conv_avx2_image, reader/backend/backend_convert_avx2.c),
 * one thread, per (stored layout, output layout, flip, padding), against non-temporal stores of the same
 * bytes: what float_path.sh's layouts mode measures through the whole reader, without the reader's
 * threads, chunk loads and the machine's load on the other core moving the figures as much.
 *
 *   conv_kernel [--h 218] [--w 178] [--c 3] [--batch 256] [--reps 5] [--pad 0] [--sources 0]
 *
 * --sources K: the batch's images are K stored images over and over (K small: they stay in the caches),
 * 0: BATCH different ones (read from memory, as the reader's mapped chunks are).
 *
 * Each case converts a batch of BATCH random images (stored NCHW or NHWC) into a batch-sized output with
 * the reader's stores (non-temporal for batches over 8 MiB), every image flipped or none; prints the best
 * of REPS batches in ns per image and its ratio to the floor (the best of REPS batches of 16-byte
 * non-temporal stores of the same bytes). Run on demand; compare builds by running each build's copy in
 * turn (the ratios are what to compare on a shared machine). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <emmintrin.h>

#include "backend_convert.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double floor_batch(uint8_t *out, size_t bytes)
{
    double t0 = now_s();
    __m128i x = _mm_set1_epi8(1);
    for (size_t k = 0; k + 16 <= bytes; k += 16)
        _mm_stream_si128((__m128i *)(void *)(out + k), x);
    _mm_sfence();
    return now_s() - t0;
}

int main(int argc, char **argv)
{
    uint32_t H = 218, W = 178, C = 3, batch = 256, reps = 5, sources = 0;
    int pad = 0;
    for (int a = 1; a + 1 < argc; a += 2) {
        unsigned v = (unsigned)strtoul(argv[a + 1], NULL, 10);
        if (!strcmp(argv[a], "--h"))
            H = v;
        else if (!strcmp(argv[a], "--w"))
            W = v;
        else if (!strcmp(argv[a], "--c"))
            C = v;
        else if (!strcmp(argv[a], "--batch"))
            batch = v;
        else if (!strcmp(argv[a], "--reps"))
            reps = v;
        else if (!strcmp(argv[a], "--pad"))
            pad = (int)v;
        else if (!strcmp(argv[a], "--sources"))
            sources = v;
        else {
            fprintf(stderr, "conv_kernel: unknown option %s\n", argv[a]);
            return 2;
        }
    }
    if (!h5pack_conv_avx2_supported()) {
        printf("conv_kernel: no AVX2 on this CPU\n");
        return 0;
    }
    size_t in_bytes = (size_t)C * H * W, out_bytes = in_bytes * 4 * batch;
    uint8_t *src = malloc(in_bytes * batch), *out = aligned_alloc(64, (out_bytes + 63) / 64 * 64);
    if (!src || !out)
        return 1;
    for (size_t k = 0; k < in_bytes * batch; k++)
        src[k] = (uint8_t)(k * 2654435761u >> 13);
    memset(out, 0, out_bytes);
    double fl = 1e30;
    for (uint32_t r = 0; r < reps; r++) {
        double t = floor_batch(out, out_bytes);
        fl = t < fl ? t : fl;
    }
    printf("floor (non-temporal stores) %.1f us/image\n", fl / batch * 1e6);
    static const char *names[2] = {"nchw", "nhwc"};
    for (int lay = 0; lay < 4; lay++)
        for (int flip = 0; flip < 2; flip++) {
            int nhwc_in = lay >> 1, nhwc_out = lay & 1;
            backend_params p = {.channels = C, .height = H, .width = W, .dtype = H5PACK_DTYPE_FLOAT32,
                                .in_layout = nhwc_in ? H5PACK_LAYOUT_NHWC : H5PACK_LAYOUT_NCHW,
                                .out_layout = nhwc_out ? H5PACK_LAYOUT_NHWC : H5PACK_LAYOUT_NCHW,
                                .batch_size = batch, .random_flip = flip, .crop_padding = pad, .slots = 1,
                                .threads = 1, .mean = {0.485f, 0.456f, 0.406f}, .std = {0.229f, 0.224f, 0.225f}};
            backend_conv cv;
            h5pack_backend_conv_init(&cv, &p);
            double best = 1e30;
            for (uint32_t r = 0; r < reps; r++) {
                double t0 = now_s();
                for (uint32_t i = 0; i < batch; i++) {
                    aug_draw d = {.flip = flip, .oy = pad ? (int)(i % (2 * pad + 1)) : 0,
                                  .ox = pad ? (int)((i / 3) % (2 * pad + 1)) : 0};
                    h5pack_conv_avx2_image(&cv, d, src + (sources ? i % sources : i) * in_bytes, (float *)(void *)(out + i * cv.out_bytes),
                                           cv.stream);
                }
                _mm_sfence();
                double t = now_s() - t0;
                best = t < best ? t : best;
            }
            printf("%s -> %s%s: %.1f us/image, floor / kernel %.2f\n", names[nhwc_in], names[nhwc_out],
                   flip ? ", flip" : "      ", best / batch * 1e6, fl / best);
        }
    free(src), free(out);
    return 0;
}
