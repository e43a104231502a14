/* make_images.c - writes a test image folder for the shell tests and the benchmark:
 *   convert_make_images DIR CLASSES PER_CLASS WxH [--vary]   (every third image a PNG) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testimages.h"

int main(int argc, char **argv)
{
    unsigned w, h;
    if (argc < 5 || sscanf(argv[4], "%ux%u", &w, &h) != 2) {
        fprintf(stderr, "usage: convert_make_images DIR CLASSES PER_CLASS WxH [--vary]\n");
        return 1;
    }
    int vary = argc > 5 && strcmp(argv[5], "--vary") == 0;
    int n = make_image_folder(argv[1], atoi(argv[2]), atoi(argv[3]), w, h, vary);
    if (n < 0)
        return 1;
    printf("wrote %d images to %s\n", n, argv[1]);
    return 0;
}
