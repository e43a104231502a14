/* augment_opts.h - run's augmentation and echo options, named as the Python Loader's arguments
 * (docs/augmentation.md): --crop, --output-size, --scale, --ratio, --center-ratio, --flip,
 * --crop-padding, --echo-mode; mapped onto h5pack_config and checked together once all are read. */
#ifndef H5PACK_STATS_AUGMENT_OPTS_H
#define H5PACK_STATS_AUGMENT_OPTS_H

#include "h5pack.h"

/* Which of the options were given (for the checks that span several). */
typedef struct augment_seen {
    int output_size, scale, ratio, center_ratio, crop_padding;
} augment_seen;

/* Looks at argv[*i] (and its value): 1 when consumed (advancing *i past the value), 0 when not one of
 * these, -1 on a bad value (message naming the option and the reason printed). */
int parse_augment_option(const char *cmd, int argc, char **argv, int *i, h5pack_config *cfg, augment_seen *seen);

/* The checks between options (an output size without a crop, --scale without the random resized crop,
 * padding with a resizing crop...): 0, or -1 with the message printed. */
int check_augment_options(const char *cmd, const h5pack_config *cfg, const augment_seen *seen);

/* "none", "random_resized", "center" / "batch", "sample": the Python Loader's names. */
const char *crop_name(h5pack_crop c);
const char *echo_mode_name(h5pack_echo_mode m);

#endif
