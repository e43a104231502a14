/* abi.c - see abi.h. */
#include "abi.h"

#include <stdio.h>
#include <string.h>

#include "h5pack.h"

static int tail_is_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

size_t h5pack_abi_size(const void *caller)
{
    size_t n;
    memcpy(&n, caller, sizeof n); /* struct_size is the first member of every public struct */
    return n;
}

int h5pack_abi_check(const void *caller, const h5pack_abi_desc *d, char *err, size_t err_len)
{
    size_t n = h5pack_abi_size(caller);
    if (n == 0)
        snprintf(err, err_len,
                 "%s.struct_size is 0 (a zeroed or uninitialised struct): start from %s, which sets it", d->name,
                 d->macro);
    else if (n < d->min_size)
        snprintf(err, err_len, "%s.struct_size is %zu, smaller than any h5pack release's %s (%zu bytes): start from %s",
                 d->name, n, d->name, d->min_size, d->macro);
    else if (n > H5PACK_ABI_MAX_STRUCT_SIZE)
        snprintf(err, err_len, "%s.struct_size is %zu, not the size of a %s (an uninitialised struct?): start from %s",
                 d->name, n, d->name, d->macro);
    else
        return 0;
    return H5PACK_EINVAL;
}

int h5pack_abi_copy_in(void *own, const void *caller, const h5pack_abi_desc *d, char *err, size_t err_len)
{
    int rc = h5pack_abi_check(caller, d, err, err_len);
    if (rc)
        return rc;
    size_t n = h5pack_abi_size(caller);
    if (n > d->own_size && !tail_is_zero((const unsigned char *)caller + d->own_size, n - d->own_size)) {
        snprintf(err, err_len,
                 "%s sets fields this libh5pack %s does not know (struct_size %zu, this library's %zu): the program "
                 "was built against a newer h5pack; run it with that version of libh5pack",
                 d->name, H5PACK_VERSION_STRING, n, d->own_size);
        return H5PACK_EINVAL;
    }
    memcpy(own, caller, n < d->own_size ? n : d->own_size);
    memcpy(own, &d->own_size, sizeof d->own_size);
    return 0;
}

int h5pack_abi_copy_out(void *caller, const void *own, const h5pack_abi_desc *d, char *err, size_t err_len)
{
    int rc = h5pack_abi_check(caller, d, err, err_len);
    if (rc)
        return rc;
    size_t n = h5pack_abi_size(caller);
    /* Everything after the caller's struct_size member: it stays what the caller set. */
    size_t skip = sizeof n, upto = n < d->own_size ? n : d->own_size;
    memcpy((unsigned char *)caller + skip, (const unsigned char *)own + skip, upto - skip);
    if (n > d->own_size)
        memset((unsigned char *)caller + d->own_size, 0, n - d->own_size);
    return 0;
}
