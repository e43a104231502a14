/* resize_geometry.c - where a fit puts the source: the size the whole image is (virtually) resized to,
 * the window of it that is kept (crop) and where that lands in the destination (pad), as PIL's resize
 * followed by a centre crop or a centred paste would; and whether a JPEG DCT-scaled size still needs no
 * upscaling. Crop is torchvision's Resize(s) + CenterCrop(s) geometry exactly (sizes truncated, offsets
 * rounded half to even), generalised to H x W targets by scaling the axis that reaches its target first. */
#include "image_internal.h"

#include <string.h>

static uint32_t round_ratio(uint64_t num, uint64_t den) /* round(num / den), den > 0 */
{
    return (uint32_t)((2 * num + den) / (2 * den));
}

/* Python's round(d / 2) (half to even), as torchvision's CenterCrop computes its offsets. */
static uint32_t half_to_even(uint32_t d)
{
    uint32_t k = d / 2;
    return (d & 1) && (k & 1) ? k + 1 : k;
}

static uint32_t clamp_u32(uint32_t v, uint32_t lo, uint32_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

int image_fit_needs_no_upscale(uint32_t src_h, uint32_t src_w, uint32_t th, uint32_t tw, resize_mode mode)
{
    if (mode == RESIZE_PAD)
        return src_h >= th || src_w >= tw; /* the tighter axis decides the scale */
    return src_h >= th && src_w >= tw;
}

void image_fit_geometry(uint32_t src_h, uint32_t src_w, uint32_t h, uint32_t w, resize_mode mode, fit_geometry *g)
{
    memset(g, 0, sizeof *g);
    /* Which axis reaches the target first: height when h/src_h >= w/src_w. */
    int height_ratio_larger = (uint64_t)h * src_w >= (uint64_t)w * src_h;
    g->rh = h;
    g->rw = w;
    if (mode == RESIZE_CROP) { /* torchvision's Resize(s): the other side int(s * long / short), truncated */
        if (height_ratio_larger)
            g->rw = clamp_u32((uint32_t)((uint64_t)src_w * h / src_h), w, UINT32_MAX);
        else
            g->rh = clamp_u32((uint32_t)((uint64_t)src_h * w / src_w), h, UINT32_MAX);
        g->oy = half_to_even(g->rh - h); /* CenterCrop: int(round((scaled - target) / 2.0)) */
        g->ox = half_to_even(g->rw - w);
    } else if (mode == RESIZE_PAD) {
        if (height_ratio_larger)
            g->rh = clamp_u32(round_ratio((uint64_t)src_h * w, src_w), 1, h);
        else
            g->rw = clamp_u32(round_ratio((uint64_t)src_w * h, src_h), 1, w);
        g->dy = (h - g->rh) / 2;
        g->dx = (w - g->rw) / 2;
    }
    g->wh = mode == RESIZE_PAD ? g->rh : h;
    g->ww = mode == RESIZE_PAD ? g->rw : w;
}
