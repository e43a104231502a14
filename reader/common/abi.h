/* abi.h - the size-versioned struct convention of the public API.
 *
 * Every public struct starts with `size_t struct_size`, set by its defaults or init macro to the sizeof
 * the caller was compiled with. Fields are only ever appended, so a struct from an older caller is a prefix
 * of the library's and one from a newer caller is the library's plus a tail it does not know. These two
 * calls are the only places that reconcile the two sizes (as the Linux kernel's copy_struct_from_user and
 * Vulkan's sType/pNext do), so no public call ever reads or writes past the caller's struct. */
#ifndef H5PACK_COMMON_ABI_H
#define H5PACK_COMMON_ABI_H

#include <stddef.h>

/* Input struct: OWN (own_size bytes) already holds the library's defaults; the first caller_size bytes of
 * CALLER overwrite them, so fields an older caller does not know keep their defaults. Returns 0, or
 * H5PACK_EINVAL with *why set when caller_size < min_size (uninitialised struct or not from the macro) or a
 * newer caller set fields beyond own_size (non-zero tail). own->struct_size is left as own_size. */
int h5pack_abi_copy_in(void *own, size_t own_size, const void *caller, size_t caller_size, size_t min_size,
                       const char **why);

/* Output struct: writes min(caller_size, own_size) bytes of OWN to CALLER, then restores the caller's
 * struct_size, and zeroes the tail a newer caller has beyond own_size. Returns 0, or H5PACK_EINVAL with *why
 * set when caller_size < min_size. */
int h5pack_abi_copy_out(void *caller, size_t caller_size, const void *own, size_t own_size, size_t min_size,
                        const char **why);

#endif
