/* chunksrc_path.c - picks the read path of a validated images dataset (see chunksrc.h): implicit when
 * whole-image chunk addresses follow addr0 + i * chunk_bytes, contiguous for an allocated unchunked
 * dataset, raw for deflate/shuffle-only (or unfiltered) chunks HDF5 can hand over as bytes, hdf5 for
 * the rest; and the chunk (chunk) geometry that goes with it. */
#include <stdio.h>
#include <string.h>

#include "chunksrc_impl.h"

/* Virtual chunk of a contiguous (or compact / virtual) dataset: about this many bytes of whole images. */
#define CHUNKSRC_VIRTUAL_CHUNK_BYTES ((uint64_t)1 << 20)

static void set_virtual_chunks(chunk_source *s)
{
    uint64_t k = CHUNKSRC_VIRTUAL_CHUNK_BYTES / s->g.image_bytes;
    if (k < 1)
        k = 1;
    if (k > s->g.n_samples)
        k = s->g.n_samples;
    s->g.samples_per_chunk = k;
    s->g.n_chunks = (s->g.n_samples + k - 1) / k;
    s->g.chunk_bytes = k * s->g.image_bytes;
    s->cps = s->g.chunks_per_slab = 1; /* no HDF5 chunks: a read unit is whole images */
    s->whole = 1;
}

/* HDF5's offset of the whole-image chunk K (rows k * samples_per_chunk on), zeros after the first axis. */
static void whole_chunk_offset(const void *ctx, uint64_t k, hsize_t *offset)
{
    const chunk_source *s = ctx;
    memset(offset, 0, 4 * sizeof *offset); /* as many zeros as the rank needs */
    offset[0] = (hsize_t)(k * s->g.samples_per_chunk);
}

/* HDF5 1.10 cannot tell the chunk index type; stored.h checks the implicit index's formula on the first,
 * a middle and the last chunk instead. Returns 1 when it holds. */
static int addresses_are_implicit(chunk_source *s)
{
    stored_chunks implicit;
    if (!h5pack_stored_find_implicit(s->dset, s->g.n_chunks, s->g.chunk_bytes, s->userblock, whole_chunk_offset, s,
                                     &implicit))
        return 0;
    s->base_addr = implicit.first;
    return 1;
}

static int is_fixed_early(hid_t dcpl, const hsize_t *dims, const hsize_t *maxdims)
{
    H5D_alloc_time_t when = H5D_ALLOC_TIME_ERROR; /* dims as 4-D: an inserted C = 1 is fixed on both */
    for (int i = 0; i < 4; i++)
        if (maxdims[i] != dims[i])
            return 0;
    return H5Pget_alloc_time(dcpl, &when) >= 0 && when == H5D_ALLOC_TIME_EARLY;
}

/* Appends the filter's name to the geometry's filter list (h5pack_h5_filter_append). */
static void describe_filter(source_geometry *g, H5Z_filter_t id, unsigned level, const char *name)
{
    h5pack_h5_filter_append(id, level, name, g->filters, sizeof g->filters);
    g->n_filters++;
}

int h5pack_chunksrc_read_filters(chunk_source *s, hid_t dcpl, filter_summary *f, char *err, size_t err_len)
{
    memset(f, 0, sizeof *f);
    f->deflate_index = -1;
    f->n = H5Pget_nfilters(dcpl);
    if (f->n < 0 || f->n > 32)
        return h5pack_chunksrc_fail_h5(s, H5PACK_ECORRUPT, err, err_len, "cannot read the filter pipeline");
    for (int i = 0; i < f->n; i++) {
        unsigned flags = 0, cd[8], config = 0;
        size_t ncd = 8;
        char name[64] = "";
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, sizeof name, name, &config);
        name[sizeof name - 1] = '\0';
        describe_filter(&s->g, id, ncd ? cd[0] : 0, name);
        if (id == H5Z_FILTER_DEFLATE) {
            f->deflate++;
            f->deflate_index = i;
        } else if (id == H5Z_FILTER_SHUFFLE) {
            f->shuffle++;
        } else {
            f->other++;
            if (id < 0 || H5Zfilter_avail(id) <= 0)
                return h5pack_chunksrc_fail(s, H5PACK_EFORMAT, err, err_len,
                                     "the images use filter '%s' (id %d), which this HDF5 cannot decode "
                                     "(a plugin missing from HDF5_PLUGIN_PATH?)",
                                     name[0] ? name : "unknown", (int)id);
        }
    }
    return 0;
}

/* Reads the fill value that never-written chunks read as (0 unless the file says otherwise). */
static void read_fill(chunk_source *s, hid_t dcpl)
{
    H5D_fill_value_t state = H5D_FILL_VALUE_UNDEFINED;
    uint8_t fill = 0;
    if (H5Pfill_value_defined(dcpl, &state) >= 0 && state != H5D_FILL_VALUE_UNDEFINED &&
        H5Pget_fill_value(dcpl, H5T_NATIVE_UINT8, &fill) >= 0)
        s->fill_byte = fill;
}

/* Any chunk shape: the reader's chunk is the chunk of HDF5 chunks sharing a range of rows
 * (chunksrc_split.c); h5pack's whole-image chunks are chunks of one chunk. */
static int read_chunk_shape(chunk_source *s, hid_t dcpl, const char *name, char *err, size_t err_len)
{
    hsize_t cfile[4] = {0, 0, 0, 0}, c4[4];
    if (H5Pget_chunk(dcpl, s->rank, cfile) != s->rank)
        return h5pack_chunksrc_fail_h5(s, H5PACK_ECORRUPT, err, err_len, "cannot read the chunk shape");
    h5pack_chunksrc_expand_dims(s, cfile, c4);
    return h5pack_chunksrc_set_split(s, name, c4, err, err_len);
}

static int data_range_ok(const chunk_source *s, uint64_t addr, uint64_t bytes)
{
    return addr <= s->file_size && bytes <= s->file_size - addr;
}

static int choose_chunked_path(chunk_source *s, hid_t dcpl, const hsize_t *dims, const hsize_t *maxdims,
                               char *err, size_t err_len)
{
    filter_summary f;
    int rc = h5pack_chunksrc_read_filters(s, dcpl, &f, err, err_len);
    if (rc)
        return rc;
    s->chunked = s->g.chunked = 1;
    s->deflate_index = f.deflate_index;
    s->g.compressed = f.deflate > 0;
    if (f.n == 0 && s->whole && is_fixed_early(dcpl, dims, maxdims) && addresses_are_implicit(s)) {
        if (!data_range_ok(s, s->base_addr, s->g.n_chunks * s->g.chunk_bytes))
            return h5pack_chunksrc_fail(s, H5PACK_ECORRUPT, err, err_len,
                                 "truncated: chunk data ends at byte %llu but the file has %llu bytes",
                                 (unsigned long long)(s->base_addr + s->g.n_chunks * s->g.chunk_bytes),
                                 (unsigned long long)s->file_size);
        s->g.path = H5PACK_READ_IMPLICIT;
    } else if (f.other == 0 && f.deflate <= 1 && (f.deflate == 1 || f.n == 0)) {
        /* located, else H5Dread_chunk; inflated when the deflate filter was applied */
        s->g.path = f.deflate ? H5PACK_READ_RAW_DEFLATE : H5PACK_READ_LOCATED;
    } else {
        s->g.path = H5PACK_READ_HDF5;
    }
    return 0;
}

static int choose_unchunked_path(chunk_source *s, hid_t dcpl, char *err, size_t err_len)
{
    set_virtual_chunks(s);
    haddr_t addr = H5Pget_layout(dcpl) == H5D_CONTIGUOUS && H5Pget_external_count(dcpl) == 0
                       ? H5Dget_offset(s->dset)
                       : HADDR_UNDEF;
    if (addr == HADDR_UNDEF) {
        s->g.path = H5PACK_READ_HDF5; /* not allocated (reads as the fill value), external, compact or virtual */
        return 0;
    }
    uint64_t bytes = s->g.n_samples * s->g.image_bytes; /* H5Dget_offset counts the user block already */
    if (!data_range_ok(s, addr, bytes))
        return h5pack_chunksrc_fail(s, H5PACK_ECORRUPT, err, err_len,
                             "truncated: image data ends at byte %llu but the file has %llu bytes",
                             (unsigned long long)(addr + bytes), (unsigned long long)s->file_size);
    s->base_addr = addr;
    s->g.path = H5PACK_READ_CONTIGUOUS;
    return 0;
}

int h5pack_chunksrc_choose_path(chunk_source *s, const char *name, const hsize_t *dims, const hsize_t *maxdims,
                         char *err, size_t err_len)
{
    hid_t dcpl = H5Dget_create_plist(s->dset);
    int rc;
    if (dcpl < 0)
        return h5pack_chunksrc_fail_h5(s, H5PACK_ECORRUPT, err, err_len, "cannot read the dataset's storage properties");
    read_fill(s, dcpl);
    if (H5Pget_layout(dcpl) == H5D_CHUNKED) {
        rc = read_chunk_shape(s, dcpl, name, err, err_len);
        if (rc == 0)
            rc = choose_chunked_path(s, dcpl, dims, maxdims, err, err_len);
    } else {
        rc = choose_unchunked_path(s, dcpl, err, err_len);
    }
    H5Pclose(dcpl);
    return rc;
}
