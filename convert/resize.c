/* resize.c - image_fit: crop / stretch / pad to H x W with an antialiased triangle filter.
 *
 * The filter behaves like PIL's Image.resize(..., BILINEAR): a separable triangle whose support grows
 * with the downscale factor (support = max(1, scale)), weights normalised per output pixel, turned into
 * 22-bit fixed point, a horizontal pass over only the source rows the vertical pass needs (rounded and
 * clipped to uint8), then the vertical pass. Same arithmetic, so the result matches PIL's to the level.
 * Crop mode is PIL's "resize the whole image, then centre crop" computed only on the kept window: the
 * coefficients are those of the whole-image resize, evaluated for the kept output pixels only.
 * Speed: on x86-64 with AVX2 (checked at run time) both passes run as vector code with exactly the same
 * integer results (bench/resize checks it byte for byte and times it: about 3x the plain C code); each
 * thread keeps its last coefficient tables; one intermediate buffer per call. */
#include "image_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define FIX_BITS 22 /* as PIL: 32 - 8 (pixel) - 2 (headroom) */
#define FIX_HALF (1 << (FIX_BITS - 1))

/* Weights of one axis: output pixel i reads first[i] .. first[i] + count[i] - 1 with weights k[i*ksize..];
 * ksize is a multiple of 4 and the weights after count[i] are 0 (the SIMD gray pass reads 4 at a time). */
typedef struct axis_coeffs {
    uint32_t out, ksize;
    int32_t *first, *count;
    int32_t *k;
    uint32_t *pairs; /* optional, for the SIMD RGB pass: see axis_split_pairs */
} axis_coeffs;

static uint32_t round_ratio(uint64_t num, uint64_t den) /* round(num / den), den > 0 */
{
    return (uint32_t)((2 * num + den) / (2 * den));
}

int image_fit_needs_no_upscale(uint32_t src_h, uint32_t src_w, uint32_t th, uint32_t tw, resize_mode mode)
{
    if (mode == RESIZE_PAD)
        return src_h >= th || src_w >= tw; /* the tighter axis decides the scale */
    return src_h >= th && src_w >= tw;
}

static uint32_t clamp_u32(uint32_t v, uint32_t lo, uint32_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

void image_fit_geometry(uint32_t src_h, uint32_t src_w, uint32_t h, uint32_t w, resize_mode mode, fit_geometry *g)
{
    memset(g, 0, sizeof *g);
    /* Which axis reaches the target first: height when h/src_h >= w/src_w. */
    int height_ratio_larger = (uint64_t)h * src_w >= (uint64_t)w * src_h;
    g->rh = h;
    g->rw = w;
    if (mode == RESIZE_CROP) {
        if (height_ratio_larger)
            g->rw = clamp_u32(round_ratio((uint64_t)src_w * h, src_h), w, UINT32_MAX);
        else
            g->rh = clamp_u32(round_ratio((uint64_t)src_h * w, src_w), h, UINT32_MAX);
        g->oy = (g->rh - h) / 2;
        g->ox = (g->rw - w) / 2;
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

static double triangle(double x)
{
    if (x < 0.0)
        x = -x;
    return x < 1.0 ? 1.0 - x : 0.0;
}

/* Coefficients for resizing IN pixels to RESIZED pixels, kept only for outputs OFFSET .. OFFSET+OUT-1. */
static int axis_init(axis_coeffs *ax, uint32_t in, uint32_t resized, uint32_t offset, uint32_t out)
{
    double scale = (double)in / (double)resized;
    double filterscale = scale < 1.0 ? 1.0 : scale;
    double support = 1.0 * filterscale;
    ax->out = out;
    uint32_t taps = (uint32_t)ceil(support) * 2 + 1; /* most taps an output pixel can have */
    ax->ksize = (taps + 3) & ~3u;
    ax->first = malloc(sizeof(int32_t) * out);
    ax->count = malloc(sizeof(int32_t) * out);
    ax->k = calloc((size_t)out * ax->ksize, sizeof(int32_t));
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
            ax->k[(size_t)i * ax->ksize + x] = (int32_t)(v < 0 ? trunc(-0.5 + v * (1 << FIX_BITS))
                                                               : trunc(0.5 + v * (1 << FIX_BITS)));
        }
        ax->first[i] = lo;
        ax->count[i] = hi - lo;
    }
    free(w);
    return 0;
}

/* The weights as 16-bit halves for a multiply-add of 16-bit pairs (k = hi * 2^15 + lo, 0 <= lo < 2^15):
 * for output i and taps 2q, 2q+1: pairs[i * ksize + 2q] = lo(2q) | lo(2q+1) << 16 and pairs[i * ksize +
 * 2q + 1] = hi(2q) | hi(2q+1) << 16. Sum of p*k = 2^15 * sum(p*hi) + sum(p*lo): in int32 arithmetic that
 * wraps, equal to PIL's sum whenever PIL's fits int32 (always: see the SIMD notes below). */
static int axis_split_pairs(axis_coeffs *ax)
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

static void axis_free(axis_coeffs *ax)
{
    free(ax->pairs);
    free(ax->first);
    free(ax->count);
    free(ax->k);
}

/* Per-thread reuse of the coefficient tables: a converter thread fits many images of the same few
 * source sizes to one target, and the tables cost about a tenth of a fit. The last table of each axis
 * is kept (key: the axis_init arguments) and freed when the thread exits. */
typedef struct cached_axis {
    uint32_t in, resized, offset, out;
    int valid;
    axis_coeffs ax;
} cached_axis;

typedef struct fit_cache {
    cached_axis h, v;
} fit_cache;

static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static int cache_key_ok; /* written once under cache_once */

static void cache_destroy(void *p)
{
    fit_cache *c = p;
    axis_free(&c->h.ax);
    axis_free(&c->v.ax);
    free(c);
}

static void cache_key_create(void)
{
    cache_key_ok = pthread_key_create(&cache_key, cache_destroy) == 0;
}

/* This thread's cache, or NULL (no memory, no key): the caller then uses tables of its own. */
static fit_cache *thread_cache(void)
{
    if (pthread_once(&cache_once, cache_key_create) != 0 || !cache_key_ok)
        return NULL;
    fit_cache *c = pthread_getspecific(cache_key);
    if (!c && (c = calloc(1, sizeof *c)) != NULL && pthread_setspecific(cache_key, c) != 0) {
        free(c);
        c = NULL;
    }
    return c;
}

/* SLOT's table for these axis_init arguments (recomputed when they changed), with the 16-bit weight
 * pairs when WANT_PAIRS. */
static int axis_get(cached_axis *slot, uint32_t in, uint32_t resized, uint32_t offset, uint32_t out, int want_pairs)
{
    if (!slot->valid || slot->in != in || slot->resized != resized || slot->offset != offset || slot->out != out) {
        axis_free(&slot->ax);
        memset(slot, 0, sizeof *slot);
        if (axis_init(&slot->ax, in, resized, offset, out) != 0) {
            axis_free(&slot->ax);
            memset(slot, 0, sizeof *slot);
            return -1;
        }
        slot->in = in;
        slot->resized = resized;
        slot->offset = offset;
        slot->out = out;
        slot->valid = 1;
    }
    return want_pairs && !slot->ax.pairs ? axis_split_pairs(&slot->ax) : 0;
}

static uint8_t clip_fixed(int32_t acc)
{
    acc >>= FIX_BITS;
    return (uint8_t)(acc < 0 ? 0 : acc > 255 ? 255 : acc);
}

/* One row through the horizontal weights (C channels interleaved). */
static void horizontal_row(const uint8_t *src, uint8_t *dst, uint32_t c, const axis_coeffs *ax)
{
    for (uint32_t i = 0; i < ax->out; i++) {
        const int32_t *k = ax->k + (size_t)i * ax->ksize;
        const uint8_t *p = src + (size_t)ax->first[i] * c;
        int32_t n = ax->count[i];
        if (c == 3) {
            int32_t a0 = FIX_HALF, a1 = FIX_HALF, a2 = FIX_HALF;
            for (int32_t j = 0; j < n; j++, p += 3) {
                a0 += p[0] * k[j];
                a1 += p[1] * k[j];
                a2 += p[2] * k[j];
            }
            dst[3 * i] = clip_fixed(a0);
            dst[3 * i + 1] = clip_fixed(a1);
            dst[3 * i + 2] = clip_fixed(a2);
        } else {
            for (uint32_t ch = 0; ch < c; ch++) {
                int32_t a = FIX_HALF;
                for (int32_t j = 0; j < n; j++)
                    a += p[(size_t)j * c + ch] * k[j];
                dst[(size_t)i * c + ch] = clip_fixed(a);
            }
        }
    }
}

/* Two RGB rows at once: the weights and bounds are loaded once for both (the pass is load-bound). */
static void horizontal_two_rows_rgb(const uint8_t *src, size_t src_stride, uint8_t *dst, size_t dst_stride,
                                    const axis_coeffs *ax)
{
    for (uint32_t i = 0; i < ax->out; i++) {
        const int32_t *k = ax->k + (size_t)i * ax->ksize;
        const uint8_t *p = src + (size_t)ax->first[i] * 3, *q = p + src_stride;
        int32_t n = ax->count[i];
        int32_t a0 = FIX_HALF, a1 = FIX_HALF, a2 = FIX_HALF, b0 = FIX_HALF, b1 = FIX_HALF, b2 = FIX_HALF;
        for (int32_t j = 0; j < n; j++, p += 3, q += 3) {
            int32_t kj = k[j];
            a0 += p[0] * kj;
            a1 += p[1] * kj;
            a2 += p[2] * kj;
            b0 += q[0] * kj;
            b1 += q[1] * kj;
            b2 += q[2] * kj;
        }
        uint8_t *d = dst + 3 * (size_t)i, *e = d + dst_stride;
        d[0] = clip_fixed(a0);
        d[1] = clip_fixed(a1);
        d[2] = clip_fixed(a2);
        e[0] = clip_fixed(b0);
        e[1] = clip_fixed(b1);
        e[2] = clip_fixed(b2);
    }
}

static void store_row(uint8_t *restrict dst, const int32_t *restrict acc, size_t len)
{
    for (size_t x = 0; x < len; x++)
        dst[x] = clip_fixed(acc[x]);
}

/* Output values X0 .. LEN-1 of a vertical-pass row: the weighted sum of the COUNT rows ROWS + j*STRIDE
 * with weights K[j], accumulated a bounded block at a time so the sums stay in L1 (plain C: vectorised by
 * the compiler where the target has a 32-bit multiply). */
static void vertical_span(const uint8_t *rows, size_t stride, const int32_t *k, int32_t count, size_t x0,
                          size_t len, uint8_t *dst)
{
    enum { BLOCK = 256 };
    int32_t acc[BLOCK];
    for (size_t x = x0; x < len; x += BLOCK) {
        size_t n = len - x < BLOCK ? len - x : BLOCK;
        for (size_t t = 0; t < n; t++)
            acc[t] = FIX_HALF;
        for (int32_t j = 0; j < count; j++) {
            const uint8_t *restrict row = rows + (size_t)j * stride + x;
            int32_t kj = k[j];
            for (size_t t = 0; t < n; t++)
                acc[t] += (int32_t)row[t] * kj;
        }
        store_row(dst + x, acc, n);
    }
}

/* H5PACK_RESIZE_PLAIN_C: build without the AVX2 code (bench/resize checks the plain path with it). */
#if defined(__x86_64__) && defined(__GNUC__) && (!defined(__clang__) || __clang_major__ >= 8) && \
    !defined(H5PACK_RESIZE_PLAIN_C)
#define RESIZE_HAVE_AVX2 1
#include <immintrin.h>

/* The x86-64 baseline (SSE2) has no 32-bit vector multiply, so the hot loops also exist as AVX2 code,
 * chosen at run time (__builtin_cpu_supports). Same result per value as the plain C code: PIL's sum of
 * int32 products cannot overflow (weights >= 0 summing to about 2^22, pixels <= 255), so the order of
 * the additions does not matter, and the split-weight sums (axis_split_pairs), added with wrap-around,
 * are congruent to it mod 2^32, hence equal. Then arithmetic shift, and saturation to 0..255 by
 * packs/packus (= clip_fixed). */
#define AVX2_FN __attribute__((target("avx2")))

static inline uint32_t load_u32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* Two RGB rows, taps 2q and 2q+1 of one output pixel, in one register: row A in the low 128 bits, row
 * B in the high, each as 16-bit [R(2q) R(2q+1) G(2q) G(2q+1) B(2q) B(2q+1) 0 0] (8 bytes loaded, 6 used). */
AVX2_FN static inline __m256i load_rgb_pair_avx2(const uint8_t *a, const uint8_t *b)
{
    const __m256i spread = _mm256_setr_epi8(0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1, /* row A */
                                            0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1);
    __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadl_epi64((const __m128i *)(const void *)a)),
                                        _mm_loadl_epi64((const __m128i *)(const void *)b), 1);
    return _mm256_shuffle_epi8(v, spread);
}

/* (HI << 15) + LO + FIX_HALF shifted down by FIX_BITS: the sum of the split weights' two halves. */
AVX2_FN static inline __m256i join_halves_avx2(__m256i hi, __m256i lo)
{
    __m256i sum = _mm256_add_epi32(_mm256_add_epi32(_mm256_slli_epi32(hi, 15), lo), _mm256_set1_epi32(FIX_HALF));
    return _mm256_srai_epi32(sum, FIX_BITS);
}

/* Eight RGB rows through the horizontal weights, two taps per multiply-add (vpmaddwd on the 16-bit
 * halves of the weights, ax->pairs). A pair step loads 8 bytes at the first tap's pixel: up to 5 bytes
 * past a row's last pixel when the count is odd (that tap's weight is the 0 padding): the caller
 * guarantees they are readable. DST rows have one spare byte after their last pixel (4 bytes stored). */
AVX2_FN static void horizontal_eight_rows_rgb_avx2(const uint8_t *src, size_t src_stride, uint8_t *dst,
                                                   size_t dst_stride, const axis_coeffs *ax)
{
    for (uint32_t i = 0; i < ax->out; i++) {
        const uint32_t *kp = ax->pairs + (size_t)i * ax->ksize;
        const uint8_t *p = src + (size_t)ax->first[i] * 3;
        int32_t n = ax->count[i];
        __m256i lo01 = _mm256_setzero_si256(), hi01 = lo01, lo23 = lo01, hi23 = lo01;
        __m256i lo45 = lo01, hi45 = lo01, lo67 = lo01, hi67 = lo01;
        for (int32_t j = 0; j < n; j += 2, p += 6, kp += 2) {
            __m256i klo = _mm256_set1_epi32((int)kp[0]), khi = _mm256_set1_epi32((int)kp[1]);
            __m256i v = load_rgb_pair_avx2(p, p + src_stride);
            lo01 = _mm256_add_epi32(lo01, _mm256_madd_epi16(v, klo));
            hi01 = _mm256_add_epi32(hi01, _mm256_madd_epi16(v, khi));
            v = load_rgb_pair_avx2(p + 2 * src_stride, p + 3 * src_stride);
            lo23 = _mm256_add_epi32(lo23, _mm256_madd_epi16(v, klo));
            hi23 = _mm256_add_epi32(hi23, _mm256_madd_epi16(v, khi));
            v = load_rgb_pair_avx2(p + 4 * src_stride, p + 5 * src_stride);
            lo45 = _mm256_add_epi32(lo45, _mm256_madd_epi16(v, klo));
            hi45 = _mm256_add_epi32(hi45, _mm256_madd_epi16(v, khi));
            v = load_rgb_pair_avx2(p + 6 * src_stride, p + 7 * src_stride);
            lo67 = _mm256_add_epi32(lo67, _mm256_madd_epi16(v, klo));
            hi67 = _mm256_add_epi32(hi67, _mm256_madd_epi16(v, khi));
        }
        /* Saturating packs = clip to 0..255. Bytes: low half rows 0, 2, 4, 6, high half rows 1, 3, 5, 7
         * (4 bytes each: R, G, B and a 0 that lands on the next pixel's slot or the spare byte). */
        __m256i w0123 = _mm256_packs_epi32(join_halves_avx2(hi01, lo01), join_halves_avx2(hi23, lo23));
        __m256i w4567 = _mm256_packs_epi32(join_halves_avx2(hi45, lo45), join_halves_avx2(hi67, lo67));
        __m256i b = _mm256_packus_epi16(w0123, w4567);
        uint32_t px[8];
        _mm256_storeu_si256((__m256i *)(void *)px, b);
        uint8_t *d = dst + 3 * (size_t)i;
        for (int r = 0; r < 4; r++) {
            memcpy(d + (size_t)(2 * r) * dst_stride, &px[r], 4);
            memcpy(d + (size_t)(2 * r + 1) * dst_stride, &px[4 + r], 4);
        }
    }
}

/* Taps j..j+3 of two gray rows, widened to int32 (row A in the low 128 bits, row B in the high). */
AVX2_FN static inline __m256i load_gray_quad_avx2(const uint8_t *a, const uint8_t *b)
{
    return _mm256_cvtepu8_epi32(_mm_insert_epi32(_mm_cvtsi32_si128((int)load_u32(a)), (int)load_u32(b), 1));
}

/* Eight gray rows through the horizontal weights, 4 taps per step (2 rows per register), the taps
 * summed at the end by a tree of horizontal adds. Reads up to 3 bytes after a row's last pixel (the
 * zero weights of the padding): the caller guarantees they are readable. */
AVX2_FN static void horizontal_eight_rows_gray_avx2(const uint8_t *src, size_t src_stride, uint8_t *dst,
                                                    size_t dst_stride, const axis_coeffs *ax)
{
    const __m256i half = _mm256_set1_epi32(FIX_HALF);
    for (uint32_t i = 0; i < ax->out; i++) {
        const int32_t *k = ax->k + (size_t)i * ax->ksize;
        const uint8_t *p = src + ax->first[i];
        int32_t n = ax->count[i];
        __m256i a01 = _mm256_setzero_si256(), a23 = a01, a45 = a01, a67 = a01;
        for (int32_t j = 0; j < n; j += 4, p += 4) {
            __m256i kj = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)(k + j)));
            a01 = _mm256_add_epi32(a01, _mm256_mullo_epi32(load_gray_quad_avx2(p, p + src_stride), kj));
            a23 = _mm256_add_epi32(
                a23, _mm256_mullo_epi32(load_gray_quad_avx2(p + 2 * src_stride, p + 3 * src_stride), kj));
            a45 = _mm256_add_epi32(
                a45, _mm256_mullo_epi32(load_gray_quad_avx2(p + 4 * src_stride, p + 5 * src_stride), kj));
            a67 = _mm256_add_epi32(
                a67, _mm256_mullo_epi32(load_gray_quad_avx2(p + 6 * src_stride, p + 7 * src_stride), kj));
        }
        /* Lane sums: low half rows 0, 2, 4, 6; high half rows 1, 3, 5, 7. */
        __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(a01, a23), _mm256_hadd_epi32(a45, a67));
        h = _mm256_srai_epi32(_mm256_add_epi32(h, half), FIX_BITS);
        h = _mm256_packs_epi32(h, h);
        h = _mm256_packus_epi16(h, h);
        uint32_t even = (uint32_t)_mm256_cvtsi256_si32(h);
        uint32_t odd = (uint32_t)_mm_cvtsi128_si32(_mm256_extracti128_si256(h, 1));
        uint8_t *d = dst + i;
        for (int r = 0; r < 4; r++, even >>= 8, odd >>= 8) {
            d[(size_t)(2 * r) * dst_stride] = (uint8_t)even;
            d[(size_t)(2 * r + 1) * dst_stride] = (uint8_t)odd;
        }
    }
}

/* The vertical pass over 16 values at a time, two rows per multiply-add (the rows' bytes interleaved as
 * 16-bit pairs, the weights split as in the horizontal pass, KP = the output row's ax->pairs), the sums
 * in registers; the tail in plain C with K. */
AVX2_FN static void vertical_span_avx2(const uint8_t *rows, size_t stride, const int32_t *k, const uint32_t *kp,
                                       int32_t count, size_t len, uint8_t *dst)
{
    size_t x = 0;
    for (; x + 16 <= len; x += 16) {
        __m256i lo_l = _mm256_setzero_si256(), hi_l = lo_l, lo_h = lo_l, hi_h = lo_l;
        const uint8_t *row = rows + x;
        for (int32_t j = 0; j < count; j += 2, row += 2 * stride) {
            __m256i klo = _mm256_set1_epi32((int)kp[j]), khi = _mm256_set1_epi32((int)kp[j + 1]);
            __m256i a = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)row));
            __m256i b = _mm256_setzero_si256(); /* odd count: row j + 1 does not exist, its weight is 0 */
            if (j + 1 < count)
                b = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(row + stride)));
            __m256i l = _mm256_unpacklo_epi16(a, b), h = _mm256_unpackhi_epi16(a, b);
            lo_l = _mm256_add_epi32(lo_l, _mm256_madd_epi16(l, klo));
            hi_l = _mm256_add_epi32(hi_l, _mm256_madd_epi16(l, khi));
            lo_h = _mm256_add_epi32(lo_h, _mm256_madd_epi16(h, klo));
            hi_h = _mm256_add_epi32(hi_h, _mm256_madd_epi16(h, khi));
        }
        /* unpacklo/hi split values 0-3 | 8-11 and 4-7 | 12-15; packs puts them back in order per half. */
        __m256i w = _mm256_packs_epi32(join_halves_avx2(hi_l, lo_l), join_halves_avx2(hi_h, lo_h));
        w = _mm256_permute4x64_epi64(_mm256_packus_epi16(w, w), 0x08);
        _mm_storeu_si128((__m128i *)(void *)(dst + x), _mm256_castsi256_si128(w));
    }
    if (x < len)
        vertical_span(rows, stride, k, count, x, len, dst);
}

static int have_avx2(void)
{
    return __builtin_cpu_supports("avx2");
}
#else
static int have_avx2(void)
{
    return 0;
}
#endif

#ifdef RESIZE_HAVE_AVX2
typedef void (*eight_rows_fn)(const uint8_t *src, size_t src_stride, uint8_t *dst, size_t dst_stride,
                              const axis_coeffs *ax);

/* The SIMD horizontal pass over rows ROW0 .. ROW1-1 (at least 8), eight rows per call of KERNEL, which
 * reads up to SLACK bytes past a row's end. Rows at the bottom of the image (no such bytes after them)
 * go through a copy with room after it, 8 at a time, the last 8 overlapping rows already done (same
 * values written again).
 * Returns 0, or -1 (no memory: nothing is lost, the caller does the remaining rows in plain C) with
 * *NEXT the first row not done. */
static int horizontal_pass_avx2(const image_u8 *src, int32_t row0, int32_t row1, const axis_coeffs *hx,
                                uint8_t *tmp, size_t tmp_stride, int32_t *next)
{
    uint32_t c = src->channels;
    eight_rows_fn kernel = c == 3 ? horizontal_eight_rows_rgb_avx2 : horizontal_eight_rows_gray_avx2;
    size_t slack = c == 3 ? 5 : 3, src_stride = (size_t)src->width * c, total = (size_t)src->height * src_stride;
    int32_t y = row0;
    for (; y + 8 <= row1 && (size_t)(y + 8) * src_stride + slack <= total; y += 8)
        kernel(src->pixels + (size_t)y * src_stride, src_stride, tmp + (size_t)(y - row0) * tmp_stride, tmp_stride,
               hx);
    *next = y;
    if (y == row1)
        return 0;
    uint8_t *copy = malloc(8 * src_stride + slack);
    if (!copy)
        return -1;
    memset(copy + 8 * src_stride, 0, slack);
    while (y < row1) {
        int32_t start = y + 8 <= row1 ? y : row1 - 8;
        memcpy(copy, src->pixels + (size_t)start * src_stride, 8 * src_stride);
        kernel(copy, src_stride, tmp + (size_t)(start - row0) * tmp_stride, tmp_stride, hx);
        y = start + 8;
    }
    free(copy);
    *next = row1;
    return 0;
}
#endif

/* The horizontal pass over source rows ROW0 .. ROW1-1 into TMP (row stride TMP_STRIDE, one spare byte). */
static void horizontal_pass(const image_u8 *src, int32_t row0, int32_t row1, const axis_coeffs *hx, uint8_t *tmp,
                            size_t tmp_stride, int simd)
{
    uint32_t c = src->channels;
    size_t src_stride = (size_t)src->width * c;
    int32_t y = row0;
#ifdef RESIZE_HAVE_AVX2
    if (simd && (c == 3 || c == 1) && row1 - row0 >= 8)
        (void)horizontal_pass_avx2(src, row0, row1, hx, tmp, tmp_stride, &y);
#else
    (void)simd;
#endif
    for (; c == 3 && y + 1 < row1; y += 2)
        horizontal_two_rows_rgb(src->pixels + (size_t)y * src_stride, src_stride,
                                tmp + (size_t)(y - row0) * tmp_stride, tmp_stride, hx);
    for (; y < row1; y++)
        horizontal_row(src->pixels + (size_t)y * src_stride, tmp + (size_t)(y - row0) * tmp_stride, c, hx);
}

/* Output row I of the vertical pass: a weighted sum of consecutive rows of TMP (LEN values each). */
static void vertical_row(const uint8_t *tmp, size_t tmp_stride, int32_t first_row, const axis_coeffs *ax,
                         uint32_t i, size_t len, uint8_t *dst, int simd)
{
    const int32_t *k = ax->k + (size_t)i * ax->ksize;
    const uint8_t *rows = tmp + (size_t)(ax->first[i] - first_row) * tmp_stride;
#ifdef RESIZE_HAVE_AVX2
    if (simd) {
        vertical_span_avx2(rows, tmp_stride, k, ax->pairs + (size_t)i * ax->ksize, ax->count[i], len, dst);
        return;
    }
#else
    (void)simd;
#endif
    vertical_span(rows, tmp_stride, k, ax->count[i], 0, len, dst);
}

/* Resizes SRC into the window G describes, written at (g->dy, g->dx) of DST (row stride DST_STRIDE). */
static image_status resample(const image_u8 *src, const fit_geometry *g, uint8_t *dst, size_t dst_stride)
{
    image_status st = IMAGE_NOMEM;
    uint32_t c = src->channels;
    fit_cache own = {0}, *cache = thread_cache();
    fit_cache *tables = cache ? cache : &own;
    uint8_t *tmp = NULL;
    int simd = have_avx2();
    if (axis_get(&tables->h, src->width, g->rw, g->ox, g->ww, simd && c == 3) != 0 ||
        axis_get(&tables->v, src->height, g->rh, g->oy, g->wh, simd) != 0)
        goto fail;
    const axis_coeffs *hx = &tables->h.ax, *vy = &tables->v.ax;
    /* Only the source rows the vertical pass reads go through the horizontal pass. */
    int32_t row0 = vy->first[0], row1 = vy->first[0] + vy->count[0];
    for (uint32_t i = 0; i < g->wh; i++) {
        row0 = vy->first[i] < row0 ? vy->first[i] : row0;
        row1 = vy->first[i] + vy->count[i] > row1 ? vy->first[i] + vy->count[i] : row1;
    }
    size_t len = (size_t)g->ww * c, tmp_stride = len + 1; /* + 1: the SIMD pass stores 4 bytes per pixel */
    tmp = malloc(tmp_stride * (size_t)(row1 > row0 ? row1 - row0 : 1));
    if (!tmp)
        goto fail;
    horizontal_pass(src, row0, row1, hx, tmp, tmp_stride, simd);
    uint8_t *out = dst + (size_t)g->dy * dst_stride + (size_t)g->dx * c;
    for (uint32_t i = 0; i < g->wh; i++)
        vertical_row(tmp, tmp_stride, row0, vy, i, len, out + (size_t)i * dst_stride, simd);
    st = IMAGE_OK;
fail:
    if (!cache) {
        axis_free(&own.h.ax);
        axis_free(&own.v.ax);
    }
    free(tmp);
    return st;
}

/* Same size, no offset: the filter is the identity, so copy (PIL skips such passes too). */
static int is_identity(const image_u8 *src, const fit_geometry *g)
{
    return g->rh == src->height && g->rw == src->width && g->wh == src->height && g->ww == src->width;
}

image_status image_fit(const image_u8 *src, uint32_t h, uint32_t w, resize_mode mode, image_u8 *dst)
{
    memset(dst, 0, sizeof *dst);
    if (!src || !src->pixels || !src->width || !src->height || !src->channels || !h || !w)
        return IMAGE_UNSUPPORTED; /* invalid arguments */
    fit_geometry g;
    image_fit_geometry(src->height, src->width, h, w, mode, &g);
    size_t stride = (size_t)w * src->channels;
    /* Zeroed only when the window leaves padding (pad mode): crop and stretch write every byte. */
    int covers_all = g.wh == h && g.ww == w;
    uint8_t *pixels = covers_all ? malloc((size_t)h * stride) : calloc((size_t)h * stride, 1);
    if (!pixels)
        return IMAGE_NOMEM;
    if (is_identity(src, &g)) {
        for (uint32_t y = 0; y < g.wh; y++)
            memcpy(pixels + (size_t)(g.dy + y) * stride + (size_t)g.dx * src->channels,
                   src->pixels + (size_t)y * src->width * src->channels, (size_t)g.ww * src->channels);
    } else if (resample(src, &g, pixels, stride) != IMAGE_OK) {
        free(pixels);
        return IMAGE_NOMEM;
    }
    dst->pixels = pixels;
    dst->width = w;
    dst->height = h;
    dst->channels = src->channels;
    return IMAGE_OK;
}
