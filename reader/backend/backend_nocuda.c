/* backend_nocuda.c - built instead of reader/backend/cuda/ when the library is compiled without CUDA. */
#include <stdio.h>

#include "backend.h"

int h5pack_backend_cuda_create(const backend_params *p, backend **out, char *err, size_t err_len)
{
    (void)p;
    *out = NULL;
    snprintf(err, err_len, "this libh5pack was built without CUDA support (configure with a CUDA toolkit)");
    return H5PACK_ENODEV;
}

int h5pack_backend_cuda_available(int gpu_id)
{
    (void)gpu_id;
    return 0;
}
