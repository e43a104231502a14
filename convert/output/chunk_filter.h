/* chunk_filter.h - the images dataset's filter pipeline applied to one chunk before a direct write:
 * deflate (a zlib stream, as HDF5's deflate filter reads it), then fletcher32 over the result. Used by the
 * converter's workers and, under MPI, by every rank for its own chunks. */
#ifndef H5PACK_CHUNK_FILTER_H
#define H5PACK_CHUNK_FILTER_H

#include <stddef.h>
#include <stdint.h>

struct libdeflate_compressor;

/* Bytes a filtered chunk of RAW_BYTES may take (above libdeflate's bound, plus the checksum). */
size_t chunk_filter_bound(size_t raw_bytes);

/* Filters RAW (RAW_BYTES) into OUT (chunk_filter_bound bytes) with deflate at GZIP_LEVEL (0: none) and a
 * fletcher32 checksum when CHECKSUM. *COMP is the caller's compressor, allocated on first use (free it
 * with libdeflate_free_compressor). Returns the stored size, or 0 when the compressor is unavailable. */
size_t chunk_filter_apply(int gzip_level, int checksum, struct libdeflate_compressor **comp, const uint8_t *raw,
                          size_t raw_bytes, uint8_t *out);

#endif
