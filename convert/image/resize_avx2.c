/* resize_avx2.c - the AVX2 passes of image_fit. This file alone is compiled with -mavx2 (see
 * convert/CMakeLists.txt) and its functions run only after resize.c found AVX2 on the CPU at run time.
 *
 * The x86-64 baseline (SSE2) has no 32-bit vector multiply, hence these. Same result per value as the
 * portable passes (resize_scalar.c): PIL's sum of int32 products cannot overflow (weights >= 0 summing to
 * about 2^22, pixels <= 255), so the order of the additions does not matter, and the split-weight sums
 * (resize_axis_split_pairs), added with wrap-around, are congruent to it mod 2^32, hence equal. Then
 * arithmetic shift, and saturation to 0..255 by packs/packus (= resize_clip_fixed). test_resize_paths
 * compares both paths byte for byte. */
#include "resize_internal.h"

#ifdef __AVX2__
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

static inline uint32_t load_u32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* Two RGB rows, taps 2q and 2q+1 of one output pixel, in one register: row A in the low 128 bits, row
 * B in the high, each as 16-bit [R(2q) R(2q+1) G(2q) G(2q+1) B(2q) B(2q+1) 0 0] (8 bytes loaded, 6 used). */
static inline __m256i load_rgb_pair(const uint8_t *a, const uint8_t *b)
{
    const __m256i spread = _mm256_setr_epi8(0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1, /* row A */
                                            0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1);
    __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadl_epi64((const __m128i *)(const void *)a)),
                                        _mm_loadl_epi64((const __m128i *)(const void *)b), 1);
    return _mm256_shuffle_epi8(v, spread);
}

/* (HI << 15) + LO + one half, shifted down: the sum of the split weights' two halves. */
static inline __m256i join_halves(__m256i hi, __m256i lo)
{
    __m256i sum = _mm256_add_epi32(_mm256_add_epi32(_mm256_slli_epi32(hi, 15), lo),
                                   _mm256_set1_epi32(RESIZE_FIX_HALF));
    return _mm256_srai_epi32(sum, RESIZE_FIX_BITS);
}

/* Eight RGB rows through the horizontal weights, two taps per multiply-add (vpmaddwd on the 16-bit
 * halves of the weights, ax->pairs). A pair step loads 8 bytes at the first tap's pixel: up to 5 bytes
 * past a row's last pixel when the count is odd (that tap's weight is the 0 padding): the caller
 * guarantees they are readable. DST rows have one spare byte after their last pixel (4 bytes stored). */
static void horizontal_eight_rows_rgb(const uint8_t *src, size_t src_stride, uint8_t *dst, size_t dst_stride,
                                      const axis_coeffs *ax)
{
    for (uint32_t i = 0; i < ax->out; i++) {
        const uint32_t *kp = ax->pairs + (size_t)i * ax->ksize;
        const uint8_t *p = src + (size_t)ax->first[i] * 3;
        int32_t n = ax->count[i];
        __m256i lo01 = _mm256_setzero_si256(), hi01 = lo01, lo23 = lo01, hi23 = lo01;
        __m256i lo45 = lo01, hi45 = lo01, lo67 = lo01, hi67 = lo01;
        for (int32_t j = 0; j < n; j += 2, p += 6, kp += 2) {
            __m256i klo = _mm256_set1_epi32((int)kp[0]), khi = _mm256_set1_epi32((int)kp[1]);
            __m256i v = load_rgb_pair(p, p + src_stride);
            lo01 = _mm256_add_epi32(lo01, _mm256_madd_epi16(v, klo));
            hi01 = _mm256_add_epi32(hi01, _mm256_madd_epi16(v, khi));
            v = load_rgb_pair(p + 2 * src_stride, p + 3 * src_stride);
            lo23 = _mm256_add_epi32(lo23, _mm256_madd_epi16(v, klo));
            hi23 = _mm256_add_epi32(hi23, _mm256_madd_epi16(v, khi));
            v = load_rgb_pair(p + 4 * src_stride, p + 5 * src_stride);
            lo45 = _mm256_add_epi32(lo45, _mm256_madd_epi16(v, klo));
            hi45 = _mm256_add_epi32(hi45, _mm256_madd_epi16(v, khi));
            v = load_rgb_pair(p + 6 * src_stride, p + 7 * src_stride);
            lo67 = _mm256_add_epi32(lo67, _mm256_madd_epi16(v, klo));
            hi67 = _mm256_add_epi32(hi67, _mm256_madd_epi16(v, khi));
        }
        /* Saturating packs = clip to 0..255. Bytes: low half rows 0, 2, 4, 6, high half rows 1, 3, 5, 7
         * (4 bytes each: R, G, B and a 0 that lands on the next pixel's slot or the spare byte). */
        __m256i w0123 = _mm256_packs_epi32(join_halves(hi01, lo01), join_halves(hi23, lo23));
        __m256i w4567 = _mm256_packs_epi32(join_halves(hi45, lo45), join_halves(hi67, lo67));
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
static inline __m256i load_gray_quad(const uint8_t *a, const uint8_t *b)
{
    return _mm256_cvtepu8_epi32(_mm_insert_epi32(_mm_cvtsi32_si128((int)load_u32(a)), (int)load_u32(b), 1));
}

/* Eight gray rows through the horizontal weights, 4 taps per step (2 rows per register), the taps
 * summed at the end by a tree of horizontal adds. Reads up to 3 bytes after a row's last pixel (the
 * zero weights of the padding): the caller guarantees they are readable. */
static void horizontal_eight_rows_gray(const uint8_t *src, size_t src_stride, uint8_t *dst, size_t dst_stride,
                                       const axis_coeffs *ax)
{
    const __m256i half = _mm256_set1_epi32(RESIZE_FIX_HALF);
    for (uint32_t i = 0; i < ax->out; i++) {
        const int32_t *k = ax->k + (size_t)i * ax->ksize;
        const uint8_t *p = src + ax->first[i];
        int32_t n = ax->count[i];
        __m256i a01 = _mm256_setzero_si256(), a23 = a01, a45 = a01, a67 = a01;
        for (int32_t j = 0; j < n; j += 4, p += 4) {
            __m256i kj = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)(k + j)));
            a01 = _mm256_add_epi32(a01, _mm256_mullo_epi32(load_gray_quad(p, p + src_stride), kj));
            a23 = _mm256_add_epi32(a23, _mm256_mullo_epi32(load_gray_quad(p + 2 * src_stride, p + 3 * src_stride), kj));
            a45 = _mm256_add_epi32(a45, _mm256_mullo_epi32(load_gray_quad(p + 4 * src_stride, p + 5 * src_stride), kj));
            a67 = _mm256_add_epi32(a67, _mm256_mullo_epi32(load_gray_quad(p + 6 * src_stride, p + 7 * src_stride), kj));
        }
        /* Lane sums: low half rows 0, 2, 4, 6; high half rows 1, 3, 5, 7. */
        __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(a01, a23), _mm256_hadd_epi32(a45, a67));
        h = _mm256_srai_epi32(_mm256_add_epi32(h, half), RESIZE_FIX_BITS);
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

typedef void (*eight_rows_fn)(const uint8_t *src, size_t src_stride, uint8_t *dst, size_t dst_stride,
                              const axis_coeffs *ax);

/* Eight rows per kernel call, which reads up to SLACK bytes past a row's end. Rows at the bottom of the
 * image (no such bytes after them) go through a copy with zeroed room after it, 8 at a time, the last 8
 * overlapping rows already done (same values written again). */
int resize_horizontal_pass_avx2(const image_u8 *src, int32_t row0, int32_t row1, const axis_coeffs *hx,
                                uint8_t *tmp, size_t tmp_stride, int32_t *next)
{
    uint32_t c = src->channels;
    eight_rows_fn kernel = c == 3 ? horizontal_eight_rows_rgb : horizontal_eight_rows_gray;
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

/* 16 values at a time, two rows per multiply-add (the rows' bytes interleaved as 16-bit pairs, the
 * weights split as in the horizontal pass), the sums in registers; the tail in plain C. */
void resize_vertical_span_avx2(const uint8_t *rows, size_t stride, const int32_t *k, const uint32_t *kp,
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
        __m256i w = _mm256_packs_epi32(join_halves(hi_l, lo_l), join_halves(hi_h, lo_h));
        w = _mm256_permute4x64_epi64(_mm256_packus_epi16(w, w), 0x08);
        _mm_storeu_si128((__m128i *)(void *)(dst + x), _mm256_castsi256_si128(w));
    }
    if (x < len)
        resize_vertical_span(rows, stride, k, count, x, len, dst);
}
#else
typedef int resize_avx2_not_built; /* not an x86-64 AVX2 build: resize.c never calls this file */
#endif
