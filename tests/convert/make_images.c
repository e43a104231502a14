/* make_images.c - writes a test image folder for the shell tests and the benchmark:
 *   convert_make_images DIR CLASSES PER_CLASS WxH [--vary] [--jpeg-only] [--noisy]
 * (every third image a PNG unless --jpeg-only; --vary: sizes around WxH; --noisy: photo-like noise) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testimages.h"

int main(int argc, char **argv)
{
    unsigned w, h;
    if (argc < 5 || sscanf(argv[4], "%ux%u", &w, &h) != 2) {
        fprintf(stderr, "usage: convert_make_images DIR CLASSES PER_CLASS WxH [--vary] [--jpeg-only] [--noisy]\n");
        return 1;
    }
    int vary = 0, jpeg_only = 0, noisy = 0;
    for (int i = 5; i < argc; i++) {
        vary |= strcmp(argv[i], "--vary") == 0;
        jpeg_only |= strcmp(argv[i], "--jpeg-only") == 0;
        noisy |= strcmp(argv[i], "--noisy") == 0;
    }
    int n = make_image_folder(argv[1], atoi(argv[2]), atoi(argv[3]), w, h, vary | (jpeg_only << 1) | (noisy << 2));
    if (n < 0)
        return 1;
    printf("wrote %d images to %s\n", n, argv[1]);
    return 0;
}
