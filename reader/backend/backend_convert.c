/* backend_convert.c - one stored uint8 image -> its place in the output batch (see backend_convert.h),
 * and the reference conversion of a batch built on it.
 *
 * Every output element is table[c][v] (or table[c][0] in the crop padding): the arithmetic happens once,
 * on the host, in float32, so every path and both backends give bit-identical results. A float32 output
 * is 4 bytes written per byte read: the loops are bound by stores. Where the CPU has AVX2, float32
 * images go through backend_convert_avx2.c (every layout pair, flip and padding, eight lanes at a time,
 * the same bits). The table loops below are the fallback and the reference the tests compare it with;
 * their contiguous float32 runs (NCHW output) go through SSE2: four lookups packed into one 16-byte
 * non-temporal store when the batch outgrows the caches (no read-for-ownership of lines the consumer
 * reads much later, if at all, from this core). */
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "augment.h"
#include "augment_geom.h"
#include "backend_convert.h"

/* Batches of float32 output at least this large are written with non-temporal stores: they cannot stay
 * in the caches until the consumer reads them. */
#define STREAM_MIN_BATCH_BYTES ((size_t)8 << 20)

/* One image's draw and the conversion's geometry, for the per-type loops below. */
typedef struct image_job {
    const backend_conv *cv;
    size_t C, H, W;
    backend_strides in, out;
    aug_draw draw;
    int pad;
    int stream;
} image_job;

static backend_strides layout_strides(h5pack_layout layout, size_t C, size_t H, size_t W)
{
    backend_strides s;
    if (layout == H5PACK_LAYOUT_NHWC) {
        s.x = (ptrdiff_t)C, s.c = 1, s.y = (ptrdiff_t)(W * C);
    } else {
        s.x = 1, s.c = (ptrdiff_t)(H * W), s.y = (ptrdiff_t)W;
    }
    return s;
}

/* d[k] = t[s[k]] for k < N: the aligned body with 16-byte non-temporal stores of four lookups each. */
static void stream_run32(const uint32_t *restrict t, const uint8_t *restrict s, uint32_t *restrict d, size_t n)
{
    size_t k = 0;
#ifdef __SSE2__
    for (; k < n && ((uintptr_t)(d + k) & 15); k++)
        d[k] = t[s[k]];
    for (; k + 8 <= n; k += 8) {
        const uint8_t *q = s + k;
        __m128i a = _mm_setr_epi32((int)t[q[0]], (int)t[q[1]], (int)t[q[2]], (int)t[q[3]]);
        __m128i b = _mm_setr_epi32((int)t[q[4]], (int)t[q[5]], (int)t[q[6]], (int)t[q[7]]);
        _mm_stream_si128((__m128i *)(void *)(d + k), a);
        _mm_stream_si128((__m128i *)(void *)(d + k + 4), b);
    }
#endif
    for (; k < n; k++)
        d[k] = t[s[k]];
}


/* A contiguous output run of N elements of channel CH from source step IS. J->stream (whole planes
 * only: mixing non-temporal and ordinary stores in one cache line, as padded rows would, is slow):
 * non-temporal stores. */
static void contig_uint32_t(const image_job *j, int ch, const uint32_t *restrict t, const uint8_t *restrict s,
                            ptrdiff_t is, uint32_t *restrict d, size_t n)
{
    (void)ch;
    if (j->stream && is == 1)
        stream_run32(t, s, d, n);
    else if (is == 1)
        for (size_t k = 0; k < n; k++)
            d[k] = t[s[k]];
    else
        for (size_t k = 0; k < n; k++)
            d[k] = t[s[(ptrdiff_t)k * is]];
}

#define DEFINE_CONTIG(T)                                                                                \
    static void contig_##T(const image_job *j, int ch, const T *t, const uint8_t *s, ptrdiff_t is, T *d, \
                           size_t n)                                                                    \
    {                                                                                                   \
        (void)j, (void)ch;                                                                              \
        if (is == 1)                                                                                    \
            for (size_t k = 0; k < n; k++)                                                              \
                d[k] = t[s[k]];                                                                         \
        else                                                                                            \
            for (size_t k = 0; k < n; k++)                                                              \
                d[k] = t[s[(ptrdiff_t)k * is]];                                                         \
    }
DEFINE_CONTIG(uint16_t)
DEFINE_CONTIG(uint8_t)

/* The conversion loops, instantiated for 32-bit (float32 bit patterns), 16-bit and 8-bit elements.
 *   whole_: no augmentation and the same layout: one table lookup per byte over the whole image.
 *   fill_:  a run of output pixels in the padding.
 *   run_:   N output pixels whose sources are consecutive columns (step +1, or -1 when flipped). */
#define DEFINE_CONVERT(T)                                                                             \
    static void whole_##T(const image_job *j, const T (*tab)[256], const uint8_t *in, T *out)         \
    {                                                                                                 \
        size_t plane = j->H * j->W;                                                                   \
        if (j->in.c != 1) { /* NCHW: each channel plane is one contiguous run */                    \
            for (size_t c = 0; c < j->C; c++)                                                         \
                contig_##T(j, (int)c, tab[c], in + c * plane, 1, out + c * plane, plane);             \
        } else if (j->C == 3) {                                                                       \
            for (size_t k = 0; k < plane; k++) {                                                      \
                out[3 * k] = tab[0][in[3 * k]];                                                       \
                out[3 * k + 1] = tab[1][in[3 * k + 1]];                                               \
                out[3 * k + 2] = tab[2][in[3 * k + 2]];                                               \
            }                                                                                         \
        } else {                                                                                      \
            for (size_t k = 0; k < plane; k++)                                                        \
                for (size_t c = 0; c < j->C; c++)                                                     \
                    out[k * j->C + c] = tab[c][in[k * j->C + c]];                                     \
        }                                                                                             \
    }                                                                                                 \
    static void fill_##T(const image_job *j, const T (*tab)[256], T *out, size_t n)                   \
    {                                                                                                 \
        for (size_t c = 0; c < j->C; c++)                                                             \
            for (size_t k = 0; k < n; k++)                                                            \
                out[(ptrdiff_t)c * j->out.c + (ptrdiff_t)k * j->out.x] = tab[c][0];                   \
    }                                                                                                 \
    static void run_##T(const image_job *j, const T (*tab)[256], const uint8_t *in, ptrdiff_t step,   \
                        T *out, size_t n)                                                             \
    {                                                                                                 \
        ptrdiff_t is = step * j->in.x, os = j->out.x;                                                 \
        if (j->C == 3 && is != 1) { /* RGB from NHWC or flipped: one pass, three output streams */    \
            ptrdiff_t ic = j->in.c;                                                                   \
            T *d0 = out, *d1 = out + j->out.c, *d2 = out + 2 * j->out.c;                              \
            for (size_t k = 0; k < n; k++) {                                                          \
                const uint8_t *px = in + (ptrdiff_t)k * is;                                           \
                d0[(ptrdiff_t)k * os] = tab[0][px[0]];                                                \
                d1[(ptrdiff_t)k * os] = tab[1][px[ic]];                                               \
                d2[(ptrdiff_t)k * os] = tab[2][px[2 * ic]];                                           \
            }                                                                                         \
            return;                                                                                   \
        }                                                                                             \
        for (size_t c = 0; c < j->C; c++) {                                                           \
            const T *t = tab[c];                                                                      \
            const uint8_t *s = in + (ptrdiff_t)c * j->in.c;                                           \
            T *d = out + (ptrdiff_t)c * j->out.c;                                                     \
            if (os == 1) {                                                                            \
                contig_##T(j, (int)c, t, s, is, d, n);                                                \
            } else {                                                                                  \
                for (size_t k = 0; k < n; k++)                                                        \
                    d[(ptrdiff_t)k * os] = t[s[(ptrdiff_t)k * is]];                                   \
            }                                                                                         \
        }                                                                                             \
    }                                                                                                 \
    static void row_##T(const image_job *j, const T (*tab)[256], const uint8_t *in, T *out, int y)    \
    {                                                                                                 \
        T *orow = out + (ptrdiff_t)y * j->out.y;                                                      \
        int sy = aug_src_y(j->draw, y, j->pad), W = (int)j->W;                                        \
        if (sy < 0 || sy >= (int)j->H) {                                                              \
            fill_##T(j, tab, orow, j->W);                                                             \
            return;                                                                                   \
        }                                                                                             \
        /* Output columns [x0, x1) have their source inside the image; the rest is padding. */        \
        int shift = j->draw.ox - j->pad;                                                              \
        int x0 = j->draw.flip ? shift : -shift, x1 = j->draw.flip ? W + shift : W - shift;            \
        x0 = x0 < 0 ? 0 : (x0 > W ? W : x0);                                                          \
        x1 = x1 > W ? W : (x1 < x0 ? x0 : x1);                                                        \
        fill_##T(j, tab, orow, (size_t)x0);                                                           \
        if (x1 > x0) {                                                                                \
            int sx0 = aug_src_x(j->draw, x0, W, j->pad);                                              \
            const uint8_t *src = in + (ptrdiff_t)sy * j->in.y + (ptrdiff_t)sx0 * j->in.x;             \
            run_##T(j, tab, src, j->draw.flip ? -1 : 1, orow + (ptrdiff_t)x0 * j->out.x,              \
                    (size_t)(x1 - x0));                                                               \
        }                                                                                             \
        fill_##T(j, tab, orow + (ptrdiff_t)x1 * j->out.x, (size_t)(W - x1));                          \
    }                                                                                                 \
    static void image_##T(const image_job *j, const T (*tab)[256], const uint8_t *in, T *out)         \
    {                                                                                                 \
        int augmented = j->draw.flip || j->pad > 0;                                                   \
        if (!augmented && j->cv->same_layout) {                                                       \
            whole_##T(j, tab, in, out);                                                               \
            return;                                                                                   \
        }                                                                                             \
        for (int y = 0; y < (int)j->H; y++)                                                           \
            row_##T(j, tab, in, out, y);                                                              \
    }

DEFINE_CONVERT(uint32_t)
DEFINE_CONVERT(uint16_t)
DEFINE_CONVERT(uint8_t)

void h5pack_backend_conv_init(backend_conv *cv, const backend_params *p)
{
    memset(cv, 0, sizeof *cv);
    cv->dtype = p->dtype;
    cv->C = p->channels, cv->H = p->height, cv->W = p->width;
    cv->in = layout_strides(p->in_layout, cv->C, cv->H, cv->W);
    cv->out = layout_strides(p->out_layout, cv->C, cv->H, cv->W);
    cv->same_layout = p->in_layout == p->out_layout;
    cv->raw = p->dtype == H5PACK_DTYPE_UINT8;
    cv->pad = cv->raw || p->crop_padding < 0 ? 0 : p->crop_padding;
    cv->flip = !cv->raw && p->random_flip;
    cv->in_bytes = cv->C * cv->H * cv->W;
    cv->out_bytes = h5pack_backend_output_image_bytes(p);
    cv->stream = p->dtype == H5PACK_DTYPE_FLOAT32 && cv->out_bytes * p->batch_size >= STREAM_MIN_BATCH_BYTES;
    if (cv->raw) {
        for (int c = 0; c < H5PACK_MAX_CHANNELS; c++)
            for (int v = 0; v < 256; v++)
                cv->t8[c][v] = (uint8_t)v;
        return;
    }
    float f32[H5PACK_MAX_CHANNELS][256];
    h5pack_backend_build_table(p, f32, cv->t16);
    memcpy(cv->t32, f32, sizeof f32);
    memcpy(cv->mean, p->mean, sizeof cv->mean);
    memcpy(cv->std, p->std, sizeof cv->std);
    h5pack_conv_avx2_prepare(cv);
}

void h5pack_backend_conv_image(const backend_conv *cv, const uint8_t *src, void *out, size_t i, uint64_t key)
{
    image_job j = {.cv = cv, .C = cv->C, .H = cv->H, .W = cv->W, .in = cv->in, .out = cv->out, .pad = cv->pad,
                   .stream = cv->stream};
    j.draw = aug_draw_for(key, i, cv->flip, cv->pad);
    j.stream = cv->stream && cv->same_layout && !j.draw.flip && cv->pad == 0; /* whole planes only */
    void *dst = (uint8_t *)out + i * cv->out_bytes;
    if (cv->dtype == H5PACK_DTYPE_FLOAT32 && cv->simd.mode != H5PACK_CONV_SCALAR) {
        h5pack_conv_avx2_image(cv, j.draw, src, dst, cv->stream);
        j.stream = cv->stream; /* every line of the image, head and tail blocks aside */
    } else if (cv->raw && cv->same_layout)
        memcpy(dst, src, cv->in_bytes);
    else if (cv->dtype == H5PACK_DTYPE_FLOAT32)
        image_uint32_t(&j, (const uint32_t(*)[256])cv->t32, src, dst);
    else if (cv->raw)
        image_uint8_t(&j, (const uint8_t(*)[256])cv->t8, src, dst);
    else
        image_uint16_t(&j, (const uint16_t(*)[256])cv->t16, src, dst);
#ifdef __SSE2__
    if (j.stream) /* the non-temporal stores are visible before the batch is handed on */
        _mm_sfence();
#endif
}

void h5pack_backend_convert_ref(const backend_params *p, const uint8_t *in, const uint8_t *const *srcs, void *out,
                                size_t first, size_t n, uint64_t key)
{
    backend_conv cv;
    h5pack_backend_conv_init(&cv, p);
    for (size_t i = first; i < first + n; i++)
        h5pack_backend_conv_image(&cv, srcs ? srcs[i] : in + i * cv.in_bytes, out, i, key);
}
