/* options.h - the h5pack command line: the option set of one conversion and its parser.
 * Parsing is kept apart from the engine (packer.h) and never prints or exits, so the fuzzer can drive it. */
#ifndef H5PACK_OPTIONS_H
#define H5PACK_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "image.h"

typedef enum compress_kind { COMPRESS_NONE = 0, COMPRESS_GZIP = 1 } compress_kind;

/* PIL raises DecompressionBombError above twice its MAX_IMAGE_PIXELS (89,478,485): same limit here. */
#define PACK_DEFAULT_MAX_PIXELS 178956970ull
/* --tiles decodes band by band, so memory no longer grows with the image: 100,000 x 100,000 */
#define PACK_TILES_MAX_PIXELS 10000000000ull
#define PACK_DEFAULT_TILE 256u
#define PACK_DEFAULT_BATCH 256u
#define PACK_DEFAULT_GZIP_LEVEL 4

typedef struct pack_options {
    const char *src_dir;      /* SRC_DIR (required) */
    const char *out_path;     /* OUT.h5 (required) */
    uint32_t height, width;   /* --size HxW; 0x0 = keep each image's own size (--max-side may bound it) */
    resize_mode resize;       /* --resize crop (default) | stretch | pad */
    uint32_t channels;        /* --channels 3 (default) | 1 */
    int layout_nhwc;          /* --layout nchw (default, 0) | nhwc (1) */
    uint64_t seed;            /* --seed, default 0 */
    int keep_order;           /* --keep-order: sorted order instead of a shuffled one */
    uint64_t chunk_images;    /* --chunk K; 0 = auto (default) */
    uint64_t batch;           /* --batch, default 256: expected training batch, a chunk tuning input */
    compress_kind compress;   /* --compress none (default) | gzip[:L] */
    int gzip_level;           /* 1..9, default 4 */
    int checksum;             /* --checksum: fletcher32 (needs --compress gzip... or works alone) */
    int threads;              /* -j N; 0 = h5pack_default_threads() (default) */
    int verbosity;            /* 0 = -q, 1 = default, 2 = -v */
    int strict;               /* --strict: a skipped file is an error */
    int force;                /* --force: overwrite an existing OUT */
    uint64_t max_pixels;      /* --max-pixels, default PACK_DEFAULT_MAX_PIXELS */
    const char *labels_csv;   /* --labels FILE.csv: per-image labels from a CSV (NULL: class folders) */
    int jpeg_dct;             /* --jpeg-scale exact (default, 0) | dct (1): JPEG DCT scaling for --size */
    char labels_sep;          /* --labels-sep: ',' ';' '\t' or ' ' (runs of blanks); 0: by file name */
    uint64_t labels_skip;     /* --labels-skip N: lines above the header */
    uint32_t max_side;        /* --max-side N: images keep their aspect, the longer side at most N (0: none) */
    uint32_t short_side;      /* --short-side S: images keep their aspect, the shorter side exactly S, as
                                 torchvision's Resize(S) (0: none) */
    int layout_given;         /* --layout was on the command line (images of several sizes say it does not apply) */
    int tiles;                /* --tiles: every image whole at its own size, its own dataset in tiles of TILE */
    uint32_t tile;            /* --tile T (default PACK_DEFAULT_TILE) */
    int max_pixels_given;     /* --max-pixels was on the command line (--tiles raises the default) */
    image_alpha alpha;        /* --alpha drop (default: PIL's convert('RGB')) | black | white */
    const char *masks_dir;    /* --masks MASK_DIR: a mask PNG per image, stored as masks (N,H,W) (NULL: none) */
} pack_options;

#define PACK_OPTIONS_DEFAULTS                                                                           \
    {                                                                                                   \
        .resize = RESIZE_CROP, .channels = 3, .batch = PACK_DEFAULT_BATCH, .compress = COMPRESS_NONE,   \
        .gzip_level = PACK_DEFAULT_GZIP_LEVEL, .verbosity = 1, .max_pixels = PACK_DEFAULT_MAX_PIXELS,   \
        .tile = PACK_DEFAULT_TILE, .alpha = IMAGE_ALPHA_DROP                                             \
    }

typedef enum options_result {
    OPTIONS_RUN = 0,  /* options complete: convert */
    OPTIONS_HELP,     /* --help: print usage to stdout, exit 0 */
    OPTIONS_VERSION,  /* --version */
    OPTIONS_ERROR     /* bad usage: ERR holds the message, exit 1 */
} options_result;

/* Parses argv[1..argc-1] into *O (which the caller initialised with PACK_OPTIONS_DEFAULTS). Pointers in
 * *O point into ARGV. On OPTIONS_ERROR writes a one-line message into ERR. Counts (--max-pixels, --batch,
 * --chunk, -j) follow the project's size rule (common/sizes.h: K, M, G, T are powers of 1024);
 * --seed takes digits only. */
options_result options_parse(int argc, char **argv, pack_options *o, char *err, size_t err_len);

/* "224x224" or "224X192" (height first) -> 0, else -1. Each side 1..65535. */
int parse_size_hw(const char *s, uint32_t *h, uint32_t *w);

/* --labels-sep: "," / "comma", ";" / "semicolon", "tab" / a tab / "\t", "space" -> 0 with *SEP set
 * (' ' for space: runs of blanks), else -1. */
int parse_labels_sep(const char *s, char *sep);

/* "none", "gzip", "gzip:L" (L in 1..9). -> 0, else -1. */
int parse_compress(const char *s, compress_kind *kind, int *level);

/* "crop" | "stretch" | "pad" -> 0, else -1. */
int parse_resize(const char *s, resize_mode *mode);

const char *resize_mode_name(resize_mode mode);

/* "drop" | "black" | "white" -> 0, else -1; and back (the file's alpha attribute). */
int parse_alpha(const char *s, image_alpha *alpha);
const char *alpha_mode_name(image_alpha alpha);

/* Writes "gzip:4" / "none" into BUF. */
void compression_text(const pack_options *o, char *buf, size_t len);

void options_print_usage(FILE *f);

#endif
