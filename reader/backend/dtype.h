/* dtype.h - the bytes of one element of each output dtype, from H5PACK_DTYPE_MAP (h5pack.h): one function
 * for the host code and the CUDA kernels alike. */
#ifndef H5PACK_BACKEND_DTYPE_H
#define H5PACK_BACKEND_DTYPE_H

#include <stddef.h>

#include "h5pack.h"
#include "rng.h" /* H5PACK_HD */

/* Bytes of one element of DTYPE (an h5pack_dtype); 0 for a value that is not one, which is how
 * h5pack_backend_check_params refuses it. */
H5PACK_HD size_t h5pack_dtype_bytes(int dtype)
{
#define H5PACK_DTYPE_BYTES_CASE_(group, name, value, text, bytes)                                                 \
    case H5PACK_DTYPE_##name: return bytes;
    switch (dtype) {
        H5PACK_DTYPE_MAP(H5PACK_DTYPE_BYTES_CASE_)
    }
#undef H5PACK_DTYPE_BYTES_CASE_
    return 0;
}

#endif
