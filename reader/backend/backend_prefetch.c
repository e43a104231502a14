/* backend_prefetch.c - the next image's crop region, asked for a little at a time (backend_prefetch.h). */
#include "backend_prefetch.h"

#include <stdatomic.h>
#include <string.h>

#include "env.h"

#define LINE 64
#define LOAD_REACH 63 /* bytes past a crop's last column that the SIMD passes' row loads touch */
/* The most bytes asked for per image: half of a 1 MiB L2, so the current image's rows stay. A crop from a
 * large source asks for its first rows only (the ones a cold start waits for). */
#define REGION_MAX_BYTES ((size_t)512 << 10)

/* [lo, hi) of an axis of LEN pixels that a resize of the box [first, first + box) to OUT pixels reads:
 * the box and the filter's reach past it (PIL's bilinear support, max(1, box / out), and one more), the
 * same rule for a random resized crop (whose taps stay in the box) and a centre crop (whose taps reach
 * past its edges: h5pack_aug_axis_coeffs_resized). */
static void axis_reach(int32_t first, int32_t box, uint32_t out, uint32_t len, uint32_t *lo, uint32_t *hi)
{
    int64_t margin = ((int64_t)box + out - 1) / out + 1;
    int64_t a = (int64_t)first - margin, b = (int64_t)first + box + margin;
    *lo = a < 0 ? 0 : (uint32_t)a;
    *hi = b > (int64_t)len ? len : (uint32_t)b;
}

/* -1: not asked yet; else 0 or 1. */
static _Atomic int enabled = -1;

int h5pack_src_prefetch_enabled(void)
{
    int v = atomic_load_explicit(&enabled, memory_order_relaxed);
    if (v < 0) { /* racing first calls agree */
        v = !h5pack_env_flag("H5PACK_NO_PREFETCH");
        atomic_store_explicit(&enabled, v, memory_order_relaxed);
    }
    return v;
}

void h5pack_src_prefetch_set_enabled(int on)
{
    atomic_store_explicit(&enabled, on ? 1 : 0, memory_order_relaxed);
}

void h5pack_src_prefetch_none(src_prefetch *pf)
{
    memset(pf, 0, sizeof *pf);
}

void h5pack_src_prefetch_region(src_prefetch *pf, const aug_job *job, uint32_t i, const uint8_t *src)
{
    aug_job own;
    const aug_job *j = aug_job_for_image(job, i, &own);
    const aug_image *img = &j->images[i];
    uint32_t y0, y1, x0, x1;
    h5pack_src_prefetch_none(pf);
    if (!src || img->h <= 0 || img->w <= 0 || !h5pack_src_prefetch_enabled())
        return;
    axis_reach(img->y, img->h, j->out_h, j->H, &y0, &y1);
    axis_reach(img->x, img->w, j->out_w, j->W, &x0, &x1);
    if (y1 <= y0 || x1 <= x0)
        return;
    uint32_t px = j->in_nhwc ? j->C : 1, row_bytes = j->W * px;
    pf->base = src;
    pf->planes = j->in_nhwc ? 1 : j->C;
    pf->row_step = row_bytes;
    pf->plane_step = j->in_nhwc ? 0 : (size_t)j->H * j->W;
    pf->row0 = y0, pf->rows = y1 - y0;
    pf->byte0 = x0 * px;
    pf->byte1 = x1 * px + LOAD_REACH < row_bytes ? x1 * px + LOAD_REACH : row_bytes;
    size_t per_row = (size_t)pf->planes * (pf->byte1 - pf->byte0);
    if ((size_t)pf->rows * per_row > REGION_MAX_BYTES)
        pf->rows = (uint32_t)(REGION_MAX_BYTES / per_row > 0 ? REGION_MAX_BYTES / per_row : 1);
}

int h5pack_src_prefetch_covers(const src_prefetch *pf, uint32_t plane, uint32_t row, uint32_t at, uint32_t n)
{
    return pf->base && plane < pf->planes && row >= pf->row0 && row - pf->row0 < pf->rows && at >= pf->byte0 &&
           at + n <= pf->byte1;
}

/* Asks for the lines of row ROW (relative to row0) of the region, plane by plane (the order the
 * resampling reads them). */
static void prefetch_row(const src_prefetch *pf, uint32_t row)
{
    for (uint32_t plane = 0; plane < pf->planes; plane++) {
        const uint8_t *r = pf->base + plane * pf->plane_step + (size_t)(pf->row0 + row) * pf->row_step;
        uintptr_t at = (uintptr_t)(r + pf->byte0) & ~(uintptr_t)(LINE - 1), last = (uintptr_t)(r + pf->byte1 - 1);
        for (; at <= last; at += LINE)
            __builtin_prefetch((const void *)at, 0, 2); /* into L2 (prefetcht1): it is read a whole image later */
    }
}

void h5pack_src_prefetch_step(src_prefetch *pf, uint32_t y, uint32_t out_h)
{
    if (!pf || !pf->base || pf->issued >= pf->rows || out_h == 0)
        return;
    uint64_t due = ((uint64_t)pf->rows * (y + 1) + out_h - 1) / out_h;
    for (; pf->issued < due && pf->issued < pf->rows; pf->issued++)
        prefetch_row(pf, pf->issued);
}
