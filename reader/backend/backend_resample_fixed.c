/* backend_resample_fixed.c - the integer AVX2 pass of the CPU resampling: augment_resample.h's
 * horizontal sums, which are integers, computed with 16-bit multiply-adds (vpmaddwd: two taps of eight
 * outputs per instruction) instead of float products, and with no transposition.
 *
 * Per source row and channel: the row is first made planar bytes. Each group of 8 output columns loads
 * 16 bytes into both 128-bit lanes (once where all 8 outputs' taps lie in them, else at the first source
 * column of each half of the group). A byte shuffle per tap pair spreads, for each of the lane's 4
 * outputs, the pixels of taps 2p and 2p+1 into 16-bit slots, and one multiply-add with the pair's
 * weights sums them. The shuffles and weights are tables made once per image (with the flip in them).
 * h = (s + 2^11) >> 12 is converted to float (exactly: at most 1020), and the float vertical pass of
 * backend_resample_avx2.c sums the rows. They are made when the first output row needs them, so they
 * are still in cache then. */
#include "backend_resample_fixed.h"

#include <string.h>

#define TAP_PAIRS_MAX 4 /* up to 8 taps per axis */
#define LANE_BYTES 16   /* source bytes one lane's shuffle can reach */

static uint32_t round_up(uint32_t v, uint32_t m)
{
    return (v + m - 1) / m * m;
}

static size_t align32(size_t n)
{
    return (n + 31) / 32 * 32;
}

/* The pieces of the work memory of an image of J with these sizes, in order. */
typedef struct fixed_layout {
    size_t h, rows, base, masks, weights, total;
} fixed_layout;

static fixed_layout layout_for(uint32_t C, uint32_t H, uint32_t W, uint32_t out_w)
{
    uint32_t hs = round_up(out_w, 16), groups = hs / 8;
    fixed_layout l;
    l.h = 0;
    l.rows = l.h + align32((size_t)H * C * hs * sizeof(float));
    l.base = l.rows + align32((size_t)C * (W + 2 * LANE_BYTES));
    l.masks = l.base + align32((size_t)groups * 2 * sizeof(int32_t));
    l.weights = l.masks + align32((size_t)groups * TAP_PAIRS_MAX * 32);
    l.total = l.weights + align32((size_t)groups * TAP_PAIRS_MAX * 16 * sizeof(int16_t));
    return l;
}

size_t h5pack_resample_fixed_work_bytes(const aug_job *j)
{
    return layout_for(j->C, j->H, j->W, j->out_w).total;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))

/* The first source column and the end of the taps of output columns [x0, x1) (none past out_w). */
static void columns_span(const aug_job *j, uint32_t i, uint32_t x0, uint32_t x1, int32_t *lo, int32_t *hi)
{
    *lo = -1, *hi = 0;
    for (uint32_t x = x0; x < x1 && x < j->out_w; x++) {
        int32_t first, n;
        const float *w;
        aug_column_taps(j, i, x, &first, &n, &w);
        *lo = *lo < 0 || first < *lo ? first : *lo;
        *hi = first + n > *hi ? first + n : *hi;
    }
}

/* The first source column each lane of group G loads (output columns 8G + 4L .. + 3 for lane L): the
 * same for both where all 8 outputs' taps lie in 16 bytes (one load serves both lanes), else each its
 * own. -1 when a lane's taps do not lie in 16 bytes. */
static int group_bases(const aug_job *j, uint32_t i, uint32_t g, int32_t *base)
{
    int32_t lo, hi;
    columns_span(j, i, 8 * g, 8 * g + 8, &lo, &hi);
    if (hi - lo <= LANE_BYTES) {
        base[0] = base[1] = lo < 0 ? 0 : lo;
        return 0;
    }
    for (uint32_t lane = 0; lane < 2; lane++) {
        columns_span(j, i, 8 * g + 4 * lane, 8 * g + 4 * lane + 4, &lo, &hi);
        if (hi - lo > LANE_BYTES)
            return -1;
        base[lane] = lo < 0 ? 0 : lo;
    }
    return 0;
}

/* The shuffle and weights of lane LANE of group G for tap pair P. */
static void lane_tables(const fixed_image *f, uint32_t g, uint32_t lane, uint32_t p, uint8_t *mask, int16_t *weights)
{
    const aug_job *j = f->j;
    int32_t base = f->base[2 * g + lane];
    for (uint32_t k = 0; k < 4; k++) /* 0x80: vpshufb's zero */
        h5pack_resample_tap_pair(j, f->image, g * 8 + lane * 4 + k, p, base, 0x80, mask + 4 * k, weights + 2 * k);
}

/* The tap-pair count, column span and per-group tables of image I; -1 when they do not fit. */
static int make_tables(fixed_image *f)
{
    const aug_job *j = f->j;
    uint32_t groups = f->hs / 8, most = 0;
    int32_t lo, hi;
    for (uint32_t x = 0; x < j->out_w; x++) {
        int32_t first, n;
        const float *w;
        aug_column_taps(j, f->image, x, &first, &n, &w);
        most = (uint32_t)n > most ? (uint32_t)n : most;
    }
    f->pairs = (most + 1) / 2;
    columns_span(j, f->image, 0, j->out_w, &lo, &hi);
    if (f->pairs > TAP_PAIRS_MAX || lo < 0)
        return -1;
    f->col0 = (uint32_t)lo, f->col1 = (uint32_t)hi;
    for (uint32_t g = 0; g < groups; g++)
        if (group_bases(j, f->image, g, f->base + 2 * g) < 0)
            return -1;
    for (uint32_t g = 0; g < groups; g++)
        for (uint32_t p = 0; p < f->pairs; p++)
            for (uint32_t lane = 0; lane < 2; lane++)
                lane_tables(f, g, lane, p, f->masks + ((size_t)g * TAP_PAIRS_MAX + p) * 32 + 16 * lane,
                            f->weights + ((size_t)g * TAP_PAIRS_MAX + p) * 16 + 8 * lane);
    return 0;
}

int h5pack_resample_fixed_begin(const aug_job *j, uint32_t i, void *work, fixed_image *f)
{
    fixed_layout l = layout_for(j->C, j->H, j->W, j->out_w);
    uint8_t *m = work;
    const int32_t *ry = j->ry + (size_t)i * j->out_h * 2;
    memset(f, 0, sizeof *f);
    f->j = j, f->image = i, f->hs = round_up(j->out_w, 16);
    f->h = (float *)(void *)(m + l.h), f->rows = m + l.rows;
    f->base = (int32_t *)(void *)(m + l.base), f->masks = m + l.masks, f->weights = (int16_t *)(void *)(m + l.weights);
    f->row_bytes = (size_t)j->W + 2 * LANE_BYTES;
    f->r0 = f->next = ry[0];
    memset(f->rows, 0, j->C * f->row_bytes); /* bytes the loads reach and no tap uses: defined */
    return make_tables(f);
}

/* Columns [col0, col1) of source row R as C planar byte rows (each row_bytes long: the 16-byte loads
 * past col1 read bytes no tap uses). */
static AVX2 void planar_row(const fixed_image *f, int32_t r)
{
    const aug_job *j = f->j;
    const uint8_t *src = (const uint8_t *)(uintptr_t)j->images[f->image].src;
    uint32_t C = j->C, W = j->W, x0 = f->col0, x1 = f->col1;
    if (!j->in_nhwc || C == 1) {
        for (uint32_t c = 0; c < C; c++)
            memcpy(f->rows + c * f->row_bytes + x0, src + ((size_t)c * j->H + (size_t)r) * W + x0, x1 - x0);
        return;
    }
    const uint8_t *row = src + (size_t)r * W * C;
    uint32_t x = x0;
    if (C == 3) { /* 16 pixels (48 bytes) at a time: each channel's bytes picked from three loads */
        /* pick[c][part]: where pixel k's channel c lies in bytes 16 * part .. + 15 of the 48; -1: not there */
        const __m128i pick[3][3] = {
            {_mm_setr_epi8(0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1),
             _mm_setr_epi8(-1, -1, -1, -1, -1, -1, 2, 5, 8, 11, 14, -1, -1, -1, -1, -1),
             _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 1, 4, 7, 10, 13)},
            {_mm_setr_epi8(1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1),
             _mm_setr_epi8(-1, -1, -1, -1, -1, 0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1),
             _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 2, 5, 8, 11, 14)},
            {_mm_setr_epi8(2, 5, 8, 11, 14, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1),
             _mm_setr_epi8(-1, -1, -1, -1, -1, 1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1),
             _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 3, 6, 9, 12, 15)}};
        for (; x < x1 && x1 - x0 >= 16; x += 16) {
            if (x + 16 > x1)
                x = x1 - 16; /* the last block ends at x1: some pixels twice, none past the span */
            const uint8_t *p = row + 3 * (size_t)x;
            __m128i part[3] = {_mm_loadu_si128((const __m128i *)(const void *)p),
                               _mm_loadu_si128((const __m128i *)(const void *)(p + 16)),
                               _mm_loadu_si128((const __m128i *)(const void *)(p + 32))};
            for (int c = 0; c < 3; c++) {
                __m128i v = _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(part[0], pick[c][0]), _mm_shuffle_epi8(part[1], pick[c][1])),
                                         _mm_shuffle_epi8(part[2], pick[c][2]));
                _mm_storeu_si128((__m128i *)(void *)(f->rows + c * f->row_bytes + x), v);
            }
        }
    }
    for (; x < x1; x++)
        for (uint32_t c = 0; c < C; c++)
            f->rows[c * f->row_bytes + x] = row[(size_t)x * C + c];
}

/* h of 8 output columns (group G) of the planar row ROW, as 8 int32, with PAIRS tap pairs (a constant
 * where inlined: the loop unrolls). */
static inline __attribute__((always_inline)) AVX2 __m256i group_h(const fixed_image *f, const uint8_t *row, uint32_t g,
                                                                 uint32_t pairs)
{
    const __m128i *a = (const __m128i *)(const void *)(row + f->base[2 * g]);
    const __m128i *b = (const __m128i *)(const void *)(row + f->base[2 * g + 1]);
    __m256i src = a == b ? _mm256_broadcastsi128_si256(_mm_loadu_si128(a)) /* one load, no shuffle */
                         : _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(a)), _mm_loadu_si128(b), 1);
    const uint8_t *mask = f->masks + (size_t)g * TAP_PAIRS_MAX * 32;
    const int16_t *w = f->weights + (size_t)g * TAP_PAIRS_MAX * 16;
    __m256i s = _mm256_setzero_si256();
    for (uint32_t p = 0; p < pairs; p++) {
        __m256i m = _mm256_load_si256((const __m256i *)(const void *)(mask + 32 * p));
        __m256i wp = _mm256_load_si256((const __m256i *)(const void *)(w + 16 * p));
        s = _mm256_add_epi32(s, _mm256_madd_epi16(_mm256_shuffle_epi8(src, m), wp));
    }
    return _mm256_srli_epi32(_mm256_add_epi32(s, _mm256_set1_epi32(2048)), 12);
}

/* The horizontal pass of one planar row into DST (hs floats: exact integers), PAIRS as group_h. */
static inline __attribute__((always_inline)) AVX2 void horizontal_row_n(const fixed_image *f, const uint8_t *row,
                                                                       float *dst, uint32_t pairs)
{
    for (uint32_t g = 0; g < f->hs / 8; g++)
        _mm256_storeu_ps(dst + 8 * (size_t)g, _mm256_cvtepi32_ps(group_h(f, row, g, pairs)));
}

static AVX2 void horizontal_row(const fixed_image *f, const uint8_t *row, float *dst)
{
    switch (f->pairs) {
    case 1: horizontal_row_n(f, row, dst, 1); break;
    case 2: horizontal_row_n(f, row, dst, 2); break;
    case 3: horizontal_row_n(f, row, dst, 3); break;
    default: horizontal_row_n(f, row, dst, f->pairs); break;
    }
}

const float *h5pack_resample_fixed_rows(fixed_image *f, uint32_t y)
{
    const aug_job *j = f->j;
    const int32_t *ry = j->ry + ((size_t)f->image * j->out_h + y) * 2;
    for (; f->next < ry[0] + ry[1]; f->next++) {
        planar_row(f, f->next);
        for (uint32_t c = 0; c < j->C; c++)
            horizontal_row(f, f->rows + c * f->row_bytes, f->h + ((size_t)(f->next - f->r0) * j->C + c) * f->hs);
    }
    return f->h + (size_t)(ry[0] - f->r0) * j->C * f->hs;
}
#else
int h5pack_resample_fixed_begin(const aug_job *j, uint32_t i, void *work, fixed_image *f)
{
    (void)j, (void)i, (void)work, (void)f;
    return -1; /* no AVX2 here: the float passes do every image */
}

const float *h5pack_resample_fixed_rows(fixed_image *f, uint32_t y)
{
    (void)y;
    return f->h; /* never called: begin refused */
}
#endif
