/* read_image.c - h5pack_read_image(): one stored image, (height, width, channels) uint8, for looking at a
 * file (h5pack.read_image in Python), through the chunk source, which knows every layout, read path and
 * storage (images of several sizes included). Not a training path: it opens the file per call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunksrc.h"
#include "errtext.h"
#include "format.h"
#include "h5pack.h"

/* IMAGE (in the file's layout, H x W x C) as (H,W,C) into OUT. */
static void copy_hwc(const source_geometry *g, uint32_t h, uint32_t w, const uint8_t *image, uint8_t *out)
{
    size_t plane = (size_t)h * w;
    if (g->layout == H5PACK_LAYOUT_NHWC || g->channels == 1) {
        memcpy(out, image, plane * g->channels);
        return;
    }
    for (size_t p = 0; p < plane; p++)
        for (uint32_t c = 0; c < g->channels; c++)
            out[p * g->channels + c] = image[c * plane + p];
}

/* Reads the chunk (run) that holds INDEX and copies the image out of it. */
static int read_through_chunk(chunk_source *src, const char *path, uint64_t index, uint32_t h, uint32_t w,
                              uint8_t *out, char *err, size_t err_len)
{
    const source_geometry *g = h5pack_chunksrc_geometry(src);
    uint8_t *buf = malloc(g->chunk_bytes);
    chunksrc_scratch *sc = h5pack_chunksrc_scratch_new(src);
    chunk_read_cost cost = {0};
    int rc = H5PACK_OK;
    if (!buf || !sc)
        rc = h5pack_errf(H5PACK_ENOMEM, err, err_len, "%s: out of memory for one chunk", path);
    else if (!(rc = h5pack_chunksrc_read(src, index / g->samples_per_chunk, buf, sc, &cost, err, err_len)))
        copy_hwc(g, h, w, buf + h5pack_chunksrc_image_offset(src, index), out);
    h5pack_chunksrc_scratch_free(sc);
    free(buf);
    return rc;
}

H5PACK_API int h5pack_read_image(const char *path, uint64_t index, uint8_t *out, size_t out_len, uint64_t dims[3],
                                 char *err, size_t err_len)
{
    if (err && err_len)
        err[0] = '\0';
    if (!path || !dims)
        return h5pack_errf(H5PACK_EINVAL, err, err_len, "h5pack_read_image: path and dims are required");
    chunk_source *src = NULL;
    int rc = h5pack_chunksrc_open(path, H5PACK_DS_IMAGES, NULL, H5PACK_LAYOUT_AUTO, &src, err, err_len);
    if (rc)
        return rc;
    const source_geometry *g = h5pack_chunksrc_geometry(src);
    uint32_t h = 0, w = 0;
    if (index >= g->n_samples) {
        rc = h5pack_errf(H5PACK_EINVAL, err, err_len, "%s: no image %llu: the file holds %llu", path,
                         (unsigned long long)index, (unsigned long long)g->n_samples);
    } else {
        h5pack_chunksrc_image_size(src, index, &h, &w);
        dims[0] = h, dims[1] = w, dims[2] = g->channels;
        uint64_t bytes = (uint64_t)h * w * g->channels;
        if (out && out_len < bytes)
            rc = h5pack_errf(H5PACK_EINVAL, err, err_len, "%s: %llu bytes given for an image of %llu", path,
                             (unsigned long long)out_len, (unsigned long long)bytes);
        else if (out)
            rc = read_through_chunk(src, path, index, h, w, out, err, err_len);
    }
    h5pack_chunksrc_close(src);
    return rc;
}
