/* augment_geom.c - crop boxes (torchvision's RandomResizedCrop sampling, the centre crop) and PIL's
 * bilinear filter coefficients; see augment_geom.h. Host only. */
#include <math.h>

#include "augment_geom.h"

float h5pack_aug_unit_float(uint64_t x)
{
    return (float)(x >> 40) * (1.0f / 16777216.0f);
}

uint32_t h5pack_aug_int_below(uint64_t x, uint32_t n)
{
    return (uint32_t)(((x >> 32) * (uint64_t)n) >> 32);
}

/* torch.empty(1).uniform_(a, b) in float32: u * (b - a) + a, each operation rounded to float32. */
static float uniform_f32(rng_state *r, float a, float b)
{
    float u = h5pack_aug_unit_float(rng_next(r));
    float span = b - a;
    float scaled = u * span;
    return scaled + a;
}

/* Python's int(round(v)) for the non-negative values used here: round half to even. */
static int64_t round_half_even(double v)
{
    return (int64_t)nearbyint(v);
}

aug_box h5pack_aug_rrc_box(uint32_t H, uint32_t W, const aug_crop_params *cp, rng_state *r)
{
    double area = (double)H * (double)W;
    /* torch.log(torch.tensor(ratio)): float32 logs of the float32 ratios */
    float log_lo = logf((float)cp->ratio_min), log_hi = logf((float)cp->ratio_max);
    aug_box b;
    for (int attempt = 0; attempt < AUG_RRC_ATTEMPTS; attempt++) {
        double target_area = area * (double)uniform_f32(r, (float)cp->scale_min, (float)cp->scale_max);
        double aspect = (double)expf(uniform_f32(r, log_lo, log_hi));
        int64_t w = round_half_even(sqrt(target_area * aspect));
        int64_t h = round_half_even(sqrt(target_area / aspect));
        if (w > 0 && w <= (int64_t)W && h > 0 && h <= (int64_t)H) {
            b.y = (int32_t)h5pack_aug_int_below(rng_next(r), (uint32_t)(H - h + 1));
            b.x = (int32_t)h5pack_aug_int_below(rng_next(r), (uint32_t)(W - w + 1));
            b.h = (int32_t)h, b.w = (int32_t)w;
            return b;
        }
    }
    /* Fallback to the central crop with the ratio clamped into the range. */
    double in_ratio = (double)W / (double)H;
    int64_t w = W, h = H;
    if (in_ratio < cp->ratio_min)
        h = round_half_even((double)w / cp->ratio_min);
    else if (in_ratio > cp->ratio_max)
        w = round_half_even((double)h * cp->ratio_max);
    h = h < 1 ? 1 : (h > H ? H : h); /* (only reachable with a ratio range torchvision would not accept) */
    w = w < 1 ? 1 : (w > W ? W : w);
    b.h = (int32_t)h, b.w = (int32_t)w;
    b.y = (int32_t)(((int64_t)H - h) / 2), b.x = (int32_t)(((int64_t)W - w) / 2);
    return b;
}

#define AUG_CENTER_MAX_RESIZE (1u << 30) /* a tiny center_ratio must not overflow the resized size */

/* Resize's longer side: Python's int(size * longer / shorter), a correctly rounded double, truncated;
 * capped like the shorter side (only a center_ratio near 0 with an extreme aspect reaches the cap). */
static uint32_t resized_longer(uint32_t size, uint32_t longer, uint32_t shorter)
{
    double v = (double)((uint64_t)size * longer) / (double)shorter;
    return v >= (double)AUG_CENTER_MAX_RESIZE ? AUG_CENTER_MAX_RESIZE : (uint32_t)v;
}

aug_center h5pack_aug_center(uint32_t H, uint32_t W, uint32_t oh, uint32_t ow, double center_ratio)
{
    /* the image's shorter axis and the output's extent along it (and along the longer axis) */
    uint32_t shorter = H <= W ? H : W, longer = H <= W ? W : H;
    uint32_t out_short = H <= W ? oh : ow, out_long = H <= W ? ow : oh, out_min = oh < ow ? oh : ow;
    double want = center_ratio > 0 ? (double)out_min / center_ratio : (double)AUG_CENTER_MAX_RESIZE;
    uint64_t size = want >= AUG_CENTER_MAX_RESIZE ? AUG_CENTER_MAX_RESIZE : (uint64_t)round_half_even(want);
    /* the crop must fit the resized image: size >= out_short, and int(size * longer / shorter) >= out_long */
    uint64_t fit_long = ((uint64_t)out_long * shorter + longer - 1) / longer;
    size = size < out_short ? out_short : size;
    size = size < fit_long ? fit_long : size;
    aug_center c;
    uint32_t resized_long = resized_longer((uint32_t)size, longer, shorter);
    c.rh = H <= W ? (uint32_t)size : resized_long;
    c.rw = H <= W ? resized_long : (uint32_t)size;
    c.oy = (uint32_t)round_half_even((double)(c.rh - oh) / 2.0);
    c.ox = (uint32_t)round_half_even((double)(c.rw - ow) / 2.0);
    return c;
}

/* Resized pixels [first, first + n) of an IN -> RESIZED axis as whole source pixels [*at, *at + *len). */
static void source_span(uint32_t in, uint32_t resized, uint32_t first, uint32_t n, int32_t *at, int32_t *len)
{
    double scale = (double)in / (double)resized;
    int64_t a = round_half_even((double)first * scale), b = round_half_even((double)(first + n) * scale);
    a = a > (int64_t)in - 1 ? (int64_t)in - 1 : a;
    b = b > (int64_t)in ? (int64_t)in : b <= a ? a + 1 : b;
    *at = (int32_t)a, *len = (int32_t)(b - a);
}

aug_box h5pack_aug_center_box(uint32_t H, uint32_t W, uint32_t oh, uint32_t ow, double center_ratio)
{
    aug_center c = h5pack_aug_center(H, W, oh, ow, center_ratio);
    aug_box b;
    source_span(H, c.rh, c.oy, oh, &b.y, &b.h);
    source_span(W, c.rw, c.ox, ow, &b.x, &b.w);
    return b;
}

uint32_t h5pack_aug_max_taps(uint32_t in, uint32_t out)
{
    double support = (double)in / (double)out;
    support = support < 1.0 ? 1.0 : support;
    return (uint32_t)ceil(support) * 2 + 1;
}

static double triangle(double x)
{
    x = x < 0.0 ? -x : x;
    return x < 1.0 ? 1.0 - x : 0.0;
}

/* PIL's precompute_coeffs (Resample.c, support 1) for output pixels [first, first + out) of a resize of
 * IN source pixels to RESIZED, in double; taps clamped to [0, IN), reported from ADD on. Each output's
 * normalised weights are then quantised to integers of AUG_WEIGHT_ONE by rounding their running sum:
 * each weight is the step between two rounded partial sums, the last ending at AUG_WEIGHT_ONE. So every
 * weight is >= 0 and within 1 of its exact value and they sum to exactly AUG_WEIGHT_ONE, for any tap
 * count: a flat image stays flat and the sums of augment_resample.h stay exact below 2^24. (Rounding each
 * weight on its own and putting the remainder on one can make that one negative for strong downscales.)
 * Stored as float32, which holds them exactly. */
#define KEPT_TAPS 32 /* taps whose filter value coeffs keeps (every resize down to 1/15) */
static void coeffs(uint32_t in, uint32_t resized, uint32_t first, uint32_t out, uint32_t k, int32_t add,
                   int32_t *pairs, float *w)
{
    double scale = (double)in / (double)resized;
    double filterscale = scale < 1.0 ? 1.0 : scale;
    double support = filterscale, ss = 1.0 / filterscale;
    for (uint32_t i = 0; i < out; i++) {
        double center = ((double)(first + i) + 0.5) * scale;
        int lo = (int)(center - support + 0.5), hi = (int)(center + support + 0.5);
        lo = lo < 0 ? 0 : lo;
        hi = hi > (int)in ? (int)in : hi;
        int n = hi - lo;
        n = n > (int)k ? (int)k : n; /* cannot happen with k from h5pack_aug_max_taps */
        double sum = 0.0, kept[KEPT_TAPS]; /* the filter's values, computed once where they fit */
        for (int t = 0; t < n; t++) {
            double v = triangle(((double)(t + lo) - center + 0.5) * ss);
            sum += v;
            if (t < KEPT_TAPS)
                kept[t] = v;
        }
        float *wi = w + (size_t)i * k;
        double running = 0.0, before = 0.0;
        for (int t = 0; t < (int)k; t++) {
            if (t >= n) {
                wi[t] = 0.0f;
                continue;
            }
            double v = t < KEPT_TAPS ? kept[t] : triangle(((double)(t + lo) - center + 0.5) * ss);
            running += (sum != 0.0 ? v / sum : v) * AUG_WEIGHT_ONE;
            double rounded = t == n - 1 ? AUG_WEIGHT_ONE : floor(running + 0.5);
            rounded = rounded > AUG_WEIGHT_ONE ? AUG_WEIGHT_ONE : rounded;
            wi[t] = (float)(rounded - before);
            before = rounded;
        }
        pairs[2 * i] = lo + add;
        pairs[2 * i + 1] = n;
    }
}

void h5pack_aug_axis_coeffs(uint32_t in, uint32_t offset, uint32_t out, uint32_t k, int32_t *pairs, float *w)
{
    coeffs(in, out, 0, out, k, (int32_t)offset, pairs, w); /* the box is the whole "image" */
}

void h5pack_aug_axis_coeffs_resized(uint32_t in, uint32_t resized, uint32_t first, uint32_t out, uint32_t k,
                                    int32_t *pairs, float *w)
{
    coeffs(in, resized, first, out, k, 0, pairs, w);
}
