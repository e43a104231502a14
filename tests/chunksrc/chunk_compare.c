/* chunk_compare.c - see chunk_compare.h. */
#include "chunk_compare.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>

static int read_rows(hid_t dset, uint64_t first, uint64_t count, uint8_t *out)
{
    hsize_t cnt[4];
    hid_t fspace = H5Dget_space(dset);
    int rank = H5Sget_simple_extent_dims(fspace, cnt, NULL); /* 4, or 3 for gray images */
    hsize_t start[4] = {first, 0, 0, 0};
    cnt[0] = count;
    hid_t mem = H5Screate_simple(rank, cnt, NULL);
    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, cnt, NULL);
    herr_t rc = H5Dread(dset, H5T_NATIVE_UINT8, mem, fspace, H5P_DEFAULT, out);
    H5Sclose(mem);
    H5Sclose(fspace);
    return rc < 0 ? -1 : 0;
}

static int compare_chunk(chunk_source *s, hid_t dset, uint64_t chunk, uint8_t *got, uint8_t *want, int pattern)
{
    const source_geometry *g = h5pack_chunksrc_geometry(s);
    char err[512];
    uint64_t n = h5pack_chunksrc_chunk_samples(s, chunk), first = chunk * g->samples_per_chunk;
    int rc = h5pack_chunksrc_read(s, chunk, got, NULL, NULL, err, sizeof err);
    if (rc) {
        fprintf(stderr, "h5pack_chunksrc_read(%llu) = %d: %s\n", (unsigned long long)chunk, rc, err);
        return -1;
    }
    if (read_rows(dset, first, n, want) != 0) {
        fprintf(stderr, "H5Dread of chunk %llu failed\n", (unsigned long long)chunk);
        return -1;
    }
    for (uint64_t b = 0; b < n * g->image_bytes; b++) {
        uint64_t img = first + b / g->image_bytes, off = b % g->image_bytes;
        if (got[b] != want[b] || (pattern && got[b] != h5fix_pixel_rows(NULL, img, off))) {
            fprintf(stderr, "chunk %llu byte %llu: chunksrc %u, H5Dread %u, expected %u\n", (unsigned long long)chunk,
                    (unsigned long long)b, got[b], want[b], h5fix_pixel_rows(NULL, img, off));
            return -1;
        }
    }
    return 0;
}

int test_compare_all_chunks(chunk_source *s, const char *path, const char *images, int pattern)
{
    const source_geometry *g = h5pack_chunksrc_geometry(s);
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t dset = file >= 0 ? H5Dopen2(file, images, H5P_DEFAULT) : -1;
    uint8_t *got = malloc(g->chunk_bytes), *want = malloc(g->chunk_bytes);
    int rc = dset < 0 ? -1 : 0;
    for (uint64_t c = 0; rc == 0 && c < g->n_chunks; c++)
        rc = compare_chunk(s, dset, c, got, want, pattern);
    free(got);
    free(want);
    if (dset >= 0)
        H5Dclose(dset);
    if (file >= 0)
        H5Fclose(file);
    return rc;
}
