/* backend_resample_avx512.c - one image of a resampling job (augment_resample.h) with AVX-512: the
 * integer horizontal pass of backend_resample_fixed.c and the float vertical pass of
 * backend_resample_avx2.c, each 16 output columns per instruction instead of 8.
 *
 * Horizontal: each group of 16 output columns loads the 64 source bytes its taps lie in; per tap pair,
 * one byte permute (vpermb, odd bytes zeroed) puts each output's two pixels into 16-bit slots and one
 * VNNI multiply-add (vpdpwssd) adds their weighted sum. The permutes and weights are tables made once
 * per image, with the flip in them. h = (s + 2^11) >> 12 is stored as float (exact: at most 1020).
 * Planar sources (NCHW) are read in place; interleaved RGB rows are first made planar (two-table byte
 * permutes: 64 pixels in 9 instructions).
 *
 * Vertical: the exact float sums of augment_resample.h, 16 columns per fused multiply-add, stored
 * straight into the output row (masked stores for the last out_w % 16; 64-byte non-temporal stores
 * where the caller streams). Same bits as the other passes: every product and partial sum is an
 * integer below 2^24, and the last step is one multiply and one add (-ffp-contract=off, as the AVX2
 * file relies on).
 *
 * Rows are made when an output row first needs them, channel by channel, into rings of a few rows
 * that stay in the L1 cache; each channel's output row is stored between two such pieces of work, so
 * its streamed stores drain while the next computes. */
#include "backend_resample_avx512.h"
#include "backend_prefetch.h"
#include "backend_resample_fixed.h" /* the tap pairs of the integer passes */

#include <string.h>

#include "env.h"

#define PAIRS_MAX 4 /* up to 8 taps per axis */
#define WINDOW 64   /* source bytes one group's permute reaches */
#define GROUP 16    /* output columns per group */
#define RING_MAX 8  /* h rows kept (the most taps per output row): they stay in the L1 cache */

/* One image's run: its tables and rows, in the caller's work memory. */
typedef struct wide_image {
    const aug_job *j;
    uint32_t image;
    uint32_t pairs;      /* tap pairs per output column (the image's most taps, halved up) */
    uint32_t hs;         /* h row stride in floats (out_w rounded up to GROUP) */
    uint32_t col0, col1; /* source columns the taps read */
    int32_t next_planar; /* the next source row made planar */
    int32_t next_h[4];   /* per channel, the next source row the horizontal pass makes */
    uint32_t ring;       /* rows kept: a power of two >= the most taps of an output row */
    float *h;            /* h of augment_resample.h: source row r's C rows of hs values at slot r % ring */
    uint8_t *rows;       /* source row r as C planar channels of row_bytes (WINDOW bytes past W), slot r % ring */
    const uint8_t *src;  /* the source image */
    int in_place;        /* its rows are planar (NCHW or one channel): read in place up to in_place_max */
    size_t in_place_max; /* the last row offset whose group loads stay inside the image */
    size_t row_bytes;
    int32_t *base;       /* per group, the first source column its load reads */
    uint8_t *perm;       /* per group and tap pair, 64 bytes of byte permute */
    int16_t *weights;    /* per group and tap pair, 32 weights */
} wide_image;

static size_t align64(size_t n)
{
    return (n + 63) / 64 * 64;
}

/* The h row stride in floats: out_w rounded up to whole groups (64 bytes). */
static uint32_t h_stride(const aug_job *j)
{
    return (uint32_t)(align64(j->out_w * sizeof(float)) / sizeof(float));
}

/* The pieces of the work memory for an image of J, in order. */
typedef struct wide_layout {
    size_t h, rows, base, perm, weights, total;
} wide_layout;

static wide_layout layout_for(const aug_job *j)
{
    size_t hs = h_stride(j), groups = hs / GROUP;
    wide_layout l;
    l.h = 0;
    l.rows = l.h + align64((size_t)RING_MAX * j->C * hs * sizeof(float));
    l.base = l.rows + align64((size_t)RING_MAX * j->C * (j->W + WINDOW));
    l.perm = l.base + align64(groups * sizeof(int32_t));
    l.weights = l.perm + groups * PAIRS_MAX * 64;
    l.total = l.weights + groups * PAIRS_MAX * 64;
    return l;
}

size_t h5pack_resample_avx512_work_bytes(const aug_job *j)
{
    return layout_for(j).total;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#include <stdatomic.h>

#define AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi,avx512vnni")))

/* Asked once per process (CPUID traps to the hypervisor in a VM); racing first calls agree. GCC's and
 * clang's feature checks include the OS's saving of the 512-bit state. */
int h5pack_resample_avx512_supported(void)
{
    static _Atomic int known = -1;
    int v = atomic_load_explicit(&known, memory_order_relaxed);
    if (v < 0) {
        __builtin_cpu_init();
        v = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
            __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vbmi") &&
            __builtin_cpu_supports("avx512vnni") && !h5pack_env_flag("H5PACK_NO_AVX512");
        atomic_store_explicit(&known, v, memory_order_relaxed);
    }
    return v;
}

/* Group G's permute and weights for tap pair P: output k's taps 2P and 2P+1 at bytes 4k and 4k+2
 * (the odd bytes are zeroed by the permute's mask); unused taps weigh 0. */
static void group_tables(wide_image *f, uint32_t g, uint32_t p)
{
    uint8_t *perm = f->perm + ((size_t)g * PAIRS_MAX + p) * 64;
    int16_t *weights = f->weights + ((size_t)g * PAIRS_MAX + p) * 32;
    for (uint32_t k = 0; k < GROUP; k++)
        h5pack_resample_tap_pair(f->j, f->image, g * GROUP + k, p, f->base[g], 0, perm + 4 * k, weights + 2 * k);
}

/* The tap pairs, column span and group bases of image I; -1 when they do not fit this pass. */
static int plan_groups(wide_image *f)
{
    const aug_job *j = f->j;
    uint32_t most = 0;
    int32_t lo = -1, hi = 0;
    for (uint32_t g = 0; g < f->hs / GROUP; g++) {
        int32_t glo = -1, ghi = 0;
        for (uint32_t x = g * GROUP; x < g * GROUP + GROUP && x < j->out_w; x++) {
            int32_t first, n;
            const float *w;
            aug_column_taps(j, f->image, x, &first, &n, &w);
            most = (uint32_t)n > most ? (uint32_t)n : most;
            glo = glo < 0 || first < glo ? first : glo;
            ghi = first + n > ghi ? first + n : ghi;
        }
        if (ghi - glo > WINDOW)
            return -1;
        f->base[g] = glo < 0 ? 0 : glo;
        lo = glo >= 0 && (lo < 0 || glo < lo) ? glo : lo;
        hi = ghi > hi ? ghi : hi;
    }
    f->pairs = (most + 1) / 2;
    if (f->pairs > PAIRS_MAX || lo < 0)
        return -1;
    f->col0 = (uint32_t)lo, f->col1 = (uint32_t)hi;
    return 0;
}

/* The most taps of image I's output rows. */
static uint32_t most_row_taps(const aug_job *j, uint32_t i)
{
    const int32_t *ry = j->ry + (size_t)i * j->out_h * 2;
    uint32_t most = 0;
    for (uint32_t y = 0; y < j->out_h; y++)
        most = (uint32_t)ry[2 * y + 1] > most ? (uint32_t)ry[2 * y + 1] : most;
    return most;
}

/* 1 when the rows are planar in the source (NCHW or one channel): the horizontal pass reads them there. */
static int source_planar(const aug_job *j)
{
    return !j->in_nhwc || j->C == 1;
}

/* Where planar rows can be read in place: every row whose group loads (up to WINDOW - 1 bytes past
 * col1) stay inside the image. */
static void plan_in_place(wide_image *f)
{
    const aug_job *j = f->j;
    size_t image = (size_t)j->C * j->H * j->W, reach = (size_t)f->col1 + WINDOW - 1;
    f->src = (const uint8_t *)(uintptr_t)j->images[f->image].src;
    f->in_place = source_planar(j) && reach <= image;
    f->in_place_max = f->in_place ? image - reach : 0;
}

static int begin_image(const aug_job *j, uint32_t i, void *work, wide_image *f)
{
    wide_layout l = layout_for(j);
    uint8_t *m = work;
    memset(f, 0, sizeof *f);
    f->j = j, f->image = i, f->hs = h_stride(j);
    f->h = (float *)(void *)(m + l.h), f->rows = m + l.rows, f->row_bytes = (size_t)j->W + WINDOW;
    f->base = (int32_t *)(void *)(m + l.base), f->perm = m + l.perm, f->weights = (int16_t *)(void *)(m + l.weights);
    f->next_planar = j->ry[(size_t)i * j->out_h * 2];
    for (uint32_t c = 0; c < 4; c++)
        f->next_h[c] = f->next_planar;
    uint32_t taps = most_row_taps(j, i);
    if (taps > RING_MAX || plan_groups(f))
        return -1;
    for (f->ring = 1; f->ring < taps; f->ring *= 2) {
    }
    for (uint32_t g = 0; g < f->hs / GROUP; g++)
        for (uint32_t p = 0; p < f->pairs; p++)
            group_tables(f, g, p);
    memset(f->rows, 0, f->ring * j->C * f->row_bytes); /* bytes the loads reach and no tap uses: defined */
    plan_in_place(f);
    return 0;
}

/* Pixels x .. x+63 of the RGB row ROW as three planar byte rows: channel c's byte k is byte 3k + c of
 * the 192, taken from the first 128 by one two-table permute and from the last 128 by another. */
static AVX512 void rgb64_to_planar(const uint8_t *row, uint32_t x, uint8_t *dst, size_t row_bytes)
{
    const uint8_t *p = row + 3 * (size_t)x;
    __m512i a = _mm512_loadu_si512(p), b = _mm512_loadu_si512(p + 64), c = _mm512_loadu_si512(p + 128);
    __m512i k = _mm512_set_epi8(63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44,
                                43, 42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24,
                                23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    __m512i k3 = _mm512_add_epi8(_mm512_add_epi8(k, k), k); /* 3k (mod 256; the permutes use 7 bits) */
    for (int ch = 0; ch < 3; ch++) {
        __m512i at = _mm512_add_epi8(k3, _mm512_set1_epi8((char)ch));             /* 3k + c */
        __m512i lo = _mm512_permutex2var_epi8(a, at, b);                           /* right where 3k + c < 128 */
        __m512i hi = _mm512_permutex2var_epi8(b, _mm512_sub_epi8(at, _mm512_set1_epi8(64)), c); /* where >= 128 */
        __mmask64 from_hi = ~0ULL << (ch == 2 ? 42 : 43);                          /* k with 3k + c >= 128 */
        _mm512_storeu_si512(dst + ch * row_bytes + x, _mm512_mask_blend_epi8(from_hi, lo, hi));
    }
}

/* Source row R's slot in the rings (its planar bytes and its h rows): valid until RING rows later. */
static size_t ring_slot(const wide_image *f, int32_t r)
{
    return (uint32_t)r & (f->ring - 1);
}

/* Channel C of source row R made planar, in the ring. */
static uint8_t *planar(const wide_image *f, int32_t r, uint32_t c)
{
    return f->rows + (ring_slot(f, r) * f->j->C + c) * f->row_bytes;
}

/* Offset of channel C of source row R in a planar (NCHW) source. */
static size_t planar_at(const wide_image *f, int32_t r, uint32_t c)
{
    return ((size_t)c * f->j->H + (size_t)r) * f->j->W;
}

/* Channel C of source row R as planar bytes for the horizontal pass: in the source itself where
 * plan_in_place allows it, else the ring's copy (planar_row). */
static const uint8_t *channel_row(const wide_image *f, int32_t r, uint32_t c)
{
    size_t at = planar_at(f, r, c);
    return f->in_place && at <= f->in_place_max ? f->src + at : planar(f, r, c);
}

/* Columns [col0, col1) of source row R as C planar byte rows in the ring, where channel_row needs them. */
static AVX512 void planar_row(const wide_image *f, int32_t r)
{
    const aug_job *j = f->j;
    const uint8_t *src = f->src;
    uint32_t C = j->C, W = j->W, x0 = f->col0, x1 = f->col1, x = x0;
    uint8_t *dst = planar(f, r, 0);
    if (source_planar(j)) { /* only the rows whose loads would reach past the image: the last ones */
        if (f->in_place && planar_at(f, r, C - 1) <= f->in_place_max)
            return; /* the common case: every channel of the row is read in place */
        for (uint32_t c = 0; c < C; c++)
            if (!f->in_place || planar_at(f, r, c) > f->in_place_max)
                memcpy(dst + c * f->row_bytes + x0, src + planar_at(f, r, c) + x0, x1 - x0);
        return;
    }
    const uint8_t *row = src + (size_t)r * W * C;
    if (C == 3 && x1 - x0 >= 64)
        for (; x < x1; x += 64)
            rgb64_to_planar(row, x + 64 <= x1 ? x : x1 - 64, dst, f->row_bytes); /* the last block ends at x1 */
    for (; x < x1; x++)
        for (uint32_t c = 0; c < C; c++)
            dst[c * f->row_bytes + x] = row[(size_t)x * C + c];
}

/* The tables of one image, in locals: the h stores cannot alias them then, so the loop need not
 * reload the pointers after each store. */
typedef struct group_tabs {
    const int32_t *base;
    const uint8_t *perm;
    const int16_t *weights;
} group_tabs;

/* h of group G's 16 output columns of the planar row ROW, as int32, with PAIRS tap pairs (a constant
 * where inlined: the loop unrolls). */
static inline __attribute__((always_inline)) AVX512 __m512i group_h(group_tabs t, const uint8_t *row, uint32_t g,
                                                                  uint32_t pairs)
{
    __m512i src = _mm512_loadu_si512(row + t.base[g]);
    const uint8_t *perm = t.perm + (size_t)g * PAIRS_MAX * 64;
    const int16_t *w = t.weights + (size_t)g * PAIRS_MAX * 32;
    __m512i s = _mm512_set1_epi32(2048); /* the rounding half of h, added first */
    for (uint32_t p = 0; p < pairs; p++) {
        __m512i px = _mm512_maskz_permutexvar_epi8(0x5555555555555555ULL, _mm512_load_si512(perm + 64 * p), src);
        s = _mm512_dpwssd_epi32(s, px, _mm512_load_si512(w + 32 * p)); /* VNNI: the multiply-add and the sum */
    }
    return _mm512_srli_epi32(s, 12);
}

static inline __attribute__((always_inline)) AVX512 void horizontal_row_n(const wide_image *f, const uint8_t *row,
                                                                         float *dst, uint32_t pairs)
{
    group_tabs t = {f->base, f->perm, f->weights};
    uint32_t groups = f->hs / GROUP;
    for (uint32_t g = 0; g < groups; g++)
        _mm512_store_ps(dst + (size_t)GROUP * g, _mm512_cvtepi32_ps(group_h(t, row, g, pairs)));
}

static AVX512 void horizontal_row(const wide_image *f, const uint8_t *row, float *dst)
{
    switch (f->pairs) {
    case 1: horizontal_row_n(f, row, dst, 1); break;
    case 2: horizontal_row_n(f, row, dst, 2); break;
    case 3: horizontal_row_n(f, row, dst, 3); break;
    default: horizontal_row_n(f, row, dst, f->pairs); break;
    }
}

/* Channel C's h row of source row R, in the ring. */
static float *h_row(const wide_image *f, int32_t r, uint32_t c)
{
    return f->h + (ring_slot(f, r) * f->j->C + c) * f->hs;
}

/* Asks for source row R's bytes (when the image has it) two rows before the horizontal pass reads
 * them: a source image comes from memory, and its rows are read at the pace of the output rows. */
static void prefetch_row(const wide_image *f, int32_t r)
{
    const aug_job *j = f->j;
    if (r >= (int32_t)j->H)
        return;
    size_t xs = j->in_nhwc ? j->C : 1, planes = j->in_nhwc ? 1 : j->C;
    for (size_t c = 0; c < planes; c++) {
        const uint8_t *row = f->src + aug_pixel_index(j->in_nhwc, j->C, j->H, j->W, (uint32_t)r, f->col0, (uint32_t)c);
        for (size_t b = 0; b < (f->col1 - f->col0) * xs; b += 64)
            __builtin_prefetch(row + b);
    }
}

/* Makes channel C's h rows up to source row END (exclusive) that are not made yet, and the planar rows
 * they need. Output rows read rows in increasing order, at most RING each, so the ring's slots are free
 * when reused. Channel by channel, so that each channel's output row is stored between two pieces of
 * this work: the streamed stores of one drain while the next computes. */
static void make_rows(wide_image *f, uint32_t c, int32_t end)
{
    for (; f->next_h[c] < end; f->next_h[c]++) {
        int32_t r = f->next_h[c];
        if (r >= f->next_planar) {
            prefetch_row(f, r + 2);
            planar_row(f, r);
            f->next_planar = r + 1;
        }
        horizontal_row(f, channel_row(f, r, c), h_row(f, r, c));
    }
}

/* The output parameters of one channel's row (the type is passed on its own, as a constant where it
 * matters: the stores below then have no branch). */
typedef struct row_out {
    int stream;
    __m512 scale, bias; /* float types: v * scale + bias */
} row_out;

/* uint8 values of sums V (aug_store_value: v / 2^16 + 1/2, at most 255, truncated; v >= 0). */
static inline __attribute__((always_inline)) AVX512 __m128i u8_of(__m512 v)
{
    __m512 r = _mm512_add_ps(_mm512_mul_ps(v, _mm512_set1_ps(1.0f / 65536.0f)), _mm512_set1_ps(0.5f));
    return _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(_mm512_min_ps(r, _mm512_set1_ps(255.0f))));
}

/* 16-bit patterns of sums V as the float16 or bfloat16 of v * scale + bias (aug_store_value's roundings:
 * to nearest even; every value here is finite). */
static inline __attribute__((always_inline)) AVX512 __m256i half_of(const row_out *o, int type, __m512 v)
{
    __m512 x = _mm512_add_ps(_mm512_mul_ps(v, o->scale), o->bias);
    if (type == H5PACK_DTYPE_FLOAT16)
        return _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512i b = _mm512_castps_si512(x);
    __m512i odd = _mm512_and_si512(_mm512_srli_epi32(b, 16), _mm512_set1_epi32(1));
    return _mm512_cvtepi32_epi16(_mm512_srli_epi32(_mm512_add_epi32(b, _mm512_add_epi32(_mm512_set1_epi32(0x7FFF), odd)), 16));
}

/* 32 output elements (sums A then B) into OUT: one 64-byte store per 64 bytes of output (streamed where
 * asked and aligned), the uint8 ones in one 32-byte store. */
static inline __attribute__((always_inline)) AVX512 void store32(const row_out *o, int type, __m512 a, __m512 b,
                                                               uint8_t *out)
{
    int stream = o->stream && ((uintptr_t)out & 63) == 0;
    if (type == H5PACK_DTYPE_FLOAT32) {
        __m512 x = _mm512_add_ps(_mm512_mul_ps(a, o->scale), o->bias), y = _mm512_add_ps(_mm512_mul_ps(b, o->scale), o->bias);
        if (stream)
            _mm512_stream_ps((float *)(void *)out, x), _mm512_stream_ps((float *)(void *)(out + 64), y);
        else
            _mm512_storeu_ps(out, x), _mm512_storeu_ps(out + 64, y);
    } else if (type == H5PACK_DTYPE_UINT8) {
        _mm256_storeu_si256((__m256i *)(void *)out, _mm256_inserti128_si256(_mm256_castsi128_si256(u8_of(a)), u8_of(b), 1));
    } else {
        __m512i x = _mm512_inserti64x4(_mm512_castsi256_si512(half_of(o, type, a)), half_of(o, type, b), 1);
        if (stream)
            _mm512_stream_si512((__m512i *)(void *)out, x);
        else
            _mm512_storeu_si512(out, x);
    }
}

/* Up to 16 output elements of sums V into OUT, the lanes of M only. */
static inline __attribute__((always_inline)) AVX512 void store16_masked(const row_out *o, int type, __m512 v,
                                                                       __mmask16 m, uint8_t *out)
{
    if (type == H5PACK_DTYPE_FLOAT32)
        _mm512_mask_storeu_ps(out, m, _mm512_add_ps(_mm512_mul_ps(v, o->scale), o->bias));
    else if (type == H5PACK_DTYPE_UINT8)
        _mm_mask_storeu_epi8(out, m, u8_of(v));
    else
        _mm256_mask_storeu_epi16(out, m, half_of(o, type, v));
}

/* One output row of one channel: v = sum over N taps of WY[k] * TAP[k][x] (exact), stored into DST as
 * TYPE. N and TYPE are constants where inlined (weights in registers, the tap loop unrolled, the store
 * chosen once). */
static inline __attribute__((always_inline)) AVX512 void vrow_n(const row_out *o, int type, int n,
                                                              const float *const *tap, const float *wy, uint32_t ow,
                                                              uint8_t *dst)
{
    size_t es = h5pack_dtype_bytes(type);
    __m512 w[RING_MAX];
    const float *t[RING_MAX];
    for (int k = 0; k < n; k++)
        w[k] = _mm512_set1_ps(wy[k]), t[k] = tap[k];
    uint32_t x = 0;
    for (; x + 32 <= ow; x += 32) {
        __m512 a = _mm512_mul_ps(w[0], _mm512_load_ps(t[0] + x)); /* exact, as every product and sum here */
        __m512 b = _mm512_mul_ps(w[0], _mm512_load_ps(t[0] + x + 16));
        for (int k = 1; k < n; k++) {
            a = _mm512_fmadd_ps(w[k], _mm512_load_ps(t[k] + x), a);
            b = _mm512_fmadd_ps(w[k], _mm512_load_ps(t[k] + x + 16), b);
        }
        store32(o, type, a, b, dst + x * es);
    }
    for (; x < ow; x += 16) { /* the h rows are padded to 16: whole loads, masked stores */
        __m512 a = _mm512_mul_ps(w[0], _mm512_load_ps(t[0] + x));
        for (int k = 1; k < n; k++)
            a = _mm512_fmadd_ps(w[k], _mm512_load_ps(t[k] + x), a);
        store16_masked(o, type, a, ow - x >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (ow - x)) - 1), dst + x * es);
    }
}

static inline __attribute__((always_inline)) AVX512 void vrow_typed(const row_out *o, int type, int n,
                                                                  const float *const *tap, const float *wy,
                                                                  uint32_t ow, uint8_t *dst)
{
    switch (n) { /* the common tap counts */
    case 1: vrow_n(o, type, 1, tap, wy, ow, dst); break;
    case 2: vrow_n(o, type, 2, tap, wy, ow, dst); break;
    case 3: vrow_n(o, type, 3, tap, wy, ow, dst); break;
    case 4: vrow_n(o, type, 4, tap, wy, ow, dst); break;
    case 5: vrow_n(o, type, 5, tap, wy, ow, dst); break;
    default: vrow_n(o, type, n, tap, wy, ow, dst); break;
    }
}

static AVX512 void vrow(const row_out *o, int type, int n, const float *const *tap, const float *wy, uint32_t ow,
                        uint8_t *dst)
{
    switch (type) {
    case H5PACK_DTYPE_FLOAT32: vrow_typed(o, H5PACK_DTYPE_FLOAT32, n, tap, wy, ow, dst); break;
    case H5PACK_DTYPE_FLOAT16: vrow_typed(o, H5PACK_DTYPE_FLOAT16, n, tap, wy, ow, dst); break;
    case H5PACK_DTYPE_BFLOAT16: vrow_typed(o, H5PACK_DTYPE_BFLOAT16, n, tap, wy, ow, dst); break;
    default: vrow_typed(o, H5PACK_DTYPE_UINT8, n, tap, wy, ow, dst); break;
    }
}

static AVX512 void resample_image(const aug_job *j, wide_image *f, int stream, src_prefetch *next)
{
    size_t es = h5pack_dtype_bytes(j->out_type), plane = (size_t)j->out_h * j->out_w * es;
    uint8_t *out = (uint8_t *)j->out + (size_t)f->image * j->C * plane;
    row_out ro[4]; /* per channel (at most 4: the job's nscale) */
    for (uint32_t c = 0; c < j->C; c++)
        ro[c] = (row_out){.stream = stream, .scale = _mm512_set1_ps(aug_out_scale(j, c)), .bias = _mm512_set1_ps(j->nbias[c])};
    for (uint32_t y = 0; y < j->out_h; y++) {
        const int32_t *ry = j->ry + ((size_t)f->image * j->out_h + y) * 2;
        const float *wy = j->wy + ((size_t)f->image * j->out_h + y) * j->ky;
        h5pack_src_prefetch_step(next, y, j->out_h);
        for (uint32_t c = 0; c < j->C; c++) {
            make_rows(f, c, ry[0] + ry[1]);
            const float *tap[RING_MAX];
            for (int32_t k = 0; k < ry[1]; k++)
                tap[k] = h_row(f, ry[0] + k, c);
            vrow(&ro[c], j->out_type, ry[1], tap, wy, j->out_w, out + c * plane + (size_t)y * j->out_w * es);
        }
    }
    if (stream)
        _mm_sfence(); /* the streamed lines are visible before the batch is handed on */
}

int h5pack_resample_avx512_image(const aug_job *j, uint32_t i, void *work, int stream, src_prefetch *next)
{
    wide_image f;
    if ((j->out_nhwc && j->C > 1) || begin_image(j, i, work, &f))
        return -1;
    resample_image(j, &f, stream, next);
    return 0;
}
#else
int h5pack_resample_avx512_supported(void)
{
    return 0;
}

int h5pack_resample_avx512_image(const aug_job *j, uint32_t i, void *work, int stream, src_prefetch *next)
{
    (void)j, (void)i, (void)work, (void)stream, (void)next;
    return -1; /* never called: not supported */
}
#endif
