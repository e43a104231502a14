/* testimages.h - small deterministic JPEG/PNG files and folders for the converter tests (TurboJPEG and
 * libpng encode them; nothing is decoded by hand). */
#ifndef H5PACK_TEST_TESTIMAGES_H
#define H5PACK_TEST_TESTIMAGES_H

#include <stddef.h>
#include <stdint.h>

/* Smooth gradients plus a seeded block pattern, so that resizing and compression have work to do; with
 * bit 31 of SEED set, per-pixel noise as well (photo-like entropy for the benchmark). */
void test_pattern(uint8_t *px, uint32_t w, uint32_t h, uint32_t channels, uint32_t seed);

/* Write a W x H pattern image (CHANNELS 3 = RGB, 1 = gray). Return 0, or -1 (message on stderr). */
int write_test_jpeg(const char *path, uint32_t w, uint32_t h, uint32_t channels, uint32_t seed);
int write_test_png(const char *path, uint32_t w, uint32_t h, uint32_t channels, uint32_t seed);

int write_file_bytes(const char *path, const void *data, size_t len);

/* mkdir -p of one level; 0 when it exists afterwards. */
int make_dir(const char *path);

/* DIR/class_XX/img_YYYY.{jpg,png}: every third image a PNG (unless FLAGS & 2: JPEG only). Size W x H, or
 * varying sizes around it when FLAGS & 1; noisy, photo-like content when FLAGS & 4. Returns the number of images written, or -1. */
int make_image_folder(const char *dir, int classes, int per_class, uint32_t w, uint32_t h, int flags);

#endif
