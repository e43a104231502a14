/* masksrc.c - the masks dataset as a chunk source of 3-D "gray images" (masksrc.h), checked against the
 * images it goes with. */
#include "masksrc.h"

#include <stdlib.h>
#include <string.h>

#include "errtext.h"

struct mask_source {
    chunk_source *src;
};

/* What every refusal says the masks must be. */
#define MASKS_CONTRACT "masks are one-channel uint8 (N,H,W) of the images' N, H and W, chunked (k,H,W) with the images' k"

const char *h5pack_masksrc_name(const h5pack_config *cfg)
{
    return cfg->masks_dataset && cfg->masks_dataset[0] ? cfg->masks_dataset : NULL;
}

/* The masks' geometry M against the images' I: 0, or EFORMAT with what differs. */
static int check_against_images(const char *path, const char *name, const source_geometry *m,
                                const source_geometry *i, char *err, size_t err_len)
{
    if (i->several_sizes)
        return h5pack_errf(H5PACK_EFORMAT, err, err_len, "%s: masks '%s': images of several sizes have no masks "
                           "the reader can deliver yet", path, name);
    if (m->rank != 3)
        return h5pack_errf(H5PACK_EFORMAT, err, err_len, "%s: masks '%s' are %d-D: %s", path, name, m->rank,
                           MASKS_CONTRACT);
    if (m->n_samples != i->n_samples)
        return h5pack_errf(H5PACK_EFORMAT, err, err_len, "%s: masks '%s' hold %llu masks for %llu images: %s", path,
                           name, (unsigned long long)m->n_samples, (unsigned long long)i->n_samples, MASKS_CONTRACT);
    if (m->height != i->height || m->width != i->width)
        return h5pack_errf(H5PACK_EFORMAT, err, err_len, "%s: masks '%s' are %ux%u, the images %ux%u: %s", path, name,
                           m->height, m->width, i->height, i->width, MASKS_CONTRACT);
    if (m->samples_per_chunk != i->samples_per_chunk)
        return h5pack_errf(H5PACK_EFORMAT, err, err_len, "%s: masks '%s' come %llu per chunk, the images %llu: %s",
                           path, name, (unsigned long long)m->samples_per_chunk,
                           (unsigned long long)i->samples_per_chunk, MASKS_CONTRACT);
    return 0;
}

int h5pack_masksrc_open(const char *path, const char *name, const source_geometry *images, mask_source **out,
                        char *err, size_t err_len)
{
    *out = NULL;
    mask_source *m = calloc(1, sizeof *m);
    if (!m)
        return h5pack_errf(H5PACK_ENOMEM, err, err_len, "%s: out of memory for the masks", path);
    char why[512] = "";
    /* NCHW: a 3-D dataset is read as C = 1 whatever its attributes say */
    int rc = h5pack_chunksrc_open(path, name, NULL, H5PACK_LAYOUT_NCHW, &m->src, why, sizeof why);
    if (rc) /* the chunk source speaks of images: say these were the masks */
        rc = h5pack_errf(rc, err, err_len, "%s (reading '%s' as the masks: %s)", why, name, MASKS_CONTRACT);
    else
        rc = check_against_images(path, name, h5pack_chunksrc_geometry(m->src), images, err, err_len);
    if (rc) {
        h5pack_masksrc_close(m);
        return rc;
    }
    *out = m;
    return 0;
}

uint64_t h5pack_masksrc_mask_bytes(const mask_source *m)
{
    return h5pack_chunksrc_geometry(m->src)->image_bytes;
}

uint64_t h5pack_masksrc_chunk_bytes(const mask_source *m)
{
    return h5pack_chunksrc_geometry(m->src)->chunk_bytes;
}

uint64_t h5pack_masksrc_stored_bytes(const mask_source *m, uint64_t chunk)
{
    return h5pack_chunksrc_stored_bytes(m->src, chunk);
}

chunksrc_scratch *h5pack_masksrc_scratch_new(const mask_source *m)
{
    return h5pack_chunksrc_scratch_new(m->src);
}

int h5pack_masksrc_read(mask_source *m, uint64_t chunk, uint8_t *dst, chunksrc_scratch *sc, chunk_read_cost *cost,
                        char *err, size_t err_len)
{
    return h5pack_chunksrc_read(m->src, chunk, dst, sc, cost, err, err_len);
}

void h5pack_masksrc_close(mask_source *m)
{
    if (!m)
        return;
    h5pack_chunksrc_close(m->src);
    free(m);
}
