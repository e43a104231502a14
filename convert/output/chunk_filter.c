/* chunk_filter.c - deflate + fletcher32 of one chunk (see chunk_filter.h). */
#include "chunk_filter.h"

#include <libdeflate.h>
#include <string.h>

#include "h5out.h"

static void store_le32(uint8_t *dst, uint32_t v)
{
    dst[0] = (uint8_t)v;
    dst[1] = (uint8_t)(v >> 8);
    dst[2] = (uint8_t)(v >> 16);
    dst[3] = (uint8_t)(v >> 24);
}

size_t chunk_filter_bound(size_t raw_bytes)
{
    return raw_bytes + raw_bytes / 64 + 1024 + 4;
}

size_t chunk_filter_apply(int gzip_level, int checksum, struct libdeflate_compressor **comp, const uint8_t *raw,
                          size_t raw_bytes, uint8_t *out)
{
    size_t n = raw_bytes;
    if (gzip_level > 0) {
        if (!*comp && !(*comp = libdeflate_alloc_compressor(gzip_level)))
            return 0;
        n = libdeflate_zlib_compress(*comp, raw, raw_bytes, out, chunk_filter_bound(raw_bytes) - 4);
        if (n == 0)
            return 0;
    } else {
        memcpy(out, raw, n);
    }
    if (checksum) {
        store_le32(out + n, fletcher32_hdf5(out, n));
        n += 4;
    }
    return n;
}
