/* size_parse.c - h5pack_size_parse: the public face of the one size rule (common/sizes.c), so that
 * programs built on the public API (the samples, users' tools) read sizes as h5pack's programs do. */
#include <stdio.h>

#include "h5pack.h"
#include "sizes.h"

H5PACK_API int h5pack_size_parse(const char *text, uint64_t *out, char *why, size_t why_len)
{
    uint64_t value = 0;
    if (!text || !out) {
        if (why && why_len)
            snprintf(why, why_len, "no text or no place for the value");
        return H5PACK_EINVAL;
    }
    if (h5pack_parse_size(text, &value, why, why_len) != H5PACK_SIZE_OK)
        return H5PACK_EINVAL;
    *out = value;
    return H5PACK_OK;
}
