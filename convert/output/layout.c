/* layout.c - layout copy + per-channel sums of a decoded image, plain C and SSSE3 (see layout.h). */
#include "layout.h"

#include <string.h>

/* Pixels per block whose 32-bit sums of squares cannot overflow: 4096 * 255^2 < 2^32. */
#define PLAIN_BLOCK 4096

static void plain_rgb(const uint8_t *in, size_t count, int nhwc, uint8_t *dst, uint64_t sum[3], uint64_t sum_sq[3])
{
    uint8_t *r = dst, *g = dst + count, *b = dst + 2 * count;
    for (size_t start = 0; start < count; start += PLAIN_BLOCK) {
        size_t end = count - start > PLAIN_BLOCK ? start + PLAIN_BLOCK : count;
        uint32_t s0 = 0, s1 = 0, s2 = 0, q0 = 0, q1 = 0, q2 = 0;
        for (size_t i = start; i < end; i++) {
            uint32_t x = in[3 * i], y = in[3 * i + 1], z = in[3 * i + 2];
            s0 += x, s1 += y, s2 += z;
            q0 += x * x, q1 += y * y, q2 += z * z;
            if (!nhwc)
                r[i] = (uint8_t)x, g[i] = (uint8_t)y, b[i] = (uint8_t)z;
        }
        sum[0] += s0, sum[1] += s1, sum[2] += s2;
        sum_sq[0] += q0, sum_sq[1] += q1, sum_sq[2] += q2;
    }
}

static void plain_gray(const uint8_t *in, size_t count, uint64_t sum[3], uint64_t sum_sq[3])
{
    for (size_t i = 0; i < count; i++) {
        sum[0] += in[i];
        sum_sq[0] += (uint32_t)in[i] * in[i];
    }
}

void layout_store_plain(const uint8_t *hwc, size_t count, uint32_t channels, int nhwc, uint8_t *dst,
                        uint64_t sum[3], uint64_t sum_sq[3])
{
    memset(sum, 0, 3 * sizeof *sum);
    memset(sum_sq, 0, 3 * sizeof *sum_sq);
    if (channels == 3)
        plain_rgb(hwc, count, nhwc, dst, sum, sum_sq);
    else
        plain_gray(hwc, count, sum, sum_sq);
    if (channels != 3 || nhwc)
        memcpy(dst, hwc, count * channels); /* one channel: CHW == HWC */
}

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) && !defined(H5PACK_LAYOUT_PLAIN_C)
#include <immintrin.h>

#define SSSE3_FN __attribute__((target("ssse3")))

/* Vector iterations (16 pixels) between moves of the 32-bit square sums into 64-bit totals: each 32-bit
 * lane gains at most 4 * 255^2 per iteration, and 4096 * 4 * 255^2 < 2^32. */
#define VEC_BLOCK 4096

/* Sums of one channel: SUM in two 64-bit lanes, the squares in four 32-bit lanes (flushed to SQ64). */
typedef struct chan_acc {
    __m128i sum, sq32, sq64;
} chan_acc;

SSSE3_FN static inline void acc_add(chan_acc *a, __m128i v)
{
    const __m128i zero = _mm_setzero_si128();
    __m128i lo = _mm_unpacklo_epi8(v, zero), hi = _mm_unpackhi_epi8(v, zero);
    a->sum = _mm_add_epi64(a->sum, _mm_sad_epu8(v, zero));
    a->sq32 = _mm_add_epi32(a->sq32, _mm_add_epi32(_mm_madd_epi16(lo, lo), _mm_madd_epi16(hi, hi)));
}

SSSE3_FN static inline void acc_flush(chan_acc *a)
{
    const __m128i zero = _mm_setzero_si128();
    a->sq64 = _mm_add_epi64(a->sq64, _mm_add_epi64(_mm_unpacklo_epi32(a->sq32, zero), _mm_unpackhi_epi32(a->sq32, zero)));
    a->sq32 = zero;
}

SSSE3_FN static inline void acc_total(chan_acc *a, uint64_t *sum, uint64_t *sum_sq)
{
    uint64_t s[2], q[2];
    acc_flush(a);
    _mm_storeu_si128((__m128i *)s, a->sum);
    _mm_storeu_si128((__m128i *)q, a->sq64);
    *sum += s[0] + s[1];
    *sum_sq += q[0] + q[1];
}

/* Pixel i's R, G, B are bytes 3i, 3i+1, 3i+2 of the 48 loaded: each plane gathers its bytes from the
 * three 16-byte loads with one shuffle each (-1 = zero) and ORs them. */
#define Z -1
SSSE3_FN static void ssse3_rgb(const uint8_t *in, size_t count, int nhwc, uint8_t *dst, uint64_t sum[3],
                               uint64_t sum_sq[3])
{
    const __m128i ra = _mm_setr_epi8(0, 3, 6, 9, 12, 15, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z);
    const __m128i rb = _mm_setr_epi8(Z, Z, Z, Z, Z, Z, 2, 5, 8, 11, 14, Z, Z, Z, Z, Z);
    const __m128i rc = _mm_setr_epi8(Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, 1, 4, 7, 10, 13);
    const __m128i ga = _mm_setr_epi8(1, 4, 7, 10, 13, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z);
    const __m128i gb = _mm_setr_epi8(Z, Z, Z, Z, Z, 0, 3, 6, 9, 12, 15, Z, Z, Z, Z, Z);
    const __m128i gc = _mm_setr_epi8(Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, 2, 5, 8, 11, 14);
    const __m128i ba = _mm_setr_epi8(2, 5, 8, 11, 14, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z);
    const __m128i bb = _mm_setr_epi8(Z, Z, Z, Z, Z, 1, 4, 7, 10, 13, Z, Z, Z, Z, Z, Z);
    const __m128i bc = _mm_setr_epi8(Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, 0, 3, 6, 9, 12, 15);
    chan_acc acc[3];
    memset(acc, 0, sizeof acc);
    uint8_t *r = dst, *g = dst + count, *b = dst + 2 * count;
    size_t vec_end = count & ~(size_t)15, i = 0;
    while (i < vec_end) {
        size_t block_end = vec_end - i > 16 * VEC_BLOCK ? i + 16 * VEC_BLOCK : vec_end;
        for (; i < block_end; i += 16) {
            const uint8_t *p = in + 3 * i;
            __m128i x = _mm_loadu_si128((const __m128i *)p), y = _mm_loadu_si128((const __m128i *)(p + 16)),
                    z = _mm_loadu_si128((const __m128i *)(p + 32));
            __m128i vr = _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(x, ra), _mm_shuffle_epi8(y, rb)), _mm_shuffle_epi8(z, rc));
            __m128i vg = _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(x, ga), _mm_shuffle_epi8(y, gb)), _mm_shuffle_epi8(z, gc));
            __m128i vb = _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(x, ba), _mm_shuffle_epi8(y, bb)), _mm_shuffle_epi8(z, bc));
            acc_add(&acc[0], vr);
            acc_add(&acc[1], vg);
            acc_add(&acc[2], vb);
            if (!nhwc) {
                _mm_storeu_si128((__m128i *)(r + i), vr);
                _mm_storeu_si128((__m128i *)(g + i), vg);
                _mm_storeu_si128((__m128i *)(b + i), vb);
            }
        }
        for (int c = 0; c < 3; c++)
            acc_flush(&acc[c]);
    }
    for (int c = 0; c < 3; c++)
        acc_total(&acc[c], &sum[c], &sum_sq[c]);
    for (; i < count; i++) {
        uint32_t v0 = in[3 * i], v1 = in[3 * i + 1], v2 = in[3 * i + 2];
        sum[0] += v0, sum[1] += v1, sum[2] += v2;
        sum_sq[0] += v0 * v0, sum_sq[1] += v1 * v1, sum_sq[2] += v2 * v2;
        if (!nhwc)
            r[i] = (uint8_t)v0, g[i] = (uint8_t)v1, b[i] = (uint8_t)v2;
    }
}
#undef Z

SSSE3_FN static void ssse3_gray(const uint8_t *in, size_t count, uint64_t sum[3], uint64_t sum_sq[3])
{
    chan_acc acc;
    memset(&acc, 0, sizeof acc);
    size_t vec_end = count & ~(size_t)15, i = 0;
    while (i < vec_end) {
        size_t block_end = vec_end - i > 16 * VEC_BLOCK ? i + 16 * VEC_BLOCK : vec_end;
        for (; i < block_end; i += 16)
            acc_add(&acc, _mm_loadu_si128((const __m128i *)(in + i)));
        acc_flush(&acc);
    }
    acc_total(&acc, &sum[0], &sum_sq[0]);
    for (; i < count; i++) {
        sum[0] += in[i];
        sum_sq[0] += (uint32_t)in[i] * in[i];
    }
}

void layout_store(const uint8_t *hwc, size_t count, uint32_t channels, int nhwc, uint8_t *dst, uint64_t sum[3],
                  uint64_t sum_sq[3])
{
    if (!__builtin_cpu_supports("ssse3")) { /* a load and a test: libgcc filled the table at startup */
        layout_store_plain(hwc, count, channels, nhwc, dst, sum, sum_sq);
        return;
    }
    memset(sum, 0, 3 * sizeof *sum);
    memset(sum_sq, 0, 3 * sizeof *sum_sq);
    if (channels == 3)
        ssse3_rgb(hwc, count, nhwc, dst, sum, sum_sq);
    else
        ssse3_gray(hwc, count, sum, sum_sq);
    if (channels != 3 || nhwc)
        memcpy(dst, hwc, count * channels);
}

#else

void layout_store(const uint8_t *hwc, size_t count, uint32_t channels, int nhwc, uint8_t *dst, uint64_t sum[3],
                  uint64_t sum_sq[3])
{
    layout_store_plain(hwc, count, channels, nhwc, dst, sum, sum_sq);
}

#endif
