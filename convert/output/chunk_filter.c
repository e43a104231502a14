/* chunk_filter.c - deflate + fletcher32 of one chunk (see chunk_filter.h). */
#include "chunk_filter.h"

#include <libdeflate.h>
#include <string.h>


static void store_le32(uint8_t *dst, uint32_t v)
{
    dst[0] = (uint8_t)v;
    dst[1] = (uint8_t)(v >> 8);
    dst[2] = (uint8_t)(v >> 16);
    dst[3] = (uint8_t)(v >> 24);
}

/* HDF5's fletcher32 filter (H5_checksum_fletcher32), which the file's readers verify. */
static uint32_t fletcher32_hdf5(const uint8_t *data, size_t len)
{
    uint32_t sum1 = 0xffff, sum2 = 0xffff;
    size_t words = len / 2;
    while (words) {
        size_t block = words > 360 ? 360 : words; /* 360 words cannot overflow the 32-bit sums */
        words -= block;
        for (; block; block--, data += 2) {
            sum1 += ((uint32_t)data[0] << 8) | data[1];
            sum2 += sum1;
        }
        sum1 = (sum1 & 0xffff) + (sum1 >> 16);
        sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    }
    if (len % 2) {
        sum1 += (uint32_t)data[0] << 8;
        sum2 += sum1;
        sum1 = (sum1 & 0xffff) + (sum1 >> 16);
        sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    }
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    return (sum2 << 16) | sum1;
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
