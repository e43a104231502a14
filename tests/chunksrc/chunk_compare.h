/* chunk_compare.h - the chunk source tests' file defaults (written by tests/fixtures/h5fixture.h) and a
 * chunk-by-chunk comparison of chunk source reads against H5Dread. Test helper only. */
#ifndef H5PACK_TEST_CHUNK_COMPARE_H
#define H5PACK_TEST_CHUNK_COMPARE_H

#include <hdf5.h> /* the tests also write and damage files by hand */

#include "chunksrc.h"
#include "h5fixture.h"

/* n 23, 3x8x10 in chunks of 4 as h5pack writes them (early allocation also when filtered), labels uint8
 * i % 5 and a "classes" dataset of 5 names. */
#define CHUNKSRC_TEST_FILE                                                                                   \
    (h5fix_file)                                                                                             \
    {                                                                                                        \
        .n = 23, .c = 3, .h = 8, .w = 10, .k = 4, .early_alloc = 1, .labels = 1, .n_classes = 5, .classes = 5 \
    }

/* h5py's chunked datasets: maxshape (None, ...), the default file format (set on a CHUNKSRC_TEST_FILE). */
#define CHUNKSRC_AS_H5PY(f) ((f).resizable = 1, (f).old_format = 1)

/* Reads every chunk through the chunk source and compares it with H5Dread of the same rows and (PATTERN)
 * with h5fix_pixel_rows(). Returns 0 when all match, else prints the first difference and returns -1. */
int test_compare_all_chunks(chunk_source *s, const char *path, const char *images, int pattern);

#endif
