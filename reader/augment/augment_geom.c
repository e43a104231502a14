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

aug_box h5pack_aug_center_box(uint32_t H, uint32_t W, uint32_t oh, uint32_t ow, double center_ratio)
{
    double shorter = (double)(H < W ? H : W);
    int64_t c = (int64_t)floor(center_ratio * shorter);
    c = c < 1 ? 1 : c;
    int64_t bh = c, bw = c;
    if (oh < ow)
        bw = round_half_even((double)c * (double)ow / (double)oh);
    else if (ow < oh)
        bh = round_half_even((double)c * (double)oh / (double)ow);
    bh = bh > (int64_t)H ? H : bh;
    bw = bw > (int64_t)W ? W : bw;
    aug_box b = {.y = (int32_t)(((int64_t)H - bh) / 2), .x = (int32_t)(((int64_t)W - bw) / 2), .h = (int32_t)bh,
                 .w = (int32_t)bw};
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

void h5pack_aug_axis_coeffs(uint32_t in, uint32_t offset, uint32_t out, uint32_t k, int32_t *pairs, float *w)
{
    /* PIL's arithmetic (Resample.c precompute_coeffs, support 1), in double */
    double scale = (double)in / (double)out;
    double filterscale = scale < 1.0 ? 1.0 : scale;
    double support = filterscale, ss = 1.0 / filterscale;
    for (uint32_t i = 0; i < out; i++) {
        double center = ((double)i + 0.5) * scale;
        int lo = (int)(center - support + 0.5), hi = (int)(center + support + 0.5);
        lo = lo < 0 ? 0 : lo;
        hi = hi > (int)in ? (int)in : hi;
        int n = hi - lo;
        n = n > (int)k ? (int)k : n; /* cannot happen with k from h5pack_aug_max_taps */
        double sum = 0.0;
        for (int t = 0; t < n; t++)
            sum += triangle(((double)(t + lo) - center + 0.5) * ss);
        float *wi = w + (size_t)i * k;
        for (int t = 0; t < (int)k; t++) {
            double v = t < n ? triangle(((double)(t + lo) - center + 0.5) * ss) : 0.0;
            wi[t] = (float)(sum != 0.0 ? v / sum : v);
        }
        pairs[2 * i] = lo + (int32_t)offset;
        pairs[2 * i + 1] = n;
    }
}
