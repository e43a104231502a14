/* testimages.c - deterministic test images written with TurboJPEG and libpng. */
#include "testimages.h"

#include <errno.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <turbojpeg.h>

void test_pattern(uint8_t *px, uint32_t w, uint32_t h, uint32_t channels, uint32_t seed)
{
    uint32_t s = seed * 2654435761u + 1;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            for (uint32_t c = 0; c < channels; c++) {
                uint32_t block = ((x / 8) * 31 + (y / 8) * 17 + c * 7 + s) % 97;
                uint32_t v = (x * 255 / (w ? w : 1) + y * 128 / (h ? h : 1) + c * 60 + block + (s >> (c * 3))) % 256;
                if (seed & 0x80000000u) { /* photo-like texture: per-pixel hash noise of +-24 */
                    uint32_t hsh = (x * 73856093u) ^ (y * 19349663u) ^ (c * 83492791u) ^ s;
                    hsh = (hsh ^ (hsh >> 13)) * 0x5bd1e995u;
                    int nv = (int)v + (int)((hsh >> 16) % 49) - 24;
                    v = (uint32_t)(nv < 0 ? 0 : nv > 255 ? 255 : nv);
                }
                px[((size_t)y * w + x) * channels + c] = (uint8_t)v;
            }
}

int write_file_bytes(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        if (f)
            fclose(f);
        return -1;
    }
    return fclose(f) == 0 ? 0 : -1;
}

int write_test_jpeg(const char *path, uint32_t w, uint32_t h, uint32_t channels, uint32_t seed)
{
    uint8_t *px = malloc((size_t)w * h * channels), *jpeg = NULL;
    unsigned long size = 0;
    int rc = -1;
    tjhandle tj = tjInitCompress();
    if (!px || !tj)
        goto done;
    test_pattern(px, w, h, channels, seed);
    if (tjCompress2(tj, px, (int)w, 0, (int)h, channels == 1 ? TJPF_GRAY : TJPF_RGB, &jpeg, &size,
                    channels == 1 ? TJSAMP_GRAY : TJSAMP_420, 90, 0) != 0) {
        fprintf(stderr, "%s: tjCompress2: %s\n", path, tjGetErrorStr2(tj));
        goto done;
    }
    rc = write_file_bytes(path, jpeg, size);
done:
    tjFree(jpeg);
    if (tj)
        tjDestroy(tj);
    free(px);
    return rc;
}

int write_test_png(const char *path, uint32_t w, uint32_t h, uint32_t channels, uint32_t seed)
{
    png_image img;
    uint8_t *px = malloc((size_t)w * h * channels);
    int rc = -1;
    if (!px)
        return -1;
    test_pattern(px, w, h, channels, seed);
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    img.width = w;
    img.height = h;
    img.format = channels == 1 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
    if (png_image_write_to_file(&img, path, 0, px, 0, NULL))
        rc = 0;
    else
        fprintf(stderr, "%s: libpng: %s\n", path, img.message);
    free(px);
    return rc;
}

int make_dir(const char *path)
{
    struct stat st;
    if (mkdir(path, 0755) == 0 || (stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
        return 0;
    fprintf(stderr, "mkdir %s: %s\n", path, strerror(errno));
    return -1;
}

int make_image_folder(const char *dir, int classes, int per_class, uint32_t w, uint32_t h, int flags)
{
    char path[4096];
    int n = 0;
    if (make_dir(dir) != 0)
        return -1;
    for (int c = 0; c < classes; c++) {
        snprintf(path, sizeof path, "%s/class_%02d", dir, c);
        if (make_dir(path) != 0)
            return -1;
        for (int i = 0; i < per_class; i++) {
            uint32_t seed = (uint32_t)(c * 1000 + i);
            uint32_t iw = (flags & 1) ? w + (seed * 37) % (w / 2 + 1) : w, ih = (flags & 1) ? h + (seed * 53) % (h / 2 + 1) : h;
            int png = !(flags & 2) && i % 3 == 2;
            snprintf(path, sizeof path, "%s/class_%02d/img_%04d.%s", dir, c, i, png ? "png" : "jpg");
            uint32_t pattern_seed = (flags & 4) ? seed | 0x80000000u : seed;
            if ((png ? write_test_png(path, iw, ih, 3, pattern_seed) : write_test_jpeg(path, iw, ih, 3, pattern_seed)) != 0)
                return -1;
            n++;
        }
    }
    return n;
}
