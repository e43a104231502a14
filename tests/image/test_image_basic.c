/* test_image_basic - the image code on inputs made here with TurboJPEG and libpng: round trips, CMYK/YCCK
 * conversion, max_pixels at the boundary, the DCT scale choice, and the geometry of every fit mode.
 * (Pixel agreement with PIL for many more encodings is in check_vs_pil.py.) */
#include "image_internal.h"
#include "image_testutil.h"

static double mean_abs_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += a[i] > b[i] ? a[i] - b[i] : b[i] - a[i];
    return s / (double)n;
}

static image_u8 decode_ok(const blob *b, const decode_opts *o)
{
    image_u8 img;
    char why[256] = "";
    image_status st = image_decode(b->data, b->len, o, &img, why, sizeof why);
    CHECK_MSG(st == IMAGE_OK, "decode: %s: %s", image_status_text(st), why);
    return img;
}

static void test_jpeg_roundtrip(void)
{
    decode_opts o = default_opts();
    int subsamps[] = {TJSAMP_444, TJSAMP_422, TJSAMP_420, TJSAMP_440, TJSAMP_411};
    const char *names[] = {"4:4:4", "4:2:2", "4:2:0", "4:4:0", "4:1:1"};
    uint8_t *src = make_pixels(120, 80, 3);
    for (int i = 0; i < 5; i++) {
        blob b = make_jpeg_pf(120, 80, TJPF_RGB, subsamps[i], 98, 0);
        image_u8 img = decode_ok(&b, &o);
        CHECK(img.width == 120 && img.height == 80 && img.channels == 3);
        double d = mean_abs_diff(img.pixels, src, (size_t)120 * 80 * 3);
        printf("JPEG %s q98 round trip: mean abs diff %.3f\n", names[i], d);
        CHECK(d < 6.0); /* chroma subsampling of a pattern with sharp colour edges: measured 0.6 to 3.8 */
        image_free(&img);
        free(b.data);
    }
    free(src);
    blob b;
    image_u8 img;
    double d;

    b = make_jpeg_pf(64, 40, TJPF_GRAY, TJSAMP_GRAY, 98, 0);
    o.channels = 1;
    img = decode_ok(&b, &o);
    src = make_pixels(64, 40, 1);
    d = mean_abs_diff(img.pixels, src, (size_t)64 * 40);
    printf("JPEG gray q98 round trip: mean abs diff %.3f\n", d);
    CHECK(img.channels == 1 && d < 2.0);
    free(src);
    image_free(&img);
    free(b.data);
}

/* YCCK (TurboJPEG writes CMYK input as YCCK): our RGB = PIL's formula applied to libjpeg's CMYK. */
static void test_ycck(void)
{
    blob b = make_jpeg_pf(48, 32, TJPF_CMYK, TJSAMP_444, 95, 0);
    tjhandle tj = tjInitDecompress();
    int w, h, ss, cs;
    CHECK(tjDecompressHeader3(tj, b.data, b.len, &w, &h, &ss, &cs) == 0);
    CHECK_EQ_INT(cs, TJCS_YCCK);
    uint8_t *cmyk = malloc((size_t)w * h * 4);
    CHECK(tjDecompress2(tj, b.data, b.len, cmyk, w, 0, h, TJPF_CMYK, 0) == 0);
    tjDestroy(tj);
    for (uint32_t channels = 1; channels <= 3; channels += 2) {
        decode_opts o = default_opts();
        o.channels = channels;
        image_u8 img = decode_ok(&b, &o);
        for (int i = 0; i < w * h; i++) {
            const uint8_t *p = cmyk + 4 * i;
            uint8_t rgb[3];
            for (int k = 0; k < 3; k++) /* inverted (Adobe) CMYK: R = C*K/255 */
                rgb[k] = (uint8_t)(p[3] - image_muldiv255(255u - p[k], p[3]));
            if (channels == 3)
                CHECK(memcmp(img.pixels + 3 * i, rgb, 3) == 0);
            else
                CHECK_EQ_INT(img.pixels[i], image_rgb_to_luma(rgb[0], rgb[1], rgb[2]));
        }
        image_free(&img);
    }
    printf("YCCK JPEG -> RGB and gray: exact against the CMYK formula\n");
    free(cmyk);
    free(b.data);
}

/* One PNG sample C of alpha A as MODE wants it: PIL's convert() keeps C; black/white composite (exact rounding). */
static uint8_t expected_sample(uint8_t c, uint8_t a, image_alpha mode)
{
    if (mode == IMAGE_ALPHA_DROP)
        return c;
    uint32_t bg = mode == IMAGE_ALPHA_WHITE ? 255u : 0u;
    return (uint8_t)((2u * ((uint32_t)c * a + bg * (255u - a)) + 255u) / 510u); /* round(x / 255) */
}

static void test_png_roundtrip(void)
{
    uint32_t formats[] = {PNG_FORMAT_RGB, PNG_FORMAT_GRAY, PNG_FORMAT_RGBA, PNG_FORMAT_GA};
    for (int f = 0; f < 4; f++) {
        blob b = make_png_fmt(33, 21, formats[f]);
        uint32_t c = PNG_IMAGE_SAMPLE_CHANNELS(formats[f]);
        uint8_t *src = make_pixels(33, 21, c);
        for (int mode = IMAGE_ALPHA_DROP; mode <= IMAGE_ALPHA_WHITE; mode++) {
            for (uint32_t channels = 1; channels <= 3; channels += 2) {
                decode_opts o = default_opts();
                o.channels = channels;
                o.alpha = (image_alpha)mode;
                image_u8 img = decode_ok(&b, &o);
                for (size_t i = 0; i < (size_t)33 * 21; i++) {
                    const uint8_t *s = src + i * c;
                    uint8_t a = c == 4 || c == 2 ? s[c - 1] : 255;
                    uint8_t rgb[3];
                    for (int k = 0; k < 3; k++)
                        rgb[k] = expected_sample(s[c >= 3 ? k : 0], a, (image_alpha)mode);
                    if (channels == 3)
                        CHECK(memcmp(img.pixels + 3 * i, rgb, 3) == 0);
                    else
                        CHECK_EQ_INT(img.pixels[i], c >= 3 ? image_rgb_to_luma(rgb[0], rgb[1], rgb[2]) : rgb[0]);
                }
                image_free(&img);
            }
        }
        free(src);
        free(b.data);
    }
    printf("PNG RGB/gray/RGBA/gray+alpha -> RGB and gray: exact (alpha dropped, or on black or white)\n");
}

static void test_max_pixels_boundary(void)
{
    blob files[2] = {make_jpeg(50, 40), make_png(50, 40)};
    for (int f = 0; f < 2; f++) {
        decode_opts o = default_opts();
        char why[256];
        o.max_pixels = 2000;
        CHECK_EQ_INT(decode_status(&files[f], &o, why, sizeof why), IMAGE_OK);
        o.max_pixels = 1999;
        CHECK_EQ_INT(decode_status(&files[f], &o, why, sizeof why), IMAGE_TOO_LARGE);
        CHECK_STR_CONTAINS(why, "2000 pixels, above the limit of 1999");
        free(files[f].data);
    }
    printf("max_pixels: w*h == limit accepted, limit - 1 rejected (JPEG and PNG)\n");
}

/* The decoded size is the smallest M/8 scale that needs no upscaling; the next smaller one would. */
static void test_dct_scale_choice(void)
{
    blob b = make_jpeg(1024, 768);
    struct {
        uint32_t th, tw;
        resize_mode mode;
        uint32_t want_w, want_h;
    } cases[] = {
        {224, 224, RESIZE_CROP, 384, 288},   /* 3/8: 288 >= 224; 2/8 gives 192 < 224 */
        {224, 224, RESIZE_PAD, 256, 192},    /* 2/8: the width 256 >= 224 decides */
        {224, 224, RESIZE_STRETCH, 384, 288},
        {96, 128, RESIZE_CROP, 128, 96},     /* 1/8 exactly the target */
        {700, 1000, RESIZE_CROP, 1024, 768}, /* no room: full size */
        {2000, 2000, RESIZE_CROP, 1024, 768},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        decode_opts o = default_opts();
        o.target_h = cases[i].th;
        o.target_w = cases[i].tw;
        o.mode = cases[i].mode;
        o.dct_scaling = 1;
        image_u8 img = decode_ok(&b, &o);
        printf("DCT scale: 1024x768 -> %ux%u mode %d decoded at %ux%u\n", cases[i].tw, cases[i].th, (int)cases[i].mode,
               img.width, img.height);
        CHECK_EQ_INT(img.width, cases[i].want_w);
        CHECK_EQ_INT(img.height, cases[i].want_h);
        image_free(&img);
    }
    /* Without dct_scaling (the converter's default, --jpeg-scale exact) a target never scales the decode. */
    decode_opts exact = default_opts();
    exact.target_h = exact.target_w = 96;
    image_u8 full = decode_ok(&b, &exact);
    CHECK_EQ_INT(full.width, 1024);
    CHECK_EQ_INT(full.height, 768);
    image_free(&full);
    free(b.data);
    /* PNG has no DCT scaling: always full size. */
    blob p = make_png(300, 200);
    decode_opts o = default_opts();
    o.target_h = o.target_w = 32;
    image_u8 img = decode_ok(&p, &o);
    CHECK(img.width == 300 && img.height == 200);
    image_free(&img);
    free(p.data);
}

static image_u8 constant_image(uint32_t w, uint32_t h, uint32_t c, uint8_t v)
{
    image_u8 img = {malloc((size_t)w * h * c), w, h, c};
    CHECK(img.pixels != NULL);
    memset(img.pixels, v, (size_t)w * h * c);
    return img;
}

static void test_fit_geometry(void)
{
    image_u8 src = constant_image(100, 50, 3, 200), dst;
    CHECK_EQ_INT(image_fit(&src, 64, 64, RESIZE_PAD, &dst), IMAGE_OK);
    CHECK(dst.width == 64 && dst.height == 64 && dst.channels == 3);
    for (uint32_t y = 0; y < 64; y++) { /* 100x50 fitted in 64x64: 64x32 at rows 16..47 */
        int inside = y >= 16 && y < 48;
        for (uint32_t x = 0; x < 64 * 3; x++)
            CHECK_MSG(dst.pixels[y * 64 * 3 + x] == (inside ? 200 : 0), "pad y=%u x=%u: %u", y, x,
                      dst.pixels[y * 64 * 3 + x]);
    }
    image_free(&dst);
    fit_geometry g;
    image_fit_geometry(50, 100, 64, 64, RESIZE_CROP, &g);
    CHECK(g.rh == 64 && g.rw == 128 && g.ox == 32 && g.oy == 0 && g.wh == 64 && g.ww == 64);
    image_fit_geometry(50, 100, 64, 64, RESIZE_PAD, &g);
    CHECK(g.rh == 32 && g.rw == 64 && g.dy == 16 && g.dx == 0);
    /* torchvision: Resize(224) makes the long side int(224 * long / short) (298.67 -> 298, not rounded),
     * CenterCrop's offset is round((scaled - 224) / 2) with Python's half to even (37.5 -> 38, 36.5 -> 36) */
    image_fit_geometry(375, 500, 224, 224, RESIZE_CROP, &g);
    CHECK(g.rh == 224 && g.rw == 298 && g.ox == 37 && g.oy == 0);
    image_fit_geometry(375, 501, 224, 224, RESIZE_CROP, &g);
    CHECK(g.rw == 299 && g.ox == 38);
    image_fit_geometry(375, 498, 224, 224, RESIZE_CROP, &g);
    CHECK(g.rw == 297 && g.ox == 36);
    image_fit_geometry(501, 375, 224, 224, RESIZE_CROP, &g); /* portrait: the same on the other axis */
    CHECK(g.rw == 224 && g.rh == 299 && g.oy == 38 && g.ox == 0);
    for (int mode = 0; mode < 3; mode++) {
        CHECK_EQ_INT(image_fit(&src, 17, 200, (resize_mode)mode, &dst), IMAGE_OK); /* upscaling one axis */
        CHECK(dst.width == 200 && dst.height == 17);
        for (size_t i = 0; mode != RESIZE_PAD && i < (size_t)17 * 200 * 3; i++)
            CHECK_EQ_INT(dst.pixels[i], 200); /* normalised weights keep a constant image constant */
        image_free(&dst);
    }
    CHECK(image_fit(&src, 0, 10, RESIZE_CROP, &dst) != IMAGE_OK && dst.pixels == NULL);
    image_free(&src);
    printf("fit geometry: crop, pad and stretch sizes, offsets and padding as documented\n");
}

static void test_sniff_and_texts(void)
{
    CHECK_EQ_INT(image_sniff((const uint8_t *)"\xff\xd8\xff\xe0", 4), IMAGE_FORMAT_JPEG);
    CHECK_EQ_INT(image_sniff((const uint8_t *)"\x89PNG\r\n\x1a\n", 8), IMAGE_FORMAT_PNG);
    CHECK_EQ_INT(image_sniff((const uint8_t *)"\x89PNG", 4), IMAGE_FORMAT_UNKNOWN);
    CHECK_EQ_INT(image_sniff((const uint8_t *)"GIF89a", 6), IMAGE_FORMAT_UNKNOWN);
    CHECK_EQ_INT(image_sniff(NULL, 0), IMAGE_FORMAT_UNKNOWN);
    for (int s = IMAGE_OK; s <= IMAGE_NOMEM; s++)
        CHECK(strlen(image_status_text((image_status)s)) > 0);
    CHECK(strcmp(image_status_text(IMAGE_UNSUPPORTED), "unsupported format") == 0);
}

int main(void)
{
    test_jpeg_roundtrip();
    test_ycck();
    test_png_roundtrip();
    test_max_pixels_boundary();
    test_dct_scale_choice();
    test_fit_geometry();
    test_sniff_and_texts();
    printf("image basics: all checks passed\n");
    return 0;
}
