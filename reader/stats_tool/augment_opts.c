/* augment_opts.c - run's augmentation, echo and patch options (see augment_opts.h). Values are checked here
 * with the library's own limits, so a mistake names the option rather than coming back from
 * h5pack_open() as a field of h5pack_config. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "augment_opts.h"
#include "param_names.h"

#define MAX_OUTPUT_SIDE 65536 /* the library's limit on an output side */

static int bad(const char *cmd, const char *opt, const char *value, const char *expected)
{
    report_bad_value(cmd, opt, value, expected);
    return -1;
}

const char *crop_name(h5pack_crop c)
{
    return param_enum_name("crop", (int)c);
}

const char *echo_mode_name(h5pack_echo_mode m)
{
    return param_enum_name("echo_mode", (int)m);
}

static int parse_crop(const char *v, h5pack_crop *out)
{
    int c;
    if (param_enum_value("crop", v, &c))
        return -1;
    *out = (h5pack_crop)c;
    return 0;
}

static int parse_side(const char *text, uint32_t *out)
{
    uint64_t n = 0;
    if (h5pack_parse_uint(text, &n, NULL, 0) != 0 || n < 1 || n > MAX_OUTPUT_SIDE)
        return -1;
    *out = (uint32_t)n;
    return 0;
}

/* "224" (square) or "HxW" (also "H,W", the Loader's (h, w) pair). */
static int parse_output_size(const char *v, uint32_t *h, uint32_t *w)
{
    const char *sep = strpbrk(v, "x,");
    if (!sep)
        return parse_side(v, h) || parse_side(v, w) ? -1 : 0;
    char first[32];
    size_t len = (size_t)(sep - v);
    if (len == 0 || len >= sizeof first)
        return -1;
    memcpy(first, v, len);
    first[len] = '\0';
    return parse_side(first, h) || parse_side(sep + 1, w) ? -1 : 0;
}

/* "MIN,MAX" with 0 < MIN <= MAX (the library's rule for scale and ratio). */
static int parse_range(const char *v, double *lo, double *hi)
{
    char *store = NULL;
    const char *items[2];
    int n = split_list(v, &store, items, 2);
    int rc = n == 2 && parse_double(items[0], 1e-300, 1e9, lo) == 0 && parse_double(items[1], *lo, 1e9, hi) == 0;
    free(store);
    return rc ? 0 : -1;
}

static int parse_valued(const char *cmd, const char *opt, const char *v, h5pack_config *cfg, augment_seen *seen)
{
    if (strcmp(opt, "--crop") == 0) {
        if (parse_crop(v, &cfg->crop))
            return bad(cmd, opt, v, param_enum_choices("crop"));
    } else if (strcmp(opt, "--output-size") == 0) {
        if (parse_output_size(v, &cfg->output_height, &cfg->output_width))
            return bad(cmd, opt, v, "N or HxW, sides in 1..65536, e.g. 224 or 160x224");
        seen->output_size = 1;
    } else if (strcmp(opt, "--scale") == 0) {
        if (parse_range(v, &cfg->scale_min, &cfg->scale_max))
            return bad(cmd, opt, v, "MIN,MAX with 0 < MIN <= MAX, e.g. 0.08,1");
        seen->scale = 1;
    } else if (strcmp(opt, "--ratio") == 0) {
        if (parse_range(v, &cfg->ratio_min, &cfg->ratio_max))
            return bad(cmd, opt, v, "MIN,MAX with 0 < MIN <= MAX, e.g. 0.75,1.3333");
        seen->ratio = 1;
    } else if (strcmp(opt, "--center-ratio") == 0) {
        if (parse_double(v, 1e-300, 1.0, &cfg->center_ratio))
            return bad(cmd, opt, v, "a number in (0, 1], e.g. 0.875");
        seen->center_ratio = 1;
    } else if (strcmp(opt, "--crop-padding") == 0) {
        uint64_t p = 0;
        if (h5pack_parse_uint(v, &p, NULL, 0) != 0 || p > MAX_OUTPUT_SIDE)
            return bad(cmd, opt, v, "pixels, an integer in 0..65536");
        cfg->random_crop_padding = (int)p;
        seen->crop_padding = 1;
    } else if (strcmp(opt, "--patch") == 0 || strcmp(opt, "--overlap") == 0) {
        uint64_t n = 0;
        int patch = opt[2] == 'p';
        if (h5pack_parse_uint(v, &n, NULL, 0) != 0 || n < (uint64_t)patch || n > 65535)
            return bad(cmd, opt, v, patch ? "pixels, an integer in 1..65535" : "pixels, an integer in 0..65534");
        *(patch ? &cfg->patch_size : &cfg->patch_overlap) = (uint32_t)n;
    } else if (strcmp(opt, "--patch-mode") == 0) {
        int m;
        if (param_enum_value("patch_mode", v, &m))
            return bad(cmd, opt, v, param_enum_choices("patch_mode"));
        cfg->patch_mode = (h5pack_patch_mode)m;
    } else if (strcmp(opt, "--patches-per-epoch") == 0) {
        if (h5pack_parse_uint(v, &cfg->patches_per_epoch, NULL, 0) != 0)
            return bad(cmd, opt, v, "a count (0 = a grid's worth)");
    } else if (strcmp(opt, "--echo-mode") == 0) {
        int m;
        if (param_enum_value("echo_mode", v, &m))
            return bad(cmd, opt, v, param_enum_choices("echo_mode"));
        cfg->echo_mode = (h5pack_echo_mode)m;
    } else {
        return 0;
    }
    return 1;
}

int parse_augment_option(const char *cmd, int argc, char **argv, int *i, h5pack_config *cfg, augment_seen *seen)
{
    const char *opt = argv[*i];
    if (strcmp(opt, "--flip") == 0) {
        cfg->random_flip = 1;
        return 1;
    }
    static const char *const with_value[] = {"--crop",         "--output-size",  "--scale",      "--ratio",
                                             "--center-ratio", "--crop-padding", "--echo-mode",  "--patch",
                                             "--overlap",      "--patch-mode",   "--patches-per-epoch"};
    const char *v = NULL;
    int taken = take_option_value(with_value, sizeof with_value / sizeof *with_value, argc, argv, i, &v);
    if (taken < 0)
        fprintf(stderr, "h5pack-stats %s: %s needs a value\n", cmd, opt);
    return taken <= 0 ? taken : parse_valued(cmd, opt, v, cfg, seen);
}

static int conflict(const char *cmd, const char *opt, const char *why)
{
    fprintf(stderr, "h5pack-stats %s: %s %s\n", cmd, opt, why);
    return -1;
}

int check_augment_options(const char *cmd, const h5pack_config *cfg, const augment_seen *seen)
{
    if (seen->output_size && cfg->crop == H5PACK_CROP_NONE)
        return conflict(cmd, "--output-size", "needs --crop random_resized or --crop center (without a crop "
                                              "the images keep their stored size)");
    if ((seen->scale || seen->ratio) && cfg->crop != H5PACK_CROP_RANDOM_RESIZED)
        return conflict(cmd, seen->scale ? "--scale" : "--ratio", "applies only to --crop random_resized");
    if (seen->center_ratio && cfg->crop != H5PACK_CROP_CENTER)
        return conflict(cmd, "--center-ratio", "applies only to --crop center");
    if (cfg->random_crop_padding > 0 && cfg->crop != H5PACK_CROP_NONE)
        return conflict(cmd, "--crop-padding", "cannot be combined with a resizing --crop (pad-and-crop keeps "
                                               "the stored size)");
    if ((cfg->patch_overlap || cfg->patch_mode != H5PACK_PATCH_SLIDING || cfg->patches_per_epoch) && !cfg->patch_size)
        return conflict(cmd, "--overlap/--patch-mode/--patches-per-epoch", "need --patch S");
    if (cfg->patch_size && cfg->patch_overlap >= cfg->patch_size)
        return conflict(cmd, "--overlap", "must be below --patch");
    if (cfg->patch_size && cfg->timeline_path && cfg->timeline_path[0]) /* the library refuses it (exit 2) */
        return conflict(cmd, "--timeline", "is not available with --patch yet");
    if (cfg->echo_mode == H5PACK_ECHO_SAMPLE && cfg->echo > 64)
        return conflict(cmd, "--echo-mode sample", "supports --echo up to 64 (each delivery mixes parts of "
                                                   "echo different batches)");
    return 0;
}
