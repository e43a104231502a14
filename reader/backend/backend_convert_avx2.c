/* backend_convert_avx2.c - the AVX2 float32 conversion of one image, every layout pair, flip and
 * padding (see backend_convert_avx2.h). Compiled for every x86-64 target with per-function AVX2
 * code; the caller only uses it where h5pack_conv_avx2_supported() said the CPU runs it. */
#include <string.h>

#include "backend_convert.h"
#include "backend_convert_avx2.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))
/* Everything below is inlined into one function per channel count and layout pair (the constants C,
 * NHWC_IN, NHWC_OUT, ONLY), so that the runs' state stays in registers and per-block branches fold. */
#define INLINE static inline __attribute__((always_inline)) AVX2

/* lane k of ROT[p] = (k - p) mod 8: rotates a vector up by p lanes; LOW[p]: lanes below p set. */
static const int32_t ROT[8][8] __attribute__((aligned(32))) = {
    {0, 1, 2, 3, 4, 5, 6, 7}, {7, 0, 1, 2, 3, 4, 5, 6}, {6, 7, 0, 1, 2, 3, 4, 5}, {5, 6, 7, 0, 1, 2, 3, 4},
    {4, 5, 6, 7, 0, 1, 2, 3}, {3, 4, 5, 6, 7, 0, 1, 2}, {2, 3, 4, 5, 6, 7, 0, 1}, {1, 2, 3, 4, 5, 6, 7, 0}};
static const int32_t LOW[9][8] __attribute__((aligned(32))) = {
    {0, 0, 0, 0, 0, 0, 0, 0},         {-1, 0, 0, 0, 0, 0, 0, 0},        {-1, -1, 0, 0, 0, 0, 0, 0},
    {-1, -1, -1, 0, 0, 0, 0, 0},      {-1, -1, -1, -1, 0, 0, 0, 0},     {-1, -1, -1, -1, -1, 0, 0, 0},
    {-1, -1, -1, -1, -1, -1, 0, 0},   {-1, -1, -1, -1, -1, -1, -1, 0},  {-1, -1, -1, -1, -1, -1, -1, -1}};

INLINE __m256i low_mask(int p)
{
    return _mm256_load_si256((const __m256i *)(const void *)LOW[p]);
}

/* A contiguous output run written in whole aligned 8-float blocks: ACC holds the next block's first P
 * lanes (ROT and LOW: ROT[P], LOW[P]); lanes below HEAD of the first block (before the run's start) are
 * not the run's. */
typedef struct sink {
    float *dst;
    __m256 acc;
    __m256i rot, low;
    int p, head, stream;
} sink;

INLINE void sink_set_p(sink *s, int p)
{
    s->p = p;
    s->rot = _mm256_load_si256((const __m256i *)(const void *)ROT[p]);
    s->low = low_mask(p);
}

INLINE void sink_init(sink *s, float *run, int stream)
{
    int r = (int)(((uintptr_t)run & 31) / sizeof(float));
    s->dst = run - r, s->acc = _mm256_setzero_ps(), s->head = r, s->stream = stream;
    sink_set_p(s, r);
}

/* Stores the next block (not the run's first, when HEAD is set). */
INLINE void sink_store(sink *s, __m256 v)
{
    if (s->stream)
        _mm256_stream_ps(s->dst, v);
    else
        _mm256_store_ps(s->dst, v);
    s->dst += 8;
}

INLINE void sink_emit(sink *s, __m256 v)
{
    if (__builtin_expect(s->head != 0, 0)) { /* the run's first block: only its own lanes */
        _mm256_maskstore_ps(s->dst, _mm256_xor_si256(low_mask(s->head), _mm256_set1_epi32(-1)), v);
        s->head = 0, s->dst += 8;
        return;
    }
    sink_store(s, v);
}

/* Appends lanes 0..N-1 of V (1 <= N <= 8) to the run: V rotated up by P lanes completes the pending
 * block (stored) and its upper lanes start the next one. */
INLINE void sink_push(sink *s, __m256 v, int n)
{
    if (__builtin_expect(n == 8 && s->p == 0, 1)) { /* aligned: V is the block (P 0: not the first) */
        sink_store(s, v);
        return;
    }
    __m256 rv = _mm256_permutevar8x32_ps(v, s->rot);
    __m256 out = _mm256_blendv_ps(rv, s->acc, _mm256_castsi256_ps(s->low));
    if (__builtin_expect(n == 8, 1)) { /* P unchanged */
        sink_emit(s, out);
        s->acc = rv;
    } else if (s->p + n >= 8) {
        sink_emit(s, out);
        s->acc = rv;
        sink_set_p(s, s->p + n - 8);
    } else {
        s->acc = out;
        sink_set_p(s, s->p + n);
    }
}

INLINE void sink_finish(sink *s)
{
    if (s->p > s->head)
        _mm256_maskstore_ps(s->dst, _mm256_andnot_si256(low_mask(s->head), low_mask(s->p)), s->acc);
}

/* One image's conversion state. */
typedef struct img_job {
    const backend_conv *cv;
    const conv_avx2_plan *pl;
    aug_draw d;
    ptrdiff_t xs, ps; /* stored: bytes from one pixel to the next, from one plane to the next */
    sink sk[4];       /* NCHW output: one run per plane; NHWC: sk[0] is the whole image */
} img_job;

/* Output group G (8 bytes in the low half of B) converted to 8 float32 lanes. */
INLINE __m256 convert8(const img_job *j, __m128i b, int g, const int C, const int nhwc_out)
{
    if (j->pl->mode == H5PACK_CONV_TABLE) { /* eight scalar lookups: lane k's channel is a constant */
        uint64_t w = (uint64_t)_mm_cvtsi128_si64(b);
        const uint32_t *t = &j->cv->t32[0][0];
#define LANE(k) (int)t[(nhwc_out ? (8 * g + (k)) % C : g) * 256 + ((w >> (8 * (k))) & 255)]
        return _mm256_castsi256_ps(
            _mm256_setr_epi32(LANE(0), LANE(1), LANE(2), LANE(3), LANE(4), LANE(5), LANE(6), LANE(7)));
#undef LANE
    }
    __m256i v = _mm256_cvtepu8_epi32(b);
    __m256 x = _mm256_div_ps(_mm256_cvtepi32_ps(v), _mm256_set1_ps(255.0f));
    x = _mm256_sub_ps(x, _mm256_loadu_ps(j->pl->mean[g]));
    return _mm256_div_ps(x, _mm256_loadu_ps(j->pl->std[g]));
}

/* V with its last M lanes moved down to lanes 0..M-1 (LAST = M), or V (LAST 0). */
INLINE __m256 last8(int last, __m256 v)
{
    return last ? _mm256_permutevar8x32_ps(v, _mm256_load_si256((const __m256i *)(const void *)ROT[last])) : v;
}

/* Sends group G's vector V of a block of M pixels to its run. */
INLINE void put_group(sink *sk, __m256 v, int g, int m, const int C, const int nhwc_out)
{
    if (!nhwc_out) {
        sink_push(&sk[g], v, m);
        return;
    }
    int n = m * C - 8 * g;
    if (n > 0)
        sink_push(&sk[0], v, n > 8 ? 8 : n);
}

/* The 16 bytes of output half H of a block (lo, hi: its stored bytes as loaded). */
INLINE __m128i reorder(const img_job *j, __m128i lo, __m128i hi, int h)
{
    const uint8_t(*sh)[16] = j->pl->shuf[j->d.flip][h];
    return _mm_or_si128(_mm_shuffle_epi8(lo, _mm_load_si128((const __m128i *)(const void *)sh[0])),
                        _mm_shuffle_epi8(hi, _mm_load_si128((const __m128i *)(const void *)sh[1])));
}

/* M (1..8) output pixels from the block of 8 stored pixels starting at BASE (the lowest address; in
 * reverse order when flipped), its planes PS bytes apart (NCHW): the first M, or with LAST (NCHW
 * output) the last M. ONLY >= 0 (NCHW output): that channel's group alone (one plane at a time). */
INLINE void block(const img_job *j, sink *sk, const uint8_t *base, ptrdiff_t ps, int m, const int C, const int nhwc_in,
                  const int nhwc_out, const int only, const int last)
{
    __m128i lo, hi = _mm_setzero_si128(), o0, o1 = _mm_setzero_si128();
    if (!nhwc_in && only >= 0) { /* one plane: its 8 bytes, reversed when flipped */
        lo = _mm_loadl_epi64((const __m128i *)(const void *)(base + only * ps));
        o0 = j->d.flip ? _mm_shuffle_epi8(lo, _mm_setr_epi8(7, 6, 5, 4, 3, 2, 1, 0, 8, 9, 10, 11, 12, 13, 14, 15)) : lo;
        put_group(sk, last8(last, convert8(j, o0, only, C, nhwc_out)), only, m, C, nhwc_out);
        return;
    }
    if (nhwc_in) {
        if (C == 1)
            lo = _mm_loadl_epi64((const __m128i *)(const void *)base);
        else
            lo = _mm_loadu_si128((const __m128i *)(const void *)base);
        if (C == 3)
            hi = _mm_loadl_epi64((const __m128i *)(const void *)(base + 16));
        else if (C == 4)
            hi = _mm_loadu_si128((const __m128i *)(const void *)(base + 16));
    } else {
        __m128i p[4];
        for (int c = 0; c < 4; c++)
            p[c] = c < C ? _mm_loadl_epi64((const __m128i *)(const void *)(base + c * ps)) : _mm_setzero_si128();
        lo = _mm_unpacklo_epi64(p[0], p[1]), hi = _mm_unpacklo_epi64(p[2], p[3]);
    }
    if (only >= 0) { /* NHWC stored, one NCHW plane */
        o0 = reorder(j, lo, hi, only / 2);
        o0 = only % 2 ? _mm_unpackhi_epi64(o0, o0) : o0;
        put_group(sk, last8(last, convert8(j, o0, only, C, nhwc_out)), only, m, C, nhwc_out);
        return;
    }
    if (nhwc_in == nhwc_out && !j->d.flip) {
        o0 = lo, o1 = hi;
    } else {
        o0 = reorder(j, lo, hi, 0);
        if (C > 2)
            o1 = reorder(j, lo, hi, 1);
    }
    put_group(sk, last8(last, convert8(j, o0, 0, C, nhwc_out)), 0, m, C, nhwc_out);
    if (C > 1)
        put_group(sk, last8(last, convert8(j, _mm_unpackhi_epi64(o0, o0), 1, C, nhwc_out)), 1, m, C, nhwc_out);
    if (C > 2)
        put_group(sk, last8(last, convert8(j, o1, 2, C, nhwc_out)), 2, m, C, nhwc_out);
    if (C > 3)
        put_group(sk, last8(last, convert8(j, _mm_unpackhi_epi64(o1, o1), 3, C, nhwc_out)), 3, m, C, nhwc_out);
}

/* The last M (< 8) pixels of a run, from SRC on: copied into a local block first, so that no load
 * reaches past the row. */
INLINE void tail(const img_job *j, sink *sk, const uint8_t *src, int m, const int C, const int nhwc_in,
                 const int nhwc_out, const int only)
{
    ptrdiff_t step = j->d.flip ? -j->xs : j->xs;
    uint8_t tmp[32] __attribute__((aligned(16))) = {0};
    for (int q = 0; q < m; q++) {
        int at = j->d.flip ? 7 - q : q; /* the pixel's place in the block */
        const uint8_t *px = src + (ptrdiff_t)q * step;
        for (int c = 0; c < C; c++)
            if (only < 0 || c == only || nhwc_in)
                tmp[nhwc_in ? at * C + c : c * 8 + at] = px[nhwc_in ? c : c * j->ps];
    }
    block(j, sk, tmp, 8, m, C, nhwc_in, nhwc_out, only, 0); /* the local block's planes follow each other at 8 bytes */
}

/* NCHW from NCHW, the plane's blocks aligned (P 0): pixels K.. of the run from plane pointer P (group
 * G) as whole blocks in the tightest loop (convert8's expression, no sink bookkeeping: the previous
 * kernel's loop); returns the next pixel. */
#define PLANE_LOOP(LOAD, STORE)                                                                          \
    for (; k + 8 <= n; k += 8, d += 8) {                                                                 \
        __m256 x = _mm256_div_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(LOAD)), k255);                  \
        STORE(d, _mm256_div_ps(_mm256_sub_ps(x, mean), std));                                            \
    }
#define FLIPPED_LOAD _mm_shuffle_epi8(_mm_loadl_epi64((const __m128i *)(const void *)(p - k - 7)), rev)
#define PLAIN_LOAD _mm_loadl_epi64((const __m128i *)(const void *)(p + k))

INLINE int plane_run(const img_job *j, sink *s, const uint8_t *p, int g, int k, int n)
{
    const __m256 k255 = _mm256_set1_ps(255.0f);
    const __m256 mean = _mm256_loadu_ps(j->pl->mean[g]), std = _mm256_loadu_ps(j->pl->std[g]);
    const __m128i rev = _mm_setr_epi8(7, 6, 5, 4, 3, 2, 1, 0, 8, 9, 10, 11, 12, 13, 14, 15);
    float *d = s->dst;
    if (j->d.flip && s->stream)
        PLANE_LOOP(FLIPPED_LOAD, _mm256_stream_ps)
    else if (j->d.flip)
        PLANE_LOOP(FLIPPED_LOAD, _mm256_store_ps)
    else if (s->stream)
        PLANE_LOOP(PLAIN_LOAD, _mm256_stream_ps)
    else
        PLANE_LOOP(PLAIN_LOAD, _mm256_store_ps)
    s->dst = d;
    return k;
}
#undef PLANE_LOOP
#undef FLIPPED_LOAD
#undef PLAIN_LOAD

/* N output pixels whose stored pixels are consecutive from SRC (step +1 pixel, -1 when flipped). */
INLINE void run(img_job *j, const uint8_t *src, int n, const int C, const int nhwc_in, const int nhwc_out,
                const int only)
{
    ptrdiff_t xs = j->xs, step = j->d.flip ? -xs : xs;
    sink sk[4]; /* a local copy of the runs written (kept in registers through the loop) */
    const int g0 = only >= 0 ? only : 0, g1 = only >= 0 ? only + 1 : (nhwc_out ? 1 : C);
    for (int g = g0; g < g1; g++)
        sk[g] = j->sk[g];
    int k = 0;
    if (only >= 0 && n >= 16 && sk[only].p != 0) { /* a first partial block aligns the plane's blocks */
        k = 8 - sk[only].p;
        block(j, sk, j->d.flip ? src - 7 * xs : src, j->ps, k, C, nhwc_in, nhwc_out, only, 0);
    }
    if (!nhwc_in && only >= 0 && sk[only].p == 0 && j->pl->mode == H5PACK_CONV_ARITH)
        k = plane_run(j, &sk[only], src + only * j->ps, only, k, n);
    if (j->d.flip)
        for (; k + 8 <= n; k += 8)
            block(j, sk, src - (ptrdiff_t)(k + 7) * xs, j->ps, 8, C, nhwc_in, nhwc_out, only, 0);
    else
        for (; k + 8 <= n; k += 8)
            block(j, sk, src + (ptrdiff_t)k * xs, j->ps, 8, C, nhwc_in, nhwc_out, only, 0);
    int m = n - k;
    if (m > 0 && !nhwc_out && n >= 8) /* NCHW output: the row's last 8 pixels, the last M of them kept */
        block(j, sk, j->d.flip ? src - (ptrdiff_t)(n - 1) * xs : src + (ptrdiff_t)(n - 8) * xs, j->ps, m, C, nhwc_in,
              nhwc_out, only, m);
    else if (m > 0)
        tail(j, sk, src + (ptrdiff_t)k * step, m, C, nhwc_in, nhwc_out, only);
    for (int g = g0; g < g1; g++)
        j->sk[g] = sk[g];
}

/* Stored bytes staged per chunk of output pixels (flipped or padded images): well inside L1. */
#define STAGE_BYTES 8192

/* All output pixels into the runs of J, channel ONLY's plane alone when ONLY >= 0. Unflipped and
 * unpadded, the whole image is one run of H x W pixels, stored and delivered in the same order; else the
 * stored bytes of up to STAGE_BYTES / C output pixels at a time are put in output order first
 * (h5pack_conv_avx2_stage) and converted as such a run (chunks of 8k pixels: the runs stay aligned). */
INLINE void rows(img_job *j, const uint8_t *src, const int C, const int nhwc_in, const int nhwc_out, const int only)
{
    const backend_conv *cv = j->cv;
    size_t total = cv->H * cv->W;
    if (!j->d.flip && cv->pad == 0) {
        run(j, src, (int)total, C, nhwc_in, nhwc_out, only);
        return;
    }
    uint8_t stage[STAGE_BYTES + 16] __attribute__((aligned(32)));
    const size_t chunk = STAGE_BYTES / C / 8 * 8;
    const int c0 = only >= 0 ? only : 0, c1 = only >= 0 ? only + 1 : C;
    img_job s = *j; /* the staged pixels: unflipped, C bytes per pixel (NHWC) or planes of N bytes */
    s.d.flip = 0, s.xs = nhwc_in ? C : 1;
    for (size_t q = 0; q < total; q += chunk) {
        size_t n = total - q < chunk ? total - q : chunk;
        h5pack_conv_avx2_stage(cv, j->d, src, q, n, c0, c1, stage);
        s.ps = (ptrdiff_t)n;
        run(&s, stage, (int)n, C, nhwc_in, nhwc_out, only);
    }
    for (int g = 0; g < 4; g++)
        j->sk[g] = s.sk[g];
}

INLINE void image(const backend_conv *cv, aug_draw d, const uint8_t *src, float *dst, int stream, const int C,
                  const int nhwc_in, const int nhwc_out)
{
    img_job j = {.cv = cv, .pl = &cv->simd, .d = d, .xs = cv->in.x, .ps = cv->in.c};
    size_t plane = cv->H * cv->W;
    for (int c = 0; c < (nhwc_out ? 1 : C); c++)
        sink_init(&j.sk[c], dst + (size_t)c * plane, stream);
    if (nhwc_in || nhwc_out) {
        rows(&j, src, C, nhwc_in, nhwc_out, -1);
    } else { /* NCHW from NCHW: one plane at a time, one stream in and one out (measured faster) */
        rows(&j, src, C, nhwc_in, nhwc_out, 0);
        if (C > 1)
            rows(&j, src, C, nhwc_in, nhwc_out, 1);
        if (C > 2)
            rows(&j, src, C, nhwc_in, nhwc_out, 2);
        if (C > 3)
            rows(&j, src, C, nhwc_in, nhwc_out, 3);
    }
    for (int c = 0; c < (nhwc_out ? 1 : C); c++)
        sink_finish(&j.sk[c]);
}

typedef void (*image_fn)(const backend_conv *, aug_draw, const uint8_t *, float *, int);
#define SPECIALISE(C, I, O)                                                                             \
    static AVX2 void image_##C##I##O(const backend_conv *cv, aug_draw d, const uint8_t *s, float *o, int st) \
    {                                                                                                   \
        image(cv, d, s, o, st, C, I, O);                                                                \
    }
#define SPECIALISE_C(C) SPECIALISE(C, 0, 0) SPECIALISE(C, 0, 1) SPECIALISE(C, 1, 0) SPECIALISE(C, 1, 1)
SPECIALISE(1, 0, 0)
SPECIALISE_C(2)
SPECIALISE_C(3)
SPECIALISE_C(4)
/* [C - 1][NHWC stored][NHWC output]; one channel: both layouts are the same bytes */
static const image_fn IMAGE_FNS[4][2][2] = {{{image_100, image_100}, {image_100, image_100}},
                                            {{image_200, image_201}, {image_210, image_211}},
                                            {{image_300, image_301}, {image_310, image_311}},
                                            {{image_400, image_401}, {image_410, image_411}}};

void h5pack_conv_avx2_image(const backend_conv *cv, aug_draw d, const uint8_t *src, float *dst, int stream)
{
    int nhwc_in = cv->in.c == 1 && cv->C > 1, nhwc_out = cv->out.c == 1 && cv->C > 1;
    IMAGE_FNS[cv->C - 1][nhwc_in][nhwc_out](cv, d, src, dst, stream);
}

int h5pack_conv_avx2_supported(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
}

/* 1 when ARITH gives CV's table bit for bit for every input of every channel (one NCHW row of 256). */
static AVX2 int arith_exact(const backend_conv *cv)
{
    for (size_t c = 0; c < cv->C; c++)
        for (int v = 0; v < 256; v += 8) {
            __m128i b = _mm_setr_epi8((char)v, (char)(v + 1), (char)(v + 2), (char)(v + 3), (char)(v + 4),
                                      (char)(v + 5), (char)(v + 6), (char)(v + 7), 0, 0, 0, 0, 0, 0, 0, 0);
            __m256 x = _mm256_div_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(b)), _mm256_set1_ps(255.0f));
            x = _mm256_div_ps(_mm256_sub_ps(x, _mm256_set1_ps(cv->mean[c])), _mm256_set1_ps(cv->std[c]));
            uint32_t got[8];
            _mm256_storeu_ps((float *)(void *)got, x);
            if (memcmp(got, &cv->t32[c][v], sizeof got) != 0)
                return 0;
        }
    return 1;
}
#else
int h5pack_conv_avx2_supported(void)
{
    return 0;
}

void h5pack_conv_avx2_image(const backend_conv *cv, aug_draw d, const uint8_t *src, float *dst, int stream)
{
    (void)cv, (void)d, (void)src, (void)dst, (void)stream; /* never called: mode is SCALAR */
}
#endif

/* Stored byte index, in an 8-pixel block as loaded, of channel C of block pixel P. */
static int stored_at(const backend_conv *cv, int nhwc_in, int p, int c)
{
    return nhwc_in ? p * (int)cv->C + c : c * 8 + p;
}

void h5pack_conv_avx2_prepare(backend_conv *cv)
{
    conv_avx2_plan *pl = &cv->simd;
    memset(pl, 0, sizeof *pl);
    if (cv->dtype != H5PACK_DTYPE_FLOAT32 || cv->C < 1 || cv->C > 4 || !h5pack_conv_avx2_supported())
        return;
    int C = (int)cv->C, nhwc_in = cv->in.c == 1 && C > 1, nhwc_out = cv->out.c == 1 && C > 1;
    for (int flip = 0; flip < 2; flip++)
        for (int q = 0; q < 32; q++) { /* output byte q of the block: group q / 8 */
            int op = nhwc_out ? q / C : q % 8, oc = nhwc_out ? q % C : q / 8;
            int s = q < 8 * C ? stored_at(cv, nhwc_in, flip ? 7 - op : op, oc) : -1;
            pl->shuf[flip][q / 16][0][q % 16] = (uint8_t)(s >= 0 && s < 16 ? s : 0x80);
            pl->shuf[flip][q / 16][1][q % 16] = (uint8_t)(s >= 16 ? s - 16 : 0x80);
        }
    for (int g = 0; g < C; g++)
        for (int k = 0; k < 8; k++) {
            int c = nhwc_out ? (8 * g + k) % C : g;
            pl->mean[g][k] = cv->mean[c], pl->std[g][k] = cv->std[c];
        }
#if defined(__x86_64__) && defined(__GNUC__)
    pl->mode = arith_exact(cv) ? H5PACK_CONV_ARITH : H5PACK_CONV_TABLE;
#endif
}
