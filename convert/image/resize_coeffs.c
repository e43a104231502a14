/* resize_coeffs.c - the fixed-point weights of one axis of a fit, as PIL's BILINEAR computes them: a
 * triangle whose support grows with the downscale factor (support = max(1, scale)), normalised per
 * output pixel, rounded to 22-bit fixed point. Crop mode keeps the coefficients of the whole-image
 * resize, evaluated for the kept output pixels only (OFFSET). */
#include "resize_internal.h"

#include <math.h>
#include <stdlib.h>

static double triangle(double x)
{
    if (x < 0.0)
        x = -x;
    return x < 1.0 ? 1.0 - x : 0.0;
}

int resize_axis_init(axis_coeffs *ax, uint32_t in, uint32_t resized, uint32_t offset, uint32_t out)
{
    double scale = (double)in / (double)resized;
    double filterscale = scale < 1.0 ? 1.0 : scale;
    double support = 1.0 * filterscale;
    ax->out = out;
    uint32_t taps = (uint32_t)ceil(support) * 2 + 1; /* most taps an output pixel can have */
    ax->ksize = (taps + 3) & ~3u;
    ax->first = malloc(sizeof(int32_t) * out);
    ax->count = malloc(sizeof(int32_t) * out);
    ax->k = calloc((size_t)out * ax->ksize, sizeof(int32_t)); /* zero padding after each count */
    double *w = malloc(sizeof(double) * taps);
    if (!ax->first || !ax->count || !ax->k || !w) {
        free(w);
        return -1;
    }
    for (uint32_t i = 0; i < out; i++) {
        double center = ((double)(i + offset) + 0.5) * scale;
        int lo = (int)(center - support + 0.5), hi = (int)(center + support + 0.5);
        lo = lo < 0 ? 0 : lo;
        hi = hi > (int)in ? (int)in : hi;
        double sum = 0.0;
        for (int x = 0; x < hi - lo; x++)
            sum += w[x] = triangle(((double)(x + lo) - center + 0.5) / filterscale);
        for (int x = 0; x < hi - lo; x++) {
            double v = sum != 0.0 ? w[x] / sum : w[x];
            ax->k[(size_t)i * ax->ksize + x] = (int32_t)(v < 0 ? trunc(-0.5 + v * (1 << RESIZE_FIX_BITS))
                                                               : trunc(0.5 + v * (1 << RESIZE_FIX_BITS)));
        }
        ax->first[i] = lo;
        ax->count[i] = hi - lo;
    }
    free(w);
    return 0;
}

/* Sum of p*k = 2^15 * sum(p*hi) + sum(p*lo): in int32 arithmetic that wraps, equal to PIL's sum whenever
 * PIL's fits int32 (always: see resize_avx2.c). */
int resize_axis_split_pairs(axis_coeffs *ax)
{
    size_t n = (size_t)ax->out * ax->ksize;
    ax->pairs = malloc(sizeof(uint32_t) * n);
    if (!ax->pairs)
        return -1;
    for (size_t t = 0; t < n; t += 2) {
        int32_t k0 = ax->k[t], k1 = ax->k[t + 1];
        int32_t lo0 = k0 & 0x7fff, lo1 = k1 & 0x7fff, hi0 = (k0 - lo0) / 32768, hi1 = (k1 - lo1) / 32768;
        ax->pairs[t] = (uint32_t)lo0 | (uint32_t)lo1 << 16;
        ax->pairs[t + 1] = (uint32_t)(uint16_t)hi0 | (uint32_t)(uint16_t)hi1 << 16;
    }
    return 0;
}

void resize_axis_free(axis_coeffs *ax)
{
    free(ax->pairs);
    free(ax->first);
    free(ax->count);
    free(ax->k);
    ax->pairs = NULL;
    ax->first = ax->count = ax->k = NULL;
}
