/* decodejob.h - one image of the packed order: load, decode, fit to the target size, lay out as the
 * dataset stores it (CHW or HWC) and add up its per-channel sums. Runs in worker threads. */
#ifndef H5PACK_DECODEJOB_H
#define H5PACK_DECODEJOB_H

#include <stddef.h>
#include <stdint.h>

#include "image.h"
#include "mask_values.h"

typedef struct decode_job_cfg {
    const char *src_dir;
    decode_opts opts;       /* channels, target (0x0 = none), mode, max_pixels */
    uint32_t height, width; /* the dataset's image size (the target, or the shared source size) */
    uint32_t channels;
    int nhwc;
    const char *mask_dir;   /* --masks MASK_DIR, NULL without */
    uint32_t mask_bytes;    /* --masks: bytes per stored mask value, 1 (uint8) or 2 (uint16); 0 without */
} decode_job_cfg;

typedef enum decode_outcome {
    DECODE_OK = 0,
    DECODE_SKIP,          /* a bad file: skipped with REASON */
    DECODE_SIZE_MISMATCH, /* no --size and the image's size differs: a fatal error */
    DECODE_FAILED         /* out of memory: fatal */
} decode_outcome;

typedef struct decoded_image {
    uint8_t *pixels;     /* height*width*channels bytes, owned by the caller, in the dataset's layout */
    decode_outcome outcome;
    uint32_t src_height, src_width; /* the decoded source's size (before any resize) */
    uint64_t sum[3], sum_sq[3];     /* per channel: sum of the pixel values and of their squares */
    char reason[320];               /* "CATEGORY: detail" on DECODE_SKIP, a message on the fatal outcomes */
    uint8_t *mask;                  /* --masks: height*width values of cfg->mask_bytes, owned by the caller */
    mask_values *mask_seen;         /* --masks: the values in MASK (owned by the caller) */
} decoded_image;

/* Decodes the file RELPATH (relative to cfg->src_dir) into OUT (whose pixels buffer is preallocated). */
void decode_entry(const decode_job_cfg *cfg, const char *relpath, decoded_image *out);

/* --masks, after decode_entry succeeded: decodes the mask MASK_RELPATH (relative to cfg->mask_dir), checks
 * that its size is the source image's (OUT->src_height x src_width), fits it as the image was fitted
 * (mask_fit: PIL's NEAREST) into OUT->mask and counts its values into OUT->mask_seen. A bad mask makes the
 * image DECODE_SKIP with the reason, which names the mask. */
void decode_mask_entry(const decode_job_cfg *cfg, const char *mask_relpath, decoded_image *out);

/* Images of several sizes: decodes RELPATH to its stored size H x W, HWC (RESIZE: resized to it; else
 * kept as decoded, which must then be H x W), growing OUT->pixels (*CAP bytes) as needed. */
void decode_entry_sized(const decode_job_cfg *cfg, const char *relpath, uint32_t h, uint32_t w, int resize,
                        decoded_image *out, size_t *cap);

/* OUT->reason for an image of several sizes that decoded to another size than its header's H x W (0 x 0:
 * the header gave none): "corrupt image: ...". */
void decode_mismatch_reason(uint32_t h, uint32_t w, decoded_image *out);

/* ERR for an image of one-size mode (no --size) that decoded to another size than the first image's:
 * names NAME, both sizes and the --size that packs them together. */
void decode_size_mismatch_text(const decode_job_cfg *cfg, const char *name, const decoded_image *img, char *err,
                               size_t len);

/* Per-channel sums of HWC pixels (COUNT pixels of CHANNELS bytes). */
void channel_sums(const uint8_t *hwc, size_t count, uint32_t channels, uint64_t sum[3], uint64_t sum_sq[3]);

#endif
