/* image_cost - measures the CPU time of the image stages on one file (not a test: figures for
 * docs/images.md). Interleaves the stages in rounds so a busy machine affects them alike.
 *   image_cost FILE [--size HxW] [--mode crop|stretch|pad] [--rounds N]
 * Prints per image: full decode, fit of the full decode, and decode with DCT scaling + fit. */
#include "image.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    long n = -1;
    if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, f) == (size_t)n) {
        fclose(f);
        *len = (size_t)n;
        return buf;
    }
    if (f)
        fclose(f);
    free(buf);
    return NULL;
}

int main(int argc, char **argv)
{
    unsigned th = 224, tw = 224, rounds = 20;
    resize_mode mode = RESIZE_CROP;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--size") == 0)
            sscanf(argv[i + 1], "%ux%u", &th, &tw);
        else if (strcmp(argv[i], "--rounds") == 0)
            rounds = (unsigned)atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--mode") == 0)
            mode = strcmp(argv[i + 1], "pad") == 0 ? RESIZE_PAD
                   : strcmp(argv[i + 1], "stretch") == 0 ? RESIZE_STRETCH : RESIZE_CROP;
    }
    size_t len = 0;
    uint8_t *data = argc > 1 ? read_file(argv[1], &len) : NULL;
    if (!data || !th || !tw || !rounds) {
        fprintf(stderr, "usage: image_cost FILE [--size HxW] [--mode crop|stretch|pad] [--rounds N]\n");
        return 2;
    }
    decode_opts full = {.channels = 3, .mode = mode, .max_pixels = 1ull << 30};
    decode_opts scaled = full;
    scaled.dct_scaling = 1; /* h5pack --jpeg-scale dct */
    scaled.target_h = th;
    scaled.target_w = tw;
    char why[512];
    image_u8 img, out, small;
    if (image_decode(data, len, &full, &img, why, sizeof why) != IMAGE_OK ||
        image_decode(data, len, &scaled, &small, why, sizeof why) != IMAGE_OK) {
        fprintf(stderr, "image_cost: %s: %s\n", argv[1], why);
        return 1;
    }
    double t_dec = 0, t_fit = 0, t_scaled = 0;
    const unsigned per_round = 10;
    for (unsigned r = 0; r < rounds; r++) {
        double t0 = cpu_seconds();
        for (unsigned i = 0; i < per_round; i++) {
            image_u8 x;
            image_decode(data, len, &full, &x, why, sizeof why);
            image_free(&x);
        }
        double t1 = cpu_seconds();
        for (unsigned i = 0; i < per_round; i++) {
            image_fit(&img, th, tw, mode, &out);
            image_free(&out);
        }
        double t2 = cpu_seconds();
        for (unsigned i = 0; i < per_round; i++) {
            image_u8 x;
            image_decode(data, len, &scaled, &x, why, sizeof why);
            image_fit(&x, th, tw, mode, &out);
            image_free(&out);
            image_free(&x);
        }
        t_dec += t1 - t0;
        t_fit += t2 - t1;
        t_scaled += cpu_seconds() - t2;
    }
    double n = (double)rounds * per_round / 1e3;
    printf("%s %ux%u -> %ux%u: full decode %.2f ms, fit %.2f ms, decode with DCT scaling (at %ux%u) + fit %.2f ms "
           "(CPU time per image, %u images each)\n",
           argv[1], img.width, img.height, tw, th, t_dec / n, t_fit / n, small.width, small.height, t_scaled / n,
           rounds * per_round);
    image_free(&img);
    image_free(&small);
    free(data);
    return 0;
}
