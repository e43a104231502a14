/* abi.c - see abi.h. */
#include "abi.h"

#include <string.h>

#include "h5pack.h"

static int tail_is_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

int h5pack_abi_copy_in(void *own, size_t own_size, const void *caller, size_t caller_size, size_t min_size,
                       const char **why)
{
    if (caller_size < min_size) {
        *why = "struct_size is too small: initialise the struct with its H5PACK_..._DEFAULTS macro";
        return H5PACK_EINVAL;
    }
    if (caller_size > own_size && !tail_is_zero((const unsigned char *)caller + own_size, caller_size - own_size)) {
        *why = "the struct sets fields this library does not know: the program was built against a newer h5pack";
        return H5PACK_EINVAL;
    }
    memcpy(own, caller, caller_size < own_size ? caller_size : own_size);
    memcpy(own, &own_size, sizeof own_size); /* struct_size is the first member of every public struct */
    return 0;
}

int h5pack_abi_copy_out(void *caller, size_t caller_size, const void *own, size_t own_size, size_t min_size,
                        const char **why)
{
    if (caller_size < min_size) {
        *why = "struct_size is too small: initialise the struct with its H5PACK_..._INIT macro";
        return H5PACK_EINVAL;
    }
    memcpy(caller, own, caller_size < own_size ? caller_size : own_size);
    if (caller_size > own_size)
        memset((unsigned char *)caller + own_size, 0, caller_size - own_size);
    memcpy(caller, &caller_size, sizeof caller_size);
    return 0;
}
