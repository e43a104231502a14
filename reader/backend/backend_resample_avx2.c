/* backend_resample_avx2.c - one image of a resampling job (augment_resample.h) with AVX2, bit for bit
 * the scalar pass of backend_resample.c and the CUDA kernel.
 *
 * Why it is exact: the sums are exact integers (augment_resample.h), so summing 8 rows or 8 columns at
 * a time, with FMA, gives the same values; the last step is one multiply and one add, as the scalar pass
 * does it. That last step relies on -ffp-contract=off (reader/CMakeLists.txt): with FMA in this file's
 * target, the compiler could otherwise fuse store8's multiply and add (the tests would catch it).
 *
 * Why it is faster: the horizontal pass converts each source row to float once (not once per tap) and
 * sums 8 source rows per instruction: the 8 rows are interleaved by column (an 8x8 transpose), so one
 * tap of one output column is a broadcast weight times one contiguous load, and the results go back to
 * rows by another transpose. No gathers (slow on many x86 cores). The vertical pass sums 8 output
 * columns per instruction. */
#include "backend_resample_avx2.h"
#include "backend_resample_fixed.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#include <stdatomic.h>
#include <string.h>

#define AVX2 __attribute__((target("avx2,fma,f16c")))

/* AVX2 with FMA and F16C (every AVX2 CPU has them; the exact sums use fused multiply-adds, float16
 * stores F16C). FMA and F16C are read from CPUID leaf 1 (ECX bits 12 and 29): clang 14's
 * __builtin_cpu_supports does not know "f16c". Asked once per process: the one-pass crops call this per
 * image, and CPUID traps to the hypervisor in a VM. */
int h5pack_resample_avx2_supported(void)
{
    static _Atomic int known = -1; /* -1: not asked yet; racing first calls compute the same answer */
    int v = atomic_load_explicit(&known, memory_order_relaxed);
    if (v < 0) {
        unsigned a, b, c, d;
        __builtin_cpu_init();
        v = __builtin_cpu_supports("avx2") && __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29)) != 0 &&
            (c & (1u << 12)) != 0;
        atomic_store_explicit(&known, v, memory_order_relaxed);
    }
    return v;
}

/* WORK: ROWS, 8 source rows of every channel as floats (row stride ROW_STRIDE: W values, then zeros for
 * the taps that reach past the edge with weight 0), and INTER, one channel's 8 rows interleaved by
 * column (INTER[x * 8 + r] = row r, column x), so one tap of 8 rows is one contiguous load. */
static size_t row_stride(const aug_job *j)
{
    return ((size_t)j->W + j->kx + 7) / 8 * 8;
}

size_t h5pack_resample_avx2_work_floats(const aug_job *j)
{
    return ((size_t)8 * j->C + 8) * row_stride(j) + (size_t)j->C * j->out_w; /* + one typed row per channel */
}

static inline __attribute__((always_inline)) AVX2 void transpose8(__m256 r[8])
{
    __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    r[0] = _mm256_permute2f128_ps(u0, u4, 0x20), r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
    r[2] = _mm256_permute2f128_ps(u2, u6, 0x20), r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
    r[4] = _mm256_permute2f128_ps(u0, u4, 0x31), r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    r[6] = _mm256_permute2f128_ps(u2, u6, 0x31), r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

/* The source columns an image's output columns read: [x0, x1), x0 a multiple of 8 (the transposition
 * works on blocks of 8 columns), x1 the end of the last tap. */
typedef struct col_span {
    uint32_t x0, x1;
} col_span;

static col_span span_of(const aug_job *j, const int32_t *rx)
{
    int32_t lo = rx[0], hi = 0;
    for (uint32_t X = 0; X < j->out_w; X++) {
        lo = rx[2 * X] < lo ? rx[2 * X] : lo;
        hi = rx[2 * X] + rx[2 * X + 1] > hi ? rx[2 * X] + rx[2 * X + 1] : hi;
    }
    return (col_span){.x0 = (uint32_t)lo / 8 * 8, .x1 = (uint32_t)hi};
}

/* Columns [x0, x1) of one interleaved RGB row as three float rows: 8 pixels (24 bytes, read exactly)
 * at a time, each channel's 8 bytes picked by byte shuffles, widened and converted. */
static AVX2 void rgb_to_float(const uint8_t *row, uint32_t x0, uint32_t x1, float *f0, float *f1, float *f2)
{
    /* pixel p's channel c is byte 3p + c: bytes 0-15 in LO, 16-23 in HI; -1 selects zero */
    const __m128i lo_pick[3] = {_mm_setr_epi8(0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1),
                                _mm_setr_epi8(1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1),
                                _mm_setr_epi8(2, 5, 8, 11, 14, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1)};
    const __m128i hi_pick[3] = {_mm_setr_epi8(-1, -1, -1, -1, -1, -1, 2, 5, -1, -1, -1, -1, -1, -1, -1, -1),
                                _mm_setr_epi8(-1, -1, -1, -1, -1, 0, 3, 6, -1, -1, -1, -1, -1, -1, -1, -1),
                                _mm_setr_epi8(-1, -1, -1, -1, -1, 1, 4, 7, -1, -1, -1, -1, -1, -1, -1, -1)};
    float *dst[3] = {f0, f1, f2};
    uint32_t x = x0;
    for (; x + 8 <= x1; x += 8) {
        const uint8_t *p = row + 3 * (size_t)x;
        __m128i lo = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i hi = _mm_loadl_epi64((const __m128i *)(const void *)(p + 16));
        for (int c = 0; c < 3; c++) {
            __m128i b = _mm_or_si128(_mm_shuffle_epi8(lo, lo_pick[c]), _mm_shuffle_epi8(hi, hi_pick[c]));
            _mm256_storeu_ps(dst[c] + x, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(b)));
        }
    }
    for (; x < x1; x++)
        f0[x] = (float)row[3 * x], f1[x] = (float)row[3 * x + 1], f2[x] = (float)row[3 * x + 2];
}

/* Columns [x0, x1) of source row R of image SRC as floats, channel c into ROWS + c * CSTRIDE (at their
 * own column index). NHWC rows are split by channel in one pass, with the channel count a constant for
 * 3 and 4 so the loop vectorises. */
static void row_to_float(const aug_job *j, const uint8_t *src, int32_t r, col_span sp, float *rows, size_t cstride)
{
    uint32_t W = j->W, C = j->C, x0 = sp.x0, x1 = sp.x1;
    if (!j->in_nhwc || C == 1) { /* contiguous rows: vectorises */
        for (uint32_t c = 0; c < C; c++) {
            const uint8_t *row = src + ((size_t)c * j->H + (size_t)r) * W;
            for (uint32_t x = x0; x < x1; x++)
                rows[c * cstride + x] = (float)row[x];
        }
        return;
    }
    const uint8_t *row = src + (size_t)r * W * C;
    float *f0 = rows, *f1 = rows + cstride, *f2 = rows + 2 * cstride, *f3 = rows + 3 * cstride;
    if (C == 3)
        rgb_to_float(row, x0, x1, f0, f1, f2);
    else if (C == 4)
        for (uint32_t x = x0; x < x1; x++)
            f0[x] = (float)row[4 * x], f1[x] = (float)row[4 * x + 1], f2[x] = (float)row[4 * x + 2],
            f3[x] = (float)row[4 * x + 3];
    else
        for (uint32_t c = 0; c < C; c++)
            for (uint32_t x = x0; x < x1; x++)
                rows[c * cstride + x] = (float)row[(size_t)x * C + c];
}

/* Rows R .. R+7 of every channel as floats into ROWS (channel c, row k at (c * 8 + k) * stride); rows
 * at or past R1 repeat row R1 - 1 (computed, never stored). */
static void fill_rows(const aug_job *j, const uint8_t *src, int32_t r, int32_t r1, col_span sp, float *rows)
{
    size_t stride = row_stride(j);
    for (int32_t k = 0; k < 8; k++)
        row_to_float(j, src, r + k < r1 ? r + k : r1 - 1, sp, rows + (size_t)k * stride, 8 * stride);
}

/* Channel C's 8 rows of ROWS interleaved by column into INTER, for the columns of SP (in blocks of 8:
 * a block reaching past x1 reads the row's zeros past W, or values no tap uses). */
static AVX2 void fill_inter(const aug_job *j, const float *rows, uint32_t c, col_span sp, float *inter)
{
    size_t stride = row_stride(j);
    const float *ch = rows + (size_t)c * 8 * stride;
    for (size_t x = sp.x0; x < sp.x1; x += 8) {
        __m256 v[8];
        for (int k = 0; k < 8; k++)
            v[k] = _mm256_loadu_ps(ch + (size_t)k * stride + x);
        transpose8(v);
        for (int k = 0; k < 8; k++)
            _mm256_storeu_ps(inter + (x + (size_t)k) * 8, v[k]);
    }
}

/* Output column X of the 8 interleaved rows: h of augment_resample.h (the exact sum of its taps, then
 * aug_round_h). */
static AVX2 __m256 column_sum(const aug_job *j, const int32_t *rx, const float *wx, uint32_t X, const float *inter)
{
    const float *w = wx + (size_t)X * j->kx, *col = inter + (size_t)rx[2 * X] * 8;
    __m256 acc = _mm256_setzero_ps();
    for (int32_t t = 0; t < rx[2 * X + 1]; t++)
        acc = _mm256_fmadd_ps(_mm256_set1_ps(w[t]), _mm256_loadu_ps(col + (size_t)t * 8), acc); /* exact */
    return _mm256_floor_ps(_mm256_add_ps(_mm256_mul_ps(acc, _mm256_set1_ps(1.0f / 4096.0f)), _mm256_set1_ps(0.5f)));
}

/* The horizontal sums of NROWS (<= 8) rows of one channel from INTER: DST(k) is row k's output row. */
static AVX2 void hblock(const aug_job *j, uint32_t i, const float *inter, int flip, float *dst, size_t dst_stride,
                        int nrows)
{
    const int32_t *rx = j->rx + (size_t)i * j->out_w * 2;
    const float *wx = j->wx + (size_t)i * j->out_w * j->kx;
    const __m256i reverse = _mm256_setr_epi32(7, 6, 5, 4, 3, 2, 1, 0);
    uint32_t ow = j->out_w, X0 = 0;
    for (; X0 + 8 <= ow; X0 += 8) {
        __m256 v[8];
        for (uint32_t k = 0; k < 8; k++)
            v[k] = column_sum(j, rx, wx, X0 + k, inter);
        transpose8(v); /* v[k]: columns X0 .. X0+7 of row k */
        for (int k = 0; k < nrows; k++) {
            float *d = dst + (size_t)k * dst_stride;
            if (flip)
                _mm256_storeu_ps(d + ow - X0 - 8, _mm256_permutevar8x32_ps(v[k], reverse));
            else
                _mm256_storeu_ps(d + X0, v[k]);
        }
    }
    for (; X0 < ow; X0++) { /* the last out_w % 8 columns */
        float sums[8];
        _mm256_storeu_ps(sums, column_sum(j, rx, wx, X0, inter));
        for (int k = 0; k < nrows; k++)
            dst[(size_t)k * dst_stride + (flip ? ow - 1 - X0 : X0)] = sums[k];
    }
}

static void horizontal(const aug_job *j, uint32_t i, int32_t r0, int32_t r1, float *h, float *work)
{
    const aug_image *img = &j->images[i];
    const uint8_t *src = (const uint8_t *)(uintptr_t)img->src;
    size_t row_floats = (size_t)j->C * j->out_w, stride = row_stride(j);
    float *rows = work, *inter = work + (size_t)8 * j->C * stride;
    col_span sp = span_of(j, j->rx + (size_t)i * j->out_w * 2);
    for (size_t k = 0; k < 8 * (size_t)j->C; k++) /* the zeros past W */
        memset(rows + k * stride + j->W, 0, (stride - j->W) * sizeof(float));
    for (int32_t r = r0; r < r1; r += 8) {
        fill_rows(j, src, r, r1, sp, rows);
        int n = r1 - r < 8 ? (int)(r1 - r) : 8;
        for (uint32_t c = 0; c < j->C; c++) {
            fill_inter(j, rows, c, sp, inter);
            hblock(j, i, inter, img->flip, h + (size_t)(r - r0) * row_floats + (size_t)c * j->out_w, row_floats, n);
        }
    }
}

/* bfloat16 bits of float32 O, rounded to nearest even (h5pack_float_to_bfloat16_bits), in 32-bit lanes. */
static inline __attribute__((always_inline)) AVX2 __m256i bf16_bits(__m256 o)
{
    __m256i x = _mm256_castps_si256(o);
    __m256i odd = _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1));
    return _mm256_srli_epi32(_mm256_add_epi32(x, _mm256_add_epi32(_mm256_set1_epi32(0x7FFF), odd)), 16);
}

/* uint8 values of sums V (as store8), in 32-bit lanes. */
static inline __attribute__((always_inline)) AVX2 __m256i u8_values(__m256 v)
{
    return _mm256_cvttps_epi32(_mm256_min_ps(_mm256_add_ps(_mm256_mul_ps(v, _mm256_set1_ps(1.0f / 65536.0f)),
                                                           _mm256_set1_ps(0.5f)),
                                             _mm256_set1_ps(255.0f)));
}

/* 8 output elements of sums V as aug_store_value computes them, into OUT (8 elements of the type):
 * float32 v * scale + bias (SCALE: aug_out_scale); float16 rounded from it to nearest even (F16C, =
 * h5pack_float_to_half_bits for finite values, the only ones here); bfloat16 the same with
 * h5pack_float_to_bfloat16_bits' integer rounding; uint8 v / 2^16 + 0.5, at most 255, truncated. */
static inline __attribute__((always_inline)) AVX2 void store8(int type, __m256 v, __m256 scale, __m256 bias,
                                                            void *out, int stream)
{
    if (type == H5PACK_DTYPE_UINT8) {
        __m256i q = u8_values(v); /* 0..255 (v >= 0): the packs below never saturate */
        __m128i w = _mm_packus_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
        _mm_storel_epi64((__m128i *)out, _mm_packus_epi16(w, w));
        return;
    }
    __m256 o = _mm256_add_ps(_mm256_mul_ps(v, scale), bias);
    if (type == H5PACK_DTYPE_FLOAT32 && stream && ((uintptr_t)out & 31) == 0) {
        _mm256_stream_ps(out, o);
    } else if (type == H5PACK_DTYPE_FLOAT32) {
        _mm256_storeu_ps(out, o);
    } else if (type == H5PACK_DTYPE_FLOAT16) {
        __m128i h = _mm256_cvtps_ph(o, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        if (stream && ((uintptr_t)out & 15) == 0)
            _mm_stream_si128((__m128i *)out, h);
        else
            _mm_storeu_si128((__m128i *)out, h);
    } else {
        __m256i x = bf16_bits(o); /* 0..0xFFFF: the unsigned pack keeps every value */
        __m128i h = _mm_packus_epi32(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1));
        if (stream && ((uintptr_t)out & 15) == 0)
            _mm_stream_si128((__m128i *)out, h);
        else
            _mm_storeu_si128((__m128i *)out, h);
    }
}

/* Two 8-lane 32-bit vectors A, B (values that fit 16 bits) as 16 16-bit values in order. */
static inline __attribute__((always_inline)) AVX2 __m256i pack16(__m256i a, __m256i b)
{
    return _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xD8); /* packs works per lane */
}

/* 16 output elements (sums V0 then V1) as store8 makes them, into OUT: the 16-bit and 8-bit types packed
 * into one store (the 16-bit ones streamed 32 bytes at a time where aligned). */
static inline __attribute__((always_inline)) AVX2 void store16(int type, __m256 v0, __m256 v1, __m256 scale,
                                                             __m256 bias, uint8_t *out, int stream)
{
    if (type == H5PACK_DTYPE_FLOAT32) {
        store8(type, v0, scale, bias, out, stream);
        store8(type, v1, scale, bias, out + 32, stream);
        return;
    }
    if (type == H5PACK_DTYPE_UINT8) {
        __m256i w = pack16(u8_values(v0), u8_values(v1));
        /* regular stores: half-line streamed stores were slower here (as store8 does it) */
        _mm_storeu_si128((__m128i *)(void *)out, _mm_packus_epi16(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1)));
        return;
    }
    __m256 o0 = _mm256_add_ps(_mm256_mul_ps(v0, scale), bias), o1 = _mm256_add_ps(_mm256_mul_ps(v1, scale), bias);
    __m256i h;
    if (type == H5PACK_DTYPE_FLOAT16)
        h = _mm256_set_m128i(_mm256_cvtps_ph(o1, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
                             _mm256_cvtps_ph(o0, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    else
        h = pack16(bf16_bits(o0), bf16_bits(o1));
    if (stream && ((uintptr_t)out & 31) == 0)
        _mm256_stream_si256((__m256i *)(void *)out, h);
    else
        _mm256_storeu_si256((__m256i *)(void *)out, h);
}

static size_t elem_bytes(const aug_job *j)
{
    return h5pack_dtype_bytes(j->out_type);
}

/* Stores E, the element aug_store_value made, as element X of a contiguous row DST of the output type. */
static void put_element(const aug_job *j, uint8_t *dst, uint32_t x, uint32_t e)
{
    size_t es = elem_bytes(j);
    if (es == 4)
        memcpy(dst + x * 4, &e, 4);
    else if (es == 2)
        dst[2 * x] = (uint8_t)e, dst[2 * x + 1] = (uint8_t)(e >> 8); /* little endian, as the stores */
    else
        dst[x] = (uint8_t)e;
}

/* The vertical sums of N taps (a constant where inlined: the weights stay in registers, the tap loop
 * unrolls) for the output's whole blocks of 8 columns, stored; returns the first column not done. */
static inline __attribute__((always_inline)) AVX2 uint32_t vsum_store_n(int type, int n, const float *rows,
                                                                        size_t row_floats, const float *wy,
                                                                        __m256 scale, __m256 bias, uint8_t *dst,
                                                                        size_t es, uint32_t ow, int stream)
{
    __m256 w[8];
    for (int k = 0; k < n; k++)
        w[k] = _mm256_set1_ps(wy[k]);
    uint32_t x = 0;
    for (; x + 16 <= ow; x += 16) {
        __m256 a = _mm256_mul_ps(w[0], _mm256_loadu_ps(rows + x)); /* exact, as every product and sum here */
        __m256 b = _mm256_mul_ps(w[0], _mm256_loadu_ps(rows + x + 8));
        for (int k = 1; k < n; k++) {
            a = _mm256_fmadd_ps(w[k], _mm256_loadu_ps(rows + (size_t)k * row_floats + x), a);
            b = _mm256_fmadd_ps(w[k], _mm256_loadu_ps(rows + (size_t)k * row_floats + x + 8), b);
        }
        store16(type, a, b, scale, bias, dst + x * es, stream);
    }
    for (; x + 8 <= ow; x += 8) {
        __m256 a = _mm256_mul_ps(w[0], _mm256_loadu_ps(rows + x)); /* exact, as every product and sum here */
        for (int k = 1; k < n; k++)
            a = _mm256_fmadd_ps(w[k], _mm256_loadu_ps(rows + (size_t)k * row_floats + x), a);
        store8(type, a, scale, bias, dst + x * es, stream);
    }
    return x;
}

/* One output row of channel C: v = sum over the row's taps of wy[k] * ROWS(row k)[x] (exact), 8 columns
 * at a time, stored as the output type straight into the contiguous row DST (the last out_w % 8 through
 * aug_store_value). */
static AVX2 void vrow_store(const aug_job *j, uint32_t c, const float *rows, size_t row_floats, const int32_t *ry,
                            const float *wy, uint8_t *dst, int stream)
{
    size_t es = elem_bytes(j);
    __m256 scale = _mm256_set1_ps(aug_out_scale(j, c)), bias = _mm256_set1_ps(j->nbias[c]);
    uint32_t ow = j->out_w, x = 0;
    switch (ry[1]) { /* the common tap counts with their weights in registers */
    case 2: x = vsum_store_n(j->out_type, 2, rows, row_floats, wy, scale, bias, dst, es, ow, stream); break;
    case 3: x = vsum_store_n(j->out_type, 3, rows, row_floats, wy, scale, bias, dst, es, ow, stream); break;
    case 4: x = vsum_store_n(j->out_type, 4, rows, row_floats, wy, scale, bias, dst, es, ow, stream); break;
    case 5: x = vsum_store_n(j->out_type, 5, rows, row_floats, wy, scale, bias, dst, es, ow, stream); break;
    default:
        for (; x + 8 <= ow; x += 8) {
            __m256 a = _mm256_setzero_ps();
            for (int32_t k = 0; k < ry[1]; k++)
                a = _mm256_fmadd_ps(_mm256_set1_ps(wy[k]), _mm256_loadu_ps(rows + (size_t)k * row_floats + x), a);
            store8(j->out_type, a, scale, bias, dst + x * es, stream);
        }
    }
    for (; x < ow; x++) {
        float a = 0.0f;
        for (int32_t k = 0; k < ry[1]; k++)
            a = a + wy[k] * rows[(size_t)k * row_floats + x];
        put_element(j, dst, x, aug_store_value(j, c, a));
    }
}

/* NHWC output: row Y of image I from the C typed channel rows ROWS (out_w values each), interleaved. */
static void interleave_row(const aug_job *j, uint32_t i, uint32_t y, const uint8_t *rows)
{
    uint32_t C = j->C, ow = j->out_w;
    size_t first = (((size_t)i * j->out_h + y) * ow) * C;
    if (elem_bytes(j) == 4) {
        uint32_t *d = (uint32_t *)j->out + first;
        const uint32_t *s = (const uint32_t *)(const void *)rows;
        for (uint32_t x = 0; x < ow; x++)
            for (uint32_t c = 0; c < C; c++)
                d[(size_t)x * C + c] = s[(size_t)c * ow + x];
    } else if (elem_bytes(j) == 2) {
        uint16_t *d = (uint16_t *)j->out + first;
        const uint16_t *s = (const uint16_t *)(const void *)rows;
        for (uint32_t x = 0; x < ow; x++)
            for (uint32_t c = 0; c < C; c++)
                d[(size_t)x * C + c] = s[(size_t)c * ow + x];
    } else {
        uint8_t *d = (uint8_t *)j->out + first;
        for (uint32_t x = 0; x < ow; x++)
            for (uint32_t c = 0; c < C; c++)
                d[(size_t)x * C + c] = rows[(size_t)c * ow + x];
    }
}

/* Output row Y, channel C of image I into the contiguous row DST: from the integer pass's rows F where it
 * took the image, else from the float horizontal sums H. */
static void vertical_row(const aug_job *j, uint32_t i, uint32_t y, uint32_t c, fixed_image *f, const float *h,
                         uint8_t *dst, int stream)
{
    const int32_t *ry = j->ry + ((size_t)i * j->out_h + y) * 2;
    const float *wy = j->wy + ((size_t)i * j->out_h + y) * j->ky;
    if (f) {
        vrow_store(j, c, h5pack_resample_fixed_rows(f, y) + (size_t)c * f->hs, (size_t)j->C * f->hs, ry, wy, dst, stream);
        return;
    }
    int32_t r0 = j->ry[(size_t)i * j->out_h * 2]; /* the first row of the horizontal sums */
    size_t row_floats = (size_t)j->C * j->out_w;
    vrow_store(j, c, h + (size_t)(ry[0] - r0) * row_floats + (size_t)c * j->out_w, row_floats, ry, wy, dst, stream);
}

void h5pack_resample_avx2_image(const aug_job *j, uint32_t i, float *h, float *work, void *fixed_work, int stream,
                                src_prefetch *next)
{
    const int32_t *ry = j->ry + (size_t)i * j->out_h * 2;
    int32_t r0 = ry[0], r1 = ry[2 * (j->out_h - 1)] + ry[2 * (j->out_h - 1) + 1];
    fixed_image fixed, *f = fixed_work && h5pack_resample_fixed_begin(j, i, fixed_work, &fixed) == 0 ? &fixed : NULL;
    if (!f)
        horizontal(j, i, r0, r1, h, work);
    int nhwc = j->out_nhwc && j->C > 1;
    uint8_t *typed = (uint8_t *)(work + ((size_t)8 * j->C + 8) * row_stride(j)); /* NHWC: C typed rows */
    size_t plane = (size_t)j->out_h * j->out_w * elem_bytes(j);
    for (uint32_t y = 0; y < j->out_h; y++) {
        h5pack_src_prefetch_step(next, y, j->out_h);
        for (uint32_t c = 0; c < j->C; c++) {
            uint8_t *nchw_row = (uint8_t *)j->out + ((size_t)i * j->C + c) * plane + (size_t)y * j->out_w * elem_bytes(j);
            vertical_row(j, i, y, c, f, h, nhwc ? typed + (size_t)c * j->out_w * elem_bytes(j) : nchw_row, !nhwc && stream);
        }
        if (nhwc)
            interleave_row(j, i, y, typed);
    }
    if (stream)
        _mm_sfence(); /* the streamed lines are visible before the batch is handed on */
}
#else
int h5pack_resample_avx2_supported(void)
{
    return 0;
}

size_t h5pack_resample_avx2_work_floats(const aug_job *j)
{
    (void)j;
    return 0;
}

void h5pack_resample_avx2_image(const aug_job *j, uint32_t i, float *h, float *work, void *fixed_work, int stream,
                                src_prefetch *next)
{
    (void)j, (void)i, (void)h, (void)work, (void)fixed_work, (void)stream, (void)next; /* never called: not supported */
}
#endif
