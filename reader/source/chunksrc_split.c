/* chunksrc_split.c - the reader's chunk when HDF5 chunks split images (h5py's chunks=True picks shapes
 * such as (188,1,28,23) for 218x178 RGB images): the chunk of every HDF5 chunk of rows [i*k, (i+1)*k),
 * k the chunk's extent along the sample axis. A chunk holds k whole images, so the planner, the order and
 * the cache work on chunks exactly as on whole-image chunks; this file knows where each HDF5 chunk of a
 * chunk sits (4-D coordinates in file order) and copies ("scatters") its block into the chunk's images,
 * clipping edge chunks that reach beyond the extent (HDF5 stores them full size).
 *
 * 3-D (N,H,W) datasets are gray images: the shape gets a channel axis of 1 inserted (after N for NCHW,
 * last for NHWC; the bytes are the same) and every coordinate handed to HDF5 drops it again. */
#include <string.h>

#include "chunksrc_impl.h"

/* HDF5's own limit on one chunk (bytes, elements): a larger one is a damaged header. */
#define SLAB_MAX_HDF5_CHUNK_BYTES ((uint64_t)0xffffffffu)
/* A chunk is one read unit (and one cache slot): beyond this it cannot be a practical one. */
#define SLAB_MAX_BYTES ((uint64_t)4 << 30)

void h5pack_chunksrc_expand_dims(const chunk_source *s, const hsize_t *file_dims, hsize_t *out4)
{
    if (s->rank == 4) {
        memcpy(out4, file_dims, 4 * sizeof *out4);
        return;
    }
    for (int i = 0, j = 0; i < 4; i++)
        out4[i] = i == s->unit_axis ? 1 : file_dims[j++];
}

int h5pack_chunksrc_file_coords(const chunk_source *s, const uint64_t *v4, hsize_t *out)
{
    int j = 0;
    for (int i = 0; i < 4; i++)
        if (i != s->unit_axis)
            out[j++] = (hsize_t)v4[i];
    return j;
}

void h5pack_chunksrc_chunk_origin(const chunk_source *s, uint64_t chunk, uint64_t r, uint64_t *o4)
{
    o4[3] = (r % s->grid[3]) * s->cdims[3];
    r /= s->grid[3];
    o4[2] = (r % s->grid[2]) * s->cdims[2];
    o4[1] = (r / s->grid[2]) * s->cdims[1];
    o4[0] = chunk * s->cdims[0];
}

int h5pack_chunksrc_chunk_offset(const chunk_source *s, uint64_t chunk, uint64_t r, hsize_t *offset)
{
    uint64_t o4[4];
    h5pack_chunksrc_chunk_origin(s, chunk, r, o4);
    return h5pack_chunksrc_file_coords(s, o4, offset);
}

int h5pack_chunksrc_set_split(chunk_source *s, const char *name, const hsize_t *cdims4, char *err, size_t err_len)
{
    char cshape[128];
    hsize_t file_cdims[4];
    uint64_t c[4];
    for (int i = 0; i < 4; i++)
        c[i] = cdims4[i];
    int rank = h5pack_chunksrc_file_coords(s, c, file_cdims);
    h5pack_h5_dims_text(file_cdims, rank, cshape, sizeof cshape); /* as the user wrote it */
    uint64_t bytes = 1;
    for (int i = 0; i < 4; i++) {
        if (c[i] == 0 || c[i] > SLAB_MAX_HDF5_CHUNK_BYTES / bytes)
            return h5pack_chunksrc_fail(s, H5PACK_ECORRUPT, err, err_len,
                                        "'%s': chunk shape %s is impossible (HDF5 allows at most 4 GiB per chunk)",
                                        name, cshape);
        bytes *= c[i];
        s->cdims[i] = c[i];
        s->grid[i] = (s->dims[i] + c[i] - 1) / c[i];
    }
    s->h5_chunk_bytes = bytes;
    s->cps = s->grid[1] * s->grid[2] * s->grid[3]; /* each at most 65536: no overflow */
    s->whole = c[1] == s->dims[1] && c[2] == s->dims[2] && c[3] == s->dims[3];
    s->g.chunks_per_slab = s->cps;
    for (int i = 0; i < 4; i++)
        s->g.hdf5_chunk[i] = c[i];
    if (c[0] > SLAB_MAX_BYTES / s->g.image_bytes)
        return h5pack_chunksrc_fail(s, H5PACK_EFORMAT, err, err_len,
                                    "'%s': chunk shape %s spans %llu images along the sample axis: a read unit of "
                                    "%llu MiB; rechunk to fewer images per chunk",
                                    name, cshape, (unsigned long long)c[0],
                                    (unsigned long long)(c[0] * s->g.image_bytes >> 20));
    s->g.samples_per_chunk = c[0];
    s->g.n_chunks = s->grid[0];
    s->g.chunk_bytes = c[0] * s->g.image_bytes;
    s->n_h5_chunks = s->g.n_chunks * s->cps;
    if (s->g.n_chunks > CHUNKSRC_MAX_CHUNKS / s->cps)
        return h5pack_chunksrc_fail(s, H5PACK_ECORRUPT, err, err_len, "'%s': %llu x %llu chunks of shape %s is implausible",
                                    name, (unsigned long long)s->g.n_chunks, (unsigned long long)s->cps, cshape);
    /* Every chunk worth reading takes file space (and index space); more chunks than bytes in the file
     * is a damaged shape, not a sparse dataset anyone trains on. It would cost minutes of index lookups. */
    if (s->n_h5_chunks > s->file_size)
        return h5pack_chunksrc_fail(s, H5PACK_ECORRUPT, err, err_len,
                                    "'%s' claims %llu images in %llu chunks but the file has %llu bytes: damaged shape",
                                    name, (unsigned long long)s->g.n_samples, (unsigned long long)s->n_h5_chunks,
                                    (unsigned long long)s->file_size);
    return 0;
}

/* Copies rows x E1 x E2 runs of E3 bytes; merges runs when they are whole rows on both sides. */
typedef struct block_copy {
    uint64_t rows, e[4];          /* extent of the copied block (e[0] unused) */
    uint64_t src_stride[4];       /* bytes between steps along each axis in the chunk */
    uint64_t dst_stride[4];       /* ... and in the chunk */
} block_copy;

/* h5py's chunks make runs of a few dozen bytes (a (188,1,28,23) chunk: 23): fixed-size copies the
 * compiler inlines, where a libc memcpy call per run costs more than the copy. */
static inline void copy_run(uint8_t *d, const uint8_t *s, uint64_t n)
{
    if (n >= 16 && n <= 32) {
        memcpy(d, s, 16);
        memcpy(d + n - 16, s + n - 16, 16);
    } else if (n >= 8 && n < 16) {
        memcpy(d, s, 8);
        memcpy(d + n - 8, s + n - 8, 8);
    } else {
        memcpy(d, s, n);
    }
}

static void copy_block(const block_copy *b, const uint8_t *src, uint8_t *dst, int fill, uint8_t fill_byte)
{
    uint64_t rows = b->rows, n1 = b->e[1], n2 = b->e[2], run = b->e[3];
    if (run == b->src_stride[2] && run == b->dst_stride[2]) { /* whole rows of W: one run per plane */
        run *= n2, n2 = 1;
        if (run == b->src_stride[1] && run == b->dst_stride[1]) { /* whole planes: one run per image */
            run *= n1, n1 = 1;
            if (run == b->src_stride[0] && run == b->dst_stride[0]) /* whole images: one run */
                run *= rows, rows = 1;
        }
    }
    for (uint64_t r = 0; r < rows; r++)
        for (uint64_t a = 0; a < n1; a++)
            for (uint64_t y = 0; y < n2; y++) {
                uint8_t *d = dst + r * b->dst_stride[0] + a * b->dst_stride[1] + y * b->dst_stride[2];
                if (fill)
                    memset(d, fill_byte, run);
                else
                    copy_run(d, src + r * b->src_stride[0] + a * b->src_stride[1] + y * b->src_stride[2], run);
            }
}

void h5pack_chunksrc_scatter(const chunk_source *s, uint64_t chunk, uint64_t r, const uint8_t *pixels, uint8_t *dst)
{
    uint64_t o[4];
    block_copy b;
    h5pack_chunksrc_chunk_origin(s, chunk, r, o);
    b.rows = h5pack_chunksrc_chunk_samples(s, chunk);
    for (int i = 1; i < 4; i++)
        b.e[i] = s->dims[i] - o[i] < s->cdims[i] ? s->dims[i] - o[i] : s->cdims[i];
    b.src_stride[3] = b.dst_stride[3] = 1;
    for (int i = 2; i >= 0; i--) {
        b.src_stride[i] = b.src_stride[i + 1] * s->cdims[i + 1];
        b.dst_stride[i] = b.dst_stride[i + 1] * s->dims[i + 1];
    }
    copy_block(&b, pixels, dst + (o[1] * s->dims[2] + o[2]) * s->dims[3] + o[3], pixels == NULL, s->fill_byte);
}
