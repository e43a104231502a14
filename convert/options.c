/* options.c - parsing the h5pack command line (zstd style: GNU long options with "--opt VALUE" or
 * "--opt=VALUE", short -j N / -jN, -q, -v, -h, "--" ends the options). No printing, no exit. */
#include "options.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cpus.h"
#include "errtext.h"
#include "sizes.h"

/* ERR gets the reason (errtext.h); returns OPTIONS_ERROR. */
static int fail(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    h5pack_verrf(0, err, len, fmt, ap);
    va_end(ap);
    return OPTIONS_ERROR;
}

/* "224x192": two plain numbers around an x (digits only, each 1..65535). */
int parse_size_hw(const char *s, uint32_t *h, uint32_t *w)
{
    char left[24];
    uint64_t hh, ww;
    const char *x = s ? strpbrk(s, "xX") : NULL;
    if (!x || (size_t)(x - s) >= sizeof left)
        return -1;
    memcpy(left, s, (size_t)(x - s));
    left[x - s] = '\0';
    if (h5pack_parse_uint(left, &hh, NULL, 0) != 0 || h5pack_parse_uint(x + 1, &ww, NULL, 0) != 0)
        return -1;
    if (hh < 1 || ww < 1 || hh > 65535 || ww > 65535)
        return -1;
    *h = (uint32_t)hh;
    *w = (uint32_t)ww;
    return 0;
}

int parse_compress(const char *s, compress_kind *kind, int *level)
{
    if (!s)
        return -1;
    if (strcmp(s, "none") == 0) {
        *kind = COMPRESS_NONE;
        return 0;
    }
    if (strncmp(s, "gzip", 4) != 0)
        return -1;
    if (s[4] == '\0') {
        *kind = COMPRESS_GZIP;
        *level = PACK_DEFAULT_GZIP_LEVEL;
        return 0;
    }
    if (s[4] != ':' || s[5] < '1' || s[5] > '9' || s[6] != '\0')
        return -1;
    *kind = COMPRESS_GZIP;
    *level = s[5] - '0';
    return 0;
}

int parse_resize(const char *s, resize_mode *mode)
{
    static const struct { const char *name; resize_mode mode; } modes[] = {
        {"crop", RESIZE_CROP}, {"stretch", RESIZE_STRETCH}, {"pad", RESIZE_PAD}};
    for (size_t i = 0; s && i < sizeof modes / sizeof modes[0]; i++)
        if (strcmp(s, modes[i].name) == 0) {
            *mode = modes[i].mode;
            return 0;
        }
    return -1;
}

int parse_labels_sep(const char *s, char *sep)
{
    static const struct { const char *name; char sep; } seps[] = {
        {",", ','},    {"comma", ','},  {";", ';'},      {"semicolon", ';'},
        {"tab", '\t'}, {"\t", '\t'},   {"\\t", '\t'},   {"space", ' '}};
    for (size_t i = 0; s && i < sizeof seps / sizeof seps[0]; i++)
        if (strcmp(s, seps[i].name) == 0) {
            *sep = seps[i].sep;
            return 0;
        }
    return -1;
}

int parse_alpha(const char *s, image_alpha *alpha)
{
    static const struct { const char *name; image_alpha alpha; } modes[] = {
        {"drop", IMAGE_ALPHA_DROP}, {"black", IMAGE_ALPHA_BLACK}, {"white", IMAGE_ALPHA_WHITE}};
    for (size_t i = 0; s && i < sizeof modes / sizeof modes[0]; i++)
        if (strcmp(s, modes[i].name) == 0) {
            *alpha = modes[i].alpha;
            return 0;
        }
    return -1;
}

const char *alpha_mode_name(image_alpha alpha)
{
    switch (alpha) {
    case IMAGE_ALPHA_BLACK: return "black";
    case IMAGE_ALPHA_WHITE: return "white";
    default: return "drop";
    }
}

const char *resize_mode_name(resize_mode mode)
{
    switch (mode) {
    case RESIZE_STRETCH: return "stretch";
    case RESIZE_PAD: return "pad";
    default: return "crop";
    }
}

void compression_text(const pack_options *o, char *buf, size_t len)
{
    if (o->compress == COMPRESS_GZIP)
        snprintf(buf, len, "gzip:%d", o->gzip_level);
    else
        snprintf(buf, len, "none");
}

/* ---- the option table ---------------------------------------------------------------------------- */

typedef enum opt_id {
    OPT_SIZE, OPT_RESIZE, OPT_CHANNELS, OPT_LAYOUT, OPT_SEED, OPT_KEEP_ORDER, OPT_CHUNK, OPT_BATCH,
    OPT_COMPRESS, OPT_CHECKSUM, OPT_THREADS, OPT_QUIET, OPT_VERBOSE, OPT_HELP, OPT_VERSION, OPT_STRICT,
    OPT_FORCE, OPT_MAX_PIXELS, OPT_LABELS, OPT_JPEG_SCALE, OPT_LABELS_SEP, OPT_LABELS_SKIP, OPT_MAX_SIDE,
    OPT_TILES, OPT_TILE, OPT_ALPHA, OPT_SHORT_SIDE, OPT_MASKS
} opt_id;

typedef struct opt_spec {
    const char *long_name; /* without "--" */
    char short_name;       /* 0 = none */
    int takes_value;
    opt_id id;
} opt_spec;

static const opt_spec option_table[] = {
    {"size", 0, 1, OPT_SIZE},          {"resize", 0, 1, OPT_RESIZE},       {"channels", 0, 1, OPT_CHANNELS},
    {"layout", 0, 1, OPT_LAYOUT},      {"seed", 0, 1, OPT_SEED},           {"keep-order", 0, 0, OPT_KEEP_ORDER},
    {"chunk", 0, 1, OPT_CHUNK},        {"batch", 0, 1, OPT_BATCH},         {"compress", 0, 1, OPT_COMPRESS},
    {"checksum", 0, 0, OPT_CHECKSUM},  {"threads", 'j', 1, OPT_THREADS},   {"quiet", 'q', 0, OPT_QUIET},
    {"verbose", 'v', 0, OPT_VERBOSE},  {"help", 'h', 0, OPT_HELP},         {"version", 'V', 0, OPT_VERSION},
    {"strict", 0, 0, OPT_STRICT},      {"force", 'f', 0, OPT_FORCE},       {"max-pixels", 0, 1, OPT_MAX_PIXELS},
    {"labels", 0, 1, OPT_LABELS},      {"jpeg-scale", 0, 1, OPT_JPEG_SCALE},
    {"labels-sep", 0, 1, OPT_LABELS_SEP}, {"labels-skip", 0, 1, OPT_LABELS_SKIP}, {"max-side", 0, 1, OPT_MAX_SIDE},
    {"tiles", 0, 0, OPT_TILES},        {"tile", 0, 1, OPT_TILE},           {"alpha", 0, 1, OPT_ALPHA},
    {"short-side", 0, 1, OPT_SHORT_SIDE}, {"masks", 0, 1, OPT_MASKS},
};

static const opt_spec *find_long(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof option_table / sizeof option_table[0]; i++)
        if (strlen(option_table[i].long_name) == len && strncmp(option_table[i].long_name, name, len) == 0)
            return &option_table[i];
    return NULL;
}

static const opt_spec *find_short(char c)
{
    for (size_t i = 0; i < sizeof option_table / sizeof option_table[0]; i++)
        if (option_table[i].short_name == c && c != 0)
            return &option_table[i];
    return NULL;
}

/* A count option: the size rule (sizes.h: "256", "4K" = 4096, "1.5M"), then MIN..MAX (WHAT says so). */
static options_result take_count(const char *opt, const char *value, uint64_t min, uint64_t max, const char *what,
                                 uint64_t *out, char *err, size_t len)
{
    char why[160];
    uint64_t v = 0;
    if (h5pack_parse_size(value, &v, why, sizeof why) != H5PACK_SIZE_OK)
        return fail(err, len, "%s: bad value '%s': %s", opt, value, why);
    if (v < min || v > max)
        return fail(err, len, "%s: expected %s, got '%s'", opt, what, value);
    *out = v;
    return OPTIONS_RUN;
}

/* Applies option SPEC with VALUE (NULL for flags). Returns OPTIONS_RUN, _HELP, _VERSION or _ERROR. */
static options_result apply_option(const opt_spec *spec, const char *value, pack_options *o, char *err,
                                   size_t len)
{
    uint64_t v = 0;
    switch (spec->id) {
    case OPT_SIZE:
        if (parse_size_hw(value, &o->height, &o->width) != 0)
            return fail(err, len, "--size: expected HxW, each side 1..65535 (height first, e.g. 224x224), got '%s'",
                        value);
        break;
    case OPT_MAX_SIDE:
        if (take_count("--max-side", value, 1, 65535, "a side length 1..65535", &v, err, len) != OPTIONS_RUN)
            return OPTIONS_ERROR;
        o->max_side = (uint32_t)v;
        break;
    case OPT_SHORT_SIDE:
        if (take_count("--short-side", value, 1, 65535, "a side length 1..65535", &v, err, len) != OPTIONS_RUN)
            return OPTIONS_ERROR;
        o->short_side = (uint32_t)v;
        break;
    case OPT_RESIZE:
        if (parse_resize(value, &o->resize) != 0)
            return fail(err, len, "--resize: expected crop, stretch or pad, got '%s'", value);
        break;
    case OPT_JPEG_SCALE:
        if (strcmp(value, "exact") != 0 && strcmp(value, "dct") != 0)
            return fail(err, len, "--jpeg-scale: expected exact or dct, got '%s'", value);
        o->jpeg_dct = strcmp(value, "dct") == 0;
        break;
    case OPT_ALPHA:
        if (parse_alpha(value, &o->alpha) != 0)
            return fail(err, len, "--alpha: expected drop, black or white, got '%s'", value);
        break;
    case OPT_CHANNELS:
        if (strcmp(value, "3") != 0 && strcmp(value, "1") != 0)
            return fail(err, len, "--channels: expected 3 (RGB) or 1 (gray), got '%s'", value);
        o->channels = (uint32_t)(value[0] - '0');
        break;
    case OPT_LAYOUT:
        if (strcmp(value, "nchw") != 0 && strcmp(value, "nhwc") != 0)
            return fail(err, len, "--layout: expected nchw or nhwc, got '%s'", value);
        o->layout_nhwc = strcmp(value, "nhwc") == 0;
        o->layout_given = 1;
        break;
    case OPT_SEED: /* a seed names a shuffle, it is no amount: digits only */
        if (h5pack_parse_uint(value, &o->seed, NULL, 0) != 0)
            return fail(err, len, "--seed: expected an unsigned integer, got '%s'", value);
        break;
    case OPT_KEEP_ORDER: o->keep_order = 1; break;
    case OPT_CHUNK:
        if (strcmp(value, "auto") == 0)
            o->chunk_images = 0;
        else
            return take_count("--chunk", value, 1, UINT32_MAX, "auto or a number of images >= 1", &o->chunk_images,
                              err, len);
        break;
    case OPT_BATCH:
        return take_count("--batch", value, 1, UINT32_MAX, "a batch size >= 1", &o->batch, err, len);
    case OPT_COMPRESS:
        if (parse_compress(value, &o->compress, &o->gzip_level) != 0)
            return fail(err, len, "--compress: expected none, gzip or gzip:LEVEL (1-9), got '%s'", value);
        break;
    case OPT_CHECKSUM: o->checksum = 1; break;
    case OPT_THREADS:
        if (take_count("-j", value, 0, H5PACK_MAX_THREADS,
                       "a thread count 0.." H5PACK_MAX_THREADS_TEXT " (0 = the default: usable CPUs)", &v, err,
                       len) != OPTIONS_RUN)
            return OPTIONS_ERROR;
        o->threads = (int)v;
        break;
    case OPT_QUIET: o->verbosity = 0; break;
    case OPT_VERBOSE: o->verbosity = 2; break;
    case OPT_HELP: return OPTIONS_HELP;
    case OPT_VERSION: return OPTIONS_VERSION;
    case OPT_STRICT: o->strict = 1; break;
    case OPT_FORCE: o->force = 1; break;
    case OPT_MAX_PIXELS:
        o->max_pixels_given = 1;
        return take_count("--max-pixels", value, 1, UINT64_MAX, "a pixel count >= 1", &o->max_pixels, err, len);
    case OPT_TILES: o->tiles = 1; break;
    case OPT_TILE:
        if (take_count("--tile", value, 16, 8192, "a tile side 16..8192", &v, err, len) != OPTIONS_RUN)
            return OPTIONS_ERROR;
        o->tile = (uint32_t)v, o->tiles = 1;
        break;
    case OPT_LABELS:
        if (!value[0])
            return fail(err, len, "--labels: expected a CSV file name");
        o->labels_csv = value;
        break;
    case OPT_MASKS:
        if (!value[0])
            return fail(err, len, "--masks: expected a folder of mask PNGs");
        o->masks_dir = value;
        break;
    case OPT_LABELS_SEP:
        if (parse_labels_sep(value, &o->labels_sep) != 0)
            return fail(err, len, "--labels-sep: expected , ; tab or space, got '%s'", value);
        break;
    case OPT_LABELS_SKIP:
        return take_count("--labels-skip", value, 0, UINT32_MAX, "a number of lines", &o->labels_skip, err, len);
    }
    return OPTIONS_RUN;
}

/* One "--name[=value]" argument; may consume the next argv element as the value. */
static options_result parse_long(int argc, char **argv, int *i, pack_options *o, char *err, size_t len)
{
    const char *arg = argv[*i] + 2;
    const char *eq = strchr(arg, '=');
    size_t name_len = eq ? (size_t)(eq - arg) : strlen(arg);
    const opt_spec *spec = find_long(arg, name_len);
    if (!spec)
        return fail(err, len, "unknown option '%s' (see --help)", argv[*i]);
    const char *value = NULL;
    if (spec->takes_value) {
        if (eq)
            value = eq + 1;
        else if (*i + 1 < argc)
            value = argv[++*i];
        else
            return fail(err, len, "option --%s needs a value", spec->long_name);
    } else if (eq) {
        return fail(err, len, "option --%s takes no value", spec->long_name);
    }
    return apply_option(spec, value, o, err, len);
}

/* One "-xyz" group of short flags, or "-j N" / "-jN". */
static options_result parse_short(int argc, char **argv, int *i, pack_options *o, char *err, size_t len)
{
    const char *arg = argv[*i];
    for (size_t k = 1; arg[k]; k++) {
        const opt_spec *spec = find_short(arg[k]);
        if (!spec)
            return fail(err, len, "unknown option '-%c' (see --help)", arg[k]);
        if (!spec->takes_value) {
            options_result r = apply_option(spec, NULL, o, err, len);
            if (r != OPTIONS_RUN)
                return r;
            continue;
        }
        const char *value = arg + k + 1;
        if (*value == '\0') {
            if (*i + 1 >= argc)
                return fail(err, len, "option -%c needs a value", arg[k]);
            value = argv[++*i];
        }
        return apply_option(spec, value, o, err, len);
    }
    return OPTIONS_RUN;
}

static options_result take_positional(const char *arg, int *npos, pack_options *o, char *err, size_t len)
{
    if (*npos == 0)
        o->src_dir = arg;
    else if (*npos == 1)
        o->out_path = arg;
    else
        return fail(err, len, "unexpected argument '%s': expected SRC_DIR OUT.h5", arg);
    ++*npos;
    return OPTIONS_RUN;
}

/* --tiles stores every image whole: the options that size or lay out images do not apply. */
static options_result check_tiles(pack_options *o, char *err, size_t len)
{
    if (!o->tiles)
        return OPTIONS_RUN;
    const char *clash = o->height ? "--size" : o->max_side ? "--max-side" : o->short_side ? "--short-side"
                        : o->layout_given ? "--layout" : o->chunk_images ? "--chunk" : NULL;
    if (clash)
        return fail(err, len, "--tiles stores every image whole at its own size, in tiles of --tile T: %s does not "
                    "apply", clash);
    if (!o->max_pixels_given)
        o->max_pixels = PACK_TILES_MAX_PIXELS;
    return OPTIONS_RUN;
}

/* --masks: so far with images of one size only (--size, or a folder of one size); the converter refuses
 * images of several sizes once it knows them. */
static options_result check_masks(const pack_options *o, char *err, size_t len)
{
    if (!o->masks_dir)
        return OPTIONS_RUN;
    const char *clash = o->tiles ? "--tiles" : o->max_side ? "--max-side" : o->short_side ? "--short-side" : NULL;
    if (clash)
        return fail(err, len, "--masks works with images of one size for now (--size HxW, or a folder whose "
                    "images have one size): not with %s", clash);
    return OPTIONS_RUN;
}

/* --size, --max-side and --short-side each decide the stored size: one at most. The message says what each
 * one does, so that the user can pick. */
static options_result check_sizing(const pack_options *o, char *err, size_t len)
{
    if (o->max_side && o->height)
        return fail(err, len, "--max-side and --size both size the images: give one (--size HxW: one size for "
                    "all; --max-side N: each keeps its aspect)");
    if (o->short_side && o->height)
        return fail(err, len, "--short-side and --size both size the images: give one (--size HxW: one size for "
                    "all; --short-side S: each keeps its aspect, its shorter side S)");
    if (o->short_side && o->max_side)
        return fail(err, len, "--short-side and --max-side both size the images: give one (--short-side S: the "
                    "shorter side becomes S, as torchvision's Resize(S); --max-side N: the longer side at most N)");
    return OPTIONS_RUN;
}

options_result options_parse(int argc, char **argv, pack_options *o, char *err, size_t err_len)
{
    int npos = 0, only_positional = 0;
    options_result r = OPTIONS_RUN;
    for (int i = 1; i < argc && r == OPTIONS_RUN; i++) {
        const char *arg = argv[i];
        if (!arg)
            return fail(err, err_len, "null argument");
        if (only_positional || arg[0] != '-' || arg[1] == '\0')
            r = take_positional(arg, &npos, o, err, err_len);
        else if (strcmp(arg, "--") == 0)
            only_positional = 1;
        else if (arg[1] == '-')
            r = parse_long(argc, argv, &i, o, err, err_len);
        else
            r = parse_short(argc, argv, &i, o, err, err_len);
    }
    if (r != OPTIONS_RUN)
        return r;
    if (npos < 2)
        return fail(err, err_len, "missing %s (usage: h5pack [OPTIONS] SRC_DIR OUT.h5; see --help)",
                    npos == 0 ? "SRC_DIR and OUT.h5" : "OUT.h5");
    if ((o->labels_sep || o->labels_skip) && !o->labels_csv)
        return fail(err, err_len, "--labels-%s needs --labels FILE", o->labels_sep ? "sep" : "skip");
    if (check_sizing(o, err, err_len) != OPTIONS_RUN)
        return OPTIONS_ERROR;
    if (o->resize != RESIZE_CROP && o->height == 0)
        return fail(err, err_len, "--resize %s needs --size HxW", resize_mode_name(o->resize));
    if (o->jpeg_dct && o->height == 0 && !o->max_side && !o->short_side) /* DCT scaling only serves a resize */
        return fail(err, err_len, "--jpeg-scale dct needs --size HxW, --max-side N or --short-side S");
    if (check_masks(o, err, err_len) != OPTIONS_RUN)
        return OPTIONS_ERROR;
    return check_tiles(o, err, err_len);
}

void options_print_usage(FILE *f)
{
    fprintf(f,
            "Usage: h5pack [OPTIONS] SRC_DIR OUT.h5\n"
            "Pack an image folder (ImageFolder: one subfolder per class, or a flat folder) of JPEG/PNG\n"
            "files into a chunked uint8 HDF5 file for fast training input.\n"
            "\n"
            "Images:\n"
            "  --size HxW          resize every image to H x W (height first); default: every image keeps\n"
            "                      its own size (images of several sizes are stored HWC one after the\n"
            "                      other: docs/format.md, \"Images of several sizes\")\n"
            "  --max-side N        keep each image's aspect; resize those whose longer side exceeds N so\n"
            "                      that it is N (PIL's resize(BILINEAR), exactly); smaller ones are kept\n"
            "  --short-side S      keep each image's aspect; resize every image so that its shorter side is\n"
            "                      S, smaller ones up too: torchvision's Resize(S) (PIL's BILINEAR, exactly).\n"
            "                      Validation sets: --short-side 256, then the reader's centre crop to 224\n"
            "  --resize MODE       crop (default: scale the shorter side, centre crop), stretch, pad\n"
            "  --jpeg-scale MODE   with --size, --max-side or --short-side: exact (default) decodes JPEGs\n"
            "                      at full size, then resizes: the pixels of PIL's decode +\n"
            "                      resize(BILINEAR); dct decodes them at a reduced M/8 scale first (like\n"
            "                      PIL's draft()): faster for sources several times the target, pixels\n"
            "                      within ~1 level on average\n"
            "  --channels 3|1      RGB (default) or gray\n"
            "  --alpha MODE        PNG transparency: drop (default: PIL's convert('RGB'), as torchvision\n"
            "                      loads it; a transparent pixel keeps its colour), black or white\n"
            "                      (composited on that background)\n"
            "  --max-pixels N      reject images over N pixels before decoding them (default 178956970,\n"
            "                      PIL's decompression-bomb limit; with --tiles 10^10: bands make it safe)\n"
            "  --tiles             huge images (slides, satellite scenes): each image whole at its own size,\n"
            "                      its own dataset tiles/<i> chunked in T x T tiles, decoded band by band\n"
            "                      so memory does not grow with the image (docs/format.md)\n"
            "  --tile T            the tiles' side, 16..8192 (default 256; implies --tiles)\n"
            "  --masks MASK_DIR    segmentation masks: MASK_DIR mirrors SRC_DIR by stem (SRC_DIR/cat/001.jpg\n"
            "                      <-> MASK_DIR/cat/001.png); 8/16-bit gray or palette PNGs (indices), stored\n"
            "                      as masks (N,H,W) uint8/uint16 beside images, resized with PIL's NEAREST\n"
            "                      in the images' geometry. Images without a mask, masks without an image\n"
            "                      and bad masks are skipped (docs/converter.md, \"Segmentation masks\")\n"
            "Labels:\n"
            "  --labels FILE.csv   labels from a CSV instead of class folders: a header row, then per image\n"
            "                      its path relative to SRC_DIR (or a unique bare file name) and its\n"
            "                      integer or float values (e.g. CelebA's 40 attributes of 1/-1); stored as\n"
            "                      labels (N,K) in the smallest type that holds them, names in\n"
            "                      label_names. Images without a row are skipped (\"no label row\")\n"
            "  --labels-sep SEP    the table's separator: , (default; tab for a .tsv file), ; or tab, or\n"
            "                      space: runs of spaces and tabs (CelebA's list_attr_celeba.txt; no quoting)\n"
            "  --labels-skip N     skip N lines above the header (CelebA's txt: 1, its image count line).\n"
            "                      A header one field shorter than the rows names the label columns only\n"
            "Layout:\n"
            "  --layout nchw|nhwc  images dataset (N,C,H,W) (default) or (N,H,W,C), for images of one size\n"
            "  --seed S            seed of the packed order's shuffle (default 0)\n"
            "  --keep-order        keep the sorted order (class by class) instead of shuffling\n"
            "  --chunk auto|K      K whole images per chunk; auto (default) picks K from the image size,\n"
            "                      --batch and a 2 MiB target (see docs/chunking.md)\n"
            "  --batch N           training batch size the file will be read with (default 256)\n"
            "  --compress C        none (default: chunk addresses computable), gzip or gzip:LEVEL (1-9,\n"
            "                      default 4)\n"
            "  --checksum          add a fletcher32 checksum to every chunk\n"
            "Run:\n"
            "  -j, --threads N     decoding threads (default 0: the CPUs this process may use, divided by\n"
            "                      the processes a launcher started on this machine: torchrun, mpirun)\n"
            "  --strict            stop with exit code 2 at the first file that would be skipped\n"
            "  -f, --force         overwrite OUT.h5 if it exists\n"
            "  -q, --quiet         print errors only\n"
            "  -v, --verbose       print every skipped file and more detail\n"
            "  -h, --help          print this help and exit\n"
            "  -V, --version       print the version and exit\n"
            "\n"
            "Counts take K, M, G, T suffixes (powers of 1024, B or iB optional: 1K = 1KiB = 1024).\n"
            "Exit status: 0 when images were converted (skipped files are warnings), 1 on errors and bad\n"
            "usage, 2 when --strict stopped at a file that would be skipped.\n"
            "Example: h5pack --size 224x224 -j 8 train/ train.h5\n"
            "Several machines (an MPI build, docs/scale-out.md): mpirun -n P h5pack [OPTIONS] SRC_DIR OUT.h5\n"
            "writes the same file, each rank decoding 1/P of the images.\n");
}
