/* backend_convert_avx2_stage.c - the stored bytes of a range of output pixels of a flipped or padded
 * image, put in output pixel order (backend_convert_avx2.h, h5pack_conv_avx2_stage).
 *
 * The kernel converts flipped and padded images from this small staging block (it stays in L1) exactly
 * as it converts an unflipped, unpadded image from its chunk: one contiguous run per output plane (or
 * image), every output line written once with whole aligned stores, no per-row tails. Walking the
 * output rows directly instead meant a run per row whose 8-pixel blocks start at every alignment. */
#include <string.h>

#include "augment.h"
#include "backend_convert.h"
#include "backend_convert_avx2.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))

/* REV[B - 1]: the first 16 / B pixels of B bytes of a 16-byte vector in reverse order. */
static const uint8_t REV[4][16] __attribute__((aligned(16))) = {
    {15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0},
    {14, 15, 12, 13, 10, 11, 8, 9, 6, 7, 4, 5, 2, 3, 0, 1},
    {12, 13, 14, 9, 10, 11, 6, 7, 8, 3, 4, 5, 0, 1, 2, 0x80},
    {12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3}};

#define INLINE static inline __attribute__((always_inline)) AVX2

/* D's N pixels of B bytes: the stored pixels from TOP downwards (pixel k at TOP - k * B), 16 / B pixels
 * per shuffle, the last ones overlapping the previous shuffle. Stores run up to 15 bytes past D's last
 * pixel (the caller's next writes, or its slack, cover them); loads stay inside the row, except that of
 * 5 pixels of 3 bytes one byte past them, which stays below END. */
INLINE void reverse_pixels(uint8_t *d, const uint8_t *top, int n, int B, const uint8_t *end)
{
    const __m128i rev = _mm_load_si128((const __m128i *)(const void *)REV[B - 1]);
    const __m256i rev2 = _mm256_broadcastsi128_si256(rev);
    const int P = 16 / B;
    int k = 0;
    for (; k + 2 * P <= n; k += 2 * P) { /* two groups per step: pixels K.. from S, K + P.. from S - 16 */
        const uint8_t *s = top - (ptrdiff_t)(k + P - 1) * B;
        if (s + 16 > end)
            break;
        __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)s)),
                                            _mm_loadu_si128((const __m128i *)(const void *)(s - P * B)), 1);
        v = _mm256_shuffle_epi8(v, rev2);
        if (B == 3) { /* groups of 15 bytes */
            _mm_storeu_si128((__m128i *)(void *)(d + k * B), _mm256_castsi256_si128(v));
            _mm_storeu_si128((__m128i *)(void *)(d + (k + P) * B), _mm256_extracti128_si256(v, 1));
        } else {
            _mm256_storeu_si256((__m256i *)(void *)(d + k * B), v);
        }
    }
    if (n - k >= P || (k > 0 && k < n)) { /* the rest, the last group overlapping the one before */
        k = n - k >= P ? k : n - P;
        for (;; k += P) {
            k = k + P > n ? n - P : k; /* the last group: overlapping the one before */
            const uint8_t *s = top - (ptrdiff_t)(k + P - 1) * B;
            if (s + 16 > end) /* the image's last pixel (5 pixels of 3 bytes): byte by byte */
                for (int i = 0; i < P * B; i++)
                    d[k * B + i] = s[(P - 1 - i / B) * B + i % B];
            else
                _mm_storeu_si128((__m128i *)(void *)(d + k * B),
                                 _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)s), rev));
            if (k + P == n)
                return;
        }
    }
    for (; k < n; k++)
        for (int i = 0; i < B; i++)
            d[k * B + i] = top[-(ptrdiff_t)k * B + i];
}

/* Output pixels X..X+LEN-1 of row Y into D (pixels of B bytes) from PLANE (a channel's plane or the
 * NHWC image): zeros where they fall in the padding. */
INLINE void stage_row(const backend_conv *cv, aug_draw d, const uint8_t *plane, const uint8_t *end, int y, int x,
                      int len, int B, uint8_t *out)
{
    int W = (int)cv->W, sy = aug_src_y(d, y, cv->pad);
    if (sy < 0 || sy >= (int)cv->H) {
        memset(out, 0, (size_t)len * B);
        return;
    }
    int shift = d.ox - cv->pad; /* the stored pixels' output columns [x0, x1), as backend_convert.c */
    int x0 = d.flip ? shift : -shift, x1 = d.flip ? W + shift : W - shift;
    int a = x0 > x ? x0 : x, b = x1 < x + len ? x1 : x + len;
    b = b < a ? a : b;
    if (a > x)
        memset(out, 0, (size_t)(a - x) * B);
    if (b > a) {
        const uint8_t *s = plane + (ptrdiff_t)sy * cv->in.y + (ptrdiff_t)aug_src_x(d, a, W, cv->pad) * B;
        const uint8_t *ahead = plane + (ptrdiff_t)(sy + 2) * cv->in.y; /* rows are read backwards: */
        for (int i = 0; d.flip && i < W * B && ahead + i < end; i += 64)  /* the prefetcher needs help */
            _mm_prefetch((const char *)(ahead + i), _MM_HINT_T0);
        if (d.flip)
            reverse_pixels(out + (a - x) * B, s, b - a, B, end);
        else
            memcpy(out + (a - x) * B, s, (size_t)(b - a) * B);
    }
    if (x + len > b)
        memset(out + (b - x) * B, 0, (size_t)(x + len - b) * B);
}

/* h5pack_conv_avx2_stage for B bytes per stored pixel (a constant in each copy). */
INLINE void stage_b(const backend_conv *cv, aug_draw d, const uint8_t *src, size_t q, size_t n, int c0, int c1,
                  uint8_t *stage, const int B)
{
    const uint8_t *end = src + cv->in_bytes;
    for (int c = B > 1 ? 0 : c0; c < (B > 1 ? 1 : c1); c++) {
        const uint8_t *plane = src + (B > 1 ? 0 : (ptrdiff_t)c * cv->in.c);
        uint8_t *out = stage + (B > 1 ? 0 : (size_t)c * n);
        int y = (int)(q / cv->W), x = (int)(q % cv->W);
        for (size_t k = 0; k < n; x = 0, y++) { /* row by row, in increasing addresses (see reverse_pixels) */
            int len = (int)(cv->W - (size_t)x < n - k ? cv->W - (size_t)x : n - k);
            stage_row(cv, d, plane, end, y, x, len, B, out + k * B);
            k += (size_t)len;
        }
    }
}

AVX2 void h5pack_conv_avx2_stage(const backend_conv *cv, aug_draw d, const uint8_t *src, size_t q, size_t n, int c0,
                                 int c1, uint8_t *stage)
{
    int nhwc_in = cv->in.c == 1 && cv->C > 1;
    switch (nhwc_in ? cv->C : 1) {
    case 1:
        stage_b(cv, d, src, q, n, c0, c1, stage, 1);
        break;
    case 2:
        stage_b(cv, d, src, q, n, c0, c1, stage, 2);
        break;
    case 3:
        stage_b(cv, d, src, q, n, c0, c1, stage, 3);
        break;
    default:
        stage_b(cv, d, src, q, n, c0, c1, stage, 4);
    }
}
#else
void h5pack_conv_avx2_stage(const backend_conv *cv, aug_draw d, const uint8_t *src, size_t q, size_t n, int c0,
                            int c1, uint8_t *stage)
{
    (void)cv, (void)d, (void)src, (void)q, (void)n, (void)c0, (void)c1, (void)stage; /* never called */
}
#endif
