/* h5pack-gen-images - writes a synthetic ImageFolder: OUT_DIR/class_XX/img_YYYY.jpg|.png.
 *
 * Each image is structured, not noise: a two-colour gradient, a few filled discs and rectangles, soft
 * stripes and a little grain, in colours that depend on the class (so classes differ and their mean
 * colours differ), at random sizes between --min-size and --max-size. JPEGs are written with TurboJPEG
 * (tjCompress2, 4:2:0, quality 80..95), PNGs with libpng. The same options and seed give the same bytes.
 *
 *   h5pack-gen-images OUT_DIR [--classes N] [--per-class N] [--seed S] [--png-fraction F]
 *                             [--min-size S --max-size S]
 */
#include <errno.h>
#include <math.h>
#include <png.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <turbojpeg.h>

#include "h5pack.h"     /* h5pack_size_parse: counts as h5pack's programs read them */
#include "sample_rng.h" /* splitmix64 */

typedef struct gen_opts {
    const char *out_dir;
    unsigned classes, per_class, min_size, max_size;
    uint64_t seed;
    double png_fraction;
} gen_opts;

static double rng_unit(rng_state *r)
{
    return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

static unsigned rng_range(rng_state *r, unsigned lo, unsigned hi) /* inclusive */
{
    return lo + rng_below32(r, hi - lo + 1); /* hi - lo < 2^32 - 1: sizes and qualities are small */
}

static void usage(FILE *to)
{
    fprintf(to, "usage: h5pack-gen-images OUT_DIR [--classes N] [--per-class N] [--seed S]\n"
                "                         [--png-fraction F] [--min-size S --max-size S]\n"
                "Writes OUT_DIR/class_XX/img_YYYY.jpg|.png: synthetic structured images, class dependent\n"
                "colours, sizes between min and max (defaults: 4 classes, 25 per class, seed 0,\n"
                "png fraction 0.2, sizes 64..256).\n");
}

/* A count (h5pack's size rule: "1K" = 1024) up to 100,000,000. */
static int parse_uint(const char *s, unsigned *out)
{
    uint64_t v = 0;
    if (h5pack_size_parse(s, &v, NULL, 0) != H5PACK_OK || v > 100000000u)
        return -1;
    *out = (unsigned)v;
    return 0;
}

/* A seed: plain decimal digits (it is a number, not an amount), below 2^64. */
static int parse_seed(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (!*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv, gen_opts *o)
{
    *o = (gen_opts){.classes = 4, .per_class = 25, .min_size = 64, .max_size = 256, .png_fraction = 0.2};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (strcmp(a, "--classes") == 0 && v)
            bad = parse_uint(v, &o->classes) || o->classes == 0 || o->classes > 1000;
        else if (strcmp(a, "--per-class") == 0 && v)
            bad = parse_uint(v, &o->per_class) || o->per_class > 10000;
        else if (strcmp(a, "--min-size") == 0 && v)
            bad = parse_uint(v, &o->min_size) || o->min_size == 0;
        else if (strcmp(a, "--max-size") == 0 && v)
            bad = parse_uint(v, &o->max_size) || o->max_size > 8192;
        else if (strcmp(a, "--seed") == 0 && v)
            bad = parse_seed(v, &o->seed);
        else if (strcmp(a, "--png-fraction") == 0 && v)
            bad = sscanf(v, "%lf", &o->png_fraction) != 1 || !(o->png_fraction >= 0 && o->png_fraction <= 1);
        else if (a[0] != '-' && !o->out_dir) {
            o->out_dir = a;
            continue;
        } else {
            fprintf(stderr, "h5pack-gen-images: unknown or incomplete option '%s'\n", a);
            return -1;
        }
        if (bad) {
            fprintf(stderr, "h5pack-gen-images: bad value '%s' for %s\n", v, a);
            return -1;
        }
        i++;
    }
    if (!o->out_dir || o->min_size > o->max_size) {
        fprintf(stderr, "h5pack-gen-images: %s\n", o->out_dir ? "--min-size above --max-size" : "OUT_DIR missing");
        return -1;
    }
    return 0;
}

/* Class colour: hues spread around the wheel, so every class has its own mean colour. */
static void class_color(unsigned cls, unsigned classes, double shift, double rgb[3])
{
    double h = fmod((double)cls / classes + shift, 1.0) * 6.0;
    double x = 1.0 - fabs(fmod(h, 2.0) - 1.0);
    double c[6][3] = {{1, x, 0}, {x, 1, 0}, {0, 1, x}, {0, x, 1}, {x, 0, 1}, {1, 0, x}};
    int k = (int)h % 6;
    for (int i = 0; i < 3; i++)
        rgb[i] = 40.0 + 200.0 * c[k][i];
}

typedef struct shape {
    int disc;
    double cx, cy, r, w, h, col[3];
} shape;

static int shape_covers(const shape *s, double x, double y)
{
    if (s->disc)
        return (x - s->cx) * (x - s->cx) + (y - s->cy) * (y - s->cy) <= s->r * s->r;
    return fabs(x - s->cx) <= s->w && fabs(y - s->cy) <= s->h;
}

static void draw_image(uint8_t *px, unsigned w, unsigned h, unsigned cls, unsigned classes, rng_state *r)
{
    double a[3], b[3];
    class_color(cls, classes, 0.0, a);
    class_color(cls, classes, 0.25 + 0.1 * rng_unit(r), b);
    shape shapes[6];
    unsigned nshapes = rng_range(r, 1, 6);
    for (unsigned i = 0; i < nshapes; i++) {
        shape *s = &shapes[i];
        s->disc = (cls + i) % 2 == 0;
        s->cx = rng_unit(r) * w;
        s->cy = rng_unit(r) * h;
        s->r = (0.1 + 0.25 * rng_unit(r)) * (w < h ? w : h);
        s->w = s->r * (0.5 + rng_unit(r));
        s->h = s->r * (0.5 + rng_unit(r));
        class_color(cls, classes, 0.5 + 0.3 * rng_unit(r), s->col);
    }
    double angle = rng_unit(r) * 6.2832, freq = (2.0 + 6.0 * rng_unit(r)) / (w + h);
    for (unsigned y = 0; y < h; y++) {
        for (unsigned x = 0; x < w; x++) {
            double t = ((double)x / w + (double)y / h) * 0.5;
            double stripe = 18.0 * sin(6.2832 * freq * (x * cos(angle) + y * sin(angle)) * 4.0);
            double grain = (double)(rng_next(r) & 15) - 7.5;
            double c[3];
            for (int k = 0; k < 3; k++)
                c[k] = a[k] * (1 - t) + b[k] * t + stripe;
            for (unsigned i = 0; i < nshapes; i++)
                if (shape_covers(&shapes[i], x, y))
                    memcpy(c, shapes[i].col, sizeof c);
            for (int k = 0; k < 3; k++) {
                double v = c[k] + grain;
                px[((size_t)y * w + x) * 3 + k] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
        }
    }
}

static int write_jpeg(const char *path, const uint8_t *px, unsigned w, unsigned h, int quality)
{
    tjhandle tj = tjInitCompress();
    unsigned char *jpeg = NULL;
    unsigned long size = 0;
    int rc = -1;
    if (!tj || tjCompress2(tj, px, (int)w, 0, (int)h, TJPF_RGB, &jpeg, &size, TJSAMP_420, quality, 0) != 0) {
        fprintf(stderr, "h5pack-gen-images: %s: JPEG compression failed: %s\n", path, tjGetErrorStr2(tj));
        goto done;
    }
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(jpeg, 1, size, f) != size || fclose(f) != 0) {
        fprintf(stderr, "h5pack-gen-images: %s: %s\n", path, strerror(errno));
        goto done;
    }
    rc = 0;
done:
    tjFree(jpeg);
    if (tj)
        tjDestroy(tj);
    return rc;
}

static int write_png(const char *path, const uint8_t *px, unsigned w, unsigned h)
{
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    img.width = w;
    img.height = h;
    img.format = PNG_FORMAT_RGB;
    if (!png_image_write_to_file(&img, path, 0, px, 0, NULL)) {
        fprintf(stderr, "h5pack-gen-images: %s: PNG write failed: %s\n", path, img.message);
        return -1;
    }
    return 0;
}

/* mkdir -p: creates PATH and any missing parents. */
static int make_dirs(const char *path)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        fprintf(stderr, "h5pack-gen-images: path too long: %s\n", path);
        return -1;
    }
    for (char *p = buf + 1;; p++) {
        char c = *p;
        if (c != '/' && c != '\0')
            continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "h5pack-gen-images: cannot create %s: %s\n", buf, strerror(errno));
            return -1;
        }
        *p = c;
        if (c == '\0')
            return 0;
    }
}

/* One image: size, format and content all drawn from R, so the output depends only on the options. */
static int write_one(const gen_opts *o, const char *dir, unsigned cls, unsigned idx, rng_state *r, uint8_t *px,
                     unsigned *n_png)
{
    unsigned w = rng_range(r, o->min_size, o->max_size), h = rng_range(r, o->min_size, o->max_size);
    int png = rng_unit(r) < o->png_fraction;
    int quality = (int)rng_range(r, 80, 95);
    char path[4096];
    if (snprintf(path, sizeof path, "%s/img_%04u.%s", dir, idx, png ? "png" : "jpg") >= (int)sizeof path) {
        fprintf(stderr, "h5pack-gen-images: path too long under %s\n", dir);
        return -1;
    }
    draw_image(px, w, h, cls, o->classes, r);
    *n_png += (unsigned)png;
    return png ? write_png(path, px, w, h) : write_jpeg(path, px, w, h, quality);
}

int main(int argc, char **argv)
{
    gen_opts o;
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return 0;
    }
    if (parse_args(argc, argv, &o) != 0) {
        usage(stderr);
        return 2;
    }
    uint8_t *px = malloc((size_t)o.max_size * o.max_size * 3);
    if (!px || make_dirs(o.out_dir) != 0) {
        free(px);
        return 1;
    }
    unsigned n_png = 0;
    for (unsigned c = 0; c < o.classes; c++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/class_%02u", o.out_dir, c);
        rng_state r = {o.seed * 1000003ull + c}; /* per-class stream: classes independent of each other */
        if (make_dirs(dir) != 0)
            goto fail;
        for (unsigned i = 0; i < o.per_class; i++)
            if (write_one(&o, dir, c, i, &r, px, &n_png) != 0)
                goto fail;
    }
    unsigned total = o.classes * o.per_class;
    printf("wrote %u images (%u JPEG, %u PNG) in %u classes to %s\n", total, total - n_png, n_png, o.classes,
           o.out_dir);
    free(px);
    return 0;
fail:
    free(px);
    return 1;
}
