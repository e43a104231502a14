/* image_dump - test helper: decodes (and optionally fits) one image with the converter's image code and
 * writes the pixels raw, so the python checks in tests/image can compare them with PIL.
 *   image_dump IN OUT.raw [--channels 1|3] [--size HxW] [--mode crop|stretch|pad] [--no-dct]
 *                         [--max-pixels N] [--alpha drop|black|white]
 * Prints one line: "status=<n> width=<w> height=<h> channels=<c> decoded=<dw>x<dh> why=<reason>".
 * --no-dct decodes at full size (no DCT scaling) before fitting. Exit 0 whenever the call returned. */
#include "image.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static resize_mode parse_mode(const char *s)
{
    if (strcmp(s, "stretch") == 0)
        return RESIZE_STRETCH;
    if (strcmp(s, "pad") == 0)
        return RESIZE_PAD;
    return RESIZE_CROP;
}

static int write_raw(const char *path, const image_u8 *img)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t n = (size_t)img->width * img->height * img->channels;
    int ok = fwrite(img->pixels, 1, n, f) == n;
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

static image_alpha parse_alpha_arg(const char *s)
{
    return strcmp(s, "black") == 0 ? IMAGE_ALPHA_BLACK : strcmp(s, "white") == 0 ? IMAGE_ALPHA_WHITE : IMAGE_ALPHA_DROP;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: image_dump IN OUT.raw [--channels C] [--size HxW] [--mode M] [--no-dct] [--alpha A]\n");
        return 2;
    }
    decode_opts o = {.channels = 3, .mode = RESIZE_CROP, .max_pixels = 1ull << 28};
    unsigned th = 0, tw = 0;
    int dct = 1;
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--channels") == 0 && i + 1 < argc)
            o.channels = (uint32_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc && sscanf(argv[i + 1], "%ux%u", &th, &tw) == 2)
            i++;
        else if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc)
            o.mode = parse_mode(argv[++i]);
        else if (strcmp(argv[i], "--no-dct") == 0)
            dct = 0;
        else if (strcmp(argv[i], "--max-pixels") == 0 && i + 1 < argc)
            o.max_pixels = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--alpha") == 0 && i + 1 < argc)
            o.alpha = parse_alpha_arg(argv[++i]);
        else {
            fprintf(stderr, "image_dump: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    o.target_h = th;
    o.target_w = tw;
    o.dct_scaling = dct;
    char why[512] = "";
    image_u8 img = {0}, fitted = {0};
    image_status st = image_load(argv[1], &o, &img, why, sizeof why);
    unsigned dw = img.width, dh = img.height;
    if (st == IMAGE_OK && th && tw)
        st = image_fit(&img, th, tw, o.mode, &fitted);
    const image_u8 *res = fitted.pixels ? &fitted : &img;
    printf("status=%d width=%u height=%u channels=%u decoded=%ux%u why=%s\n", (int)st, res->width, res->height,
           res->channels, dw, dh, why);
    int rc = 0;
    if (st == IMAGE_OK && write_raw(argv[2], res) != 0) {
        fprintf(stderr, "image_dump: cannot write %s\n", argv[2]);
        rc = 1;
    }
    image_free(&img);
    image_free(&fitted);
    return rc;
}
