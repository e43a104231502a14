/* augment_opts.c - the rules between run's augmentation, echo and patch options (see commands.h): an
 * option that has no effect without another, or a combination the library refuses, named by the
 * options rather than coming back from h5pack_open() as fields. Each value's own bounds are the
 * parameter table's and were checked when it was read (option_map.c). */
#include <stdio.h>

#include "commands.h"

static int conflict(const char *cmd, const char *opt, const char *why)
{
    fprintf(stderr, "h5pack-stats %s: %s %s\n", cmd, opt, why);
    return -1;
}

static int check_crop_options(const char *cmd, const h5pack_config *cfg, const option_given *given)
{
    int scale = option_was_given(given, "--scale"), ratio = option_was_given(given, "--ratio");
    if (option_was_given(given, "--output-size") && cfg->crop == H5PACK_CROP_NONE)
        return conflict(cmd, "--output-size", "needs --crop random_resized or --crop center (without a crop "
                                              "the images keep their stored size)");
    if ((scale || ratio) && cfg->crop != H5PACK_CROP_RANDOM_RESIZED)
        return conflict(cmd, scale ? "--scale" : "--ratio", "applies only to --crop random_resized");
    if (option_was_given(given, "--center-ratio") && cfg->crop != H5PACK_CROP_CENTER)
        return conflict(cmd, "--center-ratio", "applies only to --crop center");
    if (cfg->random_crop_padding > 0 && cfg->crop != H5PACK_CROP_NONE)
        return conflict(cmd, "--crop-padding", "cannot be combined with a resizing --crop (pad-and-crop keeps "
                                               "the stored size)");
    return 0;
}

static int check_patch_options(const char *cmd, const h5pack_config *cfg)
{
    if ((cfg->patch_overlap || cfg->patch_mode != H5PACK_PATCH_SLIDING || cfg->patches_per_epoch) && !cfg->patch_size)
        return conflict(cmd, "--overlap/--patch-mode/--patches-per-epoch", "need --patch S");
    if (cfg->patch_size && cfg->patch_overlap >= cfg->patch_size)
        return conflict(cmd, "--overlap", "must be below --patch");
    return 0;
}

int check_augment_options(const char *cmd, const h5pack_config *cfg, const option_given *given)
{
    if (check_crop_options(cmd, cfg, given) || check_patch_options(cmd, cfg))
        return -1;
    if (cfg->echo_mode == H5PACK_ECHO_SAMPLE && cfg->echo > 64)
        return conflict(cmd, "--echo-mode sample", "supports --echo up to 64 (each delivery mixes parts of "
                                                   "echo different batches)");
    return 0;
}
