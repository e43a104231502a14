/* packer_masks.c - the packer's steps for --masks (mask_match.h pairs the files, h5out_masks.c writes them). */
#include <stdio.h>

#include "mask_match.h"
#include "packer_impl.h"

/* --masks: pairs every image with its mask; the images without one, and the masks without an image, become
 * skipped files (mask_match.h). */
int pack_attach_masks(pack_ctx *c, char *err, size_t len)
{
    size_t images = c->scan.n_entries;
    if (!c->o->masks_dir)
        return 0;
    if (mask_match(c->o->masks_dir, &c->scan, &c->job.mask_bytes, err, len) != 0)
        return -1;
    if (images > 0 && c->scan.n_entries == 0) {
        snprintf(err, len, "none of the %zu images has a mask in %s: masks mirror the images' paths by stem "
                 "(%s/cat/001.jpg <-> %s/cat/001.png)%s%s", images, c->o->masks_dir, c->o->src_dir, c->o->masks_dir,
                 c->scan.skipped.count ? "; the first skipped: " : "",
                 c->scan.skipped.count ? c->scan.skipped.reasons[c->scan.skipped.count - 1] : "");
        return -1;
    }
    c->job.mask_dir = c->o->masks_dir;
    return 0;
}

/* --masks, so far: one process, images of one size (the packed dataset (N,H,W) beside (N,C,H,W)). */
int pack_refuse_masks_here(const pack_ctx *c, char *err, size_t len)
{
    if (!c->o->masks_dir)
        return 0;
    if (ranks(c) > 1)
        snprintf(err, len, "--masks is converted by one process only for now: run h5pack without mpirun");
    else if (c->sizes.places)
        snprintf(err, len, "--masks works with images of one size for now, and %s holds images of several sizes: "
                 "give --size HxW", c->o->src_dir);
    else
        return 0;
    return -1;
}
