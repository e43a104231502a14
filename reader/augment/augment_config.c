/* augment_config.c - the config's augmentation and echo fields for the backend; see augment_config.h. */
#include <stdio.h>

#include "augment_config.h"
#include "augment_geom.h"
#include "echo_sched.h"

int h5pack_augment_sample_echo(const h5pack_config *cfg)
{
    return cfg->echo_mode == H5PACK_ECHO_SAMPLE && cfg->echo >= 2;
}

/* Pool entries sample echo needs for SETUP's epochs (E - 1 when any epoch is composed). */
static int pool_batches(const h5pack_config *cfg, const reader_setup *setup)
{
    if (!h5pack_augment_sample_echo(cfg))
        return 0;
    echo_sched s;
    h5pack_echo_sched_for(&s, cfg->echo, &setup->op, setup->start_epoch, setup->start_origin);
    return h5pack_echo_pool_batches(&s);
}

int h5pack_augment_backend_params(const h5pack_config *cfg, const source_geometry *g, const reader_setup *setup,
                                  backend_params *bp, char *err, size_t err_len)
{
    if (h5pack_augment_sample_echo(cfg) && cfg->echo > 64)
        return h5pack_errf(H5PACK_EINVAL, err, err_len, "sample echo supports echo up to 64 (%u asked): "
                                    "each delivery mixes parts of echo different batches", cfg->echo);
    int crop = cfg->crop != H5PACK_CROP_NONE;
    if (!crop && (cfg->output_height || cfg->output_width || cfg->max_output_height || cfg->max_output_width))
        return h5pack_errf(H5PACK_EINVAL, err, err_len, "an output size needs a resizing crop (crop is "
                                    "none: images keep their stored %u x %u)", g->height, g->width);
    bp->crop = (int)cfg->crop;
    bp->out_height = cfg->output_height ? cfg->output_height : g->height;
    bp->out_width = cfg->output_width ? cfg->output_width : g->width;
    bp->max_out_height = cfg->max_output_height > bp->out_height ? cfg->max_output_height : bp->out_height;
    bp->max_out_width = cfg->max_output_width > bp->out_width ? cfg->max_output_width : bp->out_width;
    bp->scale_min = cfg->scale_min, bp->scale_max = cfg->scale_max;
    bp->ratio_min = cfg->ratio_min, bp->ratio_max = cfg->ratio_max;
    bp->center_ratio = cfg->center_ratio;
    bp->pool_batches = pool_batches(cfg, setup);
    /* sample echo reads E - 1 batches ahead of the one delivered, and the workers fill one more */
    int need = h5pack_augment_sample_echo(cfg) ? (int)cfg->echo + 1 : 1;
    bp->slots = cfg->prefetch > need ? cfg->prefetch : need;
    return H5PACK_OK;
}

void h5pack_augment_fill_info(const h5pack_config *cfg, const backend_params *bp, const backend *be,
                              h5pack_info *info)
{
    info->crop = cfg->crop;
    info->output_height = bp->crop ? bp->out_height : bp->height;
    info->output_width = bp->crop ? bp->out_width : bp->width;
    info->max_output_height = bp->crop ? bp->max_out_height : bp->height;
    info->max_output_width = bp->crop ? bp->max_out_width : bp->width;
    info->echo_mode = cfg->echo_mode;
    info->ring_slots = bp->slots;
    info->echo_pool_bytes = be->pool_bytes;
}
