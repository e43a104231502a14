/* decode_jpeg.c - JPEG bytes -> RGB or gray pixels with libjpeg-turbo's TurboJPEG API (2.1: tj* calls).
 *
 * - The header is read first and width*height checked against max_pixels before any allocation.
 * - Full-size decode by default, so decode + fit gives PIL's pixels exactly. With dct_scaling (--jpeg-scale
 *   dct) and a target size: DCT scaling (M/8), the smallest scale whose result still needs downscaling
 *   (never upscaling) to reach the target, so the resizer always filters down.
 * - Progressive files with more than 500 scans are rejected (TJFLAG_LIMITSCANS): a known CPU bomb.
 * - CMYK/YCCK: decoded to CMYK and converted like PIL (Adobe inverted CMYK: R = C*K/255, ...).
 * - Warnings: libjpeg recovers from many damaged streams and TurboJPEG then returns -1 with a warning.
 *   Warnings that mean pixels were lost (the file ends early: "Premature end of JPEG file"; the image data
 *   of a scan ends early: "premature end of data segment"; bad Huffman/arithmetic codes; a lost restart
 *   marker) make the image IMAGE_CORRUPT instead of silently grey or garbled: stricter than PIL, which
 *   loads all but the first. Warnings about harmless irregularities (extraneous bytes between markers,
 *   odd SOS parameters or progression, unknown Adobe transform or JFIF revision, a bad ICC marker) are
 *   accepted. Only libjpeg's first warning text is available, so a file whose first warning is harmless
 *   and a later one is not is accepted: documented in docs/images.md.
 */
#include "image_internal.h"

#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

static int has(const char *msg, const char *needle)
{
    return msg && strstr(msg, needle) != NULL;
}

/* libjpeg messages for encodings this libjpeg-turbo build cannot decode. */
static int is_unsupported_encoding(const char *msg)
{
    return has(msg, "Unsupported JPEG data precision") || has(msg, "Unsupported JPEG process") ||
           has(msg, "arithmetic coding is not supported") || has(msg, "Unsupported color conversion") ||
           has(msg, "Could not determine subsampling");
}

/* Warnings about harmless irregularities: every pixel was decoded (see the file comment). */
static int is_harmless_warning(const char *msg)
{
    return has(msg, "extraneous bytes before marker") || has(msg, "Invalid SOS parameters for sequential JPEG") ||
           has(msg, "Inconsistent progression sequence") || has(msg, "Unknown Adobe color transform") ||
           has(msg, "unknown JFIF revision") || has(msg, "bad ICC marker");
}

image_status image_jpeg_message_status(const char *msg, int warning, const char *stage, char *why, size_t why_len)
{
    if (warning && is_harmless_warning(msg))
        return IMAGE_OK;
    if (is_unsupported_encoding(msg)) {
        image_why(why, why_len, "unsupported JPEG encoding (%s)", msg);
        return IMAGE_UNSUPPORTED;
    }
    if (has(msg, "Premature end of JPEG file") || has(msg, "premature end of data segment")) {
        return image_decode_failure("JPEG", 1, msg, why, why_len);
    }
    image_why(why, why_len, "corrupt JPEG %s (%s)", stage, msg ? msg : "no message");
    return IMAGE_CORRUPT;
}

/* A failed tj call: warnings libjpeg recovered from are accepted; else classified into a status. */
static image_status tj_failure(tjhandle tj, const char *stage, char *why, size_t why_len)
{
    return image_jpeg_message_status(tjGetErrorStr2(tj), tjGetErrorCode(tj) == TJERR_WARNING, stage, why, why_len);
}

/* With dct_scaling: the smallest DCT scale M/8 (M <= 8) whose output still needs no upscaling to reach
 * the target. Without: 8/8, the full-size decode PIL does. */
static tjscalingfactor pick_scale(int w, int h, const decode_opts *o)
{
    tjscalingfactor best = {1, 1};
    if (!o->dct_scaling || !o->target_h || !o->target_w)
        return best;
    int n = 0;
    const tjscalingfactor *sf = tjGetScalingFactors(&n);
    uint64_t best_pixels = (uint64_t)w * (uint64_t)h;
    for (int i = 0; sf && i < n; i++) {
        if (sf[i].num > sf[i].denom)
            continue; /* enlarging factors */
        uint32_t sw = (uint32_t)TJSCALED(w, sf[i]), sh = (uint32_t)TJSCALED(h, sf[i]);
        if ((uint64_t)sw * sh < best_pixels && image_fit_needs_no_upscale(sh, sw, o->target_h, o->target_w, o->mode)) {
            best = sf[i];
            best_pixels = (uint64_t)sw * sh;
        }
    }
    return best;
}

/* CMYK as stored by Adobe (inverted: 255 = no ink), converted in place to RGB or gray, like PIL's
 * convert('RGB') of a CMYK JPEG (which always assumes the Adobe convention). */
void image_cmyk_to_channels(uint8_t *buf, size_t npix, uint32_t channels)
{
    for (size_t i = 0; i < npix; i++) {
        const uint8_t *p = buf + 4 * i; /* reads stay ahead of writes: in place is safe */
        uint32_t k = p[3];
        uint8_t r = (uint8_t)(k - image_muldiv255(255u - p[0], k));
        uint8_t g = (uint8_t)(k - image_muldiv255(255u - p[1], k));
        uint8_t b = (uint8_t)(k - image_muldiv255(255u - p[2], k));
        if (channels == 1) {
            buf[i] = image_rgb_to_luma(r, g, b);
        } else {
            buf[3 * i] = r;
            buf[3 * i + 1] = g;
            buf[3 * i + 2] = b;
        }
    }
}

image_status image_decode_jpeg(const uint8_t *data, size_t len, const decode_opts *opts, image_u8 *out, char *why,
                               size_t why_len)
{
    image_status st = IMAGE_NOMEM;
    uint8_t *buf = NULL;
    tjhandle tj = tjInitDecompress();
    if (!tj) {
        image_why(why, why_len, "cannot create a TurboJPEG decompressor (%s)", tjGetErrorStr2(NULL));
        goto fail;
    }
    int w = 0, h = 0, subsamp = 0, cs = 0;
    if (tjDecompressHeader3(tj, data, (unsigned long)len, &w, &h, &subsamp, &cs) != 0 &&
        (st = tj_failure(tj, "header", why, why_len)) != IMAGE_OK)
        goto fail;
    if (w <= 0 || h <= 0) { /* TurboJPEG accepts a tables-only stream: no frame header was found */
        st = IMAGE_CORRUPT;
        image_why(why, why_len, "no image in the JPEG data (truncated before the frame header?)");
        goto fail;
    }
    if ((st = image_check_pixels("JPEG", (uint64_t)w, (uint64_t)h, opts, why,
                                 why_len)) != IMAGE_OK)
        goto fail;
    tjscalingfactor sf = pick_scale(w, h, opts);
    int sw = TJSCALED(w, sf), sh = TJSCALED(h, sf);
    int cmyk = cs == TJCS_CMYK || cs == TJCS_YCCK;
    int pf = cmyk ? TJPF_CMYK : opts->channels == 1 ? TJPF_GRAY : TJPF_RGB;
    size_t npix = (size_t)sw * (size_t)sh;
    buf = malloc(npix * (size_t)tjPixelSize[pf]);
    if (!buf) {
        st = IMAGE_NOMEM;
        image_why(why, why_len, "cannot allocate %dx%d JPEG pixels", sw, sh);
        goto fail;
    }
    /* LIMITSCANS: a progressive file with more than 500 scans (a CPU bomb; real ones have about 10) fails. */
    if (tjDecompress2(tj, data, (unsigned long)len, buf, sw, 0, sh, pf, TJFLAG_LIMITSCANS) != 0 &&
        (st = tj_failure(tj, "data", why, why_len)) != IMAGE_OK)
        goto fail;
    if (cmyk)
        image_cmyk_to_channels(buf, npix, opts->channels);
    out->pixels = buf;
    out->width = (uint32_t)sw;
    out->height = (uint32_t)sh;
    out->channels = opts->channels;
    tjDestroy(tj);
    return IMAGE_OK;
fail:
    free(buf);
    if (tj)
        tjDestroy(tj);
    return st;
}
